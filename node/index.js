'use strict';
/**
 * ratekeeper: rate limiting that behaves identically — to the microsecond —
 * from Rust, Python, Node.js and C. This is the CommonJS entry point;
 * index.mjs is the ES module one (the same objects).
 * @module ratekeeper
 */

const { RateLimiter } = require('./lib/rate-limiter.js');
const { ManualClock, errorCodes } = require('./lib/binding.js');

/**
 * The `code` of each kind of error ratekeeper throws: `RangeError`s have
 * `invalidArgument`, `TypeError`s `invalidArgType` or `invalidOption`, and
 * an `Error` with `internal` is a bug in ratekeeper.
 */
const codes = Object.freeze(errorCodes());

/**
 * What ratekeeper's errors carry besides a message: `code` (one of
 * `codes`), and for a bad argument its JavaScript name and the value given.
 * @typedef {Error & { code: string, argument?: string, value?: unknown }} RatekeeperError
 */

/** @typedef {import('./lib/rate-limiter.js').RateLimiterOptions} RateLimiterOptions */
/** @typedef {import('./lib/rate-limiter.js').TimeoutOptions} TimeoutOptions */

module.exports = { RateLimiter, ManualClock, codes };
