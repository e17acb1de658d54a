"""The ``limited`` decorator, shared by every limiter class.

``LimitedCalls`` is a mixin (no state: ``__slots__ = ()``) holding what
every decorator of the package does the same way: check the decorator's
arguments when decorating, keep a plain function plain and an ``async``
one ``async``, run the call only when the limiter admits it, and raise
``RateLimitExceeded`` (with the limiter's ``Decision`` when it gave one)
when it does not. Each class says only how one call is admitted, through
two hooks:

* ``_admit_call(amount, timeout)`` — for a plain function; may block
  (with the GIL released);
* ``_admit_call_async(amount, timeout)`` — for an ``async`` one; must not
  block the event loop (the default calls ``_admit_call``, right for
  limiters that never wait).

Both return ``(answer, guard)``: ``answer`` is falsy when the call is
refused (``False``, or a refused ``Decision``), and ``guard`` is a context
manager the call runs in (a concurrency permit, released when the call
ends) or ``None``. A hook whose refusal says more than a ``Decision``
(``SystemGuard``'s threshold) raises its own ``RateLimitExceeded`` instead.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable
from contextlib import AbstractContextManager
from datetime import timedelta
from types import TracebackType
from typing import Any, Callable, NoReturn, Optional, TypeVar, Union, cast, overload

from ratekeeper._ratekeeper import ArgumentTypeError, Decision, RateLimitExceeded

_F = TypeVar("_F", bound=Callable[..., Any])

Timeout = Optional[Union[float, timedelta]]
"""A decorator's ``timeout``: seconds or a ``timedelta``; ``None`` for the
class's default (as long as it takes, for the classes that wait)."""

Admission = tuple[Union[Decision, bool], Optional[AbstractContextManager[Any]]]


def _check_limitable(func: Any) -> None:
    """Refuses, when decorating, what ``limited`` cannot wrap: an argument
    given first that is not a function (``@limiter.limited(2)`` meaning
    ``permits=2``) would otherwise fail only on the first call."""
    if not callable(func):
        shown = repr(func)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        error = ArgumentTypeError(
            f"invalid argument func = {shown}: must be the function to limit, "
            f"not {type(func).__name__} (the decorator's own arguments go by name, "
            "as in @limiter.limited(cost=2))"
        )
        error.argument = "func"
        error.value = func
        raise error


class LimitedCalls:
    """The decorator machinery; see the module's docstring."""

    __slots__ = ()

    # What the exception says is taken: "permit", "token", "unit".
    _UNIT = "unit"

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        """Checks the decorator's arguments, taking nothing (raises the
        library's argument errors)."""
        raise NotImplementedError

    def _admit_call(self, amount: int, timeout: Timeout) -> Admission:
        raise NotImplementedError

    async def _admit_call_async(self, amount: int, timeout: Timeout) -> Admission:
        return self._admit_call(amount, timeout)

    def _decorate(self, func: _F | None, amount: int, timeout: Timeout) -> _F | Callable[[_F], _F]:
        # Check the arguments now, so that a bad decorator argument fails at
        # import time rather than on a call.
        if func is not None:
            _check_limitable(func)
        self._check_call(amount, timeout)

        def decorate(f: _F) -> _F:
            _check_limitable(f)
            if inspect.iscoroutinefunction(f):
                return cast(_F, self._limit_async(f, amount, timeout))
            return cast(_F, self._limit_sync(f, amount, timeout))

        return decorate if func is None else decorate(func)

    def _limit_sync(
        self, f: Callable[..., Any], amount: int, timeout: Timeout
    ) -> Callable[..., Any]:
        @functools.wraps(f)
        def call_limited(*args: Any, **kwargs: Any) -> Any:
            answer, guard = self._admit_call(amount, timeout)
            if not answer:
                raise self._refused(f, amount, timeout, answer)
            if guard is None:
                return f(*args, **kwargs)
            with guard:
                return f(*args, **kwargs)

        return call_limited

    def _limit_async(
        self, f: Callable[..., Awaitable[Any]], amount: int, timeout: Timeout
    ) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(f)
        async def call_limited(*args: Any, **kwargs: Any) -> Any:
            answer, guard = await self._admit_call_async(amount, timeout)
            if not answer:
                raise self._refused(f, amount, timeout, answer)
            if guard is None:
                return await f(*args, **kwargs)
            with guard:
                return await f(*args, **kwargs)

        return call_limited

    def _refused(
        self, f: Callable[..., Any], amount: int, timeout: Timeout, answer: Decision | bool
    ) -> RateLimitExceeded:
        name = getattr(f, "__qualname__", repr(f))
        if timeout is None:
            message = f"{name}: {amount} {self._UNIT}(s) refused"
        else:
            message = f"{name}: {amount} {self._UNIT}(s) not available within {timeout!r}"
        decision = answer if isinstance(answer, Decision) else None
        if decision is not None:
            if decision.is_never:
                message += " (no wait can admit them)"
            elif decision.retry_after > 0.0:
                message += f" (retry after {decision.retry_after} s)"
        exceeded = RateLimitExceeded(message)
        exceeded.decision = decision
        return exceeded


class SpentOnLeaving:
    """The leaving half of ``with`` and ``async with`` on the limiters
    whose block waits for a unit on entering (``WaitsInBlocks``,
    ``CycleLimiter``): it does nothing. What the block took was a unit of
    a rate, spent once taken; only the concurrency limiters give something
    back when a block ends, and they have their own."""

    __slots__ = ()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None


class WaitsInBlocks(LimitedCalls, SpentOnLeaving):
    """``with limiter:`` and ``async with limiter:``, aiolimiter's idiom:
    entering the block waits for one unit (a permit, a token, a slot) as
    the undecorated ``limited`` does, ``async with`` without blocking the
    event loop; leaving it does nothing (what was taken is spent). A unit
    no wait can bring (a queue that is full, more than the burst) raises
    ``RateLimitExceeded`` on entering, with the ``Decision`` when there is
    one, and the block does not run.

    Only on the limiters that wait: those that admit now or refuse have
    ``check``, which a block would only hide."""

    __slots__ = ()

    def __enter__(self) -> None:
        answer, _ = self._admit_call(1, None)
        if not answer:
            raise self._refused_block(answer)

    async def __aenter__(self) -> None:
        answer, _ = await self._admit_call_async(1, None)
        if not answer:
            raise self._refused_block(answer)

    def _refused_block(self, answer: Decision | bool) -> RateLimitExceeded:
        decision = answer if isinstance(answer, Decision) else None
        message = f"{type(self).__name__}: 1 {self._UNIT} refused on entering the block"
        if decision is not None and decision.is_never:
            message += " (no wait can admit it)"
        exceeded = RateLimitExceeded(message)
        exceeded.decision = decision
        return exceeded


Key = Union[str, bytes]
"""A user key: ``str`` (its UTF-8) or ``bytes``, for every keyed limiter,
local or Redis."""

KeyOf = Union[Key, Callable[..., Key]]
"""A keyed decorator's ``key``: the key itself, or a function of the
decorated function's arguments that returns it."""


_KEY_USAGE = "as in @limiter.limited(key=lambda request: request.user) or @limiter.limited('all')"


def _key_argument(given: Any, key: Any) -> KeyOf:
    """The key of a keyed ``limited(given, key=key)``: a ``str`` or
    ``bytes`` given first, or ``key=``; ``ArgumentTypeError`` otherwise.

    A callable given first is refused even when it is a key function:
    ``@limiter.limited`` without parentheses passes the function to limit
    the same way, and taking it for a key function would return a decorator
    in its place — every call would then return a function and limit
    nothing."""
    if given is not None:
        if key is not None:
            _key_error(given, "given once: first (a str or bytes) or as key=, not both")
        if callable(given):
            _key_error(
                given,
                "a str or bytes when given first, not a function: a bare @limiter.limited "
                "on a keyed limiter would limit nothing; give a key function as key=, "
                + _KEY_USAGE,
            )
        key = given
    if key is None:
        _key_error(key, "given: a keyed limiter limits each call by its key, " + _KEY_USAGE)
    if not (callable(key) or isinstance(key, (str, bytes))):
        _key_error(
            key,
            "a str, bytes, or a function of the call's arguments returning one, "
            f"not {type(key).__name__}",
        )
    return cast(KeyOf, key)


def _key_error(value: object, requirement: str) -> NoReturn:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    error = ArgumentTypeError(f"invalid argument key = {shown}: must be {requirement}")
    error.argument = "key"
    error.value = value
    raise error


class KeyedCalls(LimitedCalls):
    """``limited`` for the limiters that decide per key (``KeyedLimiter``
    and the Redis limiters): each call's key is ``key`` or ``key(*args,
    **kwargs)`` of the call, and the call is made when ``check(key, cost)``
    admits it; otherwise ``RateLimitExceeded`` is raised with the refusal's
    ``Decision``, never waiting. Each class says how a key is checked:

    * ``_check_key(key, cost)`` — for a plain function;
    * ``_check_key_async(key, cost)`` — for an ``async`` one; must not block
      the event loop (the default calls ``_check_key``, right for limiters
      that decide in this process).
    """

    __slots__ = ()

    def _check_key(self, key: Key, cost: int) -> Decision:
        raise NotImplementedError

    async def _check_key_async(self, key: Key, cost: int) -> Decision:
        return self._check_key(key, cost)

    def _check_keyed_call(self, cost: int) -> None:
        """Checks the decorator's arguments when decorating, taking nothing
        and sending nothing."""
        raise NotImplementedError

    @overload
    def limited(self, given: Key, /, *, key: None = None, cost: int = 1) -> Callable[[_F], _F]: ...

    @overload
    def limited(
        self, given: None = None, /, *, key: KeyOf, cost: int = 1
    ) -> Callable[[_F], _F]: ...

    def limited(
        self, given: Any = None, /, *, key: Any = None, cost: int = 1
    ) -> Callable[[_F], _F]:
        """A decorator: each call first takes ``cost`` units for its key; a
        call refused raises ``RateLimitExceeded`` (``.decision`` says when to
        retry) and is not made. ``key=`` is the key, or a function that takes
        the call's arguments and returns it; a fixed key (``str`` or
        ``bytes``) may also come first::

            @limiter.limited(key=lambda request: request.user_id)
            def handle(request): ...

            @limiter.limited(key=lambda user, blob: f"upload:{user}", cost=5)
            async def upload(user, blob): ...

            @limiter.limited("reports")
            def report(): ...

        Works on plain and ``async`` functions (these never block the event
        loop). A key function goes by name only: passed first it could not be
        told from the function to limit, so a bare ``@limiter.limited``
        (which would limit nothing) raises ``ArgumentTypeError`` (a
        ``TypeError``) when decorating, as does a missing key.
        """
        chosen = _key_argument(given, key)
        self._check_keyed_call(cost)
        key_of: Callable[..., Key] = (
            chosen if callable(chosen) else (lambda *args, **kwargs: chosen)
        )

        def decorate(f: _F) -> _F:
            _check_limitable(f)
            if inspect.iscoroutinefunction(f):

                @functools.wraps(f)
                async def call_limited_async(*args: Any, **kwargs: Any) -> Any:
                    decision = await self._check_key_async(key_of(*args, **kwargs), cost)
                    if not decision:
                        raise self._refused(f, cost, None, decision)
                    return await f(*args, **kwargs)

                return cast(_F, call_limited_async)

            @functools.wraps(f)
            def call_limited(*args: Any, **kwargs: Any) -> Any:
                decision = self._check_key(key_of(*args, **kwargs), cost)
                if not decision:
                    raise self._refused(f, cost, None, decision)
                return f(*args, **kwargs)

            return cast(_F, call_limited)

        return decorate
