"""Per-route limits for Flask views::

    from ratekeeper.http.flask import limit

    @app.get("/search")
    @limit("10/minute")
    def search(): ...

``limit`` takes a ``RateLimit``, or the arguments of one. The view's
response gets the rule's header fields; a refused request is answered 429
(``Retry-After``, the fields, the rule's body) and the view is not called.
A rule given to several views is one budget for all of them. For the whole
application, wrap ``app.wsgi_app`` in ``ratekeeper.http.wsgi``'s
middleware instead.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, TypeVar, cast

import flask

from ratekeeper._ratekeeper import TrustedProxies
from ratekeeper.http._rule import Limits, Outcome, RateLimit, Request, identity
from ratekeeper.http.wsgi import WsgiRequest

_F = TypeVar("_F", bound=Callable[..., Any])


class FlaskRequest(WsgiRequest):
    """The ``Request`` view of Flask's current request; its ``user`` is
    Flask-Login's ``current_user`` when Flask-Login is in use, else the
    WSGI ``REMOTE_USER``."""

    __slots__ = ()

    def __init__(self, trusted: TrustedProxies) -> None:
        super().__init__(flask.request.environ, trusted)

    @property
    def native(self) -> flask.Request:
        return flask.request

    @property
    def user(self) -> str | None:
        login = sys.modules.get("flask_login")
        if login is not None:
            found = identity(login.current_user)
            if found is not None:
                return found
        return super().user


def _refused(rule: RateLimit, request: Request, outcome: Outcome) -> flask.Response:
    body, content_type = rule.refusal_body(request, outcome.decision)
    response = flask.Response(body, status=429, content_type=content_type)
    response.headers.extend(outcome.fields)
    return response


def limit(limits: RateLimit | Limits, /, **options: Any) -> Callable[[_F], _F]:
    """A decorator limiting a Flask view (plain or ``async``) by a
    ``RateLimit`` (or ``RateLimit(limits, **options)``)."""
    rule = limits if isinstance(limits, RateLimit) else RateLimit(limits, **options)

    def decorate(view: _F) -> _F:
        if inspect.iscoroutinefunction(view):

            @functools.wraps(view)
            async def limited_async(*args: Any, **kwargs: Any) -> flask.Response:
                request = FlaskRequest(rule.trusted_proxies)
                outcome = await rule.decide_async(request)
                if outcome is not None and not outcome.allowed:
                    return _refused(rule, request, outcome)
                response = flask.make_response(await view(*args, **kwargs))
                if outcome is not None:
                    response.headers.extend(outcome.fields)
                return response

            return cast(_F, limited_async)

        @functools.wraps(view)
        def limited(*args: Any, **kwargs: Any) -> flask.Response:
            request = FlaskRequest(rule.trusted_proxies)
            outcome = rule.decide(request)
            if outcome is not None and not outcome.allowed:
                return _refused(rule, request, outcome)
            response = flask.make_response(view(*args, **kwargs))
            if outcome is not None:
                response.headers.extend(outcome.fields)
            return response

        return cast(_F, limited)

    return decorate
