'use strict';
/**
 * `RatekeeperStore`: a store for express-rate-limit, so that its users keep
 * their middleware and its configuration (`windowMs`, `limit`, handlers,
 * `skipSuccessfulRequests`, …) and count with ratekeeper's algorithms, in
 * this process or shared through Redis. It implements express-rate-limit's
 * documented `Store` interface (`init`, `increment`, `decrement`,
 * `resetKey`, `get`, `resetAll`, `shutdown`, `localKeys`, `prefix`); it
 * needs no express-rate-limit at run time.
 * @module
 */

const native = require('../binding.js');
const { readOptions } = require('../options.js');
const { RedisCompositeLimiter, RedisLimiter, RedisStore } = require('../redis.js');
const { HttpLimiter } = require('./limiter.js');
const { parseLimits } = require('./limits.js');

/**
 * @typedef {object} RatekeeperStoreOptions
 * @property {string} [limit] Limits text (`'100/15 minutes'`). The default
 *   is express-rate-limit's own `limit` per `windowMs` (given to `init`),
 *   which must then be a number, and `windowMs` whole seconds.
 * @property {string} [algorithm] `'slidingWindowCounter'` by default (see
 *   `HttpLimiter`): express-rate-limit's memory store is a fixed window,
 *   `'fixedWindow'` here.
 * @property {number | bigint} [maxKeys] The most clients held at once, in
 *   this process (default 100,000).
 * @property {import('../keyed.js').WhenFull} [whenFull]
 * @property {number | bigint} [maxKeyBytes]
 * @property {import('../binding.js').ManualClock} [clock] For tests.
 * @property {import('../redis.js').RedisStore} [redis] Count in Redis,
 *   shared by every process with the same Redis and `name` (one atomic
 *   round trip per request; several items of limits are one
 *   `RedisCompositeLimiter`, all or nothing).
 * @property {string} [name] With `redis`: the limiter's name there (and
 *   this store's `prefix`). The default names the limit and the algorithm.
 * @property {{ check(key: string, cost?: number): unknown }} [limiter] A
 *   keyed limiter of your own instead (`HttpLimiter`, `KeyedLimiter`,
 *   `RedisLimiter`).
 */

/**
 * @typedef {object} ClientRateLimitInfo What express-rate-limit reads back.
 * @property {number} totalHits
 * @property {Date | undefined} resetTime
 */

const OPTIONS = Object.freeze([
  'limit',
  'algorithm',
  'maxKeys',
  'whenFull',
  'maxKeyBytes',
  'clock',
  'redis',
  'name',
  'limiter',
]);

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
class RatekeeperStore {
  /** @type {KeyedLike | undefined} */
  #limiter;
  /** @type {Partial<RatekeeperStoreOptions>} */
  #options;
  /** Whether this store made its limiter (and so may replace or close it). */
  #owned = false;
  /** The limits text of the limiter it made. */
  #text = '';

  /**
   * @param {RatekeeperStoreOptions} [options]
   */
  constructor(options) {
    this.#options = readOptions(options, OPTIONS);
    const o = this.#options;
    if (o.limiter !== undefined && (o.limit !== undefined || o.redis !== undefined)) {
      native.httpInvalidOption(`options: limiter excludes ${o.limit !== undefined ? 'limit' : 'redis'}`);
    }
    if (o.redis !== undefined && !(o.redis instanceof RedisStore)) native.throwWrongType('redis', o.redis, 'a RedisStore');
    /**
     * Whether the keys live in this process (express-rate-limit's
     * `localKeys`): false with `redis`.
     * @type {boolean}
     */
    this.localKeys = o.redis === undefined;
    /**
     * With `redis`: the limiter's name in Redis (set by `init`).
     * @type {string | undefined}
     */
    this.prefix = undefined;
    if (o.limiter !== undefined) this.#limiter = /** @type {KeyedLike} */ (/** @type {unknown} */ (o.limiter));
    else if (o.limit !== undefined) this.#build(o.limit);
  }

  /**
   * Called by express-rate-limit with its options: makes the limiter from
   * them unless the store was given `limit` or `limiter`.
   * @param {{ limit?: unknown, windowMs?: unknown }} options
   */
  init(options) {
    if (this.#limiter !== undefined) return;
    this.#build(native.httpLimitsOfWindow(options.limit, options.windowMs));
  }

  /**
   * @param {string} text
   */
  #build(text) {
    const o = this.#options;
    this.#owned = true;
    this.#text = text;
    if (o.redis === undefined) {
      this.#limiter = new HttpLimiter(text, {
        algorithm: o.algorithm,
        maxKeys: o.maxKeys,
        whenFull: o.whenFull,
        maxKeyBytes: o.maxKeyBytes,
        clock: o.clock,
      });
      return;
    }
    const items = parseLimits(text);
    const algorithm = o.algorithm ?? 'slidingWindowCounter';
    const name = o.name ?? `erl:${algorithm}:${items.join('; ')}`;
    this.prefix = name;
    const options = { maxKeyBytes: o.maxKeyBytes };
    if (items.length === 1) {
      this.#limiter = /** @type {KeyedLike} */ (
        /** @type {unknown} */ (new RedisLimiter(o.redis, name, items[0].limitOptions(algorithm), options))
      );
      return;
    }
    // Several items: one all-or-nothing decision; express-rate-limit reads
    // the combined one.
    const composite = new RedisCompositeLimiter(o.redis, name, items.map((item) => item.limitOptions(algorithm)), options);
    this.#limiter = {
      check: async (key, cost) => (await composite.check(key, cost)).decision,
      peek: async (key, cost) => (await composite.peek(key, cost)).decision,
      refund: (key, cost) => composite.refund(key, cost),
      remove: (key) => composite.remove(key),
      close: () => composite.close(),
    };
  }

  /** @returns {KeyedLike} */
  #keyed() {
    if (this.#limiter === undefined) {
      native.httpInvalidOption('RatekeeperStore: no limit yet: give it limit or limiter, or let express-rate-limit call init()');
    }
    return /** @type {KeyedLike} */ (this.#limiter);
  }

  /**
   * One request of `key`: its decision, as express-rate-limit reads it.
   * @param {string} key
   * @returns {Promise<ClientRateLimitInfo>}
   */
  async increment(key) {
    return infoOf(await this.#keyed().check(key, 1));
  }

  /**
   * Gives back the unit `key`'s request took, with the limiter's `refund`
   * (express-rate-limit's `skipSuccessfulRequests` and
   * `skipFailedRequests`), in this process or in Redis. A limiter of your
   * own without `refund` rejects with a `TypeError`, which
   * express-rate-limit logs: the request stays counted.
   * @param {string} key
   * @returns {Promise<void>}
   */
  async decrement(key) {
    const limiter = this.#keyed();
    if (typeof limiter.refund !== 'function') native.throwWrongType('limiter', limiter, 'a limiter with refund(key, cost)');
    await limiter.refund(key, 1);
  }

  /**
   * Forgets `key`: its next request starts with the whole limit.
   * @param {string} key
   * @returns {Promise<void>}
   */
  async resetKey(key) {
    await this.#keyed().remove(key);
  }

  /**
   * `key`'s hits and reset time now, consuming nothing; `undefined` when
   * it has used nothing (as express-rate-limit's stores answer for an
   * unknown client).
   * @param {string} key
   * @returns {Promise<ClientRateLimitInfo | undefined>}
   */
  async get(key) {
    const d = await this.#keyed().peek(key, 0);
    const used = d.limit - d.remaining;
    if (used <= 0) return undefined;
    return { totalHits: used, resetTime: dateIn(d.resetAfterMs) };
  }

  /**
   * Forgets every key, by making the limiter anew. Only for a store that
   * made its own limiter in this process: with `redis` or a `limiter` of
   * your own it throws a `TypeError` (remove keys with `resetKey`).
   */
  resetAll() {
    if (!this.#owned || !this.localKeys) {
      native.httpInvalidOption('RatekeeperStore.resetAll: only for a limiter the store made in this process (use resetKey)');
    }
    this.#build(this.#text);
  }

  /** Releases a Redis limiter this store made. */
  shutdown() {
    if (this.#owned && !this.localKeys) this.#limiter?.close?.();
  }
}

/**
 * What express-rate-limit reads of a decision.
 * @param {import('../decision.js').Decision} d
 * @returns {ClientRateLimitInfo}
 */
function infoOf(d) {
  if (d.allowed) return { totalHits: Math.max(1, d.limit - d.remaining), resetTime: dateIn(d.resetAfterMs) };
  return { totalHits: d.limit + 1, resetTime: dateIn(d.retryAfterMs) };
}

/**
 * The date `ms` from now (`undefined` for never).
 * @param {number} ms
 * @returns {Date | undefined}
 */
function dateIn(ms) {
  return ms === Infinity ? undefined : new Date(Date.now() + ms);
}

module.exports = { RatekeeperStore };
