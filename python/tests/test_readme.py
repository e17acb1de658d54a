"""The README's Python example runs as printed."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from ratekeeper import ConcurrencyLimiter, RateLimitExceeded

README = Path(__file__).resolve().parents[2] / "README.md"


def examples() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Using it from Python", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_readme_example_runs() -> None:
    namespace: dict[str, object] = {}
    exec(compile(examples()[0], str(README), "exec"), namespace)
    main = namespace["main"]
    assert callable(main)
    asyncio.run(main())
    limiter = namespace["limiter"]
    assert repr(limiter).startswith("RateLimiter(10.0, max_burst_seconds=1.0")


def test_the_readme_algorithms_example_runs() -> None:
    namespace: dict[str, object] = {}
    exec(compile(examples()[1], str(README), "exec"), namespace)
    pool = namespace["pool"]
    assert isinstance(pool, ConcurrencyLimiter)
    assert pool.in_flight == 0  # the with block gave its permit back
    handle = namespace["handle"]
    assert callable(handle)
    with pytest.raises(RateLimitExceeded):
        handle(None)  # the limiter was used up by the example
