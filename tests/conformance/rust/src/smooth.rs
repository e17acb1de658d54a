//! The Guava algorithms: `smooth_bursty` and `smooth_warming_up`
//! (`tests/conformance/vectors/guava/`), replayed through
//! [`ratekeeper::RateLimiter`].

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Argument, Error, ManualClock, RateLimiter};
use serde_json::Value;

use crate::{
    bool_field, double_field, duration_field, expect_error, int_field, run_steps, same_double, show, str_field,
};

type Limiter = RateLimiter<Arc<ManualClock>>;

fn build(algorithm: &str, spec: &Value, clock: &Arc<ManualClock>) -> Result<Result<Limiter, Error>, String> {
    let rate = double_field(spec, "permits_per_second")?;
    let builder = RateLimiter::builder(rate).clock(Arc::clone(clock));
    Ok(match algorithm {
        "smooth_bursty" => builder.max_burst_seconds(double_field(spec, "max_burst_seconds")?).build(),
        _ => {
            // Seconds as the bindings convert them; microseconds as they are.
            let warmup = duration_field(spec, "warmup", Argument::Warmup)?;
            let cold_factor = double_field(spec, "cold_factor")?;
            match warmup {
                Err(e) => Err(e),
                // A Duration cannot be negative: ask the core directly, so
                // that the error is the library's own.
                Ok(warmup) if warmup < 0 => ratekeeper::SmoothRateLimiter::warming_up(rate, warmup, cold_factor)
                    .map(|core| RateLimiter::from_core(core, Arc::clone(clock))),
                Ok(warmup) => builder.warmup(Duration::from_micros(warmup as u64)).cold_factor(cold_factor).build(),
            }
        }
    })
}

pub(super) fn run(algorithm: &str, spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let created = build(algorithm, spec, &clock)?;
    run_steps(case, created, |limiter, step| run_step(limiter, &clock, step))
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
            let timeout = duration_field(step, "timeout", Argument::Timeout)?
                .map(|micros| Duration::from_micros(micros.max(0) as u64));
            let permits = int_field(step, "permits")?;
            match timeout
                .and_then(|t| ratekeeper::core::smooth::permits_from_i64(permits).map(|p| (p, t)))
                .and_then(|(p, timeout)| limiter.try_acquire(p, timeout))
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
        (Some(_), Err(e)) => expect_error(step, "error", &e),
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
