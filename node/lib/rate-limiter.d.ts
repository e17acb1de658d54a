export type RateLimiterOptions = {
    /**
     * Makes a warming-up limiter (Guava's
     * `SmoothWarmingUp`): it starts cold, issuing permits `coldFactor` times
     * slower, and reaches `permitsPerSecond` after this many milliseconds of
     * saturated use. Rounded to whole microseconds, from 0 to 2^63 − 1 µs:
     * `NaN`, `Infinity` or a negative value is a `RangeError`.
     */
    warmupMs?: number | undefined;
    /**
     * The same in exact whole
     * microseconds (an integer number or a bigint). Give one or the other.
     */
    warmupMicros?: number | bigint | undefined;
    /**
     * For a warming-up limiter: how many times
     * slower than the stable rate it runs when cold. At least 1; default 3
     * (Guava's).
     */
    coldFactor?: number | undefined;
    /**
     * For a bursty limiter (no warm-up):
     * how many seconds of permits it saves up while idle. Finite and not
     * negative; default 1 (Guava's).
     */
    maxBurstSeconds?: number | undefined;
    /**
     * Run on this clock
     * instead of the monotonic one, for deterministic tests: the limiter reads
     * it, and its waits advance it instead of waiting.
     */
    clock?: native.ManualClock | undefined;
};
export type TimeoutOptions = {
    /**
     * How long the caller is willing to wait, in
     * milliseconds. Negative means not at all (Guava's rule); `Infinity`
     * means without limit; `NaN` is a `RangeError`. Default 0.
     */
    timeoutMs?: number | undefined;
    /**
     * The same in exact whole
     * microseconds (an integer number or a bigint). Give one or the other.
     */
    timeoutMicros?: number | bigint | undefined;
};
/**
 * The timeout decides whether the permits are taken (nothing is taken
 * when they cannot be had within it); the signal aborts the wait for
 * permits taken.
 */
export type TryAcquireOptions = TimeoutOptions & import("./sleep.js").SignalOptions;
/**
 * @typedef {object} RateLimiterOptions
 * @property {number} [warmupMs] Makes a warming-up limiter (Guava's
 *   `SmoothWarmingUp`): it starts cold, issuing permits `coldFactor` times
 *   slower, and reaches `permitsPerSecond` after this many milliseconds of
 *   saturated use. Rounded to whole microseconds, from 0 to 2^63 − 1 µs:
 *   `NaN`, `Infinity` or a negative value is a `RangeError`.
 * @property {number | bigint} [warmupMicros] The same in exact whole
 *   microseconds (an integer number or a bigint). Give one or the other.
 * @property {number} [coldFactor] For a warming-up limiter: how many times
 *   slower than the stable rate it runs when cold. At least 1; default 3
 *   (Guava's).
 * @property {number} [maxBurstSeconds] For a bursty limiter (no warm-up):
 *   how many seconds of permits it saves up while idle. Finite and not
 *   negative; default 1 (Guava's).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock
 *   instead of the monotonic one, for deterministic tests: the limiter reads
 *   it, and its waits advance it instead of waiting.
 */
/**
 * @typedef {object} TimeoutOptions
 * @property {number} [timeoutMs] How long the caller is willing to wait, in
 *   milliseconds. Negative means not at all (Guava's rule); `Infinity`
 *   means without limit; `NaN` is a `RangeError`. Default 0.
 * @property {number | bigint} [timeoutMicros] The same in exact whole
 *   microseconds (an integer number or a bigint). Give one or the other.
 */
/**
 * @typedef {TimeoutOptions & import('./sleep.js').SignalOptions} TryAcquireOptions
 *   The timeout decides whether the permits are taken (nothing is taken
 *   when they cannot be had within it); the signal aborts the wait for
 *   permits taken.
 */
/**
 * A rate limiter with the semantics of Guava's `RateLimiter`: permits are
 * issued at a fixed rate, and a request of any size is granted as soon as
 * the limiter is free — the *next* request pays for it ("pre-consuming").
 *
 * Anything that waits returns a Promise and waits on a timer: the event
 * loop is never blocked, and `{ signal }` (an `AbortSignal`) aborts the
 * wait. Bad arguments throw (or reject with) a
 * `RangeError` or `TypeError` with a stable `code` (see `codes`), and change
 * nothing.
 *
 * @example
 * const limiter = RateLimiter.create(5); // 5 permits per second
 * await limiter.acquire(); // resolves when the permit is due
 * if (limiter.tryAcquire()) { ... } // synchronous: take it now or not at all
 * if (await limiter.tryAcquire(1, { timeoutMs: 100 })) { ... }
 * await limiter.acquire(1, { signal: AbortSignal.timeout(5_000) }); // or a request's signal
 */
export class RateLimiter {
    /**
     * Creates a limiter issuing `permitsPerSecond` permits per second: Guava's
     * `RateLimiter.create(permitsPerSecond)`, or with `warmupMs` (or
     * `warmupMicros`) `RateLimiter.create(permitsPerSecond, warmupPeriod)`.
     * @param {number} permitsPerSecond Positive; `Infinity` is allowed (no
     *   limit), as in Guava.
     * @param {RateLimiterOptions} [options]
     * @returns {RateLimiter}
     */
    static create(permitsPerSecond: number, options?: RateLimiterOptions): RateLimiter;
    /**
     * Use `RateLimiter.create`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').SmoothMethods} methods
     */
    private constructor();
    /**
     * Takes `permits`, waiting until they are granted, and resolves to the
     * seconds waited (Guava's `acquire` value, to the microsecond).
     *
     * `signal` aborts the wait (an `AbortError`): the permits are taken when
     * the call starts, as Guava takes them, and an aborted wait keeps them
     * (later requests wait as if it had completed). To wait at most so long
     * and take nothing otherwise, use `tryAcquire(permits, { timeoutMs })`.
     * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
     * @param {import('./sleep.js').SignalOptions} [options]
     * @returns {Promise<number>}
     */
    acquire(permits?: number | bigint, options?: import("./sleep.js").SignalOptions): Promise<number>;
    /**
     * Without options: takes `permits` if they are available now and returns
     * `true`, or returns `false` at once, taking nothing. Synchronous.
     *
     * With `{ timeoutMs }` (or `{ timeoutMicros }`): a Promise of the same,
     * where the permits may be waited for up to the timeout (Guava's
     * `tryAcquire(permits, timeout)`): if they cannot be had by then it
     * resolves to `false` at once, taking nothing. `{ signal }` aborts the
     * wait for permits taken, as in `acquire` (they stay taken).
     * @overload
     * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
     * @returns {boolean}
     */
    tryAcquire(permits?: number | bigint | undefined): boolean;
    /**
     * @overload
     * @param {number | bigint | undefined} permits An integer from 1 to 2^31 − 1.
     * @param {TryAcquireOptions} options
     * @returns {Promise<boolean>}
     */
    tryAcquire(permits: number | bigint | undefined, options: TryAcquireOptions): Promise<boolean>;
    /**
     * Whether `tryAcquire(permits, options)` would succeed now; takes nothing.
     * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
     * @param {TimeoutOptions} [options] The timeout to allow (default 0).
     * @returns {boolean}
     */
    canAcquire(permits?: number | bigint, options?: TimeoutOptions): boolean;
    /**
     * Milliseconds until a request for `permits` would be granted (0 when it
     * would be granted now); takes nothing. Guava grants a request of any
     * size as soon as the limiter is free, so `permits` only gets checked.
     * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
     * @returns {number}
     */
    timeUntilAvailable(permits?: number | bigint): number;
    set rate(permitsPerSecond: number);
    /**
     * The stable rate in permits per second (Guava's `getRate`/`setRate`).
     * Setting it keeps the waits already reserved; the next request still
     * pays for the previous one at the old rate.
     * @type {number}
     */
    get rate(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
