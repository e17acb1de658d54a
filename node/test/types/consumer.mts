// The same as consumer.cts for an ES module user (index.d.mts).
import ratekeeper, { codes, Decision, Gcra, ManualClock, RateLimiter } from 'ratekeeper';
import type { RateLimiterOptions } from 'ratekeeper';

const options: RateLimiterOptions = { clock: new ManualClock() };
const limiter: RateLimiter = RateLimiter.create(5, options);
const now: boolean = limiter.tryAcquire();
const later: Promise<boolean> = limiter.tryAcquire(1, { timeoutMs: 100 });
const seconds: number = await limiter.acquire(2);
const same: typeof RateLimiter = ratekeeper.RateLimiter;
const code: string = codes.invalidOption;
// @ts-expect-error: a timed tryAcquire is a Promise, not a boolean
const wrong: boolean = limiter.tryAcquire(1, { timeoutMs: 100 });

const decision: Decision = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000 }).check(2n);
const header: string = decision.rateLimitHeader('api');

export { now, later, seconds, same, code, wrong, header };

// Keyed and Redis limiters, as a TypeScript user writes them (type-checked, not run).
import {
  KeyedLimiter,
  Membership,
  RedisDividedLimiter,
  RedisLeasedLimiter,
  RedisLimiter,
  RedisRateLimiter,
  RedisStore,
} from 'ratekeeper';
import type { KeyedOptions, LimitOptions, RedisLimiterOptions, StoreOptions, WhenFull } from 'ratekeeper';

const perUser: LimitOptions = { algorithm: 'gcra', maxBurst: 29, countPerPeriod: 30, periodMs: 60_000 };
const policy: WhenFull = 'evictSoonestFull';
const keyedOptions: KeyedOptions = { maxKeys: 100_000, whenFull: policy };
const keyed = new KeyedLimiter(perUser, keyedOptions);
const byString: Decision = keyed.check('user:1');
const byBytes: boolean = keyed.tryAcquire(new TextEncoder().encode('user:1'), 2n);
const held: number = keyed.size;

async function redis(): Promise<void> {
  const storeOptions: StoreOptions = { timeoutMs: 50, retryIntervalMs: 100 };
  const store: RedisStore = await RedisStore.connect('redis://127.0.0.1:6379/', storeOptions);
  const cluster: RedisStore = await RedisStore.connectCluster(['redis://127.0.0.1:7000']);
  const membership: Membership = await Membership.join(store, 'api-nodes', { ttlMs: 3_000 });
  const exactOptions: RedisLimiterOptions = { whenUnavailable: 'localShare', membership, maxKeys: 10_000 };
  const exact = new RedisLimiter(store, 'api', perUser, exactOptions);
  const d: Decision = await exact.check('user:1', 1);
  const leased = new RedisLeasedLimiter(cluster, 'api', perUser, { batch: 5, leaseMs: 100 });
  const l: Decision = await leased.check('user:1');
  const divided: RedisDividedLimiter = await RedisDividedLimiter.create(store, 'api', perUser, {
    heartbeatTtlMs: 3_000,
    maxKeys: 10_000,
  });
  const local: Decision = divided.check('user:1');
  const shared: RedisRateLimiter = await RedisRateLimiter.create(store, 'reports', 5, { warmupMs: 1_000 });
  const waited: number = await shared.acquire();
  const got: boolean = await shared.tryAcquire(1, { timeoutMs: 100 });
  // @ts-expect-error: a Redis decision is a Promise
  const notYet: Decision = exact.check('user:1');
  // @ts-expect-error: an unknown policy
  new RedisLimiter(store, 'api', perUser, { whenUnavailable: 'retry' });
  // Redis keys are strings or bytes, as a KeyedLimiter's.
  await exact.check(new Uint8Array(1));
  // @ts-expect-error: but not numbers
  await exact.check(42);
  // @ts-expect-error: stores come from RedisStore.connect
  new RedisStore();
  void [d, l, local, waited, got, notYet];
  store.close();
}

// Every wait takes an AbortSignal (the platform's, through its members);
// acquire has no timeout.
const aborted: Promise<number> = limiter.acquire(1, { signal: AbortSignal.timeout(1_000) });
const within: Promise<boolean> = limiter.tryAcquire(2n, { timeoutMs: 100, signal: new AbortController().signal });
// @ts-expect-error: acquire waits as long as it takes; tryAcquire has the timeout
limiter.acquire(1, { timeoutMs: 100 });
// @ts-expect-error: a signal is an AbortSignal
limiter.acquire(1, { signal: true });

async function sharedWaits(shared: RedisRateLimiter): Promise<void> {
  const signal = new AbortController().signal;
  const waited: number = await shared.acquire(1, { signal });
  const got: boolean = await shared.tryAcquire(1n, { timeoutMicros: 100n, signal });
  void [waited, got];
}

export { byString, byBytes, held, redis, aborted, within, sharedWaits };
