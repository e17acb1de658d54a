"""What the annotations refuse: misuses that ``mypy --strict`` must flag.

The rest of the suite is type-checked as it is, which shows what the stubs
accept; these snippets show what they reject. Each line marked ``# error``
must have a mypy error, and no other line may.
"""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

MISUSES = """
from ratekeeper import FixedWindow, KeyedLimiter, RedisDividedLimiter, RedisLimiter

keyed = KeyedLimiter(FixedWindow(1, 60.0), 100)


@keyed.limited  # error
def bare(request: str) -> str:
    return request


@keyed.limited  # error
async def bare_async(request: str) -> str:
    return request


@keyed.limited(lambda request: request)  # error
def key_function_first(request: str) -> str:
    return request


class Service:
    @keyed.limited  # error
    def method(self, request: str) -> str:
        return request


def shared(exact: RedisLimiter, divided: RedisDividedLimiter) -> None:
    @exact.limited  # error
    def bare_exact(request: str) -> str:
        return request

    @divided.limited  # error
    def bare_divided(request: str) -> str:
        return request


@keyed.limited(key=lambda request: request)
def by_key_function(request: str) -> str:
    return request


@keyed.limited("everyone", cost=2)
async def by_fixed_key() -> str:
    return "ok"


@keyed.limited(key=b"everyone")
def by_fixed_key_named() -> str:
    return "ok"
"""


def test_mypy_refuses_a_bare_keyed_decorator(tmp_path: Path) -> None:
    snippet = tmp_path / "misuses.py"
    snippet.write_text(MISUSES)
    report, errors, status = api.run(
        ["--strict", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(snippet)]
    )
    assert errors == ""
    expected = {n for n, line in enumerate(MISUSES.splitlines(), 1) if line.endswith("# error")}
    flagged = {
        int(m.group(1)) for m in re.finditer(r"^[^:\n]*misuses\.py:(\d+): error:", report, re.M)
    }
    assert flagged == expected, report
    assert status == 1
