//! The concurrency limit shared through Redis (`RedisConcurrencyLimiter`):
//! permits held as leases that expire on the server's clock, and the
//! lease handle (`ConcurrencyLease`). Every rule — the limit, exactly-once
//! releases, reclaiming dead holders' leases — is the crate's; this module
//! converts arguments and answers.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use ratekeeper::Argument;
use ratekeeper_redis::{ConcurrencyLease, RedisConcurrencyLimiter, RedisOption, WhenUnavailable};

use super::store::{store_arg, PyRedisStore};
use super::{Close, Held, Pending};
use crate::args::{self, Permits};
use crate::decision::PyDecision;
use crate::errors::{from_redis, from_rust, invalid_named, wrong_type};
use crate::float_repr;

const WHEN_UNAVAILABLE: &str = "must be 'error', 'fail_closed' or 'fail_open'";

/// A limit of ``limit`` permits held at once, shared by every process that
/// uses ``name`` on the same Redis (Sentinel's cluster concurrency tokens,
/// Hystrix's semaphore across processes).
///
/// ``try_acquire(permits)`` answers a ``Decision`` and, when admitted, a
/// ``ConcurrencyLease``: its permits are held until ``release(lease)``
/// (``True`` exactly once; ``False`` for a lease released before or
/// expired) or until the lease expires, ``lease_ttl`` (seconds or a
/// ``timedelta``, 1 ms to a day) after it was acquired or last renewed
/// with ``renew(lease)``, by the server's clock. A holder that dies never
/// releases: its permits come back at its lease's expiry, with no process
/// alive to do it. A refusal's ``retry_after`` is how long until enough
/// leases expire if none is released or renewed.
///
/// When Redis cannot answer, ``when_unavailable`` decides acquires:
/// ``"error"`` raises (the default), ``"fail_closed"`` refuses,
/// ``"fail_open"`` admits with a lease Redis does not hold
/// (``lease.recorded`` is ``False``). Releases and renewals raise.
///
/// Blocking calls wait with the GIL released; the ``…_async`` coroutines
/// never block the event loop. ``close()`` (or leaving a ``with`` or
/// ``async with`` block, or closing the store) releases the limiter (not
/// the leases, which expire); later calls raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisConcurrencyLimiter")]
#[derive(Debug)]
pub struct PyRedisConcurrencyLimiter {
    limiter: Arc<Held<RedisConcurrencyLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
    when_unavailable: &'static str,
}

/// A lease of a ``RedisConcurrencyLimiter``: give it to ``release`` once.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "ConcurrencyLease")]
#[derive(Debug, Clone)]
pub struct PyConcurrencyLease(ConcurrencyLease);

#[pymethods]
impl PyConcurrencyLease {
    /// Its id in Redis (hex digits, unique between processes).
    #[getter]
    fn id(&self) -> &str {
        self.0.id()
    }

    /// The permits it holds.
    #[getter]
    fn permits(&self) -> u64 {
        self.0.permits()
    }

    /// Whether Redis holds it (``False`` for a lease admitted by
    /// ``"fail_open"`` while Redis could not answer).
    #[getter]
    fn recorded(&self) -> bool {
        self.0.is_recorded()
    }

    fn __repr__(&self) -> String {
        format!("<ConcurrencyLease '{}' permits={}>", self.0.id(), self.0.permits())
    }
}

/// `permits` as the crate takes it (a negative one: the crate's error).
fn permits_arg(py: Python<'_>, permits: Permits) -> PyResult<u64> {
    u64::try_from(permits.0).map_err(|_| from_rust(py, ratekeeper::Error::invalid_int(Argument::Permits, permits.0)))
}

fn lease_arg(obj: &Bound<'_, PyAny>) -> PyResult<ConcurrencyLease> {
    let lease = obj.cast::<PyConcurrencyLease>().map_err(|_| wrong_type("lease", obj, "a ConcurrencyLease"))?;
    Ok(lease.get().0.clone())
}

/// An acquire's answer as a `(Decision, ConcurrencyLease | None)` tuple.
fn acquired_object(
    py: Python<'_>,
    (decision, lease): (ratekeeper::Decision, Option<ConcurrencyLease>),
) -> PyResult<Bound<'_, PyAny>> {
    let decision = PyDecision(decision).into_pyobject(py)?.into_any();
    let lease = match lease {
        Some(lease) => PyConcurrencyLease(lease).into_pyobject(py)?.into_any(),
        None => py.None().into_bound(py),
    };
    Ok(PyTuple::new(py, [decision, lease])?.into_any())
}

fn bool_object(py: Python<'_>, value: bool) -> PyResult<Bound<'_, PyAny>> {
    Ok(pyo3::types::PyBool::new(py, value).to_owned().into_any())
}

#[pymethods]
impl PyRedisConcurrencyLimiter {
    #[new]
    #[pyo3(signature = (store, name, limit, *, lease_ttl, when_unavailable = None))]
    #[pyo3(text_signature = "(store, name, limit, *, lease_ttl, when_unavailable='error')")]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        lease_ttl: &Bound<'_, PyAny>,
        when_unavailable: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let limit = args::count(limit, Argument::Limit)?;
        let ttl = args::redis_option(lease_ttl, RedisOption::LeaseTtl)?;
        let (policy, policy_name) = match when_unavailable {
            None => (WhenUnavailable::Error, "error"),
            Some(obj) => {
                let text = obj.cast::<PyString>().map_err(|_| wrong_type("when_unavailable", obj, "a str"))?;
                match &*text.to_cow()? {
                    "error" => (WhenUnavailable::Error, "error"),
                    "fail_closed" => (WhenUnavailable::FailClosed, "fail_closed"),
                    "fail_open" => (WhenUnavailable::FailOpen, "fail_open"),
                    _ => return Err(invalid_named("when_unavailable", obj, WHEN_UNAVAILABLE)),
                }
            }
        };
        let limiter = RedisConcurrencyLimiter::new(&store.get().get(py)?, &name, limit, ttl)
            .and_then(|l| l.when_unavailable(policy))
            .map_err(|e| from_redis(py, e))?;
        Ok(PyRedisConcurrencyLimiter {
            limiter: Held::adopted(limiter, "RedisConcurrencyLimiter", store.get()),
            store: store.clone().unbind(),
            name,
            when_unavailable: policy_name,
        })
    }

    /// Acquires a lease on ``permits`` (1 to 2^31 − 1) if the live leases
    /// leave room: ``(decision, lease)``, the lease ``None`` when refused.
    /// One round trip, GIL released.
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn try_acquire<'py>(&self, py: Python<'py>, permits: Permits) -> PyResult<Bound<'py, PyAny>> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let answer = py.detach(|| limiter.try_acquire(permits)).map_err(|e| from_redis(py, e))?;
        acquired_object(py, answer)
    }

    /// For ``try_acquire_async``: a future of ``(decision, lease)``.
    #[pyo3(name = "_try_acquire_future", signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn try_acquire_future(&self, py: Python<'_>, permits: Permits) -> PyResult<Py<PyAny>> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.try_acquire_with(permits, move |answer| pending.settle(answer, acquired_object));
        Ok(future)
    }

    /// Gives ``lease`` back: ``True`` if this released it, ``False`` if it
    /// was released before or had expired (nothing freed then).
    #[pyo3(text_signature = "($self, lease)")]
    fn release(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<bool> {
        let lease = lease_arg(lease)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.release(&lease)).map_err(|e| from_redis(py, e))
    }

    /// For ``release_async``: a future of ``release``'s answer.
    #[pyo3(name = "_release_future", text_signature = "($self, lease)")]
    fn release_future(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let lease = lease_arg(lease)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.release_with(&lease, move |answer| pending.settle(answer, bool_object));
        Ok(future)
    }

    /// Extends a live ``lease`` to ``lease_ttl`` from now: ``True``, or
    /// ``False`` if it was released or had expired (it holds nothing then).
    #[pyo3(text_signature = "($self, lease)")]
    fn renew(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<bool> {
        let lease = lease_arg(lease)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.renew(&lease)).map_err(|e| from_redis(py, e))
    }

    /// For ``renew_async``: a future of ``renew``'s answer.
    #[pyo3(name = "_renew_future", text_signature = "($self, lease)")]
    fn renew_future(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let lease = lease_arg(lease)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.renew_with(&lease, move |answer| pending.settle(answer, bool_object));
        Ok(future)
    }

    /// The ``Decision`` ``try_acquire(permits)`` would make now, taking no
    /// lease and writing nothing (expired leases counted out, not
    /// reclaimed): one round trip, GIL released.
    #[pyo3(signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn peek(&self, py: Python<'_>, permits: Permits) -> PyResult<PyDecision> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.peek(permits)).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// For ``peek_async``: a future of the ``Decision``.
    #[pyo3(name = "_peek_future", signature = (permits = Permits::ONE), text_signature = "($self, permits=1)")]
    fn peek_future(&self, py: Python<'_>, permits: Permits) -> PyResult<Py<PyAny>> {
        let permits = permits_arg(py, permits)?;
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.peek_with(permits, move |answer| pending.settle(answer, super::decision_object));
        Ok(future)
    }

    /// Deletes every lease at once (whether there was any): the whole limit
    /// is free again. Holders are not told — their ``release``/``renew``
    /// answer ``False`` — so until they finish, up to the limit more
    /// permits are in use: for a limiter whose holders are gone.
    fn reset(&self, py: Python<'_>) -> PyResult<bool> {
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.reset()).map_err(|e| from_redis(py, e))
    }

    /// For ``reset_async``: a future of ``reset``'s answer.
    #[pyo3(name = "_reset_future")]
    fn reset_future(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.reset_with(move |answer| pending.settle(answer, bool_object));
        Ok(future)
    }

    /// The permits the live leases hold now (expired ones reclaimed
    /// first): one round trip, GIL released.
    fn held(&self, py: Python<'_>) -> PyResult<u64> {
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.held()).map_err(|e| from_redis(py, e))
    }

    /// The limiter's name (shared with every process using it).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The most permits held at once.
    #[getter]
    fn limit(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.limiter.get(py)?.limit())
    }

    /// How long a lease lasts after it was acquired or renewed, in seconds.
    #[getter]
    fn lease_ttl(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.limiter.get(py)?.lease_ttl().as_secs_f64())
    }

    /// ``"error"``, ``"fail_closed"`` or ``"fail_open"``.
    #[getter]
    fn when_unavailable(&self) -> &'static str {
        self.when_unavailable
    }

    /// Whether ``close()`` (or the store's) was called.
    #[getter]
    fn closed(&self) -> bool {
        self.limiter.is_closed()
    }

    /// Releases the limiter now (leases still held expire by themselves):
    /// later calls raise ``ClosedError``. Closing twice does nothing more.
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
        let (limit, ttl) = match this.limiter.get(py) {
            Ok(l) => (l.limit().to_string(), float_repr(py, l.lease_ttl().as_secs_f64())?),
            Err(_) => ("?".to_owned(), "?".to_owned()),
        };
        Ok(format!(
            "<{} {} limit={limit}, lease_ttl={ttl}, when_unavailable='{}'>",
            slf.get_type().name()?,
            PyString::new(py, &this.name).repr()?,
            this.when_unavailable
        ))
    }
}
