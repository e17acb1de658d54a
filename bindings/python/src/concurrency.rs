//! `ratekeeper.ConcurrencyLimiter` and its adaptive policies,
//! `GradientPolicy` and `AimdPolicy` (Netflix concurrency-limits' rules).
//!
//! A permit taken here is a [`PyPermitHandle`]: it holds the Rust
//! [`Permit`] until it is released, exactly once, and releases it (as
//! "ignored", no sample) if it is garbage-collected first, so a permit
//! cannot leak. The package wraps the handle in `ratekeeper.Permit`, a
//! context manager (sync and async) that releases it on exit.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use ratekeeper::{
    AimdConfig, AnyClock, Argument, ConcurrencyLimiter, ConcurrencyPolicy, GradientConfig, Outcome, Permit,
};

use crate::args;
use crate::clock::{self, PyManualClock};
use crate::decision::{seconds_from_micros, PyDecision};
use crate::errors::{from_rust, from_rust_passed, wrong_type};
use crate::float_repr;

/// The gradient rule (Netflix's ``GradientLimit``): the limit grows by
/// ``queue_size`` while round-trip times stay near the no-load RTT, and
/// shrinks as they rise (``new = limit * rtt_noload / rtt + queue_size``,
/// within ``rtt_tolerance``; smoothed decreases; ``backoff_ratio`` on a
/// drop; a fresh no-load RTT every ``probe_interval`` samples, 0: never).
/// The defaults are Netflix's.
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "GradientPolicy")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyGradientPolicy(GradientConfig);

#[pymethods]
impl PyGradientPolicy {
    #[new]
    #[pyo3(signature = (
        *, initial_limit=None, min_limit=None, max_limit=None, smoothing=None, rtt_tolerance=None,
        queue_size=None, backoff_ratio=None, probe_interval=None
    ))]
    #[pyo3(
        text_signature = "(*, initial_limit=50, min_limit=1, max_limit=1000, smoothing=0.2, rtt_tolerance=2.0, queue_size=4, backoff_ratio=0.9, probe_interval=1000)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        initial_limit: Option<&Bound<'_, PyAny>>,
        min_limit: Option<&Bound<'_, PyAny>>,
        max_limit: Option<&Bound<'_, PyAny>>,
        smoothing: Option<&Bound<'_, PyAny>>,
        rtt_tolerance: Option<&Bound<'_, PyAny>>,
        queue_size: Option<&Bound<'_, PyAny>>,
        backoff_ratio: Option<&Bound<'_, PyAny>>,
        probe_interval: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        let d = GradientConfig::default();
        let count =
            |obj: Option<&Bound<'_, PyAny>>, argument, default| obj.map_or(Ok(default), |o| args::count(o, argument));
        let real =
            |obj: Option<&Bound<'_, PyAny>>, argument, default| obj.map_or(Ok(default), |o| args::real(o, argument));
        let config = GradientConfig {
            initial_limit: count(initial_limit, Argument::InitialLimit, d.initial_limit)?,
            min_limit: count(min_limit, Argument::MinLimit, d.min_limit)?,
            max_limit: count(max_limit, Argument::MaxLimit, d.max_limit)?,
            smoothing: real(smoothing, Argument::Smoothing, d.smoothing)?,
            rtt_tolerance: real(rtt_tolerance, Argument::RttTolerance, d.rtt_tolerance)?,
            queue_size: count(queue_size, Argument::QueueSize, d.queue_size)?,
            backoff_ratio: real(backoff_ratio, Argument::GradientBackoffRatio, d.backoff_ratio)?,
            probe_interval: count(probe_interval, Argument::ProbeInterval, d.probe_interval)?,
        };
        config.validate().map_err(|e| from_rust(py, e))?;
        Ok(PyGradientPolicy(config))
    }

    /// The limit to start from.
    #[getter]
    fn initial_limit(&self) -> u64 {
        self.0.initial_limit
    }

    /// The smallest limit a decrease may reach.
    #[getter]
    fn min_limit(&self) -> u64 {
        self.0.min_limit
    }

    /// The largest limit.
    #[getter]
    fn max_limit(&self) -> u64 {
        self.0.max_limit
    }

    /// How much of a decrease to apply at once, in (0, 1].
    #[getter]
    fn smoothing(&self) -> f64 {
        self.0.smoothing
    }

    /// How much slower than the no-load RTT still counts as no queueing.
    #[getter]
    fn rtt_tolerance(&self) -> f64 {
        self.0.rtt_tolerance
    }

    /// The headroom added to the limit.
    #[getter]
    fn queue_size(&self) -> u64 {
        self.0.queue_size
    }

    /// The factor applied on a drop, in [0.5, 1].
    #[getter]
    fn backoff_ratio(&self) -> f64 {
        self.0.backoff_ratio
    }

    /// Samples between probes for a new no-load RTT (0: never).
    #[getter]
    fn probe_interval(&self) -> u64 {
        self.0.probe_interval
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        gradient_repr(py, &self.0)
    }
}

fn gradient_repr(py: Python<'_>, c: &GradientConfig) -> PyResult<String> {
    Ok(format!(
        "GradientPolicy(initial_limit={}, min_limit={}, max_limit={}, smoothing={}, rtt_tolerance={}, \
         queue_size={}, backoff_ratio={}, probe_interval={})",
        c.initial_limit,
        c.min_limit,
        c.max_limit,
        float_repr(py, c.smoothing)?,
        float_repr(py, c.rtt_tolerance)?,
        c.queue_size,
        float_repr(py, c.backoff_ratio)?,
        c.probe_interval
    ))
}

/// AIMD (Netflix's ``AIMDLimit``): every success that found the limit at
/// least half used adds one; a drop, or a round-trip slower than
/// ``rtt_timeout`` (seconds or a ``timedelta``), multiplies the limit by
/// ``backoff_ratio``. The defaults are Netflix's.
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "AimdPolicy")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyAimdPolicy(AimdConfig);

#[pymethods]
impl PyAimdPolicy {
    #[new]
    #[pyo3(signature = (*, initial_limit=None, min_limit=None, max_limit=None, backoff_ratio=None, rtt_timeout=None))]
    #[pyo3(text_signature = "(*, initial_limit=20, min_limit=20, max_limit=200, backoff_ratio=0.9, rtt_timeout=5.0)")]
    fn new(
        initial_limit: Option<&Bound<'_, PyAny>>,
        min_limit: Option<&Bound<'_, PyAny>>,
        max_limit: Option<&Bound<'_, PyAny>>,
        backoff_ratio: Option<&Bound<'_, PyAny>>,
        rtt_timeout: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        let d = AimdConfig::default();
        let count =
            |obj: Option<&Bound<'_, PyAny>>, argument, default| obj.map_or(Ok(default), |o| args::count(o, argument));
        let config = AimdConfig {
            initial_limit: count(initial_limit, Argument::InitialLimit, d.initial_limit)?,
            min_limit: count(min_limit, Argument::MinLimit, d.min_limit)?,
            max_limit: count(max_limit, Argument::MaxLimit, d.max_limit)?,
            backoff_ratio: backoff_ratio.map_or(Ok(d.backoff_ratio), |o| args::real(o, Argument::BackoffRatio))?,
            rtt_timeout_micros: rtt_timeout
                .map_or(Ok(d.rtt_timeout_micros), |o| args::duration_micros(o, Argument::RttTimeout))?,
        };
        let passed: Vec<(Argument, &Bound<'_, PyAny>)> =
            rtt_timeout.map(|o| (Argument::RttTimeout, o)).into_iter().collect();
        config.validate().map_err(|e| from_rust_passed(py, e, &passed))?;
        Ok(PyAimdPolicy(config))
    }

    /// The limit to start from.
    #[getter]
    fn initial_limit(&self) -> u64 {
        self.0.initial_limit
    }

    /// The smallest limit.
    #[getter]
    fn min_limit(&self) -> u64 {
        self.0.min_limit
    }

    /// The largest limit.
    #[getter]
    fn max_limit(&self) -> u64 {
        self.0.max_limit
    }

    /// The factor applied on a drop or a timeout, in [0.5, 1).
    #[getter]
    fn backoff_ratio(&self) -> f64 {
        self.0.backoff_ratio
    }

    /// Seconds above which a round-trip counts as a drop.
    #[getter]
    fn rtt_timeout(&self) -> f64 {
        seconds_from_micros(self.0.rtt_timeout_micros)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        aimd_repr(py, &self.0)
    }
}

fn aimd_repr(py: Python<'_>, c: &AimdConfig) -> PyResult<String> {
    Ok(format!(
        "AimdPolicy(initial_limit={}, min_limit={}, max_limit={}, backoff_ratio={}, rtt_timeout={})",
        c.initial_limit,
        c.min_limit,
        c.max_limit,
        float_repr(py, c.backoff_ratio)?,
        float_repr(py, seconds_from_micros(c.rtt_timeout_micros))?
    ))
}

/// At most ``limit`` requests in flight. ``limit`` is an int (fixed), a
/// ``GradientPolicy`` or an ``AimdPolicy`` (learnt from the round-trip
/// times of the requests, as Netflix concurrency-limits does).
///
/// A request takes a permit when it starts and gives it back when it
/// ends, saying how it went; use the package's ``acquire()`` as a context
/// manager so that it always does.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "ConcurrencyLimiter")]
#[derive(Debug)]
pub struct PyConcurrencyLimiter {
    limiter: ConcurrencyLimiter<AnyClock>,
    clock: Option<Py<PyManualClock>>,
}

#[pymethods]
impl PyConcurrencyLimiter {
    #[new]
    #[pyo3(signature = (limit, *, clock=None))]
    fn new(limit: &Bound<'_, PyAny>, clock: Option<&Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        let py = limit.py();
        let policy = if let Ok(gradient) = limit.cast::<PyGradientPolicy>() {
            ConcurrencyPolicy::gradient(gradient.get().0)
        } else if let Ok(aimd) = limit.cast::<PyAimdPolicy>() {
            ConcurrencyPolicy::aimd(aimd.get().0)
        } else {
            let fixed = args::int(limit, Argument::Limit).map_err(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                    wrong_type("limit", limit, "an int (a fixed limit), a GradientPolicy or an AimdPolicy")
                } else {
                    e
                }
            })?;
            ratekeeper::unsigned_from_i64(Argument::Limit, fixed).and_then(ConcurrencyPolicy::fixed)
        }
        .map_err(|e| from_rust(py, e))?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        Ok(PyClassInitializer::from(PyConcurrencyLimiter {
            limiter: ConcurrencyLimiter::with_clock(policy, any_clock),
            clock,
        }))
    }

    /// The current limit.
    #[getter]
    fn limit(&self) -> u64 {
        self.limiter.limit()
    }

    /// Requests in flight now.
    #[getter]
    fn in_flight(&self) -> u64 {
        self.limiter.in_flight()
    }

    /// Feeds the policy a request measured elsewhere, no permit involved: it
    /// took ``rtt`` (seconds or a ``timedelta``) while ``in_flight``
    /// requests were in flight, and was ``dropped`` or not. Returns the new
    /// limit (a fixed limit ignores samples).
    #[pyo3(signature = (rtt, in_flight, dropped = None), text_signature = "($self, rtt, in_flight, dropped=False)")]
    fn sample(
        &self,
        rtt: &Bound<'_, PyAny>,
        in_flight: &Bound<'_, PyAny>,
        dropped: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let py = rtt.py();
        let rtt = args::duration_micros(rtt, Argument::Rtt)?;
        let in_flight = args::count(in_flight, Argument::InFlight)?;
        let dropped = dropped.map_or(Ok(false), |d| args::boolean(d, "dropped"))?;
        self.limiter.sample(Duration::from_micros(rtt as u64), in_flight, dropped).map_err(|e| from_rust(py, e))
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// Takes a permit if fewer than ``limit`` are out: the decision, and
    /// the permit's handle when admitted (``ratekeeper.Permit`` wraps it).
    #[pyo3(name = "_try_acquire")]
    fn try_acquire(slf: &Bound<'_, Self>) -> (PyDecision, Option<PyPermitHandle>) {
        let (decision, permit) = slf.get().limiter.try_acquire();
        let handle = permit.map(|p| PyPermitHandle { limiter: slf.clone().unbind(), permit: Mutex::new(Some(p)) });
        (PyDecision(decision), handle)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.get();
        let name = slf.get_type().name()?;
        let policy = match this.limiter.snapshot().policy() {
            ConcurrencyPolicy::Fixed(limit) => limit.to_string(),
            ConcurrencyPolicy::Gradient(g) => gradient_repr(py, g.config())?,
            ConcurrencyPolicy::Aimd(a) => aimd_repr(py, a.config())?,
        };
        Ok(format!("{name}({policy}{})", clock::clock_repr(py, &this.clock)?))
    }
}

/// A permit of a ``ConcurrencyLimiter``, released exactly once; see
/// ``ratekeeper.Permit``.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "_PermitHandle")]
#[derive(Debug)]
pub struct PyPermitHandle {
    limiter: Py<PyConcurrencyLimiter>,
    permit: Mutex<Option<Permit>>,
}

impl PyPermitHandle {
    fn release_as(&self, outcome: Outcome) -> u64 {
        let limiter = &self.limiter.get().limiter;
        let permit = self.permit.lock().unwrap_or_else(PoisonError::into_inner).take();
        match permit {
            Some(permit) => limiter.release(permit, outcome),
            None => limiter.limit(),
        }
    }
}

#[pymethods]
impl PyPermitHandle {
    /// Releases the permit as a success (its round-trip time is a sample);
    /// returns the new limit. Does nothing once released.
    fn success(&self) -> u64 {
        self.release_as(Outcome::Success)
    }

    /// Releases the permit as a drop (a congestion signal).
    fn dropped(&self) -> u64 {
        self.release_as(Outcome::Dropped)
    }

    /// Releases the permit with no sample.
    fn ignore(&self) -> u64 {
        self.release_as(Outcome::Ignored)
    }

    /// Whether the permit was released.
    #[getter]
    fn released(&self) -> bool {
        self.permit.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }
}

impl Drop for PyPermitHandle {
    /// A permit nobody released is released when it is collected, with no
    /// sample: the limiter never stays one short.
    fn drop(&mut self) {
        let permit = self.permit.get_mut().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(permit) = permit {
            self.limiter.get().limiter.release(permit, Outcome::Ignored);
        }
    }
}
