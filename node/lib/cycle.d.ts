export type CycleLimiterOptions = {
    /**
     * Permits each cycle brings: an
     * integer from 1 to 2^31 − 1 (Resilience4j's `int`).
     */
    limitForPeriod: number | bigint;
    /**
     * A cycle's length in
     * milliseconds (whole microseconds are kept): at least 1 µs.
     */
    limitRefreshPeriodMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    limitRefreshPeriodMicros?: number | bigint | undefined;
    /**
     * The longest wait a request may be
     * given, in milliseconds: 0 or more.
     */
    timeoutDurationMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    timeoutDurationMicros?: number | bigint | undefined;
    /**
     * Run on this clock,
     * for deterministic tests: its waits advance it instead of waiting.
     */
    clock?: native.ManualClock | undefined;
};
/**
 * What a request for one permit would get
 *   now (Resilience4j's `AtomicRateLimiterMetrics`).
 */
export type CycleMetrics = {
    /**
     * Permits available in the current
     * cycle; negative when permits of later cycles are reserved.
     */
    availablePermissions: number;
    /**
     * How long a request for one permit would
     * wait, whatever the timeout.
     */
    timeToWaitMs: number;
    /**
     * The current cycle, counted from the limiter's
     * creation.
     */
    cycle: number;
    /**
     * Calls of `acquirePermission`
     * waiting now.
     */
    numberOfWaitingThreads: number;
};
/**
 * @typedef {object} CycleLimiterOptions
 * @property {number | bigint} limitForPeriod Permits each cycle brings: an
 *   integer from 1 to 2^31 − 1 (Resilience4j's `int`).
 * @property {number} [limitRefreshPeriodMs] A cycle's length in
 *   milliseconds (whole microseconds are kept): at least 1 µs.
 * @property {number | bigint} [limitRefreshPeriodMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number} [timeoutDurationMs] The longest wait a request may be
 *   given, in milliseconds: 0 or more.
 * @property {number | bigint} [timeoutDurationMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests: its waits advance it instead of waiting.
 */
/**
 * @typedef {object} CycleMetrics What a request for one permit would get
 *   now (Resilience4j's `AtomicRateLimiterMetrics`).
 * @property {number} availablePermissions Permits available in the current
 *   cycle; negative when permits of later cycles are reserved.
 * @property {number} timeToWaitMs How long a request for one permit would
 *   wait, whatever the timeout.
 * @property {number} cycle The current cycle, counted from the limiter's
 *   creation.
 * @property {number} numberOfWaitingThreads Calls of `acquirePermission`
 *   waiting now.
 */
/**
 * Resilience4j's rate limiter.
 *
 * @example
 * const limiter = new CycleLimiter({ limitForPeriod: 10, limitRefreshPeriodMs: 1000, timeoutDurationMs: 500 });
 * if (await limiter.acquirePermission()) callTheService(); // waits up to 500 ms
 */
export class CycleLimiter {
    /**
     * @param {CycleLimiterOptions} options
     */
    constructor(options: CycleLimiterOptions);
    /**
     * Resilience4j's `acquirePermission(permits)`: takes the permits, waiting
     * until their cycle when they are reserved ahead, and resolves to `true`;
     * or, when the wait would exceed the timeout, takes nothing, waits the
     * timeout as Resilience4j does and resolves to `false`. Never blocks the
     * event loop; `signal` aborts the wait (reserved permits stay taken).
     * @param {number | bigint} [permits=1] An integer, 0 or more.
     * @param {import('./sleep.js').SignalOptions} [options]
     * @returns {Promise<boolean>}
     */
    acquirePermission(permits?: number | bigint, options?: import("./sleep.js").SignalOptions): Promise<boolean>;
    /**
     * Takes the permits only if the current cycle has them: no wait, no
     * reservation ahead, whatever the timeout. Synchronous.
     * @param {number | bigint} [permits=1] An integer, 0 or more.
     * @returns {boolean}
     */
    tryAcquirePermission(permits?: number | bigint): boolean;
    /**
     * Resilience4j's `reservePermission(permits)`: the milliseconds to wait
     * before acting on the permits now taken (0: at once), or `undefined`
     * when that wait would exceed the timeout (nothing taken). Never waits.
     * @param {number | bigint} [permits=1] An integer, 0 or more.
     * @returns {number | undefined}
     */
    reservePermission(permits?: number | bigint): number | undefined;
    /**
     * `acquirePermission` without the wait: the decision (admitted with the
     * `waitMs` to wait before acting, or refused, taking nothing, with the
     * `retryAfterMs` from which the same request would be reserved).
     * @param {number | bigint} [permits=1] An integer, 0 or more.
     * @returns {import('./decision.js').Decision}
     */
    check(permits?: number | bigint): import("./decision.js").Decision;
    /**
     * `tryAcquirePermission` answered with its decision.
     * @param {number | bigint} [permits=1] An integer, 0 or more.
     * @returns {import('./decision.js').Decision}
     */
    checkNow(permits?: number | bigint): import("./decision.js").Decision;
    /**
     * Sets the permits per cycle from the next calculation on
     * (`changeLimitForPeriod`); the current cycle keeps its count.
     * @param {number | bigint} limitForPeriod An integer from 1 to 2^31 − 1.
     */
    changeLimitForPeriod(limitForPeriod: number | bigint): void;
    /**
     * Sets the timeout for the next requests (`changeTimeoutDuration`);
     * reservations already made stand.
     * @param {number} ms 0 or more.
     */
    changeTimeoutDurationMs(ms: number): void;
    /**
     * `changeTimeoutDurationMs` in exact microseconds.
     * @param {number | bigint} micros 0 or more.
     */
    changeTimeoutDurationMicros(micros: number | bigint): void;
    /**
     * Takes every permit left in the current cycle at once
     * (`drainPermissions`); returns how many.
     * @returns {number}
     */
    drainPermissions(): number;
    /**
     * What a request for one permit would get now, and how many calls wait.
     * @returns {CycleMetrics}
     */
    metrics(): CycleMetrics;
    /**
     * Permits each cycle brings.
     * @type {number}
     */
    get limitForPeriod(): number;
    /**
     * A cycle's length in milliseconds.
     * @type {number}
     */
    get limitRefreshPeriodMs(): number;
    /**
     * The longest wait a request may be given, in milliseconds.
     * @type {number}
     */
    get timeoutDurationMs(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
