"""``RateLimiter``: the native limiter plus what is naturally Python.

The native class (``ratekeeper._ratekeeper.RateLimiter``) makes every
decision and does every blocking wait. This subclass adds the Guava-style
``create`` factory, the ``async`` methods, which reserve in Rust and sleep
with ``asyncio.sleep``, and the ``limited`` decorator (``LimitedCalls``).
It keeps no state of its own (``__slots__ = ()``), so calls to the native
methods cost the same through it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from ratekeeper import _ratekeeper
from ratekeeper._limited import Admission, Timeout, WaitsInBlocks

if TYPE_CHECKING:
    from typing_extensions import Self

    from ratekeeper._ratekeeper import ManualClock

_F = TypeVar("_F", bound=Callable[..., Any])


class RateLimiter(_ratekeeper.RateLimiter, WaitsInBlocks):
    """Guava's ``RateLimiter``: hands out permits at a configurable rate.

    Safe to share between threads and tasks. Build one with ``create``::

        limiter = RateLimiter.create(10.0)                # SmoothBursty, 10/s
        limiter = RateLimiter.create(10.0, warmup=5.0)    # SmoothWarmingUp
        limiter = RateLimiter.create(10.0, clock=ManualClock())   # for tests

    ``with limiter:`` (``async with limiter:``) waits for one permit before
    the block runs, as ``acquire()`` (``acquire_async()``) does.

    Like Guava's, it pre-consumes: a request of any size is granted as soon
    as the limiter is free, and the *next* request pays for it.
    """

    __slots__ = ()

    @classmethod
    def create(
        cls,
        permits_per_second: float,
        warmup: float | timedelta | None = None,
        *,
        max_burst_seconds: float | None = None,
        cold_factor: float | None = None,
        clock: ManualClock | None = None,
    ) -> Self:
        """Guava's ``RateLimiter.create``.

        Without ``warmup``: a ``SmoothBursty`` limiter that saves up at most
        ``max_burst_seconds`` (default 1.0) of permits while idle. With
        ``warmup`` (seconds or a ``timedelta``): a ``SmoothWarmingUp`` limiter
        that starts ``cold_factor`` (default 3.0) times slower and reaches
        ``permits_per_second`` after ``warmup`` of saturated use. ``clock``: a
        ``ManualClock`` for deterministic tests; real time by default.
        """
        return cls(
            permits_per_second,
            warmup,
            max_burst_seconds=max_burst_seconds,
            cold_factor=cold_factor,
            clock=clock,
        )

    async def acquire_async(self, permits: int = 1) -> float:
        """``acquire`` for ``asyncio``: takes ``permits`` and sleeps out the
        wait with ``asyncio.sleep``, never blocking the event loop. Returns
        the seconds waited, as ``acquire`` does.

        The permits are taken when the coroutine starts. If the task is
        cancelled during the wait, ``CancelledError`` propagates and the
        permits stay taken (a reservation cannot be handed back; Guava's
        cannot either): later requests wait as if this one had completed.
        On a ``ManualClock`` the clock is advanced by the wait and nothing
        sleeps.
        """
        waited, to_sleep = self._reserve(permits)
        if to_sleep > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(to_sleep)
        return waited

    async def try_acquire_async(self, permits: int = 1, timeout: float | timedelta = 0.0) -> bool:
        """``try_acquire`` for ``asyncio``: if ``permits`` can be had within
        ``timeout``, takes them, sleeps out the wait with ``asyncio.sleep``
        and returns ``True``; otherwise returns ``False`` at once, taking
        nothing. Cancellation during the wait behaves as in
        ``acquire_async``: the permits stay taken.
        """
        to_sleep = self._try_reserve(permits, timeout)
        if to_sleep is None:
            return False
        if to_sleep > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(to_sleep)
        return True

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(
        self,
        func: None = None,
        /,
        *,
        permits: int = 1,
        timeout: float | timedelta | None = None,
    ) -> Callable[[_F], _F]: ...

    def limited(
        self,
        func: _F | None = None,
        /,
        *,
        permits: int = 1,
        timeout: float | timedelta | None = None,
    ) -> _F | Callable[[_F], _F]:
        """A decorator: each call of the function first takes ``permits``.

        Works on plain and ``async`` functions (these wait with
        ``acquire_async``, never blocking the event loop)::

            @limiter.limited
            def fetch(url): ...

            @limiter.limited(permits=2, timeout=0.5)
            async def fetch_many(urls): ...

        Without ``timeout`` a call waits as long as needed. With one, a call
        that cannot get its permits within ``timeout`` raises
        ``RateLimitExceeded`` and the function is not called. The arguments
        are checked when decorating.
        """
        return self._decorate(func, permits, timeout)

    _UNIT = "permit"

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        self.can_acquire(amount, 0.0 if timeout is None else timeout)

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        if timeout is None:
            self.acquire(amount)
            return True, None
        return self.try_acquire(amount, timeout), None

    async def _admit_call_async(self, amount: int, timeout: Timeout) -> Admission:
        if timeout is None:
            await self.acquire_async(amount)
            return True, None
        return await self.try_acquire_async(amount, timeout), None
