#!/usr/bin/env python3
"""Turns the results of one ``make bench`` run into BENCHMARKS.md.

    benches/report.py machine > RESULTS/machine.json     (what it ran on)
    benches/report.py write RESULTS OUT.md               (the report)

``scripts/bench.sh`` runs every benchmark of the project, each writing its
results into one directory, RESULTS, then this. What it reads there:

* ``*.json`` in the ``ratekeeper-bench/1`` format (every suite's own: the
  Rust ratios, Python, C, Java, and Redis when its benchmark exists): a
  suite name, a title, notes, and tables of rows ``{workload, contender,
  value (ns), ratio (time ÷ the reference's; computed here when absent)}``;
* ``node.json``: ``benches/node/bench.mjs --json`` as it is;
* ``criterion/TARGET/``: criterion's own ``new/benchmark.json`` and
  ``new/estimates.json`` of each Rust bench target (``CRITERION_HOME``);
* ``logs/rust-TARGET.txt``: the output of a Rust bench target that is not a
  criterion one (its Markdown tables are copied);
* ``machine.json``, and ``failed.txt`` (one suite and log per line).

And from the tree, ``benches/earlier/SUITE.md``: figures measured outside
a ``make bench`` run (a one-off experiment, a range over many runs) that
the code's comments cite, each with when and how it was measured; copied
under that suite's section, so that a new BENCHMARKS.md keeps them.

Standard library only, so it runs with any CPython >= 3.9.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FORMAT = "ratekeeper-bench/1"
EARLIER = ROOT / "benches" / "earlier"
EARLIER_HEADING = "### Earlier measurements (not from this run)"

# ---------------------------------------------------------------------------
# The machine


def command_line(*args: str) -> str:
    """The first line a command prints, or "" when it cannot run."""
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else ""


def machine() -> dict[str, Any]:
    """What the benchmarks run on: cores, CPU, memory, toolchains, date."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor()
    memory_gib: float | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = int(line.split()[1]) / 1024 / 1024
                break
    except OSError:
        pass
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "cpu": cpu or "unknown",
        "memory_gib": memory_gib,
        "os": f"{platform.system()} {platform.release()}",
        "commit": command_line("git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"),
        "rustc": command_line("rustc", "--version"),
        "python": f"CPython {platform.python_version()}",
        "node": command_line("node", "--version"),
        "java": command_line("java", "-version"),
        "cc": command_line("cc", "--version"),
    }


# ---------------------------------------------------------------------------
# Reading results


def load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def with_ratios(table: dict[str, Any]) -> dict[str, Any]:
    """Fills in each row's ratio to the reference contender of its workload
    (time ÷ the reference's), where the suite did not give one."""
    reference = table.get("reference")
    refs = {
        r["workload"]: r["value"]
        for r in table["rows"]
        if reference and r["contender"].startswith(reference)
    }
    for r in table["rows"]:
        if r.get("ratio") is None and r["workload"] in refs and refs[r["workload"]]:
            r["ratio"] = r["value"] / refs[r["workload"]]
    return table


def node_suite(data: dict[str, Any]) -> dict[str, Any]:
    """benches/node/bench.mjs --json as a ratekeeper-bench/1 suite."""
    versions: dict[str, str] = {}
    try:
        pkg = load(ROOT / "benches" / "node" / "package.json")
        versions = pkg.get("devDependencies", {})
    except (OSError, ValueError):
        pass
    names = {
        "ratekeeper": "ratekeeper tryAcquire()",
        "ratekeeper async": "ratekeeper await tryAcquire(1, {timeoutMs: 0})",
        "limiter": f"limiter {versions.get('limiter', '')} TokenBucket.tryRemoveTokens(1)",
        "rlf": f"rate-limiter-flexible {versions.get('rate-limiter-flexible', '')} consume()",
        "pure-JS GCRA": "a ten-line GCRA in plain JavaScript (reference point)",
    }
    workloads = {
        "admitted": "every call admitted",
        "refused": "every call refused",
        "100 limiters": "100 limiters, round robin, admitted",
    }
    rows = []
    for key, ns in data["ns_per_op"].items():
        workload, _, contender = key.partition("/")
        rows.append(
            {
                "workload": workloads.get(workload, workload),
                "contender": names.get(contender, contender).replace("  ", " "),
                "value": ns,
            }
        )
    return {
        "format": FORMAT,
        "suite": "node",
        "title": "Node.js: the synchronous tryAcquire() beside the npm rate limiters",
        "command": "cd benches/node && node bench.mjs --json",
        "notes": (
            f"Node {data.get('node', '?')}; median of {data.get('rounds', '?')} interleaved "
            "rounds in a shuffled order, ns per decision."
        ),
        "tables": [
            {
                "title": "ns per call",
                "unit": "ns",
                "reference": "ratekeeper tryAcquire()",
                "rows": rows,
            }
        ],
    }


def criterion_suite(target: str, directory: Path) -> dict[str, Any] | None:
    """The results criterion wrote for one bench target, one table per
    benchmark group; ``None`` when there are none."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for bench in sorted(directory.rglob("new/benchmark.json")):
        estimates = bench.with_name("estimates.json")
        if not estimates.exists():
            continue
        meta = load(bench)
        median = load(estimates)["median"]["point_estimate"]
        # BenchmarkId::new(function, value) names a contender and a
        # workload; from_parameter(value) names only the contender.
        function, value = meta.get("function_id"), meta.get("value_str")
        groups.setdefault(meta["group_id"], []).append(
            {
                "workload": (value or "") if function else "",
                "contender": function or value or meta["group_id"],
                "value": median,
            }
        )
    if not groups:
        return None
    tables = []
    for group, rows in groups.items():
        names = [r["contender"] for r in rows]
        reference = next(
            (n for n in names if n.startswith("ratekeeper")),
            next((n for n in names if n.startswith("governor")), None),
        )
        rows.sort(key=lambda r: (r["workload"], r["contender"] != reference, r["contender"]))
        tables.append(
            with_ratios({"title": f"`{group}`", "unit": "ns", "reference": reference, "rows": rows})
        )
    return {
        "format": FORMAT,
        "suite": f"rust-{target}",
        "title": f"Rust: the `{target}` benchmark (criterion)",
        "command": f"cargo bench -p ratekeeper-benches --bench {target}",
        "notes": "Criterion's median estimate per benchmark; ratios to the group's reference.",
        "tables": tables,
    }


def read_results(results: Path) -> list[dict[str, Any]]:
    """Every suite in RESULTS, in the report's order."""
    suites: list[dict[str, Any]] = []
    for path in sorted(results.glob("*.json")):
        if path.name == "machine.json":
            continue
        data = load(path)
        if path.name == "node.json" and data.get("format") != FORMAT:
            data = node_suite(data)
        if data.get("format") != FORMAT:
            raise SystemExit(f"{path}: not in the {FORMAT} format")
        data["tables"] = [with_ratios(t) for t in data.get("tables", [])]
        suites.append(data)
    criterion = results / "criterion"
    if criterion.is_dir():
        for target_dir in sorted(p for p in criterion.iterdir() if p.is_dir()):
            suite = criterion_suite(target_dir.name, target_dir)
            if suite:
                suites.append(suite)
    for log in sorted((results / "logs").glob("rust-*.txt")):
        target = log.stem.removeprefix("rust-")
        if target == "ratios" or any(s["suite"] == f"rust-{target}" for s in suites):
            continue
        table = [
            line for line in log.read_text(errors="replace").splitlines() if line.startswith("|")
        ]
        if table:
            suites.append(
                {
                    "format": FORMAT,
                    "suite": f"rust-{target}",
                    "title": f"Rust: the `{target}` benchmark",
                    "command": f"cargo bench -p ratekeeper-benches --bench {target}",
                    "notes": "Its own table, as it printed it.",
                    "tables": [],
                    "markdown": "\n".join(table),
                }
            )
    order = ["rust-ratios", "c", "python", "node", "java", "redis"]

    def rank(s: dict[str, Any]) -> tuple[int, str]:
        name = s["suite"]
        if name in order:
            return (order.index(name) if name != "rust-ratios" else -1, name)
        return (0 if name.startswith("rust-") else len(order), name)

    return sorted(suites, key=rank)


# ---------------------------------------------------------------------------
# Writing Markdown


def ns(value: float | None) -> str:
    if value is None:
        return ""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}"


def ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def table_markdown(table: dict[str, Any]) -> str:
    reference = table.get("reference")
    head = f"÷ {reference}" if reference else "ratio"
    has_ratio = any(r.get("ratio") is not None for r in table["rows"])
    lines = [
        f"| workload | contender | ns per call |{f' {head} |' if has_ratio else ''}",
        f"|---|---|---:|{'---:|' if has_ratio else ''}",
    ]
    previous = None
    for r in table["rows"]:
        workload = r["workload"] if r["workload"] != previous else ""
        previous = r["workload"]
        contender = r["contender"]
        if reference and contender.startswith(reference):
            contender = f"**{contender}**"
        cells = [workload, contender, ns(r["value"])]
        if has_ratio:
            cells.append(ratio(r.get("ratio")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def find(suites: list[dict[str, Any]], suite: str, workload: str, contender: str) -> float | None:
    for s in suites:
        if s["suite"] != suite:
            continue
        for t in s["tables"]:
            for r in t["rows"]:
                if r["workload"].startswith(workload) and r["contender"].startswith(contender):
                    return float(r["value"])
    return None


def languages_table(suites: list[dict[str, Any]]) -> str:
    """One decision from each language, this run, beside Rust's."""
    entries = [
        (
            "Rust",
            "`RateLimiter::try_acquire(1, Duration::ZERO)`",
            "rust-ratios",
            "every call {}, 1 thread",
            "ratekeeper",
        ),
        (
            "C",
            "`rk_rate_limiter_try_acquire(l, 1, 0, &ok)`",
            "c",
            "every call {}, 1 thread",
            "ratekeeper",
        ),
        ("Python", "`limiter.try_acquire()`", "python", "every call {}", "ratekeeper"),
        ("Node.js", "`limiter.tryAcquire()`", "node", "every call {}", "ratekeeper tryAcquire()"),
        (
            "Java (Guava itself)",
            "`RateLimiter.tryAcquire()`",
            "java",
            "every call {}, 1 thread",
            "Guava",
        ),
        (
            "Rust (governor, for scale)",
            "`governor::RateLimiter::check()`",
            "rust-ratios",
            "every call {}, 1 thread",
            "governor-tsc",
        ),
    ]
    rust = {
        w: find(suites, "rust-ratios", f"every call {w}, 1 thread", "ratekeeper")
        for w in ("admitted", "refused")
    }
    lines = [
        "| language | call | admitted: ns | ÷ Rust | refused: ns | ÷ Rust |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for language, call, suite, workload, contender in entries:
        values = {
            w: find(suites, suite, workload.format(w), contender) for w in ("admitted", "refused")
        }
        if all(v is None for v in values.values()):
            continue
        cells = [language, call]
        for w in ("admitted", "refused"):
            v, base = values[w], rust[w]
            cells += [ns(v), ratio(v / base) if v is not None and base else ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write(results: Path, out: Path, earlier: Path = EARLIER) -> None:
    m = load(results / "machine.json") if (results / "machine.json").exists() else machine()
    suites = read_results(results)
    quick = (results / "quick").exists()
    failed = (
        (results / "failed.txt").read_text().splitlines()
        if (results / "failed.txt").exists()
        else []
    )
    memory = f"{m['memory_gib']:.0f} GiB" if m.get("memory_gib") else "unknown"
    kept = {
        path.stem: path.read_text(encoding="utf-8").strip() for path in sorted(earlier.glob("*.md"))
    }
    parts = [
        "# ratekeeper benchmarks",
        "",
        "<!-- Generated by scripts/bench.sh (make bench) and benches/report.py: do not edit. -->",
        "",
        f"Measured on {m['date']}, commit `{m['commit']}`"
        + (" — **quick mode: short runs, rough figures**" if quick else "")
        + ".",
        "",
        f"**Machine:** {m['cores']} cores, {m['cpu']}, {memory} of memory, {m['os']}. "
        f"{m['rustc']}; {m['python']}; Node {m['node']}; {m['java']}; {m['cc']}.",
        "",
        "Every figure below comes from this one run"
        + (
            ", except those under *Earlier measurements* (kept in `benches/earlier/`, "
            "each with when and how it was measured)"
            if kept
            else ""
        )
        + "; each table compares contenders "
        "measured side by side in it. A ratio is a contender's time divided by the "
        "reference's (in bold): above 1, the reference is faster. Absolute times move "
        "with the machine and its neighbours; the ratios are what carries over.",
        "",
        "Reproduce: `make bench` (every suite: about six minutes of measuring on 2 cores, "
        "plus the builds) or "
        "`scripts/bench.sh --quick` (about three minutes, rough figures, "
        "written to `target/bench/BENCHMARKS-quick.md`).",
        "",
    ]
    if failed:
        parts += ["**Suites that failed in this run** (see their logs):", ""]
        parts += [f"- {line}" for line in failed]
        parts.append("")
    parts += [
        "## One decision, from every language",
        "",
        "`try_acquire(1)` on one Guava-style limiter (every call admitted, or every "
        "call refused), one thread, from each language's binding, beside the Rust "
        "call underneath them all and Guava's own `RateLimiter` on the JVM.",
        "",
        languages_table(suites),
        "",
    ]
    for s in suites:
        parts += [f"## {s['title']}", "", f"`{s['command']}`. {s.get('notes', '')}".rstrip(), ""]
        if s.get("markdown"):
            parts += [s["markdown"], ""]
        for t in s["tables"]:
            if len(s["tables"]) > 1:
                parts += [f"### {t['title']}", ""]
            parts += [table_markdown(t), ""]
        if s["suite"] in kept:
            parts += [EARLIER_HEADING, "", kept.pop(s["suite"]), ""]
    for suite, text in kept.items():
        parts += [f"## Earlier measurements: `{suite}`, which did not run this time", ""]
        parts += [text, ""]
    if not any(s["suite"].startswith("redis") for s in suites):
        parts += [
            "## Redis",
            "",
            "Not run: no `benches/redis/run` in this tree. When it exists, "
            "`scripts/bench.sh` runs it with `--json FILE` (and `--quick`), and its "
            "`ratekeeper-bench/1` tables appear here beside the peers it measures "
            "(redis-cell, when it can be built).",
            "",
        ]
    out.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[1] == "machine":
        print(json.dumps(machine(), indent=2))
    elif len(argv) == 4 and argv[1] == "write":
        write(Path(argv[2]), Path(argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
