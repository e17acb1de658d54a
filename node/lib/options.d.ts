/**
 * `options` itself when it is an object whose keys are all `known`; no
 * options (`{}`) when it is `undefined`; otherwise throws a `TypeError`
 * (`ERR_RATEKEEPER_INVALID_ARG_TYPE` or `ERR_RATEKEEPER_INVALID_OPTION`).
 * @template {object} T
 * @param {T | undefined} options
 * @param {readonly string[]} known
 * @returns {Partial<T>}
 */
export function readOptions<T extends object>(options: T | undefined, known: readonly string[]): Partial<T>;
