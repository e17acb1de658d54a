'use strict';
/**
 * Waiting without blocking: the only way this package waits is a timer.
 * @module
 */

/** The longest delay `setTimeout` takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves after at least `ms` milliseconds, measured on
 * `performance.now()`; any length, in timer-sized steps.
 * @param {number} ms
 * @returns {Promise<void>}
 */
function sleep(ms) {
  const deadline = performance.now() + ms;
  return new Promise((resolve) => {
    const step = () => {
      const left = deadline - performance.now();
      if (left <= 0) resolve();
      // Whole milliseconds, rounded up: a timer never ends a wait early.
      else setTimeout(step, Math.min(Math.ceil(left), MAX_TIMER_MS));
    };
    step();
  });
}

module.exports = { sleep };
