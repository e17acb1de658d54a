//! `ratekeeper.KeyedLimiter`: one limiter per key, from a template, in
//! bounded memory — the Rust [`AnyKeyedLimiter`] keyed by bytes.
//!
//! The template is any limiter of one algorithm: its [`LimiterSpec`] (the
//! one every [`PyLimiter`] keeps for this) says what each key gets. Keys are
//! `str` (their UTF-8) or `bytes`, passed to Rust as they are: `"a"` and
//! `b"a"` are the same key, as they are in every binding.

use pyo3::prelude::*;
use pyo3::types::PyString;
use ratekeeper::keyed::{AnyKeyedLimiter, KeyedOptions, WhenFull};
use ratekeeper::{Argument, LimiterSpec};

use crate::args::{self, Cost};
use crate::clock::{self, PyManualClock};
use crate::decision::PyDecision;
use crate::errors::{at_capacity, from_rust, invalid_named, wrong_type};
use crate::limiter::{spec_repr, PyLimiter};

const WHEN_FULL: &str = "must be 'refuse_new_keys' or 'evict_soonest_full'";

/// One limiter per key — per user, per user and action — each a copy of
/// ``template``'s algorithm and parameters, created on a key's first
/// admitted request, holding at most ``max_keys`` keys.
///
/// A key is forgotten only when that changes no decision: when its state
/// is back to a fresh one (its quota whole again). When the bound is
/// reached and no key can go, ``when_full`` decides: ``"refuse_new_keys"``
/// (the default; a new key's request is refused, never over-admitting) or
/// ``"evict_soonest_full"`` (the key that would be whole soonest is
/// forgotten, which may let it over-admit once). Keys are ``str`` (as
/// UTF-8) or ``bytes`` of at most ``max_key_bytes`` bytes (256 unless set,
/// up to 65536): a longer key, or a ``str`` with a lone surrogate, raises
/// ``InvalidArgumentError`` naming ``key`` and stores nothing, so the
/// memory held is bounded (``max_bytes``). The limiter runs on ``clock``,
/// by default the template's.
///
/// >>> users = KeyedLimiter(FixedWindow(5, 60.0), max_keys=100_000)
/// >>> users.check("user:42/post").remaining
/// 4
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "KeyedLimiter")]
#[derive(Debug)]
pub struct PyKeyedLimiter {
    limiter: AnyKeyedLimiter,
    spec: LimiterSpec,
    clock: Option<Py<PyManualClock>>,
}

#[pymethods]
impl PyKeyedLimiter {
    #[new]
    #[pyo3(signature = (template, max_keys, *, when_full = None, shards = None, max_key_bytes = None, clock = None))]
    #[pyo3(
        text_signature = "(template, max_keys, *, when_full='refuse_new_keys', shards=None, max_key_bytes=256, clock=None)"
    )]
    fn new(
        template: &Bound<'_, PyAny>,
        max_keys: &Bound<'_, PyAny>,
        when_full: Option<&Bound<'_, PyAny>>,
        shards: Option<&Bound<'_, PyAny>>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        const EXPECTED_TEMPLATE: &str = "a limiter of one algorithm (TokenBucket, Gcra, FixedWindow, ...)";
        let py = template.py();
        let part = template.cast::<PyLimiter>().map_err(|_| wrong_type("template", template, EXPECTED_TEMPLATE))?;
        let spec = part.get().current_spec().ok_or_else(|| wrong_type("template", template, EXPECTED_TEMPLATE))?;
        let max = args::count(max_keys, Argument::MaxKeys)?;
        let max =
            usize::try_from(max).map_err(|_| from_rust(py, ratekeeper::Error::invalid_uint(Argument::MaxKeys, max)))?;
        let mut options = KeyedOptions::new(max);
        if let Some(policy) = when_full {
            let name = policy.cast::<PyString>().map_err(|_| wrong_type("when_full", policy, "a str"))?;
            let policy =
                WhenFull::from_name(&name.to_cow()?).ok_or_else(|| invalid_named("when_full", policy, WHEN_FULL))?;
            options = options.when_full(policy);
        }
        if let Some(shards) = shards {
            let count = args::count(shards, Argument::Shards)?;
            let count = usize::try_from(count)
                .map_err(|_| from_rust(py, ratekeeper::Error::invalid_uint(Argument::Shards, count)))?;
            options = options.shards(count);
        }
        options = options.max_key_bytes(args::max_key_bytes(max_key_bytes)?);
        let (any_clock, clock) = match clock {
            Some(obj) => clock::clock_arg(Some(obj))?,
            None => match &part.get().clock {
                Some(manual) => clock::clock_arg(Some(manual.bind(py).as_any()))?,
                None => clock::clock_arg(None)?,
            },
        };
        let limiter = AnyKeyedLimiter::new(&spec, options, any_clock).map_err(|e| from_rust(py, e))?;
        Ok(PyKeyedLimiter { limiter, spec, clock })
    }

    /// Admits a request of ``cost`` units for ``key`` now if its limiter
    /// allows it, taking them, and says so with a ``Decision``; a refusal
    /// takes nothing (and a new key's refusal creates no key). A new key
    /// refused because the limiter is at ``max_keys`` gets a refusal too:
    /// ``try_check`` tells that case apart.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let py = key.py();
        let key = args::key(key)?;
        Ok(PyDecision(self.limiter.check(key.as_bytes(), cost.0).map_err(|e| from_rust(py, e))?))
    }

    /// ``check(key, cost).allowed``, taking what ``check`` would take,
    /// without making a ``Decision``: the cheapest call.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn allow(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<bool> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.allow(key.as_bytes(), cost.0).map_err(|e| from_rust(py, e))
    }

    /// ``check``, raising ``AtCapacity`` (a ``RateLimitExceeded``, with the
    /// refusal's ``decision``) when ``key`` is new and the limiter holds
    /// ``max_keys`` keys, none of which can be forgotten yet.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn try_check(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let bytes = args::key(key)?;
        match self.limiter.try_check(bytes.as_bytes(), cost.0).map_err(|e| from_rust(key.py(), e))? {
            Ok(decision) => Ok(PyDecision(decision)),
            Err(full) => Err(at_capacity(key.py(), &full)),
        }
    }

    /// The ``Decision`` ``check(key, cost)`` would make now, taking
    /// nothing.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let py = key.py();
        let key = args::key(key)?;
        Ok(PyDecision(self.limiter.peek(key.as_bytes(), cost.0).map_err(|e| from_rust(py, e))?))
    }

    /// ``peek``, raising ``AtCapacity`` as ``try_check`` does.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn try_peek(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<PyDecision> {
        let bytes = args::key(key)?;
        match self.limiter.try_peek(bytes.as_bytes(), cost.0).map_err(|e| from_rust(key.py(), e))? {
            Ok(decision) => Ok(PyDecision(decision)),
            Err(full) => Err(at_capacity(key.py(), &full)),
        }
    }

    /// Gives back ``cost`` units admitted for ``key`` that should not count
    /// (a request skipped or failed), now, as ``refund`` of the key's own
    /// limiter would; returns whether the key was held (a key not held is
    /// fresh, with nothing to give back, and a refund creates no key).
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn refund(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<bool> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.refund(key.as_bytes(), cost.0).map_err(|e| from_rust(py, e))
    }

    /// Forgets ``key`` whatever its state (it starts fresh if it comes
    /// back); returns whether it was held.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.remove(key.as_bytes()).map_err(|e| from_rust(py, e))
    }

    /// Forgets every key whose state is whole again (which changes no
    /// decision); returns how many. New keys do this on their own when the
    /// limiter is at its bound; call it to give memory back sooner.
    fn evict_full(&self) -> usize {
        self.limiter.evict_full()
    }

    fn __len__(&self) -> usize {
        self.limiter.len()
    }

    /// The most keys held at once.
    #[getter]
    fn max_keys(&self) -> usize {
        self.limiter.max_keys()
    }

    /// The longest key taken, in bytes.
    #[getter]
    fn max_key_bytes(&self) -> usize {
        self.limiter.max_key_bytes()
    }

    /// The most bytes the limiter can ever hold: ``max_keys`` keys of
    /// ``max_key_bytes``, each state at its largest, and the tables.
    #[getter]
    fn max_bytes(&self) -> usize {
        self.limiter.max_bytes()
    }

    /// ``"refuse_new_keys"`` or ``"evict_soonest_full"``.
    #[getter]
    fn when_full(&self) -> &'static str {
        self.limiter.when_full().name()
    }

    /// The algorithm of every key's limiter: ``"gcra"``, ``"fixed_window"``, ...
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.limiter.algorithm()
    }

    /// New keys' requests refused at the bound so far.
    #[getter]
    fn refused_new_keys(&self) -> u64 {
        self.limiter.refused_new_keys()
    }

    /// Keys forgotten before they were whole (``"evict_soonest_full"``) so
    /// far: each may have over-admitted once.
    #[getter]
    fn forced_evictions(&self) -> u64 {
        self.limiter.forced_evictions()
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "KeyedLimiter({}, max_keys={}, when_full='{}', max_key_bytes={}{})",
            spec_repr(py, &self.spec)?,
            self.limiter.max_keys(),
            self.limiter.when_full().name(),
            self.limiter.max_key_bytes(),
            clock::clock_repr(py, &self.clock)?
        ))
    }
}
