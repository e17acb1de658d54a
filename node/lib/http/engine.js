'use strict';
/**
 * What the Express middleware and the Fastify plugin share: reading the
 * options, choosing the key, the cost and the exemptions of a request,
 * asking the limiter, and the response fields of its decision. Each
 * framework's module only reads its request and writes its response.
 * @module
 */

const native = require('../binding.js');
const { Decision, decisionAt, records } = require('../decision.js');
const { views } = require('../admission.js');
const { readOptions } = require('../options.js');
const { RedisCompositeLimiter, RedisLimiter, RedisStore } = require('../redis.js');
const { TrustedProxies } = require('./client.js');
const { FIELD_NAMES, LOWER_CASE_FIELD_NAMES, headerStyle, unixNowSecs } = require('./fields.js');
const { HttpLimiter, methodsOf } = require('./limiter.js');
const { parseLimits } = require('./limits.js');

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

const OPTIONS = Object.freeze([
  'limit',
  'algorithm',
  'maxKeys',
  'whenFull',
  'maxKeyBytes',
  'clock',
  'redis',
  'name',
  'limiter',
  'policy',
  'key',
  'trustedProxies',
  'ipv6Prefix',
  'standardHeaders',
  'legacyHeaders',
  'exemptPaths',
  'exemptMethods',
  'cost',
  'statusCode',
  'body',
  'requestProperty',
]);

const DEFAULT_BODY = 'Too many requests, please try again later.';

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
const SHORT_FORM = 34;

/**
 * One configured limit: the engine of a middleware or of a route.
 * @template Req
 */
class Engine {
  /**
   * The native `respond` of an `HttpLimiter` (the one-call path) with this
   * engine's header style, else undefined.
   * @type {((key: Key, cost?: unknown, unixNowSecs?: number) => string) | undefined}
   */
  #respond;
  /** Its `keptPolicy`. */
  /** @type {(() => string | undefined) | undefined} */
  #keptPolicy;
  /** What `keptPolicy` returned, once it returned a value (it then never changes). */
  /** @type {string | undefined} */
  #policyValue;
  /** @type {Float64Array} */
  #f = new Float64Array(0);
  /** @type {BigInt64Array} */
  #big = new BigInt64Array(0);
  /** @type {((key: Key, cost?: number | bigint) => Decision | PromiseLike<Decision>) | undefined} */
  #check;
  /** Several limits through Redis: the decision and each part's. */
  /** @type {((key: Key, cost?: number | bigint) => Promise<{ decision: Decision, parts: Decision[] }>) | undefined} */
  #checkEach;
  /** @type {string[]} */
  #policies = [];
  #trusted;
  /** Whether no proxy is trusted (the TCP peer is the client). */
  #peerIsClient = false;
  /** @type {number | undefined} */
  #ipv6Prefix;
  /** @type {((request: Req) => Key | PromiseLike<Key>) | undefined} */
  #keyFunction;
  /** @type {string | undefined} */
  #keyHeader;
  /** @type {string[]} */
  #exemptPaths;
  /** @type {Set<string>} */
  #exemptMethods;
  /** @type {unknown} */
  #cost;
  /** @type {((request: Req) => number | bigint) | undefined} */
  #costFunction;
  #style;
  #legacy;
  /** @type {((request: Req, decision: Decision) => unknown) | undefined} */
  #body;
  /**
   * The fields' names by their codes in an outcome's `text`:
   * `FIELD_NAMES`, or Fastify's lower-case ones.
   * @type {readonly string[]}
   */
  names;

  /**
   * @param {RateLimitOptions<Req> | undefined} options
   * @param {boolean} [lowerCaseNames=false] Name the fields in lower case
   *   (for Fastify, which keeps them so).
   */
  constructor(options, lowerCaseNames = false) {
    this.names = lowerCaseNames ? LOWER_CASE_FIELD_NAMES : FIELD_NAMES;
    const o = readOptions(options, OPTIONS);
    if (o.limiter !== undefined && (o.limit !== undefined || o.redis !== undefined)) {
      native.httpInvalidOption(`options: limiter excludes ${o.limit !== undefined ? 'limit' : 'redis'}`);
    }
    this.#style = headerStyle(o.standardHeaders, 'standardHeaders');
    this.#legacy = o.legacyHeaders === true;
    /** The property the decision is put on. */
    this.requestProperty = o.requestProperty ?? 'rateLimit';
    /** A refusal's status. */
    this.statusCode = o.statusCode ?? 429;
    this.#body = o.body;

    let limiter = o.limiter;
    if (o.redis !== undefined) {
      if (!(o.redis instanceof RedisStore)) native.throwWrongType('redis', o.redis, 'a RedisStore');
      const items = parseLimits(/** @type {string} */ (o.limit));
      const algorithm = o.algorithm ?? 'slidingWindowCounter';
      const name = o.name ?? `http:${algorithm}:${items.join('; ')}`;
      this.#policies = items.map((item) => item.policyName);
      if (items.length === 1) {
        limiter = new RedisLimiter(o.redis, name, items[0].limitOptions(algorithm), { maxKeyBytes: o.maxKeyBytes });
      } else {
        const limits = items.map((item) => item.limitOptions(algorithm));
        const composite = new RedisCompositeLimiter(o.redis, name, limits, { maxKeyBytes: o.maxKeyBytes });
        this.#checkEach = (key, cost) => composite.check(key, cost);
      }
    } else if (limiter === undefined) {
      limiter = new HttpLimiter(/** @type {string} */ (o.limit), {
        algorithm: o.algorithm,
        maxKeys: o.maxKeys,
        whenFull: o.whenFull,
        maxKeyBytes: o.maxKeyBytes,
        clock: o.clock,
      });
    }
    if (this.#checkEach !== undefined) {
      // Decided above.
    } else if (limiter instanceof HttpLimiter) {
      const methods = methodsOf(limiter);
      const responder = methods.responder(this.#style, this.#legacy);
      this.#respond = responder.respond;
      this.#keptPolicy = responder.keptPolicy;
      [this.#f, this.#big] = views(methods.scratch);
      this.#policies = limiter.policyNames;
    } else {
      if (typeof limiter !== 'object' || limiter === null || typeof limiter.check !== 'function') {
        native.throwWrongType('limiter', limiter, 'a keyed limiter (an object with check(key, cost))');
      }
      const keyed = limiter;
      this.#check = (key, cost) => keyed.check(key, cost);
      if (this.#policies.length === 0) this.#policies = [o.policy ?? 'default'];
    }

    if (o.trustedProxies instanceof TrustedProxies) {
      this.#trusted = o.trustedProxies;
    } else {
      const entries = o.trustedProxies === undefined ? [] : Array.from(o.trustedProxies);
      this.#trusted = new TrustedProxies(entries);
      this.#peerIsClient = entries.length === 0;
    }
    this.#ipv6Prefix = o.ipv6Prefix;
    // A bad prefix throws here, not on the first request.
    this.#trusted.clientKey('::', undefined, undefined, this.#ipv6Prefix);
    const key = o.key;
    if (typeof key === 'function') this.#keyFunction = key;
    else if (typeof key === 'object' && key !== null && typeof key.header === 'string') this.#keyHeader = key.header.toLowerCase();
    else if (key !== undefined) native.throwWrongType('key', key, 'a function or { header: string }');

    this.#exemptPaths = o.exemptPaths === undefined ? [] : Array.from(o.exemptPaths, String);
    this.#exemptMethods = new Set(o.exemptMethods === undefined ? [] : Array.from(o.exemptMethods, (m) => String(m).toUpperCase()));
    if (typeof o.cost === 'function') this.#costFunction = o.cost;
    else this.#cost = o.cost;
  }

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
  decide(request, headers, peer, method, url) {
    if (this.#exemptMethods.size > 0 && this.#exemptMethods.has(method.toUpperCase())) return null;
    if (this.#exemptPaths.length > 0 && this.#exempt(url)) return null;
    const cost = this.#costFunction === undefined ? this.#cost : this.#costFunction(request);
    const key = this.#keyOf(request, headers, peer);
    if (typeof key !== 'string' && isThenable(key)) return Promise.resolve(key).then((k) => this.#decideKey(k, cost));
    const respond = this.#respond;
    if (respond !== undefined) {
      // Without the arguments it would not read: fewer values to convert.
      if (this.#legacy) return respond(/** @type {Key} */ (key), cost, unixNowSecs());
      return cost === undefined ? respond(/** @type {Key} */ (key)) : respond(/** @type {Key} */ (key), cost);
    }
    return this.#decideKey(/** @type {Key} */ (key), cost);
  }

  /**
   * The decision behind the text `decide` returned last, read before the
   * engine's next request.
   * @returns {Decision}
   */
  decision() {
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * The `RateLimit-Policy` value of the text's short form.
   * @returns {string}
   */
  keptPolicy() {
    return (this.#policyValue ??= /** @type {() => string} */ (this.#keptPolicy)());
  }

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
  setFields(text, target, set) {
    const names = this.names;
    if (text.charCodeAt(0) === SHORT_FORM) {
      set(target, names[0], this.keptPolicy());
      set(target, names[1], text);
      return;
    }
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf('\n', start);
      const name = names[text.charCodeAt(start) - 48];
      if (end === -1) {
        set(target, name, text.slice(start + 1));
        break;
      }
      set(target, name, text.slice(start + 1, end));
      start = end + 1;
    }
  }

  /**
   * @param {Key} key
   * @param {unknown} cost
   * @returns {Outcome | Promise<Outcome>}
   */
  #decideKey(key, cost) {
    const respond = this.#respond;
    if (respond !== undefined) {
      const text = this.#legacy ? respond(key, cost, unixNowSecs()) : respond(key, cost);
      const decision = this.decision();
      return { allowed: decision.allowed, text, decision };
    }
    const checkEach = this.#checkEach;
    if (checkEach !== undefined) {
      return checkEach(key, /** @type {number | bigint | undefined} */ (cost)).then((d) => this.#outcome(d.decision, d.parts));
    }
    const check = /** @type {(key: Key, cost?: number | bigint) => Decision | PromiseLike<Decision>} */ (this.#check);
    const decided = check(key, /** @type {number | bigint | undefined} */ (cost));
    if (decided instanceof Decision) return this.#outcome(decided);
    return Promise.resolve(decided).then((d) => this.#outcome(d));
  }

  /**
   * The outcome of a decision of a limiter given by the user, or of a
   * Redis composite (with each part's).
   * @param {Decision} decision
   * @param {Decision[]} [parts=[decision]]
   * @returns {Outcome}
   */
  #outcome(decision, parts = [decision]) {
    if (!(decision instanceof Decision)) native.throwWrongType('limiter.check()', decision, 'a Decision');
    const now = this.#legacy ? unixNowSecs() : 0;
    const text = native.httpResponseFields(this.#style, this.#legacy, now, this.#policies, records([decision, ...parts]));
    return { allowed: decision.allowed, text, decision };
  }

  /**
   * @param {Req} request
   * @param {Record<string, string | string[] | undefined>} headers
   * @param {string | undefined} peer
   * @returns {Key | PromiseLike<Key>}
   */
  #keyOf(request, headers, peer) {
    if (this.#keyFunction !== undefined) return this.#keyFunction(request);
    if (this.#keyHeader !== undefined) {
      const value = headers[this.#keyHeader];
      if (value !== undefined) return Array.isArray(value) ? value.join(', ') : value;
    }
    // A peer that is not an IP address (a Unix socket's): one key for all.
    if (peer === undefined || peer === '') return '';
    // Trusting no proxy, an IPv4 peer is the client as the library would
    // write it (an IPv6 prefix leaves IPv4 whole): Node.js gives it in the
    // canonical dotted form (its text from the socket's address). A third
    // of a request's native time saved.
    if (this.#peerIsClient && peer.indexOf(':') === -1) return peer;
    return this.#trusted.clientKey(peer, headers.forwarded, headers['x-forwarded-for'], this.#ipv6Prefix);
  }

  /**
   * Whether the path of `url` is one of the exempt paths or below one.
   * @param {string} url
   * @returns {boolean}
   */
  #exempt(url) {
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    for (const prefix of this.#exemptPaths) {
      if (path === prefix) return true;
      if (path.startsWith(prefix) && (prefix.endsWith('/') || path.charCodeAt(prefix.length) === 47 /* '/' */)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A refusal's body, as built by the `body` option (or the default text).
   * @param {Req} request
   * @param {Decision} decision
   * @returns {unknown}
   */
  body(request, decision) {
    return this.#body === undefined ? DEFAULT_BODY : this.#body(request, decision);
  }
}

/**
 * Whether `value` is a thenable.
 * @param {unknown} value
 * @returns {value is PromiseLike<unknown>}
 */
function isThenable(value) {
  return typeof value === 'object' && value !== null && typeof (/** @type {{ then?: unknown }} */ (value).then) === 'function';
}

module.exports = { Engine, isThenable, OPTIONS, SHORT_FORM };
