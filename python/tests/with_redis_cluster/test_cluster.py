"""Every mode against a three-master Redis Cluster
(``tests/redis/with-redis --cluster``): one limiter's keys spread over the
slots, each key's state in one, and every limit holds."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from ratekeeper import (
    Decision,
    FixedWindow,
    Gcra,
    Membership,
    RedisCompositeLimiter,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisRateLimiter,
    RedisStore,
    SlidingLog,
    SlidingWindowCounter,
    TokenBucket,
)


@pytest.fixture(scope="module")
def store() -> RedisStore:
    nodes = os.environ.get("RATEKEEPER_REDIS_CLUSTER")
    if not nodes:
        pytest.fail("run under tests/redis/with-redis --cluster")
    return RedisStore.connect_cluster(nodes.split(","), timeout=2.0, connect_timeout=2.0)


@pytest.fixture
def name() -> str:
    return f"cluster-{uuid.uuid4().hex[:8]}"


def test_the_store_is_a_cluster(store: RedisStore) -> None:
    assert store.cluster is True
    assert len(store.urls) == 3
    assert repr(store).startswith("<RedisStore ['redis://127.0.0.1:")
    assert ", cluster=True, timeout=2.0>" in repr(store)


@pytest.mark.parametrize(
    "template",
    [Gcra(4, 5, 60.0), TokenBucket(0.01, 5), FixedWindow(5, 1e6), SlidingLog(5, 60.0)],
    ids=["gcra", "token_bucket", "fixed_window", "sliding_log"],
)
def test_exact_mode_holds_each_keys_limit(
    store: RedisStore, name: str, template: FixedWindow
) -> None:
    limiter = RedisLimiter(store, name, template)
    # 40 keys land on every master of the three.
    for key in (f"user:{i}" for i in range(40)):
        assert [limiter.check(key).allowed for _ in range(6)] == [True] * 5 + [False], key


def test_a_composite_holds_each_keys_limits_all_or_nothing(store: RedisStore, name: str) -> None:
    # Every part of one key under one hash tag: one script run on one
    # master, whichever of the three holds the key.
    limiter = RedisCompositeLimiter(
        store, name, [SlidingWindowCounter(5, 60.0), FixedWindow(3, 1e6)]
    )
    for key in (f"user:{i}" for i in range(40)):
        answers = [limiter.check(key) for _ in range(4)]
        assert [d.allowed for d, _ in answers] == [True] * 3 + [False], key
        assert answers[3][1][0].remaining == 2  # the refusal took nothing
        limiter.refund(key)
        assert limiter.check(key)[0].allowed, key

    async def main() -> list[bool]:
        return [(await limiter.check_async(f"async:{i % 4}"))[0].allowed for i in range(20)]

    assert sum(asyncio.run(main())) == 4 * 3


def test_async_and_threads_of_decisions(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, Gcra(29, 30, 60.0), remember_refusals=False)

    async def main() -> list[Decision]:
        return await asyncio.gather(*(limiter.check_async(f"k{i % 4}") for i in range(200)))

    decisions = asyncio.run(main())
    assert sum(d.allowed for d in decisions) == 4 * 30


def test_leased_guava_and_divided_modes(store: RedisStore, name: str) -> None:
    leased = RedisLeasedLimiter(store, name, Gcra(19, 20, 60.0), batch=8, lease=60.0)
    other = RedisLeasedLimiter(store, name, Gcra(19, 20, 60.0), batch=8, lease=60.0)
    admitted = sum(leased.check("k").allowed for _ in range(15))
    admitted += sum(other.check("k").allowed for _ in range(15))
    assert admitted <= 20
    assert admitted >= 20 - 8  # at most one batch stranded in a lease

    guava = RedisRateLimiter.create(store, name, 2.0)
    assert guava.acquire() == 0.0
    assert not guava.try_acquire()
    assert 0.4 < guava.time_until_available() <= 0.5

    with (
        RedisDividedLimiter(
            store, name, FixedWindow(6, 1e6), heartbeat_ttl=1.0, max_keys=10
        ) as one,
        Membership.join(store, name, 1.0) as two,
    ):
        assert two.nodes == 2
        assert one.check("k", 3).allowed
        assert one.nodes in (1, 2)  # its count follows at its next heartbeat


def test_peek_and_remove_on_keys_across_the_masters(store: RedisStore, name: str) -> None:
    # The sliding log keeps two keys per user key, under one hash tag: its
    # remove deletes both in one script on one slot.
    for template in (SlidingLog(3, 1e6), Gcra(2, 1, 60.0)):
        limiter = RedisLimiter(store, f"{name}-{type(template).__name__}", template)
        for key in ("a", "b", "c", "d", "e", "f"):
            assert limiter.remove(key) is False
            assert all(limiter.check(key) for _ in range(3))
            assert not limiter.peek(key).allowed
            assert limiter.remove(key) is True
            assert limiter.peek(key, 3).allowed
    shared = RedisRateLimiter.create(store, name + "-guava", 1.0)
    assert shared.reset() is True
    assert shared.inspect().time_until_available == 0.0
