"""Bad arguments to every algorithm: each library argument reachable from
the Python API raises a typed error naming it and the value passed, the
limiter is left unchanged, and no Rust panic (pyo3's PanicException, a
BaseException) ever comes out."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, Callable

import pytest

from ratekeeper import (
    MAX_SLIDING_LOG_LIMIT,
    AimdPolicy,
    ArgumentTypeError,
    Color,
    CompositeLimiter,
    ConcurrencyLimiter,
    FixedWindow,
    Gcra,
    GradientPolicy,
    InvalidArgumentError,
    LeakyBucketMeter,
    LeakyBucketQueue,
    Limiter,
    ManualClock,
    RateLimiter,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    SrTcm,
    TokenBucket,
    TrTcm,
)

I64_MAX = 2**63 - 1


def raised(call: Callable[[], object]) -> BaseException:
    """The exception `call` raised (a BaseException too, so that a
    PanicException would be seen); fails if it raised none."""
    try:
        call()
    except BaseException as e:
        return e
    pytest.fail("no exception raised")


def invalid(call: Callable[[], object], argument: str) -> InvalidArgumentError:
    e = raised(call)
    assert type(e) is InvalidArgumentError, repr(e)
    assert isinstance(e, ValueError)
    assert e.argument == argument, str(e)
    assert str(e).startswith(f"invalid argument {argument} = "), str(e)
    return e


def wrong_type(call: Callable[[], object], argument: str) -> ArgumentTypeError:
    e = raised(call)
    assert type(e) is ArgumentTypeError, repr(e)
    assert isinstance(e, TypeError)
    assert e.argument == argument, str(e)
    assert ", not " in str(e)
    return e


# (how to pass the bad value, the argument the error names, bad values)
Case = tuple[Callable[[Any], object], str, list[Any]]

INVALID: list[Case] = [
    (lambda v: TokenBucket(v, 1), "rate", [-1.0, -1e-300, math.nan, -math.inf]),
    (lambda v: TokenBucket(1.0, v), "burst", [-1, 2**63, 2**64]),
    (lambda v: Gcra(v, 1, 1.0), "max_burst", [-1, I64_MAX, 2**63]),
    (lambda v: Gcra(1, v, 1.0), "count_per_period", [0, -1, 2**63]),
    (lambda v: LeakyBucketMeter(1, v, 1.0), "count_per_period", [0, -5]),
    # The rule of every duration: NaN, infinite or longer than 2**63 - 1 µs
    # is refused, never clamped.
    (
        lambda v: Gcra(1, 1, v),
        "period",
        [0, 0.0, -0.0, 1e-7, -1, math.nan, -math.inf, math.inf, 1e300, 10**400, timedelta.max],
    ),
    (lambda v: LeakyBucketMeter(2, 1, v), "period", [timedelta(0), timedelta(microseconds=-1)]),
    (lambda v: LeakyBucketMeter(v, 1, 1.0), "capacity", [0, -1, 2**63]),
    (lambda v: LeakyBucketQueue(v, 1.0), "capacity", [-1, 2**63]),
    (
        lambda v: LeakyBucketQueue(1, v),
        "interval",
        [0, 5e-7, -2.0, math.nan, -(10**400), math.inf, 10**400],
    ),
    (lambda v: FixedWindow(v, 1.0), "limit", [0, -1]),
    (lambda v: SlidingWindowCounter(v, 1.0), "limit", [0, 2**63]),
    (lambda v: SlidingLog(v, 1.0), "limit", [0, MAX_SLIDING_LOG_LIMIT + 1]),
    (lambda v: SlidingWindow(v, 1.0, 2), "limit", [0, 2**32]),
    (lambda v: ConcurrencyLimiter(v), "limit", [0, -1, 2**63]),
    (
        lambda v: FixedWindow(1, v),
        "window",
        [0, 1e-9, -60.0, math.nan, math.inf, 9_223_372_036_854.776],
    ),
    (
        lambda v: SlidingWindowCounter(1, v),
        "window",
        [timedelta(microseconds=2**63), timedelta.max],
    ),
    (lambda v: SlidingLog(1, v), "window", [timedelta(microseconds=-5)]),
    (lambda v: SlidingWindow(1, 1.0, v), "sub_windows", [0, 17, -1, 2**32, 2**70]),
    (lambda v: SlidingWindow(1, 1e-5, v), "sub_windows", [3]),  # 10 µs in 3
    (lambda v: LeakyBucketQueue(1, 1.0, v), "slack", [-1, 2**63]),
    (lambda v: SrTcm(v, 1, 1), "cir", [0, -1]),
    (lambda v: TrTcm(10, 1, v, 1), "cir", [0]),
    (lambda v: SrTcm(1, v, 0), "cbs", [0, -1]),
    (lambda v: TrTcm(1, 1, 1, v), "cbs", [0]),
    (lambda v: SrTcm(1, 1, v), "ebs", [-1, 2**63]),
    (lambda v: TrTcm(v, 1, 5, 1), "pir", [4, 0, -1]),
    (lambda v: TrTcm(1, v, 1, 1), "pbs", [0, -1]),
    (lambda v: GradientPolicy(initial_limit=v), "initial_limit", [0, 1001, -1]),
    (lambda v: AimdPolicy(initial_limit=v), "initial_limit", [19, 201]),
    (lambda v: GradientPolicy(min_limit=v), "min_limit", [0, -1]),
    (lambda v: AimdPolicy(min_limit=v), "min_limit", [0]),
    (lambda v: GradientPolicy(max_limit=v), "max_limit", [0, 2**63]),
    (lambda v: AimdPolicy(max_limit=v, initial_limit=20), "max_limit", [19]),
    (lambda v: GradientPolicy(smoothing=v), "smoothing", [0.0, -0.1, 1.5, math.nan]),
    (lambda v: GradientPolicy(rtt_tolerance=v), "rtt_tolerance", [0.99, math.inf, math.nan]),
    (lambda v: GradientPolicy(queue_size=v), "queue_size", [1001, -1]),
    (lambda v: GradientPolicy(backoff_ratio=v), "backoff_ratio", [0.49, 1.01, math.nan]),
    (lambda v: AimdPolicy(backoff_ratio=v), "backoff_ratio", [1.0, 0.4]),
    (lambda v: GradientPolicy(probe_interval=v), "probe_interval", [-1, 2**63]),
    (lambda v: AimdPolicy(rtt_timeout=v), "rtt_timeout", [0, 1e-7, -1.0, math.nan, math.inf]),
    (
        lambda v: ConcurrencyLimiter(1).sample(v, 1),
        "rtt",
        [-1e-6, math.nan, -math.inf, math.inf, 1e300],
    ),
    (lambda v: ConcurrencyLimiter(1).sample(0.1, v), "in_flight", [-1, 2**63]),
    (lambda v: SrTcm(1, 1, 1).mark(v), "bytes", [-1, 2**63]),
    (lambda v: TrTcm(1, 1, 1, 1).mark_aware(v, Color.GREEN), "bytes", [-1]),
    (lambda v: CompositeLimiter(v), "limits", [[], ()]),
    (lambda v: TokenBucket(1.0, 1).wait(1, v), "timeout", [math.nan]),
]


@pytest.mark.parametrize(
    ("make", "argument", "bad"),
    [(make, argument, bad) for make, argument, values in INVALID for bad in values],
)
def test_invalid_values(make: Callable[[Any], object], argument: str, bad: Any) -> None:
    e = invalid(lambda: make(bad), argument)
    if argument == "limits":
        assert e.value == 0  # how many limits there were
    elif isinstance(bad, float) and math.isnan(bad):
        assert isinstance(e.value, float)
        assert math.isnan(e.value)
    else:
        assert e.value == bad


DURATION = "9223372036854775807 microseconds (about 292,271 years)"


def test_messages_show_durations_as_passed_and_their_real_bounds() -> None:
    e = invalid(lambda: Gcra(1, 1, 1e-7), "period")
    assert str(e) == f"invalid argument period = 1e-07: must be between 1 and {DURATION}"
    e = invalid(lambda: FixedWindow(1, timedelta(0)), "window")
    assert str(e).startswith(
        "invalid argument window = datetime.timedelta(0): must be between 1 and"
    )
    e = invalid(lambda: FixedWindow(1, math.inf), "window")
    assert str(e) == f"invalid argument window = inf: must be between 1 and {DURATION}"
    e = invalid(lambda: ConcurrencyLimiter(1).sample(math.nan, 1), "rtt")
    assert str(e) == f"invalid argument rtt = NaN: must be between 0 and {DURATION}"
    # Each names the bound of the call that refused it.
    e = invalid(lambda: SlidingLog(MAX_SLIDING_LOG_LIMIT + 1, 1.0), "limit")
    assert str(e) == "invalid argument limit = 1048577: must be between 1 and 1048576"
    e = invalid(lambda: SlidingLog(-1, 1.0), "limit")
    assert str(e) == "invalid argument limit = -1: must be between 1 and 1048576"
    e = invalid(lambda: ConcurrencyLimiter(0), "limit")
    assert str(e) == "invalid argument limit = 0: must be between 1 and 9223372036854775807"
    e = invalid(lambda: SlidingWindow(2**32, 1.0, 2), "limit")
    assert str(e).endswith(": must be between 1 and 4294967295")


WRONG_TYPES: list[Case] = [
    (lambda v: TokenBucket(v, 1), "rate", ["1", True, None, [1.0]]),
    (lambda v: TokenBucket(1.0, v), "burst", [1.0, True, "1", None]),
    (lambda v: Gcra(v, 1, 1.0), "max_burst", [1.5]),
    (lambda v: Gcra(1, v, 1.0), "count_per_period", [False]),
    (lambda v: Gcra(1, 1, v), "period", ["1", True, None, [1]]),
    (lambda v: LeakyBucketMeter(v, 1, 1.0), "capacity", [2.0]),
    (lambda v: LeakyBucketQueue(1, v), "interval", ["0.1"]),
    (lambda v: LeakyBucketQueue(1, 0.1, v), "slack", [1.0, "1", True]),
    (lambda v: FixedWindow(v, 1.0), "limit", [10.0, "10"]),
    (lambda v: FixedWindow(1, v), "window", [b"1"]),
    (lambda v: SlidingWindow(1, 1.0, v), "sub_windows", [2.0]),
    (lambda v: SrTcm(v, 1, 1), "cir", [1.0]),
    (lambda v: TrTcm(1, v, 1, 1), "pbs", [None]),
    (lambda v: ConcurrencyLimiter(v), "limit", [1.5, "10", None, True, object()]),
    (lambda v: GradientPolicy(smoothing=v), "smoothing", ["0.2"]),
    (lambda v: AimdPolicy(max_limit=v), "max_limit", [200.0]),
    (lambda v: AimdPolicy(rtt_timeout=v), "rtt_timeout", ["5"]),
    (lambda v: ConcurrencyLimiter(1).sample(v, 1), "rtt", ["1"]),
    (lambda v: ConcurrencyLimiter(1).sample(0.1, v), "in_flight", [1.0]),
    (lambda v: ConcurrencyLimiter(1).sample(0.1, 1, v), "dropped", [1, "yes"]),
    (lambda v: SrTcm(1, 1, 1).mark(v), "bytes", [1.0, "1"]),
    (lambda v: SrTcm(1, 1, 1).mark_aware(1, v), "color", ["green", 0, None]),
    (lambda v: CompositeLimiter(v), "limits", [None, 5, [5], [RateLimiter(1.0)], [SrTcm(1, 1, 1)]]),
    (lambda v: CompositeLimiter([CompositeLimiter([FixedWindow(1, 1.0)])]), "limits", [0]),
    (lambda v: TokenBucket(1.0, 1).wait(1, v), "timeout", ["1", True]),
]


@pytest.mark.parametrize(
    ("make", "argument", "bad"),
    [(make, argument, bad) for make, argument, values in WRONG_TYPES for bad in values],
)
def test_wrong_types(make: Callable[[Any], object], argument: str, bad: Any) -> None:
    wrong_type(lambda: make(bad), argument)


CLOCK_TAKERS: list[Callable[[Any], object]] = [
    lambda c: TokenBucket(1.0, 1, clock=c),
    lambda c: Gcra(1, 1, 1.0, clock=c),
    lambda c: LeakyBucketMeter(1, 1, 1.0, clock=c),
    lambda c: LeakyBucketQueue(1, 1.0, clock=c),
    lambda c: FixedWindow(1, 1.0, clock=c),
    lambda c: SlidingWindow(1, 1.0, 1, clock=c),
    lambda c: SlidingLog(1, 1.0, clock=c),
    lambda c: SlidingWindowCounter(1, 1.0, clock=c),
    lambda c: CompositeLimiter([FixedWindow(1, 1.0)], clock=c),
    lambda c: SrTcm(1, 1, 1, clock=c),
    lambda c: TrTcm(1, 1, 1, 1, clock=c),
    lambda c: ConcurrencyLimiter(1, clock=c),
]


@pytest.mark.parametrize("make", CLOCK_TAKERS)
@pytest.mark.parametrize("bad", [ManualClock, "manual", 1])
def test_clocks_of_the_wrong_type(make: Callable[[Any], object], bad: Any) -> None:
    wrong_type(lambda: make(bad), "clock")


def limiters(clock: ManualClock) -> list[Limiter]:
    return [
        TokenBucket(1.0, 2, clock=clock),
        Gcra(1, 1, 1.0, clock=clock),
        LeakyBucketMeter(2, 1, 1.0, clock=clock),
        LeakyBucketQueue(1, 1.0, clock=clock),
        FixedWindow(2, 1.0, clock=clock),
        SlidingWindow(2, 1.0, 2, clock=clock),
        SlidingLog(2, 1.0, clock=clock),
        SlidingWindowCounter(2, 1.0, clock=clock),
        CompositeLimiter([FixedWindow(2, 1.0)], clock=clock),
    ]


COST_METHODS: list[Callable[[Any, Any], object]] = [
    lambda lim, c: lim.check(c),
    lambda lim, c: lim.peek(c),
    lambda lim, c: lim.allow(c),
    lambda lim, c: lim.check(cost=c),
]


@pytest.mark.parametrize("method", COST_METHODS)
@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (-1, InvalidArgumentError),
        (-(2**63), InvalidArgumentError),
        (2**63, InvalidArgumentError),
        (10**400, InvalidArgumentError),
        (1.0, ArgumentTypeError),
        (True, ArgumentTypeError),
        ("1", ArgumentTypeError),
        (None, ArgumentTypeError),
    ],
)
def test_costs(method: Callable[[Any, Any], object], bad: Any, kind: type[Exception]) -> None:
    clock = ManualClock()
    for limiter in limiters(clock):
        limiter.check()
        before = limiter.peek(0)
        e = raised(lambda limiter=limiter: method(limiter, bad))  # type: ignore[misc]
        assert type(e) is kind, (limiter, e)
        assert getattr(e, "argument", None) == "cost"
        assert limiter.peek(0) == before, limiter  # nothing taken


EXTRA_COST_METHODS: list[Callable[[Any], object]] = [
    lambda c: TokenBucket(1.0, 1).wait(c),
    lambda c: TokenBucket(1.0, 1).reserve(c),
    lambda c: TokenBucket(1.0, 1)._reserve_within(c),
    lambda c: LeakyBucketQueue(1, 1.0).acquire(c),
    lambda c: LeakyBucketQueue(1, 1.0)._reserve(c),
    lambda c: CompositeLimiter([FixedWindow(1, 1.0)]).check_each(c),
]


@pytest.mark.parametrize("method", EXTRA_COST_METHODS)
def test_costs_of_the_other_methods(method: Callable[[Any], object]) -> None:
    invalid(lambda: method(-1), "cost")
    wrong_type(lambda: method(0.5), "cost")


def test_failed_setters_change_nothing() -> None:
    clock = ManualClock()
    bucket = TokenBucket(2.0, 4, clock=clock)
    bucket.check(3)
    bad_rates: list[Any] = [-1.0, math.nan, "x", None]
    for bad in bad_rates:
        with pytest.raises((InvalidArgumentError, ArgumentTypeError)):
            bucket.rate = bad
    bad_bursts: list[Any] = [-1, 2**63, 1.5]
    for bad in bad_bursts:
        with pytest.raises((InvalidArgumentError, ArgumentTypeError)):
            bucket.burst = bad
    assert (bucket.rate, bucket.burst, bucket.tokens) == (2.0, 4, 1.0)


def test_extremes_that_are_valid_never_panic() -> None:
    clock = ManualClock()
    big = I64_MAX
    made: list[Limiter] = [
        TokenBucket(1e308, big, clock=clock),
        TokenBucket(5e-324, 0, clock=clock),
        TokenBucket(math.inf, big, clock=clock),
        Gcra(big - 1, big, 1e-6, clock=clock),
        Gcra(0, 1, timedelta(microseconds=big), clock=clock),
        LeakyBucketMeter(big, big, timedelta(microseconds=big), clock=clock),
        LeakyBucketQueue(big, 1e-6, clock=clock),
        LeakyBucketQueue(0, 9_223_372_036_854.773, clock=clock),
        FixedWindow(big, timedelta(microseconds=big), clock=clock),
        SlidingWindow(2**32 - 1, 16e-6, 16, clock=clock),
        SlidingLog(1, 1e-6, clock=clock),
        SlidingWindowCounter(big, 1e-6, clock=clock),
    ]
    made.append(CompositeLimiter(made, clock=clock))
    markers: list[SrTcm | TrTcm] = [
        SrTcm(big, big, big, clock=clock),
        TrTcm(big, big, big, big, clock=clock),
    ]
    concurrency = ConcurrencyLimiter(GradientPolicy(max_limit=big, probe_interval=big))
    for _ in range(3):
        for limiter in made:
            for cost in (0, 1, big):
                limiter.check(cost)
                limiter.peek(cost)
        for marker in markers:
            marker.mark(big)
            marker.mark_aware(big, Color.YELLOW)
            assert all(t >= 0 for t in marker.tokens)
        concurrency.sample(timedelta(microseconds=big), big, False)
        concurrency.sample(0, 0, True)
        clock.advance(timedelta(days=10**5))
        # The longest advance there is: the clock's reading saturates, not wraps.
        clock.advance(timedelta(microseconds=big))
