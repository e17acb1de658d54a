//! `keyed` (one limiter per key, the bindings' `AnyKeyedLimiter`, keyed by
//! bytes) and `manual_clock` (a clock alone, for its `advance` steps): the
//! cases of `vectors/bad_inputs.json` about keys and clock moves.

use std::sync::Arc;

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{AnyKeyedLimiter, Argument, Error, KeyedOptions, ManualClock};
use serde_json::Value;

use crate::admission::limiter_spec;
use crate::{count_field, duration_field, expect_decision, expect_outcome, int_field, run_steps, str_field};

type Limiter = AnyKeyedLimiter<Arc<ManualClock>>;

/// The options of a `keyed` object, in the order the bindings read them:
/// `max_keys`, then `shards` and `max_key_bytes` when given.
fn options(spec: &Value) -> Result<Result<KeyedOptions, Error>, String> {
    let count = |key: &str, argument| count_field(spec, key, argument);
    let max_keys = count("max_keys", Argument::MaxKeys)?;
    let shards = spec.get("shards").map(|_| count("shards", Argument::Shards)).transpose()?;
    let max_key_bytes = spec.get("max_key_bytes").map(|_| count("max_key_bytes", Argument::MaxKeyBytes)).transpose()?;
    Ok((|| {
        // A count beyond `usize` is beyond every bound too.
        let size = |argument, n: u64| usize::try_from(n).map_err(|_| Error::invalid_uint(argument, n));
        let mut options = KeyedOptions::new(size(Argument::MaxKeys, max_keys?)?);
        if let Some(shards) = shards {
            options = options.shards(size(Argument::Shards, shards?)?);
        }
        if let Some(bytes) = max_key_bytes {
            options = options.max_key_bytes(MaxKeyBytes::new(size(Argument::MaxKeyBytes, bytes?)?)?);
        }
        Ok(options)
    })())
}

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let template = limiter_spec(spec.get("template").ok_or("no \"template\"")?)?;
    let options = options(spec)?;
    let created: Result<Limiter, Error> = template.and_then(|t| AnyKeyedLimiter::new(&t, options?, Arc::clone(&clock)));
    run_steps(case, created, |limiter, step| match str_field(step, "op")? {
        "sleep" => {
            clock.advance_micros(int_field(step, "micros")?);
            Ok(())
        }
        "check" => {
            let key = key(step)?;
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.and_then(|c| limiter.check(&key, c)), |d| expect_decision(step, &d))
        }
        other => Err(format!("unknown op {other:?}")),
    })
}

/// A step's key as bytes: `key` (its UTF-8) or `key_length` (that many
/// `k`s). `key_utf16` is text only Python and JavaScript can hold.
fn key(step: &Value) -> Result<Vec<u8>, String> {
    if step.get("key_length").is_some() {
        let n = usize::try_from(int_field(step, "key_length")?).map_err(|e| e.to_string())?;
        return Ok(vec![b'k'; n]);
    }
    if step.get("key_utf16").is_some() {
        return Err("a key of UTF-16 code units: Rust's keys are bytes, the case must skip rust".to_owned());
    }
    Ok(str_field(step, "key")?.as_bytes().to_vec())
}

/// `manual_clock`: a clock moved by `advance` steps of `seconds`, as the
/// bindings convert them (`ratekeeper::advance_micros_from_secs`).
pub(crate) fn run_clock(case: &Value) -> Result<(), String> {
    let clock = ManualClock::new();
    run_steps(case, Ok(&clock), |clock, step| match str_field(step, "op")? {
        "advance" => {
            if step.get("micros").is_some() {
                return Err("Rust's ManualClock::advance takes a Duration: the case must skip rust".to_owned());
            }
            let micros = duration_field(&step_seconds(step), "advance", Argument::AdvanceSeconds)?;
            expect_outcome(step, micros.map(|m| clock.advance_micros(m)), |()| Ok(()))
        }
        other => Err(format!("unknown op {other:?}")),
    })
}

/// An `advance` step's `seconds` as the `advance_seconds` field
/// [`duration_field`] reads.
fn step_seconds(step: &Value) -> Value {
    serde_json::json!({ "advance_seconds": step.get("seconds").cloned().unwrap_or(Value::Null) })
}
