"""Sentinel's flow rule: ``FlowController`` (with ``FlowRule`` and
``FlowStats`` from the extension) and its permits, ``FlowPermit`` and
``FlowEntry``.

A ``FlowController`` holds one ``FlowRule`` for one resource and Sentinel's
sliding statistics of that resource. ``check`` decides without waiting;
``entry`` (Sentinel's ``SphU.entry``) also waits out a queueing or
occupying wait before it returns. Either way an admitted request holds its
permit until it ends: the permit is a context manager, sync and async, that
ends the request when the block ends (its RT is recorded and, for the thread
grade, it leaves flight). A permit never ended is ended when it is
garbage-collected.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, final

from ratekeeper import _ratekeeper
from ratekeeper._ratekeeper import Decision, RateLimitExceeded

if TYPE_CHECKING:
    from typing_extensions import Self

    from ratekeeper._ratekeeper import _FlowPermitHandle


class _FlowHeld:
    """What both permits do: end the request exactly once."""

    __slots__ = ("_decision", "_handle")

    def __init__(self, handle: _FlowPermitHandle, decision: Decision) -> None:
        self._handle = handle
        self._decision = decision

    @property
    def decision(self) -> Decision:
        """The decision that admitted the request (its ``wait`` is the
        queueing or occupying wait)."""
        return self._decision

    @property
    def released(self) -> bool:
        """Whether the request was ended."""
        return self._handle.released

    def release(self) -> None:
        """Ends the request: its completion and RT are recorded, and it
        leaves flight. Once ended, does nothing."""
        self._handle.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._handle.release()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._handle.release()

    def __repr__(self) -> str:
        state = "released" if self.released else "held"
        return f"<{type(self).__name__} {state}>"


@final
class FlowPermit(_FlowHeld):
    """An admitted request of ``FlowController.check``, which did not wait:
    the caller waits ``decision.wait`` itself, then ends the request
    exactly once (``release``, or ``with`` / ``async with``)."""

    __slots__ = ()


@final
class FlowEntry(_FlowHeld):
    """An admitted request of ``FlowController.entry`` (Sentinel's
    ``Entry``), its wait already waited: end it exactly once with ``exit``
    (or ``release``), or use it with ``with`` / ``async with``."""

    __slots__ = ()

    def exit(self) -> None:
        """Ends the request (Sentinel's ``Entry.exit``); the same as
        ``release``."""
        self._handle.release()


def _refused(decision: Decision) -> RateLimitExceeded:
    exceeded = RateLimitExceeded(
        f"the flow rule refused the request ({decision.limit} is its count)"
    )
    exceeded.decision = decision
    return exceeded


class FlowController(_ratekeeper.FlowController):
    """Sentinel's flow rule for one resource (``FlowRule``, checked by
    ``FlowRuleChecker``) over Sentinel's sliding statistics of
    ``sample_count`` buckets in ``interval_ms``::

        flow = FlowController(FlowRule(10, control_behavior="rate_limiter"))

        with flow.entry():                # waits its turn, 100 ms apart
            handle_the_request()          # RateLimitExceeded if the queue is full

        async with await flow.entry_async(prioritized=True):
            ...                           # may occupy the next window

    ``check`` decides without waiting; ``entry``, ``try_entry`` and
    ``entry_async`` wait an admitted request's queueing (the rate limiter
    behaviours) or occupying (a prioritized request of the default
    behaviour) wait before they return.
    """

    __slots__ = ()

    def check(
        self, acquire_count: int = 1, prioritized: bool = False
    ) -> tuple[Decision, FlowPermit | None]:
        """The decision now, without waiting, and the permit when admitted
        (whose ``decision.wait`` the caller must wait before going on)."""
        decision, handle = self._check(acquire_count, prioritized)
        return decision, None if handle is None else FlowPermit(handle, decision)

    def try_entry(self, acquire_count: int = 1, prioritized: bool = False) -> FlowEntry | None:
        """An entry, after sleeping its wait (the GIL released), or ``None``
        at once when refused."""
        decision, handle = self._entry(acquire_count, prioritized)
        return None if handle is None else FlowEntry(handle, decision)

    def entry(self, acquire_count: int = 1, prioritized: bool = False) -> FlowEntry:
        """``try_entry``, raising ``RateLimitExceeded`` (with the refusal's
        ``decision``) when refused."""
        decision, handle = self._entry(acquire_count, prioritized)
        if handle is None:
            raise _refused(decision)
        return FlowEntry(handle, decision)

    async def entry_async(self, acquire_count: int = 1, prioritized: bool = False) -> FlowEntry:
        """``entry`` awaiting its wait on the event loop (a ``ManualClock``
        moves instead)."""
        decision, handle, sleep = self._entry_async(acquire_count, prioritized)
        if handle is None:
            raise _refused(decision)
        entry = FlowEntry(handle, decision)
        if sleep > 0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(sleep)
        return entry

    def release(self, permit: FlowPermit | FlowEntry) -> None:
        """Ends the request of ``permit``; the same as ``permit.release()``."""
        permit.release()
