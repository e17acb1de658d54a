//! `ratekeeper.RedisRateLimiter`: Guava's `RateLimiter` shared by many
//! processes through Redis (`ratekeeper_redis::RedisRateLimiter`), with the
//! arguments, names and waits of the local `RateLimiter`: blocking calls
//! reserve with the GIL released and sleep as `RateLimiter.acquire` does
//! (interruptible by Ctrl-C); the `async` ones await the crate's callback
//! forms and sleep with `asyncio.sleep`.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyString};
use ratekeeper::core::smooth::permits_from_i64;
use ratekeeper::{wait_as_seconds, Argument};
use ratekeeper_redis::{RateLimiterState, RedisOption, RedisRateLimiter, RedisStore};

use super::store::{store_arg, PyRedisStore};
use super::{Close, Held, Pending};
use crate::args::{self, Permits, Timeout};
use crate::errors::{from_redis, from_rust, wrong_type};
use crate::wait;

/// Seconds as a Python float (the futures' results).
fn seconds_object(py: Python<'_>, wait: Duration) -> PyResult<Bound<'_, PyAny>> {
    Ok(PyFloat::new(py, wait_as_seconds(wait)).into_any())
}

/// Guava's ``RateLimiter`` shared by every process that uses the same
/// ``name`` on the same Redis: ``acquire``/``try_acquire`` from any number
/// of processes give the waits one Guava limiter would give for the same
/// sequence of calls (each call is one atomic script run at the server's
/// time).
///
/// Made with ``RedisRateLimiter.create(store, name, permits_per_second,
/// warmup=None, ...)``, with the arguments of ``RateLimiter.create``: the
/// first process creates the shared state, later ones join it and keep its
/// rate and parameters. ``idle_ttl`` (seconds, above 0) lets the state
/// expire after that long unused (default: never; one recreated afterwards
/// starts afresh, as a new Guava limiter does).
///
/// The methods are those of ``RateLimiter``; each is a round trip (GIL
/// released; at most the store's ``timeout``) and may raise
/// ``RedisUnavailableError`` or ``RedisTimeoutError``. ``acquire`` sleeps
/// its wait as ``RateLimiter.acquire`` does; the ``…_async`` methods never
/// block the event loop. ``close()`` (or leaving a ``with`` or ``async
/// with`` block, or closing the store) releases the limiter; later calls
/// raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisRateLimiter")]
#[derive(Debug)]
pub struct PyRedisRateLimiter {
    limiter: Arc<Held<RedisRateLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
}

fn permits_arg(py: Python<'_>, permits: Permits) -> PyResult<u32> {
    permits_from_i64(permits.0).map_err(|e| from_rust(py, e))
}

/// A ``RedisRateLimiter``'s shared state as ``inspect`` reads it, at the
/// server's time of the read.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "RedisRateLimiterState")]
#[derive(Debug, Clone, Copy)]
pub struct PyRedisRateLimiterState(RateLimiterState);

#[pymethods]
impl PyRedisRateLimiterState {
    /// Permits per second (``rate``).
    #[getter]
    fn rate(&self) -> f64 {
        self.0.rate
    }

    /// The permits stored now (Guava's ``storedPermits``, brought up to now).
    #[getter]
    fn stored_permits(&self) -> f64 {
        self.0.stored_permits
    }

    /// The most permits that can be stored (``maxPermits``).
    #[getter]
    fn max_permits(&self) -> f64 {
        self.0.max_permits
    }

    /// Seconds until the next permit is free: what ``reserve`` made now
    /// would wait (0.0 when one is free).
    #[getter]
    fn time_until_available(&self) -> f64 {
        wait_as_seconds(self.0.time_until_available)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RedisRateLimiterState(rate={}, stored_permits={}, max_permits={}, time_until_available={})",
            crate::float_repr(py, self.0.rate)?,
            crate::float_repr(py, self.0.stored_permits)?,
            crate::float_repr(py, self.0.max_permits)?,
            crate::float_repr(py, wait_as_seconds(self.0.time_until_available))?,
        ))
    }
}

fn state_object(py: Python<'_>, state: RateLimiterState) -> PyResult<Bound<'_, PyAny>> {
    Ok(PyRedisRateLimiterState(state).into_pyobject(py)?.into_any())
}

#[pymethods]
impl PyRedisRateLimiter {
    /// Connects to the shared limiter ``name``, creating it unless another
    /// process has; prefer ``RedisRateLimiter.create``.
    #[new]
    #[pyo3(signature = (
        store, name, permits_per_second, warmup = None, *, max_burst_seconds = None, cold_factor = None,
        idle_ttl = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        permits_per_second: &Bound<'_, PyAny>,
        warmup: Option<&Bound<'_, PyAny>>,
        max_burst_seconds: Option<&Bound<'_, PyAny>>,
        cold_factor: Option<&Bound<'_, PyAny>>,
        idle_ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let rate = args::real(permits_per_second, Argument::PermitsPerSecond)?;
        let mut builder = RedisRateLimiter::builder(&name, rate);
        match warmup.filter(|w| !w.is_none()) {
            None => {
                if let Some(cold_factor) = cold_factor {
                    return Err(wrong_type("cold_factor", cold_factor, "None for a limiter without a warmup"));
                }
                if let Some(obj) = max_burst_seconds {
                    builder = builder.max_burst_seconds(args::real(obj, Argument::MaxBurstSeconds)?);
                }
            }
            Some(warmup) => {
                if let Some(max_burst_seconds) = max_burst_seconds {
                    return Err(wrong_type("max_burst_seconds", max_burst_seconds, "None for a limiter with a warmup"));
                }
                builder = builder.warmup(Duration::from_micros(args::warmup_micros(warmup)? as u64));
                if let Some(obj) = cold_factor {
                    builder = builder.cold_factor(args::real(obj, Argument::ColdFactor)?);
                }
            }
        }
        if let Some(ttl) = idle_ttl.filter(|t| !t.is_none()) {
            builder = builder.idle_ttl(args::redis_option(ttl, RedisOption::IdleTtl)?);
        }
        let shared = store.get().get(py)?;
        let limiter = py.detach(|| builder.connect(&shared)).map_err(|e| from_redis(py, e))?;
        Ok(PyRedisRateLimiter {
            limiter: Held::adopted(limiter, "RedisRateLimiter", store.get()),
            store: store.clone().unbind(),
            name,
        })
    }

    /// Takes ``permits``, blocking until they are granted, and returns the
    /// seconds spent waiting (Guava's ``acquire``). The round trip and the
    /// wait release the GIL; Ctrl-C interrupts the wait, and the permits
    /// stay taken, as ``RateLimiter.acquire``'s do (reserved before the
    /// wait, as Guava reserves them).
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn acquire(&self, py: Python<'_>, permits: Permits) -> PyResult<f64> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let wait = py.detach(|| limiter.reserve(permits)).map_err(|e| from_redis(py, e))?;
        wait::sleep_for_real(py, wait)?;
        Ok(wait_as_seconds(wait))
    }

    /// Takes ``permits`` if they can be granted within ``timeout`` (seconds
    /// or a ``timedelta``), waiting until then, and returns ``True``;
    /// returns ``False`` at once, taking nothing, if they cannot (Guava's
    /// ``tryAcquire``). The wait releases the GIL, and Ctrl-C interrupts it
    /// with the permits taken, as in ``acquire``.
    #[pyo3(
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn try_acquire(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<bool> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        match py.detach(|| limiter.try_reserve(permits, timeout.duration())).map_err(|e| from_redis(py, e))? {
            Some(wait) => {
                wait::sleep_for_real(py, wait)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The seconds a request made now would wait, taking nothing
    /// (``permits`` is checked; Guava grants any size at the same moment).
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn time_until_available(&self, py: Python<'_>, permits: Permits) -> PyResult<f64> {
        permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.time_until_available()).map(wait_as_seconds).map_err(|e| from_redis(py, e))
    }

    /// The shared state as of now — ``rate``, ``stored_permits``,
    /// ``max_permits``, ``time_until_available`` — writing nothing (a state
    /// deleted by ``reset`` reads as the new limiter the next call makes).
    /// One round trip, GIL released.
    fn inspect(&self, py: Python<'_>) -> PyResult<PyRedisRateLimiterState> {
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.inspect()).map(PyRedisRateLimiterState).map_err(|e| from_redis(py, e))
    }

    /// For ``inspect_async``: a future of the state.
    #[pyo3(name = "_inspect_future")]
    fn inspect_future(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.inspect_with(move |answer| pending.settle(answer, state_object));
        Ok(future)
    }

    /// Deletes the shared state (whether there was one): every process's
    /// next call finds a new limiter — no stored permits, created with the
    /// rate and parameters of the process that makes it (a ``rate`` set
    /// since is forgotten).
    fn reset(&self, py: Python<'_>) -> PyResult<bool> {
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.reset()).map_err(|e| from_redis(py, e))
    }

    /// For ``reset_async``: a future of ``reset``'s answer.
    #[pyo3(name = "_reset_future")]
    fn reset_future(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.reset_with(move |answer| pending.settle(answer, super::bool_object));
        Ok(future)
    }

    /// Whether ``try_acquire(permits, timeout)`` would succeed now, taking
    /// nothing.
    #[pyo3(
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn can_acquire(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<bool> {
        permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.can_acquire(timeout.duration())).map_err(|e| from_redis(py, e))
    }

    /// The stable rate in permits per second, for every process sharing the
    /// limiter (Guava's ``getRate``/``setRate``; each a round trip).
    #[getter]
    fn rate(&self, py: Python<'_>) -> PyResult<f64> {
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.rate()).map_err(|e| from_redis(py, e))
    }

    #[setter]
    fn set_rate(&self, permits_per_second: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = permits_per_second.py();
        let rate = args::real(permits_per_second, Argument::PermitsPerSecond)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.set_rate(rate)).map_err(|e| from_redis(py, e))
    }

    /// The limiter's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The Redis key holding the shared state.
    #[getter]
    fn key(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.limiter.get(py)?.key().to_owned())
    }

    /// The store the limiter talks through.
    #[getter]
    fn store(&self, py: Python<'_>) -> Py<PyRedisStore> {
        self.store.clone_ref(py)
    }

    /// Whether ``close()`` (or the store's) was called.
    #[getter]
    fn closed(&self) -> bool {
        self.limiter.is_closed()
    }

    /// Releases the limiter now: later calls raise ``ClosedError`` (calls
    /// already waiting for Redis complete; the shared state stays in
    /// Redis). Closing twice does nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.limiter.close());
    }

    /// For ``acquire_async``: a future of the seconds to wait, the permits
    /// taken.
    #[pyo3(name = "_reserve_future", signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn reserve_future(&self, py: Python<'_>, permits: Permits) -> PyResult<Py<PyAny>> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.reserve_with(permits, move |answer| pending.settle(answer, seconds_object));
        Ok(future)
    }

    /// For ``try_acquire_async``: a future of the seconds to wait when the
    /// permits were taken, else ``None``.
    #[pyo3(
        name = "_try_reserve_future",
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn try_reserve_future(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<Py<PyAny>> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.try_reserve_with(permits, timeout.duration(), move |answer| {
            pending.settle(answer, |py, wait| match wait {
                Some(wait) => seconds_object(py, wait),
                None => Ok(py.None().into_bound(py)),
            })
        });
        Ok(future)
    }

    /// For ``time_until_available_async``.
    #[pyo3(
        name = "_time_until_available_future",
        signature = (permits = Permits::ONE),
        text_signature = "($self, permits=1)"
    )]
    fn time_until_available_future(&self, py: Python<'_>, permits: Permits) -> PyResult<Py<PyAny>> {
        permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        RedisStore::spawn_with(async move { limiter.time_until_available_async().await }, move |answer| {
            pending.settle(answer, seconds_object)
        });
        Ok(future)
    }

    /// For ``can_acquire_async``.
    #[pyo3(
        name = "_can_acquire_future",
        signature = (permits = Permits::ONE, timeout = Timeout::ZERO),
        text_signature = "($self, permits=1, timeout=0.0)"
    )]
    fn can_acquire_future(&self, py: Python<'_>, permits: Permits, timeout: Timeout) -> PyResult<Py<PyAny>> {
        permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        let timeout = timeout.duration();
        RedisStore::spawn_with(async move { limiter.can_acquire_async(timeout).await }, move |answer| {
            pending.settle(answer, |py, can| Ok(pyo3::types::PyBool::new(py, can).to_owned().into_any()))
        });
        Ok(future)
    }

    /// For ``get_rate_async``.
    #[pyo3(name = "_rate_future")]
    fn rate_future(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        RedisStore::spawn_with(async move { limiter.rate_async().await }, move |answer| {
            pending.settle(answer, |py, rate| Ok(PyFloat::new(py, rate).into_any()))
        });
        Ok(future)
    }

    /// For ``set_rate_async``.
    #[pyo3(name = "_set_rate_future")]
    fn set_rate_future(&self, permits_per_second: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = permits_per_second.py();
        let rate = args::real(permits_per_second, Argument::PermitsPerSecond)?;
        let limiter = self.limiter.get(py)?;
        // The local limiter's check, raised here rather than from the future.
        ratekeeper::core::SmoothRateLimiter::bursty(rate, 0.0).map_err(|e| from_rust(py, e))?;
        let (pending, future) = Pending::new(py)?;
        RedisStore::spawn_with(async move { limiter.set_rate_async(rate).await }, move |answer| {
            pending.settle(answer, |py, ()| Ok(py.None().into_bound(py)))
        });
        Ok(future)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        Ok(format!("<{} {}>", slf.get_type().name()?, PyString::new(py, &this.name).repr()?))
    }
}
