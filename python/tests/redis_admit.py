#!/usr/bin/env python3
"""Admits from a shared exact-mode limiter, for the cross-language test.

    python/tests/redis_admit.py NAME KEY N

Makes N ``check(KEY, 1)`` calls on the exact GCRA limiter NAME (max_burst
29, 30 per 60 s: at most 30 admitted at once) of the Redis at
``RATEKEEPER_REDIS_URL`` and prints how many were admitted, alone on one
line. Node's ``node/test/redis-admit.mjs`` and the C test's program take the
same arguments and make the same limiter, so that
``tests/redis/cross-language.sh`` can check that the three languages
together never get more than the limit.

Needs ``ratekeeper`` importable: run it with the project's venv
(``.venv/bin/python``); run with another interpreter, it starts itself
again with that venv's when it exists. Exits 2 on bad arguments, 1 when
Redis cannot be reached.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE = "usage: redis_admit.py NAME KEY N   (RATEKEEPER_REDIS_URL names the Redis)"


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[2].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    name, key, n = argv[0], argv[1], int(argv[2])
    url = os.environ.get("RATEKEEPER_REDIS_URL")
    if not url:
        print("redis_admit.py: RATEKEEPER_REDIS_URL is not set", file=sys.stderr)
        return 2

    from ratekeeper import Gcra, RedisError, RedisLimiter, RedisStore

    try:
        store = RedisStore.connect(url, timeout=2.0, connect_timeout=2.0)
        limiter = RedisLimiter(store, name, Gcra(29, 30, 60.0))
        admitted = sum(1 for _ in range(n) if limiter.check(key, 1).allowed)
    except RedisError as e:
        print(f"redis_admit.py: {e}", file=sys.stderr)
        return 1
    print(admitted)
    return 0


def _reexec_with_the_project_venv() -> None:
    """Starts again under the project's venv when ``ratekeeper`` is not
    importable here and that venv exists (the other languages' tests call
    this script with whatever ``python3`` they find)."""
    try:
        import ratekeeper  # noqa: F401
    except ImportError:
        venv = Path(os.environ.get("RK_VENV", Path(__file__).resolve().parents[2] / ".venv"))
        python = venv / "bin" / "python"
        if python.exists() and Path(sys.prefix).resolve() != venv.resolve():
            os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


if __name__ == "__main__":
    _reexec_with_the_project_venv()
    sys.exit(main(sys.argv[1:]))
