"""The async methods never block the event loop; cancellation keeps the
permits taken; on a ManualClock nothing sleeps."""

from __future__ import annotations

import asyncio
import time

import pytest

from ratekeeper import ManualClock, RateLimiter


async def ticks_during(coro_factory: object, limiter: RateLimiter) -> tuple[object, int, float]:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    start = time.monotonic()
    result = await coro_factory(limiter)  # type: ignore[operator]
    elapsed = time.monotonic() - start
    task.cancel()
    return result, ticks, elapsed


def test_acquire_async_does_not_block_the_event_loop() -> None:
    limiter = RateLimiter.create(4.0)
    limiter.acquire()
    waited, ticks, elapsed = asyncio.run(ticks_during(lambda lim: lim.acquire_async(), limiter))
    assert isinstance(waited, float)
    assert 0.2 < waited <= 0.25
    assert elapsed >= waited - 0.005
    # A blocked loop would not have run the ticker during the ~250 ms.
    assert ticks >= 20, ticks


def test_try_acquire_async_does_not_block_the_event_loop() -> None:
    limiter = RateLimiter.create(4.0)
    limiter.acquire()
    acquired, ticks, elapsed = asyncio.run(
        ticks_during(lambda lim: lim.try_acquire_async(timeout=1.0), limiter)
    )
    assert acquired is True
    assert elapsed >= 0.2
    assert ticks >= 20, ticks


def test_try_acquire_async_refuses_at_once_taking_nothing() -> None:
    limiter = RateLimiter.create(1.0)
    limiter.acquire()

    async def main() -> tuple[bool, float]:
        start = time.monotonic()
        acquired = await limiter.try_acquire_async(timeout=0.5)
        return acquired, time.monotonic() - start

    acquired, elapsed = asyncio.run(main())
    assert acquired is False
    assert elapsed < 0.05
    assert limiter.time_until_available() > 0.9  # nothing was taken


def test_on_a_manual_clock_the_clock_moves_instead_of_the_loop_sleeping() -> None:
    clock = ManualClock()
    limiter = RateLimiter.create(2.0, clock=clock)

    async def main() -> list[object]:
        return [
            await limiter.acquire_async(),
            await limiter.acquire_async(3),
            await limiter.acquire_async(),
            await limiter.try_acquire_async(),
            await limiter.try_acquire_async(timeout=2.0),
        ]

    start = time.monotonic()
    assert asyncio.run(main()) == [0.0, 0.5, 1.5, False, True]
    assert time.monotonic() - start < 0.5
    assert clock.now == 2.5


def test_cancelling_a_wait_keeps_the_permits_taken() -> None:
    limiter = RateLimiter.create(5.0)  # 200 ms a permit
    limiter.acquire()

    async def main() -> None:
        task = asyncio.create_task(limiter.acquire_async())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # The cancelled request still holds its reservation: the next one waits
    # for the first wait (~150 ms left) plus the cancelled request's 200 ms.
    assert limiter.time_until_available() > 0.3


def test_the_async_methods_check_their_arguments() -> None:
    limiter = RateLimiter.create(1.0)
    with pytest.raises(ValueError, match="permits = 0"):
        asyncio.run(limiter.acquire_async(0))
    with pytest.raises(TypeError, match=r"permits = 1\.5"):
        asyncio.run(limiter.try_acquire_async(1.5))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout = NaN"):
        asyncio.run(limiter.try_acquire_async(1, float("nan")))
    assert limiter.try_acquire()
