export type Key = string | Uint8Array;
export type RateLimitOptions<Req> = {
    /**
     * Limits text: `'10/minute'`, `'100/hour;
     * 1000/day'` (see `parseLimits`). Each client gets its own limiter of
     * these limits, in this process (or shared through Redis: `redis`).
     */
    limit?: string | undefined;
    /**
     * The algorithm of `limit`'s limiters:
     * `'slidingWindowCounter'` by default (see `HttpLimiter`).
     */
    algorithm?: string | undefined;
    /**
     * The most clients held at once
     * (default 100,000): memory stays bounded whatever the traffic.
     */
    maxKeys?: number | bigint | undefined;
    /**
     * At the bound:
     * `refuseNewKeys` (the default) or `evictSoonestFull`.
     */
    whenFull?: import("../keyed.js").WhenFull | undefined;
    /**
     * The longest key, in bytes
     * (default 256): a longer one is an error (500), never truncated.
     */
    maxKeyBytes?: number | bigint | undefined;
    /**
     * For tests.
     */
    clock?: native.ManualClock | undefined;
    /**
     * Share `limit`
     * between every process using the same Redis and `name`: each decision is
     * one atomic round trip (`RedisLimiter`, exact mode; several items are
     * one `RedisCompositeLimiter`, all or nothing).
     */
    redis?: RedisStore | undefined;
    /**
     * With `redis`: the limiter's name there. The
     * default names the limit and the algorithm, so processes with the same
     * settings share it.
     */
    name?: string | undefined;
    /**
     * Any keyed limiter instead of `limit`: an `HttpLimiter`, a
     * `KeyedLimiter`, a `RedisLimiter` (any mode), or any object with that
     * `check`.
     */
    limiter?: HttpLimiter | {
        check(key: Key, cost?: number | bigint): Decision | PromiseLike<Decision>;
    } | undefined;
    /**
     * The policy name in the `RateLimit` fields
     * for a `limiter` that is not an `HttpLimiter` (default `'default'`;
     * `limit`'s items are named as express-rate-limit names them,
     * `'10-in-1min'`).
     */
    policy?: string | undefined;
    /**
     * Whose limit a request counts against. The default is the client's
     * address: the TCP peer (`socket.remoteAddress`, not Express's
     * `req.ip`), or the client named by `Forwarded`/`X-Forwarded-For` when
     * the peer is one of `trustedProxies`. `{ header: 'x-api-key' }`: that
     * request header's value (the client's address when it is absent). A
     * function: its result (`req => req.ip` to use Express's `trust proxy`
     * settings; `req => req.user.id`).
     */
    key?: {
        header: string;
    } | ((request: Req) => Key | PromiseLike<Key>) | undefined;
    /**
     * The
     * proxies whose forwarding headers are believed (see `TrustedProxies`):
     * none by default.
     */
    trustedProxies?: Iterable<string> | TrustedProxies | undefined;
    /**
     * The default key's IPv6 block: clients
     * whose addresses share their first `ipv6Prefix` bits share a key (56 by
     * default, as express-rate-limit's `ipv6Subnet`; 128 keys each address
     * alone). From 1 to 128.
     */
    ipv6Prefix?: number | undefined;
    /**
     * The
     * `RateLimit` fields' draft: `'draft-8'` by default, `'draft-7'`,
     * `'draft-6'` or `'none'`. Sent on admitted and refused responses.
     */
    standardHeaders?: import("./fields.js").HeaderStyle | undefined;
    /**
     * Also send `X-RateLimit-Limit`,
     * `-Remaining` and `-Reset`. Default false.
     */
    legacyHeaders?: boolean | undefined;
    /**
     * Paths never limited, with
     * everything below them: `'/health'` exempts `/health` and
     * `/health/db`, not `/healthz`.
     */
    exemptPaths?: Iterable<string> | undefined;
    /**
     * Methods never limited
     * (`'OPTIONS'`), in any case.
     */
    exemptMethods?: Iterable<string> | undefined;
    /**
     * Units a request costs: a number, or one per request. Default 1.
     */
    cost?: number | bigint | ((request: Req) => number | bigint) | undefined;
    /**
     * The status of a refusal: 429.
     */
    statusCode?: number | undefined;
    /**
     * Builds a
     * refusal's body: a string (sent as text/plain), a `Buffer`, or any other
     * value (sent as JSON); may return a Promise. The default is the text
     * `'Too many requests, please try again later.'`.
     */
    body?: ((request: Req, decision: Decision) => unknown) | undefined;
    /**
     * The request property the decision
     * is put on, for handlers and `body`: `'rateLimit'` by default.
     */
    requestProperty?: string | undefined;
};
/**
 * A request's verdict: whether it goes on, the response fields as the
 * native functions write them (`text`: see `fieldList`, whose names are
 * the engine's `names`) and the decision behind them. The frameworks set
 * each field straight from the text: an array of them made per request
 * cost a tenth of the middleware's time.
 */
export type Outcome = {
    allowed: boolean;
    text: string;
    decision: Decision;
};
/**
 * One configured limit: the engine of a middleware or of a route.
 * @template Req
 */
export class Engine<Req> {
    /**
     * @param {RateLimitOptions<Req> | undefined} options
     * @param {boolean} [lowerCaseNames=false] Name the fields in lower case
     *   (for Fastify, which keeps them so).
     */
    constructor(options: RateLimitOptions<Req> | undefined, lowerCaseNames?: boolean);
    /**
     * The fields' names by their codes in an outcome's `text`:
     * `FIELD_NAMES`, or Fastify's lower-case ones.
     * @type {readonly string[]}
     */
    names: readonly string[];
    /** The property the decision is put on. */
    requestProperty: string;
    /** A refusal's status. */
    statusCode: number;
    /**
     * The verdict on a request: `null` when it is exempt (nothing to send);
     * for a local limit with a synchronous key, the response fields' text
     * (a string) — its decision is then `decision()`, until the next request
     * of this engine; otherwise its outcome, maybe in a Promise. What the
     * engine reads of the request comes as arguments (no object made per
     * request).
     *
     * The text is the native functions' (see `fieldList`), or its short form:
     * an admitted request's `RateLimit` value alone (it starts with `"`,
     * never a field's code), whose `RateLimit-Policy` value is
     * `keptPolicy()` — the two fields set with no text cut (`SHORT_FORM`).
     * @param {Req} request The framework's request, for the user's
     *   functions.
     * @param {Record<string, string | string[] | undefined>} headers
     * @param {string | undefined} peer The TCP peer's address.
     * @param {string} method
     * @param {string} url The request target: a path, maybe a query.
     * @returns {string | Outcome | Promise<Outcome> | null}
     */
    decide(request: Req, headers: Record<string, string | string[] | undefined>, peer: string | undefined, method: string, url: string): string | Outcome | Promise<Outcome> | null;
    /**
     * The decision behind the text `decide` returned last, read before the
     * engine's next request.
     * @returns {Decision}
     */
    decision(): Decision;
    /**
     * The `RateLimit-Policy` value of the text's short form.
     * @returns {string}
     */
    keptPolicy(): string;
    /**
     * Sets the response fields of `text` (what `decide` returned, or an
     * outcome's) with `set(target, name, value)`, the framework's own
     * setter: the two fields of the short form as they are, or each field of
     * the full text (`fieldList`'s loop, setting each rather than making an
     * array).
     * @template T
     * @param {string} text
     * @param {T} target
     * @param {(target: T, name: string, value: string) => void} set
     */
    setFields<T>(text: string, target: T, set: (target: T, name: string, value: string) => void): void;
    /**
     * A refusal's body, as built by the `body` option (or the default text).
     * @param {Req} request
     * @param {Decision} decision
     * @returns {unknown}
     */
    body(request: Req, decision: Decision): unknown;
    #private;
}
/**
 * Whether `value` is a thenable.
 * @param {unknown} value
 * @returns {value is PromiseLike<unknown>}
 */
export function isThenable(value: unknown): value is PromiseLike<unknown>;
/**
 * @typedef {string | Uint8Array} Key
 */
/**
 * @template Req
 * @typedef {object} RateLimitOptions
 * @property {string} [limit] Limits text: `'10/minute'`, `'100/hour;
 *   1000/day'` (see `parseLimits`). Each client gets its own limiter of
 *   these limits, in this process (or shared through Redis: `redis`).
 * @property {string} [algorithm] The algorithm of `limit`'s limiters:
 *   `'slidingWindowCounter'` by default (see `HttpLimiter`).
 * @property {number | bigint} [maxKeys] The most clients held at once
 *   (default 100,000): memory stays bounded whatever the traffic.
 * @property {import('../keyed.js').WhenFull} [whenFull] At the bound:
 *   `refuseNewKeys` (the default) or `evictSoonestFull`.
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes
 *   (default 256): a longer one is an error (500), never truncated.
 * @property {import('../binding.js').ManualClock} [clock] For tests.
 * @property {import('../redis.js').RedisStore} [redis] Share `limit`
 *   between every process using the same Redis and `name`: each decision is
 *   one atomic round trip (`RedisLimiter`, exact mode; several items are
 *   one `RedisCompositeLimiter`, all or nothing).
 * @property {string} [name] With `redis`: the limiter's name there. The
 *   default names the limit and the algorithm, so processes with the same
 *   settings share it.
 * @property {HttpLimiter | { check(key: Key, cost?: number | bigint): Decision | PromiseLike<Decision> }} [limiter]
 *   Any keyed limiter instead of `limit`: an `HttpLimiter`, a
 *   `KeyedLimiter`, a `RedisLimiter` (any mode), or any object with that
 *   `check`.
 * @property {string} [policy] The policy name in the `RateLimit` fields
 *   for a `limiter` that is not an `HttpLimiter` (default `'default'`;
 *   `limit`'s items are named as express-rate-limit names them,
 *   `'10-in-1min'`).
 * @property {((request: Req) => Key | PromiseLike<Key>) | { header: string }} [key]
 *   Whose limit a request counts against. The default is the client's
 *   address: the TCP peer (`socket.remoteAddress`, not Express's
 *   `req.ip`), or the client named by `Forwarded`/`X-Forwarded-For` when
 *   the peer is one of `trustedProxies`. `{ header: 'x-api-key' }`: that
 *   request header's value (the client's address when it is absent). A
 *   function: its result (`req => req.ip` to use Express's `trust proxy`
 *   settings; `req => req.user.id`).
 * @property {Iterable<string> | TrustedProxies} [trustedProxies] The
 *   proxies whose forwarding headers are believed (see `TrustedProxies`):
 *   none by default.
 * @property {number} [ipv6Prefix] The default key's IPv6 block: clients
 *   whose addresses share their first `ipv6Prefix` bits share a key (56 by
 *   default, as express-rate-limit's `ipv6Subnet`; 128 keys each address
 *   alone). From 1 to 128.
 * @property {import('./fields.js').HeaderStyle} [standardHeaders] The
 *   `RateLimit` fields' draft: `'draft-8'` by default, `'draft-7'`,
 *   `'draft-6'` or `'none'`. Sent on admitted and refused responses.
 * @property {boolean} [legacyHeaders] Also send `X-RateLimit-Limit`,
 *   `-Remaining` and `-Reset`. Default false.
 * @property {Iterable<string>} [exemptPaths] Paths never limited, with
 *   everything below them: `'/health'` exempts `/health` and
 *   `/health/db`, not `/healthz`.
 * @property {Iterable<string>} [exemptMethods] Methods never limited
 *   (`'OPTIONS'`), in any case.
 * @property {number | bigint | ((request: Req) => number | bigint)} [cost]
 *   Units a request costs: a number, or one per request. Default 1.
 * @property {number} [statusCode] The status of a refusal: 429.
 * @property {(request: Req, decision: Decision) => unknown} [body] Builds a
 *   refusal's body: a string (sent as text/plain), a `Buffer`, or any other
 *   value (sent as JSON); may return a Promise. The default is the text
 *   `'Too many requests, please try again later.'`.
 * @property {string} [requestProperty] The request property the decision
 *   is put on, for handlers and `body`: `'rateLimit'` by default.
 */
export const OPTIONS: readonly string[];
/**
 * A request's verdict: whether it goes on, the response fields as the
 * native functions write them (`text`: see `fieldList`, whose names are
 * the engine's `names`) and the decision behind them. The frameworks set
 * each field straight from the text: an array of them made per request
 * cost a tenth of the middleware's time.
 * @typedef {{ allowed: boolean, text: string, decision: Decision }} Outcome
 */
/**
 * The code the short form of the fields' text starts with: `"`, the quote
 * of a policy name (see `Engine.decide`).
 */
export const SHORT_FORM: 34;
import native = require("../binding.js");
import { RedisStore } from "../redis.js";
import { HttpLimiter } from "./limiter.js";
import { Decision } from "../decision.js";
import { TrustedProxies } from "./client.js";
