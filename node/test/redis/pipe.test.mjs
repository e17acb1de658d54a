// The store's own socket on the JavaScript thread (bindings/node/src/redis/pipe.rs):
// exact-mode checks go out on it once it is open (a batch as a few script
// runs, pipelined), survive a flushed script
// cache (it sends the script again as EVAL, which the store's own
// connection never does), set up the URL's password and database, and
// settle every Promise when the connection is killed under them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { RedisLimiter, RedisStore } from '../../index.mjs';
import { cli, commandCalls, privateServer, unique } from './support.mjs';

const GCRA = { algorithm: 'gcra', maxBurst: 999, countPerPeriod: 1000, periodMs: 1000 };

/** @type {Awaited<ReturnType<typeof privateServer>>} */
let server;

before(async () => {
  server = await privateServer();
});
after(async () => {
  await server.stop();
});

/** Checks `n` keys at once (one turn of the event loop: one batch). */
const batch = (limiter, n, label = 'k') =>
  Promise.all(Array.from({ length: n }, (_, i) => limiter.check(`${label}${i}`)));

/**
 * Batches until the pipe carries them: its first EVAL after a SCRIPT FLUSH
 * (a batch that fails, as Redis's connections come back, is tried again).
 */
async function untilThePipeCarries(url, limiter) {
  const start = performance.now();
  for (;;) {
    cli(url, 'SCRIPT', 'FLUSH');
    const before = commandCalls(url, 'eval');
    const answers = await batch(limiter, 8).catch((e) => {
      assert.equal(e.code, 'ERR_RATEKEEPER_REDIS_UNAVAILABLE', String(e));
      return undefined;
    });
    if (answers !== undefined && commandCalls(url, 'eval') === before + 1) {
      assert.ok(answers.every((d) => d.allowed));
      return;
    }
    assert.ok(performance.now() - start < 3000, 'the pipe did not open within 3 s');
    await sleep(10);
  }
}

test('checks go out on the pipe, and a flushed script cache costs one EVAL', async () => {
  const store = await RedisStore.connect(server.url);
  const limiter = new RedisLimiter(store, unique('pipe'), GCRA);
  await untilThePipeCarries(server.url, limiter);
  // Loaded again by that EVAL: the next batches are EVALSHAs, each batch of
  // 32 as four script runs of 8 (pipelined: see pipe.rs).
  const [eval0, evalsha0] = [commandCalls(server.url, 'eval'), commandCalls(server.url, 'evalsha')];
  for (let i = 0; i < 5; i++) await batch(limiter, 32, `b${i}:`);
  assert.equal(commandCalls(server.url, 'eval'), eval0);
  assert.equal(commandCalls(server.url, 'evalsha'), evalsha0 + 20);
  // Decisions are the limiter's: a key's burst of 100, then refusals.
  const hourly = new RedisLimiter(store, unique('burst'), { ...GCRA, maxBurst: 99, countPerPeriod: 1, periodMs: 3_600_000 });
  const answers = await Promise.all(Array.from({ length: 150 }, () => hourly.check('k')));
  assert.equal(answers.filter((d) => d.allowed).length, 100);
  assert.equal(answers[149].allowed, false);
  assert.ok(answers[149].retryAfterMs > 30_000);
  store.close();
});

test("the pipe logs in with the URL's password and uses its database", async () => {
  const own = await privateServer();
  try {
    cli(own.url, 'CONFIG', 'SET', 'requirepass', 's3cret');
    const url = `redis://default:s3cret@127.0.0.1:${own.port}/2`;
    const store = await RedisStore.connect(url);
    const name = unique('db');
    const limiter = new RedisLimiter(store, name, GCRA);
    await untilThePipeCarries(url, limiter);
    assert.ok(Number(cli(url, 'DBSIZE')) >= 8, 'the state is in database 2');
    assert.equal(cli(`redis://default:s3cret@127.0.0.1:${own.port}/0`, 'DBSIZE'), '0');
    store.close();
  } finally {
    await own.stop();
  }
});

test('connections killed under 2,000 checks in flight: every Promise settles, then decisions go on', async () => {
  const store = await RedisStore.connect(server.url, { timeoutMs: 200, retryIntervalMs: 50 });
  const limiter = new RedisLimiter(store, unique('killed'), GCRA);
  await untilThePipeCarries(server.url, limiter);
  const inFlight = [];
  for (let i = 0; i < 2000; i++) inFlight.push(limiter.check(`k${i % 50}`).then(() => 'decided', (e) => e.code));
  const killed = Number(cli(server.url, 'CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
  assert.ok(killed >= 1, `${killed} connections killed`);
  const start = performance.now();
  const outcomes = await Promise.all(inFlight);
  assert.ok(performance.now() - start < 1000, 'settled within the timeout and then some');
  for (const outcome of new Set(outcomes)) {
    assert.ok(['decided', 'ERR_RATEKEEPER_REDIS_UNAVAILABLE', 'ERR_RATEKEEPER_REDIS_TIMEOUT'].includes(outcome), outcome);
  }
  await sleep(60);
  await untilThePipeCarries(server.url, limiter);
  store.close();
});

test("closing the store closes its connections, the pipe's too", async () => {
  const own = await privateServer();
  try {
    // Counts the redis-cli connection that asks, too.
    const clients = () => Number(/connected_clients:(\d+)/.exec(cli(own.url, 'INFO', 'clients'))[1]);
    const before = clients();
    const store = await RedisStore.connect(own.url);
    const limiter = new RedisLimiter(store, unique('close'), GCRA);
    await untilThePipeCarries(own.url, limiter);
    const open = clients();
    assert.ok(open >= before + 2, `the store's connection and its pipe's (${before} -> ${open})`);
    store.close();
    const start = performance.now();
    while (clients() > before) {
      assert.ok(performance.now() - start < 2000, `${clients() - before} connections still open 2 s after close()`);
      await sleep(20);
    }
  } finally {
    await own.stop();
  }
});

test("a store's longest timeout, an hour, is kept, not fired at once", async () => {
  /** @type {string[]} */
  const warnings = [];
  const onWarning = (/** @type {Error} */ w) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    // Beyond setTimeout's range (2^31 - 1 ms) is beyond a store's domain.
    await assert.rejects(RedisStore.connect(server.url, { timeoutMs: 2 ** 32 }), { argument: 'timeoutMs' });
    const store = await RedisStore.connect(server.url, { timeoutMs: 3_600_000 });
    const limiter = new RedisLimiter(store, unique('long-timeout'), GCRA);
    await untilThePipeCarries(server.url, limiter);
    for (let i = 0; i < 3; i++) assert.ok((await batch(limiter, 16, `t${i}:`)).every((d) => d.allowed));
    await sleep(20);
    store.close();
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  } finally {
    process.off('warning', onWarning);
  }
});
