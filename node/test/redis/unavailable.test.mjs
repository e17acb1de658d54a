// When Redis is down, slow or drops the connection: the policy each limiter
// was given holds, no call outlives the store's timeout by much, nothing
// crashes, and decisions are back on Redis within a second of it
// answering. Against a private redis-server this test kills (SIGKILL, as
// `kill -9`), freezes with DEBUG SLEEP, and restarts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, beforeEach, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Membership, RedisLimiter, RedisRateLimiter, RedisStore, codes } from '../../index.mjs';
import { cli, privateServer, timed, unique } from './support.mjs';

const TIMEOUT_MS = 100;
const RETRY_MS = 200;
// What a call may take beyond the timeout on a loaded machine (CI has 2 cores).
const SLACK_MS = 250;

/** @type {Awaited<ReturnType<typeof privateServer>>} */
let server;
/** @type {RedisStore} */
let store;

before(async () => {
  server = await privateServer('--enable-debug-command', 'yes');
  store = await RedisStore.connect(server.url, { timeoutMs: TIMEOUT_MS, retryIntervalMs: RETRY_MS });
});
// A test that failed midway may have left the server killed, and the
// store waiting to reconnect.
beforeEach(async () => {
  if (!server.running) await server.start();
  const probe = new RedisLimiter(store, unique('probe'), ROOMY);
  const start = performance.now();
  while (!(await probe.check('k').then((d) => d.allowed, () => false))) {
    if (performance.now() - start > 5000) throw new Error('the store did not reconnect');
    await sleep(20);
  }
  probe.close();
});
after(async () => {
  store?.close();
  await server?.stop();
});

// More than any test asks for: Redis always admits.
const ROOMY = Object.freeze({ algorithm: 'fixedWindow', limit: 1e12, windowMs: 1e9 });

const unavailable = (e) =>
  e instanceof Error && (e.code === codes.redisUnavailable || e.code === codes.redisTimeout) && /ratekeeper/.test(e.message);

/**
 * Decides on each of `limiters` (one after another) every 10 ms for `ms`:
 * each one's outcomes and times.
 */
async function sample(limiters, ms, keyOf) {
  const samples = Object.fromEntries(Object.keys(limiters).map((name) => [name, []]));
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (const [name, l] of Object.entries(limiters)) samples[name].push(await timed(l.check(keyOf(name))));
    await sleep(10);
  }
  return samples;
}

test('Redis killed: error rejects, failClosed refuses, failOpen admits, localShare decides locally; then back on Redis', async () => {
  const group = unique('group');
  const a = await Membership.join(store, group, { ttlMs: 60_000 });
  const b = await Membership.join(store, group, { ttlMs: 60_000 });
  assert.equal(await a.refresh(), 2);
  const name = unique('down');
  const limiters = {
    error: new RedisLimiter(store, `${name}:error`, ROOMY),
    failClosed: new RedisLimiter(store, `${name}:closed`, ROOMY, { whenUnavailable: 'failClosed' }),
    failOpen: new RedisLimiter(store, `${name}:open`, { algorithm: 'fixedWindow', limit: 1, windowMs: 1e9 }, {
      whenUnavailable: 'failOpen',
    }),
    // Redis allows 10 per key; while it is away, this node's share of 2 nodes: 5.
    localShare: new RedisLimiter(store, `${name}:share`, { algorithm: 'fixedWindow', limit: 10, windowMs: 1e9 }, {
      whenUnavailable: 'localShare',
      membership: a,
      maxKeys: 100,
    }),
  };
  // Up: Redis decides (failOpen's limit of 1 is used up on Redis).
  for (const l of Object.values(limiters)) assert.equal((await l.check('k')).allowed, true);
  assert.equal((await limiters.failOpen.check('k')).allowed, false);

  await server.kill();
  // failOpen on a key Redis would admit once: every admission past the
  // first is the policy's. (On 'k', its remembered refusal still decides,
  // without Redis, as it would have.)
  const keys = { error: 'k', failClosed: 'k', failOpen: 'open', localShare: 'fresh' };
  const results = await sample(limiters, 600, (policy) => keys[policy]);
  for (const [policy, samples] of Object.entries(results)) {
    assert.ok(samples.length > 10, `${policy}: ${samples.length} samples`);
    const slowest = Math.max(...samples.map((s) => s.ms));
    assert.ok(slowest <= TIMEOUT_MS + SLACK_MS, `${policy}: a call took ${slowest} ms`);
  }
  assert.ok(results.error.every((s) => unavailable(s.error)), 'error: every call rejects with the Redis error');
  assert.ok(results.failClosed.every((s) => s.value && !s.value.allowed), 'failClosed: every call refused');
  assert.ok(
    results.failClosed.every((s) => s.value.retryAfterMs > 0),
    'failClosed: refusals say when to retry',
  );
  assert.ok(results.failOpen.every((s) => s.value?.allowed), 'failOpen: every call admitted');
  const shared = results.localShare.map((s) => s.value?.allowed);
  assert.deepEqual(shared.slice(0, 6), [true, true, true, true, true, false], 'localShare: 10 ÷ 2 nodes');
  assert.ok(shared.slice(5).every((allowed) => allowed === false));

  // Restarted (empty): each limiter is back on Redis within a second.
  await server.start();
  const up = performance.now();
  const backIn = async (l, onRedis) => {
    for (;;) {
      const { value } = await timed(l.check('again'));
      if (value && onRedis(value)) return performance.now() - up;
      assert.ok(performance.now() - up < 3000, 'not back on Redis within 3 s');
      await sleep(10);
    }
  };
  // Back on Redis: error and failClosed admit again; failOpen refuses its
  // second call (the limit of 1), which only Redis does.
  const backs = [
    await backIn(limiters.error, (d) => d.allowed),
    await backIn(limiters.failClosed, (d) => d.allowed),
  ];
  await limiters.failOpen.check('again2');
  backs.push(await backIn({ check: () => limiters.failOpen.check('again2') }, (d) => !d.allowed));
  for (const ms of backs) assert.ok(ms <= 1000, `back on Redis after ${ms} ms`);
  assert.equal(store.isDown, false);
  // The local share's key is Redis's again: 10 allowed there.
  const onRedis = [];
  for (let i = 0; i < 11; i++) onRedis.push((await limiters.localShare.check('fresh')).allowed);
  assert.equal(onRedis.filter(Boolean).length, 10);
  a.close();
  b.close();
});

test('Redis slow (DEBUG SLEEP): calls time out at the timeout, the policy holds, and Redis decides again after', async () => {
  const name = unique('slow');
  const failing = new RedisLimiter(store, `${name}:error`, ROOMY);
  const open = new RedisLimiter(store, `${name}:open`, ROOMY, { whenUnavailable: 'failOpen' });
  assert.equal((await failing.check('k')).allowed, true);
  // Frozen for 700 ms (redis-cli waits for the reply: run it beside).
  const frozen = spawn('redis-cli', ['-u', server.url, 'DEBUG', 'SLEEP', '0.7'], { stdio: 'ignore' });
  const thawed = new Promise((resolve) => frozen.once('exit', resolve));
  await sleep(50);
  const first = await timed(failing.check('k'));
  assert.ok(first.error?.code === codes.redisTimeout, `${first.error?.code ?? "no error"} ${first.error?.message} after ${first.ms} ms`);
  assert.ok(first.ms >= TIMEOUT_MS - 5 && first.ms <= TIMEOUT_MS + SLACK_MS, `${first.ms} ms`);
  const during = await timed(open.check('k'));
  assert.equal(during.value?.allowed, true);
  assert.ok(during.ms <= TIMEOUT_MS + SLACK_MS, `${during.ms} ms`);
  await thawed;
  const start = performance.now();
  for (;;) {
    const { value } = await timed(failing.check('k'));
    if (value?.allowed) break;
    assert.ok(performance.now() - start < 1000, 'not back on Redis within 1 s');
    await sleep(10);
  }
});

test('connections killed (CLIENT KILL): reconnected, decisions go on', async () => {
  const limiter = new RedisLimiter(store, unique('killed'), ROOMY);
  const shared = await RedisRateLimiter.create(store, unique('killed-smooth'), 1000);
  assert.equal((await limiter.check('k')).allowed, true);
  const killed = Number(cli(server.url, 'CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
  assert.ok(killed >= 1, `${killed} connections killed`);
  const start = performance.now();
  for (;;) {
    const { value, ms } = await timed(limiter.check('k'));
    assert.ok(ms <= TIMEOUT_MS + SLACK_MS, `a call took ${ms} ms`);
    if (value?.allowed) break;
    assert.ok(performance.now() - start < 1000, 'not back on Redis within 1 s');
    await sleep(10);
  }
  assert.equal(await shared.getRate(), 1000);
  shared.close();
});

test('a store whose server is gone rejects at once while it is known down, then tries again', async () => {
  const other = await privateServer();
  const own = await RedisStore.connect(other.url, { timeoutMs: TIMEOUT_MS, retryIntervalMs: 500 });
  const limiter = new RedisLimiter(own, unique('gone'), ROOMY);
  assert.equal((await limiter.check('k')).allowed, true);
  await other.stop();
  const first = await timed(limiter.check('k'));
  assert.ok(unavailable(first.error), String(first.error));
  // Known down: the next calls fail without waiting for anything.
  const next = await timed(limiter.check('k'));
  assert.equal(next.error?.code, codes.redisUnavailable);
  assert.ok(next.ms < TIMEOUT_MS, `${next.ms} ms`);
  assert.equal(own.isDown, true);
  own.close();
});
