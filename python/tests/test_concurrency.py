"""`ConcurrencyLimiter`: permits that cannot leak (context managers, sync
and async, and garbage collection), the adaptive policies, the decorator,
and threads."""

from __future__ import annotations

import asyncio
import gc
import inspect
import threading
import time
from datetime import timedelta

import pytest

from ratekeeper import (
    AimdPolicy,
    ConcurrencyLimiter,
    Decision,
    GradientPolicy,
    ManualClock,
    Permit,
    RateLimitExceeded,
)


def test_a_fixed_limit(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(2, clock=clock)
    a = limiter.acquire()
    b = limiter.try_acquire()
    assert b is not None
    assert a.decision == Decision(True, 2, 1)
    assert b.decision.remaining == 0
    assert limiter.try_acquire() is None
    with pytest.raises(RateLimitExceeded) as refused:
        limiter.acquire()
    assert refused.value.decision == Decision(False, 2, 0)
    assert limiter.in_flight == 2
    assert a.success() == 2
    assert a.released
    assert limiter.in_flight == 1
    assert a.success() == 2  # released once only
    assert limiter.in_flight == 1
    b.ignore()
    assert limiter.in_flight == 0


def test_the_context_manager_releases_whatever_happens(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(1, clock=clock)
    with limiter.acquire() as permit:
        assert isinstance(permit, Permit)
        assert limiter.in_flight == 1
    assert permit.released
    assert limiter.in_flight == 0
    with pytest.raises(KeyError), limiter.acquire():
        raise KeyError("boom")
    assert limiter.in_flight == 0


def test_the_outcome_of_a_block_is_a_sample(clock: ManualClock) -> None:
    # AIMD with one permit in flight of a limit of 2 (half used): a success
    # adds one, a drop (a timeout) multiplies by 0.5, anything else is ignored.
    def limiter() -> ConcurrencyLimiter:
        policy = AimdPolicy(initial_limit=2, min_limit=1, max_limit=10, backoff_ratio=0.5)
        return ConcurrencyLimiter(policy, clock=clock)

    ok = limiter()
    with ok.acquire():
        clock.advance(0.02)
    assert ok.limit == 3

    timed_out = limiter()
    with pytest.raises(TimeoutError), timed_out.acquire():
        raise TimeoutError
    assert timed_out.limit == 1

    failed = limiter()
    with pytest.raises(ValueError, match="a bug"), failed.acquire():
        raise ValueError("a bug")
    assert failed.limit == 2

    told = limiter()
    with told.acquire() as permit:
        assert permit.dropped() == 1  # decided inside the block: exit adds nothing
    assert told.limit == 1


def test_the_async_context_manager(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(AimdPolicy(initial_limit=2, min_limit=1), clock=clock)

    async def main() -> None:
        async with limiter.acquire() as permit:
            assert limiter.in_flight == 1
            await asyncio.sleep(0)
        assert permit.released
        with pytest.raises(asyncio.TimeoutError):
            async with limiter.acquire():
                await asyncio.wait_for(asyncio.sleep(1), 0.001)

    asyncio.run(main())
    assert limiter.in_flight == 0
    assert limiter.limit == 2  # 2 + 1 for the success, then 3 x 0.9 for the timeout, floored


def test_a_cancelled_task_gives_its_permit_back() -> None:
    limiter = ConcurrencyLimiter(1)

    async def main() -> None:
        async def hold() -> None:
            async with limiter.acquire():
                await asyncio.sleep(10)

        task = asyncio.create_task(hold())
        await asyncio.sleep(0.01)
        assert limiter.in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert limiter.in_flight == 0


def test_a_forgotten_permit_is_released_when_collected(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(AimdPolicy(initial_limit=20), clock=clock)
    limiter.acquire()  # dropped on the floor
    limiter.try_acquire()
    gc.collect()
    assert limiter.in_flight == 0
    assert limiter.limit == 20  # released as ignored: no sample


def test_gradient_learns_from_round_trips(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(GradientPolicy(initial_limit=4, probe_interval=0), clock=clock)
    permits = [limiter.acquire() for _ in range(4)]
    assert limiter.try_acquire() is None
    clock.advance(timedelta(milliseconds=10))
    for permit in permits:
        permit.success()
    # Flat round trips: + queue_size (4) for each sample that found at least
    # half the limit in flight (the 2nd, 2 of 4, and the 4th, 4 of 8).
    assert limiter.limit == 12


def test_samples_measured_elsewhere(clock: ManualClock) -> None:
    aimd = ConcurrencyLimiter(AimdPolicy(initial_limit=10, min_limit=1), clock=clock)
    assert aimd.sample(0.001, 5) == 11
    assert aimd.sample(timedelta(seconds=6), 5) == 9  # slower than rtt_timeout: a drop
    assert aimd.sample(0.001, 5, dropped=True) == 8
    fixed = ConcurrencyLimiter(3)
    assert fixed.sample(0.5, 3, True) == 3


def test_policies_are_values_with_netflix_defaults() -> None:
    g = GradientPolicy()
    assert (g.initial_limit, g.min_limit, g.max_limit, g.queue_size, g.probe_interval) == (
        50,
        1,
        1000,
        4,
        1000,
    )
    assert (g.smoothing, g.rtt_tolerance, g.backoff_ratio) == (0.2, 2.0, 0.9)
    a = AimdPolicy(rtt_timeout=timedelta(seconds=2))
    assert (a.initial_limit, a.min_limit, a.max_limit, a.backoff_ratio) == (20, 20, 200, 0.9)
    assert a.rtt_timeout == 2.0
    assert AimdPolicy(rtt_timeout=2) == a
    assert GradientPolicy(queue_size=4) == g
    assert GradientPolicy(queue_size=5) != g
    assert eval(repr(g), {"GradientPolicy": GradientPolicy}) == g
    assert eval(repr(a), {"AimdPolicy": AimdPolicy}) == a
    assert ConcurrencyLimiter(g).limit == 50
    assert ConcurrencyLimiter(AimdPolicy()).limit == 20


def test_the_signatures_show_the_defaults_they_use() -> None:
    for policy in (GradientPolicy, AimdPolicy):
        made = policy()
        for name, parameter in inspect.signature(policy).parameters.items():
            assert getattr(made, name) == parameter.default, (policy, name)


def test_repr(clock: ManualClock) -> None:
    assert repr(ConcurrencyLimiter(3)) == "ConcurrencyLimiter(3)"
    text = repr(ConcurrencyLimiter(AimdPolicy(), clock=clock))
    assert text == (
        "ConcurrencyLimiter(AimdPolicy(initial_limit=20, min_limit=20, max_limit=200, "
        "backoff_ratio=0.9, rtt_timeout=5.0), clock=ManualClock(now=0.0))"
    )
    assert ConcurrencyLimiter.__module__ == "ratekeeper"


def test_the_decorator_holds_a_permit_for_the_call(clock: ManualClock) -> None:
    limiter = ConcurrencyLimiter(1, clock=clock)
    seen = []

    @limiter.limited
    def work(x: int) -> int:
        """Work."""
        seen.append(limiter.in_flight)
        if x < 0:
            raise ValueError(x)
        return x * 2

    assert work(2) == 4
    assert seen == [1]
    assert limiter.in_flight == 0
    with pytest.raises(ValueError, match="-1"):
        work(-1)
    assert limiter.in_flight == 0
    assert work.__doc__ == "Work."

    @limiter.limited()
    def reentrant() -> int:
        return work(1)

    with pytest.raises(RateLimitExceeded, match="1 permit") as refused:
        reentrant()
    assert refused.value.decision == Decision(False, 1, 0)
    assert limiter.in_flight == 0


def test_the_decorator_on_async_functions() -> None:
    limiter = ConcurrencyLimiter(2)
    peak = 0

    @limiter.limited
    async def work() -> None:
        nonlocal peak
        peak = max(peak, limiter.in_flight)
        await asyncio.sleep(0.01)

    assert inspect.iscoroutinefunction(work)

    async def main() -> list[object]:
        return await asyncio.gather(*(work() for _ in range(4)), return_exceptions=True)

    results = asyncio.run(main())
    assert peak == 2
    assert results.count(None) == 2
    assert sum(isinstance(r, RateLimitExceeded) for r in results) == 2
    assert limiter.in_flight == 0


def test_threads_never_exceed_the_limit() -> None:
    limiter = ConcurrencyLimiter(3)
    peak = 0
    lock = threading.Lock()
    served = [0] * 6

    def worker(i: int) -> None:
        nonlocal peak
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            permit = limiter.try_acquire()
            if permit is None:
                continue
            with permit:
                with lock:
                    peak = max(peak, limiter.in_flight)
                served[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak <= 3
    assert sum(served) > 0
    assert limiter.in_flight == 0
