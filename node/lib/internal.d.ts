/**
 * Proves a call of a limiter's constructor came from this package: the
 * classes whose constructors are not public (`AdmissionLimiter`,
 * `Reservation`, `Permit`, …) take it as their first argument.
 */
export const LIMITER: unique symbol;
/**
 * Throws the `TypeError` of a class whose constructor is the package's
 * own: there is no argument to blame, only a constructor that is private.
 * (With an aborted wait's `AbortError`, lib/sleep.js, the only errors not
 * made by the native module.)
 * @param {string} name The class.
 * @param {string} instead What to use instead.
 * @returns {never}
 */
export function noPublicConstructor(name: string, instead: string): never;
