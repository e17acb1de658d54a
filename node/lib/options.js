'use strict';
/**
 * Options objects. The classes read their options here and pass them to
 * the native module one by one: reading properties from Rust costs several
 * times more than this. A quick look finds a bad options object (not an
 * object, or an unknown key: a typo such as `warmUpMs` must not quietly
 * make another limiter); the native module then throws the error, so that
 * every error of the package is made in one place (bindings/node/src/error/).
 * @module
 */

const native = require('./binding.js');

const NONE = Object.freeze({});

/**
 * `options` itself when it is an object whose keys are all `known`; no
 * options (`{}`) when it is `undefined`; otherwise throws a `TypeError`
 * (`ERR_RATEKEEPER_INVALID_ARG_TYPE` or `ERR_RATEKEEPER_INVALID_OPTION`).
 * @template {object} T
 * @param {T | undefined} options
 * @param {readonly string[]} known
 * @returns {Partial<T>}
 */
function readOptions(options, known) {
  if (options === undefined) return NONE;
  if (typeof options === 'object' && options !== null) {
    let clean = true;
    for (const key in options) {
      if (!known.includes(key)) {
        clean = false;
        break;
      }
    }
    if (clean) return options;
  }
  // Throws, unless the unknown keys were only inherited ones (for...in sees
  // those; the options are own properties).
  native.checkOptions(options, /** @type {string[]} */ (known));
  return /** @type {T} */ (options);
}

module.exports = { readOptions };
