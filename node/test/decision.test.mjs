// Decision: its fields, its exact microseconds, and the HTTP fields it
// becomes (draft-ietf-httpapi-ratelimit-headers, RFC 9110's Retry-After).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import { codes, CompositeLimiter, Decision, FixedWindow, Gcra, ManualClock, NEVER, TokenBucket } from '../index.mjs';

// The package's internals: the native module and the reader of its records.
const require = createRequire(import.meta.url);
const native = require('../lib/binding.js');
const { decisionAt } = require('../lib/decision.js');

/** redis-cell's example limiter, drained: the next request waits a second. */
function drained() {
  const clock = new ManualClock();
  const gcra = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000, clock });
  for (let i = 0; i < 5; i++) gcra.check();
  return { clock, gcra };
}

test('a decision is a plain value: its fields, enumerable, in order', () => {
  const { gcra } = drained();
  const d = gcra.check();
  assert.deepEqual(Object.keys(d), ['allowed', 'limit', 'remaining', 'retryAfterMs', 'resetAfterMs', 'waitMs', 'windowMs']);
  assert.deepEqual(JSON.parse(JSON.stringify(d)), {
    allowed: false,
    limit: 5,
    remaining: 0,
    retryAfterMs: 1000,
    resetAfterMs: 5000,
    waitMs: 0,
    windowMs: 5000,
  });
  assert.equal(Object.prototype.toString.call(d), '[object Decision]');
  // Each call makes a new one: a decision is the answer at its moment.
  assert.notEqual(gcra.check(), d);
});

test('microseconds are exact: from the milliseconds when they hold them, else from the exact words', () => {
  const { gcra } = drained();
  const d = gcra.check();
  assert.equal(d.retryAfterMicros, 1_000_000n);
  assert.equal(d.resetAfterMicros, 5_000_000n);
  assert.equal(d.waitMicros, 0n);
  assert.equal(d.windowMicros, 5_000_000n);
  // A period of 2^60 + 1 µs (36,559 years): milliseconds cannot hold it.
  const period = 2n ** 60n + 1n;
  const huge = new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMicros: period, clock: new ManualClock() });
  huge.check();
  const h = huge.check();
  assert.equal(h.retryAfterMicros, period);
  assert.equal(h.resetAfterMicros, period);
  assert.equal(h.windowMicros, period);
  assert.notEqual(BigInt(Math.round(h.retryAfterMs * 1000)), period, 'the milliseconds alone would be wrong');
  assert.equal(h.retryAfterMs, Number(period) / 1000);
  // Odd microseconds survive: 1,001 µs is 1.001 ms and back.
  const odd = new FixedWindow({ limit: 1, windowMicros: 1_001, clock: new ManualClock() });
  odd.check();
  assert.equal(odd.check().retryAfterMicros, 1_001n);
  assert.equal(odd.check().retryAfterMs, 1.001);
});

test('never: Infinity in milliseconds, NEVER in microseconds, isNever', () => {
  const { gcra } = drained();
  const never = gcra.check(6);
  assert.equal(never.isNever, true);
  assert.equal(never.retryAfterMs, Infinity);
  assert.equal(never.retryAfterMicros, NEVER);
  assert.equal(NEVER, 2n ** 63n - 1n);
  assert.equal(gcra.check().isNever, false);
  assert.equal(gcra.check(0).isNever, false);
  // A bucket that never refills never resets.
  const dry = new TokenBucket({ rate: 0, burst: 1, clock: new ManualClock() });
  const d = dry.check();
  assert.equal(d.resetAfterMs, Infinity);
  assert.equal(d.resetAfterMicros, NEVER);
  assert.equal(d.windowMicros, NEVER);
});

test('headers: RateLimit-Policy, RateLimit, and Retry-After when a wait helps', () => {
  const { gcra } = drained();
  const refused = gcra.check();
  assert.equal(refused.rateLimitHeader('api'), '"api";r=0;t=5');
  assert.equal(refused.rateLimitPolicyHeader('api'), '"api";q=5;w=5');
  assert.equal(refused.retryAfterHeader(), '1');
  assert.deepEqual(refused.headers('api'), {
    'RateLimit-Policy': '"api";q=5;w=5',
    RateLimit: '"api";r=0;t=5',
    'Retry-After': '1',
  });
  // The default policy name, quoting, and no Retry-After for an admitted
  // request or one no wait can admit.
  const clock = new ManualClock();
  const fresh = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000, clock });
  const admitted = fresh.check();
  assert.deepEqual(admitted.headers(), { 'RateLimit-Policy': '"default";q=5;w=5', RateLimit: '"default";r=4;t=1' });
  assert.equal(admitted.retryAfterHeader(), undefined);
  assert.equal(admitted.rateLimitHeader('a "quoted" \\ name'), '"a \\"quoted\\" \\\\ name";r=4;t=1');
  assert.equal(fresh.check(6).retryAfterHeader(), undefined);
  assert.equal('Retry-After' in fresh.check(6).headers(), false);
  // Seconds are rounded up: a client that waits as told is never early.
  const window = new FixedWindow({ limit: 1, windowMs: 1500, clock });
  window.check();
  assert.equal(window.check().retryAfterHeader(), '2');
  // Exact microseconds reach the fields: a window of 2^60 + 1 µs.
  const huge = new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMicros: 2n ** 60n + 1n, clock });
  huge.check();
  assert.equal(huge.check().retryAfterHeader(), String((2n ** 60n + 1n + 999_999n) / 1_000_000n));
});

test('every field Rust writes into a decision record is the field JavaScript reads back', () => {
  /**
   * The decision Rust writes for these fields, as a limiter's call would,
   * read as every limiter's JavaScript reads it.
   * @param {boolean} allowed
   * @param {bigint[]} fields limit, remaining, and retry-after, reset-after,
   *   wait and window in microseconds
   */
  const roundTrip = (allowed, ...fields) => {
    const f = /** @type {Float64Array} */ (native.decisionRecordForTests(allowed, ...fields));
    return decisionAt(f, new BigInt64Array(f.buffer, f.byteOffset, f.length), 0);
  };
  // Every field different from every other, so that a field read from
  // another's word cannot pass.
  const exact = roundTrip(false, 11n, 7n, 1_500_000n, 4_200_000n, 700n, 9_000_000n);
  assert.deepEqual(
    { ...exact },
    { allowed: false, limit: 11, remaining: 7, retryAfterMs: 1500, resetAfterMs: 4200, waitMs: 0.7, windowMs: 9000 },
  );
  assert.deepEqual(
    [exact.retryAfterMicros, exact.resetAfterMicros, exact.waitMicros, exact.windowMicros],
    [1_500_000n, 4_200_000n, 700n, 9_000_000n],
  );
  // And back to Rust, which formats the HTTP fields from the record
  // JavaScript writes for it.
  assert.deepEqual(exact.headers('x'), { 'RateLimit-Policy': '"x";q=11;w=9', RateLimit: '"x";r=7;t=5', 'Retry-After': '2' });
  assert.equal(roundTrip(true, 11n, 7n, 0n, 4_200_000n, 700n, 9_000_000n).allowed, true);

  // Beyond what doubles hold: the exact words, each its own.
  const big = [2n ** 53n + 1n, 2n ** 53n + 3n, 2n ** 60n + 1n, 2n ** 61n + 3n, 2n ** 59n + 5n, 2n ** 62n + 7n];
  const [limit, remaining, retry, reset, wait, window] = big;
  const inexact = roundTrip(false, ...big);
  assert.equal(inexact.allowed, false);
  assert.deepEqual(
    [inexact.limit, inexact.remaining, inexact.retryAfterMs, inexact.resetAfterMs, inexact.waitMs, inexact.windowMs],
    big.map((x, i) => (i < 2 ? Number(x) : Number(x) / 1000)),
  );
  assert.deepEqual([inexact.retryAfterMicros, inexact.resetAfterMicros, inexact.waitMicros, inexact.windowMicros], [retry, reset, wait, window]);
  const secs = (/** @type {bigint} */ micros) => (micros + 999_999n) / 1_000_000n;
  assert.deepEqual(inexact.headers('x'), {
    'RateLimit-Policy': `"x";q=${limit};w=${secs(window)}`,
    RateLimit: `"x";r=${remaining};t=${secs(reset)}`,
    'Retry-After': `${secs(retry)}`,
  });
  // Never, both ways.
  const never = roundTrip(false, 1n, 0n, NEVER, NEVER, 0n, NEVER);
  assert.deepEqual([never.retryAfterMs, never.resetAfterMs, never.windowMs, never.isNever], [Infinity, Infinity, Infinity, true]);
  assert.deepEqual([never.retryAfterMicros, never.windowMicros], [NEVER, NEVER]);
});

test('several policies in one field, from pairs, a Map or an object', () => {
  const clock = new ManualClock();
  const composite = new CompositeLimiter(
    [
      { algorithm: 'fixedWindow', limit: 10, windowMs: 1000 },
      { algorithm: 'fixedWindow', limit: 1000, windowMs: 3_600_000 },
    ],
    { clock },
  );
  const { parts } = composite.checkEach(10);
  const items = [
    ['per-second', parts[0]],
    ['per-hour', parts[1]],
  ];
  const field = '"per-second";r=0;t=1, "per-hour";r=990;t=3600';
  const policy = '"per-second";q=10;w=1, "per-hour";q=1000;w=3600';
  assert.equal(Decision.rateLimitHeader(items), field);
  assert.equal(Decision.rateLimitPolicyHeader(items), policy);
  assert.equal(Decision.rateLimitHeader(new Map(items)), field);
  assert.equal(Decision.rateLimitHeader({ 'per-second': parts[0], 'per-hour': parts[1] }), field);
  assert.equal(Decision.rateLimitPolicyHeader(Object.fromEntries(items)), policy);
  assert.equal(Decision.rateLimitHeader([]), '');
});

test('header errors: names must be printable ASCII strings, items Decisions', () => {
  const { gcra } = drained();
  const d = gcra.check();
  for (const name of ['tab\there', 'é', 'line\nbreak']) {
    assert.throws(() => d.rateLimitHeader(name), (e) => e instanceof RangeError && e.code === codes.invalidArgument && e.argument === 'name');
    assert.throws(() => d.headers(name), RangeError);
    assert.throws(() => Decision.rateLimitPolicyHeader([[name, d]]), RangeError);
  }
  for (const name of [5, null, 1n, {}]) {
    assert.throws(() => d.rateLimitPolicyHeader(/** @type {any} */ (name)), (e) => e instanceof TypeError && e.code === codes.invalidArgType && e.argument === 'name');
  }
  const bad = [
    [null, 'items'],
    [5, 'items'],
    ['abc', 'items'],
    [[['a']], 'items[0]'],
    [[['a', d, 3]], 'items[0]'],
    [[5], 'items[0]'],
    [[['a', { allowed: true }]], 'items[0][1]'],
    [{ a: { ...d } }, 'items[0][1]'],
  ];
  for (const [items, argument] of bad) {
    assert.throws(
      () => Decision.rateLimitHeader(/** @type {any} */ (items)),
      (e) => {
        assert.ok(e instanceof TypeError, String(e));
        assert.equal(e.code, codes.invalidArgType);
        assert.equal(e.argument, argument);
        assert.match(e.message, new RegExp(`^invalid argument ${argument.replace(/[[\]]/g, '\\$&')}: must be `));
        return true;
      },
    );
  }
});

test('decisions come from limiters only', () => {
  assert.throws(() => new /** @type {any} */ (Decision)(), (e) => e instanceof TypeError && e.code === codes.invalidArgType && /Decision/.test(e.message));
  assert.throws(() => new /** @type {any} */ (Decision)(Symbol('Decision'), true, 1, 1, 0, 0, 0, 0), TypeError);
});
