// Every wait takes `{ signal }`, an AbortSignal: aborted before the call it
// takes nothing, aborted during the wait it rejects at once and what was
// reserved stays reserved; the rejection is the platform's AbortError.
// Every method that takes options refuses unknown ones (lib/sleep.js,
// lib/options.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CompositeLimiter,
  ConcurrencyLimiter,
  FixedWindow,
  Gcra,
  KeyedLimiter,
  LeakyBucketMeter,
  LeakyBucketQueue,
  ManualClock,
  RateLimiter,
  SlidingLog,
  SlidingWindow,
  SlidingWindowCounter,
  SrTcm,
  TokenBucket,
  TrTcm,
} from '../index.mjs';
import { OPTION, TYPE, check } from './expect-error.mjs';

/** What `promise` rejects with (fails if it resolves). */
async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

/** The platform's AbortError, as Node's timers/promises make it. */
function isAbortError(error, reason) {
  assert.ok(error instanceof Error, String(error));
  assert.equal(error.name, 'AbortError');
  assert.equal(error.code, 'ABORT_ERR');
  assert.equal(error.cause, reason);
}

/** Timers this process has pending (ours included). */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

// Each wait: [name, make(clock) → state, wait(state, options) → Promise,
// what was taken (state) → a comparable value, extra options it takes].
const WAITS = [
  [
    'RateLimiter.acquire',
    (clock) => { const l = RateLimiter.create(1, { clock }); l.tryAcquire(); return l; },
    (l, options) => l.acquire(1, options),
    (l) => l.timeUntilAvailable(),
    {},
  ],
  [
    'RateLimiter.tryAcquire',
    (clock) => { const l = RateLimiter.create(1, { clock }); l.tryAcquire(); return l; },
    (l, options) => l.tryAcquire(1, options),
    (l) => l.timeUntilAvailable(),
    { timeoutMs: 5_000 },
  ],
  [
    'TokenBucket.wait',
    (clock) => { const b = new TokenBucket({ rate: 1, burst: 1, clock }); b.check(); return b; },
    (b, options) => b.wait(1, options),
    (b) => b.tokens(),
    { timeoutMs: 5_000 },
  ],
  [
    'LeakyBucketQueue.acquire',
    (clock) => { const q = new LeakyBucketQueue({ capacity: 5, intervalMs: 1000, clock }); q.check(); return q; },
    (q, options) => q.acquire(1, options),
    (q) => q.peek().waitMicros,
    {},
  ],
];

for (const [name, make, wait, taken, extra] of WAITS) {
  test(`${name}: a signal aborted before the call takes nothing`, async () => {
    const clock = new ManualClock();
    const state = make(clock);
    const before = taken(state);
    const reason = new Error('gone');
    const error = await rejection(wait(state, { ...extra, signal: AbortSignal.abort(reason) }));
    isAbortError(error, reason);
    assert.deepEqual([taken(state), clock.now], [before, 0]);
  });

  test(`${name}: a live signal changes nothing; on a ManualClock nothing sleeps`, async () => {
    const [a, b] = [new ManualClock(), new ManualClock()];
    const [x, y] = [make(a), make(b)];
    const plain = await wait(x, Object.keys(extra).length ? extra : undefined);
    const signalled = await wait(y, { ...extra, signal: new AbortController().signal });
    assert.deepEqual(signalled, plain);
    assert.deepEqual([taken(y), b.now], [taken(x), a.now]);
  });

  test(`${name}: an abort during the wait rejects at once; what was taken stays taken`, async () => {
    const state = make(undefined); // real time: the wait is about 1 s
    const idleTimers = timers();
    const controller = new AbortController();
    const start = performance.now();
    setTimeout(() => controller.abort(), 30);
    const error = await rejection(wait(state, { ...extra, signal: controller.signal }));
    const took = performance.now() - start;
    isAbortError(error, controller.signal.reason);
    assert.ok(error.cause instanceof DOMException && error.cause.name === 'AbortError');
    assert.ok(took < 500, `aborted after ${took} ms`);
    assert.equal(timers(), idleTimers, 'the wait left no timer behind');
    // The aborted call's units are still taken: the next is ~2 s away.
    const owed = taken(state);
    if (name === 'TokenBucket.wait') assert.ok(owed < -0.9, `tokens ${owed}`);
    else if (name === 'LeakyBucketQueue.acquire') assert.ok(owed > 1_500_000n, `next slot in ${owed} µs`);
    else assert.ok(owed > 1_500, `next permit in ${owed} ms`);
  });

  test(`${name}: AbortSignal.timeout bounds the wait`, async () => {
    const state = make(undefined);
    const signal = AbortSignal.timeout(20);
    const error = await rejection(wait(state, { ...extra, signal }));
    isAbortError(error, signal.reason);
    assert.equal(error.cause.name, 'TimeoutError');
  });

  test(`${name}: signal must be an AbortSignal; unknown options are refused`, async () => {
    const clock = new ManualClock();
    const state = make(clock);
    const before = taken(state);
    for (const bad of [null, 5, 'abort', {}, { aborted: false }, new AbortController()]) {
      check(await rejection(wait(state, { ...extra, signal: bad })), TYPE, 'signal', bad);
    }
    for (const options of [{ ...extra, sigal: undefined }, { ...extra, timeout: 5 }, { ...extra, abortSignal: AbortSignal.abort() }]) {
      check(await rejection(wait(state, options)), OPTION, 'options');
    }
    check(await rejection(wait(state, 5)), TYPE, 'options', 5);
    assert.deepEqual([taken(state), clock.now], [before, 0]);
  });
}

test('acquire has no timeout: timeoutMs is refused, not ignored', async () => {
  const limiter = RateLimiter.create(0.5, { clock: new ManualClock() });
  limiter.tryAcquire();
  const error = await rejection(limiter.acquire(1, { timeoutMs: 100 }));
  check(error, OPTION, 'options');
  assert.match(error.message, /unknown option "timeoutMs" \(known options: signal\)/);
  const queue = new LeakyBucketQueue({ capacity: 1, intervalMs: 1000, clock: new ManualClock() });
  check(await rejection(queue.acquire(1, { timeoutMs: 100 })), OPTION, 'options');
  assert.equal(limiter.timeUntilAvailable(), 2000); // nothing taken
});

test('the methods that do not wait take no signal', () => {
  const limiter = RateLimiter.create(1, { clock: new ManualClock() });
  assert.throws(() => limiter.canAcquire(1, { signal: AbortSignal.abort() }), { code: OPTION.code });
});

// Every method that takes an options object, given an unknown key.
const TAKES_OPTIONS = [
  ['RateLimiter.create', (o) => RateLimiter.create(1, o)],
  ['RateLimiter.acquire', (o) => RateLimiter.create(1).acquire(1, o)],
  ['RateLimiter.tryAcquire', (o) => RateLimiter.create(1).tryAcquire(1, o)],
  ['RateLimiter.canAcquire', (o) => RateLimiter.create(1).canAcquire(1, o)],
  ['TokenBucket', (o) => new TokenBucket({ rate: 1, burst: 1, ...o })],
  ['TokenBucket.wait', (o) => new TokenBucket({ rate: 1, burst: 1 }).wait(1, o)],
  ['Gcra', (o) => new Gcra({ maxBurst: 1, countPerPeriod: 1, periodMs: 1, ...o })],
  ['LeakyBucketMeter', (o) => new LeakyBucketMeter({ capacity: 1, countPerPeriod: 1, periodMs: 1, ...o })],
  ['LeakyBucketQueue', (o) => new LeakyBucketQueue({ capacity: 1, intervalMs: 1, ...o })],
  ['LeakyBucketQueue.acquire', (o) => new LeakyBucketQueue({ capacity: 1, intervalMs: 1 }).acquire(1, o)],
  ['FixedWindow', (o) => new FixedWindow({ limit: 1, windowMs: 1, ...o })],
  ['SlidingWindow', (o) => new SlidingWindow({ limit: 1, windowMs: 1, subWindows: 1, ...o })],
  ['SlidingLog', (o) => new SlidingLog({ limit: 1, windowMs: 1, ...o })],
  ['SlidingWindowCounter', (o) => new SlidingWindowCounter({ limit: 1, windowMs: 1, ...o })],
  ['CompositeLimiter', (o) => new CompositeLimiter([{ algorithm: 'fixedWindow', limit: 1, windowMs: 1 }], o)],
  ['CompositeLimiter limits[0]', (o) => new CompositeLimiter([{ algorithm: 'fixedWindow', limit: 1, windowMs: 1, ...o }]), 'limits[0]'],
  ['KeyedLimiter', (o) => new KeyedLimiter({ algorithm: 'fixedWindow', limit: 1, windowMs: 1 }, { maxKeys: 1, ...o })],
  ['SrTcm', (o) => new SrTcm({ cir: 1, cbs: 1, ebs: 1, ...o })],
  ['TrTcm', (o) => new TrTcm({ pir: 1, pbs: 1, cir: 1, cbs: 1, ...o })],
  ['ConcurrencyLimiter.fixed', (o) => ConcurrencyLimiter.fixed(1, o)],
  ['ConcurrencyLimiter.gradient', (o) => ConcurrencyLimiter.gradient(o)],
  ['ConcurrencyLimiter.aimd', (o) => ConcurrencyLimiter.aimd(o)],
  ['ConcurrencyLimiter.sample', (o) => ConcurrencyLimiter.fixed(1).sample({ rttMs: 1, inFlight: 1, ...o })],
];

for (const [name, call, argument = 'options'] of TAKES_OPTIONS) {
  test(`${name}: an unknown option is refused`, async () => {
    let error;
    try {
      await call({ bogus: 1 });
    } catch (e) {
      error = e;
    }
    assert.ok(error !== undefined, `${name} accepted { bogus: 1 }`);
    check(error, OPTION, argument);
    assert.match(error.message, /unknown option "bogus"/);
  });
}
