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
//! every family shares (reading fields, comparing a [`Decision`], expecting
//! an error).

use std::path::{Path, PathBuf};

use ratekeeper::{Decision, Error};
use serde_json::Value;

mod adaptive;
pub mod admission;
mod composite;
mod markers;
mod smooth;
mod token_bucket;

/// The format tag every vector file carries.
pub const FORMAT: &str = "ratelimit-conformance/1";

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutcome {
    /// The case's `name`.
    pub name: String,
    /// `None` when it passed; otherwise what differed first.
    pub failure: Option<String>,
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
        .map(|(i, case)| CaseOutcome {
            name: case.get("name").and_then(Value::as_str).map_or_else(|| format!("case #{i}"), str::to_owned),
            failure: run_case(case).err(),
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
        "gcra"
        | "leaky_bucket_meter"
        | "leaky_bucket_queue"
        | "fixed_window"
        | "sliding_window"
        | "sliding_log"
        | "sliding_window_counter" => admission::run(limiter, case),
        "srtcm" | "trtcm" => markers::run(algorithm, limiter, case),
        "gradient" | "aimd" | "concurrency" => adaptive::run(algorithm, limiter, case),
        "composite" => composite::run(limiter, case),
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
            Err(Error::InvalidArgument(_)) if expected == "invalid_argument" => Ok(()),
            Err(e) => Err(format!("create: expected error {expected}, got error {e}")),
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
        (Some(expected), Err(Error::InvalidArgument(_))) if expected == "invalid_argument" => Ok(()),
        (Some(expected), Err(e)) => Err(format!("expected error {expected}, got error: {e}")),
        (Some(expected), Ok(_)) => Err(format!("expected error {expected}, got success")),
    }
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

pub(crate) fn str_field<'a>(obj: &'a Value, key: &str) -> Result<&'a str, String> {
    obj.get(key).and_then(Value::as_str).ok_or_else(|| format!("missing string field {key:?}"))
}

pub(crate) fn bool_field(obj: &Value, key: &str) -> Result<bool, String> {
    obj.get(key).and_then(Value::as_bool).ok_or_else(|| format!("missing boolean field {key:?}"))
}

/// A signed 64-bit integer: a JSON integer, or a decimal string when beyond
/// ±(2^53 − 1) (FORMAT.md, "Numbers").
pub fn int_field(obj: &Value, key: &str) -> Result<i64, String> {
    match obj.get(key) {
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| format!("field {key:?} = {n} is not a 64-bit integer")),
        Some(Value::String(s)) => s.parse().map_err(|_| format!("field {key:?} = {s:?} is not a 64-bit integer")),
        _ => Err(format!("missing integer field {key:?}")),
    }
}

/// A double: a JSON number (parsed with correct rounding), or one of the
/// strings `"NaN"`, `"Infinity"`, `"-Infinity"` (FORMAT.md, "Special doubles").
pub fn double_field(obj: &Value, key: &str) -> Result<f64, String> {
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
    fn the_repository_vectors_all_pass() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
        let files = collect_files(&[dir]).unwrap();
        assert!(files.len() >= 11);
        let mut cases = 0;
        for file in files {
            for outcome in run_file(&file).unwrap() {
                assert_eq!(outcome.failure, None, "{}: {}", file.display(), outcome.name);
                cases += 1;
            }
        }
        assert!(cases >= 677, "only {cases} cases");
    }
}
