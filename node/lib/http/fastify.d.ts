export type FastifyRequestLike = {
    headers: Record<string, string | string[] | undefined>;
    raw: {
        socket: {
            remoteAddress?: string;
        };
    };
    method: string;
    url: string;
};
export type FastifyReplyLike = {
    header: (name: string, value: string) => FastifyReplyLike;
    code: (status: number) => FastifyReplyLike;
    send: (body?: unknown) => unknown;
};
export type RouteOptionsLike = {
    config?: {
        rateLimit?: boolean | import("./engine.js").RateLimitOptions<FastifyRequestLike>;
    } | undefined;
    onRequest?: unknown;
};
export type FastifyInstanceLike = {
    addHook: (name: "onRoute", hook: (route: RouteOptionsLike) => void) => unknown;
    hasRequestDecorator: (name: string) => boolean;
    decorateRequest: (name: string, value: unknown) => unknown;
};
/**
 * The middleware's options (`rateLimit`), plus `global`: whether every
 * route is limited (true, the default) or only those whose `config`
 * has `rateLimit`.
 */
export type FastifyRateLimitOptions = import("./engine.js").RateLimitOptions<FastifyRequestLike> & {
    global?: boolean;
};
/**
 * The plugin: every route registered after it, in the context that
 * registered it and the contexts below, is limited — with the plugin's
 * options, or with its route's `config.rateLimit` merged over them (a
 * limiter of its own, per route); `config: { rateLimit: false }` exempts a
 * route. Register it before the routes.
 *
 * @example
 * await app.register(fastifyRateLimit, { limit: '100/minute' });
 * app.get('/search', { config: { rateLimit: { limit: '10/minute' } } }, search);
 * app.get('/health', { config: { rateLimit: false } }, health);
 * @param {FastifyInstanceLike} fastify
 * @param {FastifyRateLimitOptions} options
 * @param {(error?: Error) => void} done
 */
export function fastifyRateLimit(fastify: FastifyInstanceLike, options: FastifyRateLimitOptions, done: (error?: Error) => void): void;
