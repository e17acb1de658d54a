"""`limiter.limited`: rate-limits plain and async functions."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from ratekeeper import ManualClock, RateLimiter, RateLimitExceeded


def test_a_plain_function_waits_for_its_permits() -> None:
    clock = ManualClock()
    limiter = RateLimiter.create(2.0, clock=clock)

    @limiter.limited
    def work(x: int) -> int:
        """Doubles x."""
        return 2 * x

    assert [work(i) for i in range(3)] == [0, 2, 4]
    assert clock.now == 1.0
    assert work.__name__ == "work"
    assert work.__doc__ == "Doubles x."


def test_permits_per_call() -> None:
    clock = ManualClock()
    limiter = RateLimiter.create(2.0, clock=clock)

    @limiter.limited(permits=2)
    def work() -> None:
        pass

    work()
    work()
    assert clock.now == 1.0


def test_with_a_timeout_a_call_that_cannot_go_raises_and_does_not_run() -> None:
    limiter = RateLimiter.create(1.0, clock=ManualClock())
    calls = []

    @limiter.limited(timeout=0.5)
    def work() -> None:
        calls.append(1)

    work()
    with pytest.raises(RateLimitExceeded, match="work: 1 permit"):
        work()
    assert calls == [1]


def test_an_async_function_stays_async_and_waits_on_the_event_loop() -> None:
    clock = ManualClock()
    limiter = RateLimiter.create(4.0, clock=clock)

    @limiter.limited
    async def work(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    assert inspect.iscoroutinefunction(work)

    async def main() -> list[int]:
        return [await work(i) for i in range(5)]

    assert asyncio.run(main()) == [1, 2, 3, 4, 5]
    assert clock.now == 1.0


def test_an_async_function_with_a_timeout() -> None:
    limiter = RateLimiter.create(1.0, clock=ManualClock())

    @limiter.limited(timeout=0.0)
    async def work() -> str:
        return "done"

    async def main() -> None:
        assert await work() == "done"
        with pytest.raises(RateLimitExceeded):
            await work()

    asyncio.run(main())


def test_a_real_async_limited_function_does_not_block_the_loop() -> None:
    limiter = RateLimiter.create(10.0)  # 100 ms a call

    @limiter.limited
    async def work() -> None:
        pass

    async def main() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        for _ in range(3):
            await work()
        task.cancel()
        return ticks

    assert asyncio.run(main()) >= 20


def test_bad_decorator_arguments_fail_when_decorating() -> None:
    limiter = RateLimiter.create(1.0)
    with pytest.raises(ValueError, match="permits = 0"):
        limiter.limited(permits=0)
    with pytest.raises(TypeError, match="timeout = 'soon'"):
        limiter.limited(timeout="soon")  # type: ignore[call-overload]
    assert limiter.try_acquire()  # checking took nothing
