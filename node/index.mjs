// ratekeeper's ES module entry point: the same objects as the CommonJS one
// (index.js), so that a program mixing import and require shares them.
import ratekeeper from './index.js';

export {
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
} from './index.js';
export default ratekeeper;

/** @typedef {import('./index.js').RateLimiterOptions} RateLimiterOptions */
/** @typedef {import('./index.js').TimeoutOptions} TimeoutOptions */
/** @typedef {import('./index.js').TryAcquireOptions} TryAcquireOptions */
/** @typedef {import('./index.js').SignalOptions} SignalOptions */
/** @typedef {import('./index.js').AbortSignalLike} AbortSignalLike */
/** @typedef {import('./index.js').RatekeeperError} RatekeeperError */
/** @typedef {import('./index.js').TokenBucketOptions} TokenBucketOptions */
/** @typedef {import('./index.js').WaitOptions} WaitOptions */
/** @typedef {import('./index.js').GcraOptions} GcraOptions */
/** @typedef {import('./index.js').LeakyBucketMeterOptions} LeakyBucketMeterOptions */
/** @typedef {import('./index.js').LeakyBucketQueueOptions} LeakyBucketQueueOptions */
/** @typedef {import('./index.js').WindowOptions} WindowOptions */
/** @typedef {import('./index.js').SlidingWindowOptions} SlidingWindowOptions */
/** @typedef {import('./index.js').Color} Color */
/** @typedef {import('./index.js').SrTcmOptions} SrTcmOptions */
/** @typedef {import('./index.js').TrTcmOptions} TrTcmOptions */
/** @typedef {import('./index.js').Outcome} Outcome */
/** @typedef {import('./index.js').GradientOptions} GradientOptions */
/** @typedef {import('./index.js').AimdOptions} AimdOptions */
/** @typedef {import('./index.js').SampleOptions} SampleOptions */
/** @typedef {import('./index.js').CycleLimiterOptions} CycleLimiterOptions */
/** @typedef {import('./index.js').CycleMetrics} CycleMetrics */
/** @typedef {import('./index.js').ManualLoadOptions} ManualLoadOptions */
/** @typedef {import('./index.js').SystemLoadOptions} SystemLoadOptions */
/** @typedef {import('./index.js').LoadOptions} LoadOptions */
/** @typedef {import('./index.js').BbrParameters} BbrParameters */
/** @typedef {import('./index.js').BbrOptions} BbrOptions */
/** @typedef {import('./index.js').BbrStats} BbrStats */
/** @typedef {import('./index.js').SystemThreshold} SystemThreshold */
/** @typedef {import('./index.js').SystemRule} SystemRule */
/** @typedef {import('./index.js').SystemGuardOptions} SystemGuardOptions */
/** @typedef {import('./index.js').SystemStats} SystemStats */
/** @typedef {import('./index.js').FlowGrade} FlowGrade */
/** @typedef {import('./index.js').ControlBehavior} ControlBehavior */
/** @typedef {import('./index.js').FlowRule} FlowRule */
/** @typedef {import('./index.js').FlowControllerOptions} FlowControllerOptions */
/** @typedef {import('./index.js').FlowStats} FlowStats */
/** @typedef {import('./index.js').LimitOptions} LimitOptions */
/** @typedef {import('./index.js').KeyedOptions} KeyedOptions */
/** @typedef {import('./index.js').WhenFull} WhenFull */
/** @typedef {import('./index.js').Key} Key */
/** @typedef {import('./index.js').StoreOptions} StoreOptions */
/** @typedef {import('./index.js').TlsOptions} TlsOptions */
/** @typedef {import('./index.js').WhenUnavailable} WhenUnavailable */
/** @typedef {import('./index.js').RedisLimiterOptions} RedisLimiterOptions */
/** @typedef {import('./index.js').RedisCompositeOptions} RedisCompositeOptions */
/** @typedef {import('./index.js').LeasedOptions} LeasedOptions */
/** @typedef {import('./index.js').DividedOptions} DividedOptions */
/** @typedef {import('./index.js').MembershipOptions} MembershipOptions */
/** @typedef {import('./index.js').RedisRateLimiterOptions} RedisRateLimiterOptions */
/** @typedef {import('./index.js').ConcurrencyOptions} ConcurrencyOptions */
/** @typedef {import('./index.js').Acquired} Acquired */
/** @typedef {import('./index.js').TimeUnit} TimeUnit */
/** @typedef {import('./index.js').HeaderStyle} HeaderStyle */
/** @typedef {import('./index.js').FieldOptions} FieldOptions */
/** @typedef {import('./index.js').HttpLimiterOptions} HttpLimiterOptions */
/** @template Req @typedef {import('./index.js').RateLimitOptions<Req>} RateLimitOptions */
/** @typedef {import('./index.js').FastifyRateLimitOptions} FastifyRateLimitOptions */
/** @typedef {import('./index.js').RatekeeperStoreOptions} RatekeeperStoreOptions */
/** @typedef {import('./index.js').ClientRateLimitInfo} ClientRateLimitInfo */
