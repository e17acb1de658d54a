"""The same small application in each framework, limited by a
``RateLimit`` through each adapter, served on loopback port 0.

Every application answers ``GET /`` and ``GET /health`` with ``ok`` and
``POST /upload`` with ``stored``. ``serve(kind, rule)`` runs one and yields
its port; ``KINDS`` names them: the middleware (ASGI or WSGI) on each
framework, and each framework's per-route form."""

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
