// The shared Guava limiter's waits take `{ signal }` as the local ones do,
// and every Redis method that takes options refuses unknown ones; against a
// real Redis (tests/redis/with-redis).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
  Membership,
  RedisDividedLimiter,
  RedisLeasedLimiter,
  RedisLimiter,
  RedisRateLimiter,
  RedisStore,
} from '../../index.mjs';
import { OPTION, TYPE, check } from '../expect-error.mjs';
import { redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url, { timeoutMs: 2_000 });
});
after(() => store.close());

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

function isAbortError(error, reason) {
  assert.ok(error instanceof Error, String(error));
  assert.equal(error.name, 'AbortError');
  assert.equal(error.code, 'ABORT_ERR');
  assert.equal(error.cause, reason);
}

const WAITS = [
  ['RedisRateLimiter.acquire', (shared, options) => shared.acquire(1, options), {}],
  ['RedisRateLimiter.tryAcquire', (shared, options) => shared.tryAcquire(1, options), { timeoutMs: 5_000 }],
];

for (const [name, wait, extra] of WAITS) {
  test(`${name}: a signal aborted before the call takes nothing`, async () => {
    const shared = await RedisRateLimiter.create(store, unique('abort-before'), 1);
    assert.equal(await shared.tryAcquire(), true);
    const reason = new Error('gone');
    isAbortError(await rejection(wait(shared, { ...extra, signal: AbortSignal.abort(reason) })), reason);
    const until = await shared.timeUntilAvailable();
    assert.ok(until <= 1000, `next permit in ${until} ms: nothing was taken`);
    shared.close();
  });

  test(`${name}: an abort during the wait rejects at once; the permits stay taken`, async () => {
    const shared = await RedisRateLimiter.create(store, unique('abort-during'), 1);
    assert.equal(await shared.tryAcquire(), true);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const start = performance.now();
    isAbortError(await rejection(wait(shared, { ...extra, signal: controller.signal })), controller.signal.reason);
    const took = performance.now() - start;
    assert.ok(took < 500, `aborted after ${took} ms`);
    const until = await shared.timeUntilAvailable();
    assert.ok(until > 1500, `next permit in ${until} ms: the aborted call's is still taken`);
    shared.close();
  });

  test(`${name}: signal must be an AbortSignal; unknown options are refused`, async () => {
    const shared = await RedisRateLimiter.create(store, unique('abort-bad'), 1);
    for (const bad of [null, 1, {}]) {
      check(await rejection(wait(shared, { ...extra, signal: bad })), TYPE, 'signal', bad);
    }
    check(await rejection(wait(shared, { ...extra, timeout: 1 })), OPTION, 'options');
    assert.equal(await shared.tryAcquire(), true); // nothing was taken
    shared.close();
  });
}

test('RedisRateLimiter.acquire has no timeout: timeoutMs is refused, not ignored', async () => {
  const shared = await RedisRateLimiter.create(store, unique('acquire-timeout'), 1);
  check(await rejection(shared.acquire(1, { timeoutMs: 100 })), OPTION, 'options');
  assert.equal(await shared.tryAcquire(), true);
  shared.close();
});

const window = { algorithm: 'fixedWindow', limit: 10, windowMs: 1000 };
const TAKES_OPTIONS = [
  ['RedisStore.connect', (o) => RedisStore.connect(url, o)],
  ['RedisStore.connectCluster', (o) => RedisStore.connectCluster([url], o)],
  ['RedisLimiter', (o) => new RedisLimiter(store, unique('o'), window, o)],
  ['RedisLimiter limit', (o) => new RedisLimiter(store, unique('o'), { ...window, ...o })],
  ['RedisLeasedLimiter', (o) => new RedisLeasedLimiter(store, unique('o'), { algorithm: 'gcra', maxBurst: 1, countPerPeriod: 1, periodMs: 1 }, { batch: 1, leaseMs: 1, ...o })],
  ['RedisDividedLimiter.create', (o) => RedisDividedLimiter.create(store, unique('o'), window, { heartbeatTtlMs: 1000, maxKeys: 1, ...o })],
  ['Membership.join', (o) => Membership.join(store, unique('o'), { ttlMs: 1000, ...o })],
  ['RedisRateLimiter.create', (o) => RedisRateLimiter.create(store, unique('o'), 1, o)],
  ['RedisRateLimiter.acquire', async (o) => (await RedisRateLimiter.create(store, unique('o'), 1)).acquire(1, o)],
  ['RedisRateLimiter.tryAcquire', async (o) => (await RedisRateLimiter.create(store, unique('o'), 1)).tryAcquire(1, o)],
  ['RedisRateLimiter.canAcquire', async (o) => (await RedisRateLimiter.create(store, unique('o'), 1)).canAcquire(o)],
];

for (const [name, call, argument = 'options'] of TAKES_OPTIONS) {
  test(`${name}: an unknown option is refused`, async () => {
    let error;
    try {
      await call({ bogus: 1 });
    } catch (e) {
      error = e;
    }
    assert.ok(error !== undefined, `${name} accepted { bogus: 1 }`);
    check(error, OPTION, argument);
    assert.match(error.message, /unknown option "bogus"/);
  });
}
