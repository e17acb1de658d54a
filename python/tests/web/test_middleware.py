"""ratekeeper.http's middleware on real servers with real clients: FastAPI,
Starlette, Litestar and Quart under uvicorn, Flask and Django under
waitress, each through its middleware and its per-route form
(``apps.KINDS``), on loopback port 0.
"""

from __future__ import annotations

import collections
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from ratekeeper import Decision, ManualClock
from ratekeeper.http import KeyedLimits, RateLimit, Request, by_header, response_fields
from web.apps import KINDS, serve
from web.servers import Reply, request

if TYPE_CHECKING:
    from ratekeeper._ratekeeper import _HeaderStyle

RATE_FIELDS = {
    "ratelimit",
    "ratelimit-policy",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
}


@pytest.mark.parametrize("kind", KINDS)
def test_concurrent_clients_get_exactly_the_limit_per_key(kind: str) -> None:
    # 3 keys, 4 clients each, 5 requests per client: 20 requests per key
    # against 7 per hour (a window no test outlives).
    keys, clients, each, limit = 3, 4, 5, 7
    rule = RateLimit(f"{limit}/hour", key=by_header("X-Key"))
    with serve(kind, rule) as port:

        def client(key: str) -> list[Reply]:
            return [request(port, headers={"X-Key": key}) for _ in range(each)]

        with ThreadPoolExecutor(keys * clients) as pool:
            runs = [(k, pool.submit(client, f"k{k}")) for k in range(keys) for _ in range(clients)]
            replies = [(k, reply) for k, run in runs for reply in run.result()]
    admitted = collections.Counter(k for k, reply in replies if reply.status == 200)
    assert admitted == {k: limit for k in range(keys)}
    assert {reply.status for _, reply in replies} == {200, 429}
    for k in range(keys):
        # Each admitted request saw its own remaining count: 6, 5, ... 0.
        remaining = sorted(
            int(_item(reply.header("RateLimit"))["r"])
            for key, reply in replies
            if key == k and reply.status == 200
        )
        assert remaining == list(range(limit))
    for _, reply in replies:
        if reply.status == 429:
            assert int(reply.header("Retry-After") or "0") >= 1
            assert _item(reply.header("RateLimit"))["r"] == "0"
            assert reply.body
        else:
            assert reply.body == b"ok"


def _item(value: str | None) -> dict[str, str]:
    """The parameters of a draft-8 field's one item: ``"name";r=1;t=2``."""
    assert value is not None
    name, *params = value.split(";")
    out = dict(p.split("=", 1) for p in params)
    out["name"] = name
    return out


STYLES: list[tuple[_HeaderStyle, bool]] = [
    ("draft-8", False),
    ("draft-7", False),
    ("draft-6", True),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("style", "legacy"), STYLES)
def test_every_response_carries_the_fields_of_its_decision(
    kind: str, style: _HeaderStyle, legacy: bool
) -> None:
    # On a ManualClock that does not move, a twin limiter fed the same
    # requests makes the same decisions: each response's fields must be
    # exactly what its decisions write (two limits: the combined one and
    # each part's), admitted or refused.
    clock = ManualClock()
    clock.advance(1000.0)
    text = "3 per 10 minutes; 50/day"
    rule = RateLimit(text, header_style=style, legacy_headers=legacy, clock=clock)
    twin = KeyedLimits(text, clock=clock)
    with serve(kind, rule) as port:
        for _ in range(5):
            reply = request(port)
            decision, parts = twin.check("127.0.0.1")
            expected = response_fields(
                decision, parts, twin.policies, style, legacy, int(time.time())
            )
            assert reply.status == (200 if decision.allowed else 429)
            got = reply.fields(RATE_FIELDS)
            want = [(name.lower(), value) for name, value in expected]
            if legacy:
                # X-RateLimit-Reset is a Unix time: the second may turn.
                got_reset = [int(v) for k, v in got if k == "x-ratelimit-reset"]
                want_reset = [int(v) for k, v in want if k == "x-ratelimit-reset"]
                assert len(got_reset) == 1
                assert abs(got_reset[0] - want_reset[0]) <= 1
                got = [(k, v) for k, v in got if k != "x-ratelimit-reset"]
                want = [(k, v) for k, v in want if k != "x-ratelimit-reset"]
            # Sorted: a server may reorder fields of different names
            # (waitress sorts them), which HTTP allows.
            assert sorted(got) == sorted(want)
    # And what they say, written out once: draft-8 names the policy.
    if style == "draft-8":
        assert ("ratelimit-policy", '"3-in-10min";q=3;w=600, "50-in-1day";q=50;w=86400') in want


@pytest.mark.parametrize("kind", KINDS)
def test_a_spoofed_forwarded_for_from_an_untrusted_peer_changes_nothing(kind: str) -> None:
    # The default key is the client's address; no proxy is trusted, so the
    # peer (127.0.0.1) is the client whatever X-Forwarded-For claims.
    with serve(kind, RateLimit("2/hour")) as port:
        statuses = [
            request(port, headers={"X-Forwarded-For": f"203.0.113.{i}"}).status for i in range(4)
        ]
        spoofed = request(port, headers={"Forwarded": "for=198.51.100.7"}).status
    assert statuses == [200, 200, 429, 429]
    assert spoofed == 429


@pytest.mark.parametrize("kind", KINDS)
def test_a_trusted_proxy_names_the_client(kind: str) -> None:
    # Loopback trusted: the proxy (the test) names each client, and each
    # gets its own budget; a client's own spoofed entry on the left is
    # ignored, the hop our proxy appended decides.
    with serve(kind, RateLimit("2/hour", trusted_proxies=["loopback"])) as port:
        first = [request(port, headers={"X-Forwarded-For": "203.0.113.1"}).status for _ in range(3)]
        second = [
            request(port, headers={"X-Forwarded-For": "198.51.100.9, 203.0.113.2"}).status
            for _ in range(3)
        ]
        rfc7239 = [request(port, headers={"Forwarded": "for=203.0.113.3"}).status for _ in range(3)]
    assert first == [200, 200, 429]
    assert second == [200, 200, 429]
    assert rfc7239 == [200, 200, 429]


@pytest.mark.parametrize("kind", KINDS)
def test_exempt_paths_and_methods_and_cost(kind: str) -> None:
    rule = RateLimit(
        "4/hour",
        exempt_paths=["/health"],
        exempt_methods=["options"],
        cost=lambda r: 3 if r.path == "/upload" else 1,
    )
    with serve(kind, rule) as port:
        health = [request(port, "/health") for _ in range(6)]
        upload = request(port, "/upload", method="POST")
        first = request(port)
        refused = request(port)
        second_upload = request(port, "/upload", method="POST")
        options = request(port, method="OPTIONS")
    assert [r.status for r in health] == [200] * 6
    assert all(r.header("RateLimit") is None for r in health)
    assert upload.status == 200
    assert _item(upload.header("RateLimit"))["r"] == "1"
    assert first.status == 200
    assert _item(first.header("RateLimit"))["r"] == "0"
    assert refused.status == 429
    assert second_upload.status == 429
    # Exempt by method: not refused, and no fields (the application
    # answers as it would, 200 or 405).
    assert options.status != 429
    assert options.header("RateLimit") is None


@pytest.mark.parametrize("kind", ["starlette", "flask", "django-decorator", "fastapi-dependency"])
def test_the_refusal_hook_builds_the_body(kind: str) -> None:
    def refusal(req: Request, decision: Decision) -> dict[str, object]:
        return {"error": "slow down", "path": req.path, "retry_after": decision.retry_after}

    with serve(kind, RateLimit("1/hour", refusal=refusal)) as port:
        request(port)
        reply = request(port)
    assert reply.status == 429
    body = json.loads(reply.body)
    # FastAPI's HTTPException wraps it in {"detail": ...}.
    body = body.get("detail", body)
    assert body["error"] == "slow down"
    assert body["path"] == "/"
    assert body["retry_after"] > 0
    assert re.match(r"^\d+$", reply.header("Retry-After") or "")


@pytest.mark.parametrize(
    ("kind", "limited"), [("litestar", False), ("litestar-wrapped", True), ("quart", True)]
)
def test_requests_no_route_takes(kind: str, limited: bool) -> None:
    # Litestar runs the middleware of middleware= around each route, so a
    # 404 or 405 is not limited (the README says so); wrapped around the
    # whole application, as Quart's and any ASGI application's, every
    # request counts.
    with serve(kind, RateLimit("2/hour")) as port:
        unknown = [request(port, "/nowhere").status for _ in range(3)]
        wrong_method = request(port, method="DELETE").status
    if limited:
        assert unknown == [404, 404, 429]
        assert wrong_method == 429
    else:
        assert unknown == [404, 404, 404]
        assert wrong_method == 405


def test_litestar_s_authenticated_user_is_the_key() -> None:
    # Litestar's authentication middleware, listed before the limit, puts
    # the user in the scope: by_user() keys each user's budget by it.
    from litestar import Litestar, MediaType, get
    from litestar.connection import ASGIConnection
    from litestar.middleware import (
        AbstractAuthenticationMiddleware,
        AuthenticationResult,
        DefineMiddleware,
    )

    from ratekeeper.http import by_user
    from ratekeeper.http.asgi import RateLimitMiddleware
    from web.servers import uvicorn_server

    class HeaderAuthentication(AbstractAuthenticationMiddleware):
        async def authenticate_request(
            self, connection: ASGIConnection[Any, Any, Any, Any]
        ) -> AuthenticationResult:
            return AuthenticationResult(user=connection.headers.get("x-user"), auth=None)

    @get("/", media_type=MediaType.TEXT)
    async def ok() -> str:
        return "ok"

    rule = RateLimit("2/hour", key=by_user(fallback=None))
    app = Litestar(
        [ok],
        middleware=[HeaderAuthentication, DefineMiddleware(RateLimitMiddleware, rule=rule)],
    )
    with uvicorn_server(app) as port:
        alice = [request(port, headers={"X-User": "alice"}).status for _ in range(3)]
        bob = [request(port, headers={"X-User": "bob"}).status for _ in range(3)]
        # No user: by_user's fallback None leaves the request unlimited.
        anonymous = [request(port).status for _ in range(3)]
    assert alice == [200, 200, 429]
    assert bob == [200, 200, 429]
    assert anonymous == [200, 200, 200]
