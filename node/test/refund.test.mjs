// refund: units admitted that should not count given back — what
// express-rate-limit's Store.decrement (skipSuccessfulRequests,
// skipFailedRequests) needs — on every admission-style class, a composite
// and a keyed limiter, on ManualClocks; and its invalid arguments.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CompositeLimiter,
  FixedWindow,
  Gcra,
  KeyedLimiter,
  LeakyBucketMeter,
  LeakyBucketQueue,
  ManualClock,
  SlidingLog,
  SlidingWindow,
  SlidingWindowCounter,
  TokenBucket,
} from '../index.mjs';
import { RANGE, TYPE, throws } from './expect-error.mjs';

/** Every class that takes a refund, with options for "2 at once, then wait". */
function refunding(clock) {
  return [
    new TokenBucket({ rate: 1, burst: 2, clock }),
    new Gcra({ maxBurst: 1, countPerPeriod: 1, periodMs: 1000, clock }),
    new LeakyBucketMeter({ capacity: 2, countPerPeriod: 1, periodMs: 1000, clock }),
    new FixedWindow({ limit: 2, windowMs: 1000, clock }),
    new SlidingWindow({ limit: 2, windowMs: 1000, subWindows: 4, clock }),
    new SlidingLog({ limit: 2, windowMs: 1000, clock }),
    new SlidingWindowCounter({ limit: 2, windowMs: 1000, clock }),
    new CompositeLimiter(
      [
        { algorithm: 'fixedWindow', limit: 2, windowMs: 1000 },
        { algorithm: 'gcra', maxBurst: 4, countPerPeriod: 1, periodMs: 1000 },
      ],
      { clock },
    ),
  ];
}

test('a check refunded leaves the limiter as before it; never more than a fresh one', () => {
  const clock = new ManualClock();
  for (const limiter of refunding(clock)) {
    const name = limiter.constructor.name;
    assert.equal(limiter.check().allowed, true, name);
    const before = { ...limiter.peek() };
    assert.equal(limiter.check().allowed, true, name);
    assert.equal(limiter.check().allowed, false, name);
    limiter.refund();
    assert.deepEqual({ ...limiter.peek() }, before, `${name}: the refunded unit is back`);
    limiter.refund(0);
    assert.deepEqual({ ...limiter.peek() }, before, `${name}: a refund of 0 gives nothing`);
    limiter.refund(10n);
    assert.equal(limiter.peek(0).remaining, 2, `${name}: a refund of more than was taken`);
    assert.equal(limiter.check(3).allowed, false, name);
  }
});

test('a window that has rolled gives nothing back', () => {
  const clock = new ManualClock();
  const window = new FixedWindow({ limit: 2, windowMs: 1000, clock });
  assert.equal(window.check(2).allowed, true);
  clock.advance(1000);
  assert.equal(window.check(2).allowed, true);
  clock.advance(1000);
  window.refund(2);
  assert.equal(window.check(2).allowed, true);
  assert.equal(window.check().allowed, false, 'the refund after the roll gave nothing back');
});

test('a LeakyBucketQueue gives nothing back: it hands out slots', () => {
  const clock = new ManualClock();
  const queue = new LeakyBucketQueue({ capacity: 1, intervalMs: 1000, clock });
  assert.equal(queue.check(2).allowed, true);
  const before = { ...queue.peek() };
  queue.refund(2);
  assert.deepEqual({ ...queue.peek() }, before);
});

test("KeyedLimiter.refund gives back to the key's own limiter; false for a key not held", () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter({ algorithm: 'fixedWindow', limit: 2, windowMs: 1000 }, { maxKeys: 10, clock });
  assert.equal(keyed.refund('user:1'), false);
  assert.equal(keyed.size, 0, 'a refund creates no key');
  assert.equal(keyed.check('user:1', 2).allowed, true);
  assert.equal(keyed.check('user:2', 2).allowed, true);
  assert.equal(keyed.check('user:1').allowed, false);
  assert.equal(keyed.refund('user:1'), true);
  assert.equal(keyed.refund(Buffer.from('user:1'), 0n), true, 'the same key as bytes');
  assert.equal(keyed.check('user:1').allowed, true, 'the refunded unit');
  assert.equal(keyed.check('user:1').allowed, false);
  assert.equal(keyed.check('user:2').allowed, false, "another key's limiter is untouched");
  keyed.refund('user:2', 5);
  assert.equal(keyed.peek('user:2').remaining, 1);
  assert.equal(keyed.evictFull(), 1, 'refunded back to full: dropped, changing nothing');
  assert.equal(keyed.refund('user:2'), false);
});

test('refund: invalid arguments are typed errors naming them', () => {
  const limiters = refunding(new ManualClock());
  for (const limiter of limiters) {
    throws(() => limiter.refund(-1), RANGE, 'cost', -1);
    throws(() => limiter.refund(1.5), RANGE, 'cost', 1.5);
    throws(() => limiter.refund('1'), TYPE, 'cost', '1');
  }
  const keyed = new KeyedLimiter({ algorithm: 'gcra', maxBurst: 1, countPerPeriod: 1, periodMs: 1000 }, { maxKeys: 5 });
  throws(() => keyed.refund(5), TYPE, 'key', 5);
  throws(() => keyed.refund(), TYPE, 'key', undefined);
  throws(() => keyed.refund('k', -1), RANGE, 'cost', -1);
  throws(() => keyed.refund('k'.repeat(257)), RANGE, 'key', undefined, false);
  assert.equal(keyed.size, 0);
});
