//! The Rust runner of the cross-language conformance suite.
//!
//! Reads vector files in the `ratelimit-conformance/1` format
//! (`tests/conformance/FORMAT.md`) and replays every case against the public
//! API of the `ratekeeper` crate on a [`ManualClock`], exactly as the Python,
//! Node and C runners do against their bindings. A case passes when every
//! step gives the expected value; otherwise the first differing step is
//! reported with the expected and actual values.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Error, ManualClock, RateLimiter};
use serde_json::Value;

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
        other => Err(format!("unsupported algorithm {other:?}")),
    }
}

/// The Guava algorithms: `smooth_bursty` and `smooth_warming_up`.
mod smooth {
    use super::*;

    type Limiter = RateLimiter<Arc<ManualClock>>;

    fn build(algorithm: &str, spec: &Value, clock: &Arc<ManualClock>) -> Result<Result<Limiter, Error>, String> {
        let rate = double_field(spec, "permits_per_second")?;
        let builder = RateLimiter::builder(rate).clock(Arc::clone(clock));
        Ok(match algorithm {
            "smooth_bursty" => builder.max_burst_seconds(double_field(spec, "max_burst_seconds")?).build(),
            _ => {
                let warmup = int_field(spec, "warmup_micros")?;
                let cold_factor = double_field(spec, "cold_factor")?;
                if warmup < 0 {
                    // A Duration cannot be negative: ask the core directly, so
                    // that the error is the library's own.
                    ratekeeper::SmoothRateLimiter::warming_up(rate, warmup, cold_factor)
                        .map(|core| RateLimiter::from_core(core, Arc::clone(clock)))
                } else {
                    builder.warmup(Duration::from_micros(warmup as u64)).cold_factor(cold_factor).build()
                }
            }
        })
    }

    pub(super) fn run(algorithm: &str, spec: &Value, case: &Value) -> Result<(), String> {
        let clock = Arc::new(ManualClock::new());
        let created = build(algorithm, spec, &clock)?;
        if let Some(expected) = case.get("create_error") {
            return match created {
                Err(Error::InvalidArgument(_)) if expected == "invalid_argument" => Ok(()),
                Err(e) => Err(format!("create: expected error {expected}, got error {e}")),
                Ok(_) => Err(format!("create: expected error {expected}, got a limiter")),
            };
        }
        let limiter = created.map_err(|e| format!("create: expected a limiter, got error: {e}"))?;
        let steps = case.get("steps").and_then(Value::as_array).ok_or("case has no \"steps\"")?;
        for (i, step) in steps.iter().enumerate() {
            run_step(&limiter, &clock, step).map_err(|e| format!("step {i} {}: {e}", describe(step)))?;
        }
        Ok(())
    }

    fn run_step(limiter: &Limiter, clock: &ManualClock, step: &Value) -> Result<(), String> {
        let expects_error = step.get("error").map(|e| e.as_str().unwrap_or("?").to_owned());
        let op = str_field(step, "op")?;
        let outcome: Result<String, Error> = match op {
            "sleep" => {
                clock.advance_micros(int_field(step, "micros")?);
                return Ok(());
            }
            "acquire" => {
                let expected = match &expects_error {
                    None => Some(int_field(step, "wait_micros")?),
                    Some(_) => None,
                };
                match ratekeeper::core::smooth::permits_from_i64(int_field(step, "permits")?)
                    .and_then(|p| limiter.acquire(p))
                {
                    Ok(wait) => {
                        let actual = i64::try_from(wait.as_micros()).unwrap_or(i64::MAX);
                        if Some(actual) == expected {
                            return Ok(());
                        }
                        Ok(format!("wait_micros {actual}"))
                    }
                    Err(e) => Err(e),
                }
            }
            "try_acquire" => {
                let expected = match &expects_error {
                    None => Some(bool_field(step, "acquired")?),
                    Some(_) => None,
                };
                // Guava treats a negative timeout as zero; a Duration cannot
                // be negative.
                let timeout = Duration::from_micros(int_field(step, "timeout_micros")?.max(0) as u64);
                match ratekeeper::core::smooth::permits_from_i64(int_field(step, "permits")?)
                    .and_then(|p| limiter.try_acquire(p, timeout))
                {
                    Ok(acquired) if Some(acquired) == expected => return Ok(()),
                    Ok(acquired) => Ok(format!("acquired {acquired}")),
                    Err(e) => Err(e),
                }
            }
            "set_rate" => match limiter.set_rate(double_field(step, "permits_per_second")?) {
                Ok(()) if expects_error.is_none() => return Ok(()),
                Ok(()) => Ok("ok".to_owned()),
                Err(e) => Err(e),
            },
            "get_rate" => {
                let expected = double_field(step, "permits_per_second")?;
                let actual = limiter.rate();
                if same_double(actual, expected) {
                    return Ok(());
                }
                return Err(format!("expected permits_per_second {}, got {}", show(expected), show(actual)));
            }
            other => return Err(format!("unknown op {other:?}")),
        };
        match (expects_error, outcome) {
            (Some(expected), Err(Error::InvalidArgument(_))) if expected == "invalid_argument" => Ok(()),
            (Some(expected), Err(e)) => Err(format!("expected error {expected}, got error: {e}")),
            (Some(expected), Ok(actual)) => Err(format!("expected error {expected}, got {actual}")),
            (None, Ok(actual)) => Err(format!("expected {}, got {actual}", expected_value(step))),
            (None, Err(e)) => Err(format!("expected {}, got error: {e}", expected_value(step))),
        }
    }

    fn expected_value(step: &Value) -> String {
        ["wait_micros", "acquired", "permits_per_second"]
            .iter()
            .find_map(|k| step.get(*k).map(|v| format!("{k} {v}")))
            .unwrap_or_else(|| "success".to_owned())
    }
}

/// A step's fields other than its expected outcome, for failure messages.
fn describe(step: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(obj) = step.as_object() {
        for (k, v) in obj {
            if !matches!(k.as_str(), "wait_micros" | "acquired" | "error") {
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

fn str_field<'a>(obj: &'a Value, key: &str) -> Result<&'a str, String> {
    obj.get(key).and_then(Value::as_str).ok_or_else(|| format!("missing string field {key:?}"))
}

fn bool_field(obj: &Value, key: &str) -> Result<bool, String> {
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
    fn the_repository_vectors_all_pass() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
        let files = collect_files(&[dir]).unwrap();
        assert!(files.len() >= 4);
        let mut cases = 0;
        for file in files {
            for outcome in run_file(&file).unwrap() {
                assert_eq!(outcome.failure, None, "{}: {}", file.display(), outcome.name);
                cases += 1;
            }
        }
        assert!(cases >= 439, "only {cases} cases");
    }
}
