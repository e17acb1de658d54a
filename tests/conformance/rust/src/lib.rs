//! The Rust runner of the cross-language conformance suite.
//!
//! Reads vector files in the `ratelimit-conformance/1` format
//! (`tests/conformance/FORMAT.md`) and replays every case against the public
//! API of the `ratekeeper` crate on a [`ManualClock`], exactly as the Python,
//! Node and C runners do against their bindings. A case passes when every
//! step gives the expected value; otherwise the first differing step is
//! reported with the expected and actual values.
//!
//! One module per algorithm family replays its ops; this file reads the
//! files, dispatches each case on its `limiter.algorithm`, and holds what
//! every family shares (reading fields, durations as the bindings convert
//! them, comparing a [`Decision`], expecting an error).
//!
//! Every expected error is checked in full (FORMAT.md, "Errors and bad
//! inputs"): its kind, the argument it names, the text its message must
//! contain. The runner also remembers which [`Argument`] each one was, so
//! that a test can check that the vectors name every argument the library
//! has ([`take_named_arguments`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ratekeeper::{Argument, Decision, Error};
use serde_json::Value;

mod adaptive;
pub mod admission;
mod composite;
mod cycle;
mod flow;
mod keyed;
mod load;
mod markers;
mod smooth;
mod token_bucket;

/// The format tag every vector file carries.
pub const FORMAT: &str = "ratelimit-conformance/1";

/// This runner's name in a case's `skip` object.
const LANGUAGE: &str = "rust";

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutcome {
    /// The case's `name`.
    pub name: String,
    /// `None` when it passed (or was skipped); otherwise what differed first.
    pub failure: Option<String>,
    /// Why the case does not apply to Rust, when its `skip` says so.
    pub skipped: Option<String>,
}

thread_local! {
    /// The arguments of the expected errors replayed on this thread.
    static NAMED: RefCell<Vec<Argument>> = const { RefCell::new(Vec::new()) };
}

/// The arguments of every expected error replayed on this thread since
/// the last call, as the library named them.
pub fn take_named_arguments() -> Vec<Argument> {
    NAMED.with(|named| std::mem::take(&mut *named.borrow_mut()))
}

/// Expands files and directories (every `*.json` below them, sorted) into
/// the list of vector files to run.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect_dir(path, &mut files)?;
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    Ok(files)
}

fn collect_dir(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_dir(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Parses one vector file and runs every case in it.
pub fn run_file(path: &Path) -> Result<Vec<CaseOutcome>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    run_document(&doc).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs every case of a parsed vector document.
pub fn run_document(doc: &Value) -> Result<Vec<CaseOutcome>, String> {
    match doc.get("format").and_then(Value::as_str) {
        Some(FORMAT) => {}
        other => return Err(format!("format is {other:?}, expected {FORMAT:?}")),
    }
    let cases = doc.get("cases").and_then(Value::as_array).ok_or("no \"cases\" array")?;
    Ok(cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let name = case.get("name").and_then(Value::as_str).map_or_else(|| format!("case #{i}"), str::to_owned);
            match case.get("skip").and_then(|skip| skip.get(LANGUAGE)) {
                Some(why) => CaseOutcome { name, failure: None, skipped: Some(why.as_str().unwrap_or("").to_owned()) },
                None => CaseOutcome { name, failure: run_case(case).err(), skipped: None },
            }
        })
        .collect())
}

/// Runs one case; `Err` describes the first step that differed.
pub fn run_case(case: &Value) -> Result<(), String> {
    let limiter = case.get("limiter").ok_or("case has no \"limiter\"")?;
    let algorithm = str_field(limiter, "algorithm")?;
    match algorithm {
        "smooth_bursty" | "smooth_warming_up" => smooth::run(algorithm, limiter, case),
        "token_bucket" => token_bucket::run(limiter, case),
        // Every other algorithm of the registry, through `AnyLimiter`.
        name if ratekeeper::Algorithm::from_wire_name(name).is_some() => admission::run(limiter, case),
        "srtcm" | "trtcm" => markers::run(algorithm, limiter, case),
        "gradient" | "aimd" | "concurrency" => adaptive::run(algorithm, limiter, case),
        "composite" => composite::run(limiter, case),
        "bbr" => load::run_bbr(limiter, case),
        "system_guard" => load::run_system_guard(limiter, case),
        "cycle" => cycle::run(limiter, case),
        "flow" => flow::run(limiter, case),
        "keyed" => keyed::run(limiter, case),
        "manual_clock" => keyed::run_clock(case),
        other => Err(format!("unsupported algorithm {other:?}")),
    }
}

/// The shape every family's `run` shares: when the case expects the
/// creation to fail, checks that `created` is the library's
/// invalid-argument error; otherwise replays each step with `step`, stopping
/// at the first that fails (reported with its index and inputs).
fn run_steps<L>(
    case: &Value,
    created: Result<L, Error>,
    mut step: impl FnMut(&mut L, &Value) -> Result<(), String>,
) -> Result<(), String> {
    if let Some(expected) = case.get("create_error") {
        return match created {
            Err(e) => expect_error(case, "create_error", &e).map_err(|e| format!("create: {e}")),
            Ok(_) => Err(format!("create: expected error {expected}, got a limiter")),
        };
    }
    let mut limiter = created.map_err(|e| format!("create: expected a limiter, got error: {e}"))?;
    let steps = case.get("steps").and_then(Value::as_array).ok_or("case has no \"steps\"")?;
    for (i, s) in steps.iter().enumerate() {
        step(&mut limiter, s).map_err(|e| format!("step {i} {}: {e}", describe(s)))?;
    }
    Ok(())
}

/// Checks a call that a step may expect to fail (`"error":
/// "invalid_argument"`): an expected error must be the library's
/// invalid-argument error; otherwise the call must succeed and `compare`
/// judges its value.
fn expect_outcome<T>(
    step: &Value,
    got: Result<T, Error>,
    compare: impl FnOnce(T) -> Result<(), String>,
) -> Result<(), String> {
    match (step.get("error"), got) {
        (None, Ok(value)) => compare(value),
        (None, Err(e)) => Err(format!("expected success, got error: {e}")),
        (Some(_), Err(e)) => expect_error(step, "error", &e),
        (Some(expected), Ok(_)) => Err(format!("expected error {expected}, got success")),
    }
}

/// Checks `error` against the expected error of `expected` (a case, whose
/// `kind_key` is `create_error`, or a step, `error`): its kind (Rust has
/// only `invalid_argument`), the `argument` it names and the text
/// `message_contains`.
fn expect_error(expected: &Value, kind_key: &str, error: &Error) -> Result<(), String> {
    let kind = expected.get(kind_key).and_then(Value::as_str).unwrap_or("?");
    #[allow(irrefutable_let_patterns)] // `Error` is non-exhaustive
    let Error::InvalidArgument(invalid) = error
    else {
        return Err(format!("expected error {kind}, got error: {error}"));
    };
    if kind != "invalid_argument" {
        return Err(format!("expected error {kind}, got invalid_argument: {error}"));
    }
    if let Some(argument) = expected.get("argument") {
        let argument = argument.as_str().ok_or("\"argument\" is not a string")?;
        if argument != invalid.name() {
            return Err(format!("expected an error naming {argument}, got one naming {}: {error}", invalid.name()));
        }
    }
    if let Some(text) = expected.get("message_contains") {
        let text = text.as_str().ok_or("\"message_contains\" is not a string")?;
        if !error.to_string().contains(text) {
            return Err(format!("expected an error whose message contains {text:?}, got: {error}"));
        }
    }
    NAMED.with(|named| named.borrow_mut().push(invalid.argument()));
    Ok(())
}

/// A duration field, `<name>_micros` or `<name>_seconds` (FORMAT.md,
/// "Errors and bad inputs"), as the core's microseconds, converted as a
/// binding converts what its caller passed: seconds by the library's rule
/// for `argument` (a timeout's, a warm-up's, a clock advance's, or any
/// other duration's), microseconds beyond the `i64` range through a Rust
/// [`Duration`] (`ratekeeper::micros_from_duration`). `Ok(Err)` when the
/// library refuses the value; microseconds within the range pass as they
/// are, for the algorithm to check.
pub fn duration_field(obj: &Value, name: &str, argument: Argument) -> Result<Result<i64, Error>, String> {
    let seconds = format!("{name}_seconds");
    if obj.get(&seconds).is_some() {
        let secs = double_field(obj, &seconds)?;
        return Ok(match argument {
            Argument::Timeout => ratekeeper::timeout_micros_from_secs(secs),
            Argument::Warmup => ratekeeper::warmup_micros_from_secs(secs),
            Argument::AdvanceSeconds => ratekeeper::advance_micros_from_secs(secs),
            other => ratekeeper::duration_micros_from_secs(other, secs),
        });
    }
    let micros = format!("{name}_micros");
    if let Some(Value::String(s)) = obj.get(&micros) {
        if let (Err(_), Ok(beyond)) = (s.parse::<i64>(), s.parse::<u64>()) {
            return Ok(ratekeeper::micros_from_duration(argument, Duration::from_micros(beyond)));
        }
    }
    Ok(Ok(int_field(obj, &micros)?))
}

/// Equality of one expected field, with both values in the message.
fn expect_eq<T: PartialEq + std::fmt::Debug>(what: &str, expected: T, actual: T) -> Result<(), String> {
    if expected == actual {
        Ok(())
    } else {
        Err(format!("expected {what} {expected:?}, got {actual:?}"))
    }
}

/// Bit-for-bit equality of an expected double.
fn expect_double(what: &str, expected: f64, actual: f64) -> Result<(), String> {
    if same_double(expected, actual) {
        Ok(())
    } else {
        Err(format!("expected {what} {}, got {}", show(expected), show(actual)))
    }
}

/// A step's `decision` object (FORMAT.md, "Decisions").
/// A step's expected `decision` object as a [`Decision`].
pub fn decision_field(obj: &Value, key: &str) -> Result<Decision, String> {
    let d = obj.get(key).ok_or_else(|| format!("missing decision field {key:?}"))?;
    let count = |k: &str| int_field(d, k).and_then(|v| u64::try_from(v).map_err(|_| format!("{k} = {v} is negative")));
    Ok(Decision {
        allowed: bool_field(d, "allowed")?,
        limit: count("limit")?,
        remaining: count("remaining")?,
        retry_after_micros: int_field(d, "retry_after_micros")?,
        reset_after_micros: int_field(d, "reset_after_micros")?,
        wait_micros: int_field(d, "wait_micros")?,
        window_micros: int_field(d, "window_micros")?,
    })
}

/// Compares a step's expected `decision` with the actual one, naming every
/// field that differs.
fn expect_decision(step: &Value, actual: &Decision) -> Result<(), String> {
    let expected = decision_field(step, "decision")?;
    if expected == *actual {
        return Ok(());
    }
    let mut diffs = Vec::new();
    let mut field = |name: &str, e: String, a: String| {
        if e != a {
            diffs.push(format!("{name}: expected {e}, got {a}"));
        }
    };
    field("allowed", expected.allowed.to_string(), actual.allowed.to_string());
    field("limit", expected.limit.to_string(), actual.limit.to_string());
    field("remaining", expected.remaining.to_string(), actual.remaining.to_string());
    field("retry_after_micros", expected.retry_after_micros.to_string(), actual.retry_after_micros.to_string());
    field("reset_after_micros", expected.reset_after_micros.to_string(), actual.reset_after_micros.to_string());
    field("wait_micros", expected.wait_micros.to_string(), actual.wait_micros.to_string());
    field("window_micros", expected.window_micros.to_string(), actual.window_micros.to_string());
    Err(format!("decision differs: {}", diffs.join("; ")))
}

/// A non-negative count (a cost, a burst) as the library takes it: the
/// conversion a binding makes, with the library's own error for negatives.
fn count_field(obj: &Value, key: &str, argument: ratekeeper::Argument) -> Result<Result<u64, Error>, String> {
    Ok(ratekeeper::unsigned_from_i64(argument, int_field(obj, key)?))
}

/// A step's fields other than its expected outcome, for failure messages.
fn describe(step: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(obj) = step.as_object() {
        for (k, v) in obj {
            let expected_outcome = matches!(
                k.as_str(),
                "wait_micros"
                    | "acquired"
                    | "error"
                    | "decision"
                    | "allowed"
                    | "ok"
                    | "delay_micros"
                    | "tokens"
                    | "color"
            );
            if !expected_outcome {
                parts.push(if k == "op" { v.as_str().unwrap_or("?").to_owned() } else { format!("{k}={v}") });
            }
        }
    }
    format!("({})", parts.join(" "))
}

/// Bitwise equality of doubles, as FORMAT.md asks (so `0.0 != -0.0`), with
/// every NaN equal to every other.
pub fn same_double(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn show(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{x:?}")
    }
}

/// Fails on a field the vector lists in `raw` (a value of the wrong type,
/// which Rust cannot pass: such a case must skip Rust).
fn not_raw(obj: &Value, key: &str) -> Result<(), String> {
    let raw = obj.get("raw").and_then(Value::as_array);
    if raw.is_some_and(|raw| raw.iter().any(|k| k == key)) {
        return Err(format!("field {key:?} is of a type Rust cannot pass: the case must skip rust"));
    }
    Ok(())
}

pub(crate) fn str_field<'a>(obj: &'a Value, key: &str) -> Result<&'a str, String> {
    not_raw(obj, key)?;
    obj.get(key).and_then(Value::as_str).ok_or_else(|| format!("missing string field {key:?}"))
}

pub(crate) fn bool_field(obj: &Value, key: &str) -> Result<bool, String> {
    obj.get(key).and_then(Value::as_bool).ok_or_else(|| format!("missing boolean field {key:?}"))
}

/// A signed 64-bit integer: a JSON integer, or a decimal string when beyond
/// ±(2^53 − 1) (FORMAT.md, "Numbers").
pub fn int_field(obj: &Value, key: &str) -> Result<i64, String> {
    not_raw(obj, key)?;
    match obj.get(key) {
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| format!("field {key:?} = {n} is not a 64-bit integer")),
        Some(Value::String(s)) => s.parse().map_err(|_| format!("field {key:?} = {s:?} is not a 64-bit integer")),
        _ => Err(format!("missing integer field {key:?}")),
    }
}

/// A double: a JSON number (parsed with correct rounding), or one of the
/// strings `"NaN"`, `"Infinity"`, `"-Infinity"` (FORMAT.md, "Special doubles").
pub fn double_field(obj: &Value, key: &str) -> Result<f64, String> {
    not_raw(obj, key)?;
    match obj.get(key) {
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| format!("field {key:?} = {n} is not a double")),
        Some(Value::String(s)) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(format!("field {key:?} = {s:?} is not a double")),
        },
        _ => Err(format!("missing double field {key:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(cases: Value) -> Value {
        json!({"format": FORMAT, "source": "test", "cases": cases})
    }

    #[test]
    fn a_wrong_expectation_fails_at_its_step() {
        let d = doc(json!([{
            "name": "wrong",
            "limiter": {"algorithm": "smooth_bursty", "permits_per_second": 5.0, "max_burst_seconds": 1.0},
            "steps": [
                {"op": "acquire", "permits": 1, "wait_micros": 0},
                {"op": "acquire", "permits": 1, "wait_micros": 200001}
            ]
        }]));
        let outcome = &run_document(&d).unwrap()[0];
        let failure = outcome.failure.as_deref().unwrap();
        assert!(failure.starts_with("step 1 (acquire permits=1)"), "{failure}");
        assert!(failure.contains("expected wait_micros 200001, got wait_micros 200000"), "{failure}");
    }

    #[test]
    fn expected_errors_and_special_doubles_are_understood() {
        let d = doc(json!([{
            "name": "ok",
            "limiter": {"algorithm": "smooth_bursty", "permits_per_second": "Infinity", "max_burst_seconds": 1.0},
            "steps": [
                {"op": "get_rate", "permits_per_second": "Infinity"},
                {"op": "set_rate", "permits_per_second": "NaN", "error": "invalid_argument"},
                {"op": "acquire", "permits": "-9223372036854775808", "error": "invalid_argument"},
                {"op": "try_acquire", "permits": 1, "timeout_micros": "9223372036854775807", "acquired": true}
            ]
        }, {
            "name": "create",
            "limiter": {"algorithm": "smooth_bursty", "permits_per_second": -0.0, "max_burst_seconds": 1.0},
            "create_error": "invalid_argument"
        }]));
        for outcome in run_document(&d).unwrap() {
            assert_eq!(outcome.failure, None, "{}", outcome.name);
        }
    }

    #[test]
    fn a_missing_error_is_a_failure() {
        let d = doc(json!([{
            "name": "should-fail",
            "limiter": {"algorithm": "smooth_bursty", "permits_per_second": 1.0, "max_burst_seconds": 1.0},
            "steps": [{"op": "set_rate", "permits_per_second": 2.0, "error": "invalid_argument"}]
        }, {
            "name": "unknown",
            "limiter": {"algorithm": "no_such_thing"},
            "steps": []
        }]));
        let outcomes = run_document(&d).unwrap();
        assert!(outcomes[0].failure.as_deref().unwrap().contains("expected error invalid_argument, got ok"));
        assert!(outcomes[1].failure.as_deref().unwrap().contains("unsupported algorithm"));
    }

    #[test]
    fn every_decision_field_is_compared() {
        let d = doc(json!([{
            "name": "wrong-window",
            "limiter": {"algorithm": "fixed_window", "limit": 2, "window_micros": 1000},
            "steps": [{"op": "check", "cost": 1, "decision": {"allowed": true, "limit": 2, "remaining": 1,
                "retry_after_micros": 0, "reset_after_micros": 1000, "wait_micros": 0, "window_micros": 999}}]
        }, {
            "name": "negative-cost",
            "limiter": {"algorithm": "gcra", "max_burst": 0, "count_per_period": 1, "period_micros": 1000},
            "steps": [{"op": "check", "cost": -1, "error": "invalid_argument"}]
        }]));
        let outcomes = run_document(&d).unwrap();
        let failure = outcomes[0].failure.as_deref().unwrap();
        assert!(failure.contains("window_micros: expected 999, got 1000"), "{failure}");
        assert_eq!(outcomes[1].failure, None);
    }

    #[test]
    fn the_repository_vectors_all_pass_and_name_every_argument() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
        let files = collect_files(&[dir]).unwrap();
        assert!(files.len() >= 12);
        let (mut cases, mut skipped) = (0, 0);
        take_named_arguments();
        for file in files {
            // Every expected error of the table says which argument it is
            // about, so that every runner checks that too.
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            for case in doc["cases"].as_array().unwrap() {
                let steps = case.get("steps").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                for expected in std::iter::once(case)
                    .filter(|c| c.get("create_error").is_some())
                    .chain(steps.iter().filter(|s| s.get("error").is_some()))
                {
                    assert!(
                        expected.get("argument").is_some(),
                        "{}: {}: no \"argument\"",
                        file.display(),
                        case["name"]
                    );
                }
            }
            for outcome in run_file(&file).unwrap() {
                assert_eq!(outcome.failure, None, "{}: {}", file.display(), outcome.name);
                cases += 1;
                skipped += usize::from(outcome.skipped.is_some());
            }
        }
        assert!(cases >= 720, "only {cases} cases");
        assert!(skipped <= 12, "{skipped} cases skipped");
        // Every argument of the library is named by some expected error the
        // Rust runner replayed, or cannot be reached from the crates the
        // runners replay through: a new argument needs a row.
        let named = take_named_arguments();
        for &argument in Argument::ALL {
            let unreachable = UNREACHABLE.iter().find(|(a, _)| *a == argument);
            match (named.contains(&argument), unreachable) {
                (true, None) | (false, Some(_)) => {}
                (false, None) => panic!("no vector expects an error naming {argument:?}: add a row to bad_inputs.json"),
                (true, Some((_, why))) => panic!("{argument:?} is named by a vector: it is not unreachable ({why})"),
            }
        }
    }

    /// The arguments no case can make the Rust runner name, and why.
    const UNREACHABLE: &[(Argument, &str)] = &[
        (
            Argument::SampleInterval,
            "a real load sampler's option: the runners replay on a manual load signal (tests in crates/ratekeeper/src/load)",
        ),
        (
            Argument::Decay,
            "a real load sampler's option: the runners replay on a manual load signal (tests in crates/ratekeeper/src/load)",
        ),
        (
            Argument::SlidingLogStorageLimit,
            "only the core's sliding log on fixed storage checks it; every binding's log grows (ratekeeper::HeapLogStorage)",
        ),
        (
            Argument::Batch,
            "a Redis leased limiter's: the runners have no Redis server (crates/ratekeeper-redis/tests/leased_mode.rs)",
        ),
        (
            Argument::Lease,
            "a Redis leased limiter's: the runners have no Redis server (crates/ratekeeper-redis/tests/leased_mode.rs)",
        ),
        (Argument::Ttl, "a Redis membership's: the runners have no Redis server (crates/ratekeeper-redis/tests)"),
        (
            Argument::KeyText,
            "a text key with a lone surrogate, which Rust's keys (bytes) cannot be: keys/a-lone-surrogate, in Python and JavaScript",
        ),
    ];

    #[test]
    fn an_error_naming_another_argument_or_bound_is_a_failure() {
        let d = doc(json!([{
            "name": "wrong-argument",
            "limiter": {"algorithm": "fixed_window", "limit": 0, "window_micros": 1},
            "create_error": "invalid_argument", "argument": "window"
        }, {
            "name": "wrong-bound",
            "limiter": {"algorithm": "sliding_log", "limit": 0, "window_micros": 1},
            "create_error": "invalid_argument", "argument": "limit", "message_contains": "4294967295"
        }, {
            "name": "wrong-kind",
            "limiter": {"algorithm": "fixed_window", "limit": 0, "window_micros": 1},
            "create_error": "argument_type", "argument": "limit"
        }, {
            "name": "right",
            "limiter": {"algorithm": "sliding_log", "limit": 0, "window_micros": 1},
            "create_error": "invalid_argument", "argument": "limit", "message_contains": "1048576"
        }, {
            "name": "not-for-rust",
            "limiter": {"algorithm": "fixed_window", "limit": "5", "window_micros": 1, "raw": ["limit"]},
            "create_error": "argument_type", "argument": "limit", "skip": {"rust": "types"}
        }]));
        let outcomes = run_document(&d).unwrap();
        let failure = |i: usize| outcomes[i].failure.clone().unwrap_or_default();
        assert!(failure(0).contains("expected an error naming window, got one naming limit"), "{}", failure(0));
        assert!(failure(1).contains("whose message contains \"4294967295\""), "{}", failure(1));
        assert!(failure(2).contains("expected error argument_type, got invalid_argument"), "{}", failure(2));
        assert_eq!((outcomes[3].failure.as_deref(), outcomes[3].skipped.as_deref()), (None, None));
        assert_eq!((outcomes[4].failure.as_deref(), outcomes[4].skipped.as_deref()), (None, Some("types")));
    }

    #[test]
    fn durations_in_seconds_follow_the_bindings_rule() {
        let d = doc(json!([{
            "name": "infinite",
            "limiter": {"algorithm": "gcra", "max_burst": 0, "count_per_period": 1, "period_seconds": "Infinity"},
            "create_error": "invalid_argument", "argument": "period"
        }, {
            "name": "beyond-i64",
            "limiter": {"algorithm": "fixed_window", "limit": 1, "window_micros": "18446744073709551615"},
            "create_error": "invalid_argument", "argument": "window"
        }, {
            "name": "half-a-second",
            "limiter": {"algorithm": "fixed_window", "limit": 1, "window_seconds": 0.5},
            "steps": [{"op": "check", "cost": 1, "decision": {"allowed": true, "limit": 1, "remaining": 0,
                "retry_after_micros": 0, "reset_after_micros": 500000, "wait_micros": 0, "window_micros": 500000}}]
        }]));
        for outcome in run_document(&d).unwrap() {
            assert_eq!(outcome.failure, None, "{}", outcome.name);
        }
    }
}
