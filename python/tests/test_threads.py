"""Blocking waits release the GIL; one limiter is safe to share."""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
import time
from typing import TYPE_CHECKING, Callable

import pytest

from ratekeeper import Decision, LeakyBucketQueue, ManualClock, RateLimiter, TokenBucket

if TYPE_CHECKING:
    from collections.abc import Iterator

    from typing_extensions import Self


class Heartbeat:
    """A thread that notes the time about once a millisecond while it runs
    Python code: it can only run while no other thread holds the GIL."""

    def __init__(self) -> None:
        self.beats: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - last >= 0.001:
                self.beats.append(now)
                last = now

    def __enter__(self) -> Self:
        self._thread.start()
        while not self.beats:
            time.sleep(0.001)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, start: float, end: float) -> int:
        return sum(start < t < end for t in self.beats)


@pytest.mark.parametrize(
    "wait",
    [
        pytest.param(lambda lim: lim.acquire(), id="acquire"),
        pytest.param(lambda lim: lim.try_acquire(timeout=1.0), id="try_acquire"),
    ],
)
def test_a_blocking_wait_lets_other_threads_run(wait: Callable[[RateLimiter], object]) -> None:
    limiter = RateLimiter.create(4.0)  # real time: the next permit is 250 ms away
    limiter.acquire()
    with Heartbeat() as heart:
        start = time.monotonic()
        wait(limiter)
        end = time.monotonic()
    assert end - start >= 0.2
    # Held for the whole wait, the GIL would have stopped the heartbeat
    # dead between start and end; released, it beats about every ms.
    beats = heart.between(start + 0.02, end - 0.02)
    assert beats >= 50, f"only {beats} heartbeats during a {end - start:.3f} s wait"


def test_threads_sharing_a_limiter_get_exactly_the_permits_available() -> None:
    clock = ManualClock()
    limiter = RateLimiter.create(100.0, clock=clock)
    clock.advance(5)  # one second of burst saved: 100 permits, plus the one pre-consumed
    granted = [0] * 8
    barrier = threading.Barrier(len(granted))

    def take(i: int) -> None:
        barrier.wait()
        for _ in range(200):
            if limiter.try_acquire():
                granted[i] += 1

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(granted))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 101
    assert limiter.time_until_available() == 0.01


@contextlib.contextmanager
def ctrl_c_after(delay: float) -> Iterator[None]:
    """Ctrl-C `delay` seconds in (SIGINT, as `_thread.interrupt_main`
    simulates it), with SIGINT's default Python handler, which raises
    KeyboardInterrupt, installed meanwhile: a process started in the
    background by a shell without job control (`make test &`, `nohup`, CI
    runners) inherits SIGINT ignored, and then Python installs no handler
    and `interrupt_main` does nothing. Restored afterwards, once the timer
    can no longer fire."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, _thread.interrupt_main)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)


# The waits below are 3 s: long enough that one interrupted 0.1 s in is
# told from one that ran its course (checked by the time taken), short
# enough that a Ctrl-C that never arrives fails the test in seconds.


def test_ctrl_c_interrupts_a_long_wait_and_the_permits_stay_taken() -> None:
    limiter = RateLimiter.create(1 / 3)  # the next permit is 3 s away
    limiter.acquire()
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        limiter.acquire()
    assert time.monotonic() - start < 2.0
    # The interrupted request keeps its reservation, as a completed one
    # would: the next permit is 6 s from the start, not 3.
    assert limiter.time_until_available() > 4.5


@pytest.mark.parametrize(
    "wait",
    [
        pytest.param(lambda: _tight_bucket().wait(), id="TokenBucket.wait"),
        pytest.param(lambda: _tight_bucket().wait(timeout=1.0), id="TokenBucket.wait-timeout"),
        pytest.param(lambda: _busy_queue().acquire(), id="LeakyBucketQueue.acquire"),
    ],
)
def test_the_other_blocking_waits_let_other_threads_run(wait: Callable[[], Decision]) -> None:
    with Heartbeat() as heart:
        start = time.monotonic()
        decision = wait()
        end = time.monotonic()
    assert decision.allowed
    assert 0.2 < decision.wait <= 0.25
    assert end - start >= 0.2
    beats = heart.between(start + 0.02, end - 0.02)
    assert beats >= 50, f"only {beats} heartbeats during a {end - start:.3f} s wait"


def _tight_bucket() -> TokenBucket:
    """A real-time bucket whose next token is 250 ms away."""
    bucket = TokenBucket(4.0, 1)
    assert bucket.check().allowed
    return bucket


def _busy_queue() -> LeakyBucketQueue:
    """A real-time queue whose next slot is 250 ms away."""
    queue = LeakyBucketQueue(5, 0.25)
    assert queue.check().wait == 0.0
    return queue


def test_ctrl_c_interrupts_a_token_bucket_wait() -> None:
    bucket = TokenBucket(1 / 3, 1)  # the next token is 3 s away
    bucket.check()
    start = time.monotonic()
    with ctrl_c_after(0.1), pytest.raises(KeyboardInterrupt):
        bucket.wait()
    assert time.monotonic() - start < 2.0
    assert bucket.tokens < -0.5  # the interrupted wait keeps its token
