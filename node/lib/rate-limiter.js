'use strict';
/**
 * `RateLimiter`: Guava's `RateLimiter` (`SmoothBursty`, `SmoothWarmingUp`),
 * bit for bit, in JavaScript's idiom.
 *
 * The class is a thin shell over native functions bound to one limiter
 * (lib/binding.js; bindings/node/src/bound.rs says why: they are the
 * cheapest call Node-API has): the decisions are the Rust library's, the
 * waiting is a timer.
 * @module
 */

const native = require('./binding.js');
const { readOptions } = require('./options.js');
const { signalOf, sleep } = require('./sleep.js');

const CREATE_OPTIONS = Object.freeze(['warmupMs', 'warmupMicros', 'coldFactor', 'maxBurstSeconds', 'clock']);
const TIMEOUT_OPTIONS = Object.freeze(['timeoutMs', 'timeoutMicros']);
const ACQUIRE_OPTIONS = Object.freeze(['signal']);
const TRY_ACQUIRE_OPTIONS = Object.freeze(['timeoutMs', 'timeoutMicros', 'signal']);

/** Proves a call of the constructor came from `RateLimiter.create`. */
const CREATE = Symbol('RateLimiter.create');

/**
 * @typedef {object} RateLimiterOptions
 * @property {number} [warmupMs] Makes a warming-up limiter (Guava's
 *   `SmoothWarmingUp`): it starts cold, issuing permits `coldFactor` times
 *   slower, and reaches `permitsPerSecond` after this many milliseconds of
 *   saturated use. Rounded to whole microseconds, from 0 to 2^63 − 1 µs:
 *   `NaN`, `Infinity` or a negative value is a `RangeError`.
 * @property {number | bigint} [warmupMicros] The same in exact whole
 *   microseconds (an integer number or a bigint). Give one or the other.
 * @property {number} [coldFactor] For a warming-up limiter: how many times
 *   slower than the stable rate it runs when cold. At least 1; default 3
 *   (Guava's).
 * @property {number} [maxBurstSeconds] For a bursty limiter (no warm-up):
 *   how many seconds of permits it saves up while idle. Finite and not
 *   negative; default 1 (Guava's).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock
 *   instead of the monotonic one, for deterministic tests: the limiter reads
 *   it, and its waits advance it instead of waiting.
 */

/**
 * @typedef {object} TimeoutOptions
 * @property {number} [timeoutMs] How long the caller is willing to wait, in
 *   milliseconds. Negative means not at all (Guava's rule); `Infinity`
 *   means without limit; `NaN` is a `RangeError`. Default 0.
 * @property {number | bigint} [timeoutMicros] The same in exact whole
 *   microseconds (an integer number or a bigint). Give one or the other.
 */

/**
 * @typedef {TimeoutOptions & import('./sleep.js').SignalOptions} TryAcquireOptions
 *   The timeout decides whether the permits are taken (nothing is taken
 *   when they cannot be had within it); the signal aborts the wait for
 *   permits taken.
 */

/**
 * A rate limiter with the semantics of Guava's `RateLimiter`: permits are
 * issued at a fixed rate, and a request of any size is granted as soon as
 * the limiter is free — the *next* request pays for it ("pre-consuming").
 *
 * Anything that waits returns a Promise and waits on a timer: the event
 * loop is never blocked, and `{ signal }` (an `AbortSignal`) aborts the
 * wait. Bad arguments throw (or reject with) a
 * `RangeError` or `TypeError` with a stable `code` (see `codes`), and change
 * nothing.
 *
 * @example
 * const limiter = RateLimiter.create(5); // 5 permits per second
 * await limiter.acquire(); // resolves when the permit is due
 * if (limiter.tryAcquire()) { ... } // synchronous: take it now or not at all
 * if (await limiter.tryAcquire(1, { timeoutMs: 100 })) { ... }
 * await limiter.acquire(1, { signal: AbortSignal.timeout(5_000) }); // or a request's signal
 */
class RateLimiter {
  /** @type {import('./binding.js').SmoothMethods} */
  #native;
  /** The hot paths, held directly: `#native.tryAcquireOne`, `#native.tryAcquire`. */
  #tryOne;
  #tryNow;
  /** Whether waits are real (false on a `ManualClock`, whose waits advance it). */
  #waitsForReal;

  /**
   * Use `RateLimiter.create`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').SmoothMethods} methods
   */
  constructor(token, methods) {
    if (token !== CREATE) {
      // The one error not made by the native module: there is no argument
      // to blame, only a constructor that is private.
      throw Object.assign(new TypeError('RateLimiter has no public constructor: use RateLimiter.create(permitsPerSecond, options)'), {
        code: native.errorCodes().invalidArgType,
      });
    }
    this.#native = methods;
    this.#tryOne = methods.tryAcquireOne;
    this.#tryNow = methods.tryAcquire;
    this.#waitsForReal = !methods.manualClock;
  }

  /**
   * Creates a limiter issuing `permitsPerSecond` permits per second: Guava's
   * `RateLimiter.create(permitsPerSecond)`, or with `warmupMs` (or
   * `warmupMicros`) `RateLimiter.create(permitsPerSecond, warmupPeriod)`.
   * @param {number} permitsPerSecond Positive; `Infinity` is allowed (no
   *   limit), as in Guava.
   * @param {RateLimiterOptions} [options]
   * @returns {RateLimiter}
   */
  static create(permitsPerSecond, options) {
    const o = readOptions(options, CREATE_OPTIONS);
    const methods = native.smoothCreate(
      permitsPerSecond,
      o.warmupMs,
      o.warmupMicros,
      o.coldFactor,
      o.maxBurstSeconds,
      o.clock,
    );
    return new RateLimiter(CREATE, methods);
  }

  /**
   * Takes `permits`, waiting until they are granted, and resolves to the
   * seconds waited (Guava's `acquire` value, to the microsecond).
   *
   * `signal` aborts the wait (an `AbortError`): the permits are taken when
   * the call starts, as Guava takes them, and an aborted wait keeps them
   * (later requests wait as if it had completed). To wait at most so long
   * and take nothing otherwise, use `tryAcquire(permits, { timeoutMs })`.
   * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
   * @param {import('./sleep.js').SignalOptions} [options]
   * @returns {Promise<number>}
   */
  async acquire(permits = 1, options) {
    const signal = options === undefined ? undefined : signalOf(readOptions(options, ACQUIRE_OPTIONS).signal);
    const seconds = this.#native.acquire(permits);
    if (seconds > 0 && this.#waitsForReal) await sleep(seconds * 1e3, signal);
    return seconds;
  }

  /**
   * Without options: takes `permits` if they are available now and returns
   * `true`, or returns `false` at once, taking nothing. Synchronous.
   *
   * With `{ timeoutMs }` (or `{ timeoutMicros }`): a Promise of the same,
   * where the permits may be waited for up to the timeout (Guava's
   * `tryAcquire(permits, timeout)`): if they cannot be had by then it
   * resolves to `false` at once, taking nothing. `{ signal }` aborts the
   * wait for permits taken, as in `acquire` (they stay taken).
   * @overload
   * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
   * @returns {boolean}
   */
  /**
   * @overload
   * @param {number | bigint | undefined} permits An integer from 1 to 2^31 − 1.
   * @param {TryAcquireOptions} options
   * @returns {Promise<boolean>}
   */
  /**
   * @param {number | bigint} [permits]
   * @param {TryAcquireOptions} [options]
   * @returns {boolean | Promise<boolean>}
   */
  tryAcquire(permits, options) {
    if (options === undefined) return permits === undefined ? this.#tryOne() : this.#tryNow(permits);
    return this.#tryAcquireWithin(permits, options);
  }

  /**
   * @param {number | bigint | undefined} permits
   * @param {TryAcquireOptions} options
   * @returns {Promise<boolean>}
   */
  async #tryAcquireWithin(permits = 1, options) {
    const o = readOptions(options, TRY_ACQUIRE_OPTIONS);
    const signal = signalOf(o.signal);
    const seconds = this.#native.tryAcquireWithin(permits, o.timeoutMs, o.timeoutMicros);
    if (seconds < 0) return false;
    if (seconds > 0 && this.#waitsForReal) await sleep(seconds * 1e3, signal);
    return true;
  }

  /**
   * Whether `tryAcquire(permits, options)` would succeed now; takes nothing.
   * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
   * @param {TimeoutOptions} [options] The timeout to allow (default 0).
   * @returns {boolean}
   */
  canAcquire(permits = 1, options) {
    const o = readOptions(options, TIMEOUT_OPTIONS);
    return this.#native.canAcquire(permits, o.timeoutMs, o.timeoutMicros);
  }

  /**
   * Milliseconds until a request for `permits` would be granted (0 when it
   * would be granted now); takes nothing. Guava grants a request of any
   * size as soon as the limiter is free, so `permits` only gets checked.
   * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
   * @returns {number}
   */
  timeUntilAvailable(permits = 1) {
    return this.#native.timeUntilAvailable(permits);
  }

  /**
   * The stable rate in permits per second (Guava's `getRate`/`setRate`).
   * Setting it keeps the waits already reserved; the next request still
   * pays for the previous one at the old rate.
   * @type {number}
   */
  get rate() {
    return this.#native.rate();
  }

  set rate(permitsPerSecond) {
    this.#native.setRate(permitsPerSecond);
  }

  get [Symbol.toStringTag]() {
    return 'RateLimiter';
  }
}

module.exports = { RateLimiter };
