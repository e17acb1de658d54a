'use strict';
/**
 * `Decision`: the one answer of every admission-style limiter, and the
 * HTTP fields it becomes (`RateLimit`, `RateLimit-Policy`, `Retry-After`,
 * written by the Rust library: bindings/node/src/headers.rs).
 *
 * A limiter's native call writes its decision into the limiter's scratch
 * words (bindings/node/src/bound.rs, `Scratch`) and returns; `decisionAt`
 * reads them into a `Decision`: one small object per call, no Node-API
 * call per field.
 * @module
 */

const native = require('./binding.js');
const { noPublicConstructor } = require('./internal.js');

/**
 * Where the native calls write each field of a decision, and where they
 * read each field of the records `formatField` takes: laid out once, in
 * bindings/node/src/layout.rs, and read here once, into constants (so
 * that `decisionAt` reads no property for an offset).
 */
const LAYOUT = native.layout();
const {
  allowed: ALLOWED,
  limit: LIMIT,
  remaining: REMAINING,
  retryAfterMs: RETRY_AFTER_MS,
  resetAfterMs: RESET_AFTER_MS,
  waitMs: WAIT_MS,
  windowMs: WINDOW_MS,
  inexact: INEXACT,
  retryAfterMicros: RETRY_AFTER_MICROS,
  resetAfterMicros: RESET_AFTER_MICROS,
  waitMicros: WAIT_MICROS,
  windowMicros: WINDOW_MICROS,
  limitExact: LIMIT_EXACT,
  remainingExact: REMAINING_EXACT,
  size: DECISION_WORDS,
} = LAYOUT.decision;
const RECORD = LAYOUT.record;

/** The HTTP fields `formatField` writes. */
const { rateLimit: RATE_LIMIT, rateLimitPolicy: RATE_LIMIT_POLICY, retryAfter: RETRY_AFTER } = LAYOUT.field;

/**
 * "Never", in exact microseconds: 2^63 − 1, the library's `NEVER`. In
 * milliseconds it is `Infinity`.
 */
const NEVER = 9223372036854775807n;

/** Proves a call of the constructor came from this package. */
const CREATE = Symbol('Decision');

/**
 * The decision record at word `at` of a limiter's scratch words (`f` and
 * `big`: a `Float64Array` and a `BigInt64Array` over them; records are
 * `DECISION_WORDS` apart): how the limiters of this package make
 * decisions. Set by `Decision`'s static block, which may call its private
 * constructor.
 * @type {(f: Float64Array, big: BigInt64Array, at: number) => Decision}
 */
let decisionAt;

/**
 * Decisions as `formatField` takes them: a record of exact integers each.
 * @type {(decisions: Decision[]) => BigInt64Array}
 */
let records;

/**
 * The answer to one request, from any admission-style limiter: whether it
 * was admitted, the quota, what is left of it, when to retry and when the
 * quota is whole again (redis-cell's `CL.THROTTLE` reply and the HTTP
 * `RateLimit` fields). A refusal is a `Decision` too, never an error, and
 * consumed nothing.
 *
 * Durations are milliseconds (`…Ms`, `Infinity` meaning never); the
 * `…Micros` getters give them exactly, in whole microseconds, as bigints
 * (`NEVER` meaning never). Counts are numbers: exact up to 2^53 − 1.
 *
 * @example
 * const d = bucket.check();
 * if (!d.allowed) {
 *   res.writeHead(429, d.headers('api')); // RateLimit-Policy, RateLimit, Retry-After
 * }
 */
class Decision {
  /** The record's words when some milliseconds are not exact (see `decisionAt`). */
  #exact;

  /**
   * Decisions come from limiters only.
   * @private
   * @param {symbol} token
   * @param {boolean} allowed
   * @param {number} limit
   * @param {number} remaining
   * @param {number} retryAfterMs
   * @param {number} resetAfterMs
   * @param {number} waitMs
   * @param {number} windowMs
   * @param {BigInt64Array | undefined} exact
   */
  constructor(token, allowed, limit, remaining, retryAfterMs, resetAfterMs, waitMs, windowMs, exact) {
    if (token !== CREATE) noPublicConstructor('Decision', 'decisions come from limiters: check(), peek()');
    /**
     * Whether the request was admitted (and its cost consumed). A refused
     * request consumed nothing.
     * @readonly
     */
    this.allowed = allowed;
    /**
     * The quota: the most units the limiter admits at once when whole (a
     * token bucket's burst, GCRA's `maxBurst + 1`, a window's limit). The
     * `q` of `RateLimit-Policy`.
     * @readonly
     */
    this.limit = limit;
    /**
     * Units that could still be admitted now, after this decision. The `r`
     * of `RateLimit`.
     * @readonly
     */
    this.remaining = remaining;
    /**
     * Refused: milliseconds until the same request would be admitted
     * (`Infinity` when no wait can admit it: it costs more than `limit`).
     * 0 when admitted.
     * @readonly
     */
    this.retryAfterMs = retryAfterMs;
    /**
     * Milliseconds until the limiter is whole again if nothing else is
     * admitted (`Infinity` when it never refills). The `t` of `RateLimit`.
     * @readonly
     */
    this.resetAfterMs = resetAfterMs;
    /**
     * Admitted: milliseconds to wait before acting on it (the slot a
     * shaper or a reservation gave it); 0 for the algorithms that admit now
     * or refuse.
     * @readonly
     */
    this.waitMs = waitMs;
    /**
     * The time over which `limit` is granted (a window's length, a
     * bucket's time to refill from empty; `Infinity` if it never does). The
     * `w` of `RateLimit-Policy`.
     * @readonly
     */
    this.windowMs = windowMs;
    this.#exact = exact;
  }

  /** `retryAfterMs` in exact microseconds (`NEVER` for never). @type {bigint} */
  get retryAfterMicros() {
    return exactMicros(this.retryAfterMs, this.#exact, RETRY_AFTER_MICROS);
  }

  /** `resetAfterMs` in exact microseconds (`NEVER` for never). @type {bigint} */
  get resetAfterMicros() {
    return exactMicros(this.resetAfterMs, this.#exact, RESET_AFTER_MICROS);
  }

  /** `waitMs` in exact microseconds. @type {bigint} */
  get waitMicros() {
    return exactMicros(this.waitMs, this.#exact, WAIT_MICROS);
  }

  /** `windowMs` in exact microseconds (`NEVER` for never). @type {bigint} */
  get windowMicros() {
    return exactMicros(this.windowMs, this.#exact, WINDOW_MICROS);
  }

  /**
   * Whether no wait can ever admit this request: refused, and it costs
   * more than the limiter can hold.
   * @type {boolean}
   */
  get isNever() {
    return !this.allowed && this.retryAfterMs === Infinity;
  }

  /**
   * The `RateLimit` field for this decision as the policy `name`:
   * `"name";r=REMAINING;t=SECONDS` (draft-ietf-httpapi-ratelimit-headers;
   * seconds rounded up, `t` left out when it never refills).
   * @param {string} [name='default'] Printable ASCII.
   * @returns {string}
   */
  rateLimitHeader(name = 'default') {
    return /** @type {string} */ (native.formatField(RATE_LIMIT, [name], records([this])));
  }

  /**
   * The `RateLimit-Policy` field for this decision's policy `name`:
   * `"name";q=LIMIT;w=SECONDS`.
   * @param {string} [name='default'] Printable ASCII.
   * @returns {string}
   */
  rateLimitPolicyHeader(name = 'default') {
    return /** @type {string} */ (native.formatField(RATE_LIMIT_POLICY, [name], records([this])));
  }

  /**
   * The `Retry-After` field: whole seconds, rounded up, for a refused
   * request that a wait can admit; `undefined` otherwise (send none).
   * @returns {string | undefined}
   */
  retryAfterHeader() {
    return native.formatField(RETRY_AFTER, [], records([this]));
  }

  /**
   * The HTTP fields for this decision as the policy `name`, ready for
   * `res.writeHead(status, headers)` or `res.set(headers)`:
   * `RateLimit-Policy`, `RateLimit`, and `Retry-After` when it has one.
   * @param {string} [name='default'] Printable ASCII.
   * @returns {{ 'RateLimit-Policy': string, 'RateLimit': string, 'Retry-After'?: string }}
   */
  headers(name = 'default') {
    const mine = records([this]);
    /** @type {{ 'RateLimit-Policy': string, 'RateLimit': string, 'Retry-After'?: string }} */
    const fields = {
      'RateLimit-Policy': /** @type {string} */ (native.formatField(RATE_LIMIT_POLICY, [name], mine)),
      RateLimit: /** @type {string} */ (native.formatField(RATE_LIMIT, [name], mine)),
    };
    const retryAfter = native.formatField(RETRY_AFTER, [], mine);
    if (retryAfter !== undefined) fields['Retry-After'] = retryAfter;
    return fields;
  }

  /**
   * The `RateLimit` field for several policies at once (a composite's
   * parts, say), one item per policy in order.
   * @param {Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>} items
   *   `[name, decision]` pairs (an array, a `Map`) or an object of
   *   decisions by name.
   * @returns {string}
   */
  static rateLimitHeader(items) {
    const [names, decisions] = itemsOf(items);
    return /** @type {string} */ (native.formatField(RATE_LIMIT, names, records(decisions)));
  }

  /**
   * The `RateLimit-Policy` field for several policies at once.
   * @param {Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>} items
   * @returns {string}
   */
  static rateLimitPolicyHeader(items) {
    const [names, decisions] = itemsOf(items);
    return /** @type {string} */ (native.formatField(RATE_LIMIT_POLICY, names, records(decisions)));
  }

  get [Symbol.toStringTag]() {
    return 'Decision';
  }

  static {
    decisionAt = (f, big, at) =>
      new Decision(
        CREATE,
        f[at + ALLOWED] !== 0,
        f[at + LIMIT],
        f[at + REMAINING],
        f[at + RETRY_AFTER_MS],
        f[at + RESET_AFTER_MS],
        f[at + WAIT_MS],
        f[at + WINDOW_MS],
        // Only when some milliseconds do not give the microseconds back
        // (beyond ≈ 35 years) or a count is beyond 2^53: rare.
        f[at + INEXACT] !== 0 ? big.slice(at, at + DECISION_WORDS) : undefined,
      );
    records = (decisions) => {
      const out = new BigInt64Array(RECORD.size * decisions.length);
      decisions.forEach((d, i) => {
        const o = RECORD.size * i;
        const exact = d.#exact;
        out[o + RECORD.allowed] = d.allowed ? 1n : 0n;
        out[o + RECORD.limit] = exact === undefined ? BigInt(d.limit) : exact[LIMIT_EXACT];
        out[o + RECORD.remaining] = exact === undefined ? BigInt(d.remaining) : exact[REMAINING_EXACT];
        out[o + RECORD.retryAfterMicros] = d.retryAfterMicros;
        out[o + RECORD.resetAfterMicros] = d.resetAfterMicros;
        out[o + RECORD.waitMicros] = d.waitMicros;
        out[o + RECORD.windowMicros] = d.windowMicros;
      });
      return out;
    };
  }
}

/**
 * Names and decisions from what the static header methods take.
 * @param {unknown} items
 * @returns {[unknown[], Decision[]]}
 */
function itemsOf(items) {
  const expected = 'an iterable of [name, Decision] pairs or an object of Decisions';
  if (typeof items !== 'object' || items === null) native.throwWrongType('items', items, expected);
  const obj = /** @type {object} */ (items);
  const entries = Symbol.iterator in obj ? Array.from(/** @type {Iterable<unknown>} */ (obj)) : Object.entries(obj);
  /** @type {unknown[]} */
  const names = [];
  /** @type {Decision[]} */
  const decisions = [];
  entries.forEach((entry, i) => {
    if (!Array.isArray(entry) || entry.length !== 2) native.throwWrongType(`items[${i}]`, entry, 'a [name, Decision] pair');
    if (!(entry[1] instanceof Decision)) native.throwWrongType(`items[${i}][1]`, entry[1], 'a Decision');
    names.push(entry[0]);
    decisions.push(entry[1]);
  });
  return [names, decisions];
}

/**
 * Exact microseconds: from the milliseconds (which give them back below
 * about 2^50 µs, checked on the Rust side) or, when they do not, from the
 * exact word `word` of the record.
 * @param {number} ms
 * @param {BigInt64Array | undefined} exact
 * @param {number} word
 * @returns {bigint}
 */
function exactMicros(ms, exact, word) {
  if (exact !== undefined) return exact[word];
  return ms === Infinity ? NEVER : BigInt(Math.round(ms * 1000));
}

module.exports = { Decision, NEVER, decisionAt, DECISION_WORDS, records };
