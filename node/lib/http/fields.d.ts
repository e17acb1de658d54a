/**
 * Which
 *   `RateLimit` fields to send: `draft-6` (`RateLimit-Limit`,
 *   `-Remaining`, `-Reset`, `RateLimit-Policy`), `draft-7` (`RateLimit:
 *   limit=…, remaining=…, reset=…` and `RateLimit-Policy`), `draft-8`
 *   (structured `RateLimit` and `RateLimit-Policy` lists naming each
 *   policy; the default), or `none`.
 */
export type HeaderStyle = "draft-6" | "draft-7" | "draft-8" | "none";
export type FieldOptions = {
    /**
     * Default `draft-8`.
     */
    style?: HeaderStyle | undefined;
    /**
     * Also `X-RateLimit-Limit`, `-Remaining` and
     * `-Reset` (epoch seconds, as express-rate-limit sends it). Default false.
     */
    legacy?: boolean | undefined;
    /**
     * The policy's name when `parts` is not given
     * (default `'default'`).
     */
    name?: string | undefined;
    /**
     * One decision per
     * policy, each with its name (a composite's parts); the default is
     * `[[name, decision]]`.
     */
    parts?: Iterable<readonly [string, Decision]> | undefined;
};
/**
 * Every response field for a request's decision, by name, ready for
 * `res.set(fields)` or `res.writeHead(status, fields)`: the `RateLimit`
 * fields of `style`, the legacy ones if asked, and `Retry-After` (whole
 * seconds, rounded up) when the request was refused and a wait can admit
 * it. Names are in canonical case (`RateLimit-Policy`).
 *
 * @example
 * const d = await redisLimiter.check(key);
 * res.set(responseFields(d, { name: '100-in-1min', style: 'draft-7' }));
 * @param {Decision} decision The decision that admitted or refused the
 *   request (a composite's combined one).
 * @param {FieldOptions} [options]
 * @returns {Record<string, string>}
 */
export function responseFields(decision: Decision, options?: FieldOptions): Record<string, string>;
/**
 * The header style `style` names, checked, as the number the native
 * functions take: `undefined` is the default (`draft-8`); anything else
 * but the four names throws a `RangeError`
 * (`ERR_RATEKEEPER_INVALID_ARGUMENT`) naming `argument`.
 * @param {unknown} style
 * @param {'style' | 'standardHeaders'} [argument='style']
 * @returns {number}
 */
export function headerStyle(style: unknown, argument?: "style" | "standardHeaders"): number;
/**
 * The Unix time in whole seconds, for the legacy `X-RateLimit-Reset`.
 * @returns {number}
 */
export function unixNowSecs(): number;
/**
 * `[name, value, name, value, …]` as an object.
 * @param {string[]} flat
 * @returns {Record<string, string>}
 */
export function fieldsObject(flat: string[]): Record<string, string>;
/**
 * The response fields of the native functions' text — each field its
 * name's code (the digit `'0' + i`, `i` its index in `names`) then its
 * value, fields separated by `'\n'` — as `[name, value, name, value, …]`.
 * @param {string} text
 * @param {readonly string[]} [names=FIELD_NAMES]
 * @returns {string[]}
 */
export function fieldList(text: string, names?: readonly string[]): string[];
/**
 * The response fields' names, by their codes in the fields' text of the
 * native functions: in canonical case (`RateLimit-Policy`), as Node.js's
 * `setHeader` sends them.
 * @type {readonly string[]}
 */
export const FIELD_NAMES: readonly string[];
/**
 * The same in lower case, as Fastify's `reply.header` keeps them: a name
 * already in lower case is stored without a new string.
 * @type {readonly string[]}
 */
export const LOWER_CASE_FIELD_NAMES: readonly string[];
import { Decision } from "../decision.js";
