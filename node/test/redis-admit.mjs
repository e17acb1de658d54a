#!/usr/bin/env node
// The Node side of the cross-language Redis test (tests/redis/cross-language.sh):
//
//   node node/test/redis-admit.mjs NAME KEY N
//
// Makes N `check(KEY, 1)` calls, one after another, on the exact-mode GCRA
// limiter NAME (max_burst 29, 30 per 60 s: 30 at once, then one every two
// seconds) in the Redis at RATEKEEPER_REDIS_URL — or the Redis Cluster whose
// nodes RATEKEEPER_REDIS_CLUSTER lists (comma-separated), when set — and
// prints how many were admitted. The Python and C sides do the same with
// the same limiter, so the totals of all three add up against one limit.
//
// Exits 2 on bad usage, 1 if Redis fails (the error on stderr).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { RedisLimiter, RedisStore } = require('..');

const usage = 'usage: node node/test/redis-admit.mjs NAME KEY N';
const [name, key, count, ...extra] = process.argv.slice(2);
const n = Number(count);
if (extra.length > 0 || key === undefined || !Number.isSafeInteger(n) || n < 0) {
  console.error(usage);
  process.exit(2);
}
const url = process.env.RATEKEEPER_REDIS_URL;
const cluster = process.env.RATEKEEPER_REDIS_CLUSTER;
if (!url && !cluster) {
  console.error(`redis-admit: RATEKEEPER_REDIS_URL is not set (run under tests/redis/with-redis)\n${usage}`);
  process.exit(2);
}

try {
  const store = cluster
    ? await RedisStore.connectCluster(cluster.split(',').map((node) => (node.includes('://') ? node : `redis://${node}`)))
    : await RedisStore.connect(url);
  const limiter = new RedisLimiter(store, name, {
    algorithm: 'gcra',
    maxBurst: 29,
    countPerPeriod: 30,
    periodMs: 60_000,
  });
  let admitted = 0;
  for (let i = 0; i < n; i++) {
    if ((await limiter.check(key, 1)).allowed) admitted++;
  }
  store.close();
  console.log(admitted);
} catch (error) {
  console.error(`redis-admit: ${error.code ?? error.name}: ${error.message}`);
  process.exit(1);
}
