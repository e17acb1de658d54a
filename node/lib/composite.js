'use strict';
/**
 * `CompositeLimiter`: several limits — "10 per second and 1,000 per hour" —
 * that must all admit a request; a refusal by any consumes nothing in any.
 * A thin shell over native functions bound to one
 * `ratekeeper::CompositeLimiter` (bindings/node/src/composite.rs).
 * @module
 */

const native = require('./binding.js');
const { AdmissionLimiter, views } = require('./admission.js');
const { decisionAt, DECISION_WORDS } = require('./decision.js');
const { LIMITER } = require('./internal.js');
const { readOptions } = require('./options.js');

/**
 * @typedef {(
 *   | ({ algorithm: 'tokenBucket' } & Omit<import('./admission.js').TokenBucketOptions, 'clock'>)
 *   | ({ algorithm: 'gcra' } & Omit<import('./admission.js').GcraOptions, 'clock'>)
 *   | ({ algorithm: 'leakyBucketMeter' } & Omit<import('./admission.js').LeakyBucketMeterOptions, 'clock'>)
 *   | ({ algorithm: 'leakyBucketQueue' } & Omit<import('./admission.js').LeakyBucketQueueOptions, 'clock'>)
 *   | ({ algorithm: 'fixedWindow' | 'slidingLog' | 'slidingWindowCounter' } & Omit<import('./admission.js').WindowOptions, 'clock'>)
 *   | ({ algorithm: 'slidingWindow' } & Omit<import('./admission.js').SlidingWindowOptions, 'clock'>)
 * )} LimitOptions One limit of a composite: the algorithm's name (its
 *   class's, camelCase) and that class's options, without a clock.
 */

/**
 * All or nothing across several limits of any admission-style kinds. The
 * decision is the strictest part's: when refused, the refusing part with
 * the longest retry-after; when admitted, the part with the fewest units
 * left (with the longest reset-after and wait). `checkEach` gives every
 * part's own decision too, for one `RateLimit` item per policy.
 *
 * @example
 * const limiter = new CompositeLimiter([
 *   { algorithm: 'tokenBucket', rate: 10, burst: 10 },
 *   { algorithm: 'fixedWindow', limit: 1_000, windowMs: 3_600_000 },
 * ]);
 * const { decision, parts } = limiter.checkEach();
 * const header = Decision.rateLimitHeader([['per-second', parts[0]], ['per-hour', parts[1]]]);
 */
class CompositeLimiter extends AdmissionLimiter {
  /** @type {import('./binding.js').CompositeMethods} */
  #native;
  #f;
  #big;

  /**
   * @param {readonly LimitOptions[]} limits At least one.
   * @param {{ clock?: import('./binding.js').ManualClock }} [options]
   */
  constructor(limits, options) {
    const o = readOptions(options, ['clock']);
    const methods = native.compositeCreate(limits, o.clock);
    super(LIMITER, methods);
    this.#native = methods;
    [this.#f, this.#big] = views(methods.scratch);
  }

  /**
   * `check(cost)`, with each part's own decision, in the order of the
   * limits (a refusing composite shows the parts that would have admitted
   * the request untouched).
   * @param {number | bigint} [cost=1]
   * @returns {{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }}
   */
  checkEach(cost) {
    this.#native.checkEach(cost);
    const parts = [];
    for (let i = 1; i <= this.#native.parts; i++) parts.push(decisionAt(this.#f, this.#big, DECISION_WORDS * i));
    return { decision: decisionAt(this.#f, this.#big, 0), parts };
  }

  /**
   * How many limits.
   * @type {number}
   */
  get size() {
    return this.#native.parts;
  }

  get [Symbol.toStringTag]() {
    return 'CompositeLimiter';
  }
}

module.exports = { CompositeLimiter };
