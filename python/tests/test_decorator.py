"""`limiter.limited`: rate-limits plain and async functions."""

from __future__ import annotations

import asyncio
import inspect
from typing import Callable, Union

import pytest

from ratekeeper import (
    ArgumentTypeError,
    CompositeLimiter,
    ConcurrencyLimiter,
    FixedWindow,
    Gcra,
    LeakyBucketMeter,
    LeakyBucketQueue,
    ManualClock,
    RateLimiter,
    RateLimitError,
    RateLimitExceeded,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
)


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


# --- the other limiters: the same decorator, each algorithm's way of admitting

Policing = Union[
    Gcra, LeakyBucketMeter, SlidingWindow, SlidingLog, SlidingWindowCounter, CompositeLimiter
]


def test_a_policing_limiter_refuses_a_call_at_once_with_its_decision() -> None:
    clock = ManualClock()
    limiter = FixedWindow(2, 10.0, clock=clock)
    calls = []

    @limiter.limited
    def handle(x: int) -> int:
        """Handles x."""
        calls.append(x)
        return x

    assert [handle(1), handle(2)] == [1, 2]
    with pytest.raises(RateLimitExceeded, match=r"handle: 1 unit\(s\) refused") as raised:
        handle(3)
    assert calls == [1, 2]
    decision = raised.value.decision
    assert decision is not None
    assert (decision.allowed, decision.retry_after) == (False, 10.0)
    assert decision.headers()["Retry-After"] == "10"
    assert clock.now == 0.0  # nothing waited
    assert handle.__name__ == "handle"
    assert handle.__doc__ == "Handles x."


@pytest.mark.parametrize(
    "make",
    [
        lambda c: Gcra(1, 1, 1.0, clock=c),
        lambda c: LeakyBucketMeter(2, 1, 1.0, clock=c),
        lambda c: SlidingWindow(2, 1.0, 2, clock=c),
        lambda c: SlidingLog(2, 1.0, clock=c),
        lambda c: SlidingWindowCounter(2, 1.0, clock=c),
        lambda c: CompositeLimiter([FixedWindow(2, 1.0), Gcra(9, 1, 1.0)], clock=c),
    ],
)
def test_every_policing_limiter_has_the_decorator(make: Callable[[ManualClock], Policing]) -> None:
    limiter = make(ManualClock())

    @limiter.limited(cost=2)
    def work() -> str:
        return "done"

    @limiter.limited
    async def work_async() -> str:
        return "done"

    assert work() == "done"
    with pytest.raises(RateLimitExceeded) as raised:
        asyncio.run(work_async())
    assert raised.value.decision is not None
    assert not raised.value.decision.allowed


def test_a_cost_above_the_limit_says_no_wait_can_help() -> None:
    limiter = Gcra(0, 1, 1.0, clock=ManualClock())

    @limiter.limited(cost=5)
    def work() -> None:
        pass

    with pytest.raises(RateLimitExceeded, match="no wait can admit them") as raised:
        work()
    assert raised.value.decision is not None
    assert raised.value.decision.is_never


def test_a_token_bucket_call_waits_for_its_tokens() -> None:
    clock = ManualClock()
    bucket = TokenBucket(2.0, 1, clock=clock)

    @bucket.limited
    def work() -> None:
        pass

    @bucket.limited(cost=1, timeout=0.1)
    def hurried() -> None:
        pass

    work()
    work()
    assert clock.now == 0.5
    with pytest.raises(RateLimitExceeded, match=r"hurried: 1 token\(s\) not available within 0\.1"):
        hurried()
    assert clock.now == 0.5

    @bucket.limited(cost=2)
    def too_big() -> None:
        pass

    with pytest.raises(RateLimitExceeded, match="no wait can admit them"):
        too_big()


def test_a_token_bucket_async_call_waits_on_the_event_loop() -> None:
    bucket = TokenBucket(10.0, 1)  # 100 ms a call

    @bucket.limited
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


def test_a_queue_call_waits_for_its_slot_and_a_full_queue_refuses() -> None:
    clock = ManualClock()
    queue = LeakyBucketQueue(1, 1.0, clock=clock)

    @queue.limited
    def work() -> None:
        pass

    @queue.limited
    async def work_async() -> None:
        pass

    work()
    asyncio.run(work_async())
    assert clock.now == 1.0
    queue.check()
    queue.check()  # the next two slots are taken
    with pytest.raises(RateLimitExceeded):
        work()


@pytest.mark.parametrize(
    ("decorate", "argument"),
    [
        (lambda: FixedWindow(1, 1.0).limited(cost=-1), "cost"),
        (lambda: FixedWindow(1, 1.0).limited(cost=1.5), "cost"),  # type: ignore[call-overload]
        (lambda: TokenBucket(1.0, 1).limited(cost=-1), "cost"),
        (lambda: TokenBucket(1.0, 1).limited(timeout=float("nan")), "timeout"),
        (lambda: TokenBucket(1.0, 1).limited(timeout="soon"), "timeout"),  # type: ignore[call-overload]
        (lambda: LeakyBucketQueue(1, 1.0).limited(cost=True), "cost"),
    ],
)
def test_bad_arguments_of_the_new_decorators(decorate: Callable[[], object], argument: str) -> None:
    with pytest.raises(RateLimitError) as raised:
        decorate()
    assert getattr(raised.value, "argument", None) == argument


@pytest.mark.parametrize(
    "limiter",
    [
        RateLimiter.create(1.0),
        TokenBucket(1.0, 1),
        LeakyBucketQueue(1, 1.0),
        FixedWindow(1, 1.0),
        ConcurrencyLimiter(1),
    ],
    ids=type,
)
def test_a_decorator_given_a_count_first_is_refused_when_decorating(
    limiter: RateLimiter | TokenBucket | LeakyBucketQueue | FixedWindow | ConcurrencyLimiter,
) -> None:
    # `@limiter.limited(2)` meant `permits=2`: it was taken for the function
    # to limit, and failed only on the first call.
    with pytest.raises(ArgumentTypeError) as raised:
        limiter.limited(2)  # type: ignore[call-overload]
    assert isinstance(raised.value, TypeError)
    assert (raised.value.argument, raised.value.value) == ("func", 2)
    assert "go by name" in str(raised.value)


def test_checking_the_decorators_arguments_takes_nothing() -> None:
    clock = ManualClock()
    bucket = TokenBucket(1.0, 1, clock=clock)
    queue = LeakyBucketQueue(0, 1.0, clock=clock)
    window = FixedWindow(1, 1.0, clock=clock)
    bucket.limited(cost=1, timeout=5.0)
    queue.limited(cost=1)
    window.limited(cost=1)
    assert bucket.tokens == 1.0
    assert queue.check().allowed
    assert window.check().allowed
    assert clock.now == 0.0
