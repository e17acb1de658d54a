"""ratekeeper.http without a server: the native part (limits text, header
fields, trusted proxies, KeyedLimits) through the binding, and what a
``RateLimit`` decides for a ``Request``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_import import imported_after

import ratekeeper
from ratekeeper import (
    ArgumentTypeError,
    Decision,
    FixedWindow,
    InvalidArgumentError,
    KeyedLimiter,
    ManualClock,
    SlidingWindowCounter,
)
from ratekeeper.http import (
    KeyedLimits,
    RateItem,
    RateLimit,
    Request,
    TrustedProxies,
    by_client_address,
    by_header,
    by_user,
    client_address_key,
    client_key,
    combine_decisions,
    identity,
    parse_limits,
    response_fields,
)
from ratekeeper.http.asgi import AsgiRequest
from ratekeeper.http.wsgi import WsgiRequest


def test_limits_text_in_the_forms_users_write() -> None:
    items = parse_limits(" 10/minute; 100 per 2 hours, 5/SECOND|1000/Day ")
    assert [str(i) for i in items] == [
        "10 per 1 minute",
        "100 per 2 hours",
        "5 per 1 second",
        "1000 per 1 day",
    ]
    first = items[0]
    assert (first.amount, first.multiples, first.unit) == (10, 1, "minute")
    assert first.window == 60.0
    assert first.window_micros == 60_000_000
    assert first.policy_name == "10-in-1min"
    # str() reads back as the same item.
    assert [parse_limits(str(i))[0] for i in items] == items
    assert isinstance(first, RateItem)


@pytest.mark.parametrize(
    ("text", "position"),
    [("10/minite", 3), ("ten/minute", 0), ("10 minute", 3), ("10/minute;", 10), ("0/second", 0)],
)
def test_bad_limits_text_names_the_position(text: str, position: int) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parse_limits(text)
    assert raised.value.position == position
    assert f"position {position}" in str(raised.value)
    assert raised.value.argument == "limits"
    assert raised.value.value == text
    with pytest.raises(InvalidArgumentError):
        RateLimit(text)


def test_limits_text_must_be_text() -> None:
    with pytest.raises(ArgumentTypeError):
        parse_limits(10)  # type: ignore[arg-type]


def test_an_item_is_a_template_of_any_algorithm() -> None:
    item = parse_limits("5/second")[0]
    window = item.template()
    assert type(window).__name__ == "SlidingWindowCounter"
    assert item.template("fixed_window").limit == 5  # type: ignore[attr-defined]
    assert type(item.template("gcra")).__name__ == "Gcra"
    clock = ManualClock()
    keyed = KeyedLimiter(item.template("fixed_window", clock=clock), 10)
    assert [keyed.check("a").allowed for _ in range(6)] == [True] * 5 + [False]
    with pytest.raises(InvalidArgumentError, match="algorithm"):
        item.template("moving_window")  # type: ignore[arg-type]


def test_trusted_proxies_walk_back_from_the_peer() -> None:
    none = TrustedProxies()
    assert none.empty
    assert none.client_address("10.0.0.1", None, "203.0.113.9") == "10.0.0.1"
    proxies = TrustedProxies(["10.0.0.0/8", "loopback"])
    assert not proxies.empty
    assert proxies.contains("10.1.2.3")
    assert not proxies.contains("11.0.0.1")
    assert proxies.client_address("10.0.0.1", None, "198.51.100.1, 203.0.113.9") == "203.0.113.9"
    assert proxies.client_address("127.0.0.1", "for=203.0.113.7", "198.51.100.1") == "203.0.113.7"
    assert proxies.client_address("::ffff:10.0.0.1", None, "203.0.113.9") == "203.0.113.9"
    with pytest.raises(InvalidArgumentError) as raised:
        TrustedProxies(["10.0.0.0/8", "10.0.0.0/33"])
    assert raised.value.position == 1
    with pytest.raises(ArgumentTypeError):
        TrustedProxies("10.0.0.0/8")
    with pytest.raises(InvalidArgumentError):
        proxies.client_address("not an address")


def test_response_fields_in_every_style() -> None:
    refused = Decision(False, 10, 0, 1_500_000, 30_000_000, 0, 60_000_000)
    assert response_fields(refused, [refused], ["10-in-1min"], "draft-8", False, 0) == [
        ("RateLimit-Policy", '"10-in-1min";q=10;w=60'),
        ("RateLimit", '"10-in-1min";r=0;t=30'),
        ("Retry-After", "2"),
    ]
    draft7 = dict(response_fields(refused, [refused], ["p"], "draft-7", True, 1_000))
    assert draft7["RateLimit"] == "limit=10, remaining=0, reset=30"
    assert draft7["X-RateLimit-Limit"] == "10"
    assert draft7["X-RateLimit-Reset"] == "1030"
    draft6 = dict(response_fields(refused, [refused], ["p"], "draft-6"))
    assert draft6["RateLimit-Limit"] == "10"
    assert draft6["RateLimit-Remaining"] == "0"
    assert draft6["RateLimit-Reset"] == "30"
    assert [n for n, _ in response_fields(refused, [refused], ["p"], "none")] == ["Retry-After"]
    with pytest.raises(InvalidArgumentError):
        response_fields(refused, [refused], ["a", "b"])
    with pytest.raises(InvalidArgumentError):
        response_fields(refused, [refused], ["p"], "draft-9")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        response_fields(refused, [refused], ["bad\nname"])


def test_combine_takes_the_strictest() -> None:
    a = Decision(True, 10, 9, 0, 1_000_000, 0, 1_000_000)
    b = Decision(True, 100, 3, 0, 1_000_000, 0, 60_000_000)
    assert combine_decisions([a, b]).remaining == 3
    with pytest.raises(InvalidArgumentError):
        combine_decisions([])


def test_keyed_limits_decides_per_key() -> None:
    clock = ManualClock()
    limits = KeyedLimits("2/minute", clock=clock, max_keys=10)
    assert limits.policies == ["2-in-1min"]
    assert limits.algorithm == "sliding_window_counter"
    assert [limits.check("a")[0].allowed for _ in range(3)] == [True, True, False]
    assert limits.check("b")[0].allowed
    assert len(limits) == 2
    assert not limits.peek("a")[0].allowed
    assert limits.remove("a")
    assert limits.check("a")[0].allowed
    combined, parts = limits.check(b"b")
    assert parts == [combined]
    assert "2 per 1 minute" in repr(limits)


def test_keyed_limits_of_several_limits_are_all_or_nothing() -> None:
    clock = ManualClock()
    limits = KeyedLimits("2/minute; 3/hour", "fixed_window", clock=clock)
    assert limits.policies == ["2-in-1min", "3-in-1hr"]
    assert [limits.check("a")[0].allowed for _ in range(3)] == [True, True, False]
    # The refusal by the minute took nothing from the hour.
    assert limits.peek("a", 0)[1][1].remaining == 1
    clock.advance(60.0)
    combined, parts = limits.check("a")
    assert combined.allowed
    assert [p.remaining for p in parts] == [1, 0]
    combined, parts = limits.check("a")
    assert not combined.allowed
    assert combined.retry_after > 60.0  # the hour's, the longer wait
    assert len(limits) == 1


class FakeRequest(Request):
    __slots__ = ("_headers", "_method", "_path", "_peer", "_user")

    def __init__(
        self,
        *,
        method: str = "GET",
        path: str = "/",
        peer: str | None = "192.0.2.1",
        headers: dict[str, str] | None = None,
        user: str | None = None,
        trusted: TrustedProxies | None = None,
    ) -> None:
        super().__init__(trusted or TrustedProxies())
        self._method, self._path, self._peer = method, path, peer
        self._headers = {k.lower(): v for k, v in (headers or {}).items()}
        self._user = user

    @property
    def method(self) -> str:
        return self._method

    @property
    def path(self) -> str:
        return self._path

    @property
    def peer(self) -> str | None:
        return self._peer

    @property
    def native(self) -> object:
        return self

    @property
    def user(self) -> str | None:
        return self._user

    def header(self, name: str) -> str | None:
        return self._headers.get(name.lower())


def test_keys_by_header_and_user_fall_back_to_the_address() -> None:
    key = by_header("X-Api-Key")
    assert key(FakeRequest(headers={"x-api-key": "abc"})) == "header:x-api-key:abc"
    assert key(FakeRequest()) == "192.0.2.1"
    assert by_header("X-Api-Key", fallback=None)(FakeRequest()) is None
    assert by_user()(FakeRequest(user="42")) == "user:42"
    assert by_user()(FakeRequest()) == "192.0.2.1"


def test_an_ipv6_client_is_keyed_by_its_block() -> None:
    assert client_key("2001:db8:0:1ff::7") == "2001:db8:0:100::/56"
    assert client_key("2001:db8:0:1ff::7", 64) == "2001:db8:0:1ff::/64"
    assert client_key("2001:db8:0:1ff::7", 128) == "2001:db8:0:1ff::7"
    assert client_key("::ffff:203.0.113.7", 1) == "203.0.113.7"
    assert by_client_address(FakeRequest(peer="2001:db8:0:1aa::9")) == "2001:db8:0:100::/56"
    assert by_client_address(FakeRequest(peer="192.0.2.1")) == "192.0.2.1"
    assert by_client_address(FakeRequest(peer="/run/a:b")) == "/run/a:b"
    assert by_client_address(FakeRequest(peer=None)) == ""
    whole = client_address_key(128)
    assert whole(FakeRequest(peer="2001:db8:0:1aa::9")) == "2001:db8:0:1aa::9"
    # By default, the addresses of one /56 share a limit; the next /56 does not.
    rule = RateLimit("2/hour", clock=ManualClock())
    block = [
        "2001:db8:0:100::1",
        "2001:db8:0:1ff:ffff::2",
        "2001:db8:0:180::3",
        "2001:db8:0:200::1",
    ]
    outcomes = [rule.decide(FakeRequest(peer=peer)) for peer in block]
    assert [o is not None and o.allowed for o in outcomes] == [True, True, False, True]
    for bad in (0, 129, -1, 2**70):
        with pytest.raises(InvalidArgumentError, match="from 1 to 128"):
            client_key("::1", bad)
        with pytest.raises(InvalidArgumentError):
            client_address_key(bad)
    for wrong in ("56", True, 56.0):
        with pytest.raises(ArgumentTypeError):
            client_key("::1", wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        client_key("not an address")


def test_a_rule_exempts_and_costs() -> None:
    clock = ManualClock()
    rule = RateLimit(
        "5/hour",
        exempt_paths=["/static/", "/health"],
        exempt_methods=["options"],
        cost=lambda r: 4 if r.method == "POST" else 1,
        clock=clock,
    )
    assert rule.decide(FakeRequest(path="/health")) is None
    assert rule.decide(FakeRequest(path="/health/db")) is None
    assert rule.decide(FakeRequest(path="/static/app.js")) is None
    assert rule.decide(FakeRequest(method="OPTIONS")) is None
    healthz = rule.decide(FakeRequest(path="/healthz"))
    assert healthz is not None
    assert healthz.decision.remaining == 4
    post = rule.decide(FakeRequest(method="POST"))
    assert post is not None
    assert post.allowed
    assert post.decision.remaining == 0
    refused = rule.decide(FakeRequest())
    assert refused is not None
    assert not refused.allowed
    assert ("Retry-After", refused.fields[-1][1]) == refused.fields[-1]


def test_a_key_of_none_is_unlimited_and_a_long_key_is_hashed() -> None:
    clock = ManualClock()
    rule = RateLimit("1/hour", key=by_header("X-Api-Key", fallback=None), clock=clock)
    assert rule.decide(FakeRequest()) is None
    long = "x" * 10_000
    first = rule.decide(FakeRequest(headers={"X-Api-Key": long}))
    second = rule.decide(FakeRequest(headers={"X-Api-Key": long}))
    assert first is not None
    assert first.allowed
    assert second is not None
    assert not second.allowed


def test_any_limiter_behind_a_rule() -> None:
    clock = ManualClock()
    keyed = RateLimit(KeyedLimiter(FixedWindow(1, 60.0, clock=clock), 10), policy="api")
    assert keyed.policies == ("api",)
    first = keyed.decide(FakeRequest())
    assert first is not None
    assert first.allowed
    assert ("RateLimit-Policy", '"api";q=1;w=60') in first.fields
    other = keyed.decide(FakeRequest(peer="192.0.2.2"))
    assert other is not None
    assert other.allowed
    one_budget = RateLimit(SlidingWindowCounter(1, 60.0, clock=clock))
    assert one_budget.decide(FakeRequest()) is not None
    again = one_budget.decide(FakeRequest(peer="192.0.2.2"))
    assert again is not None
    assert not again.allowed


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"limits": 10}, ArgumentTypeError),
        ({"limits": "1/hour", "key": "ip"}, ArgumentTypeError),
        ({"limits": "1/hour", "cost": 1.5}, ArgumentTypeError),
        ({"limits": "1/hour", "cost": -1}, InvalidArgumentError),
        ({"limits": "1/hour", "header_style": "draft-9"}, InvalidArgumentError),
        ({"limits": "1/hour", "trusted_proxies": "loopback"}, ArgumentTypeError),
        ({"limits": "1/hour", "trusted_proxies": ["nowhere"]}, InvalidArgumentError),
        ({"limits": "1/hour", "policy": "x"}, None),
        ({"limits": KeyedLimiter(FixedWindow(1, 1.0), 1), "policy": "bad\n"}, InvalidArgumentError),
        ({"limits": "1/hour", "algorithm": "moving_window"}, InvalidArgumentError),
    ],
)
def test_bad_rule_arguments_are_typed_errors(
    arguments: dict[str, Any], error: type[Exception] | None
) -> None:
    if error is None:
        RateLimit(**arguments)
        return
    with pytest.raises(error):
        RateLimit(**arguments)


def test_the_asgi_and_wsgi_views_of_a_request() -> None:
    trusted = TrustedProxies(["loopback"])
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/a/b",
        "client": ("127.0.0.1", 5000),
        "headers": [(b"x-forwarded-for", b"203.0.113.1"), (b"x-forwarded-for", b"203.0.113.2")],
    }
    asgi = AsgiRequest(scope, trusted)
    assert (asgi.method, asgi.path, asgi.peer) == ("POST", "/a/b", "127.0.0.1")
    assert asgi.header("X-Forwarded-For") == "203.0.113.1, 203.0.113.2"
    assert asgi.client == "203.0.113.2"
    assert asgi.user is None
    environ = {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "/app",
        "PATH_INFO": "/x",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_X_FORWARDED_FOR": "203.0.113.5",
        "REMOTE_USER": "ada",
    }
    wsgi = WsgiRequest(environ, trusted)
    assert (wsgi.method, wsgi.path, wsgi.client, wsgi.user) == (
        "GET",
        "/app/x",
        "203.0.113.5",
        "ada",
    )
    assert WsgiRequest({"REMOTE_ADDR": "/tmp/socket"}, trusted).client == "/tmp/socket"


def test_decide_async_on_a_local_limiter() -> None:
    rule = RateLimit("1/hour", clock=ManualClock())
    first = asyncio.run(rule.decide_async(FakeRequest()))
    second = asyncio.run(rule.decide_async(FakeRequest()))
    assert first is not None
    assert first.allowed
    assert second is not None
    assert not second.allowed


def test_importing_ratekeeper_http_imports_no_framework(tmp_path: Any) -> None:
    frameworks = {"starlette", "fastapi", "flask", "django", "werkzeug", "uvicorn", "asyncio"}
    assert not frameworks & imported_after("import ratekeeper.http", tmp_path)
    assert not frameworks & imported_after("import ratekeeper.http.asgi", tmp_path)
    assert not frameworks & imported_after("import ratekeeper.http.wsgi", tmp_path)
    assert "ratekeeper.http" not in imported_after("import ratekeeper", tmp_path)
    assert ratekeeper.__name__ == "ratekeeper"


def test_the_authenticated_user_of_each_framework() -> None:
    from starlette.authentication import SimpleUser, UnauthenticatedUser

    trusted = TrustedProxies()
    key = by_user()

    def scope(user: object) -> dict[str, Any]:
        return {"type": "http", "client": ("192.0.2.9", 1), "headers": [], "user": user}

    assert key(AsgiRequest(scope(SimpleUser("ada")), trusted)) == "user:ada"
    assert key(AsgiRequest(scope(UnauthenticatedUser()), trusted)) == "192.0.2.9"

    class DjangoUser:  # what django.contrib.auth's user answers
        is_authenticated = True
        pk = 42

    class AnonymousUser:
        is_authenticated = False
        pk = None

    assert identity(DjangoUser()) == "42"
    assert identity(AnonymousUser()) is None
    assert identity(None) is None
    wsgi = WsgiRequest({"REMOTE_ADDR": "192.0.2.9", "REMOTE_USER": "grace"}, trusted)
    assert key(wsgi) == "user:grace"


def test_async_views_are_limited_too() -> None:
    import flask

    from ratekeeper.http.flask import limit

    app = flask.Flask("rk_async_view")

    @app.get("/")
    @limit("1/hour", clock=ManualClock())
    async def view() -> str:
        return "ok"

    client = app.test_client()
    first, second = client.get("/"), client.get("/")
    assert first.status_code == 200
    assert first.headers["RateLimit"].startswith('"1-in-1hr";r=0;')
    assert second.status_code == 429
    assert int(second.headers["Retry-After"]) >= 3600


def test_when_full_decides_for_new_keys() -> None:
    clock = ManualClock()
    refusing = RateLimit("5/hour", max_keys=1, clock=clock)
    evicting = RateLimit("5/hour", max_keys=1, when_full="evict_soonest_full", clock=clock)
    for rule, admitted in ((refusing, False), (evicting, True)):
        assert rule.decide(FakeRequest(peer="192.0.2.1")) is not None
        second = rule.decide(FakeRequest(peer="192.0.2.2"))
        assert second is not None
        assert second.allowed is admitted
