'use strict';
/**
 * `HttpLimiter`: a keyed limiter made from limits text — one item, or
 * several admitted all or nothing per key (`'100/hour; 1000/day'`) — in
 * bounded memory. What the middleware builds from `limit: '10/minute'`; a
 * thin shell over native functions bound to the Rust library's
 * (`ratekeeper::http::limiter_from_text`, bindings/node/src/http.rs).
 * @module
 */

const native = require('../binding.js');
const { views } = require('../admission.js');
const { decisionAt, DECISION_WORDS } = require('../decision.js');
const { readOptions } = require('../options.js');
const { parseLimits } = require('./limits.js');

const OPTIONS = Object.freeze(['algorithm', 'maxKeys', 'whenFull', 'maxKeyBytes', 'clock']);

/**
 * @typedef {object} HttpLimiterOptions
 * @property {string} [algorithm] Each item's algorithm:
 *   `'slidingWindowCounter'` (the default, like the moving window of the
 *   `limits` library), `'fixedWindow'`, `'slidingWindow'`, `'slidingLog'`,
 *   `'gcra'`, `'tokenBucket'`, `'leakyBucketMeter'` or
 *   `'leakyBucketQueue'`; each admits bursts of at most the item's amount
 *   (`RateItem.limitOptions`).
 * @property {number | bigint} [maxKeys] The most keys (clients) held at
 *   once: memory stays bounded whatever keys arrive. Default 100,000.
 * @property {import('../keyed.js').WhenFull} [whenFull] At the bound:
 *   `refuseNewKeys` (the default) or `evictSoonestFull`.
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes
 *   (default 256).
 * @property {import('../binding.js').ManualClock} [clock] For tests.
 */

/**
 * The native functions of a limiter, for the middleware's one-call path
 * (`respond`): set by `HttpLimiter`'s static block.
 * @type {(limiter: HttpLimiter) => import('../binding.js').HttpLimiterMethods}
 */
let methodsOf;

/**
 * Limits text as a keyed limiter: each key (a client) gets every item of
 * the text, and a request is admitted only if each item admits it (none
 * consumes otherwise). Decisions are those of the items' limiters; the
 * combined one is the most restrictive (`remaining` the least of the
 * parts', a refusal's `retryAfterMs` the longest).
 *
 * @example
 * const perClient = new HttpLimiter('100/hour; 1000/day');
 * const { decision, parts } = perClient.checkEach(clientAddress);
 * if (!decision.allowed) res.writeHead(429, responseFields(decision, {
 *   parts: parts.map((d, i) => [perClient.policyNames[i], d]),
 * }));
 */
class HttpLimiter {
  /** @type {import('../binding.js').HttpLimiterMethods} */
  #native;
  #check;
  #f;
  #big;
  /** @type {import('./limits.js').RateItem[]} */
  #items;

  /**
   * @param {string} limits Limits text (see `parseLimits`).
   * @param {HttpLimiterOptions} [options]
   */
  constructor(limits, options) {
    const o = readOptions(options, OPTIONS);
    const methods = native.httpLimiterCreate(limits, o.algorithm, o.maxKeys, o.whenFull, o.maxKeyBytes, o.clock);
    this.#native = methods;
    this.#check = methods.check;
    [this.#f, this.#big] = views(methods.scratch);
    this.#items = parseLimits(limits);
  }

  /**
   * Admits `cost` units for `key` in every item, or in none, now; the
   * combined decision.
   * @param {import('../keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('../decision.js').Decision}
   */
  check(key, cost) {
    this.#check(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * `check(key, cost)`, with each item's decision too, in the order of the
   * text.
   * @param {import('../keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {{ decision: import('../decision.js').Decision, parts: import('../decision.js').Decision[] }}
   */
  checkEach(key, cost) {
    this.#check(key, cost);
    return this.#each();
  }

  /**
   * The decisions `checkEach(key, cost)` would make now, consuming nothing
   * and creating no key.
   * @param {import('../keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {{ decision: import('../decision.js').Decision, parts: import('../decision.js').Decision[] }}
   */
  peekEach(key, cost) {
    this.#native.peek(key, cost);
    return this.#each();
  }

  /**
   * The combined decision `check(key, cost)` would make now, consuming
   * nothing.
   * @param {import('../keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('../decision.js').Decision}
   */
  peek(key, cost) {
    this.#native.peek(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  #each() {
    const parts = [];
    for (let i = 1; i <= this.#items.length; i++) parts.push(decisionAt(this.#f, this.#big, DECISION_WORDS * i));
    return { decision: decisionAt(this.#f, this.#big, 0), parts };
  }

  /**
   * Gives back `cost` units admitted for `key` in every item, as if that
   * request had not been made (a request that failed, or that should not
   * count: express-rate-limit's `skipSuccessfulRequests`); whether the key
   * was held. Each algorithm's rule is the library's (`refund`): a window's
   * count goes down, GCRA's schedule back, never past a fresh state.
   * @param {import('../keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {boolean}
   */
  refund(key, cost) {
    return this.#native.refund(key, cost);
  }

  /**
   * Forgets `key` in every item (it starts afresh if it comes back).
   * Whether it was held.
   * @param {import('../keyed.js').Key} key
   * @returns {boolean}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * The items, in the order of the text.
   * @type {import('./limits.js').RateItem[]}
   */
  get items() {
    return this.#items.slice();
  }

  /**
   * Each item's policy name (`'10-in-1min'`), as the `RateLimit` fields
   * name it.
   * @type {string[]}
   */
  get policyNames() {
    return this.#items.map((item) => item.policyName);
  }

  /**
   * The algorithm of each item's limiter.
   * @type {string}
   */
  get algorithm() {
    return this.#native.algorithm;
  }

  /**
   * How many keys are held.
   * @type {number}
   */
  get size() {
    return this.#native.len();
  }

  /**
   * The bound on `size`.
   * @type {number}
   */
  get maxKeys() {
    return this.#native.maxKeys;
  }

  get [Symbol.toStringTag]() {
    return 'HttpLimiter';
  }

  static {
    methodsOf = (limiter) => limiter.#native;
  }
}

module.exports = { HttpLimiter, methodsOf };
