/**
 * The answer to one request, from any admission-style limiter: whether it
 * was admitted, the quota, what is left of it, when to retry and when the
 * quota is whole again (redis-cell's `CL.THROTTLE` reply and the HTTP
 * `RateLimit` fields). A refusal is a `Decision` too, never an error, and
 * consumed nothing.
 *
 * Durations are milliseconds (`…Ms`, `Infinity` meaning never); the
 * `…Micros` getters give them exactly, in whole microseconds, as bigints
 * (`NEVER` meaning never). Counts are numbers: exact up to 2^53 − 1.
 *
 * @example
 * const d = bucket.check();
 * if (!d.allowed) {
 *   res.writeHead(429, d.headers('api')); // RateLimit-Policy, RateLimit, Retry-After
 * }
 */
export class Decision {
    /**
     * The `RateLimit` field for several policies at once (a composite's
     * parts, say), one item per policy in order.
     * @param {Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>} items
     *   `[name, decision]` pairs (an array, a `Map`) or an object of
     *   decisions by name.
     * @returns {string}
     */
    static rateLimitHeader(items: Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>): string;
    /**
     * The `RateLimit-Policy` field for several policies at once.
     * @param {Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>} items
     * @returns {string}
     */
    static rateLimitPolicyHeader(items: Iterable<readonly [string, Decision]> | Readonly<Record<string, Decision>>): string;
    /**
     * Decisions come from limiters only.
     * @private
     * @param {symbol} token
     * @param {boolean} allowed
     * @param {number} limit
     * @param {number} remaining
     * @param {number} retryAfterMs
     * @param {number} resetAfterMs
     * @param {number} waitMs
     * @param {number} windowMs
     * @param {BigInt64Array | undefined} exact
     */
    private constructor();
    /**
     * Whether the request was admitted (and its cost consumed). A refused
     * request consumed nothing.
     * @readonly
     */
    readonly allowed: boolean;
    /**
     * The quota: the most units the limiter admits at once when whole (a
     * token bucket's burst, GCRA's `maxBurst + 1`, a window's limit). The
     * `q` of `RateLimit-Policy`.
     * @readonly
     */
    readonly limit: number;
    /**
     * Units that could still be admitted now, after this decision. The `r`
     * of `RateLimit`.
     * @readonly
     */
    readonly remaining: number;
    /**
     * Refused: milliseconds until the same request would be admitted
     * (`Infinity` when no wait can admit it: it costs more than `limit`).
     * 0 when admitted.
     * @readonly
     */
    readonly retryAfterMs: number;
    /**
     * Milliseconds until the limiter is whole again if nothing else is
     * admitted (`Infinity` when it never refills). The `t` of `RateLimit`.
     * @readonly
     */
    readonly resetAfterMs: number;
    /**
     * Admitted: milliseconds to wait before acting on it (the slot a
     * shaper or a reservation gave it); 0 for the algorithms that admit now
     * or refuse.
     * @readonly
     */
    readonly waitMs: number;
    /**
     * The time over which `limit` is granted (a window's length, a
     * bucket's time to refill from empty; `Infinity` if it never does). The
     * `w` of `RateLimit-Policy`.
     * @readonly
     */
    readonly windowMs: number;
    /** `retryAfterMs` in exact microseconds (`NEVER` for never). @type {bigint} */
    get retryAfterMicros(): bigint;
    /** `resetAfterMs` in exact microseconds (`NEVER` for never). @type {bigint} */
    get resetAfterMicros(): bigint;
    /** `waitMs` in exact microseconds. @type {bigint} */
    get waitMicros(): bigint;
    /** `windowMs` in exact microseconds (`NEVER` for never). @type {bigint} */
    get windowMicros(): bigint;
    /**
     * Whether no wait can ever admit this request: refused, and it costs
     * more than the limiter can hold.
     * @type {boolean}
     */
    get isNever(): boolean;
    /**
     * The `RateLimit` field for this decision as the policy `name`:
     * `"name";r=REMAINING;t=SECONDS` (draft-ietf-httpapi-ratelimit-headers;
     * seconds rounded up, `t` left out when it never refills).
     * @param {string} [name='default'] Printable ASCII.
     * @returns {string}
     */
    rateLimitHeader(name?: string): string;
    /**
     * The `RateLimit-Policy` field for this decision's policy `name`:
     * `"name";q=LIMIT;w=SECONDS`.
     * @param {string} [name='default'] Printable ASCII.
     * @returns {string}
     */
    rateLimitPolicyHeader(name?: string): string;
    /**
     * The `Retry-After` field: whole seconds, rounded up, for a refused
     * request that a wait can admit; `undefined` otherwise (send none).
     * @returns {string | undefined}
     */
    retryAfterHeader(): string | undefined;
    /**
     * The HTTP fields for this decision as the policy `name`, ready for
     * `res.writeHead(status, headers)` or `res.set(headers)`:
     * `RateLimit-Policy`, `RateLimit`, and `Retry-After` when it has one.
     * @param {string} [name='default'] Printable ASCII.
     * @returns {{ 'RateLimit-Policy': string, 'RateLimit': string, 'Retry-After'?: string }}
     */
    headers(name?: string): {
        "RateLimit-Policy": string;
        "RateLimit": string;
        "Retry-After"?: string;
    };
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * "Never", in exact microseconds: 2^63 − 1, the library's `NEVER`. In
 * milliseconds it is `Infinity`.
 */
export const NEVER: 9223372036854775807n;
/**
 * The decision record at word `at` of a limiter's scratch words (`f` and
 * `big`: a `Float64Array` and a `BigInt64Array` over them; records are
 * `DECISION_WORDS` apart): how the limiters of this package make
 * decisions. Set by `Decision`'s static block, which may call its private
 * constructor.
 * @type {(f: Float64Array, big: BigInt64Array, at: number) => Decision}
 */
export let decisionAt: (f: Float64Array, big: BigInt64Array, at: number) => Decision;
export const DECISION_WORDS: number;
/**
 * Decisions as `formatField` takes them: a record of exact integers each.
 * @type {(decisions: Decision[]) => BigInt64Array}
 */
export let records: (decisions: Decision[]) => BigInt64Array;
