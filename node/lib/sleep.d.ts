/**
 * Resolves after at least `ms` milliseconds, measured on
 * `performance.now()`; any length, in timer-sized steps.
 * @param {number} ms
 * @returns {Promise<void>}
 */
export function sleep(ms: number): Promise<void>;
