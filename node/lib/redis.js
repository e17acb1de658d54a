'use strict';
/**
 * Limits shared by many processes and hosts through Redis (or a Redis
 * Cluster): `RedisStore`, the connection; `RedisLimiter`, exact mode (every
 * decision one atomic script run, timed by the server's clock);
 * `RedisLeasedLimiter`, leased mode; `RedisDividedLimiter`, divided mode;
 * `Membership`, the live nodes of a group; `RedisRateLimiter`, Guava's
 * `RateLimiter` shared by every process; `RedisConcurrencyLimiter`, permits
 * held at once as leases that expire (each a `ConcurrencyLease`).
 *
 * Thin shells over native functions bound to the `ratekeeper-redis` crate's
 * objects (bindings/node/src/redis/). Anything that talks to Redis returns a
 * Promise, settled from the crate's own thread (bindings/node/src/promise.rs)
 * or, for exact-mode checks on a single server, from the store's own socket
 * on this thread (`Pipe`): the event loop is never blocked, and never kept
 * alive by an idle store.
 * Failures reject with an `Error` whose `code` says what happened
 * (`ERR_RATEKEEPER_REDIS_UNAVAILABLE`, `…_TIMEOUT`, `…_ERROR`, `…_PROTOCOL`,
 * `…_UNSUPPORTED`, `ERR_RATEKEEPER_CLOSED`); bad arguments are the same
 * `RangeError`s and `TypeError`s as everywhere in the package.
 * @module
 */

const net = require('node:net');
const tls = require('node:tls');
const native = require('./binding.js');
const { views } = require('./admission.js');
const { Decision, decisionAt } = require('./decision.js');
const { LIMITER, noPublicConstructor } = require('./internal.js');
const { readOptions } = require('./options.js');
const { signalOf, sleep, unlessAborted } = require('./sleep.js');

const STORE_OPTIONS = Object.freeze([
  'timeoutMs',
  'timeoutMicros',
  'connectTimeoutMs',
  'connectTimeoutMicros',
  'retryIntervalMs',
  'retryIntervalMicros',
  'username',
  'password',
  'tls',
]);
/** The options of `StoreOptions.tls`: `tls.connect`'s names. */
const TLS_OPTIONS = Object.freeze(['ca', 'cert', 'key', 'servername', 'rejectUnauthorized']);
const LIMITER_OPTIONS = Object.freeze(['rememberRefusals', 'whenUnavailable', 'membership', 'maxKeys', 'maxKeyBytes']);
const COMPOSITE_OPTIONS = Object.freeze(['whenUnavailable', 'maxKeyBytes']);
const LEASED_OPTIONS = Object.freeze(['batch', 'leaseMs', 'leaseMicros', 'maxKeyBytes']);
const DIVIDED_OPTIONS = Object.freeze(['heartbeatTtlMs', 'heartbeatTtlMicros', 'maxKeys', 'maxKeyBytes']);
const MEMBERSHIP_OPTIONS = Object.freeze(['ttlMs', 'ttlMicros']);
const SHARED_OPTIONS = Object.freeze([
  'warmupMs',
  'warmupMicros',
  'coldFactor',
  'maxBurstSeconds',
  'idleTtlMs',
  'idleTtlMicros',
]);
const CONCURRENCY_OPTIONS = Object.freeze(['leaseTtlMs', 'leaseTtlMicros', 'whenUnavailable']);
const TIMEOUT_OPTIONS = Object.freeze(['timeoutMs', 'timeoutMicros']);
const ACQUIRE_OPTIONS = Object.freeze(['signal']);
const TRY_ACQUIRE_OPTIONS = Object.freeze(['timeoutMs', 'timeoutMicros', 'signal']);

/**
 * Whether an immediate will send this turn's checks. `RedisLimiter.check`
 * queues each check on the native side, and the first in a turn of the
 * event loop queues `flush` with `setImmediate`, which runs once the I/O
 * callbacks of the turn's poll phase (and their microtasks) are done: the
 * checks of one turn — of every HTTP request whose bytes came in that
 * phase, or of every worker woken by one batch of answers — go to Redis
 * together, in one native call and a few writes
 * (bindings/node/src/redis/batch.rs). A microtask instead flushed once per
 * I/O callback, so once per HTTP request under load: a write (a system
 * call, and a read for Redis) per request, which cost a server through
 * Redis more of its own time and of Redis's per request than the
 * middleware's whole work (benches/http/node). The price: a check made
 * alone waits for the rest of its turn's callbacks (none, when nothing
 * else is ready; the timers and the poll of the next turn when made
 * outside an I/O callback, as from the main script) before it goes out.
 */
let flushQueued = false;

/** The pipes (store sockets) of this turn's checks. */
const pipesToSend = new Set();

function flush() {
  flushQueued = false;
  native.redisFlush();
  for (const pipe of pipesToSend) pipe.send();
  pipesToSend.clear();
}

/**
 * A store's own socket, on which this thread's exact-mode checks go out and
 * whose replies settle their Promises here, with no other thread involved
 * (bindings/node/src/redis/pipe.rs). The native side decides everything:
 * when to connect, what to write, what a reply answers, when a check has
 * timed out. Checks go through the store's own connection while this
 * socket is not open. The socket and its timer never keep the process
 * alive by themselves: a pending check does.
 */
class Pipe {
  /** @type {import('./binding.js').RedisStoreMethods} */
  #native;
  /** @type {import('node:net').Socket | null} */
  #socket = null;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;
  /** Whether the socket has connected (the timer runs only then). */
  #connected = false;
  #closed = false;
  /** The decision timeout. */
  #timeoutMs;
  /** The longest the socket may take to connect (the store's connect timeout). */
  #connectTimeoutMs;

  /**
   * @param {import('./binding.js').RedisStoreMethods} methods
   */
  constructor(methods) {
    this.#native = methods;
    this.#timeoutMs = timerMs(methods.timeoutMs);
    this.#connectTimeoutMs = timerMs(methods.pipeConnectTimeoutMs ?? methods.timeoutMs);
    this.send();
  }

  /** Writes what this turn's checks queued, or opens the socket if it should. */
  send() {
    if (this.#socket === null) {
      if (!this.#closed && this.#native.pipeConnect()) this.#open();
      return;
    }
    this.#writeAll();
  }

  /**
   * Writes what the native side has to send, a batch as up to four writes:
   * Redis starts on the first while the rest are written, and answers it on
   * its own (crates/ratekeeper-redis/src/pipe.rs, "Pipelining").
   */
  #writeAll() {
    const socket = this.#socket;
    if (socket === null) return;
    for (let out; (out = this.#native.pipeOutput()) !== undefined; ) socket.write(out);
    if (this.#timer === null && this.#connected) this.#arm(this.#timeoutMs);
  }

  #open() {
    const [host, port] = [String(this.#native.pipeHost), Number(this.#native.pipePort)];
    const settings = this.#native.pipeTls;
    const socket =
      settings === undefined
        ? net.createConnection({ host, port, noDelay: true })
        : tls.connect({ host, port, ...tlsOptions(settings) }).setNoDelay(true);
    this.#socket = socket;
    this.#connected = false;
    /** Why the TLS handshake failed, if it did (see `tlsFailure`). */
    let refused = /** @type {string | null} */ (null);
    socket.unref();
    socket.setTimeout(this.#connectTimeoutMs);
    socket.once(settings === undefined ? 'connect' : 'secureConnect', () => {
      if (this.#socket !== socket) return;
      if (this.#closed) return this.#drop();
      socket.setTimeout(0);
      this.#connected = true;
      this.#native.pipeOpened();
      this.#writeAll();
    });
    socket.on('data', (bytes) => {
      if (this.#socket !== socket) return;
      if (this.#native.pipeReceived(bytes) === -2) this.#drop();
      else this.#writeAll();
    });
    socket.on('timeout', () => socket.destroy());
    // 'close' follows, and says it: a certificate refused as a TLS error
    // (the server is up), anything else as the connection lost.
    socket.on('error', (error) => {
      if (settings !== undefined) refused ??= tlsFailure(error);
    });
    socket.on('close', () => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      this.#connected = false;
      this.#disarm();
      if (refused === null) this.#native.pipeLost();
      else this.#native.pipeTlsFailed(refused);
    });
  }

  /** @param {number} ms */
  #arm(ms) {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const next = this.#native.pipeExpire();
      if (next === -2) this.#drop();
      else if (next >= 0) this.#arm(timerMs(next));
    }, ms);
    this.#timer.unref();
  }

  #disarm() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * The socket goes: the native side closed the pipe (it failed what was
   * waiting), or the store closed. `pipeLost` tells the native side in
   * case it did not know (a socket still connecting).
   */
  #drop() {
    const socket = this.#socket;
    this.#socket = null;
    this.#connected = false;
    this.#disarm();
    socket?.destroy();
    this.#native.pipeLost();
  }

  /**
   * The store closed: no new socket. The native side keeps the pipe while
   * checks already sent wait on it (they complete, or time out), and says
   * when it is gone; the socket then goes.
   */
  close() {
    this.#closed = true;
    if (this.#socket !== null && this.#native.pipeExpire() === -2) this.#drop();
  }
}

/**
 * `tls.connect`'s options for the store's TLS settings, which the native
 * side gives as the store's own connections use them (the CA, client
 * certificate and key read from their files already). The certificate must
 * carry `serverName`: Node checks it (`checkServerIdentity`), and sends it
 * in SNI unless it is an IP address, which SNI cannot carry.
 * @param {import('./binding.js').PipeTls} settings
 * @returns {import('node:tls').ConnectionOptions}
 */
function tlsOptions(settings) {
  const name = settings.serverName;
  // Buffers (declared as the Uint8Arrays they are, for callers without
  // Node's types).
  const buffer = (/** @type {Uint8Array | undefined} */ bytes) => /** @type {Buffer | undefined} */ (bytes);
  return {
    ca: buffer(settings.ca),
    cert: buffer(settings.cert),
    key: buffer(settings.key),
    rejectUnauthorized: settings.rejectUnauthorized,
    servername: net.isIP(name) === 0 ? name : undefined,
    checkServerIdentity: (_host, certificate) => tls.checkServerIdentity(name, certificate),
  };
}

/**
 * Why a TLS socket failed, if it was on a certificate — not trusted, for
 * another name, expired, or the client's refused by the server (OpenSSL's
 * verification codes, `ERR_TLS_CERT_ALTNAME_INVALID`, and the alerts a
 * server sends, `ERR_SSL_…`) — else `null` (a system call's failure: the
 * connection refused, reset, or timed out).
 * @param {Error & { code?: unknown, syscall?: unknown }} error
 * @returns {string | null}
 */
function tlsFailure(error) {
  const code = error.code;
  // ECONNRESET, EPIPE, ... (not always with a `syscall`: a connection
  // closed during the handshake has none) are no certificate's.
  if (typeof error.syscall === 'string' || typeof code !== 'string' || /^E[A-Z]+$/.test(code)) return null;
  return `${code}: ${error.message}`;
}

/**
 * A delay `setTimeout` takes as given: at least 1 ms, and at most 2^31 − 1
 * (Node fires a longer one at once).
 * @param {number} ms
 */
function timerMs(ms) {
  return Math.min(2 ** 31 - 1, Math.max(1, Math.ceil(ms)));
}

/** Whether the native side can settle this environment's Promises yet. */
let ready = false;

/**
 * Sets up, once, how decisions come back from the crate's thread: into
 * these scratch words, made into a `Decision` by `decisionAt` (as every
 * synchronous decision is).
 */
function setUp() {
  if (ready) return;
  /** @type {Float64Array} */
  let f = new Float64Array(0);
  /** @type {BigInt64Array} */
  let big = new BigInt64Array(0);
  [f, big] = views(native.redisInit(() => decisionAt(f, big, 0)));
  ready = true;
}

/**
 * The native object of a store (another value is passed on as it is, for
 * the native module to refuse with a `TypeError`). Set by `RedisStore`'s
 * static block.
 * @type {(store: unknown) => unknown}
 */
let storeNative;

/**
 * A lease of the native lease object `tryAcquire` resolved to, made by
 * `ConcurrencyLease`'s static block (its constructor is private).
 * @type {(methods: import('./binding.js').RedisLeaseMethods) => ConcurrencyLease}
 */
let leaseOf;

/**
 * The pipe of a store (`null` when it has none). Set by `RedisStore`'s
 * static block.
 * @type {(store: unknown) => Pipe | null}
 */
let storePipe;

/**
 * The native object of a membership, likewise. Set by `Membership`'s
 * static block.
 * @type {(membership: unknown) => unknown}
 */
let membershipNative;

/**
 * @typedef {object} StoreOptions
 * @property {number} [timeoutMs] The longest any one decision may take,
 *   reconnection included; past it the call fails with
 *   `ERR_RATEKEEPER_REDIS_TIMEOUT` and the limiter's `whenUnavailable`
 *   policy decides. Above 0, at most an hour. Default 100.
 * @property {number | bigint} [timeoutMicros] The same in exact microseconds.
 * @property {number} [connectTimeoutMs] The longest one attempt to connect
 *   may take. Above 0, at most an hour. Default 250.
 * @property {number | bigint} [connectTimeoutMicros] The same in exact microseconds.
 * @property {number} [retryIntervalMs] After Redis failed to answer,
 *   decisions stop trying it for this long (failing at once with
 *   `ERR_RATEKEEPER_REDIS_UNAVAILABLE`, or deciding by the policy), so that
 *   a dead server costs no timeouts; then the next decision tries again.
 *   0 to an hour. Default 200.
 * @property {number | bigint} [retryIntervalMicros] The same in exact microseconds.
 * @property {string} [username] The ACL user to authenticate as; overrides
 *   the URL's (`redis://user:password@host`).
 * @property {string} [password] Its password (or the `default` user's);
 *   overrides the URL's.
 * @property {TlsOptions} [tls] TLS, whatever the URL's scheme (without it,
 *   TLS only for a `rediss://` URL, with the system's roots). A certificate
 *   not trusted, for another name, expired, or refused rejects with
 *   `ERR_RATEKEEPER_REDIS_TLS`, and never marks the store down.
 */

/**
 * TLS settings, under `tls.connect`'s names.
 * @typedef {object} TlsOptions
 * @property {string | Uint8Array | ReadonlyArray<string | Uint8Array>} [ca]
 *   The certificates to trust (PEM). Default: the system's roots.
 * @property {string | Uint8Array} [cert] A client certificate chain (PEM),
 *   for mutual TLS; with `key`.
 * @property {string | Uint8Array} [key] Its private key (PEM); with `cert`.
 * @property {string} [servername] The name the server's certificate must
 *   carry. Default: the URL's host.
 * @property {boolean} [rejectUnauthorized] `false` encrypts but verifies
 *   nothing: any certificate, for any name, is accepted, so anyone who can
 *   intercept the connection can read and change it. For tests only.
 *   Default `true`.
 */

/**
 * A connection to Redis or a Redis Cluster that any number of limiters
 * share: one multiplexed, reconnecting connection, on which their requests
 * are pipelined, driven by ratekeeper's own thread.
 *
 * An idle store does not keep the process alive. `close()` closes it and
 * every limiter and membership made from it.
 *
 * @example
 * const store = await RedisStore.connect('redis://127.0.0.1:6379/');
 * const api = new RedisLimiter(store, 'api', { algorithm: 'gcra', maxBurst: 99, countPerPeriod: 1000, periodMs: 1000 });
 * const d = await api.check(`user:${id}`);
 */
class RedisStore {
  /** @type {import('./binding.js').RedisStoreMethods} */
  #native;
  /** @type {Pipe | null} */
  #pipe = null;

  /**
   * Use `RedisStore.connect` or `RedisStore.connectCluster`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').RedisStoreMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) noPublicConstructor('RedisStore', 'use RedisStore.connect(url, options)');
    this.#native = methods;
    if (methods.pipeHost !== undefined) this.#pipe = new Pipe(methods);
  }

  static {
    storeNative = (store) =>
      typeof store === 'object' && store !== null && #native in store ? /** @type {RedisStore} */ (store).#native : store;
    storePipe = (store) => /** @type {RedisStore} */ (store).#pipe;
  }

  /**
   * Connects to one Redis server, waiting at most `connectTimeoutMs`.
   * Rejects with `ERR_RATEKEEPER_REDIS_UNAVAILABLE` (or `…_TIMEOUT`) when
   * it cannot, `ERR_RATEKEEPER_REDIS_AUTH` when the server refuses the
   * credentials, `ERR_RATEKEEPER_REDIS_TLS` when TLS cannot be set up.
   * @param {string} url `redis://[user:password@]host[:port][/db]`, or
   *   `rediss://…` for TLS.
   * @param {StoreOptions} [options]
   * @returns {Promise<RedisStore>}
   */
  static async connect(url, options) {
    setUp();
    const o = readOptions(options, STORE_OPTIONS);
    const methods = await native.redisConnect(
      url,
      false,
      o.timeoutMs,
      o.timeoutMicros,
      o.connectTimeoutMs,
      o.connectTimeoutMicros,
      o.retryIntervalMs,
      o.retryIntervalMicros,
      o.username,
      o.password,
      o.tls === undefined ? undefined : readOptions(o.tls, TLS_OPTIONS),
      undefined,
    );
    return new RedisStore(LIMITER, methods);
  }

  /**
   * Connects to a Redis Cluster through any of its nodes. A limiter's keys
   * share a hash slot per user key, so each decision is still one script
   * run on one node.
   * @param {readonly string[]} urls At least one node's URL.
   * @param {StoreOptions} [options]
   * @returns {Promise<RedisStore>}
   */
  static async connectCluster(urls, options) {
    setUp();
    const o = readOptions(options, STORE_OPTIONS);
    const methods = await native.redisConnect(
      urls,
      true,
      o.timeoutMs,
      o.timeoutMicros,
      o.connectTimeoutMs,
      o.connectTimeoutMicros,
      o.retryIntervalMs,
      o.retryIntervalMicros,
      o.username,
      o.password,
      o.tls === undefined ? undefined : readOptions(o.tls, TLS_OPTIONS),
      undefined,
    );
    return new RedisStore(LIMITER, methods);
  }

  /**
   * Connects to the master that Redis Sentinel names `masterName`, asking
   * the `sentinels` (`redis://host:port`; a sentinel's own password in its
   * URL, `redis://:password@host:port`). The store follows a failover: when
   * the master stops answering or answers `READONLY`, the sentinels are
   * asked again (at most once per `retryIntervalMs`, no call waiting past
   * `timeoutMs`) and the store connects to the new master; meanwhile each
   * limiter's `whenUnavailable` decides. Every check goes through the
   * store's own connection (no socket of Node's: see `pipe`).
   * @param {readonly string[]} sentinels At least one sentinel's URL.
   * @param {string} masterName The name the sentinels monitor it by.
   * @param {StoreOptions} [options]
   * @returns {Promise<RedisStore>}
   */
  static async connectSentinel(sentinels, masterName, options) {
    setUp();
    const o = readOptions(options, STORE_OPTIONS);
    const methods = await native.redisConnect(
      sentinels,
      false,
      o.timeoutMs,
      o.timeoutMicros,
      o.connectTimeoutMs,
      o.connectTimeoutMicros,
      o.retryIntervalMs,
      o.retryIntervalMicros,
      o.username,
      o.password,
      o.tls === undefined ? undefined : readOptions(o.tls, TLS_OPTIONS),
      masterName === undefined ? null : masterName,
    );
    return new RedisStore(LIMITER, methods);
  }

  /**
   * The name of the master Redis Sentinel was asked for; `null` for a store
   * connected otherwise.
   * @type {string | null}
   */
  get masterName() {
    return this.#native.masterName ?? null;
  }

  /**
   * Whether Redis failed to answer within the last retry interval (decisions
   * are not sending it anything meanwhile).
   * @type {boolean}
   */
  get isDown() {
    return this.#native.isDown();
  }

  /**
   * Whether this is a Redis Cluster connection.
   * @type {boolean}
   */
  get cluster() {
    return this.#native.cluster;
  }

  /**
   * The decision timeout, in milliseconds.
   * @type {number}
   */
  get timeoutMs() {
    return this.#native.timeoutMs;
  }

  /**
   * The retry interval, in milliseconds.
   * @type {number}
   */
  get retryIntervalMs() {
    return this.#native.retryIntervalMs;
  }

  /**
   * Whether `close()` was called.
   * @type {boolean}
   */
  get closed() {
    return this.#native.closed();
  }

  /**
   * Closes the connection, and every limiter and membership made from this
   * store (their calls then reject with `ERR_RATEKEEPER_CLOSED`; calls
   * already sent complete). Closing twice does nothing more.
   */
  close() {
    this.#native.close();
    this.#pipe?.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisStore';
  }
}

/**
 * @typedef {'error' | 'failClosed' | 'failOpen' | 'localShare'} WhenUnavailable
 *   What a decision does when Redis cannot answer (down, unreachable, or
 *   slower than the store's timeout): `error` rejects with the error (the
 *   default); `failClosed` refuses every request (retry after the store's
 *   retry interval); `failOpen` admits every request; `localShare` decides
 *   in this process with its share of the limit, `limit ÷ the last known
 *   number of live nodes` of `membership` (never the whole limit in every
 *   process), and goes back to Redis as soon as it answers.
 */

/**
 * @typedef {object} RedisLimiterOptions
 * @property {boolean} [rememberRefusals] Whether a refusal with a
 *   retry-after is remembered, so that the same key's requests (of the same
 *   cost or more) are refused in this process without a round trip until
 *   then — never later than Redis would. Default true.
 * @property {WhenUnavailable} [whenUnavailable] Default `error`.
 * @property {Membership} [membership] For `localShare`: the group whose
 *   live nodes divide the limit.
 * @property {number | bigint} [maxKeys] For `localShare`: the most keys the
 *   local share holds (see `KeyedLimiter`).
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes: 1 to
 *   65536, default 256. A longer key rejects with a `RangeError` naming
 *   `key` (its length as the value), and nothing is sent.
 */

/**
 * Exact mode: every decision is one atomic script run in Redis, timed by
 * the server's clock, so every process sharing the `name` (and the Redis)
 * shares each key's limit exactly, and decides as one local limiter would.
 * GCRA (redis-cell's reply), the token bucket, the fixed window, the sliding
 * window counter and the sliding log run in Redis; other algorithms throw
 * `ERR_RATEKEEPER_REDIS_UNSUPPORTED`. A key is a string (its UTF-8) or a
 * `Uint8Array` (its bytes), as a `KeyedLimiter`'s.
 *
 * @example
 * const api = new RedisLimiter(store, 'api',
 *   { algorithm: 'gcra', maxBurst: 99, countPerPeriod: 1000, periodMs: 1000 },
 *   { whenUnavailable: 'failClosed' });
 * const d = await api.check(`user:${id}`);
 * if (!d.allowed) res.writeHead(429, d.headers('api'));
 */
class RedisLimiter {
  /** @type {import('./binding.js').RedisLimiterMethods} */
  #native;
  #check;
  /** @type {Pipe | null} */
  #pipe;

  /**
   * @param {RedisStore} store
   * @param {string} name Processes using the same name share its keys.
   * @param {import('./composite.js').LimitOptions} limit Each key's limit.
   * @param {RedisLimiterOptions} [options]
   */
  constructor(store, name, limit, options) {
    const o = readOptions(options, LIMITER_OPTIONS);
    this.#native = native.redisLimiterCreate(
      storeNative(store),
      name,
      limit,
      o.rememberRefusals,
      o.whenUnavailable,
      o.membership === undefined ? undefined : membershipNative(o.membership),
      o.maxKeys,
      o.maxKeyBytes,
    );
    this.#check = this.#native.check;
    this.#pipe = storePipe(store);
  }

  /**
   * Admits `cost` units for `key` if the shared limit allows (consuming
   * them), or refuses (consuming nothing): one round trip, or none when a
   * remembered refusal decides.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<import('./decision.js').Decision>}
   */
  check(key, cost) {
    if (!flushQueued) {
      flushQueued = true;
      setImmediate(flush);
    }
    if (this.#pipe !== null) pipesToSend.add(this.#pipe);
    return /** @type {Promise<import('./decision.js').Decision>} */ (this.#check(key, cost));
  }

  /**
   * The decision `check(key, cost)` would make now, consuming nothing.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<import('./decision.js').Decision>}
   */
  peek(key, cost) {
    return /** @type {Promise<import('./decision.js').Decision>} */ (this.#native.peek(key, cost));
  }

  /**
   * Gives `cost` units back to `key`, as the in-process limiters' `refund`
   * does (each algorithm gives back what it can, never more than a fresh
   * state holds), atomically at the server's time: a request that should
   * not count (express-rate-limit's `skipFailedRequests`). Resolves when
   * Redis has taken it; not a decision, so it rejects when Redis cannot
   * answer, whatever `whenUnavailable` (the caller may ignore that). This
   * process's remembered refusal for the key goes too.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<void>}
   */
  refund(key, cost) {
    return this.#native.refund(key, cost);
  }

  /**
   * Forgets `key`'s state in Redis (every key of it, deleted atomically):
   * its next request is decided as a new key's, with the whole limit — as
   * `KeyedLimiter.remove`, rate-limiter-flexible's `delete`. Resolves to
   * whether Redis held a state (an unknown key: `false`). This process's
   * remembered refusal for the key goes too; other processes' run out by
   * their retry-after. Not a decision: rejects when Redis cannot answer,
   * whatever `whenUnavailable`.
   * @param {string | Uint8Array} key
   * @returns {Promise<boolean>}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * The quota: the most units admitted at once.
   * @type {number}
   */
  get limit() {
    return this.#native.limit;
  }

  /**
   * The longest key taken, in bytes.
   * @type {number}
   */
  get maxKeyBytes() {
    return this.#native.maxKeyBytes;
  }

  /** Releases the limiter now (later calls reject with `ERR_RATEKEEPER_CLOSED`). */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisLimiter';
  }
}

/**
 * @typedef {object} RedisCompositeOptions
 * @property {'error' | 'failClosed' | 'failOpen'} [whenUnavailable] When
 *   Redis cannot answer a decision: reject (`error`, the default), refuse
 *   in every part (`failClosed`), or admit (`failOpen`). There is no local
 *   share for a composite.
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes, as
 *   for `RedisLimiter`.
 */

/**
 * Several limits on the same keys through Redis, admitted all or nothing
 * in one script run (`'10/second; 1000/hour'` for one client): a request
 * is admitted only if every part admits it, and a refusal takes nothing
 * from any part — as `CompositeLimiter` decides in one process. Each part
 * is given as a `CompositeLimiter`'s is, with the algorithms
 * `RedisLimiter` runs in Redis; every part of a key lives under one hash
 * tag, so it works on a Redis Cluster.
 *
 * @example
 * const perUser = new RedisCompositeLimiter(store, 'api', [
 *   { algorithm: 'slidingWindowCounter', limit: 10, windowMs: 1_000 },
 *   { algorithm: 'fixedWindow', limit: 1_000, windowMs: 3_600_000 },
 * ]);
 * const { decision, parts } = await perUser.check(`user:${id}`);
 */
class RedisCompositeLimiter {
  /** @type {import('./binding.js').RedisCompositeMethods} */
  #native;

  /**
   * @param {RedisStore} store
   * @param {string} name Processes using the same name share its keys.
   * @param {import('./composite.js').LimitOptions[]} limits The parts, in
   *   order; an error in one names it (`limits[1]`).
   * @param {RedisCompositeOptions} [options]
   */
  constructor(store, name, limits, options) {
    const o = readOptions(options, COMPOSITE_OPTIONS);
    this.#native = native.redisCompositeCreate(
      storeNative(store),
      name,
      limits,
      o.whenUnavailable,
      o.maxKeyBytes,
    );
  }

  /**
   * Admits `cost` units for `key` in every part, or in none: the combined
   * decision (the strictest part's) and each part's, in order.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }>}
   */
  async check(key, cost) {
    return each(await this.#native.check(key, cost));
  }

  /**
   * The decisions `check(key, cost)` would make now, consuming nothing.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }>}
   */
  async peek(key, cost) {
    return each(await this.#native.peek(key, cost));
  }

  /**
   * Gives `cost` units back to every part of `key` (each as its algorithm
   * can: see `RedisLimiter.refund`), in one script run. Rejects when Redis
   * cannot answer, whatever `whenUnavailable`.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<void>}
   */
  refund(key, cost) {
    return this.#native.refund(key, cost);
  }

  /**
   * Forgets `key`'s state in every part (deleted atomically); whether Redis
   * held any.
   * @param {string | Uint8Array} key
   * @returns {Promise<boolean>}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * The strictest part's quota: the most units ever admitted at once.
   * @type {number}
   */
  get limit() {
    return this.#native.limit;
  }

  /**
   * How many parts (limits).
   * @type {number}
   */
  get parts() {
    return this.#native.parts;
  }

  /**
   * The longest key taken, in bytes.
   * @type {number}
   */
  get maxKeyBytes() {
    return this.#native.maxKeyBytes;
  }

  /** Releases the limiter now (later calls reject with `ERR_RATEKEEPER_CLOSED`). */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisCompositeLimiter';
  }
}

/**
 * `[combined, ...parts]` as `{ decision, parts }`.
 * @param {unknown[]} decisions
 * @returns {{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }}
 */
function each(decisions) {
  const all = /** @type {import('./decision.js').Decision[]} */ (decisions);
  return { decision: all[0], parts: all.slice(1) };
}

/**
 * @typedef {object} LeasedOptions
 * @property {number | bigint} batch Units taken from Redis per round trip
 *   (1 to the limit).
 * @property {number} [leaseMs] How long a taken batch may be spent, in
 *   milliseconds; units left when it expires are lost.
 * @property {number | bigint} [leaseMicros] The same in exact microseconds.
 *   Give one or the other.
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes, as
 *   for `RedisLimiter`.
 */

/**
 * Leased mode: one round trip takes up to `batch` units for a key, which
 * this process then admits locally, without a round trip, until it runs
 * out or the lease expires. Every unit admitted was first taken from the
 * shared limit, so the total never exceeds it; what moves is when: in any
 * interval T the processes together admit at most `rate × (T + lease) +
 * burst`, and each may lose up to `batch` units per lease. GCRA and the
 * token bucket only.
 */
class RedisLeasedLimiter {
  /** @type {import('./binding.js').RedisLeasedMethods} */
  #native;
  #check;

  /**
   * @param {RedisStore} store
   * @param {string} name
   * @param {import('./composite.js').LimitOptions} limit GCRA or the token bucket.
   * @param {LeasedOptions} options
   */
  constructor(store, name, limit, options) {
    const o = readOptions(options, LEASED_OPTIONS);
    this.#native = native.redisLeasedCreate(
      storeNative(store),
      name,
      limit,
      o.batch,
      o.leaseMs,
      o.leaseMicros,
      o.maxKeyBytes,
    );
    this.#check = this.#native.check;
  }

  /**
   * Admits `cost` units for `key` from this process's lease, or takes a new
   * lease (one round trip) when it holds too few. An admission from a lease
   * has the units left in it as `remaining`.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<import('./decision.js').Decision>}
   */
  check(key, cost) {
    return /** @type {Promise<import('./decision.js').Decision>} */ (this.#check(key, cost));
  }

  /**
   * The decision `check(key, cost)` would make now in this process, taking
   * nothing: from this process's lease when it holds `cost` (no round
   * trip), else Redis's shared state plus that lease — the lease the check
   * would take, computed without taking it. Other processes' leases are not
   * seen (they were taken from the shared state already).
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {Promise<import('./decision.js').Decision>}
   */
  peek(key, cost) {
    return /** @type {Promise<import('./decision.js').Decision>} */ (this.#native.peek(key, cost));
  }

  /**
   * Forgets `key`: deletes its shared state in Redis and drops this
   * process's lease on it; resolves to whether Redis held a state. Other
   * processes spend the leases they hold: each may still admit up to
   * `batch` units for the key within its lease's lifetime.
   * @param {string | Uint8Array} key
   * @returns {Promise<boolean>}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * The longest key taken, in bytes.
   * @type {number}
   */
  get maxKeyBytes() {
    return this.#native.maxKeyBytes;
  }

  /** Releases the limiter now. */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisLeasedLimiter';
  }
}

/**
 * @typedef {object} DividedOptions
 * @property {number} [heartbeatTtlMs] How long a node counts as live after
 *   its last heartbeat (it heartbeats every third of it), in milliseconds:
 *   3 to a day (86400000).
 * @property {number | bigint} [heartbeatTtlMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {number | bigint} maxKeys The most keys this node holds.
 * @property {number | bigint} [maxKeyBytes] The longest key, in bytes, as
 *   for `KeyedLimiter` (1 to 65536, default 256).
 */

/**
 * Divided mode: every process joins the group `name` (heartbeats into Redis)
 * and enforces `limit ÷ live nodes` on its own, per key, with no round trip
 * per decision — so `check` is synchronous. The shares add up to the limit
 * when traffic is spread evenly; a busy node is refused while an idle one
 * has room.
 */
class RedisDividedLimiter {
  /** @type {import('./binding.js').RedisDividedMethods} */
  #native;
  #f;
  #big;

  /**
   * Use `RedisDividedLimiter.create`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').RedisDividedMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) noPublicConstructor('RedisDividedLimiter', 'use RedisDividedLimiter.create(store, name, limit, options)');
    this.#native = methods;
    [this.#f, this.#big] = views(methods.scratch);
  }

  /**
   * Joins the group `name` and resolves to a limiter enforcing this
   * process's share of `limit`.
   * @param {RedisStore} store
   * @param {string} name
   * @param {import('./composite.js').LimitOptions} limit The whole limit, per key.
   * @param {DividedOptions} options
   * @returns {Promise<RedisDividedLimiter>}
   */
  static async create(store, name, limit, options) {
    const o = readOptions(options, DIVIDED_OPTIONS);
    const methods = await native.redisDividedCreate(
      storeNative(store),
      name,
      limit,
      o.heartbeatTtlMs,
      o.heartbeatTtlMicros,
      o.maxKeys,
      o.maxKeyBytes,
    );
    return new RedisDividedLimiter(LIMITER, methods);
  }

  /**
   * Decides `cost` units for `key` with this process's share. Never waits.
   * Synchronous.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  check(key, cost) {
    this.#native.check(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * The decision `check(key, cost)` would make now with this process's
   * share, taking nothing (divided mode keeps no per-key state in Redis).
   * Synchronous.
   * @param {string | Uint8Array} key
   * @param {number | bigint} [cost=1]
   * @returns {import('./decision.js').Decision}
   */
  peek(key, cost) {
    this.#native.peek(key, cost);
    return decisionAt(this.#f, this.#big, 0);
  }

  /**
   * Forgets `key` in this process's share (whether it held it): its next
   * request starts from a whole share. Other nodes' shares keep their
   * counts: call it on every node to reset the whole limit. Synchronous.
   * @param {string | Uint8Array} key
   * @returns {boolean}
   */
  remove(key) {
    return this.#native.remove(key);
  }

  /**
   * The live nodes as last read.
   * @type {number}
   */
  get nodes() {
    return this.#native.nodes();
  }

  /**
   * This process's id in the group.
   * @type {string}
   */
  get nodeId() {
    return this.#native.nodeId;
  }

  /**
   * The longest key taken, in bytes.
   * @type {number}
   */
  get maxKeyBytes() {
    return this.#native.maxKeyBytes;
  }

  /** Leaves the group and releases the limiter now. */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisDividedLimiter';
  }
}

/**
 * @typedef {object} MembershipOptions
 * @property {number} [ttlMs] How long a node counts as live after its last
 *   heartbeat (it heartbeats every third of it), in milliseconds: 3 to a
 *   day (86400000).
 * @property {number | bigint} [ttlMicros] The same in exact microseconds.
 *   Give one or the other.
 */

/**
 * This process's place in a group of nodes sharing limits: it heartbeats
 * into Redis in the background, and `nodes` is the live count as last read
 * (kept while Redis is away). A `RedisLimiter` with `whenUnavailable:
 * 'localShare'` divides its limit by it.
 */
class Membership {
  /** @type {import('./binding.js').MembershipMethods} */
  #native;

  /**
   * Use `Membership.join`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').MembershipMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) noPublicConstructor('Membership', 'use Membership.join(store, group, options)');
    this.#native = methods;
  }

  static {
    membershipNative = (membership) =>
      typeof membership === 'object' && membership !== null && #native in membership
        ? /** @type {Membership} */ (membership).#native
        : membership;
  }

  /**
   * Joins `group` as a new node; rejects if Redis cannot be reached for
   * the first heartbeat.
   * @param {RedisStore} store
   * @param {string} group
   * @param {MembershipOptions} options
   * @returns {Promise<Membership>}
   */
  static async join(store, group, options) {
    const o = readOptions(options, MEMBERSHIP_OPTIONS);
    const methods = await native.redisMembershipJoin(storeNative(store), group, o.ttlMs, o.ttlMicros);
    return new Membership(LIMITER, methods);
  }

  /**
   * The live nodes as last read (at least 1: this one).
   * @type {number}
   */
  get nodes() {
    return this.#native.nodes();
  }

  /**
   * This process's id in the group.
   * @type {string}
   */
  get nodeId() {
    return this.#native.nodeId;
  }

  /**
   * Heartbeats now and resolves to the live count (the background
   * heartbeat normally does this).
   * @returns {Promise<number>}
   */
  refresh() {
    return this.#native.refresh();
  }

  /**
   * Releases this handle: the node leaves the group at once, unless a
   * limiter still uses the membership (then when that limiter is closed).
   */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'Membership';
  }
}

/**
 * @typedef {object} RedisRateLimiterOptions
 * @property {number} [warmupMs] Guava's `SmoothWarmingUp`, as for
 *   `RateLimiter.create`.
 * @property {number | bigint} [warmupMicros] The same in exact microseconds.
 * @property {number} [coldFactor] For a warming-up limiter (default 3).
 * @property {number} [maxBurstSeconds] For a bursty limiter (default 1).
 * @property {number} [idleTtlMs] Lets the shared state expire after this
 *   long unused, above 0 (default: never). A limiter recreated after that
 *   starts afresh, as a new Guava limiter does.
 * @property {number | bigint} [idleTtlMicros] The same in exact microseconds.
 */

/**
 * A `RedisRateLimiter`'s shared state as `inspect` reads it, at the
 * server's time of the read.
 * @typedef {object} RedisRateLimiterState
 * @property {number} rate Permits per second.
 * @property {number} storedPermits The permits stored now (Guava's
 *   `storedPermits`, brought up to now).
 * @property {number} maxPermits The most permits that can be stored.
 * @property {number} timeUntilAvailableMs Milliseconds until the next permit
 *   is free: what a `reserve` made now would wait (0 when one is free).
 */

/**
 * Guava's `RateLimiter` shared by every process using the same `name` and
 * Redis: `acquire`/`tryAcquire` from any number of processes give the waits
 * one Guava limiter would give for the same sequence of calls. Every call is
 * a round trip, so every method returns a Promise; waits are timers, which
 * `{ signal }` aborts. (A round trip itself is bounded by the store's
 * `timeoutMs`, here as for every Redis call.)
 *
 * @example
 * const shared = await RedisRateLimiter.create(store, 'reports', 5); // 5 permits/s among all processes
 * await shared.acquire();
 */
class RedisRateLimiter {
  /** @type {import('./binding.js').RedisSmoothMethods} */
  #native;

  /**
   * Use `RedisRateLimiter.create`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').RedisSmoothMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) noPublicConstructor('RedisRateLimiter', 'use RedisRateLimiter.create(store, name, permitsPerSecond, options)');
    this.#native = methods;
  }

  /**
   * Connects to the limiter named `name`, creating it at `permitsPerSecond`
   * unless another process already has (then its rate and parameters are
   * kept). The options are checked as `RateLimiter.create` checks them.
   * @param {RedisStore} store
   * @param {string} name
   * @param {number} permitsPerSecond
   * @param {RedisRateLimiterOptions} [options]
   * @returns {Promise<RedisRateLimiter>}
   */
  static async create(store, name, permitsPerSecond, options) {
    const o = readOptions(options, SHARED_OPTIONS);
    const methods = await native.redisSmoothCreate(
      storeNative(store),
      name,
      permitsPerSecond,
      o.warmupMs,
      o.warmupMicros,
      o.coldFactor,
      o.maxBurstSeconds,
      o.idleTtlMs,
      o.idleTtlMicros,
    );
    return new RedisRateLimiter(LIMITER, methods);
  }

  /**
   * Takes `permits`, waiting (on a timer) until they are granted, and
   * resolves to the seconds waited.
   *
   * `signal` aborts the call (an `AbortError`): before it, nothing is sent;
   * during the round trip, the permits may still be taken; during the wait,
   * they stay taken, as `RateLimiter.acquire`'s do.
   * @param {number | bigint} [permits=1] An integer from 1 to 2^31 − 1.
   * @param {import('./sleep.js').SignalOptions} [options]
   * @returns {Promise<number>}
   */
  async acquire(permits, options) {
    const signal = options === undefined ? undefined : signalOf(readOptions(options, ACQUIRE_OPTIONS).signal);
    const seconds = await unlessAborted(this.#native.reserve(permits), signal);
    if (seconds > 0) await sleep(seconds * 1e3, signal);
    return seconds;
  }

  /**
   * Takes `permits` if they can be had within the timeout (default 0),
   * waiting for them, and resolves to `true`; otherwise resolves to `false`
   * at once, taking nothing. `signal` aborts it as it aborts `acquire`.
   * @param {number | bigint} [permits=1]
   * @param {import('./rate-limiter.js').TryAcquireOptions} [options]
   * @returns {Promise<boolean>}
   */
  async tryAcquire(permits, options) {
    const o = readOptions(options, TRY_ACQUIRE_OPTIONS);
    const signal = signalOf(o.signal);
    const seconds = await unlessAborted(this.#native.tryReserve(permits, o.timeoutMs, o.timeoutMicros), signal);
    if (seconds < 0) return false;
    if (seconds > 0) await sleep(seconds * 1e3, signal);
    return true;
  }

  /**
   * Whether `tryAcquire(permits, options)` would succeed now; takes nothing.
   * @param {import('./rate-limiter.js').TimeoutOptions} [options]
   * @returns {Promise<boolean>}
   */
  async canAcquire(options) {
    const o = readOptions(options, TIMEOUT_OPTIONS);
    return this.#native.canAcquire(o.timeoutMs, o.timeoutMicros);
  }

  /**
   * Milliseconds until a request made now would be granted; takes nothing.
   * @returns {Promise<number>}
   */
  timeUntilAvailable() {
    return this.#native.timeUntilAvailable();
  }

  /**
   * The shared state as of now, writing nothing (a state deleted by `reset`
   * reads as the new limiter the next call makes).
   * @returns {Promise<RedisRateLimiterState>}
   */
  async inspect() {
    const [rate, storedPermits, maxPermits, timeUntilAvailableMs] = await this.#native.inspect();
    return { rate, storedPermits, maxPermits, timeUntilAvailableMs };
  }

  /**
   * Deletes the shared state; resolves to whether there was one. Every
   * process's next call finds a new limiter — no stored permits, made with
   * the rate and parameters of the process that makes it (a rate set with
   * `setRate` since is forgotten).
   * @returns {Promise<boolean>}
   */
  reset() {
    return this.#native.reset();
  }

  /**
   * The stable rate, permits per second (Guava's `getRate`).
   * @returns {Promise<number>}
   */
  getRate() {
    return this.#native.rate();
  }

  /**
   * Guava's `setRate`, for every process sharing the limiter.
   * @param {number} permitsPerSecond
   * @returns {Promise<void>}
   */
  setRate(permitsPerSecond) {
    return this.#native.setRate(permitsPerSecond);
  }

  /**
   * The Redis key holding the shared state.
   * @type {string}
   */
  get key() {
    return this.#native.key;
  }

  /** Releases the limiter now. */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisRateLimiter';
  }
}

/**
 * @typedef {object} ConcurrencyOptions
 * @property {number} [leaseTtlMs] How long a lease lasts after it was
 *   acquired or last renewed, in milliseconds: 1 to a day (86400000).
 * @property {number | bigint} [leaseTtlMicros] The same in exact
 *   microseconds. Give one or the other.
 * @property {'error' | 'failClosed' | 'failOpen'} [whenUnavailable] What an
 *   acquire does when Redis cannot answer: reject (the default), refuse, or
 *   admit with a lease Redis does not hold (`recorded` false).
 */

/**
 * @typedef {object} Acquired
 * @property {import('./decision.js').Decision} decision
 * @property {ConcurrencyLease | null} lease The lease when admitted.
 */

/**
 * A limit of permits held at once, shared by every process that uses the
 * same name on the same Redis (Sentinel's cluster concurrency tokens,
 * Hystrix's semaphore across processes). A permit is a lease that expires
 * `leaseTtlMs` after it was acquired or last renewed, by the server's
 * clock: released exactly once, renewed by long holders, and given back at
 * its expiry when its holder dies, with no process alive to do it. A
 * refusal's `retryAfterMs` is how long until enough leases expire if none
 * is released or renewed.
 *
 * @example
 * const pool = new RedisConcurrencyLimiter(store, 'db', 10, { leaseTtlMs: 30000 });
 * const { decision, lease } = await pool.tryAcquire();
 * if (lease) try { await work(); } finally { await lease.release(); }
 */
class RedisConcurrencyLimiter {
  /** @type {import('./binding.js').RedisConcurrencyMethods} */
  #native;

  /**
   * @param {RedisStore} store
   * @param {string} name Processes using the same name share the limit.
   * @param {number | bigint} limit The most permits held at once.
   * @param {ConcurrencyOptions} options
   */
  constructor(store, name, limit, options) {
    const o = readOptions(options, CONCURRENCY_OPTIONS);
    this.#native = native.redisConcurrencyCreate(
      storeNative(store),
      name,
      limit,
      o.leaseTtlMs,
      o.leaseTtlMicros,
      o.whenUnavailable,
    );
  }

  /**
   * Acquires a lease on `permits` (1 to 2^31 - 1) if the live leases leave
   * room: one round trip.
   * @param {number | bigint} [permits=1]
   * @returns {Promise<Acquired>}
   */
  async tryAcquire(permits) {
    const answer = await this.#native.tryAcquire(permits);
    if (answer instanceof Decision) return { decision: answer, lease: null };
    const methods = /** @type {import('./binding.js').RedisLeaseMethods} */ (answer);
    return { decision: /** @type {import('./decision.js').Decision} */ (methods.decision), lease: leaseOf(methods) };
  }

  /**
   * The decision `tryAcquire(permits)` would make now, taking no lease and
   * writing nothing (expired leases are counted out, not reclaimed).
   * @param {number | bigint} [permits=1]
   * @returns {Promise<import('./decision.js').Decision>}
   */
  peek(permits) {
    return /** @type {Promise<import('./decision.js').Decision>} */ (this.#native.peek(permits));
  }

  /**
   * Deletes every lease at once; resolves to whether any was held. Holders
   * are not told (their `release`/`renew` resolve to `false`), so until they
   * finish up to the limit more permits are in use: for a limiter whose
   * holders are gone.
   * @returns {Promise<boolean>}
   */
  reset() {
    return this.#native.reset();
  }

  /**
   * The permits the live leases hold now (expired ones reclaimed first).
   * @returns {Promise<number>}
   */
  held() {
    return this.#native.held();
  }

  /**
   * The most permits held at once.
   * @type {number}
   */
  get limit() {
    return this.#native.limit;
  }

  /**
   * How long a lease lasts after it was acquired or renewed, in milliseconds.
   * @type {number}
   */
  get leaseTtlMs() {
    return this.#native.leaseTtlMs;
  }

  /** Releases the limiter now (leases still held expire by themselves; their calls reject). */
  close() {
    this.#native.close();
  }

  get [Symbol.toStringTag]() {
    return 'RedisConcurrencyLimiter';
  }
}

/**
 * A lease of a `RedisConcurrencyLimiter`: its permits are held until
 * `release()` (true exactly once) or its expiry; `renew()` extends it.
 */
class ConcurrencyLease {
  /** @type {import('./binding.js').RedisLeaseMethods} */
  #native;

  /**
   * Made by `RedisConcurrencyLimiter.tryAcquire`.
   * @private
   * @param {symbol} token
   * @param {import('./binding.js').RedisLeaseMethods} methods
   */
  constructor(token, methods) {
    if (token !== LIMITER) noPublicConstructor('ConcurrencyLease', 'use RedisConcurrencyLimiter.tryAcquire()');
    this.#native = methods;
  }

  static {
    leaseOf = (methods) => new ConcurrencyLease(LIMITER, methods);
  }

  /**
   * Gives the lease back: true if this released it, false if it was
   * released before or had expired (nothing freed then).
   * @returns {Promise<boolean>}
   */
  release() {
    return this.#native.release();
  }

  /**
   * Extends the lease to the TTL from now: true, or false if it was
   * released or had expired (it holds nothing then).
   * @returns {Promise<boolean>}
   */
  renew() {
    return this.#native.renew();
  }

  /**
   * Its id in Redis (hex digits, unique between processes).
   * @type {string}
   */
  get id() {
    return this.#native.id;
  }

  /**
   * The permits it holds.
   * @type {number}
   */
  get permits() {
    return this.#native.permits;
  }

  /**
   * Whether Redis holds it: false for a lease admitted by `'failOpen'`
   * while Redis could not answer.
   * @type {boolean}
   */
  get recorded() {
    return this.#native.recorded;
  }

  get [Symbol.toStringTag]() {
    return 'ConcurrencyLease';
  }
}

module.exports = {
  RedisStore,
  RedisLimiter,
  RedisCompositeLimiter,
  RedisLeasedLimiter,
  RedisDividedLimiter,
  Membership,
  RedisRateLimiter,
  RedisConcurrencyLimiter,
  ConcurrencyLease,
};
