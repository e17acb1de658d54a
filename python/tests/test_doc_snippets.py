"""The Python blocks of the repository's markdown run as printed.

``scripts/doc_snippets.py`` finds them (every ``*.md``, not one section) and
runs each in a namespace of its own, then its ``main()`` if it defines one.
The blocks that need a Redis (```python redis) run in
``tests/with_redis/test_readme_and_scripts.py``.
"""

from __future__ import annotations

import doc_snippets  # scripts/, on pytest's pythonpath
import pytest

from ratekeeper import ConcurrencyLimiter, RateLimitExceeded

PROGRAMS = doc_snippets.programs("python", redis=False)


def guide_block(containing: str) -> doc_snippets.Program:
    """The block of the Python guide, docs/python.md, with this text."""
    (program,) = [
        p for p in PROGRAMS if p.last.path == "docs/python.md" and containing in p.last.code
    ]
    return program


def test_the_markdown_has_python_blocks() -> None:
    paths = {p.last.path for p in PROGRAMS}
    assert {"README.md", "docs/python.md", "python/README.md"} <= paths


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_the_block_runs(program: doc_snippets.Program) -> None:
    doc_snippets.run_python(program)


def test_the_guide_rate_limiter_example_leaves_its_limiter_at_the_new_rate() -> None:
    namespace = doc_snippets.run_python(guide_block("RateLimiter.create(5.0)"))
    limiter = namespace["limiter"]
    assert repr(limiter).startswith("RateLimiter(10.0, max_burst_seconds=1.0")


def test_the_guide_algorithms_example_gives_its_permit_back_and_uses_up_its_limiter() -> None:
    namespace = doc_snippets.run_python(guide_block("ConcurrencyLimiter(GradientPolicy"))
    pool = namespace["pool"]
    assert isinstance(pool, ConcurrencyLimiter)
    assert pool.in_flight == 0  # the with block gave its permit back
    handle = namespace["handle"]
    assert callable(handle)
    with pytest.raises(RateLimitExceeded):
        handle(None)  # the limiter was used up by the example
