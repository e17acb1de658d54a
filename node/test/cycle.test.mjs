// CycleLimiter (Resilience4j's AtomicRateLimiter): on a ManualClock every
// decision and wait is deterministic; on real time the waits are timers
// that leave the event loop free and are counted while they run.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CycleLimiter, Decision, ManualClock } from '../index.mjs';
import { OPTION, RANGE, throws, TYPE } from './expect-error.mjs';

const make = (options) => () => new CycleLimiter(options);

test('acquirePermission waits for the next cycle by moving a manual clock', async () => {
  const clock = new ManualClock();
  const limiter = new CycleLimiter({ limitForPeriod: 2, limitRefreshPeriodMs: 100, timeoutDurationMs: 150, clock });
  assert.equal(await limiter.acquirePermission(2), true);
  assert.equal(clock.now, 0);
  assert.equal(await limiter.acquirePermission(), true); // the next cycle's, 100 ms away
  assert.equal(clock.now, 100);
  assert.equal(limiter.metrics().availablePermissions, 1);
});

test('a refused acquirePermission takes nothing and waits the timeout', async () => {
  const clock = new ManualClock();
  const limiter = new CycleLimiter({ limitForPeriod: 1, limitRefreshPeriodMs: 1000, timeoutDurationMs: 250, clock });
  assert.equal(await limiter.acquirePermission(), true);
  assert.equal(await limiter.acquirePermission(), false);
  assert.equal(clock.now, 250);
  assert.equal(limiter.metrics().availablePermissions, 0);
});

test('reservePermission gives the wait in milliseconds, or undefined', () => {
  const clock = new ManualClock();
  const limiter = new CycleLimiter({ limitForPeriod: 3, limitRefreshPeriodMicros: 10_000n, timeoutDurationMicros: 12_000, clock });
  assert.deepEqual([1, 2, 3].map(() => limiter.reservePermission()), [0, 0, 0]);
  assert.equal(limiter.reservePermission(3), 10);
  assert.equal(limiter.reservePermission(), undefined);
  assert.equal(clock.now, 0);
  assert.deepEqual(limiter.metrics(), { availablePermissions: -3, timeToWaitMs: 20, cycle: 0, numberOfWaitingThreads: 0 });
});

test('check and checkNow answer with Decisions, taking what they admit', () => {
  const clock = new ManualClock();
  const limiter = new CycleLimiter({ limitForPeriod: 2, limitRefreshPeriodMs: 1000, timeoutDurationMs: 1000, clock });
  const first = limiter.check(2);
  assert.ok(first instanceof Decision);
  assert.deepEqual(
    [first.allowed, first.remaining, first.waitMs, first.resetAfterMs, first.windowMs],
    [true, 0, 0, 1000, 1000],
  );
  const waited = limiter.check();
  assert.deepEqual([waited.allowed, waited.waitMs], [true, 1000]);
  const refused = limiter.checkNow();
  assert.equal(refused.allowed, false);
  assert.ok(refused.retryAfterMs > 0);
  assert.equal(limiter.tryAcquirePermission(), false);
  assert.equal(clock.now, 0);
});

test('changes apply from the next calculation; the drain takes what is left', () => {
  const clock = new ManualClock();
  const limiter = new CycleLimiter({ limitForPeriod: 10, limitRefreshPeriodMs: 250, timeoutDurationMs: 500, clock });
  assert.equal(limiter.tryAcquirePermission(7), true);
  assert.equal(limiter.drainPermissions(), 3);
  assert.equal(limiter.drainPermissions(), 0);
  limiter.changeLimitForPeriod(5);
  assert.equal(limiter.limitForPeriod, 5);
  clock.advance(250);
  assert.equal(limiter.metrics().availablePermissions, 5);
  limiter.changeTimeoutDurationMs(0);
  assert.equal(limiter.timeoutDurationMs, 0);
  assert.equal(limiter.check(6).allowed, false);
  limiter.changeTimeoutDurationMicros(2_000_000n);
  assert.equal(limiter.timeoutDurationMs, 2000);
  assert.equal(limiter.limitRefreshPeriodMs, 250);
  assert.equal(Object.prototype.toString.call(limiter), '[object CycleLimiter]');
});

test('bad arguments are typed errors naming them in camelCase with their unit', () => {
  throws(make({ limitForPeriod: 0, limitRefreshPeriodMs: 1, timeoutDurationMs: 0 }), RANGE, 'limitForPeriod', 0);
  throws(make({ limitForPeriod: 2 ** 31, limitRefreshPeriodMs: 1, timeoutDurationMs: 0 }), RANGE, 'limitForPeriod', 2 ** 31);
  throws(make({ limitForPeriod: 1.5, limitRefreshPeriodMs: 1, timeoutDurationMs: 0 }), RANGE, 'limitForPeriod', 1.5);
  throws(make({ limitForPeriod: '1', limitRefreshPeriodMs: 1, timeoutDurationMs: 0 }), TYPE, 'limitForPeriod', '1');
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMs: 0, timeoutDurationMs: 0 }), RANGE, 'limitRefreshPeriodMs', 0);
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMicros: 0, timeoutDurationMs: 0 }), RANGE, 'limitRefreshPeriodMicros', 0);
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMs: 1, timeoutDurationMs: -1 }), RANGE, 'timeoutDurationMs', -1);
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMs: 1, timeoutDurationMicros: -1n }), RANGE, 'timeoutDurationMicros', -1n);
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMs: 1 }), TYPE, 'timeoutDurationMs', undefined, false);
  throws(make({ limitForPeriod: 1, limitRefreshPeriodMs: 1, timeoutDurationMs: 0, timeout: 1 }), OPTION, 'options');
  const limiter = new CycleLimiter({ limitForPeriod: 1, limitRefreshPeriodMs: 1, timeoutDurationMs: 0 });
  throws(() => limiter.tryAcquirePermission(-1), RANGE, 'permits', -1);
  throws(() => limiter.reservePermission(0.5), RANGE, 'permits', 0.5);
  throws(() => limiter.changeLimitForPeriod(0), RANGE, 'limitForPeriod', 0);
  throws(() => limiter.changeTimeoutDurationMs(Number.NaN), RANGE, 'timeoutDurationMs', Number.NaN);
  assert.equal(limiter.limitForPeriod, 1);
});

test('on real time a wait is a timer: the event loop runs, and the wait is counted', async () => {
  const limiter = new CycleLimiter({ limitForPeriod: 1, limitRefreshPeriodMs: 300, timeoutDurationMs: 1000 });
  assert.equal(await limiter.acquirePermission(), true);
  const start = performance.now();
  const waiting = limiter.acquirePermission();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(limiter.metrics().numberOfWaitingThreads, 1);
    assert.equal(await waiting, true);
  } finally {
    clearInterval(timer);
  }
  assert.ok(performance.now() - start >= 200, 'waited for the next cycle');
  assert.ok(ticks >= 5, `the event loop ran during the wait (${ticks} ticks)`);
  assert.equal(limiter.metrics().numberOfWaitingThreads, 0);
});

test('an aborted wait stops counting and rejects', async () => {
  const limiter = new CycleLimiter({ limitForPeriod: 1, limitRefreshPeriodMs: 5000, timeoutDurationMs: 10_000 });
  assert.equal(await limiter.acquirePermission(), true);
  const controller = new AbortController();
  const waiting = limiter.acquirePermission(1, { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const counted = limiter.metrics().numberOfWaitingThreads;
  controller.abort(); // first, so that a failure below leaves no timer running
  assert.equal(counted, 1);
  await assert.rejects(waiting, (e) => e.name === 'AbortError');
  assert.equal(limiter.metrics().numberOfWaitingThreads, 0);
});
