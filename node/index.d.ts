/**
 * What ratekeeper's errors carry besides a message: `code` (one of
 * `codes`), and for a bad argument its JavaScript name and the value given.
 */
export type RatekeeperError = Error & {
    code: string;
    argument?: string;
    value?: unknown;
};
export type RateLimiterOptions = import("./lib/rate-limiter.js").RateLimiterOptions;
export type TimeoutOptions = import("./lib/rate-limiter.js").TimeoutOptions;
export type TryAcquireOptions = import("./lib/rate-limiter.js").TryAcquireOptions;
export type SignalOptions = import("./lib/sleep.js").SignalOptions;
export type AbortSignalLike = import("./lib/sleep.js").AbortSignalLike;
export type TokenBucketOptions = import("./lib/admission.js").TokenBucketOptions;
export type WaitOptions = import("./lib/admission.js").WaitOptions;
export type GcraOptions = import("./lib/admission.js").GcraOptions;
export type LeakyBucketMeterOptions = import("./lib/admission.js").LeakyBucketMeterOptions;
export type LeakyBucketQueueOptions = import("./lib/admission.js").LeakyBucketQueueOptions;
export type WindowOptions = import("./lib/admission.js").WindowOptions;
export type SlidingWindowOptions = import("./lib/admission.js").SlidingWindowOptions;
export type Color = import("./lib/markers.js").Color;
export type SrTcmOptions = import("./lib/markers.js").SrTcmOptions;
export type TrTcmOptions = import("./lib/markers.js").TrTcmOptions;
export type Outcome = import("./lib/concurrency.js").Outcome;
export type GradientOptions = import("./lib/concurrency.js").GradientOptions;
export type AimdOptions = import("./lib/concurrency.js").AimdOptions;
export type SampleOptions = import("./lib/concurrency.js").SampleOptions;
export type CycleLimiterOptions = import("./lib/cycle.js").CycleLimiterOptions;
export type CycleMetrics = import("./lib/cycle.js").CycleMetrics;
export type ManualLoadOptions = import("./lib/load.js").ManualLoadOptions;
export type SystemLoadOptions = import("./lib/load.js").SystemLoadOptions;
export type LoadOptions = import("./lib/load.js").LoadOptions;
export type BbrParameters = import("./lib/load.js").BbrParameters;
export type BbrOptions = import("./lib/load.js").BbrOptions;
export type BbrStats = import("./lib/load.js").BbrStats;
export type SystemThreshold = import("./lib/load.js").SystemThreshold;
export type SystemRule = import("./lib/load.js").SystemRule;
export type SystemGuardOptions = import("./lib/load.js").SystemGuardOptions;
export type SystemStats = import("./lib/load.js").SystemStats;
export type FlowGrade = import("./lib/flow.js").FlowGrade;
export type ControlBehavior = import("./lib/flow.js").ControlBehavior;
export type FlowRule = import("./lib/flow.js").FlowRule;
export type FlowControllerOptions = import("./lib/flow.js").FlowControllerOptions;
export type FlowStats = import("./lib/flow.js").FlowStats;
export type LimitOptions = import("./lib/composite.js").LimitOptions;
export type KeyedOptions = import("./lib/keyed.js").KeyedOptions;
export type WhenFull = import("./lib/keyed.js").WhenFull;
export type Key = import("./lib/keyed.js").Key;
export type StoreOptions = import("./lib/redis.js").StoreOptions;
export type TlsOptions = import("./lib/redis.js").TlsOptions;
export type WhenUnavailable = import("./lib/redis.js").WhenUnavailable;
export type RedisLimiterOptions = import("./lib/redis.js").RedisLimiterOptions;
export type RedisCompositeOptions = import("./lib/redis.js").RedisCompositeOptions;
export type LeasedOptions = import("./lib/redis.js").LeasedOptions;
export type DividedOptions = import("./lib/redis.js").DividedOptions;
export type MembershipOptions = import("./lib/redis.js").MembershipOptions;
export type RedisRateLimiterOptions = import("./lib/redis.js").RedisRateLimiterOptions;
export type ConcurrencyOptions = import("./lib/redis.js").ConcurrencyOptions;
export type Acquired = import("./lib/redis.js").Acquired;
export type TimeUnit = import("./lib/http/limits.js").TimeUnit;
export type HeaderStyle = import("./lib/http/fields.js").HeaderStyle;
export type FieldOptions = import("./lib/http/fields.js").FieldOptions;
export type HttpLimiterOptions = import("./lib/http/limiter.js").HttpLimiterOptions;
export type RateLimitOptions<Req> = import("./lib/http/engine.js").RateLimitOptions<Req>;
export type FastifyRateLimitOptions = import("./lib/http/fastify.js").FastifyRateLimitOptions;
export type RatekeeperStoreOptions = import("./lib/http/store.js").RatekeeperStoreOptions;
export type ClientRateLimitInfo = import("./lib/http/store.js").ClientRateLimitInfo;
import { RateLimiter } from "./lib/rate-limiter.js";
import { ManualClock } from "./lib/binding.js";
/**
 * The `code` of each kind of error ratekeeper throws: `RangeError`s have
 * `invalidArgument`, `TypeError`s `invalidArgType` or `invalidOption`, and
 * an `Error` with `internal` is a bug in ratekeeper. A keyed limiter's
 * `tryCheck` throws `atCapacity`; the Redis limiters reject with
 * `redisUnavailable`, `redisTimeout`, `redisError`, `redisProtocol`,
 * `redisUnsupported`, `redisAuth`, `redisTls` or `closed`.
 */
export const codes: Readonly<import("./lib/binding.js").ErrorCodes>;
/**
 * The version of ratekeeper's native module, e.g. `'0.1.0'`: the version it
 * was built from, which is also the package's (`ratekeeper/package.json`)
 * and its platform package's.
 * @returns {string}
 */
export function version(): string;
import { Decision } from "./lib/decision.js";
import { NEVER } from "./lib/decision.js";
import { AdmissionLimiter } from "./lib/admission.js";
import { TokenBucket } from "./lib/admission.js";
import { Reservation } from "./lib/admission.js";
import { Gcra } from "./lib/admission.js";
import { LeakyBucketMeter } from "./lib/admission.js";
import { LeakyBucketQueue } from "./lib/admission.js";
import { FixedWindow } from "./lib/admission.js";
import { SlidingWindow } from "./lib/admission.js";
import { SlidingLog } from "./lib/admission.js";
import { SlidingWindowCounter } from "./lib/admission.js";
import { SrTcm } from "./lib/markers.js";
import { TrTcm } from "./lib/markers.js";
import { ConcurrencyLimiter } from "./lib/concurrency.js";
import { Permit } from "./lib/concurrency.js";
import { CycleLimiter } from "./lib/cycle.js";
import { ManualLoad } from "./lib/load.js";
import { SystemLoad } from "./lib/load.js";
import { Bbr } from "./lib/load.js";
import { BbrPermit } from "./lib/load.js";
import { SystemGuard } from "./lib/load.js";
import { SystemPermit } from "./lib/load.js";
import { FlowController } from "./lib/flow.js";
import { FlowPermit } from "./lib/flow.js";
import { CompositeLimiter } from "./lib/composite.js";
import { KeyedLimiter } from "./lib/keyed.js";
import { RedisStore } from "./lib/redis.js";
import { RedisLimiter } from "./lib/redis.js";
import { RedisCompositeLimiter } from "./lib/redis.js";
import { RedisLeasedLimiter } from "./lib/redis.js";
import { RedisDividedLimiter } from "./lib/redis.js";
import { Membership } from "./lib/redis.js";
import { RedisRateLimiter } from "./lib/redis.js";
import { RedisConcurrencyLimiter } from "./lib/redis.js";
import { ConcurrencyLease } from "./lib/redis.js";
import { parseLimits } from "./lib/http/limits.js";
import { RateItem } from "./lib/http/limits.js";
import { responseFields } from "./lib/http/fields.js";
import { TrustedProxies } from "./lib/http/client.js";
import { HttpLimiter } from "./lib/http/limiter.js";
import { rateLimit } from "./lib/http/express.js";
import { fastifyRateLimit } from "./lib/http/fastify.js";
import { RatekeeperStore } from "./lib/http/store.js";
export { RateLimiter, ManualClock, Decision, NEVER, AdmissionLimiter, TokenBucket, Reservation, Gcra, LeakyBucketMeter, LeakyBucketQueue, FixedWindow, SlidingWindow, SlidingLog, SlidingWindowCounter, SrTcm, TrTcm, ConcurrencyLimiter, Permit, CycleLimiter, ManualLoad, SystemLoad, Bbr, BbrPermit, SystemGuard, SystemPermit, FlowController, FlowPermit, CompositeLimiter, KeyedLimiter, RedisStore, RedisLimiter, RedisCompositeLimiter, RedisLeasedLimiter, RedisDividedLimiter, Membership, RedisRateLimiter, RedisConcurrencyLimiter, ConcurrencyLease, parseLimits, RateItem, responseFields, TrustedProxies, HttpLimiter, rateLimit, fastifyRateLimit, RatekeeperStore };
