"""Sentinel's flow rule, ``FlowController`` with a ``FlowRule``, on a
``ManualClock``: the waits ``entry`` sleeps, the permits (context managers,
sync and async, ended once, ended when collected), the rule's value and its
run-time change, the statistics, and the errors of every argument."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest

from ratekeeper import (
    ArgumentTypeError,
    FlowController,
    FlowEntry,
    FlowPermit,
    FlowRule,
    FlowStats,
    InvalidArgumentError,
    ManualClock,
    RateLimitExceeded,
)


def test_the_rate_limiter_spaces_entries_by_their_cost() -> None:
    # The example: 10 per second, five permits then one wait 0 and
    # 100 ms; the second entry sleeps its turn on the clock.
    clock = ManualClock()
    flow = FlowController(
        FlowRule(10, control_behavior="rate_limiter", max_queueing_time_ms=500), clock=clock
    )
    first = flow.entry(5)
    second = flow.entry(1)
    assert (first.decision.wait_micros, second.decision.wait_micros) == (0, 100_000)
    assert clock.now_micros == 100_000
    assert isinstance(first, FlowEntry)
    # check does not wait: five more fill the 500 ms queue, the next is
    # refused with the time its turn would come.
    waits = [flow.check()[0].wait_micros for _ in range(5)]
    assert waits == [100_000, 200_000, 300_000, 400_000, 500_000]
    decision, permit = flow.check()
    assert (decision.allowed, permit, clock.now_micros) == (False, None, 100_000)
    assert flow.try_entry() is None
    with pytest.raises(RateLimitExceeded) as refused:
        flow.entry()
    assert refused.value.decision is not None
    assert not refused.value.decision.allowed


def test_a_prioritized_entry_waits_for_the_window_it_occupies() -> None:
    clock = ManualClock()
    flow = FlowController(FlowRule(2), clock=clock)
    with flow.entry(2):
        pass
    clock.advance(0.6)
    assert flow.try_entry() is None
    entry = flow.entry(1, prioritized=True)
    assert entry.decision.wait == 0.4
    assert clock.now_micros == 1_000_000
    entry.exit()
    assert flow.stats().pass_qps == 1.0


def test_thread_grade_entries_end_once_and_when_collected() -> None:
    clock = ManualClock()
    flow = FlowController(FlowRule(1, grade="thread"), clock=clock)
    entry = flow.entry()
    with pytest.raises(RateLimitExceeded):
        flow.entry()
    assert flow.stats().in_flight == 1
    clock.advance(0.03)
    with entry:
        pass
    assert entry.released
    entry.exit()  # a second end does nothing
    stats = flow.stats()
    assert (stats.in_flight, stats.success_qps, stats.avg_rt) == (0, 1.0, 0.03)
    # A permit nobody ends leaves flight when it is collected.
    decision, permit = flow.check()
    assert decision.allowed
    assert isinstance(permit, FlowPermit)
    assert flow.check()[1] is None
    del permit
    gc.collect()
    assert flow.stats().in_flight == 0
    _, permit = flow.check()
    assert permit is not None
    flow.release(permit)
    assert permit.released
    assert flow.stats().in_flight == 0


def test_entry_async_moves_a_manual_clock_and_ends_on_exit() -> None:
    clock = ManualClock()
    flow = FlowController(
        FlowRule(10, control_behavior="rate_limiter", max_queueing_time_ms=500), clock=clock
    )

    async def main() -> tuple[int, int]:
        async with await flow.entry_async(5) as first, await flow.entry_async() as second:
            assert flow.stats().in_flight == 2
            return first.decision.wait_micros, second.decision.wait_micros

    assert asyncio.run(main()) == (0, 100_000)
    assert clock.now_micros == 100_000
    assert flow.stats().in_flight == 0


def test_entry_sleeps_on_the_real_clock() -> None:
    # 5 per second: the second entry waits the rest of the first's 200 ms.
    flow = FlowController(FlowRule(5, control_behavior="rate_limiter"))
    flow.entry().exit()
    started = time.monotonic()
    second = flow.entry()
    second.exit()
    assert 0 < second.decision.wait <= 0.2
    assert time.monotonic() - started >= second.decision.wait - 0.001


def test_rules_are_values_and_change_at_run_time() -> None:
    rule = FlowRule(5)
    assert (rule.count, rule.grade, rule.control_behavior) == (5.0, "qps", "default")
    assert (rule.warm_up_period_sec, rule.cold_factor, rule.max_queueing_time_ms) == (10, 3, 500)
    assert rule == FlowRule(5.0, grade="qps")
    assert hash(rule) == hash(FlowRule(5.0))
    assert rule != FlowRule(5, control_behavior="warm_up")
    assert repr(FlowRule(2.5, grade="thread")) == (
        "FlowRule(2.5, grade='thread', control_behavior='default', warm_up_period_sec=10, "
        "cold_factor=3, max_queueing_time_ms=500)"
    )
    both = FlowRule(
        20,
        control_behavior="warm_up_rate_limiter",
        warm_up_period_sec=3,
        cold_factor=4,
        max_queueing_time_ms=300,
    )
    clock = ManualClock()
    flow = FlowController(FlowRule(1), sample_count=4, interval_ms=2000, clock=clock)
    assert (flow.sample_count, flow.interval_ms, flow.clock) == (4, 2000, clock)
    # 1 per second over an interval of two seconds: two passes.
    assert [flow.check()[0].allowed for _ in range(3)] == [True, True, False]
    flow.set_rule(FlowRule(2))
    assert flow.rule == FlowRule(2)
    # The statistics stayed: two passes of four.
    assert [flow.check()[0].allowed for _ in range(3)] == [True, True, False]
    flow.add_pass(3)
    stats = flow.stats()
    assert isinstance(stats, FlowStats)
    assert (stats.pass_qps, stats.block_qps) == (3.5, 1.0)  # 7 and 2 over two seconds
    flow.set_rule(both)
    assert flow.rule == both
    with pytest.raises(InvalidArgumentError) as bad:
        flow.set_rule(FlowRule(1, control_behavior="rate_limiter", max_queueing_time_ms=0))
    assert bad.value.argument == "max_queueing_time_ms"
    assert flow.rule == both
    assert "FlowController(FlowRule(20.0" in repr(flow)


@pytest.mark.parametrize(
    ("make", "error", "argument"),
    [
        (lambda: FlowRule(-1), InvalidArgumentError, "count"),
        (lambda: FlowRule(float("inf")), InvalidArgumentError, "count"),
        (lambda: FlowRule("1"), ArgumentTypeError, "count"),  # type: ignore[arg-type]
        (lambda: FlowRule(1, grade="rt"), InvalidArgumentError, "grade"),  # type: ignore[arg-type]
        (lambda: FlowRule(1, grade=1), ArgumentTypeError, "grade"),  # type: ignore[arg-type]
        (lambda: FlowRule(1, control_behavior="warmUp"), InvalidArgumentError, "control_behavior"),  # type: ignore[arg-type]
        (
            lambda: FlowRule(1, control_behavior="warm_up", warm_up_period_sec=0),
            InvalidArgumentError,
            "warm_up_period_sec",
        ),
        (
            lambda: FlowRule(1, control_behavior="warm_up", warm_up_period_sec=-1),
            InvalidArgumentError,
            "warm_up_period_sec",
        ),
        (
            lambda: FlowRule(1, control_behavior="warm_up", cold_factor=1),
            InvalidArgumentError,
            "cold_factor",
        ),
        (
            lambda: FlowRule(1, control_behavior="rate_limiter", max_queueing_time_ms=2**31),
            InvalidArgumentError,
            "max_queueing_time_ms",
        ),
        (lambda: FlowRule(1, cold_factor=1.5), ArgumentTypeError, "cold_factor"),  # type: ignore[arg-type]
        (lambda: FlowController(FlowRule(1), sample_count=3), InvalidArgumentError, "sample_count"),
        (lambda: FlowController(FlowRule(1), interval_ms=0), InvalidArgumentError, "interval_ms"),
        (
            lambda: FlowController(FlowRule(1), interval_ms=2**32),
            InvalidArgumentError,
            "interval_ms",
        ),
        (lambda: FlowController(1.0), ArgumentTypeError, "rule"),  # type: ignore[arg-type]
        (lambda: FlowController(FlowRule(1)).check(2**31), InvalidArgumentError, "acquire_count"),
        (lambda: FlowController(FlowRule(1)).check(-1), InvalidArgumentError, "acquire_count"),
        (lambda: FlowController(FlowRule(1)).entry(1, 1), ArgumentTypeError, "prioritized"),  # type: ignore[arg-type]
        (lambda: FlowController(FlowRule(1)).add_pass(-1), InvalidArgumentError, "count"),
    ],
)
def test_bad_arguments_are_typed_errors_naming_them(
    make: object, error: type[Exception], argument: str
) -> None:
    with pytest.raises(error) as raised:
        make()  # type: ignore[operator]
    assert getattr(raised.value, "argument", None) == argument
