"""The same small application in each framework, limited by a
``RateLimit`` through each adapter, served on loopback port 0.

Every application answers ``GET /`` and ``GET /health`` with ``ok`` and
``POST /upload`` with ``stored``. ``serve(kind, rule)`` runs one and yields
its port; ``KINDS`` names them: the middleware (ASGI or WSGI) on each
framework (Litestar and Quart each in its own documented way), and each
framework's per-route form."""

from __future__ import annotations

import itertools
import sys
import types
from contextlib import AbstractContextManager
from typing import Any, Callable

from ratekeeper.http import RateLimit
from web.servers import uvicorn_server, waitress_server

KINDS = [
    "starlette",
    "fastapi",
    "fastapi-dependency",
    "litestar",
    "litestar-wrapped",
    "quart",
    "flask",
    "flask-decorator",
    "django",
    "django-decorator",
    "django-settings",
]


def starlette_app(rule: RateLimit) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from ratekeeper.http.asgi import RateLimitMiddleware

    async def ok(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def upload(request: Request) -> PlainTextResponse:
        return PlainTextResponse("stored")

    app = Starlette(
        routes=[
            Route("/", ok),
            Route("/health", ok),
            Route("/upload", upload, methods=["POST"]),
        ]
    )
    return RateLimitMiddleware(app, rule)


def fastapi_app(rule: RateLimit, *, dependency: bool) -> Any:
    from fastapi import Depends, FastAPI
    from fastapi.responses import PlainTextResponse

    from ratekeeper.http.asgi import RateLimitMiddleware
    from ratekeeper.http.fastapi import RateLimitDependency

    if dependency:
        app = FastAPI(dependencies=[Depends(RateLimitDependency(rule))])
    else:
        app = FastAPI()
        app.add_middleware(RateLimitMiddleware, rule=rule)

    @app.get("/", response_class=PlainTextResponse)
    async def ok() -> str:
        return "ok"

    @app.get("/health", response_class=PlainTextResponse)
    async def health() -> str:
        return "ok"

    @app.post("/upload", response_class=PlainTextResponse)
    async def upload() -> str:
        return "stored"

    return app


def litestar_app(rule: RateLimit, *, wrapped: bool) -> Any:
    """Litestar's own way: the middleware in ``middleware=``, built by
    ``DefineMiddleware`` (it passes the next application as ``app=``), which
    Litestar runs around each route (a request no route takes, a 404 or
    405, is not limited); or, ``wrapped``, around the whole application, as
    any ASGI application (every request is)."""
    from litestar import Litestar, MediaType, get, post
    from litestar.middleware import DefineMiddleware

    from ratekeeper.http.asgi import RateLimitMiddleware

    # Served under lifespan "on": "ok" only once startup has run through
    # whatever wraps the application.
    started: list[bool] = []

    @get(["/", "/health"], media_type=MediaType.TEXT)
    async def ok() -> str:
        return "ok" if started else "not started"

    # 200, as the other frameworks answer a POST (Litestar's default: 201).
    @post("/upload", media_type=MediaType.TEXT, status_code=200)
    async def upload() -> str:
        return "stored"

    def startup() -> None:
        started.append(True)

    if wrapped:
        return RateLimitMiddleware(Litestar([ok, upload], on_startup=[startup]), rule)
    return Litestar(
        [ok, upload],
        on_startup=[startup],
        middleware=[DefineMiddleware(RateLimitMiddleware, rule=rule)],
    )


_quart_apps = itertools.count()


def quart_app(rule: RateLimit) -> Any:
    """Quart's own way: its ASGI application wrapped (``app.asgi_app``), as
    Quart documents for ASGI middleware."""
    import quart

    from ratekeeper.http.asgi import RateLimitMiddleware

    app = quart.Quart(f"rk_quart_{next(_quart_apps)}")
    # Served under lifespan "on", as Litestar's application.
    started: list[bool] = []

    @app.before_serving
    async def startup() -> None:
        started.append(True)

    @app.get("/")
    @app.get("/health")
    async def ok() -> str:
        return "ok" if started else "not started"

    @app.post("/upload")
    async def upload() -> str:
        return "stored"

    app.asgi_app = RateLimitMiddleware(app.asgi_app, rule)  # type: ignore[method-assign]
    return app


_flask_apps = itertools.count()


def flask_app(rule: RateLimit, *, decorator: bool) -> Any:
    import flask

    from ratekeeper.http.flask import limit
    from ratekeeper.http.wsgi import RateLimitMiddleware

    app = flask.Flask(f"rk_flask_{next(_flask_apps)}")
    wrap: Callable[[Any], Any] = limit(rule) if decorator else (lambda view: view)

    @app.get("/")
    @wrap
    def ok() -> str:
        return "ok"

    @app.get("/health")
    @wrap
    def health() -> str:
        return "ok"

    @app.post("/upload")
    @wrap
    def upload() -> str:
        return "stored"

    if not decorator:
        app.wsgi_app = RateLimitMiddleware(app.wsgi_app, rule)  # type: ignore[method-assign]
    return app


_django_urls = itertools.count()


def django_app(rule: RateLimit, *, how: str) -> Any:
    """``how``: "wsgi" (the WSGI middleware), "decorator" (each view),
    "settings" (ratekeeper.http.django.RateLimitMiddleware in MIDDLEWARE)."""
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="ratekeeper-tests",
            ALLOWED_HOSTS=["*"],
            MIDDLEWARE=[],
            INSTALLED_APPS=[],
            ROOT_URLCONF="",
        )
        import django

        django.setup()
    from django.core.handlers.wsgi import WSGIHandler
    from django.http import HttpRequest, HttpResponse
    from django.urls import clear_url_caches, path

    from ratekeeper.http.django import limit
    from ratekeeper.http.wsgi import RateLimitMiddleware

    wrap: Callable[[Any], Any] = limit(rule) if how == "decorator" else (lambda view: view)

    @wrap
    def ok(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok", content_type="text/plain")

    @wrap
    def upload(request: HttpRequest) -> HttpResponse:
        return HttpResponse("stored", content_type="text/plain")

    # One URL module per application: the tests run one at a time.
    urls = types.ModuleType(f"rk_django_urls_{next(_django_urls)}")
    urls.urlpatterns = [path("", ok), path("health", ok), path("upload", upload)]  # type: ignore[attr-defined]
    sys.modules[urls.__name__] = urls
    settings.ROOT_URLCONF = urls.__name__
    settings.RATEKEEPER_RATE_LIMIT = rule
    settings.MIDDLEWARE = (
        ["ratekeeper.http.django.RateLimitMiddleware"] if how == "settings" else []
    )
    clear_url_caches()
    handler = WSGIHandler()
    return RateLimitMiddleware(handler, rule) if how == "wsgi" else handler


def serve(kind: str, rule: RateLimit) -> AbstractContextManager[int]:
    """Runs the ``kind`` application limited by ``rule``; yields its port."""
    if kind == "starlette":
        return uvicorn_server(starlette_app(rule))
    if kind == "fastapi":
        return uvicorn_server(fastapi_app(rule, dependency=False))
    if kind == "fastapi-dependency":
        return uvicorn_server(fastapi_app(rule, dependency=True))
    # Lifespan on: their startup goes through the middleware.
    if kind == "litestar":
        return uvicorn_server(litestar_app(rule, wrapped=False), lifespan="on")
    if kind == "litestar-wrapped":
        return uvicorn_server(litestar_app(rule, wrapped=True), lifespan="on")
    if kind == "quart":
        return uvicorn_server(quart_app(rule), lifespan="on")
    if kind == "flask":
        return waitress_server(flask_app(rule, decorator=False))
    if kind == "flask-decorator":
        return waitress_server(flask_app(rule, decorator=True))
    if kind == "django":
        return waitress_server(django_app(rule, how="wsgi"))
    if kind == "django-decorator":
        return waitress_server(django_app(rule, how="decorator"))
    if kind == "django-settings":
        return waitress_server(django_app(rule, how="settings"))
    raise ValueError(kind)
