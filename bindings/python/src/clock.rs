//! `ratekeeper.ManualClock`: the Rust [`ManualClock`], shared with the
//! limiters built on it.

use std::sync::Arc;

use pyo3::prelude::*;
use ratekeeper::{AnyClock, ManualClock};

use crate::args;
use crate::errors::wrong_type;

/// A limiter's `clock=` argument: `None` for real time (the monotonic
/// clock) or a [`PyManualClock`], which the limiter keeps to return it from
/// its `clock` property.
pub fn clock_arg(clock: Option<&Bound<'_, PyAny>>) -> PyResult<(AnyClock, Option<Py<PyManualClock>>)> {
    match clock {
        None => Ok((AnyClock::default(), None)),
        Some(obj) if obj.is_none() => Ok((AnyClock::default(), None)),
        Some(obj) => match obj.cast::<PyManualClock>() {
            Ok(manual) => Ok((AnyClock::Manual(manual.get().clock.clone()), Some(manual.clone().unbind()))),
            Err(_) => Err(wrong_type("clock", obj, "a ratekeeper.ManualClock or None")),
        },
    }
}

/// `, clock=ManualClock(now=...)` for a limiter's `repr`, or nothing.
pub fn clock_repr(py: Python<'_>, clock: &Option<Py<PyManualClock>>) -> PyResult<String> {
    match clock {
        Some(clock) => Ok(format!(", clock={}", clock.bind(py).repr()?)),
        None => Ok(String::new()),
    }
}

/// A clock that moves only when told to, for deterministic tests.
///
/// Pass it as ``clock=`` to a limiter: the limiter then reads its time from
/// this clock, and every wait it would sleep advances the clock instead, so
/// ``acquire()`` returns at once with the wait it would have slept, and
/// ``acquire_async()`` never sleeps on the event loop. The clock starts at 0
/// and counts whole microseconds.
///
/// >>> clock = ManualClock()
/// >>> limiter = RateLimiter.create(2.0, clock=clock)
/// >>> limiter.acquire(), limiter.acquire()
/// (0.0, 0.5)
/// >>> clock.now
/// 0.5
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "ManualClock")]
#[derive(Debug)]
pub struct PyManualClock {
    pub(crate) clock: Arc<ManualClock>,
}

#[pymethods]
impl PyManualClock {
    #[new]
    fn new() -> Self {
        PyManualClock { clock: Arc::new(ManualClock::new()) }
    }

    /// Moves the clock forward by ``seconds`` (a number of seconds or a
    /// ``datetime.timedelta``; truncated to whole microseconds). A clock
    /// never goes back, and the move is a duration like any other: a
    /// negative, NaN or infinite value, or one of ``2**63`` microseconds or
    /// more, raises ``InvalidArgumentError``.
    fn advance(&self, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let micros = args::advance_micros(seconds)?;
        self.clock.advance_micros(micros);
        Ok(())
    }

    /// The time since the clock was created, in seconds.
    #[getter]
    fn now(&self) -> f64 {
        ratekeeper::wait_as_seconds(self.clock.now())
    }

    /// The time since the clock was created, in whole microseconds (exact).
    #[getter]
    fn now_micros(&self) -> i64 {
        i64::try_from(self.clock.now().as_micros()).unwrap_or(i64::MAX)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ManualClock(now={})", crate::float_repr(py, self.now())?))
    }
}
