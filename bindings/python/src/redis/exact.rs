//! Exact mode (`RedisLimiter`, with its unavailability policy): every
//! decision one atomic script run in Redis. Made from a template limiter
//! (its algorithm and parameters, as for a `KeyedLimiter`), it decides per
//! user key: a `str` (its UTF-8) or `bytes`, as a `KeyedLimiter`'s, of at
//! most `max_key_bytes` bytes (256 unless set; the crate refuses a longer
//! one before anything is sent).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLimiter, WhenUnavailable};

use super::membership::PyMembership;
use super::store::{store_arg, PyRedisStore};
use super::{decision_object, max_keys_arg, Close, Held, Pending};
use crate::args::{self, Cost};
use crate::decision::PyDecision;
use crate::errors::{from_redis, invalid_named, wrong_type};
use crate::limiter::{spec_repr, template_spec};

const WHEN_UNAVAILABLE: &str = "must be 'error', 'fail_closed', 'fail_open' or 'local_share'";

/// Exact mode: every decision is one atomic script run in Redis, timed by
/// the server's clock, so every process using the same ``name`` (and the
/// same Redis) shares each key's limit exactly and decides as one local
/// limiter would.
///
/// ``template`` gives the algorithm and its parameters: a ``Gcra``
/// (redis-cell's ``CL.THROTTLE`` reply), ``TokenBucket``, ``FixedWindow``,
/// ``SlidingWindowCounter`` or ``SlidingLog`` (others raise
/// ``UnsupportedError``); its own state and clock are not used.
///
/// ``check(key)`` blocks (GIL released, at most the store's ``timeout``);
/// ``await check_async(key)`` never blocks the event loop. A refusal with a
/// retry-after is remembered, and the same key's requests of the same cost
/// or more are refused locally until then, with no round trip
/// (``remember_refusals=False`` turns this off).
///
/// A key is a ``str`` (its UTF-8) or ``bytes`` of at most ``max_key_bytes``
/// bytes (256 unless given, up to 65536): a longer one raises
/// ``InvalidArgumentError`` (``argument`` ``"key"``) and nothing is sent.
///
/// When Redis cannot answer (down, unreachable, slower than the timeout),
/// ``when_unavailable`` decides: ``"error"`` raises ``RedisUnavailableError``
/// (or ``RedisTimeoutError``; the default), ``"fail_closed"`` refuses,
/// ``"fail_open"`` admits, and ``"local_share"`` decides in this process
/// with its share of the limit, ``limit ÷ the live nodes`` of ``membership``
/// as last counted, for at most ``max_keys`` keys — back on Redis as soon as
/// it answers.
///
/// ``close()`` (or leaving a ``with`` or ``async with`` block, or closing
/// the store) releases the limiter; later calls raise ``ClosedError``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "RedisLimiter")]
#[derive(Debug)]
pub struct PyRedisLimiter {
    limiter: Arc<Held<RedisLimiter>>,
    store: Py<PyRedisStore>,
    name: String,
    spec: LimiterSpec,
    when_unavailable: &'static str,
    remember_refusals: bool,
    membership: Option<Py<PyMembership>>,
}

#[pymethods]
impl PyRedisLimiter {
    #[new]
    #[pyo3(signature = (
        store, name, template, *, remember_refusals = None, when_unavailable = None, membership = None,
        max_keys = None, max_key_bytes = None
    ))]
    #[pyo3(
        text_signature = "(store, name, template, *, remember_refusals=True, when_unavailable='error', membership=None, max_keys=None, max_key_bytes=256)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        template: &Bound<'_, PyAny>,
        remember_refusals: Option<&Bound<'_, PyAny>>,
        when_unavailable: Option<&Bound<'_, PyAny>>,
        membership: Option<&Bound<'_, PyAny>>,
        max_keys: Option<&Bound<'_, PyAny>>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let store = store_arg(store)?;
        let name = args::text(name, "name")?;
        let spec = template_spec(template)?;
        let max_key_bytes = args::max_key_bytes(max_key_bytes)?;
        let remember_refusals = remember_refusals.map_or(Ok(true), |r| args::boolean(r, "remember_refusals"))?;
        let (policy, policy_name) = match when_unavailable {
            None => (WhenUnavailable::Error, "error"),
            Some(obj) => {
                let text = obj.cast::<PyString>().map_err(|_| wrong_type("when_unavailable", obj, "a str"))?;
                match &*text.to_cow()? {
                    "error" => (WhenUnavailable::Error, "error"),
                    "fail_closed" => (WhenUnavailable::FailClosed, "fail_closed"),
                    "fail_open" => (WhenUnavailable::FailOpen, "fail_open"),
                    "local_share" => (WhenUnavailable::LocalShare, "local_share"),
                    _ => return Err(invalid_named("when_unavailable", obj, WHEN_UNAVAILABLE)),
                }
            }
        };
        let membership = membership.filter(|m| !m.is_none());
        let max_keys = max_keys.filter(|m| !m.is_none());
        let limiter = RedisLimiter::new(&store.get().get(py)?, &name, spec)
            .map_err(|e| from_redis(py, e))?
            .remember_refusals(remember_refusals)
            .max_key_bytes(max_key_bytes);
        let (limiter, membership) = if policy == WhenUnavailable::LocalShare {
            const NEEDED: &str = "given when when_unavailable='local_share'";
            let none = py.None().into_bound(py);
            let membership = membership.ok_or_else(|| wrong_type("membership", &none, NEEDED))?;
            let max_keys = max_keys.ok_or_else(|| wrong_type("max_keys", &none, NEEDED))?;
            let handle =
                membership.cast::<PyMembership>().map_err(|_| wrong_type("membership", membership, "a Membership"))?;
            let max_keys = max_keys_arg(max_keys)?;
            let limiter =
                limiter.fall_back_to_local(handle.get().shared(py)?, max_keys).map_err(|e| from_redis(py, e))?;
            (limiter, Some(handle.clone().unbind()))
        } else {
            const UNUSED: &str = "None unless when_unavailable='local_share'";
            if let Some(membership) = membership {
                return Err(wrong_type("membership", membership, UNUSED));
            }
            if let Some(max_keys) = max_keys {
                return Err(wrong_type("max_keys", max_keys, UNUSED));
            }
            (limiter.when_unavailable(policy), None)
        };
        Ok(PyRedisLimiter {
            limiter: Held::adopted(limiter, "RedisLimiter", store.get()),
            store: store.clone().unbind(),
            name,
            spec,
            when_unavailable: policy_name,
            remember_refusals,
            membership,
        })
    }

    /// Admits ``cost`` units for ``key`` if the shared limit allows,
    /// taking them, or refuses, taking nothing: one round trip (none when a
    /// remembered refusal decides), waited for with the GIL released.
    /// Raises ``RedisUnavailableError``/``RedisTimeoutError`` only under
    /// ``when_unavailable="error"``.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.check(key.as_bytes(), cost.0)).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// The ``Decision`` ``check(key, cost)`` would make now, taking nothing
    /// (always a round trip; under ``"local_share"`` an unavailable Redis
    /// raises, as the share is not consulted).
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.peek(key.as_bytes(), cost.0)).map(PyDecision).map_err(|e| from_redis(py, e))
    }

    /// For ``check_async``: an ``asyncio.Future`` of the running loop that
    /// the decision settles.
    #[pyo3(name = "_check_future", signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check_future(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<Py<PyAny>> {
        let key = args::key(key)?.as_bytes().to_vec();
        let limiter = self.limiter.get(py)?;
        let (pending, future) = Pending::new(py)?;
        limiter.check_with(key, cost.0, move |answer| pending.settle(answer, decision_object));
        Ok(future)
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

    /// Gives ``cost`` units back to ``key``, as the in-process limiters'
    /// ``refund``: what a request took and did not use (a failed upload, a
    /// response that should not count), never more than the limit, at the
    /// server's time, atomically. Not a decision: raises when Redis cannot
    /// answer, whatever ``when_unavailable`` (a caller may ignore it). A
    /// cost of 0 sends nothing. One round trip, GIL released.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn refund(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<()> {
        let key = args::key(key)?;
        let limiter = self.limiter.get(py)?;
        py.detach(|| limiter.refund(key.as_bytes(), cost.0)).map_err(|e| from_redis(py, e))
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

    /// Forgets ``key``'s state in Redis (every key of it, deleted
    /// atomically): its next request is decided as a new key's, with the
    /// whole limit — ``KeyedLimiter.remove``, ``limits``' ``clear``,
    /// rate-limiter-flexible's ``delete``. Whether Redis held a state (an
    /// unknown key is fine: ``False``). Drops this process's remembered
    /// refusal for the key; other processes' run out by their retry-after.
    /// One round trip, GIL released; not a decision: raises when Redis
    /// cannot answer, whatever ``when_unavailable``.
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

    /// The limiter's name: every process using it (on the same Redis)
    /// shares its keys.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// ``"gcra"``, ``"token_bucket"``, ``"fixed_window"``, ...
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.spec.algorithm()
    }

    /// The quota: the most units admitted at once.
    #[getter]
    fn limit(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.limiter.get(py)?.limit())
    }

    /// ``"error"``, ``"fail_closed"``, ``"fail_open"`` or ``"local_share"``.
    #[getter]
    fn when_unavailable(&self) -> &'static str {
        self.when_unavailable
    }

    /// Whether refusals are remembered and served without a round trip.
    #[getter]
    fn remember_refusals(&self) -> bool {
        self.remember_refusals
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

    /// The ``Membership`` whose node count divides the limit under
    /// ``"local_share"``; ``None`` otherwise.
    #[getter]
    fn membership(&self, py: Python<'_>) -> Option<Py<PyMembership>> {
        self.membership.as_ref().map(|m| m.clone_ref(py))
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
        Ok(format!(
            "<{} {} {}, when_unavailable='{}'>",
            slf.get_type().name()?,
            PyString::new(py, &this.name).repr()?,
            spec_repr(py, &this.spec)?,
            this.when_unavailable
        ))
    }
}
