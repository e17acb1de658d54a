//! `cycle`, replayed through [`ratekeeper::CycleLimiter`] (Resilience4j's
//! `AtomicRateLimiter`) on a manual clock. The decisions come from the
//! non-sleeping calls (`check`, `check_now`), so the clock moves only by
//! `sleep` steps.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Argument, CycleConfig, CycleLimiter, ManualClock};
use serde_json::Value;

use crate::{count_field, duration_field, expect_decision, expect_eq, expect_outcome, int_field, run_steps, str_field};

/// A step's `permits`: a count, as a binding converts it.
fn permits(step: &Value) -> Result<u64, String> {
    let n = int_field(step, "permits")?;
    u64::try_from(n).map_err(|_| format!("permits = {n} is negative"))
}

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let limit = count_field(spec, "limit_for_period", Argument::LimitForPeriod)?;
    let period = duration_field(spec, "limit_refresh_period", Argument::LimitRefreshPeriod)?;
    let timeout = duration_field(spec, "timeout_duration", Argument::TimeoutDuration)?;
    let created = (|| {
        let config =
            CycleConfig { limit_for_period: limit?, limit_refresh_period_micros: period?, timeout_micros: timeout? };
        CycleLimiter::with_clock(config, Arc::clone(&clock))
    })();
    run_steps(case, created, |limiter, step| match str_field(step, "op")? {
        "sleep" => int_field(step, "micros").map(|m| clock.advance_micros(m)),
        "acquire" => expect_decision(step, &limiter.check(permits(step)?)),
        "try_acquire" => expect_decision(step, &limiter.check_now(permits(step)?)),
        "reserve" => {
            let expected = match step.get("wait_micros") {
                Some(Value::Null) => None,
                _ => Some(int_field(step, "wait_micros")?),
            };
            let wait = limiter.reserve_permission(permits(step)?).map(|d| d.as_micros() as i64);
            expect_eq("wait_micros", expected, wait)
        }
        "change_limit" => {
            let set = count_field(step, "limit_for_period", Argument::LimitForPeriod)?
                .and_then(|limit| limiter.change_limit_for_period(limit));
            expect_outcome(step, set, |()| Ok(()))
        }
        "change_timeout" => {
            let micros = duration_field(step, "timeout_duration", Argument::TimeoutDuration)?;
            let set = match micros {
                // The std layer takes a `Duration`: a negative one cannot be
                // written in Rust.
                Ok(m) if m < 0 => return Err(format!("timeout_duration_micros = {m}: Rust cannot pass it")),
                Ok(m) => limiter.change_timeout_duration(Duration::from_micros(m as u64)),
                Err(e) => Err(e),
            };
            expect_outcome(step, set, |()| Ok(()))
        }
        "drain" => expect_eq("drained", int_field(step, "drained")?, limiter.drain_permissions() as i64),
        "metrics" => {
            let m = limiter.metrics();
            expect_eq("available_permissions", int_field(step, "available_permissions")?, m.available_permissions)?;
            expect_eq("micros_to_wait", int_field(step, "micros_to_wait")?, m.time_to_wait.as_micros() as i64)?;
            expect_eq("cycle", int_field(step, "cycle")?, m.cycle)
        }
        other => Err(format!("unknown op {other:?}")),
    })
}
