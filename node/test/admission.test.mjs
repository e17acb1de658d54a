// The admission-style limiters through the JavaScript API, on ManualClocks:
// each algorithm's documented semantics, its extras, and what every one
// shares (check, tryAcquire, peek, a cost of 0, bigints).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  AdmissionLimiter,
  Decision,
  FixedWindow,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  ManualClock,
  NEVER,
  Reservation,
  SlidingLog,
  SlidingWindow,
  SlidingWindowCounter,
  TokenBucket,
  codes,
} from '../index.mjs';

/** The decision's fields as a plain object, for deepEqual. */
const fields = (d) => ({
  allowed: d.allowed,
  limit: d.limit,
  remaining: d.remaining,
  retryAfterMs: d.retryAfterMs,
  resetAfterMs: d.resetAfterMs,
  waitMs: d.waitMs,
  windowMs: d.windowMs,
});

/** A decision as `fields` gives it: [allowed, limit, remaining, retry, reset, wait, window] (ms). */
const D = (allowed, limit, remaining, retryAfterMs, resetAfterMs, waitMs, windowMs) => ({
  allowed,
  limit,
  remaining,
  retryAfterMs,
  resetAfterMs,
  waitMs,
  windowMs,
});

/** Every admission-style class, with options for "2 at once, then wait". */
function everyAlgorithm(clock) {
  return [
    new TokenBucket({ rate: 1, burst: 2, clock }),
    new Gcra({ maxBurst: 1, countPerPeriod: 1, periodMs: 1000, clock }),
    new LeakyBucketMeter({ capacity: 2, countPerPeriod: 1, periodMs: 1000, clock }),
    new LeakyBucketQueue({ capacity: 1, intervalMs: 1000, clock }),
    new FixedWindow({ limit: 2, windowMs: 1000, clock }),
    new SlidingWindow({ limit: 2, windowMs: 1000, subWindows: 4, clock }),
    new SlidingLog({ limit: 2, windowMs: 1000, clock }),
    new SlidingWindowCounter({ limit: 2, windowMs: 1000, clock }),
  ];
}

test('every algorithm admits two, then refuses; a refusal and a peek take nothing', () => {
  for (const limiter of everyAlgorithm(new ManualClock())) {
    const name = limiter[Symbol.toStringTag];
    assert.ok(limiter instanceof AdmissionLimiter, name);
    const first = limiter.check();
    assert.ok(first instanceof Decision, name);
    assert.equal(first.allowed, true, name);
    assert.equal(first.limit, 2, name); // the queue's: capacity + 1
    assert.equal(limiter.tryAcquire(), true, name);
    const refused = limiter.check();
    assert.equal(refused.allowed, false, name);
    assert.equal(refused.remaining, 0, name);
    // Within a second (the weighted counter: within two windows).
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 2000, `${name}: ${refused.retryAfterMs}`);
    // Refusals and peeks change nothing: the same answer again.
    assert.deepEqual(fields(limiter.peek()), fields(refused), name);
    assert.deepEqual(fields(limiter.check(1)), fields(refused), name);
    assert.equal(limiter.tryAcquire(1), false, name);
    // A cost above the limit can never be admitted.
    const never = limiter.check(3);
    assert.equal(never.isNever, true, name);
    assert.equal(never.retryAfterMs, Infinity, name);
    assert.equal(never.retryAfterMicros, NEVER, name);
    // A cost of 0 is a free look: admitted, nothing taken.
    const look = limiter.check(0);
    assert.equal(look.allowed, true, name);
    assert.equal(look.remaining, 0, name);
    assert.equal(limiter.tryAcquire(), false, name);
  }
});

test('every algorithm admits again once its time has come', () => {
  const clock = new ManualClock();
  const limiters = everyAlgorithm(clock);
  for (const limiter of limiters) limiter.check(2);
  const retries = limiters.map((l) => l.check().retryAfterMs);
  clock.advance(Math.max(...retries.filter((r) => r !== Infinity)));
  for (const limiter of limiters) assert.equal(limiter.check().allowed, true, limiter[Symbol.toStringTag]);
});

test('costs are numbers or bigints, the same limiter either way', () => {
  const clock = new ManualClock();
  const a = new FixedWindow({ limit: 10, windowMs: 1000, clock });
  const b = new FixedWindow({ limit: 10n, windowMicros: 1_000_000n, clock });
  for (const [x, y] of [[3, 3n], [0, 0n], [5, 5n], [3, 3n]]) {
    assert.deepEqual(fields(a.check(x)), fields(b.check(y)));
  }
  // Costs up to 2^63 − 1 are fine: refused, never admissible.
  assert.equal(a.check(2n ** 63n - 1n).isNever, true);
  assert.equal(a.check(2 ** 60).isNever, true);
});

test('TokenBucket: x/time/rate semantics, bursts and refill', () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket({ rate: 10, burst: 2, clock });
  assert.deepEqual(fields(bucket.check(2)), D(true, 2, 0, 0, 200, 0, 200));
  assert.deepEqual(fields(bucket.check()), D(false, 2, 0, 100, 200, 0, 200));
  assert.equal(bucket.check().retryAfterMicros, 100_000n);
  clock.advance(100);
  assert.equal(bucket.check().allowed, true);
  assert.equal(bucket.tokens(), 0);
  clock.advance(50);
  assert.equal(bucket.tokens(), 0.5);
  assert.equal(bucket.rate, 10);
  assert.equal(bucket.burst, 2);
});

test('TokenBucket: rate and burst can change, keeping the tokens', () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket({ rate: 1, burst: 5, clock });
  assert.equal(bucket.check(5).allowed, true);
  clock.advance(2000);
  bucket.rate = 10; // refills up to now at the old rate first
  bucket.burst = 3n;
  assert.equal(bucket.rate, 10);
  assert.equal(bucket.burst, 3);
  assert.equal(bucket.tokens(), 2);
  // Infinity: no limit; 0: never refills.
  bucket.rate = Infinity;
  assert.equal(bucket.check(3).allowed, true);
  bucket.rate = 0;
  assert.equal(bucket.rate, 0);
});

test('TokenBucket: reservations delay, and cancel gives the tokens back once', () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket({ rate: 10, burst: 1, clock });
  assert.equal(bucket.check().allowed, true);
  const r = bucket.reserve();
  assert.ok(r instanceof Reservation);
  assert.equal(r.ok, true);
  assert.equal(r.tokens, 1);
  assert.equal(r.delayMs(), 100);
  assert.equal(r.delayMicros(), 100_000n);
  clock.advance(40);
  assert.equal(r.delayMs(), 60);
  r.cancel();
  assert.equal(r.tokens, 0);
  assert.ok(Math.abs(bucket.tokens() - 0.4) < 1e-12, String(bucket.tokens()));
  const before = bucket.tokens();
  r.cancel();
  assert.equal(bucket.tokens(), before);
  // Above the burst: refused, nothing taken, never.
  const refused = bucket.reserve(2n);
  assert.equal(refused.ok, false);
  assert.equal(refused.delayMs(), Infinity);
  assert.equal(refused.delayMicros(), NEVER);
  assert.equal(refused.tokens, 0);
  assert.equal(bucket.tokens(), before);
  assert.equal(Object.prototype.toString.call(r), '[object Reservation]');
});

test('TokenBucket: wait takes the tokens and waits for them, within the timeout', async () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket({ rate: 4, burst: 1, clock });
  assert.equal((await bucket.wait()).waitMs, 0);
  // Not within 249 ms: refused at once, taking nothing, waiting not at all.
  const refused = await bucket.wait(1, { timeoutMs: 249 });
  assert.equal(refused.allowed, false);
  assert.equal(clock.now, 0);
  const d = await bucket.wait(1, { timeoutMicros: 250_000n });
  assert.equal(d.allowed, true);
  assert.equal(d.waitMs, 250);
  assert.equal(d.waitMicros, 250_000n);
  assert.equal(clock.now, 250); // waiting on a ManualClock advanced it
  // No timeout: as long as it takes; above the burst: never.
  assert.equal((await bucket.wait()).waitMs, 250);
  assert.equal(clock.now, 500);
  assert.equal((await bucket.wait(2)).allowed, false);
  assert.equal((await bucket.wait(1, { timeoutMs: -5 })).allowed, false);
  assert.ok(bucket.wait() instanceof Promise);
});

test('Gcra: redis-cell CL.THROTTLE replies', () => {
  const clock = new ManualClock();
  // CL.THROTTLE key 4 1 1: one per second, 5 at once.
  const gcra = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000, clock });
  assert.equal(gcra.limit, 5);
  const remaining = [];
  for (let i = 0; i < 5; i++) remaining.push(gcra.check().remaining);
  assert.deepEqual(remaining, [4, 3, 2, 1, 0]);
  assert.deepEqual(fields(gcra.check()), D(false, 5, 0, 1000, 5000, 0, 5000));
  assert.equal(gcra.check(6).isNever, true);
  clock.advance(1000);
  assert.deepEqual(fields(gcra.check()), D(true, 5, 0, 0, 5000, 0, 5000));
  // periodMs and periodMicros make the same limiter.
  const a = new Gcra({ maxBurst: 2, countPerPeriod: 3, periodMs: 1.5, clock });
  const b = new Gcra({ maxBurst: 2n, countPerPeriod: 3n, periodMicros: 1500, clock });
  for (let i = 0; i < 5; i++) assert.deepEqual(fields(a.check()), fields(b.check()));
});

test('LeakyBucketMeter: overflow is refused; the level drains', () => {
  const clock = new ManualClock();
  const meter = new LeakyBucketMeter({ capacity: 3, countPerPeriod: 1, periodMs: 100, clock });
  assert.deepEqual(fields(meter.check(3)), D(true, 3, 0, 0, 300, 0, 300));
  assert.equal(meter.level(), 3);
  assert.deepEqual(fields(meter.check()), D(false, 3, 0, 100, 300, 0, 300));
  clock.advance(150);
  assert.equal(meter.level(), 1);
  assert.equal(meter.check().allowed, true);
  assert.equal(meter.level(), 2);
});

test('LeakyBucketQueue: each request gets a slot; acquire waits for it', async () => {
  const clock = new ManualClock();
  const queue = new LeakyBucketQueue({ capacity: 2, intervalMs: 100, clock });
  // check() gives the slot and does not wait: the clock stays.
  const waits = [queue.check(), queue.check(), queue.check(), queue.check()].map((d) => (d.allowed ? d.waitMs : -1));
  assert.deepEqual(waits, [0, 100, 200, -1]);
  assert.equal(clock.now, 0);
  const other = new LeakyBucketQueue({ capacity: 2, intervalMicros: 100_000n, clock });
  assert.equal((await other.acquire()).waitMs, 0);
  const second = await other.acquire();
  assert.deepEqual(fields(second), D(true, 3, 1, 0, 200, 100, 300));
  assert.equal(clock.now, 100); // acquire on a ManualClock advanced it by the wait
  // A refusal resolves at once: the clock stays.
  const never = await other.acquire(4);
  assert.equal(never.isNever, true);
  assert.equal(clock.now, 100);
});

test("LeakyBucketQueue: slack saves unused slots, as uber-go/ratelimit's WithSlack", () => {
  const clock = new ManualClock();
  // Uber's New(10, WithSlack(2)): a queue that never refuses.
  const queue = new LeakyBucketQueue({ capacity: 2n ** 63n - 1n, intervalMs: 100, slack: 2, clock });
  assert.equal(queue.check().waitMs, 0); // nothing saved before the first
  assert.equal(queue.check().waitMs, 100);
  clock.advance(1000); // idle: two unused slots saved, not ten
  assert.deepEqual([1, 2, 3, 4].map(() => queue.check().waitMs), [0, 0, 0, 100]);
  // Left out, slack is 0 (and a sliding window's subWindows 10).
  const strict = new LeakyBucketQueue({ capacity: 2, intervalMs: 100, clock });
  assert.equal(strict.check().waitMs, 0);
  clock.advance(1000);
  assert.deepEqual([1, 2].map(() => strict.check().waitMs), [0, 100]);
  const window = new SlidingWindow({ limit: 10, windowMs: 1000, clock });
  assert.equal(window.check(10).allowed, true);
});

test('FixedWindow: windows aligned to the creation', () => {
  const clock = new ManualClock();
  const window = new FixedWindow({ limit: 2, windowMs: 1000, clock });
  assert.deepEqual(fields(window.check()), D(true, 2, 1, 0, 1000, 0, 1000));
  assert.deepEqual(fields(window.check()), D(true, 2, 0, 0, 1000, 0, 1000));
  assert.deepEqual(fields(window.check()), D(false, 2, 0, 1000, 1000, 0, 1000));
  clock.advance(400);
  assert.deepEqual(fields(window.peek()), D(false, 2, 0, 600, 600, 0, 1000));
  clock.advance(600);
  assert.deepEqual(fields(window.check()), D(true, 2, 1, 0, 1000, 0, 1000));
});

test('SlidingWindow: the window slides a sub-window at a time', () => {
  const clock = new ManualClock();
  const window = new SlidingWindow({ limit: 2, windowMs: 1000, subWindows: 4, clock });
  window.check(2);
  clock.advance(250);
  assert.deepEqual(fields(window.check()), D(false, 2, 0, 750, 750, 0, 1000));
  clock.advance(750);
  assert.equal(window.check().allowed, true);
});

test('SlidingLog: exact, and bounded in memory', () => {
  const clock = new ManualClock();
  const log = new SlidingLog({ limit: 2, windowMs: 10, clock });
  assert.equal(log.check(2).allowed, true);
  assert.deepEqual(fields(log.check()), D(false, 2, 0, 10, 10, 0, 10));
  clock.advance(10);
  assert.equal(log.check(2).allowed, true);
  assert.equal(SlidingLog.MAX_LIMIT, 2 ** 20);
  assert.equal(new SlidingLog({ limit: SlidingLog.MAX_LIMIT, windowMs: 1 }).check().limit, 2 ** 20);
});

test('SlidingWindowCounter: the weighted two-window estimate', () => {
  const clock = new ManualClock();
  const counter = new SlidingWindowCounter({ limit: 10, windowMs: 1000, clock });
  assert.equal(counter.check(10).allowed, true);
  assert.deepEqual(fields(counter.check()), D(false, 10, 0, 1100, 2000, 0, 1000));
  clock.advance(1500); // half of the last window still counts: 5 of 10
  assert.equal(counter.check(5).allowed, true);
  assert.equal(counter.check().allowed, false);
});

test('windows: the limit changes at run time, keeping the count', () => {
  for (const make of [
    (clock) => new FixedWindow({ limit: 4, windowMs: 1000, clock }),
    (clock) => new SlidingWindow({ limit: 4, windowMs: 1000, subWindows: 2, clock }),
    (clock) => new SlidingLog({ limit: 4, windowMs: 1000, clock }),
    (clock) => new SlidingWindowCounter({ limit: 4, windowMs: 1000, clock }),
  ]) {
    const window = make(new ManualClock());
    const name = String(window);
    assert.equal(window.check(3).allowed, true, name);
    window.limit = 2; // under the 3 counted: refused, a free look admitted
    assert.deepEqual([window.check().allowed, window.check().limit, window.check().remaining], [false, 2, 0], name);
    assert.equal(window.peek(0).allowed, true, name);
    window.limit = 5n; // the difference at once
    assert.equal(window.check(2).allowed, true, name);
    assert.equal(window.check().allowed, false, name);
    assert.equal(window.limit, 5, name);
  }
});

test('windows: a bad limit throws and changes nothing', () => {
  const log = new SlidingLog({ limit: 2, windowMs: 1000, clock: new ManualClock() });
  const sliding = new SlidingWindow({ limit: 2, windowMs: 1000, subWindows: 2, clock: new ManualClock() });
  for (const [window, bad] of [[log, 0], [log, -1], [log, SlidingLog.MAX_LIMIT + 1], [log, 1.5], [sliding, 2 ** 32]]) {
    assert.throws(
      () => {
        window.limit = bad;
      },
      (e) => e instanceof RangeError && e.code === codes.invalidArgument && e.argument === 'limit',
      `${window} ${bad}`,
    );
    assert.equal(window.limit, 2);
  }
  assert.throws(
    () => {
      log.limit = /** @type {any} */ ('3');
    },
    (e) => e instanceof TypeError && e.code === codes.invalidArgType && e.argument === 'limit',
  );
  assert.equal(log.check(2).allowed && !log.check().allowed, true);
});

test('limiters on one ManualClock share its time', () => {
  const clock = new ManualClock();
  const [a, b] = [new FixedWindow({ limit: 1, windowMs: 100, clock }), new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMs: 100, clock })];
  a.check();
  b.check();
  clock.advance(100);
  assert.equal(a.check().allowed && b.check().allowed, true);
});

test('on the real clock, limiters run on their own', async () => {
  const gcra = new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMs: 30 });
  assert.equal(gcra.tryAcquire(), true);
  assert.equal(gcra.tryAcquire(), false);
  const retry = gcra.check().retryAfterMs;
  assert.ok(retry > 0 && retry <= 30, String(retry));
  await new Promise((resolve) => setTimeout(resolve, 35));
  assert.equal(gcra.tryAcquire(), true);
});

test('classes print as themselves', () => {
  for (const limiter of everyAlgorithm(new ManualClock())) {
    assert.equal(Object.prototype.toString.call(limiter), `[object ${limiter.constructor.name}]`);
  }
});
