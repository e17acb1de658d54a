// Waiting never blocks the event loop: 1,000 acquires wait on a real clock
// while timers keep firing.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LeakyBucketQueue, RateLimiter, TokenBucket } from '../index.mjs';

test('timers keep firing while 1,000 acquires wait', async () => {
  // A permit every 200 µs, none saved up while idle: the last waits ≈ 200 ms.
  const limiter = RateLimiter.create(5_000, { maxBurstSeconds: 0 });
  let ticks = 0;
  const interval = setInterval(() => ticks++, 1);
  const resolvedAt = []; // the tick count when each acquire resolved
  let resolvedAtMidpoint = -1;
  const midpoint = setTimeout(() => (resolvedAtMidpoint = resolvedAt.length), 100);

  const start = performance.now();
  const acquires = [];
  for (let i = 0; i < 1_000; i++) {
    acquires.push(limiter.acquire().then((seconds) => (resolvedAt.push(ticks), seconds)));
  }
  const queueing = performance.now() - start;
  const waits = await Promise.all(acquires);
  const elapsed = performance.now() - start;
  clearInterval(interval);
  clearTimeout(midpoint);

  // The 1,000 calls returned at once: nothing slept on this thread (had
  // they slept, queueing would take the whole 200 ms schedule).
  assert.ok(queueing < 150, `queueing 1,000 acquires took ${queueing} ms`);
  // The waits are Guava's schedule: permit i is due 200 µs × i after the
  // first, less the time that passed while the calls were being made.
  assert.equal(waits[0], 0);
  for (let i = 1; i < waits.length; i++) {
    const due = i * 200e-6;
    assert.ok(waits[i] <= due + 1e-6 && waits[i] >= due - queueing / 1e3 - 1e-3, `wait ${i}: ${waits[i]} s`);
  }
  // The last is due 200 ms after the first, less the time spent queueing
  // (which a loaded machine stretches).
  assert.ok(waits[999] > 0.2 - queueing / 1e3 - 1e-3 && waits[999] <= 0.2, `the last wait was ${waits[999]} s`);
  assert.ok(elapsed >= 150, `all acquires resolved after only ${elapsed} ms`);
  // The proof: while they waited, the timers ran, and acquires kept resolving
  // in between — some were done and some not when the 100 ms timer fired.
  assert.ok(resolvedAtMidpoint > 0 && resolvedAtMidpoint < 1_000, `${resolvedAtMidpoint} resolved at 100 ms`);
  // (A loaded machine runs a 1 ms interval far less often than every ms;
  // a blocked loop would run it not at all.)
  assert.ok(ticks >= 10, `the 1 ms interval fired only ${ticks} times in ${elapsed} ms`);
  assert.ok(resolvedAt[999] - resolvedAt[0] >= 5, `ticks between first and last: ${resolvedAt[999] - resolvedAt[0]}`);
});

test('a timed tryAcquire waits on a timer too', async () => {
  const limiter = RateLimiter.create(20); // one permit every 50 ms
  limiter.tryAcquire();
  let ticks = 0;
  const interval = setInterval(() => ticks++, 1);
  const results = await Promise.all(
    Array.from({ length: 5 }, () => limiter.tryAcquire(1, { timeoutMs: 1_000 })),
  );
  clearInterval(interval);
  assert.deepEqual(results, [true, true, true, true, true]);
  assert.ok(ticks >= 20, `the interval fired only ${ticks} times during 250 ms of waits`);
});

/**
 * Starts 1,000 waits (`start(i)` gives each one's Promise of a Decision)
 * with a 1 ms interval ticking, and checks that the calls returned at
 * once, that the waits are spread over ≈ 200 ms as the limiter scheduled
 * them, and that timers fired and waits resolved all along.
 */
async function thousandWaits(start) {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 1);
  const resolvedAt = [];
  let resolvedAtMidpoint = -1;
  const midpoint = setTimeout(() => (resolvedAtMidpoint = resolvedAt.length), 100);
  const t0 = performance.now();
  const waits = [];
  for (let i = 0; i < 1_000; i++) waits.push(start(i).then((d) => (resolvedAt.push(ticks), d)));
  const queueing = performance.now() - t0;
  const decisions = await Promise.all(waits);
  const elapsed = performance.now() - t0;
  clearInterval(interval);
  clearTimeout(midpoint);

  assert.ok(queueing < 100, `starting 1,000 waits took ${queueing} ms`);
  assert.ok(decisions.every((d) => d.allowed), 'every wait was admitted');
  // Slot i is due 200 µs × i after the first, less the time the calls took.
  for (let i = 1; i < decisions.length; i++) {
    const due = i * 0.2;
    assert.ok(decisions[i].waitMs <= due + 0.001 && decisions[i].waitMs >= due - queueing - 1, `wait ${i}: ${decisions[i].waitMs} ms`);
  }
  assert.ok(elapsed >= 150, `all waits resolved after only ${elapsed} ms`);
  assert.ok(resolvedAtMidpoint > 0 && resolvedAtMidpoint < 1_000, `${resolvedAtMidpoint} resolved at 100 ms`);
  // (A loaded machine runs a 1 ms interval far less often than every ms;
  // a blocked loop would run it not at all.)
  assert.ok(ticks >= 10, `the 1 ms interval fired only ${ticks} times in ${elapsed} ms`);
  assert.ok(resolvedAt[999] - resolvedAt[0] >= 5, `ticks between first and last: ${resolvedAt[999] - resolvedAt[0]}`);
}

test('TokenBucket.wait: timers keep firing while 1,000 waits wait', async () => {
  // A token every 200 µs, one at a time.
  const bucket = new TokenBucket({ rate: 5_000, burst: 1 });
  await thousandWaits(() => bucket.wait());
});

test('LeakyBucketQueue.acquire: timers keep firing while 1,000 acquires wait for their slots', async () => {
  const queue = new LeakyBucketQueue({ capacity: 1_000, intervalMicros: 200 });
  await thousandWaits(() => queue.acquire());
});

test('a refused wait resolves at once', async () => {
  const bucket = new TokenBucket({ rate: 1, burst: 1 });
  bucket.check();
  const t0 = performance.now();
  const d = await bucket.wait(1, { timeoutMs: 100 });
  assert.equal(d.allowed, false);
  assert.ok(performance.now() - t0 < 50);
});
