"""Bad arguments: typed errors naming the argument and value, nothing changed,
never a Rust panic (pyo3 would raise it as PanicException, a BaseException)."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

import pytest

from ratekeeper import (
    ArgumentTypeError,
    InvalidArgumentError,
    ManualClock,
    RateLimiter,
    RateLimitError,
    RateLimitExceeded,
)

HUGE = 10**400  # beyond a double and far beyond 64 bits
LONGEST = timedelta(microseconds=2**63 - 1)  # the longest duration there is
# What every duration of at least 0 must be (the rule of every duration).
DURATION = "must be between 0 and 9223372036854775807 microseconds (about 292,271 years)"
BEYOND_64_BITS = 2**64


def test_the_hierarchy() -> None:
    assert issubclass(RateLimitError, Exception)
    assert issubclass(InvalidArgumentError, RateLimitError)
    assert issubclass(InvalidArgumentError, ValueError)
    assert issubclass(ArgumentTypeError, RateLimitError)
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(RateLimitExceeded, RateLimitError)
    assert not issubclass(RateLimitExceeded, (ValueError, TypeError))
    for cls in (RateLimitError, InvalidArgumentError, ArgumentTypeError, RateLimitExceeded):
        assert cls.__module__ == "ratekeeper"
        assert cls.__doc__


def raised(call: Callable[[], object]) -> BaseException:
    """The exception `call` raised; fails if it raised none. Catches
    BaseException, so that a PanicException would be seen, not propagated."""
    try:
        call()
    except BaseException as e:
        return e
    pytest.fail("no exception raised")


def limiter() -> RateLimiter:
    return RateLimiter.create(4.0, clock=ManualClock())


PERMITS_METHODS: list[Callable[[RateLimiter, Any], object]] = [
    lambda lim, p: lim.acquire(p),
    lambda lim, p: lim.try_acquire(p),
    lambda lim, p: lim.try_acquire(p, 1.0),
    lambda lim, p: lim.time_until_available(p),
    lambda lim, p: lim.can_acquire(p),
    lambda lim, p: lim._reserve(p),
    lambda lim, p: lim._try_reserve(p),
]


@pytest.mark.parametrize("method", PERMITS_METHODS)
@pytest.mark.parametrize("bad", [0, -1, 2**31, -(2**63), 2**63 - 1, BEYOND_64_BITS, -HUGE])
def test_permits_out_of_range(method: Callable[[RateLimiter, Any], object], bad: int) -> None:
    lim = limiter()
    lim.acquire()  # in debt: a change of state would show below
    e = raised(lambda: method(lim, bad))
    assert type(e) is InvalidArgumentError
    assert isinstance(e, ValueError)
    assert e.argument == "permits"
    assert e.value == bad
    assert str(e).startswith("invalid argument permits = ")
    assert str(e).endswith(": must be between 1 and 2147483647")
    assert lim.time_until_available() == 0.25  # nothing was taken


@pytest.mark.parametrize("method", PERMITS_METHODS)
@pytest.mark.parametrize("bad", [1.0, 1.5, True, False, None, "1", b"1", [1], Decimal(1)])
def test_permits_of_the_wrong_type(method: Callable[[RateLimiter, Any], object], bad: Any) -> None:
    lim = limiter()
    e = raised(lambda: method(lim, bad))
    assert type(e) is ArgumentTypeError
    assert isinstance(e, TypeError)
    assert e.argument == "permits"
    assert e.value is bad
    assert f"must be an int, not {type(bad).__name__}" in str(e)
    assert lim.try_acquire()  # nothing was taken


def test_permits_accept_int_like_objects() -> None:
    class Index:
        def __index__(self) -> int:
            return 2

    class MyInt(int):
        pass

    lim = limiter()
    assert lim.acquire(Index()) == 0.0  # type: ignore[arg-type]
    assert lim.acquire(MyInt(1)) == 0.5
    assert lim.acquire(2**31 - 1) == 0.25


TIMEOUT_METHODS: list[Callable[[RateLimiter, Any], object]] = [
    lambda lim, t: lim.try_acquire(1, t),
    lambda lim, t: lim.try_acquire(timeout=t),
    lambda lim, t: lim.can_acquire(1, t),
    lambda lim, t: lim._try_reserve(1, t),
]


@pytest.mark.parametrize("method", TIMEOUT_METHODS)
def test_timeout_nan(method: Callable[[RateLimiter, Any], object]) -> None:
    e = raised(lambda: method(limiter(), math.nan))
    assert type(e) is InvalidArgumentError
    assert e.argument == "timeout"
    assert str(e).startswith("invalid argument timeout = NaN: must not be NaN (")


@pytest.mark.parametrize("method", TIMEOUT_METHODS)
@pytest.mark.parametrize("bad", [True, None, "1", [0.5], 1j])
def test_timeout_of_the_wrong_type(method: Callable[[RateLimiter, Any], object], bad: Any) -> None:
    e = raised(lambda: method(limiter(), bad))
    assert type(e) is ArgumentTypeError
    assert e.argument == "timeout"
    assert "or a datetime.timedelta, not " in str(e)


@pytest.mark.parametrize(
    ("timeout", "acquired"),
    [
        (-math.inf, False),
        (-HUGE, False),
        (-1, False),
        (timedelta(days=-5), False),
        (math.inf, True),
        (HUGE, True),
        (1e300, True),
        (timedelta.max, True),
        (Fraction(1, 4), True),
        (Decimal("0.25"), True),
    ],
)
def test_extreme_timeouts_saturate_like_guava(timeout: Any, acquired: bool) -> None:
    lim = limiter()
    lim.acquire()
    assert lim.try_acquire(1, timeout) is acquired
    assert lim.clock is not None
    assert lim.clock.now == (0.25 if acquired else 0.0)


RATE_SETTERS: list[Callable[[Any], object]] = [
    lambda r: RateLimiter(r),
    lambda r: RateLimiter.create(r),
    lambda r: RateLimiter.create(r, 1.0),
    lambda r: setattr(limiter(), "rate", r),
]


@pytest.mark.parametrize("make", RATE_SETTERS)
@pytest.mark.parametrize("bad", [0, 0.0, -0.0, -1, -math.inf, math.nan, -1e-300])
def test_rate_out_of_range(make: Callable[[Any], object], bad: float) -> None:
    e = raised(lambda: make(bad))
    assert type(e) is InvalidArgumentError
    assert e.argument == "permits_per_second"
    assert str(e).endswith(": must be positive and not NaN")
    assert math.isnan(e.value) if math.isnan(bad) else e.value == bad  # type: ignore[arg-type]


@pytest.mark.parametrize("make", RATE_SETTERS)
def test_rate_beyond_a_double(make: Callable[[Any], object]) -> None:
    e = raised(lambda: make(HUGE))
    assert type(e) is InvalidArgumentError
    assert e.argument == "permits_per_second"
    assert e.value == HUGE
    assert str(e).endswith("...: must fit in a float")


@pytest.mark.parametrize("make", RATE_SETTERS)
@pytest.mark.parametrize("bad", [True, None, "5", b"5", [5.0], 5j])
def test_rate_of_the_wrong_type(make: Callable[[Any], object], bad: Any) -> None:
    e = raised(lambda: make(bad))
    assert type(e) is ArgumentTypeError
    assert e.argument == "permits_per_second"
    assert f"must be a real number (int or float), not {type(bad).__name__}" in str(e)


def test_failed_set_rate_changes_nothing() -> None:
    lim = limiter()
    lim.acquire()
    for bad in (0, math.nan, -1.0, True, "x"):
        with pytest.raises(RateLimitError):
            lim.rate = bad  # type: ignore[assignment]
    assert lim.rate == 4.0
    assert lim.time_until_available() == 0.25


@pytest.mark.parametrize(
    "bad",
    [
        -1,
        -1e-9,
        math.nan,
        math.inf,
        -math.inf,
        HUGE,
        1e300,
        timedelta.max,
        timedelta(microseconds=-1),
    ],
)
def test_warmup_out_of_range(bad: Any) -> None:
    # The rule of every duration: never clamped to the longest one.
    e = raised(lambda: RateLimiter.create(1.0, bad))
    assert type(e) is InvalidArgumentError
    assert e.argument == "warmup"
    assert str(e).endswith(f": {DURATION}")


@pytest.mark.parametrize("bad", [True, "1", [1]])
def test_warmup_of_the_wrong_type(bad: Any) -> None:
    e = raised(lambda: RateLimiter.create(1.0, bad))
    assert type(e) is ArgumentTypeError
    assert e.argument == "warmup"


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (0.5, InvalidArgumentError),
        (math.inf, InvalidArgumentError),
        (math.nan, InvalidArgumentError),
        (HUGE, InvalidArgumentError),
        (True, ArgumentTypeError),
        ("3", ArgumentTypeError),
    ],
)
def test_cold_factor(bad: Any, kind: type[Exception]) -> None:
    e = raised(lambda: RateLimiter.create(1.0, 1.0, cold_factor=bad))
    assert type(e) is kind
    assert isinstance(e, (InvalidArgumentError, ArgumentTypeError))
    assert e.argument == "cold_factor"


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (-1.0, InvalidArgumentError),
        (math.inf, InvalidArgumentError),
        (math.nan, InvalidArgumentError),
        (HUGE, InvalidArgumentError),
        (1e300, InvalidArgumentError),  # the bound of every duration
        (False, ArgumentTypeError),
        ("1", ArgumentTypeError),
    ],
)
def test_max_burst_seconds(bad: Any, kind: type[Exception]) -> None:
    e = raised(lambda: RateLimiter.create(1.0, max_burst_seconds=bad))
    assert type(e) is kind
    assert isinstance(e, (InvalidArgumentError, ArgumentTypeError))
    assert e.argument == "max_burst_seconds"


def test_options_that_do_not_apply_are_refused() -> None:
    e = raised(lambda: RateLimiter.create(1.0, cold_factor=2.0))
    assert type(e) is ArgumentTypeError
    assert e.argument == "cold_factor"
    assert "None for a limiter without a warmup" in str(e)
    e = raised(lambda: RateLimiter.create(1.0, 2.0, max_burst_seconds=2.0))
    assert type(e) is ArgumentTypeError
    assert e.argument == "max_burst_seconds"


@pytest.mark.parametrize("bad", [ManualClock, "manual", 1, object()])
def test_clock_of_the_wrong_type(bad: Any) -> None:
    e = raised(lambda: RateLimiter.create(1.0, clock=bad))
    assert type(e) is ArgumentTypeError
    assert e.argument == "clock"


@pytest.mark.parametrize(
    "bad", [-1, -1e-9, math.nan, math.inf, HUGE, 1e300, timedelta.max, timedelta(days=-1)]
)
def test_manual_clock_never_goes_back(bad: Any) -> None:
    clock = ManualClock()
    clock.advance(1)
    e = raised(lambda: clock.advance(bad))
    assert type(e) is InvalidArgumentError
    assert e.argument == "seconds"
    assert str(e).endswith(f": {DURATION}: a clock never goes back")
    assert clock.now == 1.0


@pytest.mark.parametrize("bad", [True, None, "1"])
def test_manual_clock_advance_of_the_wrong_type(bad: Any) -> None:
    e = raised(lambda: ManualClock().advance(bad))
    assert type(e) is ArgumentTypeError
    assert e.argument == "seconds"


def test_long_values_are_cut_in_messages() -> None:
    e = raised(lambda: limiter().acquire(10**5000))  # too long for Python to print
    assert type(e) is InvalidArgumentError
    assert str(e) == (
        "invalid argument permits = <int of 16610 bits>: must be between 1 and 2147483647"
    )
    e = raised(lambda: limiter().acquire("x" * 1000))  # type: ignore[arg-type]
    assert len(str(e)) < 200


def test_extremes_that_are_valid_never_panic() -> None:
    clock = ManualClock()
    for rate in (1e-300, 5e-324, 1e308, math.inf):
        for lim in (
            RateLimiter.create(rate, clock=clock),
            RateLimiter.create(rate, LONGEST, clock=clock),
            RateLimiter.create(rate, 1e-6, cold_factor=1e308, clock=clock),
            RateLimiter.create(rate, max_burst_seconds=9_223_372_036_854.773, clock=clock),
        ):
            for _ in range(3):
                lim.acquire(2**31 - 1)
                lim.try_acquire(2**31 - 1, math.inf)
                lim.time_until_available(2**31 - 1)
                lim.can_acquire(2**31 - 1, timedelta.max)
                lim.rate = rate
                lim.rate = 1e-300
                clock.advance(1e9)
    assert clock.now_micros == 2**63 - 1  # saturated, not wrapped


def test_user_raised_errors_have_the_fields() -> None:
    e = InvalidArgumentError("mine")
    assert e.argument is None
    assert e.value is None
    assert str(e) == "mine"
