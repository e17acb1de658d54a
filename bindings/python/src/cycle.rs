//! `ratekeeper.CycleLimiter`: Resilience4j's `AtomicRateLimiter` (the std
//! crate's [`CycleLimiter`]), with durations in seconds, GIL-free waits and
//! the package's `async` method on top of `_acquire_for_event_loop`.
//!
//! The blocking wait is [`wait::sleep`] (GIL released, Ctrl-C honoured, a
//! manual clock advanced), not the std layer's own sleep, which would hold
//! the GIL and ignore signals; so this class counts its waiting callers
//! itself, blocking and `async` alike, as the std layer counts its own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pyo3::prelude::*;
use ratekeeper::{AnyClock, Argument, CycleConfig, CycleLimiter, CycleLimiterMetrics, Decision};

use crate::args;
use crate::clock::{self, PyManualClock};
use crate::decision::{seconds_from_micros, PyDecision};
use crate::errors::{from_rust, from_rust_passed};
use crate::{float_repr, wait};

/// A `permits` argument: an int, 0 (ask without taking) or more.
fn permits(obj: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    match obj {
        None => Ok(1),
        Some(obj) => args::non_negative_int(obj, "permits").map(|n| n as u64),
    }
}

/// Counts a caller as waiting while it lives (also when Ctrl-C ends the
/// wait).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Resilience4j's ``AtomicRateLimiter``; see ``ratekeeper.CycleLimiter``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "CycleLimiter")]
#[derive(Debug)]
pub struct PyCycleLimiter {
    limiter: CycleLimiter<AnyClock>,
    clock: Option<Py<PyManualClock>>,
    /// Callers in `acquire_permission`'s wait or an `async` one.
    waiting: AtomicUsize,
}

impl PyCycleLimiter {
    /// The decision for `permits` with the configured timeout, and how long
    /// the caller waits: the reservation's wait when admitted, the timeout
    /// when refused (Resilience4j's `acquirePermission` waits out its
    /// timeout before saying no).
    fn decide(&self, permits: u64) -> (Decision, i64) {
        let timeout = self.limiter.config().timeout_micros;
        let decision = self.limiter.check(permits);
        let wait = if decision.allowed { decision.wait_micros } else { timeout };
        (decision, wait)
    }
}

#[pymethods]
impl PyCycleLimiter {
    #[new]
    #[pyo3(signature = (limit_for_period, limit_refresh_period, timeout_duration, *, clock=None))]
    fn new(
        limit_for_period: &Bound<'_, PyAny>,
        limit_refresh_period: &Bound<'_, PyAny>,
        timeout_duration: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = limit_for_period.py();
        let config = CycleConfig {
            limit_for_period: args::count(limit_for_period, Argument::LimitForPeriod)?,
            limit_refresh_period_micros: args::duration_micros(limit_refresh_period, Argument::LimitRefreshPeriod)?,
            timeout_micros: args::duration_micros(timeout_duration, Argument::TimeoutDuration)?,
        };
        let passed =
            [(Argument::LimitRefreshPeriod, limit_refresh_period), (Argument::TimeoutDuration, timeout_duration)];
        config.validate().map_err(|e| from_rust_passed(py, e, &passed))?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let limiter = CycleLimiter::with_clock(config, any_clock).map_err(|e| from_rust(py, e))?;
        Ok(PyCycleLimiter { limiter, clock, waiting: AtomicUsize::new(0) })
    }

    /// Resilience4j's ``acquirePermission(permits)``: takes the permits,
    /// waiting until their cycle when they are reserved ahead, and returns
    /// ``True``; or, when the wait would exceed the timeout, takes nothing,
    /// waits the timeout as Resilience4j does and returns ``False``.
    ///
    /// The wait releases the GIL; Ctrl-C interrupts it (reserved permits
    /// stay taken). On a ``ManualClock`` the clock is advanced instead.
    #[pyo3(signature = (permits=None), text_signature = "($self, permits=1)")]
    fn acquire_permission(&self, py: Python<'_>, permits: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let (decision, wait) = self.decide(self::permits(permits)?);
        if wait > 0 {
            let _waiting = Waiting::new(&self.waiting);
            wait::sleep_micros(py, self.limiter.clock(), wait)?;
        }
        Ok(decision.allowed)
    }

    /// Takes the permits only if the current cycle has them: no wait and no
    /// reservation ahead, whatever the timeout.
    #[pyo3(signature = (permits=None), text_signature = "($self, permits=1)")]
    fn try_acquire_permission(&self, permits: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        Ok(self.limiter.try_acquire_permission(self::permits(permits)?))
    }

    /// Resilience4j's ``reservePermission(permits)``: the seconds the
    /// caller must wait before acting on the permits it now holds (0.0: at
    /// once), or ``None`` when that wait would exceed the timeout (nothing
    /// taken). Never waits itself.
    #[pyo3(signature = (permits=None), text_signature = "($self, permits=1)")]
    fn reserve_permission(&self, permits: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
        let reserved = self.limiter.reserve_permission(self::permits(permits)?);
        Ok(reserved.map(|wait| seconds_from_micros(wait.as_micros() as i64)))
    }

    /// ``acquire_permission`` without the wait: the ``Decision`` (admitted
    /// with the ``wait`` to sleep out before acting, or refused, taking
    /// nothing, with the ``retry_after`` from which the same request would
    /// be reserved).
    #[pyo3(signature = (permits=None), text_signature = "($self, permits=1)")]
    fn check(&self, permits: Option<&Bound<'_, PyAny>>) -> PyResult<PyDecision> {
        Ok(PyDecision(self.limiter.check(self::permits(permits)?)))
    }

    /// ``try_acquire_permission`` answered with its ``Decision``.
    #[pyo3(signature = (permits=None), text_signature = "($self, permits=1)")]
    fn check_now(&self, permits: Option<&Bound<'_, PyAny>>) -> PyResult<PyDecision> {
        Ok(PyDecision(self.limiter.check_now(self::permits(permits)?)))
    }

    /// Sets the permits per cycle from the next calculation on
    /// (``changeLimitForPeriod``); the current cycle keeps its count.
    fn change_limit_for_period(&self, limit_for_period: &Bound<'_, PyAny>) -> PyResult<()> {
        let limit = args::count(limit_for_period, Argument::LimitForPeriod)?;
        self.limiter.change_limit_for_period(limit).map_err(|e| from_rust(limit_for_period.py(), e))
    }

    /// Sets the timeout (seconds or a ``timedelta``) for the next requests
    /// (``changeTimeoutDuration``); reservations already made stand.
    fn change_timeout_duration(&self, timeout_duration: &Bound<'_, PyAny>) -> PyResult<()> {
        let micros = args::duration_micros(timeout_duration, Argument::TimeoutDuration)?;
        let set = self.limiter.change_timeout_duration(Duration::from_micros(micros as u64));
        set.map_err(|e| from_rust_passed(timeout_duration.py(), e, &[(Argument::TimeoutDuration, timeout_duration)]))
    }

    /// Takes every permit left in the current cycle at once
    /// (``drainPermissions``); returns how many.
    fn drain_permissions(&self) -> u64 {
        self.limiter.drain_permissions()
    }

    /// What a request for one permit would get now, and how many callers
    /// wait (``AtomicRateLimiterMetrics``).
    fn metrics(&self) -> PyCycleMetrics {
        let mut metrics = self.limiter.metrics();
        metrics.number_of_waiting_threads += self.waiting.load(Ordering::Acquire);
        PyCycleMetrics(metrics)
    }

    /// Permits each cycle brings.
    #[getter]
    fn limit_for_period(&self) -> u64 {
        self.limiter.config().limit_for_period
    }

    /// A cycle's length in seconds.
    #[getter]
    fn limit_refresh_period(&self) -> f64 {
        seconds_from_micros(self.limiter.config().limit_refresh_period_micros)
    }

    /// The longest wait a request may be given, in seconds.
    #[getter]
    fn timeout_duration(&self) -> f64 {
        seconds_from_micros(self.limiter.config().timeout_micros)
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// For ``acquire_permission_async``: decides now and returns whether the
    /// permits were taken and the seconds the event loop must sleep (0.0 on
    /// a ``ManualClock``, which this advances instead).
    #[pyo3(name = "_acquire_for_event_loop", signature = (permits=None), text_signature = "($self, permits=1)")]
    fn acquire_for_event_loop(&self, permits: Option<&Bound<'_, PyAny>>) -> PyResult<(bool, f64)> {
        let (decision, wait) = self.decide(self::permits(permits)?);
        Ok((decision.allowed, wait::for_event_loop_micros(self.limiter.clock(), wait)))
    }

    /// For ``acquire_permission_async``: counts one more (``entering``) or
    /// one fewer waiting caller.
    #[pyo3(name = "_count_waiting")]
    fn count_waiting(&self, entering: bool) {
        if entering {
            self.waiting.fetch_add(1, Ordering::AcqRel);
        } else {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let config = this.limiter.config();
        Ok(format!(
            "{}(limit_for_period={}, limit_refresh_period={}, timeout_duration={}{})",
            slf.get_type().name()?,
            config.limit_for_period,
            float_repr(py, seconds_from_micros(config.limit_refresh_period_micros))?,
            float_repr(py, seconds_from_micros(config.timeout_micros))?,
            clock::clock_repr(py, &this.clock)?
        ))
    }
}

/// What a ``CycleLimiter`` would answer a request for one permit now
/// (Resilience4j's ``AtomicRateLimiterMetrics``): ``available_permissions``
/// (negative when permits of later cycles are reserved), ``time_to_wait``
/// (seconds; also ``time_to_wait_micros``), the current ``cycle`` and
/// ``number_of_waiting_threads``.
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "CycleMetrics")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyCycleMetrics(CycleLimiterMetrics);

#[pymethods]
impl PyCycleMetrics {
    /// Permits available in the current cycle; negative when permits of
    /// later cycles are reserved.
    #[getter]
    fn available_permissions(&self) -> i64 {
        self.0.available_permissions
    }

    /// Seconds a request for one permit would wait, whatever the timeout.
    #[getter]
    fn time_to_wait(&self) -> f64 {
        seconds_from_micros(self.time_to_wait_micros())
    }

    /// ``time_to_wait`` in whole microseconds.
    #[getter]
    fn time_to_wait_micros(&self) -> i64 {
        i64::try_from(self.0.time_to_wait.as_micros()).unwrap_or(i64::MAX)
    }

    /// The current cycle, counted from the limiter's creation.
    #[getter]
    fn cycle(&self) -> i64 {
        self.0.cycle
    }

    /// Callers waiting in ``acquire_permission`` or
    /// ``acquire_permission_async``.
    #[getter]
    fn number_of_waiting_threads(&self) -> usize {
        self.0.number_of_waiting_threads
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "CycleMetrics(available_permissions={}, time_to_wait={}, cycle={}, number_of_waiting_threads={})",
            self.0.available_permissions,
            float_repr(py, self.time_to_wait())?,
            self.0.cycle,
            self.0.number_of_waiting_threads
        ))
    }
}
