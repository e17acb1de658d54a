// Waiting never blocks the event loop: 1,000 acquires wait on a real clock
// while timers keep firing.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RateLimiter } from '../index.mjs';

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

  // The 1,000 calls returned at once: nothing slept on this thread.
  assert.ok(queueing < 100, `queueing 1,000 acquires took ${queueing} ms`);
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
  assert.ok(ticks >= 20, `the 1 ms interval fired only ${ticks} times in ${elapsed} ms`);
  assert.ok(resolvedAt[999] - resolvedAt[0] >= 10, `ticks between first and last: ${resolvedAt[999] - resolvedAt[0]}`);
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
