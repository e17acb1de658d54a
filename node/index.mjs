// ratekeeper's ES module entry point: the same objects as the CommonJS one
// (index.js), so that a program mixing import and require shares them.
import ratekeeper from './index.js';

export { RateLimiter, ManualClock, codes } from './index.js';
export default ratekeeper;

/** @typedef {import('./index.js').RateLimiterOptions} RateLimiterOptions */
/** @typedef {import('./index.js').TimeoutOptions} TimeoutOptions */
/** @typedef {import('./index.js').RatekeeperError} RatekeeperError */
