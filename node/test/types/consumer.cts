// Type-checked by `npm test` (tsc -p test/tsconfig.json), never run: the
// declarations describe the API as a TypeScript user of `require` sees it.
import { codes, ManualClock, RateLimiter, version } from 'ratekeeper';
import type { RatekeeperError, RateLimiterOptions, TimeoutOptions } from 'ratekeeper';

const release: string = version();
// @ts-expect-error: version() takes no argument
version('x');

const options: RateLimiterOptions = { warmupMs: 1_000, coldFactor: 3, clock: new ManualClock() };
const limiter: RateLimiter = RateLimiter.create(5, options);
RateLimiter.create(5, { warmupMicros: 1_000_000n, maxBurstSeconds: 2 });

const now: boolean = limiter.tryAcquire();
const some: boolean = limiter.tryAcquire(3);
const timeout: TimeoutOptions = { timeoutMicros: 2n ** 63n - 1n };
const later: Promise<boolean> = limiter.tryAcquire(1, { timeoutMs: 100 });
const later2: Promise<boolean> = limiter.tryAcquire(undefined, timeout);
const waited: Promise<number> = limiter.acquire();
const ms: number = limiter.timeUntilAvailable(2);
const can: boolean = limiter.canAcquire(1, { timeoutMs: 5 });
limiter.rate = limiter.rate * 2;

const clock = new ManualClock();
clock.advance(1.5);
clock.advanceMicros(10n);
const micros: bigint = clock.nowMicros;
const millis: number = clock.now;

const code: 'ERR_RATEKEEPER_INVALID_ARGUMENT' = codes.invalidArgument;
function describe(error: RatekeeperError): string {
  return `${error.code} ${error.argument ?? ''} ${String(error.value)}`;
}

// Every algorithm, its Decision and its extras.
import {
  AdmissionLimiter,
  CompositeLimiter,
  ConcurrencyLimiter,
  Decision,
  FixedWindow,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  NEVER,
  Permit,
  Reservation,
  SlidingLog,
  SlidingWindow,
  SlidingWindowCounter,
  SrTcm,
  TokenBucket,
  TrTcm,
} from 'ratekeeper';
import type { Color, GcraOptions, LimitOptions, Outcome, TokenBucketOptions, WindowOptions } from 'ratekeeper';

const bucketOptions: TokenBucketOptions = { rate: 10, burst: 20n, clock };
const bucket = new TokenBucket(bucketOptions);
const decision: Decision = bucket.check();
const allowed: boolean = decision.allowed;
const retry: number = decision.retryAfterMs + decision.resetAfterMs + decision.waitMs + decision.windowMs;
const exact: bigint = decision.retryAfterMicros + decision.resetAfterMicros + decision.waitMicros + decision.windowMicros;
const never: boolean = decision.isNever || decision.retryAfterMicros === NEVER;
const fields: { 'RateLimit-Policy': string; RateLimit: string; 'Retry-After'?: string } = decision.headers('api');
const retryAfter: string | undefined = decision.retryAfterHeader();
const several: string = Decision.rateLimitHeader([['a', decision], ['b', bucket.peek(2n)]]) + Decision.rateLimitPolicyHeader({ a: decision });
const cheap: boolean = bucket.tryAcquire(1);
const reservation: Reservation = bucket.reserve(2);
const delay: number = reservation.delayMs();
reservation.cancel();
const bucketWait: Promise<Decision> = bucket.wait(1, { timeoutMs: 100 });
bucket.rate = 5;
bucket.burst = 3n;
const tokens: number = bucket.tokens();
const gcraOptions: GcraOptions = { maxBurst: 4, countPerPeriod: 1, periodMicros: 1_000_000n };
const gcraLimit: number = new Gcra(gcraOptions).limit;
const level: number = new LeakyBucketMeter({ capacity: 3, countPerPeriod: 1, periodMs: 100 }).level();
const slot: Promise<Decision> = new LeakyBucketQueue({ capacity: 3, intervalMs: 100 }).acquire();
const window: WindowOptions = { limit: 100, windowMs: 60_000 };
const limiters: AdmissionLimiter[] = [
  new FixedWindow(window),
  new SlidingLog(window),
  new SlidingWindowCounter(window),
  new SlidingWindow({ ...window, subWindows: 10 }),
];
const maxLog: number = SlidingLog.MAX_LIMIT;
const color: Color = new SrTcm({ cir: 1000, cbs: 1500, ebs: 1500 }).mark(100);
const aware: Color = new TrTcm({ pir: 2, pbs: 2, cir: 1, cbs: 1 }).markAware(1, 'yellow');
const concurrency = ConcurrencyLimiter.gradient({ maxLimit: 100 });
const permit: Permit | undefined = concurrency.tryAcquire();
const outcome: Outcome = 'dropped';
const newLimit: number | undefined = permit?.release(outcome);
const { decision: refusal, permit: maybe } = ConcurrencyLimiter.aimd().check();
const sampled: number = ConcurrencyLimiter.fixed(5).sample({ rttMs: 3, inFlight: 2 });
const limits: LimitOptions[] = [{ algorithm: 'tokenBucket', rate: 10, burst: 10 }, { algorithm: 'fixedWindow', ...window }];
const each: { decision: Decision; parts: Decision[] } = new CompositeLimiter(limits).checkEach();

// @ts-expect-error: a decision's fields are read-only
decision.allowed = true;
// @ts-expect-error: decisions come from limiters
new Decision();
// @ts-expect-error: a color is one of three names
new SrTcm({ cir: 1, cbs: 1, ebs: 1 }).markAware(1, 'blue');
// @ts-expect-error: options are required
new TokenBucket();
// @ts-expect-error: the composite's parts name their algorithm
new CompositeLimiter([{ rate: 1, burst: 1 }]);
// @ts-expect-error: permits come from tryAcquire
new Permit();

export {
  allowed, retry, exact, never, fields, retryAfter, several, cheap, delay, bucketWait, tokens, gcraLimit, level, slot, limiters,
  maxLog, color, aware, newLimit, refusal, maybe, sampled, each,
};

// @ts-expect-error: a timed tryAcquire is a Promise, not a boolean
const wrong: boolean = limiter.tryAcquire(1, { timeoutMs: 100 });
// @ts-expect-error: permits are numbers
limiter.tryAcquire('1');
// @ts-expect-error: the constructor is private: use RateLimiter.create
new RateLimiter();
// @ts-expect-error: not an option
RateLimiter.create(1, { warmUpMs: 5 });
// @ts-expect-error: clocks are ManualClocks
RateLimiter.create(1, { clock: {} });

export { release, now, some, later, later2, waited, ms, can, micros, millis, code, describe, wrong };
