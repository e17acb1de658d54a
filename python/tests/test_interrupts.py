"""Ctrl-C during a blocking wait: it interrupts the wait at once, and what
the wait reserved stays taken, as Guava's reserved permits do (the other
waits' cases are in test_threads.py)."""

from __future__ import annotations

import time

import pytest
from interrupting import ctrl_c_after

from ratekeeper import LeakyBucketQueue, RateLimiter


def test_an_interrupted_try_acquire_keeps_its_permits() -> None:
    limiter = RateLimiter.create(0.01)  # the next permit is 100 s away
    limiter.acquire()
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        limiter.try_acquire(timeout=1000.0)
    assert time.monotonic() - start < 2.0
    # Reserved before the wait: the next request pays for it.
    assert limiter.time_until_available() > 150


def test_an_interrupted_queue_acquire_keeps_its_slot() -> None:
    queue = LeakyBucketQueue(5, 100.0)  # a slot every 100 s
    assert queue.check().wait == 0.0
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        queue.acquire()
    assert time.monotonic() - start < 2.0
    # The slot 100 s away is still taken: the next one is 200 s away.
    assert queue.peek().wait > 150
