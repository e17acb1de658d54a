// Leased mode, divided mode, membership and Guava's limiter shared through
// Redis, against a real Redis (tests/redis/with-redis).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  Membership,
  RedisDividedLimiter,
  RedisLeasedLimiter,
  RedisRateLimiter,
  RedisStore,
  codes,
} from '../../index.mjs';
import { OPTION, RANGE, TYPE, check } from '../expect-error.mjs';
import { cli, evalshaCalls, redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url);
});
after(() => store.close());

/** `promise` rejects with the argument error `check` expects. */
async function rejects(promise, kind, argument, value, hasValue) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected ${argument} to be refused`);
  check(error, kind, argument, value, hasValue);
}

/** `fn()` throws the argument error `check` expects. */
function throws(fn, kind, argument, value, hasValue) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `expected ${argument} to be refused`);
  check(error, kind, argument, value, hasValue);
}

/** Waits until `condition()` holds, for at most `ms`. */
async function eventually(condition, ms, what) {
  const deadline = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

// 10 at once, then one a minute: nothing refills during a test.
const TEN = Object.freeze({ algorithm: 'gcra', maxBurst: 9, countPerPeriod: 1, periodMs: 60_000 });

test('leased: one round trip takes a batch, spent locally; the total never exceeds the limit', async () => {
  const name = unique('leased');
  const leased = new RedisLeasedLimiter(store, name, TEN, { batch: 4, leaseMs: 10_000 });
  const before = evalshaCalls(url);
  const decisions = [];
  for (let i = 0; i < 12; i++) decisions.push(await leased.check('k'));
  assert.deepEqual(
    decisions.map((d) => [d.allowed, d.remaining]),
    [
      [true, 3], [true, 2], [true, 1], [true, 0], // the first lease: 4
      [true, 3], [true, 2], [true, 1], [true, 0], // the second
      [true, 1], [true, 0], // the last 2 of the 10
      [false, 0], [false, 0],
    ],
  );
  // 3 leases and 2 refusals: 5 round trips for 12 decisions.
  assert.equal(evalshaCalls(url) - before, 5);
  assert.equal(Object.prototype.toString.call(leased), '[object RedisLeasedLimiter]');

  // Two nodes (stores) leasing from one limit at once never admit more
  // than it together; what they took and did not spend (at most a batch
  // each) is lost only when their leases expire.
  const other = await RedisStore.connect(url);
  try {
    const name2 = unique('leased-two');
    const nodes = [store, other].map((s) => new RedisLeasedLimiter(s, name2, TEN, { batch: 3, leaseMs: 10_000 }));
    const all = await Promise.all(nodes.flatMap((n) => Array.from({ length: 10 }, () => n.check('k'))));
    let admitted = all.filter((d) => d.allowed).length;
    assert.ok(admitted <= 10 && admitted >= 10 - 2 * 3, `${admitted} admitted at once`);
    for (const n of nodes) for (let i = 0; i < 10; i++) if ((await n.check('k')).allowed) admitted++;
    assert.ok(admitted <= 10 && admitted >= 10 - 2 * 3, `${admitted} admitted in all`);
  } finally {
    other.close();
  }
});

test('leased: units left when the lease expires are lost, never spent late', async () => {
  const leased = new RedisLeasedLimiter(store, unique('lease-expiry'), TEN, { batch: 5, leaseMs: 100 });
  assert.equal((await leased.check('k')).remaining, 4); // 5 taken, 1 spent
  await sleep(150);
  // A new lease: the 4 left are gone, so 10 − 5 − 5 = 0 remain in Redis after it.
  assert.equal((await leased.check('k')).remaining, 4);
  for (let i = 0; i < 4; i++) assert.equal((await leased.check('k')).allowed, true);
  assert.equal((await leased.check('k')).allowed, false);
});

test('leased: invalid arguments and unsupported algorithms', async () => {
  const name = unique('leased-invalid');
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 11, leaseMs: 100 }), RANGE, 'batch', 11);
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 0, leaseMs: 100 }), RANGE, 'batch', 0);
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 2, leaseMs: 0 }), RANGE, 'leaseMs', 0);
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 2, leaseMicros: -5n }), RANGE, 'leaseMicros', -5n);
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 2 }), TYPE, 'leaseMs', undefined, false);
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: '2', leaseMs: 100 }), TYPE, 'batch', '2');
  throws(() => new RedisLeasedLimiter(store, name, TEN, { batch: 2, leaseMs: 100, lease: 1 }), OPTION, 'options');
  throws(() => new RedisLeasedLimiter(store, name, TEN), TYPE, 'batch', undefined);
  assert.throws(
    () =>
      new RedisLeasedLimiter(store, name, { algorithm: 'fixedWindow', limit: 10, windowMs: 1000 }, {
        batch: 2,
        leaseMs: 100,
      }),
    (e) => e.code === codes.redisUnsupported,
  );
  const leased = new RedisLeasedLimiter(store, name, TEN, { batch: 2, leaseMs: 100 });
  await rejects(leased.check(1), TYPE, 'key', 1);
  await rejects(leased.check('k', -1), RANGE, 'cost', -1);
  leased.close();
  await assert.rejects(leased.check('k'), (e) => e.code === codes.closed);
});

test('membership: nodes join, are counted, and leave', async () => {
  const group = unique('group');
  const a = await Membership.join(store, group, { ttlMs: 3000 });
  const b = await Membership.join(store, group, { ttlMs: 3000 });
  assert.notEqual(a.nodeId, b.nodeId);
  assert.equal(await a.refresh(), 2);
  assert.equal(a.nodes, 2);
  assert.equal(Object.prototype.toString.call(a), '[object Membership]');
  b.close();
  // Leaving is sent in the background.
  await eventually(async () => (await a.refresh()) === 1, 1000, 'b left');
  assert.equal(a.nodes, 1);
  await assert.rejects(b.refresh(), (e) => e.code === codes.closed);
  assert.throws(() => b.nodes, (e) => e.code === codes.closed);
  a.close();

  // A node that stops heartbeating (its process died) drops out after the TTL.
  const c = await Membership.join(store, group, { ttlMs: 3000 });
  const d = await Membership.join(store, group, { ttlMicros: 150_000n });
  assert.equal(await c.refresh(), 2);
  // Close d without its leave reaching Redis is not possible from here; its
  // short TTL is what is tested: it heartbeats every 50 ms while open.
  await sleep(300);
  assert.equal(await c.refresh(), 2);
  d.close();
  await eventually(async () => (await c.refresh()) === 1, 1000, 'd gone');
  c.close();
});

test('membership: invalid arguments', async () => {
  const group = unique('group-invalid');
  await rejects(Membership.join(store, group, { ttlMs: 1 }), RANGE, 'ttlMs', 1);
  await rejects(Membership.join(store, group, { ttlMicros: 2999n }), RANGE, 'ttlMicros', 2999n);
  await rejects(Membership.join(store, group, { ttlMs: -1 }), RANGE, 'ttlMs', -1);
  // At most a day, as in every language; the requirement is the crate's.
  await rejects(Membership.join(store, group, { ttlMs: 86_400_001 }), RANGE, 'ttlMs', 86_400_001);
  await rejects(Membership.join(store, group, { ttlMicros: 86_400_000_001n }), RANGE, 'ttlMicros', 86_400_000_001n);
  await assert.rejects(Membership.join(store, group, { ttlMicros: 2999n }), {
    message: 'invalid argument ttlMicros = 2999n: must be between 3 milliseconds and a day (3000 to 86400000000 microseconds)',
  });
  await rejects(Membership.join(store, group, {}), TYPE, 'ttlMs', undefined, false);
  await rejects(Membership.join(store, 7, { ttlMs: 1000 }), TYPE, 'group', 7);
  await rejects(Membership.join('redis://x', group, { ttlMs: 1000 }), TYPE, 'store', 'redis://x');
  await rejects(Membership.join(store, group, { ttl: 1000 }), OPTION, 'options');
  assert.throws(() => new Membership(), (e) => e instanceof TypeError);
});

test('divided: each node enforces its share of the limit, with no round trip', async () => {
  const name = unique('divided');
  const limit = { algorithm: 'fixedWindow', limit: 10, windowMs: 1e9 };
  const options = { heartbeatTtlMs: 300, maxKeys: 100 };
  const a = await RedisDividedLimiter.create(store, name, limit, options);
  const b = await RedisDividedLimiter.create(store, name, limit, options);
  assert.notEqual(a.nodeId, b.nodeId);
  // Each re-reads the count with its heartbeats (every 100 ms).
  await eventually(() => a.nodes === 2 && b.nodes === 2, 1000, 'both see 2 nodes');
  const before = evalshaCalls(url);
  const admitted = (l) => Array.from({ length: 8 }, () => l.check('k').allowed).filter(Boolean).length;
  assert.equal(admitted(a), 5);
  assert.equal(admitted(b), 5);
  const d = a.check('k');
  assert.equal(d.allowed, false);
  assert.equal(d.limit, 5);
  // Decisions are synchronous and local: the scripts run were heartbeats only (a few).
  assert.ok(evalshaCalls(url) - before < 10);

  // One node leaves: the other's share grows back to the whole limit
  // (rebuilt from scratch, keys whole again).
  b.close();
  assert.throws(() => b.check('k'), (e) => e.code === codes.closed);
  await eventually(() => a.nodes === 1, 1500, 'a sees 1 node');
  assert.equal(admitted(a), 8);
  assert.equal(a.check('k').limit, 10);
  a.close();
});

test('divided: invalid arguments', async () => {
  const name = unique('divided-invalid');
  const limit = { algorithm: 'fixedWindow', limit: 10, windowMs: 1e9 };
  await rejects(RedisDividedLimiter.create(store, name, limit, { heartbeatTtlMs: 1, maxKeys: 10 }), RANGE, 'heartbeatTtlMs', 1);
  await assert.rejects(RedisDividedLimiter.create(store, name, limit, { heartbeatTtlMs: 1, maxKeys: 10 }), {
    message: 'invalid argument heartbeatTtlMs = 1: must be between 3 milliseconds and a day (3000 to 86400000000 microseconds)',
  });
  const overADay = { heartbeatTtlMicros: 86_400_000_001n, maxKeys: 10 };
  await rejects(RedisDividedLimiter.create(store, name, limit, overADay), RANGE, 'heartbeatTtlMicros', 86_400_000_001n);
  await rejects(RedisDividedLimiter.create(store, name, limit, { heartbeatTtlMs: 300, maxKeys: 0 }), RANGE, 'maxKeys', 0);
  await rejects(RedisDividedLimiter.create(store, name, limit, { heartbeatTtlMs: 300 }), TYPE, 'maxKeys', undefined);
  await rejects(RedisDividedLimiter.create(store, name, 'x', { heartbeatTtlMs: 300, maxKeys: 1 }), TYPE, 'limit', 'x');
  await rejects(
    RedisDividedLimiter.create(store, name, { ...limit, limit: -1 }, { heartbeatTtlMs: 300, maxKeys: 1 }),
    RANGE,
    'limit',
    -1,
  );
  const divided = await RedisDividedLimiter.create(store, name, limit, { heartbeatTtlMs: 300, maxKeys: 1 });
  throws(() => divided.check(3), TYPE, 'key', 3);
  throws(() => divided.check('k', -2), RANGE, 'cost', -2);
  divided.close();
});

test('Guava shared: every handle on a name waits as one Guava limiter would', async () => {
  const name = unique('smooth');
  const a = await RedisRateLimiter.create(store, name, 5);
  // Created once: a second create keeps the first one's rate.
  const b = await RedisRateLimiter.create(store, name, 50);
  assert.equal(await b.getRate(), 5);
  assert.match(a.key, /smooth/);
  assert.equal(a.key, b.key);
  assert.equal(Object.prototype.toString.call(a), '[object RedisRateLimiter]');

  assert.equal(await a.acquire(), 0); // a fresh limiter grants at once…
  // …and the next permit is due 200 ms later, whichever handle asks.
  assert.equal(await b.tryAcquire(), false);
  const until = await b.timeUntilAvailable();
  assert.ok(until > 150 && until <= 200, `${until} ms`);
  assert.equal(await b.canAcquire({ timeoutMs: 0 }), false);
  assert.equal(await b.canAcquire({ timeoutMs: 250 }), true);
  const start = performance.now();
  const waited = await b.acquire();
  const took = performance.now() - start;
  assert.ok(waited > 0.15 && waited <= 0.2, `${waited} s`);
  assert.ok(took >= waited * 1e3 - 1, `slept ${took} ms for ${waited} s`);

  // Guava's reserving ahead: 3 permits are granted after the wait due
  // now, and the next caller pays for them (3 × 200 ms), whichever handle.
  assert.equal(await a.tryAcquire(3, { timeoutMs: 1000 }), true);
  const owed = await b.timeUntilAvailable();
  assert.ok(owed > 500 && owed <= 600, `${owed} ms`);
  assert.equal(await b.tryAcquire(1, { timeoutMs: 400 }), false);
  await b.setRate(10);
  assert.equal(await a.getRate(), 10);

  a.close();
  await assert.rejects(a.getRate(), (e) => e.code === codes.closed);
  assert.equal(await b.getRate(), 10);
  b.close();
});

test('Guava shared: warming up, and the idle TTL that lets the state expire', async () => {
  const warm = await RedisRateLimiter.create(store, unique('warm'), 2, { warmupMs: 1000, coldFactor: 3 });
  assert.equal(await warm.getRate(), 2);
  // Guava's SmoothWarmingUp starts cold, with 2 permits stored (warmup ÷
  // the mean of the stable and cold intervals, 0.5 s and 1.5 s, above a
  // threshold of 1): the first is granted at once and costs the next
  // caller the time above the threshold, 1 s (less the time that passed).
  assert.equal(await warm.tryAcquire(), true);
  const until = await warm.timeUntilAvailable();
  assert.ok(until > 900 && until <= 1000, `${until} ms`);
  warm.close();

  const idle = await RedisRateLimiter.create(store, unique('idle'), 100, { idleTtlMs: 300 });
  await idle.acquire();
  assert.equal(cli(url, 'EXISTS', idle.key), '1');
  await eventually(() => cli(url, 'EXISTS', idle.key) === '0', 2000, 'state expired');
  idle.close();
});

test('Guava shared: invalid arguments are RateLimiter.create\'s', async () => {
  const name = unique('smooth-invalid');
  await rejects(RedisRateLimiter.create(store, name, -1), RANGE, 'permitsPerSecond', -1);
  await rejects(RedisRateLimiter.create(store, name, NaN), RANGE, 'permitsPerSecond', NaN);
  await rejects(RedisRateLimiter.create(store, name, '5'), TYPE, 'permitsPerSecond', '5');
  await rejects(RedisRateLimiter.create(store, name, 5, { warmupMs: -1 }), RANGE, 'warmupMs', -1);
  await rejects(RedisRateLimiter.create(store, name, 5, { idleTtlMs: 0 }), RANGE, 'idleTtlMs', 0);
  await rejects(RedisRateLimiter.create(store, name, 5, { idleTtlMicros: -1n }), RANGE, 'idleTtlMicros', -1n);
  await rejects(RedisRateLimiter.create(store, name, 5, { burst: 1 }), OPTION, 'options');
  await rejects(RedisRateLimiter.create(store, 1, 5), TYPE, 'name', 1);
  await rejects(RedisRateLimiter.create({}, name, 5), TYPE, 'store', undefined, false);
  const limiter = await RedisRateLimiter.create(store, name, 5);
  await rejects(limiter.acquire(0), RANGE, 'permits', 0);
  await rejects(limiter.acquire(2 ** 31), RANGE, 'permits', 2 ** 31);
  await rejects(limiter.tryAcquire(1.5), RANGE, 'permits', 1.5);
  await rejects(limiter.tryAcquire(1, { timeoutMs: NaN }), RANGE, 'timeoutMs', NaN);
  await rejects(limiter.tryAcquire(1, { timeoutMs: 'x' }), TYPE, 'timeoutMs', 'x');
  await rejects(limiter.setRate(0), RANGE, 'permitsPerSecond', 0);
  await rejects(limiter.canAcquire({ timeout: 1 }), OPTION, 'options');
  assert.equal(await limiter.getRate(), 5); // unchanged by the failed calls
  assert.throws(() => new RedisRateLimiter(), (e) => e instanceof TypeError);
  limiter.close();
});
