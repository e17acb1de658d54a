//! `ratekeeper._ratekeeper.RateLimiter`: Guava's `RateLimiter` from the Rust
//! library, with Python's argument types and GIL-free waits. The package's
//! `ratekeeper.RateLimiter` subclasses it to add the `async` methods and the
//! decorator.
//!
//! The hot path, `try_acquire()` with its defaults, is one pyo3 call that
//! makes no Python object and allocates nothing: the omitted arguments are
//! Rust constants ([`Permits::ONE`], [`Timeout::ZERO`]), the class is
//! `frozen` (no borrow flag to check), and the answer is `True` or `False`.

use pyo3::prelude::*;
use ratekeeper::core::smooth::permits_from_i64;
use ratekeeper::{wait_as_seconds, AnyClock, Argument, RateLimiter, SmoothKind};

use crate::args::{self, Permits, Timeout};
use crate::clock::{self, PyManualClock};
use crate::errors::{from_rust, wrong_type};
use crate::{float_repr, wait};

/// Guava's ``RateLimiter``: hands out permits at a configurable rate, and is
/// safe to share between threads.
///
/// Build one with ``RateLimiter.create(permits_per_second)`` (Guava's
/// ``SmoothBursty``: saves up at most ``max_burst_seconds`` of permits while
/// idle, 1.0 by default) or ``RateLimiter.create(permits_per_second,
/// warmup)`` (Guava's ``SmoothWarmingUp``: starts cold, ``cold_factor``
/// times slower, 3.0 by default, and reaches its rate after ``warmup``
/// seconds of saturated use). ``clock=ManualClock()`` makes it
/// deterministic for tests.
///
/// Like Guava's, it pre-consumes: a request of any size is granted as soon
/// as the limiter is free, and the *next* request waits for it to be paid
/// off. Decisions are the Rust library's, identical to Guava 31.1 to the
/// microsecond.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RateLimiter")]
#[derive(Debug)]
pub struct PyRateLimiter {
    limiter: RateLimiter<AnyClock>,
    /// The `ManualClock` the limiter runs on, as the caller passed it.
    clock: Option<Py<PyManualClock>>,
}

#[pymethods]
impl PyRateLimiter {
    #[new]
    #[pyo3(signature = (permits_per_second, warmup=None, *, max_burst_seconds=None, cold_factor=None, clock=None))]
    fn new(
        permits_per_second: &Bound<'_, PyAny>,
        warmup: Option<&Bound<'_, PyAny>>,
        max_burst_seconds: Option<&Bound<'_, PyAny>>,
        cold_factor: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = permits_per_second.py();
        let rate = args::real(permits_per_second, Argument::PermitsPerSecond)?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let builder = RateLimiter::builder(rate).clock(any_clock);
        let builder = match warmup {
            None => {
                if let Some(cold_factor) = cold_factor {
                    return Err(wrong_type("cold_factor", cold_factor, "None for a limiter without a warmup"));
                }
                match max_burst_seconds {
                    Some(obj) => builder.max_burst_seconds(args::real(obj, Argument::MaxBurstSeconds)?),
                    None => builder,
                }
            }
            Some(warmup) => {
                if let Some(max_burst_seconds) = max_burst_seconds {
                    return Err(wrong_type("max_burst_seconds", max_burst_seconds, "None for a limiter with a warmup"));
                }
                let micros = args::warmup_micros(warmup)?;
                let builder = builder.warmup(std::time::Duration::from_micros(micros as u64));
                match cold_factor {
                    Some(obj) => builder.cold_factor(args::real(obj, Argument::ColdFactor)?),
                    None => builder,
                }
            }
        };
        let limiter = builder.build().map_err(|e| from_rust(py, e))?;
        Ok(PyRateLimiter { limiter, clock })
    }

    /// Takes ``permits``, blocking until they are granted, and returns the
    /// seconds spent waiting (Guava's ``acquire``).
    ///
    /// The wait releases the GIL, so other threads run meanwhile. Ctrl-C
    /// interrupts it (``KeyboardInterrupt``) and the permits stay taken, as
    /// Guava's do: they are reserved before the wait, and a reservation is
    /// never handed back (later requests wait as if this one had
    /// completed; a cancelled ``acquire_async`` likewise). On a
    /// ``ManualClock`` the clock is advanced by the wait instead.
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn acquire(&self, py: Python<'_>, permits: Permits) -> PyResult<f64> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        let wait = self.limiter.reserve(permits).map_err(|e| from_rust(py, e))?;
        wait::sleep(py, self.limiter.clock(), wait)?;
        Ok(wait_as_seconds(wait))
    }

    /// Takes ``permits`` if they can be granted within ``timeout`` (seconds
    /// or a ``datetime.timedelta``; negative means 0, ``math.inf`` no
    /// deadline; NaN raises ``InvalidArgumentError``), waiting until then,
    /// and returns ``True``; returns ``False`` at once, taking nothing, if
    /// they cannot (Guava's ``tryAcquire``).
    ///
    /// A wait releases the GIL, and Ctrl-C interrupts it with the permits
    /// taken, as in ``acquire``.
    #[pyo3(
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn try_acquire(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<bool> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        match self.limiter.try_reserve(permits, timeout.duration()) {
            Ok(Some(wait)) => {
                wait::sleep(py, self.limiter.clock(), wait)?;
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(from_rust(py, e)),
        }
    }

    /// The seconds a request for ``permits`` made now would wait, taking
    /// nothing. Guava grants a request of any size at the same moment, so
    /// ``permits`` changes nothing but is checked.
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn time_until_available(&self, py: Python<'_>, permits: Permits) -> PyResult<f64> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        let wait = self.limiter.time_until_available(permits).map_err(|e| from_rust(py, e))?;
        Ok(wait_as_seconds(wait))
    }

    /// Whether ``try_acquire(permits, timeout)`` would succeed now, taking
    /// nothing.
    #[pyo3(
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn can_acquire(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<bool> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        self.limiter.can_acquire(permits, timeout.duration()).map_err(|e| from_rust(py, e))
    }

    /// The stable rate in permits per second (Guava's ``getRate``/``setRate``).
    ///
    /// Setting it keeps the waits already granted; the next request still
    /// pays for the previous one at the old rate.
    #[getter]
    fn rate(&self) -> f64 {
        self.limiter.rate()
    }

    #[setter]
    fn set_rate(&self, permits_per_second: &Bound<'_, PyAny>) -> PyResult<()> {
        let rate = args::real(permits_per_second, Argument::PermitsPerSecond)?;
        self.limiter.set_rate(rate).map_err(|e| from_rust(permits_per_second.py(), e))
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// For the ``async`` methods: takes ``permits`` now and returns the wait
    /// as ``acquire`` reports it and the seconds the event loop must still
    /// sleep (0.0 on a ``ManualClock``, which this advances by the wait).
    #[pyo3(name = "_reserve", signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn reserve_for_event_loop(&self, py: Python<'_>, permits: Permits) -> PyResult<(f64, f64)> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        let wait = self.limiter.reserve(permits).map_err(|e| from_rust(py, e))?;
        Ok((wait_as_seconds(wait), wait::for_event_loop(self.limiter.clock(), wait)))
    }

    /// For the ``async`` methods: like ``_reserve`` if the permits can be
    /// had within ``timeout``, else ``None``, taking nothing.
    #[pyo3(
        name = "_try_reserve",
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn try_reserve_for_event_loop(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<Option<f64>> {
        let permits = permits_from_i64(permits.0).map_err(|e| from_rust(py, e))?;
        let reserved = self.limiter.try_reserve(permits, timeout.duration()).map_err(|e| from_rust(py, e))?;
        Ok(reserved.map(|wait| wait::for_event_loop(self.limiter.clock(), wait)))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let name = slf.get_type().name()?;
        let shape = match this.limiter.kind() {
            SmoothKind::Bursty { max_burst_seconds } => {
                format!("max_burst_seconds={}", float_repr(py, max_burst_seconds)?)
            }
            SmoothKind::WarmingUp { warmup_micros, cold_factor } => format!(
                "warmup={}, cold_factor={}",
                float_repr(py, warmup_micros as f64 / 1e6)?,
                float_repr(py, cold_factor)?
            ),
        };
        let clock = clock::clock_repr(py, &this.clock)?;
        Ok(format!("{name}({}, {shape}{clock})", float_repr(py, this.limiter.rate())?))
    }
}
