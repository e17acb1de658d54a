'use strict';
/**
 * `KeyedLimiter`: one admission-style limiter per key — per user, per user
 * and action, per IP address — each made on first use, all on one clock, in
 * bounded memory. A thin shell over native functions bound to one
 * `ratekeeper::AnyKeyedLimiter` (bindings/node/src/keyed.rs).
 * @module
 */

const native = require('./binding.js');
const { views } = require('./admission.js');
const { decisionAt } = require('./decision.js');
const { readOptions } = require('./options.js');

const OPTIONS = Object.freeze(['maxKeys', 'whenFull', 'maxKeyBytes', 'clock']);
const AT_CAPACITY = native.errorCodes().atCapacity;

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
class KeyedLimiter {
  /** @type {import('./binding.js').KeyedMethods} */
  #native;
  /** The hot paths, held directly. */
  #check;
  #try;
  #f;
  #big;

  /**
   * @param {import('./composite.js').LimitOptions} limit Each key's limit:
   *   an algorithm's name and its options, as a composite's part.
   * @param {KeyedOptions} options
   */
  constructor(limit, options) {
    const o = readOptions(options, OPTIONS);
    const methods = native.keyedCreate(limit, o.maxKeys, o.whenFull, o.maxKeyBytes, o.clock);
    this.#native = methods;
    this.#check = methods.check;
    this.#try = methods.tryAcquire;
    [this.#f, this.#big] = views(methods.scratch);
  }

  /**
   * Admits a request of `cost` units for `key` now if its limit allows,
   * consuming them, and says so. Never waits. Synchronous. A new key's
   * request refused at the bound is a refusal too (`remaining` 0,
   * `retryAfterMs` until a key can go); `tryCheck` tells it apart.
   * @param {import('./keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  check(key, cost) {
    this.#check(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * `check(key, cost).allowed`, without making a `Decision`: the cheapest
   * call.
   * @param {import('./keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {boolean}
   */
  tryAcquire(key, cost) {
    return this.#try(key, cost);
  }

  /**
   * `check(key, cost)`, except that a new key's request refused at the
   * bound throws an `Error` with code `ERR_RATEKEEPER_AT_CAPACITY`, whose
   * `decision` is the refusal `check` would have returned.
   * @param {import('./keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  tryCheck(key, cost) {
    return this.#decide(this.#native.tryCheck, key, cost);
  }

  /**
   * The decision `check(key, cost)` would make now, consuming nothing and
   * creating no key.
   * @param {import('./keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  peek(key, cost) {
    this.#native.peek(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * `peek(key, cost)`, throwing `ERR_RATEKEEPER_AT_CAPACITY` as `tryCheck`
   * does when a new key could not be held.
   * @param {import('./keyed.js').Key} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  tryPeek(key, cost) {
    return this.#decide(this.#native.tryPeek, key, cost);
  }

  /**
   * @param {(key: Key, cost?: number | bigint) => boolean} decide
   * @param {Key} key
   * @param {number | bigint | undefined} cost
   * @returns {import('./decision.js').Decision}
   */
  #decide(decide, key, cost) {
    try {
      decide(key, cost);
    } catch (error) {
      if (/** @type {{ code?: unknown }} */ (error)?.code === AT_CAPACITY) {
        Object.defineProperty(error, 'decision', { value: decisionAt(this.#f, this.#big, 0), enumerable: true });
      }
      throw error;
    }
    return decisionAt(this.#f, this.#big, 0);
  }

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
  refund(key, cost) {
    return this.#native.refund(key, cost);
  }

  /**
   * Forgets `key` (it starts afresh if it comes back). Whether it was held.
   * @param {import('./keyed.js').Key} key
   * @returns {boolean}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * Drops every key whose state is full now (which changes no decision);
   * how many. The limiter also does this by itself when it needs room.
   * @returns {number}
   */
  evictFull() {
    return this.#native.evictFull();
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

  /**
   * The longest key taken, in bytes.
   * @type {number}
   */
  get maxKeyBytes() {
    return this.#native.maxKeyBytes;
  }

  /**
   * The most bytes the limiter can ever hold: `maxKeys` keys of
   * `maxKeyBytes`, each state at its largest, and the tables.
   * @type {number}
   */
  get maxBytes() {
    return this.#native.maxBytes;
  }

  /**
   * The policy at the bound.
   * @type {WhenFull}
   */
  get whenFull() {
    return this.#native.whenFull;
  }

  /**
   * The algorithm of each key's limiter (`'gcra'`, `'tokenBucket'`, …).
   * @type {string}
   */
  get algorithm() {
    return this.#native.algorithm;
  }

  /**
   * New keys' requests refused at the bound so far (`refuseNewKeys`).
   * @type {number}
   */
  get refusedNewKeys() {
    return this.#native.refusedNewKeys();
  }

  /**
   * Keys forgotten to make room for new ones so far (`evictSoonestFull`):
   * each may have been over-admitted by up to one limit.
   * @type {number}
   */
  get forcedEvictions() {
    return this.#native.forcedEvictions();
  }

  get [Symbol.toStringTag]() {
    return 'KeyedLimiter';
  }
}

module.exports = { KeyedLimiter };
