// CompositeLimiter: several limits, all or nothing, on ManualClocks.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AdmissionLimiter, CompositeLimiter, ManualClock } from '../index.mjs';

test('all or nothing, with each part\'s own decision', () => {
  const clock = new ManualClock();
  const limiter = new CompositeLimiter(
    [
      { algorithm: 'fixedWindow', limit: 2, windowMs: 1000 },
      { algorithm: 'slidingLog', limit: 3, windowMicros: 10_000_000n },
    ],
    { clock },
  );
  assert.ok(limiter instanceof AdmissionLimiter);
  assert.equal(limiter.size, 2);
  assert.equal(limiter.check(2).allowed, true);
  const { decision, parts } = limiter.checkEach(1);
  assert.equal(decision.allowed, false);
  assert.deepEqual(
    parts.map((p) => [p.allowed, p.remaining]),
    [
      [false, 0],
      [true, 1], // would have admitted it: shown untouched
    ],
  );
  clock.advance(1000);
  assert.equal(limiter.tryAcquire(), true);
  const refused = limiter.checkEach(1);
  assert.deepEqual(
    [refused.decision.allowed, refused.decision.limit, refused.decision.retryAfterMs],
    [false, 3, 9000],
  );
  assert.equal(refused.parts[0].remaining, 1, 'the admitting part shows nothing taken');
  assert.deepEqual({ ...limiter.peek() }, { ...refused.decision });
  assert.deepEqual({ ...limiter.check() }, { ...refused.decision });
});

test('every admission-style algorithm can be a part', () => {
  const clock = new ManualClock();
  const limits = [
    { algorithm: 'tokenBucket', rate: 1, burst: 5 },
    { algorithm: 'gcra', maxBurst: 4, countPerPeriod: 1, periodMs: 1000 },
    { algorithm: 'leakyBucketMeter', capacity: 5, countPerPeriod: 1, periodMs: 1000 },
    { algorithm: 'leakyBucketQueue', capacity: 4, intervalMs: 1000 },
    { algorithm: 'fixedWindow', limit: 5, windowMs: 1000 },
    { algorithm: 'slidingWindow', limit: 5, windowMs: 1000, subWindows: 10 },
    { algorithm: 'slidingLog', limit: 5, windowMs: 1000 },
    { algorithm: 'slidingWindowCounter', limit: 5, windowMs: 1000 },
  ];
  const limiter = new CompositeLimiter(/** @type {any} */ (limits), { clock });
  const { decision, parts } = limiter.checkEach(5);
  assert.equal(decision.allowed, true);
  assert.equal(parts.length, 8);
  assert.ok(parts.every((p) => p.allowed && p.limit === 5 && p.remaining === 0));
  assert.equal(limiter.check().allowed, false);
});

test('an admitted composite waits as long as its slowest part', () => {
  const clock = new ManualClock();
  const limiter = new CompositeLimiter(
    [
      { algorithm: 'leakyBucketQueue', capacity: 4, intervalMs: 250 },
      { algorithm: 'fixedWindow', limit: 10, windowMs: 1000 },
    ],
    { clock },
  );
  assert.equal(limiter.check().waitMs, 0);
  const { decision, parts } = limiter.checkEach();
  assert.deepEqual([decision.waitMs, parts[0].waitMs, parts[1].waitMs], [250, 250, 0]);
  assert.equal(decision.remaining, 3, 'the part with the fewest units left');
});
