// Bad input: a RangeError (out of range) or TypeError (wrong type) with a
// stable code, naming the argument and the value, changing nothing; never a
// crash, never a silently wrong limiter.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import { codes, ManualClock, RateLimiter } from '../index.mjs';

const require = createRequire(import.meta.url);

const RANGE = { class: RangeError, code: 'ERR_RATEKEEPER_INVALID_ARGUMENT' };
const TYPE = { class: TypeError, code: 'ERR_RATEKEEPER_INVALID_ARG_TYPE' };
const OPTION = { class: TypeError, code: 'ERR_RATEKEEPER_INVALID_OPTION' };

/** How a value shows in a message. */
function shown(value) {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (Object.is(value, -0)) return '-0';
  return String(value);
}

/** Asserts that `error` is the expected kind, naming `argument` (and `value`). */
function check(error, kind, argument, value, hasValue = true) {
  assert.ok(error instanceof kind.class, `${error?.constructor?.name}: ${error?.message}`);
  assert.equal(error.code, kind.code, error.message);
  assert.equal(error.argument, argument, error.message);
  if (kind !== OPTION) assert.match(error.message, new RegExp(`\\b${argument}\\b`));
  if (hasValue && kind !== OPTION) {
    if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string') {
      assert.ok(error.message.includes(shown(value)), `${error.message} should show ${shown(value)}`);
    }
    if (typeof value === 'number' && Number.isNaN(value)) assert.ok(Number.isNaN(error.value));
    else assert.equal(error.value, value);
  }
}

function throws(fn, kind, argument, value, hasValue) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected ${kind.class.name} for ${argument} = ${shown(value)}, got no error`);
  check(error, kind, argument, value, hasValue);
}

async function rejects(promise, kind, argument, value) {
  assert.ok(promise instanceof Promise, 'an async method reports errors by rejecting');
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a rejection for ${argument} = ${shown(value)}`);
  check(error, kind, argument, value);
}

const BAD_PERMITS = [
  [NaN, RANGE],
  [Infinity, RANGE],
  [-Infinity, RANGE],
  [-1, RANGE],
  [0, RANGE],
  [-0, RANGE],
  [1.5, RANGE],
  [0.999, RANGE],
  [2 ** 31, RANGE],
  [2 ** 53, RANGE],
  [2 ** 53 + 2, RANGE],
  [-(2 ** 63), RANGE],
  [1e300, RANGE],
  [Number.MIN_VALUE, RANGE],
  ['1', TYPE],
  ['', TYPE],
  [0n, RANGE], // a bigint is a count too, in the same range
  [-1n, RANGE],
  [2n ** 31n, RANGE],
  [2n ** 64n, RANGE],
  [null, TYPE],
  [true, TYPE],
  [{}, TYPE],
  [[1], TYPE],
  [Symbol('one'), TYPE],
];

test('codes are the stable strings', () => {
  assert.deepEqual(
    { ...codes },
    {
      invalidArgument: 'ERR_RATEKEEPER_INVALID_ARGUMENT',
      invalidArgType: 'ERR_RATEKEEPER_INVALID_ARG_TYPE',
      invalidOption: 'ERR_RATEKEEPER_INVALID_OPTION',
      internal: 'ERR_RATEKEEPER_INTERNAL',
      atCapacity: 'ERR_RATEKEEPER_AT_CAPACITY',
      closed: 'ERR_RATEKEEPER_CLOSED',
      redisUnavailable: 'ERR_RATEKEEPER_REDIS_UNAVAILABLE',
      redisTimeout: 'ERR_RATEKEEPER_REDIS_TIMEOUT',
      redisError: 'ERR_RATEKEEPER_REDIS_ERROR',
      redisProtocol: 'ERR_RATEKEEPER_REDIS_PROTOCOL',
      redisUnsupported: 'ERR_RATEKEEPER_REDIS_UNSUPPORTED',
      redisAuth: 'ERR_RATEKEEPER_REDIS_AUTH',
      redisTls: 'ERR_RATEKEEPER_REDIS_TLS',
    },
  );
  assert.ok(Object.isFrozen(codes));
});

test('permits: every entry point refuses what is not an integer from 1 to 2^31 - 1', async () => {
  const clock = new ManualClock();
  const limiter = RateLimiter.create(5, { clock });
  for (const [value, kind] of BAD_PERMITS) {
    throws(() => limiter.tryAcquire(value), kind, 'permits', value);
    throws(() => limiter.canAcquire(value), kind, 'permits', value);
    throws(() => limiter.timeUntilAvailable(value), kind, 'permits', value);
    await rejects(limiter.acquire(value), kind, 'permits', value);
    await rejects(limiter.tryAcquire(value, { timeoutMs: 1000 }), kind, 'permits', value);
  }
  // The bounds themselves are fine, and undefined means the default, 1.
  assert.equal(limiter.tryAcquire(2 ** 31 - 1), true);
  assert.equal(await limiter.tryAcquire(undefined, { timeoutMs: 0 }), false);
  assert.equal(limiter.timeUntilAvailable(undefined), (2 ** 31 - 1) * 200);
});

test('errors change nothing', async () => {
  const clock = new ManualClock();
  const limiter = RateLimiter.create(5, { clock });
  await limiter.acquire(2);
  const before = [limiter.rate, limiter.timeUntilAvailable()];
  for (const [value] of BAD_PERMITS) {
    assert.throws(() => limiter.tryAcquire(value));
    await assert.rejects(limiter.acquire(value));
  }
  for (const rate of [NaN, 0, -1, -Infinity, '5', null]) assert.throws(() => (limiter.rate = rate));
  assert.deepEqual([limiter.rate, limiter.timeUntilAvailable()], before);
  assert.equal(clock.now, 0);
  clock.advance(400);
  assert.equal(limiter.tryAcquire(), true); // the limiter still works
});

test('permitsPerSecond: positive, not NaN (Infinity allowed), a number', () => {
  const clock = new ManualClock();
  const limiter = RateLimiter.create(1, { clock });
  const bad = [
    [NaN, RANGE],
    [0, RANGE],
    [-0, RANGE],
    [-1, RANGE],
    [-Infinity, RANGE],
    [-Number.MIN_VALUE, RANGE],
    ['5', TYPE],
    [5n, TYPE],
    [null, TYPE],
    [undefined, TYPE],
    [{ valueOf: () => 5 }, TYPE],
  ];
  for (const [value, kind] of bad) {
    throws(() => RateLimiter.create(value), kind, 'permitsPerSecond', value);
    throws(() => RateLimiter.create(value, { warmupMs: 1 }), kind, 'permitsPerSecond', value);
    throws(() => (limiter.rate = value), kind, 'permitsPerSecond', value);
  }
  for (const fine of [Infinity, 1e308, 1, 0.5]) {
    assert.equal(RateLimiter.create(fine).rate, fine);
  }
  // Guava's getRate() of the smallest positive rate: 1e6 / (1e6 / rate) = 0.
  assert.equal(RateLimiter.create(Number.MIN_VALUE).rate, 0);
});

test('options: an object with known keys, or nothing', () => {
  for (const value of [null, 5, 'fast', true, 1n, () => {}, [1]]) {
    throws(() => RateLimiter.create(1, value), TYPE, 'options', value);
  }
  throws(() => RateLimiter.create(1, { warmUpMs: 100 }), OPTION, 'options');
  throws(() => RateLimiter.create(1, { timeoutMs: 100 }), OPTION, 'options');
  throws(() => RateLimiter.create(1, { warmupMs: 1, warmupMicros: 1000 }), OPTION, 'options');
  throws(() => RateLimiter.create(1, { coldFactor: 2 }), OPTION, 'options'); // needs a warm-up
  throws(() => RateLimiter.create(1, { warmupMs: 1, maxBurstSeconds: 2 }), OPTION, 'options');
  assert.throws(() => RateLimiter.create(1, { warmUpMs: 100 }), /unknown option "warmUpMs"/);
  // Options set to undefined count as absent.
  assert.equal(RateLimiter.create(2, { warmupMs: undefined, clock: undefined }).rate, 2);
  const limiter = RateLimiter.create(1);
  throws(() => limiter.canAcquire(1, { timeout: 5 }), OPTION, 'options');
  throws(() => limiter.canAcquire(1, { timeoutMs: 1, timeoutMicros: 1 }), OPTION, 'options');
  throws(() => limiter.canAcquire(1, null), TYPE, 'options', null);
});

test('tryAcquire options: an object with timeoutMs or timeoutMicros', async () => {
  const limiter = RateLimiter.create(1, { clock: new ManualClock() });
  await rejects(limiter.tryAcquire(1, null), TYPE, 'options', null);
  await rejects(limiter.tryAcquire(1, 100), TYPE, 'options', 100);
  await assert.rejects(limiter.tryAcquire(1, { timeout: 100 }), { code: codes.invalidOption });
  await rejects(limiter.tryAcquire(1, { timeoutMs: NaN }), RANGE, 'timeoutMs', NaN);
  await rejects(limiter.tryAcquire(1, { timeoutMs: '10' }), TYPE, 'timeoutMs', '10');
  await rejects(limiter.tryAcquire(1, { timeoutMs: 10n }), TYPE, 'timeoutMs', 10n);
  await rejects(limiter.tryAcquire(1, { timeoutMicros: 1.5 }), RANGE, 'timeoutMicros', 1.5);
  await rejects(limiter.tryAcquire(1, { timeoutMicros: NaN }), RANGE, 'timeoutMicros', NaN);
  await rejects(limiter.tryAcquire(1, { timeoutMicros: 2n ** 63n }), RANGE, 'timeoutMicros', 2n ** 63n);
  await rejects(limiter.tryAcquire(1, { timeoutMicros: 2 ** 63 }), RANGE, 'timeoutMicros', 2 ** 63);
  await rejects(limiter.tryAcquire(1, { timeoutMicros: '1' }), TYPE, 'timeoutMicros', '1');
  // Huge, negative and infinite timeouts are fine (Guava: negative = 0).
  for (const timeoutMs of [1e300, -1e300, Infinity, -Infinity, -0]) {
    assert.equal(typeof (await limiter.tryAcquire(1, { timeoutMs })), 'boolean');
  }
  assert.equal(typeof (await limiter.tryAcquire(1, { timeoutMicros: -(2n ** 63n) })), 'boolean');
});

test('warm-up, cold factor, burst: their ranges and types', () => {
  const cases = [
    [{ warmupMs: -1 }, RANGE, 'warmupMs', -1],
    [{ warmupMs: -Number.MIN_VALUE }, RANGE, 'warmupMs', -Number.MIN_VALUE],
    [{ warmupMs: NaN }, RANGE, 'warmupMs', NaN],
    [{ warmupMs: Infinity }, RANGE, 'warmupMs', Infinity],
    [{ warmupMs: '1000' }, TYPE, 'warmupMs', '1000'],
    [{ warmupMs: 1000n }, TYPE, 'warmupMs', 1000n],
    [{ warmupMs: null }, TYPE, 'warmupMs', null],
    [{ warmupMicros: -1 }, RANGE, 'warmupMicros', -1],
    [{ warmupMicros: -(2n ** 63n) }, RANGE, 'warmupMicros', -(2n ** 63n)],
    [{ warmupMicros: 1.5 }, RANGE, 'warmupMicros', 1.5],
    [{ warmupMicros: 2n ** 64n }, RANGE, 'warmupMicros', 2n ** 64n],
    [{ warmupMicros: Infinity }, RANGE, 'warmupMicros', Infinity],
    [{ warmupMicros: 'x' }, TYPE, 'warmupMicros', 'x'],
    [{ warmupMs: 1, coldFactor: 0.5 }, RANGE, 'coldFactor', 0.5],
    [{ warmupMs: 1, coldFactor: NaN }, RANGE, 'coldFactor', NaN],
    [{ warmupMs: 1, coldFactor: Infinity }, RANGE, 'coldFactor', Infinity],
    [{ warmupMs: 1, coldFactor: '3' }, TYPE, 'coldFactor', '3'],
    [{ maxBurstSeconds: -1 }, RANGE, 'maxBurstSeconds', -1],
    [{ maxBurstSeconds: NaN }, RANGE, 'maxBurstSeconds', NaN],
    [{ maxBurstSeconds: Infinity }, RANGE, 'maxBurstSeconds', Infinity],
    [{ maxBurstSeconds: 1n }, TYPE, 'maxBurstSeconds', 1n],
    [{ clock: {} }, TYPE, 'clock', undefined, false],
    [{ clock: new Date(0) }, TYPE, 'clock', undefined, false],
    [{ clock: 5 }, TYPE, 'clock', 5],
    [{ clock: null }, TYPE, 'clock', null],
  ];
  for (const [options, kind, argument, value, hasValue] of cases) {
    throws(() => RateLimiter.create(1, options), kind, argument, value, hasValue);
  }
  // The edges that are fine.
  for (const options of [{ warmupMs: 0 }, { warmupMicros: 0n }, { warmupMicros: 2n ** 63n - 1n }, { maxBurstSeconds: 0 }, { warmupMs: 1, coldFactor: 1 }]) {
    assert.equal(RateLimiter.create(1, options).rate, 1);
  }
});

test('ManualClock refuses to go back or to take what is not a duration', () => {
  const clock = new ManualClock();
  for (const [value, kind] of [[-1, RANGE], [NaN, RANGE], [Infinity, RANGE], [-0.5, RANGE], ['1', TYPE], [1n, TYPE], [undefined, TYPE]]) {
    throws(() => clock.advance(value), kind, 'ms', value);
  }
  for (const [value, kind] of [[-1, RANGE], [-1n, RANGE], [1.5, RANGE], [NaN, RANGE], [2n ** 63n, RANGE], ['1', TYPE], [null, TYPE]]) {
    throws(() => clock.advanceMicros(value), kind, 'micros', value);
  }
  assert.equal(clock.nowMicros, 0n);
});

test('RateLimiter has no public constructor', () => {
  for (const args of [[], [{}], [1, 2]]) {
    assert.throws(() => new (/** @type {any} */ (RateLimiter))(...args), (error) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.code, codes.invalidArgType);
      assert.match(error.message, /RateLimiter\.create/);
      return true;
    });
  }
});

test('a Rust panic reaches JavaScript as an Error with code ERR_RATEKEEPER_INTERNAL', () => {
  const binding = require('../lib/binding.js');
  assert.throws(() => binding.panicForTests(), (error) => {
    assert.equal(error.constructor, Error);
    assert.equal(error.code, codes.internal);
    assert.match(error.message, /deliberate panic/);
    return true;
  });
  // The module is still fine afterwards.
  assert.equal(RateLimiter.create(1).tryAcquire(), true);
});
