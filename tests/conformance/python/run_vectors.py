"""The Python runner of the cross-language conformance suite.

    python run_vectors.py PATH...     (normally: tests/conformance/run python)

Replays vector files in the ``ratelimit-conformance/1`` format
(``tests/conformance/FORMAT.md``) through the *installed* ``ratekeeper``
package, on a ``ManualClock``, exactly as the Rust runner
(``tests/conformance/rust/src/lib.rs``) does through the Rust crate. Prints
one line per failing case (``FAIL file: case: step N (...): expected ...,
got ...``) and a last line ``N passed, N failed``; exits 1 when a case
failed, 2 when a file could not be read.

Everything goes through the public Python API. Durations are passed as
``datetime.timedelta(microseconds=...)``, which holds whole microseconds
exactly (a float of seconds would not round-trip every value), and waits
are read both from the value ``acquire`` returns (Guava's double) and, to
the microsecond, from how far the clock moved.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import ratekeeper
from ratekeeper import InvalidArgumentError, ManualClock, RateLimiter

FORMAT = "ratelimit-conformance/1"

_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# timedelta's own range; every signed 64-bit number of microseconds lies
# inside it, so clamping never changes a vector's value.
_TIMEDELTA_MIN_MICROS = -999_999_999 * 86_400_000_000
_TIMEDELTA_MAX_MICROS = 999_999_999 * 86_400_000_000 + 86_399_999_999


class CaseFailure(Exception):
    """A case did not behave as its vector says."""


def collect_files(paths: list[Path]) -> list[Path]:
    """Files as given; directories expand to every ``*.json`` below them, sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise OSError(f"{path}: no such file or directory")
    return files


def run_document(doc: Any) -> list[tuple[str, str | None]]:
    """``(name, None)`` for each passing case, ``(name, failure)`` otherwise."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise ValueError(f"format is {found!r}, expected {FORMAT!r}")
    cases = doc.get("cases")
    if not isinstance(cases, list):
        raise ValueError('no "cases" array')
    outcomes: list[tuple[str, str | None]] = []
    for i, case in enumerate(cases):
        name = case.get("name") if isinstance(case, dict) else None
        if not isinstance(name, str):
            name = f"case #{i}"
        try:
            run_case(case)
            outcomes.append((name, None))
        except CaseFailure as failure:
            outcomes.append((name, str(failure)))
    return outcomes


def run_case(case: Any) -> None:
    """Runs one case; raises ``CaseFailure`` at the first step that differs."""
    if not isinstance(case, dict) or not isinstance(case.get("limiter"), dict):
        raise CaseFailure('case has no "limiter"')
    spec = case["limiter"]
    algorithm = spec.get("algorithm")
    if algorithm not in ("smooth_bursty", "smooth_warming_up"):
        raise CaseFailure(f"unsupported algorithm {algorithm!r}")
    clock = ManualClock()
    try:
        limiter = _build(algorithm, spec, clock)
    except InvalidArgumentError as e:
        if case.get("create_error") == "invalid_argument":
            return
        raise CaseFailure(f"create: expected a limiter, got error: {e}") from None
    except Exception as e:  # any other exception is a failure of its own
        raise CaseFailure(f"create: unexpected {type(e).__name__}: {e}") from None
    if "create_error" in case:
        raise CaseFailure(f"create: expected error {case['create_error']}, got a limiter")
    steps = case.get("steps")
    if not isinstance(steps, list):
        raise CaseFailure('case has no "steps"')
    for i, step in enumerate(steps):
        try:
            _run_step(limiter, clock, step)
        except CaseFailure as failure:
            raise CaseFailure(f"step {i} {_describe(step)}: {failure}") from None


def _build(algorithm: str, spec: dict[str, Any], clock: ManualClock) -> RateLimiter:
    rate = double_field(spec, "permits_per_second")
    if algorithm == "smooth_bursty":
        return RateLimiter.create(
            rate, max_burst_seconds=double_field(spec, "max_burst_seconds"), clock=clock
        )
    return RateLimiter.create(
        rate,
        warmup=_micros(int_field(spec, "warmup_micros")),
        cold_factor=double_field(spec, "cold_factor"),
        clock=clock,
    )


def _run_step(limiter: RateLimiter, clock: ManualClock, step: Any) -> None:
    if not isinstance(step, dict):
        raise CaseFailure("a step is not an object")
    op = step.get("op")
    expects_error = step.get("error")
    if op == "sleep":
        clock.advance(_micros(int_field(step, "micros")))
        return
    if op == "get_rate":
        expected = double_field(step, "permits_per_second")
        actual = limiter.rate
        if not same_double(actual, expected):
            raise CaseFailure(f"expected permits_per_second {_show(expected)}, got {_show(actual)}")
        return
    call: Callable[[], str | None]
    if op == "acquire":

        def call() -> str | None:
            before = clock.now_micros
            waited = limiter.acquire(int_field(step, "permits"))
            moved = clock.now_micros - before
            expected = int_field(step, "wait_micros")
            # The clock moved by the exact wait; the return value is
            # Guava's double, 1.0 * micros / 1e6.
            if moved == expected and same_double(waited, expected / 1e6):
                return None
            return f"wait_micros {moved} (returned {waited!r})"

    elif op == "try_acquire":

        def call() -> str | None:
            acquired = limiter.try_acquire(
                int_field(step, "permits"), _micros(int_field(step, "timeout_micros"))
            )
            return None if acquired is bool_field(step, "acquired") else f"acquired {acquired}"

    elif op == "set_rate":

        def call() -> str | None:
            limiter.rate = double_field(step, "permits_per_second")
            return None if expects_error is None else "ok"

    else:
        raise CaseFailure(f"unknown op {op!r}")

    try:
        outcome = call()
    except InvalidArgumentError as e:
        if expects_error == "invalid_argument":
            return
        expected_text = f"error {expects_error}" if expects_error else _expected_value(step)
        raise CaseFailure(f"expected {expected_text}, got error: {e}") from None
    except CaseFailure:
        raise
    except Exception as e:
        raise CaseFailure(f"unexpected {type(e).__name__}: {e}") from None
    if expects_error is not None:
        raise CaseFailure(f"expected error {expects_error}, got {outcome or 'success'}")
    if outcome is not None:
        raise CaseFailure(f"expected {_expected_value(step)}, got {outcome}")


def _micros(micros: int) -> timedelta:
    clamped = min(max(micros, _TIMEDELTA_MIN_MICROS), _TIMEDELTA_MAX_MICROS)
    return timedelta(microseconds=clamped)


def _expected_value(step: dict[str, Any]) -> str:
    for key in ("wait_micros", "acquired", "permits_per_second"):
        if key in step:
            return f"{key} {json.dumps(step[key])}"
    return "success"


def _describe(step: Any) -> str:
    if not isinstance(step, dict):
        return "(?)"
    parts = []
    for key, value in step.items():
        if key in ("wait_micros", "acquired", "error"):
            continue
        parts.append(str(value) if key == "op" else f"{key}={json.dumps(value)}")
    return f"({' '.join(parts)})"


def same_double(a: float, b: float) -> bool:
    """Bitwise equality (so ``0.0 != -0.0``), with every NaN equal to every NaN."""
    if math.isnan(a) and math.isnan(b):
        return True
    return struct.pack("<d", a) == struct.pack("<d", b)


def _show(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def int_field(obj: dict[str, Any], key: str) -> int:
    """A signed 64-bit integer: a JSON integer, or a decimal string beyond 2^53."""
    value = obj.get(key)
    if isinstance(value, bool):
        raise CaseFailure(f"field {key!r} = {value!r} is not an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value, 10)
        except ValueError:
            raise CaseFailure(f"field {key!r} = {value!r} is not an integer") from None
    else:
        raise CaseFailure(f"missing integer field {key!r}")
    if not -(2**63) <= number < 2**63:
        raise CaseFailure(f"field {key!r} = {value!r} is not a 64-bit integer")
    return number


def double_field(obj: dict[str, Any], key: str) -> float:
    """A double: a JSON number, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``."""
    value = obj.get(key)
    if isinstance(value, bool):
        raise CaseFailure(f"field {key!r} = {value!r} is not a double")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[value]
    raise CaseFailure(f"missing double field {key!r}")


def bool_field(obj: dict[str, Any], key: str) -> bool:
    value = obj.get(key)
    if not isinstance(value, bool):
        raise CaseFailure(f"missing boolean field {key!r}")
    return value


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: run_vectors.py PATH...", file=sys.stderr)
        return 2
    try:
        files = collect_files([Path(a) for a in argv])
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    passed = failed = 0
    unreadable = False
    for file in files:
        try:
            # Python's float parsing rounds correctly, as FORMAT.md asks.
            doc = json.loads(file.read_text(encoding="utf-8"))
            outcomes = run_document(doc)
        except (OSError, ValueError) as e:
            print(f"error: {file}: {e}", file=sys.stderr)
            unreadable = True
            continue
        for name, failure in outcomes:
            if failure is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {file}: {name}: {failure}")
    print(f"{passed} passed, {failed} failed")
    if unreadable:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    # Report which build of the package ran, on stderr (stdout is the contract).
    print(f"ratekeeper {ratekeeper.__version__} from {ratekeeper.__file__}", file=sys.stderr)
    sys.exit(main(sys.argv[1:]))
