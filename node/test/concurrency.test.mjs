// ConcurrencyLimiter and its permits: fixed, gradient and AIMD limits on
// ManualClocks, and permits that cannot leak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { codes, ConcurrencyLimiter, Decision, ManualClock, Permit } from '../index.mjs';

test('a fixed limit: permits are counted, refusals say so', () => {
  const limiter = ConcurrencyLimiter.fixed(2);
  const a = limiter.tryAcquire();
  const b = limiter.tryAcquire();
  assert.ok(a instanceof Permit && b instanceof Permit);
  assert.ok(a.decision instanceof Decision);
  assert.deepEqual([a.decision.limit, a.decision.remaining, b.decision.remaining], [2, 1, 0]);
  assert.equal(limiter.tryAcquire(), undefined);
  const { decision, permit } = limiter.check();
  assert.equal(permit, undefined);
  assert.deepEqual(
    { allowed: decision.allowed, limit: decision.limit, remaining: decision.remaining, retry: decision.retryAfterMs },
    { allowed: false, limit: 2, remaining: 0, retry: 0 },
  );
  assert.equal(limiter.inFlight, 2);
  assert.equal(a.release(), 2);
  assert.equal(limiter.inFlight, 1);
  assert.equal(b.success(), 2);
  assert.equal(limiter.inFlight, 0);
  const c = limiter.check();
  assert.equal(c.decision.allowed, true);
  assert.ok(c.permit instanceof Permit);
  c.permit.dropped();
  assert.equal(limiter.limit, 2);
});

test('a permit releases once: later releases do nothing', () => {
  const limiter = ConcurrencyLimiter.fixed(3);
  const a = limiter.tryAcquire();
  const b = limiter.tryAcquire();
  assert.equal(a.released, false);
  a.success();
  assert.equal(a.released, true);
  assert.equal(limiter.inFlight, 1);
  for (const again of [() => a.success(), () => a.dropped(), () => a.release('ignored'), () => a.release()]) {
    assert.equal(again(), 3);
    assert.equal(limiter.inFlight, 1, 'b is still in flight');
  }
  b.release();
  assert.equal(limiter.inFlight, 0);
});

test('a bad outcome releases nothing', () => {
  const limiter = ConcurrencyLimiter.fixed(1);
  const permit = limiter.tryAcquire();
  assert.throws(() => permit.release(/** @type {any} */ ('fine')), (e) => e instanceof RangeError && e.code === codes.invalidArgument && e.argument === 'outcome');
  assert.throws(() => permit.release(/** @type {any} */ (1)), (e) => e instanceof TypeError && e.code === codes.invalidArgType && e.argument === 'outcome');
  assert.equal(permit.released, false);
  assert.equal(limiter.inFlight, 1);
  permit.release('success');
  assert.equal(limiter.inFlight, 0);
});

test('Symbol.dispose releases a permit as ignored', () => {
  const limiter = ConcurrencyLimiter.fixed(1);
  const permit = limiter.tryAcquire();
  assert.equal(typeof permit[Symbol.dispose], 'function');
  permit[Symbol.dispose]();
  assert.equal(permit.released, true);
  assert.equal(limiter.inFlight, 0);
  permit[Symbol.dispose](); // once only
  assert.equal(limiter.inFlight, 0);
});

test('a permit collected unreleased is released', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const limiter = ConcurrencyLimiter.fixed(11);
  (() => {
    for (let i = 0; i < 10; i++) limiter.tryAcquire(); // dropped on the floor
  })();
  const kept = limiter.tryAcquire(); // will not be: it is still referenced
  assert.ok(kept instanceof Permit);
  assert.equal(limiter.tryAcquire(), undefined);
  for (let tries = 0; tries < 50 && limiter.inFlight > 1; tries++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(limiter.inFlight, 1, 'the ten lost permits were released; the kept one was not');
  assert.equal(kept.released, false);
  kept.release();
  assert.equal(limiter.inFlight, 0);
});

test('AIMD: +1 for a success that found the limit half used, × backoff for a drop or a timeout', () => {
  const clock = new ManualClock();
  const limiter = ConcurrencyLimiter.aimd({ initialLimit: 2, minLimit: 1, maxLimit: 10, clock });
  const permit = limiter.tryAcquire();
  clock.advance(20);
  assert.equal(permit.success(), 3);
  assert.equal(limiter.limit, 3);
  const dropped = limiter.tryAcquire();
  assert.equal(dropped.dropped(), 2); // ⌊3 × 0.9⌋
  const slow = limiter.tryAcquire();
  clock.advance(5_001); // over the default 5 s timeout: a drop
  assert.equal(slow.success(), 1);
  assert.equal(limiter.tryAcquire().release('ignored'), 1);
  // The timeout in milliseconds or exact microseconds; the defaults.
  const quick = ConcurrencyLimiter.aimd({ initialLimit: 4, minLimit: 1, rttTimeoutMicros: 1000n, clock });
  const p = quick.tryAcquire();
  clock.advance(2);
  assert.equal(p.success(), 3);
  assert.equal(ConcurrencyLimiter.aimd().limit, 20);
  assert.equal(ConcurrencyLimiter.aimd({ rttTimeoutMs: 1 }).limit, 20);
});

test('gradient: the limit learns from round-trip times', () => {
  const clock = new ManualClock();
  const limiter = ConcurrencyLimiter.gradient({ initialLimit: 4, probeInterval: 0, clock });
  const permits = [0, 1, 2, 3].map(() => limiter.tryAcquire());
  clock.advance(10);
  for (const p of permits) p.success();
  // Flat RTTs: +4 (the queue size) for each sample whose request started
  // with at least half the limit in flight — the 2nd and the 4th.
  assert.equal(limiter.limit, 12);
  assert.equal(ConcurrencyLimiter.gradient().limit, 50);
});

test('sample: a request measured elsewhere teaches the limit too', () => {
  const limiter = ConcurrencyLimiter.aimd({ initialLimit: 10, minLimit: 1, maxLimit: 100 });
  assert.equal(limiter.sample({ rttMs: 5, inFlight: 5 }), 11);
  assert.equal(limiter.sample({ rttMicros: 5000n, inFlight: 6n, dropped: false }), 12);
  assert.equal(limiter.sample({ rttMs: 5, inFlight: 1 }), 12); // the caller was the bottleneck
  assert.equal(limiter.sample({ rttMs: 5, inFlight: 5, dropped: true }), 10);
  assert.equal(limiter.sample({ rttMs: 6000, inFlight: 5 }), 9);
  assert.equal(limiter.inFlight, 0);
  assert.equal(ConcurrencyLimiter.fixed(7).sample({ rttMs: 1, inFlight: 7 }), 7);
});

test('ConcurrencyLimiter and Permit have no public constructors', () => {
  for (const Class of [ConcurrencyLimiter, Permit]) {
    assert.throws(() => new /** @type {any} */ (Class)(), (e) => e instanceof TypeError && e.code === codes.invalidArgType);
  }
  assert.equal(String(ConcurrencyLimiter.fixed(1)), '[object ConcurrencyLimiter]');
  assert.equal(String(ConcurrencyLimiter.fixed(1).tryAcquire()), '[object Permit]');
});
