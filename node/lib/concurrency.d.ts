/**
 * How a request ended:
 *   `success` (its round-trip time is a sample), `dropped` (it timed out or
 *   was rejected downstream: a congestion signal), `ignored` (it says
 *   nothing about the service: a client error, a cancellation; no sample).
 */
export type Outcome = "success" | "dropped" | "ignored";
/**
 * The gradient rule's parameters
 *   (Netflix's `GradientLimit`); each absent one takes Netflix's default.
 */
export type GradientOptions = {
    /**
     * The limit to start from (50).
     */
    initialLimit?: number | bigint | undefined;
    /**
     * The smallest limit a decrease may reach (1).
     */
    minLimit?: number | bigint | undefined;
    /**
     * The largest limit (1000).
     */
    maxLimit?: number | bigint | undefined;
    /**
     * How much of a decrease to apply at once, in (0, 1] (0.2).
     */
    smoothing?: number | undefined;
    /**
     * How much slower than the no-load RTT
     * still counts as no queueing, at least 1 (2).
     */
    rttTolerance?: number | undefined;
    /**
     * The headroom added to the limit (4).
     */
    queueSize?: number | bigint | undefined;
    /**
     * The factor applied on a drop, in [0.5, 1] (0.9).
     */
    backoffRatio?: number | undefined;
    /**
     * Samples between probes for a
     * new no-load RTT; 0 disables probing (1000).
     */
    probeInterval?: number | bigint | undefined;
    /**
     * Run on this clock,
     * for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
/**
 * AIMD's parameters (Netflix's `AIMDLimit`);
 *   each absent one takes Netflix's default.
 */
export type AimdOptions = {
    /**
     * The limit to start from (20).
     */
    initialLimit?: number | bigint | undefined;
    /**
     * The smallest limit (20).
     */
    minLimit?: number | bigint | undefined;
    /**
     * The largest limit (200).
     */
    maxLimit?: number | bigint | undefined;
    /**
     * The factor applied on a drop or a
     * timeout, in [0.5, 1) (0.9).
     */
    backoffRatio?: number | undefined;
    /**
     * An RTT above this counts as a drop (5000).
     */
    rttTimeoutMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    rttTimeoutMicros?: number | bigint | undefined;
    /**
     * Run on this clock,
     * for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
export type SampleOptions = {
    /**
     * The request's round-trip time in milliseconds.
     */
    rttMs?: number | undefined;
    /**
     * The same in exact microseconds.
     * Give one or the other; not negative.
     */
    rttMicros?: number | bigint | undefined;
    /**
     * Requests in flight when it started.
     */
    inFlight: number | bigint;
    /**
     * Whether it was dropped (default false).
     */
    dropped?: boolean | undefined;
};
/**
 * A concurrency limiter. Create one with `ConcurrencyLimiter.fixed(limit)`,
 * `ConcurrencyLimiter.gradient(options)` or `ConcurrencyLimiter.aimd(options)`.
 *
 * @example
 * const limiter = ConcurrencyLimiter.gradient({ maxLimit: 200 });
 * const permit = limiter.tryAcquire();
 * if (!permit) return reply(503);
 * try {
 *   await handle(request);
 *   permit.success();      // its round-trip time teaches the limit
 * } catch (error) {
 *   permit.dropped();      // or permit.release('ignored'): no sample
 *   throw error;
 * }
 */
export class ConcurrencyLimiter {
    /**
     * At most `limit` requests in flight, always.
     * @param {number | bigint} limit At least 1.
     * @param {{ clock?: import('./binding.js').ManualClock }} [options]
     * @returns {ConcurrencyLimiter}
     */
    static fixed(limit: number | bigint, options?: {
        clock?: import("./binding.js").ManualClock;
    }): ConcurrencyLimiter;
    /**
     * A limit that follows the round-trip time: it grows while requests are
     * about as fast as when idle and shrinks as they queue up.
     * @param {GradientOptions} [options]
     * @returns {ConcurrencyLimiter}
     */
    static gradient(options?: GradientOptions): ConcurrencyLimiter;
    /**
     * TCP's congestion rule applied to concurrency: +1 for each success that
     * found the limit at least half used, × `backoffRatio` on a drop or a
     * timeout.
     * @param {AimdOptions} [options]
     * @returns {ConcurrencyLimiter}
     */
    static aimd(options?: AimdOptions): ConcurrencyLimiter;
    /**
     * Use `ConcurrencyLimiter.fixed`, `.gradient` or `.aimd`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').ConcurrencyMethods} methods
     */
    private constructor();
    /**
     * Takes a permit if fewer than `limit` requests are in flight: the permit,
     * or `undefined` when refused. Synchronous; never waits (a permit frees
     * up when a request ends, which nothing can foresee).
     * @returns {Permit | undefined}
     */
    tryAcquire(): Permit | undefined;
    /**
     * `tryAcquire()` with its decision (`limit`, `remaining` permits, for
     * the `RateLimit` fields): `permit` is `undefined` when refused.
     * @returns {{ decision: import('./decision.js').Decision, permit: Permit | undefined }}
     */
    check(): {
        decision: import("./decision.js").Decision;
        permit: Permit | undefined;
    };
    /**
     * Feeds the policy a sample measured elsewhere (no permit involved): a
     * request that took `rttMs` while `inFlight` were in flight. Returns the
     * new limit.
     * @param {SampleOptions} sample
     * @returns {number}
     */
    sample(sample: SampleOptions): number;
    /**
     * The current limit.
     * @type {number}
     */
    get limit(): number;
    /**
     * Requests in flight now.
     * @type {number}
     */
    get inFlight(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * One request's place in a `ConcurrencyLimiter`. Release it exactly once
 * when the request ends — `success()`, `dropped()` or `release(outcome)`;
 * later releases do nothing. One that is never released is released as
 * "ignored" when it is garbage-collected.
 */
export class Permit {
    /**
     * Use `ConcurrencyLimiter.tryAcquire`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').ConcurrencyMethods} methods
     * @param {Float64Array} f
     * @param {BigInt64Array} big
     */
    private constructor();
    /**
     * The decision that admitted the request.
     * @readonly
     */
    readonly decision: import("./decision.js").Decision;
    /**
     * Whether the permit has been released.
     * @type {boolean}
     */
    get released(): boolean;
    /**
     * Gives the permit back: a `success` or a `dropped` outcome is a sample
     * for an adaptive policy (its round-trip time is the time since the
     * permit was taken). Returns the new limit. Releasing again does nothing
     * and returns the current limit; an unknown outcome is a `RangeError` and
     * releases nothing.
     * @param {Outcome} [outcome='ignored']
     * @returns {number}
     */
    release(outcome?: Outcome): number;
    /**
     * `release('success')`: the request completed.
     * @returns {number}
     */
    success(): number;
    /**
     * `release('dropped')`: the request was dropped or timed out.
     * @returns {number}
     */
    dropped(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
