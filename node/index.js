'use strict';
/**
 * ratekeeper: rate limiting that behaves identically — to the microsecond —
 * from Rust, Python, Node.js and C. This is the CommonJS entry point;
 * index.mjs is the ES module one (the same objects).
 * @module ratekeeper
 */

const { RateLimiter } = require('./lib/rate-limiter.js');
const { ManualClock, errorCodes, version: nativeVersion } = require('./lib/binding.js');
const { Decision, NEVER } = require('./lib/decision.js');
const {
  AdmissionLimiter,
  TokenBucket,
  Reservation,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  FixedWindow,
  SlidingWindow,
  SlidingLog,
  SlidingWindowCounter,
} = require('./lib/admission.js');
const { SrTcm, TrTcm } = require('./lib/markers.js');
const { ConcurrencyLimiter, Permit } = require('./lib/concurrency.js');
const { CycleLimiter } = require('./lib/cycle.js');
const { ManualLoad, SystemLoad, Bbr, BbrPermit, SystemGuard, SystemPermit } = require('./lib/load.js');
const { FlowController, FlowPermit } = require('./lib/flow.js');
const { CompositeLimiter } = require('./lib/composite.js');
const { KeyedLimiter } = require('./lib/keyed.js');
const {
  RedisStore,
  RedisLimiter,
  RedisCompositeLimiter,
  RedisLeasedLimiter,
  RedisDividedLimiter,
  Membership,
  RedisRateLimiter,
  RedisConcurrencyLimiter,
  ConcurrencyLease,
} = require('./lib/redis.js');
const { parseLimits, RateItem } = require('./lib/http/limits.js');
const { responseFields } = require('./lib/http/fields.js');
const { TrustedProxies } = require('./lib/http/client.js');
const { HttpLimiter } = require('./lib/http/limiter.js');
const { rateLimit } = require('./lib/http/express.js');
const { fastifyRateLimit } = require('./lib/http/fastify.js');
const { RatekeeperStore } = require('./lib/http/store.js');

/**
 * The `code` of each kind of error ratekeeper throws: `RangeError`s have
 * `invalidArgument`, `TypeError`s `invalidArgType` or `invalidOption`, and
 * an `Error` with `internal` is a bug in ratekeeper. A keyed limiter's
 * `tryCheck` throws `atCapacity`; the Redis limiters reject with
 * `redisUnavailable`, `redisTimeout`, `redisError`, `redisProtocol`,
 * `redisUnsupported`, `redisAuth`, `redisTls` or `closed`.
 */
const codes = Object.freeze(errorCodes());

/**
 * The version of ratekeeper's native module, e.g. `'0.1.0'`: the version it
 * was built from, which is also the package's (`ratekeeper/package.json`)
 * and its platform package's.
 * @returns {string}
 */
function version() {
  return nativeVersion();
}

/**
 * What ratekeeper's errors carry besides a message: `code` (one of
 * `codes`), and for a bad argument its JavaScript name and the value given.
 * @typedef {Error & { code: string, argument?: string, value?: unknown }} RatekeeperError
 */

/** @typedef {import('./lib/rate-limiter.js').RateLimiterOptions} RateLimiterOptions */
/** @typedef {import('./lib/rate-limiter.js').TimeoutOptions} TimeoutOptions */
/** @typedef {import('./lib/rate-limiter.js').TryAcquireOptions} TryAcquireOptions */
/** @typedef {import('./lib/sleep.js').SignalOptions} SignalOptions */
/** @typedef {import('./lib/sleep.js').AbortSignalLike} AbortSignalLike */
/** @typedef {import('./lib/admission.js').TokenBucketOptions} TokenBucketOptions */
/** @typedef {import('./lib/admission.js').WaitOptions} WaitOptions */
/** @typedef {import('./lib/admission.js').GcraOptions} GcraOptions */
/** @typedef {import('./lib/admission.js').LeakyBucketMeterOptions} LeakyBucketMeterOptions */
/** @typedef {import('./lib/admission.js').LeakyBucketQueueOptions} LeakyBucketQueueOptions */
/** @typedef {import('./lib/admission.js').WindowOptions} WindowOptions */
/** @typedef {import('./lib/admission.js').SlidingWindowOptions} SlidingWindowOptions */
/** @typedef {import('./lib/markers.js').Color} Color */
/** @typedef {import('./lib/markers.js').SrTcmOptions} SrTcmOptions */
/** @typedef {import('./lib/markers.js').TrTcmOptions} TrTcmOptions */
/** @typedef {import('./lib/concurrency.js').Outcome} Outcome */
/** @typedef {import('./lib/concurrency.js').GradientOptions} GradientOptions */
/** @typedef {import('./lib/concurrency.js').AimdOptions} AimdOptions */
/** @typedef {import('./lib/concurrency.js').SampleOptions} SampleOptions */
/** @typedef {import('./lib/cycle.js').CycleLimiterOptions} CycleLimiterOptions */
/** @typedef {import('./lib/cycle.js').CycleMetrics} CycleMetrics */
/** @typedef {import('./lib/load.js').ManualLoadOptions} ManualLoadOptions */
/** @typedef {import('./lib/load.js').SystemLoadOptions} SystemLoadOptions */
/** @typedef {import('./lib/load.js').LoadOptions} LoadOptions */
/** @typedef {import('./lib/load.js').BbrParameters} BbrParameters */
/** @typedef {import('./lib/load.js').BbrOptions} BbrOptions */
/** @typedef {import('./lib/load.js').BbrStats} BbrStats */
/** @typedef {import('./lib/load.js').SystemThreshold} SystemThreshold */
/** @typedef {import('./lib/load.js').SystemRule} SystemRule */
/** @typedef {import('./lib/load.js').SystemGuardOptions} SystemGuardOptions */
/** @typedef {import('./lib/load.js').SystemStats} SystemStats */
/** @typedef {import('./lib/flow.js').FlowGrade} FlowGrade */
/** @typedef {import('./lib/flow.js').ControlBehavior} ControlBehavior */
/** @typedef {import('./lib/flow.js').FlowRule} FlowRule */
/** @typedef {import('./lib/flow.js').FlowControllerOptions} FlowControllerOptions */
/** @typedef {import('./lib/flow.js').FlowStats} FlowStats */
/** @typedef {import('./lib/composite.js').LimitOptions} LimitOptions */
/** @typedef {import('./lib/keyed.js').KeyedOptions} KeyedOptions */
/** @typedef {import('./lib/keyed.js').WhenFull} WhenFull */
/** @typedef {import('./lib/keyed.js').Key} Key */
/** @typedef {import('./lib/redis.js').StoreOptions} StoreOptions */
/** @typedef {import('./lib/redis.js').TlsOptions} TlsOptions */
/** @typedef {import('./lib/redis.js').WhenUnavailable} WhenUnavailable */
/** @typedef {import('./lib/redis.js').RedisLimiterOptions} RedisLimiterOptions */
/** @typedef {import('./lib/redis.js').RedisCompositeOptions} RedisCompositeOptions */
/** @typedef {import('./lib/redis.js').LeasedOptions} LeasedOptions */
/** @typedef {import('./lib/redis.js').DividedOptions} DividedOptions */
/** @typedef {import('./lib/redis.js').MembershipOptions} MembershipOptions */
/** @typedef {import('./lib/redis.js').RedisRateLimiterOptions} RedisRateLimiterOptions */
/** @typedef {import('./lib/redis.js').ConcurrencyOptions} ConcurrencyOptions */
/** @typedef {import('./lib/redis.js').Acquired} Acquired */
/** @typedef {import('./lib/http/limits.js').TimeUnit} TimeUnit */
/** @typedef {import('./lib/http/fields.js').HeaderStyle} HeaderStyle */
/** @typedef {import('./lib/http/fields.js').FieldOptions} FieldOptions */
/** @typedef {import('./lib/http/limiter.js').HttpLimiterOptions} HttpLimiterOptions */
/** @template Req @typedef {import('./lib/http/engine.js').RateLimitOptions<Req>} RateLimitOptions */
/** @typedef {import('./lib/http/fastify.js').FastifyRateLimitOptions} FastifyRateLimitOptions */
/** @typedef {import('./lib/http/store.js').RatekeeperStoreOptions} RatekeeperStoreOptions */
/** @typedef {import('./lib/http/store.js').ClientRateLimitInfo} ClientRateLimitInfo */

module.exports = {
  RateLimiter,
  ManualClock,
  codes,
  version,
  Decision,
  NEVER,
  AdmissionLimiter,
  TokenBucket,
  Reservation,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  FixedWindow,
  SlidingWindow,
  SlidingLog,
  SlidingWindowCounter,
  SrTcm,
  TrTcm,
  ConcurrencyLimiter,
  Permit,
  CycleLimiter,
  ManualLoad,
  SystemLoad,
  Bbr,
  BbrPermit,
  SystemGuard,
  SystemPermit,
  FlowController,
  FlowPermit,
  CompositeLimiter,
  KeyedLimiter,
  RedisStore,
  RedisLimiter,
  RedisCompositeLimiter,
  RedisLeasedLimiter,
  RedisDividedLimiter,
  Membership,
  RedisRateLimiter,
  RedisConcurrencyLimiter,
  ConcurrencyLease,
  parseLimits,
  RateItem,
  responseFields,
  TrustedProxies,
  HttpLimiter,
  rateLimit,
  fastifyRateLimit,
  RatekeeperStore,
};
