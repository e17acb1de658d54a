//! Resilience4j's `AtomicRateLimiter` ([`ratekeeper::CycleLimiter`]) for
//! JavaScript: `cycleLimiter` returns an object of functions bound to one
//! limiter, which the `CycleLimiter` class of `node/lib/cycle.js` wraps.
//!
//! Nothing here decides anything. Waiting is the JavaScript side's (a
//! timer, never a blocked thread); on a `ManualClock` the call that hands
//! out a wait (`acquire`) advances the clock by it instead, as the std
//! layer's blocking call does. The waiting callers are counted in
//! JavaScript, where the waits are.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, Argument, Clock, CycleConfig, CycleLimiter, Decision};

use crate::args;
use crate::bound::{millis, Args, Binder, Named, Returned, Scratch, DECISION_WORDS};
use crate::clock;
use crate::error::{blame, guarded, requirement, Boxed, Failure, Given};
use crate::js::Js;

/// Words after the decision record: the wait of `acquire`, or what
/// `metrics` and `config` write.
const AFTER: usize = DECISION_WORDS;
const SCRATCH_WORDS: usize = AFTER + 3;

/// One JavaScript `CycleLimiter`.
struct CycleTarget {
    limiter: CycleLimiter<AnyClock>,
    scratch: Scratch,
}

/// The object `cycleLimiter` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct CycleMethods {
    /// `acquirePermission` without the wait: the decision to `scratch` as a
    /// decision record, and after it the milliseconds to wait — the
    /// reservation's when admitted, the timeout when refused, as
    /// Resilience4j waits; on a `ManualClock` the clock has advanced by them
    /// and the word is 0. Returns whether the permits were taken.
    #[napi(ts_type = "(permits: unknown) => boolean")]
    pub acquire: (),
    /// The decision for `permits` with the configured timeout, to
    /// `scratch`; never waits. Returns `allowed`.
    #[napi(ts_type = "(permits: unknown) => boolean")]
    pub check: (),
    /// The same with no wait allowed: only what the current cycle has.
    #[napi(ts_type = "(permits: unknown) => boolean")]
    pub check_now: (),
    /// Takes the permits if the current cycle has them.
    #[napi(ts_type = "(permits: unknown) => boolean")]
    pub try_acquire: (),
    /// `reservePermission`: the milliseconds to wait before acting on the
    /// permits now taken, or `undefined` when refused (nothing taken).
    #[napi(ts_type = "(permits: unknown) => number | undefined")]
    pub reserve: (),
    /// `changeLimitForPeriod`.
    #[napi(ts_type = "(limitForPeriod: unknown) => void")]
    pub change_limit_for_period: (),
    /// `changeTimeoutDuration`, given in milliseconds or microseconds.
    #[napi(ts_type = "(timeoutDurationMs: unknown, timeoutDurationMicros: unknown) => void")]
    pub change_timeout_duration: (),
    /// `drainPermissions`: how many permits it took.
    #[napi(ts_type = "() => number")]
    pub drain: (),
    /// Writes the available permits, the wait of one permit (ms) and the
    /// cycle to the three words after the decision record.
    #[napi(ts_type = "() => void")]
    pub metrics: (),
    /// Writes `limitForPeriod`, the period (ms) and the timeout (ms) to the
    /// three words after the decision record.
    #[napi(ts_type = "() => void")]
    pub config: (),
    /// Whether the limiter runs on a `ManualClock` (whose waits need no timer).
    #[napi(ts_type = "boolean")]
    pub manual_clock: (),
    /// See `acquire`.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

/// A duration given as `names` (ms, µs), by the library's rule: a bigint
/// of microseconds beyond `i64` fails the argument's own requirement (its
/// bound in microseconds), as in the other languages, rather than the
/// generic range of an integer.
fn duration(
    ms: Js,
    micros: Js,
    names: (&'static str, &'static str),
    argument: Argument,
) -> Result<(i64, Given), Failure> {
    if let Some(Err(())) = micros.bigint_i64() {
        return Err(Failure::OutOfRange { argument: names.1, value: micros, requirement: requirement(argument) });
    }
    args::required_duration(ms, micros, names, argument)
}

/// Argument `i` as a permit count: 1 when absent, else an integer from 0
/// (asks without taking).
fn permits(args: &Args) -> Result<u64, Failure> {
    match args.passed(0) {
        None => Ok(1),
        Some(value) if value.is_undefined() => Ok(1),
        Some(value) => args::count(value, Argument::Cost, "permits"),
    }
}

fn decided(c: &CycleTarget, decision: &Decision) -> Returned {
    c.scratch.write_decision(0, decision);
    Returned::Bool(decision.allowed)
}

fn acquire(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    let permits = permits(args)?;
    let timeout = c.limiter.config().timeout_micros;
    let decision = c.limiter.check(permits);
    let mut wait = if decision.allowed { decision.wait_micros } else { timeout };
    if wait > 0 && c.limiter.clock().is_manual() {
        c.limiter.clock().sleep_micros(wait); // advances a manual clock
        wait = 0;
    }
    c.scratch.set_f64(AFTER, millis(wait));
    Ok(decided(c, &decision))
}

fn check(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    Ok(decided(c, &c.limiter.check(permits(args)?)))
}

fn check_now(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    Ok(decided(c, &c.limiter.check_now(permits(args)?)))
}

fn try_acquire(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    Ok(Returned::Bool(c.limiter.try_acquire_permission(permits(args)?)))
}

fn reserve(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    let reserved = c.limiter.reserve_permission(permits(args)?);
    Ok(reserved.map_or(Returned::Undefined, |wait| Returned::Number(millis(wait.as_micros() as i64))))
}

fn change_limit_for_period(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    let value = args.get(0);
    let limit = args::count(value, Argument::LimitForPeriod, "limitForPeriod")?;
    let given = Given { argument: Argument::LimitForPeriod, name: "limitForPeriod", value };
    blame(c.limiter.change_limit_for_period(limit), &[given])?;
    Ok(Returned::Undefined)
}

fn change_timeout_duration(c: &Arc<CycleTarget>, args: &Args) -> Result<Returned, Boxed> {
    let names = ("timeoutDurationMs", "timeoutDurationMicros");
    let (micros, given) = duration(args.get(0), args.get(1), names, Argument::TimeoutDuration)?;
    // A negative count of microseconds is the library's error, named as given.
    let set = if micros < 0 {
        Err(ratekeeper::Error::invalid_int(Argument::TimeoutDuration, micros))
    } else {
        c.limiter.change_timeout_duration(Duration::from_micros(micros as u64))
    };
    blame(set, &[given])?;
    Ok(Returned::Undefined)
}

fn drain(c: &Arc<CycleTarget>, _args: &Args) -> Result<Returned, Boxed> {
    Ok(Returned::Number(c.limiter.drain_permissions() as f64))
}

fn metrics(c: &Arc<CycleTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let m = c.limiter.metrics();
    let wait = i64::try_from(m.time_to_wait.as_micros()).unwrap_or(i64::MAX);
    c.scratch.set_f64(AFTER, m.available_permissions as f64);
    c.scratch.set_f64(AFTER + 1, millis(wait));
    c.scratch.set_f64(AFTER + 2, m.cycle as f64);
    Ok(Returned::Undefined)
}

fn config(c: &Arc<CycleTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let config = c.limiter.config();
    c.scratch.set_f64(AFTER, config.limit_for_period as f64);
    c.scratch.set_f64(AFTER + 1, millis(config.limit_refresh_period_micros));
    c.scratch.set_f64(AFTER + 2, millis(config.timeout_micros));
    Ok(Returned::Undefined)
}

const METHODS: &[Named<CycleTarget>] = &[
    (c"acquire", 1, acquire),
    (c"check", 1, check),
    (c"checkNow", 1, check_now),
    (c"tryAcquire", 1, try_acquire),
    (c"reserve", 1, reserve),
    (c"changeLimitForPeriod", 1, change_limit_for_period),
    (c"changeTimeoutDuration", 2, change_timeout_duration),
    (c"drain", 0, drain),
    (c"metrics", 0, metrics),
    (c"config", 0, config),
];

/// Creates Resilience4j's limiter and returns its bound functions; each
/// duration arrives as its two options (`undefined` when absent), one of
/// which must be given.
#[napi(
    ts_args_type = "limitForPeriod: unknown, limitRefreshPeriodMs: unknown, limitRefreshPeriodMicros: unknown, timeoutDurationMs: unknown, timeoutDurationMicros: unknown, clock: unknown",
    ts_return_type = "CycleMethods"
)]
pub fn cycle_limiter<'env>(
    env: &'env Env,
    limit_for_period: Unknown<'_>,
    limit_refresh_period_ms: Unknown<'_>,
    limit_refresh_period_micros: Unknown<'_>,
    timeout_duration_ms: Unknown<'_>,
    timeout_duration_micros: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let limit = js(limit_for_period);
        let limit_given = Given { argument: Argument::LimitForPeriod, name: "limitForPeriod", value: limit };
        let limit_for_period = args::count(limit, Argument::LimitForPeriod, "limitForPeriod")?;
        let (period, period_given) = duration(
            js(limit_refresh_period_ms),
            js(limit_refresh_period_micros),
            ("limitRefreshPeriodMs", "limitRefreshPeriodMicros"),
            Argument::LimitRefreshPeriod,
        )?;
        let (timeout, timeout_given) = duration(
            js(timeout_duration_ms),
            js(timeout_duration_micros),
            ("timeoutDurationMs", "timeoutDurationMicros"),
            Argument::TimeoutDuration,
        )?;
        let config = CycleConfig { limit_for_period, limit_refresh_period_micros: period, timeout_micros: timeout };
        let given = [limit_given, period_given, timeout_given];
        blame(config.validate(), &given)?;
        // The clock is read last: the limiter starts at the clock's "now".
        let clock = clock::from_option(js(clock))?;
        let limiter = blame(CycleLimiter::with_clock(config, clock), &given)?;
        let manual = limiter.clock().is_manual();
        let target = Arc::new(CycleTarget { limiter, scratch: Scratch::new(SCRATCH_WORDS) });
        let object = Binder::new(env.raw(), target)?
            .methods(METHODS)?
            .flag(c"manualClock", manual)?
            .scratch(c"scratch", |c| &c.scratch)?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}
