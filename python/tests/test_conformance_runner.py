"""The Python conformance runner: it must fail when the binding disagrees
with a vector, and pass the repository's vectors."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CONFORMANCE = Path(__file__).resolve().parents[2] / "tests" / "conformance"
RUNNER = CONFORMANCE / "python" / "run_vectors.py"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_vectors", RUNNER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def doc(*cases: Any) -> dict[str, Any]:
    return {"format": "ratelimit-conformance/1", "source": "test", "cases": list(cases)}


BURSTY_5 = {"algorithm": "smooth_bursty", "permits_per_second": 5.0, "max_burst_seconds": 1.0}


def test_a_wrong_expectation_fails_at_its_step(runner: ModuleType) -> None:
    steps = [
        {"op": "acquire", "permits": 1, "wait_micros": 0},
        {"op": "acquire", "permits": 1, "wait_micros": 200001},
    ]
    [(name, failure)] = runner.run_document(doc({"name": "w", "limiter": BURSTY_5, "steps": steps}))
    assert name == "w"
    assert failure.startswith("step 1 (acquire permits=1): expected wait_micros 200001")
    assert "got wait_micros 200000" in failure


def test_expected_errors_and_special_doubles(runner: ModuleType) -> None:
    inf = dict(BURSTY_5, permits_per_second="Infinity")
    steps = [
        {"op": "get_rate", "permits_per_second": "Infinity"},
        {"op": "set_rate", "permits_per_second": "NaN", "error": "invalid_argument"},
        {"op": "acquire", "permits": "-9223372036854775808", "error": "invalid_argument"},
        {
            "op": "try_acquire",
            "permits": 1,
            "timeout_micros": "9223372036854775807",
            "acquired": True,
        },
        {"op": "sleep", "micros": "9223372036854775807"},
        {"op": "set_rate", "permits_per_second": 2.0},
        {"op": "get_rate", "permits_per_second": 2.0},
    ]
    create_error = dict(BURSTY_5, permits_per_second=-0.0)
    outcomes = runner.run_document(
        doc(
            {"name": "ok", "limiter": inf, "steps": steps},
            {"name": "create", "limiter": create_error, "create_error": "invalid_argument"},
        )
    )
    assert outcomes == [("ok", None), ("create", None)]


def test_missing_errors_and_unknown_things_fail(runner: ModuleType) -> None:
    outcomes = dict(
        runner.run_document(
            doc(
                {
                    "name": "no-error",
                    "limiter": BURSTY_5,
                    "steps": [
                        {"op": "set_rate", "permits_per_second": 2.0, "error": "invalid_argument"}
                    ],
                },
                {
                    "name": "bad-rate",
                    "limiter": BURSTY_5,
                    "steps": [{"op": "get_rate", "permits_per_second": -0.0}],
                },
                {"name": "unknown", "limiter": {"algorithm": "nope"}, "steps": []},
                {"name": "create", "limiter": BURSTY_5, "create_error": "invalid_argument"},
                {"name": "op", "limiter": BURSTY_5, "steps": [{"op": "fly"}]},
            )
        )
    )
    assert "expected error invalid_argument, got ok" in outcomes["no-error"]
    assert "expected permits_per_second -0.0, got 5.0" in outcomes["bad-rate"]
    assert "unsupported algorithm 'nope'" in outcomes["unknown"]
    assert "expected error invalid_argument, got a limiter" in outcomes["create"]
    assert "unknown op 'fly'" in outcomes["op"]


WINDOW = {"algorithm": "fixed_window", "limit": 2, "window_micros": 1000}
ADMITTED = {
    "allowed": True,
    "limit": 2,
    "remaining": 1,
    "retry_after_micros": 0,
    "reset_after_micros": 1000,
    "wait_micros": 0,
    "window_micros": 1000,
}


def test_every_decision_field_is_compared(runner: ModuleType) -> None:
    steps = [{"op": "check", "cost": 1, "decision": dict(ADMITTED, window_micros=999)}]
    [(_, failure)] = runner.run_document(doc({"name": "w", "limiter": WINDOW, "steps": steps}))
    assert (
        failure == "step 0 (check cost=1): decision differs: window_micros: expected 999, got 1000"
    )


def test_algorithm_cases_pass_and_fail(runner: ModuleType) -> None:
    composite = {"algorithm": "composite", "limits": [WINDOW, WINDOW]}
    wrong_part = dict(ADMITTED, remaining=0)
    outcomes = dict(
        runner.run_document(
            doc(
                {
                    "name": "negative-cost",
                    "limiter": WINDOW,
                    "steps": [{"op": "check", "cost": -1, "error": "invalid_argument"}],
                },
                {
                    "name": "part",
                    "limiter": composite,
                    "steps": [
                        {
                            "op": "check",
                            "cost": 1,
                            "decision": ADMITTED,
                            "parts": [ADMITTED, wrong_part],
                        }
                    ],
                },
                {
                    "name": "wait",
                    "limiter": {"algorithm": "token_bucket", "rate": 10.0, "burst": 1},
                    "steps": [
                        {"op": "wait", "n": 1, "timeout_micros": 0, "ok": True, "delay_micros": 0},
                        {
                            "op": "wait",
                            "n": 1,
                            "timeout_micros": 10**6,
                            "ok": True,
                            "delay_micros": 1,
                        },
                    ],
                },
                {
                    "name": "colour",
                    "limiter": {"algorithm": "srtcm", "cir": 1, "cbs": 1, "ebs": 1},
                    "steps": [{"op": "mark", "bytes": 1, "color": "red"}],
                },
                {
                    "name": "release",
                    "limiter": {
                        "algorithm": "concurrency",
                        "policy": {"algorithm": "fixed", "limit": 1},
                    },
                    "steps": [{"op": "release", "permit": 0, "outcome": "success", "limit": 1}],
                },
                {"name": "fly", "limiter": WINDOW, "steps": [{"op": "fly"}]},
                {
                    "name": "bad-policy",
                    "limiter": {
                        "algorithm": "concurrency",
                        "policy": {"algorithm": "fixed", "limit": 0},
                    },
                    "create_error": "invalid_argument",
                },
            )
        )
    )
    assert outcomes["negative-cost"] is None
    assert outcomes["bad-policy"] is None
    assert "part 1 differs: remaining: expected 0, got 1" in outcomes["part"]
    assert "step 1 (wait n=1 timeout_micros=1000000)" in outcomes["wait"]
    assert "delay_micros 100000 (the clock moved 100000)" in outcomes["wait"]
    assert "expected color \"red\", got color <Color.GREEN: 'green'>" in outcomes["colour"]
    assert "no permit #0" in outcomes["release"]
    assert "unknown op 'fly'" in outcomes["fly"]


def test_the_command_line_contract(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            doc(
                {
                    "name": "w",
                    "limiter": BURSTY_5,
                    "steps": [{"op": "acquire", "permits": 1, "wait_micros": 1}],
                }
            )
        )
    )
    good = CONFORMANCE / "vectors" / "guava" / "errors.json"
    run = subprocess.run(
        [sys.executable, str(RUNNER), str(good), str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = run.stdout.splitlines()
    assert run.returncode == 1
    assert lines[0].startswith(f"FAIL {bad}: w: step 0 (acquire permits=1)")
    assert lines[-1].endswith(" passed, 1 failed")
    assert int(lines[-1].split()[0]) > 10

    missing = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2


def test_an_expected_error_must_be_of_its_kind_name_its_argument_and_bound(
    runner: ModuleType,
) -> None:
    window = {"algorithm": "fixed_window", "limit": 0, "window_micros": 1}
    log = {"algorithm": "sliding_log", "limit": 0, "window_micros": 1}
    text = {"algorithm": "fixed_window", "limit": "5", "window_micros": 1, "raw": ["limit"]}
    bad = {"create_error": "invalid_argument"}
    outcomes = dict(
        runner.run_document(
            doc(
                {"name": "argument", "limiter": window, **bad, "argument": "window"},
                {
                    "name": "bound",
                    "limiter": log,
                    **bad,
                    "argument": "limit",
                    "message_contains": "4294967295",
                },
                {"name": "kind", "limiter": text, **bad, "argument": "limit"},
                {
                    "name": "right",
                    "limiter": log,
                    **bad,
                    "argument": "limit",
                    "message_contains": "1048576",
                },
                {
                    "name": "type",
                    "limiter": text,
                    "create_error": "argument_type",
                    "argument": "limit",
                },
                {"name": "skipped", "limiter": text, **bad, "skip": {"python": "why"}},
                {
                    "name": "infinite",
                    "limiter": {
                        "algorithm": "gcra",
                        "max_burst": 0,
                        "count_per_period": 1,
                        "period_seconds": "Infinity",
                    },
                    **bad,
                    "argument": "period",
                },
            )
        )
    )
    assert "expected an error naming window, got one naming limit" in outcomes["argument"]
    assert "whose message contains '4294967295'" in outcomes["bound"]
    assert "expected error invalid_argument, got ArgumentTypeError" in outcomes["kind"]
    assert (outcomes["right"], outcomes["type"], outcomes["infinite"]) == (None, None, None)
    assert outcomes["skipped"] == "skipped: why"


def test_the_repository_vectors_all_pass(runner: ModuleType) -> None:
    files = runner.collect_files([CONFORMANCE / "vectors"])
    assert len(files) >= 5
    cases = 0
    for file in files:
        for name, failure in runner.run_document(json.loads(file.read_text())):
            assert failure is None or failure.startswith(runner.SKIPPED), (
                f"{file.name}: {name}: {failure}"
            )
            cases += 1
    assert cases >= 720
