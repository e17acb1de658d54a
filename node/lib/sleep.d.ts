/**
 * What the `signal` option takes: an `AbortSignal`, declared by the
 * members this package uses, so that its declarations need neither the DOM
 * library nor Node's own type declarations.
 */
export type AbortSignalLike = {
    readonly aborted: boolean;
    readonly reason?: unknown;
    addEventListener(type: "abort", listener: () => void, options?: {
        once?: boolean;
    }): void;
    removeEventListener(type: "abort", listener: () => void): void;
};
export type SignalOptions = {
    /**
     * Aborts the wait: the call rejects
     * with an `AbortError` (`code` `'ABORT_ERR'`, the signal's `reason` as
     * `cause`). Aborted before the call, it takes nothing; aborted during the
     * wait, what was reserved stays reserved.
     */
    signal?: AbortSignalLike | undefined;
};
/**
 * Resolves after at least `ms` milliseconds, measured on
 * `performance.now()`; any length, in timer-sized steps. With `signal`,
 * rejects with the `AbortError` as soon as it aborts.
 * @param {number} ms
 * @param {AbortSignalLike} [signal]
 * @returns {Promise<void>}
 */
export function sleep(ms: number, signal?: AbortSignalLike): Promise<void>;
/**
 * The `signal` option checked: `undefined`, or an `AbortSignal` (else a
 * `TypeError` naming `signal`). Throws the `AbortError` when it is already
 * aborted, before anything is taken.
 * @param {unknown} signal
 * @returns {AbortSignalLike | undefined}
 */
export function signalOf(signal: unknown): AbortSignalLike | undefined;
/**
 * `promise`, unless `signal` aborts first: then the `AbortError` at once
 * (what `promise` does later is ignored). For a round trip to Redis, which
 * cannot be called back once sent.
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignalLike | undefined} signal
 * @returns {Promise<T>}
 */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignalLike | undefined): Promise<T>;
