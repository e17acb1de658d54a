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
