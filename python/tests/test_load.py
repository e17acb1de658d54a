"""The load-driven limiters, ``Bbr`` and ``SystemGuard``, on a
``ManualClock`` and a ``ManualLoad``: when they shed, their statistics,
their permits (context managers, sync and async, released once), and the
errors of every argument, and their ``limited`` decorators."""

from __future__ import annotations

import asyncio
import gc
import inspect
import math
from datetime import timedelta
from typing import Any

import pytest

from ratekeeper import (
    ArgumentTypeError,
    Bbr,
    BbrPermit,
    BbrStats,
    InvalidArgumentError,
    ManualClock,
    ManualLoad,
    RateLimitExceeded,
    SystemGuard,
    SystemPermit,
    SystemStats,
)


@pytest.fixture
def load() -> ManualLoad:
    return ManualLoad()


def warmed_bbr(clock: ManualClock, load: ManualLoad) -> Bbr:
    """A BBR of ten 100 ms buckets that has seen ten 10 ms requests in a
    row: nine ended in the first bucket, so its capacity is
    ``9 x 10 ms x 10 buckets/s / 1000 = 0`` (rounded down)."""
    bbr = Bbr(1.0, 10, 0.8, 1.0, load=load, clock=clock)
    for _ in range(10):
        with bbr.acquire():
            clock.advance(0.01)
    clock.advance(0.1)
    return bbr


def test_bbr_sheds_only_while_the_cpu_is_high_and_cooling_down(
    clock: ManualClock, load: ManualLoad
) -> None:
    bbr = warmed_bbr(clock, load)
    # CPU unknown (0.0): five in flight over a capacity of 0, all admitted.
    held = [bbr.acquire() for _ in range(5)]
    assert bbr.stats().in_flight == 5
    load.set_cpu_usage(0.9)
    assert bbr.try_acquire() is None
    decision, permit = bbr.check()
    assert permit is None
    assert (decision.allowed, decision.limit) == (False, 0)
    with pytest.raises(RateLimitExceeded) as refused:
        bbr.acquire()
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    assert refused.value.threshold is None
    # Below the threshold, but within the second of cool-down after the
    # first drop: still shedding.
    load.set_cpu_usage(0.1)
    clock.advance(0.999)
    assert bbr.try_acquire() is None
    clock.advance(0.002)
    admitted = bbr.try_acquire()
    assert admitted is not None
    assert admitted.decision.allowed
    for p in [*held, admitted]:
        p.release()
    assert bbr.stats().in_flight == 0


def test_bbr_at_the_threshold_sheds(clock: ManualClock, load: ManualLoad) -> None:
    bbr = warmed_bbr(clock, load)
    held = [bbr.acquire() for _ in range(2)]
    load.set_cpu_usage(0.8)
    assert bbr.try_acquire() is None
    load.clear()
    clock.advance(1.001)
    assert bbr.try_acquire() is not None
    del held


def test_bbr_stats(clock: ManualClock, load: ManualLoad) -> None:
    bbr = warmed_bbr(clock, load)
    load.set_cpu_usage(0.25)
    permit = bbr.acquire()
    stats = bbr.stats()
    assert isinstance(stats, BbrStats)
    assert stats.cpu_usage == 0.25
    assert stats.in_flight == 1
    assert stats.max_pass == 9
    assert stats.min_rt == 0.01
    assert stats.max_in_flight == 0
    assert stats == bbr.stats()
    assert repr(stats) == (
        "BbrStats(cpu_usage=0.25, in_flight=1, max_pass=9, min_rt=0.01, max_in_flight=0)"
    )
    permit.release()


def test_bbr_parameters_and_repr(clock: ManualClock, load: ManualLoad) -> None:
    bbr = Bbr(timedelta(seconds=5), 50, 0.9, timedelta(milliseconds=500), load=load, clock=clock)
    assert (bbr.window, bbr.buckets, bbr.cpu_threshold, bbr.cool_down) == (5.0, 50, 0.9, 0.5)
    assert bbr.load is load
    assert bbr.clock is clock
    assert repr(bbr) == (
        "Bbr(window=5.0, buckets=50, cpu_threshold=0.9, cool_down=0.5, "
        "load=ManualLoad(cpu_usage=None, load_average=None), clock=ManualClock(now=0.0))"
    )
    default = Bbr()
    assert (default.window, default.buckets, default.cpu_threshold, default.cool_down) == (
        10.0,
        100,
        0.8,
        1.0,
    )
    assert default.load is None
    assert default.clock is None


def test_bbr_permits_are_context_managers_released_once(
    clock: ManualClock, load: ManualLoad
) -> None:
    bbr = Bbr(load=load, clock=clock)
    with bbr.acquire() as permit:
        assert isinstance(permit, BbrPermit)
        assert not permit.released
        assert permit.decision.allowed
        assert bbr.stats().in_flight == 1
    assert permit.released
    assert bbr.stats().in_flight == 0
    with pytest.raises(KeyError), bbr.acquire():
        raise KeyError("boom")
    assert bbr.stats().in_flight == 0

    a, b = bbr.acquire(), bbr.acquire()
    a.release()
    a.release()  # a second release does nothing
    assert bbr.stats().in_flight == 1
    assert repr(a) == "<BbrPermit released>"
    assert repr(b) == "<BbrPermit held>"
    b.release()
    assert bbr.stats().in_flight == 0


def test_bbr_async_context_manager(clock: ManualClock, load: ManualLoad) -> None:
    bbr = Bbr(load=load, clock=clock)

    async def request() -> tuple[BbrPermit, int]:
        async with bbr.acquire() as permit:
            assert isinstance(permit, BbrPermit)
            await asyncio.sleep(0)
            return permit, bbr.stats().in_flight

    permit, in_flight = asyncio.run(request())
    assert in_flight == 1
    assert permit.released  # by the block, not by garbage collection
    assert bbr.stats().in_flight == 0


def test_a_forgotten_permit_is_released_when_collected(
    clock: ManualClock, load: ManualLoad
) -> None:
    bbr = Bbr(load=load, clock=clock)
    guard = SystemGuard(max_thread=10, load=load, clock=clock)
    bbr.acquire()
    guard.acquire()
    gc.collect()
    assert bbr.stats().in_flight == 0
    assert guard.stats().in_flight == 0


def test_bbr_limited_calls_hold_a_permit_while_they_run(
    clock: ManualClock, load: ManualLoad
) -> None:
    bbr = warmed_bbr(clock, load)
    seen: list[int] = []

    @bbr.limited
    def work(x: int) -> int:
        """Work."""
        seen.append(bbr.stats().in_flight)
        if x < 0:
            raise ValueError(x)
        return x * 2

    assert work(2) == 4
    assert seen == [1]
    assert bbr.stats().in_flight == 0
    with pytest.raises(ValueError, match="-1") as failed:
        work(-1)
    assert seen == [1, 1]
    # Released by the call, not when its frame (held by the traceback) goes.
    assert failed.value.__traceback__ is not None
    assert bbr.stats().in_flight == 0
    assert work.__doc__ == "Work."

    held = [bbr.acquire() for _ in range(2)]
    load.set_cpu_usage(0.9)
    with pytest.raises(RateLimitExceeded, match="work: 1 permit") as refused:
        work(3)
    assert seen == [1, 1]  # not called
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    assert refused.value.threshold is None
    assert bbr.stats().in_flight == 2
    for p in held:
        p.release()


def test_bbr_limited_async_calls(clock: ManualClock, load: ManualLoad) -> None:
    bbr = warmed_bbr(clock, load)
    calls = 0

    @bbr.limited()
    async def work(fail: bool) -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        if fail:
            raise KeyError("boom")
        return bbr.stats().in_flight

    assert inspect.iscoroutinefunction(work)
    assert asyncio.run(work(False)) == 1
    assert bbr.stats().in_flight == 0
    with pytest.raises(KeyError) as failed:
        asyncio.run(work(True))
    assert failed.value.__traceback__ is not None  # the call's frame is kept
    assert bbr.stats().in_flight == 0

    held = [bbr.acquire() for _ in range(2)]
    load.set_cpu_usage(0.9)
    with pytest.raises(RateLimitExceeded) as refused:
        asyncio.run(work(False))
    assert calls == 2
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    assert bbr.stats().in_flight == 2
    del held


def guard_on(clock: ManualClock, load: ManualLoad, **rule: Any) -> SystemGuard:
    return SystemGuard(load=load, clock=clock, **rule)


def refusal(guard: SystemGuard, count: int = 1) -> str | None:
    """The threshold ``acquire`` names, checked against ``check``'s."""
    decision, permit, threshold = guard.check(count)
    assert (permit is None) == (threshold is not None)
    assert decision.allowed == (permit is not None)
    if permit is not None:
        permit.release()
        return None
    with pytest.raises(RateLimitExceeded) as refused:
        guard.acquire(count)
    assert refused.value.threshold == threshold
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    return threshold


def test_the_qps_threshold(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, qps=2)
    held = [guard.acquire(), guard.acquire()]
    assert guard.try_acquire() is None
    assert refusal(guard) == "qps"
    clock.advance(1.0)
    assert refusal(guard) is None
    del held


def test_the_thread_threshold(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, max_thread=1)
    a = guard.acquire()
    b = guard.acquire()  # one in flight before it: not above 1
    assert refusal(guard) == "thread"
    a.release()
    assert refusal(guard) is None
    b.release()


def test_the_rt_threshold(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, avg_rt=0.01)
    with guard.acquire():
        clock.advance(0.01)
    assert refusal(guard) is None  # 10 ms: not above 10 ms
    with guard.acquire():
        clock.advance(0.05)
    assert refusal(guard) == "rt"  # (10 + 50) / 2 ms


def test_the_load_threshold_with_its_bbr_check(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, highest_system_load=1.0)
    load.set_load_average(5.0)
    # No completions: max success QPS 2 x min RT 5000 ms / 1000 = 10 in
    # flight are within what the service completes.
    held = [guard.acquire() for _ in range(11)]
    assert refusal(guard) == "load"
    load.set_load_average(1.0)
    assert refusal(guard) is None
    del held


def test_the_cpu_threshold(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, highest_cpu_usage=0.5)
    load.set_cpu_usage(0.5)
    assert refusal(guard) is None
    load.set_cpu_usage(0.6)
    assert refusal(guard) == "cpu"
    assert guard.try_acquire() is None


def test_system_stats(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, qps=3)
    empty = guard.stats()
    assert isinstance(empty, SystemStats)
    assert (empty.pass_qps, empty.in_flight, empty.avg_rt, empty.min_rt) == (0.0, 0, 0.0, 5.0)
    a = guard.acquire()
    b = guard.acquire(2)
    assert isinstance(a, SystemPermit)
    assert guard.try_acquire() is None  # 3 admitted + 1 > 3
    clock.advance(0.02)
    a.release()
    stats = guard.stats()
    assert stats.pass_qps == 3.0
    assert stats.block_qps == 1.0
    assert stats.success_qps == 1.0
    assert stats.in_flight == 1  # requests, whatever their count
    assert stats.avg_rt == 0.02
    assert stats.min_rt == 0.02
    assert stats.max_success_qps == 2.0
    assert repr(stats) == (
        "SystemStats(pass_qps=3.0, block_qps=1.0, success_qps=1.0, in_flight=1, "
        "avg_rt=0.02, min_rt=0.02, max_success_qps=2.0)"
    )
    b.release()
    b.release()
    assert guard.stats().in_flight == 0


def test_system_permits_are_context_managers(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, max_thread=5)
    with guard.acquire() as permit:
        assert guard.stats().in_flight == 1
        assert permit.decision.allowed
    assert permit.released
    assert guard.stats().in_flight == 0

    async def request() -> tuple[SystemPermit, int]:
        async with guard.acquire(3) as permit:
            return permit, guard.stats().in_flight

    held, in_flight = asyncio.run(request())
    assert in_flight == 1
    assert held.released
    assert guard.stats().in_flight == 0


def test_set_rule_and_rule(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, max_thread=1, highest_cpu_usage=0.9)
    assert guard.rule == {
        "qps": None,
        "max_thread": 1,
        "avg_rt": None,
        "highest_system_load": None,
        "highest_cpu_usage": 0.9,
    }
    held = [guard.acquire(), guard.acquire()]
    assert refusal(guard) == "thread"
    guard.set_rule(qps=100, avg_rt=timedelta(milliseconds=250), highest_system_load=4)
    assert guard.rule == {
        "qps": 100.0,
        "max_thread": None,
        "avg_rt": 0.25,
        "highest_system_load": 4.0,
        "highest_cpu_usage": None,
    }
    assert refusal(guard) is None  # the statistics stay, the thread rule went
    assert guard.stats().in_flight == 2
    with pytest.raises(InvalidArgumentError) as bad:
        guard.set_rule(qps=1, highest_cpu_usage=1.5)
    assert bad.value.argument == "highest_cpu_usage"
    assert guard.rule["qps"] == 100.0  # unchanged
    assert repr(guard) == (
        "SystemGuard(qps=100.0, avg_rt=0.25, highest_system_load=4.0, "
        "load=ManualLoad(cpu_usage=None, load_average=None), clock=ManualClock(now=0.0))"
    )
    del held


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"window": 0}, "window"),
        ({"window": -1.0}, "window"),
        ({"window": math.nan}, "window"),
        ({"buckets": 0}, "buckets"),
        ({"buckets": 129}, "buckets"),
        ({"buckets": 2**40}, "buckets"),
        ({"buckets": -1}, "buckets"),
        ({"window": 0.00001, "buckets": 11}, "buckets"),
        ({"cpu_threshold": 1.5}, "cpu_threshold"),
        ({"cpu_threshold": -0.1}, "cpu_threshold"),
        ({"cpu_threshold": math.nan}, "cpu_threshold"),
        ({"cool_down": -1}, "cool_down"),
        ({"cool_down": math.inf}, "cool_down"),
    ],
)
def test_bad_bbr_arguments(kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        Bbr(load=ManualLoad(), **kwargs)
    assert isinstance(error.value, ValueError)
    assert error.value.argument == argument
    assert f"invalid argument {argument} = " in str(error.value)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"window": "10"}, "window"),
        ({"buckets": 1.5}, "buckets"),
        ({"buckets": True}, "buckets"),
        ({"cpu_threshold": "high"}, "cpu_threshold"),
        ({"cool_down": [1]}, "cool_down"),
        ({"load": 0.5}, "load"),
        ({"clock": object()}, "clock"),
    ],
)
def test_wrong_bbr_argument_types(kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(ArgumentTypeError) as error:
        Bbr(**kwargs)
    assert isinstance(error.value, TypeError)
    assert error.value.argument == argument


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"qps": -1}, "qps"),
        ({"qps": math.inf}, "qps"),
        ({"max_thread": -1}, "max_thread"),
        ({"max_thread": 2**64}, "max_thread"),
        ({"avg_rt": -0.001}, "avg_rt"),
        ({"avg_rt": math.nan}, "avg_rt"),
        ({"highest_system_load": -1}, "highest_system_load"),
        ({"highest_system_load": math.nan}, "highest_system_load"),
        ({"highest_cpu_usage": 1.01}, "highest_cpu_usage"),
    ],
)
def test_bad_system_rule_arguments(kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        SystemGuard(load=ManualLoad(), **kwargs)
    assert error.value.argument == argument
    guard = SystemGuard(load=ManualLoad())
    with pytest.raises(InvalidArgumentError) as error:
        guard.set_rule(**kwargs)
    assert error.value.argument == argument


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"qps": "1"}, "qps"),
        ({"max_thread": 1.0}, "max_thread"),
        ({"avg_rt": "1s"}, "avg_rt"),
        ({"highest_system_load": False}, "highest_system_load"),
        ({"highest_cpu_usage": "0.5"}, "highest_cpu_usage"),
        ({"load": ManualClock()}, "load"),
        ({"clock": ManualLoad()}, "clock"),
    ],
)
def test_wrong_system_rule_types(kwargs: dict[str, Any], argument: str) -> None:
    with pytest.raises(ArgumentTypeError) as error:
        SystemGuard(**kwargs)
    assert error.value.argument == argument


def test_bad_counts(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load)
    with pytest.raises(InvalidArgumentError) as bad:
        guard.acquire(-1)
    assert bad.value.argument == "count"
    with pytest.raises(ArgumentTypeError) as wrong:
        guard.try_acquire(1.0)  # type: ignore[arg-type]
    assert wrong.value.argument == "count"
    assert guard.stats().in_flight == 0


def test_system_guard_limited_calls_hold_a_permit_of_their_count(
    clock: ManualClock, load: ManualLoad
) -> None:
    guard = guard_on(clock, load, qps=4)
    seen: list[tuple[int, float]] = []

    @guard.limited(count=2)
    def work(fail: bool = False) -> str:
        """Work."""
        stats = guard.stats()
        seen.append((stats.in_flight, stats.pass_qps))
        if fail:
            raise ValueError("boom")
        return "done"

    assert work() == "done"
    assert seen == [(1, 2.0)]
    assert guard.stats().in_flight == 0
    with pytest.raises(ValueError, match="boom") as failed:
        work(fail=True)
    assert seen == [(1, 2.0), (1, 4.0)]
    assert failed.value.__traceback__ is not None  # the call's frame is kept
    assert guard.stats().in_flight == 0
    assert work.__doc__ == "Work."

    # Refused as acquire refuses: the same exception, threshold and all.
    with pytest.raises(RateLimitExceeded) as by_acquire:
        guard.acquire(2)
    with pytest.raises(RateLimitExceeded) as refused:
        work()
    assert len(seen) == 2  # not called
    assert refused.value.threshold == "qps"
    assert str(refused.value) == str(by_acquire.value)
    assert refused.value.decision == by_acquire.value.decision
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    assert guard.stats().block_qps == 4.0  # two refusals of 2
    assert guard.stats().in_flight == 0


def test_system_guard_limited_async_calls(clock: ManualClock, load: ManualLoad) -> None:
    guard = guard_on(clock, load, highest_cpu_usage=0.5)
    calls = 0

    @guard.limited
    async def work(fail: bool) -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        if fail:
            raise KeyError("boom")
        return guard.stats().in_flight

    assert inspect.iscoroutinefunction(work)
    assert asyncio.run(work(False)) == 1
    assert guard.stats().in_flight == 0
    with pytest.raises(KeyError) as failed:
        asyncio.run(work(True))
    assert failed.value.__traceback__ is not None  # the call's frame is kept
    assert guard.stats().in_flight == 0

    load.set_cpu_usage(0.6)
    with pytest.raises(RateLimitExceeded) as refused:
        asyncio.run(work(False))
    assert calls == 2
    assert refused.value.threshold == "cpu"
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed
    assert guard.stats().pass_qps == 2.0


def test_system_guard_limited_checks_its_count_when_decorating(
    clock: ManualClock, load: ManualLoad
) -> None:
    guard = guard_on(clock, load, qps=1)
    with pytest.raises(InvalidArgumentError) as bad:
        guard.limited(count=-1)
    assert bad.value.argument == "count"
    with pytest.raises(ArgumentTypeError) as wrong:
        guard.limited(count=1.0)  # type: ignore[call-overload]
    assert wrong.value.argument == "count"
    with pytest.raises(ArgumentTypeError) as first:
        guard.limited(2)  # type: ignore[call-overload]
    assert first.value.argument == "func"
    # Checking took nothing from this guard.
    assert guard.stats().pass_qps == 0.0
    assert guard.try_acquire() is not None


def test_manual_load(load: ManualLoad) -> None:
    assert (load.cpu_usage, load.load_average) == (None, None)
    load.set_cpu_usage(0.85)
    load.set_load_average(3)
    assert (load.cpu_usage, load.load_average) == (0.85, 3.0)
    assert repr(load) == "ManualLoad(cpu_usage=0.85, load_average=3.0)"
    load.clear()
    assert (load.cpu_usage, load.load_average) == (None, None)
    assert ManualLoad(0.5, 1.5).cpu_usage == 0.5
    assert ManualLoad(load_average=2).load_average == 2.0


@pytest.mark.parametrize(
    ("setter", "value", "argument"),
    [
        ("set_cpu_usage", 1.5, "cpu_usage"),
        ("set_cpu_usage", -0.1, "cpu_usage"),
        ("set_cpu_usage", math.nan, "cpu_usage"),
        ("set_load_average", -1, "load_average"),
        ("set_load_average", math.inf, "load_average"),
    ],
)
def test_bad_manual_load_values(setter: str, value: float, argument: str) -> None:
    load = ManualLoad(0.5, 1.0)
    with pytest.raises(InvalidArgumentError) as error:
        getattr(load, setter)(value)
    assert error.value.argument == argument
    assert (load.cpu_usage, load.load_average) == (0.5, 1.0)  # unchanged
    with pytest.raises(InvalidArgumentError) as error:
        ManualLoad(**{argument: value})
    assert error.value.argument == argument


def test_wrong_manual_load_types() -> None:
    with pytest.raises(ArgumentTypeError) as error:
        ManualLoad(cpu_usage="high")  # type: ignore[arg-type]
    assert error.value.argument == "cpu_usage"
    with pytest.raises(ArgumentTypeError) as error:
        ManualLoad().set_load_average(True)
    assert error.value.argument == "load_average"
