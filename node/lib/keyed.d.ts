/**
 * What a keyed
 *   limiter does when a new key arrives and it holds `maxKeys` keys, none of
 *   them full: `refuseNewKeys` (the default) refuses the new key's request
 *   and never over-admits; `evictSoonestFull` forgets the sampled key that
 *   would be full soonest and admits the new one — that key, when it
 *   returns, starts afresh, so it may get up to one whole limit more than
 *   its algorithm allows, once per eviction.
 */
export type WhenFull = "refuseNewKeys" | "evictSoonestFull";
export type KeyedOptions = {
    /**
     * The most keys held at once (1 to
     * 2^40): memory stays bounded whatever keys arrive.
     */
    maxKeys: number | bigint;
    /**
     * What to do at the bound (default
     * `refuseNewKeys`).
     */
    whenFull?: WhenFull | undefined;
    /**
     * The longest key taken, in bytes
     * (1 to 65536, default 256): a longer one throws a `RangeError` naming
     * `key` and stores nothing, so the memory held is bounded (`maxBytes`).
     */
    maxKeyBytes?: number | bigint | undefined;
    /**
     * Run on this clock
     * instead of the monotonic one, for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
/**
 * A key: a string (its UTF-8 bytes) or a
 *   `Uint8Array`/`Buffer` (its bytes). The string `'é'` and
 *   `Buffer.from('é')` are the same key. A string with a lone surrogate
 *   (`'\ud800'`) has no UTF-8 and throws a `RangeError` naming `key`.
 */
export type Key = string | Uint8Array;
/**
 * @typedef {'refuseNewKeys' | 'evictSoonestFull'} WhenFull What a keyed
 *   limiter does when a new key arrives and it holds `maxKeys` keys, none of
 *   them full: `refuseNewKeys` (the default) refuses the new key's request
 *   and never over-admits; `evictSoonestFull` forgets the sampled key that
 *   would be full soonest and admits the new one — that key, when it
 *   returns, starts afresh, so it may get up to one whole limit more than
 *   its algorithm allows, once per eviction.
 */
/**
 * @typedef {object} KeyedOptions
 * @property {number | bigint} maxKeys The most keys held at once (1 to
 *   2^40): memory stays bounded whatever keys arrive.
 * @property {WhenFull} [whenFull] What to do at the bound (default
 *   `refuseNewKeys`).
 * @property {number | bigint} [maxKeyBytes] The longest key taken, in bytes
 *   (1 to 65536, default 256): a longer one throws a `RangeError` naming
 *   `key` and stores nothing, so the memory held is bounded (`maxBytes`).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock
 *   instead of the monotonic one, for deterministic tests.
 */
/**
 * @typedef {string | Uint8Array} Key A key: a string (its UTF-8 bytes) or a
 *   `Uint8Array`/`Buffer` (its bytes). The string `'é'` and
 *   `Buffer.from('é')` are the same key. A string with a lone surrogate
 *   (`'\ud800'`) has no UTF-8 and throws a `RangeError` naming `key`.
 */
/**
 * One limiter per key, made on first use from `limit`. Each key is decided
 * exactly as a limiter of its own would be (`check` answers with a
 * `Decision`, a refusal consumes nothing). At most `maxKeys` keys are held;
 * a key is dropped only when its state is back to full —
 * indistinguishable from a fresh one, so dropping it changes no decision.
 * When the bound is reached and no key can go, `whenFull` decides.
 *
 * @example
 * // Per user: 30 a minute, 16 at once; at most 100,000 users held.
 * const perUser = new KeyedLimiter(
 *   { algorithm: 'gcra', maxBurst: 15, countPerPeriod: 30, periodMs: 60_000 },
 *   { maxKeys: 100_000 },
 * );
 * const d = perUser.check(`user:${id}`);
 * if (!d.allowed) res.writeHead(429, d.headers('per-user'));
 */
export class KeyedLimiter {
    /**
     * @param {import('./composite.js').LimitOptions} limit Each key's limit:
     *   an algorithm's name and its options, as a composite's part.
     * @param {KeyedOptions} options
     */
    constructor(limit: import("./composite.js").LimitOptions, options: KeyedOptions);
    /**
     * Admits a request of `cost` units for `key` now if its limit allows,
     * consuming them, and says so. Never waits. Synchronous. A new key's
     * request refused at the bound is a refusal too (`remaining` 0,
     * `retryAfterMs` until a key can go); `tryCheck` tells it apart.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    check(key: import("./keyed.js").Key, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * `check(key, cost).allowed`, without making a `Decision`: the cheapest
     * call.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {boolean}
     */
    tryAcquire(key: import("./keyed.js").Key, cost?: number | bigint): boolean;
    /**
     * `check(key, cost)`, except that a new key's request refused at the
     * bound throws an `Error` with code `ERR_RATEKEEPER_AT_CAPACITY`, whose
     * `decision` is the refusal `check` would have returned.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    tryCheck(key: import("./keyed.js").Key, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * The decision `check(key, cost)` would make now, consuming nothing and
     * creating no key.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    peek(key: import("./keyed.js").Key, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * `peek(key, cost)`, throwing `ERR_RATEKEEPER_AT_CAPACITY` as `tryCheck`
     * does when a new key could not be held.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    tryPeek(key: import("./keyed.js").Key, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * Gives back `cost` units admitted for `key` that should not count — a
     * request skipped or failed (express-rate-limit's `decrement`) — now, as
     * `refund` of the key's own limiter would (see `AdmissionLimiter`).
     * Whether the key was held: a key not held is fresh, with nothing to
     * give back, and a refund creates no key.
     * @param {import('./keyed.js').Key} key
     * @param {number | bigint} [cost=1]
     * @returns {boolean}
     */
    refund(key: import("./keyed.js").Key, cost?: number | bigint): boolean;
    /**
     * Forgets `key` (it starts afresh if it comes back). Whether it was held.
     * @param {import('./keyed.js').Key} key
     * @returns {boolean}
     */
    remove(key: import("./keyed.js").Key): boolean;
    /**
     * Drops every key whose state is full now (which changes no decision);
     * how many. The limiter also does this by itself when it needs room.
     * @returns {number}
     */
    evictFull(): number;
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
    /**
     * The longest key taken, in bytes.
     * @type {number}
     */
    get maxKeyBytes(): number;
    /**
     * The most bytes the limiter can ever hold: `maxKeys` keys of
     * `maxKeyBytes`, each state at its largest, and the tables.
     * @type {number}
     */
    get maxBytes(): number;
    /**
     * The policy at the bound.
     * @type {WhenFull}
     */
    get whenFull(): WhenFull;
    /**
     * The algorithm of each key's limiter (`'gcra'`, `'tokenBucket'`, …).
     * @type {string}
     */
    get algorithm(): string;
    /**
     * New keys' requests refused at the bound so far (`refuseNewKeys`).
     * @type {number}
     */
    get refusedNewKeys(): number;
    /**
     * Keys forgotten to make room for new ones so far (`evictSoonestFull`):
     * each may have been over-admitted by up to one limit.
     * @type {number}
     */
    get forcedEvictions(): number;
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
