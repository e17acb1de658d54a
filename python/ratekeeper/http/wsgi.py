"""WSGI middleware: Flask, Django, or any WSGI application, with no
framework imported::

    from ratekeeper.http import RateLimit
    from ratekeeper.http.wsgi import RateLimitMiddleware

    app.wsgi_app = RateLimitMiddleware(app.wsgi_app, RateLimit("100/minute"))   # Flask
    application = RateLimitMiddleware(get_wsgi_application(), RateLimit("100/minute"))  # Django

Each request is decided before the application sees it: a refusal is
answered 429 with ``Retry-After`` and the rule's header fields, and the
application is not called; an admitted request's response gets the same
fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Any, Callable, Optional

from ratekeeper._ratekeeper import TrustedProxies
from ratekeeper.http._rule import Outcome, RateLimit, Request, identity

Environ = dict[str, Any]
ExcInfo = tuple[type[BaseException], BaseException, Optional[TracebackType]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


def environ_header(environ: Environ, name: str) -> str | None:
    """A request header from a WSGI environ (``HTTP_…``; the server has
    already joined repeated fields)."""
    lowered = name.lower()
    if lowered == "content-type":
        return environ.get("CONTENT_TYPE") or None
    if lowered == "content-length":
        return environ.get("CONTENT_LENGTH") or None
    value = environ.get("HTTP_" + lowered.upper().replace("-", "_"))
    return None if value is None else str(value)


class WsgiRequest(Request):
    """The ``Request`` view of a WSGI environ."""

    __slots__ = ("_environ",)

    def __init__(self, environ: Environ, trusted: TrustedProxies) -> None:
        super().__init__(trusted)
        self._environ = environ

    @property
    def method(self) -> str:
        return str(self._environ.get("REQUEST_METHOD", "GET"))

    @property
    def path(self) -> str:
        environ = self._environ
        return str(environ.get("SCRIPT_NAME", "")) + str(environ.get("PATH_INFO", ""))

    @property
    def peer(self) -> str | None:
        return self._environ.get("REMOTE_ADDR") or None

    @property
    def native(self) -> object:
        """The WSGI environ."""
        return self._environ

    @property
    def user(self) -> str | None:
        return identity(self._environ.get("REMOTE_USER") or None)

    def header(self, name: str) -> str | None:
        return environ_header(self._environ, name)


def refusal_response(
    rule: RateLimit, request: Request, outcome: Outcome
) -> tuple[bytes, list[tuple[str, str]]]:
    """The 429's body and its header fields."""
    body, content_type = rule.refusal_body(request, outcome.decision)
    return body, [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        *outcome.fields,
    ]


class RateLimitMiddleware:
    """The WSGI middleware of one ``RateLimit``; see the module's docs."""

    __slots__ = ("app", "rule")

    def __init__(self, app: WSGIApp, rule: RateLimit) -> None:
        if not isinstance(rule, RateLimit):
            from ratekeeper.http._rule import _type_error

            raise _type_error("rule", rule, "a ratekeeper.http.RateLimit")
        self.app = app
        self.rule = rule

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        rule = self.rule
        request = WsgiRequest(environ, rule.trusted_proxies)
        outcome = rule.decide(request)
        if outcome is None:
            return self.app(environ, start_response)
        if not outcome.allowed:
            body, headers = refusal_response(rule, request, outcome)
            start_response("429 Too Many Requests", headers)
            return [body]
        fields = outcome.fields

        def start_with_fields(
            status: str, headers: list[tuple[str, str]], exc_info: ExcInfo | None = None
        ) -> Callable[[bytes], object]:
            return start_response(status, [*headers, *fields], exc_info)

        return self.app(environ, start_with_fields)
