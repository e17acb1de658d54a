"""Leased mode (``RedisLeasedLimiter``: batches taken in one round trip,
spent locally), divided mode (``RedisDividedLimiter``: each node its share)
and ``Membership``: their semantics, async forms and arguments."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest

from ratekeeper import (
    ArgumentTypeError,
    ClosedError,
    Decision,
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    Membership,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisStore,
    SlidingLog,
    TokenBucket,
    UnsupportedError,
)


def test_a_lease_is_spent_locally_and_taken_from_the_shared_limit(
    store: RedisStore, name: str
) -> None:
    leased = RedisLeasedLimiter(store, name, Gcra(24, 25, 60.0), batch=10, lease=60.0)
    exact = RedisLimiter(store, name, Gcra(24, 25, 60.0))  # the same shared limit
    first = [leased.check("k") for _ in range(10)]
    assert all(first)
    # remaining: what is left in this process's lease.
    assert [d.remaining for d in first] == list(range(9, -1, -1))
    # Ten units were taken from Redis at once: the exact limiter sees 15 left.
    assert exact.peek("k").remaining == 14
    assert leased.check("k", 3).remaining == 7  # a second lease of 10, 3 spent
    # 5 left in Redis; a cost the lease and Redis together cannot cover is refused.
    assert sum(exact.check("k").allowed for _ in range(6)) == 5
    assert leased.check("k", 7).allowed
    refused = leased.check("k")
    assert not refused.allowed
    assert refused.retry_after > 0


def test_leases_expire(store: RedisStore, name: str) -> None:
    leased = RedisLeasedLimiter(
        store, name, TokenBucket(1000.0, 10), batch=5, lease=timedelta(milliseconds=50)
    )
    assert leased.check("k").remaining == 4
    time.sleep(0.08)
    # The 4 units left expired with their lease: a new lease of 5.
    assert leased.check("k").remaining == 4
    assert (leased.batch, leased.lease, leased.algorithm) == (5, 0.05, "token_bucket")
    assert leased.name == name
    assert leased.store is store
    assert repr(leased) == (
        f"<RedisLeasedLimiter {name!r} TokenBucket(rate=1000.0, burst=10), batch=5, lease=0.05>"
    )


def test_check_async_of_a_lease(store: RedisStore, name: str) -> None:
    leased = RedisLeasedLimiter(store, name, Gcra(9, 10, 60.0), batch=4, lease=60.0)

    async def main() -> list[Decision]:
        return [await leased.check_async("k") for _ in range(12)]

    decisions = asyncio.run(main())
    assert [d.allowed for d in decisions] == [True] * 10 + [False] * 2


@pytest.mark.parametrize(
    ("kwargs", "argument", "kind"),
    [
        ({"batch": 0}, "batch", InvalidArgumentError),
        ({"batch": 11}, "batch", InvalidArgumentError),
        ({"batch": -1}, "batch", InvalidArgumentError),
        ({"batch": 2.0}, "batch", ArgumentTypeError),
        ({"lease": 0}, "lease", InvalidArgumentError),
        ({"lease": -1.0}, "lease", InvalidArgumentError),
        ({"lease": float("nan")}, "lease", InvalidArgumentError),
        ({"lease": "1s"}, "lease", ArgumentTypeError),
        ({"name": 1}, "name", ArgumentTypeError),
        ({"store": None}, "store", ArgumentTypeError),
    ],
)
def test_invalid_leased_arguments(
    store: RedisStore, name: str, kwargs: dict[str, Any], argument: str, kind: type[Exception]
) -> None:
    args: dict[str, Any] = {"store": store, "name": name, "batch": 5, "lease": 1.0}
    args.update(kwargs)
    with pytest.raises(kind, match=f"^invalid argument {argument} = "):
        RedisLeasedLimiter(
            args["store"], args["name"], Gcra(9, 10, 1.0), batch=args["batch"], lease=args["lease"]
        )


def test_leased_mode_runs_on_gcra_and_the_token_bucket_only(store: RedisStore, name: str) -> None:
    for template in (FixedWindow(10, 1.0), SlidingLog(10, 1.0)):
        with pytest.raises(UnsupportedError, match="GCRA and the token bucket"):
            RedisLeasedLimiter(store, name, template, batch=1, lease=1.0)


def test_divided_mode_gives_each_node_its_share(store: RedisStore, name: str) -> None:
    with RedisDividedLimiter(
        store, name, FixedWindow(10, 60.0), heartbeat_ttl=0.3, max_keys=100
    ) as one:
        assert one.nodes == 1
        assert sum(one.check("a").allowed for _ in range(12)) == 10  # alone: the whole limit
        with RedisDividedLimiter(
            store, name, FixedWindow(10, 60.0), heartbeat_ttl=0.3, max_keys=100
        ) as two:
            assert two.nodes == 2  # counted when it joined
            wait_until(lambda: one.nodes == 2)  # the next heartbeat (every 0.1 s)
            assert sum(one.check("b").allowed for _ in range(12)) == 5
            assert sum(two.check("b").allowed for _ in range(12)) == 5
            assert one.node_id != two.node_id
        assert two.closed
        with pytest.raises(ClosedError, match="is closed"):
            two.check("b")
        # Left at once: the next heartbeat counts one node again.
        wait_until(lambda: one.nodes == 1)
        assert (one.name, one.algorithm, one.store) == (name, "fixed_window", store)
        assert (
            repr(one)
            == f"<RedisDividedLimiter {name!r} FixedWindow(limit=10, window=60.0), nodes=1>"
        )
    assert repr(one).endswith(", closed>")
    one.close()  # twice is fine


def wait_until(condition: Any, within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the condition never held")
        time.sleep(0.01)


def test_create_async_joins_without_blocking_the_loop(store: RedisStore, name: str) -> None:
    async def main() -> int:
        divided = await RedisDividedLimiter.create_async(
            store, name, Gcra(3, 4, 1.0), heartbeat_ttl=1.0, max_keys=10
        )
        with divided:
            return sum(divided.check("k").allowed for _ in range(6))

    assert asyncio.run(main()) == 4


@pytest.mark.parametrize(
    ("kwargs", "argument", "kind"),
    [
        ({"heartbeat_ttl": 0.002}, "heartbeat_ttl", InvalidArgumentError),
        ({"heartbeat_ttl": 86_401}, "heartbeat_ttl", InvalidArgumentError),
        ({"heartbeat_ttl": None}, "heartbeat_ttl", ArgumentTypeError),
        ({"max_keys": 0}, "max_keys", InvalidArgumentError),
        ({"max_keys": -5}, "max_keys", InvalidArgumentError),
        ({"max_keys": "10"}, "max_keys", ArgumentTypeError),
    ],
)
def test_invalid_divided_arguments(
    store: RedisStore, name: str, kwargs: dict[str, Any], argument: str, kind: type[Exception]
) -> None:
    args: dict[str, Any] = {"heartbeat_ttl": 1.0, "max_keys": 10}
    args.update(kwargs)
    with pytest.raises(kind, match=f"^invalid argument {argument} = "):
        RedisDividedLimiter(store, name, FixedWindow(1, 1.0), **args)


def test_membership_counts_the_live_nodes(store: RedisStore, name: str) -> None:
    first = Membership.join(store, name, timedelta(seconds=0.3))
    assert (first.group, first.ttl, first.nodes) == (name, 0.3, 1)
    second = Membership.join(store, name, 0.3)
    assert second.nodes == 2
    assert first.refresh() == 2
    assert repr(first) == f"<Membership {name!r} ttl=0.3, nodes=2>"
    second.close()
    assert second.closed
    assert first.refresh() == 1
    with pytest.raises(ClosedError, match="is closed"):
        second.refresh()
    with pytest.raises(ClosedError, match="is closed"):
        _ = second.nodes
    first.close()


def test_a_membership_in_use_by_a_limiter_stays(store: RedisStore, name: str) -> None:
    watcher = Membership.join(store, name, 5.0)
    member = Membership.join(store, name, 5.0)
    limiter = RedisLimiter(
        store,
        name,
        FixedWindow(4, 1.0),
        when_unavailable="local_share",
        membership=member,
        max_keys=10,
    )
    member.close()  # the handle is closed, the limiter still holds the node
    assert watcher.refresh() == 2
    del limiter
    assert watcher.refresh() == 1
    watcher.close()


def test_join_async_and_refresh_async(store: RedisStore, name: str) -> None:
    async def main() -> tuple[int, int]:
        a = await Membership.join_async(store, name, 1.0)
        b = await Membership.join_async(store, name, 1.0)
        with a, b:
            return await a.refresh_async(), b.nodes

    assert asyncio.run(main()) == (2, 2)


TTL_REQUIREMENT = "must be between 3 milliseconds and a day (3000 to 86400000000 microseconds)"


def test_heartbeat_ttls_have_the_redis_crates_domain_in_every_language(
    store: RedisStore, name: str
) -> None:
    # The domain and its words are ratekeeper-redis's (RedisOption), the
    # same from C and Node.js; each TTL under its own name.
    for ttl, shown in [(0.002, "0.002"), (86_400.000001, "86400.000001")]:
        with pytest.raises(InvalidArgumentError) as raised:
            Membership.join(store, name, ttl)
        assert str(raised.value) == f"invalid argument ttl = {shown}: {TTL_REQUIREMENT}"
        with pytest.raises(InvalidArgumentError) as raised:
            RedisDividedLimiter(store, name, FixedWindow(1, 1.0), heartbeat_ttl=ttl, max_keys=10)
        assert str(raised.value) == f"invalid argument heartbeat_ttl = {shown}: {TTL_REQUIREMENT}"
        assert raised.value.argument == "heartbeat_ttl"
    with Membership.join(store, name, timedelta(days=1)) as member:
        assert member.ttl == 86_400.0


@pytest.mark.parametrize(
    ("args", "argument", "kind"),
    [
        (("g", 0.001), "ttl", InvalidArgumentError),
        (("g", -1), "ttl", InvalidArgumentError),
        (("g", "1"), "ttl", ArgumentTypeError),
        ((b"g", 1.0), "group", ArgumentTypeError),
    ],
)
def test_invalid_membership_arguments(
    store: RedisStore, args: tuple[Any, Any], argument: str, kind: type[Exception]
) -> None:
    with pytest.raises(kind, match=f"^invalid argument {argument} = "):
        Membership.join(store, *args)
    with pytest.raises(ArgumentTypeError, match=r"^invalid argument membership = "):
        RedisLimiter(
            store,
            "n",
            FixedWindow(1, 1.0),
            when_unavailable="local_share",
            membership="m",  # type: ignore[arg-type]
            max_keys=1,
        )
