// Several limits of one key through Redis, and refunds
// (tests/redis/with-redis): RedisCompositeLimiter decides all or nothing,
// RedisLimiter and the composite give units back, and the HTTP middleware
// and express-rate-limit's store use both — several limits with `redis`
// are one decision, and the store's decrement reaches Redis.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';

import { Decision, RatekeeperStore, RedisCompositeLimiter, RedisLimiter, RedisStore, codes, rateLimit } from '../../index.mjs';
import { listen, send } from '../http/support.mjs';
import { redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;
const servers = [];

before(async () => {
  store = await RedisStore.connect(url);
});
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  store.close();
});

const MINUTE = 60_000;
const HOUR = 3_600_000;
const perMinute = (limit) => ({ algorithm: 'fixedWindow', limit, windowMs: MINUTE });
const perHour = (limit) => ({ algorithm: 'slidingWindowCounter', limit, windowMs: HOUR });

describe('RedisLimiter.refund', () => {
  test('gives a unit back: the refused key is admitted again, never past the limit', async () => {
    const limiter = new RedisLimiter(store, unique('refund'), perMinute(2));
    assert.deepEqual([(await limiter.check('k')).allowed, (await limiter.check('k')).allowed], [true, true]);
    assert.equal((await limiter.check('k')).allowed, false);
    assert.equal(await limiter.refund('k'), undefined);
    const again = await limiter.check('k');
    assert.deepEqual([again.allowed, again.remaining], [true, 0]);
    // More back than was taken: a fresh state, not more.
    await limiter.refund('k', 10);
    assert.equal((await limiter.peek('k', 0)).remaining, 2);
    limiter.close();
  });

  test('a bad cost is refused as a check refuses it', async () => {
    const limiter = new RedisLimiter(store, unique('refund-bad'), perMinute(2));
    await assert.rejects(limiter.refund('k', -1), { name: 'RangeError', code: codes.invalidArgument });
    limiter.close();
  });
});

describe('RedisCompositeLimiter', () => {
  test('all or nothing: a refusal by one part takes nothing from the others', async () => {
    const limiter = new RedisCompositeLimiter(store, unique('composite'), [perMinute(2), perHour(5)]);
    assert.deepEqual([limiter.parts, limiter.limit, limiter.maxKeyBytes], [2, 2, 256]);
    for (let i = 0; i < 2; i++) {
      const { decision, parts } = await limiter.check('k');
      assert.ok(decision instanceof Decision && decision.allowed);
      assert.deepEqual(
        parts.map((d) => d.remaining),
        [1 - i, 4 - i],
      );
    }
    const refused = await limiter.check('k');
    assert.equal(refused.decision.allowed, false);
    assert.equal(refused.parts[0].allowed, false);
    assert.ok(refused.decision.retryAfterMs > 0);
    // The hour part kept its 3 units: the minute part refused, so nothing was taken.
    assert.equal((await limiter.peek('k')).parts[1].remaining, 3);
    await limiter.refund('k');
    const { decision, parts } = await limiter.check('k');
    assert.equal(decision.allowed, true);
    assert.deepEqual(
      parts.map((d) => d.remaining),
      [0, 3],
    );
    assert.equal(await limiter.remove('k'), true);
    assert.equal(await limiter.remove('k'), false);
    assert.equal((await limiter.check('k')).decision.remaining, 1);
    limiter.close();
    await assert.rejects(limiter.check('k'), { code: codes.closed });
  });

  test('shared by name, as by two processes', async () => {
    const name = unique('composite-shared');
    const [a, b] = [0, 1].map(() => new RedisCompositeLimiter(store, name, [perMinute(3), perHour(10)]));
    const admitted = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).check('k')));
    assert.equal(admitted.filter((r) => r.decision.allowed).length, 3);
  });

  test('bad parts and options: errors naming them', () => {
    const name = unique('composite-bad');
    assert.throws(() => new RedisCompositeLimiter(store, name, [perMinute(2), { algorithm: 'fixedWindow', limit: -1, windowMs: 1000 }]), {
      name: 'RangeError',
      message: /limits\[1\]/,
    });
    assert.throws(() => new RedisCompositeLimiter(store, name, 'nope'), { name: 'TypeError', argument: 'limits' });
    assert.throws(() => new RedisCompositeLimiter(store, name, [perMinute(2)], { whenUnavailable: 'localShare' }), {
      name: 'RangeError',
      argument: 'whenUnavailable',
    });
    assert.throws(() => new RedisCompositeLimiter(store, name, [perMinute(2)], { nope: 1 }), { name: 'TypeError' });
  });
});

describe('the middleware with several limits through Redis', () => {
  test('one all-or-nothing decision, shared by two apps, each policy in the fields', async () => {
    const name = unique('http-composite');
    const make = () => express().use(rateLimit({ limit: '3/minute; 4/hour', redis: store, name })).get('/', (req, res) => res.end('ok'));
    const [one, two] = await Promise.all([listen(make()), listen(make())]);
    servers.push(one, two);
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await send((i % 2 ? two : one).url));
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 429, 429],
    );
    assert.match(responses[0].headers.get('ratelimit-policy'), /^"3-in-1min";q=3;w=60, "4-in-1hr";q=4;w=3600$/);
    assert.match(responses[2].headers.get('ratelimit'), /^"3-in-1min";r=0;t=\d+, "4-in-1hr";r=1;t=\d+$/);
    assert.ok(Number(responses[3].headers.get('retry-after')) > 0);
  });
});

describe('RatekeeperStore on Redis under express-rate-limit', () => {
  /** An Express app behind express-rate-limit counting in Redis. */
  async function serve(options, routes) {
    const app = express().use(expressRateLimit({ standardHeaders: 'draft-7', legacyHeaders: false, ...options }));
    routes(app);
    const server = await listen(app);
    servers.push(server);
    return server.url;
  }

  test('decrement reaches Redis: skipFailedRequests does not count failures', async () => {
    const limiter = new RatekeeperStore({ redis: store, name: unique('erl-decrement'), algorithm: 'fixedWindow' });
    const base = await serve({ windowMs: HOUR, limit: 2, store: limiter, skipFailedRequests: true }, (app) => {
      app.get('/fail', (req, res) => res.status(500).end());
      app.get('/ok', (req, res) => res.end());
    });
    for (let i = 0; i < 4; i++) {
      assert.equal((await send(`${base}/fail`)).status, 500);
      await sleep(50); // express-rate-limit decrements once the response has finished
    }
    assert.deepEqual([(await send(`${base}/ok`)).status, (await send(`${base}/ok`)).status], [200, 200]);
    assert.equal((await send(`${base}/ok`)).status, 429);
  });

  test('several limits of its own text: one decision in Redis, decrement included', async () => {
    const limiter = new RatekeeperStore({ redis: store, name: unique('erl-composite'), limit: '2/minute; 3/hour' });
    assert.equal(limiter.localKeys, false);
    const infos = [];
    for (let i = 0; i < 3; i++) infos.push(await limiter.increment('k'));
    assert.deepEqual(
      infos.map((i) => i.totalHits),
      [1, 2, 3],
    );
    await limiter.decrement('k');
    assert.equal((await limiter.get('k')).totalHits, 1);
    await limiter.resetKey('k');
    assert.equal(await limiter.get('k'), undefined);
    limiter.shutdown();
  });
});
