"""Each admission-style algorithm's semantics through the Python API, on a
ManualClock: what it admits, what it refuses, and the Decision's numbers."""

from __future__ import annotations

import inspect
import math
import threading
from datetime import timedelta

import pytest

import ratekeeper
from ratekeeper import (
    MAX_SLIDING_LOG_LIMIT,
    ArgumentTypeError,
    CompositeLimiter,
    Decision,
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    LeakyBucketMeter,
    LeakyBucketQueue,
    Limiter,
    ManualClock,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
)

NEVER = 2**63 - 1
ALL = [
    TokenBucket,
    Gcra,
    LeakyBucketMeter,
    LeakyBucketQueue,
    FixedWindow,
    SlidingWindow,
    SlidingLog,
    SlidingWindowCounter,
    CompositeLimiter,
]


def admitted(limiter: Limiter, n: int) -> list[bool]:
    return [limiter.check().allowed for _ in range(n)]


# --- TokenBucket (Go's x/time/rate) ------------------------------------------


def test_token_bucket_check_refuses_without_taking(clock: ManualClock) -> None:
    bucket = TokenBucket(10.0, 2, clock=clock)
    assert bucket.check(2) == Decision(True, 2, 0, 0, 200_000, 0, 200_000)
    refused = bucket.check(1)
    assert refused == Decision(False, 2, 0, 100_000, 200_000, 0, 200_000)
    assert refused.retry_after == 0.1
    assert bucket.tokens == 0.0  # the refusal took nothing
    clock.advance(0.1)
    assert bucket.allow()
    assert not bucket.allow()


def test_token_bucket_above_the_burst_is_never(clock: ManualClock) -> None:
    bucket = TokenBucket(10.0, 2, clock=clock)
    d = bucket.check(3)
    assert not d.allowed
    assert d.is_never
    assert d.retry_after == math.inf
    assert bucket.tokens == 2.0


def test_token_bucket_peek_and_cost_zero_take_nothing(clock: ManualClock) -> None:
    bucket = TokenBucket(1.0, 3, clock=clock)
    for _ in range(3):
        assert bucket.peek(2).remaining == 1
        assert bucket.check(0) == Decision(True, 3, 3, 0, 0, 0, 3_000_000)
    assert bucket.tokens == 3.0


def test_token_bucket_infinite_and_zero_rates(clock: ManualClock) -> None:
    unlimited = TokenBucket(math.inf, 0, clock=clock)
    assert all(unlimited.allow(1_000_000) for _ in range(5))
    once = TokenBucket(0.0, 2, clock=clock)
    assert admitted(once, 3) == [True, True, False]
    clock.advance(1e6)
    assert not once.allow()  # a zero rate never refills


def test_token_bucket_reserve_and_cancel(clock: ManualClock) -> None:
    bucket = TokenBucket(10.0, 1, clock=clock)
    assert bucket.check().allowed
    r = bucket.reserve()
    assert r.ok
    assert r.tokens == 1
    assert (r.delay, r.delay_micros) == (0.1, 100_000)
    clock.advance(timedelta(milliseconds=40))
    assert r.delay_micros == 60_000
    r.cancel()
    assert r.tokens == 0
    assert bucket.tokens == pytest.approx(0.4)
    before = bucket.tokens
    r.cancel()  # a second cancel gives nothing back
    assert bucket.tokens == before
    refused = bucket.reserve(2)  # above the burst
    assert not refused.ok
    assert refused.delay == math.inf
    assert refused.delay_micros == NEVER
    assert "ok=False" in repr(refused)


def test_token_bucket_wait_moves_a_manual_clock(clock: ManualClock) -> None:
    bucket = TokenBucket(4.0, 1, clock=clock)
    assert bucket.wait().wait == 0.0
    assert not bucket.wait(timeout=0.249)  # refused: the token is 250 ms away
    assert clock.now == 0.0
    d = bucket.wait(timeout=timedelta(milliseconds=250))
    assert d.allowed
    assert d.wait_micros == 250_000
    assert clock.now_micros == 250_000
    d = bucket.wait()  # no timeout: as long as it takes
    assert (d.allowed, d.wait) == (True, 0.25)
    assert not bucket.wait(2)  # above the burst: no wait can help
    assert clock.now == 0.5


def test_token_bucket_rate_and_burst_can_change(clock: ManualClock) -> None:
    bucket = TokenBucket(1.0, 5, clock=clock)
    assert bucket.check(5).allowed
    clock.advance(2)
    bucket.rate = 10
    bucket.burst = 3
    assert (bucket.rate, bucket.burst, bucket.tokens) == (10.0, 3, 2.0)
    assert isinstance(bucket.rate, float)
    assert repr(bucket) == "TokenBucket(rate=10.0, burst=3, clock=ManualClock(now=2.0))"
    with pytest.raises(InvalidArgumentError):
        bucket.rate = -1.0
    assert bucket.rate == 10.0


# --- GCRA (redis-cell) -------------------------------------------------------


def test_gcra_is_redis_cells_throttle(clock: ManualClock) -> None:
    # CL.THROTTLE key 4 1 1: one per second, 5 at once.
    gcra = Gcra(4, 1, 1.0, clock=clock)
    assert gcra.limit == 5
    assert admitted(gcra, 5) == [True] * 5
    d = gcra.check()
    assert (d.allowed, d.limit, d.remaining, d.retry_after, d.reset_after) == (
        False,
        5,
        0,
        1.0,
        5.0,
    )
    assert gcra.check(6).is_never
    clock.advance(1)
    assert gcra.check().allowed


def test_gcra_period_in_seconds_or_timedelta_is_the_same() -> None:
    def run(period: float | timedelta) -> list[Decision]:
        gcra = Gcra(2, 3, period, clock=ManualClock())
        return [gcra.check() for _ in range(4)]

    assert run(60) == run(timedelta(minutes=1)) == run(60.0)


# --- the leaky buckets -------------------------------------------------------


def test_leaky_bucket_meter_overflow_is_refused(clock: ManualClock) -> None:
    meter = LeakyBucketMeter(3, 1, 0.1, clock=clock)
    assert meter.check(3).allowed
    assert meter.level == 3
    d = meter.check()
    assert (d.allowed, d.retry_after_micros) == (False, 100_000)
    assert meter.level == 3
    clock.advance(0.1)
    assert meter.level == 2
    assert meter.check().allowed


def test_leaky_bucket_queue_gives_slots(clock: ManualClock) -> None:
    queue = LeakyBucketQueue(2, 0.1, clock=clock)
    decisions = [queue.check() for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.wait_micros for d in decisions[:3]] == [0, 100_000, 200_000]
    assert decisions[0].limit == 3  # capacity + 1
    assert clock.now == 0.0  # check never sleeps


def test_leaky_bucket_queue_acquire_sleeps_until_the_slot(clock: ManualClock) -> None:
    queue = LeakyBucketQueue(1, timedelta(milliseconds=100), clock=clock)
    assert queue.acquire().wait == 0.0
    d = queue.acquire()
    assert (d.allowed, d.wait) == (True, 0.1)
    assert clock.now == 0.1
    assert queue.acquire(3).is_never  # more than the queue holds
    assert clock.now == 0.1


def test_leaky_bucket_queue_saves_slack_like_uber(clock: ManualClock) -> None:
    # uber-go/ratelimit's New(10, WithSlack(2)): a queue that never refuses.
    queue = LeakyBucketQueue(2**63 - 1, 0.1, slack=2, clock=clock)
    assert queue.check().wait_micros == 0  # nothing saved before the first
    assert queue.check().wait_micros == 100_000
    clock.advance(1.0)  # idle: two unused slots saved, not ten
    assert [queue.check().wait_micros for _ in range(4)] == [0, 0, 0, 100_000]
    assert repr(queue).startswith(
        "LeakyBucketQueue(capacity=9223372036854775807, interval=0.1, slack=2,"
    )


def test_parameters_with_a_registry_default_may_be_left_out(clock: ManualClock) -> None:
    queue = LeakyBucketQueue(2, 0.1, clock=clock)  # slack 0: nothing saved
    assert queue.check().allowed
    clock.advance(1.0)
    assert [queue.check().wait_micros for _ in range(2)] == [0, 100_000]
    assert "slack=0" in repr(queue)
    assert "sub_windows=10" in repr(SlidingWindow(5, 1.0, clock=clock))


def test_a_queue_of_capacity_zero_admits_only_free_slots(clock: ManualClock) -> None:
    queue = LeakyBucketQueue(0, 1.0, clock=clock)
    assert admitted(queue, 2) == [True, False]


# --- the windows -------------------------------------------------------------


def test_fixed_window_resets_at_the_boundary(clock: ManualClock) -> None:
    window = FixedWindow(3, 10.0, clock=clock)
    clock.advance(9.5)
    assert admitted(window, 4) == [True, True, True, False]
    refused = window.peek()
    assert (refused.retry_after, refused.reset_after) == (0.5, 0.5)
    clock.advance(0.5)
    # The worst case of a fixed window: 2 x limit across a boundary.
    assert admitted(window, 4) == [True, True, True, False]


def test_sliding_window_counts_sub_windows(clock: ManualClock) -> None:
    window = SlidingWindow(4, 1.0, 4, clock=clock)  # four sub-windows of 250 ms
    assert window.check(2).allowed
    clock.advance(0.5)
    assert window.check(2).allowed
    assert not window.check().allowed
    clock.advance(0.5)  # the first two units slid out
    assert window.check(2).allowed
    assert not window.check().allowed


def test_sliding_log_is_exact(clock: ManualClock) -> None:
    log = SlidingLog(2, 1.0, clock=clock)
    assert log.check().allowed
    clock.advance(0.6)
    assert log.check().allowed
    refused = log.check()
    assert (refused.allowed, refused.retry_after) == (False, 0.4)
    clock.advance(0.4)
    assert log.check().allowed
    assert not log.check().allowed
    assert MAX_SLIDING_LOG_LIMIT == 1 << 20
    assert SlidingLog(MAX_SLIDING_LOG_LIMIT, 1.0).check().remaining == MAX_SLIDING_LOG_LIMIT - 1


def test_sliding_window_counter_weights_the_previous_window(clock: ManualClock) -> None:
    counter = SlidingWindowCounter(10, 1.0, clock=clock)
    assert counter.check(10).allowed
    clock.advance(1.5)  # half of the previous window still counts: 5
    assert counter.peek(0).remaining == 5
    assert counter.check(5).allowed
    assert not counter.check().allowed


@pytest.mark.parametrize("window_class", [FixedWindow, SlidingLog, SlidingWindowCounter])
def test_a_windows_limit_changes_keeping_its_count(
    clock: ManualClock, window_class: type[FixedWindow | SlidingLog | SlidingWindowCounter]
) -> None:
    window = window_class(4, 1.0, clock=clock)
    assert window.check(3).allowed
    window.limit = 2  # under the 3 counted: refused, a free look still admitted
    refused = window.check()
    assert (refused.allowed, refused.limit, refused.remaining) == (False, 2, 0)
    assert window.peek(0).allowed
    window.limit = 5  # the difference at once
    assert window.check(2).allowed
    assert not window.check().allowed
    assert window.limit == 5
    assert repr(window).startswith(f"{window_class.__name__}(limit=5,")


def test_a_sliding_windows_limit_changes_keeping_its_sub_windows(clock: ManualClock) -> None:
    window = SlidingWindow(4, 1.0, 4, clock=clock)
    assert window.check(3).allowed
    clock.advance(0.5)
    window.limit = 2
    assert window.check().retry_after == 0.5  # when the first quarter slides out
    clock.advance(0.5)
    assert window.check(2).allowed
    assert window.limit == 2


def test_an_invalid_window_limit_changes_nothing(clock: ManualClock) -> None:
    log = SlidingLog(2, 1.0, clock=clock)
    sliding = SlidingWindow(2, 1.0, 2, clock=clock)
    cases: list[tuple[SlidingLog | SlidingWindow, int]] = [
        (log, 0),
        (log, -1),
        (log, MAX_SLIDING_LOG_LIMIT + 1),
        (sliding, 2**32),
    ]
    for window, bad in cases:
        with pytest.raises(InvalidArgumentError) as raised:
            window.limit = bad
        assert raised.value.argument == "limit"
        assert window.limit == 2
    with pytest.raises(ArgumentTypeError):
        log.limit = 1.5  # type: ignore[assignment]
    assert log.check(2).allowed
    assert not log.check().allowed


def test_a_window_template_keeps_its_current_limit(clock: ManualClock) -> None:
    window = FixedWindow(1, 1.0)
    window.limit = 3
    limiter = CompositeLimiter([window], clock=clock)
    assert limiter.check(3).allowed


# --- CompositeLimiter --------------------------------------------------------


def test_composite_is_all_or_nothing(clock: ManualClock) -> None:
    per_second = FixedWindow(2, 1.0)
    per_ten = SlidingLog(3, 10.0)
    limiter = CompositeLimiter([per_second, per_ten], clock=clock)
    assert limiter.check(2).allowed
    refused, parts = limiter.check_each()
    assert not refused.allowed
    assert [p.allowed for p in parts] == [False, True]
    assert parts[1].remaining == 1  # nothing taken from the part that admitted
    clock.advance(1)
    assert limiter.check().allowed
    refused, parts = limiter.check_each()
    assert (refused.allowed, refused.limit, refused.retry_after) == (False, 3, 9.0)
    assert limiter.peek() == refused
    # The templates were not touched: the composite has parts of its own.
    assert per_second.peek(0).remaining == 2
    assert per_ten.peek(0).remaining == 3


def test_composite_headers_per_part(clock: ManualClock) -> None:
    limiter = CompositeLimiter([Gcra(9, 10, 1.0), FixedWindow(1000, 3600)], clock=clock)
    _, (second, hour) = limiter.check_each()
    header = ratekeeper.ratelimit_header({"per-second": second, "per-hour": hour})
    assert header == '"per-second";r=9;t=1, "per-hour";r=999;t=3600'


def test_composite_takes_its_templates_clock() -> None:
    clock = ManualClock()
    limiter = CompositeLimiter([FixedWindow(1, 1.0, clock=clock), Gcra(0, 1, 1.0, clock=clock)])
    assert limiter.clock is clock
    assert limiter.check().allowed
    assert not limiter.check().allowed
    clock.advance(1)
    assert limiter.check().allowed
    real = CompositeLimiter([FixedWindow(1, 1.0)])
    assert real.clock is None


def test_composite_of_templates_on_different_clocks_needs_a_clock() -> None:
    a, b = FixedWindow(1, 1.0, clock=ManualClock()), FixedWindow(1, 1.0)
    with pytest.raises(InvalidArgumentError) as raised:
        CompositeLimiter([a, b])
    assert raised.value.argument == "limits"
    clock = ManualClock()
    assert CompositeLimiter([a, b], clock=clock).clock is clock


def test_composite_parts_keep_a_token_buckets_current_parameters(clock: ManualClock) -> None:
    bucket = TokenBucket(1.0, 1)
    bucket.burst = 3
    limiter = CompositeLimiter([bucket], clock=clock)
    assert limiter.check(3).allowed
    assert repr(limiter) == (
        "CompositeLimiter([TokenBucket(rate=1.0, burst=3)], clock=ManualClock(now=0.0))"
    )


# --- what every limiter shares -----------------------------------------------


def every_limiter(clock: ManualClock | None) -> list[Limiter]:
    return [
        TokenBucket(1.0, 2, clock=clock),
        Gcra(1, 1, 1.0, clock=clock),
        LeakyBucketMeter(2, 1, 1.0, clock=clock),
        LeakyBucketQueue(1, 1.0, clock=clock),
        FixedWindow(2, 1.0, clock=clock),
        SlidingWindow(2, 1.0, 2, clock=clock),
        SlidingLog(2, 1.0, clock=clock),
        SlidingWindowCounter(2, 1.0, clock=clock),
        CompositeLimiter([FixedWindow(2, 1.0), Gcra(5, 1, 1.0)], clock=clock),
    ]


def test_every_limiter_admits_two_then_refuses(clock: ManualClock) -> None:
    for limiter in every_limiter(clock):
        assert isinstance(limiter, Limiter)
        assert admitted(limiter, 2) == [True, True], limiter
        refused = limiter.check()
        assert not refused.allowed, limiter
        assert not refused
        assert limiter.peek() == refused, limiter
        assert limiter.allow() is False
        assert limiter.check(1000).is_never, limiter
        assert limiter.clock is clock


def test_every_limiter_has_a_repr_that_rebuilds_it() -> None:
    for limiter in every_limiter(None):
        text = repr(limiter)
        rebuilt = eval(text, vars(ratekeeper))
        assert type(rebuilt) is type(limiter)
        assert repr(rebuilt) == text


def test_the_classes_are_the_packages(clock: ManualClock) -> None:
    for cls in ALL:
        assert cls.__module__ == "ratekeeper"
        assert cls.__doc__
        assert issubclass(cls, Limiter)
        assert cls.__slots__ == ()  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        Limiter()


def test_signatures_show_the_defaults() -> None:
    assert str(inspect.signature(Limiter.check)) == "(self, /, cost=1)"
    assert str(inspect.signature(TokenBucket.wait)) == "(self, /, cost=1, timeout=None)"
    assert str(inspect.signature(Gcra)) == "(max_burst, count_per_period, period, *, clock=None)"


@pytest.mark.parametrize("index", range(9))
def test_a_limiter_is_shared_between_threads(index: int) -> None:
    limiter = every_limiter(ManualClock())[index]
    granted = [0] * 4
    barrier = threading.Barrier(4)

    def take(i: int) -> None:
        barrier.wait()
        for _ in range(500):
            granted[i] += limiter.allow()

    threads = [threading.Thread(target=take, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 2, limiter
