// The CommonJS entry point, and that it gives the same objects as the ES
// module one.
const assert = require('node:assert/strict');
const { test } = require('node:test');

const ratekeeper = require('..');

test('require() gives the API', () => {
  const { RateLimiter, ManualClock, codes } = ratekeeper;
  const clock = new ManualClock();
  const limiter = RateLimiter.create(2, { clock });
  assert.equal(limiter.tryAcquire(), true);
  assert.equal(limiter.tryAcquire(), false);
  assert.equal(codes.invalidArgument, 'ERR_RATEKEEPER_INVALID_ARGUMENT');
  assert.deepEqual(Object.keys(ratekeeper).sort(), [
    'AdmissionLimiter',
    'Bbr',
    'BbrPermit',
    'CompositeLimiter',
    'ConcurrencyLease',
    'ConcurrencyLimiter',
    'CycleLimiter',
    'Decision',
    'FixedWindow',
    'FlowController',
    'FlowPermit',
    'Gcra',
    'HttpLimiter',
    'KeyedLimiter',
    'LeakyBucketMeter',
    'LeakyBucketQueue',
    'ManualClock',
    'ManualLoad',
    'Membership',
    'NEVER',
    'Permit',
    'RateItem',
    'RateLimiter',
    'RatekeeperStore',
    'RedisCompositeLimiter',
    'RedisConcurrencyLimiter',
    'RedisDividedLimiter',
    'RedisLeasedLimiter',
    'RedisLimiter',
    'RedisRateLimiter',
    'RedisStore',
    'Reservation',
    'SlidingLog',
    'SlidingWindow',
    'SlidingWindowCounter',
    'SrTcm',
    'SystemGuard',
    'SystemLoad',
    'SystemPermit',
    'TokenBucket',
    'TrTcm',
    'TrustedProxies',
    'codes',
    'fastifyRateLimit',
    'parseLimits',
    'rateLimit',
    'responseFields',
    'version',
  ]);
});

test('import() gives the same objects', async () => {
  const esm = await import('ratekeeper');
  for (const [name, value] of Object.entries(ratekeeper)) assert.equal(esm[name], value, name);
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), Object.keys(ratekeeper).sort());
  assert.equal(esm.default, ratekeeper);
});

test('a limiter from one entry point takes a clock from the other', async () => {
  const esm = await import('ratekeeper');
  const clock = new esm.ManualClock();
  const limiter = ratekeeper.RateLimiter.create(1, { clock });
  assert.equal(await limiter.acquire(), 0);
  assert.equal(await limiter.acquire(), 1);
  assert.equal(clock.now, 1000);
});
