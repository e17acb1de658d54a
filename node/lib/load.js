'use strict';
/**
 * The limiters that follow the system's load, and the load they read:
 *
 * - `Bbr`: Kratos' BBR limiter (go-kratos/aegis `ratelimit/bbr`). It sheds
 *   requests only while the CPU is at or above its threshold, or within
 *   the cool-down after shedding began, and then only those beyond what the
 *   service completes (`maxPass × minRt`, from its own statistics).
 * - `SystemGuard`: Sentinel's system rule (`SystemRuleManager.checkSystem`):
 *   thresholds on entry QPS, requests in flight, average round-trip time,
 *   load average and CPU usage, each optional; a refusal names the
 *   threshold that refused.
 * - `ManualLoad`: a load set by hand, for deterministic tests (beside
 *   `ManualClock`) or for figures measured elsewhere; `SystemLoad`: this
 *   machine's, sampled on a background thread (CPU of the process's cgroup
 *   or of the host, smoothed as Kratos does, and the 1-minute load average).
 *   A limiter given no `load` reads `SystemLoad.shared()`.
 *
 * A request takes a permit when it starts and releases it when it ends:
 * the time between is its round-trip time, which both limiters learn from.
 * Releasing twice does nothing; `permit[Symbol.dispose]()` releases; a
 * permit garbage-collected unreleased is released then (as the Rust
 * library's guards are when dropped), so that it does not stay in flight
 * for ever.
 *
 * Classes over native functions bound to one limiter or signal
 * (bindings/node/src/load.rs): the decisions are the Rust library's.
 * @module
 */

const native = require('./binding.js');
const { decisionAt } = require('./decision.js');
const { LIMITER, noPublicConstructor } = require('./internal.js');
const { readOptions } = require('./options.js');
const { views } = require('./admission.js');

/**
 * Where the native `tryAcquire` writes a permit, after the decision record
 * (bindings/node/src/layout.rs).
 */
const PERMIT_AT = native.layout().permit;

/**
 * The native signal of each `ManualLoad` and `SystemLoad`, for the `load`
 * option of the limiters.
 * @type {WeakMap<object, import('./binding.js').LoadMethods>}
 */
const signals = new WeakMap();

/**
 * The native signal of a `load` option; any other value is passed on as it
 * is, for the native module to refuse with the usual `TypeError`.
 * @param {unknown} load
 * @returns {unknown}
 */
function signalOf(load) {
  return (typeof load === 'object' && load !== null && signals.get(load)) || load;
}

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
class ManualLoad {
  /** @type {import('./binding.js').LoadMethods} */
  #native;

  /**
   * @param {ManualLoadOptions} [options]
   */
  constructor(options) {
    const o = readOptions(options, MANUAL_OPTIONS);
    this.#native = native.manualLoad(o.cpuUsage, o.loadAverage);
    signals.set(this, this.#native);
  }

  /**
   * Sets the CPU usage: a fraction of what the process may use, from 0 to
   * 1 (a `RangeError` otherwise, leaving the reading as it was).
   * @param {number} cpuUsage
   * @returns {void}
   */
  setCpuUsage(cpuUsage) {
    this.#native.setCpuUsage(cpuUsage);
  }

  /**
   * Sets the 1-minute load average: finite and not negative.
   * @param {number} loadAverage
   * @returns {void}
   */
  setLoadAverage(loadAverage) {
    this.#native.setLoadAverage(loadAverage);
  }

  /**
   * Makes both readings unknown again.
   * @returns {void}
   */
  clear() {
    this.#native.clear();
  }

  /**
   * The CPU usage, 0 to 1; `undefined` while unknown.
   * @type {number | undefined}
   */
  get cpuUsage() {
    return this.#native.cpuUsage();
  }

  /**
   * The 1-minute load average; `undefined` while unknown.
   * @type {number | undefined}
   */
  get loadAverage() {
    return this.#native.loadAverage();
  }

  get [Symbol.toStringTag]() {
    return 'ManualLoad';
  }
}

const MANUAL_OPTIONS = Object.freeze(['cpuUsage', 'loadAverage']);

/**
 * @typedef {object} SystemLoadOptions
 * @property {number} [intervalMs] Time between two samples (default 500,
 *   Kratos' sampling interval; at least 1).
 * @property {number | bigint} [intervalMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number} [decay] How much of the smoothed CPU usage each sample
 *   keeps, from 0 up to, not including, 1 (default 0.95, Kratos').
 */

/**
 * The process-wide sampler, once `SystemLoad.shared()` has made it.
 * @type {SystemLoad | undefined}
 */
let shared;

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
class SystemLoad {
  /** @type {import('./binding.js').LoadMethods} */
  #native;

  /**
   * The native sampler for the next `new SystemLoad()` to adopt (set by
   * `shared()` only).
   * @type {import('./binding.js').LoadMethods | undefined}
   */
  static #adopt;

  /**
   * Starts a sampler of its own.
   * @param {SystemLoadOptions} [options]
   */
  constructor(options) {
    const adopt = SystemLoad.#adopt;
    if (adopt !== undefined) {
      SystemLoad.#adopt = undefined;
      this.#native = adopt;
    } else {
      const o = readOptions(options, SYSTEM_LOAD_OPTIONS);
      this.#native = native.systemLoad(o.intervalMs, o.intervalMicros, o.decay);
    }
    signals.set(this, this.#native);
  }

  /**
   * The process-wide sampler (every 500 ms, a decay of 0.95), started on
   * first use: the load of every limiter given no `load`.
   * @returns {SystemLoad}
   */
  static shared() {
    if (shared === undefined) {
      SystemLoad.#adopt = native.systemLoadShared();
      shared = new SystemLoad();
    }
    return shared;
  }

  /**
   * The CPU usage, 0 to 1, smoothed; `undefined` while unknown.
   * @type {number | undefined}
   */
  get cpuUsage() {
    return this.#native.cpuUsage();
  }

  /**
   * The 1-minute load average; `undefined` while unknown.
   * @type {number | undefined}
   */
  get loadAverage() {
    return this.#native.loadAverage();
  }

  get [Symbol.toStringTag]() {
    return 'SystemLoad';
  }
}

const SYSTEM_LOAD_OPTIONS = Object.freeze(['intervalMs', 'intervalMicros', 'decay']);

/**
 * @typedef {object} LoadOptions
 * @property {ManualLoad | SystemLoad} [load] The load to read (default:
 *   `SystemLoad.shared()`).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests.
 */

/**
 * @typedef {object} BbrParameters Kratos' parameters; each absent one
 *   takes Kratos' default.
 * @property {number} [windowMs] The statistics' window (10000).
 * @property {number | bigint} [windowMicros] The same in exact microseconds.
 *   Give one or the other.
 * @property {number | bigint} [buckets] How many buckets the window is
 *   split into, 1 to 128, at most one per microsecond (100).
 * @property {number} [cpuThreshold] The CPU usage, 0 to 1, at or above which
 *   BBR sheds (0.8).
 * @property {number} [coolDownMs] How long after shedding began BBR keeps
 *   shedding although the CPU is below its threshold (1000).
 * @property {number | bigint} [coolDownMicros] The same in exact
 *   microseconds. Give one or the other.
 */

/** @typedef {BbrParameters & LoadOptions} BbrOptions */

/**
 * @typedef {object} BbrStats What BBR sees now (Kratos' `Stat`).
 * @property {number} cpuUsage The CPU usage it reads, 0 to 1.
 * @property {number} inFlight Requests admitted and not yet released.
 * @property {number} maxPass The most requests completed in one settled
 *   bucket (at least 1).
 * @property {number} minRtMs The lowest average round-trip time of a
 *   settled bucket, in whole milliseconds (at least 1).
 * @property {number} maxInFlight The capacity it sheds beyond:
 *   `maxPass × minRtMs × buckets per second / 1000`.
 */

/**
 * The permit `tryAcquire` just wrote to the scratch words (set by
 * `BbrPermit`'s static block).
 * @type {(methods: import('./binding.js').BbrMethods, f: Float64Array, big: BigInt64Array) => BbrPermit}
 */
let bbrPermitOf;

/**
 * The permit `tryAcquire` just wrote to the scratch words (set by
 * `SystemPermit`'s static block).
 * @type {(methods: import('./binding.js').SystemGuardMethods, f: Float64Array, big: BigInt64Array) => SystemPermit}
 */
let systemPermitOf;

/**
 * Releases the permits that were collected unreleased.
 * @type {FinalizationRegistry<() => void>}
 */
const unreleased = new FinalizationRegistry((release) => release());

/**
 * What both permits share: a release that runs once — by `release()`, or
 * when the permit is collected unreleased.
 */
class HeldPermit {
  /** @type {(() => void) | undefined} */
  #release;

  /**
   * @protected
   * @param {() => void} release Ends the request in the native limiter; it
   *   must not hold the permit (the registry keeps it).
   */
  constructor(release) {
    this.#release = release;
    unreleased.register(this, release, this);
  }

  /**
   * Whether the permit has been released.
   * @type {boolean}
   */
  get released() {
    return this.#release === undefined;
  }

  /**
   * The request ended: records its round-trip time (the time since the
   * permit was taken) and, for a `SystemPermit`, its completion. Releasing
   * again does nothing.
   * @returns {void}
   */
  release() {
    const release = this.#release;
    if (release === undefined) return;
    this.#release = undefined;
    unreleased.unregister(this);
    release();
  }
}

/**
 * The fields a native `stats()` or `rule()` wrote to the scratch words.
 * @param {readonly string[]} fields Their names, in the order of the words.
 * @param {Float64Array} f
 * @returns {Record<string, number>}
 */
function fieldsOf(fields, f) {
  /** @type {Record<string, number>} */
  const out = {};
  fields.forEach((name, i) => {
    out[name] = f[i];
  });
  return out;
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
class Bbr {
  /** @type {import('./binding.js').BbrMethods} */
  #native;
  #f;
  #big;

  /**
   * @param {BbrOptions} [options]
   */
  constructor(options) {
    const o = readOptions(options, BBR_OPTIONS);
    this.#native = native.bbr(
      o.windowMs,
      o.windowMicros,
      o.buckets,
      o.cpuThreshold,
      o.coolDownMs,
      o.coolDownMicros,
      signalOf(o.load),
      o.clock,
    );
    [this.#f, this.#big] = views(this.#native.scratch);
  }

  /**
   * Admits a request unless BBR sheds it (Kratos' `Allow`): its permit, or
   * `undefined` when shed. Release the permit when the request ends.
   * @returns {BbrPermit | undefined}
   */
  tryAcquire() {
    return this.#native.tryAcquire() ? bbrPermitOf(this.#native, this.#f, this.#big) : undefined;
  }

  /**
   * `tryAcquire()` with its decision: `permit` is `undefined` when shed.
   * @returns {{ decision: import('./decision.js').Decision, permit: BbrPermit | undefined }}
   */
  check() {
    const permit = this.tryAcquire();
    return { decision: permit ? permit.decision : decisionAt(this.#f, this.#big, 0), permit };
  }

  /**
   * What BBR sees now.
   * @returns {BbrStats}
   */
  stats() {
    this.#native.stats();
    return /** @type {BbrStats} */ (/** @type {unknown} */ (fieldsOf(this.#native.statsFields, this.#f)));
  }

  get [Symbol.toStringTag]() {
    return 'Bbr';
  }
}

const BBR_OPTIONS = Object.freeze([
  'windowMs',
  'windowMicros',
  'buckets',
  'cpuThreshold',
  'coolDownMs',
  'coolDownMicros',
  'load',
  'clock',
]);

/**
 * One request admitted by a `Bbr`. Release it exactly once when the
 * request ends; later releases do nothing.
 */
class BbrPermit extends HeldPermit {
  /**
   * Use `Bbr.tryAcquire`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').BbrMethods} methods
   * @param {Float64Array} f
   * @param {BigInt64Array} big
   */
  constructor(token, methods, f, big) {
    if (token !== LIMITER) noPublicConstructor('BbrPermit', 'use Bbr.tryAcquire()');
    const release = methods.release;
    const start = f[PERMIT_AT];
    super(() => release(start));
    /**
     * The decision that admitted the request.
     * @readonly
     */
    this.decision = decisionAt(f, big, 0);
  }

  static {
    bbrPermitOf = (methods, f, big) => new BbrPermit(LIMITER, methods, f, big);
  }

  get [Symbol.toStringTag]() {
    return 'BbrPermit';
  }
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
class SystemGuard {
  /** @type {import('./binding.js').SystemGuardMethods} */
  #native;
  #f;
  #big;

  /**
   * @param {SystemGuardOptions} [options]
   */
  constructor(options) {
    const o = readOptions(options, GUARD_OPTIONS);
    this.#native = native.systemGuard(
      o.qps,
      o.maxThread,
      o.avgRtMs,
      o.avgRtMicros,
      o.highestSystemLoad,
      o.highestCpuUsage,
      signalOf(o.load),
      o.clock,
    );
    [this.#f, this.#big] = views(this.#native.scratch);
  }

  /**
   * Admits a request of `count` (Sentinel's `acquireCount`) unless a
   * threshold refuses it: its permit, or `undefined` when refused.
   * @param {number | bigint} [count=1]
   * @returns {SystemPermit | undefined}
   */
  tryAcquire(count) {
    return this.check(count).permit;
  }

  /**
   * `tryAcquire(count)` with its decision (about the `qps` threshold when
   * it is set, all zeros otherwise) and, when refused, the threshold that
   * refused it.
   * @param {number | bigint} [count=1]
   * @returns {{ decision: import('./decision.js').Decision, permit: SystemPermit | undefined, threshold: SystemThreshold | undefined }}
   */
  check(count) {
    const threshold = /** @type {SystemThreshold | undefined} */ (this.#native.tryAcquire(count));
    if (threshold !== undefined) return { decision: decisionAt(this.#f, this.#big, 0), permit: undefined, threshold };
    const permit = systemPermitOf(this.#native, this.#f, this.#big);
    return { decision: permit.decision, permit, threshold };
  }

  /**
   * The entry statistics now.
   * @returns {SystemStats}
   */
  stats() {
    this.#native.stats();
    return /** @type {SystemStats} */ (/** @type {unknown} */ (fieldsOf(this.#native.statsFields, this.#f)));
  }

  /**
   * The thresholds set (a copy; change them with `setRule`).
   * @type {SystemRule}
   */
  get rule() {
    this.#native.rule();
    const all = fieldsOf(this.#native.ruleFields, this.#f);
    return Object.fromEntries(Object.entries(all).filter(([, x]) => !Number.isNaN(x)));
  }

  /**
   * Replaces the rule: each threshold absent from `rule` is no longer
   * checked. The statistics stay (Sentinel's `loadRules`). A bad threshold
   * throws and leaves the rule as it was.
   * @param {SystemRule} rule
   * @returns {void}
   */
  setRule(rule) {
    const o = readOptions(rule, RULE_OPTIONS);
    native.systemGuardSetRule(
      this.#native,
      o.qps,
      o.maxThread,
      o.avgRtMs,
      o.avgRtMicros,
      o.highestSystemLoad,
      o.highestCpuUsage,
    );
  }

  get [Symbol.toStringTag]() {
    return 'SystemGuard';
  }
}

const RULE_OPTIONS = Object.freeze(['qps', 'maxThread', 'avgRtMs', 'avgRtMicros', 'highestSystemLoad', 'highestCpuUsage']);
const GUARD_OPTIONS = Object.freeze([...RULE_OPTIONS, 'load', 'clock']);

/**
 * One request admitted by a `SystemGuard`. Release it exactly once when
 * the request ends; later releases do nothing.
 */
class SystemPermit extends HeldPermit {
  /**
   * Use `SystemGuard.tryAcquire`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').SystemGuardMethods} methods
   * @param {Float64Array} f
   * @param {BigInt64Array} big
   */
  constructor(token, methods, f, big) {
    if (token !== LIMITER) noPublicConstructor('SystemPermit', 'use SystemGuard.tryAcquire()');
    const release = methods.release;
    const [start, count] = [f[PERMIT_AT], f[PERMIT_AT + 1]];
    super(() => release(start, count));
    /**
     * The decision that admitted the request.
     * @readonly
     */
    this.decision = decisionAt(f, big, 0);
  }

  static {
    systemPermitOf = (methods, f, big) => new SystemPermit(LIMITER, methods, f, big);
  }

  get [Symbol.toStringTag]() {
    return 'SystemPermit';
  }
}

// `permit[Symbol.dispose]()` releases it, for `using permit = …`. At run
// time only, as for the concurrency limiter's `Permit` (lib/concurrency.js).
if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(HeldPermit.prototype, Symbol.dispose, {
    /** @this {HeldPermit} */
    value() {
      this.release();
    },
    writable: true,
    configurable: true,
  });
}

module.exports = { ManualLoad, SystemLoad, Bbr, BbrPermit, SystemGuard, SystemPermit };
