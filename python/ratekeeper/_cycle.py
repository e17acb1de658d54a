"""``CycleLimiter``: Resilience4j's ``AtomicRateLimiter``.

The native class (``ratekeeper._ratekeeper.CycleLimiter``) makes every
decision and does the blocking wait; this subclass adds the ``async`` wait,
which decides in Rust and sleeps with ``asyncio.sleep``, counted among the
waiting callers of ``metrics()`` while it sleeps.
"""

from __future__ import annotations

from ratekeeper import _ratekeeper
from ratekeeper._limited import SpentOnLeaving
from ratekeeper._ratekeeper import RateLimitExceeded


class CycleLimiter(_ratekeeper.CycleLimiter, SpentOnLeaving):
    """Resilience4j's ``AtomicRateLimiter``: ``limit_for_period`` permits per
    cycle of ``limit_refresh_period`` seconds, counted from the limiter's
    creation; permits a cycle leaves unused carry over, never above
    ``limit_for_period``. A request the current cycle cannot serve waits for
    the first cycle by which enough permits will have come, and is reserved
    only if that wait is at most ``timeout_duration`` seconds::

        limiter = CycleLimiter(10, 1.0, 0.5)   # 10 per second, wait <= 0.5 s
        if limiter.acquire_permission():       # blocks (GIL released) if need be
            call_the_service()
        wait = limiter.reserve_permission(2)   # seconds to wait, or None
        with limiter:                          # acquire_permission(), or raise
            call_the_service()
        async with limiter:                    # the same, for asyncio
            await call_the_service_async()

    Durations are seconds or a ``datetime.timedelta``, in whole
    microseconds; ``clock=ManualClock()`` makes it deterministic. Safe to
    share between threads and tasks. A ``with`` (``async with``) block
    whose permit is not had within ``timeout_duration`` raises
    ``RateLimitExceeded`` on entering, after that wait, and does not run.
    """

    __slots__ = ()

    async def acquire_permission_async(self, permits: int = 1) -> bool:
        """``acquire_permission`` for ``asyncio``: decides at once, then
        sleeps out the wait with ``asyncio.sleep``, never blocking the event
        loop; ``True`` when the permits were taken. Refused, it takes nothing
        and sleeps the timeout first, as Resilience4j does.

        If the task is cancelled during the wait, the permits stay taken (a
        reservation cannot be handed back). On a ``ManualClock`` the clock is
        advanced by the wait and nothing sleeps.
        """
        acquired, to_sleep = self._acquire_for_event_loop(permits)
        if to_sleep > 0.0:
            self._count_waiting(True)
            try:
                import asyncio  # here, not at the top: see __init__.py

                await asyncio.sleep(to_sleep)
            finally:
                self._count_waiting(False)
        return acquired

    def __enter__(self) -> None:
        if not self.acquire_permission():
            raise self._refused_block()

    async def __aenter__(self) -> None:
        if not await self.acquire_permission_async():
            raise self._refused_block()

    def _refused_block(self) -> RateLimitExceeded:
        return RateLimitExceeded(
            f"CycleLimiter: 1 permit not available within {self.timeout_duration} s "
            "on entering the block"
        )
