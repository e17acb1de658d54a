/**
 * What ratekeeper's errors carry besides a message: `code` (one of
 * `codes`), and for a bad argument its JavaScript name and the value given.
 */
export type RatekeeperError = Error & {
    code: string;
    argument?: string;
    value?: unknown;
};
export type RateLimiterOptions = import("./lib/rate-limiter.js").RateLimiterOptions;
export type TimeoutOptions = import("./lib/rate-limiter.js").TimeoutOptions;
import { RateLimiter } from "./lib/rate-limiter.js";
import { ManualClock } from "./lib/binding.js";
/**
 * The `code` of each kind of error ratekeeper throws: `RangeError`s have
 * `invalidArgument`, `TypeError`s `invalidArgType` or `invalidOption`, and
 * an `Error` with `internal` is a bug in ratekeeper.
 */
export const codes: Readonly<import("./lib/binding.js").ErrorCodes>;
export { RateLimiter, ManualClock };
