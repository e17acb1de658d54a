"""``with limiter:`` and ``async with limiter:`` (aiolimiter's idiom): the
block runs after one unit was waited for, on the limiters that wait; a unit
no wait can bring raises ``RateLimitExceeded`` and the block does not run.

On a ``ManualClock`` a wait moves the clock instead of sleeping, so each
test reads how long the block waited from the clock."""

from __future__ import annotations

import asyncio
from typing import Union

import pytest

from ratekeeper import (
    CycleLimiter,
    LeakyBucketQueue,
    ManualClock,
    RateLimiter,
    RateLimitExceeded,
    TokenBucket,
)

Waiting = Union[RateLimiter, TokenBucket, LeakyBucketQueue, CycleLimiter]


def one_per_second(kind: str, clock: ManualClock) -> Waiting:
    if kind == "RateLimiter":
        return RateLimiter.create(1.0, clock=clock)
    if kind == "TokenBucket":
        return TokenBucket(1.0, 1, clock=clock)
    if kind == "LeakyBucketQueue":
        return LeakyBucketQueue(10, 1.0, clock=clock)
    return CycleLimiter(1, 1.0, 5.0, clock=clock)


KINDS = ["RateLimiter", "TokenBucket", "LeakyBucketQueue", "CycleLimiter"]


@pytest.mark.parametrize("kind", KINDS)
def test_with_waits_for_one_unit_per_block(kind: str) -> None:
    clock = ManualClock()
    limiter = one_per_second(kind, clock)
    ran = 0
    for _ in range(3):
        with limiter:
            ran += 1
    assert ran == 3
    # One unit per second: the first block ran at once, the third waited
    # until two seconds had passed.
    assert clock.now == pytest.approx(2.0)


@pytest.mark.parametrize("kind", KINDS)
def test_async_with_waits_for_one_unit_per_block(kind: str) -> None:
    clock = ManualClock()
    limiter = one_per_second(kind, clock)

    async def blocks() -> int:
        ran = 0
        for _ in range(3):
            async with limiter:
                ran += 1
        return ran

    assert asyncio.run(blocks()) == 3
    assert clock.now == pytest.approx(2.0)


def test_async_with_sleeps_on_the_event_loop() -> None:
    # On real time: two blocks at 20 per second take about 50 ms, spent in
    # asyncio.sleep (another task keeps running meanwhile).
    limiter = RateLimiter.create(20.0)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    async def main() -> None:
        task = asyncio.create_task(ticker())
        for _ in range(3):
            async with limiter:
                pass
        task.cancel()

    asyncio.run(main())
    assert ticks >= 3


def test_a_full_queue_refuses_the_block() -> None:
    clock = ManualClock()
    queue = LeakyBucketQueue(1, 1.0, clock=clock)
    assert queue.check().wait == 0.0  # leaves now
    assert queue.check().wait == pytest.approx(1.0)  # waits: the queue's one place
    ran = False
    with pytest.raises(RateLimitExceeded) as raised, queue:
        ran = True
    assert not ran
    assert raised.value.decision is not None
    assert not raised.value.decision.allowed


def test_a_token_beyond_the_burst_refuses_the_block() -> None:
    bucket = TokenBucket(1.0, 0, clock=ManualClock())

    async def enter() -> None:
        async with bucket:
            pytest.fail("the block ran")

    with pytest.raises(RateLimitExceeded) as raised:
        asyncio.run(enter())
    assert raised.value.decision is not None
    assert raised.value.decision.is_never


def test_a_cycle_past_its_timeout_refuses_the_block() -> None:
    clock = ManualClock()
    limiter = CycleLimiter(1, 10.0, 1.0, clock=clock)
    with limiter:
        pass
    with pytest.raises(RateLimitExceeded, match=r"within 1\.0 s"), limiter:
        pytest.fail("the block ran")
    # Refused after waiting out its timeout, as acquire_permission does.
    assert clock.now == pytest.approx(1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_leaving_the_block_gives_nothing_back(kind: str) -> None:
    # A block that fails spent its unit, and its exception goes on: the
    # next block waits the whole second, with and async with alike.
    clock = ManualClock()
    limiter = one_per_second(kind, clock)
    with pytest.raises(KeyError), limiter:
        raise KeyError("the block failed")
    with limiter:
        pass
    assert clock.now == pytest.approx(1.0)

    async def blocks() -> None:
        with pytest.raises(KeyError):
            async with limiter:
                raise KeyError("the block failed")
        async with limiter:
            pass

    asyncio.run(blocks())
    assert clock.now == pytest.approx(3.0)
