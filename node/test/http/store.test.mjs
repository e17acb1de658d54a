// RatekeeperStore driven by express-rate-limit itself, in an Express app on
// loopback: its Store interface (init, increment, decrement, resetKey, get,
// resetAll) as express-rate-limit calls it.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { RatekeeperStore, codes } from 'ratekeeper';
import { hammer, listen, send } from './support.mjs';

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** An Express app behind express-rate-limit with `options`; its URL and the middleware. */
async function serve(options, routes) {
  const limiter = expressRateLimit({ standardHeaders: 'draft-7', legacyHeaders: false, ...options });
  const app = express().use(limiter);
  if (routes) routes(app);
  else app.get('/{*path}', (req, res) => res.json({ used: req.rateLimit.used }));
  const server = await listen(app);
  servers.push(server);
  return { url: server.url, limiter };
}

const statuses = async (url, n) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await send(url)).status);
  return out;
};

describe('RatekeeperStore under express-rate-limit', () => {
  test("express-rate-limit's limit and windowMs, counted by ratekeeper: limit admitted, then 429", async () => {
    const { url } = await serve({ windowMs: 60_000, limit: 4, store: new RatekeeperStore({ algorithm: 'fixedWindow' }) });
    const responses = [];
    for (let i = 0; i < 6; i++) responses.push(await send(url));
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200, 200, 429, 429]);
    assert.deepEqual(responses.slice(0, 4).map((r) => r.body.used), [1, 2, 3, 4]);
    assert.deepEqual(
      responses.map((r) => /remaining=(\d+)/.exec(r.headers.get('ratelimit'))[1]),
      ['3', '2', '1', '0', '0', '0'],
    );
    assert.equal(responses[0].headers.get('ratelimit-policy'), '4;w=60');
    // A refusal's reset is when a retry can be admitted: the fixed window's end.
    const retryAfter = Number(responses[4].headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  });

  test('N concurrent clients per key × M requests: exactly the limit admitted per key', async () => {
    const { url } = await serve({
      windowMs: 3_600_000,
      limit: 15,
      store: new RatekeeperStore(),
      keyGenerator: (req) => req.get('x-client'),
    });
    const results = await Promise.all(['a', 'b'].map((k) => hammer(url, { clients: 6, requests: 5, headers: { 'x-client': k } })));
    for (const responses of results) assert.equal(responses.filter((r) => r.status === 200).length, 15);
  });

  test('its own limits text and algorithm, the rest of the configuration kept', async () => {
    const { url } = await serve({
      limit: 2,
      store: new RatekeeperStore({ limit: '2/hour', algorithm: 'gcra' }),
      message: { error: 'slow down' },
    });
    assert.deepEqual(await statuses(url, 3), [200, 200, 429]);
    assert.deepEqual((await send(url)).body, { error: 'slow down' });
  });

  test('resetKey and getKey reach the store: get reads without counting, resetKey forgets', async () => {
    const { url, limiter } = await serve({ windowMs: 3_600_000, limit: 2, store: new RatekeeperStore({ algorithm: 'fixedWindow' }) });
    assert.equal(await limiter.getKey('127.0.0.1'), undefined);
    assert.deepEqual(await statuses(url, 3), [200, 200, 429]);
    const info = await limiter.getKey('127.0.0.1');
    assert.equal(info.totalHits, 2);
    assert.ok(info.resetTime instanceof Date && info.resetTime.getTime() > Date.now());
    assert.equal((await limiter.getKey('127.0.0.1')).totalHits, 2);
    await limiter.resetKey('127.0.0.1');
    assert.equal(await limiter.getKey('127.0.0.1'), undefined);
    assert.deepEqual(await statuses(url, 3), [200, 200, 429]);
  });

  test('decrement gives the unit back: skipFailedRequests does not count failures', async () => {
    const { url } = await serve(
      { windowMs: 3_600_000, limit: 2, store: new RatekeeperStore({ algorithm: 'fixedWindow' }), skipFailedRequests: true },
      (app) => {
        app.get('/fail', (req, res) => res.status(500).end());
        app.get('/ok', (req, res) => res.end());
      },
    );
    for (let i = 0; i < 4; i++) {
      assert.equal((await send(`${url}/fail`)).status, 500);
      await sleep(20); // express-rate-limit decrements once the response has finished
    }
    assert.deepEqual([(await send(`${url}/ok`)).status, (await send(`${url}/ok`)).status], [200, 200]);
    assert.equal((await send(`${url}/ok`)).status, 429);
  });

  test('the store alone: increment, decrement, get, resetKey, resetAll', async () => {
    const store = new RatekeeperStore({ limit: '3/hour', algorithm: 'fixedWindow' });
    assert.equal(store.localKeys, true);
    assert.deepEqual((await Promise.all([1, 2, 3, 4].map(() => store.increment('k')))).map((i) => i.totalHits), [1, 2, 3, 4]);
    await store.decrement('k');
    assert.equal((await store.get('k')).totalHits, 2);
    assert.equal((await store.increment('k')).totalHits, 3);
    await store.resetKey('k');
    assert.equal(await store.get('k'), undefined);
    await store.increment('other');
    store.resetAll();
    assert.equal(await store.get('other'), undefined);
  });

  test("express-rate-limit's limit must be a number with windowMs in whole seconds, unless the store has its own", async () => {
    const store = new RatekeeperStore();
    assert.throws(() => store.init({ limit: 5, windowMs: 1500 }), { name: 'RangeError', code: codes.invalidArgument, argument: 'windowMs' });
    assert.throws(() => store.init({ limit: () => 5, windowMs: 60_000 }), { name: 'TypeError', argument: 'limit' });
    await assert.rejects(store.increment('k'), { name: 'TypeError', code: codes.invalidOption });
  });
});
