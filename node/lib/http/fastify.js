'use strict';
/**
 * `fastifyRateLimit`: a Fastify plugin (an `onRequest` hook per route).
 * Needs neither fastify nor fastify-plugin at run time: it carries the
 * markers fastify-plugin would set (`Symbol.for('skip-override')`,
 * `Symbol.for('fastify.display-name')`, `Symbol.for('plugin-meta')`), so
 * that its hooks apply in the context that registers it, and below, as a
 * plugin made with fastify-plugin does.
 * @module
 */

const { Engine, OPTIONS, isThenable } = require('./engine.js');
const native = require('../binding.js');
const { readOptions } = require('../options.js');

/**
 * @typedef {object} FastifyRequestLike
 * @property {Record<string, string | string[] | undefined>} headers
 * @property {{ socket: { remoteAddress?: string } }} raw
 * @property {string} method
 * @property {string} url
 */

/**
 * @typedef {object} FastifyReplyLike
 * @property {(name: string, value: string) => FastifyReplyLike} header
 * @property {(status: number) => FastifyReplyLike} code
 * @property {(body?: unknown) => unknown} send
 */

/**
 * @typedef {object} RouteOptionsLike
 * @property {{ rateLimit?: boolean | import('./engine.js').RateLimitOptions<FastifyRequestLike> }} [config]
 * @property {unknown} [onRequest]
 */

/**
 * @typedef {object} FastifyInstanceLike
 * @property {(name: 'onRoute', hook: (route: RouteOptionsLike) => void) => unknown} addHook
 * @property {(name: string) => boolean} hasRequestDecorator
 * @property {(name: string, value: unknown) => unknown} decorateRequest
 */

/**
 * @typedef {import('./engine.js').RateLimitOptions<FastifyRequestLike> & { global?: boolean }} FastifyRateLimitOptions
 *   The middleware's options (`rateLimit`), plus `global`: whether every
 *   route is limited (true, the default) or only those whose `config`
 *   has `rateLimit`.
 */

const PLUGIN_OPTIONS = Object.freeze([...OPTIONS, 'global']);

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
function fastifyRateLimit(fastify, options, done) {
  try {
    register(fastify, options);
  } catch (error) {
    done(/** @type {Error} */ (error));
    return;
  }
  done();
}

/**
 * Adds the plugin's hooks to `fastify`.
 * @param {FastifyInstanceLike} fastify
 * @param {FastifyRateLimitOptions} options
 */
function register(fastify, options) {
  const all = readOptions(options, PLUGIN_OPTIONS);
  const { global = true, ...base } = all;
  // Checked now when every route uses them; otherwise with each route's.
  /** @type {Engine<FastifyRequestLike> | undefined} */
  let shared = global ? new Engine(base, true) : undefined;
  /** A route's engine by its `config.rateLimit`: a GET route's HEAD route shares it. */
  const own = new WeakMap();
  const property = base.requestProperty ?? 'rateLimit';
  if (!fastify.hasRequestDecorator(property)) fastify.decorateRequest(property, null);

  fastify.addHook('onRoute', (route) => {
    const config = route.config?.rateLimit;
    if (config === false || (config === undefined && !global)) return;
    /** @type {Engine<FastifyRequestLike>} */
    let engine;
    if (config === undefined || config === true) {
      engine = shared ??= new Engine(base, true);
    } else if (typeof config === 'object' && config !== null) {
      engine = own.get(config);
      if (engine === undefined) {
        engine = new Engine({ ...base, ...config }, true);
        own.set(config, engine);
      }
    } else {
      native.throwWrongType('config.rateLimit', config, 'an options object, true or false');
    }
    const hook = onRequest(engine);
    const existing = /** @type {unknown[] | unknown} */ (route.onRequest);
    route.onRequest = existing === undefined ? [hook] : [hook, ...(Array.isArray(existing) ? existing : [existing])];
  });
}

/**
 * The `onRequest` hook of a route limited by `engine`.
 * @param {Engine<FastifyRequestLike>} engine
 * @returns {(request: FastifyRequestLike, reply: FastifyReplyLike, done: (error?: unknown) => void) => void}
 */
function onRequest(engine) {
  const property = engine.requestProperty;
  const status = engine.statusCode;


  /**
   * Puts the decision on the request, and goes on or answers.
   * @param {import('../decision.js').Decision} decision
   * @param {FastifyRequestLike} request
   * @param {FastifyReplyLike} reply
   * @param {(error?: unknown) => void} done
   */
  function conclude(decision, request, reply, done) {
    /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (request))[property] = decision;
    if (decision.allowed) {
      done();
      return;
    }
    // Answered here: `done` is not called, so the route's handler is not.
    const body = engine.body(request, decision);
    if (isThenable(body)) Promise.resolve(body).then((b) => reply.code(status).send(b), done);
    else reply.code(status).send(body);
  }

  /**
   * @param {import('./engine.js').Outcome} outcome
   * @param {FastifyRequestLike} request
   * @param {FastifyReplyLike} reply
   * @param {(error?: unknown) => void} done
   */
  function send(outcome, request, reply, done) {
    engine.setFields(outcome.text, reply, setField);
    conclude(outcome.decision, request, reply, done);
  }

  return function ratekeeperOnRequest(request, reply, done) {
    let verdict;
    try {
      verdict = engine.decide(request, request.headers, request.raw.socket.remoteAddress, request.method, request.url);
    } catch (error) {
      done(error);
      return;
    }
    if (typeof verdict === 'string') {
      // A local limit: its decision read now, before any other request.
      const decision = engine.decision();
      engine.setFields(verdict, reply, setField);
      conclude(decision, request, reply, done);
    } else if (verdict === null) done();
    else if (verdict instanceof Promise) verdict.then((o) => send(o, request, reply, done), done);
    else send(verdict, request, reply, done);
  };
}

// What fastify-plugin sets: run in the registering context (no
// encapsulation of its own), with a name in errors and in
// `fastify.printPlugins()`, for Fastify 4 and 5.
Object.defineProperties(fastifyRateLimit, {
  [Symbol.for('skip-override')]: { value: true },
  [Symbol.for('fastify.display-name')]: { value: 'ratekeeper' },
  [Symbol.for('plugin-meta')]: { value: Object.freeze({ name: 'ratekeeper', fastify: '4.x || 5.x' }) },
});

/**
 * One response field, as the framework sets it.
 * @param {FastifyReplyLike} reply
 * @param {string} name
 * @param {string} value
 */
function setField(reply, name, value) {
  reply.header(name, value);
}

module.exports = { fastifyRateLimit };
