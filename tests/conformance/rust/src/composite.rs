//! `composite`: several limits admitted all or nothing, replayed through
//! [`ratekeeper::CompositeLimiter`] on a manual clock.

use std::sync::Arc;

use ratekeeper::{Argument, CompositeLimiter, Error, ManualClock};
use serde_json::Value;

use crate::admission::limiter_spec;
use crate::{count_field, decision_field, expect_decision, expect_eq, expect_outcome, int_field, run_steps, str_field};

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let limits = spec.get("limits").and_then(Value::as_array).ok_or("no \"limits\" array")?;
    let specs = limits.iter().map(limiter_spec).collect::<Result<Vec<_>, String>>()?;
    let created = specs
        .into_iter()
        .collect::<Result<Vec<_>, Error>>()
        .and_then(|specs| CompositeLimiter::with_clock(&specs, Arc::clone(&clock)));
    run_steps(case, created, |limiter, step| match str_field(step, "op")? {
        "sleep" => {
            clock.advance_micros(int_field(step, "micros")?);
            Ok(())
        }
        "check" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| limiter.check_each(c)), |(decision, parts)| {
                expect_decision(step, &decision)?;
                let expected = step.get("parts").and_then(Value::as_array).ok_or("no \"parts\" array")?;
                expect_eq("number of parts", expected.len(), parts.len())?;
                for (i, (e, actual)) in expected.iter().zip(&parts).enumerate() {
                    let e = decision_field(&serde_json::json!({ "decision": e }), "decision")?;
                    if e != *actual {
                        return Err(format!("part {i}: expected {e:?}, got {actual:?}"));
                    }
                }
                Ok(())
            })
        }
        "peek" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| limiter.peek(c)), |d| expect_decision(step, &d))
        }
        other => Err(format!("unknown op {other:?}")),
    })
}
