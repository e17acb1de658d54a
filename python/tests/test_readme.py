"""The README's Python example runs as printed."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_runs() -> None:
    section = README.read_text(encoding="utf-8").split("## Using it from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), str(README), "exec"), namespace)
    main = namespace["main"]
    assert callable(main)
    asyncio.run(main())
    limiter = namespace["limiter"]
    assert repr(limiter).startswith("RateLimiter(10.0, max_burst_seconds=1.0")
