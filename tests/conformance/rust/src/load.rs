//! `bbr` and `system_guard`, replayed through [`ratekeeper::Bbr`] and
//! [`ratekeeper::SystemGuard`] on a manual clock and a manual load signal.

use std::sync::Arc;

use ratekeeper::load::ManualLoad;
use ratekeeper::{Argument, Bbr, BbrConfig, BbrPermit, ManualClock, SystemGuard, SystemPermit, SystemRule};
use serde_json::Value;

use crate::{
    count_field, double_field, duration_field, expect_decision, expect_double, expect_eq, expect_outcome, int_field,
    run_steps, str_field,
};

/// The steps both share: `sleep` and `load`. `None` when `step` is another op.
fn common(clock: &ManualClock, load: &ManualLoad, step: &Value) -> Option<Result<(), String>> {
    match str_field(step, "op").ok()? {
        "sleep" => Some(int_field(step, "micros").map(|m| clock.advance_micros(m))),
        "load" => Some(set_load(load, step)),
        _ => None,
    }
}

/// A `load` step: sets the CPU usage, then the load average, stopping at
/// the first the signal refuses (the step may expect that error).
fn set_load(load: &ManualLoad, step: &Value) -> Result<(), String> {
    let cpu = step.get("cpu_usage").map(|_| double_field(step, "cpu_usage")).transpose()?;
    let average = step.get("load_average").map(|_| double_field(step, "load_average")).transpose()?;
    let set = cpu
        .map_or(Ok(()), |cpu| load.set_cpu_usage(cpu))
        .and_then(|()| average.map_or(Ok(()), |average| load.set_load_average(average)));
    expect_outcome(step, set, |()| Ok(()))
}

/// A permit by its `permit` index.
fn nth<T: Copy>(permits: &[T], step: &Value) -> Result<T, String> {
    let index = int_field(step, "permit")?;
    usize::try_from(index).ok().and_then(|i| permits.get(i).copied()).ok_or(format!("no permit #{index}"))
}

pub(crate) fn run_bbr(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let load = Arc::new(ManualLoad::new());
    let window = duration_field(spec, "window", Argument::Window)?;
    let buckets = u32::try_from(int_field(spec, "buckets")?).map_err(|e| e.to_string())?;
    let cpu_threshold = double_field(spec, "cpu_threshold")?;
    let cool_down = duration_field(spec, "cool_down", Argument::CoolDown)?;
    let created = (|| {
        let config = BbrConfig { window_micros: window?, buckets, cpu_threshold, cool_down_micros: cool_down? };
        Bbr::with_clock(config, load.clone(), Arc::clone(&clock))
    })();
    let mut permits: Vec<BbrPermit> = Vec::new();
    run_steps(case, created, |bbr, step| {
        if let Some(done) = common(&clock, &load, step) {
            return done;
        }
        match str_field(step, "op")? {
            "acquire" => {
                let (decision, permit) = bbr.try_acquire();
                permits.extend(permit);
                expect_decision(step, &decision)
            }
            "release" => {
                bbr.release(nth(&permits, step)?);
                Ok(())
            }
            "stats" => {
                let s = bbr.stats();
                expect_eq("in_flight", int_field(step, "in_flight")?, s.in_flight as i64)?;
                expect_eq("max_pass", int_field(step, "max_pass")?, s.max_pass as i64)?;
                expect_eq("min_rt_millis", int_field(step, "min_rt_millis")?, s.min_rt_millis as i64)?;
                expect_eq("max_in_flight", int_field(step, "max_in_flight")?, s.max_in_flight as i64)
            }
            other => Err(format!("unknown op {other:?}")),
        }
    })
}

pub(crate) fn run_system_guard(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let load = Arc::new(ManualLoad::new());
    let has = |key: &str| spec.get(key).is_some();
    let qps = if has("qps") { Some(double_field(spec, "qps")?) } else { None };
    let max_thread = if has("max_thread") { Some(count_field(spec, "max_thread", Argument::MaxThread)?) } else { None };
    let avg_rt = if has("avg_rt_micros") { Some(duration_field(spec, "avg_rt", Argument::AvgRt)?) } else { None };
    let highest_system_load =
        if has("highest_system_load") { Some(double_field(spec, "highest_system_load")?) } else { None };
    let highest_cpu_usage =
        if has("highest_cpu_usage") { Some(double_field(spec, "highest_cpu_usage")?) } else { None };
    let created = (|| {
        let rule = SystemRule {
            qps,
            max_thread: max_thread.transpose()?,
            avg_rt_micros: avg_rt.transpose()?,
            highest_system_load,
            highest_cpu_usage,
        };
        SystemGuard::with_clock(rule, load.clone(), Arc::clone(&clock))
    })();
    let mut permits: Vec<SystemPermit> = Vec::new();
    run_steps(case, created, |guard, step| {
        if let Some(done) = common(&clock, &load, step) {
            return done;
        }
        match str_field(step, "op")? {
            "acquire" => {
                let count = u64::try_from(int_field(step, "count")?).map_err(|e| e.to_string())?;
                let (decision, admitted) = guard.try_acquire(count);
                let threshold = match admitted {
                    Ok(permit) => {
                        permits.push(permit);
                        None
                    }
                    Err(threshold) => Some(threshold.name()),
                };
                expect_eq("threshold", step.get("threshold").and_then(Value::as_str), threshold)?;
                expect_decision(step, &decision)
            }
            "release" => {
                guard.release(nth(&permits, step)?);
                Ok(())
            }
            "stats" => {
                let s = guard.stats();
                expect_double("pass_qps", double_field(step, "pass_qps")?, s.pass_qps)?;
                expect_double("block_qps", double_field(step, "block_qps")?, s.block_qps)?;
                expect_double("success_qps", double_field(step, "success_qps")?, s.success_qps)?;
                expect_eq("in_flight", int_field(step, "in_flight")?, s.in_flight as i64)?;
                expect_double("avg_rt_millis", double_field(step, "avg_rt_millis")?, s.avg_rt_millis)?;
                expect_eq("min_rt_millis", int_field(step, "min_rt_millis")?, s.min_rt_millis as i64)?;
                expect_double("max_success_qps", double_field(step, "max_success_qps")?, s.max_success_qps)
            }
            other => Err(format!("unknown op {other:?}")),
        }
    })
}
