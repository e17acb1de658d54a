// RedisStore.connectSentinel against tests/redis/with-redis --sentinel (a
// master, one replica, three sentinels): connect by the master's name,
// decide, typed errors, and follow a failover (the last test kills the
// master with kill -9).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisLimiter, RedisStore, codes } from '../../index.mjs';

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run under tests/redis/with-redis --sentinel (npm run test:redis-sentinel does)`);
  return value;
}
const sentinels = () => env('RATEKEEPER_REDIS_SENTINELS').split(',');
const master = () => env('RATEKEEPER_REDIS_MASTER_NAME');
let names = 0;
const unique = (label) => `node-sentinel:${label}:${process.pid}:${Date.now()}:${names++}`;

test('connectSentinel finds the master by name, and limiters decide through it', async () => {
  const store = await RedisStore.connectSentinel(sentinels(), master(), { timeoutMs: 1000 });
  assert.equal(store.masterName, master());
  assert.equal(store.cluster, false);
  const limiter = new RedisLimiter(store, unique('decide'), { algorithm: 'fixedWindow', limit: 3, windowMs: 1e9 });
  const allowed = [];
  for (let i = 0; i < 4; i++) allowed.push((await limiter.check('k')).allowed);
  assert.deepEqual(allowed, [true, true, true, false]);
  store.close();
  const plain = await RedisStore.connect(env('RATEKEEPER_REDIS_URL'));
  assert.equal(plain.masterName, null);
  plain.close();
});

test('bad arguments: TypeError and RangeError with their codes', async () => {
  await assert.rejects(RedisStore.connectSentinel(sentinels(), 7), (e) => e instanceof TypeError && e.code === 'ERR_RATEKEEPER_INVALID_ARG_TYPE' && e.argument === 'masterName');
  await assert.rejects(RedisStore.connectSentinel(sentinels()), (e) => e instanceof TypeError && e.code === 'ERR_RATEKEEPER_INVALID_ARG_TYPE' && e.argument === 'masterName');
  await assert.rejects(RedisStore.connectSentinel(sentinels(), ''), (e) => e instanceof RangeError && e.code === 'ERR_RATEKEEPER_INVALID_ARGUMENT' && e.argument === 'masterName');
  await assert.rejects(RedisStore.connectSentinel([], master()), (e) => e instanceof TypeError && e.code === 'ERR_RATEKEEPER_INVALID_ARG_TYPE' && e.argument === 'sentinels');
  await assert.rejects(RedisStore.connectSentinel(['nope'], master()), (e) => e instanceof RangeError && e.code === 'ERR_RATEKEEPER_INVALID_ARGUMENT' && e.argument === 'sentinels');
});

test('a master no sentinel knows: ERR_RATEKEEPER_REDIS_UNAVAILABLE', async () => {
  await assert.rejects(
    RedisStore.connectSentinel(sentinels(), 'no-such-master'),
    (e) => e.code === codes.redisUnavailable && /no master named/.test(e.message),
  );
});

test('follows a failover: fail-open admits meanwhile, then the new master decides with the count kept', async () => {
  const timeoutMs = 100;
  const store = await RedisStore.connectSentinel(sentinels(), master(), { timeoutMs, retryIntervalMs: 200 });
  const limiter = new RedisLimiter(
    store,
    unique('failover'),
    { algorithm: 'fixedWindow', limit: 100, windowMs: 1e9 },
    { whenUnavailable: 'failOpen' },
  );
  for (let i = 0; i < 30; i++) assert.ok((await limiter.check('k')).allowed);
  await sleep(200); // the replica has them (each write is sent to it at once)
  process.kill(Number(env('RATEKEEPER_REDIS_MASTER_PID')), 'SIGKILL');
  const killed = performance.now();
  let byPolicy = 0;
  let slowest = 0;
  let decision;
  for (;;) {
    const started = performance.now();
    decision = await limiter.check('k');
    slowest = Math.max(slowest, performance.now() - started);
    // The policy's admission resets nothing; Redis's window always has a reset ahead.
    if (decision.resetAfterMs > 0) break;
    byPolicy++;
    assert.ok(performance.now() - killed < 10_000, 'no decision from the new master within 10 s');
    await sleep(5);
  }
  const recovered = performance.now() - killed;
  assert.ok(byPolicy > 0, 'the policy never decided');
  assert.ok(recovered < 5_000, `recovered after ${recovered} ms`);
  assert.ok(slowest <= timeoutMs + 100, `a call took ${slowest} ms`);
  // The count survived: 30 + 1 taken.
  assert.equal(decision.remaining, 69);
  store.close();
});
