"""Tests of benches/report.py on a made-up results directory.

.venv/bin/pytest benches/test_report.py        (scripts/test.sh runs it)
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pytest
import report


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def suite(
    name: str, rows: list[dict[str, object]], reference: str | None = None
) -> dict[str, object]:
    table: dict[str, object] = {"title": "ns per call", "unit": "ns", "rows": rows}
    if reference:
        table["reference"] = reference
    return {
        "format": report.FORMAT,
        "suite": name,
        "title": f"{name} title",
        "command": f"run {name}",
        "notes": f"{name} notes.",
        "tables": [table],
    }


class ReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp())
        r = self.dir
        write_json(
            r / "machine.json",
            {**report.machine(), "cores": 2, "cpu": "Test CPU", "memory_gib": 24.0},
        )
        admitted, refused = "every call admitted, 1 thread", "every call refused, 1 thread"
        write_json(
            r / "rust-ratios.json",
            suite(
                "rust-ratios",
                [
                    {"workload": admitted, "contender": "ratekeeper", "value": 10.0, "ratio": 1.0},
                    {
                        "workload": admitted,
                        "contender": "governor-tsc",
                        "value": 9.0,
                        "ratio": 0.93,
                    },
                    {"workload": refused, "contender": "ratekeeper", "value": 8.0, "ratio": 1.0},
                ],
                "ratekeeper",
            ),
        )
        write_json(
            r / "c.json",
            suite(
                "c",
                [{"workload": admitted, "contender": "ratekeeper (C ABI)", "value": 12.0}],
                "ratekeeper",
            ),
        )
        write_json(
            r / "java.json",
            suite(
                "java",
                [
                    {
                        "workload": refused,
                        "contender": "Guava 31.1 RateLimiter.tryAcquire()",
                        "value": 32.0,
                    }
                ],
            ),
        )
        write_json(
            r / "node.json",
            {
                "node": "v20",
                "rounds": 3,
                "ns_per_op": {
                    "admitted/ratekeeper": 40.0,
                    "admitted/limiter": 100.0,
                    "refused/rlf": 1000.0,
                },
            },
        )
        bench = r / "criterion" / "algorithms" / "decision_admit" / "fixed_window" / "new"
        write_json(
            bench / "benchmark.json",
            {"group_id": "decision/admit", "function_id": None, "value_str": "fixed_window"},
        )
        write_json(bench / "estimates.json", {"median": {"point_estimate": 30.0}})
        bench = r / "criterion" / "algorithms" / "decision_admit" / "governor" / "new"
        write_json(
            bench / "benchmark.json",
            {"group_id": "decision/admit", "function_id": None, "value_str": "governor"},
        )
        write_json(bench / "estimates.json", {"median": {"point_estimate": 20.0}})
        (r / "logs").mkdir()
        (r / "logs" / "rust-keyed.txt").write_text(
            "noise\n| keys | ns |\n|---|---|\n| 1000 | 42 |\n"
        )
        (r / "failed.txt").write_text("python failed: see logs/python.txt\n")
        self.earlier = r / "earlier"
        self.earlier.mkdir()
        (self.earlier / "rust-keyed.md").write_text("A keyed figure of 2026-01-01.\n")
        (self.earlier / "gone.md").write_text("A figure of a suite that did not run.\n")
        self.out = r / "BENCHMARKS.md"
        report.write(r, self.out, self.earlier)
        self.text = self.out.read_text()

    def test_machine_and_failures(self) -> None:
        assert "**Machine:** 2 cores, Test CPU, 24 GiB of memory" in self.text
        assert "- python failed: see logs/python.txt" in self.text
        assert "## Redis\n\nNot run" in self.text

    def test_languages_table_divides_by_rust(self) -> None:
        assert (
            "| C | `rk_rate_limiter_try_acquire(l, 1, 0, &ok)` | 12.0 | 1.20 |  |  |" in self.text
        )
        assert (
            "| Java (Guava itself) | `RateLimiter.tryAcquire()` |  |  | 32.0 | 4.00 |" in self.text
        )
        assert "| Node.js | `limiter.tryAcquire()` | 40.0 | 4.00 |" in self.text

    def test_suites_and_ratios(self) -> None:
        assert "|  | governor-tsc | 9.0 | 0.93 |" in self.text
        # Node's own format, with the ratio computed here.
        assert re.search(
            r"\|  \| limiter [0-9.]+ TokenBucket.tryRemoveTokens\(1\) \| 100 \| 2.50 \|", self.text
        )
        # Criterion: from_parameter ids are contenders; the reference is governor.
        assert "|  | **governor** | 20.0 | 1.00 |" in self.text
        assert "|  | fixed_window | 30.0 | 1.50 |" in self.text
        # A bench target that is not criterion's: its table, copied.
        assert "## Rust: the `keyed` benchmark\n" in self.text
        assert "| 1000 | 42 |" in self.text
        # Rust's ratios come first, Java after C.
        assert self.text.index("rust-ratios title") < self.text.index("c title")
        assert self.text.index("c title") < self.text.index("java title")

    def test_earlier_measurements_are_kept_under_their_suite(self) -> None:
        keyed = self.text.index("## Rust: the `keyed` benchmark\n")
        earlier = self.text.index(
            "\n### Earlier measurements (not from this run)\n\nA keyed figure of 2026-01-01.\n"
        )
        assert keyed < earlier < self.text.index("## c title")
        assert (
            "## Earlier measurements: `gone`, which did not run this time\n\n"
            "A figure of a suite that did not run.\n" in self.text
        )
        assert "this one run, except those under *Earlier measurements*" in self.text
        # Without any, the report says every figure is from the run.
        (self.earlier / "rust-keyed.md").unlink()
        (self.earlier / "gone.md").unlink()
        report.write(self.dir, self.out, self.earlier)
        text = self.out.read_text()
        assert "Earlier measurements" not in text
        assert "Every figure below comes from this one run; each table" in text

    def test_rejects_unknown_formats(self) -> None:
        write_json(self.dir / "other.json", {"format": "something-else"})
        with pytest.raises(SystemExit):
            report.write(self.dir, self.out, self.earlier)
