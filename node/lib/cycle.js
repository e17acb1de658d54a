'use strict';
/**
 * `CycleLimiter`: Resilience4j's `AtomicRateLimiter`. `limitForPeriod`
 * permits per cycle of `limitRefreshPeriod`, counted from the limiter's
 * creation; permits a cycle leaves unused carry over, never above
 * `limitForPeriod`. A request the current cycle cannot serve waits for the
 * first cycle by which enough permits will have come, and is reserved only
 * when that wait is at most `timeoutDuration`; otherwise it takes nothing.
 *
 * A class over native functions bound to one limiter
 * (bindings/node/src/cycle.rs): the decisions are the Rust library's. Its
 * waits are timers on the event loop, counted while they run
 * (`metrics().numberOfWaitingThreads`).
 * @module
 */

const native = require('./binding.js');
const { decisionAt } = require('./decision.js');
const { readOptions } = require('./options.js');
const { views } = require('./admission.js');
const { signalOf, sleep } = require('./sleep.js');

/** Where the native calls write their numbers, after the decision record. */
const AFTER = native.layout().decision.size;

/**
 * @typedef {object} CycleLimiterOptions
 * @property {number | bigint} limitForPeriod Permits each cycle brings: an
 *   integer from 1 to 2^31 − 1 (Resilience4j's `int`).
 * @property {number} [limitRefreshPeriodMs] A cycle's length in
 *   milliseconds (whole microseconds are kept): at least 1 µs.
 * @property {number | bigint} [limitRefreshPeriodMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number} [timeoutDurationMs] The longest wait a request may be
 *   given, in milliseconds: 0 or more.
 * @property {number | bigint} [timeoutDurationMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests: its waits advance it instead of waiting.
 */

/**
 * @typedef {object} CycleMetrics What a request for one permit would get
 *   now (Resilience4j's `AtomicRateLimiterMetrics`).
 * @property {number} availablePermissions Permits available in the current
 *   cycle; negative when permits of later cycles are reserved.
 * @property {number} timeToWaitMs How long a request for one permit would
 *   wait, whatever the timeout.
 * @property {number} cycle The current cycle, counted from the limiter's
 *   creation.
 * @property {number} numberOfWaitingThreads Calls of `acquirePermission`
 *   waiting now.
 */

/**
 * Resilience4j's rate limiter.
 *
 * @example
 * const limiter = new CycleLimiter({ limitForPeriod: 10, limitRefreshPeriodMs: 1000, timeoutDurationMs: 500 });
 * if (await limiter.acquirePermission()) callTheService(); // waits up to 500 ms
 */
class CycleLimiter {
  /** @type {import('./binding.js').CycleMethods} */
  #native;
  #f;
  #big;
  #waitsForReal;
  #waiting = 0;

  /**
   * @param {CycleLimiterOptions} options
   */
  constructor(options) {
    const o = readOptions(options, OPTIONS);
    this.#native = native.cycleLimiter(
      o.limitForPeriod,
      o.limitRefreshPeriodMs,
      o.limitRefreshPeriodMicros,
      o.timeoutDurationMs,
      o.timeoutDurationMicros,
      o.clock,
    );
    [this.#f, this.#big] = views(this.#native.scratch);
    this.#waitsForReal = !this.#native.manualClock;
  }

  /**
   * Resilience4j's `acquirePermission(permits)`: takes the permits, waiting
   * until their cycle when they are reserved ahead, and resolves to `true`;
   * or, when the wait would exceed the timeout, takes nothing, waits the
   * timeout as Resilience4j does and resolves to `false`. Never blocks the
   * event loop; `signal` aborts the wait (reserved permits stay taken).
   * @param {number | bigint} [permits=1] An integer, 0 or more.
   * @param {import('./sleep.js').SignalOptions} [options]
   * @returns {Promise<boolean>}
   */
  async acquirePermission(permits = 1, options) {
    const signal = options === undefined ? undefined : signalOf(readOptions(options, ACQUIRE_OPTIONS).signal);
    const acquired = this.#native.acquire(permits);
    const ms = this.#f[AFTER];
    if (ms > 0 && this.#waitsForReal) {
      this.#waiting += 1;
      try {
        await sleep(ms, signal);
      } finally {
        this.#waiting -= 1;
      }
    }
    return acquired;
  }

  /**
   * Takes the permits only if the current cycle has them: no wait, no
   * reservation ahead, whatever the timeout. Synchronous.
   * @param {number | bigint} [permits=1] An integer, 0 or more.
   * @returns {boolean}
   */
  tryAcquirePermission(permits = 1) {
    return this.#native.tryAcquire(permits);
  }

  /**
   * Resilience4j's `reservePermission(permits)`: the milliseconds to wait
   * before acting on the permits now taken (0: at once), or `undefined`
   * when that wait would exceed the timeout (nothing taken). Never waits.
   * @param {number | bigint} [permits=1] An integer, 0 or more.
   * @returns {number | undefined}
   */
  reservePermission(permits = 1) {
    return this.#native.reserve(permits);
  }

  /**
   * `acquirePermission` without the wait: the decision (admitted with the
   * `waitMs` to wait before acting, or refused, taking nothing, with the
   * `retryAfterMs` from which the same request would be reserved).
   * @param {number | bigint} [permits=1] An integer, 0 or more.
   * @returns {import('./decision.js').Decision}
   */
  check(permits = 1) {
    this.#native.check(permits);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * `tryAcquirePermission` answered with its decision.
   * @param {number | bigint} [permits=1] An integer, 0 or more.
   * @returns {import('./decision.js').Decision}
   */
  checkNow(permits = 1) {
    this.#native.checkNow(permits);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * Sets the permits per cycle from the next calculation on
   * (`changeLimitForPeriod`); the current cycle keeps its count.
   * @param {number | bigint} limitForPeriod An integer from 1 to 2^31 − 1.
   */
  changeLimitForPeriod(limitForPeriod) {
    this.#native.changeLimitForPeriod(limitForPeriod);
  }

  /**
   * Sets the timeout for the next requests (`changeTimeoutDuration`);
   * reservations already made stand.
   * @param {number} ms 0 or more.
   */
  changeTimeoutDurationMs(ms) {
    this.#native.changeTimeoutDuration(ms, undefined);
  }

  /**
   * `changeTimeoutDurationMs` in exact microseconds.
   * @param {number | bigint} micros 0 or more.
   */
  changeTimeoutDurationMicros(micros) {
    this.#native.changeTimeoutDuration(undefined, micros);
  }

  /**
   * Takes every permit left in the current cycle at once
   * (`drainPermissions`); returns how many.
   * @returns {number}
   */
  drainPermissions() {
    return this.#native.drain();
  }

  /**
   * What a request for one permit would get now, and how many calls wait.
   * @returns {CycleMetrics}
   */
  metrics() {
    this.#native.metrics();
    const f = this.#f;
    return {
      availablePermissions: f[AFTER],
      timeToWaitMs: f[AFTER + 1],
      cycle: f[AFTER + 2],
      numberOfWaitingThreads: this.#waiting,
    };
  }

  /**
   * Permits each cycle brings.
   * @type {number}
   */
  get limitForPeriod() {
    this.#native.config();
    return this.#f[AFTER];
  }

  /**
   * A cycle's length in milliseconds.
   * @type {number}
   */
  get limitRefreshPeriodMs() {
    this.#native.config();
    return this.#f[AFTER + 1];
  }

  /**
   * The longest wait a request may be given, in milliseconds.
   * @type {number}
   */
  get timeoutDurationMs() {
    this.#native.config();
    return this.#f[AFTER + 2];
  }

  get [Symbol.toStringTag]() {
    return 'CycleLimiter';
  }
}

const OPTIONS = Object.freeze([
  'limitForPeriod',
  'limitRefreshPeriodMs',
  'limitRefreshPeriodMicros',
  'timeoutDurationMs',
  'timeoutDurationMicros',
  'clock',
]);
const ACQUIRE_OPTIONS = Object.freeze(['signal']);

module.exports = { CycleLimiter };
