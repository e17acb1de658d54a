//! `flow`, replayed through [`ratekeeper::FlowController`] on a manual clock.

use std::sync::Arc;

use ratekeeper::{ControlBehavior, FlowController, FlowGrade, FlowPermit, FlowRule, ManualClock};
use serde_json::Value;

use crate::{
    bool_field, double_field, expect_decision, expect_double, expect_eq, expect_outcome, int_field, run_steps,
    str_field,
};

/// A field Sentinel keeps in a Java `int`, as the controller takes it.
fn u32_field(obj: &Value, key: &str) -> Result<u32, String> {
    let value = int_field(obj, key)?;
    u32::try_from(value).map_err(|_| format!("field {key:?} = {value} does not fit the controller's u32"))
}

/// A rule from the fields of a `limiter` or a `set_rule` step.
fn rule(obj: &Value) -> Result<FlowRule, String> {
    let grade = match str_field(obj, "grade")? {
        "qps" => FlowGrade::Qps,
        "thread" => FlowGrade::Thread,
        other => return Err(format!("unknown grade {other:?}")),
    };
    let control_behavior = match str_field(obj, "control_behavior")? {
        "default" => ControlBehavior::Default,
        "warm_up" => ControlBehavior::WarmUp {
            warm_up_period_sec: u32_field(obj, "warm_up_period_sec")?,
            cold_factor: u32_field(obj, "cold_factor")?,
        },
        "rate_limiter" => {
            ControlBehavior::RateLimiter { max_queueing_time_ms: u32_field(obj, "max_queueing_time_ms")? }
        }
        "warm_up_rate_limiter" => ControlBehavior::WarmUpRateLimiter {
            warm_up_period_sec: u32_field(obj, "warm_up_period_sec")?,
            cold_factor: u32_field(obj, "cold_factor")?,
            max_queueing_time_ms: u32_field(obj, "max_queueing_time_ms")?,
        },
        other => return Err(format!("unknown control_behavior {other:?}")),
    };
    Ok(FlowRule { grade, count: double_field(obj, "count")?, control_behavior })
}

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let created = FlowController::with_clock(
        rule(spec)?,
        u32_field(spec, "sample_count")?,
        u32_field(spec, "interval_ms")?,
        Arc::clone(&clock),
    );
    let mut permits: Vec<FlowPermit> = Vec::new();
    run_steps(case, created, |flow, step| match str_field(step, "op")? {
        "sleep" => int_field(step, "micros").map(|m| clock.advance_micros(m)),
        "check" => {
            let got = flow.check(u32_field(step, "acquire_count")?, bool_field(step, "prioritized")?);
            expect_outcome(step, got, |(decision, permit)| {
                permits.extend(permit);
                expect_decision(step, &decision)
            })
        }
        "release" => {
            let index = int_field(step, "permit")?;
            let permit = usize::try_from(index).ok().and_then(|i| permits.get(i).copied());
            flow.release(permit.ok_or(format!("no permit #{index}"))?);
            Ok(())
        }
        "add_pass" => {
            let count = u64::try_from(int_field(step, "count")?).map_err(|e| e.to_string())?;
            flow.add_pass(count);
            Ok(())
        }
        "set_rule" => expect_outcome(step, flow.set_rule(rule(step)?), |()| Ok(())),
        "stats" => {
            let s = flow.stats();
            expect_double("pass_qps", double_field(step, "pass_qps")?, s.pass_qps)?;
            expect_double("block_qps", double_field(step, "block_qps")?, s.block_qps)?;
            expect_double("success_qps", double_field(step, "success_qps")?, s.success_qps)?;
            expect_double("previous_pass_qps", double_field(step, "previous_pass_qps")?, s.previous_pass_qps)?;
            expect_eq("occupied_pass", int_field(step, "occupied_pass")?, s.occupied_pass as i64)?;
            expect_eq("waiting", int_field(step, "waiting")?, s.waiting as i64)?;
            expect_eq("in_flight", int_field(step, "in_flight")?, s.in_flight as i64)?;
            expect_double("avg_rt_millis", double_field(step, "avg_rt_millis")?, s.avg_rt_millis)
        }
        other => Err(format!("unknown op {other:?}")),
    })
}
