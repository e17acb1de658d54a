"""``close()`` on every Redis object: later calls raise ``ClosedError``,
closing twice does nothing more, closing a store closes everything made
from it, and ``with``/``async with`` close on leaving."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Any, Callable, Union

import pytest

from ratekeeper import (
    ClosedError,
    FixedWindow,
    Gcra,
    Membership,
    RateLimitError,
    RedisConcurrencyLimiter,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisRateLimiter,
    RedisStore,
)

Closeable = Union[
    RedisStore,
    RedisLimiter,
    RedisLeasedLimiter,
    RedisDividedLimiter,
    Membership,
    RedisRateLimiter,
    RedisConcurrencyLimiter,
]


@pytest.fixture
def own_store(redis_url: str) -> Iterator[RedisStore]:
    """A store of this test alone: closing it closes no other test's."""
    store = RedisStore.connect(redis_url, timeout=2.0, connect_timeout=2.0)
    try:
        yield store
    finally:
        store.close()


def _async(call: Callable[[], Awaitable[object]]) -> Callable[[], object]:
    return lambda: asyncio.run(_awaited(call))


async def _awaited(call: Callable[[], Awaitable[object]]) -> object:
    return await call()


def _made(store: RedisStore, name: str) -> dict[str, Closeable]:
    """One object of every kind, made from ``store``."""
    membership = Membership.join(store, name + "-members", 5.0)
    return {
        "exact": RedisLimiter(store, name, FixedWindow(10, 60.0)),
        "leased": RedisLeasedLimiter(store, name + "-leased", Gcra(9, 10, 1.0), batch=2, lease=1.0),
        "divided": RedisDividedLimiter(
            store, name + "-divided", FixedWindow(10, 60.0), heartbeat_ttl=5.0, max_keys=10
        ),
        "membership": membership,
        "shared": RedisRateLimiter.create(store, name + "-shared", 10.0),
        "concurrency": RedisConcurrencyLimiter(store, name + "-concurrency", 2, lease_ttl=1.0),
    }


def _calls(kind: str, obj: Any, name: str) -> list[Callable[[], object]]:
    """Every call of ``obj`` that needs it open."""
    if kind == "store":
        return [
            lambda: obj.timeout,
            lambda: obj.retry_interval,
            lambda: obj.is_down,
            lambda: RedisLimiter(obj, name, FixedWindow(1, 1.0)),
            lambda: RedisLeasedLimiter(obj, name, Gcra(1, 1, 1.0), batch=1, lease=1.0),
            lambda: RedisDividedLimiter(
                obj, name, FixedWindow(1, 1.0), heartbeat_ttl=1.0, max_keys=1
            ),
            lambda: Membership.join(obj, name, 1.0),
            lambda: RedisRateLimiter.create(obj, name, 1.0),
            lambda: RedisConcurrencyLimiter(obj, name, 1, lease_ttl=1.0),
        ]
    if kind == "exact":
        return [
            lambda: obj.check("k"),
            lambda: obj.peek("k"),
            lambda: obj.limit,
            _async(lambda: obj.check_async("k")),
            _async(lambda: obj.peek_async("k")),
            obj.limited("k")(lambda: None),
        ]
    if kind == "leased":
        return [lambda: obj.check("k"), _async(lambda: obj.check_async("k"))]
    if kind == "divided":
        return [lambda: obj.check("k"), lambda: obj.nodes]
    if kind == "membership":
        return [lambda: obj.nodes, obj.refresh, _async(obj.refresh_async)]
    if kind == "concurrency":
        # A lease taken while the limiter is open.
        _, lease = obj.try_acquire()
        return [
            obj.try_acquire,
            lambda: obj.release(lease),
            lambda: obj.renew(lease),
            obj.held,
            lambda: obj.limit,
            lambda: obj.lease_ttl,
            _async(obj.try_acquire_async),
            _async(lambda: obj.release_async(lease)),
            _async(lambda: obj.renew_async(lease)),
            _async(obj.held_async),
        ]
    assert kind == "shared"
    return [
        obj.acquire,
        obj.try_acquire,
        obj.time_until_available,
        obj.can_acquire,
        lambda: obj.rate,
        lambda: setattr(obj, "rate", 5.0),
        lambda: obj.key,
        _async(obj.acquire_async),
        _async(obj.try_acquire_async),
        _async(obj.time_until_available_async),
        _async(obj.can_acquire_async),
        _async(obj.get_rate_async),
        _async(lambda: obj.set_rate_async(5.0)),
        obj.limited(lambda: None),
    ]


KINDS = ["store", "exact", "leased", "divided", "membership", "shared", "concurrency"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_call_after_close_raises_closed_error(
    own_store: RedisStore, name: str, kind: str
) -> None:
    obj: Closeable = own_store if kind == "store" else _made(own_store, name)[kind]
    calls = _calls(kind, obj, name)
    assert not obj.closed
    obj.close()
    assert obj.closed
    for call in calls:
        with pytest.raises(ClosedError, match=r"^this \w+ is closed$") as raised:
            call()
        assert isinstance(raised.value, RateLimitError)
    obj.close()  # twice: nothing more
    assert obj.closed


def test_closing_the_store_closes_everything_made_from_it(
    own_store: RedisStore, redis_url: str, name: str
) -> None:
    made = _made(own_store, name)
    watcher_store = RedisStore.connect(redis_url, timeout=2.0)
    with watcher_store:
        # Watchers of the membership's group and of the divided limiter's.
        watchers = [
            Membership.join(watcher_store, name + "-members", 5.0),
            Membership.join(watcher_store, name + "-divided", 5.0),
        ]
        assert [w.refresh() for w in watchers] == [2, 2]
        own_store.close()
        assert all(obj.closed for obj in made.values())
        for kind, obj in made.items():
            with pytest.raises(ClosedError):
                _calls(kind, obj, name)[0]()
        # Both nodes left their groups at once.
        assert [w.refresh() for w in watchers] == [1, 1]
    assert all(w.closed for w in watchers)


@pytest.mark.parametrize("kind", KINDS)
def test_with_and_async_with_close(redis_url: str, name: str, kind: str) -> None:
    def make() -> Closeable:
        store = RedisStore.connect(redis_url, timeout=2.0)
        return store if kind == "store" else _made(store, name)[kind]

    with make() as obj:
        assert not obj.closed
    assert obj.closed

    async def main() -> Closeable:
        async with make() as obj:
            assert not obj.closed
        return obj

    assert asyncio.run(main()).closed
