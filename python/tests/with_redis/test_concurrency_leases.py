"""``RedisConcurrencyLimiter``: a concurrency limit shared through Redis,
its permits held as leases that expire (the semantics are the Rust
crate's, tested there with holders killed by ``kill -9``; here, that the
binding passes them through, its async forms and its argument errors)."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from ratekeeper import (
    ArgumentTypeError,
    ClosedError,
    ConcurrencyLease,
    InvalidArgumentError,
    RedisConcurrencyLimiter,
    RedisStore,
    RedisUnavailableError,
)
from with_redis.servers import PrivateRedis


def test_at_most_limit_permits_are_held_and_released_exactly_once(
    store: RedisStore, name: str
) -> None:
    pool = RedisConcurrencyLimiter(store, name, 2, lease_ttl=60.0)
    other = RedisConcurrencyLimiter(store, name, 2, lease_ttl=60.0)  # another process's
    first, a = pool.try_acquire()
    second, b = other.try_acquire()
    assert first.allowed
    assert second.allowed
    assert (first.remaining, second.remaining) == (1, 0)
    assert isinstance(a, ConcurrencyLease)
    assert isinstance(b, ConcurrencyLease)
    assert a.id != b.id
    assert a.permits == 1
    assert a.recorded
    refused, none = pool.try_acquire()
    assert not refused.allowed
    assert none is None
    assert 59.0 < refused.retry_after <= 60.0  # until the first lease expires
    assert pool.held() == 2
    assert pool.release(a) is True
    assert pool.release(a) is False  # exactly once
    assert pool.renew(a) is False
    assert pool.held() == 1
    again, c = pool.try_acquire()
    assert again.allowed
    assert c is not None
    assert other.renew(b) is True
    assert pool.release(b)
    assert pool.release(c)
    assert pool.held() == 0


def test_a_dead_holders_lease_comes_back_at_its_expiry(store: RedisStore, name: str) -> None:
    pool = RedisConcurrencyLimiter(store, name, 1, lease_ttl=timedelta(milliseconds=100))
    _, dead = pool.try_acquire()  # its holder never releases
    assert dead is not None
    assert not pool.try_acquire()[0].allowed
    time.sleep(0.15)
    admitted, lease = pool.try_acquire()
    assert admitted.allowed
    assert lease is not None
    assert pool.release(dead) is False  # expired: reclaimed, frees nothing
    assert pool.held() == 1
    assert pool.release(lease)


def test_a_lease_holds_its_permits(store: RedisStore, name: str) -> None:
    pool = RedisConcurrencyLimiter(store, name, 5, lease_ttl=60.0)
    decision, lease = pool.try_acquire(3)
    assert decision.allowed
    assert lease is not None
    assert lease.permits == 3
    assert decision.remaining == 2
    assert not pool.try_acquire(3)[0].allowed
    never = pool.try_acquire(6)[0]
    assert not never.allowed
    assert never.retry_after == float("inf")
    assert pool.release(lease)


def test_async_forms(store: RedisStore, name: str) -> None:
    async def main() -> None:
        pool = RedisConcurrencyLimiter(store, name, 1, lease_ttl=60.0)
        decision, lease = await pool.try_acquire_async()
        assert decision.allowed
        assert lease is not None
        assert not (await pool.try_acquire_async())[0].allowed
        assert await pool.renew_async(lease)
        assert await pool.held_async() == 1
        assert await pool.release_async(lease)
        assert not await pool.release_async(lease)

    asyncio.run(main())


def test_bad_arguments_raise_typed_errors(store: RedisStore, name: str) -> None:
    with pytest.raises(InvalidArgumentError) as limit:
        RedisConcurrencyLimiter(store, name, 0, lease_ttl=1.0)
    assert limit.value.argument == "limit"
    with pytest.raises(InvalidArgumentError) as ttl:
        RedisConcurrencyLimiter(store, name, 1, lease_ttl=0.0005)
    assert ttl.value.argument == "lease_ttl"
    with pytest.raises(InvalidArgumentError) as policy:
        RedisConcurrencyLimiter(store, name, 1, lease_ttl=1.0, when_unavailable="local_share")  # type: ignore[arg-type]
    assert policy.value.argument == "when_unavailable"
    pool = RedisConcurrencyLimiter(store, name, 1, lease_ttl=1.0)
    for permits in (0, -1, 2**31):
        with pytest.raises(InvalidArgumentError) as bad:
            pool.try_acquire(permits)
        assert bad.value.argument == "permits"
    with pytest.raises(ArgumentTypeError) as not_a_lease:
        pool.release("lease")  # type: ignore[arg-type]
    assert not_a_lease.value.argument == "lease"
    assert (pool.name, pool.limit, pool.lease_ttl, pool.when_unavailable) == (name, 1, 1.0, "error")
    pool.close()
    assert pool.closed
    with pytest.raises(ClosedError):
        pool.try_acquire()


def test_when_redis_is_down_the_policy_decides(private_redis: PrivateRedis) -> None:
    store = RedisStore.connect(private_redis.url, timeout=1.0)
    plain = RedisConcurrencyLimiter(store, "down", 1, lease_ttl=1.0)
    open_ = RedisConcurrencyLimiter(store, "down", 1, lease_ttl=1.0, when_unavailable="fail_open")
    closed = RedisConcurrencyLimiter(
        store, "down", 1, lease_ttl=1.0, when_unavailable="fail_closed"
    )
    private_redis.kill()
    with pytest.raises(RedisUnavailableError):
        plain.try_acquire()
    assert not closed.try_acquire()[0].allowed
    admitted, lease = open_.try_acquire()
    assert admitted.allowed
    assert lease is not None
    assert not lease.recorded
    assert open_.release(lease)
    assert not open_.release(lease)
