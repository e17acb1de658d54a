// A frozen server (SIGSTOP: connections open, nothing answered) costs
// every call at most the store's timeout — "the longest one decision may
// take, reconnection included" — on the first call and on every one
// after: exact checks (on the store's own socket, or its connection while
// that socket is down), peeks and leased checks (on the store's
// connection).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { RedisLeasedLimiter, RedisLimiter, RedisStore, codes } from '../../index.mjs';
import { privateServer, timed } from './support.mjs';

// Large enough that a loaded two-core machine's scheduling stays well
// within the 20% allowed.
const TIMEOUT_MS = 200;
const RETRY_MS = 20;
const BOUND_MS = 1.2 * TIMEOUT_MS;
const CALLS = 5;

/** @type {Awaited<ReturnType<typeof privateServer>>} */
let server;

before(async () => {
  server = await privateServer();
});
after(async () => {
  await server?.stop();
});

const ROOMY = Object.freeze({ algorithm: 'fixedWindow', limit: 1e12, windowMs: 1e9 });
const TEN = Object.freeze({ algorithm: 'gcra', maxBurst: 9, countPerPeriod: 1, periodMs: 60_000 });

test('with the server frozen, every call returns within its timeout', async () => {
  const store = await RedisStore.connect(server.url, { timeoutMs: TIMEOUT_MS, retryIntervalMs: RETRY_MS });
  const limiter = new RedisLimiter(store, 'frozen', ROOMY);
  const leased = new RedisLeasedLimiter(store, 'frozen-leased', TEN, { batch: 1, leaseMs: 1 });
  const calls = {
    check: () => limiter.check('check'),
    peek: () => limiter.peek('peek'),
    leased: () => leased.check('leased'),
  };
  // Each kind's connection open (the store's socket too), scripts loaded.
  for (let i = 0; i < 3; i++) {
    for (const call of Object.values(calls)) await call();
    await sleep(20);
  }
  server.freeze();
  try {
    const waited = Object.fromEntries(Object.keys(calls).map((kind) => [kind, 0]));
    for (let round = 0; round < CALLS; round++) {
      for (const [kind, call] of Object.entries(calls)) {
        const { error, ms } = await timed(call());
        assert.ok(ms <= BOUND_MS, `${kind}, call ${round}: ${ms.toFixed(1)} ms (timeout ${TIMEOUT_MS} ms)`);
        if (error?.code === codes.redisTimeout) waited[kind] += ms >= 0.9 * TIMEOUT_MS;
        else assert.equal(error?.code, codes.redisUnavailable, `${kind}, call ${round}: ${error ?? 'answered'}`);
        // Past the retry interval, and anything that may lead to it.
        await sleep(TIMEOUT_MS + RETRY_MS + 100);
      }
    }
    // The bound held on calls that did wait for the server, the first and
    // later (reconnecting) ones.
    for (const [kind, count] of Object.entries(waited)) {
      assert.ok(count >= 3, `${kind}: only ${count} of ${CALLS} calls waited for the server`);
    }
  } finally {
    server.thaw();
    limiter.close();
    leased.close();
    store.close();
  }
});
