// RateLimiter and ManualClock: Guava's semantics through the JavaScript API.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ManualClock, RateLimiter } from '../index.mjs';

/** A limiter on a fresh ManualClock. */
function manual(permitsPerSecond, options = {}) {
  const clock = new ManualClock();
  return { clock, limiter: RateLimiter.create(permitsPerSecond, { ...options, clock }) };
}

test("Guava's documented example: acquire(1..5) at 1 permit/s waits 0, 1, 2, 3, 4 s", async () => {
  const { clock, limiter } = manual(1);
  const waits = [];
  for (const permits of [1, 2, 3, 4, 5]) waits.push(await limiter.acquire(permits));
  assert.deepEqual(waits, [0, 1, 2, 3, 4]);
  // Waiting on a ManualClock advanced it by the waits.
  assert.equal(clock.now, 10_000);
  assert.equal(clock.nowMicros, 10_000_000n);
});

test('acquire resolves to the seconds waited, to the microsecond', async () => {
  const { clock, limiter } = manual(999);
  assert.equal(await limiter.acquire(), 0);
  assert.equal(await limiter.acquire(), 1001 / 1e6); // Guava: 1e6/999 µs, truncated
  assert.equal(clock.nowMicros, 1001n);
});

test("Guava's testWarmUp: a warming-up limiter starts cold and cools down again", async () => {
  const { clock, limiter } = manual(2, { warmupMs: 4000, coldFactor: 3 });
  const burst = async () => {
    const waits = [];
    for (let i = 0; i < 8; i++) waits.push((await limiter.acquire()).toFixed(2));
    return waits.join(', ');
  };
  const cold = '0.00, 1.38, 1.13, 0.88, 0.63, 0.50, 0.50, 0.50';
  assert.equal(await burst(), cold);
  clock.advance(500); // repays the last acquire
  clock.advance(4000); // cold again
  assert.equal(await burst(), cold);
  clock.advance(500);
  clock.advance(2000); // not cold yet: it takes another 2 s
  assert.equal(await burst(), '0.00, 0.50, 0.50, 0.50, 0.50, 0.50, 0.50, 0.50');
});

test('warmupMicros is the same limiter as warmupMs, exactly', async () => {
  const a = manual(2, { warmupMs: 4000 });
  const b = manual(2, { warmupMicros: 4_000_000n });
  const c = manual(2, { warmupMicros: 4_000_000 });
  for (let i = 0; i < 6; i++) {
    const wait = await a.limiter.acquire();
    assert.equal(await b.limiter.acquire(), wait);
    assert.equal(await c.limiter.acquire(), wait);
  }
});

test('a synchronous tryAcquire takes permits now or refuses without taking any', () => {
  const { clock, limiter } = manual(4);
  assert.equal(limiter.tryAcquire(), true);
  assert.equal(limiter.tryAcquire(), false); // the next permit is 250 ms away
  assert.equal(limiter.tryAcquire(3), false);
  assert.equal(limiter.timeUntilAvailable(), 250); // nothing was taken by the refusals
  clock.advance(249.999);
  assert.equal(limiter.tryAcquire(), false);
  clock.advanceMicros(1n);
  assert.equal(limiter.tryAcquire(undefined), true); // undefined means 1
  assert.equal(clock.now, 250); // a synchronous call never moves the clock
});

test('tryAcquire with a timeout waits (advancing a ManualClock) or resolves false at once', async () => {
  const { clock, limiter } = manual(4);
  assert.equal(limiter.tryAcquire(), true);
  const refused = limiter.tryAcquire(1, { timeoutMs: 249.999 });
  assert.ok(refused instanceof Promise);
  assert.equal(await refused, false);
  assert.equal(clock.nowMicros, 0n);
  assert.equal(await limiter.tryAcquire(1, { timeoutMicros: 249_999n }), false);
  assert.equal(await limiter.tryAcquire(1, { timeoutMs: -5 }), false); // negative: do not wait (Guava)
  assert.equal(await limiter.tryAcquire(1, { timeoutMicros: 250_000 }), true);
  assert.equal(clock.nowMicros, 250_000n); // waited for it
  assert.equal(await limiter.tryAcquire(undefined, { timeoutMs: Infinity }), true);
  assert.equal(clock.nowMicros, 500_000n);
  // The largest timeout there is, in exact microseconds.
  assert.equal(await limiter.tryAcquire(2, { timeoutMicros: 2n ** 63n - 1n }), true);
  assert.equal(clock.nowMicros, 750_000n);
});

test('canAcquire and timeUntilAvailable tell without taking anything', async () => {
  const { clock, limiter } = manual(2);
  await limiter.acquire();
  await limiter.acquire(); // reserves until t = 1 s; the clock is at 0.5 s
  assert.equal(clock.now, 500);
  assert.equal(limiter.timeUntilAvailable(), 500);
  assert.equal(limiter.timeUntilAvailable(1000), 500); // any size is granted when free (Guava)
  assert.equal(limiter.canAcquire(), false);
  assert.equal(limiter.canAcquire(1, { timeoutMs: 499.999 }), false);
  assert.equal(limiter.canAcquire(1, { timeoutMs: 500 }), true);
  assert.equal(limiter.canAcquire(1, { timeoutMicros: 500_000n }), true);
  assert.equal(limiter.timeUntilAvailable(), 500); // still nothing taken
  clock.advance(500);
  assert.equal(limiter.timeUntilAvailable(), 0);
  assert.equal(limiter.canAcquire(), true);
});

test('rate: get and set; the next request still pays at the old rate (Guava)', async () => {
  const { limiter } = manual(1);
  assert.equal(limiter.rate, 1);
  await limiter.acquire();
  limiter.rate = 10;
  assert.equal(limiter.rate, 10);
  assert.equal(await limiter.acquire(), 1);
  assert.equal(await limiter.acquire(), 0.1);
  limiter.rate = Infinity; // Guava accepts +Infinity as a rate
  assert.equal(limiter.rate, Infinity);
});

test('maxBurstSeconds: an idle bursty limiter saves up that many seconds of permits', async () => {
  const { clock, limiter } = manual(2, { maxBurstSeconds: 3 });
  clock.advance(60_000);
  let granted = 0;
  while (limiter.tryAcquire()) granted++;
  // 3 s × 2/s saved, plus the one granted when free (paid for by the next).
  assert.equal(granted, 7);
  const { clock: clock0, limiter: noBurst } = manual(2, { maxBurstSeconds: 0 });
  clock0.advance(60_000);
  assert.equal(noBurst.tryAcquire(), true);
  assert.equal(noBurst.tryAcquire(), false);
});

test('an infinite rate grants everything at once', async () => {
  const { clock, limiter } = manual(Infinity);
  for (let i = 0; i < 100; i++) assert.equal(limiter.tryAcquire(2 ** 31 - 1), true);
  assert.equal(await limiter.acquire(7), 0);
  assert.equal(clock.now, 0);
});

test('ManualClock: starts at 0, moves only when told, exact in microseconds', () => {
  const clock = new ManualClock();
  assert.equal(clock.now, 0);
  assert.equal(clock.nowMicros, 0n);
  clock.advance(1.005); // the microseconds the decimal says
  assert.equal(clock.nowMicros, 1005n);
  clock.advance(0.0004); // rounds to nothing
  assert.equal(clock.nowMicros, 1005n);
  clock.advanceMicros(2n ** 53n + 1n);
  assert.equal(clock.nowMicros, 2n ** 53n + 1n + 1005n);
  clock.advanceMicros(2n ** 63n - 1n); // saturates
  assert.equal(clock.nowMicros, 2n ** 63n - 1n);
});

test('limiters on one ManualClock share its time', async () => {
  const clock = new ManualClock();
  const a = RateLimiter.create(1, { clock });
  const b = RateLimiter.create(1, { clock });
  await a.acquire();
  await a.acquire(); // advances the shared clock by 1 s
  assert.equal(clock.now, 1000);
  // b was idle for that second: one stored permit, plus the one granted
  // when free.
  assert.equal(b.tryAcquire(), true);
  assert.equal(b.tryAcquire(), true);
  assert.equal(b.tryAcquire(), false);
});

test('on the real clock, a timed tryAcquire waits for its permit', async () => {
  // One permit a second, timed from before the first: however slowly a
  // loaded machine runs the lines between, the second permit is due 1 s
  // after the first was taken, so at least 1 s after `start`.
  const limiter = RateLimiter.create(1);
  const start = performance.now();
  assert.equal(limiter.tryAcquire(), true);
  assert.equal(limiter.tryAcquire(), false);
  assert.equal(await limiter.tryAcquire(1, { timeoutMs: 5_000 }), true);
  const waited = performance.now() - start;
  assert.ok(waited >= 995, `waited only ${waited} ms`);
  assert.ok(waited < 5_000, `waited ${waited} ms`);
  assert.equal(await limiter.tryAcquire(1, { timeoutMs: 10 }), false); // at once, nothing taken
});

test('the class prints as a RateLimiter', () => {
  assert.equal(Object.prototype.toString.call(RateLimiter.create(1)), '[object RateLimiter]');
});
