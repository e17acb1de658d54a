"""`refund`: units admitted that should not count given back (a request
skipped, or failed before doing any work), on every admission-style
limiter, a composite and a keyed limiter; its errors."""

from __future__ import annotations

import pytest

from ratekeeper import (
    ArgumentTypeError,
    CompositeLimiter,
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    KeyedLimiter,
    LeakyBucketMeter,
    LeakyBucketQueue,
    Limiter,
    ManualClock,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
)


def refunding(clock: ManualClock) -> list[Limiter]:
    """Every limiter that takes a refund, each admitting 2 at once."""
    return [
        TokenBucket(1.0, 2, clock=clock),
        Gcra(1, 1, 1.0, clock=clock),
        LeakyBucketMeter(2, 1, 1.0, clock=clock),
        FixedWindow(2, 1.0, clock=clock),
        SlidingWindow(2, 1.0, 4, clock=clock),
        SlidingLog(2, 1.0, clock=clock),
        SlidingWindowCounter(2, 1.0, clock=clock),
        CompositeLimiter([FixedWindow(2, 1.0), Gcra(4, 1, 1.0)], clock=clock),
    ]


def test_a_check_refunded_leaves_the_limiter_as_before(clock: ManualClock) -> None:
    for limiter in refunding(clock):
        assert limiter.check().allowed, limiter
        before = limiter.peek()
        assert limiter.check().allowed, limiter
        assert not limiter.check().allowed, limiter
        limiter.refund()
        assert limiter.peek() == before, limiter
        limiter.refund(0)
        assert limiter.peek() == before, f"{limiter}: a refund of 0 gives nothing back"
        limiter.refund(10)
        assert limiter.peek(0).remaining == 2, f"{limiter}: never more than a fresh limiter"
        assert not limiter.check(3).allowed, limiter


def test_a_window_that_has_rolled_gives_nothing_back(clock: ManualClock) -> None:
    window = FixedWindow(2, 1.0, clock=clock)
    assert window.check(2).allowed
    clock.advance(1.0)
    assert window.check(2).allowed
    clock.advance(1.0)
    window.refund(2)
    assert window.check(2).allowed
    assert not window.check().allowed


def test_a_queue_gives_nothing_back(clock: ManualClock) -> None:
    queue = LeakyBucketQueue(1, 1.0, clock=clock)
    assert queue.check(2).allowed
    before = queue.peek()
    queue.refund(2)
    assert queue.peek() == before


def test_keyed_refund_is_the_keys_own(clock: ManualClock) -> None:
    keyed = KeyedLimiter(FixedWindow(2, 1.0), max_keys=10, clock=clock)
    assert keyed.refund("user:1") is False
    assert len(keyed) == 0, "a refund makes no key"
    assert keyed.check("user:1", 2).allowed
    assert keyed.check("user:2", 2).allowed
    assert not keyed.check("user:1").allowed
    assert keyed.refund("user:1") is True
    assert keyed.refund(b"user:1", 0) is True, "the same key as bytes"
    assert keyed.check("user:1").allowed
    assert not keyed.check("user:1").allowed
    assert not keyed.check("user:2").allowed, "another key's limiter is untouched"
    keyed.refund("user:2", 5)
    assert keyed.evict_full() == 1, "refunded back to full: dropped, changing nothing"
    assert keyed.refund("user:2") is False


def test_refund_errors_are_typed(clock: ManualClock) -> None:
    for limiter in refunding(clock):
        with pytest.raises(InvalidArgumentError, match="cost"):
            limiter.refund(-1)
        with pytest.raises(ArgumentTypeError):
            limiter.refund("1")  # type: ignore[arg-type]
    keyed = KeyedLimiter(Gcra(1, 1, 1.0), max_keys=5, clock=clock)
    with pytest.raises(InvalidArgumentError, match="cost"):
        keyed.refund("k", -1)
    with pytest.raises(InvalidArgumentError, match="key"):
        keyed.refund("k" * 257)
    with pytest.raises(ArgumentTypeError):
        keyed.refund(5)  # type: ignore[arg-type]
    assert len(keyed) == 0
