//! `gradient`, `aimd` and `concurrency`, replayed through
//! [`ratekeeper::ConcurrencyLimiter`] on a manual clock: the policies alone
//! through [`sample`](ratekeeper::ConcurrencyLimiter::sample), the limiter
//! through permits.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{
    AimdConfig, Argument, ConcurrencyLimiter, ConcurrencyPolicy, Error, GradientConfig, ManualClock, Outcome, Permit,
};
use serde_json::Value;

use crate::{
    bool_field, count_field, double_field, duration_field, expect_decision, expect_eq, expect_outcome, int_field,
    run_steps, str_field,
};

type Limiter = ConcurrencyLimiter<Arc<ManualClock>>;

/// A policy object (`{"algorithm": "fixed" | "gradient" | "aimd", …}`):
/// `Err` when malformed, `Ok(Err)` when a number is out of range.
fn policy(spec: &Value) -> Result<Result<ConcurrencyPolicy, Error>, String> {
    let count = |key: &str, argument| count_field(spec, key, argument);
    Ok(match str_field(spec, "algorithm")? {
        "fixed" => count("limit", Argument::Limit)?.and_then(ConcurrencyPolicy::fixed),
        "gradient" => {
            let (initial, min) =
                (count("initial_limit", Argument::InitialLimit)?, count("min_limit", Argument::MinLimit)?);
            let (max, queue) = (count("max_limit", Argument::MaxLimit)?, count("queue_size", Argument::QueueSize)?);
            let probe = count("probe_interval", Argument::ProbeInterval)?;
            let (smoothing, rtt_tolerance) = (double_field(spec, "smoothing")?, double_field(spec, "rtt_tolerance")?);
            let backoff_ratio = double_field(spec, "backoff_ratio")?;
            (|| {
                ConcurrencyPolicy::gradient(GradientConfig {
                    initial_limit: initial?,
                    min_limit: min?,
                    max_limit: max?,
                    smoothing,
                    rtt_tolerance,
                    queue_size: queue?,
                    backoff_ratio,
                    probe_interval: probe?,
                })
            })()
        }
        "aimd" => {
            let (initial, min) =
                (count("initial_limit", Argument::InitialLimit)?, count("min_limit", Argument::MinLimit)?);
            let max = count("max_limit", Argument::MaxLimit)?;
            let backoff_ratio = double_field(spec, "backoff_ratio")?;
            let rtt_timeout_micros = duration_field(spec, "rtt_timeout", Argument::RttTimeout)?;
            (|| {
                ConcurrencyPolicy::aimd(AimdConfig {
                    initial_limit: initial?,
                    min_limit: min?,
                    max_limit: max?,
                    backoff_ratio,
                    rtt_timeout_micros: rtt_timeout_micros?,
                })
            })()
        }
        other => return Err(format!("unknown policy {other:?}")),
    })
}

pub(crate) fn run(algorithm: &str, spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let policy = match algorithm {
        "concurrency" => policy(spec.get("policy").ok_or("no \"policy\"")?)?,
        _ => policy(spec)?,
    };
    let created = policy.map(|p| ConcurrencyLimiter::with_clock(p, Arc::clone(&clock)));
    let mut permits: Vec<Permit> = Vec::new();
    run_steps(case, created, |limiter, step| match str_field(step, "op")? {
        "sleep" => {
            clock.advance_micros(int_field(step, "micros")?);
            Ok(())
        }
        "sample" => sample(limiter, step),
        "acquire" => {
            let (decision, permit) = limiter.try_acquire();
            permits.extend(permit);
            expect_decision(step, &decision)
        }
        "release" => {
            let index = int_field(step, "permit")?;
            let permit =
                usize::try_from(index).ok().and_then(|i| permits.get(i)).ok_or(format!("no permit #{index}"))?;
            let name = str_field(step, "outcome")?;
            let outcome = Outcome::from_name(name).ok_or(format!("unknown outcome {name:?}"))?;
            expect_eq("limit", int_field(step, "limit")?, limiter.release(*permit, outcome) as i64)
        }
        "state" => {
            expect_eq("limit", int_field(step, "limit")?, limiter.limit() as i64)?;
            expect_eq("in_flight", int_field(step, "in_flight")?, limiter.in_flight() as i64)
        }
        other => Err(format!("unknown op {other:?}")),
    })
}

fn sample(limiter: &mut Limiter, step: &Value) -> Result<(), String> {
    // A negative RTT is the same error as a negative count.
    let rtt = duration_field(step, "rtt", Argument::Rtt)?
        .and_then(|micros| ratekeeper::unsigned_from_i64(Argument::Rtt, micros));
    let in_flight = count_field(step, "in_flight", Argument::InFlight)?;
    let dropped = bool_field(step, "dropped")?;
    let limit = rtt.and_then(|rtt| limiter.sample(Duration::from_micros(rtt), in_flight?, dropped));
    expect_outcome(step, limit, |limit| expect_eq("limit", int_field(step, "limit")?, limit as i64))
}
