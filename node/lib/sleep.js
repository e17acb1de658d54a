'use strict';
/**
 * Waiting without blocking: the only way this package waits is a timer,
 * and the only way a wait ends early is its `signal`.
 *
 * Every method that waits for permits takes `{ signal }`, an `AbortSignal`
 * (the platform's convention: `timers/promises`, `fetch`, `events.once`).
 * A signal already aborted rejects the call at once, taking nothing; one
 * aborted during the wait rejects it at once, and what the call reserved
 * before waiting stays reserved — a reservation is never handed back (as
 * Guava's is not, and as Python's cancelled `acquire_async` keeps it). The
 * rejection is the platform's `AbortError`, as Node's own waits make it.
 * @module
 */

const native = require('./binding.js');

/** The longest delay `setTimeout` takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * What the `signal` option takes: an `AbortSignal`, declared by the
 * members this package uses, so that its declarations need neither the DOM
 * library nor Node's own type declarations.
 * @typedef {{
 *   readonly aborted: boolean,
 *   readonly reason?: unknown,
 *   addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void,
 *   removeEventListener(type: 'abort', listener: () => void): void,
 * }} AbortSignalLike
 */

/**
 * @typedef {object} SignalOptions
 * @property {AbortSignalLike} [signal] Aborts the wait: the call rejects
 *   with an `AbortError` (`code` `'ABORT_ERR'`, the signal's `reason` as
 *   `cause`). Aborted before the call, it takes nothing; aborted during the
 *   wait, what was reserved stays reserved.
 */

/**
 * The error an aborted wait rejects with: Node's own waits'
 * (`timers/promises`, `events.once`): an `Error` named `AbortError`,
 * `code` `'ABORT_ERR'`, the signal's `reason` as its `cause`.
 * @param {AbortSignalLike} signal
 * @returns {Error & { code: string }}
 */
function abortError(signal) {
  const error = /** @type {Error & { code: string }} */ (new Error('The operation was aborted', { cause: signal.reason }));
  error.code = 'ABORT_ERR';
  error.name = 'AbortError';
  return error;
}

/**
 * The `signal` option checked: `undefined`, or an `AbortSignal` (else a
 * `TypeError` naming `signal`). Throws the `AbortError` when it is already
 * aborted, before anything is taken.
 * @param {unknown} signal
 * @returns {AbortSignalLike | undefined}
 */
function signalOf(signal) {
  if (signal === undefined) return undefined;
  if (
    typeof signal !== 'object' ||
    signal === null ||
    !('aborted' in signal) ||
    typeof (/** @type {{ addEventListener?: unknown }} */ (signal).addEventListener) !== 'function'
  ) {
    native.throwWrongType('signal', signal, 'an AbortSignal');
  }
  const checked = /** @type {AbortSignalLike} */ (signal);
  if (checked.aborted) throw abortError(checked);
  return checked;
}

/**
 * Resolves after at least `ms` milliseconds, measured on
 * `performance.now()`; any length, in timer-sized steps. With `signal`,
 * rejects with the `AbortError` as soon as it aborts.
 * @param {number} ms
 * @param {AbortSignalLike} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  const deadline = performance.now() + ms;
  return new Promise((resolve, reject) => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const aborted = () => {
      clearTimeout(timer);
      reject(abortError(/** @type {AbortSignalLike} */ (signal)));
    };
    if (signal !== undefined) {
      if (signal.aborted) return aborted();
      signal.addEventListener('abort', aborted, { once: true });
    }
    const step = () => {
      const left = deadline - performance.now();
      if (left <= 0) {
        signal?.removeEventListener('abort', aborted);
        resolve();
      }
      // Whole milliseconds, rounded up: a timer never ends a wait early.
      else timer = setTimeout(step, Math.min(Math.ceil(left), MAX_TIMER_MS));
    };
    step();
  });
}

/**
 * `promise`, unless `signal` aborts first: then the `AbortError` at once
 * (what `promise` does later is ignored). For a round trip to Redis, which
 * cannot be called back once sent.
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignalLike | undefined} signal
 * @returns {Promise<T>}
 */
function unlessAborted(promise, signal) {
  if (signal === undefined) return promise;
  return new Promise((resolve, reject) => {
    const aborted = () => reject(abortError(signal));
    if (signal.aborted) return aborted();
    signal.addEventListener('abort', aborted, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', aborted);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', aborted);
        reject(error);
      },
    );
  });
}

module.exports = { sleep, signalOf, unlessAborted };
