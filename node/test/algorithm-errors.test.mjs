// Bad input to every algorithm: each argument the library checks (every
// `Argument` reachable from the JavaScript API), each wrong type, each bad
// options object — a RangeError or TypeError with a stable code, naming
// the option as the caller wrote it and the value as given, changing
// nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CompositeLimiter,
  ConcurrencyLimiter,
  FixedWindow,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  ManualClock,
  SlidingLog,
  SlidingWindow,
  SlidingWindowCounter,
  SrTcm,
  TokenBucket,
  TrTcm,
} from '../index.mjs';
import { OPTION, RANGE, TYPE, rejects, throws } from './expect-error.mjs';

/** Costs, bytes: an integer from 0 to 2^63 − 1, a number or a bigint. */
const BAD_COUNTS = [
  [-1, RANGE],
  [-1n, RANGE],
  [-(2n ** 63n), RANGE],
  [1.5, RANGE],
  [NaN, RANGE],
  [Infinity, RANGE],
  [-Infinity, RANGE],
  [2n ** 63n, RANGE],
  [2 ** 64, RANGE],
  [1e300, RANGE],
  ['1', TYPE],
  [null, TYPE],
  [true, TYPE],
  [{}, TYPE],
  [[1], TYPE],
  [Symbol('one'), TYPE],
];

/** Valid options of each class, to spoil one at a time. */
const VALID = {
  TokenBucket: [TokenBucket, { rate: 1, burst: 1 }],
  Gcra: [Gcra, { maxBurst: 1, countPerPeriod: 1, periodMs: 1000 }],
  LeakyBucketMeter: [LeakyBucketMeter, { capacity: 1, countPerPeriod: 1, periodMs: 1000 }],
  LeakyBucketQueue: [LeakyBucketQueue, { capacity: 1, intervalMs: 1000 }],
  FixedWindow: [FixedWindow, { limit: 1, windowMs: 1000 }],
  SlidingWindow: [SlidingWindow, { limit: 1, windowMs: 1000, subWindows: 4 }],
  SlidingLog: [SlidingLog, { limit: 1, windowMs: 1000 }],
  SlidingWindowCounter: [SlidingWindowCounter, { limit: 1, windowMs: 1000 }],
  SrTcm: [SrTcm, { cir: 1, cbs: 1, ebs: 1 }],
  TrTcm: [TrTcm, { pir: 2, pbs: 1, cir: 1, cbs: 1 }],
};

/** [class, spoiled options, kind, argument, value]. */
const BAD_OPTIONS = [
  ['TokenBucket', { rate: NaN }, RANGE, 'rate', NaN],
  ['TokenBucket', { rate: -1 }, RANGE, 'rate', -1],
  ['TokenBucket', { rate: -Infinity }, RANGE, 'rate', -Infinity],
  ['TokenBucket', { rate: '1' }, TYPE, 'rate', '1'],
  ['TokenBucket', { rate: 1n }, TYPE, 'rate', 1n],
  ['TokenBucket', { rate: undefined }, TYPE, 'rate', undefined],
  ['TokenBucket', { burst: -1 }, RANGE, 'burst', -1],
  ['TokenBucket', { burst: -(2n ** 63n) }, RANGE, 'burst', -(2n ** 63n)],
  ['TokenBucket', { burst: 0.5 }, RANGE, 'burst', 0.5],
  ['TokenBucket', { burst: 2n ** 63n }, RANGE, 'burst', 2n ** 63n],
  ['TokenBucket', { burst: '1' }, TYPE, 'burst', '1'],
  ['TokenBucket', { burst: undefined }, TYPE, 'burst', undefined],
  ['Gcra', { maxBurst: 2n ** 63n - 1n }, RANGE, 'maxBurst', 2n ** 63n - 1n],
  ['Gcra', { maxBurst: -1 }, RANGE, 'maxBurst', -1],
  ['Gcra', { countPerPeriod: 0 }, RANGE, 'countPerPeriod', 0],
  ['Gcra', { countPerPeriod: 0n }, RANGE, 'countPerPeriod', 0n],
  ['Gcra', { countPerPeriod: 'x' }, TYPE, 'countPerPeriod', 'x'],
  ['Gcra', { periodMs: 0 }, RANGE, 'periodMs', 0],
  ['Gcra', { periodMs: 0.0004 }, RANGE, 'periodMs', 0.0004], // under a microsecond
  ['Gcra', { periodMs: -1 }, RANGE, 'periodMs', -1],
  ['Gcra', { periodMs: NaN }, RANGE, 'periodMs', NaN],
  ['Gcra', { periodMs: -Infinity }, RANGE, 'periodMs', -Infinity],
  // The rule of every duration: never clamped to 2^63 - 1 µs (292,271 years).
  ['Gcra', { periodMs: Infinity }, RANGE, 'periodMs', Infinity],
  ['Gcra', { periodMs: 1e300 }, RANGE, 'periodMs', 1e300],
  ['LeakyBucketQueue', { intervalMs: Infinity }, RANGE, 'intervalMs', Infinity],
  ['FixedWindow', { windowMs: Infinity }, RANGE, 'windowMs', Infinity],
  ['Gcra', { periodMs: '1' }, TYPE, 'periodMs', '1'],
  ['Gcra', { periodMs: 1n }, TYPE, 'periodMs', 1n],
  ['Gcra', { periodMs: undefined }, TYPE, 'periodMs', undefined],
  ['Gcra', { periodMs: undefined, periodMicros: 0 }, RANGE, 'periodMicros', 0],
  ['Gcra', { periodMs: undefined, periodMicros: -5n }, RANGE, 'periodMicros', -5n],
  ['Gcra', { periodMs: undefined, periodMicros: 1.5 }, RANGE, 'periodMicros', 1.5],
  ['Gcra', { periodMs: undefined, periodMicros: 2n ** 63n }, RANGE, 'periodMicros', 2n ** 63n],
  ['Gcra', { periodMs: undefined, periodMicros: '1' }, TYPE, 'periodMicros', '1'],
  ['LeakyBucketMeter', { capacity: 0 }, RANGE, 'capacity', 0],
  ['LeakyBucketMeter', { capacity: 2n ** 63n - 1n, countPerPeriod: 0 }, RANGE, 'countPerPeriod', 0],
  ['LeakyBucketMeter', { periodMs: 0 }, RANGE, 'periodMs', 0],
  ['LeakyBucketQueue', { capacity: -1 }, RANGE, 'capacity', -1],
  ['LeakyBucketQueue', { intervalMs: 0 }, RANGE, 'intervalMs', 0],
  ['LeakyBucketQueue', { intervalMs: undefined, intervalMicros: -1 }, RANGE, 'intervalMicros', -1],
  ['LeakyBucketQueue', { intervalMs: null }, TYPE, 'intervalMs', null],
  ['LeakyBucketQueue', { slack: -1 }, RANGE, 'slack', -1],
  ['LeakyBucketQueue', { slack: 2n ** 63n }, RANGE, 'slack', 2n ** 63n],
  ['LeakyBucketQueue', { slack: '1' }, TYPE, 'slack', '1'],
  ['LeakyBucketQueue', { slack: null }, TYPE, 'slack', null],
  ['FixedWindow', { limit: 0 }, RANGE, 'limit', 0],
  ['FixedWindow', { limit: -1n }, RANGE, 'limit', -1n],
  ['FixedWindow', { windowMs: 0 }, RANGE, 'windowMs', 0],
  ['FixedWindow', { windowMs: undefined, windowMicros: 0n }, RANGE, 'windowMicros', 0n],
  ['SlidingWindow', { subWindows: 0 }, RANGE, 'subWindows', 0],
  ['SlidingWindow', { subWindows: 17 }, RANGE, 'subWindows', 17],
  ['SlidingWindow', { subWindows: 2 ** 32 }, RANGE, 'subWindows', 2 ** 32],
  ['SlidingWindow', { windowMs: 1, subWindows: 3 }, RANGE, 'subWindows', 3], // does not divide 1,000 µs
  ['SlidingWindow', { subWindows: null }, TYPE, 'subWindows', null],
  ['SlidingWindow', { windowMs: 0.001, subWindows: undefined }, RANGE, 'subWindows', 10], // 1 µs in the default 10
  ['SlidingWindow', { limit: 2 ** 32 }, RANGE, 'limit', 2 ** 32],
  ['SlidingLog', { limit: SlidingLog.MAX_LIMIT + 1 }, RANGE, 'limit', SlidingLog.MAX_LIMIT + 1],
  ['SlidingLog', { limit: 0 }, RANGE, 'limit', 0],
  ['SlidingWindowCounter', { windowMs: -1 }, RANGE, 'windowMs', -1],
  ['SrTcm', { cir: 0 }, RANGE, 'cir', 0],
  ['SrTcm', { cbs: 0, ebs: 0 }, RANGE, 'cbs', 0],
  ['SrTcm', { ebs: -1 }, RANGE, 'ebs', -1],
  ['SrTcm', { cbs: '1' }, TYPE, 'cbs', '1'],
  ['TrTcm', { pir: 1, cir: 2 }, RANGE, 'pir', 1],
  ['TrTcm', { pbs: 0 }, RANGE, 'pbs', 0],
  ['TrTcm', { cbs: 0 }, RANGE, 'cbs', 0],
  ['TrTcm', { cir: 0 }, RANGE, 'cir', 0],
  ['TrTcm', { pir: 2n ** 64n }, RANGE, 'pir', 2n ** 64n],
];

/** The message of the RangeError `make` throws. */
function messageOf(make) {
  try {
    make();
  } catch (e) {
    assert.ok(e instanceof RangeError, String(e));
    return e.message;
  }
  return assert.fail('nothing thrown');
}

test('a refusal names the real bound of the argument, and of every duration', () => {
  assert.match(messageOf(() => new SlidingLog({ limit: -1, windowMs: 1000 })), /must be between 1 and 1048576$/);
  assert.match(messageOf(() => new SlidingLog({ limit: 2 ** 20 + 1, windowMs: 1000 })), /must be between 1 and 1048576$/);
  assert.match(messageOf(() => new SlidingWindow({ limit: -1, windowMs: 1, subWindows: 1 })), /and 4294967295$/);
  assert.match(messageOf(() => ConcurrencyLimiter.fixed(0)), /must be between 1 and 9223372036854775807$/);
  assert.match(
    messageOf(() => new Gcra({ maxBurst: 1, countPerPeriod: 1, periodMs: Infinity })),
    /^invalid argument periodMs = Infinity: must be between 1 and 9223372036854775807 microseconds/,
  );
});

test('every option of every class: its range and its type', () => {
  for (const [name, spoiled, kind, argument, value] of BAD_OPTIONS) {
    const [Class, valid] = VALID[name];
    throws(() => new Class({ ...valid, ...spoiled }), kind, argument, value);
  }
  // And the valid ones are valid, with their edges.
  for (const [Class, valid] of Object.values(VALID)) assert.ok(new Class(valid));
  assert.ok(new TokenBucket({ rate: 0, burst: 0 }));
  assert.ok(new TokenBucket({ rate: Infinity, burst: 2n ** 63n - 1n }));
  assert.ok(new Gcra({ maxBurst: 2n ** 63n - 2n, countPerPeriod: 1, periodMicros: 1 }));
  assert.ok(new LeakyBucketQueue({ capacity: 0, intervalMicros: 1n }));
  assert.ok(new SlidingWindow({ limit: 2 ** 32 - 1, windowMs: 1.6, subWindows: 16n }));
  assert.ok(new SrTcm({ cir: 1, cbs: 0, ebs: 1 }));
});

test('options objects: an object of known keys; a duration in one unit', () => {
  for (const [name, [Class, valid]] of Object.entries(VALID)) {
    for (const bad of [null, 5, 'x', true, 1n, () => {}, [1]]) throws(() => new Class(bad), TYPE, 'options', bad);
    throws(() => new Class(), TYPE, Object.keys(valid)[0], undefined);
    throws(() => new Class({ ...valid, typo: 1 }), OPTION, 'options');
    assert.throws(() => new Class({ ...valid, typo: 1 }), /unknown option "typo"/, name);
    throws(() => new Class({ ...valid, clock: {} }), TYPE, 'clock', undefined, false);
    throws(() => new Class({ ...valid, clock: 5 }), TYPE, 'clock', 5);
    throws(() => new Class({ ...valid, clock: null }), TYPE, 'clock', null);
    // Options set to undefined count as absent.
    assert.ok(new Class({ ...valid, clock: undefined }), name);
  }
  throws(() => new Gcra({ maxBurst: 1, countPerPeriod: 1, periodMs: 1, periodMicros: 1000 }), OPTION, 'options');
  throws(() => new FixedWindow({ limit: 1, windowMs: 1, windowMicros: 1000n }), OPTION, 'options');
  throws(() => new TokenBucket({ rate: 1, burst: 1, windowMs: 5 }), OPTION, 'options');
});

test('costs: every entry point refuses what is not an integer from 0 to 2^63 - 1', async () => {
  const clock = new ManualClock();
  const limiters = Object.entries(VALID)
    .filter(([name]) => !name.endsWith('Tcm'))
    .map(([, [Class, valid]]) => new Class({ ...valid, clock }));
  for (const limiter of limiters) {
    for (const [value, kind] of BAD_COUNTS) {
      throws(() => limiter.check(value), kind, 'cost', value);
      throws(() => limiter.tryAcquire(value), kind, 'cost', value);
      throws(() => limiter.peek(value), kind, 'cost', value);
    }
  }
  const bucket = new TokenBucket({ rate: 1, burst: 1, clock });
  const queue = new LeakyBucketQueue({ capacity: 1, intervalMs: 1, clock });
  for (const [value, kind] of BAD_COUNTS) {
    throws(() => bucket.reserve(value), kind, 'cost', value);
    await rejects(bucket.wait(value), kind, 'cost', value);
    await rejects(queue.acquire(value), kind, 'cost', value);
  }
  // undefined is the default, 1.
  assert.equal(bucket.check(undefined).remaining, 0);
  assert.equal(clock.now, 0);
});

test('the token bucket: rate, burst and timeouts', async () => {
  const bucket = new TokenBucket({ rate: 1, burst: 1, clock: new ManualClock() });
  for (const [value, kind] of [[NaN, RANGE], [-1, RANGE], [-Infinity, RANGE], ['1', TYPE], [1n, TYPE], [null, TYPE]]) {
    throws(() => (bucket.rate = /** @type {any} */ (value)), kind, 'rate', value);
  }
  for (const [value, kind] of BAD_COUNTS) throws(() => (bucket.burst = /** @type {any} */ (value)), kind, 'burst', value);
  await rejects(bucket.wait(1, { timeoutMs: NaN }), RANGE, 'timeoutMs', NaN);
  await rejects(bucket.wait(1, { timeoutMs: '1' }), TYPE, 'timeoutMs', '1');
  await rejects(bucket.wait(1, { timeoutMicros: 1.5 }), RANGE, 'timeoutMicros', 1.5);
  await rejects(bucket.wait(1, { timeoutMicros: 2n ** 63n }), RANGE, 'timeoutMicros', 2n ** 63n);
  await rejects(bucket.wait(1, { timeoutMs: 1, timeoutMicros: 1 }), OPTION, 'options');
  await rejects(bucket.wait(1, { timeout: 1 }), OPTION, 'options');
  await rejects(bucket.wait(1, null), TYPE, 'options', null);
  assert.equal(bucket.rate, 1);
  assert.equal(bucket.burst, 1);
});

test('the markers: bytes and colours', () => {
  const clock = new ManualClock();
  for (const marker of [new SrTcm({ cir: 1, cbs: 1, ebs: 1, clock }), new TrTcm({ pir: 1, pbs: 1, cir: 1, cbs: 1, clock })]) {
    for (const [value, kind] of BAD_COUNTS) {
      throws(() => marker.mark(value), kind, 'bytes', value);
      throws(() => marker.markAware(value, 'green'), kind, 'bytes', value);
    }
    throws(() => marker.mark(/** @type {any} */ (undefined)), TYPE, 'bytes', undefined);
    for (const [value, kind] of [['blue', RANGE], ['Green', RANGE], ['', RANGE], [0, TYPE], [null, TYPE], [undefined, TYPE]]) {
      throws(() => marker.markAware(1, /** @type {any} */ (value)), kind, 'color', value);
    }
    assert.equal(marker.mark(1), 'green', 'the errors took nothing');
  }
});

test('the concurrency limiter: limits, policies, samples', () => {
  for (const [value, kind] of [...BAD_COUNTS, [0, RANGE], [0n, RANGE]]) {
    throws(() => ConcurrencyLimiter.fixed(/** @type {any} */ (value)), kind, 'limit', value);
  }
  const gradient = [
    [{ minLimit: 0 }, RANGE, 'minLimit', 0],
    [{ minLimit: 5, maxLimit: 4 }, RANGE, 'maxLimit', 4],
    [{ maxLimit: 2n ** 63n }, RANGE, 'maxLimit', 2n ** 63n],
    [{ initialLimit: 2000 }, RANGE, 'initialLimit', 2000],
    [{ smoothing: 0 }, RANGE, 'smoothing', 0],
    [{ smoothing: 1.5 }, RANGE, 'smoothing', 1.5],
    [{ smoothing: NaN }, RANGE, 'smoothing', NaN],
    [{ smoothing: '0.5' }, TYPE, 'smoothing', '0.5'],
    [{ rttTolerance: 0.5 }, RANGE, 'rttTolerance', 0.5],
    [{ rttTolerance: Infinity }, RANGE, 'rttTolerance', Infinity],
    [{ queueSize: 2000 }, RANGE, 'queueSize', 2000],
    [{ backoffRatio: 0.4 }, RANGE, 'backoffRatio', 0.4],
    [{ backoffRatio: 1.1 }, RANGE, 'backoffRatio', 1.1],
    [{ probeInterval: -1 }, RANGE, 'probeInterval', -1],
    [{ probeInterval: 1.5 }, RANGE, 'probeInterval', 1.5],
    [{ initialLimit: 'x' }, TYPE, 'initialLimit', 'x'],
  ];
  for (const [options, kind, argument, value] of gradient) {
    throws(() => ConcurrencyLimiter.gradient(options), kind, argument, value);
  }
  const aimd = [
    [{ minLimit: 0 }, RANGE, 'minLimit', 0],
    [{ initialLimit: 0 }, RANGE, 'initialLimit', 0],
    [{ maxLimit: 10 }, RANGE, 'maxLimit', 10], // below the default minimum, 20
    [{ backoffRatio: 1 }, RANGE, 'backoffRatio', 1],
    [{ backoffRatio: 0.49 }, RANGE, 'backoffRatio', 0.49],
    [{ rttTimeoutMs: 0 }, RANGE, 'rttTimeoutMs', 0],
    [{ rttTimeoutMs: -1 }, RANGE, 'rttTimeoutMs', -1],
    [{ rttTimeoutMicros: -1n }, RANGE, 'rttTimeoutMicros', -1n],
    [{ rttTimeoutMs: '5' }, TYPE, 'rttTimeoutMs', '5'],
  ];
  for (const [options, kind, argument, value] of aimd) {
    throws(() => ConcurrencyLimiter.aimd(options), kind, argument, value);
  }
  throws(() => ConcurrencyLimiter.aimd({ rttTimeoutMs: 1, rttTimeoutMicros: 1 }), OPTION, 'options');
  throws(() => ConcurrencyLimiter.gradient({ maxlimit: 5 }), OPTION, 'options');
  throws(() => ConcurrencyLimiter.fixed(1, { clock: 1 }), TYPE, 'clock', 1);
  throws(() => ConcurrencyLimiter.gradient(/** @type {any} */ (5)), TYPE, 'options', 5);

  const limiter = ConcurrencyLimiter.aimd({ initialLimit: 20 });
  const samples = [
    [{ rttMs: -1, inFlight: 1 }, RANGE, 'rttMs', -1],
    [{ rttMicros: -1n, inFlight: 1 }, RANGE, 'rttMicros', -1n],
    [{ rttMs: NaN, inFlight: 1 }, RANGE, 'rttMs', NaN],
    [{ rttMs: '1', inFlight: 1 }, TYPE, 'rttMs', '1'],
    [{ inFlight: 1 }, TYPE, 'rttMs', undefined],
    [{ rttMs: 1, inFlight: -1 }, RANGE, 'inFlight', -1],
    [{ rttMs: 1 }, TYPE, 'inFlight', undefined],
    [{ rttMs: 1, inFlight: 1, dropped: 'yes' }, TYPE, 'dropped', 'yes'],
    [{ rttMs: 1, inFlight: 1, dropped: 1 }, TYPE, 'dropped', 1],
  ];
  for (const [sample, kind, argument, value] of samples) throws(() => limiter.sample(/** @type {any} */ (sample)), kind, argument, value);
  throws(() => limiter.sample(/** @type {any} */ ({ rttMs: 1, inFlight: 1, rtt: 1 })), OPTION, 'options');
  throws(() => limiter.sample(/** @type {any} */ (undefined)), TYPE, 'rttMs', undefined);
  assert.equal(limiter.limit, 20, 'the errors changed nothing');
});

test('the composite: its limits, each named by its place', () => {
  const fine = { algorithm: 'fixedWindow', limit: 1, windowMs: 1 };
  const cases = [
    [[], RANGE, 'limits', 0],
    ['x', TYPE, 'limits', 'x'],
    [null, TYPE, 'limits', null],
    [undefined, TYPE, 'limits', undefined],
    [[5], TYPE, 'limits[0]', 5],
    [[fine, null], TYPE, 'limits[1]', null],
    [[{}], TYPE, 'limits[0].algorithm', undefined],
    [[{ algorithm: 'fixed' }], RANGE, 'limits[0].algorithm', 'fixed'],
    [[{ algorithm: 7 }], TYPE, 'limits[0].algorithm', 7],
    [[fine, { ...fine, limit: 0 }], RANGE, 'limits[1].limit', 0],
    [[fine, { ...fine, windowMs: 0.0001 }], RANGE, 'limits[1].windowMs', 0.0001],
    [[{ algorithm: 'tokenBucket', rate: -1, burst: 1 }], RANGE, 'limits[0].rate', -1],
    [[{ algorithm: 'slidingWindow', limit: 1, windowMs: 1, subWindows: 3 }], RANGE, 'limits[0].subWindows', 3],
    [[{ algorithm: 'gcra', maxBurst: 0, countPerPeriod: 1, periodMicros: '1' }], TYPE, 'limits[0].periodMicros', '1'],
  ];
  for (const [limits, kind, argument, value] of cases) {
    throws(() => new CompositeLimiter(/** @type {any} */ (limits)), kind, argument, value);
  }
  throws(() => new CompositeLimiter(/** @type {any} */ ([{ ...fine, typo: 1 }])), OPTION, 'limits[0]');
  assert.throws(() => new CompositeLimiter(/** @type {any} */ ([fine, { ...fine, clock: new ManualClock() }])), /^TypeError: limits\[1\]: unknown option "clock"/);
  throws(() => new CompositeLimiter(/** @type {any} */ ([fine]), /** @type {any} */ ({ clock: {} })), TYPE, 'clock', undefined, false);
  throws(() => new CompositeLimiter(/** @type {any} */ ([fine]), /** @type {any} */ ({ limits: [] })), OPTION, 'options');
});

test('errors change nothing', async () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket({ rate: 10, burst: 5, clock });
  bucket.check(2);
  const before = { ...bucket.peek() };
  for (const [value] of BAD_COUNTS) {
    assert.throws(() => bucket.check(value));
    assert.throws(() => bucket.reserve(value));
    await assert.rejects(bucket.wait(value));
    assert.throws(() => (bucket.burst = value));
  }
  assert.throws(() => (bucket.rate = NaN));
  assert.deepEqual({ ...bucket.peek() }, before);
  assert.deepEqual([bucket.rate, bucket.burst, bucket.tokens(), clock.now], [10, 5, 3, 0]);
});
