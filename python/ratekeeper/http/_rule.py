"""``RateLimit``: what every framework adapter of ``ratekeeper.http`` does
the same way, on a ``Request`` view the adapter builds.

A rule answers one question per request: exempt (``None``), or an
``Outcome`` — the ``Decision`` and the response's header fields, already
written by the Rust core (``ratekeeper::http``) in the chosen style. The
adapters (``asgi``, ``wsgi``, ``flask``, ``django``, ``fastapi``) only turn
that into their framework's response.

No framework is imported here, and nothing of ``asyncio`` until a
coroutine awaits (see ``ratekeeper/__init__.py``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from ratekeeper._ratekeeper import (
    ArgumentTypeError,
    Decision,
    InvalidArgumentError,
    KeyedLimiter,
    KeyedLimits,
    Limiter,
    ManualClock,
    RedisCompositeLimiter,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisStore,
    TrustedProxies,
    client_key,
    parse_limits,
    response_fields,
)

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from ratekeeper._ratekeeper import _Algorithm, _HeaderStyle, _WhenUnavailable


class Request:
    """What a key, cost or refusal function sees of a request, the same in
    every framework: ``method`` (upper case), ``path`` (as the client sent
    it, without the query), ``peer`` (the TCP peer's address, ``None`` when
    the server names none), ``header(name)``, ``client`` (the client's
    address through the rule's trusted proxies), ``user`` (the
    authenticated user's id where the framework says, else ``None``) and
    ``native`` (the framework's own object: an ASGI scope, a WSGI environ,
    a Flask or Django request)."""

    __slots__ = ("_client", "_trusted")

    def __init__(self, trusted: TrustedProxies) -> None:
        self._trusted = trusted
        self._client: str | None = None

    @property
    def method(self) -> str:
        raise NotImplementedError

    @property
    def path(self) -> str:
        raise NotImplementedError

    @property
    def peer(self) -> str | None:
        raise NotImplementedError

    @property
    def native(self) -> object:
        raise NotImplementedError

    @property
    def user(self) -> str | None:
        return None

    def header(self, name: str) -> str | None:
        """The field's value (several lines joined by ``", "``), or ``None``."""
        raise NotImplementedError

    @property
    def client(self) -> str:
        """The client's address: the TCP peer, or, while that hop is a
        trusted proxy, the hop before it named by ``Forwarded`` or
        ``X-Forwarded-For`` (``TrustedProxies.client_address``). An
        untrusted peer's forwarding headers are ignored. A peer that is not
        an IP address (a Unix socket's) is its own key; none at all is
        ``""``."""
        if self._client is None:
            peer = self.peer
            if not peer:
                self._client = ""
            elif self._trusted.empty:
                self._client = peer
            else:
                try:
                    self._client = self._trusted.client_address(
                        peer, self.header("forwarded"), self.header("x-forwarded-for")
                    )
                except InvalidArgumentError:
                    self._client = peer
        return self._client


def identity(user: object) -> str | None:
    """An authenticated user's id, from what frameworks call a user:
    ``None`` or one whose ``is_authenticated`` is false is anonymous; else
    its ``identity`` (Starlette), ``pk`` (Django), ``get_id()``
    (Flask-Login), ``username``, or its ``str``."""
    if user is None or not getattr(user, "is_authenticated", True):
        return None
    if isinstance(user, str):
        return user
    for attribute in ("identity", "pk", "get_id", "username"):
        try:
            value = getattr(user, attribute, None)
            if callable(value):
                value = value()
        except NotImplementedError:
            continue
        if value is not None and value != "":
            return str(value)
    return str(user)


Key = Union[str, bytes]
KeyFunction: TypeAlias = Callable[[Request], Optional[Key]]
"""Returns a request's key; ``None`` leaves the request unlimited."""
CostFunction: TypeAlias = Callable[[Request], int]
Body: TypeAlias = Union[str, bytes, Mapping[str, Any], Sequence[Any], tuple[Union[str, bytes], str]]
"""A refusal's body: ``str`` (text/plain), ``bytes`` (application/octet-stream),
a ``dict`` or ``list`` (JSON), or ``(body, content_type)``."""
RefusalFunction: TypeAlias = Callable[[Request, Decision], Body]


def by_client_address(request: Request) -> str:
    """The default key: the client's address (``Request.client``), an IPv6
    client's as its /56 block (``client_key``: a subscriber is given a whole
    block and could rotate through its addresses; as express-rate-limit's
    ``ipv6Subnet``). ``client_address_key`` chooses another prefix."""
    return _client_key(request.client, 56)


def client_address_key(ipv6_prefix: int = 56) -> KeyFunction:
    """``by_client_address`` with an IPv6 client keyed by the first
    ``ipv6_prefix`` bits of its address (1 to 128: 64 for a single
    subnet, 128 for the address alone). A prefix out of range raises
    ``InvalidArgumentError`` here, not on the first request."""
    client_key("::", ipv6_prefix)

    def key(request: Request) -> str:
        return _client_key(request.client, ipv6_prefix)

    return key


def _client_key(client: str, ipv6_prefix: int) -> str:
    # Only IPv6 (and IPv4-mapped) addresses have a colon: the rest is the
    # key as it is, a peer that is not an IP address (a Unix socket's) too.
    if ":" not in client:
        return client
    try:
        return client_key(client, ipv6_prefix)
    except InvalidArgumentError:
        return client


def by_header(name: str, *, fallback: KeyFunction | None = by_client_address) -> KeyFunction:
    """A key from a request header (an API key, a tenant id), or
    ``fallback``'s when the request has none (``None``: unlimited then).
    Keys are ``header:<name>:<value>``, so that they never meet an
    address."""
    if not isinstance(name, str) or not name:
        raise _type_error("name", name, "a header's name (a non-empty str)")
    lowered = name.lower()
    prefix = f"header:{lowered}:"

    def key(request: Request) -> Key | None:
        value = request.header(lowered)
        if value is None:
            return None if fallback is None else fallback(request)
        return prefix + value

    return key


def by_user(*, fallback: KeyFunction | None = by_client_address) -> KeyFunction:
    """A key per authenticated user (``Request.user``: Starlette's
    ``scope["user"]``, Django's ``request.user``, Flask-Login's
    ``current_user``, a WSGI ``REMOTE_USER``), ``user:<id>``; anonymous
    requests get ``fallback``'s key (``None``: unlimited)."""

    def key(request: Request) -> Key | None:
        user = request.user
        if user is None:
            return None if fallback is None else fallback(request)
        return "user:" + user

    return key


class Outcome:
    """A limited request's answer: ``allowed``, the ``decision`` (the
    combined one of several limits), and the response's header ``fields``
    (name, value) in the rule's style — on an admitted response as on a
    refusal, with ``Retry-After`` on a refusal a wait can admit."""

    __slots__ = ("allowed", "decision", "fields", "parts")

    def __init__(
        self, decision: Decision, parts: Sequence[Decision], fields: list[tuple[str, str]]
    ) -> None:
        self.allowed = decision.allowed
        self.decision = decision
        self.parts = parts
        self.fields = fields

    def __repr__(self) -> str:
        return f"Outcome(allowed={self.allowed}, fields={self.fields!r})"


Limits = Union[
    str,
    KeyedLimits,
    KeyedLimiter,
    RedisLimiter,
    RedisCompositeLimiter,
    RedisLeasedLimiter,
    RedisDividedLimiter,
    Limiter,
]

_HEADER_STYLES = ("draft-6", "draft-7", "draft-8", "none")
_DEFAULT_BODY = "Too Many Requests\n"
# Longer keys (a header's value is the client's to choose) are hashed, so
# that no request can fail on a limiter's max_key_bytes.
_MAX_KEY_BYTES = 128


class RateLimit:
    """An HTTP rate limit: what is limited, per what key, at what cost, and
    how the response says so. Give it to a framework adapter::

        from ratekeeper.http import RateLimit
        from ratekeeper.http.asgi import RateLimitMiddleware

        app = RateLimitMiddleware(app, RateLimit("100/minute; 1000/hour"))

    ``limits``: limits as text (``"10/minute"``, ``"10 per minute"``,
    ``"100/hour; 1000/day"``: several are all or nothing), with
    ``algorithm`` (``sliding_window_counter`` by default), in this process
    (at most ``max_keys`` keys) or, with ``store``, shared through Redis
    (a ``RedisLimiter`` named ``"{name}:{policy}"`` for one limit, a
    ``RedisCompositeLimiter`` named ``name`` for several, all or nothing in
    one round trip: give each application its own ``name``;
    ``when_unavailable``: ``"error"``, the default, fails the request,
    ``"fail_open"`` admits, ``"fail_closed"`` refuses); or any ratekeeper
    limiter: a ``KeyedLimiter``, a Redis keyed limiter (awaited on ASGI:
    the event loop never blocks), or an unkeyed ``Limiter`` (one budget
    for every request), whose policy is named ``policy`` (a
    ``RedisCompositeLimiter``'s parts: ``policy-1``, ``policy-2``...). In this
    process, ``when_full`` says what happens to a new key when ``max_keys``
    are held and none can be forgotten yet: refused (the default: memory
    stays bounded and nothing is over-admitted) or ``"evict_soonest_full"``.

    ``key``: a function of the ``Request`` (``by_client_address``, the
    default; ``by_header(name)``; ``by_user()``; any callable); ``None``
    from it leaves the request unlimited. ``trusted_proxies``: the proxies
    (addresses, CIDR blocks, ``"loopback"``, ``"private"``) whose
    ``Forwarded`` / ``X-Forwarded-For`` name the client; none by default,
    so a client cannot choose its key by sending those headers.

    ``cost``: units per request, or a function of the ``Request``.
    ``exempt_paths``: path prefixes never limited (``"/health"`` exempts
    ``/health`` and ``/health/…``, not ``/healthz``); ``exempt_methods``:
    methods never limited (``"OPTIONS"``).

    ``header_style``: ``"draft-8"`` (``RateLimit`` and ``RateLimit-Policy``
    as structured lists, the default), ``"draft-7"``, ``"draft-6"`` or
    ``"none"``; ``legacy_headers=True`` adds ``X-RateLimit-Limit``,
    ``-Remaining`` and ``-Reset``. ``refusal``: builds the 429's body from
    the ``Request`` and the ``Decision`` (a ``str``, ``bytes``, a
    ``dict``/``list`` sent as JSON, or ``(body, content_type)``).
    """

    __slots__ = (
        "_backend",
        "_cost",
        "_exempt_methods",
        "_exempt_paths",
        "_key",
        "_legacy",
        "_names",
        "_refusal",
        "_style",
        "trusted_proxies",
    )

    def __init__(
        self,
        limits: Limits,
        *,
        key: KeyFunction = by_client_address,
        cost: int | CostFunction = 1,
        trusted_proxies: Iterable[str] | TrustedProxies = (),
        exempt_paths: Iterable[str] = (),
        exempt_methods: Iterable[str] = (),
        header_style: _HeaderStyle = "draft-8",
        legacy_headers: bool = False,
        refusal: RefusalFunction | None = None,
        algorithm: _Algorithm = "sliding_window_counter",
        store: RedisStore | None = None,
        name: str = "http",
        when_unavailable: _WhenUnavailable = "error",
        policy: str = "default",
        max_keys: int = 100_000,
        when_full: Literal["refuse_new_keys", "evict_soonest_full"] = "refuse_new_keys",
        clock: ManualClock | None = None,
    ) -> None:
        if not callable(key):
            raise _type_error("key", key, "a function of the Request returning its key")
        if not (callable(cost) or (isinstance(cost, int) and not isinstance(cost, bool))):
            raise _type_error("cost", cost, "an int, or a function of the Request returning one")
        if isinstance(cost, int) and cost < 0:
            raise _value_error("cost", cost, "at least 0")
        if refusal is not None and not callable(refusal):
            raise _type_error("refusal", refusal, "a function of (Request, Decision)")
        if header_style not in _HEADER_STYLES:
            raise _value_error("header_style", header_style, "one of " + ", ".join(_HEADER_STYLES))
        self._key = key
        self._cost = cost
        self._style: _HeaderStyle = header_style
        self._legacy = bool(legacy_headers)
        self._refusal = refusal
        self.trusted_proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(_strings("trusted_proxies", trusted_proxies))
        )
        self._exempt_paths = tuple(p.rstrip("/") for p in _strings("exempt_paths", exempt_paths))
        self._exempt_methods = frozenset(
            m.upper() for m in _strings("exempt_methods", exempt_methods)
        )
        backend, names = _backend(
            limits, algorithm, (store, name, when_unavailable), policy, max_keys, when_full, clock
        )
        self._backend: _Backend = backend
        self._names: tuple[str, ...] = names
        # A bad policy name fails here, not on the first request.
        probe = Decision(True, 1, 1)
        response_fields(probe, [probe] * len(names), names, self._style, self._legacy, 0)

    @property
    def policies(self) -> tuple[str, ...]:
        """The policy names the header fields carry, one per limit."""
        return self._names

    def exempt(self, method: str, path: str) -> bool:
        """Whether a request is never limited, by its method or path."""
        if method in self._exempt_methods:
            return True
        for prefix in self._exempt_paths:
            if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] == "/"):
                return True
        return False

    def _key_and_cost(self, request: Request) -> tuple[Key, int] | None:
        if (self._exempt_paths or self._exempt_methods) and self.exempt(
            request.method, request.path
        ):
            return None
        key = self._key(request)
        if key is None:
            return None
        if len(key) > _MAX_KEY_BYTES // 4:
            key = _bounded(key)
        cost = self._cost
        if not isinstance(cost, int):
            cost = cost(request)
        return key, cost

    def _outcome(self, decision: Decision, parts: Sequence[Decision]) -> Outcome:
        fields = response_fields(
            decision, parts, self._names, self._style, self._legacy, int(time.time())
        )
        return Outcome(decision, parts, fields)

    def decide(self, request: Request) -> Outcome | None:
        """The request's ``Outcome`` (units taken when admitted), or
        ``None`` when it is not limited. Blocks for a Redis round trip."""
        found = self._key_and_cost(request)
        if found is None:
            return None
        decision, parts = self._backend.check(*found)
        return self._outcome(decision, parts)

    async def decide_async(self, request: Request) -> Outcome | None:
        """``decide`` for ``asyncio``: a Redis limiter is awaited, never
        blocking the event loop; a local one decides inline."""
        found = self._key_and_cost(request)
        if found is None:
            return None
        backend = self._backend
        if backend.is_async:
            decision, parts = await backend.check_async(*found)
        else:
            decision, parts = backend.check(*found)
        return self._outcome(decision, parts)

    def refusal_body(self, request: Request, decision: Decision) -> tuple[bytes, str]:
        """The 429's body and its content type, from the ``refusal`` hook
        (or a short text)."""
        if self._refusal is None:
            return _DEFAULT_BODY.encode(), "text/plain; charset=utf-8"
        return render_body(self._refusal(request, decision))

    def refusal_content(self, request: Request, decision: Decision) -> Body:
        """What the ``refusal`` hook returns, unrendered (FastAPI's
        ``HTTPException`` renders it itself)."""
        if self._refusal is None:
            return _DEFAULT_BODY.strip()
        return self._refusal(request, decision)


def render_body(body: Body) -> tuple[bytes, str]:
    """A ``Body`` as bytes and its content type."""
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    if isinstance(body, (bytes, bytearray)):
        return bytes(body), "application/octet-stream"
    if isinstance(body, tuple) and len(body) == 2 and isinstance(body[1], str):
        content, content_type = body
        if isinstance(content, str):
            return content.encode(), content_type
        if isinstance(content, (bytes, bytearray)):
            return bytes(content), content_type
    if isinstance(body, (Mapping, list)):
        return json.dumps(body).encode(), "application/json"
    raise _type_error(
        "refusal",
        body,
        "a function returning str, bytes, a dict or list (JSON), or (body, content_type)",
    )


def _bounded(key: Key) -> Key:
    raw = key.encode() if isinstance(key, str) else key
    if len(raw) <= _MAX_KEY_BYTES:
        return key
    import hashlib  # here: only long keys need it

    return "sha256:" + hashlib.sha256(raw).hexdigest()


class _Backend:
    """One way of deciding: ``check(key, cost)`` returns the combined
    decision and one per limit; ``check_async`` the same without blocking
    the event loop when ``is_async`` (a Redis round trip)."""

    __slots__ = ()
    is_async = False

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        raise NotImplementedError

    async def check_async(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        return self.check(key, cost)


class _Native(_Backend):
    """Limits text in this process: one native call decides every limit."""

    __slots__ = ("_limits",)

    def __init__(self, limits: KeyedLimits) -> None:
        self._limits = limits

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        return self._limits.check(key, cost)


class _Keyed(_Backend):
    """One keyed limiter that decides in this process."""

    __slots__ = ("_limiter",)

    def __init__(self, limiter: KeyedLimiter | RedisDividedLimiter) -> None:
        self._limiter = limiter

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        decision = self._limiter.check(key, cost)
        return decision, (decision,)


class _Unkeyed(_Backend):
    """One budget for every request: the key is not used."""

    __slots__ = ("_limiter",)

    def __init__(self, limiter: Limiter) -> None:
        self._limiter = limiter

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        decision = self._limiter.check(cost)
        return decision, (decision,)


class _Composite(_Backend):
    """Several limits through Redis, decided all or nothing in one script
    run (``RedisCompositeLimiter``)."""

    __slots__ = ("_limiter",)
    is_async = True

    def __init__(self, limiter: RedisCompositeLimiter) -> None:
        self._limiter = limiter

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        return self._limiter.check(key, cost)

    async def check_async(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        return await self._limiter._check_future(key, cost)


class _Shared(_Backend):
    """One Redis limiter (several limits of limits text are a
    ``_Composite``)."""

    __slots__ = ("_limiter",)
    is_async = True

    def __init__(self, limiter: RedisLimiter | RedisLeasedLimiter) -> None:
        self._limiter = limiter

    def check(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        decision = self._limiter.check(key, cost)
        return decision, (decision,)

    async def check_async(self, key: Key, cost: int) -> tuple[Decision, Sequence[Decision]]:
        decision = await self._limiter._check_future(key, cost)
        return decision, (decision,)


def _backend(
    limits: Limits,
    algorithm: _Algorithm,
    redis: tuple[RedisStore | None, str, _WhenUnavailable],
    policy: str,
    max_keys: int,
    when_full: Literal["refuse_new_keys", "evict_soonest_full"],
    clock: ManualClock | None,
) -> tuple[_Backend, tuple[str, ...]]:
    store, name, when_unavailable = redis
    if isinstance(limits, str):
        if store is not None:
            items = parse_limits(limits)
            policies = tuple(item.policy_name for item in items)
            if len(items) > 1:
                if when_unavailable == "local_share":
                    raise _value_error(
                        "when_unavailable",
                        when_unavailable,
                        "'error', 'fail_open' or 'fail_closed' for several limits "
                        "(no local share of a composite)",
                    )
                from ratekeeper import RedisCompositeLimiter as Composite

                composite = Composite(
                    store,
                    name,
                    [item.template(algorithm) for item in items],
                    when_unavailable=when_unavailable,
                )
                return _Composite(composite), policies
            from ratekeeper import RedisLimiter as Shared

            (item,) = items
            shared = Shared(
                store,
                f"{name}:{item.policy_name}",
                item.template(algorithm),
                when_unavailable=when_unavailable,
            )
            return _Shared(shared), policies
        native = KeyedLimits(limits, algorithm, max_keys=max_keys, when_full=when_full, clock=clock)
        return _Native(native), tuple(native.policies)
    if store is not None:
        raise _type_error("store", store, "None when limits is a limiter (it has its own store)")
    if isinstance(limits, KeyedLimits):
        return _Native(limits), tuple(limits.policies)
    if isinstance(limits, (RedisLimiter, RedisLeasedLimiter)):
        return _Shared(limits), (policy,)
    if isinstance(limits, RedisCompositeLimiter):
        parts = len(limits.algorithms)
        names = (policy,) if parts == 1 else tuple(f"{policy}-{i}" for i in range(1, parts + 1))
        return _Composite(limits), names
    if isinstance(limits, (KeyedLimiter, RedisDividedLimiter)):
        return _Keyed(limits), (policy,)
    if isinstance(limits, Limiter):
        return _Unkeyed(limits), (policy,)
    raise _type_error(
        "limits",
        limits,
        "limits as text (as in '10/minute'), or a ratekeeper limiter (KeyedLimiter, "
        "RedisLimiter, RedisCompositeLimiter, RedisLeasedLimiter, RedisDividedLimiter, a Limiter)",
    )


def _strings(argument: str, values: Iterable[str]) -> list[str]:
    if isinstance(values, (str, bytes)):
        raise _type_error(argument, values, "a list of str, not one str")
    out = list(values)
    for value in out:
        if not isinstance(value, str):
            raise _type_error(argument, values, "a list of str")
    return out


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _type_error(argument: str, value: object, requirement: str) -> ArgumentTypeError:
    error = ArgumentTypeError(
        f"invalid argument {argument} = {_shown(value)}: must be {requirement}"
    )
    error.argument = argument
    error.value = value
    return error


def _value_error(argument: str, value: object, requirement: str) -> InvalidArgumentError:
    error = InvalidArgumentError(
        f"invalid argument {argument} = {_shown(value)}: must be {requirement}"
    )
    error.argument = argument
    error.value = value
    return error
