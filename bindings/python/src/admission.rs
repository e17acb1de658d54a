//! The admission-style algorithms under their own names: each class hands
//! its constructor's arguments to the [`PyLimiter`] base, which reads them
//! as the registry's parameters ([`PyLimiter::of`]) and does the rest, adding only what its algorithm has beyond
//! `check` (a token bucket's reservations and waits, a queue's sleep, a
//! meter's level, a composite's per-part decisions).
//!
//! The package's classes (`ratekeeper.TokenBucket`, ...) subclass these to
//! add the decorator and the `async` methods.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::PyList;
use ratekeeper::{Algorithm, Argument, LimiterSpec, Reservation, NEVER};

use crate::args::{self, Cost, Deadline};
use crate::clock::{self, PyManualClock};
use crate::decision::{seconds_from_micros, PyDecision};
use crate::errors::{from_rust, internal, invalid_named, wrong_type};
use crate::limiter::PyLimiter;
use crate::wait;

/// A token bucket with the semantics of Go's ``golang.org/x/time/rate``,
/// bit for bit: ``burst`` tokens, full at creation, refilled at ``rate``
/// tokens per second (``math.inf``: no limit; 0: never refills).
///
/// ``check(n)`` takes ``n`` tokens if they are there (Go's ``AllowN``);
/// ``wait(n, timeout)`` takes them as soon as they can be had within
/// ``timeout`` and sleeps until then (``WaitN``, GIL released);
/// ``reserve(n)`` takes them from the future and says when to act
/// (``ReserveN``), and can be cancelled.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "TokenBucket")]
#[derive(Debug)]
pub struct PyTokenBucket;

#[pymethods]
impl PyTokenBucket {
    #[new]
    #[pyo3(signature = (rate, burst, *, clock=None))]
    fn new(
        rate: &Bound<'_, PyAny>,
        burst: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        Ok(PyLimiter::of(Algorithm::TokenBucket, &[rate, burst], clock)?.add_subclass(PyTokenBucket))
    }

    /// Tokens per second (Go's ``Limit``; ``math.inf`` for ``rate.Inf``).
    /// Setting it refills up to now at the old rate first (``SetLimit``).
    #[getter]
    fn rate(slf: &Bound<'_, Self>) -> PyResult<f64> {
        Ok(slf.as_super().get().token_bucket()?.rate())
    }

    #[setter]
    fn set_rate(slf: &Bound<'_, Self>, rate: &Bound<'_, PyAny>) -> PyResult<()> {
        let rate = args::real(rate, Argument::Rate)?;
        slf.as_super().get().token_bucket()?.set_rate(rate).map_err(|e| from_rust(slf.py(), e))
    }

    /// The bucket's size (Go's ``Burst``; setting it is ``SetBurst``).
    #[getter]
    fn burst(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(slf.as_super().get().token_bucket()?.burst())
    }

    #[setter]
    fn set_burst(slf: &Bound<'_, Self>, burst: &Bound<'_, PyAny>) -> PyResult<()> {
        let burst = args::count(burst, Argument::Burst)?;
        slf.as_super().get().token_bucket()?.set_burst(burst).map_err(|e| from_rust(slf.py(), e))
    }

    /// Tokens available now, a float (Go's ``Tokens``; negative while
    /// reservations are outstanding).
    #[getter]
    fn tokens(slf: &Bound<'_, Self>) -> PyResult<f64> {
        Ok(slf.as_super().get().token_bucket()?.tokens())
    }

    /// Takes ``cost`` tokens now or from the future and returns the
    /// ``Reservation`` (Go's ``ReserveN``): act after its ``delay``, or
    /// ``cancel()`` it to give the tokens back. Refused (``ok`` false,
    /// nothing taken) when ``cost`` is above the burst.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn reserve(slf: &Bound<'_, Self>, cost: Cost) -> PyResult<PyReservation> {
        let reservation = slf.as_super().get().token_bucket()?.reserve_n(cost.0);
        Ok(PyReservation { bucket: slf.as_super().clone().unbind(), reservation: Mutex::new(reservation) })
    }

    /// Takes ``cost`` tokens if they can be had within ``timeout`` (seconds
    /// or a ``timedelta``; ``None``, the default, waits as long as it
    /// takes), sleeps until they are due and returns the ``Decision`` (its
    /// ``wait`` is the time slept); otherwise returns the refusal at once,
    /// taking nothing (Go's ``WaitN`` with a deadline).
    ///
    /// The sleep releases the GIL; Ctrl-C interrupts it, and the tokens stay
    /// taken, as a ``RateLimiter``'s interrupted ``acquire`` keeps its
    /// permits (``reserve`` and ``Reservation.cancel`` give tokens back). On
    /// a ``ManualClock`` the clock moves by the wait instead.
    #[pyo3(signature = (cost = Cost::ONE, timeout = Deadline::NONE), text_signature = "($self, cost=1, timeout=None)")]
    fn wait(slf: &Bound<'_, Self>, cost: Cost, timeout: Deadline) -> PyResult<PyDecision> {
        let bucket = slf.as_super().get().token_bucket()?;
        let decision = bucket.reserve_within(cost.0, timeout.duration());
        if decision.allowed {
            wait::sleep_micros(slf.py(), bucket.clock(), decision.wait_micros)?;
        }
        Ok(PyDecision(decision))
    }

    /// For ``wait_async``: ``wait`` without the sleep, returning the decision
    /// and the seconds the event loop must sleep (0.0 on a ``ManualClock``,
    /// which this advances by the wait).
    #[pyo3(
        name = "_reserve_within",
        signature = (cost = Cost::ONE, timeout = Deadline::NONE),
        text_signature = "($self, cost=1, timeout=None)"
    )]
    fn reserve_within(slf: &Bound<'_, Self>, cost: Cost, timeout: Deadline) -> PyResult<(PyDecision, f64)> {
        let bucket = slf.as_super().get().token_bucket()?;
        let decision = bucket.reserve_within(cost.0, timeout.duration());
        let to_sleep =
            if decision.allowed { wait::for_event_loop_micros(bucket.clock(), decision.wait_micros) } else { 0.0 };
        Ok((PyDecision(decision), to_sleep))
    }
}

/// Tokens taken from a ``TokenBucket`` by ``reserve``: Go's
/// ``Reservation``.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "Reservation")]
#[derive(Debug)]
pub struct PyReservation {
    bucket: Py<PyLimiter>,
    reservation: Mutex<Reservation>,
}

impl PyReservation {
    fn get(&self) -> Reservation {
        *self.reservation.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn delay_micros_now(&self) -> PyResult<i64> {
        let bucket = self.bucket.get().token_bucket()?;
        Ok(i64::try_from(bucket.delay(&self.get()).as_micros()).unwrap_or(NEVER))
    }
}

#[pymethods]
impl PyReservation {
    /// Whether the tokens were granted (Go's ``OK``). A refused reservation
    /// took nothing.
    #[getter]
    fn ok(&self) -> bool {
        self.get().ok()
    }

    /// Tokens held: 0 when refused or cancelled.
    #[getter]
    fn tokens(&self) -> u64 {
        self.get().tokens()
    }

    /// Seconds from now until the holder may act (0.0: now; ``math.inf``
    /// when refused). Go's ``Delay``.
    #[getter]
    fn delay(&self) -> PyResult<f64> {
        Ok(seconds_from_micros(self.delay_micros_now()?))
    }

    /// ``delay`` in whole microseconds, rounded up (never: ``2**63 - 1``).
    #[getter]
    fn delay_micros(&self) -> PyResult<i64> {
        self.delay_micros_now()
    }

    /// Gives the tokens back, as many as later reservations allow, if the
    /// time to act has not come yet (Go's ``Cancel``). A second call does
    /// nothing.
    fn cancel(&self) -> PyResult<()> {
        let bucket = self.bucket.get().token_bucket()?;
        let mut reservation = self.reservation.lock().unwrap_or_else(PoisonError::into_inner);
        bucket.cancel(&mut reservation);
        Ok(())
    }

    fn __repr__(&self) -> PyResult<String> {
        let r = self.get();
        Ok(format!(
            "<Reservation ok={} tokens={} delay_micros={}>",
            if r.ok() { "True" } else { "False" },
            r.tokens(),
            self.delay_micros_now()?
        ))
    }
}

/// GCRA, the generic cell rate algorithm, with redis-cell's
/// ``CL.THROTTLE key max_burst count_per_period period``: ``count_per_period``
/// units per ``period`` (seconds or a ``timedelta``), and ``max_burst + 1``
/// (``limit``) at once. One number of state.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "Gcra")]
#[derive(Debug)]
pub struct PyGcra;

#[pymethods]
impl PyGcra {
    #[new]
    #[pyo3(signature = (max_burst, count_per_period, period, *, clock=None))]
    fn new(
        max_burst: &Bound<'_, PyAny>,
        count_per_period: &Bound<'_, PyAny>,
        period: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        Ok(PyLimiter::of(Algorithm::Gcra, &[max_burst, count_per_period, period], clock)?.add_subclass(PyGcra))
    }

    /// redis-cell's ``limit``: ``max_burst + 1``, the most units admitted
    /// at once.
    #[getter]
    fn limit(slf: &Bound<'_, Self>) -> u64 {
        match slf.as_super().get().current_spec() {
            Some(LimiterSpec::Gcra { max_burst, .. }) => max_burst.saturating_add(1),
            _ => 0,
        }
    }
}

/// The leaky bucket as a meter (ITU-T I.371's continuous-state leaky
/// bucket): ``capacity`` units that leak ``count_per_period`` per
/// ``period``; a request that would overflow is refused, taking nothing.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "LeakyBucketMeter")]
#[derive(Debug)]
pub struct PyLeakyBucketMeter;

#[pymethods]
impl PyLeakyBucketMeter {
    #[new]
    #[pyo3(signature = (capacity, count_per_period, period, *, clock=None))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        count_per_period: &Bound<'_, PyAny>,
        period: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let arguments = [capacity, count_per_period, period];
        Ok(PyLimiter::of(Algorithm::LeakyBucketMeter, &arguments, clock)?.add_subclass(PyLeakyBucketMeter))
    }

    /// The water level now, in whole units.
    #[getter]
    fn level(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(slf.as_super().get().meter()?.level())
    }
}

/// The leaky bucket as a queue (a shaper): one unit leaves every
/// ``interval``. Each admitted request gets the next free slot: ``check``'s
/// decision says how long to wait for it (``wait``), ``acquire`` sleeps
/// until then. A request whose slot lies more than ``capacity`` units away
/// is refused (``limit`` is ``capacity + 1``). With ``slack`` (uber-go's
/// ``WithSlack``), up to ``slack`` slots left unused while idle are handed
/// out late: after a pause, up to ``slack + 1`` requests go at once. None
/// are saved before the first request.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "LeakyBucketQueue")]
#[derive(Debug)]
pub struct PyLeakyBucketQueue;

#[pymethods]
impl PyLeakyBucketQueue {
    #[new]
    #[pyo3(
        signature = (capacity, interval, slack=None, *, clock=None),
        text_signature = "(capacity, interval, slack=0, *, clock=None)"
    )]
    fn new(
        capacity: &Bound<'_, PyAny>,
        interval: &Bound<'_, PyAny>,
        slack: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let arguments = match slack {
            Some(slack) => vec![capacity, interval, slack],
            None => vec![capacity, interval],
        };
        Ok(PyLimiter::of(Algorithm::LeakyBucketQueue, &arguments, clock)?.add_subclass(PyLeakyBucketQueue))
    }

    /// Takes a slot for ``cost`` units and sleeps until it comes (the GIL
    /// released; Ctrl-C interrupts it, the slot staying taken; on a
    /// ``ManualClock`` the clock moves instead); returns the ``Decision``,
    /// whose ``wait`` is the time slept. A refusal returns at once, taking
    /// nothing.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn acquire(slf: &Bound<'_, Self>, cost: Cost) -> PyResult<PyDecision> {
        let queue = slf.as_super().get().queue()?;
        let decision = queue.check(cost.0);
        if decision.allowed {
            wait::sleep_micros(slf.py(), queue.clock(), decision.wait_micros)?;
        }
        Ok(PyDecision(decision))
    }

    /// For ``acquire_async``: takes the slot and returns the decision and the
    /// seconds the event loop must sleep (0.0 on a ``ManualClock``, which
    /// this advances by the wait).
    #[pyo3(name = "_reserve", signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn reserve_for_event_loop(slf: &Bound<'_, Self>, cost: Cost) -> PyResult<(PyDecision, f64)> {
        let queue = slf.as_super().get().queue()?;
        let decision = queue.check(cost.0);
        let to_sleep =
            if decision.allowed { wait::for_event_loop_micros(queue.clock(), decision.wait_micros) } else { 0.0 };
        Ok((PyDecision(decision), to_sleep))
    }
}

/// A window's ``limit`` getter: the units per window now.
fn window_limit(base: &Bound<'_, PyLimiter>) -> PyResult<u64> {
    base.get().window()?.window_limit().ok_or_else(|| internal("this limiter is not a window"))
}

/// A window's ``limit`` setter: the window's `set_limit`, keeping what it
/// has counted; an invalid limit raises, changing nothing.
fn set_window_limit(base: &Bound<'_, PyLimiter>, limit: &Bound<'_, PyAny>) -> PyResult<()> {
    let limit = args::count(limit, Argument::Limit)?;
    let changed =
        base.get().window()?.set_window_limit(limit).ok_or_else(|| internal("this limiter is not a window"))?;
    changed.map_err(|e| from_rust(base.py(), e))
}

/// At most ``limit`` units per fixed window of ``window`` (seconds or a
/// ``timedelta``), windows aligned to the limiter's creation. The
/// cheapest; up to ``2 * limit`` across a window boundary.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "FixedWindow")]
#[derive(Debug)]
pub struct PyFixedWindow;

#[pymethods]
impl PyFixedWindow {
    #[new]
    #[pyo3(signature = (limit, window, *, clock=None))]
    fn new(
        limit: &Bound<'_, PyAny>,
        window: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        Ok(PyLimiter::of(Algorithm::FixedWindow, &[limit, window], clock)?.add_subclass(PyFixedWindow))
    }

    /// Units per window. Setting it keeps what the window has counted: a
    /// lower limit refuses until the count is under it, a higher one
    /// admits the difference at once.
    #[getter]
    fn limit(slf: &Bound<'_, Self>) -> PyResult<u64> {
        window_limit(slf.as_super())
    }

    #[setter]
    fn set_limit(slf: &Bound<'_, Self>, limit: &Bound<'_, PyAny>) -> PyResult<()> {
        set_window_limit(slf.as_super(), limit)
    }
}

/// At most ``limit`` units in the last ``sub_windows`` sub-windows (1 to
/// 16, dividing ``window`` in whole microseconds; 10 unless given): a ring
/// of counters.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "SlidingWindow")]
#[derive(Debug)]
pub struct PySlidingWindow;

#[pymethods]
impl PySlidingWindow {
    #[new]
    #[pyo3(
        signature = (limit, window, sub_windows=None, *, clock=None),
        text_signature = "(limit, window, sub_windows=10, *, clock=None)"
    )]
    fn new(
        limit: &Bound<'_, PyAny>,
        window: &Bound<'_, PyAny>,
        sub_windows: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let arguments = match sub_windows {
            Some(sub_windows) => vec![limit, window, sub_windows],
            None => vec![limit, window],
        };
        Ok(PyLimiter::of(Algorithm::SlidingWindow, &arguments, clock)?.add_subclass(PySlidingWindow))
    }

    /// Units per window. Setting it keeps what the window has counted: a
    /// lower limit refuses until the count is under it, a higher one
    /// admits the difference at once.
    #[getter]
    fn limit(slf: &Bound<'_, Self>) -> PyResult<u64> {
        window_limit(slf.as_super())
    }

    #[setter]
    fn set_limit(slf: &Bound<'_, Self>, limit: &Bound<'_, PyAny>) -> PyResult<()> {
        set_window_limit(slf.as_super(), limit)
    }
}

/// Exactly ``limit`` units in any window of ``window``: the sliding log
/// (memory in proportion to ``limit``, at most ``MAX_SLIDING_LOG_LIMIT``).
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "SlidingLog")]
#[derive(Debug)]
pub struct PySlidingLog;

#[pymethods]
impl PySlidingLog {
    #[new]
    #[pyo3(signature = (limit, window, *, clock=None))]
    fn new(
        limit: &Bound<'_, PyAny>,
        window: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        Ok(PyLimiter::of(Algorithm::SlidingLog, &[limit, window], clock)?.add_subclass(PySlidingLog))
    }

    /// Units per window. Setting it keeps what the window has counted: a
    /// lower limit refuses until the count is under it, a higher one
    /// admits the difference at once.
    #[getter]
    fn limit(slf: &Bound<'_, Self>) -> PyResult<u64> {
        window_limit(slf.as_super())
    }

    #[setter]
    fn set_limit(slf: &Bound<'_, Self>, limit: &Bound<'_, PyAny>) -> PyResult<()> {
        set_window_limit(slf.as_super(), limit)
    }
}

/// About ``limit`` units per sliding ``window``: the weighted two-window
/// approximation (two counters).
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "SlidingWindowCounter")]
#[derive(Debug)]
pub struct PySlidingWindowCounter;

#[pymethods]
impl PySlidingWindowCounter {
    #[new]
    #[pyo3(signature = (limit, window, *, clock=None))]
    fn new(
        limit: &Bound<'_, PyAny>,
        window: &Bound<'_, PyAny>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        Ok(PyLimiter::of(Algorithm::SlidingWindowCounter, &[limit, window], clock)?
            .add_subclass(PySlidingWindowCounter))
    }

    /// Units per window. Setting it keeps what the window has counted: a
    /// lower limit refuses until the count is under it, a higher one
    /// admits the difference at once.
    #[getter]
    fn limit(slf: &Bound<'_, Self>) -> PyResult<u64> {
        window_limit(slf.as_super())
    }

    #[setter]
    fn set_limit(slf: &Bound<'_, Self>, limit: &Bound<'_, PyAny>) -> PyResult<()> {
        set_window_limit(slf.as_super(), limit)
    }
}

/// Several limits on one thing — "10 per second *and* 1,000 per hour" —
/// that must all admit a request; a refusal by any takes nothing from any.
///
/// ``limits`` are admission-style limiters used as templates: the
/// composite builds its own parts from their parameters (their state is
/// neither copied nor shared). It runs on ``clock``, by default the clock
/// its templates share.
#[pyclass(frozen, extends = PyLimiter, subclass, module = "ratekeeper._ratekeeper", name = "CompositeLimiter")]
#[derive(Debug)]
pub struct PyCompositeLimiter;

#[pymethods]
impl PyCompositeLimiter {
    #[new]
    #[pyo3(signature = (limits, *, clock=None))]
    fn new(limits: &Bound<'_, PyAny>, clock: Option<&Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        const EXPECTED: &str = "an iterable of limiters of one algorithm (TokenBucket, Gcra, FixedWindow, ...)";
        let py = limits.py();
        let iter = limits.try_iter().map_err(|_| wrong_type("limits", limits, EXPECTED))?;
        let mut specs = Vec::new();
        let mut clocks: Vec<Option<Py<PyManualClock>>> = Vec::new();
        for item in iter {
            let item = item?;
            let part = item.cast::<PyLimiter>().map_err(|_| wrong_type("limits", &item, EXPECTED))?.get();
            let spec = part.current_spec().ok_or_else(|| wrong_type("limits", &item, EXPECTED))?;
            specs.push(spec);
            clocks.push(part.clock.as_ref().map(|c| c.clone_ref(py)));
        }
        let (any_clock, clock) = match clock {
            Some(obj) if !obj.is_none() => clock::clock_arg(Some(obj))?,
            _ => {
                let first = clocks.first().and_then(|c| c.as_ref());
                let same = clocks.iter().all(|c| c.as_ref().map(Py::as_ptr) == first.map(Py::as_ptr));
                if !same {
                    return Err(invalid_named(
                        "limits",
                        limits,
                        "must run on one clock, or the composite be given clock=",
                    ));
                }
                match first {
                    Some(manual) => clock::clock_arg(Some(manual.bind(py).as_any()))?,
                    None => clock::clock_arg(None)?,
                }
            }
        };
        Ok(PyLimiter::all(py, &specs, any_clock, clock)?.add_subclass(PyCompositeLimiter))
    }

    /// ``check(cost)``, with each part's own decision too, in the order of
    /// ``limits``: one ``RateLimit`` item per policy
    /// (``ratekeeper.ratelimit_header``). When the request is refused, the
    /// parts that would have admitted it show their state untouched.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn check_each<'py>(slf: &Bound<'py, Self>, cost: Cost) -> PyResult<(PyDecision, Bound<'py, PyList>)> {
        let (combined, parts) = slf.as_super().get().composite()?.check_each(cost.0);
        let parts = PyList::new(slf.py(), parts.into_iter().map(PyDecision))?;
        Ok((PyDecision(combined), parts))
    }
}
