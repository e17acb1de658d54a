export type RatekeeperStoreOptions = {
    /**
     * Limits text (`'100/15 minutes'`). The default
     * is express-rate-limit's own `limit` per `windowMs` (given to `init`),
     * which must then be a number, and `windowMs` whole seconds.
     */
    limit?: string | undefined;
    /**
     * `'slidingWindowCounter'` by default (see
     * `HttpLimiter`): express-rate-limit's memory store is a fixed window,
     * `'fixedWindow'` here.
     */
    algorithm?: string | undefined;
    /**
     * The most clients held at once, in
     * this process (default 100,000).
     */
    maxKeys?: number | bigint | undefined;
    whenFull?: import("../keyed.js").WhenFull | undefined;
    maxKeyBytes?: number | bigint | undefined;
    /**
     * For tests.
     */
    clock?: native.ManualClock | undefined;
    /**
     * Count in Redis,
     * shared by every process with the same Redis and `name` (one atomic
     * round trip per request; several items of limits are one
     * `RedisCompositeLimiter`, all or nothing).
     */
    redis?: RedisStore | undefined;
    /**
     * With `redis`: the limiter's name there (and
     * this store's `prefix`). The default names the limit and the algorithm.
     */
    name?: string | undefined;
    /**
     * A
     * keyed limiter of your own instead (`HttpLimiter`, `KeyedLimiter`,
     * `RedisLimiter`).
     */
    limiter?: {
        check(key: string, cost?: number): unknown;
    } | undefined;
};
/**
 * What express-rate-limit reads back.
 */
export type ClientRateLimitInfo = {
    totalHits: number;
    resetTime: Date | undefined;
};
export type KeyedLike = {
    check(key: string, cost?: number): import("../decision.js").Decision | Promise<import("../decision.js").Decision>;
    peek(key: string, cost?: number): import("../decision.js").Decision | Promise<import("../decision.js").Decision>;
    remove(key: string): boolean | Promise<boolean>;
    refund?(key: string, cost?: number): unknown;
    close?(): void;
};
/**
 * @typedef {{
 *   check(key: string, cost?: number): import('../decision.js').Decision | Promise<import('../decision.js').Decision>,
 *   peek(key: string, cost?: number): import('../decision.js').Decision | Promise<import('../decision.js').Decision>,
 *   remove(key: string): boolean | Promise<boolean>,
 *   refund?(key: string, cost?: number): unknown,
 *   close?(): void,
 * }} KeyedLike
 */
/**
 * express-rate-limit's store on a ratekeeper limiter. Each request is one
 * decision of the limiter: `increment` answers with `totalHits` — the units
 * the client has used (`limit − remaining` of the decision), or `limit + 1`
 * when the limiter refused, so that express-rate-limit refuses too — and
 * `resetTime` (when the limit is whole again, or for a refusal when a retry
 * can be admitted). A refused request consumes nothing (express-rate-limit's
 * memory store counts it). Keep express-rate-limit's `limit` equal to the
 * store's.
 *
 * @example
 * const { rateLimit } = require('express-rate-limit');
 * const { RatekeeperStore } = require('ratekeeper');
 * app.use(rateLimit({ windowMs: 60_000, limit: 100, store: new RatekeeperStore({ algorithm: 'gcra' }) }));
 */
export class RatekeeperStore {
    /**
     * @param {RatekeeperStoreOptions} [options]
     */
    constructor(options?: RatekeeperStoreOptions);
    /**
     * Whether the keys live in this process (express-rate-limit's
     * `localKeys`): false with `redis`.
     * @type {boolean}
     */
    localKeys: boolean;
    /**
     * With `redis`: the limiter's name in Redis (set by `init`).
     * @type {string | undefined}
     */
    prefix: string | undefined;
    /**
     * Called by express-rate-limit with its options: makes the limiter from
     * them unless the store was given `limit` or `limiter`.
     * @param {{ limit?: unknown, windowMs?: unknown }} options
     */
    init(options: {
        limit?: unknown;
        windowMs?: unknown;
    }): void;
    /**
     * One request of `key`: its decision, as express-rate-limit reads it.
     * @param {string} key
     * @returns {Promise<ClientRateLimitInfo>}
     */
    increment(key: string): Promise<ClientRateLimitInfo>;
    /**
     * Gives back the unit `key`'s request took, with the limiter's `refund`
     * (express-rate-limit's `skipSuccessfulRequests` and
     * `skipFailedRequests`), in this process or in Redis. A limiter of your
     * own without `refund` rejects with a `TypeError`, which
     * express-rate-limit logs: the request stays counted.
     * @param {string} key
     * @returns {Promise<void>}
     */
    decrement(key: string): Promise<void>;
    /**
     * Forgets `key`: its next request starts with the whole limit.
     * @param {string} key
     * @returns {Promise<void>}
     */
    resetKey(key: string): Promise<void>;
    /**
     * `key`'s hits and reset time now, consuming nothing; `undefined` when
     * it has used nothing (as express-rate-limit's stores answer for an
     * unknown client).
     * @param {string} key
     * @returns {Promise<ClientRateLimitInfo | undefined>}
     */
    get(key: string): Promise<ClientRateLimitInfo | undefined>;
    /**
     * Forgets every key, by making the limiter anew. Only for a store that
     * made its own limiter in this process: with `redis` or a `limiter` of
     * your own it throws a `TypeError` (remove keys with `resetKey`).
     */
    resetAll(): void;
    /** Releases a Redis limiter this store made. */
    shutdown(): void;
    #private;
}
import native = require("../binding.js");
import { RedisStore } from "../redis.js";
