//! The admission-style algorithms without extras — `gcra`,
//! `leaky_bucket_meter`, `leaky_bucket_queue`, `fixed_window`,
//! `sliding_window`, `sliding_log`, `sliding_window_counter` — replayed
//! through [`ratekeeper::AnyLimiter`], built from a [`LimiterSpec`] exactly
//! as a binding builds one from its caller's numbers.

use std::sync::Arc;

use ratekeeper::{AnyLimiter, Argument, Error, LimiterSpec, ManualClock};
use serde_json::Value;

use crate::{count_field, double_field, expect_decision, expect_outcome, int_field, run_steps, str_field};

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let created = limiter_spec(spec)?.and_then(|s| AnyLimiter::with_clock(&s, Arc::clone(&clock)));
    run_steps(case, created, |limiter, step| match str_field(step, "op")? {
        "sleep" => {
            clock.advance_micros(int_field(step, "micros")?);
            Ok(())
        }
        "check" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| limiter.check(c)), |d| expect_decision(step, &d))
        }
        "peek" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| limiter.peek(c)), |d| expect_decision(step, &d))
        }
        other => Err(format!("unknown op {other:?}")),
    })
}

/// A vector's `limiter` object as a [`LimiterSpec`]: `Err` when the vector
/// is malformed, `Ok(Err)` when a number is out of the library's range
/// (negative counts, as a binding's conversion reports them).
pub fn limiter_spec(spec: &Value) -> Result<Result<LimiterSpec, Error>, String> {
    let count = |key: &str, argument| count_field(spec, key, argument);
    let micros = |key: &str| int_field(spec, key);
    Ok(match str_field(spec, "algorithm")? {
        "token_bucket" => {
            let rate = double_field(spec, "rate")?;
            count("burst", Argument::Burst)?.map(|burst| LimiterSpec::TokenBucket { rate, burst })
        }
        "gcra" => {
            let (max_burst, count_per_period) =
                (count("max_burst", Argument::MaxBurst)?, count("count_per_period", Argument::CountPerPeriod)?);
            let period_micros = micros("period_micros")?;
            max_burst.and_then(|max_burst| {
                count_per_period.map(|count_per_period| LimiterSpec::Gcra {
                    max_burst,
                    count_per_period,
                    period_micros,
                })
            })
        }
        "leaky_bucket_meter" => {
            let (capacity, count_per_period) =
                (count("capacity", Argument::Capacity)?, count("count_per_period", Argument::CountPerPeriod)?);
            let period_micros = micros("period_micros")?;
            capacity.and_then(|capacity| {
                count_per_period.map(|count_per_period| LimiterSpec::LeakyBucketMeter {
                    capacity,
                    count_per_period,
                    period_micros,
                })
            })
        }
        "leaky_bucket_queue" => {
            let interval_micros = micros("interval_micros")?;
            count("capacity", Argument::Capacity)?
                .map(|capacity| LimiterSpec::LeakyBucketQueue { capacity, interval_micros })
        }
        "fixed_window" => {
            let window_micros = micros("window_micros")?;
            count("limit", Argument::Limit)?.map(|limit| LimiterSpec::FixedWindow { limit, window_micros })
        }
        "sliding_window" => {
            let window_micros = micros("window_micros")?;
            let sub_windows = int_field(spec, "sub_windows")?;
            let sub_windows =
                u32::try_from(sub_windows).map_err(|_| Error::invalid_int(Argument::SubWindows, sub_windows));
            count("limit", Argument::Limit)?.and_then(|limit| {
                sub_windows.map(|sub_windows| LimiterSpec::SlidingWindow { limit, window_micros, sub_windows })
            })
        }
        "sliding_log" => {
            let window_micros = micros("window_micros")?;
            count("limit", Argument::Limit)?.map(|limit| LimiterSpec::SlidingLog { limit, window_micros })
        }
        "sliding_window_counter" => {
            let window_micros = micros("window_micros")?;
            count("limit", Argument::Limit)?.map(|limit| LimiterSpec::SlidingWindowCounter { limit, window_micros })
        }
        other => return Err(format!("{other:?} is not an admission-style algorithm")),
    })
}
