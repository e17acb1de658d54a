"""When Redis cannot answer (killed, or stalled past the timeout): the
``when_unavailable`` policy decides, nothing crashes or hangs past the
timeout, and decisions return to Redis soon after it answers again."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Callable

import pytest

from ratekeeper import (
    ClosedError,
    Decision,
    FixedWindow,
    Gcra,
    Membership,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisRateLimiter,
    RedisStore,
    RedisTimeoutError,
    RedisUnavailableError,
)
from with_redis.servers import PrivateRedis


def connect(server: PrivateRedis) -> RedisStore:
    return RedisStore.connect(server.url, timeout=0.3, connect_timeout=1.0, retry_interval=0.2)


def test_error_raises_fast_and_typed(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    limiter = RedisLimiter(store, "n", FixedWindow(10, 1e6))
    assert limiter.check("k").allowed
    private_redis.kill()
    start = time.monotonic()
    with pytest.raises(RedisUnavailableError):
        limiter.check("k")
    assert time.monotonic() - start < 0.3 + 0.5
    assert store.is_down
    # Within the retry interval nothing is sent: the answer is at once.
    start = time.monotonic()
    with pytest.raises(RedisUnavailableError, match="failed moments ago"):
        limiter.peek("k")
    assert time.monotonic() - start < 0.1


def test_fail_closed_refuses_and_fail_open_admits(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    closed = RedisLimiter(store, "c", FixedWindow(10, 1e6), when_unavailable="fail_closed")
    opened = RedisLimiter(store, "o", FixedWindow(10, 1e6), when_unavailable="fail_open")
    assert closed.check("k").allowed
    assert opened.check("k").allowed
    private_redis.kill()
    for _ in range(3):
        refused = closed.check("k")
        assert not refused.allowed
        assert refused.retry_after == store.retry_interval
        admitted = opened.check("k", 4)
        assert admitted.allowed
        assert admitted.remaining == 6
    assert closed.check("k", 11).is_never  # still no wait admits more than the limit
    assert not closed.peek("k").allowed
    assert opened.peek("k").allowed


def test_local_share_divides_the_limit_by_the_live_nodes(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    with Membership.join(store, "group", 5.0) as me, Membership.join(store, "group", 5.0) as other:
        assert me.refresh() == 2
        assert (me.nodes, other.nodes) == (2, 2)
        limiter = RedisLimiter(
            store,
            "shared",
            FixedWindow(10, 1e6),
            when_unavailable="local_share",
            membership=me,
            max_keys=100,
        )
        assert limiter.membership is me
        assert limiter.check("k", 10).allowed  # Redis's whole limit, used up
        private_redis.kill()
        # This node's share, 10 ÷ 2, counted from whole for the outage.
        assert [limiter.check("k").allowed for _ in range(6)] == [True] * 5 + [False]
        with pytest.raises(RedisUnavailableError):
            limiter.peek("k")  # a peek takes nothing: no share to consult
        # Back on Redis (a new, empty server) once it answers.
        private_redis.start()
        decision = wait_for_redis(lambda: limiter.check("k"))
        assert decision.allowed
        assert decision.remaining == 9


def wait_for_redis(decide: Callable[[], Decision], within: float = 1.5) -> Decision:
    """The first decision Redis makes again (``remaining`` 9 on an empty
    server), polled every 20 ms; fails past ``within`` seconds."""
    start = time.monotonic()
    while True:
        try:
            decision = decide()
            if decision.allowed and decision.remaining == 9:
                return decision
        except RedisUnavailableError:
            pass
        if time.monotonic() - start > within:
            pytest.fail(f"decisions did not return to Redis within {within} s")
        time.sleep(0.02)


def test_decisions_return_to_redis_within_a_second(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    limiter = RedisLimiter(store, "back", FixedWindow(10, 1e6), when_unavailable="fail_open")
    assert limiter.check("k", 10).allowed
    private_redis.kill()
    assert limiter.check("k").remaining == 9  # fail_open's answer
    private_redis.start()
    started = time.monotonic()
    wait_for_redis(lambda: limiter.check("k"))
    assert time.monotonic() - started < 1.0


def test_a_stalled_server_is_a_timeout(private_redis: PrivateRedis) -> None:
    store = RedisStore.connect(private_redis.url, timeout=0.2, retry_interval=0.0)
    strict = RedisLimiter(store, "s", FixedWindow(10, 1e6))
    lenient = RedisLimiter(store, "l", FixedWindow(10, 1e6), when_unavailable="fail_open")
    assert strict.check("k").allowed
    private_redis.stall(1.0)
    start = time.monotonic()
    with pytest.raises(RedisTimeoutError) as raised:
        strict.check("k")
    assert isinstance(raised.value, TimeoutError)
    assert isinstance(raised.value, RedisUnavailableError)
    assert 0.15 < time.monotonic() - start < 0.6
    start = time.monotonic()
    assert lenient.check("k").allowed
    assert time.monotonic() - start < 0.9  # the server sleeps on for ~0.6 s


def test_the_async_calls_follow_the_policy(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    strict = RedisLimiter(store, "s", FixedWindow(10, 1e6))
    closed = RedisLimiter(store, "c", FixedWindow(10, 1e6), when_unavailable="fail_closed")
    private_redis.kill()

    async def main() -> Decision:
        with pytest.raises(RedisUnavailableError):
            await strict.check_async("k")
        with pytest.raises(RedisUnavailableError):
            await strict.peek_async("k")
        return await asyncio.wait_for(closed.check_async("k"), 2.0)

    assert not asyncio.run(main()).allowed


def test_the_other_limiters_raise_and_the_divided_one_decides_alone(
    private_redis: PrivateRedis,
) -> None:
    store = connect(private_redis)
    leased = RedisLeasedLimiter(store, "leased", Gcra(99, 100, 1.0), batch=10, lease=60.0)
    guava = RedisRateLimiter.create(store, "guava", 10.0)
    membership = Membership.join(store, "m", 5.0)
    divided = RedisDividedLimiter(store, "d", FixedWindow(4, 1e6), heartbeat_ttl=5.0, max_keys=10)
    assert leased.check("k").allowed  # a lease of 10 taken
    private_redis.kill()
    # The lease still decides alone; past it, a round trip is needed.
    assert [leased.check("k").allowed for _ in range(9)] == [True] * 9
    with pytest.raises(RedisUnavailableError):
        leased.check("k")
    for call in (
        guava.acquire,
        guava.try_acquire,
        guava.time_until_available,
        lambda: guava.rate,
        membership.refresh,
    ):
        with pytest.raises(RedisUnavailableError):
            call()
    assert membership.nodes == 1  # the last count read is kept
    assert [divided.check("k").allowed for _ in range(5)] == [True] * 4 + [False]
    divided.close()
    membership.close()
    assert membership.closed
    with pytest.raises(ClosedError, match="is closed"):
        membership.refresh()


def test_joining_needs_redis(private_redis: PrivateRedis) -> None:
    store = connect(private_redis)
    private_redis.kill()
    with pytest.raises(RedisUnavailableError):
        Membership.join(store, "g", 1.0)
    with pytest.raises(RedisUnavailableError):
        RedisRateLimiter.create(store, "g", 1.0)
    start = time.monotonic()
    with pytest.raises(RedisUnavailableError):
        RedisDividedLimiter(store, "g", FixedWindow(1, 1.0), heartbeat_ttl=1.0, max_keys=1)
    assert time.monotonic() - start < 1.0
    assert math.isfinite(store.timeout)
