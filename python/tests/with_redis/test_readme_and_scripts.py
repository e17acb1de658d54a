"""The markdown's Python blocks that need a Redis (```python redis) run
against the server, and ``tests/redis_admit.py`` (the cross-language test's
Python side) admits exactly the limit between its runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import doc_snippets  # scripts/, on pytest's pythonpath
import pytest

from ratekeeper import Decision, RedisConcurrencyLimiter, RedisLimiter, RedisRateLimiter

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = doc_snippets.programs("python", redis=True)


def test_the_markdown_has_python_blocks_that_need_a_redis() -> None:
    assert {"docs/python.md", "python/README.md"} <= {p.last.path for p in PROGRAMS}


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_the_block_runs_against_the_server(program: doc_snippets.Program, redis_url: str) -> None:
    doc_snippets.run_python(program, redis_url)


def test_the_guide_redis_example_takes_one_and_handles_asynchronously(redis_url: str) -> None:
    (example,) = [
        p for p in PROGRAMS if p.last.path == "docs/python.md" and "RedisRateLimiter" in p.last.code
    ]
    namespace = doc_snippets.run_python(example, redis_url)
    api, crawler, handle = namespace["api"], namespace["crawler"], namespace["handle"]
    assert isinstance(api, RedisLimiter)
    assert isinstance(crawler, RedisRateLimiter)
    assert callable(handle)
    asyncio.run(handle("user:43"))  # a key no other block or test uses
    decision = api.peek("user:43")
    assert isinstance(decision, Decision)
    assert decision.remaining == 28  # handle's check took one (a peek shows one more taken)


def test_the_guide_concurrency_example_releases_its_lease(redis_url: str) -> None:
    (example,) = [
        p
        for p in PROGRAMS
        if p.last.path == "docs/python.md" and "RedisConcurrencyLimiter" in p.last.code
    ]
    namespace = doc_snippets.run_python(example, redis_url)
    payments = namespace["payments"]
    assert isinstance(payments, RedisConcurrencyLimiter)
    assert payments.held() == 0  # the block's lease went back exactly once


def admit(name: str, key: str, n: int) -> int:
    out = subprocess.run(
        [sys.executable, str(ROOT / "python" / "tests" / "redis_admit.py"), name, key, str(n)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=os.environ,
    )
    return int(out.stdout)


def test_redis_admit_admits_the_limit_across_runs() -> None:
    name = f"admit-{uuid.uuid4().hex[:8]}"
    assert admit(name, "k", 20) == 20
    assert admit(name, "k", 20) == 10  # 30 at once in all
    assert admit(name, "k", 5) == 0
    assert admit(name, "other", 40) == 30


def test_redis_admit_usage() -> None:
    script = str(ROOT / "python" / "tests" / "redis_admit.py")
    for argv in ([], ["n", "k"], ["n", "k", "x"]):
        done = subprocess.run([sys.executable, script, *argv], capture_output=True, text=True)
        assert done.returncode == 2
        assert "usage: redis_admit.py NAME KEY N" in done.stderr
