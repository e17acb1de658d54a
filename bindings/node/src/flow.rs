//! Sentinel's flow rule: `flowController` returns functions bound to one
//! [`ratekeeper::FlowController`], which `node/lib/flow.js` wraps in
//! `FlowController`.
//!
//! Results go through the scratch words, as the load-driven limiters' do:
//! `check` writes its decision record at word 0 and an admitted request's
//! permit after it (`layout::PERMIT`: its start, then its acquire count);
//! `stats` and `rule` write their fields from word 0, in the order
//! [`FLOW_STATS`] and [`RULE`] name them (exported to JavaScript with the
//! methods). The rule keeps Sentinel's units where its names carry them
//! (`warmUpPeriodSec`, `maxQueueingTimeMs`, `intervalMs`).

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::core::flow::{
    DEFAULT_COLD_FACTOR, DEFAULT_INTERVAL_MS, DEFAULT_MAX_QUEUEING_TIME_MS, DEFAULT_SAMPLE_COUNT,
    DEFAULT_WARM_UP_PERIOD_SEC,
};
use ratekeeper::{AnyClock, Argument, Clock, ControlBehavior, Error, FlowController, FlowGrade, FlowPermit, FlowRule};

use crate::args;
use crate::bound::{Args, Binder, Named, Returned, Scratch, Tagged};
use crate::clock;
use crate::error::{blame, guarded, Boxed, Failure, Given};
use crate::js::Js;
use crate::layout;
use crate::load::string_array;

/// Where `check` writes the permit: after the decision record.
const PERMIT_AT: usize = layout::PERMIT as usize;

/// The fields `FlowController.stats()` reads, in the order of their words.
const FLOW_STATS: &[&str] =
    &["passQps", "blockQps", "successQps", "previousPassQps", "occupiedPass", "waiting", "inFlight", "avgRtMs"];
/// The fields of `FlowController.rule`, in the order of their words (the
/// grade and the behaviour as indexes into [`GRADES`] and [`BEHAVIORS`]).
const RULE: &[&str] = &["count", "grade", "controlBehavior", "warmUpPeriodSec", "coldFactor", "maxQueueingTimeMs"];
/// The grades' names, by index.
const GRADES: &[&str] = &["qps", "thread"];
/// The control behaviours' names, by index.
const BEHAVIORS: &[&str] = &["default", "warmUp", "rateLimiter", "warmUpRateLimiter"];

/// Scratch words: a decision record and a permit, or the longest set of
/// fields.
const SCRATCH_WORDS: usize = {
    let permit = PERMIT_AT + 2;
    if permit > FLOW_STATS.len() {
        permit
    } else {
        FLOW_STATS.len()
    }
};

/// One JavaScript `FlowController`.
struct FlowTarget {
    flow: FlowController<AnyClock>,
    scratch: Scratch,
}

impl Tagged for FlowTarget {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x7f31_c2a9_0e4d_58b6, upper: 0x19c8_e6d0_4a7b_f253 };
}

/// The object `flowController` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct FlowControllerMethods {
    /// Decides a request of `acquireCount` (`undefined`: 1), `prioritized`
    /// or not (`undefined`: not): the decision to `scratch` as a decision
    /// record, an admitted one's permit (its start, its count) to the two
    /// words from `layout().permit`. With `sleepManual` true, an admitted
    /// request's wait advances a manual clock (a real one is not slept
    /// here: JavaScript waits on a timer).
    #[napi(ts_type = "(acquireCount: unknown, prioritized: unknown, sleepManual: boolean) => boolean")]
    pub check: (),
    /// The request that took the permit (`start`, `count`) ended.
    #[napi(ts_type = "(start: number, count: number) => void")]
    pub release: (),
    /// Counts `count` passes now without asking the rule.
    #[napi(ts_type = "(count: unknown) => void")]
    pub add_pass: (),
    /// Writes the statistics to `scratch`, in the order of `statsFields`.
    #[napi(ts_type = "() => void")]
    pub stats: (),
    /// The names of the statistics' words.
    #[napi(ts_type = "string[]")]
    pub stats_fields: (),
    /// Writes the rule to `scratch`, in the order of `ruleFields` (the
    /// grade and the behaviour as indexes into `grades` and `behaviors`).
    #[napi(ts_type = "() => void")]
    pub rule: (),
    /// The names of the rule's words.
    #[napi(ts_type = "string[]")]
    pub rule_fields: (),
    /// The grades' names, by index.
    #[napi(ts_type = "string[]")]
    pub grades: (),
    /// The control behaviours' names, by index.
    #[napi(ts_type = "string[]")]
    pub behaviors: (),
    /// Whether the controller runs on a `ManualClock`.
    #[napi(ts_type = "boolean")]
    pub manual_clock: (),
    /// See `check`.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

/// A permit's word from JavaScript: what `check` wrote.
fn word_of(value: Js) -> Result<i64, Failure> {
    match value.number() {
        Some(x) if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&x) => Ok(x as i64),
        _ => Err(Failure::Internal("a permit that check did not write".to_owned())),
    }
}

/// An acquire count (`undefined`: 1): Sentinel's `int`, 0 to 2³¹ − 1.
fn acquire_count(value: Js) -> Result<u32, Failure> {
    if value.is_undefined() {
        return Ok(1);
    }
    let n = args::count(value, Argument::AcquireCount, "acquireCount")?;
    let given = [Given { argument: Argument::AcquireCount, name: "acquireCount", value }];
    blame(u32::try_from(n).map_err(|_| Error::invalid_uint(Argument::AcquireCount, n)), &given)
}

fn check(f: &Arc<FlowTarget>, args: &Args) -> Result<Returned, Boxed> {
    let count = acquire_count(args.get(0))?;
    let prioritized = args.get(1);
    let prioritized = if prioritized.is_undefined() {
        false
    } else {
        prioritized.boolean().ok_or(Failure::WrongType {
            argument: "prioritized",
            value: prioritized,
            expected: "a boolean",
        })?
    };
    let sleep_manual = args.get(2).boolean().unwrap_or(false);
    let (decision, permit) = f.flow.check(count, prioritized).map_err(Failure::Library)?;
    f.scratch.write_decision(0, &decision);
    if let Some(permit) = permit {
        f.scratch.set_f64(PERMIT_AT, permit.start_micros as f64);
        f.scratch.set_f64(PERMIT_AT + 1, f64::from(permit.count));
        if sleep_manual && f.flow.clock().is_manual() {
            f.flow.clock().sleep_micros(decision.wait_micros); // advances the manual clock
        }
    }
    Ok(Returned::Bool(decision.allowed))
}

fn release(f: &Arc<FlowTarget>, args: &Args) -> Result<Returned, Boxed> {
    let start_micros = word_of(args.get(0))?;
    let count = u32::try_from(word_of(args.get(1))?).map_err(|_| Failure::Internal("a permit's count".to_owned()))?;
    f.flow.release(FlowPermit { start_micros, count });
    Ok(Returned::Undefined)
}

fn add_pass(f: &Arc<FlowTarget>, args: &Args) -> Result<Returned, Boxed> {
    f.flow.add_pass(args::count(args.get(0), Argument::Count, "count")?);
    Ok(Returned::Undefined)
}

fn stats(f: &Arc<FlowTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let s = f.flow.stats();
    let words = [
        s.pass_qps,
        s.block_qps,
        s.success_qps,
        s.previous_pass_qps,
        s.occupied_pass as f64,
        s.waiting as f64,
        s.in_flight as f64,
        s.avg_rt_millis,
    ];
    for (i, x) in words.into_iter().enumerate() {
        f.scratch.set_f64(i, x);
    }
    Ok(Returned::Undefined)
}

fn rule(f: &Arc<FlowTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let r = f.flow.rule();
    let (mut period, mut cold, mut queue) =
        (DEFAULT_WARM_UP_PERIOD_SEC, DEFAULT_COLD_FACTOR, DEFAULT_MAX_QUEUEING_TIME_MS);
    let behavior = match r.control_behavior {
        ControlBehavior::Default => 0,
        ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
            (period, cold) = (warm_up_period_sec, cold_factor);
            1
        }
        ControlBehavior::RateLimiter { max_queueing_time_ms } => {
            queue = max_queueing_time_ms;
            2
        }
        ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
            (period, cold, queue) = (warm_up_period_sec, cold_factor, max_queueing_time_ms);
            3
        }
    };
    let grade = match r.grade {
        FlowGrade::Qps => 0.0,
        FlowGrade::Thread => 1.0,
    };
    let words = [r.count, grade, f64::from(behavior), f64::from(period), f64::from(cold), f64::from(queue)];
    for (i, x) in words.into_iter().enumerate() {
        f.scratch.set_f64(i, x);
    }
    Ok(Returned::Undefined)
}

const FLOW_METHODS: &[Named<FlowTarget>] = &[
    (c"check", 3, check),
    (c"release", 2, release),
    (c"addPass", 1, add_pass),
    (c"stats", 0, stats),
    (c"rule", 0, rule),
];

/// One of `names` given as `name` (`undefined`: the first), by index.
fn one_of(value: Js, name: &'static str, names: &[&str], requirement: &'static str) -> Result<usize, Failure> {
    if value.is_undefined() {
        return Ok(0);
    }
    let text = value.string().ok_or(Failure::WrongType { argument: name, value, expected: "a string" })?;
    names.iter().position(|n| *n == text).ok_or(Failure::OutOfRange { argument: name, value, requirement })
}

/// An optional whole number of seconds, milliseconds or buckets, with its
/// default; the library checks its range and the error names `name`.
fn small(
    value: Js,
    argument: Argument,
    name: &'static str,
    default: u32,
    given: &mut Vec<Given>,
) -> Result<u32, Failure> {
    if value.is_undefined() {
        return Ok(default);
    }
    let n = args::count(value, argument, name)?;
    given.push(Given { argument, name, value });
    blame(u32::try_from(n).map_err(|_| Error::invalid_uint(argument, n)), given)
}

/// A rule from its six options (each but `count` optional), and the
/// options given, for [`blame`].
fn rule_of(fields: [Js; 6]) -> Result<(FlowRule, Vec<Given>), Failure> {
    let [count, grade, behavior, period, cold, queue] = fields;
    let mut given = vec![Given { argument: Argument::Count, name: "count", value: count }];
    let count = args::number(count, "count")?;
    let grade = one_of(grade, "grade", GRADES, "must be 'qps' or 'thread'")?;
    let behavior = one_of(
        behavior,
        "controlBehavior",
        BEHAVIORS,
        "must be 'default', 'warmUp', 'rateLimiter' or 'warmUpRateLimiter'",
    )?;
    let warm_up_period_sec =
        small(period, Argument::WarmUpPeriodSec, "warmUpPeriodSec", DEFAULT_WARM_UP_PERIOD_SEC, &mut given)?;
    let cold_factor = small(cold, Argument::FlowColdFactor, "coldFactor", DEFAULT_COLD_FACTOR, &mut given)?;
    let max_queueing_time_ms =
        small(queue, Argument::MaxQueueingTimeMs, "maxQueueingTimeMs", DEFAULT_MAX_QUEUEING_TIME_MS, &mut given)?;
    let control_behavior = match behavior {
        1 => ControlBehavior::WarmUp { warm_up_period_sec, cold_factor },
        2 => ControlBehavior::RateLimiter { max_queueing_time_ms },
        3 => ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms },
        _ => ControlBehavior::Default,
    };
    let grade = if grade == 1 { FlowGrade::Thread } else { FlowGrade::Qps };
    Ok((FlowRule { grade, count, control_behavior }, given))
}

/// Replaces the rule of `flow` (a `flowController` object) with one made of
/// the options given, as `flowController` makes one; the statistics stay.
/// (A function of its own rather than a bound method: a bound method reads
/// at most five arguments.)
#[napi(
    ts_args_type = "flow: FlowControllerMethods, count: unknown, grade: unknown, controlBehavior: unknown, warmUpPeriodSec: unknown, coldFactor: unknown, maxQueueingTimeMs: unknown"
)]
#[allow(clippy::too_many_arguments)]
pub fn flow_controller_set_rule(
    env: &Env,
    flow: Unknown<'_>,
    count: Unknown<'_>,
    grade: Unknown<'_>,
    control_behavior: Unknown<'_>,
    warm_up_period_sec: Unknown<'_>,
    cold_factor: Unknown<'_>,
    max_queueing_time_ms: Unknown<'_>,
) -> napi::Result<()> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let value = js(flow);
        let target = crate::bound::target_of::<FlowTarget>(value).ok_or(Failure::WrongType {
            argument: "flow",
            value,
            expected: "a FlowController",
        })?;
        let fields = [count, grade, control_behavior, warm_up_period_sec, cold_factor, max_queueing_time_ms].map(js);
        let (rule, given) = rule_of(fields)?;
        blame(target.flow.set_rule(rule), &given)
    })
}

/// Creates a controller of Sentinel's flow rule over `sampleCount` buckets
/// of `intervalMs` (`undefined`: Sentinel's 2 and 1000).
#[napi(
    ts_args_type = "count: unknown, grade: unknown, controlBehavior: unknown, warmUpPeriodSec: unknown, coldFactor: unknown, maxQueueingTimeMs: unknown, sampleCount: unknown, intervalMs: unknown, clock: unknown",
    ts_return_type = "FlowControllerMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn flow_controller<'env>(
    env: &'env Env,
    count: Unknown<'_>,
    grade: Unknown<'_>,
    control_behavior: Unknown<'_>,
    warm_up_period_sec: Unknown<'_>,
    cold_factor: Unknown<'_>,
    max_queueing_time_ms: Unknown<'_>,
    sample_count: Unknown<'_>,
    interval_ms: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let fields = [count, grade, control_behavior, warm_up_period_sec, cold_factor, max_queueing_time_ms].map(js);
        let (rule, mut given) = rule_of(fields)?;
        let samples = small(js(sample_count), Argument::SampleCount, "sampleCount", DEFAULT_SAMPLE_COUNT, &mut given)?;
        let interval = small(js(interval_ms), Argument::IntervalMs, "intervalMs", DEFAULT_INTERVAL_MS, &mut given)?;
        let clock = clock::from_option(js(clock))?;
        let manual = clock.is_manual();
        let flow = blame(FlowController::with_clock(rule, samples, interval, clock), &given)?;
        let target = Arc::new(FlowTarget { flow, scratch: Scratch::new(SCRATCH_WORDS) });
        let object = Binder::new(env.raw(), target)?
            .methods(FLOW_METHODS)?
            .value(c"statsFields", string_array(env, FLOW_STATS)?)?
            .value(c"ruleFields", string_array(env, RULE)?)?
            .value(c"grades", string_array(env, GRADES)?)?
            .value(c"behaviors", string_array(env, BEHAVIORS)?)?
            .flag(c"manualClock", manual)?
            .scratch(c"scratch", |f| &f.scratch)?
            .tagged()?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}
