export type StoreOptions = {
    /**
     * The longest any one decision may take,
     * reconnection included; past it the call fails with
     * `ERR_RATEKEEPER_REDIS_TIMEOUT` and the limiter's `whenUnavailable`
     * policy decides. Above 0, at most an hour. Default 100.
     */
    timeoutMs?: number | undefined;
    /**
     * The same in exact microseconds.
     */
    timeoutMicros?: number | bigint | undefined;
    /**
     * The longest one attempt to connect
     * may take. Above 0, at most an hour. Default 250.
     */
    connectTimeoutMs?: number | undefined;
    /**
     * The same in exact microseconds.
     */
    connectTimeoutMicros?: number | bigint | undefined;
    /**
     * After Redis failed to answer,
     * decisions stop trying it for this long (failing at once with
     * `ERR_RATEKEEPER_REDIS_UNAVAILABLE`, or deciding by the policy), so that
     * a dead server costs no timeouts; then the next decision tries again.
     * 0 to an hour. Default 200.
     */
    retryIntervalMs?: number | undefined;
    /**
     * The same in exact microseconds.
     */
    retryIntervalMicros?: number | bigint | undefined;
    /**
     * The ACL user to authenticate as; overrides
     * the URL's (`redis://user:password@host`).
     */
    username?: string | undefined;
    /**
     * Its password (or the `default` user's);
     * overrides the URL's.
     */
    password?: string | undefined;
    /**
     * TLS, whatever the URL's scheme (without it,
     * TLS only for a `rediss://` URL, with the system's roots). A certificate
     * not trusted, for another name, expired, or refused rejects with
     * `ERR_RATEKEEPER_REDIS_TLS`, and never marks the store down.
     */
    tls?: TlsOptions | undefined;
};
/**
 * TLS settings, under `tls.connect`'s names.
 */
export type TlsOptions = {
    /**
     * The certificates to trust (PEM). Default: the system's roots.
     */
    ca?: string | Uint8Array<ArrayBufferLike> | readonly (string | Uint8Array<ArrayBufferLike>)[] | undefined;
    /**
     * A client certificate chain (PEM),
     * for mutual TLS; with `key`.
     */
    cert?: string | Uint8Array<ArrayBufferLike> | undefined;
    /**
     * Its private key (PEM); with `cert`.
     */
    key?: string | Uint8Array<ArrayBufferLike> | undefined;
    /**
     * The name the server's certificate must
     * carry. Default: the URL's host.
     */
    servername?: string | undefined;
    /**
     * `false` encrypts but verifies
     * nothing: any certificate, for any name, is accepted, so anyone who can
     * intercept the connection can read and change it. For tests only.
     * Default `true`.
     */
    rejectUnauthorized?: boolean | undefined;
};
/**
 * What a decision does when Redis cannot answer (down, unreachable, or
 * slower than the store's timeout): `error` rejects with the error (the
 * default); `failClosed` refuses every request (retry after the store's
 * retry interval); `failOpen` admits every request; `localShare` decides
 * in this process with its share of the limit, `limit ÷ the last known
 * number of live nodes` of `membership` (never the whole limit in every
 * process), and goes back to Redis as soon as it answers.
 */
export type WhenUnavailable = "error" | "failClosed" | "failOpen" | "localShare";
export type RedisLimiterOptions = {
    /**
     * Whether a refusal with a
     * retry-after is remembered, so that the same key's requests (of the same
     * cost or more) are refused in this process without a round trip until
     * then — never later than Redis would. Default true.
     */
    rememberRefusals?: boolean | undefined;
    /**
     * Default `error`.
     */
    whenUnavailable?: WhenUnavailable | undefined;
    /**
     * For `localShare`: the group whose
     * live nodes divide the limit.
     */
    membership?: Membership | undefined;
    /**
     * For `localShare`: the most keys the
     * local share holds (see `KeyedLimiter`).
     */
    maxKeys?: number | bigint | undefined;
    /**
     * The longest key, in bytes: 1 to
     * 65536, default 256. A longer key rejects with a `RangeError` naming
     * `key` (its length as the value), and nothing is sent.
     */
    maxKeyBytes?: number | bigint | undefined;
};
export type RedisCompositeOptions = {
    /**
     * When
     * Redis cannot answer a decision: reject (`error`, the default), refuse
     * in every part (`failClosed`), or admit (`failOpen`). There is no local
     * share for a composite.
     */
    whenUnavailable?: "error" | "failClosed" | "failOpen" | undefined;
    /**
     * The longest key, in bytes, as
     * for `RedisLimiter`.
     */
    maxKeyBytes?: number | bigint | undefined;
};
export type LeasedOptions = {
    /**
     * Units taken from Redis per round trip
     * (1 to the limit).
     */
    batch: number | bigint;
    /**
     * How long a taken batch may be spent, in
     * milliseconds; units left when it expires are lost.
     */
    leaseMs?: number | undefined;
    /**
     * The same in exact microseconds.
     * Give one or the other.
     */
    leaseMicros?: number | bigint | undefined;
    /**
     * The longest key, in bytes, as
     * for `RedisLimiter`.
     */
    maxKeyBytes?: number | bigint | undefined;
};
export type DividedOptions = {
    /**
     * How long a node counts as live after
     * its last heartbeat (it heartbeats every third of it), in milliseconds:
     * 3 to a day (86400000).
     */
    heartbeatTtlMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    heartbeatTtlMicros?: number | bigint | undefined;
    /**
     * The most keys this node holds.
     */
    maxKeys: number | bigint;
    /**
     * The longest key, in bytes, as
     * for `KeyedLimiter` (1 to 65536, default 256).
     */
    maxKeyBytes?: number | bigint | undefined;
};
export type MembershipOptions = {
    /**
     * How long a node counts as live after its last
     * heartbeat (it heartbeats every third of it), in milliseconds: 3 to a
     * day (86400000).
     */
    ttlMs?: number | undefined;
    /**
     * The same in exact microseconds.
     * Give one or the other.
     */
    ttlMicros?: number | bigint | undefined;
};
export type RedisRateLimiterOptions = {
    /**
     * Guava's `SmoothWarmingUp`, as for
     * `RateLimiter.create`.
     */
    warmupMs?: number | undefined;
    /**
     * The same in exact microseconds.
     */
    warmupMicros?: number | bigint | undefined;
    /**
     * For a warming-up limiter (default 3).
     */
    coldFactor?: number | undefined;
    /**
     * For a bursty limiter (default 1).
     */
    maxBurstSeconds?: number | undefined;
    /**
     * Lets the shared state expire after this
     * long unused, above 0 (default: never). A limiter recreated after that
     * starts afresh, as a new Guava limiter does.
     */
    idleTtlMs?: number | undefined;
    /**
     * The same in exact microseconds.
     */
    idleTtlMicros?: number | bigint | undefined;
};
/**
 * A `RedisRateLimiter`'s shared state as `inspect` reads it, at the
 * server's time of the read.
 */
export type RedisRateLimiterState = {
    /**
     * Permits per second.
     */
    rate: number;
    /**
     * The permits stored now (Guava's
     * `storedPermits`, brought up to now).
     */
    storedPermits: number;
    /**
     * The most permits that can be stored.
     */
    maxPermits: number;
    /**
     * Milliseconds until the next permit
     * is free: what a `reserve` made now would wait (0 when one is free).
     */
    timeUntilAvailableMs: number;
};
export type ConcurrencyOptions = {
    /**
     * How long a lease lasts after it was
     * acquired or last renewed, in milliseconds: 1 to a day (86400000).
     */
    leaseTtlMs?: number | undefined;
    /**
     * The same in exact
     * microseconds. Give one or the other.
     */
    leaseTtlMicros?: number | bigint | undefined;
    /**
     * What an
     * acquire does when Redis cannot answer: reject (the default), refuse, or
     * admit with a lease Redis does not hold (`recorded` false).
     */
    whenUnavailable?: "error" | "failClosed" | "failOpen" | undefined;
};
export type Acquired = {
    decision: import("./decision.js").Decision;
    /**
     * The lease when admitted.
     */
    lease: ConcurrencyLease | null;
};
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
export class RedisStore {
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
    static connect(url: string, options?: StoreOptions): Promise<RedisStore>;
    /**
     * Connects to a Redis Cluster through any of its nodes. A limiter's keys
     * share a hash slot per user key, so each decision is still one script
     * run on one node.
     * @param {readonly string[]} urls At least one node's URL.
     * @param {StoreOptions} [options]
     * @returns {Promise<RedisStore>}
     */
    static connectCluster(urls: readonly string[], options?: StoreOptions): Promise<RedisStore>;
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
    static connectSentinel(sentinels: readonly string[], masterName: string, options?: StoreOptions): Promise<RedisStore>;
    /**
     * Use `RedisStore.connect` or `RedisStore.connectCluster`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').RedisStoreMethods} methods
     */
    private constructor();
    /**
     * The name of the master Redis Sentinel was asked for; `null` for a store
     * connected otherwise.
     * @type {string | null}
     */
    get masterName(): string | null;
    /**
     * Whether Redis failed to answer within the last retry interval (decisions
     * are not sending it anything meanwhile).
     * @type {boolean}
     */
    get isDown(): boolean;
    /**
     * Whether this is a Redis Cluster connection.
     * @type {boolean}
     */
    get cluster(): boolean;
    /**
     * The decision timeout, in milliseconds.
     * @type {number}
     */
    get timeoutMs(): number;
    /**
     * The retry interval, in milliseconds.
     * @type {number}
     */
    get retryIntervalMs(): number;
    /**
     * Whether `close()` was called.
     * @type {boolean}
     */
    get closed(): boolean;
    /**
     * Closes the connection, and every limiter and membership made from this
     * store (their calls then reject with `ERR_RATEKEEPER_CLOSED`; calls
     * already sent complete). Closing twice does nothing more.
     */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisLimiter {
    /**
     * @param {RedisStore} store
     * @param {string} name Processes using the same name share its keys.
     * @param {import('./composite.js').LimitOptions} limit Each key's limit.
     * @param {RedisLimiterOptions} [options]
     */
    constructor(store: RedisStore, name: string, limit: import("./composite.js").LimitOptions, options?: RedisLimiterOptions);
    /**
     * Admits `cost` units for `key` if the shared limit allows (consuming
     * them), or refuses (consuming nothing): one round trip, or none when a
     * remembered refusal decides.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<import('./decision.js').Decision>}
     */
    check(key: string | Uint8Array, cost?: number | bigint): Promise<import("./decision.js").Decision>;
    /**
     * The decision `check(key, cost)` would make now, consuming nothing.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<import('./decision.js').Decision>}
     */
    peek(key: string | Uint8Array, cost?: number | bigint): Promise<import("./decision.js").Decision>;
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
    refund(key: string | Uint8Array, cost?: number | bigint): Promise<void>;
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
    remove(key: string | Uint8Array): Promise<boolean>;
    /**
     * The quota: the most units admitted at once.
     * @type {number}
     */
    get limit(): number;
    /**
     * The longest key taken, in bytes.
     * @type {number}
     */
    get maxKeyBytes(): number;
    /** Releases the limiter now (later calls reject with `ERR_RATEKEEPER_CLOSED`). */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisCompositeLimiter {
    /**
     * @param {RedisStore} store
     * @param {string} name Processes using the same name share its keys.
     * @param {import('./composite.js').LimitOptions[]} limits The parts, in
     *   order; an error in one names it (`limits[1]`).
     * @param {RedisCompositeOptions} [options]
     */
    constructor(store: RedisStore, name: string, limits: import("./composite.js").LimitOptions[], options?: RedisCompositeOptions);
    /**
     * Admits `cost` units for `key` in every part, or in none: the combined
     * decision (the strictest part's) and each part's, in order.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }>}
     */
    check(key: string | Uint8Array, cost?: number | bigint): Promise<{
        decision: import("./decision.js").Decision;
        parts: import("./decision.js").Decision[];
    }>;
    /**
     * The decisions `check(key, cost)` would make now, consuming nothing.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<{ decision: import('./decision.js').Decision, parts: import('./decision.js').Decision[] }>}
     */
    peek(key: string | Uint8Array, cost?: number | bigint): Promise<{
        decision: import("./decision.js").Decision;
        parts: import("./decision.js").Decision[];
    }>;
    /**
     * Gives `cost` units back to every part of `key` (each as its algorithm
     * can: see `RedisLimiter.refund`), in one script run. Rejects when Redis
     * cannot answer, whatever `whenUnavailable`.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<void>}
     */
    refund(key: string | Uint8Array, cost?: number | bigint): Promise<void>;
    /**
     * Forgets `key`'s state in every part (deleted atomically); whether Redis
     * held any.
     * @param {string | Uint8Array} key
     * @returns {Promise<boolean>}
     */
    remove(key: string | Uint8Array): Promise<boolean>;
    /**
     * The strictest part's quota: the most units ever admitted at once.
     * @type {number}
     */
    get limit(): number;
    /**
     * How many parts (limits).
     * @type {number}
     */
    get parts(): number;
    /**
     * The longest key taken, in bytes.
     * @type {number}
     */
    get maxKeyBytes(): number;
    /** Releases the limiter now (later calls reject with `ERR_RATEKEEPER_CLOSED`). */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisLeasedLimiter {
    /**
     * @param {RedisStore} store
     * @param {string} name
     * @param {import('./composite.js').LimitOptions} limit GCRA or the token bucket.
     * @param {LeasedOptions} options
     */
    constructor(store: RedisStore, name: string, limit: import("./composite.js").LimitOptions, options: LeasedOptions);
    /**
     * Admits `cost` units for `key` from this process's lease, or takes a new
     * lease (one round trip) when it holds too few. An admission from a lease
     * has the units left in it as `remaining`.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {Promise<import('./decision.js').Decision>}
     */
    check(key: string | Uint8Array, cost?: number | bigint): Promise<import("./decision.js").Decision>;
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
    peek(key: string | Uint8Array, cost?: number | bigint): Promise<import("./decision.js").Decision>;
    /**
     * Forgets `key`: deletes its shared state in Redis and drops this
     * process's lease on it; resolves to whether Redis held a state. Other
     * processes spend the leases they hold: each may still admit up to
     * `batch` units for the key within its lease's lifetime.
     * @param {string | Uint8Array} key
     * @returns {Promise<boolean>}
     */
    remove(key: string | Uint8Array): Promise<boolean>;
    /**
     * The longest key taken, in bytes.
     * @type {number}
     */
    get maxKeyBytes(): number;
    /** Releases the limiter now. */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisDividedLimiter {
    /**
     * Joins the group `name` and resolves to a limiter enforcing this
     * process's share of `limit`.
     * @param {RedisStore} store
     * @param {string} name
     * @param {import('./composite.js').LimitOptions} limit The whole limit, per key.
     * @param {DividedOptions} options
     * @returns {Promise<RedisDividedLimiter>}
     */
    static create(store: RedisStore, name: string, limit: import("./composite.js").LimitOptions, options: DividedOptions): Promise<RedisDividedLimiter>;
    /**
     * Use `RedisDividedLimiter.create`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').RedisDividedMethods} methods
     */
    private constructor();
    /**
     * Decides `cost` units for `key` with this process's share. Never waits.
     * Synchronous.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    check(key: string | Uint8Array, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * The decision `check(key, cost)` would make now with this process's
     * share, taking nothing (divided mode keeps no per-key state in Redis).
     * Synchronous.
     * @param {string | Uint8Array} key
     * @param {number | bigint} [cost=1]
     * @returns {import('./decision.js').Decision}
     */
    peek(key: string | Uint8Array, cost?: number | bigint): import("./decision.js").Decision;
    /**
     * Forgets `key` in this process's share (whether it held it): its next
     * request starts from a whole share. Other nodes' shares keep their
     * counts: call it on every node to reset the whole limit. Synchronous.
     * @param {string | Uint8Array} key
     * @returns {boolean}
     */
    remove(key: string | Uint8Array): boolean;
    /**
     * The live nodes as last read.
     * @type {number}
     */
    get nodes(): number;
    /**
     * This process's id in the group.
     * @type {string}
     */
    get nodeId(): string;
    /**
     * The longest key taken, in bytes.
     * @type {number}
     */
    get maxKeyBytes(): number;
    /** Leaves the group and releases the limiter now. */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class Membership {
    /**
     * Joins `group` as a new node; rejects if Redis cannot be reached for
     * the first heartbeat.
     * @param {RedisStore} store
     * @param {string} group
     * @param {MembershipOptions} options
     * @returns {Promise<Membership>}
     */
    static join(store: RedisStore, group: string, options: MembershipOptions): Promise<Membership>;
    /**
     * Use `Membership.join`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').MembershipMethods} methods
     */
    private constructor();
    /**
     * The live nodes as last read (at least 1: this one).
     * @type {number}
     */
    get nodes(): number;
    /**
     * This process's id in the group.
     * @type {string}
     */
    get nodeId(): string;
    /**
     * Heartbeats now and resolves to the live count (the background
     * heartbeat normally does this).
     * @returns {Promise<number>}
     */
    refresh(): Promise<number>;
    /**
     * Releases this handle: the node leaves the group at once, unless a
     * limiter still uses the membership (then when that limiter is closed).
     */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisRateLimiter {
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
    static create(store: RedisStore, name: string, permitsPerSecond: number, options?: RedisRateLimiterOptions): Promise<RedisRateLimiter>;
    /**
     * Use `RedisRateLimiter.create`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').RedisSmoothMethods} methods
     */
    private constructor();
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
    acquire(permits?: number | bigint, options?: import("./sleep.js").SignalOptions): Promise<number>;
    /**
     * Takes `permits` if they can be had within the timeout (default 0),
     * waiting for them, and resolves to `true`; otherwise resolves to `false`
     * at once, taking nothing. `signal` aborts it as it aborts `acquire`.
     * @param {number | bigint} [permits=1]
     * @param {import('./rate-limiter.js').TryAcquireOptions} [options]
     * @returns {Promise<boolean>}
     */
    tryAcquire(permits?: number | bigint, options?: import("./rate-limiter.js").TryAcquireOptions): Promise<boolean>;
    /**
     * Whether `tryAcquire(permits, options)` would succeed now; takes nothing.
     * @param {import('./rate-limiter.js').TimeoutOptions} [options]
     * @returns {Promise<boolean>}
     */
    canAcquire(options?: import("./rate-limiter.js").TimeoutOptions): Promise<boolean>;
    /**
     * Milliseconds until a request made now would be granted; takes nothing.
     * @returns {Promise<number>}
     */
    timeUntilAvailable(): Promise<number>;
    /**
     * The shared state as of now, writing nothing (a state deleted by `reset`
     * reads as the new limiter the next call makes).
     * @returns {Promise<RedisRateLimiterState>}
     */
    inspect(): Promise<RedisRateLimiterState>;
    /**
     * Deletes the shared state; resolves to whether there was one. Every
     * process's next call finds a new limiter — no stored permits, made with
     * the rate and parameters of the process that makes it (a rate set with
     * `setRate` since is forgotten).
     * @returns {Promise<boolean>}
     */
    reset(): Promise<boolean>;
    /**
     * The stable rate, permits per second (Guava's `getRate`).
     * @returns {Promise<number>}
     */
    getRate(): Promise<number>;
    /**
     * Guava's `setRate`, for every process sharing the limiter.
     * @param {number} permitsPerSecond
     * @returns {Promise<void>}
     */
    setRate(permitsPerSecond: number): Promise<void>;
    /**
     * The Redis key holding the shared state.
     * @type {string}
     */
    get key(): string;
    /** Releases the limiter now. */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
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
export class RedisConcurrencyLimiter {
    /**
     * @param {RedisStore} store
     * @param {string} name Processes using the same name share the limit.
     * @param {number | bigint} limit The most permits held at once.
     * @param {ConcurrencyOptions} options
     */
    constructor(store: RedisStore, name: string, limit: number | bigint, options: ConcurrencyOptions);
    /**
     * Acquires a lease on `permits` (1 to 2^31 - 1) if the live leases leave
     * room: one round trip.
     * @param {number | bigint} [permits=1]
     * @returns {Promise<Acquired>}
     */
    tryAcquire(permits?: number | bigint): Promise<Acquired>;
    /**
     * The decision `tryAcquire(permits)` would make now, taking no lease and
     * writing nothing (expired leases are counted out, not reclaimed).
     * @param {number | bigint} [permits=1]
     * @returns {Promise<import('./decision.js').Decision>}
     */
    peek(permits?: number | bigint): Promise<import("./decision.js").Decision>;
    /**
     * Deletes every lease at once; resolves to whether any was held. Holders
     * are not told (their `release`/`renew` resolve to `false`), so until they
     * finish up to the limit more permits are in use: for a limiter whose
     * holders are gone.
     * @returns {Promise<boolean>}
     */
    reset(): Promise<boolean>;
    /**
     * The permits the live leases hold now (expired ones reclaimed first).
     * @returns {Promise<number>}
     */
    held(): Promise<number>;
    /**
     * The most permits held at once.
     * @type {number}
     */
    get limit(): number;
    /**
     * How long a lease lasts after it was acquired or renewed, in milliseconds.
     * @type {number}
     */
    get leaseTtlMs(): number;
    /** Releases the limiter now (leases still held expire by themselves; their calls reject). */
    close(): void;
    get [Symbol.toStringTag](): string;
    #private;
}
/**
 * A lease of a `RedisConcurrencyLimiter`: its permits are held until
 * `release()` (true exactly once) or its expiry; `renew()` extends it.
 */
export class ConcurrencyLease {
    /**
     * Made by `RedisConcurrencyLimiter.tryAcquire`.
     * @private
     * @param {symbol} token
     * @param {import('./binding.js').RedisLeaseMethods} methods
     */
    private constructor();
    /**
     * Gives the lease back: true if this released it, false if it was
     * released before or had expired (nothing freed then).
     * @returns {Promise<boolean>}
     */
    release(): Promise<boolean>;
    /**
     * Extends the lease to the TTL from now: true, or false if it was
     * released or had expired (it holds nothing then).
     * @returns {Promise<boolean>}
     */
    renew(): Promise<boolean>;
    /**
     * Its id in Redis (hex digits, unique between processes).
     * @type {string}
     */
    get id(): string;
    /**
     * The permits it holds.
     * @type {number}
     */
    get permits(): number;
    /**
     * Whether Redis holds it: false for a lease admitted by `'failOpen'`
     * while Redis could not answer.
     * @type {boolean}
     */
    get recorded(): boolean;
    get [Symbol.toStringTag](): string;
    #private;
}
