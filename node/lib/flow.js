'use strict';
/**
 * Sentinel's flow rule for one resource: `FlowController`, a rule (QPS or
 * requests in flight; refusing at once, warming up, queueing at a uniform
 * pace, or both) over Sentinel's sliding statistics.
 *
 * `check` decides without waiting; `entry` (Sentinel's `SphU.entry`)
 * resolves after an admitted request's queueing or occupying wait, on a
 * timer: the event loop is never blocked (on a `ManualClock` the clock
 * advances instead). An admitted request holds a `FlowPermit` until it
 * ends: `release()` (or `exit()`, or `permit[Symbol.dispose]()`) records
 * its completion and RT and takes it out of flight, once; a permit
 * garbage-collected unreleased is released then.
 *
 * A class over native functions bound to one controller
 * (bindings/node/src/flow.rs): the decisions are the Rust library's. The
 * rule keeps Sentinel's units where its names carry them
 * (`warmUpPeriodSec`, `maxQueueingTimeMs`, `intervalMs`).
 * @module
 */

const native = require('./binding.js');
const { decisionAt } = require('./decision.js');
const { LIMITER, noPublicConstructor } = require('./internal.js');
const { readOptions } = require('./options.js');
const { views } = require('./admission.js');
const { sleep } = require('./sleep.js');

/** Where the native `check` writes a permit, after the decision record. */
const PERMIT_AT = native.layout().permit;

/**
 * @typedef {'qps' | 'thread'} FlowGrade What a rule counts: requests
 *   admitted per second, or in flight.
 */

/**
 * @typedef {'default' | 'warmUp' | 'rateLimiter' | 'warmUpRateLimiter'} ControlBehavior
 *   How a QPS rule shapes traffic (Sentinel's `controlBehavior`).
 */

/**
 * @typedef {object} FlowRule Sentinel's `FlowRule` for one resource.
 * @property {number} count The threshold: per second, or in flight.
 * @property {FlowGrade} [grade] Default `'qps'`.
 * @property {ControlBehavior} [controlBehavior] Default `'default'`
 *   (ignored by the thread grade).
 * @property {number} [warmUpPeriodSec] Seconds to warm up (default 10).
 * @property {number} [coldFactor] How much slower a cold service starts,
 *   an integer of at least 2 (default 3).
 * @property {number} [maxQueueingTimeMs] The longest wait for a turn
 *   (default 500).
 */

/**
 * @typedef {object} FlowControllerOptions
 * @property {FlowRule} rule The rule.
 * @property {number} [sampleCount] Buckets of the statistics (default 2,
 *   at most 64, dividing `intervalMs`).
 * @property {number} [intervalMs] The statistics' interval (default 1000).
 * @property {import('./binding.js').ManualClock} [clock] A manual clock,
 *   for tests.
 */

/**
 * @typedef {object} FlowStats The statistics of a `FlowController`
 *   (Sentinel's node).
 * @property {number} passQps Requests admitted per second over the interval.
 * @property {number} blockQps Requests refused per second.
 * @property {number} successQps Requests completed per second.
 * @property {number} previousPassQps Requests admitted in the previous
 *   whole second.
 * @property {number} occupiedPass Prioritized requests that occupied a
 *   later window, in the current whole second.
 * @property {number} waiting Passes booked into windows not yet begun.
 * @property {number} inFlight Requests in flight now.
 * @property {number} avgRtMs Average RT of the interval's completions, 0
 *   when none.
 */

const RULE_OPTIONS = Object.freeze(['count', 'grade', 'controlBehavior', 'warmUpPeriodSec', 'coldFactor', 'maxQueueingTimeMs']);
const CONTROLLER_OPTIONS = Object.freeze(['rule', 'sampleCount', 'intervalMs', 'clock']);

/**
 * Releases the permits that were collected unreleased.
 * @type {FinalizationRegistry<() => void>}
 */
const unreleased = new FinalizationRegistry((release) => release());

/**
 * The permit `check` just wrote to the scratch words (set by
 * `FlowPermit`'s static block).
 * @type {(methods: import('./binding.js').FlowControllerMethods, f: Float64Array, big: BigInt64Array) => FlowPermit}
 */
let flowPermitOf;

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
class FlowController {
  /** @type {import('./binding.js').FlowControllerMethods} */
  #native;
  #f;
  #big;

  /**
   * @param {FlowControllerOptions} options
   */
  constructor(options) {
    const o = readOptions(options, CONTROLLER_OPTIONS);
    const r = readOptions(o.rule, RULE_OPTIONS);
    this.#native = native.flowController(
      r.count,
      r.grade,
      r.controlBehavior,
      r.warmUpPeriodSec,
      r.coldFactor,
      r.maxQueueingTimeMs,
      o.sampleCount,
      o.intervalMs,
      o.clock,
    );
    [this.#f, this.#big] = views(this.#native.scratch);
  }

  /**
   * Decides a request of `acquireCount` now, without waiting: its decision
   * (an admitted one's `waitMs` is how long the caller must wait before
   * going on) and its permit when admitted.
   * @param {number | bigint} [acquireCount=1]
   * @param {boolean} [prioritized=false] May occupy a later window (the
   *   default behaviour, QPS grade).
   * @returns {{ decision: import('./decision.js').Decision, permit: FlowPermit | undefined }}
   */
  check(acquireCount, prioritized) {
    return this.#decide(acquireCount, prioritized, false);
  }

  /**
   * Sentinel's `SphU.entry`: decides a request, and when it is admitted
   * resolves after its wait with its permit (on a `ManualClock`, the clock
   * advances instead); resolves `undefined` at once when refused.
   * @param {number | bigint} [acquireCount=1]
   * @param {boolean} [prioritized=false]
   * @returns {Promise<FlowPermit | undefined>}
   */
  async entry(acquireCount, prioritized) {
    const { permit } = this.#decide(acquireCount, prioritized, true);
    if (permit !== undefined && permit.decision.waitMs > 0 && !this.#native.manualClock) {
      await sleep(permit.decision.waitMs, undefined);
    }
    return permit;
  }

  /**
   * @param {number | bigint | undefined} acquireCount
   * @param {boolean | undefined} prioritized
   * @param {boolean} sleepManual
   * @returns {{ decision: import('./decision.js').Decision, permit: FlowPermit | undefined }}
   */
  #decide(acquireCount, prioritized, sleepManual) {
    if (!this.#native.check(acquireCount, prioritized, sleepManual)) {
      return { decision: decisionAt(this.#f, this.#big, 0), permit: undefined };
    }
    const permit = flowPermitOf(this.#native, this.#f, this.#big);
    return { decision: permit.decision, permit };
  }

  /**
   * Ends the request of `permit`; the same as `permit.release()`.
   * @param {FlowPermit} permit
   * @returns {void}
   */
  release(permit) {
    if (!(permit instanceof FlowPermit)) native.throwWrongType('permit', permit, 'a FlowPermit');
    permit.release();
  }

  /**
   * Counts `count` passes now without asking the rule: usage that
   * happened anyway.
   * @param {number | bigint} count
   * @returns {void}
   */
  addPass(count) {
    this.#native.addPass(count);
  }

  /**
   * Replaces the rule: the statistics stay, the controller's own state
   * (warm-up tokens, queue) starts afresh, as when Sentinel reloads rules.
   * A bad rule throws and leaves the rule as it was.
   * @param {FlowRule} rule
   * @returns {void}
   */
  setRule(rule) {
    const r = readOptions(rule, RULE_OPTIONS);
    native.flowControllerSetRule(
      this.#native,
      r.count,
      r.grade,
      r.controlBehavior,
      r.warmUpPeriodSec,
      r.coldFactor,
      r.maxQueueingTimeMs,
    );
  }

  /**
   * The rule, every field filled in (a copy; change it with `setRule`).
   * @type {Required<FlowRule>}
   */
  get rule() {
    const n = this.#native;
    n.rule();
    const f = this.#f;
    return {
      count: f[0],
      grade: /** @type {FlowGrade} */ (n.grades[f[1]]),
      controlBehavior: /** @type {ControlBehavior} */ (n.behaviors[f[2]]),
      warmUpPeriodSec: f[3],
      coldFactor: f[4],
      maxQueueingTimeMs: f[5],
    };
  }

  /**
   * The statistics now.
   * @returns {FlowStats}
   */
  stats() {
    const n = this.#native;
    n.stats();
    /** @type {Record<string, number>} */
    const out = {};
    n.statsFields.forEach((name, i) => {
      out[name] = this.#f[i];
    });
    return /** @type {FlowStats} */ (/** @type {unknown} */ (out));
  }

  get [Symbol.toStringTag]() {
    return 'FlowController';
  }
}

/**
 * One request admitted by a `FlowController` (Sentinel's `Entry`). End it
 * exactly once when the request ends; later ends do nothing.
 */
class FlowPermit {
  /** @type {(() => void) | undefined} */
  #release;

  /**
   * Use `FlowController.check` or `entry`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').FlowControllerMethods} methods
   * @param {Float64Array} f
   * @param {BigInt64Array} big
   */
  constructor(token, methods, f, big) {
    if (token !== LIMITER) noPublicConstructor('FlowPermit', 'use FlowController.check() or entry()');
    const release = methods.release;
    const [start, count] = [f[PERMIT_AT], f[PERMIT_AT + 1]];
    const end = () => release(start, count);
    this.#release = end;
    unreleased.register(this, end, this);
    /**
     * The decision that admitted the request (its `waitMs` is the
     * queueing or occupying wait).
     * @readonly
     */
    this.decision = decisionAt(f, big, 0);
  }

  static {
    flowPermitOf = (methods, f, big) => new FlowPermit(LIMITER, methods, f, big);
  }

  /**
   * Whether the request has ended.
   * @type {boolean}
   */
  get released() {
    return this.#release === undefined;
  }

  /**
   * The request ended: records its completion and RT (the time since it
   * was decided) and takes it out of flight. Ending again does nothing.
   * @returns {void}
   */
  release() {
    const release = this.#release;
    if (release === undefined) return;
    this.#release = undefined;
    unreleased.unregister(this);
    release();
  }

  /**
   * Sentinel's `Entry.exit()`: the same as `release()`.
   * @returns {void}
   */
  exit() {
    this.release();
  }

  get [Symbol.toStringTag]() {
    return 'FlowPermit';
  }
}

// `permit[Symbol.dispose]()` ends it, for `using permit = …`. At run time
// only, as for the other permits (lib/load.js).
if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(FlowPermit.prototype, Symbol.dispose, {
    /** @this {FlowPermit} */
    value() {
      this.release();
    },
    writable: true,
    configurable: true,
  });
}

module.exports = { FlowController, FlowPermit };
