//! Divided mode (`RedisDividedLimiter`): this process joins a group and
//! enforces its share of the limit locally, with no round trip per
//! decision. Made from a template limiter (any algorithm); keys are as a
//! `KeyedLimiter`'s.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisDividedLimiter, RedisOption};

use super::store::{store_arg, PyRedisStore};
use super::{max_keys_arg, Close, Held};
use crate::args::{self, Cost};
use crate::decision::PyDecision;
use crate::errors::from_redis;
use crate::limiter::{spec_repr, template_spec};

/// Divided mode: this process joins the group ``name`` (it heartbeats into
/// Redis every third of ``heartbeat_ttl``, 3 ms to a day, and counts as
/// live until ``heartbeat_ttl`` after its last beat) and enforces ``limit
/// ÷ live nodes`` on its own, per key, for at most ``max_keys`` keys —
/// with no round trip per decision, so ``check`` never waits. Keys are as
/// a ``KeyedLimiter``'s, of at most ``max_key_bytes`` bytes.
///
/// The shares add up to the whole limit when traffic is spread evenly over
/// the nodes; a busy node is refused while an idle one has room. While
/// Redis is unreachable, the node keeps the last count it read. Making one
/// blocks for the first heartbeat (GIL released; ``create_async`` does not
/// block the event loop). ``close()`` (or leaving a ``with`` or ``async
/// with`` block, or closing the store) leaves the group at once, and later
/// calls raise ``ClosedError``; otherwise the node leaves when the limiter
/// is garbage-collected.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisDividedLimiter")]
#[derive(Debug)]
pub struct PyRedisDividedLimiter {
    limiter: Arc<Held<RedisDividedLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
    spec: LimiterSpec,
    node_id: String,
}

impl PyRedisDividedLimiter {
    fn get(&self, py: Python<'_>) -> PyResult<RedisDividedLimiter> {
        self.limiter.get(py)
    }
}

#[pymethods]
impl PyRedisDividedLimiter {
    #[new]
    #[pyo3(signature = (store, name, template, *, heartbeat_ttl, max_keys, max_key_bytes = None))]
    #[pyo3(text_signature = "(store, name, template, *, heartbeat_ttl, max_keys, max_key_bytes=256)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        template: &Bound<'_, PyAny>,
        heartbeat_ttl: &Bound<'_, PyAny>,
        max_keys: &Bound<'_, PyAny>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let spec = template_spec(template)?;
        let ttl = args::redis_option(heartbeat_ttl, RedisOption::HeartbeatTtl)?;
        let max_keys = max_keys_arg(max_keys)?;
        let max_key_bytes = args::max_key_bytes(max_key_bytes)?;
        let shared = store.get().get(py)?;
        let limiter = py
            .detach(|| RedisDividedLimiter::new(&shared, &name, spec, ttl, max_keys))
            .map_err(|e| from_redis(py, e))?
            .max_key_bytes(max_key_bytes);
        let node_id = limiter.membership().node_id().to_owned();
        Ok(PyRedisDividedLimiter {
            limiter: Held::adopted(limiter, "RedisDividedLimiter", store.get()),
            store: store.clone().unbind(),
            name,
            spec,
            node_id,
        })
    }

    /// Decides ``cost`` units for ``key`` with this process's share of the
    /// limit: no round trip, never waits.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.get(py)?;
        limiter.check(key.as_bytes(), cost.0).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// The ``Decision`` ``check(key, cost)`` would make now with this
    /// process's share, taking nothing (divided mode keeps no per-key state
    /// in Redis: no round trip).
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.get(py)?;
        limiter.peek(key.as_bytes(), cost.0).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// Forgets ``key`` in this process's share (whether it held it): its
    /// next request starts from a whole share. Other nodes' shares keep
    /// their counts; call it on every node to reset the whole limit.
    #[pyo3(text_signature = "($self, key)")]
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = args::key(key)?;
        self.get(py)?.remove(key.as_bytes()).map_err(|e| from_redis(py, e))
    }

    /// The live nodes as last read (at least 1: this one).
    #[getter]
    fn nodes(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.get(py)?.nodes())
    }

    /// This process's id in the group.
    #[getter]
    fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The longest key taken, in bytes.
    #[getter]
    fn max_key_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.get(py)?.key_bytes_bound().get())
    }

    /// The group's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The algorithm of the whole limit: ``"gcra"``, ``"fixed_window"``, ...
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.spec.algorithm()
    }

    /// The store the membership heartbeats through.
    #[getter]
    fn store(&self, py: Python<'_>) -> Py<PyRedisStore> {
        self.store.clone_ref(py)
    }

    /// Whether ``close()`` (or the store's) was called.
    #[getter]
    fn closed(&self) -> bool {
        self.limiter.is_closed()
    }

    /// Leaves the group at once (best effort: otherwise the heartbeat TTL
    /// drops this node; a round trip, GIL released) and releases the
    /// limiter; later calls raise ``ClosedError``. Closing twice does
    /// nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.limiter.close());
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let state = match this.get(py) {
            Ok(limiter) => format!("nodes={}", limiter.nodes()),
            Err(_) => "closed".to_owned(),
        };
        Ok(format!(
            "<{} {} {}, {state}>",
            slf.get_type().name()?,
            PyString::new(py, &this.name).repr()?,
            spec_repr(py, &this.spec)?
        ))
    }
}
