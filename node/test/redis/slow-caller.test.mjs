// One caller's slow call is its own: it times out alone, the server goes
// on answering every other check, and the store is not marked down —
// which would send every limiter on it to its unavailability policy (a
// failOpen one admitting everyone) for the retry interval.
//
// The slow call is a check with a 60 KiB key held back on its way to the
// server (a proxy delays the piece that carries it), as on a slow link:
// the server itself answers at once throughout. It goes out on the store's
// own socket (the pipe); replies come in order there, so the checks made
// after it timed out go by the store's other connection until its late
// reply has come.
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { RedisLimiter, RedisStore, codes } from '../../index.mjs';
import { privateServer, timed } from './support.mjs';

const TIMEOUT_MS = 150;
/** Long: a store marked down shows in every check made after it. */
const RETRY_MS = 5000;
/** How long the proxy holds back the slow request. */
const DELAY_MS = 400;
const MARKER = 'slow-';

/**
 * A TCP proxy on loopback in front of port `to`, which holds back by
 * `delay` ms every piece a client writes that contains `marker`.
 */
async function slowProxy(to, marker, delay) {
  const sockets = new Set();
  const proxy = createServer((client) => {
    const upstream = connect(to, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    let sent = Promise.resolve();
    client.on('data', (piece) => {
      const hold = piece.includes(marker);
      sent = sent.then(async () => {
        if (hold) await sleep(delay);
        upstream.write(piece);
      });
    });
    upstream.on('data', (piece) => client.write(piece));
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: proxy.address().port,
    close() {
      for (const s of sockets) s.destroy();
      proxy.close();
    },
  };
}

/** @type {Awaited<ReturnType<typeof privateServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof slowProxy>>} */
let proxy;

before(async () => {
  server = await privateServer();
  proxy = await slowProxy(server.port, MARKER, DELAY_MS);
});
after(async () => {
  proxy?.close();
  await server?.stop();
});

const ROOMY = Object.freeze({ algorithm: 'fixedWindow', limit: 1e12, windowMs: 1e9 });

test("one caller's slow check times out alone, and the store stays up", async () => {
  const store = await RedisStore.connect(`redis://127.0.0.1:${proxy.port}/`, {
    timeoutMs: TIMEOUT_MS,
    retryIntervalMs: RETRY_MS,
  });
  const limiter = new RedisLimiter(store, 'held-back', ROOMY, { maxKeyBytes: 65_536 });
  // The store's socket open, the script loaded.
  for (let i = 0; i < 3; i++) {
    assert.equal((await limiter.check('warm-up')).allowed, true);
    await sleep(20);
  }
  const slow = await timed(limiter.check(MARKER + 'x'.repeat(60 << 10)));
  assert.equal(slow.error?.code, codes.redisTimeout, String(slow.error ?? 'answered'));
  assert.ok(slow.ms <= 1.2 * TIMEOUT_MS, `${slow.ms.toFixed(1)} ms`);
  // Past the slow call's late reply, and the probe a timeout with no
  // answer since starts.
  const outcomes = [];
  const until = performance.now() + 3 * TIMEOUT_MS + DELAY_MS;
  while (performance.now() < until) {
    const { value, error } = await timed(limiter.check('other'));
    outcomes.push(value?.allowed ?? error?.code);
    await sleep(10);
  }
  assert.ok(outcomes.length > 10, `${outcomes.length} checks`);
  assert.ok(
    outcomes.every((o) => o === true),
    `every other check answered by Redis: ${outcomes.join(', ')}`,
  );
  assert.equal(store.isDown, false);
  limiter.close();
  store.close();
});
