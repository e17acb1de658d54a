export default ratekeeper;
export type RateLimiterOptions = import("./index.js").RateLimiterOptions;
export type TimeoutOptions = import("./index.js").TimeoutOptions;
export type RatekeeperError = import("./index.js").RatekeeperError;
import ratekeeper from './index.js';
export { RateLimiter, ManualClock, codes } from "./index.js";
