"""The language boundary under stress: an asyncio task cancelled
before or during its wait leaks no permit and counts none twice; many
Python threads hammering one limiter never get more than its bound, and
blocking waits from many threads (the GIL released and taken back each
time) add up to the limiter's schedule."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Coroutine
from typing import Any, Callable

import pytest

from ratekeeper import (
    FixedWindow,
    Gcra,
    KeyedLimiter,
    LeakyBucketQueue,
    ManualClock,
    RateLimiter,
    SlidingLog,
    SlidingWindowCounter,
    TokenBucket,
)

# --- cancellation -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["acquire_async", "try_acquire_async"])
def test_cancelled_tasks_on_a_manual_clock_take_exactly_what_ran(kind: str) -> None:
    """Tasks cancelled before they ran took nothing; those that ran took
    their permits once: the limiter ends exactly where a replica that made
    only the calls that ran ends, to the microsecond."""
    clock, replica_clock = ManualClock(), ManualClock()
    limiter = RateLimiter.create(10.0, clock=clock)
    replica = RateLimiter.create(10.0, clock=replica_clock)
    permits = [1 + i % 4 for i in range(30)]

    def call(lim: RateLimiter, n: int) -> Coroutine[Any, Any, object]:
        if kind == "acquire_async":
            return lim.acquire_async(n)
        return lim.try_acquire_async(n, timeout=0.35)

    async def main() -> list[object]:
        tasks = [asyncio.create_task(call(limiter, n)) for n in permits]
        for i, task in enumerate(tasks):
            if i % 3 == 0:
                task.cancel()  # before its first step: it never starts
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            task.cancel()  # after they finished: changes nothing
        return results

    results = asyncio.run(main())
    for i, (n, result) in enumerate(zip(permits, results)):
        if i % 3 == 0:
            assert isinstance(result, asyncio.CancelledError)
        elif kind == "acquire_async":
            assert result == replica.acquire(n)
        else:
            assert result == replica.try_acquire(n, timeout=0.35)
    assert clock.now == replica_clock.now
    assert limiter.time_until_available() == replica.time_until_available()
    assert limiter.try_acquire(timeout=10.0) == replica.try_acquire(timeout=10.0)
    assert clock.now == replica_clock.now


def _cancelled_mid_wait(start_waiting: Callable[[], Coroutine[Any, Any, object]]) -> None:
    """Starts the wait, cancels it 50 ms in, and checks it was cancelled."""

    async def main() -> None:
        task = asyncio.create_task(start_waiting())
        await asyncio.sleep(0.05)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


# Each: a limiter whose next permit is 200 ms away, a wait for one more, and
# when the one after is due. Taken once, the cancelled wait's permit puts it
# 400 ms after the start (the first permit's 200 ms + its own); given back
# (a leak) 200 ms; counted twice 600 ms.
@pytest.mark.parametrize(
    "kind", ["RateLimiter.acquire_async", "RateLimiter.try_acquire_async", "LeakyBucketQueue"]
)
def test_a_wait_cancelled_midway_keeps_its_permits_taken_once(kind: str) -> None:
    wait: Callable[[], Coroutine[Any, Any, object]]
    next_free: Callable[[], float]
    start = time.monotonic()
    if kind == "LeakyBucketQueue":
        queue = LeakyBucketQueue(5, 0.2)
        assert queue.check().wait == 0.0
        wait, next_free = queue.acquire_async, lambda: queue.peek().wait
    else:
        limiter = RateLimiter.create(5.0)
        limiter.acquire()
        if kind.endswith("try_acquire_async"):
            wait = lambda: limiter.try_acquire_async(timeout=1.0)  # noqa: E731
        else:
            wait = limiter.acquire_async
        next_free = limiter.time_until_available
    _cancelled_mid_wait(wait)
    due = time.monotonic() - start + next_free()
    assert 0.33 < due <= 0.45


def test_a_token_bucket_wait_cancelled_midway_keeps_its_token_once() -> None:
    bucket = TokenBucket(5.0, 1)
    assert bucket.check().allowed
    start = time.monotonic()
    _cancelled_mid_wait(lambda: bucket.wait_async(timeout=1.0))
    elapsed = time.monotonic() - start
    # -1 (the reserved token) plus what refilled since: given back, it would
    # be about 0 or more; taken twice, about -2.
    assert bucket.tokens == pytest.approx(-1.0 + 5.0 * elapsed, abs=0.15)


# --- threads ----------------------------------------------------------------

THREADS = 16


def _hammer(decide: Callable[[int], bool], seconds: float) -> tuple[int, float]:
    """THREADS threads call ``decide(thread)`` for ``seconds``; returns the
    admissions and the seconds from the first call to the last."""
    admitted = [0] * THREADS
    barrier = threading.Barrier(THREADS + 1)
    stop = threading.Event()

    def run(i: int) -> None:
        barrier.wait()
        while not stop.is_set():
            if decide(i):
                admitted[i] += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.monotonic()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return sum(admitted), time.monotonic() - start


def _keyed() -> Callable[[int], bool]:
    keyed = KeyedLimiter(TokenBucket(100.0, 10), max_keys=100)
    return lambda i: keyed.check(f"key{i % 4}").allowed


def _any_thread(decide: Callable[[], bool]) -> Callable[[int], bool]:
    return lambda i: decide()


def _windows(t: float) -> float:
    """The most 50-per-50-ms windows admit in ``t`` seconds."""
    return 50 * (math.ceil(t / 0.05) + 1)


# (a limiter's decision per thread, made fresh; the most it may admit in T
# seconds from its creation)
HAMMERED = [
    pytest.param(
        lambda: _any_thread(RateLimiter.create(1000.0).try_acquire),
        lambda t: 1000 * t + 2,
        id="Guava",
    ),
    pytest.param(
        lambda: _any_thread(TokenBucket(1000.0, 10).allow),
        lambda t: 10 + 1000 * t,
        id="TokenBucket",
    ),
    pytest.param(lambda: _any_thread(Gcra(9, 1000, 1.0).allow), lambda t: 10 + 1000 * t, id="Gcra"),
    pytest.param(lambda: _any_thread(FixedWindow(50, 0.05).allow), _windows, id="FixedWindow"),
    pytest.param(lambda: _any_thread(SlidingLog(50, 0.05).allow), _windows, id="SlidingLog"),
    pytest.param(
        lambda: _any_thread(SlidingWindowCounter(50, 0.05).allow),
        _windows,
        id="SlidingWindowCounter",
    ),
    pytest.param(_keyed, lambda t: 4 * (10 + 100 * t), id="KeyedLimiter"),
]


@pytest.mark.parametrize(("make", "bound"), HAMMERED)
def test_many_threads_never_get_more_than_the_bound(
    make: Callable[[], Callable[[int], bool]], bound: Callable[[float], float]
) -> None:
    created = time.monotonic()
    decide = make()
    admitted, _ = _hammer(decide, 0.25)
    since_creation = time.monotonic() - created
    assert admitted > 0
    assert admitted <= bound(since_creation), (admitted, since_creation)


def test_blocking_waits_from_many_threads_follow_the_schedule() -> None:
    limiter = RateLimiter.create(200.0)  # one permit per 5 ms
    limiter.acquire()
    waits: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(5):
            waited = limiter.acquire()  # sleeps with the GIL released
            with lock:
                waits.append(waited)

    start = time.monotonic()
    threads = [threading.Thread(target=take) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    granted = len(waits)
    assert granted == 5 * THREADS
    # 80 permits at 5 ms each after the first: no fewer than 395 ms.
    assert elapsed >= (granted - 1) * 0.005 - 0.01
    # The last reservation is ~5 ms from the end, not more nor less.
    assert 0.0 <= limiter.time_until_available() <= 0.005
