"""The load-driven limiters, ``Bbr`` (Kratos' BBR) and ``SystemGuard``
(Sentinel's system rule), and their permits.

Both read a load signal: ``SystemLoad`` (the CPU usage of the process's
cgroup or host and the load average, sampled on a background thread;
``SystemLoad.shared()`` when a limiter is given none) or ``ManualLoad``
(set by hand, for deterministic tests beside a ``ManualClock``). An
admitted request holds a permit until it ends; the permit is a context
manager, sync and async, that gives it back when the block ends, whatever
happens, and the limiter records the request's round-trip time. A permit
never given back is given back when it is garbage-collected.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, TypeVar, final, overload

from ratekeeper import _ratekeeper
from ratekeeper._limited import Admission, LimitedCalls, Timeout
from ratekeeper._ratekeeper import Decision, RateLimitExceeded

if TYPE_CHECKING:
    from typing_extensions import Self

    from ratekeeper._ratekeeper import _LoadPermitHandle

_F = TypeVar("_F", bound=Callable[..., Any])


class _HeldPermit:
    """What both permits do: give the native handle back exactly once."""

    __slots__ = ("_decision", "_handle")

    def __init__(self, handle: _LoadPermitHandle, decision: Decision) -> None:
        self._handle = handle
        self._decision = decision

    @property
    def decision(self) -> Decision:
        """The limiter's ``Decision`` when the permit was taken."""
        return self._decision

    @property
    def released(self) -> bool:
        """Whether the permit was given back."""
        return self._handle.released

    def release(self) -> None:
        """Gives the permit back: the request ended, and its round-trip time
        is recorded. Once released, does nothing."""
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
class BbrPermit(_HeldPermit):
    """A request's permit from a ``Bbr``: give it back when the request
    ends, exactly once — best with ``with`` or ``async with``."""

    __slots__ = ()


@final
class SystemPermit(_HeldPermit):
    """A request's permit from a ``SystemGuard``: give it back when the
    request ends, exactly once — best with ``with`` or ``async with``."""

    __slots__ = ()


class Bbr(_ratekeeper.Bbr, LimitedCalls):
    """Kratos' BBR limiter (go-kratos/aegis ``ratelimit/bbr``): load
    shedding that starts only when the CPU is at or above ``cpu_threshold``
    (or within ``cool_down`` seconds after shedding began), and then refuses
    a request when more are in flight than the service completes — the
    most requests completed in one bucket of the ``window`` times the lowest
    round-trip time::

        bbr = Bbr()                       # reads SystemLoad.shared()

        with bbr.acquire():               # RateLimitExceeded when shedding
            handle_the_request()

        @bbr.limited                      # the same, around each call
        def handle(request): ...

    Nothing here waits: a request is admitted or refused at once.
    """

    __slots__ = ()
    _UNIT = "permit"

    def try_acquire(self) -> BbrPermit | None:
        """A permit unless BBR sheds the request, else ``None``."""
        decision, handle = self._try_acquire()
        return None if handle is None else BbrPermit(handle, decision)

    def acquire(self) -> BbrPermit:
        """A permit, to use as a (sync or async) context manager; raises
        ``RateLimitExceeded`` (with the refusal's ``Decision``) when BBR
        sheds the request. Never waits."""
        decision, handle = self._try_acquire()
        if handle is None:
            exceeded = RateLimitExceeded(
                f"BBR is shedding: {decision.limit} requests in flight is its capacity"
            )
            exceeded.decision = decision
            raise exceeded
        return BbrPermit(handle, decision)

    def check(self) -> tuple[Decision, BbrPermit | None]:
        """The decision, and the permit when admitted."""
        decision, handle = self._try_acquire()
        return decision, None if handle is None else BbrPermit(handle, decision)

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(self, func: None = None, /) -> Callable[[_F], _F]: ...

    def limited(self, func: _F | None = None, /) -> _F | Callable[[_F], _F]:
        """A decorator: each call holds a permit while it runs (given back
        when it returns or raises); a call made while BBR sheds raises
        ``RateLimitExceeded`` (with the refusal's ``Decision``) and is not
        made. Works on plain and ``async`` functions."""
        return self._decorate(func, 1, None)

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        pass

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        return self.check()


class SystemGuard(_ratekeeper.SystemGuard, LimitedCalls):
    """Sentinel's system rule (``SystemRuleManager.checkSystem``): one
    guard at the entrance of a whole service, refusing new requests while
    it exceeds any of five thresholds, each optional — ``qps`` (admitted
    per second), ``max_thread`` (in flight), ``avg_rt`` (seconds),
    ``highest_system_load`` (the load average, with Sentinel's BBR check)
    and ``highest_cpu_usage`` (0.0 to 1.0)::

        guard = SystemGuard(max_thread=200, highest_cpu_usage=0.9)

        try:
            with guard.acquire():
                handle_the_request()
        except RateLimitExceeded as refused:
            print(refused.threshold)      # "qps", "thread", "rt", "load" or "cpu"

        @guard.limited(count=2)           # the same, around each call
        async def handle(request): ...

    Nothing here waits: a request is admitted or refused at once.
    """

    __slots__ = ()

    def try_acquire(self, count: int = 1) -> SystemPermit | None:
        """A permit for a request of ``count`` unless a threshold refuses
        it, else ``None``."""
        decision, handle, _ = self._try_acquire(count)
        return None if handle is None else SystemPermit(handle, decision)

    def acquire(self, count: int = 1) -> SystemPermit:
        """A permit, to use as a (sync or async) context manager; raises
        ``RateLimitExceeded`` with the refusal's ``decision`` and the
        ``threshold`` that refused it. Never waits."""
        decision, handle, threshold = self._try_acquire(count)
        if handle is None:
            exceeded = RateLimitExceeded(f"the system rule's {threshold} threshold is exceeded")
            exceeded.decision = decision
            exceeded.threshold = threshold
            raise exceeded
        return SystemPermit(handle, decision)

    def check(self, count: int = 1) -> tuple[Decision, SystemPermit | None, str | None]:
        """The decision, the permit when admitted, and the name of the
        threshold that refused it otherwise (``"qps"``, ``"thread"``,
        ``"rt"``, ``"load"`` or ``"cpu"``)."""
        decision, handle, threshold = self._try_acquire(count)
        permit = None if handle is None else SystemPermit(handle, decision)
        return decision, permit, threshold

    @overload
    def limited(self, func: _F, /) -> _F: ...

    @overload
    def limited(self, func: None = None, /, *, count: int = 1) -> Callable[[_F], _F]: ...

    def limited(self, func: _F | None = None, /, *, count: int = 1) -> _F | Callable[[_F], _F]:
        """A decorator: each call is a request of ``count`` holding a permit
        while it runs (given back when it returns or raises); a call a
        threshold refuses raises ``acquire``'s ``RateLimitExceeded`` (with
        its ``decision`` and ``threshold``) and is not made. Works on plain
        and ``async`` functions."""
        return self._decorate(func, count, None)

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        # A bad count fails when decorating, with the error acquire raises.
        _ratekeeper.SystemGuard._check_count(amount)

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        # acquire raises the refusal: its threshold is not in the Decision
        # the mixin would build the exception from.
        permit = self.acquire(amount)
        return permit.decision, permit
