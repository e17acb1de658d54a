"""The limiters shared through Redis: the native classes plus what is
naturally Python.

The native classes (``ratekeeper._ratekeeper``) make every decision, and
their blocking calls wait for Redis with the GIL released. These
subclasses add:

* the factories under the names of the Rust crate (``RedisStore.connect``,
  ``Membership.join``, ``RedisRateLimiter.create``) and their ``_async``
  forms, which connect on a worker thread (``loop.run_in_executor``) since
  connecting is blocking only;
* the ``…_async`` coroutines, which await the ``asyncio.Future`` a native
  ``_…_future`` method returns: the decision is made on ratekeeper's own
  thread and handed to the event loop with ``call_soon_threadsafe``, so
  the loop never blocks;
* the decorators (``limited``) and ``with``/``async with`` support: every
  object closes on leaving the block (``_Closes``).

They keep no state of their own (``__slots__ = ()``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from ratekeeper import _ratekeeper
from ratekeeper._limited import Admission, Key, KeyedCalls, LimitedCalls, Timeout
from ratekeeper._ratekeeper import ConcurrencyLease, Decision, Limiter, RedisRateLimiterState

if TYPE_CHECKING:
    import os

    from typing_extensions import Self, TypeAlias

    # A PEM option: a file's path, or the PEM text itself.
    _Pem: TypeAlias = "str | os.PathLike[str] | bytes | bytearray"

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


async def _in_thread(make: Callable[[], _T]) -> _T:
    """Runs a blocking constructor (it releases the GIL) on the loop's
    default executor."""
    import asyncio  # here, not at the top: see __init__.py

    return await asyncio.get_running_loop().run_in_executor(None, make)


class _Closes:
    """``with`` and ``async with`` support: leaving the block closes the
    object (a store closes everything made from it). ``async with`` closes
    on a worker thread: closing a membership or a divided limiter leaves
    its group, a round trip that must not block the event loop."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await _in_thread(self.close)


class RedisStore(_ratekeeper.RedisStore, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisStore.__doc__

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """Connects to one server (``redis://[user:password@]host[:port][/db]``,
        or ``rediss://`` for TLS), waiting at most ``connect_timeout`` (GIL
        released). Raises ``RedisUnavailableError`` (or ``RedisTimeoutError``)
        when it cannot, ``RedisAuthError`` when the server refuses the
        credentials, ``RedisTlsError`` when TLS cannot be set up.
        Defaults: ``timeout`` 0.1 s, ``connect_timeout`` 0.25 s,
        ``retry_interval`` 0.2 s; each at most an hour.

        ``username`` and ``password`` (an ACL user's) override the URL's.
        Any ``tls_`` option turns TLS on whatever the URL's scheme:
        ``tls_ca`` the certificates to trust (default: the system's roots),
        ``tls_cert`` and ``tls_key`` a client certificate for mutual TLS
        (both or neither), each a path (``str`` or ``os.PathLike``) or the
        PEM ``bytes`` themselves; ``tls_server_name`` the name the server's
        certificate must carry (default: the URL's host);
        ``tls_insecure_skip_verify=True`` encrypts but verifies nothing, so
        anyone who can intercept the connection can read and change it: for
        tests only."""
        return cls(
            url,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retry_interval=retry_interval,
            username=username,
            password=password,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_server_name=tls_server_name,
            tls_insecure_skip_verify=tls_insecure_skip_verify,
        )

    @classmethod
    def connect_cluster(
        cls,
        urls: Sequence[str],
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """Connects to a Redis Cluster through any of its nodes (``urls``:
        one or more). Each decision is still one script run on one node: a
        limiter's state for one key lives in one hash slot. The options are
        ``connect``'s, for every node."""
        return cls(
            urls,
            cluster=True,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retry_interval=retry_interval,
            username=username,
            password=password,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_server_name=tls_server_name,
            tls_insecure_skip_verify=tls_insecure_skip_verify,
        )

    @classmethod
    def connect_sentinel(
        cls,
        sentinels: Sequence[str],
        master_name: str,
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """Connects to the master that Redis Sentinel names ``master_name``,
        asking the ``sentinels`` (``redis://host:port``; a sentinel's own
        password in its URL, ``redis://:password@host:port``). The store
        follows a failover: when the master stops answering or answers
        ``READONLY``, the sentinels are asked again (at most once per
        ``retry_interval``, no call waiting past ``timeout``) and the store
        connects to the new master; meanwhile each limiter's
        ``when_unavailable`` decides. Options as ``connect``'s: the
        credentials and TLS settings are the master's."""
        return cls(
            sentinels,
            master_name=master_name,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retry_interval=retry_interval,
            username=username,
            password=password,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_server_name=tls_server_name,
            tls_insecure_skip_verify=tls_insecure_skip_verify,
        )

    @classmethod
    async def connect_sentinel_async(
        cls,
        sentinels: Sequence[str],
        master_name: str,
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """``connect_sentinel`` on a worker thread: never blocks the event loop."""
        return await _in_thread(
            functools.partial(
                cls.connect_sentinel,
                sentinels,
                master_name,
                timeout=timeout,
                connect_timeout=connect_timeout,
                retry_interval=retry_interval,
                username=username,
                password=password,
                tls_ca=tls_ca,
                tls_cert=tls_cert,
                tls_key=tls_key,
                tls_server_name=tls_server_name,
                tls_insecure_skip_verify=tls_insecure_skip_verify,
            )
        )

    @classmethod
    async def connect_async(
        cls,
        url: str,
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """``connect`` on a worker thread: never blocks the event loop."""
        return await _in_thread(
            functools.partial(
                cls.connect,
                url,
                timeout=timeout,
                connect_timeout=connect_timeout,
                retry_interval=retry_interval,
                username=username,
                password=password,
                tls_ca=tls_ca,
                tls_cert=tls_cert,
                tls_key=tls_key,
                tls_server_name=tls_server_name,
                tls_insecure_skip_verify=tls_insecure_skip_verify,
            )
        )

    @classmethod
    async def connect_cluster_async(
        cls,
        urls: Sequence[str],
        *,
        timeout: float | timedelta | None = None,
        connect_timeout: float | timedelta | None = None,
        retry_interval: float | timedelta | None = None,
        username: str | None = None,
        password: str | None = None,
        tls_ca: _Pem | None = None,
        tls_cert: _Pem | None = None,
        tls_key: _Pem | None = None,
        tls_server_name: str | None = None,
        tls_insecure_skip_verify: bool = False,
    ) -> Self:
        """``connect_cluster`` on a worker thread: never blocks the event loop."""
        return await _in_thread(
            functools.partial(
                cls.connect_cluster,
                urls,
                timeout=timeout,
                connect_timeout=connect_timeout,
                retry_interval=retry_interval,
                username=username,
                password=password,
                tls_ca=tls_ca,
                tls_cert=tls_cert,
                tls_key=tls_key,
                tls_server_name=tls_server_name,
                tls_insecure_skip_verify=tls_insecure_skip_verify,
            )
        )


class _SharedKeyedCalls(KeyedCalls):
    """The keyed decorator of the Redis limiters."""

    __slots__ = ()

    def _check_keyed_call(self, cost: int) -> None:
        # The cost's checks, without a round trip: a local peek takes nothing.
        _ratekeeper.FixedWindow(1, 1.0).peek(cost)


class RedisLimiter(_ratekeeper.RedisLimiter, _SharedKeyedCalls, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisLimiter.__doc__

    async def check_async(self, key: Key, cost: int = 1) -> Decision:
        """``check`` for ``asyncio``: the round trip never blocks the event
        loop. If the task is cancelled while Redis decides, the decision is
        still made (and may take the units)."""
        return await self._check_future(key, cost)

    async def peek_async(self, key: Key, cost: int = 1) -> Decision:
        """``peek`` for ``asyncio``: never blocks the event loop."""
        return await self._peek_future(key, cost)

    async def refund_async(self, key: Key, cost: int = 1) -> None:
        """``refund`` for ``asyncio``: never blocks the event loop."""
        await self._refund_future(key, cost)

    async def remove_async(self, key: Key) -> bool:
        """``remove`` for ``asyncio``: never blocks the event loop."""
        return await self._remove_future(key)

    def _check_key(self, key: Key, cost: int) -> Decision:
        return self.check(key, cost)

    async def _check_key_async(self, key: Key, cost: int) -> Decision:
        return await self.check_async(key, cost)


class RedisCompositeLimiter(_ratekeeper.RedisCompositeLimiter, _SharedKeyedCalls, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisCompositeLimiter.__doc__

    async def check_async(self, key: Key, cost: int = 1) -> tuple[Decision, list[Decision]]:
        """``check`` for ``asyncio``: the round trip never blocks the event
        loop. If the task is cancelled while Redis decides, the decision is
        still made (and may take the units)."""
        return await self._check_future(key, cost)

    async def peek_async(self, key: Key, cost: int = 1) -> tuple[Decision, list[Decision]]:
        """``peek`` for ``asyncio``: never blocks the event loop."""
        return await self._peek_future(key, cost)

    async def refund_async(self, key: Key, cost: int = 1) -> None:
        """``refund`` for ``asyncio``: never blocks the event loop."""
        await self._refund_future(key, cost)

    async def remove_async(self, key: Key) -> bool:
        """``remove`` for ``asyncio``: never blocks the event loop."""
        return await self._remove_future(key)

    # The decorator (``limited``) admits a call on the combined decision.
    def _check_key(self, key: Key, cost: int) -> Decision:
        return self.check(key, cost)[0]

    async def _check_key_async(self, key: Key, cost: int) -> Decision:
        return (await self.check_async(key, cost))[0]


class RedisLeasedLimiter(_ratekeeper.RedisLeasedLimiter, _SharedKeyedCalls, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisLeasedLimiter.__doc__

    async def check_async(self, key: Key, cost: int = 1) -> Decision:
        """``check`` for ``asyncio``: a decision the lease makes is ready at
        once; a new lease's round trip never blocks the event loop."""
        return await self._check_future(key, cost)

    async def peek_async(self, key: Key, cost: int = 1) -> Decision:
        """``peek`` for ``asyncio``: a peek the lease answers is ready at
        once; a round trip never blocks the event loop."""
        return await self._peek_future(key, cost)

    async def remove_async(self, key: Key) -> bool:
        """``remove`` for ``asyncio``: never blocks the event loop."""
        return await self._remove_future(key)

    def _check_key(self, key: Key, cost: int) -> Decision:
        return self.check(key, cost)

    async def _check_key_async(self, key: Key, cost: int) -> Decision:
        return await self.check_async(key, cost)


class RedisDividedLimiter(_ratekeeper.RedisDividedLimiter, _SharedKeyedCalls, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisDividedLimiter.__doc__

    @classmethod
    async def create_async(
        cls,
        store: RedisStore,
        name: str,
        template: Limiter,
        *,
        heartbeat_ttl: float | timedelta,
        max_keys: int,
        max_key_bytes: int = 256,
    ) -> Self:
        """Joins the group on a worker thread: never blocks the event loop."""
        return await _in_thread(
            functools.partial(
                cls,
                store,
                name,
                template,
                heartbeat_ttl=heartbeat_ttl,
                max_keys=max_keys,
                max_key_bytes=max_key_bytes,
            )
        )

    def _check_key(self, key: Key, cost: int) -> Decision:
        return self.check(key, cost)


class Membership(_ratekeeper.Membership, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.Membership.__doc__

    @classmethod
    def join(cls, store: RedisStore, group: str, ttl: float | timedelta) -> Self:
        """Joins ``group`` as a new node, heartbeating every third of
        ``ttl`` (3 ms to a day); blocks for the first heartbeat (GIL
        released) and raises ``RedisUnavailableError`` if Redis cannot be
        reached."""
        return cls(store, group, ttl)

    @classmethod
    async def join_async(cls, store: RedisStore, group: str, ttl: float | timedelta) -> Self:
        """``join`` on a worker thread: never blocks the event loop."""
        return await _in_thread(functools.partial(cls, store, group, ttl))

    async def refresh_async(self) -> int:
        """``refresh`` on a worker thread: never blocks the event loop."""
        return await _in_thread(self.refresh)


class RedisConcurrencyLimiter(_ratekeeper.RedisConcurrencyLimiter, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisConcurrencyLimiter.__doc__

    async def try_acquire_async(self, permits: int = 1) -> tuple[Decision, ConcurrencyLease | None]:
        """``try_acquire`` for ``asyncio``: never blocks the event loop. If
        the task is cancelled while Redis decides, a lease may still be
        taken; it expires by itself."""
        return await self._try_acquire_future(permits)

    async def release_async(self, lease: ConcurrencyLease) -> bool:
        """``release`` for ``asyncio``: never blocks the event loop."""
        return await self._release_future(lease)

    async def renew_async(self, lease: ConcurrencyLease) -> bool:
        """``renew`` for ``asyncio``: never blocks the event loop."""
        return await self._renew_future(lease)

    async def peek_async(self, permits: int = 1) -> Decision:
        """``peek`` for ``asyncio``: never blocks the event loop."""
        return await self._peek_future(permits)

    async def reset_async(self) -> bool:
        """``reset`` for ``asyncio``: never blocks the event loop."""
        return await self._reset_future()

    async def held_async(self) -> int:
        """``held`` on a worker thread: never blocks the event loop."""
        return await _in_thread(self.held)


class RedisRateLimiter(_ratekeeper.RedisRateLimiter, LimitedCalls, _Closes):
    __slots__ = ()
    __doc__ = _ratekeeper.RedisRateLimiter.__doc__

    @classmethod
    def create(
        cls,
        store: RedisStore,
        name: str,
        permits_per_second: float,
        warmup: float | timedelta | None = None,
        *,
        max_burst_seconds: float | None = None,
        cold_factor: float | None = None,
        idle_ttl: float | timedelta | None = None,
    ) -> Self:
        """Guava's ``RateLimiter.create``, shared: connects to the limiter
        ``name``, creating it unless another process already has (its rate
        and parameters are then kept). Blocks for one round trip, GIL
        released."""
        return cls(
            store,
            name,
            permits_per_second,
            warmup,
            max_burst_seconds=max_burst_seconds,
            cold_factor=cold_factor,
            idle_ttl=idle_ttl,
        )

    @classmethod
    async def create_async(
        cls,
        store: RedisStore,
        name: str,
        permits_per_second: float,
        warmup: float | timedelta | None = None,
        *,
        max_burst_seconds: float | None = None,
        cold_factor: float | None = None,
        idle_ttl: float | timedelta | None = None,
    ) -> Self:
        """``create`` on a worker thread: never blocks the event loop."""
        return await _in_thread(
            functools.partial(
                cls,
                store,
                name,
                permits_per_second,
                warmup,
                max_burst_seconds=max_burst_seconds,
                cold_factor=cold_factor,
                idle_ttl=idle_ttl,
            )
        )

    async def acquire_async(self, permits: int = 1) -> float:
        """``acquire`` for ``asyncio``: takes ``permits`` (a round trip that
        never blocks the event loop), sleeps out the wait with
        ``asyncio.sleep`` and returns it in seconds. A task cancelled during
        the wait keeps its permits taken, as with ``RateLimiter``."""
        wait = await self._reserve_future(permits)
        if wait > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(wait)
        return wait

    async def try_acquire_async(self, permits: int = 1, timeout: float | timedelta = 0.0) -> bool:
        """``try_acquire`` for ``asyncio``: if ``permits`` can be had within
        ``timeout``, takes them, sleeps out the wait with ``asyncio.sleep``
        and returns ``True``; otherwise ``False``, taking nothing."""
        wait = await self._try_reserve_future(permits, timeout)
        if wait is None:
            return False
        if wait > 0.0:
            import asyncio  # here, not at the top: see __init__.py

            await asyncio.sleep(wait)
        return True

    async def time_until_available_async(self, permits: int = 1) -> float:
        """``time_until_available`` for ``asyncio``."""
        return await self._time_until_available_future(permits)

    async def can_acquire_async(self, permits: int = 1, timeout: float | timedelta = 0.0) -> bool:
        """``can_acquire`` for ``asyncio``."""
        return await self._can_acquire_future(permits, timeout)

    async def inspect_async(self) -> RedisRateLimiterState:
        """``inspect`` for ``asyncio``."""
        return await self._inspect_future()

    async def reset_async(self) -> bool:
        """``reset`` for ``asyncio``."""
        return await self._reset_future()

    async def get_rate_async(self) -> float:
        """The ``rate`` property for ``asyncio``."""
        return await self._rate_future()

    async def set_rate_async(self, permits_per_second: float) -> None:
        """Sets the ``rate`` for every process sharing the limiter, for
        ``asyncio``."""
        await self._set_rate_future(permits_per_second)

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
        """A decorator: each call first takes ``permits`` from the shared
        limiter, as ``RateLimiter.limited`` does (``acquire``, or
        ``acquire_async`` for an ``async`` function; with ``timeout``,
        ``try_acquire`` and ``RateLimitExceeded`` when refused)."""
        return self._decorate(func, permits, timeout)

    _UNIT = "permit"

    def _check_call(self, amount: int, timeout: Timeout) -> None:
        # Checked here without a round trip: a Decision-less local check.
        _ratekeeper.RateLimiter(1.0).can_acquire(amount, 0.0 if timeout is None else timeout)

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
