"""Tests of bench_http.py's ``--json`` document on made-up rates: it is the
``ratekeeper-bench/1`` format ``benches/report.py`` reads, with the ratios
the issue's targets are about.

.venv/bin/pytest benches/http/python/test_bench_http.py   (scripts/test.sh runs it)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))  # benches/: report
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http
import pytest
import report

RATES = {
    # Requests per second: ratekeeper adds 100 us, slowapi 400 us.
    "fastapi": {"none": 2000.0, "ratekeeper": 1e6 / 600, "slowapi": 1e6 / 900},
    "flask": {"none": 1000.0, "ratekeeper": 1e6 / 1100, "flask-limiter": 1e6 / 1500},
    # Through Redis: ratekeeper serves twice slowapi's requests per second.
    "fastapi-redis": {"none": 2000.0, "ratekeeper": 1000.0, "slowapi": 500.0},
}


def test_the_document_is_read_by_the_report_with_the_issues_ratios(tmp_path: Path) -> None:
    document = bench_http.bench_document(RATES, "benches/http/python/run", "made up")
    (tmp_path / "http-python.json").write_text(json.dumps(document), encoding="utf-8")
    (suite,) = report.read_results(tmp_path)
    assert suite["suite"] == "http-python"
    assert [t["title"] for t in suite["tables"]] == [
        bench_http.TITLES[f] for f in ("fastapi", "flask", "fastapi-redis")
    ]

    def row(table: int, workload: str, contender: str) -> dict[str, float]:
        (found,) = [
            r
            for r in suite["tables"][table]["rows"]
            if r["workload"] == workload and r["contender"].startswith(contender)
        ]
        return found

    # FastAPI: 1e9 / rps per request; added = that minus none's; ratio to slowapi.
    assert row(0, "server time per request", "no limiter")["value"] == pytest.approx(500_000)
    ours = row(0, "added by the middleware", "ratekeeper")
    assert ours["value"] == pytest.approx(100_000)
    assert ours["ratio"] == pytest.approx(0.25)
    assert row(0, "added by the middleware", "slowapi")["ratio"] == pytest.approx(1.0)
    # The peer is the reference; no "added" row for the bare application.
    assert suite["tables"][0]["reference"].startswith("slowapi")
    assert not [
        r
        for r in suite["tables"][0]["rows"]
        if r["workload"] == "added by the middleware" and r["contender"] == "no limiter"
    ]
    assert row(1, "added by the middleware", "ratekeeper")["ratio"] == pytest.approx(0.2)
    assert suite["tables"][1]["reference"].startswith("flask-limiter")
    # Through Redis: twice the requests per second is half the server time.
    assert row(2, "server time per request", "ratekeeper")["ratio"] == pytest.approx(0.5)
    assert row(2, "server time per request", "ratekeeper")["requests_per_second"] == 1000.0
    assert "Redis" in suite["tables"][2]["title"]
    # And the report writes the tables.
    assert "| added by the middleware |" in report.table_markdown(suite["tables"][2])
