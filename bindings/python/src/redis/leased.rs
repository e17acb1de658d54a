//! Leased mode (`RedisLeasedLimiter`): one round trip takes a batch of a
//! key's shared units, which this process then admits locally. Made from a
//! template limiter (a `Gcra` or a `TokenBucket`); keys are as exact
//! mode's.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper::{Argument, LimiterSpec};
use ratekeeper_redis::RedisLeasedLimiter;

use super::store::{store_arg, PyRedisStore};
use super::{decision_object, Close, Held, Pending};
use crate::args::{self, Cost};
use crate::decision::PyDecision;
use crate::errors::{from_redis, from_redis_passed};
use crate::float_repr;
use crate::limiter::{spec_repr, template_spec};

/// Leased mode: one round trip takes up to ``batch`` units of a key's
/// shared limit (a lease), which this process then admits locally, with no
/// round trip, until it runs out or ``lease`` (seconds or a ``timedelta``)
/// has passed; units left then are lost.
///
/// Every unit admitted was first taken from the shared limit, so the total
/// never exceeds it; what moves is *when*: in any interval ``T`` the
/// processes together admit at most ``rate × (T + lease) + burst``, and each
/// may lose up to ``batch`` units per lease. ``template`` is a ``Gcra`` or a
/// ``TokenBucket`` (others raise ``UnsupportedError``); ``batch`` is from 1
/// to its limit. An admission from the lease has the units left in it as
/// ``remaining``. Keys are as a ``RedisLimiter``'s, of at most
/// ``max_key_bytes`` bytes. ``close()`` (or leaving a ``with`` or ``async
/// with`` block, or closing the store) releases the limiter; later calls
/// raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisLeasedLimiter")]
#[derive(Debug)]
pub struct PyRedisLeasedLimiter {
    limiter: Arc<Held<RedisLeasedLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
    spec: LimiterSpec,
    batch: u64,
    lease: Duration,
}

#[pymethods]
impl PyRedisLeasedLimiter {
    #[new]
    #[pyo3(signature = (store, name, template, *, batch, lease, max_key_bytes = None))]
    #[pyo3(text_signature = "(store, name, template, *, batch, lease, max_key_bytes=256)")]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        template: &Bound<'_, PyAny>,
        batch: &Bound<'_, PyAny>,
        lease: &Bound<'_, PyAny>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let spec = template_spec(template)?;
        let max_key_bytes = args::max_key_bytes(max_key_bytes)?;
        let batch_count = args::count(batch, Argument::Batch)?;
        let lease_micros = args::duration_micros(lease, Argument::Lease)?;
        let lease_duration = Duration::from_micros(lease_micros as u64);
        let limiter = RedisLeasedLimiter::new(&store.get().get(py)?, &name, spec, batch_count, lease_duration)
            .map_err(|e| from_redis_passed(py, e, &[(Argument::Lease, lease)]))?
            .max_key_bytes(max_key_bytes);
        Ok(PyRedisLeasedLimiter {
            limiter: Held::adopted(limiter, "RedisLeasedLimiter", store.get()),
            store: store.clone().unbind(),
            name,
            spec,
            batch: batch_count,
            lease: lease_duration,
        })
    }

    /// Admits ``cost`` units for ``key`` from this process's lease, or
    /// takes a new lease (one round trip, GIL released) when it holds too
    /// few.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.check(key.as_bytes(), cost.0)).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// The ``Decision`` ``check(key, cost)`` would make now in this
    /// process, taking nothing: from this process's lease when it holds
    /// ``cost`` (no round trip), else Redis's shared state plus that lease —
    /// the lease the check would take, computed without taking it. Other
    /// processes' leases are not seen (taken from the shared state already).
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.peek(key.as_bytes(), cost.0)).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// For ``peek_async``: as ``_check_future``.
    #[pyo3(name = "_peek_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.peek_with(key, cost.0, move |answer| pending.settle(answer, decision_object));
        Ok(future)
    }

    /// Forgets ``key``: deletes its shared state in Redis and drops this
    /// process's lease on it; whether Redis held a state. Other processes
    /// spend the leases they hold: each may still admit up to ``batch``
    /// units for the key within its lease's lifetime.
    #[pyo3(text_signature = "($self, key)")]
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.remove(key.as_bytes())).map_err(|e| from_redis(py, e))
    }

    /// For ``remove_async``: a future of ``remove``'s answer.
    #[pyo3(name = "_remove_future", text_signature = "($self, key)")]
    fn remove_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.remove_with(key, move |answer| pending.settle(answer, super::bool_object));
        Ok(future)
    }

    /// For ``check_async``: an ``asyncio.Future`` of the running loop that
    /// the decision settles (at once when the lease decides).
    #[pyo3(name = "_check_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.check_with(key, cost.0, move |answer| pending.settle(answer, decision_object));
        Ok(future)
    }

    /// The limiter's name (shared with every process using it).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// ``"gcra"`` or ``"token_bucket"``.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.spec.algorithm()
    }

    /// The most units one round trip takes.
    #[getter]
    fn batch(&self) -> u64 {
        self.batch
    }

    /// How long a lease may be spent, in seconds.
    #[getter]
    fn lease(&self) -> f64 {
        self.lease.as_secs_f64()
    }

    /// The longest key taken, in bytes.
    #[getter]
    fn max_key_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.limiter.get(py)?.key_bytes_bound().get())
    }

    /// Whether ``close()`` (or the store's) was called.
    #[getter]
    fn closed(&self) -> bool {
        self.limiter.is_closed()
    }

    /// Releases the limiter now (the units left in its leases are lost): later calls raise ``ClosedError`` (calls
    /// already waiting for Redis complete). Closing twice does nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.limiter.close());
    }

    /// The store the limiter talks through.
    #[getter]
    fn store(&self, py: Python<'_>) -> Py<PyRedisStore> {
        self.store.clone_ref(py)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        Ok(format!(
            "<{} {} {}, batch={}, lease={}>",
            slf.get_type().name()?,
            PyString::new(py, &this.name).repr()?,
            spec_repr(py, &this.spec)?,
            this.batch,
            float_repr(py, this.lease.as_secs_f64())?
        ))
    }
}
