//! `ratekeeper.Membership`: this process's place in a group of nodes that
//! share limits (`ratekeeper_redis::Membership`), for the `"local_share"`
//! fallback of a `RedisLimiter`.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper_redis::{Membership, RedisOption};

use super::store::store_arg;
use super::{Close, Held};
use crate::args;
use crate::errors::from_redis;
use crate::float_repr;

/// This process's place in a group of nodes sharing limits: it heartbeats
/// into Redis in the background (every third of ``ttl``, seconds or a
/// ``timedelta`` from 3 ms to a day), and ``nodes`` is the group's live count as last read,
/// kept while Redis is away. A node that stops heartbeating drops out
/// ``ttl`` after its last beat.
///
/// A ``RedisLimiter`` with ``when_unavailable="local_share"`` divides its
/// limit by this count while Redis cannot answer. Join with
/// ``Membership.join(store, group, ttl)`` (blocks for the first heartbeat,
/// GIL released) or ``await Membership.join_async(...)``. ``close()`` (or
/// leaving a ``with`` or ``async with`` block, or closing the store) leaves
/// the group at once — unless a limiter still uses the membership, which
/// keeps it until that limiter is gone — and later calls raise
/// ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "Membership")]
#[derive(Debug)]
pub struct PyMembership {
    membership: Arc<Held<Arc<Membership>>>,
    group: String,
    node_id: String,
    ttl: Duration,
}

impl PyMembership {
    /// The crate's membership, shared (for a limiter's fallback).
    pub(crate) fn shared(&self, py: Python<'_>) -> PyResult<Arc<Membership>> {
        self.membership.get(py)
    }
}

#[pymethods]
impl PyMembership {
    /// Joins ``group`` as a new node; prefer ``Membership.join``.
    #[new]
    #[pyo3(signature = (store, group, ttl))]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        group: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let group = args::text(group, "group")?;
        let ttl = args::redis_option(ttl, RedisOption::Ttl)?;
        let shared = store.get().get(py)?;
        let membership = py.detach(|| Membership::join(&shared, &group, ttl)).map_err(|e| from_redis(py, e))?;
        let node_id = membership.node_id().to_owned();
        Ok(PyMembership {
            membership: Held::adopted(Arc::new(membership), "Membership", store.get()),
            group,
            node_id,
            ttl,
        })
    }

    /// The live nodes as last read (at least 1: this one).
    #[getter]
    fn nodes(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.shared(py)?.nodes())
    }

    /// Heartbeats now and returns the live count (the background heartbeat
    /// normally does this). Blocks for the round trip, GIL released.
    fn refresh(&self, py: Python<'_>) -> PyResult<u64> {
        let membership = self.shared(py)?;
        py.detach(|| membership.refresh()).map_err(|e| from_redis(py, e))
    }

    /// This process's id in the group.
    #[getter]
    fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The group's name.
    #[getter]
    fn group(&self) -> &str {
        &self.group
    }

    /// The heartbeat TTL, in seconds.
    #[getter]
    fn ttl(&self) -> f64 {
        self.ttl.as_secs_f64()
    }

    /// Whether ``close()`` (or the store's) was called.
    #[getter]
    fn closed(&self) -> bool {
        self.membership.is_closed()
    }

    /// Releases this handle: the node leaves the group at once (a round
    /// trip, GIL released), unless a limiter still uses the membership
    /// (then when that limiter is gone). Later calls raise ``ClosedError``;
    /// closing twice does nothing more.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.membership.close());
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let (py, this) = (slf.py(), slf.get());
        let state = match this.shared(py) {
            Ok(membership) => format!("nodes={}", membership.nodes()),
            Err(_) => "closed".to_owned(),
        };
        Ok(format!(
            "<{} {} ttl={}, {state}>",
            slf.get_type().name()?,
            PyString::new(py, &this.group).repr()?,
            float_repr(py, this.ttl.as_secs_f64())?
        ))
    }
}
