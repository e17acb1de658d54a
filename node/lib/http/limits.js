'use strict';
/**
 * Limits as text — `'10/minute'`, `'10 per 2 hours'`, `'100/hour; 1000/day'`
 * — as users of the Python `limits` library, slowapi and Flask-Limiter write
 * them. One parser, in Rust (`ratekeeper::http::parse_limits`), serves every
 * language, so the same text means the same limit everywhere; this module
 * only hands its items to JavaScript (bindings/node/src/http.rs).
 * @module
 */

const native = require('../binding.js');
const { noPublicConstructor } = require('../internal.js');

/** Proves a call of `RateItem`'s constructor came from `parseLimits`. */
const CREATE = Symbol('RateItem');

/**
 * Makes a `RateItem` (set by its static block, which may call its private
 * constructor).
 * @type {(record: import('../binding.js').RateItemRecord) => RateItem}
 */
let itemOf;

/**
 * @typedef {'second' | 'minute' | 'hour' | 'day' | 'month' | 'year'} TimeUnit
 *   A window's unit: a month is 30 days and a year 365, as the `limits`
 *   library counts them.
 */

/**
 * One limit of limits text: `amount` units per `multiples` × `unit`.
 * Made by `parseLimits`.
 */
class RateItem {
  /** The item's text in the parser's canonical spelling. */
  #text;

  /**
   * @private
   * @param {symbol} token
   * @param {import('../binding.js').RateItemRecord} record
   */
  constructor(token, record) {
    if (token !== CREATE) noPublicConstructor('RateItem', 'items come from parseLimits()');
    /**
     * Units the window admits (at least 1).
     * @readonly
     */
    this.amount = record.amount;
    /**
     * How many `unit`s the window lasts: the 2 of `'10/2 minutes'`.
     * @readonly
     */
    this.multiples = record.multiples;
    /**
     * The window's unit.
     * @readonly
     * @type {TimeUnit}
     */
    this.unit = /** @type {TimeUnit} */ (record.unit);
    /**
     * The window in milliseconds.
     * @readonly
     */
    this.windowMs = record.windowMs;
    /**
     * The policy's name in the draft-8 `RateLimit` fields, spelled as
     * express-rate-limit's default identifier: `'10-in-1min'`.
     * @readonly
     */
    this.policyName = record.policyName;
    this.#text = record.text;
  }

  /**
   * The limiter options that enforce this item with `algorithm`
   * (`'slidingWindowCounter'` by default), for a `KeyedLimiter`, a
   * `RedisLimiter` or a composite's part: e.g. `{ algorithm:
   * 'slidingWindowCounter', limit: 10, windowMicros: 60000000n }`. The
   * choice of each algorithm's parameters is the Rust library's
   * (`RateItem::spec`): a burst of `amount` at most, `amount` per window.
   * @param {string} [algorithm='slidingWindowCounter']
   * @returns {import('../composite.js').LimitOptions}
   */
  limitOptions(algorithm) {
    return /** @type {import('../composite.js').LimitOptions} */ (native.httpLimitOptions(this.#text, algorithm));
  }

  /**
   * `'10 per 1 minute'`: text that `parseLimits` reads back as this item.
   * @returns {string}
   */
  toString() {
    return this.#text;
  }

  get [Symbol.toStringTag]() {
    return 'RateItem';
  }

  static {
    itemOf = (record) => new RateItem(CREATE, record);
  }
}

/**
 * Parses limits text into its items, in order. Forms: an amount, `/` or
 * `per`, an optional count of units, and a unit (`second`, `minute`,
 * `hour`, `day`, `month`, `year`; singular or plural, any case); items
 * separated by `;`, `,` or `|`. Several items make a composite: a request
 * must be admitted by each.
 *
 * Bad text throws a `RangeError` with code `ERR_RATEKEEPER_INVALID_ARGUMENT`
 * whose message and `position` (a byte offset into the text's UTF-8) name
 * where it went wrong; a value that is not a string, a `TypeError`.
 *
 * @example
 * const [hourly, daily] = parseLimits('100/hour; 1000/day');
 * hourly.amount;     // 100
 * daily.policyName;  // '1000-in-1day'
 * @param {string} text
 * @returns {RateItem[]}
 */
function parseLimits(text) {
  return native.httpParseLimits(text).map((record) => itemOf(record));
}

module.exports = { RateItem, parseLimits };
