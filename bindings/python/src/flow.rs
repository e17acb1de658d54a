//! Sentinel's flow rule: `ratekeeper.FlowRule` (a frozen value) and
//! `ratekeeper.FlowController`, with the statistics `FlowStats`.
//!
//! The rule keeps Sentinel's units where its names carry them
//! (`warm_up_period_sec`, `max_queueing_time_ms`, and the controller's
//! `interval_ms`), as the core does: a Sentinel user copies the numbers.
//! An admitted request's permit is a handle ([`PyFlowPermitHandle`]) that
//! ends the request exactly once, and ends it if it is garbage-collected
//! first, so that the thread grade never counts a lost request in flight
//! forever. The package wraps it in `ratekeeper.FlowPermit` and
//! `ratekeeper.FlowEntry`, context managers that end the request on exit.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use ratekeeper::core::flow::{
    DEFAULT_COLD_FACTOR, DEFAULT_INTERVAL_MS, DEFAULT_MAX_QUEUEING_TIME_MS, DEFAULT_SAMPLE_COUNT,
    DEFAULT_WARM_UP_PERIOD_SEC,
};
use ratekeeper::{
    AnyClock, Argument, ControlBehavior, Decision, Error, FlowController, FlowGrade, FlowPermit, FlowRule, FlowStats,
};

use crate::args;
use crate::clock::{self, PyManualClock};
use crate::decision::PyDecision;
use crate::errors::{from_rust, invalid_named};
use crate::float_repr;
use crate::wait;

/// The grades' names, as Sentinel's constants without their prefix.
const GRADES: [(&str, FlowGrade); 2] = [("qps", FlowGrade::Qps), ("thread", FlowGrade::Thread)];

/// The control behaviours' names.
const BEHAVIORS: [&str; 4] = ["default", "warm_up", "rate_limiter", "warm_up_rate_limiter"];

/// An `int` argument in `0..=u32::MAX` (a count of seconds, milliseconds,
/// buckets); the core checks the range it needs and names `argument`.
fn small_int(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<u32> {
    let value = args::int(obj, argument)?;
    u32::try_from(value).map_err(|_| from_rust(obj.py(), Error::invalid_int(argument, value)))
}

/// An optional [`small_int`], with its default.
fn small_int_or(obj: Option<&Bound<'_, PyAny>>, argument: Argument, default: u32) -> PyResult<u32> {
    obj.filter(|o| !o.is_none()).map_or(Ok(default), |o| small_int(o, argument))
}

/// An acquire count: Sentinel's `int`, 0 to 2³¹ − 1.
fn acquire_count(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let value = args::int(obj, Argument::AcquireCount)?;
    match u32::try_from(value) {
        Ok(count) if count <= i32::MAX as u32 => Ok(count),
        _ => Err(from_rust(obj.py(), Error::invalid_int(Argument::AcquireCount, value))),
    }
}

/// A flow rule (Sentinel's ``FlowRule`` for one resource): ``count`` per
/// second (``grade="qps"``) or in flight (``grade="thread"``), shaped by
/// ``control_behavior`` (``"default"``, ``"warm_up"``,
/// ``"rate_limiter"`` or ``"warm_up_rate_limiter"``; QPS only) with its
/// parameters in Sentinel's units. A rule is checked when it is made, as
/// Sentinel's ``FlowRuleUtil.isValidRule`` does, but raising.
///
/// >>> FlowRule(10, control_behavior="rate_limiter", max_queueing_time_ms=200)
/// FlowRule(10.0, grade='qps', control_behavior='rate_limiter', warm_up_period_sec=10, cold_factor=3, max_queueing_time_ms=200)
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "FlowRule")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyFlowRule {
    grade: FlowGrade,
    count: f64,
    behavior: &'static str,
    warm_up_period_sec: u32,
    cold_factor: u32,
    max_queueing_time_ms: u32,
}

impl PyFlowRule {
    /// The core rule: the parameters its behaviour reads.
    fn core(&self) -> FlowRule {
        let (warm_up_period_sec, cold_factor, max_queueing_time_ms) =
            (self.warm_up_period_sec, self.cold_factor, self.max_queueing_time_ms);
        let behavior = match self.behavior {
            "warm_up" => ControlBehavior::WarmUp { warm_up_period_sec, cold_factor },
            "rate_limiter" => ControlBehavior::RateLimiter { max_queueing_time_ms },
            "warm_up_rate_limiter" => {
                ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms }
            }
            _ => ControlBehavior::Default,
        };
        FlowRule { grade: self.grade, count: self.count, control_behavior: behavior }
    }

    /// The Python value of a core rule; the parameters its behaviour does
    /// not carry are Sentinel's defaults.
    fn from_core(rule: &FlowRule) -> Self {
        let mut this = PyFlowRule {
            grade: rule.grade,
            count: rule.count,
            behavior: "default",
            warm_up_period_sec: DEFAULT_WARM_UP_PERIOD_SEC,
            cold_factor: DEFAULT_COLD_FACTOR,
            max_queueing_time_ms: DEFAULT_MAX_QUEUEING_TIME_MS,
        };
        match rule.control_behavior {
            ControlBehavior::Default => {}
            ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
                (this.behavior, this.warm_up_period_sec, this.cold_factor) =
                    ("warm_up", warm_up_period_sec, cold_factor);
            }
            ControlBehavior::RateLimiter { max_queueing_time_ms } => {
                (this.behavior, this.max_queueing_time_ms) = ("rate_limiter", max_queueing_time_ms);
            }
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
                this.behavior = "warm_up_rate_limiter";
                (this.warm_up_period_sec, this.cold_factor, this.max_queueing_time_ms) =
                    (warm_up_period_sec, cold_factor, max_queueing_time_ms);
            }
        }
        this
    }

    fn grade_name(&self) -> &'static str {
        GRADES.iter().find(|(_, g)| *g == self.grade).map_or("qps", |(name, _)| name)
    }
}

#[pymethods]
impl PyFlowRule {
    #[new]
    #[pyo3(signature = (
        count, *, grade=None, control_behavior=None, warm_up_period_sec=None, cold_factor=None,
        max_queueing_time_ms=None
    ))]
    #[pyo3(
        text_signature = "(count, *, grade='qps', control_behavior='default', warm_up_period_sec=10, cold_factor=3, max_queueing_time_ms=500)"
    )]
    fn new(
        count: &Bound<'_, PyAny>,
        grade: Option<&Bound<'_, PyAny>>,
        control_behavior: Option<&Bound<'_, PyAny>>,
        warm_up_period_sec: Option<&Bound<'_, PyAny>>,
        cold_factor: Option<&Bound<'_, PyAny>>,
        max_queueing_time_ms: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        let grade = match grade.filter(|o| !o.is_none()) {
            None => FlowGrade::Qps,
            Some(obj) => {
                let name = args::text(obj, "grade")?;
                GRADES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, g)| *g)
                    .ok_or_else(|| invalid_named("grade", obj, "must be 'qps' or 'thread'"))?
            }
        };
        let behavior = match control_behavior.filter(|o| !o.is_none()) {
            None => "default",
            Some(obj) => {
                let name = args::text(obj, "control_behavior")?;
                BEHAVIORS.iter().find(|b| **b == name).copied().ok_or_else(|| {
                    invalid_named(
                        "control_behavior",
                        obj,
                        "must be 'default', 'warm_up', 'rate_limiter' or 'warm_up_rate_limiter'",
                    )
                })?
            }
        };
        let rule = PyFlowRule {
            grade,
            count: args::real(count, Argument::Count)?,
            behavior,
            warm_up_period_sec: small_int_or(
                warm_up_period_sec,
                Argument::WarmUpPeriodSec,
                DEFAULT_WARM_UP_PERIOD_SEC,
            )?,
            cold_factor: small_int_or(cold_factor, Argument::FlowColdFactor, DEFAULT_COLD_FACTOR)?,
            max_queueing_time_ms: small_int_or(
                max_queueing_time_ms,
                Argument::MaxQueueingTimeMs,
                DEFAULT_MAX_QUEUEING_TIME_MS,
            )?,
        };
        rule.core().validate().map_err(|e| from_rust(py, e))?;
        Ok(rule)
    }

    /// The threshold: requests per second, or in flight.
    #[getter]
    fn count(&self) -> f64 {
        self.count
    }

    /// ``"qps"`` or ``"thread"``.
    #[getter]
    fn grade(&self) -> &'static str {
        self.grade_name()
    }

    /// ``"default"``, ``"warm_up"``, ``"rate_limiter"`` or
    /// ``"warm_up_rate_limiter"``.
    #[getter]
    fn control_behavior(&self) -> &'static str {
        self.behavior
    }

    /// Seconds to warm up (the warm-up behaviours).
    #[getter]
    fn warm_up_period_sec(&self) -> u32 {
        self.warm_up_period_sec
    }

    /// How much slower a cold service starts (the warm-up behaviours).
    #[getter]
    fn cold_factor(&self) -> u32 {
        self.cold_factor
    }

    /// The longest queueing wait in milliseconds (the rate limiters).
    #[getter]
    fn max_queueing_time_ms(&self) -> u32 {
        self.max_queueing_time_ms
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.grade, self.count.to_bits(), self.behavior, self.warm_up_period_sec, self.cold_factor).hash(&mut hasher);
        self.max_queueing_time_ms.hash(&mut hasher);
        hasher.finish()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "FlowRule({}, grade='{}', control_behavior='{}', warm_up_period_sec={}, cold_factor={}, \
             max_queueing_time_ms={})",
            float_repr(py, self.count)?,
            self.grade_name(),
            self.behavior,
            self.warm_up_period_sec,
            self.cold_factor,
            self.max_queueing_time_ms
        ))
    }
}

/// A rule argument: a ``FlowRule``.
fn rule_arg(obj: &Bound<'_, PyAny>) -> PyResult<PyFlowRule> {
    match obj.cast::<PyFlowRule>() {
        Ok(rule) => Ok(*rule.get()),
        Err(_) => Err(crate::errors::wrong_type("rule", obj, "a ratekeeper.FlowRule")),
    }
}

/// Sentinel's flow rule for one resource; see ``ratekeeper.FlowController``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "FlowController")]
#[derive(Debug)]
pub struct PyFlowController {
    flow: FlowController<AnyClock>,
    sample_count: u32,
    interval_ms: u32,
    clock: Option<Py<PyManualClock>>,
}

impl PyFlowController {
    /// Decides now; the permit's handle when admitted.
    fn decide(
        slf: &Bound<'_, Self>,
        acquire_count: &Bound<'_, PyAny>,
        prioritized: &Bound<'_, PyAny>,
    ) -> PyResult<(Decision, Option<PyFlowPermitHandle>)> {
        let count = self::acquire_count(acquire_count)?;
        let prioritized = args::boolean(prioritized, "prioritized")?;
        let (decision, permit) = slf.get().flow.check(count, prioritized).map_err(|e| from_rust(slf.py(), e))?;
        Ok((decision, permit.map(|p| PyFlowPermitHandle::new(slf.clone().unbind(), p))))
    }
}

#[pymethods]
impl PyFlowController {
    #[new]
    #[pyo3(signature = (rule, *, sample_count=None, interval_ms=None, clock=None))]
    #[pyo3(text_signature = "(rule, *, sample_count=2, interval_ms=1000, clock=None)")]
    fn new(
        rule: &Bound<'_, PyAny>,
        sample_count: Option<&Bound<'_, PyAny>>,
        interval_ms: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let rule = rule_arg(rule)?;
        let sample_count = small_int_or(sample_count, Argument::SampleCount, DEFAULT_SAMPLE_COUNT)?;
        let interval_ms = small_int_or(interval_ms, Argument::IntervalMs, DEFAULT_INTERVAL_MS)?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let flow = FlowController::with_clock(rule.core(), sample_count, interval_ms, any_clock)
            .map_err(|e| from_rust(py, e))?;
        Ok(PyClassInitializer::from(PyFlowController { flow, sample_count, interval_ms, clock }))
    }

    /// Decides a request of ``acquire_count`` now, without waiting: the
    /// decision and the permit's handle when admitted.
    #[pyo3(name = "_check")]
    fn check(
        slf: &Bound<'_, Self>,
        acquire_count: &Bound<'_, PyAny>,
        prioritized: &Bound<'_, PyAny>,
    ) -> PyResult<(PyDecision, Option<PyFlowPermitHandle>)> {
        let (decision, handle) = Self::decide(slf, acquire_count, prioritized)?;
        Ok((PyDecision(decision), handle))
    }

    /// ``_check``, then sleeps an admitted request's queueing or occupying
    /// wait (the GIL released; a ``ManualClock`` moves instead).
    #[pyo3(name = "_entry")]
    fn entry(
        slf: &Bound<'_, Self>,
        acquire_count: &Bound<'_, PyAny>,
        prioritized: &Bound<'_, PyAny>,
    ) -> PyResult<(PyDecision, Option<PyFlowPermitHandle>)> {
        let (decision, handle) = Self::decide(slf, acquire_count, prioritized)?;
        if handle.is_some() {
            wait::sleep_micros(slf.py(), slf.get().flow.clock(), decision.wait_micros)?;
        }
        Ok((PyDecision(decision), handle))
    }

    /// ``_check`` for ``entry_async``: also the seconds the event loop must
    /// sleep (0.0 on a ``ManualClock``, which moves instead).
    #[pyo3(name = "_entry_async")]
    fn entry_async(
        slf: &Bound<'_, Self>,
        acquire_count: &Bound<'_, PyAny>,
        prioritized: &Bound<'_, PyAny>,
    ) -> PyResult<(PyDecision, Option<PyFlowPermitHandle>, f64)> {
        let (decision, handle) = Self::decide(slf, acquire_count, prioritized)?;
        let sleep = if handle.is_some() {
            wait::for_event_loop_micros(slf.get().flow.clock(), decision.wait_micros)
        } else {
            0.0
        };
        Ok((PyDecision(decision), handle, sleep))
    }

    /// Counts ``count`` passes now without asking the rule: usage that
    /// happened anyway.
    fn add_pass(&self, count: &Bound<'_, PyAny>) -> PyResult<()> {
        self.flow.add_pass(args::count(count, Argument::Count)?);
        Ok(())
    }

    /// Replaces the rule: the statistics stay, the controller's own state
    /// (warm-up tokens, queue) starts afresh, as when Sentinel reloads its
    /// rules.
    fn set_rule(&self, rule: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = rule.py();
        let rule = rule_arg(rule)?;
        self.flow.set_rule(rule.core()).map_err(|e| from_rust(py, e))
    }

    /// The rule.
    #[getter]
    fn rule(&self) -> PyFlowRule {
        PyFlowRule::from_core(&self.flow.rule())
    }

    /// How many buckets the statistics' interval is split into.
    #[getter]
    fn sample_count(&self) -> u32 {
        self.sample_count
    }

    /// The statistics' interval in milliseconds.
    #[getter]
    fn interval_ms(&self) -> u32 {
        self.interval_ms
    }

    /// The ``ManualClock`` the controller runs on, or ``None`` for real
    /// time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// The statistics now (Sentinel's node).
    fn stats(&self) -> PyFlowStats {
        PyFlowStats(self.flow.stats())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.get();
        Ok(format!(
            "{}({}, sample_count={}, interval_ms={}{})",
            slf.get_type().name()?,
            PyFlowRule::from_core(&this.flow.rule()).__repr__(py)?,
            this.sample_count,
            this.interval_ms,
            clock::clock_repr(py, &this.clock)?
        ))
    }
}

/// A permit of a ``FlowController``, ended exactly once; see
/// ``ratekeeper.FlowPermit``.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "_FlowPermitHandle")]
#[derive(Debug)]
pub struct PyFlowPermitHandle {
    held: Mutex<Option<(Py<PyFlowController>, FlowPermit)>>,
}

impl PyFlowPermitHandle {
    fn new(flow: Py<PyFlowController>, permit: FlowPermit) -> Self {
        PyFlowPermitHandle { held: Mutex::new(Some((flow, permit))) }
    }
}

#[pymethods]
impl PyFlowPermitHandle {
    /// Ends the request: its completion and RT are recorded, and it leaves
    /// flight. Does nothing once released.
    fn release(&self) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some((flow, permit)) = held {
            flow.get().flow.release(permit);
        }
    }

    /// Whether the permit was released.
    #[getter]
    fn released(&self) -> bool {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// The request's acquire count.
    #[getter]
    fn acquire_count(&self) -> Option<u32> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(|(_, p)| p.count)
    }
}

impl Drop for PyFlowPermitHandle {
    /// A permit nobody released ends when it is collected: the thread
    /// grade never counts it in flight forever.
    fn drop(&mut self) {
        if let Some((flow, permit)) = self.held.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            flow.get().flow.release(permit);
        }
    }
}

/// A ``FlowController``'s statistics (Sentinel's node): ``pass_qps``,
/// ``block_qps``, ``success_qps`` over the interval, ``previous_pass_qps``
/// (the previous whole second), ``occupied_pass`` and ``waiting`` (the
/// prioritized requests that occupied a later window), ``in_flight`` and
/// ``avg_rt`` (seconds, whole milliseconds; 0.0 when none completed).
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "FlowStats")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyFlowStats(FlowStats);

#[pymethods]
impl PyFlowStats {
    /// Requests admitted per second over the interval.
    #[getter]
    fn pass_qps(&self) -> f64 {
        self.0.pass_qps
    }

    /// Requests refused per second over the interval.
    #[getter]
    fn block_qps(&self) -> f64 {
        self.0.block_qps
    }

    /// Requests completed per second over the interval.
    #[getter]
    fn success_qps(&self) -> f64 {
        self.0.success_qps
    }

    /// Requests admitted in the previous whole second.
    #[getter]
    fn previous_pass_qps(&self) -> f64 {
        self.0.previous_pass_qps
    }

    /// Prioritized requests that occupied a later window, counted in the
    /// current whole second.
    #[getter]
    fn occupied_pass(&self) -> u64 {
        self.0.occupied_pass
    }

    /// Passes booked into windows that have not begun.
    #[getter]
    fn waiting(&self) -> u64 {
        self.0.waiting
    }

    /// Requests admitted and not yet ended.
    #[getter]
    fn in_flight(&self) -> u64 {
        self.0.in_flight
    }

    /// The average RT of the interval's completions, in seconds (0.0 when
    /// none).
    #[getter]
    fn avg_rt(&self) -> f64 {
        self.0.avg_rt_millis / 1000.0
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "FlowStats(pass_qps={}, block_qps={}, success_qps={}, previous_pass_qps={}, occupied_pass={}, \
             waiting={}, in_flight={}, avg_rt={})",
            float_repr(py, self.0.pass_qps)?,
            float_repr(py, self.0.block_qps)?,
            float_repr(py, self.0.success_qps)?,
            float_repr(py, self.0.previous_pass_qps)?,
            self.0.occupied_pass,
            self.0.waiting,
            self.0.in_flight,
            float_repr(py, self.avg_rt())?
        ))
    }
}

/// Adds the classes of this module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyFlowRule>()?;
    module.add_class::<PyFlowController>()?;
    module.add_class::<PyFlowPermitHandle>()?;
    module.add_class::<PyFlowStats>()?;
    Ok(())
}
