"""``ConcurrencyLimiter`` and its ``Permit``: permits that cannot leak.

The native limiter (``ratekeeper._ratekeeper.ConcurrencyLimiter``) counts
requests in flight and runs the adaptive policies; a permit it hands out
is a native handle that is released exactly once, and released with no
sample if it is garbage-collected unreleased. ``Permit`` wraps the handle
as a context manager, sync and async, that releases it when the block
ends, saying how the request went:

* the block ended normally: a success (its round-trip time is a sample);
* it raised a timeout (``TimeoutError``, ``asyncio.TimeoutError``,
  ``concurrent.futures.TimeoutError``): a drop, the congestion signal;
* it raised anything else (a bug, a client error, a cancellation):
  ignored, no sample — as Netflix concurrency-limits' ``onIgnore``.

Calling ``success()``, ``dropped()`` or ``ignore()`` inside the block
decides instead.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, TypeVar, final, overload

from ratekeeper import _ratekeeper
from ratekeeper._limited import Admission, LimitedCalls, Timeout
from ratekeeper._ratekeeper import Decision, RateLimitExceeded

if TYPE_CHECKING:
    from typing_extensions import Self

    from ratekeeper._ratekeeper import _PermitHandle

_F = TypeVar("_F", bound=Callable[..., Any])


def _is_drop(exc: BaseException) -> bool:
    """Whether ``exc`` is a timeout: the builtin ``TimeoutError``, or
    asyncio's or concurrent.futures' own (distinct classes before Python
    3.11). Those two are looked up only if their modules were imported — an
    exception of theirs cannot exist otherwise — so that importing
    ratekeeper does not import asyncio (see __init__.py)."""
    if isinstance(exc, TimeoutError):
        return True
    for name in ("asyncio", "concurrent.futures"):
        module = sys.modules.get(name)
        if module is not None and isinstance(exc, module.TimeoutError):
            return True
    return False


@final
class Permit:
    """A request's permit from a ``ConcurrencyLimiter``: give it back when
    the request ends, exactly once — best with ``with`` or ``async with``,
    which do it whatever happens::

        with limiter.acquire() as permit:
            response = call_the_service()
            if response.status == 503:
                permit.dropped()            # else: success when the block ends

    A permit never released explicitly is released, with no sample, when it
    is garbage-collected.
    """

    __slots__ = ("_decision", "_handle")

    def __init__(self, handle: _PermitHandle, decision: Decision) -> None:
        self._handle = handle
        self._decision = decision

    @property
    def decision(self) -> Decision:
        """The limiter's ``Decision`` when the permit was taken (its
        ``remaining`` permits, its ``limit``)."""
        return self._decision

    @property
    def released(self) -> bool:
        """Whether the permit was given back."""
        return self._handle.released

    def success(self) -> int:
        """Gives the permit back: the request succeeded, and its round-trip
        time is a sample for an adaptive policy. Returns the new limit. Once
        released, does nothing (and returns the limit)."""
        return self._handle.success()

    def dropped(self) -> int:
        """Gives the permit back: the request was dropped or timed out, a
        congestion signal. Returns the new limit."""
        return self._handle.dropped()

    def ignore(self) -> int:
        """Gives the permit back with no sample (the request says nothing
        about the service). Returns the limit."""
        return self._handle.ignore()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self._handle.success()
        elif _is_drop(exc):
            self._handle.dropped()
        else:
            self._handle.ignore()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def __repr__(self) -> str:
        state = "released" if self.released else "held"
        return f"<Permit {state}, remaining={self._decision.remaining}>"


class ConcurrencyLimiter(_ratekeeper.ConcurrencyLimiter, LimitedCalls):
    """At most ``limit`` requests in flight; ``limit`` is an int, or a
    ``GradientPolicy`` or ``AimdPolicy`` that learns it from round-trip
    times (Netflix concurrency-limits)::

        limiter = ConcurrencyLimiter(GradientPolicy(max_limit=200))

        with limiter.acquire():               # RateLimitExceeded when full
            call_the_service()

        async with limiter.acquire():
            await call_the_service_async()

    Nothing here waits: when ``limit`` requests are in flight a new one is
    refused at once (load shedding), with a ``Decision`` whose
    ``retry_after`` is 0 (a permit frees up when a request ends, which
    nothing can foresee).
    """

    __slots__ = ()
    _UNIT = "permit"

    def try_acquire(self) -> Permit | None:
        """A permit if fewer than ``limit`` requests are in flight, else
        ``None``."""
        decision, handle = self._try_acquire()
        return None if handle is None else Permit(handle, decision)

    def acquire(self) -> Permit:
        """A permit, to use as a (sync or async) context manager; raises
        ``RateLimitExceeded`` (with the refusal's ``Decision``) when
        ``limit`` requests are in flight. Never waits."""
        decision, handle = self._try_acquire()
        if handle is None:
            exceeded = RateLimitExceeded(f"all {decision.limit} permits are in flight")
            exceeded.decision = decision
            raise exceeded
        return Permit(handle, decision)

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(self, func: None = None, /) -> Callable[[_F], _F]: ...

    def limited(self, func: _F | None = None, /) -> _F | Callable[[_F], _F]:
        """A decorator: each call holds a permit while it runs (released as
        the context manager of ``acquire`` releases it); a call made when
        ``limit`` are in flight raises ``RateLimitExceeded`` and is not
        made. Works on plain and ``async`` functions."""
        return self._decorate(func, 1, None)

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        pass

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        decision, handle = self._try_acquire()
        return decision, None if handle is None else Permit(handle, decision)
