"""CycleLimiter: Resilience4j's AtomicRateLimiter from Python."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta

import pytest
from interrupting import ctrl_c_after

from ratekeeper import (
    ArgumentTypeError,
    CycleLimiter,
    CycleMetrics,
    Decision,
    InvalidArgumentError,
    ManualClock,
)


def test_acquire_waits_for_the_next_cycle_by_moving_a_manual_clock(clock: ManualClock) -> None:
    limiter = CycleLimiter(2, 0.1, 0.15, clock=clock)
    assert limiter.acquire_permission(2)
    assert clock.now == 0.0
    # The third permit is the next cycle's, 100 ms away: within the timeout.
    assert limiter.acquire_permission()
    assert clock.now == 0.1
    assert limiter.metrics().available_permissions == 1


def test_a_refused_acquire_takes_nothing_and_waits_the_timeout(clock: ManualClock) -> None:
    limiter = CycleLimiter(1, 1.0, 0.25, clock=clock)
    assert limiter.acquire_permission()
    # The next permit is 1 s away, beyond the 250 ms timeout: refused after
    # waiting the timeout, as Resilience4j's acquirePermission does.
    assert not limiter.acquire_permission()
    assert clock.now == 0.25
    assert limiter.metrics().available_permissions == 0


def test_reserve_returns_the_wait_in_seconds_or_none(clock: ManualClock) -> None:
    limiter = CycleLimiter(3, timedelta(milliseconds=10), timedelta(milliseconds=12), clock=clock)
    assert [limiter.reserve_permission() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.reserve_permission(3) == 0.01
    assert limiter.reserve_permission() is None
    assert clock.now == 0.0  # reserving never waits
    metrics = limiter.metrics()
    assert metrics.available_permissions == -3
    assert metrics.time_to_wait_micros == 20_000
    assert metrics.cycle == 0
    assert metrics.time_to_wait == 0.02


def test_check_and_check_now_answer_with_decisions(clock: ManualClock) -> None:
    limiter = CycleLimiter(2, 1.0, 1.0, clock=clock)
    assert limiter.check(2) == Decision(True, 2, 0, 0, 1_000_000, 0, 1_000_000)
    waited = limiter.check()
    assert waited.allowed
    assert waited.wait_micros == 1_000_000
    refused = limiter.check_now()
    assert not refused.allowed
    assert refused.retry_after_micros > 0
    assert clock.now == 0.0
    assert not limiter.try_acquire_permission()


def test_try_acquire_takes_only_what_the_current_cycle_has(clock: ManualClock) -> None:
    limiter = CycleLimiter(2, 1.0, 10.0, clock=clock)
    assert limiter.try_acquire_permission(2)
    assert not limiter.try_acquire_permission()
    assert limiter.metrics().available_permissions == 0
    clock.advance(1.0)
    assert limiter.try_acquire_permission()


def test_changes_apply_from_the_next_cycle(clock: ManualClock) -> None:
    limiter = CycleLimiter(1, 0.25, 0.25, clock=clock)
    assert limiter.acquire_permission()
    limiter.change_limit_for_period(5)
    assert limiter.limit_for_period == 5
    # The current cycle keeps its count; the next brings five.
    assert not limiter.try_acquire_permission()
    clock.advance(0.25)
    assert limiter.metrics().available_permissions == 5
    limiter.change_timeout_duration(0)
    assert limiter.timeout_duration == 0.0
    assert limiter.check(6).retry_after_micros > 0
    limiter.change_timeout_duration(timedelta(seconds=2))
    assert limiter.timeout_duration == 2.0
    assert limiter.limit_refresh_period == 0.25


def test_drain_takes_what_the_current_cycle_has_left(clock: ManualClock) -> None:
    limiter = CycleLimiter(10, 0.25, 0.5, clock=clock)
    assert limiter.acquire_permission(7)
    assert limiter.drain_permissions() == 3
    assert limiter.drain_permissions() == 0
    assert limiter.metrics() == limiter.metrics()
    assert isinstance(limiter.metrics(), CycleMetrics)


def test_bad_arguments_raise_typed_errors_naming_them() -> None:
    with pytest.raises(InvalidArgumentError) as e:
        CycleLimiter(0, 1.0, 0.0)
    assert e.value.argument == "limit_for_period"
    assert "between 1 and 2147483647" in str(e.value)
    with pytest.raises(InvalidArgumentError) as e:
        CycleLimiter(2**31, 1.0, 0.0)
    assert e.value.argument == "limit_for_period"
    with pytest.raises(InvalidArgumentError) as e:
        CycleLimiter(1, 1e-7, 0.0)
    assert e.value.argument == "limit_refresh_period"
    assert "1e-07" in str(e.value)  # the value as passed, not as microseconds
    with pytest.raises(InvalidArgumentError) as e:
        CycleLimiter(1, 1.0, -1.0)
    assert e.value.argument == "timeout_duration"
    with pytest.raises(ArgumentTypeError) as t:
        CycleLimiter(1.5, 1.0, 0.0)  # type: ignore[arg-type]
    assert t.value.argument == "limit_for_period"
    limiter = CycleLimiter(1, 1.0, 0.0)
    with pytest.raises(InvalidArgumentError) as e:
        limiter.acquire_permission(-1)
    assert e.value.argument == "permits"
    with pytest.raises(ArgumentTypeError):
        limiter.reserve_permission(1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError) as e:
        limiter.change_limit_for_period(0)
    assert e.value.argument == "limit_for_period"
    with pytest.raises(InvalidArgumentError) as e:
        limiter.change_timeout_duration(float("nan"))
    assert e.value.argument == "timeout_duration"
    assert limiter.limit_for_period == 1
    assert limiter.timeout_duration == 0.0


def test_repr_shows_the_configuration(clock: ManualClock) -> None:
    limiter = CycleLimiter(3, 0.5, 0.0, clock=clock)
    assert repr(limiter) == (
        "CycleLimiter(limit_for_period=3, limit_refresh_period=0.5, timeout_duration=0.0,"
        " clock=ManualClock(now=0.0))"
    )
    assert limiter.clock is clock


def test_a_blocking_wait_releases_the_gil_and_counts_as_waiting() -> None:
    limiter = CycleLimiter(1, 0.4, 1.0)
    assert limiter.acquire_permission()
    done = threading.Event()

    def wait() -> None:
        limiter.acquire_permission()
        done.set()

    thread = threading.Thread(target=wait)
    start = time.monotonic()
    thread.start()
    # This thread runs Python while the other sleeps: the wait released the GIL.
    deadline = start + 0.3
    while limiter.metrics().number_of_waiting_threads == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert limiter.metrics().number_of_waiting_threads == 1
    assert not done.is_set()
    thread.join()
    assert time.monotonic() - start >= 0.2
    assert limiter.metrics().number_of_waiting_threads == 0


def test_acquire_async_sleeps_on_the_event_loop_and_counts_as_waiting() -> None:
    limiter = CycleLimiter(1, 0.3, 1.0)

    async def main() -> tuple[bool, int, bool, int]:
        assert await limiter.acquire_permission_async()
        waiter = asyncio.ensure_future(limiter.acquire_permission_async())
        await asyncio.sleep(0.05)
        during = limiter.metrics().number_of_waiting_threads
        ticked = not waiter.done()  # the loop ran while the waiter slept
        acquired = await waiter
        return acquired, during, ticked, limiter.metrics().number_of_waiting_threads

    assert asyncio.run(main()) == (True, 1, True, 0)


def test_acquire_async_moves_a_manual_clock(clock: ManualClock) -> None:
    limiter = CycleLimiter(1, 0.5, 0.2, clock=clock)

    async def main() -> list[bool]:
        return [await limiter.acquire_permission_async() for _ in range(2)]

    # The second is refused after the 200 ms timeout.
    assert asyncio.run(main()) == [True, False]
    assert clock.now == 0.2


def test_ctrl_c_interrupts_a_blocking_wait_and_the_permits_stay_taken() -> None:
    limiter = CycleLimiter(1, 3.0, 10.0)  # the next permit is 3 s away
    assert limiter.acquire_permission()
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        limiter.acquire_permission()
    assert time.monotonic() - start < 2.0
    # The interrupted request keeps its reservation, and no longer waits.
    metrics = limiter.metrics()
    assert metrics.available_permissions == -1
    assert metrics.number_of_waiting_threads == 0
