/**
 * A window's unit: a month is 30 days and a year 365, as the `limits`
 * library counts them.
 */
export type TimeUnit = "second" | "minute" | "hour" | "day" | "month" | "year";
/**
 * @typedef {'second' | 'minute' | 'hour' | 'day' | 'month' | 'year'} TimeUnit
 *   A window's unit: a month is 30 days and a year 365, as the `limits`
 *   library counts them.
 */
/**
 * One limit of limits text: `amount` units per `multiples` × `unit`.
 * Made by `parseLimits`.
 */
export class RateItem {
    /**
     * @private
     * @param {symbol} token
     * @param {import('../binding.js').RateItemRecord} record
     */
    private constructor();
    /**
     * Units the window admits (at least 1).
     * @readonly
     */
    readonly amount: number;
    /**
     * How many `unit`s the window lasts: the 2 of `'10/2 minutes'`.
     * @readonly
     */
    readonly multiples: number;
    /**
     * The window's unit.
     * @readonly
     * @type {TimeUnit}
     */
    readonly unit: TimeUnit;
    /**
     * The window in milliseconds.
     * @readonly
     */
    readonly windowMs: number;
    /**
     * The policy's name in the draft-8 `RateLimit` fields, spelled as
     * express-rate-limit's default identifier: `'10-in-1min'`.
     * @readonly
     */
    readonly policyName: string;
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
    limitOptions(algorithm?: string): import("../composite.js").LimitOptions;
    /**
     * `'10 per 1 minute'`: text that `parseLimits` reads back as this item.
     * @returns {string}
     */
    toString(): string;
    get [Symbol.toStringTag](): string;
    #private;
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
export function parseLimits(text: string): RateItem[];
