"""The Python runner of the cross-language conformance suite.

    python run_vectors.py PATH...     (normally: tests/conformance/run python)

Replays vector files in the ``ratelimit-conformance/1`` format
(``tests/conformance/FORMAT.md``) through the *installed* ``ratekeeper``
package, on a ``ManualClock``, exactly as the Rust runner
(``tests/conformance/rust/src/lib.rs``) does through the Rust crate. Prints
one line per failing case (``FAIL file: case: step N (...): expected ...,
got ...``) and a last line ``N passed, N failed`` (and ``, N skipped`` when
some cases' ``skip`` names Python); exits 1 when a case failed, 2 when a
file could not be read.

Every expected error is checked in full (FORMAT.md, "Errors and bad
inputs"): its kind (``InvalidArgumentError`` or ``ArgumentTypeError``), the
``argument`` it names (Python's names are the library's) and the text its
message must contain.

Everything goes through the public Python API, every algorithm through
its named class (``Gcra(...)``, ``ConcurrencyLimiter(GradientPolicy(...))``,
...). Durations are passed as ``datetime.timedelta(microseconds=...)``,
which holds whole microseconds exactly (a float of seconds would not
round-trip every value); decisions are compared field by field on their
exact ``*_micros``; waits are read both from what the call returns (Guava's
double, a decision's wait) and, to the microsecond, from how far the clock
moved.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Optional

import ratekeeper
from ratekeeper import (
    AimdPolicy,
    ArgumentTypeError,
    Bbr,
    BbrPermit,
    Color,
    CompositeLimiter,
    ConcurrencyLimiter,
    CycleLimiter,
    Decision,
    FixedWindow,
    FlowController,
    FlowPermit,
    FlowRule,
    GradientPolicy,
    InvalidArgumentError,
    KeyedLimiter,
    Limiter,
    ManualClock,
    ManualLoad,
    Permit,
    RateLimiter,
    RateLimitExceeded,
    Reservation,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    SrTcm,
    SystemGuard,
    SystemPermit,
    TokenBucket,
    TrTcm,
)

FORMAT = "ratelimit-conformance/1"

# This runner's name in a case's ``skip``.
LANGUAGE = "python"

# The error each kind of expected error is (FORMAT.md, "Errors and bad inputs").
_ERROR_KINDS: dict[str, type[Exception]] = {
    "invalid_argument": InvalidArgumentError,
    "argument_type": ArgumentTypeError,
}

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


SKIPPED = "skipped: "


def run_document(doc: Any) -> list[tuple[str, str | None]]:
    """``(name, None)`` for each passing case, ``(name, failure)`` otherwise;
    a case whose ``skip`` names Python is ``(name, "skipped: why")``."""
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
        skip = case.get("skip") if isinstance(case, dict) else None
        if isinstance(skip, dict) and LANGUAGE in skip:
            outcomes.append((name, SKIPPED + str(skip[LANGUAGE])))
            continue
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
    family = _FAMILIES.get(algorithm) if isinstance(algorithm, str) else None
    if family is None:
        raise CaseFailure(f"unsupported algorithm {algorithm!r}")
    clock = ManualClock()
    try:
        replay = family(spec, clock)
    except CaseFailure:
        raise
    except (InvalidArgumentError, ArgumentTypeError) as e:
        if "create_error" in case:
            try:
                _expect_error(case, "create_error", e)
            except CaseFailure as failure:
                raise CaseFailure(f"create: {failure}") from None
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
            _run_step(replay, clock, step)
        except CaseFailure as failure:
            raise CaseFailure(f"step {i} {_describe(step)}: {failure}") from None


# A step's call: returns None when the outcome is the expected one, else
# what it got instead ("acquired False").
Call = Callable[[], Optional[str]]


class Replay:
    """One case's limiter and the calls its ops make (one subclass per
    family of algorithms, as the Rust runner has one module per family)."""

    def call(self, op: str, step: dict[str, Any]) -> Call:
        raise CaseFailure(f"unknown op {op!r}")


def _run_step(replay: Replay, clock: ManualClock, step: Any) -> None:
    if not isinstance(step, dict):
        raise CaseFailure("a step is not an object")
    op = step.get("op")
    if op == "sleep":
        clock.advance(_micros(int_field(step, "micros")))
        return
    if not isinstance(op, str):
        raise CaseFailure("a step has no op")
    call = replay.call(op, step)
    expects_error = step.get("error")
    try:
        outcome = call()
    except (InvalidArgumentError, ArgumentTypeError) as e:
        if expects_error is not None:
            _expect_error(step, "error", e)
            return
        raise CaseFailure(f"expected {_expected_value(step)}, got error: {e}") from None
    except CaseFailure:
        raise
    except Exception as e:
        raise CaseFailure(f"unexpected {type(e).__name__}: {e}") from None
    if expects_error is not None:
        raise CaseFailure(f"expected error {expects_error}, got {outcome or 'ok'}")
    if outcome is not None:
        raise CaseFailure(f"expected {_expected_value(step)}, got {outcome}")


def _expect_error(expected: dict[str, Any], kind_key: str, error: Exception) -> None:
    """Checks ``error`` against the expected error of a case (``create_error``)
    or a step (``error``): its kind, the ``argument`` it names and the text
    ``message_contains``."""
    kind = expected.get(kind_key)
    wanted = _ERROR_KINDS.get(kind) if isinstance(kind, str) else None
    if wanted is None:
        raise CaseFailure(f"unknown error kind {kind!r}")
    if not isinstance(error, wanted):
        raise CaseFailure(f"expected error {kind}, got {type(error).__name__}: {error}")
    argument = expected.get("argument")
    named = getattr(error, "argument", None)
    if argument is not None and named != argument:
        raise CaseFailure(f"expected an error naming {argument}, got one naming {named}: {error}")
    text = expected.get("message_contains")
    if text is not None and text not in str(error):
        raise CaseFailure(f"expected an error whose message contains {text!r}, got: {error}")


# --- Guava's RateLimiter ----------------------------------------------------


class SmoothReplay(Replay):
    """``smooth_bursty`` and ``smooth_warming_up``, through ``RateLimiter``."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.clock = clock
        rate = double_field(spec, "permits_per_second")
        if spec["algorithm"] == "smooth_bursty":
            self.limiter = RateLimiter.create(
                rate, max_burst_seconds=double_field(spec, "max_burst_seconds"), clock=clock
            )
        else:
            self.limiter = RateLimiter.create(
                rate,
                warmup=_duration(spec, "warmup"),
                cold_factor=double_field(spec, "cold_factor"),
                clock=clock,
            )

    def call(self, op: str, step: dict[str, Any]) -> Call:
        limiter, clock = self.limiter, self.clock
        if op == "get_rate":
            return lambda: _compare_double(double_field(step, "permits_per_second"), limiter.rate)
        if op == "acquire":

            def acquire() -> str | None:
                before = clock.now_micros
                waited = limiter.acquire(int_field(step, "permits"))
                moved = clock.now_micros - before
                expected = int_field(step, "wait_micros")
                # The clock moved by the exact wait; the return value is
                # Guava's double, 1.0 * micros / 1e6.
                if moved == expected and same_double(waited, expected / 1e6):
                    return None
                return f"wait_micros {moved} (returned {waited!r})"

            return acquire
        if op == "try_acquire":

            def try_acquire() -> str | None:
                acquired = limiter.try_acquire(
                    int_field(step, "permits"), _duration(step, "timeout")
                )
                return _compare("acquired", bool_field(step, "acquired"), acquired)

            return try_acquire
        if op == "set_rate":

            def set_rate() -> str | None:
                limiter.rate = double_field(step, "permits_per_second")
                return None

            return set_rate
        return super().call(op, step)


# --- the admission-style algorithms ------------------------------------------


# ratekeeper-core's registry of the admission-style algorithms, as the
# vector generator writes it: each one's class and parameters, in order.
_ALGORITHMS: dict[str, dict[str, Any]] = {
    a["wire_name"]: a
    for a in json.loads((Path(__file__).resolve().parents[1] / "algorithms.json").read_text())[
        "algorithms"
    ]
}


def _limiter(spec: dict[str, Any], clock: ManualClock | None) -> Limiter:
    """The admission-style limiter a vector's ``limiter`` object describes,
    built through its named class as a user builds it: the registry's
    parameters, in its order, positionally; one with a default that the
    vector leaves out is left out (the class's default is the registry's)."""
    name = spec.get("algorithm")
    algorithm = _ALGORITHMS.get(name) if isinstance(name, str) else None
    if algorithm is None:
        raise CaseFailure(f"{name!r} is not an admission-style algorithm")
    cls: Callable[..., Limiter] = getattr(ratekeeper, algorithm["display_name"])
    given = [p for p in algorithm["parameters"] if "default" not in p or p["wire_name"] in spec]
    return cls(*(_parameter(spec, p) for p in given), clock=clock)


def _parameter(spec: dict[str, Any], parameter: dict[str, Any]) -> Any:
    """One parameter's value, as a user passes one of its kind."""
    if parameter["kind"] == "rate":
        return double_field(spec, parameter["wire_name"])
    if parameter["kind"] == "count":
        return int_field(spec, parameter["wire_name"])
    return _duration(spec, parameter["name"])


_WINDOWS = (FixedWindow, SlidingWindow, SlidingLog, SlidingWindowCounter)


class AdmissionReplay(Replay):
    """``check`` and ``peek`` of every admission-style algorithm, and the
    composite's."""

    limiter: Limiter

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.limiter = _limiter(spec, clock)

    def call(self, op: str, step: dict[str, Any]) -> Call:
        if op == "check":
            return lambda: _compare_decision(step, self.limiter.check(int_field(step, "cost")))
        if op == "peek":
            return lambda: _compare_decision(step, self.limiter.peek(int_field(step, "cost")))
        if op == "set_limit":

            def set_limit() -> str | None:
                window = self.limiter
                if not isinstance(window, _WINDOWS):
                    raise CaseFailure(f"set_limit on {type(window).__name__}")
                window.limit = int_field(step, "limit")
                return None

            return set_limit
        if op == "policy_header":

            def policy_header() -> str | None:
                name = step.get("policy_name")
                if not isinstance(name, str):
                    raise CaseFailure('missing string field "policy_name"')
                self.limiter.peek(0).ratelimit_policy_header(name)
                return None

            return policy_header
        return super().call(op, step)


class CompositeReplay(AdmissionReplay):
    """``composite``: the parts are built as templates, then the composite
    from them on the case's clock; ``check`` compares each part too."""

    limiter: CompositeLimiter

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        limits = spec.get("limits")
        if not isinstance(limits, list):
            raise CaseFailure('no "limits" array')
        templates = [_limiter(part, None) for part in limits]
        self.limiter = CompositeLimiter(templates, clock=clock)

    def call(self, op: str, step: dict[str, Any]) -> Call:
        if op != "check":
            return super().call(op, step)

        def check() -> str | None:
            combined, parts = self.limiter.check_each(int_field(step, "cost"))
            _compare_decision(step, combined)
            expected = step.get("parts")
            if not isinstance(expected, list):
                raise CaseFailure('no "parts" array')
            if len(expected) != len(parts):
                raise CaseFailure(f"expected {len(expected)} parts, got {len(parts)}")
            for i, (e, actual) in enumerate(zip(expected, parts)):
                _compare_decision({"decision": e}, actual, f"part {i}")
            return None

        return check


class TokenBucketReplay(AdmissionReplay):
    """``token_bucket``: x/time/rate's ops. Reservations are kept in the
    order the ``reserve`` steps made them, refused ones included."""

    limiter: TokenBucket

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.clock = clock
        self.limiter = TokenBucket(
            double_field(spec, "rate"), int_field(spec, "burst"), clock=clock
        )
        self.reservations: list[Reservation] = []

    def call(self, op: str, step: dict[str, Any]) -> Call:
        bucket = self.limiter
        if op == "allow":
            return lambda: _compare(
                "allowed", bool_field(step, "allowed"), bucket.allow(int_field(step, "n"))
            )
        if op == "reserve":

            def reserve() -> str | None:
                reservation = bucket.reserve(int_field(step, "n"))
                self.reservations.append(reservation)
                ok = bool_field(step, "ok")
                if reservation.ok != ok:
                    return f"ok {reservation.ok}"
                if ok:
                    return _compare(
                        "delay_micros", int_field(step, "delay_micros"), reservation.delay_micros
                    )
                return None

            return reserve
        if op == "cancel":

            def cancel() -> str | None:
                index = int_field(step, "reservation")
                if not 0 <= index < len(self.reservations):
                    raise CaseFailure(f"no reservation #{index}")
                self.reservations[index].cancel()
                return None

            return cancel
        if op == "wait":

            def wait() -> str | None:
                before = self.clock.now_micros
                timeout = _micros(max(int_field(step, "timeout_micros"), 0))
                decision = bucket.wait(int_field(step, "n"), timeout)
                ok = bool_field(step, "ok")
                if decision.allowed != ok:
                    return f"ok {decision.allowed}"
                if not ok:
                    return None
                expected = int_field(step, "delay_micros")
                # The wait is the decision's, and the clock moved by it.
                moved = self.clock.now_micros - before
                if decision.wait_micros == expected == moved:
                    return None
                return f"delay_micros {decision.wait_micros} (the clock moved {moved})"

            return wait
        if op == "set_rate":

            def set_rate() -> str | None:
                bucket.rate = double_field(step, "rate")
                return None

            return set_rate
        if op == "set_burst":

            def set_burst() -> str | None:
                bucket.burst = int_field(step, "burst")
                return None

            return set_burst
        if op == "tokens":
            return lambda: _compare_double(double_field(step, "tokens"), bucket.tokens)
        if op == "rate":
            return lambda: _compare_double(double_field(step, "rate"), bucket.rate)
        if op == "burst":
            return lambda: _compare("burst", int_field(step, "burst"), bucket.burst)
        return super().call(op, step)


# --- the three-colour markers ------------------------------------------------


class MarkerReplay(Replay):
    """``srtcm`` and ``trtcm``."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.marker: SrTcm | TrTcm
        if spec["algorithm"] == "srtcm":
            self.marker = SrTcm(
                int_field(spec, "cir"), int_field(spec, "cbs"), int_field(spec, "ebs"), clock=clock
            )
            self.token_names = ("committed", "excess")
        else:
            self.marker = TrTcm(
                int_field(spec, "pir"),
                int_field(spec, "pbs"),
                int_field(spec, "cir"),
                int_field(spec, "cbs"),
                clock=clock,
            )
            self.token_names = ("peak", "committed")

    def call(self, op: str, step: dict[str, Any]) -> Call:
        marker = self.marker
        if op == "mark":
            return lambda: _compare_color(step, marker.mark(int_field(step, "bytes")))
        if op == "mark_aware":
            return lambda: _compare_color(
                step, marker.mark_aware(int_field(step, "bytes"), _color(step, "pre_color"))
            )
        if op == "tokens":

            def tokens() -> str | None:
                expected = tuple(int_field(step, name) for name in self.token_names)
                return _compare("tokens", expected, marker.tokens)

            return tokens
        return super().call(op, step)


def _color(step: dict[str, Any], key: str) -> Color:
    name = step.get(key)
    try:
        return Color(name)
    except ValueError:
        raise CaseFailure(f"{key} {name!r} is not a colour") from None


def _compare_color(step: dict[str, Any], actual: Color) -> str | None:
    return _compare("color", _color(step, "color"), actual)


# --- the concurrency limiter and its policies --------------------------------


def _limit(spec: dict[str, Any]) -> int | GradientPolicy | AimdPolicy:
    """A policy object (``fixed``, ``gradient``, ``aimd``) as the
    ``ConcurrencyLimiter`` argument that makes it."""
    algorithm = spec.get("algorithm")
    if algorithm == "fixed":
        limit: int = int_field(spec, "limit")
        return limit
    if algorithm == "gradient":
        return GradientPolicy(
            initial_limit=int_field(spec, "initial_limit"),
            min_limit=int_field(spec, "min_limit"),
            max_limit=int_field(spec, "max_limit"),
            smoothing=double_field(spec, "smoothing"),
            rtt_tolerance=double_field(spec, "rtt_tolerance"),
            queue_size=int_field(spec, "queue_size"),
            backoff_ratio=double_field(spec, "backoff_ratio"),
            probe_interval=int_field(spec, "probe_interval"),
        )
    if algorithm == "aimd":
        return AimdPolicy(
            initial_limit=int_field(spec, "initial_limit"),
            min_limit=int_field(spec, "min_limit"),
            max_limit=int_field(spec, "max_limit"),
            backoff_ratio=double_field(spec, "backoff_ratio"),
            rtt_timeout=_duration(spec, "rtt_timeout"),
        )
    raise CaseFailure(f"unknown policy {algorithm!r}")


class ConcurrencyReplay(Replay):
    """``gradient`` and ``aimd`` (a policy alone, fed samples) and
    ``concurrency`` (permits). The permits of admitted ``acquire`` steps are
    kept in order."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        if spec["algorithm"] == "concurrency":
            policy = spec.get("policy")
            if not isinstance(policy, dict):
                raise CaseFailure('no "policy"')
            spec = policy
        self.limiter = ConcurrencyLimiter(_limit(spec), clock=clock)
        self.permits: list[Permit] = []

    def call(self, op: str, step: dict[str, Any]) -> Call:
        limiter = self.limiter
        if op == "sample":

            def sample() -> str | None:
                limit = limiter.sample(
                    _duration(step, "rtt"),
                    int_field(step, "in_flight"),
                    bool_field(step, "dropped"),
                )
                if "error" in step:
                    return f"limit {limit}"
                return _compare("limit", int_field(step, "limit"), limit)

            return sample
        if op == "acquire":

            def acquire() -> str | None:
                try:
                    permit = limiter.acquire()
                except RateLimitExceeded as refused:
                    if refused.decision is None:
                        return "a refusal without a decision"
                    _compare_decision(step, refused.decision)
                    return None
                self.permits.append(permit)
                _compare_decision(step, permit.decision)
                return None

            return acquire
        if op == "release":

            def release() -> str | None:
                index = int_field(step, "permit")
                if not 0 <= index < len(self.permits):
                    raise CaseFailure(f"no permit #{index}")
                permit = self.permits[index]
                releases = {
                    "success": permit.success,
                    "dropped": permit.dropped,
                    "ignored": permit.ignore,
                }
                outcome = step.get("outcome")
                if not isinstance(outcome, str) or outcome not in releases:
                    raise CaseFailure(f"unknown outcome {outcome!r}")
                return _compare("limit", int_field(step, "limit"), releases[outcome]())

            return release
        if op == "state":
            return lambda: _compare(
                "limit, in_flight",
                (int_field(step, "limit"), int_field(step, "in_flight")),
                (limiter.limit, limiter.in_flight),
            )
        return super().call(op, step)


# --- keys and the clock (vectors/bad_inputs.json) ---------------------------


class KeyedReplay(Replay):
    """``keyed``: a ``KeyedLimiter`` of copies of the ``template``."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        template = spec.get("template")
        if not isinstance(template, dict):
            raise CaseFailure('no "template"')
        options: dict[str, Any] = {}
        for name in ("shards", "max_key_bytes"):
            if name in spec:
                options[name] = int_field(spec, name)
        self.limiter = KeyedLimiter(
            _limiter(template, None), int_field(spec, "max_keys"), clock=clock, **options
        )

    def call(self, op: str, step: dict[str, Any]) -> Call:
        if op == "check":
            return lambda: _compare_decision(
                step, self.limiter.check(_key(step), int_field(step, "cost"))
            )
        return super().call(op, step)


def _key(step: dict[str, Any]) -> Any:
    """A step's key: ``key`` (text, or a raw value of the wrong type),
    ``key_length`` (that many ``k``s) or ``key_utf16`` (UTF-16 code units,
    lone surrogates kept, as a ``str``)."""
    if "key_length" in step:
        return "k" * int_field(step, "key_length")
    if "key_utf16" in step:
        units = step["key_utf16"]
        if not isinstance(units, list):
            raise CaseFailure('"key_utf16" is not an array')
        data = b"".join(int(u).to_bytes(2, "little") for u in units)
        return data.decode("utf-16-le", errors="surrogatepass")
    if "key" in step and "key" in step.get("raw", ()):
        return step["key"]
    key = step.get("key")
    if not isinstance(key, str):
        raise CaseFailure('missing string field "key"')
    return key


# --- the load-driven limiters (vectors/algorithms/load.json) ----------------


class LoadReplay(Replay):
    """``bbr`` and ``system_guard``, each reading a ``ManualLoad`` the runner
    sets (unknown at first). The permits of admitted ``acquire`` steps are
    kept in order; ``stats`` compares the fields a step names, durations
    as seconds (``*_millis`` / 1000, exactly as doubles)."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.load = ManualLoad()
        self.permits: list[BbrPermit | SystemPermit] = []
        self.limiter: Bbr | SystemGuard
        if spec["algorithm"] == "bbr":
            options: dict[str, Any] = {}
            for name in ("window", "cool_down"):
                if f"{name}_micros" in spec or f"{name}_seconds" in spec:
                    options[name] = _duration(spec, name)
            if "buckets" in spec:
                options["buckets"] = int_field(spec, "buckets")
            if "cpu_threshold" in spec:
                options["cpu_threshold"] = double_field(spec, "cpu_threshold")
            self.limiter = Bbr(load=self.load, clock=clock, **options)
        else:
            rule: dict[str, Any] = {}
            for name in ("qps", "highest_system_load", "highest_cpu_usage"):
                if name in spec:
                    rule[name] = double_field(spec, name)
            if "max_thread" in spec:
                rule["max_thread"] = int_field(spec, "max_thread")
            if "avg_rt_micros" in spec or "avg_rt_seconds" in spec:
                rule["avg_rt"] = _duration(spec, "avg_rt")
            self.limiter = SystemGuard(load=self.load, clock=clock, **rule)

    def call(self, op: str, step: dict[str, Any]) -> Call:
        if op == "load":

            def set_load() -> str | None:
                if "cpu_usage" in step:
                    self.load.set_cpu_usage(double_field(step, "cpu_usage"))
                if "load_average" in step:
                    self.load.set_load_average(double_field(step, "load_average"))
                return None

            return set_load
        if op == "acquire":
            return self._acquire(step)
        if op == "release":

            def release() -> str | None:
                index = int_field(step, "permit")
                if not 0 <= index < len(self.permits):
                    raise CaseFailure(f"no permit #{index}")
                self.permits[index].release()
                return None

            return release
        if op == "stats":
            return lambda: self._compare_stats(step)
        return super().call(op, step)

    def _acquire(self, step: dict[str, Any]) -> Call:
        limiter = self.limiter
        if isinstance(limiter, Bbr):

            def acquire_bbr() -> str | None:
                decision, permit = limiter.check()
                if permit is not None:
                    self.permits.append(permit)
                _compare_decision(step, decision)
                return None

            return acquire_bbr

        def acquire_system() -> str | None:
            count = int_field(step, "count") if "count" in step else 1
            decision, permit, threshold = limiter.check(count)
            if permit is not None:
                self.permits.append(permit)
            _compare_decision(step, decision)
            if "threshold" in step:
                return _compare("threshold", step["threshold"], threshold)
            return None

        return acquire_system

    def _compare_stats(self, step: dict[str, Any]) -> str | None:
        expected = step.get("stats")
        if not isinstance(expected, dict):
            expected = step
        stats = self.limiter.stats()
        diffs = []
        for name in ("in_flight", "max_pass", "max_in_flight"):
            if name in expected:
                want = int_field(expected, name)
                got = getattr(stats, name)
                if want != got:
                    diffs.append(f"{name} {got}, expected {want}")
        for name in ("pass_qps", "block_qps", "success_qps", "max_success_qps"):
            if name in expected:
                failure = _compare_double(double_field(expected, name), getattr(stats, name))
                if failure is not None:
                    diffs.append(f"{name} {failure}")
        for name in ("avg_rt", "min_rt"):
            millis = f"{name}_millis"
            if millis in expected:
                want_seconds = double_field(expected, millis) / 1000
                failure = _compare_double(want_seconds, getattr(stats, name))
                if failure is not None:
                    diffs.append(f"{name} {failure}, expected {want_seconds!r}")
        return "; ".join(diffs) if diffs else None


# --- Resilience4j's cycle limiter (vectors/algorithms/cycle.json) -----------


class CycleReplay(Replay):
    """``cycle``, through ``CycleLimiter``: the decisions come from the calls
    that do not wait (``check``, ``check_now``, ``reserve_permission``), so
    the clock moves only by ``sleep`` steps; waits in seconds are compared
    to the microsecond."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.limiter = CycleLimiter(
            int_field(spec, "limit_for_period"),
            _duration(spec, "limit_refresh_period"),
            _duration(spec, "timeout_duration"),
            clock=clock,
        )

    def call(self, op: str, step: dict[str, Any]) -> Call:
        limiter = self.limiter
        if op == "acquire":
            return lambda: _compare_decision(step, limiter.check(int_field(step, "permits")))
        if op == "try_acquire":
            return lambda: _compare_decision(step, limiter.check_now(int_field(step, "permits")))
        if op == "reserve":

            def reserve() -> str | None:
                wait = limiter.reserve_permission(int_field(step, "permits"))
                got = None if wait is None else round(wait * 1e6)
                expected = (
                    None if step.get("wait_micros") is None else int_field(step, "wait_micros")
                )
                return _compare("wait_micros", expected, got)

            return reserve
        if op == "change_limit":

            def change_limit() -> str | None:
                limiter.change_limit_for_period(int_field(step, "limit_for_period"))
                return None

            return change_limit
        if op == "change_timeout":

            def change_timeout() -> str | None:
                limiter.change_timeout_duration(_duration(step, "timeout_duration"))
                return None

            return change_timeout
        if op == "drain":
            return lambda: _compare(
                "drained", int_field(step, "drained"), limiter.drain_permissions()
            )
        if op == "metrics":

            def metrics() -> str | None:
                m = limiter.metrics()
                got = {
                    "available_permissions": m.available_permissions,
                    "micros_to_wait": m.time_to_wait_micros,
                    "cycle": m.cycle,
                }
                diffs = [
                    f"{name} {value}, expected {int_field(step, name)}"
                    for name, value in got.items()
                    if int_field(step, name) != value
                ]
                return "; ".join(diffs) if diffs else None

            return metrics
        return super().call(op, step)


class FlowReplay(Replay):
    """``flow``: a ``FlowController`` on the case's clock. ``check`` decides
    without waiting (the clock moves only by ``sleep`` steps); the permits
    of admitted checks are kept in order for ``release``. ``stats``
    compares ``avg_rt_millis`` as ``avg_rt`` seconds (``millis / 1000``)."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.permits: list[FlowPermit] = []
        self.flow = FlowController(
            _flow_rule(spec),
            sample_count=int_field(spec, "sample_count"),
            interval_ms=int_field(spec, "interval_ms"),
            clock=clock,
        )

    def call(self, op: str, step: dict[str, Any]) -> Call:
        flow = self.flow
        if op == "check":

            def check() -> str | None:
                decision, permit = flow.check(
                    int_field(step, "acquire_count"), bool_field(step, "prioritized")
                )
                if permit is not None:
                    self.permits.append(permit)
                _compare_decision(step, decision)
                return None

            return check
        if op == "release":

            def release() -> str | None:
                index = int_field(step, "permit")
                if not 0 <= index < len(self.permits):
                    raise CaseFailure(f"no permit #{index}")
                flow.release(self.permits[index])
                return None

            return release
        if op == "add_pass":

            def add_pass() -> str | None:
                flow.add_pass(int_field(step, "count"))
                return None

            return add_pass
        if op == "set_rule":

            def set_rule() -> str | None:
                flow.set_rule(_flow_rule(step))
                return None

            return set_rule
        if op == "stats":
            return lambda: self._compare_stats(step)
        return super().call(op, step)

    def _compare_stats(self, step: dict[str, Any]) -> str | None:
        stats = self.flow.stats()
        diffs = []
        for name in ("occupied_pass", "waiting", "in_flight"):
            if name in step:
                want = int_field(step, name)
                got = getattr(stats, name)
                if want != got:
                    diffs.append(f"{name} {got}, expected {want}")
        for name in ("pass_qps", "block_qps", "success_qps", "previous_pass_qps"):
            if name in step:
                failure = _compare_double(double_field(step, name), getattr(stats, name))
                if failure is not None:
                    diffs.append(f"{name} {failure}")
        if "avg_rt_millis" in step:
            want_seconds = double_field(step, "avg_rt_millis") / 1000
            failure = _compare_double(want_seconds, stats.avg_rt)
            if failure is not None:
                diffs.append(f"avg_rt {failure}, expected {want_seconds!r}")
        return "; ".join(diffs) if diffs else None


def _flow_rule(fields: dict[str, Any]) -> FlowRule:
    """A ``FlowRule`` from a limiter's or a ``set_rule`` step's fields, each
    optional but ``count`` (the others default as in Sentinel)."""
    options: dict[str, Any] = {}
    for name in ("grade", "control_behavior"):
        if name in fields:
            options[name] = fields[name]
    for name in ("warm_up_period_sec", "cold_factor", "max_queueing_time_ms"):
        if name in fields:
            options[name] = int_field(fields, name)
    return FlowRule(double_field(fields, "count"), **options)


class ClockReplay(Replay):
    """``manual_clock``: the case's clock alone, moved by ``advance``."""

    def __init__(self, spec: dict[str, Any], clock: ManualClock) -> None:
        self.clock = clock

    def call(self, op: str, step: dict[str, Any]) -> Call:
        if op == "advance":

            def advance() -> str | None:
                if "micros" in step:
                    self.clock.advance(_micros(int_field(step, "micros")))
                else:
                    self.clock.advance(double_field(step, "seconds"))
                return None

            return advance
        return super().call(op, step)


_FAMILIES: dict[str, Callable[[dict[str, Any], ManualClock], Replay]] = {
    "smooth_bursty": SmoothReplay,
    "smooth_warming_up": SmoothReplay,
    # Every registered algorithm through check and peek; the token bucket
    # has ops of its own.
    **{name: AdmissionReplay for name in _ALGORITHMS},
    "token_bucket": TokenBucketReplay,
    "composite": CompositeReplay,
    "srtcm": MarkerReplay,
    "trtcm": MarkerReplay,
    "gradient": ConcurrencyReplay,
    "aimd": ConcurrencyReplay,
    "concurrency": ConcurrencyReplay,
    "keyed": KeyedReplay,
    "manual_clock": ClockReplay,
    "bbr": LoadReplay,
    "system_guard": LoadReplay,
    "flow": FlowReplay,
    "cycle": CycleReplay,
}

_DECISION_FIELDS = (
    "allowed",
    "limit",
    "remaining",
    "retry_after_micros",
    "reset_after_micros",
    "wait_micros",
    "window_micros",
)


def _compare_decision(step: dict[str, Any], actual: Decision, what: str = "decision") -> None:
    """Compares all seven fields of a step's ``decision``; raises naming
    each field that differs."""
    expected = step.get("decision")
    if not isinstance(expected, dict):
        raise CaseFailure('missing decision field "decision"')
    diffs = []
    for name in _DECISION_FIELDS:
        want: object = (
            bool_field(expected, name) if name == "allowed" else int_field(expected, name)
        )
        got = getattr(actual, name)
        if want != got:
            diffs.append(f"{name}: expected {want}, got {got}")
    if diffs:
        raise CaseFailure(f"{what} differs: " + "; ".join(diffs))


def _compare(what: str, expected: object, actual: object) -> str | None:
    return None if expected == actual else f"{what} {actual!r}"


def _compare_double(expected: float, actual: float) -> str | None:
    """Bit-for-bit; the failure message shows the value alone, as FORMAT's
    special doubles are written ("expected rate 2.0, got Infinity")."""
    return None if same_double(actual, expected) else _show(actual)


def _micros(micros: int) -> timedelta:
    clamped = min(max(micros, _TIMEDELTA_MIN_MICROS), _TIMEDELTA_MAX_MICROS)
    return timedelta(microseconds=clamped)


def _duration(obj: dict[str, Any], name: str) -> Any:
    """A duration field as a user passes it: ``<name>_seconds`` as a float
    of seconds (or its raw value), ``<name>_micros`` as a ``timedelta``
    (which also holds the values beyond 64 bits that the vectors write)."""
    seconds = f"{name}_seconds"
    if seconds in obj:
        if seconds in obj.get("raw", ()):
            return obj[seconds]
        return double_field(obj, seconds)
    return _micros(int_field(obj, f"{name}_micros", bits=65))


_OUTCOME_FIELDS = (
    "wait_micros",
    "acquired",
    "permits_per_second",
    "decision",
    "allowed",
    "ok",
    "delay_micros",
    "tokens",
    "color",
    "limit",
    "rate",
    "burst",
    "threshold",
    "stats",
    "drained",
    "available_permissions",
)


def _expected_value(step: dict[str, Any]) -> str:
    found = [f"{key} {json.dumps(step[key])}" for key in _OUTCOME_FIELDS if key in step]
    return ", ".join(found) if found else "success"


def _describe(step: Any) -> str:
    if not isinstance(step, dict):
        return "(?)"
    parts = []
    for key, value in step.items():
        if key in ("error", "parts") or (key in _OUTCOME_FIELDS and key != "limit"):
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


def int_field(obj: dict[str, Any], key: str, bits: int = 64) -> Any:
    """A signed 64-bit integer: a JSON integer, or a decimal string beyond
    2^53 (wider for a duration's microseconds, ``bits``); a field the object
    lists in ``raw`` as its JSON value, of whatever type."""
    if key in obj.get("raw", ()):
        return obj[key]
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
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise CaseFailure(f"field {key!r} = {value!r} is not a {bits}-bit integer")
    return number


def double_field(obj: dict[str, Any], key: str) -> Any:
    """A double: a JSON number, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
    a field the object lists in ``raw`` as its JSON value."""
    if key in obj.get("raw", ()):
        return obj[key]
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
    passed = failed = skipped = 0
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
            elif failure.startswith(SKIPPED):
                skipped += 1
            else:
                failed += 1
                print(f"FAIL {file}: {name}: {failure}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if unreadable:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    # Report which build of the package ran, on stderr (stdout is the contract).
    print(f"ratekeeper {ratekeeper.__version__} from {ratekeeper.__file__}", file=sys.stderr)
    sys.exit(main(sys.argv[1:]))
