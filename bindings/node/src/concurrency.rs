//! `ConcurrencyLimiter` (Netflix concurrency-limits' rules: a fixed limit,
//! the gradient rule or AIMD): `concurrencyFixed`, `concurrencyGradient`
//! and `concurrencyAimd` return functions bound to one
//! [`ratekeeper::ConcurrencyLimiter`], which `node/lib/concurrency.js`
//! wraps with permits that release themselves.
//!
//! A permit is plain data ([`Permit`]): `tryAcquire` writes it to the
//! scratch words, as four doubles that hold its two integers exactly (high
//! and low 32 bits each), and `release` takes them back. The JavaScript
//! `Permit` makes sure that happens once.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{
    unsigned_from_i64, AimdConfig, AnyClock, Argument, ConcurrencyLimiter, GradientConfig, Outcome, Permit,
};

use crate::args;
use crate::bound::{Args, Binder, Named, Returned, Scratch};
use crate::clock;
use crate::error::{blame, guarded, Boxed, Failure, Given};
use crate::js::Js;
use crate::layout;

/// One JavaScript concurrency limiter.
struct Concurrency {
    limiter: ConcurrencyLimiter<AnyClock>,
    scratch: Scratch,
}

/// Where `tryAcquire` writes the permit: after the decision record
/// (`layout::PERMIT`).
const PERMIT_AT: usize = layout::PERMIT as usize;

/// The object the `concurrency…` functions return.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ConcurrencyMethods {
    /// Takes a permit if fewer than the limit are out: the decision to
    /// `scratch` as a decision record, an admitted one's permit to the four
    /// words from `layout().permit`.
    #[napi(ts_type = "() => boolean")]
    pub try_acquire: (),
    /// Gives a permit back with its outcome; returns the new limit.
    #[napi(
        ts_type = "(outcome: unknown, startHigh: number, startLow: number, inFlightHigh: number, inFlightLow: number) => number"
    )]
    pub release: (),
    /// Feeds the policy a sample measured elsewhere; returns the new limit.
    #[napi(ts_type = "(rttMs: unknown, rttMicros: unknown, inFlight: unknown, dropped: unknown) => number")]
    pub sample: (),
    /// The current limit.
    #[napi(ts_type = "() => number")]
    pub limit: (),
    /// Requests in flight.
    #[napi(ts_type = "() => number")]
    pub in_flight: (),
    /// See `tryAcquire`.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

/// The high and low 32 bits of `x`, each exact in a double.
fn split(x: u64) -> (f64, f64) {
    (f64::from((x >> 32) as u32), f64::from(x as u32))
}

/// The inverse of [`split`]; `None` unless both are 32-bit unsigned integers.
fn join(high: f64, low: f64) -> Option<u64> {
    let word = |x: f64| (x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x)).then_some(x as u64);
    Some((word(high)? << 32) | word(low)?)
}

fn try_acquire(c: &Arc<Concurrency>, _args: &Args) -> Result<Returned, Boxed> {
    let (decision, permit) = c.limiter.try_acquire();
    c.scratch.write_decision(0, &decision);
    if let Some(permit) = permit {
        let (a, b) = split(permit.start_micros as u64);
        let (d, e) = split(permit.in_flight);
        for (i, x) in [a, b, d, e].into_iter().enumerate() {
            c.scratch.set_f64(PERMIT_AT + i, x);
        }
    }
    Ok(Returned::Bool(decision.allowed))
}

fn outcome(value: Js) -> Result<Outcome, Failure> {
    let Some(name) = value.string() else {
        return Err(Failure::WrongType { argument: "outcome", value, expected: "a string" });
    };
    Outcome::from_name(&name).ok_or(Failure::OutOfRange {
        argument: "outcome",
        value,
        requirement: "must be \"success\", \"dropped\" or \"ignored\"",
    })
}

fn release(c: &Arc<Concurrency>, args: &Args) -> Result<Returned, Boxed> {
    let outcome = outcome(args.get(0))?;
    let word = |i: usize| args::number(args.get(i), "permit");
    let (start, in_flight) = (join(word(1)?, word(2)?), join(word(3)?, word(4)?));
    let (Some(start), Some(in_flight)) = (start, in_flight) else {
        return Err(Failure::Internal("a permit that tryAcquire did not write".to_owned()).into());
    };
    let permit = Permit { start_micros: start as i64, in_flight };
    Ok(Returned::Number(c.limiter.release(permit, outcome) as f64))
}

fn sample(c: &Arc<Concurrency>, args: &Args) -> Result<Returned, Boxed> {
    let (micros, rtt) = args::required_duration(args.get(0), args.get(1), ("rttMs", "rttMicros"), Argument::Rtt)?;
    let rtt_micros = blame(unsigned_from_i64(Argument::Rtt, micros), &[rtt])?;
    let in_flight = args::count(args.get(2), Argument::InFlight, "inFlight")?;
    let value = args.get(3);
    let dropped = match value.boolean() {
        Some(b) => b,
        None if value.is_undefined() => false,
        None => return Err(Failure::WrongType { argument: "dropped", value, expected: "a boolean" }.into()),
    };
    let limit = blame(c.limiter.sample(Duration::from_micros(rtt_micros), in_flight, dropped), &[rtt])?;
    Ok(Returned::Number(limit as f64))
}

const METHODS: &[Named<Concurrency>] = &[
    (c"tryAcquire", 0, try_acquire),
    (c"release", 5, release),
    (c"sample", 4, sample),
    (c"limit", 0, |c, _| Ok(Returned::Number(c.limiter.limit() as f64))),
    (c"inFlight", 0, |c, _| Ok(Returned::Number(c.limiter.in_flight() as f64))),
];

fn bind(env: &Env, limiter: ConcurrencyLimiter<AnyClock>) -> Result<Unknown<'_>, Failure> {
    let target = Arc::new(Concurrency { limiter, scratch: Scratch::new(PERMIT_AT + 4) });
    let object = Binder::new(env.raw(), target)?.methods(METHODS)?.scratch(c"scratch", |c| &c.scratch)?.finish();
    // SAFETY: a value just created in this call's environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
}

/// Reads optional options into a config, each absent one keeping its
/// default, and remembers them for [`blame`].
struct Options {
    given: Vec<Given>,
}

impl Options {
    fn count(&mut self, value: Js, argument: Argument, name: &'static str, default: u64) -> Result<u64, Failure> {
        if value.is_undefined() {
            return Ok(default);
        }
        self.given.push(Given { argument, name, value });
        args::count(value, argument, name)
    }

    fn number(&mut self, value: Js, argument: Argument, name: &'static str, default: f64) -> Result<f64, Failure> {
        if value.is_undefined() {
            return Ok(default);
        }
        self.given.push(Given { argument, name, value });
        args::number(value, name)
    }
}

/// Creates a concurrency limiter of a fixed `limit`.
#[napi(ts_args_type = "limit: unknown, clock: unknown", ts_return_type = "ConcurrencyMethods")]
pub fn concurrency_fixed<'env>(env: &'env Env, limit: Unknown<'_>, clock: Unknown<'_>) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let value = js(limit);
        let limit = args::count(value, Argument::Limit, "limit")?;
        let policy = blame(
            ratekeeper::ConcurrencyPolicy::fixed(limit),
            &[Given { argument: Argument::Limit, name: "limit", value }],
        )?;
        bind(env, ConcurrencyLimiter::with_clock(policy, clock::from_option(js(clock))?))
    })
}

/// Creates a concurrency limiter driven by the gradient rule; absent
/// options (`undefined`) take Netflix's defaults.
#[napi(
    ts_args_type = "initialLimit: unknown, minLimit: unknown, maxLimit: unknown, smoothing: unknown, rttTolerance: unknown, queueSize: unknown, backoffRatio: unknown, probeInterval: unknown, clock: unknown",
    ts_return_type = "ConcurrencyMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn concurrency_gradient<'env>(
    env: &'env Env,
    initial_limit: Unknown<'_>,
    min_limit: Unknown<'_>,
    max_limit: Unknown<'_>,
    smoothing: Unknown<'_>,
    rtt_tolerance: Unknown<'_>,
    queue_size: Unknown<'_>,
    backoff_ratio: Unknown<'_>,
    probe_interval: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let d = GradientConfig::default();
        let mut o = Options { given: Vec::new() };
        let config = GradientConfig {
            initial_limit: o.count(js(initial_limit), Argument::InitialLimit, "initialLimit", d.initial_limit)?,
            min_limit: o.count(js(min_limit), Argument::MinLimit, "minLimit", d.min_limit)?,
            max_limit: o.count(js(max_limit), Argument::MaxLimit, "maxLimit", d.max_limit)?,
            smoothing: o.number(js(smoothing), Argument::Smoothing, "smoothing", d.smoothing)?,
            rtt_tolerance: o.number(js(rtt_tolerance), Argument::RttTolerance, "rttTolerance", d.rtt_tolerance)?,
            queue_size: o.count(js(queue_size), Argument::QueueSize, "queueSize", d.queue_size)?,
            backoff_ratio: o.number(
                js(backoff_ratio),
                Argument::GradientBackoffRatio,
                "backoffRatio",
                d.backoff_ratio,
            )?,
            probe_interval: o.count(js(probe_interval), Argument::ProbeInterval, "probeInterval", d.probe_interval)?,
        };
        let clock = clock::from_option(js(clock))?;
        bind(env, blame(ConcurrencyLimiter::gradient_with_clock(config, clock), &o.given)?)
    })
}

/// Creates a concurrency limiter driven by AIMD; absent options
/// (`undefined`) take Netflix's defaults.
#[napi(
    ts_args_type = "initialLimit: unknown, minLimit: unknown, maxLimit: unknown, backoffRatio: unknown, rttTimeoutMs: unknown, rttTimeoutMicros: unknown, clock: unknown",
    ts_return_type = "ConcurrencyMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn concurrency_aimd<'env>(
    env: &'env Env,
    initial_limit: Unknown<'_>,
    min_limit: Unknown<'_>,
    max_limit: Unknown<'_>,
    backoff_ratio: Unknown<'_>,
    rtt_timeout_ms: Unknown<'_>,
    rtt_timeout_micros: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let d = AimdConfig::default();
        let mut o = Options { given: Vec::new() };
        let initial_limit = o.count(js(initial_limit), Argument::InitialLimit, "initialLimit", d.initial_limit)?;
        let min_limit = o.count(js(min_limit), Argument::MinLimit, "minLimit", d.min_limit)?;
        let max_limit = o.count(js(max_limit), Argument::MaxLimit, "maxLimit", d.max_limit)?;
        let backoff_ratio = o.number(js(backoff_ratio), Argument::BackoffRatio, "backoffRatio", d.backoff_ratio)?;
        let (ms, micros) = (js(rtt_timeout_ms), js(rtt_timeout_micros));
        let rtt_timeout_micros = if ms.is_undefined() && micros.is_undefined() {
            d.rtt_timeout_micros
        } else {
            let names = ("rttTimeoutMs", "rttTimeoutMicros");
            let (timeout, given) = args::required_duration(ms, micros, names, Argument::RttTimeout)?;
            o.given.push(given);
            timeout
        };
        let config = AimdConfig { initial_limit, min_limit, max_limit, backoff_ratio, rtt_timeout_micros };
        let clock = clock::from_option(js(clock))?;
        bind(env, blame(ConcurrencyLimiter::aimd_with_clock(config, clock), &o.given)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_cross_as_exact_doubles() {
        for x in [0, 1, u64::from(u32::MAX), 1 << 32, (1 << 53) + 1, i64::MAX as u64, u64::MAX, (-5_i64) as u64] {
            let (high, low) = split(x);
            assert_eq!(join(high, low), Some(x));
        }
        assert_eq!(join(-1.0, 0.0), None);
        assert_eq!(join(0.5, 0.0), None);
        assert_eq!(join(0.0, 4_294_967_296.0), None);
        assert_eq!(join(f64::NAN, 0.0), None);
    }
}
