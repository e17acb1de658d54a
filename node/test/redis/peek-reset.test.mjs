// Peek (a look at what the next check would answer) and remove/reset on
// every Redis limiter, against a real Redis (tests/redis/with-redis): a
// peek takes nothing and writes nothing; a remove or reset gives the whole
// limit back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
  RedisConcurrencyLimiter,
  RedisDividedLimiter,
  RedisLeasedLimiter,
  RedisLimiter,
  RedisRateLimiter,
  RedisStore,
} from '../../index.mjs';
import { cli, redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url);
});
after(() => store.close());

/** The keys of limiter `name`, each with its value (`DUMP`) and TTL. */
function snapshot(name) {
  const keys = cli(url, '--scan', '--pattern', `*${name.replaceAll(':', '*')}*`).split('\n').filter(Boolean).sort();
  return keys.map((k) => [k, cli(url, '--no-raw', 'DUMP', k), Number(cli(url, 'PTTL', k))]);
}

/** Nothing was written between two snapshots: same keys and values, no expiry pushed later. */
function assertUnchanged(before, after, what) {
  assert.deepEqual(
    after.map(([k, v]) => [k, v]),
    before.map(([k, v]) => [k, v]),
    `${what}: a key was written`,
  );
  before.forEach(([k, , ttl], i) => assert.ok(after[i][2] <= ttl, `${what}: ${k}'s expiry was pushed`));
}

const LIMITS = [
  { algorithm: 'gcra', maxBurst: 2, countPerPeriod: 1, periodMs: 60_000 },
  { algorithm: 'tokenBucket', rate: 0.001, burst: 3 },
  { algorithm: 'fixedWindow', limit: 3, windowMs: 1e9 },
  { algorithm: 'slidingWindowCounter', limit: 3, windowMs: 1e9 },
  { algorithm: 'slidingLog', limit: 3, windowMs: 1e9 },
];

test('RedisLimiter: peek answers the next check, takes nothing, writes nothing; remove gives the limit back', async () => {
  for (const limit of LIMITS) {
    const name = unique(`peek-${limit.algorithm}`);
    const limiter = new RedisLimiter(store, name, limit);
    for (let i = 0; i < 5; i++) assert.equal((await limiter.peek('k')).allowed, true, limit.algorithm);
    assert.deepEqual(snapshot(name), [], `${limit.algorithm}: a peek on a missing key created it`);
    for (let k = 0; k < 5; k++) {
      const before = snapshot(name);
      const peeked = await limiter.peek('k');
      for (let i = 0; i < 5; i++) await limiter.peek('k');
      assertUnchanged(before, snapshot(name), limit.algorithm);
      const checked = await limiter.check('k');
      assert.equal(peeked.allowed, checked.allowed, `${limit.algorithm}: check ${k + 1}`);
      assert.equal(peeked.remaining, checked.remaining, `${limit.algorithm}: check ${k + 1}`);
      assert.equal(checked.allowed, k < 3, `${limit.algorithm}: check ${k + 1}`);
    }
    assert.equal(await limiter.remove('k'), true, limit.algorithm);
    assert.deepEqual(snapshot(name), [], `${limit.algorithm}: every key of the state is deleted`);
    // The remembered refusal went too: the whole limit again at once.
    for (let k = 0; k < 3; k++) assert.equal((await limiter.check('k')).allowed, true, limit.algorithm);
    assert.equal((await limiter.check('k')).allowed, false, limit.algorithm);
    assert.equal(await limiter.remove('never-seen'), false, limit.algorithm);
    await assert.rejects(limiter.remove('x'.repeat(257)), RangeError);
  }
});

test('RedisLeasedLimiter: peek counts this node\'s lease; remove drops it with the shared state', async () => {
  for (const limit of LIMITS.slice(0, 2)) {
    const name = unique(`leased-${limit.algorithm}`);
    const limiter = new RedisLeasedLimiter(store, name, limit, { batch: 2, leaseMs: 60_000 });
    assert.equal((await limiter.peek('k')).allowed, true);
    assert.deepEqual(snapshot(name), [], 'a peek created a key');
    for (let k = 0; k < 5; k++) {
      const before = snapshot(name);
      const peeked = await limiter.peek('k');
      assertUnchanged(before, snapshot(name), limit.algorithm);
      const checked = await limiter.check('k');
      assert.equal(peeked.allowed, checked.allowed, `${limit.algorithm}: check ${k + 1}`);
      assert.equal(peeked.remaining, checked.remaining, `${limit.algorithm}: check ${k + 1}`);
      assert.equal(checked.allowed, k < 3, `${limit.algorithm}: check ${k + 1}`);
    }
    assert.equal(await limiter.remove('k'), true);
    assert.equal((await limiter.check('k')).allowed, true); // leases 2, spends 1
    assert.equal(await limiter.remove('k'), true);
    let admitted = 0;
    for (let k = 0; k < 6; k++) if ((await limiter.check('k')).allowed) admitted++;
    assert.equal(admitted, 3, `${limit.algorithm}: the whole limit, and no unit of the dropped lease`);
  }
});

test('RedisDividedLimiter: peek and remove work on this node\'s share', async () => {
  const limiter = await RedisDividedLimiter.create(store, unique('divided'), LIMITS[2], {
    heartbeatTtlMs: 5_000,
    maxKeys: 100,
  });
  try {
    for (let k = 0; k < 5; k++) {
      const peeked = limiter.peek('k');
      for (let i = 0; i < 5; i++) limiter.peek('k');
      const checked = limiter.check('k');
      assert.equal(peeked.allowed, checked.allowed, `check ${k + 1}`);
      assert.equal(peeked.remaining, checked.remaining, `check ${k + 1}`);
      assert.equal(checked.allowed, k < 3, `check ${k + 1}`);
    }
    assert.equal(limiter.remove('k'), true);
    assert.equal(limiter.remove('k'), false);
    assert.equal(limiter.check('k').allowed, true);
  } finally {
    limiter.close();
  }
});

test('RedisRateLimiter: inspect reads the state and writes nothing; reset starts afresh', async () => {
  const name = unique('guava');
  // A permit every 10 s: the waits below are far from any machine's delays.
  const limiter = await RedisRateLimiter.create(store, name, 0.1);
  const fresh = await limiter.inspect();
  assert.equal(fresh.rate, 0.1);
  assert.equal(fresh.maxPermits, 0.1);
  assert.ok(fresh.storedPermits < 0.05, `${fresh.storedPermits}`);
  assert.equal(await limiter.acquire(), 0);
  const before = snapshot(name);
  for (let i = 0; i < 5; i++) {
    const state = await limiter.inspect();
    assert.ok(state.timeUntilAvailableMs > 5000 && state.timeUntilAvailableMs <= 10_000, `${state.timeUntilAvailableMs}`);
  }
  assertUnchanged(before, snapshot(name), 'inspect');
  assert.equal(await limiter.reset(), true);
  assert.equal(await limiter.reset(), false);
  assert.equal((await limiter.inspect()).timeUntilAvailableMs, 0);
  assert.deepEqual(snapshot(name), [], 'inspect created the state');
  assert.equal(await limiter.acquire(), 0);
});

test('RedisConcurrencyLimiter: peek answers the next tryAcquire; reset frees every permit', async () => {
  const name = unique('pool');
  const pool = new RedisConcurrencyLimiter(store, name, 2, { leaseTtlMs: 60_000 });
  assert.equal((await pool.peek(2)).allowed, true);
  assert.deepEqual(snapshot(name), [], 'a peek created a key');
  const leases = [];
  for (let k = 0; k < 3; k++) {
    const before = snapshot(name);
    const peeked = await pool.peek();
    assertUnchanged(before, snapshot(name), 'peek');
    const { decision, lease } = await pool.tryAcquire();
    assert.equal(peeked.allowed, decision.allowed, `acquire ${k + 1}`);
    assert.equal(peeked.remaining, decision.remaining, `acquire ${k + 1}`);
    assert.equal(decision.allowed, k < 2);
    if (lease) leases.push(lease);
  }
  assert.equal(await pool.reset(), true);
  assert.equal(await pool.held(), 0);
  assert.equal(await leases[0].release(), false);
  assert.equal((await pool.tryAcquire(2)).decision.allowed, true);
  assert.equal(await pool.reset(), true);
  assert.equal(await pool.reset(), false);
});
