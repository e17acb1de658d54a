/**
 * What a rule counts: requests
 *   admitted per second, or in flight.
 */
export type FlowGrade = "qps" | "thread";
/**
 * How a QPS rule shapes traffic (Sentinel's `controlBehavior`).
 */
export type ControlBehavior = "default" | "warmUp" | "rateLimiter" | "warmUpRateLimiter";
/**
 * Sentinel's `FlowRule` for one resource.
 */
export type FlowRule = {
    /**
     * The threshold: per second, or in flight.
     */
    count: number;
    /**
     * Default `'qps'`.
     */
    grade?: FlowGrade | undefined;
    /**
     * Default `'default'`
     * (ignored by the thread grade).
     */
    controlBehavior?: ControlBehavior | undefined;
    /**
     * Seconds to warm up (default 10).
     */
    warmUpPeriodSec?: number | undefined;
    /**
     * How much slower a cold service starts,
     * an integer of at least 2 (default 3).
     */
    coldFactor?: number | undefined;
    /**
     * The longest wait for a turn
     * (default 500).
     */
    maxQueueingTimeMs?: number | undefined;
};
export type FlowControllerOptions = {
    /**
     * The rule.
     */
    rule: FlowRule;
    /**
     * Buckets of the statistics (default 2,
     * at most 64, dividing `intervalMs`).
     */
    sampleCount?: number | undefined;
    /**
     * The statistics' interval (default 1000).
     */
    intervalMs?: number | undefined;
    /**
     * A manual clock,
     * for tests.
     */
    clock?: native.ManualClock | undefined;
};
/**
 * The statistics of a `FlowController`
 *   (Sentinel's node).
 */
export type FlowStats = {
    /**
     * Requests admitted per second over the interval.
     */
    passQps: number;
    /**
     * Requests refused per second.
     */
    blockQps: number;
    /**
     * Requests completed per second.
     */
    successQps: number;
    /**
     * Requests admitted in the previous
     * whole second.
     */
    previousPassQps: number;
    /**
     * Prioritized requests that occupied a
     * later window, in the current whole second.
     */
    occupiedPass: number;
    /**
     * Passes booked into windows not yet begun.
     */
    waiting: number;
    /**
     * Requests in flight now.
     */
    inFlight: number;
    /**
     * Average RT of the interval's completions, 0
     * when none.
     */
    avgRtMs: number;
};
/**
 * Sentinel's flow rule for one resource, over Sentinel's sliding
 * statistics of `sampleCount` buckets in `intervalMs`.
 *
 * @example
 * const flow = new FlowController({ rule: { count: 10, controlBehavior: 'rateLimiter' } });
 * const entry = await flow.entry(); // waits its turn, 100 ms apart
 * if (entry === undefined) return reply429();
 * try { handle(); } finally { entry.exit(); }
 */
export class FlowController {
    /**
     * @param {FlowControllerOptions} options
     */
    constructor(options: FlowControllerOptions);
    /**
     * Decides a request of `acquireCount` now, without waiting: its decision
     * (an admitted one's `waitMs` is how long the caller must wait before
     * going on) and its permit when admitted.
     * @param {number | bigint} [acquireCount=1]
     * @param {boolean} [prioritized=false] May occupy a later window (the
     *   default behaviour, QPS grade).
     * @returns {{ decision: import('./decision.js').Decision, permit: FlowPermit | undefined }}
     */
    check(acquireCount?: number | bigint, prioritized?: boolean): {
        decision: import("./decision.js").Decision;
        permit: FlowPermit | undefined;
    };
    /**
     * Sentinel's `SphU.entry`: decides a request, and when it is admitted
     * resolves after its wait with its permit (on a `ManualClock`, the clock
     * advances instead); resolves `undefined` at once when refused.
     * @param {number | bigint} [acquireCount=1]
     * @param {boolean} [prioritized=false]
     * @returns {Promise<FlowPermit | undefined>}
     */
    entry(acquireCount?: number | bigint, prioritized?: boolean): Promise<FlowPermit | undefined>;
    /**
     * Ends the request of `permit`; the same as `permit.release()`.
     * @param {FlowPermit} permit
     * @returns {void}
     */
    release(permit: FlowPermit): void;
    /**
     * Counts `count` passes now without asking the rule: usage that
     * happened anyway.
     * @param {number | bigint} count
     * @returns {void}
     */
    addPass(count: number | bigint): void;
    /**
     * Replaces the rule: the statistics stay, the controller's own state
     * (warm-up tokens, queue) starts afresh, as when Sentinel reloads rules.
     * A bad rule throws and leaves the rule as it was.
     * @param {FlowRule} rule
     * @returns {void}
     */
    setRule(rule: FlowRule): void;
    /**
     * The rule, every field filled in (a copy; change it with `setRule`).
     * @type {Required<FlowRule>}
     */
    get rule(): Required<FlowRule>;
    /**
     * The statistics now.
     * @returns {FlowStats}
     */
    stats(): FlowStats;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * One request admitted by a `FlowController` (Sentinel's `Entry`). End it
 * exactly once when the request ends; later ends do nothing.
 */
export class FlowPermit {
    /**
     * Use `FlowController.check` or `entry`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').FlowControllerMethods} methods
     * @param {Float64Array} f
     * @param {BigInt64Array} big
     */
    private constructor();
    /**
     * The decision that admitted the request (its `waitMs` is the
     * queueing or occupying wait).
     * @readonly
     */
    readonly decision: import("./decision.js").Decision;
    /**
     * Whether the request has ended.
     * @type {boolean}
     */
    get released(): boolean;
    /**
     * The request ended: records its completion and RT (the time since it
     * was decided) and takes it out of flight. Ending again does nothing.
     * @returns {void}
     */
    release(): void;
    /**
     * Sentinel's `Entry.exit()`: the same as `release()`.
     * @returns {void}
     */
    exit(): void;
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
