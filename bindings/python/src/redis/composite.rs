//! Several limits on the same keys through Redis, all or nothing
//! (`RedisCompositeLimiter`): the crate's composite, whose parts are
//! decided by one script run. Made from template limiters as a
//! `CompositeLimiter` is; its decisions are `KeyedLimits`' pair (the
//! combined decision and each part's), so that `ratekeeper.http` writes
//! the same fields from either.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{CompositeDecision, RedisCompositeLimiter, WhenUnavailable};

use super::store::{store_arg, PyRedisStore};
use super::{Close, Held, Pending};
use crate::args::{self, Cost};
use crate::decision::PyDecision;
use crate::errors::{from_redis, invalid_named, wrong_type};
use crate::limiter::{spec_repr, PyLimiter};

const WHEN_UNAVAILABLE: &str = "must be 'error', 'fail_closed' or 'fail_open'";
const TEMPLATES: &str = "an iterable of limiters of one algorithm (TokenBucket, Gcra, FixedWindow, ...)";

/// Several limits on the same keys — "10 per second *and* 1000 per hour,
/// per client" — shared through Redis and decided **all or nothing** in one
/// atomic script run at the server's time: a request is admitted only if
/// every part admits it, and a refusal takes nothing from any part (asking
/// several ``RedisLimiter`` in turn cannot: the first ones keep what they
/// took when a later one refuses). Every process using the same ``name``
/// (and the same Redis) shares each key's limits.
///
/// ``templates``: the parts, in order, each a limiter of one algorithm that
/// runs in Redis (``Gcra``, ``TokenBucket``, ``FixedWindow``,
/// ``SlidingWindowCounter``, ``SlidingLog``; others raise
/// ``UnsupportedError``; none raises ``InvalidArgumentError``), whose own
/// state and clock are not used. Every part of one key lives under one
/// hash tag, so it works on a Redis Cluster.
///
/// ``check(key)`` and ``peek(key)`` return ``(decision, parts)`` as
/// ``KeyedLimits`` does: the combined ``Decision`` (the strictest part's)
/// and each part's, in order (in a refusal, a part that would have
/// admitted shows its state untouched). ``check`` blocks (GIL released, at
/// most the store's ``timeout``); ``await check_async(key)`` never blocks
/// the event loop. Keys as ``RedisLimiter``'s: a ``str`` or ``bytes`` of at
/// most ``max_key_bytes`` bytes.
///
/// When Redis cannot answer, ``when_unavailable`` decides every part:
/// ``"error"`` raises (the default), ``"fail_closed"`` refuses,
/// ``"fail_open"`` admits; there is no local share.
///
/// ``close()`` (or leaving a ``with`` or ``async with`` block, or closing
/// the store) releases the limiter; later calls raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisCompositeLimiter")]
#[derive(Debug)]
pub struct PyRedisCompositeLimiter {
    limiter: Arc<Held<RedisCompositeLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
    specs: Vec<LimiterSpec>,
    when_unavailable: &'static str,
}

/// A composite decision as Python gets it: `(decision, parts)`.
fn pair(decision: CompositeDecision) -> (PyDecision, Vec<PyDecision>) {
    (PyDecision(decision.combined), decision.parts.into_iter().map(PyDecision).collect())
}

/// The pair as the futures' result.
fn pair_object(py: Python<'_>, decision: CompositeDecision) -> PyResult<Bound<'_, PyAny>> {
    Ok(pair(decision).into_pyobject(py)?.into_any())
}

#[pymethods]
impl PyRedisCompositeLimiter {
    #[new]
    #[pyo3(signature = (store, name, templates, *, when_unavailable = None, max_key_bytes = None))]
    #[pyo3(text_signature = "(store, name, templates, *, when_unavailable='error', max_key_bytes=256)")]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        templates: &Bound<'_, PyAny>,
        when_unavailable: Option<&Bound<'_, PyAny>>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let mut specs = Vec::new();
        for item in templates.try_iter().map_err(|_| wrong_type("templates", templates, TEMPLATES))? {
            let item = item?;
            let part = item.cast::<PyLimiter>().map_err(|_| wrong_type("templates", &item, TEMPLATES))?.get();
            specs.push(part.current_spec().ok_or_else(|| wrong_type("templates", &item, TEMPLATES))?);
        }
        let max_key_bytes = args::max_key_bytes(max_key_bytes)?;
        let (policy, policy_name) = match when_unavailable.filter(|o| !o.is_none()) {
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
        let limiter = RedisCompositeLimiter::new(&store.get().get(py)?, &name, &specs)
            .map_err(|e| from_redis(py, e))?
            .when_unavailable(policy)
            .max_key_bytes(max_key_bytes);
        Ok(PyRedisCompositeLimiter {
            limiter: Held::adopted(limiter, "RedisCompositeLimiter", store.get()),
            store: store.clone().unbind(),
            name,
            specs,
            when_unavailable: policy_name,
        })
    }

    /// Admits ``cost`` units for ``key`` in every part, or refuses and takes
    /// nothing from any: ``(decision, parts)``, one round trip waited for
    /// with the GIL released. Raises ``RedisUnavailableError`` or
    /// ``RedisTimeoutError`` only under ``when_unavailable="error"``.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<(PyDecision, Vec<PyDecision>)> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.check(key.as_bytes(), cost.0)).map(pair).map_err(|e| from_redis(py, e))
    }

    /// What ``check(key, cost)`` would answer now, taking nothing (a round
    /// trip).
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<(PyDecision, Vec<PyDecision>)> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.peek(key.as_bytes(), cost.0)).map(pair).map_err(|e| from_redis(py, e))
    }

    /// Gives ``cost`` units back to ``key`` in every part (never more than
    /// a part's limit), atomically at the server's time: what an admitted
    /// request took and did not use. Not a decision: raises when Redis
    /// cannot answer, whatever ``when_unavailable``. A cost of 0 sends
    /// nothing.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn refund(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<()> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.refund(key.as_bytes(), cost.0)).map_err(|e| from_redis(py, e))
    }

    /// Forgets ``key``'s state in every part (deleted atomically): its
    /// next request has every limit whole. Whether Redis held any. Not a
    /// decision: raises when Redis cannot answer.
    #[pyo3(text_signature = "($self, key)")]
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.remove(key.as_bytes())).map_err(|e| from_redis(py, e))
    }

    /// For ``check_async``: an ``asyncio.Future`` of the running loop that
    /// the decision settles.
    #[pyo3(name = "_check_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.check_with(key, cost.0, move |answer| pending.settle(answer, pair_object));
        Ok(future)
    }

    /// For ``peek_async``: as ``_check_future``.
    #[pyo3(name = "_peek_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.peek_with(key, cost.0, move |answer| pending.settle(answer, pair_object));
        Ok(future)
    }

    /// For ``refund_async``: a future of ``refund``'s ``None``.
    #[pyo3(name = "_refund_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn refund_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.refund_with(key, cost.0, move |answer| pending.settle(answer, super::none_object));
        Ok(future)
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

    /// The limiter's name: every process using it (on the same Redis)
    /// shares its keys.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Each part's algorithm, in order: ``["sliding_window_counter", ...]``.
    #[getter]
    fn algorithms(&self) -> Vec<&'static str> {
        self.specs.iter().map(LimiterSpec::algorithm).collect()
    }

    /// The strictest part's quota: the most units admitted at once.
    #[getter]
    fn limit(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.limiter.get(py)?.limit())
    }

    /// ``"error"``, ``"fail_closed"`` or ``"fail_open"``.
    #[getter]
    fn when_unavailable(&self) -> &'static str {
        self.when_unavailable
    }

    /// The longest key taken, in bytes.
    #[getter]
    fn max_key_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.limiter.get(py)?.key_bytes_bound().get())
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
    /// already waiting for Redis complete). Closing twice does nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.limiter.close());
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let parts = this.specs.iter().map(|spec| spec_repr(py, spec)).collect::<PyResult<Vec<_>>>()?;
        Ok(format!(
            "<{} {} [{}], when_unavailable='{}'>",
            slf.get_type().name()?,
            PyString::new(py, &this.name).repr()?,
            parts.join(", "),
            this.when_unavailable
        ))
    }
}
