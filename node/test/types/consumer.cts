// Type-checked by `npm test` (tsc -p test/tsconfig.json), never run: the
// declarations describe the API as a TypeScript user of `require` sees it.
import { codes, ManualClock, RateLimiter } from 'ratekeeper';
import type { RatekeeperError, RateLimiterOptions, TimeoutOptions } from 'ratekeeper';

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

export { now, some, later, later2, waited, ms, can, micros, millis, code, describe, wrong };
