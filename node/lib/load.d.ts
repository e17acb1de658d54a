export type ManualLoadOptions = {
    /**
     * The CPU usage to start with, 0 to 1
     * (default: unknown).
     */
    cpuUsage?: number | undefined;
    /**
     * The 1-minute load average to start with,
     * finite and not negative (default: unknown).
     */
    loadAverage?: number | undefined;
};
export type SystemLoadOptions = {
    /**
     * Time between two samples (default 500,
     * Kratos' sampling interval; at least 1).
     */
    intervalMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    intervalMicros?: number | bigint | undefined;
    /**
     * How much of the smoothed CPU usage each sample
     * keeps, from 0 up to, not including, 1 (default 0.95, Kratos').
     */
    decay?: number | undefined;
};
export type LoadOptions = {
    /**
     * The load to read (default:
     * `SystemLoad.shared()`).
     */
    load?: ManualLoad | SystemLoad | undefined;
    /**
     * Run on this clock,
     * for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
/**
 * Kratos' parameters; each absent one
 *   takes Kratos' default.
 */
export type BbrParameters = {
    /**
     * The statistics' window (10000).
     */
    windowMs?: number | undefined;
    /**
     * The same in exact microseconds.
     * Give one or the other.
     */
    windowMicros?: number | bigint | undefined;
    /**
     * How many buckets the window is
     * split into, 1 to 128, at most one per microsecond (100).
     */
    buckets?: number | bigint | undefined;
    /**
     * The CPU usage, 0 to 1, at or above which
     * BBR sheds (0.8).
     */
    cpuThreshold?: number | undefined;
    /**
     * How long after shedding began BBR keeps
     * shedding although the CPU is below its threshold (1000).
     */
    coolDownMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    coolDownMicros?: number | bigint | undefined;
};
export type BbrOptions = BbrParameters & LoadOptions;
/**
 * What BBR sees now (Kratos' `Stat`).
 */
export type BbrStats = {
    /**
     * The CPU usage it reads, 0 to 1.
     */
    cpuUsage: number;
    /**
     * Requests admitted and not yet released.
     */
    inFlight: number;
    /**
     * The most requests completed in one settled
     * bucket (at least 1).
     */
    maxPass: number;
    /**
     * The lowest average round-trip time of a
     * settled bucket, in whole milliseconds (at least 1).
     */
    minRtMs: number;
    /**
     * The capacity it sheds beyond:
     * `maxPass × minRtMs × buckets per second / 1000`.
     */
    maxInFlight: number;
};
/**
 * Which
 *   threshold refused a request (Sentinel's limit types): entry QPS,
 *   requests in flight, average round-trip time, load average (with the
 *   BBR check), CPU usage.
 */
export type SystemThreshold = "qps" | "thread" | "rt" | "load" | "cpu";
/**
 * Sentinel's thresholds, each optional (absent:
 *   not checked).
 */
export type SystemRule = {
    /**
     * Requests admitted per second: finite, not negative.
     */
    qps?: number | undefined;
    /**
     * Requests in flight (admits
     * `maxThread + 1` at once, as Sentinel does).
     */
    maxThread?: number | bigint | undefined;
    /**
     * The average round-trip time of the last
     * second's completions, in milliseconds.
     */
    avgRtMs?: number | undefined;
    /**
     * The same in exact microseconds.
     * Give one or the other.
     */
    avgRtMicros?: number | bigint | undefined;
    /**
     * The 1-minute load average: finite,
     * not negative; refuses only while more requests are in flight than the
     * service completes (Sentinel's BBR check).
     */
    highestSystemLoad?: number | undefined;
    /**
     * The CPU usage, 0 to 1.
     */
    highestCpuUsage?: number | undefined;
};
export type SystemGuardOptions = SystemRule & LoadOptions;
/**
 * The entry statistics a `SystemGuard`
 *   checks (Sentinel's entry node), over the last second.
 */
export type SystemStats = {
    /**
     * Requests admitted.
     */
    passQps: number;
    /**
     * Requests refused.
     */
    blockQps: number;
    /**
     * Requests completed.
     */
    successQps: number;
    /**
     * Requests in flight now.
     */
    inFlight: number;
    /**
     * Average round-trip time of the completions, 0
     * when none.
     */
    avgRtMs: number;
    /**
     * Lowest round-trip time, in whole milliseconds
     * (5000 when none, at least 1).
     */
    minRtMs: number;
    /**
     * The most completions in one half second,
     * per second (at least 2).
     */
    maxSuccessQps: number;
};
/**
 * @typedef {object} ManualLoadOptions
 * @property {number} [cpuUsage] The CPU usage to start with, 0 to 1
 *   (default: unknown).
 * @property {number} [loadAverage] The 1-minute load average to start with,
 *   finite and not negative (default: unknown).
 */
/**
 * A load that says what it is told: the load's `ManualClock`. Both
 * readings start unknown (`undefined`) unless given; a limiter reads an
 * unknown one as 0 (no load, so nothing is shed on a guess).
 *
 * @example
 * const load = new ManualLoad();
 * const bbr = new Bbr({ load, clock: new ManualClock() });
 * load.setCpuUsage(0.95); // overloaded: BBR now sheds beyond its estimate
 */
export class ManualLoad {
    /**
     * @param {ManualLoadOptions} [options]
     */
    constructor(options?: ManualLoadOptions);
    /**
     * Sets the CPU usage: a fraction of what the process may use, from 0 to
     * 1 (a `RangeError` otherwise, leaving the reading as it was).
     * @param {number} cpuUsage
     * @returns {void}
     */
    setCpuUsage(cpuUsage: number): void;
    /**
     * Sets the 1-minute load average: finite and not negative.
     * @param {number} loadAverage
     * @returns {void}
     */
    setLoadAverage(loadAverage: number): void;
    /**
     * Makes both readings unknown again.
     * @returns {void}
     */
    clear(): void;
    /**
     * The CPU usage, 0 to 1; `undefined` while unknown.
     * @type {number | undefined}
     */
    get cpuUsage(): number | undefined;
    /**
     * The 1-minute load average; `undefined` while unknown.
     * @type {number | undefined}
     */
    get loadAverage(): number | undefined;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * This machine's load, sampled on a background thread: the CPU usage of
 * the process's cgroup (of its CPU quota when it has one) or of the host,
 * smoothed as Kratos does, and the 1-minute load average
 * (`/proc/loadavg`). A reading that cannot be taken (no such file) is
 * `undefined`. The thread stops when the object is garbage-collected.
 *
 * Most programs need one: `SystemLoad.shared()`, which the limiters read
 * when given no `load`.
 */
export class SystemLoad {
    /**
     * The native sampler for the next `new SystemLoad()` to adopt (set by
     * `shared()` only).
     * @type {import('./binding.js').LoadMethods | undefined}
     */
    static "__#private@#adopt": import("./binding.js").LoadMethods | undefined;
    /**
     * The process-wide sampler (every 500 ms, a decay of 0.95), started on
     * first use: the load of every limiter given no `load`.
     * @returns {SystemLoad}
     */
    static shared(): SystemLoad;
    /**
     * Starts a sampler of its own.
     * @param {SystemLoadOptions} [options]
     */
    constructor(options?: SystemLoadOptions);
    /**
     * The CPU usage, 0 to 1, smoothed; `undefined` while unknown.
     * @type {number | undefined}
     */
    get cpuUsage(): number | undefined;
    /**
     * The 1-minute load average; `undefined` while unknown.
     * @type {number | undefined}
     */
    get loadAverage(): number | undefined;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * Kratos' BBR limiter: sheds requests while the CPU is at or above
 * `cpuThreshold` (or within `coolDownMs` after shedding began) and more are
 * in flight than the service completes. A busy but healthy service is
 * never throttled.
 *
 * @example
 * const bbr = new Bbr({ cpuThreshold: 0.8 });
 * const permit = bbr.tryAcquire();
 * if (!permit) return reply(503);
 * try {
 *   await handle(request);
 * } finally {
 *   permit.release(); // records the round-trip time
 * }
 */
export class Bbr {
    /**
     * @param {BbrOptions} [options]
     */
    constructor(options?: BbrOptions);
    /**
     * Admits a request unless BBR sheds it (Kratos' `Allow`): its permit, or
     * `undefined` when shed. Release the permit when the request ends.
     * @returns {BbrPermit | undefined}
     */
    tryAcquire(): BbrPermit | undefined;
    /**
     * `tryAcquire()` with its decision: `permit` is `undefined` when shed.
     * @returns {{ decision: import('./decision.js').Decision, permit: BbrPermit | undefined }}
     */
    check(): {
        decision: import("./decision.js").Decision;
        permit: BbrPermit | undefined;
    };
    /**
     * What BBR sees now.
     * @returns {BbrStats}
     */
    stats(): BbrStats;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * One request admitted by a `Bbr`. Release it exactly once when the
 * request ends; later releases do nothing.
 */
export class BbrPermit extends HeldPermit {
    /**
     * Use `Bbr.tryAcquire`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').BbrMethods} methods
     * @param {Float64Array} f
     * @param {BigInt64Array} big
     */
    private constructor();
    /**
     * The decision that admitted the request.
     * @readonly
     */
    readonly decision: import("./decision.js").Decision;
    get [Symbol.toStringTag](): string;
}
/**
 * @typedef {'qps' | 'thread' | 'rt' | 'load' | 'cpu'} SystemThreshold Which
 *   threshold refused a request (Sentinel's limit types): entry QPS,
 *   requests in flight, average round-trip time, load average (with the
 *   BBR check), CPU usage.
 */
/**
 * @typedef {object} SystemRule Sentinel's thresholds, each optional (absent:
 *   not checked).
 * @property {number} [qps] Requests admitted per second: finite, not negative.
 * @property {number | bigint} [maxThread] Requests in flight (admits
 *   `maxThread + 1` at once, as Sentinel does).
 * @property {number} [avgRtMs] The average round-trip time of the last
 *   second's completions, in milliseconds.
 * @property {number | bigint} [avgRtMicros] The same in exact microseconds.
 *   Give one or the other.
 * @property {number} [highestSystemLoad] The 1-minute load average: finite,
 *   not negative; refuses only while more requests are in flight than the
 *   service completes (Sentinel's BBR check).
 * @property {number} [highestCpuUsage] The CPU usage, 0 to 1.
 */
/** @typedef {SystemRule & LoadOptions} SystemGuardOptions */
/**
 * @typedef {object} SystemStats The entry statistics a `SystemGuard`
 *   checks (Sentinel's entry node), over the last second.
 * @property {number} passQps Requests admitted.
 * @property {number} blockQps Requests refused.
 * @property {number} successQps Requests completed.
 * @property {number} inFlight Requests in flight now.
 * @property {number} avgRtMs Average round-trip time of the completions, 0
 *   when none.
 * @property {number} minRtMs Lowest round-trip time, in whole milliseconds
 *   (5000 when none, at least 1).
 * @property {number} maxSuccessQps The most completions in one half second,
 *   per second (at least 2).
 */
/**
 * Sentinel's system rule: one guard at the entrance of a whole service,
 * refusing new requests while the service as a whole exceeds a threshold,
 * and saying which.
 *
 * @example
 * const guard = new SystemGuard({ highestCpuUsage: 0.9, maxThread: 200 });
 * const { permit, threshold } = guard.check();
 * if (!permit) return reply(503, `overloaded (${threshold})`);
 * try {
 *   await handle(request);
 * } finally {
 *   permit.release();
 * }
 */
export class SystemGuard {
    /**
     * @param {SystemGuardOptions} [options]
     */
    constructor(options?: SystemGuardOptions);
    /**
     * Admits a request of `count` (Sentinel's `acquireCount`) unless a
     * threshold refuses it: its permit, or `undefined` when refused.
     * @param {number | bigint} [count=1]
     * @returns {SystemPermit | undefined}
     */
    tryAcquire(count?: number | bigint): SystemPermit | undefined;
    /**
     * `tryAcquire(count)` with its decision (about the `qps` threshold when
     * it is set, all zeros otherwise) and, when refused, the threshold that
     * refused it.
     * @param {number | bigint} [count=1]
     * @returns {{ decision: import('./decision.js').Decision, permit: SystemPermit | undefined, threshold: SystemThreshold | undefined }}
     */
    check(count?: number | bigint): {
        decision: import("./decision.js").Decision;
        permit: SystemPermit | undefined;
        threshold: SystemThreshold | undefined;
    };
    /**
     * The entry statistics now.
     * @returns {SystemStats}
     */
    stats(): SystemStats;
    /**
     * The thresholds set (a copy; change them with `setRule`).
     * @type {SystemRule}
     */
    get rule(): SystemRule;
    /**
     * Replaces the rule: each threshold absent from `rule` is no longer
     * checked. The statistics stay (Sentinel's `loadRules`). A bad threshold
     * throws and leaves the rule as it was.
     * @param {SystemRule} rule
     * @returns {void}
     */
    setRule(rule: SystemRule): void;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * One request admitted by a `SystemGuard`. Release it exactly once when
 * the request ends; later releases do nothing.
 */
export class SystemPermit extends HeldPermit {
    /**
     * Use `SystemGuard.tryAcquire`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').SystemGuardMethods} methods
     * @param {Float64Array} f
     * @param {BigInt64Array} big
     */
    private constructor();
    /**
     * The decision that admitted the request.
     * @readonly
     */
    readonly decision: import("./decision.js").Decision;
    get [Symbol.toStringTag](): string;
}
import native = require("./binding.js");
/**
 * What both permits share: a release that runs once — by `release()`, or
 * when the permit is collected unreleased.
 */
declare class HeldPermit {
    /**
     * @protected
     * @param {() => void} release Ends the request in the native limiter; it
     *   must not hold the permit (the registry keeps it).
     */
    protected constructor();
    /**
     * Whether the permit has been released.
     * @type {boolean}
     */
    get released(): boolean;
    /**
     * The request ended: records its round-trip time (the time since the
     * permit was taken) and, for a `SystemPermit`, its completion. Releasing
     * again does nothing.
     * @returns {void}
     */
    release(): void;
    #private;
}
export {};
