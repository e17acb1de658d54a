'use strict';
/**
 * What the package's classes share and users do not see.
 * @module
 */

const native = require('./binding.js');

/**
 * Throws the `TypeError` of a class whose constructor is the package's
 * own: there is no argument to blame, only a constructor that is private.
 * (With an aborted wait's `AbortError`, lib/sleep.js, the only errors not
 * made by the native module.)
 * @param {string} name The class.
 * @param {string} instead What to use instead.
 * @returns {never}
 */
function noPublicConstructor(name, instead) {
  throw Object.assign(new TypeError(`${name} has no public constructor: ${instead}`), {
    code: native.errorCodes().invalidArgType,
  });
}

/**
 * Proves a call of a limiter's constructor came from this package: the
 * classes whose constructors are not public (`AdmissionLimiter`,
 * `Reservation`, `Permit`, …) take it as their first argument.
 */
const LIMITER = Symbol('ratekeeper');

module.exports = { LIMITER, noPublicConstructor };
