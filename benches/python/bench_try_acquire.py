"""``try_acquire()`` and ``check()`` beside the rate limiters Python users
use today.

    benches/python/run [pyperf options]      (make bench runs it)

One limiter and one key per contender, in the same run, under pyperf (each
benchmark in fresh worker processes, calibrated, with warm-ups), in four
workloads:

* ``admit``: every call is admitted (a limit far above the call rate);
* ``refuse``: every call is refused (the one permit of a long period was
  taken in the setup);
* ``check admit`` and ``check refuse``: the same for the admission-style
  algorithms, whose ``check()`` answers with a ``Decision`` (an object
  with the HTTP header fields' numbers), beside the same algorithms in
  ``limits``: its fixed window against ``FixedWindow.check()``, its
  sliding-window counter against ``SlidingWindowCounter.check()``; and
  ``Gcra.check()`` and ``FixedWindow.allow()`` (a bool, no ``Decision``)
  for scale.

Each call is written as a user would write it (``limiter.try_acquire()``,
``limiter.hit(item, "key")``, ...), inlined ten times in the timing loop. Before
timing, the main process checks that every contender gives the workload's
answer, so that no one is timed on the wrong path. The last lines are a
Markdown table of medians and of each contender's time divided by
ratekeeper's (the speed-up; in the check workloads, by the ratekeeper
algorithm it is set against), and the two targets of the issue.
``--summary-json PATH`` also writes the medians in the ``ratekeeper-bench/1``
format that ``benches/report.py`` turns into BENCHMARKS.md.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from typing import Callable

import pyperf


@dataclass(frozen=True)
class Contender:
    name: str
    setup: str
    call: str
    # The ratekeeper contender this one's time is divided by (the same
    # algorithm, in the check workloads; itself for those); None: the one
    # named "ratekeeper".
    versus: str | None = None


def contenders(admit: bool) -> list[Contender]:
    """The contenders of one workload: admit every call, or refuse every call."""
    if admit:
        return [
            Contender(
                "ratekeeper",
                "from ratekeeper import RateLimiter\nlimiter = RateLimiter.create(1e9)",
                "limiter.try_acquire()",
            ),
            Contender(
                "limits (fixed window)",
                "from limits import RateLimitItemPerSecond, storage, strategies\n"
                "limiter = strategies.FixedWindowRateLimiter(storage.MemoryStorage())\n"
                "item = RateLimitItemPerSecond(10**9)",
                'limiter.hit(item, "key")',
            ),
            Contender(
                "limits (sliding-window counter)",
                "from limits import RateLimitItemPerSecond, storage, strategies\n"
                "limiter = strategies.SlidingWindowCounterRateLimiter(storage.MemoryStorage())\n"
                "item = RateLimitItemPerSecond(10**9)",
                'limiter.hit(item, "key")',
            ),
            Contender(
                "pyrate-limiter",
                "from pyrate_limiter import Duration, Limiter, Rate\n"
                "limiter = Limiter(Rate(10**9, Duration.SECOND))",
                'limiter.try_acquire("key", blocking=False)',
            ),
            Contender(
                "token-bucket",
                "import token_bucket\n"
                "limiter = token_bucket.Limiter(10**9, 10**9, token_bucket.MemoryStorage())",
                'limiter.consume("key")',
            ),
            Contender(
                "ratelimit (decorator)",
                "from ratelimit import limits\n"
                "@limits(calls=10**9, period=1, raise_on_limit=False)\n"
                "def call():\n"
                "    return True",
                "call()",
            ),
        ]
    return [
        Contender(
            "ratekeeper",
            "from ratekeeper import RateLimiter\n"
            "limiter = RateLimiter.create(1 / 86400)\n"
            "limiter.try_acquire()",
            "limiter.try_acquire()",
        ),
        Contender(
            "limits (fixed window)",
            "from limits import RateLimitItemPerDay, storage, strategies\n"
            "limiter = strategies.FixedWindowRateLimiter(storage.MemoryStorage())\n"
            "item = RateLimitItemPerDay(1)\n"
            'limiter.hit(item, "key")',
            'limiter.hit(item, "key")',
        ),
        Contender(
            "limits (sliding-window counter)",
            "from limits import RateLimitItemPerDay, storage, strategies\n"
            "limiter = strategies.SlidingWindowCounterRateLimiter(storage.MemoryStorage())\n"
            "item = RateLimitItemPerDay(1)\n"
            'limiter.hit(item, "key")',
            'limiter.hit(item, "key")',
        ),
        Contender(
            "pyrate-limiter",
            "from pyrate_limiter import Duration, Limiter, Rate\n"
            "limiter = Limiter(Rate(1, Duration.DAY))\n"
            'limiter.try_acquire("key", blocking=False)',
            'limiter.try_acquire("key", blocking=False)',
        ),
        Contender(
            "token-bucket",
            "import token_bucket\n"
            "limiter = token_bucket.Limiter(1 / 86400, 1, token_bucket.MemoryStorage())\n"
            'limiter.consume("key")',
            'limiter.consume("key")',
        ),
        Contender(
            "ratelimit (decorator)",
            "from ratelimit import limits\n"
            "@limits(calls=1, period=86400, raise_on_limit=False)\n"
            "def call():\n"
            "    return True\n"
            "call()",
            # Refused, the decorator returns None without calling.
            "call() or False",
        ),
    ]


LIMITS_FIXED = "limits (fixed window)"
LIMITS_COUNTER = "limits (sliding-window counter)"
RK_FIXED = "ratekeeper FixedWindow.check()"
RK_COUNTER = "ratekeeper SlidingWindowCounter.check()"


def check_contenders(admit: bool) -> list[Contender]:
    """The admission-style workloads: ``check()`` against the same algorithm
    in ``limits``. Admitted: a limit of 10^9 per second; refused: 1 per day,
    taken in the setup."""
    limit, period, item = ("10**9", "1.0", "RateLimitItemPerSecond(10**9)")
    if not admit:
        limit, period, item = ("1", "86400.0", "RateLimitItemPerDay(1)")
    take = "" if admit else "\nlimiter.check()"
    take_limits = "" if admit else '\nlimiter.hit(item, "key")'
    return [
        Contender(
            RK_FIXED,
            f"from ratekeeper import FixedWindow\nlimiter = FixedWindow({limit}, {period}){take}",
            "limiter.check()",
            versus=RK_FIXED,
        ),
        Contender(
            RK_COUNTER,
            "from ratekeeper import SlidingWindowCounter\n"
            f"limiter = SlidingWindowCounter({limit}, {period}){take}",
            "limiter.check()",
            versus=RK_COUNTER,
        ),
        Contender(
            "ratekeeper Gcra.check()",
            f"from ratekeeper import Gcra\nlimiter = Gcra({limit} - 1, {limit}, {period}){take}",
            "limiter.check()",
            versus=RK_FIXED,
        ),
        Contender(
            "ratekeeper FixedWindow.allow()",
            f"from ratekeeper import FixedWindow\nlimiter = FixedWindow({limit}, {period}){take}",
            "limiter.allow()",
            versus=RK_FIXED,
        ),
        Contender(
            LIMITS_FIXED,
            "from limits import RateLimitItemPerDay, RateLimitItemPerSecond, storage, strategies\n"
            "limiter = strategies.FixedWindowRateLimiter(storage.MemoryStorage())\n"
            f"item = {item}{take_limits}",
            'limiter.hit(item, "key")',
            versus=RK_FIXED,
        ),
        Contender(
            LIMITS_COUNTER,
            "from limits import RateLimitItemPerDay, RateLimitItemPerSecond, storage, strategies\n"
            "limiter = strategies.SlidingWindowCounterRateLimiter(storage.MemoryStorage())\n"
            f"item = {item}{take_limits}",
            'limiter.hit(item, "key")',
            versus=RK_COUNTER,
        ),
    ]


WORKLOADS: dict[str, Callable[[], list[Contender]]] = {
    "admit": lambda: contenders(True),
    "refuse": lambda: contenders(False),
    "check admit": lambda: check_contenders(True),
    "check refuse": lambda: check_contenders(False),
}
ADMITS = {"admit": True, "refuse": False, "check admit": True, "check refuse": False}

# The call is written this many times in the timing loop, to make the
# loop's own cost small beside the call's.
DUPLICATE = 10


def timing_loop(contender: Contender) -> Callable[[int], float]:
    """pyperf's time function for `contender`: runs the call ``DUPLICATE *
    loops`` times, inlined, and returns the seconds taken. The setup runs
    on first use, so that a worker process sets up only the contender it
    measures (pyrate-limiter, for one, starts a thread)."""
    loop: Callable[[int], float] | None = None

    def time_func(loops: int) -> float:
        nonlocal loop
        if loop is None:
            namespace: dict[str, object] = {"_timer": time.perf_counter}
            exec(contender.setup, namespace)
            body = "\n".join(f"        {contender.call}" for _ in range(DUPLICATE))
            source = (
                "def loop(loops):\n"
                "    it = range(loops)\n"
                "    t0 = _timer()\n"
                "    for _ in it:\n"
                f"{body}\n"
                "    return _timer() - t0\n"
            )
            exec(source, namespace)
            loop = namespace["loop"]  # type: ignore[assignment]
        assert loop is not None
        return loop(loops)

    return time_func


def check(contender: Contender, admit: bool) -> None:
    """Fails unless `contender` answers as the workload says, call after call."""
    namespace: dict[str, object] = {}
    exec(contender.setup, namespace)
    answers = {bool(eval(contender.call, namespace)) for _ in range(1000)}
    if answers != {admit}:
        sys.exit(
            f"{contender.name}: answers {answers} in the {'admit' if admit else 'refuse'} workload"
        )


def main() -> None:
    runner = pyperf.Runner()
    runner.metadata["description"] = __doc__.splitlines()[0] if __doc__ else ""
    runner.argparser.add_argument(
        "--summary-json", metavar="PATH", help="also write the medians here (ratekeeper-bench/1)"
    )
    args = runner.parse_args()
    if not args.worker:
        for workload, make in WORKLOADS.items():
            for contender in make():
                check(contender, ADMITS[workload])
    results: dict[tuple[str, str], float] = {}
    for workload, make in WORKLOADS.items():
        for contender in make():
            bench = runner.bench_time_func(
                f"{workload}: {contender.name}",
                timing_loop(contender),
                inner_loops=DUPLICATE,
            )
            if bench is not None and not args.worker:
                results[workload, contender.name] = bench.median()
    if not args.worker and results:
        report(results)
        if args.summary_json:
            write_summary(results, args.summary_json)


def report(results: dict[tuple[str, str], float]) -> None:
    print()
    print("| workload | contender | ns per call (median) | time / ratekeeper's |")
    print("|---|---|---|---|")
    for workload, make in WORKLOADS.items():
        for contender in make():
            seconds = results.get((workload, contender.name))
            versus = contender.versus or "ratekeeper"
            ours = results.get((workload, versus))
            if seconds is None or not ours:
                continue
            against = "" if versus in ("ratekeeper", contender.name) else f" (vs {versus})"
            print(
                f"| {workload} | {contender.name} | {seconds * 1e9:.1f} "
                f"| {seconds / ours:.2f}x{against} |"
            )
    print()
    for workload in ("check admit", "check refuse"):
        for theirs, ours_name in ((LIMITS_FIXED, RK_FIXED), (LIMITS_COUNTER, RK_COUNTER)):
            if (workload, theirs) in results and (workload, ours_name) in results:
                ratio = results[workload, theirs] / results[workload, ours_name]
                print(f"{workload}: {ours_name} is {ratio:.1f}x faster than {theirs}")
    for workload in ("admit", "refuse"):
        ours = results.get((workload, "ratekeeper"))
        peers = {n: s for (w, n), s in results.items() if w == workload and n != "ratekeeper"}
        if not ours or not peers:
            continue
        fastest = min(peers, key=peers.__getitem__)
        limits = min(s for n, s in peers.items() if n.startswith("limits"))
        print(
            f"{workload}: {limits / ours:.1f}x faster than limits (target 20x), "
            f"{peers[fastest] / ours:.1f}x faster than the fastest peer, {fastest} (target 5x)"
        )


# The distributions behind each contender, for the versions in the report.
DISTRIBUTIONS = {
    "ratekeeper": "ratekeeper",
    "limits": "limits",
    "pyrate-limiter": "pyrate-limiter",
    "token-bucket": "token-bucket",
    "ratelimit": "ratelimit",
}


def version_of(contender: str) -> str:
    name = contender.split(" ")[0]
    try:
        return metadata.version(DISTRIBUTIONS.get(name, name))
    except metadata.PackageNotFoundError:
        return "?"


def with_version(contender: str) -> str:
    """`limits (fixed window)` → `limits 5.8.0 (fixed window)`."""
    name, _, rest = contender.partition(" ")
    return f"{name} {version_of(name)} {rest}".rstrip()


TITLES = {
    "admit": "every call admitted",
    "refuse": "every call refused",
    "check admit": "check(), every call admitted",
    "check refuse": "check(), every call refused",
}


def write_summary(results: dict[tuple[str, str], float], path: str) -> None:
    """The medians and each contender's time ÷ its reference's, as JSON: one
    table for ``try_acquire()`` (÷ ratekeeper's), and one per ``check()``
    pairing (÷ the ratekeeper algorithm the row is set against)."""
    tables: dict[str, list[dict[str, object]]] = {}
    for workload, make in WORKLOADS.items():
        for contender in make():
            seconds = results.get((workload, contender.name))
            reference = contender.versus or "ratekeeper"
            ours = results.get((workload, reference))
            if seconds is None:
                continue
            tables.setdefault(reference, []).append(
                {
                    "workload": TITLES[workload],
                    "contender": with_version(contender.name),
                    "value": seconds * 1e9,
                    "ratio": seconds / ours if ours else None,
                }
            )
    titles = {
        "ratekeeper": "ns per call",
        RK_FIXED: "ns per call: FixedWindow.check() beside limits' fixed window",
        RK_COUNTER: "ns per call: SlidingWindowCounter.check() beside limits' counter",
    }
    summary = {
        "format": "ratekeeper-bench/1",
        "suite": "python",
        "title": "Python: limiter.try_acquire() and check() beside the Python rate limiters",
        "command": "benches/python/run",
        "notes": (
            f"CPython {platform.python_version()}, pyperf medians (fresh worker processes, "
            "calibrated, warmed up); one limiter and one key per contender, the call written "
            "as a user writes it. Ratio: time ÷ the reference's (ratekeeper's try_acquire(), "
            "or the ratekeeper algorithm set against the same one in limits)."
        ),
        "tables": [
            {
                "title": titles[reference],
                "unit": "ns",
                "reference": reference if reference == "ratekeeper" else with_version(reference),
                "rows": rows,
            }
            for reference, rows in tables.items()
        ],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
