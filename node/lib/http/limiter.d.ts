export type HttpLimiterOptions = {
    /**
     * Each item's algorithm:
     * `'slidingWindowCounter'` (the default, like the moving window of the
     * `limits` library), `'fixedWindow'`, `'slidingWindow'`, `'slidingLog'`,
     * `'gcra'`, `'tokenBucket'`, `'leakyBucketMeter'` or
     * `'leakyBucketQueue'`; each admits bursts of at most the item's amount
     * (`RateItem.limitOptions`).
     */
    algorithm?: string | undefined;
    /**
     * The most keys (clients) held at
     * once: memory stays bounded whatever keys arrive. Default 100,000.
     */
    maxKeys?: number | bigint | undefined;
    /**
     * At the bound:
     * `refuseNewKeys` (the default) or `evictSoonestFull`.
     */
    whenFull?: import("../keyed.js").WhenFull | undefined;
    /**
     * The longest key, in bytes
     * (default 256).
     */
    maxKeyBytes?: number | bigint | undefined;
    /**
     * For tests.
     */
    clock?: native.ManualClock | undefined;
};
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
export class HttpLimiter {
    /**
     * @param {string} limits Limits text (see `parseLimits`).
     * @param {HttpLimiterOptions} [options]
     */
    constructor(limits: string, options?: HttpLimiterOptions);
    /**
     * Admits `cost` units for `key` in every item, or in none, now; the
     * combined decision.
     * @param {import('../keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('../decision.js').Decision}
     */
    check(key: import("../keyed.js").Key, cost?: number | bigint): import("../decision.js").Decision;
    /**
     * `check(key, cost)`, with each item's decision too, in the order of the
     * text.
     * @param {import('../keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {{ decision: import('../decision.js').Decision, parts: import('../decision.js').Decision[] }}
     */
    checkEach(key: import("../keyed.js").Key, cost?: number | bigint): {
        decision: import("../decision.js").Decision;
        parts: import("../decision.js").Decision[];
    };
    /**
     * The decisions `checkEach(key, cost)` would make now, consuming nothing
     * and creating no key.
     * @param {import('../keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {{ decision: import('../decision.js').Decision, parts: import('../decision.js').Decision[] }}
     */
    peekEach(key: import("../keyed.js").Key, cost?: number | bigint): {
        decision: import("../decision.js").Decision;
        parts: import("../decision.js").Decision[];
    };
    /**
     * The combined decision `check(key, cost)` would make now, consuming
     * nothing.
     * @param {import('../keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('../decision.js').Decision}
     */
    peek(key: import("../keyed.js").Key, cost?: number | bigint): import("../decision.js").Decision;
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
    refund(key: import("../keyed.js").Key, cost?: number | bigint): boolean;
    /**
     * Forgets `key` in every item (it starts afresh if it comes back).
     * Whether it was held.
     * @param {import('../keyed.js').Key} key
     * @returns {boolean}
     */
    remove(key: import("../keyed.js").Key): boolean;
    /**
     * The items, in the order of the text.
     * @type {import('./limits.js').RateItem[]}
     */
    get items(): import("./limits.js").RateItem[];
    /**
     * Each item's policy name (`'10-in-1min'`), as the `RateLimit` fields
     * name it.
     * @type {string[]}
     */
    get policyNames(): string[];
    /**
     * The algorithm of each item's limiter.
     * @type {string}
     */
    get algorithm(): string;
    /**
     * How many keys are held.
     * @type {number}
     */
    get size(): number;
    /**
     * The bound on `size`.
     * @type {number}
     */
    get maxKeys(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
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
export let methodsOf: (limiter: HttpLimiter) => import("../binding.js").HttpLimiterMethods;
import native = require("../binding.js");
