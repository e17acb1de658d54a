"""``RedisLimiter.refund`` and ``RedisCompositeLimiter`` (several limits on
one key, all or nothing in one script run) against the server of
``tests/redis/with-redis``, in their blocking and ``asyncio`` forms."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from ratekeeper import (
    ArgumentTypeError,
    ClosedError,
    FixedWindow,
    InvalidArgumentError,
    LeakyBucketMeter,
    RateLimitExceeded,
    RedisCompositeLimiter,
    RedisLimiter,
    RedisStore,
    RedisUnavailableError,
    SlidingWindowCounter,
    TokenBucket,
    UnsupportedError,
)
from ratekeeper.http import RateLimit
from with_redis.servers import PrivateRedis

HOUR = 3600.0


def test_refund_gives_back_what_a_check_took(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(3, HOUR))
    assert [limiter.check("a").allowed for _ in range(4)] == [True, True, True, False]
    # The refusal was remembered: the refund drops it, and its unit admits.
    limiter.refund("a")
    assert limiter.check("a").allowed
    assert not limiter.check("a").allowed
    # Never more than the limit: a fresh key stays at its limit.
    limiter.refund("b", 10)
    assert limiter.peek("b", 0).remaining == 3
    limiter.refund("a", 0)  # sends nothing
    assert limiter.peek("a", 0).remaining == 0
    # Another process's limiter of the same name sees the refund.
    other = RedisLimiter(store, name, FixedWindow(3, HOUR))
    other.refund("a", 2)
    assert limiter.peek("a", 0).remaining == 2


def test_refund_async_and_its_errors(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, TokenBucket(0.001, 2))

    async def main() -> list[bool]:
        first = [(await limiter.check_async("k")).allowed for _ in range(3)]
        await limiter.refund_async("k")
        return [*first, (await limiter.check_async("k")).allowed]

    assert asyncio.run(main()) == [True, True, False, True]
    with pytest.raises(InvalidArgumentError):
        limiter.refund("k", -1)
    with pytest.raises(InvalidArgumentError):
        limiter.refund("k" * 300)
    with pytest.raises(ArgumentTypeError):
        limiter.refund(3)  # type: ignore[arg-type]


def test_a_refund_that_cannot_reach_redis_raises_whatever_the_policy(
    private_redis: PrivateRedis, name: str
) -> None:
    store = RedisStore.connect(private_redis.url, timeout=0.5, retry_interval=0.0)
    limiter = RedisLimiter(store, name, FixedWindow(3, HOUR), when_unavailable="fail_open")
    composite = RedisCompositeLimiter(
        store, name, [FixedWindow(3, HOUR)], when_unavailable="fail_open"
    )
    private_redis.kill()
    assert limiter.check("a").allowed  # the policy decides checks
    with pytest.raises(RedisUnavailableError):
        limiter.refund("a")
    with pytest.raises(RedisUnavailableError):
        composite.refund("a")
    store.close()


def test_a_composite_refusal_takes_nothing_from_any_part(store: RedisStore, name: str) -> None:
    # 3 per hour and 2 per day: the third request is refused by the day's
    # limit, and the hour's keeps its unit (asked in turn, it would have
    # lost it).
    limiter = RedisCompositeLimiter(store, name, [FixedWindow(3, HOUR), FixedWindow(2, 24 * HOUR)])
    answers = [limiter.check("k") for _ in range(3)]
    assert [d.allowed for d, _ in answers] == [True, True, False]
    decision, (hour, day) = answers[2]
    assert not decision.allowed
    assert (hour.allowed, hour.remaining) == (True, 1)
    assert (day.allowed, day.remaining) == (False, 0)
    assert decision.retry_after == day.retry_after > 0
    peeked, (hour, day) = limiter.peek("k")
    assert (hour.remaining, day.remaining) == (1, 0)
    assert not peeked.allowed
    # A refund goes to every part, never past a limit.
    limiter.refund("k", 5)
    _, (hour, day) = limiter.peek("k", 0)
    assert (hour.remaining, day.remaining) == (3, 2)
    assert limiter.remove("k")
    assert not limiter.remove("k")


def test_a_composite_admits_exactly_its_strictest_limit_to_concurrent_clients(
    store: RedisStore, name: str
) -> None:
    limiter = RedisCompositeLimiter(
        store, name, [SlidingWindowCounter(10, HOUR), FixedWindow(7, HOUR)]
    )
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: limiter.check("k"), range(40)))
    assert sum(d.allowed for d, _ in answers) == 7
    # The hour's sliding window took exactly the admitted units.
    _, (sliding, fixed) = limiter.peek("k", 0)
    assert (sliding.remaining, fixed.remaining) == (3, 0)


def test_the_composite_async_forms_and_decorator(store: RedisStore, name: str) -> None:
    limiter = RedisCompositeLimiter(store, name, [FixedWindow(2, HOUR), FixedWindow(5, HOUR)])

    @limiter.limited("user")
    async def call() -> str:
        return "called"

    async def main() -> list[object]:
        out: list[object] = []
        decision, parts = await limiter.check_async("k", 2)
        out.append((decision.allowed, [p.remaining for p in parts]))
        out.append((await limiter.peek_async("k"))[0].allowed)
        await limiter.refund_async("k")
        out.append((await limiter.check_async("k"))[0].allowed)
        out.append(await limiter.remove_async("k"))
        out.append(await call())
        out.append(await call())
        try:
            await call()
        except RateLimitExceeded:
            out.append("refused")
        return out

    assert asyncio.run(main()) == [(True, [0, 3]), False, True, True, "called", "called", "refused"]


def test_the_composite_s_arguments_and_attributes(store: RedisStore, name: str) -> None:
    limiter = RedisCompositeLimiter(
        store, name, (FixedWindow(5, 60.0), TokenBucket(1.0, 3)), when_unavailable="fail_closed"
    )
    assert limiter.name == name
    assert limiter.algorithms == ["fixed_window", "token_bucket"]
    assert limiter.limit == 3
    assert limiter.when_unavailable == "fail_closed"
    assert limiter.max_key_bytes == 256
    assert limiter.store is store
    assert "FixedWindow(limit=5" in repr(limiter)
    with pytest.raises(InvalidArgumentError):
        RedisCompositeLimiter(store, name, [])
    with pytest.raises(UnsupportedError):
        RedisCompositeLimiter(store, name, [FixedWindow(5, 60.0), LeakyBucketMeter(5, 1, 1.0)])
    with pytest.raises(ArgumentTypeError):
        RedisCompositeLimiter(store, name, FixedWindow(5, 60.0))  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError):
        RedisCompositeLimiter(store, name, ["5/minute"])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError):
        RedisCompositeLimiter(store, name, [FixedWindow(5, 60.0)], when_unavailable="local_share")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        limiter.check("k" * 257)
    with limiter:
        pass
    assert limiter.closed
    with pytest.raises(ClosedError):
        limiter.check("k")


def test_a_rate_limit_s_several_limits_through_redis_are_one_composite(
    store: RedisStore, name: str
) -> None:
    rule = RateLimit("3/hour; 2/day", store=store, name=name, key=lambda r: "k")
    backend = rule._backend
    assert type(backend).__name__ == "_Composite"
    answers = [backend.check("k", 1) for _ in range(3)]
    assert [d.allowed for d, _ in answers] == [True, True, False]
    # The refusal took nothing: the hour's limit still has its unit.
    assert [p.remaining for p in answers[2][1]] == [1, 0]
    # And a composite given as the limits, its parts' policies numbered.
    composite = RedisCompositeLimiter(store, name, [FixedWindow(3, HOUR), FixedWindow(2, HOUR)])
    assert RateLimit(composite, policy="api").policies == ("api-1", "api-2")
    single = RedisCompositeLimiter(store, name, [FixedWindow(3, HOUR)])
    assert RateLimit(single, policy="api").policies == ("api",)
    # A composite has no local share.
    with pytest.raises(InvalidArgumentError, match="no local share"):
        RateLimit("3/hour; 2/day", store=store, name=name, when_unavailable="local_share")
