"""HTTP rate limiting on any ratekeeper limiter: middleware for ASGI
(``ratekeeper.http.asgi``: Starlette, FastAPI, Litestar, Quart) and WSGI
(``ratekeeper.http.wsgi``: Flask, Django), per-route limits for Flask
(``ratekeeper.http.flask``) and Django (``ratekeeper.http.django``) views
and a FastAPI dependency (``ratekeeper.http.fastapi``)::

    from ratekeeper.http import RateLimit, by_header
    from ratekeeper.http.asgi import RateLimitMiddleware

    app = RateLimitMiddleware(app, RateLimit("100/minute; 1000/day"))
    app = RateLimitMiddleware(app, RateLimit("10/second", key=by_header("X-Api-Key")))

A ``RateLimit`` holds what every framework does the same: limits as text
(parsed by the Rust core, as the ``limits`` library writes them) or any
ratekeeper limiter, a key per request (the client's address through
explicitly trusted proxies by default), exempt paths and methods, a cost,
and the response's fields — 429 with ``Retry-After``, ``RateLimit`` and
``RateLimit-Policy`` in IETF draft 8 (or 6, 7), ``X-RateLimit-*`` on
request — on refused and admitted responses alike.

The parts written in Rust (``ratekeeper::http``), for every language:
``parse_limits`` (and ``RateItem``), ``response_fields``,
``TrustedProxies`` and ``KeyedLimits`` (limits text as one keyed limiter).

Importing this module imports no web framework: each adapter module
imports its own.
"""

from ratekeeper._ratekeeper import (
    KeyedLimits,
    RateItem,
    TrustedProxies,
    client_key,
    combine_decisions,
    parse_limits,
    response_fields,
)
from ratekeeper.http._rule import (
    Outcome,
    RateLimit,
    Request,
    by_client_address,
    by_header,
    by_user,
    client_address_key,
    identity,
)

for _cls in (Outcome, RateLimit, Request):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "KeyedLimits",
    "Outcome",
    "RateItem",
    "RateLimit",
    "Request",
    "TrustedProxies",
    "by_client_address",
    "by_header",
    "by_user",
    "client_address_key",
    "client_key",
    "combine_decisions",
    "identity",
    "parse_limits",
    "response_fields",
]
