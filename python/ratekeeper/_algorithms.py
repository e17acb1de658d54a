"""The admission-style limiters: the native classes plus the decorator and
the ``async`` waits.

Each class here subclasses its native class (``ratekeeper._ratekeeper``),
which makes every decision, and ``LimitedCalls``, which turns it into a
decorator. They keep no state of their own (``__slots__ = ()``).

What a ``limited`` call does depends on what the algorithm can do:

* the policing algorithms (``Gcra``, ``LeakyBucketMeter``, the windows,
  ``CompositeLimiter``) admit now or refuse: a refused call raises
  ``RateLimitExceeded`` at once, with the ``Decision`` (its
  ``retry_after``, its HTTP fields);
* ``TokenBucket`` waits for its tokens (``wait``/``wait_async``) up to
  ``timeout`` (as long as it takes by default);
* ``LeakyBucketQueue`` waits for its slot (``acquire``/``acquire_async``),
  and refuses when the queue is full.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Protocol, TypeVar, overload

from ratekeeper import _ratekeeper
from ratekeeper._limited import Admission, LimitedCalls, Timeout, WaitsInBlocks
from ratekeeper._ratekeeper import Decision

_F = TypeVar("_F", bound=Callable[..., Any])


class _Checks(Protocol):
    def check(self, cost: int = 1) -> Decision: ...
    def peek(self, cost: int = 1) -> Decision: ...


class CheckedCalls(LimitedCalls):
    """``limited`` for limiters that admit now or refuse: a call is made
    when ``check(cost)`` admits it, and raises ``RateLimitExceeded`` (with
    the refusal's ``Decision``) otherwise, never waiting."""

    __slots__ = ()

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(self, func: None = None, /, *, cost: int = 1) -> Callable[[_F], _F]: ...

    def limited(self, func: _F | None = None, /, *, cost: int = 1) -> _F | Callable[[_F], _F]:
        """A decorator: each call of the function first takes ``cost``
        units; a call the limiter refuses raises ``RateLimitExceeded``
        (``.decision`` says when to retry) and is not made.

        Works on plain and ``async`` functions::

            @limiter.limited
            def handle(request): ...

            @limiter.limited(cost=5)
            async def upload(blob): ...
        """
        return self._decorate(func, cost, None)

    def _check_call(self: _Checks, amount: int, timeout: Timeout) -> None:
        self.peek(amount)

    def _admit_call(self: _Checks, amount: int, timeout: Timeout) -> Admission:
        return self.check(amount), None


class TokenBucket(_ratekeeper.TokenBucket, WaitsInBlocks):
    """A token bucket with the semantics of Go's ``golang.org/x/time/rate``:
    ``burst`` tokens, full at creation, refilled at ``rate`` per second::

        bucket = TokenBucket(10.0, 20)          # 10/s, bursts of 20
        if bucket.check():                      # a Decision; never waits
            ...
        bucket.wait(timeout=0.5)                # waits for a token (GIL released)
        await bucket.wait_async()               # never blocks the event loop
        with bucket:                            # waits for one token, then runs
            ...
        async with bucket:                      # the same, for asyncio
            ...

    A block whose token no wait can bring (a burst of 0) raises
    ``RateLimitExceeded`` on entering.
    """

    __slots__ = ()
    _UNIT = "token"

    async def wait_async(self, cost: int = 1, timeout: float | timedelta | None = None) -> Decision:
        """``wait`` for ``asyncio``: takes ``cost`` tokens if they can be had
        within ``timeout`` (``None``: as long as it takes) and sleeps until
        they are due with ``asyncio.sleep``; otherwise returns the refusal at
        once, taking nothing.

        The tokens are taken when the coroutine starts; if the task is
        cancelled during the sleep they stay taken (use ``reserve`` and
        ``Reservation.cancel`` to give tokens back). On a ``ManualClock`` the
        clock moves by the wait and nothing sleeps.
        """
        decision, to_sleep = self._reserve_within(cost, timeout)
        if to_sleep > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(to_sleep)
        return decision

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(
        self, func: None = None, /, *, cost: int = 1, timeout: float | timedelta | None = None
    ) -> Callable[[_F], _F]: ...

    def limited(
        self,
        func: _F | None = None,
        /,
        *,
        cost: int = 1,
        timeout: float | timedelta | None = None,
    ) -> _F | Callable[[_F], _F]:
        """A decorator: each call first takes ``cost`` tokens, waiting for
        them (``wait``, or ``wait_async`` for an ``async`` function) up to
        ``timeout`` — as long as it takes by default. A call that cannot
        have them in time (or asks for more than the burst) raises
        ``RateLimitExceeded`` and is not made.
        """
        return self._decorate(func, cost, timeout)

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        self.peek(amount)
        self.wait(0, timeout)  # a cost of 0 takes nothing: checks the timeout

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        return self.wait(amount, timeout), None

    async def _admit_call_async(self, amount: int, timeout: Timeout) -> Admission:
        return await self.wait_async(amount, timeout), None


class Gcra(_ratekeeper.Gcra, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.Gcra.__doc__


class LeakyBucketMeter(_ratekeeper.LeakyBucketMeter, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.LeakyBucketMeter.__doc__


class LeakyBucketQueue(_ratekeeper.LeakyBucketQueue, WaitsInBlocks):
    """The leaky bucket as a queue (a shaper): one unit leaves every
    ``interval``; each admitted request waits for its slot::

        queue = LeakyBucketQueue(10, 0.1)       # 10/s, at most 10 waiting
        queue.acquire()                         # sleeps until the slot (GIL released)
        await queue.acquire_async()             # never blocks the event loop
        decision = queue.check()                # takes the slot, says how long to wait
        async with queue:                       # waits for one slot, then runs
            ...

    With ``slack``, uber-go/ratelimit's ``WithSlack``, up to ``slack`` slots
    left unused while idle are handed out late (none before the first
    request): ``LeakyBucketQueue(2**63 - 1, 0.1, slack=10)`` is Uber's
    ``ratelimit.New(10)``, which never refuses.
    """

    __slots__ = ()

    async def acquire_async(self, cost: int = 1) -> Decision:
        """``acquire`` for ``asyncio``: takes a slot for ``cost`` units and
        sleeps until it comes with ``asyncio.sleep``; a refusal (the queue is
        full) returns at once, taking nothing. A task cancelled during the
        sleep keeps its slot. On a ``ManualClock`` the clock moves instead."""
        decision, to_sleep = self._reserve(cost)
        if to_sleep > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(to_sleep)
        return decision

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(self, func: None = None, /, *, cost: int = 1) -> Callable[[_F], _F]: ...

    def limited(self, func: _F | None = None, /, *, cost: int = 1) -> _F | Callable[[_F], _F]:
        """A decorator: each call first waits for its slot (``acquire``, or
        ``acquire_async`` for an ``async`` function); a call refused because
        the queue is full raises ``RateLimitExceeded`` and is not made."""
        return self._decorate(func, cost, None)

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        self.peek(amount)

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        return self.acquire(amount), None

    async def _admit_call_async(self, amount: int, timeout: Timeout) -> Admission:
        return await self.acquire_async(amount), None


class FixedWindow(_ratekeeper.FixedWindow, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.FixedWindow.__doc__


class SlidingWindow(_ratekeeper.SlidingWindow, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.SlidingWindow.__doc__


class SlidingLog(_ratekeeper.SlidingLog, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.SlidingLog.__doc__


class SlidingWindowCounter(_ratekeeper.SlidingWindowCounter, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.SlidingWindowCounter.__doc__


class CompositeLimiter(_ratekeeper.CompositeLimiter, CheckedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.CompositeLimiter.__doc__
