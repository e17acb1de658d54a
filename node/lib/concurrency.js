'use strict';
/**
 * `ConcurrencyLimiter`: at most `limit` requests in flight, the limit fixed
 * or learned from round-trip times (Netflix concurrency-limits' gradient
 * rule or AIMD). A request takes a `Permit` when it starts and releases it,
 * saying how it went, when it ends.
 *
 * Permits do not leak: releasing twice does nothing, `permit[Symbol.dispose]()`
 * releases (for `using`, where the runtime has `Symbol.dispose`), and a
 * permit that is garbage-collected unreleased is released then, as
 * "ignored" — as the Rust library's `PermitGuard` does when dropped.
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
 * @typedef {'success' | 'dropped' | 'ignored'} Outcome How a request ended:
 *   `success` (its round-trip time is a sample), `dropped` (it timed out or
 *   was rejected downstream: a congestion signal), `ignored` (it says
 *   nothing about the service: a client error, a cancellation; no sample).
 */

/**
 * @typedef {object} GradientOptions The gradient rule's parameters
 *   (Netflix's `GradientLimit`); each absent one takes Netflix's default.
 * @property {number | bigint} [initialLimit] The limit to start from (50).
 * @property {number | bigint} [minLimit] The smallest limit a decrease may reach (1).
 * @property {number | bigint} [maxLimit] The largest limit (1000).
 * @property {number} [smoothing] How much of a decrease to apply at once, in (0, 1] (0.2).
 * @property {number} [rttTolerance] How much slower than the no-load RTT
 *   still counts as no queueing, at least 1 (2).
 * @property {number | bigint} [queueSize] The headroom added to the limit (4).
 * @property {number} [backoffRatio] The factor applied on a drop, in [0.5, 1] (0.9).
 * @property {number | bigint} [probeInterval] Samples between probes for a
 *   new no-load RTT; 0 disables probing (1000).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests.
 */

/**
 * @typedef {object} AimdOptions AIMD's parameters (Netflix's `AIMDLimit`);
 *   each absent one takes Netflix's default.
 * @property {number | bigint} [initialLimit] The limit to start from (20).
 * @property {number | bigint} [minLimit] The smallest limit (20).
 * @property {number | bigint} [maxLimit] The largest limit (200).
 * @property {number} [backoffRatio] The factor applied on a drop or a
 *   timeout, in [0.5, 1) (0.9).
 * @property {number} [rttTimeoutMs] An RTT above this counts as a drop (5000).
 * @property {number | bigint} [rttTimeoutMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests.
 */

/**
 * @typedef {object} SampleOptions
 * @property {number} [rttMs] The request's round-trip time in milliseconds.
 * @property {number | bigint} [rttMicros] The same in exact microseconds.
 *   Give one or the other; not negative.
 * @property {number | bigint} inFlight Requests in flight when it started.
 * @property {boolean} [dropped] Whether it was dropped (default false).
 */

/**
 * The permit `tryAcquire` just wrote to the scratch words (set by
 * `Permit`'s static block, which may call its private constructor).
 * @type {(methods: import('./binding.js').ConcurrencyMethods, f: Float64Array, big: BigInt64Array) => Permit}
 */
let permitOf;

/**
 * Releases the permits that were collected unreleased.
 * @type {FinalizationRegistry<() => void>}
 */
const unreleased = new FinalizationRegistry((release) => release());

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
class ConcurrencyLimiter {
  /** @type {import('./binding.js').ConcurrencyMethods} */
  #native;
  #f;
  #big;

  /**
   * Use `ConcurrencyLimiter.fixed`, `.gradient` or `.aimd`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').ConcurrencyMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) {
      noPublicConstructor('ConcurrencyLimiter', 'use ConcurrencyLimiter.fixed(limit), .gradient(options) or .aimd(options)');
    }
    this.#native = methods;
    [this.#f, this.#big] = views(methods.scratch);
  }

  /**
   * At most `limit` requests in flight, always.
   * @param {number | bigint} limit At least 1.
   * @param {{ clock?: import('./binding.js').ManualClock }} [options]
   * @returns {ConcurrencyLimiter}
   */
  static fixed(limit, options) {
    const o = readOptions(options, ['clock']);
    return new ConcurrencyLimiter(LIMITER, native.concurrencyFixed(limit, o.clock));
  }

  /**
   * A limit that follows the round-trip time: it grows while requests are
   * about as fast as when idle and shrinks as they queue up.
   * @param {GradientOptions} [options]
   * @returns {ConcurrencyLimiter}
   */
  static gradient(options) {
    const o = readOptions(options, GRADIENT_OPTIONS);
    const methods = native.concurrencyGradient(
      o.initialLimit,
      o.minLimit,
      o.maxLimit,
      o.smoothing,
      o.rttTolerance,
      o.queueSize,
      o.backoffRatio,
      o.probeInterval,
      o.clock,
    );
    return new ConcurrencyLimiter(LIMITER, methods);
  }

  /**
   * TCP's congestion rule applied to concurrency: +1 for each success that
   * found the limit at least half used, × `backoffRatio` on a drop or a
   * timeout.
   * @param {AimdOptions} [options]
   * @returns {ConcurrencyLimiter}
   */
  static aimd(options) {
    const o = readOptions(options, AIMD_OPTIONS);
    const methods = native.concurrencyAimd(
      o.initialLimit,
      o.minLimit,
      o.maxLimit,
      o.backoffRatio,
      o.rttTimeoutMs,
      o.rttTimeoutMicros,
      o.clock,
    );
    return new ConcurrencyLimiter(LIMITER, methods);
  }

  /**
   * Takes a permit if fewer than `limit` requests are in flight: the permit,
   * or `undefined` when refused. Synchronous; never waits (a permit frees
   * up when a request ends, which nothing can foresee).
   * @returns {Permit | undefined}
   */
  tryAcquire() {
    return this.#native.tryAcquire() ? permitOf(this.#native, this.#f, this.#big) : undefined;
  }

  /**
   * `tryAcquire()` with its decision (`limit`, `remaining` permits, for
   * the `RateLimit` fields): `permit` is `undefined` when refused.
   * @returns {{ decision: import('./decision.js').Decision, permit: Permit | undefined }}
   */
  check() {
    const permit = this.tryAcquire();
    return { decision: permit ? permit.decision : decisionAt(this.#f, this.#big, 0), permit };
  }

  /**
   * Feeds the policy a sample measured elsewhere (no permit involved): a
   * request that took `rttMs` while `inFlight` were in flight. Returns the
   * new limit.
   * @param {SampleOptions} sample
   * @returns {number}
   */
  sample(sample) {
    const o = readOptions(sample, SAMPLE_OPTIONS);
    return this.#native.sample(o.rttMs, o.rttMicros, o.inFlight, o.dropped);
  }

  /**
   * The current limit.
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  /**
   * Requests in flight now.
   * @type {number}
   */
  get inFlight() {
    return this.#native.inFlight();
  }

  get [Symbol.toStringTag]() {
    return 'ConcurrencyLimiter';
  }
}

const GRADIENT_OPTIONS = Object.freeze([
  'initialLimit',
  'minLimit',
  'maxLimit',
  'smoothing',
  'rttTolerance',
  'queueSize',
  'backoffRatio',
  'probeInterval',
  'clock',
]);
const AIMD_OPTIONS = Object.freeze(['initialLimit', 'minLimit', 'maxLimit', 'backoffRatio', 'rttTimeoutMs', 'rttTimeoutMicros', 'clock']);
const SAMPLE_OPTIONS = Object.freeze(['rttMs', 'rttMicros', 'inFlight', 'dropped']);

/**
 * One request's place in a `ConcurrencyLimiter`. Release it exactly once
 * when the request ends — `success()`, `dropped()` or `release(outcome)`;
 * later releases do nothing. One that is never released is released as
 * "ignored" when it is garbage-collected.
 */
class Permit {
  /** @type {((outcome: unknown) => number) | undefined} */
  #releaseAs;
  /** @type {import('./binding.js').ConcurrencyMethods} */
  #native;

  /**
   * Use `ConcurrencyLimiter.tryAcquire`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').ConcurrencyMethods} methods
   * @param {Float64Array} f
   * @param {BigInt64Array} big
   */
  constructor(token, methods, f, big) {
    if (token !== LIMITER) noPublicConstructor('Permit', 'use ConcurrencyLimiter.tryAcquire()');
    /**
     * The decision that admitted the request.
     * @readonly
     */
    this.decision = decisionAt(f, big, 0);
    this.#native = methods;
    const release = methods.release;
    const [a, b, c, d] = [f[PERMIT_AT], f[PERMIT_AT + 1], f[PERMIT_AT + 2], f[PERMIT_AT + 3]];
    this.#releaseAs = (outcome) => release(outcome, a, b, c, d);
    // What the registry calls if this permit is collected unreleased: it
    // must not hold the permit itself.
    unreleased.register(this, () => release('ignored', a, b, c, d), this);
  }

  static {
    permitOf = (methods, f, big) => new Permit(LIMITER, methods, f, big);
  }

  /**
   * Whether the permit has been released.
   * @type {boolean}
   */
  get released() {
    return this.#releaseAs === undefined;
  }

  /**
   * Gives the permit back: a `success` or a `dropped` outcome is a sample
   * for an adaptive policy (its round-trip time is the time since the
   * permit was taken). Returns the new limit. Releasing again does nothing
   * and returns the current limit; an unknown outcome is a `RangeError` and
   * releases nothing.
   * @param {Outcome} [outcome='ignored']
   * @returns {number}
   */
  release(outcome = 'ignored') {
    const releaseAs = this.#releaseAs;
    if (releaseAs === undefined) return this.#native.limit();
    const limit = releaseAs(outcome); // throws, releasing nothing, on a bad outcome
    this.#releaseAs = undefined;
    unreleased.unregister(this);
    return limit;
  }

  /**
   * `release('success')`: the request completed.
   * @returns {number}
   */
  success() {
    return this.release('success');
  }

  /**
   * `release('dropped')`: the request was dropped or timed out.
   * @returns {number}
   */
  dropped() {
    return this.release('dropped');
  }

  get [Symbol.toStringTag]() {
    return 'Permit';
  }
}

// `permit[Symbol.dispose]()` releases it as "ignored", for
// `using permit = limiter.tryAcquire()`. At run time only: declaring it
// would make the declarations need a `Symbol.dispose` that TypeScript
// users without @types/node or the esnext.disposable library lack.
if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(Permit.prototype, Symbol.dispose, {
    /** @this {Permit} */
    value() {
      this.release('ignored');
    },
    writable: true,
    configurable: true,
  });
}

module.exports = { ConcurrencyLimiter, Permit };
