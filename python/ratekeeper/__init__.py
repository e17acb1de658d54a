"""ratekeeper: rate limiting that behaves identically, to the microsecond,
from Python, Rust, Node.js and C.

The decisions are made by ratekeeper's Rust engine, the same one its Rust,
Node.js and C bindings use. Guava's ``RateLimiter``, identical to Guava
31.1's::

    from ratekeeper import RateLimiter

    limiter = RateLimiter.create(5.0)     # 5 permits per second
    limiter.acquire()                     # blocks as needed, GIL released
    if limiter.try_acquire(timeout=0.1):  # waits at most 100 ms
        ...
    await limiter.acquire_async()         # never blocks the event loop

and every other algorithm, each answering with a ``Decision`` that also
writes the HTTP ``RateLimit`` fields::

    from ratekeeper import Gcra

    limiter = Gcra(max_burst=9, count_per_period=10, period=1.0)
    decision = limiter.check()            # never waits; a refusal takes nothing
    if not decision:
        return 429, decision.headers("api")

``TokenBucket`` (Go's x/time/rate), ``Gcra`` (redis-cell),
``LeakyBucketMeter`` and ``LeakyBucketQueue``, ``FixedWindow``,
``SlidingWindow``, ``SlidingLog``, ``SlidingWindowCounter``,
``CompositeLimiter`` (several at once), ``KeyedLimiter`` (one of any of
them per key, in bounded memory), the markers ``SrTcm`` and ``TrTcm`` (RFC
2697, RFC 2698), and ``ConcurrencyLimiter`` with the gradient and AIMD
policies (Netflix concurrency-limits).

``CycleLimiter`` (Resilience4j's ``AtomicRateLimiter``): permits per
cycle, with reservations into later cycles within a timeout.

Limits that follow the machine's load: ``Bbr`` (Kratos' BBR: sheds while
the CPU is high and more requests are in flight than the service
completes) and ``SystemGuard`` (Sentinel's system rule: thresholds on QPS,
requests in flight, average RT, load average and CPU), reading a
``SystemLoad`` (sampled from ``/proc`` and the cgroup files) or a
``ManualLoad`` (set by hand, for tests). Sentinel's flow rule for one
resource: ``FlowController`` with a ``FlowRule`` (QPS or requests in
flight; refusing, warming up, or queueing at a uniform pace).

Limits shared by many processes through Redis (or a Redis Cluster):
``RedisStore`` (the connection), ``RedisLimiter`` (exact: one atomic
script per decision, on the server's clock), ``RedisCompositeLimiter``
(several exact limits, all or nothing in one script), ``RedisLeasedLimiter``
(batches spent locally), ``RedisDividedLimiter`` and ``Membership`` (each
node enforces its share), ``RedisRateLimiter`` (Guava's, shared), and
``RedisConcurrencyLimiter`` (permits held at once, as leases that expire
so that a dead holder's come back, each a ``ConcurrencyLease``);
blocking calls release the GIL, and each has an ``async`` form. Each is
closed by ``close()``, or by leaving a ``with`` or ``async with`` block;
closing the store closes everything made from it.

``ManualClock`` makes any of them deterministic in tests. Every error is a
``RateLimitError``; bad arguments raise ``InvalidArgumentError`` (also a
``ValueError``) or ``ArgumentTypeError`` (also a ``TypeError``), naming the
argument and the bound it crossed; Redis failing to answer raises
``RedisUnavailableError`` (also a ``ConnectionError``) or
``RedisTimeoutError`` (also a ``TimeoutError``); a call on a Redis object
after its ``close()`` (or its store's) raises ``ClosedError``.

Durations (a period, a window, a warm-up, a clock's advance, ...) are
seconds or a ``datetime.timedelta``, truncated to whole microseconds, and
follow one rule in every language: from the argument's own lower bound up
to ``2**63 - 1`` microseconds (about 292,271 years). ``math.nan``,
``math.inf``, a negative value or a longer one raises
``InvalidArgumentError`` naming the argument; nothing is clamped. A
``timeout`` is the one exception: negative does not wait, ``math.inf`` (or
anything that long) waits with no deadline.
"""

# Importing ratekeeper does not import asyncio, which alone takes longer than
# the rest of the package: the coroutines import it where they first await
# it (tests/test_import.py keeps it so; BENCHMARKS.md has the import times).
from ratekeeper._algorithms import (
    CompositeLimiter,
    FixedWindow,
    Gcra,
    LeakyBucketMeter,
    LeakyBucketQueue,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
)
from ratekeeper._concurrency import ConcurrencyLimiter, Permit
from ratekeeper._cycle import CycleLimiter
from ratekeeper._flow import FlowController, FlowEntry, FlowPermit
from ratekeeper._keyed import KeyedLimiter
from ratekeeper._limiter import RateLimiter
from ratekeeper._load import Bbr, BbrPermit, SystemGuard, SystemPermit
from ratekeeper._ratekeeper import (
    MAX_SLIDING_LOG_LIMIT,
    AimdPolicy,
    ArgumentTypeError,
    AtCapacity,
    BbrStats,
    ClosedError,
    Color,
    ConcurrencyLease,
    CycleMetrics,
    Decision,
    FlowRule,
    FlowStats,
    GradientPolicy,
    InvalidArgumentError,
    Limiter,
    ManualClock,
    ManualLoad,
    RateLimitError,
    RateLimitExceeded,
    RedisAuthError,
    RedisError,
    RedisRateLimiterState,
    RedisTimeoutError,
    RedisTlsError,
    RedisUnavailableError,
    Reservation,
    SrTcm,
    SystemLoad,
    SystemStats,
    TrTcm,
    UnsupportedError,
    __version__,
    ratelimit_header,
    ratelimit_policy_header,
)
from ratekeeper._redis import (
    Membership,
    RedisCompositeLimiter,
    RedisConcurrencyLimiter,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisRateLimiter,
    RedisStore,
)

# Shown and documented under the name users import them by.
for _cls in (
    RateLimiter,
    TokenBucket,
    Gcra,
    LeakyBucketMeter,
    LeakyBucketQueue,
    FixedWindow,
    SlidingWindow,
    SlidingLog,
    SlidingWindowCounter,
    CompositeLimiter,
    ConcurrencyLimiter,
    Permit,
    CycleLimiter,
    Bbr,
    BbrPermit,
    SystemGuard,
    SystemPermit,
    FlowController,
    FlowEntry,
    FlowPermit,
    KeyedLimiter,
    RedisStore,
    RedisLimiter,
    RedisCompositeLimiter,
    RedisLeasedLimiter,
    RedisDividedLimiter,
    Membership,
    RedisRateLimiter,
    RedisConcurrencyLimiter,
):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "MAX_SLIDING_LOG_LIMIT",
    "AimdPolicy",
    "ArgumentTypeError",
    "AtCapacity",
    "Bbr",
    "BbrPermit",
    "BbrStats",
    "ClosedError",
    "Color",
    "CompositeLimiter",
    "ConcurrencyLease",
    "ConcurrencyLimiter",
    "CycleLimiter",
    "CycleMetrics",
    "Decision",
    "FixedWindow",
    "FlowController",
    "FlowEntry",
    "FlowPermit",
    "FlowRule",
    "FlowStats",
    "Gcra",
    "GradientPolicy",
    "InvalidArgumentError",
    "KeyedLimiter",
    "LeakyBucketMeter",
    "LeakyBucketQueue",
    "Limiter",
    "ManualClock",
    "ManualLoad",
    "Membership",
    "Permit",
    "RateLimitError",
    "RateLimitExceeded",
    "RateLimiter",
    "RedisAuthError",
    "RedisCompositeLimiter",
    "RedisConcurrencyLimiter",
    "RedisDividedLimiter",
    "RedisError",
    "RedisLeasedLimiter",
    "RedisLimiter",
    "RedisRateLimiter",
    "RedisRateLimiterState",
    "RedisStore",
    "RedisTimeoutError",
    "RedisTlsError",
    "RedisUnavailableError",
    "Reservation",
    "SlidingLog",
    "SlidingWindow",
    "SlidingWindowCounter",
    "SrTcm",
    "SystemGuard",
    "SystemLoad",
    "SystemPermit",
    "SystemStats",
    "TokenBucket",
    "TrTcm",
    "UnsupportedError",
    "__version__",
    "ratelimit_header",
    "ratelimit_policy_header",
]
