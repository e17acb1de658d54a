"""`Decision`: a frozen value with seconds and exact microseconds, and the
HTTP fields it writes."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import pytest

from ratekeeper import (
    ArgumentTypeError,
    Decision,
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    ManualClock,
    ratelimit_header,
    ratelimit_policy_header,
)

NEVER = 2**63 - 1


def test_fields_in_seconds_and_exact_microseconds() -> None:
    d = Decision(False, 10, 0, 1_500_001, 29_500_000, 0, 60_000_000)
    assert (d.allowed, d.limit, d.remaining) == (False, 10, 0)
    assert (d.retry_after, d.reset_after, d.wait, d.window) == (1.500001, 29.5, 0.0, 60.0)
    assert d.retry_after_micros == 1_500_001
    assert d.reset_after_micros == 29_500_000
    assert d.wait_micros == 0
    assert d.window_micros == 60_000_000
    assert not d.is_never
    for seconds in (d.retry_after, d.reset_after, d.wait, d.window):
        assert isinstance(seconds, float)


def test_never_is_infinite_seconds() -> None:
    d = Decision(False, 5, 0, NEVER, NEVER, 0, NEVER)
    assert d.is_never
    assert d.retry_after == math.inf
    assert d.reset_after == math.inf
    assert d.window == math.inf
    assert d.retry_after_micros == NEVER
    # An admitted decision is never "never", whatever its retry-after.
    assert not Decision(True, 5, 4, NEVER).is_never


def test_truthiness_is_allowed() -> None:
    assert Decision(True, 1, 0)
    assert not Decision(False, 1, 0)


def test_a_value_type() -> None:
    a = Decision(True, 10, 9, 0, 100_000, 0, 1_000_000)
    b = Decision(True, 10, 9, reset_after_micros=100_000, window_micros=1_000_000)
    assert a == b
    assert hash(a) == hash(b)
    assert a != Decision(True, 10, 8, 0, 100_000, 0, 1_000_000)
    assert len({a, b}) == 1
    assert eval(repr(a), {"Decision": Decision}) == a
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a
    with pytest.raises(AttributeError):
        a.allowed = False  # type: ignore[misc]


def test_limiters_return_decisions_equal_to_their_fields() -> None:
    clock = ManualClock()
    d = FixedWindow(100, 60.0, clock=clock).check()
    assert d == Decision(True, 100, 99, 0, 60_000_000, 0, 60_000_000)
    assert repr(d) == (
        "Decision(allowed=True, limit=100, remaining=99, retry_after_micros=0, "
        "reset_after_micros=60000000, wait_micros=0, window_micros=60000000)"
    )


def test_the_http_fields() -> None:
    d = Decision(True, 100, 50, 0, 29_500_000, 0, 60_000_000)
    assert d.ratelimit_header() == '"default";r=50;t=30'
    assert d.ratelimit_header("api") == '"api";r=50;t=30'
    assert d.ratelimit_policy_header(policy_name="api") == '"api";q=100;w=60'
    assert d.retry_after_header() is None
    assert d.headers("api") == {
        "RateLimit-Policy": '"api";q=100;w=60',
        "RateLimit": '"api";r=50;t=30',
    }


def test_a_refusal_has_retry_after_rounded_up() -> None:
    d = Decision(False, 10, 0, 1_000_001, 5_000_000, 0, 1_000_000)
    assert d.retry_after_header() == "2"
    assert d.headers()["Retry-After"] == "2"


def test_never_sends_no_retry_after_and_no_t() -> None:
    d = Decision(False, 5, 0, NEVER, NEVER, 0, NEVER)
    assert d.retry_after_header() is None
    assert d.headers("p") == {"RateLimit-Policy": '"p";q=5', "RateLimit": '"p";r=0'}


def test_names_are_quoted_and_escaped() -> None:
    d = Decision(True, 1, 1, 0, 0, 0, 10)
    assert d.ratelimit_header('a "q" \\ n') == '"a \\"q\\" \\\\ n";r=1;t=0'
    assert d.ratelimit_policy_header("p") == '"p";q=1;w=1'  # w is at least 1


@pytest.mark.parametrize(
    ("name", "byte"), [("tab\there", 9), ("new\nline", 10), ("é", 0xC3), ("\x7f", 0x7F)]
)
def test_names_outside_printable_ascii_are_invalid(name: str, byte: int) -> None:
    d = Decision(True, 1, 1)
    for call in (d.ratelimit_header, d.ratelimit_policy_header, d.headers):
        with pytest.raises(InvalidArgumentError) as raised:
            call(name)
        assert raised.value.argument == "policy_name"
        assert raised.value.value == byte
        assert "must be printable ASCII" in str(raised.value)


@pytest.mark.parametrize("bad", [1, None, b"api", ["api"]])
def test_names_of_the_wrong_type(bad: Any) -> None:
    d = Decision(True, 1, 1)
    for call in (d.ratelimit_header, d.ratelimit_policy_header, d.headers):
        with pytest.raises(ArgumentTypeError) as raised:
            call(bad)
        assert raised.value.argument == "policy_name"


def test_several_policies_in_one_field() -> None:
    clock = ManualClock()
    second, hour = Gcra(9, 10, 1.0, clock=clock), FixedWindow(1000, 3600, clock=clock)
    parts = {"per-second": second.check(), "per-hour": hour.check()}
    expected = '"per-second";r=9;t=1, "per-hour";r=999;t=3600'
    assert ratelimit_header(parts) == expected
    assert ratelimit_header(list(parts.items())) == expected
    assert ratelimit_header(iter(parts.items())) == expected
    assert ratelimit_policy_header(parts) == '"per-second";q=10;w=1, "per-hour";q=1000;w=3600'
    assert ratelimit_header({}) == ""


@pytest.mark.parametrize(
    "bad",
    [None, 5, [("a",)], [("a", 1)], [(1, Decision(True, 1, 1))], {"a": "decision"}, ["ab"]],
)
def test_several_policies_of_the_wrong_type(bad: Any) -> None:
    for function in (ratelimit_header, ratelimit_policy_header):
        with pytest.raises(ArgumentTypeError) as raised:
            function(bad)
        assert raised.value.argument == "policies"


def test_several_policies_with_a_bad_name() -> None:
    with pytest.raises(InvalidArgumentError, match="policy_name = 10"):
        ratelimit_header({"ok": Decision(True, 1, 1), "bad\n": Decision(True, 1, 1)})


@pytest.mark.parametrize(
    ("kwargs", "argument", "kind"),
    [
        ({"allowed": 1}, "allowed", ArgumentTypeError),
        ({"allowed": None}, "allowed", ArgumentTypeError),
        ({"limit": -1}, "limit", InvalidArgumentError),
        ({"limit": 2**63}, "limit", InvalidArgumentError),
        ({"limit": 1.0}, "limit", ArgumentTypeError),
        ({"remaining": -5}, "remaining", InvalidArgumentError),
        ({"retry_after_micros": -1}, "retry_after_micros", InvalidArgumentError),
        ({"reset_after_micros": 0.5}, "reset_after_micros", ArgumentTypeError),
        ({"wait_micros": True}, "wait_micros", ArgumentTypeError),
        ({"window_micros": 2**64}, "window_micros", InvalidArgumentError),
    ],
)
def test_building_one_checks_every_field(
    kwargs: dict[str, Any], argument: str, kind: type[Exception]
) -> None:
    fields: dict[str, Any] = {"allowed": True, "limit": 1, "remaining": 1, **kwargs}
    with pytest.raises(kind) as raised:
        Decision(**fields)
    assert getattr(raised.value, "argument", None) == argument
