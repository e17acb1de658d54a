//! The admission-style algorithms without extras — `gcra`,
//! `leaky_bucket_meter`, `leaky_bucket_queue`, `fixed_window`,
//! `sliding_window`, `sliding_log`, `sliding_window_counter` — replayed
//! through [`ratekeeper::AnyLimiter`], built from a [`LimiterSpec`] exactly
//! as a binding builds one from its caller's numbers; the windows' run-time
//! `set_limit` through [`AnyLimiter::set_window_limit`].

use std::sync::Arc;

use ratekeeper::{
    Algorithm, AnyLimiter, Argument, Decision, Error, LimiterSpec, ManualClock, Parameter, ParameterSource,
};
use serde_json::Value;

use crate::{
    count_field, double_field, duration_field, expect_decision, expect_outcome, int_field, run_steps, str_field,
};

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
        "set_limit" => {
            let limit = count_field(step, "limit", Argument::Limit)?;
            let changed = match limit {
                Ok(l) => limiter.set_window_limit(l).ok_or_else(|| format!("set_limit on {}", limiter.algorithm()))?,
                Err(e) => Err(e),
            };
            expect_outcome(step, changed, |()| Ok(()))
        }
        "policy_header" => policy_header(step, limiter.peek(0)),
        other => Err(format!("unknown op {other:?}")),
    })
}

/// A `policy_header` step: the `RateLimit-Policy` field of `decision`
/// under the step's `policy_name`.
pub(crate) fn policy_header(step: &Value, decision: Decision) -> Result<(), String> {
    let name = str_field(step, "policy_name")?;
    expect_outcome(step, ratekeeper::headers::ratelimit_policy(&[(name, decision)]), |_| Ok(()))
}

/// Why a `limiter` object gives no [`LimiterSpec`]: the vector is
/// malformed, or the library refuses a value (as it refuses a binding's).
enum Refused {
    Malformed(String),
    Library(Error),
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::Malformed(e)
    }
}

impl From<Error> for Refused {
    fn from(e: Error) -> Self {
        Refused::Library(e)
    }
}

/// A vector's `limiter` object as a [`LimiterSpec`]: `Err` when the vector
/// is malformed, `Ok(Err)` when a number is out of the library's range
/// (negative counts, as a binding's conversion reports them, with the
/// variant of the algorithm's own bound; durations as a binding converts
/// them, [`duration_field`]). Fields are read in the order the bindings
/// read their arguments.
pub fn limiter_spec(spec: &Value) -> Result<Result<LimiterSpec, Error>, String> {
    match read_spec(spec) {
        Ok(spec) => Ok(Ok(spec)),
        Err(Refused::Library(e)) => Ok(Err(e)),
        Err(Refused::Malformed(e)) => Err(e),
    }
}

fn read_spec(spec: &Value) -> Result<LimiterSpec, Refused> {
    let name = str_field(spec, "algorithm")?;
    let algorithm = Algorithm::from_wire_name(name)
        .ok_or_else(|| Refused::Malformed(format!("{name:?} is not an admission-style algorithm")))?;
    LimiterSpec::read(algorithm, &mut Fields(spec))
}

/// A `limiter` object's fields as its algorithm's parameters, under their
/// wire names (`window_micros`, or `window_seconds` as a binding converts
/// seconds).
struct Fields<'a>(&'a Value);

impl ParameterSource for Fields<'_> {
    type Error = Refused;

    fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, Refused> {
        Ok(double_field(self.0, parameter.wire_name())?)
    }

    /// A count left out is the registry's default, if it has one.
    fn count(&mut self, parameter: &'static Parameter) -> Result<u64, Refused> {
        match parameter.default() {
            Some(default) if self.0.get(parameter.wire_name()).is_none() => Ok(default),
            _ => Ok(count_field(self.0, parameter.wire_name(), parameter.argument())??),
        }
    }

    fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, Refused> {
        Ok(duration_field(self.0, parameter.name(), parameter.argument())??)
    }

    fn out_of_range(&mut self, _: &'static Parameter, error: Error) -> Refused {
        Refused::Library(error)
    }
}
