// RedisConcurrencyLimiter: a concurrency limit shared through Redis, its
// permits held as leases that expire. The semantics are the Rust crate's
// (tested there with holders killed by kill -9); here, that the binding
// passes them through, and its argument errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ConcurrencyLease, RedisConcurrencyLimiter, RedisStore, codes } from '../../index.mjs';
import { OPTION, RANGE, TYPE, rejects, throws } from '../expect-error.mjs';
import { privateServer, redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url);
});
after(() => store.close());

test('at most limit permits held; a lease is released exactly once', async () => {
  const name = unique('concurrency');
  const pool = new RedisConcurrencyLimiter(store, name, 2, { leaseTtlMs: 60_000 });
  const other = new RedisConcurrencyLimiter(store, name, 2, { leaseTtlMs: 60_000 }); // another process's
  const a = await pool.tryAcquire();
  const b = await other.tryAcquire();
  assert.deepEqual([a.decision.allowed, a.decision.remaining, b.decision.remaining], [true, 1, 0]);
  assert.ok(a.lease instanceof ConcurrencyLease);
  assert.notEqual(a.lease.id, b.lease.id);
  assert.deepEqual([a.lease.permits, a.lease.recorded], [1, true]);
  const refused = await pool.tryAcquire();
  assert.equal(refused.decision.allowed, false);
  assert.equal(refused.lease, null);
  assert.ok(refused.decision.retryAfterMs > 59_000 && refused.decision.retryAfterMs <= 60_000);
  assert.equal(await pool.held(), 2);
  assert.equal(await a.lease.release(), true);
  assert.equal(await a.lease.release(), false);
  assert.equal(await a.lease.renew(), false);
  assert.equal(await b.lease.renew(), true);
  assert.equal(await pool.held(), 1);
  assert.equal(await b.lease.release(), true);
  assert.deepEqual([pool.limit, pool.leaseTtlMs], [2, 60_000]);
});

test("a dead holder's lease comes back at its expiry", async () => {
  const pool = new RedisConcurrencyLimiter(store, unique('expiry'), 1, { leaseTtlMicros: 100_000n });
  const dead = await pool.tryAcquire(); // never released
  assert.equal((await pool.tryAcquire()).decision.allowed, false);
  await sleep(150);
  const next = await pool.tryAcquire();
  assert.equal(next.decision.allowed, true);
  assert.equal(await dead.lease.release(), false);
  assert.equal(await pool.held(), 1);
  assert.equal(await next.lease.release(), true);
});

test('a lease holds its permits; more than the limit is never admitted', async () => {
  const pool = new RedisConcurrencyLimiter(store, unique('weights'), 5, { leaseTtlMs: 60_000 });
  const three = await pool.tryAcquire(3);
  assert.deepEqual([three.decision.remaining, three.lease.permits], [2, 3]);
  assert.equal((await pool.tryAcquire(3n)).decision.allowed, false);
  const never = await pool.tryAcquire(6);
  assert.equal(never.decision.retryAfterMs, Infinity);
  assert.equal(await three.lease.release(), true);
});

test('bad arguments are typed errors', async () => {
  const name = unique('args');
  throws(() => new RedisConcurrencyLimiter(store, name, 0, { leaseTtlMs: 1000 }), RANGE, 'limit', 0);
  throws(() => new RedisConcurrencyLimiter(store, name, 1, { leaseTtlMs: 0.5 }), RANGE, 'leaseTtlMs', 0.5);
  throws(() => new RedisConcurrencyLimiter(store, name, 1, { leaseTtlMicros: 86_400_000_001n }), RANGE, 'leaseTtlMicros', 86_400_000_001n);
  throws(() => new RedisConcurrencyLimiter(store, name, 1, { leaseTtlMs: 1000, whenUnavailable: 'localShare' }), RANGE, 'whenUnavailable', 'localShare');
  throws(() => new RedisConcurrencyLimiter(store, name, 1, { leaseTtlMs: 1000, nope: 1 }), OPTION, 'options');
  const pool = new RedisConcurrencyLimiter(store, name, 1, { leaseTtlMs: 1000 });
  await rejects(pool.tryAcquire(0), RANGE, 'permits', 0);
  await rejects(pool.tryAcquire(2 ** 31), RANGE, 'permits', 2 ** 31);
  await rejects(pool.tryAcquire('1'), TYPE, 'permits', '1');
  assert.throws(() => new ConcurrencyLease(), TypeError);
  pool.close();
  await assert.rejects(pool.tryAcquire(), { code: codes.closed });
});

test('when Redis is down, the policy decides acquires', async () => {
  const server = await privateServer(); // started
  const own = await RedisStore.connect(server.url, { timeoutMs: 1000 });
  try {
    const plain = new RedisConcurrencyLimiter(own, 'down', 1, { leaseTtlMs: 1000 });
    const closed = new RedisConcurrencyLimiter(own, 'down', 1, { leaseTtlMs: 1000, whenUnavailable: 'failClosed' });
    const open = new RedisConcurrencyLimiter(own, 'down', 1, { leaseTtlMs: 1000, whenUnavailable: 'failOpen' });
    await server.kill();
    await assert.rejects(plain.tryAcquire(), { code: codes.redisUnavailable });
    assert.equal((await closed.tryAcquire()).decision.allowed, false);
    const admitted = await open.tryAcquire();
    assert.equal(admitted.decision.allowed, true);
    assert.equal(admitted.lease.recorded, false);
    assert.equal(await admitted.lease.release(), true);
    assert.equal(await admitted.lease.release(), false);
  } finally {
    own.close();
    await server.stop();
  }
});
