// Against a three-master Redis Cluster (tests/redis/with-redis --cluster):
// keys spread over every node, and each mode decides as on one server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Membership, RedisLeasedLimiter, RedisLimiter, RedisRateLimiter, RedisStore, codes } from '../../index.mjs';
import { cli, clusterUrls, unique } from '../redis/support.mjs';

const urls = clusterUrls();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connectCluster(urls);
});
after(() => store.close());

test('a cluster store connects through any node', async () => {
  assert.equal(store.cluster, true);
  assert.equal(urls.length, 3);
  const viaLast = await RedisStore.connectCluster([urls[2]]);
  assert.equal(viaLast.cluster, true);
  viaLast.close();
});

test('exact mode: many keys, on every master, each with its own limit, shared by two stores', async () => {
  const name = unique('cluster-exact');
  const limit = { algorithm: 'gcra', maxBurst: 2, countPerPeriod: 1, periodMs: 60_000 };
  const other = await RedisStore.connectCluster([urls[1]]);
  try {
    const limiters = [new RedisLimiter(store, name, limit), new RedisLimiter(other, name, limit)];
    const keys = Array.from({ length: 60 }, (_, i) => `user:${i}`);
    // 5 decisions per key, from both stores, all in flight at once: 3 admitted per key.
    const decisions = await Promise.all(keys.flatMap((key) => [0, 1, 0, 1, 0].map((s) => limiters[s].check(key))));
    for (let k = 0; k < keys.length; k++) {
      const mine = decisions.slice(k * 5, k * 5 + 5);
      assert.equal(mine.filter((d) => d.allowed).length, 3, keys[k]);
    }
  } finally {
    other.close();
  }
  // The keys landed on every master (hash tags keep each limiter key in one slot, not all in one).
  const masters = urls.map((url) => Number(cli(url, 'DBSIZE')));
  assert.ok(masters.every((n) => n > 0), `keys per master: ${masters}`);
});

test('leased mode, membership and Guava shared work on a cluster', async () => {
  const leased = new RedisLeasedLimiter(
    store,
    unique('cluster-leased'),
    { algorithm: 'tokenBucket', rate: 1, burst: 10 },
    { batch: 4, leaseMs: 10_000 },
  );
  let admitted = 0;
  for (let i = 0; i < 12; i++) if ((await leased.check('k')).allowed) admitted++;
  assert.equal(admitted, 10);

  const group = unique('cluster-group');
  const a = await Membership.join(store, group, { ttlMs: 10_000 });
  const b = await Membership.join(store, group, { ttlMs: 10_000 });
  assert.equal(await a.refresh(), 2);
  a.close();
  b.close();

  const shared = await RedisRateLimiter.create(store, unique('cluster-smooth'), 5);
  assert.equal(await shared.acquire(), 0);
  assert.equal(await shared.tryAcquire(), false);
  assert.equal(await shared.getRate(), 5);
  shared.close();
});

test('a cluster node that cannot be reached fails with a Redis error code', async () => {
  await assert.rejects(
    RedisStore.connectCluster(['redis://127.0.0.1:1']),
    (e) => e instanceof Error && [codes.redisUnavailable, codes.redisTimeout, codes.redisError].includes(e.code),
  );
});

test('peek and remove on keys across the masters (the sliding log: two keys, one slot)', async () => {
  for (const limit of [
    { algorithm: 'slidingLog', limit: 3, windowMs: 1e9 },
    { algorithm: 'gcra', maxBurst: 2, countPerPeriod: 1, periodMs: 60_000 },
  ]) {
    const limiter = new RedisLimiter(store, unique(`cluster-reset-${limit.algorithm}`), limit);
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) {
      assert.equal(await limiter.remove(key), false);
      for (let i = 0; i < 3; i++) assert.equal((await limiter.check(key)).allowed, true);
      assert.equal((await limiter.peek(key)).allowed, false);
      assert.equal(await limiter.remove(key), true);
      assert.equal((await limiter.peek(key, 3)).allowed, true);
    }
  }
  const shared = await RedisRateLimiter.create(store, unique('cluster-reset-guava'), 1);
  assert.equal(await shared.reset(), true);
  assert.equal((await shared.inspect()).timeUntilAvailableMs, 0);
});
