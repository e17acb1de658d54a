"""``RedisRateLimiter``: Guava's limiter shared through Redis, with the
waits of a local ``RateLimiter``; its async forms, its arguments, and its
blocking calls releasing the GIL."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any, Callable

import pytest
from interrupting import ctrl_c_after

from ratekeeper import (
    ArgumentTypeError,
    InvalidArgumentError,
    ManualClock,
    RateLimiter,
    RateLimitExceeded,
    RedisRateLimiter,
    RedisStore,
)
from with_redis.servers import Heartbeat, PrivateRedis


def test_an_interrupted_acquire_keeps_its_permits(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 0.01)  # the next permit is 100 s away
    shared.acquire()
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        shared.acquire()
    assert time.monotonic() - start < 2.0
    # Reserved in Redis before the wait, as Guava reserves: kept.
    assert shared.time_until_available() > 150


def test_the_waits_are_guavas(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 5.0)  # 200 ms a permit
    local = RateLimiter.create(5.0, clock=ManualClock())
    for permits in (1, 3, 1, 2):
        want = local.acquire(permits)
        got = shared.acquire(permits)  # sleeps as acquire does
        # The shared limiter's clock is real: the round trips and sleeps
        # since the last acquire make each wait a little shorter (up to
        # 100 ms on a loaded machine), never longer.
        assert want - 0.1 <= got <= want, (permits, got, want)
    assert local.time_until_available() == 0.4
    assert not shared.try_acquire()  # ~400 ms away: refused, takes nothing
    assert 0.3 < shared.time_until_available() <= 0.4
    assert shared.try_acquire(timeout=0.5)


def test_processes_share_one_limiter(store: RedisStore, name: str) -> None:
    one = RedisRateLimiter.create(store, name, 2.0)
    other = RedisRateLimiter.create(store, name, 1000.0)  # joins: the rate stays
    assert other.rate == 2.0
    assert one.try_acquire()
    assert not other.try_acquire()  # 0.5 s away for everyone
    other.rate = 4.0
    assert one.rate == 4.0
    assert one.key == other.key
    assert name in one.key
    assert (one.name, one.store) == (name, store)
    assert repr(one) == f"<RedisRateLimiter {name!r}>"


def test_a_warming_up_limiter_starts_cold(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 10.0, warmup=timedelta(seconds=2))
    local = RateLimiter.create(10.0, warmup=2.0, clock=ManualClock())
    assert shared.acquire() == local.acquire() == 0.0
    want = local.time_until_available()
    assert want > 0.2  # cold: well above the stable interval, 0.1
    assert want - 0.03 <= shared.time_until_available() <= want


def test_can_acquire_takes_nothing(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 1.0)
    assert shared.can_acquire()
    assert shared.try_acquire()
    assert not shared.can_acquire()
    assert shared.can_acquire(timeout=1.5)
    assert not shared.try_acquire(2, timeout=timedelta(milliseconds=100))
    assert 0.7 < shared.time_until_available(5) <= 1.0


def test_the_async_forms(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 2.0)  # 500 ms a permit

    async def main() -> list[object]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        start = time.monotonic()
        first = await shared.acquire_async()
        second = await shared.acquire_async()  # ~500 ms, slept on the loop
        elapsed = time.monotonic() - start
        refused = await shared.try_acquire_async()
        waited = await shared.try_acquire_async(timeout=0.6)
        task.cancel()
        await shared.set_rate_async(4.0)
        return [
            first,
            second,
            elapsed,
            ticks,
            refused,
            waited,
            await shared.get_rate_async(),
            await shared.can_acquire_async(),
            await shared.can_acquire_async(timeout=1.0),
            await shared.time_until_available_async(),
        ]

    first, second, elapsed, ticks, refused, waited, rate, can, can_later, until = asyncio.run(
        main()
    )
    assert first == 0.0
    assert isinstance(second, float)
    assert 0.3 < second <= 0.5
    assert isinstance(elapsed, float)
    assert isinstance(ticks, int)
    assert ticks >= 0.3 * elapsed / 0.005
    assert (refused, waited, rate, can, can_later) == (False, True, 4.0, False, True)
    assert isinstance(until, float)
    assert 0.0 < until <= 0.5


def test_a_cancelled_acquire_async_keeps_its_permits_taken(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 5.0)  # 200 ms a permit
    start = time.monotonic()
    shared.acquire()

    async def main() -> None:
        task = asyncio.create_task(shared.acquire_async())
        await asyncio.sleep(0.05)  # reserved, sleeping out its ~150 ms
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # Taken once: the next permit is due 400 ms after the first (its own
    # 200 ms, then the cancelled request's); 200 ms if given back, 600 ms if
    # counted twice.
    due = time.monotonic() - start + shared.time_until_available()
    assert 0.33 < due <= 0.45


def test_the_decorator(store: RedisStore, name: str) -> None:
    shared = RedisRateLimiter.create(store, name, 1.0)

    @shared.limited(timeout=0.0)
    def once() -> str:
        return "ok"

    @shared.limited(permits=1, timeout=0.0)
    async def once_async() -> str:
        return "ok"

    assert once() == "ok"
    with pytest.raises(RateLimitExceeded):
        once()
    with pytest.raises(RateLimitExceeded):
        asyncio.run(once_async())
    with pytest.raises(InvalidArgumentError, match="permits = 0"):
        shared.limited(permits=0)


@pytest.mark.parametrize(
    ("args", "kwargs", "argument", "kind"),
    [
        ((0.0,), {}, "permits_per_second", InvalidArgumentError),
        ((float("nan"),), {}, "permits_per_second", InvalidArgumentError),
        (("1",), {}, "permits_per_second", ArgumentTypeError),
        ((1.0, -1.0), {}, "warmup", InvalidArgumentError),
        ((1.0, "1"), {}, "warmup", ArgumentTypeError),
        ((1.0,), {"max_burst_seconds": -1.0}, "max_burst_seconds", InvalidArgumentError),
        ((1.0, 1.0), {"max_burst_seconds": 1.0}, "max_burst_seconds", ArgumentTypeError),
        ((1.0,), {"cold_factor": 3.0}, "cold_factor", ArgumentTypeError),
        ((1.0, 1.0), {"cold_factor": 0.5}, "cold_factor", InvalidArgumentError),
        ((1.0,), {"idle_ttl": 0}, "idle_ttl", InvalidArgumentError),
        ((1.0,), {"idle_ttl": "1"}, "idle_ttl", ArgumentTypeError),
    ],
)
def test_invalid_construction(
    store: RedisStore,
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    argument: str,
    kind: type[Exception],
) -> None:
    with pytest.raises(kind, match=f"^invalid argument {argument} = ") as raised:
        RedisRateLimiter.create(store, name, *args, **kwargs)
    assert raised.value.argument == argument  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("call", "argument", "kind"),
    [
        (lambda lim: lim.acquire(0), "permits", InvalidArgumentError),
        (lambda lim: lim.acquire(1.5), "permits", ArgumentTypeError),
        (lambda lim: lim.try_acquire(2**31), "permits", InvalidArgumentError),
        (lambda lim: lim.try_acquire(1, float("nan")), "timeout", InvalidArgumentError),
        (lambda lim: lim.time_until_available(-1), "permits", InvalidArgumentError),
        (lambda lim: lim.can_acquire(1, "1"), "timeout", ArgumentTypeError),
        (lambda lim: setattr(lim, "rate", -1.0), "permits_per_second", InvalidArgumentError),
        (lambda lim: asyncio.run(lim.acquire_async(0)), "permits", InvalidArgumentError),
        (
            lambda lim: asyncio.run(lim.set_rate_async(0.0)),
            "permits_per_second",
            InvalidArgumentError,
        ),
    ],
)
def test_invalid_calls_change_nothing(
    store: RedisStore,
    name: str,
    call: Callable[[Any], object],
    argument: str,
    kind: type[Exception],
) -> None:
    shared = RedisRateLimiter.create(store, name, 1.0)
    with pytest.raises(kind, match=f"^invalid argument {argument} = "):
        call(shared)
    assert shared.rate == 1.0
    assert shared.try_acquire()  # nothing was taken


def test_a_blocking_round_trip_releases_the_gil(
    private_redis: PrivateRedis, heartbeat: Heartbeat
) -> None:
    store = RedisStore.connect(private_redis.url, timeout=2.0)
    shared = RedisRateLimiter.create(store, "gil", 100.0)
    private_redis.stall(0.4)
    start = time.monotonic()
    assert shared.acquire() == 0.0
    end = time.monotonic()
    assert end - start >= 0.25
    beats = heartbeat.between(start + 0.02, end - 0.02)
    # Held, the GIL would stop the heartbeat dead; released, it beats about
    # every ms, or less often on a loaded machine, but beats.
    assert beats >= 20, f"{beats} beats in {end - start:.3f} s"
