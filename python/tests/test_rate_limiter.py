"""Guava's semantics through the Python API, on a ManualClock."""

from __future__ import annotations

import inspect
import math
from datetime import timedelta

import pytest

import ratekeeper
from ratekeeper import ManualClock, RateLimiter


def test_guava_documented_example(clock: ManualClock) -> None:
    limiter = RateLimiter.create(1.0, clock=clock)
    waits = [limiter.acquire(p) for p in range(1, 6)]
    assert waits == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert clock.now == 10.0
    assert clock.now_micros == 10_000_000


def test_acquire_returns_guavas_double(clock: ManualClock) -> None:
    limiter = RateLimiter.create(999.0, clock=clock)
    assert limiter.acquire() == 0.0
    # Guava: 1.0 * 1001 micros / 1e6.
    assert limiter.acquire() == 1001 / 1e6
    assert clock.now_micros == 1001


def test_try_acquire_refuses_without_taking(clock: ManualClock) -> None:
    limiter = RateLimiter.create(4.0, clock=clock)
    assert limiter.try_acquire() is True
    assert limiter.try_acquire() is False
    assert limiter.try_acquire(timeout=0.249999) is False
    assert limiter.try_acquire(timeout=timedelta(microseconds=249_999)) is False
    assert clock.now_micros == 0
    assert limiter.try_acquire(1, timedelta(milliseconds=250)) is True
    assert clock.now_micros == 250_000
    # A negative timeout means "do not wait", as in Guava.
    assert limiter.try_acquire(timeout=-5) is False


def test_time_until_available_and_can_acquire_take_nothing(clock: ManualClock) -> None:
    limiter = RateLimiter.create(2.0, clock=clock)
    limiter.acquire()
    for _ in range(3):
        assert limiter.time_until_available() == 0.5
        assert limiter.time_until_available(1000) == 0.5
        assert limiter.can_acquire() is False
        assert limiter.can_acquire(timeout=0.5) is True
        assert limiter.can_acquire(1, timedelta(seconds=0.4)) is False
    clock.advance(0.2)
    assert limiter.time_until_available() == 0.3
    clock.advance(timedelta(milliseconds=300))
    assert limiter.time_until_available() == 0.0
    assert limiter.can_acquire() is True


def test_rate_property_and_set_rate_semantics(clock: ManualClock) -> None:
    limiter = RateLimiter.create(1.0, clock=clock)
    assert limiter.rate == 1.0
    limiter.acquire()
    limiter.rate = 10
    assert limiter.rate == 10.0
    assert isinstance(limiter.rate, float)
    # The next request still pays for the previous one at the old rate.
    assert limiter.acquire() == 1.0
    assert limiter.acquire() == 0.1


def test_infinite_rate_is_accepted_as_in_guava(clock: ManualClock) -> None:
    limiter = RateLimiter.create(math.inf, clock=clock)
    assert limiter.rate == math.inf
    assert [limiter.acquire(1_000_000) for _ in range(3)] == [0.0, 0.0, 0.0]


def test_warmup_in_seconds_or_timedelta_is_the_same_limiter() -> None:
    def waits(warmup: float | timedelta) -> list[float]:
        limiter = RateLimiter.create(2.0, warmup, clock=ManualClock())
        return [limiter.acquire() for _ in range(8)]

    # Guava's testWarmUp: 2 permits/s after a 4 s warm-up from cold.
    expected = [0.0, 1.375, 1.125, 0.875, 0.625, 0.5, 0.5, 0.5]
    assert waits(4.0) == expected
    assert waits(4) == expected
    assert waits(timedelta(seconds=4)) == expected


def test_cold_factor_and_max_burst_seconds(clock: ManualClock) -> None:
    hot = RateLimiter.create(1.0, 2.0, cold_factor=1.0, clock=clock)
    assert [hot.acquire() for _ in range(3)] == [0.0, 1.0, 1.0]

    burst = RateLimiter.create(10.0, max_burst_seconds=3.0, clock=clock)
    clock.advance(10)
    # 30 saved-up permits are free, then the limiter runs at 10/s.
    assert burst.acquire(30) == 0.0
    assert burst.acquire() == 0.0
    assert burst.acquire() == 0.1


def test_constructor_and_create_agree(clock: ManualClock) -> None:
    a = RateLimiter(3.0, clock=clock)
    b = RateLimiter.create(3.0, clock=clock)
    assert type(a) is type(b) is RateLimiter
    assert repr(a) == repr(b)


def test_create_returns_the_subclass_it_is_called_on() -> None:
    class Mine(RateLimiter):
        __slots__ = ()

    limiter = Mine.create(5.0)
    assert type(limiter) is Mine
    assert limiter.try_acquire()


def test_repr_and_clock_property(clock: ManualClock) -> None:
    assert RateLimiter.create(5.0).clock is None
    limiter = RateLimiter.create(5.0, warmup=timedelta(seconds=2.5), clock=clock)
    assert limiter.clock is clock
    assert repr(limiter) == (
        "RateLimiter(5.0, warmup=2.5, cold_factor=3.0, clock=ManualClock(now=0.0))"
    )
    assert repr(RateLimiter.create(0.5)) == "RateLimiter(0.5, max_burst_seconds=1.0)"


def test_manual_clock_truncates_to_whole_microseconds() -> None:
    clock = ManualClock()
    clock.advance(0.0000019)
    assert clock.now_micros == 1
    clock.advance(timedelta(microseconds=41))
    assert clock.now_micros == 42
    assert clock.now == 42 / 1e6
    assert repr(clock) == "ManualClock(now=4.2e-05)"


def test_real_clock_limiter_makes_real_decisions() -> None:
    limiter = RateLimiter.create(1000.0)
    assert limiter.try_acquire()
    assert 0.0 < limiter.time_until_available() <= 0.001
    assert limiter.acquire() <= 0.001


def test_signatures_show_the_defaults() -> None:
    sig = inspect.signature(RateLimiter.try_acquire)
    assert [(p.name, p.default) for p in list(sig.parameters.values())[1:]] == [
        ("permits", 1),
        ("timeout", 0.0),
    ]
    assert inspect.signature(RateLimiter.acquire).parameters["permits"].default == 1


def test_the_package_exports_its_api() -> None:
    assert len(set(ratekeeper.__all__)) == len(ratekeeper.__all__)
    public = {
        name
        for name, value in vars(ratekeeper).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public | {"__version__"} == set(ratekeeper.__all__)
    for name in ratekeeper.__all__:
        assert getattr(ratekeeper, name) is not None
    assert ratekeeper.__version__.count(".") == 2


def test_keyword_arguments(clock: ManualClock) -> None:
    limiter = RateLimiter.create(permits_per_second=2.0, warmup=None, clock=clock)
    assert limiter.acquire(permits=2) == 0.0
    assert limiter.try_acquire(permits=1, timeout=1.0)
    assert clock.now == 1.0
    with pytest.raises(TypeError):
        limiter.acquire(nope=1)  # type: ignore[call-arg]
