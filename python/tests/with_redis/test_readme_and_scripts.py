"""The README's Redis example runs as printed, and
``tests/redis_admit.py`` (the cross-language test's Python side) admits
exactly the limit between its runs."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

from ratekeeper import Decision, RedisLimiter, RedisRateLimiter

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_redis_example_runs(redis_url: str) -> None:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Using it from Python")[1]
    section = section.split("\n## ", 1)[0]
    (example,) = [e for e in re.findall(r"```python\n(.*?)```", section, re.DOTALL) if "Redis" in e]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)
    api, crawler, handle = namespace["api"], namespace["crawler"], namespace["handle"]
    assert isinstance(api, RedisLimiter)
    assert isinstance(crawler, RedisRateLimiter)
    assert callable(handle)
    asyncio.run(handle("user:43"))
    decision = api.peek("user:42")
    assert isinstance(decision, Decision)
    assert decision.remaining == 28  # the example's check took one


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
