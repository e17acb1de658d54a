// The Node binding of ratekeeper::http: limits text, response fields,
// trusted proxies and the keyed limiter of limits text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  HttpLimiter,
  KeyedLimiter,
  ManualClock,
  RateItem,
  TrustedProxies,
  codes,
  parseLimits,
  responseFields,
} from 'ratekeeper';

describe('parseLimits', () => {
  test('the forms of the limits library, one parser', () => {
    const items = parseLimits(' 10/minute; 10 per 2 Hours , 5 per 30 seconds|1000/DAY ');
    assert.deepEqual(
      items.map((i) => [i.amount, i.multiples, i.unit, i.windowMs, i.policyName, String(i)]),
      [
        [10, 1, 'minute', 60_000, '10-in-1min', '10 per 1 minute'],
        [10, 2, 'hour', 7_200_000, '10-in-2hrs', '10 per 2 hours'],
        [5, 30, 'second', 30_000, '5-in-30sec', '5 per 30 seconds'],
        [1000, 1, 'day', 86_400_000, '1000-in-1day', '1000 per 1 day'],
      ],
    );
    assert.ok(items[0] instanceof RateItem);
    for (const item of items) assert.equal(parseLimits(String(item))[0].windowMs, item.windowMs);
  });

  test('bad text: a RangeError naming the byte position', () => {
    for (const [text, position] of [
      ['10/fortnight', 3],
      ['ten/minute', 0],
      ['0/minute', 0],
      ['10 minute', 3],
      ['10/minute;', 10],
      ['10/minute 5', 10],
    ]) {
      assert.throws(
        () => parseLimits(text),
        (error) => {
          assert.equal(error.name, 'RangeError');
          assert.equal(error.code, codes.invalidArgument);
          assert.equal(error.position, position, text);
          assert.equal(error.argument, 'text');
          assert.equal(error.value, text);
          assert.match(error.message, new RegExp(`^invalid rate limit text at position ${position}: expected `));
          return true;
        },
      );
    }
    assert.throws(() => parseLimits(10), { name: 'TypeError', code: codes.invalidArgType });
    assert.throws(() => new RateItem(), { name: 'TypeError' });
  });

  test("an item's limiter options build the limiter it describes", () => {
    const [item] = parseLimits('3 per 2 seconds');
    assert.deepEqual(item.limitOptions(), { algorithm: 'slidingWindowCounter', limit: 3, windowMicros: 2_000_000n });
    assert.deepEqual(item.limitOptions('gcra'), { algorithm: 'gcra', maxBurst: 2, countPerPeriod: 3, periodMicros: 2_000_000n });
    const clock = new ManualClock();
    const keyed = new KeyedLimiter(item.limitOptions('fixedWindow'), { maxKeys: 10, clock });
    assert.deepEqual([1, 2, 3, 4].map(() => keyed.check('k').allowed), [true, true, true, false]);
    clock.advance(2000);
    assert.equal(keyed.check('k').allowed, true);
    assert.throws(() => item.limitOptions('nope'), { name: 'RangeError', argument: 'algorithm' });
  });
});

describe('responseFields', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter({ algorithm: 'fixedWindow', limit: 2, windowMs: 60_000 }, { maxKeys: 10, clock });
  const admitted = keyed.check('k');
  keyed.check('k');
  const refused = keyed.check('k');

  test('each style, names in canonical case, Retry-After only on a refusal', () => {
    assert.deepEqual(responseFields(admitted, { name: 'api' }), { 'RateLimit-Policy': '"api";q=2;w=60', RateLimit: '"api";r=1;t=60' });
    assert.deepEqual(responseFields(refused, { style: 'draft-7' }), {
      'RateLimit-Policy': '2;w=60',
      RateLimit: 'limit=2, remaining=0, reset=60',
      'Retry-After': '60',
    });
    const six = responseFields(refused, { style: 'draft-6', legacy: true });
    assert.equal(six['RateLimit-Limit'], '2');
    assert.equal(six['RateLimit-Remaining'], '0');
    assert.equal(six['RateLimit-Reset'], '60');
    assert.equal(six['X-RateLimit-Limit'], '2');
    assert.ok(Math.abs(Number(six['X-RateLimit-Reset']) - (Date.now() / 1000 + 60)) <= 2);
    assert.deepEqual(responseFields(refused, { style: 'none' }), { 'Retry-After': '60' });
  });

  test('several policies: one item each in draft-8', () => {
    const fields = responseFields(refused, { parts: [['a', admitted], ['b', refused]] });
    assert.equal(fields['RateLimit-Policy'], '"a";q=2;w=60, "b";q=2;w=60');
    assert.equal(fields.RateLimit, '"a";r=1;t=60, "b";r=0;t=60');
  });

  test('bad options are typed errors', () => {
    assert.throws(() => responseFields(refused, { style: 'draft-9' }), { name: 'RangeError', argument: 'style' });
    assert.throws(() => responseFields({}), { name: 'TypeError', argument: 'decision' });
    assert.throws(() => responseFields(refused, { name: 'bad\n' }), { name: 'RangeError', code: codes.invalidArgument });
    assert.throws(() => responseFields(refused, { stlye: 'draft-7' }), { name: 'TypeError', code: codes.invalidOption });
  });
});

describe('TrustedProxies', () => {
  test('an untrusted peer is the client whatever its headers say', () => {
    const none = new TrustedProxies();
    assert.equal(none.clientAddress('198.51.100.1', 'for=203.0.113.9', '203.0.113.9'), '198.51.100.1');
    assert.equal(none.clientAddress('::ffff:127.0.0.1'), '127.0.0.1');
  });

  test('trusted hops are walked right to left; Forwarded is preferred', () => {
    const trusted = new TrustedProxies(['10.0.0.0/8', 'loopback']);
    assert.equal(trusted.clientAddress('10.1.2.3', undefined, '203.0.113.9, 198.51.100.7, 10.9.9.9'), '198.51.100.7');
    assert.equal(trusted.clientAddress('127.0.0.1', 'for=192.0.2.60;proto=http, for="[2001:db8::1]"', '203.0.113.9'), '2001:db8::1');
    assert.equal(trusted.clientAddress('fe80::1%eth0'), 'fe80::1');
    assert.equal(trusted.contains('::ffff:10.0.0.1'), true);
    assert.equal(trusted.contains('11.0.0.1'), false);
  });

  test('client keys: an IPv6 client by its /56 unless told otherwise, IPv4 whole', () => {
    const trusted = new TrustedProxies(['loopback']);
    assert.equal(trusted.clientKey('2001:db8:0:1ff::7'), '2001:db8:0:100::/56');
    assert.equal(trusted.clientKey('2001:db8:0:1ff::7', undefined, undefined, 64), '2001:db8:0:1ff::/64');
    assert.equal(trusted.clientKey('2001:db8:0:1ff::7', undefined, undefined, 128), '2001:db8:0:1ff::7');
    assert.equal(trusted.clientKey('::1', undefined, '2001:db8:0:1aa::9'), '2001:db8:0:100::/56');
    assert.equal(trusted.clientKey('::ffff:203.0.113.7', undefined, undefined, 1), '203.0.113.7');
    for (const bad of [0, 129, -1, 56.5, Infinity, NaN]) {
      assert.throws(() => trusted.clientKey('::1', undefined, undefined, bad), { name: 'RangeError', code: codes.invalidArgument, argument: 'ipv6Prefix' }, String(bad));
    }
    assert.throws(() => trusted.clientKey('::1', undefined, undefined, '56'), { name: 'TypeError', argument: 'ipv6Prefix' });
  });

  test('bad entries and addresses are typed errors', () => {
    assert.throws(() => new TrustedProxies(['10.0.0.0/8', 'nowhere']), { name: 'RangeError', argument: 'entries[1]', value: 'nowhere' });
    assert.throws(() => new TrustedProxies([1]), { name: 'TypeError', argument: 'entries[0]' });
    assert.throws(() => new TrustedProxies().clientAddress('not an address'), { name: 'RangeError', argument: 'peer' });
  });
});

describe('HttpLimiter', () => {
  test('one item: each key its own limit, on the given algorithm and clock', () => {
    const clock = new ManualClock();
    const limiter = new HttpLimiter('2 per 10 seconds', { algorithm: 'fixedWindow', maxKeys: 5, clock });
    assert.deepEqual([1, 2, 3].map(() => limiter.check('a').allowed), [true, true, false]);
    assert.equal(limiter.check('b').allowed, true);
    const { decision, parts } = limiter.peekEach('a');
    assert.equal(decision.allowed, false);
    assert.equal(parts.length, 1);
    assert.deepEqual(limiter.policyNames, ['2-in-10sec']);
    assert.equal(limiter.algorithm, 'fixedWindow');
    assert.equal(limiter.size, 2);
    assert.equal(limiter.maxKeys, 5);
    assert.equal(limiter.remove('a'), true);
    assert.equal(limiter.check('a').allowed, true);
    clock.advance(10_000);
    assert.equal(limiter.check('b').remaining, 1);
  });

  test('bad arguments are typed errors', () => {
    assert.throws(() => new HttpLimiter('2/minute', { algorithm: 'nope' }), { name: 'RangeError', argument: 'algorithm' });
    assert.throws(() => new HttpLimiter('2/minute', { maxKeys: 0 }), { name: 'RangeError', argument: 'maxKeys' });
    assert.throws(() => new HttpLimiter('2/minuet'), { name: 'RangeError', argument: 'limits', position: 2 });
  });
});
