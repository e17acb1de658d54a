"""Pure ASGI middleware: Starlette, FastAPI, Litestar, Quart, or any ASGI
application, with no framework imported::

    from ratekeeper.http import RateLimit
    from ratekeeper.http.asgi import RateLimitMiddleware

    app = RateLimitMiddleware(app, RateLimit("100/minute"))
    # Starlette / FastAPI: app.add_middleware(RateLimitMiddleware, rule=RateLimit("100/minute"))

Each HTTP request is decided before the application sees it: a refusal is
answered 429 with ``Retry-After`` and the rule's header fields, and the
application is not called; an admitted request's response gets the same
fields. A Redis limiter is awaited (the event loop never blocks); a local
one decides inline, in microseconds. WebSocket and lifespan events pass
through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, MutableMapping
from typing import Any, Callable

from ratekeeper._ratekeeper import TrustedProxies
from ratekeeper.http._rule import Outcome, RateLimit, Request, identity

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
# The application wrapped, and the middleware's own call, take Any: each
# framework types ASGI its own way (Starlette with mappings, Litestar and
# Quart with a TypedDict per scope and event), and no framework's type
# accepts another's, so a precise type here would make ``mypy --strict``
# refuse the middleware on all but one of them.
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class AsgiRequest(Request):
    """The ``Request`` view of an ASGI HTTP scope."""

    __slots__ = ("_scope",)

    def __init__(self, scope: Scope, trusted: TrustedProxies) -> None:
        super().__init__(trusted)
        self._scope = scope

    @property
    def method(self) -> str:
        return str(self._scope["method"])

    @property
    def path(self) -> str:
        return str(self._scope["path"])

    @property
    def peer(self) -> str | None:
        client = self._scope.get("client")
        return None if not client else str(client[0])

    @property
    def native(self) -> Scope:
        return self._scope

    @property
    def user(self) -> str | None:
        # Starlette's AuthenticationMiddleware (and Litestar's) put the user
        # in the scope; a user that is not authenticated is anonymous.
        return identity(self._scope.get("user"))

    def header(self, name: str) -> str | None:
        wanted = name.lower().encode("latin-1")
        found = [v for k, v in self._scope.get("headers", ()) if k.lower() == wanted]
        if not found:
            return None
        return ", ".join(v.decode("latin-1") for v in found)


# Field names as ASGI sends them: lower case, bytes.
_NAMES: dict[str, bytes] = {}


def raw_fields(outcome: Outcome) -> list[tuple[bytes, bytes]]:
    """The outcome's header fields as an ASGI message carries them."""
    out = []
    for name, value in outcome.fields:
        raw = _NAMES.get(name)
        if raw is None:
            raw = _NAMES[name] = name.lower().encode("latin-1")
        out.append((raw, value.encode("latin-1")))
    return out


async def send_refusal(send: Send, rule: RateLimit, request: Request, outcome: Outcome) -> None:
    """Answers 429 with the outcome's fields and the rule's body."""
    body, content_type = rule.refusal_body(request, outcome.decision)
    headers = [
        (b"content-type", content_type.encode("latin-1")),
        (b"content-length", str(len(body)).encode("latin-1")),
        *raw_fields(outcome),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class RateLimitMiddleware:
    """The ASGI middleware of one ``RateLimit``; see the module's docs."""

    __slots__ = ("app", "rule")

    def __init__(self, app: ASGIApp, rule: RateLimit) -> None:
        if not isinstance(rule, RateLimit):
            from ratekeeper.http._rule import _type_error

            raise _type_error("rule", rule, "a ratekeeper.http.RateLimit")
        self.app = app
        self.rule = rule

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # Any, as ASGIApp's (see there); ASGI's scope, receive and send.
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rule = self.rule
        request = AsgiRequest(scope, rule.trusted_proxies)
        outcome = await rule.decide_async(request)
        if outcome is None:
            await self.app(scope, receive, send)
            return
        if not outcome.allowed:
            await send_refusal(send, rule, request, outcome)
            return
        fields = raw_fields(outcome)

        async def send_with_fields(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", ()), *fields]
            await send(message)

        await self.app(scope, receive, send_with_fields)
