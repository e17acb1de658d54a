/**
 * What the middleware reads of a request: Node's `IncomingMessage` (an
 * Express or Connect request is one), described here so that the
 * declarations need no `@types/node`.
 */
export type Request = {
    headers: Record<string, string | string[] | undefined>;
    socket: {
        remoteAddress?: string;
    };
    method?: string | undefined;
    url?: string | undefined;
    originalUrl?: string | undefined;
};
/**
 * What it writes of a response: Node's `ServerResponse`.
 */
export type Response = {
    statusCode: number;
    setHeader: (name: string, value: string) => unknown;
    hasHeader: (name: string) => boolean;
    end: (body?: string | Uint8Array) => unknown;
};
export type Next = (error?: unknown) => void;
/**
 * What the middleware reads of a request: Node's `IncomingMessage` (an
 * Express or Connect request is one), described here so that the
 * declarations need no `@types/node`.
 * @typedef {object} Request
 * @property {Record<string, string | string[] | undefined>} headers
 * @property {{ remoteAddress?: string }} socket
 * @property {string} [method]
 * @property {string} [url]
 * @property {string} [originalUrl]
 */
/**
 * What it writes of a response: Node's `ServerResponse`.
 * @typedef {object} Response
 * @property {number} statusCode
 * @property {(name: string, value: string) => unknown} setHeader
 * @property {(name: string) => boolean} hasHeader
 * @property {(body?: string | Uint8Array) => unknown} end
 */
/** @typedef {(error?: unknown) => void} Next */
/**
 * Middleware that limits each client (by default its address) to `limit`:
 * an admitted request goes on with the `RateLimit` fields set and the
 * decision on `req.rateLimit`; a refused one is answered with 429, the
 * fields, `Retry-After` and the `body`. An error (a Redis limiter that
 * cannot reach Redis, a bad key) goes to `next(error)`.
 *
 * @example
 * const { rateLimit } = require('ratekeeper');
 * app.use(rateLimit({ limit: '100/minute' }));
 * app.post('/login', rateLimit({ limit: '5/minute; 20/hour', key: (req) => req.body.user }), login);
 * @template {Request} [Req=Request] The framework's request type, for the
 *   options' functions (`key`, `cost`, `body`).
 * @param {import('./engine.js').RateLimitOptions<Req>} options
 * @returns {(req: Req, res: Response, next: Next) => void}
 */
export function rateLimit<Req extends Request = Request>(options: import("./engine.js").RateLimitOptions<Req>): (req: Req, res: Response, next: Next) => void;
