"""Django: a middleware for ``settings.MIDDLEWARE`` and per-view limits::

    # settings.py: every view, behind AuthenticationMiddleware (so that
    # by_user() sees request.user)
    RATEKEEPER_RATE_LIMIT = RateLimit("100/minute", key=by_user())
    MIDDLEWARE = [..., "ratekeeper.http.django.RateLimitMiddleware"]

    from ratekeeper.http.django import limit

    @limit("10/minute")
    def search(request): ...

    @method_decorator(limit("10/minute"), name="dispatch")   # a class-based view
    class Search(View): ...

``limit`` takes a ``RateLimit``, or the arguments of one. The view's
response gets the rule's header fields; a refused request is answered 429
(``Retry-After``, the fields, the rule's body) and the view is not called.
``by_user()`` keys on ``request.user`` (its ``pk``) once Django's
``AuthenticationMiddleware`` has set it. For the whole site, wrap the WSGI
application in ``ratekeeper.http.wsgi``'s middleware instead.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar, cast

# Untyped (no stubs); the ignore is unused where mypy is told so (pyproject.toml).
from django.http import (  # type: ignore[import-untyped, unused-ignore]
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
)

from ratekeeper._ratekeeper import TrustedProxies
from ratekeeper.http._rule import Limits, Outcome, RateLimit, Request, identity
from ratekeeper.http.wsgi import environ_header

_F = TypeVar("_F", bound=Callable[..., Any])


class DjangoRequest(Request):
    """The ``Request`` view of a Django ``HttpRequest``."""

    __slots__ = ("_request",)

    def __init__(self, request: HttpRequest, trusted: TrustedProxies) -> None:
        super().__init__(trusted)
        self._request = request

    @property
    def method(self) -> str:
        return str(self._request.method)

    @property
    def path(self) -> str:
        return str(self._request.path)

    @property
    def peer(self) -> str | None:
        return self._request.META.get("REMOTE_ADDR") or None

    @property
    def native(self) -> HttpRequest:
        return self._request

    @property
    def user(self) -> str | None:
        return identity(getattr(self._request, "user", None))

    def header(self, name: str) -> str | None:
        return environ_header(self._request.META, name)


def _refused(rule: RateLimit, request: Request, outcome: Outcome) -> HttpResponse:
    body, content_type = rule.refusal_body(request, outcome.decision)
    response = HttpResponse(body, status=429, content_type=content_type)
    for name, value in outcome.fields:
        response.headers[name] = value
    return response


def _with_fields(response: HttpResponseBase, outcome: Outcome | None) -> HttpResponseBase:
    if outcome is not None:
        for name, value in outcome.fields:
            response.headers[name] = value
    return response


def limit(limits: RateLimit | Limits, /, **options: Any) -> Callable[[_F], _F]:
    """A decorator limiting a Django view (plain or ``async``) by a
    ``RateLimit`` (or ``RateLimit(limits, **options)``)."""
    rule = limits if isinstance(limits, RateLimit) else RateLimit(limits, **options)

    def decorate(view: _F) -> _F:
        if inspect.iscoroutinefunction(view):

            @functools.wraps(view)
            async def limited_async(
                request: HttpRequest, *args: Any, **kwargs: Any
            ) -> HttpResponseBase:
                seen = DjangoRequest(request, rule.trusted_proxies)
                outcome = await rule.decide_async(seen)
                if outcome is not None and not outcome.allowed:
                    return _refused(rule, seen, outcome)
                return _with_fields(await view(request, *args, **kwargs), outcome)

            return cast(_F, limited_async)

        @functools.wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            seen = DjangoRequest(request, rule.trusted_proxies)
            outcome = rule.decide(seen)
            if outcome is not None and not outcome.allowed:
                return _refused(rule, seen, outcome)
            return _with_fields(view(request, *args, **kwargs), outcome)

        return cast(_F, limited)

    return decorate


class RateLimitMiddleware:
    """Django middleware limiting every view by ``settings.RATEKEEPER_RATE_LIMIT``
    (a ``RateLimit``); place it after ``AuthenticationMiddleware`` for
    ``by_user()``. A refused request is answered 429 and no view runs."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        from django.conf import settings  # type: ignore[import-untyped, unused-ignore]
        from django.core.exceptions import (  # type: ignore[import-untyped, unused-ignore]
            ImproperlyConfigured,
        )

        rule = getattr(settings, "RATEKEEPER_RATE_LIMIT", None)
        if not isinstance(rule, RateLimit):
            raise ImproperlyConfigured(
                "RATEKEEPER_RATE_LIMIT must be a ratekeeper.http.RateLimit, "
                f"not {type(rule).__name__}"
            )
        self.get_response = get_response
        self.rule = rule

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        rule = self.rule
        seen = DjangoRequest(request, rule.trusted_proxies)
        outcome = rule.decide(seen)
        if outcome is not None and not outcome.allowed:
            return _refused(rule, seen, outcome)
        return _with_fields(self.get_response(request), outcome)
