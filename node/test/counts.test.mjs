// One rule for counts: permits, costs, limits and sizes are integers given
// as numbers or as bigints, with the same range and the same answers either
// way (bindings/node/src/args.rs). Each row is one count-taking entry point.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CompositeLimiter,
  ConcurrencyLimiter,
  FixedWindow,
  Gcra,
  KeyedLimiter,
  LeakyBucketQueue,
  ManualClock,
  RateLimiter,
  SrTcm,
  TokenBucket,
  TrTcm,
} from '../index.mjs';
import { RANGE, TYPE, check } from './expect-error.mjs';

const clock = () => new ManualClock();
const smooth = () => RateLimiter.create(5, { clock: clock() });
const window = () => new FixedWindow({ limit: 10, windowMs: 1000, clock: clock() });
const bucket = () => new TokenBucket({ rate: 10, burst: 5, clock: clock() });
const queue = () => new LeakyBucketQueue({ capacity: 5, intervalMs: 100, clock: clock() });
const keyed = () => new KeyedLimiter({ algorithm: 'gcra', maxBurst: 4, countPerPeriod: 5, periodMs: 1000 }, { maxKeys: 10, clock: clock() });
const composite = () =>
  new CompositeLimiter([{ algorithm: 'fixedWindow', limit: 10, windowMs: 1000 }, { algorithm: 'tokenBucket', rate: 1, burst: 6 }], { clock: clock() });

/** What a decision says, comparably. */
const said = (d) => [d.allowed, d.limit, d.remaining, d.retryAfterMicros, d.waitMicros];

// [entry point, argument, a good count, a count out of range, (count) => what it did]
const ROWS = [
  ['RateLimiter.tryAcquire', 'permits', 3, 0, (n) => { const l = smooth(); return [l.tryAcquire(n), l.timeUntilAvailable()]; }],
  ['RateLimiter.tryAcquire(timeout)', 'permits', 3, 2 ** 31, async (n) => { const l = smooth(); l.tryAcquire(); return [await l.tryAcquire(n, { timeoutMs: 500 }), l.timeUntilAvailable()]; }],
  ['RateLimiter.acquire', 'permits', 3, 0, async (n) => { const l = smooth(); await l.acquire(); return [await l.acquire(n), l.timeUntilAvailable()]; }],
  ['RateLimiter.canAcquire', 'permits', 3, -1, (n) => smooth().canAcquire(n)],
  ['RateLimiter.timeUntilAvailable', 'permits', 3, 0, (n) => { const l = smooth(); l.tryAcquire(4); return l.timeUntilAvailable(n); }],
  ['AdmissionLimiter.check', 'cost', 3, -1, (n) => said(window().check(n))],
  ['AdmissionLimiter.tryAcquire', 'cost', 11, -1, (n) => window().tryAcquire(n)],
  ['AdmissionLimiter.peek', 'cost', 3, -1, (n) => said(window().peek(n))],
  ['TokenBucket.reserve', 'cost', 2, -1, (n) => { const b = bucket(); const r = b.reserve(n); return [r.ok, r.tokens, b.tokens()]; }],
  ['TokenBucket.wait', 'cost', 7, -1, async (n) => said(await bucket().wait(n, { timeoutMs: 1000 }))],
  ['TokenBucket.burst', 'burst', 3, -1, (n) => { const b = bucket(); b.burst = n; return b.burst; }],
  ['LeakyBucketQueue.acquire', 'cost', 2, -1, async (n) => { const q = queue(); q.check(); return said(await q.acquire(n)); }],
  ['CompositeLimiter.checkEach', 'cost', 3, -1, (n) => { const { decision, parts } = composite().checkEach(n); return [decision, ...parts].map(said); }],
  ['KeyedLimiter.check', 'cost', 3, -1, (n) => said(keyed().check('k', n))],
  ['KeyedLimiter.tryAcquire', 'cost', 3, -1, (n) => keyed().tryAcquire('k', n)],
  ['KeyedLimiter.tryCheck', 'cost', 3, -1, (n) => said(keyed().tryCheck('k', n))],
  ['KeyedLimiter.peek', 'cost', 3, -1, (n) => said(keyed().peek('k', n))],
  ['KeyedLimiter.tryPeek', 'cost', 3, -1, (n) => said(keyed().tryPeek('k', n))],
  ['KeyedLimiter maxKeys', 'maxKeys', 7, 0, (n) => new KeyedLimiter({ algorithm: 'fixedWindow', limit: 1, windowMs: 1 }, { maxKeys: n }).maxKeys],
  ['FixedWindow limit', 'limit', 7, 0, (n) => said(new FixedWindow({ limit: n, windowMs: 1000, clock: clock() }).check(2))],
  ['Gcra countPerPeriod', 'countPerPeriod', 7, 0, (n) => new Gcra({ maxBurst: 3, countPerPeriod: n, periodMs: 1000 }).limit],
  ['SrTcm.mark', 'bytes', 1500, -1, (n) => { const m = new SrTcm({ cir: 1000, cbs: 1000, ebs: 1000, clock: clock() }); return [m.mark(n), m.mark(n)]; }],
  ['TrTcm pbs', 'pbs', 1500, 0, (n) => new TrTcm({ pir: 2000, pbs: n, cir: 1000, cbs: 1000, clock: clock() }).mark(1200)],
  ['ConcurrencyLimiter.fixed', 'limit', 3, 0, (n) => ConcurrencyLimiter.fixed(n).limit],
  ['ConcurrencyLimiter.sample', 'inFlight', 40, -1, (n) => ConcurrencyLimiter.aimd({ clock: clock() }).sample({ rttMs: 10, inFlight: n })],
];

for (const [name, argument, good, bad, run] of ROWS) {
  test(`${name}: ${argument} as a number or a bigint, the same`, async () => {
    assert.deepEqual(await run(BigInt(good)), await run(good));
    // Out of range either way: the same RangeError, naming the argument
    // and showing the value as given.
    for (const value of [bad, BigInt(bad)]) {
      let error;
      try {
        await run(value);
      } catch (e) {
        error = e;
      }
      assert.ok(error !== undefined, `${name}(${value}) should throw`);
      check(error, RANGE, argument, value);
    }
    // Neither a number nor a bigint: the TypeError says both are welcome.
    let error;
    try {
      await run(String(good));
    } catch (e) {
      error = e;
    }
    check(error, TYPE, argument, String(good));
    assert.match(error.message, /must be an integer number or a bigint/);
  });
}
