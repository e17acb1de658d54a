//! Sentinel's flow rule: [`rk_flow_controller`], through the std layer's
//! `FlowController<AnyClock>`, with its rule ([`rk_flow_rule`]), permits
//! ([`rk_flow_permit`]) and statistics ([`rk_flow_stats`]).
//!
//! The rule keeps Sentinel's units where its names carry them
//! (`warm_up_period_sec`, `max_queueing_time_ms`, and the controller's
//! `interval_ms`). A permit is plain data, as the core's: the caller keeps
//! it and hands it back to `rk_flow_controller_release()` exactly once when
//! the request ends, so nothing is allocated per request.

use std::sync::Arc;

use ratekeeper::core::flow::{DEFAULT_COLD_FACTOR, DEFAULT_MAX_QUEUEING_TIME_MS, DEFAULT_WARM_UP_PERIOD_SEC};
use ratekeeper::{
    AnyClock, Argument, ControlBehavior, Error, FlowController, FlowGrade, FlowPermit, FlowRule, FlowStats,
};

use crate::boundary::{free_arc, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

/// What a flow rule counts: one of the `RK_FLOW_GRADE_*` constants.
pub type rk_flow_grade = u32;

/// Requests admitted per second (Sentinel's `FLOW_GRADE_QPS`).
pub const RK_FLOW_GRADE_QPS: rk_flow_grade = 0;
/// Requests in flight (Sentinel's `FLOW_GRADE_THREAD`).
pub const RK_FLOW_GRADE_THREAD: rk_flow_grade = 1;

/// How a QPS rule shapes traffic: one of the `RK_CONTROL_BEHAVIOR_*`
/// constants (Sentinel's `controlBehavior`).
pub type rk_control_behavior = u32;

/// Refuse at once; a prioritized request may occupy a later window.
pub const RK_CONTROL_BEHAVIOR_DEFAULT: rk_control_behavior = 0;
/// Warm up over `warm_up_period_sec`, starting `cold_factor` times slower.
pub const RK_CONTROL_BEHAVIOR_WARM_UP: rk_control_behavior = 1;
/// Uniform queueing, waiting at most `max_queueing_time_ms`.
pub const RK_CONTROL_BEHAVIOR_RATE_LIMITER: rk_control_behavior = 2;
/// Warm up, queueing.
pub const RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER: rk_control_behavior = 3;

/// A flow rule: Sentinel's `FlowRule` for one resource. Start from
/// `rk_flow_rule_default()` (Sentinel's defaults) and set `count`. The
/// fields a behaviour does not use are not checked.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_flow_rule {
    /// `RK_FLOW_GRADE_QPS` or `RK_FLOW_GRADE_THREAD`.
    pub grade: rk_flow_grade,
    /// The threshold: per second, or in flight; finite, not negative.
    pub count: f64,
    /// One of `RK_CONTROL_BEHAVIOR_*` (ignored by the thread grade).
    pub control_behavior: rk_control_behavior,
    /// Seconds to warm up: 1 to 2^31 − 1 (default 10).
    pub warm_up_period_sec: i64,
    /// How much slower a cold service starts: 2 to 2^31 − 1 (default 3).
    pub cold_factor: i64,
    /// The longest wait for a turn, in milliseconds: 1 to 2^31 − 1
    /// (default 500).
    pub max_queueing_time_ms: i64,
}

/// `value` as the `u32` field `argument`; the core checks the range it
/// needs.
fn field(argument: Argument, value: i64) -> Result<u32, Failure> {
    u32::try_from(value).map_err(|_| Failure::from(Error::invalid_int(argument, value)))
}

impl rk_flow_rule {
    fn to_rule(self) -> Result<FlowRule, Failure> {
        let grade = match self.grade {
            RK_FLOW_GRADE_QPS => FlowGrade::Qps,
            RK_FLOW_GRADE_THREAD => FlowGrade::Thread,
            _ => {
                return Err(Failure::Malformed {
                    argument: "grade",
                    problem: format!("must be RK_FLOW_GRADE_QPS or RK_FLOW_GRADE_THREAD, not {}", self.grade),
                })
            }
        };
        let period = || field(Argument::WarmUpPeriodSec, self.warm_up_period_sec);
        let cold = || field(Argument::FlowColdFactor, self.cold_factor);
        let queue = || field(Argument::MaxQueueingTimeMs, self.max_queueing_time_ms);
        // The thread grade ignores the behaviour, as Sentinel does.
        let behavior = match (grade, self.control_behavior) {
            (FlowGrade::Thread, _) | (_, RK_CONTROL_BEHAVIOR_DEFAULT) => ControlBehavior::Default,
            (_, RK_CONTROL_BEHAVIOR_WARM_UP) => {
                ControlBehavior::WarmUp { warm_up_period_sec: period()?, cold_factor: cold()? }
            }
            (_, RK_CONTROL_BEHAVIOR_RATE_LIMITER) => ControlBehavior::RateLimiter { max_queueing_time_ms: queue()? },
            (_, RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER) => ControlBehavior::WarmUpRateLimiter {
                warm_up_period_sec: period()?,
                cold_factor: cold()?,
                max_queueing_time_ms: queue()?,
            },
            (_, other) => {
                return Err(Failure::Malformed {
                    argument: "control_behavior",
                    problem: format!("must be one of the RK_CONTROL_BEHAVIOR_* constants, not {other}"),
                })
            }
        };
        let rule = FlowRule { grade, count: self.count, control_behavior: behavior };
        rule.validate()?;
        Ok(rule)
    }

    fn from_rule(rule: &FlowRule) -> Self {
        let mut c = rk_flow_rule {
            grade: match rule.grade {
                FlowGrade::Qps => RK_FLOW_GRADE_QPS,
                FlowGrade::Thread => RK_FLOW_GRADE_THREAD,
            },
            count: rule.count,
            control_behavior: RK_CONTROL_BEHAVIOR_DEFAULT,
            warm_up_period_sec: i64::from(DEFAULT_WARM_UP_PERIOD_SEC),
            cold_factor: i64::from(DEFAULT_COLD_FACTOR),
            max_queueing_time_ms: i64::from(DEFAULT_MAX_QUEUEING_TIME_MS),
        };
        match rule.control_behavior {
            ControlBehavior::Default => {}
            ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
                c.control_behavior = RK_CONTROL_BEHAVIOR_WARM_UP;
                (c.warm_up_period_sec, c.cold_factor) = (warm_up_period_sec.into(), cold_factor.into());
            }
            ControlBehavior::RateLimiter { max_queueing_time_ms } => {
                c.control_behavior = RK_CONTROL_BEHAVIOR_RATE_LIMITER;
                c.max_queueing_time_ms = max_queueing_time_ms.into();
            }
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
                c.control_behavior = RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER;
                (c.warm_up_period_sec, c.cold_factor, c.max_queueing_time_ms) =
                    (warm_up_period_sec.into(), cold_factor.into(), max_queueing_time_ms.into());
            }
        }
        c
    }
}

/// An admitted request's permit, from `rk_flow_controller_check()`: plain
/// data to hand back to `rk_flow_controller_release()` exactly once when
/// the request ends.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct rk_flow_permit {
    /// When the request was decided, in microseconds since the
    /// controller's creation: its RT counts from there.
    pub start_micros: i64,
    /// Its acquire count.
    pub count: u32,
}

/// The statistics of a flow controller (Sentinel's node), from
/// `rk_flow_controller_stats()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_flow_stats {
    /// Requests admitted per second over the interval.
    pub pass_qps: f64,
    /// Requests refused per second over the interval.
    pub block_qps: f64,
    /// Requests completed per second over the interval.
    pub success_qps: f64,
    /// Requests admitted in the previous whole second.
    pub previous_pass_qps: f64,
    /// Prioritized requests that occupied a later window, in the current
    /// whole second.
    pub occupied_pass: u64,
    /// Passes booked into windows that have not begun.
    pub waiting: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// The average RT of the interval's completions in milliseconds, 0.0
    /// when none.
    pub avg_rt_millis: f64,
}

impl From<FlowStats> for rk_flow_stats {
    fn from(s: FlowStats) -> Self {
        rk_flow_stats {
            pass_qps: s.pass_qps,
            block_qps: s.block_qps,
            success_qps: s.success_qps,
            previous_pass_qps: s.previous_pass_qps,
            occupied_pass: s.occupied_pass,
            waiting: s.waiting,
            in_flight: s.in_flight,
            avg_rt_millis: s.avg_rt_millis,
        }
    }
}

/// Sentinel's flow rule for one resource over Sentinel's sliding
/// statistics: the default controller (prioritized requests occupying a
/// later window), warm-up, uniform queueing, or both, by QPS or by
/// requests in flight.
///
/// Thread safety: as `rk_limiter`; only `rk_flow_controller_free()` must
/// not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_flow_controller {
    flow: FlowController<AnyClock>,
}

/// Sentinel's defaults in `*out_rule`: QPS, count 0, the default
/// behaviour, warm-up 10 s, cold factor 3, queueing at most 500 ms.
///
/// Returns `RK_NULL_POINTER` when `out_rule` is NULL.
///
/// # Safety
/// `out_rule` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_rule_default(out_rule: *mut rk_flow_rule) -> rk_status {
    guard("rk_flow_rule_default", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_rule, "out_rule") }?;
        out.write(rk_flow_rule::from_rule(&FlowRule::qps(0.0)));
        Ok(())
    })
}

/// Creates a controller of `*rule` over `sample_count` buckets of
/// `interval_ms` (Sentinel's 2 and 1000; at most 64 buckets, dividing the
/// interval), on `clock` (a manual clock, or NULL for the monotonic
/// clock), in `*out_flow`. Free it with `rk_flow_controller_free()`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field or parameter, when the
/// rule or the shape is invalid; `RK_NULL_POINTER` when `rule` or
/// `out_flow` is NULL.
///
/// # Safety
/// `rule` is NULL or valid for reading; `clock` is NULL or live;
/// `out_flow` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_new(
    rule: *const rk_flow_rule,
    sample_count: i64,
    interval_ms: i64,
    clock: *const rk_manual_clock,
    out_flow: *mut *mut rk_flow_controller,
) -> rk_status {
    guard("rk_flow_controller_new", || {
        // SAFETY: the caller's contract.
        let (rule, clock, out) =
            unsafe { (handle(rule, "rule")?, clock.as_ref(), Out::required(out_flow, "out_flow")?) };
        let rule = rule.to_rule()?;
        let samples = field(Argument::SampleCount, sample_count)?;
        let interval = field(Argument::IntervalMs, interval_ms)?;
        let flow = FlowController::with_clock(rule, samples, interval, rk_manual_clock::any_clock(clock))?;
        out.write(Arc::into_raw(Arc::new(rk_flow_controller { flow })).cast_mut());
        Ok(())
    })
}

/// Frees a flow controller. `NULL` does nothing.
///
/// # Safety
/// `flow` is NULL or a controller from `rk_flow_controller_new()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_free(flow: *mut rk_flow_controller) {
    // SAFETY: the caller's contract: NULL or the reference from
    // Arc::into_raw in rk_flow_controller_new that no other call is using.
    unsafe { free_arc("rk_flow_controller_free", flow) }
}

/// Decides a request of `acquire_count` (0 to 2^31 − 1) now, without
/// waiting, `prioritized` or not (a prioritized QPS request of the default
/// behaviour may occupy a window that begins within 500 ms). The decision
/// goes to `*out_decision` unless it is NULL: when admitted, its
/// `wait_micros` is the queueing or occupying wait the caller must wait
/// before going on. `*out_admitted` says whether it was admitted, and then
/// `*out_permit` holds the permit to hand back to
/// `rk_flow_controller_release()` when the request ends (zeroed when
/// refused).
///
/// Returns `RK_INVALID_ARGUMENT` naming `acquire_count` when it is out of
/// range, taking nothing; `RK_NULL_POINTER` when `flow`, `out_admitted` or
/// `out_permit` is NULL.
///
/// # Safety
/// `flow` is NULL or live; `out_decision` is NULL or valid for a write;
/// `out_admitted` and `out_permit` are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_check(
    flow: *const rk_flow_controller,
    acquire_count: i64,
    prioritized: bool,
    out_decision: *mut rk_decision,
    out_admitted: *mut bool,
    out_permit: *mut rk_flow_permit,
) -> rk_status {
    guard("rk_flow_controller_check", || {
        // SAFETY: the caller's contract.
        let (flow, out_decision, out_admitted, out_permit) = unsafe {
            (
                handle(flow, "flow")?,
                Out::optional(out_decision),
                Out::required(out_admitted, "out_admitted")?,
                Out::required(out_permit, "out_permit")?,
            )
        };
        let count = field(Argument::AcquireCount, acquire_count)?;
        let (decision, permit) = flow.flow.check(count, prioritized)?;
        if let Some(out) = out_decision {
            out.write(decision.into());
        }
        out_admitted.write(permit.is_some());
        out_permit.write(
            permit.map_or_else(rk_flow_permit::default, |p| rk_flow_permit {
                start_micros: p.start_micros,
                count: p.count,
            }),
        );
        Ok(())
    })
}

/// The request of `*permit` ended now: records its completion and RT, and
/// takes it out of flight. Hand each permit back exactly once.
///
/// Returns `RK_NULL_POINTER` when `flow` or `permit` is NULL.
///
/// # Safety
/// `flow` is NULL or live; `permit` is NULL or valid for reading.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_release(
    flow: *const rk_flow_controller,
    permit: *const rk_flow_permit,
) -> rk_status {
    guard("rk_flow_controller_release", || {
        // SAFETY: the caller's contract.
        let (flow, permit) = unsafe { (handle(flow, "flow")?, handle(permit, "permit")?) };
        flow.flow.release(FlowPermit { start_micros: permit.start_micros, count: permit.count });
        Ok(())
    })
}

/// Counts `count` passes now without asking the rule: usage that happened
/// anyway.
///
/// Returns `RK_INVALID_ARGUMENT` naming `count` when it is negative;
/// `RK_NULL_POINTER` when `flow` is NULL.
///
/// # Safety
/// `flow` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_add_pass(flow: *const rk_flow_controller, count: i64) -> rk_status {
    guard("rk_flow_controller_add_pass", || {
        // SAFETY: the caller's contract.
        let flow = unsafe { handle(flow, "flow") }?;
        let count = ratekeeper::unsigned_from_i64(Argument::Count, count)?;
        flow.flow.add_pass(count);
        Ok(())
    })
}

/// Replaces the rule with `*rule`: the statistics stay, the controller's
/// own state (warm-up tokens, queue) starts afresh, as when Sentinel
/// reloads its rules. An invalid rule changes nothing.
///
/// Returns `RK_INVALID_ARGUMENT` naming the field when the rule is
/// invalid; `RK_NULL_POINTER` when `flow` or `rule` is NULL.
///
/// # Safety
/// `flow` is NULL or live; `rule` is NULL or valid for reading.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_set_rule(
    flow: *const rk_flow_controller,
    rule: *const rk_flow_rule,
) -> rk_status {
    guard("rk_flow_controller_set_rule", || {
        // SAFETY: the caller's contract.
        let (flow, rule) = unsafe { (handle(flow, "flow")?, handle(rule, "rule")?) };
        Ok(flow.flow.set_rule(rule.to_rule()?)?)
    })
}

/// The rule, every field filled in (those its behaviour does not use with
/// Sentinel's defaults), in `*out_rule`.
///
/// Returns `RK_NULL_POINTER` when `flow` or `out_rule` is NULL.
///
/// # Safety
/// `flow` is NULL or live; `out_rule` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_rule(
    flow: *const rk_flow_controller,
    out_rule: *mut rk_flow_rule,
) -> rk_status {
    guard("rk_flow_controller_rule", || {
        // SAFETY: the caller's contract.
        let (flow, out) = unsafe { (handle(flow, "flow")?, Out::required(out_rule, "out_rule")?) };
        out.write(rk_flow_rule::from_rule(&flow.flow.rule()));
        Ok(())
    })
}

/// The statistics now, in `*out_stats`.
///
/// Returns `RK_NULL_POINTER` when `flow` or `out_stats` is NULL.
///
/// # Safety
/// `flow` is NULL or live; `out_stats` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_flow_controller_stats(
    flow: *const rk_flow_controller,
    out_stats: *mut rk_flow_stats,
) -> rk_status {
    guard("rk_flow_controller_stats", || {
        // SAFETY: the caller's contract.
        let (flow, out) = unsafe { (handle(flow, "flow")?, Out::required(out_stats, "out_stats")?) };
        out.write(flow.flow.stats().into());
        Ok(())
    })
}
