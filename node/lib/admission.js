'use strict';
/**
 * The admission-style limiters: `TokenBucket`, `Gcra`, `LeakyBucketMeter`,
 * `LeakyBucketQueue`, `FixedWindow`, `SlidingWindow`, `SlidingLog`,
 * `SlidingWindowCounter`, each an `AdmissionLimiter`: `check(cost)` answers
 * with a `Decision`, `tryAcquire(cost)` with a boolean, `peek(cost)` takes
 * nothing.
 *
 * Each class is a thin shell over native functions bound to one limiter
 * (bindings/node/src/admission.rs, one code path for every algorithm):
 * the decisions are the Rust library's, the waiting is a timer.
 *
 * Durations (`periodMs`, `intervalMs`, `windowMs`, and their exact
 * `…Micros` twins) follow the library's one rule for every language: whole
 * microseconds (milliseconds rounded to the nearest) from the option's own
 * lower bound up to 2^63 − 1 µs, about 292,271 years. `NaN`, `Infinity`, a
 * negative value or a longer one is a `RangeError` naming the option, never
 * clamped; only a timeout may be `Infinity` (no deadline).
 * @module
 */

const native = require('./binding.js');
const { Decision, decisionAt } = require('./decision.js');
const { LIMITER: CREATE, noPublicConstructor } = require('./internal.js');
const { readOptions } = require('./options.js');
const { signalOf, sleep } = require('./sleep.js');

/** Each algorithm's option names, from the native module (the one list). */
const KEYS = native.limiterKeys();

/**
 * Builds the native limiter of `algorithm` from `options`.
 * @param {string} algorithm
 * @param {object | undefined} options
 * @returns {import('./binding.js').AdmissionMethods}
 */
function create(algorithm, options) {
  const keys = KEYS[algorithm];
  const o = /** @type {Record<string, unknown>} */ (readOptions(options, [...keys, 'clock']));
  return native.admissionCreate(algorithm, keys.map((k) => o[k]), o.clock);
}

/**
 * Views of a limiter's scratch words (see decision.js).
 * @param {Float64Array} scratch
 * @returns {[Float64Array, BigInt64Array]}
 */
function views(scratch) {
  // One BigInt64Array per limiter, read only for the rare exact words.
  return [scratch, new BigInt64Array(scratch.buffer, scratch.byteOffset, scratch.length)];
}

/**
 * @typedef {object} ClockOption
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock
 *   instead of the monotonic one, for deterministic tests: the limiter reads
 *   it, and its waits advance it instead of waiting.
 */

/**
 * @typedef {object} WaitOptions
 * @property {number} [timeoutMs] The longest the caller will wait, in
 *   milliseconds: a request that cannot be admitted by then is refused at
 *   once, taking nothing. Negative means not at all, `Infinity` without
 *   limit; `NaN` is a `RangeError`. Default: as long as it takes.
 * @property {number | bigint} [timeoutMicros] The same in exact whole
 *   microseconds. Give one or the other.
 * @property {import('./sleep.js').AbortSignalLike} [signal] Aborts the
 *   wait for tokens taken (an `AbortError`); they stay taken — give tokens
 *   back with `reserve` and `Reservation.cancel` instead.
 */

/**
 * What every admission-style limiter does: answer a request of some cost
 * now, admitting it (consuming the cost) or refusing it (consuming
 * nothing). Costs are integers from 0 to 2^63 − 1 (numbers, or bigints
 * beyond 2^53); a cost of 0 is a free look, always admitted. Bad arguments
 * throw a `RangeError` or `TypeError` with a stable `code` and change
 * nothing.
 *
 * The classes below are the algorithms; this one is their common type.
 */
class AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods | import('./binding.js').CompositeMethods} */
  #native;
  /** The hot paths, held directly. */
  #check;
  #checkOne;
  #try;
  #tryOne;
  #f;
  #big;

  /**
   * Use a subclass: `new TokenBucket(options)`, `new Gcra(options)`, …
   * @protected
   * @param {symbol} token
   * @param {import('./binding.js').AdmissionMethods | import('./binding.js').CompositeMethods} methods
   */
  constructor(token, methods) {
    if (token !== CREATE) noPublicConstructor('AdmissionLimiter', 'use an algorithm: new TokenBucket(options), …');
    this.#native = methods;
    this.#check = methods.check;
    this.#checkOne = methods.checkOne;
    this.#try = methods.tryAcquire;
    this.#tryOne = methods.tryAcquireOne;
    [this.#f, this.#big] = views(methods.scratch);
  }

  /**
   * Admits a request of `cost` units now if the limit allows, consuming
   * them, and says so. Never waits. Synchronous.
   * @param {number | bigint} [cost=1]
   * @returns {Decision}
   */
  check(cost) {
    if (cost === undefined) this.#checkOne();
    else this.#check(cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * `check(cost).allowed`, without making a `Decision`: the cheapest call.
   * @param {number | bigint} [cost=1]
   * @returns {boolean}
   */
  tryAcquire(cost) {
    return cost === undefined ? this.#tryOne() : this.#try(cost);
  }

  /**
   * The decision `check(cost)` would make now, consuming nothing.
   * @param {number | bigint} [cost=1]
   * @returns {Decision}
   */
  peek(cost) {
    this.#native.peek(cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * Gives back `cost` units admitted earlier that should not count — a
   * request skipped or failed before doing any work (express-rate-limit's
   * `decrement`) — now. A token bucket gets its tokens back (capped at its
   * burst; while reservations hold it in debt, only what exceeds the
   * debt), GCRA moves its theoretical arrival time back, a meter lowers its
   * level, a fixed window or sliding window counter counts fewer in the
   * current window (nothing once it has rolled), a sliding window takes
   * them off its newest sub-windows, a sliding log drops its newest units,
   * a composite gives back to every part. Never more than a fresh limiter
   * holds. A `LeakyBucketQueue` gives nothing back: it hands out slots,
   * and a refund cannot tell whose it returns.
   * @param {number | bigint} [cost=1]
   * @returns {void}
   */
  refund(cost) {
    this.#native.refund(cost);
  }
}

/**
 * @typedef {object} TokenBucketOptions
 * @property {number} rate Tokens added per second: 0 (never refills),
 *   positive, or `Infinity` (no limit). Not negative, not `NaN`.
 * @property {number | bigint} burst The bucket's size, and how many tokens
 *   it starts with.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * A token bucket with the semantics of Go's `golang.org/x/time/rate`, bit
 * for bit: `burst` tokens, full at creation, refilled at `rate` per
 * second. Besides `check`, it reserves tokens ahead (`reserve`) and waits
 * for them (`wait`).
 *
 * @example
 * const bucket = new TokenBucket({ rate: 10, burst: 20 }); // 10/s, bursts of 20
 * const d = bucket.check();
 * if (!d.allowed) console.log(`retry in ${d.retryAfterMs} ms`);
 * await bucket.wait(5, { timeoutMs: 1_000 }); // a timer, never a blocked event loop
 */
class TokenBucket extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;
  #f;
  #big;
  #waitsForReal;

  /** @param {TokenBucketOptions} options */
  constructor(options) {
    const methods = create('tokenBucket', options);
    super(CREATE, methods);
    this.#native = methods;
    [this.#f, this.#big] = views(methods.scratch);
    this.#waitsForReal = !methods.manualClock;
  }

  /**
   * Go's `ReserveN`: takes `cost` tokens now, possibly from the future. Act
   * after `reservation.delayMs()`, or give them back with
   * `reservation.cancel()`. Refused (`ok` false, nothing taken) when `cost`
   * is above the burst.
   * @param {number | bigint} [cost=1]
   * @returns {Reservation}
   */
  reserve(cost) {
    return reservationOf(this.#native.reserve(cost));
  }

  /**
   * Go's `WaitN` with a deadline: if `cost` tokens can be had within the
   * timeout, takes them and resolves when they are due, with the decision
   * (its `waitMs` is the time waited); otherwise resolves at once with a
   * refusal, taking nothing. Waits on a timer: the event loop is never
   * blocked; `signal` aborts the wait (the tokens stay taken). On a
   * `ManualClock` it advances the clock instead.
   * @param {number | bigint} [cost=1]
   * @param {WaitOptions} [options]
   * @returns {Promise<Decision>}
   */
  async wait(cost, options) {
    const o = readOptions(options, WAIT_OPTIONS);
    const signal = signalOf(o.signal);
    this.#native.wait(cost, o.timeoutMs, o.timeoutMicros);
    const decision = decisionAt(this.#f, this.#big, 0);
    if (decision.allowed && decision.waitMs > 0 && this.#waitsForReal) await sleep(decision.waitMs, signal);
    return decision;
  }

  /**
   * Tokens per second (Go's `Limit`/`SetLimit`): setting it refills up to
   * now at the old rate first.
   * @type {number}
   */
  get rate() {
    return this.#native.rate();
  }

  set rate(rate) {
    this.#native.setRate(rate);
  }

  /**
   * The bucket's size (Go's `Burst`/`SetBurst`). Set it with a number or a
   * bigint.
   * @type {number}
   */
  get burst() {
    return this.#native.burst();
  }

  /** @param {number | bigint} burst */
  set burst(burst) {
    this.#native.setBurst(burst);
  }

  /**
   * Go's `Tokens()`: the tokens available now (negative while
   * reservations are outstanding).
   * @returns {number}
   */
  tokens() {
    return this.#native.tokens();
  }

  get [Symbol.toStringTag]() {
    return 'TokenBucket';
  }
}

const WAIT_OPTIONS = Object.freeze(['timeoutMs', 'timeoutMicros', 'signal']);
const SIGNAL_OPTIONS = Object.freeze(['signal']);

/**
 * A `Reservation` of these native functions (set by its static block,
 * which may call its private constructor).
 * @type {(methods: import('./binding.js').ReservationMethods) => Reservation}
 */
let reservationOf;

/**
 * Tokens a `TokenBucket` reserved (Go's `Reservation`).
 */
class Reservation {
  /** @type {import('./binding.js').ReservationMethods} */
  #native;

  /**
   * Use `TokenBucket.reserve`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').ReservationMethods} methods
   */
  constructor(token, methods) {
    if (token !== CREATE) noPublicConstructor('Reservation', 'use TokenBucket.reserve(cost)');
    this.#native = methods;
    /**
     * Whether the tokens were granted (Go's `OK()`). A refused
     * reservation took nothing.
     * @readonly
     * @type {boolean}
     */
    this.ok = methods.ok;
  }

  static {
    reservationOf = (methods) => new Reservation(CREATE, methods);
  }

  /**
   * Milliseconds from now until the holder may act (0: now; `Infinity`
   * when refused). Go's `Delay()`.
   * @returns {number}
   */
  delayMs() {
    return this.#native.delay();
  }

  /**
   * `delayMs()` in exact microseconds, rounded up (`NEVER` when refused).
   * @returns {bigint}
   */
  delayMicros() {
    return this.#native.delayMicros();
  }

  /**
   * Gives the tokens back, as Go's `Cancel()` does, unless the time to act
   * has passed. Cancelling twice does nothing the second time.
   */
  cancel() {
    this.#native.cancel();
  }

  /**
   * The tokens this reservation holds (0 when refused or cancelled).
   * @type {number}
   */
  get tokens() {
    return this.#native.tokens();
  }

  get [Symbol.toStringTag]() {
    return 'Reservation';
  }
}

/**
 * @typedef {object} GcraOptions
 * @property {number | bigint} maxBurst redis-cell's `max_burst`: the limit
 *   is `maxBurst + 1` units at once.
 * @property {number | bigint} countPerPeriod Units per period, at least 1.
 * @property {number} [periodMs] The period in milliseconds (rounded to
 *   whole microseconds; at least 1 µs).
 * @property {number | bigint} [periodMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * GCRA, the generic cell rate algorithm, with redis-cell's `CL.THROTTLE`
 * reply: one timestamp of state, `countPerPeriod` units per period, and
 * `maxBurst + 1` at once.
 *
 * @example
 * // CL.THROTTLE key 15 30 60: 30 per minute, 16 at once
 * const gcra = new Gcra({ maxBurst: 15, countPerPeriod: 30, periodMs: 60_000 });
 * const d = gcra.check();
 */
class Gcra extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** @param {GcraOptions} options */
  constructor(options) {
    const methods = create('gcra', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * redis-cell's limit: `maxBurst + 1`.
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  get [Symbol.toStringTag]() {
    return 'Gcra';
  }
}

/**
 * @typedef {object} LeakyBucketMeterOptions
 * @property {number | bigint} capacity The bucket's size in units, at least 1.
 * @property {number | bigint} countPerPeriod Units that leak per period, at least 1.
 * @property {number} [periodMs] The period in milliseconds.
 * @property {number | bigint} [periodMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * The leaky bucket as a meter (ITU-T I.371's continuous-state leaky
 * bucket): `capacity` units that leak `countPerPeriod` per period; a
 * request that would overflow is refused, consuming nothing.
 */
class LeakyBucketMeter extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** @param {LeakyBucketMeterOptions} options */
  constructor(options) {
    const methods = create('leakyBucketMeter', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * The water level now, in whole units.
   * @returns {number}
   */
  level() {
    return this.#native.level();
  }

  get [Symbol.toStringTag]() {
    return 'LeakyBucketMeter';
  }
}

/**
 * @typedef {object} LeakyBucketQueueOptions
 * @property {number | bigint} capacity How many units may wait for their
 *   slot (0: none, each request must find the queue empty).
 * @property {number} [intervalMs] The spacing of slots in milliseconds.
 * @property {number | bigint} [intervalMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number | bigint} [slack] How many slots left unused while
 *   idle may be handed out late (uber-go/ratelimit's `WithSlack`): after a
 *   pause, up to `slack + 1` requests go at once. None are saved before
 *   the first request. 0 when left out.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * The leaky bucket as a queue (a shaper): one unit leaves every interval;
 * each admitted request gets the next free slot — `check`'s decision says
 * how long to wait for it (`waitMs`), `acquire` waits — and a request
 * whose slot lies more than `capacity` units away is refused.
 */
class LeakyBucketQueue extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;
  #f;
  #big;
  #waitsForReal;

  /** @param {LeakyBucketQueueOptions} options */
  constructor(options) {
    const methods = create('leakyBucketQueue', options);
    super(CREATE, methods);
    this.#native = methods;
    [this.#f, this.#big] = views(methods.scratch);
    this.#waitsForReal = !methods.manualClock;
  }

  /**
   * Takes a slot for `cost` units and resolves when it comes, with the
   * decision (its `waitMs` is the time waited); a refusal resolves at once,
   * taking nothing. Waits on a timer: the event loop is never blocked;
   * `signal` aborts the wait (the slot stays taken: the queue's later
   * slots are already counted from it). The queue's capacity bounds every
   * wait, so there is no timeout. On a `ManualClock` it advances the clock
   * instead.
   * @param {number | bigint} [cost=1]
   * @param {import('./sleep.js').SignalOptions} [options]
   * @returns {Promise<Decision>}
   */
  async acquire(cost, options) {
    const signal = options === undefined ? undefined : signalOf(readOptions(options, SIGNAL_OPTIONS).signal);
    this.#native.acquire(cost);
    const decision = decisionAt(this.#f, this.#big, 0);
    if (decision.allowed && decision.waitMs > 0 && this.#waitsForReal) await sleep(decision.waitMs, signal);
    return decision;
  }

  get [Symbol.toStringTag]() {
    return 'LeakyBucketQueue';
  }
}

/**
 * @typedef {object} WindowOptions
 * @property {number | bigint} limit Units per window, at least 1.
 * @property {number} [windowMs] The window in milliseconds.
 * @property {number | bigint} [windowMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * At most `limit` units per fixed window, windows aligned to the limiter's
 * creation. The cheapest; worst case `2 × limit` across a boundary.
 */
class FixedWindow extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** @param {WindowOptions} options */
  constructor(options) {
    const methods = create('fixedWindow', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * Units per window. Setting it (a number or a bigint) keeps what the
   * window has counted: a lower limit refuses until the count is under it,
   * a higher one admits the difference at once. A bad limit throws a
   * `RangeError` or `TypeError` and changes nothing.
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  /** @param {number | bigint} limit */
  set limit(limit) {
    this.#native.setLimit(limit);
  }

  get [Symbol.toStringTag]() {
    return 'FixedWindow';
  }
}

/**
 * @typedef {object} SlidingWindowOptions
 * @property {number | bigint} limit Units per window, at least 1 (at most 2^32 − 1).
 * @property {number} [windowMs] The window in milliseconds.
 * @property {number | bigint} [windowMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number | bigint} [subWindows] Sub-windows per window: 1 to 16,
 *   dividing the window in whole microseconds; 10 when left out.
 * @property {import('./binding.js').ManualClock} [clock] See `ClockOption`.
 */

/**
 * At most `limit` units in the last `subWindows` sub-windows (a ring of
 * counters: the window slides a sub-window at a time).
 */
class SlidingWindow extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** @param {SlidingWindowOptions} options */
  constructor(options) {
    const methods = create('slidingWindow', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * Units per window; setting it keeps what the window has counted, as
   * `FixedWindow`'s `limit` does (at most 2^32 − 1 here).
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  /** @param {number | bigint} limit */
  set limit(limit) {
    this.#native.setLimit(limit);
  }

  get [Symbol.toStringTag]() {
    return 'SlidingWindow';
  }
}

/**
 * Exactly `limit` units in any window: the sliding log. Its memory grows
 * with the limit (16 bytes a unit, allocated up front), so `limit` is at
 * most `SlidingLog.MAX_LIMIT` (2^20).
 */
class SlidingLog extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** The largest `limit`. */
  static MAX_LIMIT = native.MAX_SLIDING_LOG_LIMIT;

  /** @param {WindowOptions} options */
  constructor(options) {
    const methods = create('slidingLog', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * Units per window; setting it keeps what the window has counted, as
   * `FixedWindow`'s `limit` does (at most `SlidingLog.MAX_LIMIT`).
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  /** @param {number | bigint} limit */
  set limit(limit) {
    this.#native.setLimit(limit);
  }

  get [Symbol.toStringTag]() {
    return 'SlidingLog';
  }
}

/**
 * About `limit` units per sliding window: the weighted two-window
 * approximation (two counters).
 */
class SlidingWindowCounter extends AdmissionLimiter {
  /** @type {import('./binding.js').AdmissionMethods} */
  #native;

  /** @param {WindowOptions} options */
  constructor(options) {
    const methods = create('slidingWindowCounter', options);
    super(CREATE, methods);
    this.#native = methods;
  }

  /**
   * Units per window; setting it keeps both counts, as `FixedWindow`'s
   * `limit` keeps its count.
   * @type {number}
   */
  get limit() {
    return this.#native.limit();
  }

  /** @param {number | bigint} limit */
  set limit(limit) {
    this.#native.setLimit(limit);
  }

  get [Symbol.toStringTag]() {
    return 'SlidingWindowCounter';
  }
}

module.exports = {
  AdmissionLimiter,
  TokenBucket,
  Reservation,
  Gcra,
  LeakyBucketMeter,
  LeakyBucketQueue,
  FixedWindow,
  SlidingWindow,
  SlidingLog,
  SlidingWindowCounter,
  Decision,
  views,
};
