// The Redis limiters' keys: a string (its UTF-8) or a Uint8Array (its
// bytes), as a KeyedLimiter's; at most `maxKeyBytes` bytes (256 unless
// given, 1 to 65536), a longer one refused with a RangeError naming `key`
// before anything is sent, by every limiter and every call.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter, RedisStore } from '../../index.mjs';
import { RANGE, TYPE, rejects, throws } from '../expect-error.mjs';
import { evalshaCalls, redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url, { timeoutMs: 2000 });
});
after(() => store.close());

// Ten at once, then one a minute.
const TEN = Object.freeze({ algorithm: 'gcra', maxBurst: 9, countPerPeriod: 1, periodMs: 60_000 });

test('a string is its UTF-8, and other bytes are keys of their own', async () => {
  const limiter = new RedisLimiter(store, unique('bytes'), TEN);
  assert.equal((await limiter.check('é')).remaining, 9);
  assert.equal((await limiter.check(Buffer.from('é'))).remaining, 8);
  assert.equal((await limiter.check(new Uint8Array([0xc3, 0xa9]))).remaining, 7);
  assert.equal((await limiter.check(Uint8Array.of(0xff))).remaining, 9, 'not UTF-8: a key of its own');
  assert.equal((await limiter.check('\ufffd')).remaining, 9, "not the replacement character's");
  assert.equal((await limiter.check(Uint8Array.of(0xff))).remaining, 8);
  assert.equal((await limiter.peek(Uint8Array.of(0xff), 0)).remaining, 8);
  const leased = new RedisLeasedLimiter(store, unique('bytes-leased'), TEN, { batch: 2, leaseMs: 60_000 });
  assert.equal((await leased.check(Uint8Array.of(0xff, 0))).allowed, true);
  leased.close();
  limiter.close();
});

test('a string with a lone surrogate is refused naming key, as a KeyedLimiter refuses it', async () => {
  const limiter = new RedisLimiter(store, unique('surrogate'), TEN);
  const leased = new RedisLeasedLimiter(store, unique('surrogate-leased'), TEN, { batch: 2, leaseMs: 60_000 });
  await rejects(limiter.check('ab\ud800'), RANGE, 'key', 2);
  await rejects(limiter.peek('\udfff'), RANGE, 'key', 0);
  await rejects(leased.check('\ud800x'), RANGE, 'key', 0);
  // Not sent as U+FFFD: that key is still whole.
  assert.equal((await limiter.check('ab\ufffd')).remaining, 9);
  limiter.close();
  leased.close();
});

test('a key past maxKeyBytes is refused by every call, and nothing is sent', async () => {
  const name = unique('bound');
  const limiter = new RedisLimiter(store, name, TEN, { whenUnavailable: 'failOpen' });
  const leased = new RedisLeasedLimiter(store, `${name}:leased`, TEN, { batch: 2, leaseMs: 60_000 });
  const divided = await RedisDividedLimiter.create(store, `${name}:divided`, TEN, {
    heartbeatTtlMs: 10_000,
    maxKeys: 10,
  });
  assert.equal(limiter.maxKeyBytes, 256);
  assert.equal(leased.maxKeyBytes, 256);
  assert.equal(divided.maxKeyBytes, 256);
  await limiter.check('warm-up', 0); // loads the script
  const before = evalshaCalls(url);
  const long = 'k'.repeat(257);
  await rejects(limiter.check(long), RANGE, 'key', 257);
  await rejects(limiter.check(Buffer.alloc(300)), RANGE, 'key', 300);
  await rejects(limiter.peek(long), RANGE, 'key', 257);
  await rejects(leased.check(long), RANGE, 'key', 257);
  throws(() => divided.check(long), RANGE, 'key', 257);
  // In one turn with good keys: those are decided, the long one refused.
  const [good, bad, also] = await Promise.allSettled([limiter.check('a'), limiter.check(long), limiter.check('b')]);
  assert.equal(good.value?.remaining, 9);
  assert.equal(bad.reason?.argument, 'key');
  assert.equal(also.value?.remaining, 9);
  assert.ok(evalshaCalls(url) - before <= 2, 'only the good keys went to Redis');
  assert.equal((await limiter.check('k'.repeat(256))).allowed, true);
  limiter.close();
  leased.close();
  divided.close();
});

test('maxKeyBytes is given per limiter, from 1 to 65536', async () => {
  const name = unique('max-key-bytes');
  const roomy = new RedisLimiter(store, name, TEN, { maxKeyBytes: 65_536 });
  assert.equal(roomy.maxKeyBytes, 65_536);
  const key = Buffer.alloc(60 << 10, 0xff);
  assert.equal((await roomy.check(key)).remaining, 9);
  assert.equal((await roomy.check(key)).remaining, 8);
  await rejects(roomy.check('x'.repeat(65_537)), RANGE, 'key', 65_537);
  const tight = new RedisLeasedLimiter(store, name, TEN, { batch: 1, leaseMs: 60_000, maxKeyBytes: 4n });
  assert.equal(tight.maxKeyBytes, 4);
  await rejects(tight.check('12345'), RANGE, 'key', 5);
  assert.equal((await tight.check('1234')).allowed, true);
  const divided = await RedisDividedLimiter.create(store, `${name}:divided`, TEN, {
    heartbeatTtlMs: 10_000,
    maxKeys: 10,
    maxKeyBytes: 1000,
  });
  assert.equal(divided.maxKeyBytes, 1000);
  assert.equal(divided.check('k'.repeat(1000)).allowed, true);
  divided.close();

  for (const bad of [0, 65_537, -1, 2.5]) {
    throws(() => new RedisLimiter(store, name, TEN, { maxKeyBytes: bad }), RANGE, 'maxKeyBytes', bad);
  }
  throws(() => new RedisLimiter(store, name, TEN, { maxKeyBytes: '256' }), TYPE, 'maxKeyBytes', '256');
  throws(
    () => new RedisLeasedLimiter(store, name, TEN, { batch: 1, leaseMs: 1000, maxKeyBytes: 0 }),
    RANGE,
    'maxKeyBytes',
    0,
  );
  await rejects(
    RedisDividedLimiter.create(store, name, TEN, { heartbeatTtlMs: 10_000, maxKeys: 10, maxKeyBytes: 70_000 }),
    RANGE,
    'maxKeyBytes',
    70_000,
  );
  roomy.close();
  tight.close();
});
