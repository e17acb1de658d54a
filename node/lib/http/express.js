'use strict';
/**
 * `rateLimit`: Express and Connect middleware (any `(req, res, next)`
 * stack on Node.js's `http` objects). Needs neither at run time: it reads
 * `req.headers`, `req.socket`, `req.method` and `req.originalUrl`/`req.url`,
 * and writes with `res.setHeader` and `res.end`.
 * @module
 */

const { Engine, isThenable } = require('./engine.js');

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
function rateLimit(options) {
  /** @type {Engine<Req>} */
  const engine = new Engine(options);
  const property = engine.requestProperty;
  const status = engine.statusCode;


  /**
   * Puts the decision on the request, and goes on or answers.
   * @param {import('../decision.js').Decision} decision
   * @param {Req} req
   * @param {Response} res
   * @param {Next} next
   */
  function conclude(decision, req, res, next) {
    /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (req))[property] = decision;
    if (decision.allowed) {
      next();
      return;
    }
    const body = engine.body(req, decision);
    if (isThenable(body)) Promise.resolve(body).then((b) => refuse(res, status, b), next);
    else refuse(res, status, body);
  }

  /**
   * @param {import('./engine.js').Outcome} outcome
   * @param {Req} req
   * @param {Response} res
   * @param {Next} next
   */
  function send(outcome, req, res, next) {
    engine.setFields(outcome.text, res, setField);
    conclude(outcome.decision, req, res, next);
  }

  return function ratekeeperRateLimit(req, res, next) {
    let verdict;
    try {
      verdict = engine.decide(req, req.headers, req.socket.remoteAddress, req.method ?? 'GET', req.originalUrl ?? req.url ?? '/');
    } catch (error) {
      next(error);
      return;
    }
    if (typeof verdict === 'string') {
      // A local limit: its decision read now, before any other request.
      const decision = engine.decision();
      engine.setFields(verdict, res, setField);
      conclude(decision, req, res, next);
    } else if (verdict === null) next();
    else if (verdict instanceof Promise) verdict.then((o) => send(o, req, res, next), next);
    else send(verdict, req, res, next);
  };
}

/**
 * Answers a refused request.
 * @param {Response} res
 * @param {number} status
 * @param {unknown} body
 */
function refuse(res, status, body) {
  res.statusCode = status;
  if (typeof body === 'string') {
    if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(body);
  } else if (body instanceof Uint8Array) {
    res.end(body);
  } else if (body === undefined) {
    res.end();
  } else {
    if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(body));
  }
}

/**
 * One response field, as the framework sets it.
 * @param {Response} res
 * @param {string} name
 * @param {string} value
 */
function setField(res, name, value) {
  res.setHeader(name, value);
}

module.exports = { rateLimit };
