"""Sequential decisions through Redis from Python: ``RedisLimiter.check()``
beside ``limits``' ``RedisStorage``, in the same run, on the same Redis.

    benches/redis/python/run --json FILE [--quick]

Reads the server from ``RATEKEEPER_REDIS_URL`` (``benches/redis/run`` and
``tests/redis/with-redis`` start one). One process makes one decision at a
time (the way a synchronous web handler calls a limiter), each contender on
one key of its own with a limit no run reaches, so that every decision
admits and each does its full work:

* ratekeeper: exact-mode GCRA (the reference), fixed window, sliding
  window counter and sliding log (a sorted set) — ``limiter.check(key)``;
* limits 5.8: its moving window (a list of timestamps), fixed window and
  sliding-window counter on ``RedisStorage`` — ``limiter.hit(item, key)``;
* redis-py's ``PING`` on the connection limits uses: the round trip alone.

Before timing, every contender is checked to admit. Contenders are timed in
interleaved rounds (a batch of calls each, round after round), so that a
change of the machine's load falls on all of them alike; each one's figure
is the median over rounds of the time per decision. Prints a Markdown table
and each ``limits`` strategy's time divided by ratekeeper's (the speed-up),
against the issue's target of 1.2x; ``--json FILE`` writes the medians in
the ``ratekeeper-bench/1`` format of ``benches/report.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable

TARGET = 1.2
WORKLOAD = "sequential decisions, one process, one at a time"
REFERENCE = "ratekeeper GCRA (exact mode)"
# limits' strategy, and the ratekeeper algorithm it is set against.
PAIRS = [
    ("limits moving window", "ratekeeper sliding log"),
    ("limits fixed window", "ratekeeper fixed window"),
    ("limits sliding window counter", "ratekeeper sliding window counter"),
]


@dataclass
class Contender:
    name: str
    decide: Callable[[], object]
    times: list[float]


def contenders(url: str) -> list[Contender]:
    import redis
    from limits import RateLimitItemPerMinute, storage, strategies

    from ratekeeper import (
        FixedWindow,
        Gcra,
        RedisLimiter,
        RedisStore,
        SlidingLog,
        SlidingWindowCounter,
    )

    # A store's timeout far above a round trip: a slow moment is a slow
    # decision here, not an error.
    store = RedisStore.connect(url, timeout=5.0, connect_timeout=5.0)
    tag = f"{os.getpid()}-{time.time_ns()}"
    huge = 10**12

    def ours(name: str, template: Any) -> Callable[[], object]:
        limiter = RedisLimiter(store, f"bench-{name}-{tag}", template)
        return lambda: limiter.check("key")

    redis_storage = storage.RedisStorage(url)
    item = RateLimitItemPerMinute(huge)
    # The moving window keeps one list entry per hit, up to the limit: a
    # limit above every hit a run makes keeps each hit a full one.
    moving_item = RateLimitItemPerMinute(10**7)

    def theirs(strategy: Any, limit: Any) -> Callable[[], object]:
        limiter = strategy(redis_storage)
        key = f"bench-{tag}-{strategy.__name__}"
        return lambda: limiter.hit(limit, key)

    client = redis.Redis.from_url(url)
    return [
        Contender(REFERENCE, ours("gcra", Gcra(huge - 1, huge, 1.0)), []),
        Contender("ratekeeper fixed window", ours("fw", FixedWindow(huge, 60.0)), []),
        Contender(
            "ratekeeper sliding window counter", ours("swc", SlidingWindowCounter(huge, 60.0)), []
        ),
        Contender("ratekeeper sliding log", ours("log", SlidingLog(10**6, 60.0)), []),
        Contender(
            "limits moving window", theirs(strategies.MovingWindowRateLimiter, moving_item), []
        ),
        Contender("limits fixed window", theirs(strategies.FixedWindowRateLimiter, item), []),
        Contender(
            "limits sliding window counter",
            theirs(strategies.SlidingWindowCounterRateLimiter, item),
            [],
        ),
        Contender("redis-py PING (round trip only)", client.ping, []),
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="FILE", help="write the ratekeeper-bench/1 results")
    parser.add_argument("--quick", action="store_true", help="fewer rounds: rough figures")
    args = parser.parse_args(argv)
    url = os.environ.get("RATEKEEPER_REDIS_URL")
    if not url:
        parser.error("RATEKEEPER_REDIS_URL names the Redis to run against")
    rounds, batch = (5, 100) if args.quick else (21, 300)

    everyone = contenders(url)
    for c in everyone:
        answer = c.decide()
        if not answer:
            raise SystemExit(f"{c.name}: refused or failed before timing ({answer!r})")
    # Warm-up: connections, script caches, allocators.
    for c in everyone:
        for _ in range(batch // 2):
            c.decide()
    for _ in range(rounds):
        for c in everyone:
            decide = c.decide
            start = time.perf_counter_ns()
            for _ in range(batch):
                decide()
            c.times.append((time.perf_counter_ns() - start) / batch)
    for c in everyone:
        if not c.decide():
            raise SystemExit(f"{c.name}: refused after timing: the limit was reached")

    medians = {c.name: statistics.median(c.times) for c in everyone}
    reference = medians[REFERENCE]
    print(f"| contender ({WORKLOAD}) | µs per decision | decisions/s | time ÷ ratekeeper GCRA's |")
    print("|---|---:|---:|---:|")
    for c in everyone:
        ns = medians[c.name]
        print(f"| {c.name} | {ns / 1000:.1f} | {1e9 / ns:,.0f} | {ns / reference:.2f} |")
    print()
    lines = []
    for theirs, ours in PAIRS:
        speedup = medians[theirs] / medians[ours]
        versus_gcra = medians[theirs] / reference
        met = "met" if min(speedup, versus_gcra) >= TARGET else "NOT met"
        lines.append(
            f"{theirs}: {speedup:.2f}x the time of {ours}, {versus_gcra:.2f}x that of "
            f"ratekeeper GCRA (target >= {TARGET}x: {met})"
        )
    print("\n".join(lines))

    if args.json:
        versions = {
            "ratekeeper": metadata.version("ratekeeper"),
            "limits": metadata.version("limits"),
            "redis-py": metadata.version("redis"),
        }
        doc = {
            "format": "ratekeeper-bench/1",
            "suite": "redis-python",
            "title": "Redis from Python: sequential check() beside limits' RedisStorage",
            "command": "benches/redis/python/run --json FILE" + (" --quick" if args.quick else ""),
            "notes": (
                f"One process, one decision at a time, against one local Redis; "
                f"{rounds} interleaved rounds of {batch} decisions per contender, the median "
                "per decision. Every decision admits (limits out of reach). "
                + "; ".join(lines)
                + f". Python {platform.python_version()}; "
                + ", ".join(f"{k} {v}" for k, v in versions.items())
                + "."
            ),
            "tables": [
                {
                    "title": "Time per decision through Redis (sequential)",
                    "reference": REFERENCE,
                    "rows": [
                        {"workload": WORKLOAD, "contender": name, "value": ns}
                        for name, ns in medians.items()
                    ],
                }
            ],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
