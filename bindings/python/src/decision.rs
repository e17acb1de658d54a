//! `ratekeeper.Decision`: the one answer of every admission-style limiter,
//! as a frozen Python value, and the HTTP fields it becomes.
//!
//! The Rust [`Decision`] is plain numbers in whole microseconds with
//! [`NEVER`] (`i64::MAX`) for "never". Python gets both views: the exact
//! integers (`retry_after_micros`, ...) and seconds as floats
//! (`retry_after`, ...), where never is `math.inf`. The header fields are
//! formatted by the Rust library (`ratekeeper::headers`), so they are the
//! same strings in every language.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString, PyTuple};
use ratekeeper::{headers, Decision, NEVER};

use crate::args;
use crate::errors::{from_rust, wrong_type};

/// A duration of the core in seconds: `NEVER` is `math.inf`; otherwise
/// Guava's `1.0 * micros / 1e6`, as `ratekeeper::wait_as_seconds`.
pub fn seconds_from_micros(micros: i64) -> f64 {
    if micros == NEVER {
        f64::INFINITY
    } else {
        micros as f64 / 1e6
    }
}

/// The answer to one request from an admission-style limiter.
///
/// A refusal is a ``Decision`` too, never an exception, and took nothing.
/// ``bool(decision)`` is ``decision.allowed``. Durations are seconds
/// (floats; ``math.inf`` means never), each also as exact whole
/// microseconds (``*_micros``; never is ``2**63 - 1``). Equal decisions
/// compare and hash equal; ``repr`` gives the constructor call.
///
/// >>> d = FixedWindow(100, 60.0, clock=ManualClock()).check()
/// >>> d.allowed, d.remaining, d.reset_after
/// (True, 99, 60.0)
/// >>> d.headers("api")
/// {'RateLimit-Policy': '"api";q=100;w=60', 'RateLimit': '"api";r=99;t=60'}
#[pyclass(frozen, eq, hash, module = "ratekeeper._ratekeeper", name = "Decision")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDecision(pub Decision);

#[pymethods]
impl PyDecision {
    /// A decision from its fields (durations in whole microseconds, as
    /// ``repr`` prints them): for tests of code that formats or acts on
    /// decisions. Limiters make their own.
    #[new]
    #[pyo3(signature = (
        allowed, limit, remaining, retry_after_micros=None, reset_after_micros=None, wait_micros=None,
        window_micros=None
    ))]
    #[pyo3(
        text_signature = "(allowed, limit, remaining, retry_after_micros=0, reset_after_micros=0, wait_micros=0, window_micros=0)"
    )]
    fn new(
        allowed: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        remaining: &Bound<'_, PyAny>,
        retry_after_micros: Option<&Bound<'_, PyAny>>,
        reset_after_micros: Option<&Bound<'_, PyAny>>,
        wait_micros: Option<&Bound<'_, PyAny>>,
        window_micros: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let micros = |obj: Option<&Bound<'_, PyAny>>, name| obj.map_or(Ok(0), |o| args::non_negative_int(o, name));
        Ok(PyDecision(Decision {
            allowed: args::boolean(allowed, "allowed")?,
            limit: args::non_negative_int(limit, "limit")? as u64,
            remaining: args::non_negative_int(remaining, "remaining")? as u64,
            retry_after_micros: micros(retry_after_micros, "retry_after_micros")?,
            reset_after_micros: micros(reset_after_micros, "reset_after_micros")?,
            wait_micros: micros(wait_micros, "wait_micros")?,
            window_micros: micros(window_micros, "window_micros")?,
        }))
    }

    /// Whether the request was admitted (its cost taken). A refused
    /// request took nothing.
    #[getter]
    fn allowed(&self) -> bool {
        self.0.allowed
    }

    /// The quota: the most units the limiter admits at once when whole (a
    /// bucket's burst, a window's limit). The ``q`` of ``RateLimit-Policy``.
    #[getter]
    fn limit(&self) -> u64 {
        self.0.limit
    }

    /// Units that could still be admitted now, after this decision. The
    /// ``r`` of ``RateLimit``.
    #[getter]
    fn remaining(&self) -> u64 {
        self.0.remaining
    }

    /// Refused: seconds until the same request would be admitted
    /// (``math.inf`` when no wait can help: it costs more than ``limit``).
    /// 0.0 when admitted.
    #[getter]
    fn retry_after(&self) -> f64 {
        seconds_from_micros(self.0.retry_after_micros)
    }

    /// Seconds until the limiter is whole again if nothing else is
    /// admitted (``math.inf`` if it never refills). The ``t`` of
    /// ``RateLimit``.
    #[getter]
    fn reset_after(&self) -> f64 {
        seconds_from_micros(self.0.reset_after_micros)
    }

    /// Admitted: seconds the caller must wait before acting (a shaper's
    /// slot, a token bucket's reservation); 0.0 for policing algorithms.
    #[getter]
    fn wait(&self) -> f64 {
        seconds_from_micros(self.0.wait_micros)
    }

    /// The seconds over which ``limit`` is granted (a window's length, a
    /// bucket's time to refill from empty; ``math.inf`` if never). The
    /// ``w`` of ``RateLimit-Policy``.
    #[getter]
    fn window(&self) -> f64 {
        seconds_from_micros(self.0.window_micros)
    }

    /// ``retry_after`` in exact whole microseconds (never: ``2**63 - 1``).
    #[getter]
    fn retry_after_micros(&self) -> i64 {
        self.0.retry_after_micros
    }

    /// ``reset_after`` in exact whole microseconds (never: ``2**63 - 1``).
    #[getter]
    fn reset_after_micros(&self) -> i64 {
        self.0.reset_after_micros
    }

    /// ``wait`` in exact whole microseconds.
    #[getter]
    fn wait_micros(&self) -> i64 {
        self.0.wait_micros
    }

    /// ``window`` in exact whole microseconds (never: ``2**63 - 1``).
    #[getter]
    fn window_micros(&self) -> i64 {
        self.0.window_micros
    }

    /// Whether no wait can ever admit this request (refused, and it costs
    /// more than the limiter can hold).
    #[getter]
    fn is_never(&self) -> bool {
        self.0.is_never()
    }

    /// This decision as the value of an HTTP ``RateLimit`` field
    /// (draft-ietf-httpapi-ratelimit-headers): ``"NAME";r=REMAINING;t=SECONDS``,
    /// seconds rounded up. ``policy_name`` must be printable ASCII.
    #[pyo3(signature = (policy_name = PolicyName::DEFAULT), text_signature = "($self, policy_name='default')")]
    fn ratelimit_header(&self, py: Python<'_>, policy_name: PolicyName) -> PyResult<String> {
        headers::ratelimit(&[(policy_name.as_str(), self.0)]).map_err(|e| from_rust(py, e))
    }

    /// The policy behind this decision as the value of an HTTP
    /// ``RateLimit-Policy`` field: ``"NAME";q=LIMIT;w=SECONDS``.
    #[pyo3(signature = (policy_name = PolicyName::DEFAULT), text_signature = "($self, policy_name='default')")]
    fn ratelimit_policy_header(&self, py: Python<'_>, policy_name: PolicyName) -> PyResult<String> {
        headers::ratelimit_policy(&[(policy_name.as_str(), self.0)]).map_err(|e| from_rust(py, e))
    }

    /// The value of an HTTP ``Retry-After`` field: whole seconds, rounded
    /// up, for a refused request that a wait can admit; ``None`` otherwise
    /// (send no ``Retry-After``: it cannot say "never").
    fn retry_after_header(&self) -> Option<String> {
        headers::retry_after(&self.0)
    }

    /// The HTTP fields for this decision, ready to add to a response:
    /// ``RateLimit-Policy`` and ``RateLimit``, and ``Retry-After`` when
    /// ``retry_after_header()`` gives one.
    #[pyo3(signature = (policy_name = PolicyName::DEFAULT), text_signature = "($self, policy_name='default')")]
    fn headers<'py>(&self, py: Python<'py>, policy_name: PolicyName) -> PyResult<Bound<'py, PyDict>> {
        let items = [(policy_name.as_str(), self.0)];
        let fields = PyDict::new(py);
        fields.set_item("RateLimit-Policy", headers::ratelimit_policy(&items).map_err(|e| from_rust(py, e))?)?;
        fields.set_item("RateLimit", headers::ratelimit(&items).map_err(|e| from_rust(py, e))?)?;
        if let Some(retry_after) = headers::retry_after(&self.0) {
            fields.set_item("Retry-After", retry_after)?;
        }
        Ok(fields)
    }

    fn __bool__(&self) -> bool {
        self.0.allowed
    }

    fn __repr__(&self) -> String {
        let d = &self.0;
        format!(
            "Decision(allowed={}, limit={}, remaining={}, retry_after_micros={}, reset_after_micros={}, \
             wait_micros={}, window_micros={})",
            if d.allowed { "True" } else { "False" },
            d.limit,
            d.remaining,
            d.retry_after_micros,
            d.reset_after_micros,
            d.wait_micros,
            d.window_micros
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let d = slf.get().0;
        let fields = (
            d.allowed,
            d.limit,
            d.remaining,
            d.retry_after_micros,
            d.reset_after_micros,
            d.wait_micros,
            d.window_micros,
        );
        Ok((slf.get_type().into_any(), fields.into_pyobject(slf.py())?))
    }
}

/// A `policy_name` argument: a `str` (checked printable ASCII by the
/// library when it writes the field); `"default"` when omitted.
pub struct PolicyName(Option<String>);

impl PolicyName {
    const DEFAULT: PolicyName = PolicyName(None);

    fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("default")
    }
}

impl<'py> FromPyObject<'_, 'py> for PolicyName {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match obj.cast::<PyString>() {
            Ok(s) => Ok(PolicyName(Some(s.to_cow()?.into_owned()))),
            Err(_) => Err(wrong_type("policy_name", &obj, "a str")),
        }
    }
}

/// The named decisions of ``policies``: a mapping of names to decisions,
/// or an iterable of ``(name, decision)`` pairs.
fn named_decisions(policies: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Decision)>> {
    const EXPECTED: &str = "a mapping of str to Decision, or an iterable of (str, Decision) pairs";
    let items = match policies.cast::<PyMapping>() {
        Ok(mapping) => mapping.items()?.into_any(),
        Err(_) => policies.clone(),
    };
    let iter = items.try_iter().map_err(|_| wrong_type("policies", policies, EXPECTED))?;
    let mut named = Vec::new();
    for item in iter {
        let item = item?;
        let pair = item.cast::<PyTuple>().ok().filter(|t| t.len() == 2);
        let Some(pair) = pair else { return Err(wrong_type("policies", policies, EXPECTED)) };
        let name = pair.get_item(0)?;
        let decision = pair.get_item(1)?;
        let (Ok(name), Ok(decision)) = (name.cast::<PyString>(), decision.cast::<PyDecision>()) else {
            return Err(wrong_type("policies", policies, EXPECTED));
        };
        named.push((name.to_cow()?.into_owned(), decision.get().0));
    }
    Ok(named)
}

/// The value of one HTTP ``RateLimit`` field for several named decisions
/// (the parts of a ``CompositeLimiter.check_each``, say):
/// ``"a";r=1;t=1, "b";r=9;t=60``. ``policies`` is a mapping of names to
/// decisions or an iterable of ``(name, decision)`` pairs, in order.
#[pyfunction]
pub fn ratelimit_header(policies: &Bound<'_, PyAny>) -> PyResult<String> {
    let named = named_decisions(policies)?;
    let items: Vec<(&str, Decision)> = named.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    headers::ratelimit(&items).map_err(|e| from_rust(policies.py(), e))
}

/// The value of one HTTP ``RateLimit-Policy`` field for several named
/// decisions: ``"a";q=10;w=1, "b";q=1000;w=3600``. ``policies`` as for
/// ``ratelimit_header``.
#[pyfunction]
pub fn ratelimit_policy_header(policies: &Bound<'_, PyAny>) -> PyResult<String> {
    let named = named_decisions(policies)?;
    let items: Vec<(&str, Decision)> = named.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    headers::ratelimit_policy(&items).map_err(|e| from_rust(policies.py(), e))
}
