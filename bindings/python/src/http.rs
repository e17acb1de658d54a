//! The native part of `ratekeeper.http`: the Rust core [`ratekeeper::http`]
//! (limits as text, the response's header fields, the client's address
//! behind trusted proxies, limits text as one keyed limiter).
//!
//! Thin: each function converts its arguments, calls the core and maps its
//! errors. A limits text error becomes `InvalidArgumentError` with the
//! core's message and the byte offset at fault as `position`; a bad trusted
//! proxy the same, `position` its index in the list. The middleware
//! (`python/ratekeeper/http`) is pure Python on top of these.

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyString, PyTuple};
use ratekeeper::http::{self, HeaderStyle, HttpLimiter, LimiterTextError, Policy, RateItem, TrustedProxies};
use ratekeeper::keyed::{KeyedOptions, WhenFull};
use ratekeeper::{Algorithm, Argument, Decision, Error, LimiterSpec};

use crate::admission::{
    PyFixedWindow, PyGcra, PyLeakyBucketMeter, PyLeakyBucketQueue, PySlidingLog, PySlidingWindow,
    PySlidingWindowCounter, PyTokenBucket,
};
use crate::args::{self, Cost};
use crate::clock::{self, PyManualClock};
use crate::decision::{seconds_from_micros, PyDecision};
use crate::errors::{from_rust, invalid_at, invalid_named, wrong_type};
use crate::limiter::PyLimiter;

const DEFAULT_ALGORITHM: Algorithm = Algorithm::SlidingWindowCounter;

/// Limits as text (``"10/minute"``, ``"10 per minute"``, ``"100/hour;
/// 1000/day"``: the forms of the ``limits`` library, slowapi and
/// Flask-Limiter) as a list of ``RateItem``, one per limit. Bad text raises
/// ``InvalidArgumentError`` naming the byte offset at fault (also its
/// ``position``).
///
/// >>> [str(item) for item in parse_limits("100/hour; 1000 per day")]
/// ['100 per 1 hour', '1000 per 1 day']
#[pyfunction]
pub fn parse_limits(limits: &Bound<'_, PyAny>) -> PyResult<Vec<PyRateItem>> {
    Ok(items(limits)?.into_iter().map(PyRateItem).collect())
}

fn items(limits: &Bound<'_, PyAny>) -> PyResult<Vec<RateItem>> {
    let text = limits.cast::<PyString>().map_err(|_| wrong_type("limits", limits, "limits as text (a str)"))?;
    http::parse_limits(&text.to_cow()?).map_err(|e| invalid_at("limits", limits, e.to_string(), e.position))
}

fn algorithm(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Algorithm> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(DEFAULT_ALGORITHM) };
    let name = obj.cast::<PyString>().map_err(|_| wrong_type("algorithm", obj, "an algorithm's name (a str)"))?;
    Algorithm::from_wire_name(&name.to_cow()?).ok_or_else(|| {
        let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.wire_name()).collect();
        invalid_named("algorithm", obj, &format!("must be one of {}", names.join(", ")))
    })
}

/// One limit of a limits text: ``amount`` units per ``multiples`` ×
/// ``unit`` (``"second"`` … ``"year"``; a month is 30 days, a year 365).
/// ``str()`` writes it back as text ``parse_limits`` reads.
#[pyclass(frozen, eq, hash, module = "ratekeeper._ratekeeper", name = "RateItem")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyRateItem(RateItem);

#[pymethods]
impl PyRateItem {
    #[getter]
    fn amount(&self) -> u64 {
        self.0.amount
    }

    #[getter]
    fn multiples(&self) -> u64 {
        self.0.multiples
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.0.unit.name()
    }

    /// The window in seconds.
    #[getter]
    fn window(&self) -> f64 {
        seconds_from_micros(self.0.window_micros())
    }

    #[getter]
    fn window_micros(&self) -> i64 {
        self.0.window_micros()
    }

    /// The policy's name in the header fields: ``"10-in-1min"``.
    #[getter]
    fn policy_name(&self) -> String {
        self.0.policy_name()
    }

    /// A limiter of ``algorithm`` (``"sliding_window_counter"`` by default;
    /// any of the registry's: the limit is ``amount``, the window the
    /// item's) on ``clock``: a template for ``KeyedLimiter`` or a Redis
    /// limiter.
    #[pyo3(signature = (algorithm = None, *, clock = None), text_signature = "($self, algorithm='sliding_window_counter', *, clock=None)")]
    fn template(
        &self,
        py: Python<'_>,
        algorithm: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let spec = self.0.spec(self::algorithm(algorithm)?).map_err(|e| from_rust(py, e))?;
        let base = PyLimiter::one(py, spec, clock, &[])?;
        Ok(match spec {
            LimiterSpec::TokenBucket { .. } => Py::new(py, base.add_subclass(PyTokenBucket))?.into_any(),
            LimiterSpec::Gcra { .. } => Py::new(py, base.add_subclass(PyGcra))?.into_any(),
            LimiterSpec::LeakyBucketMeter { .. } => Py::new(py, base.add_subclass(PyLeakyBucketMeter))?.into_any(),
            LimiterSpec::LeakyBucketQueue { .. } => Py::new(py, base.add_subclass(PyLeakyBucketQueue))?.into_any(),
            LimiterSpec::FixedWindow { .. } => Py::new(py, base.add_subclass(PyFixedWindow))?.into_any(),
            LimiterSpec::SlidingWindow { .. } => Py::new(py, base.add_subclass(PySlidingWindow))?.into_any(),
            LimiterSpec::SlidingLog { .. } => Py::new(py, base.add_subclass(PySlidingLog))?.into_any(),
            LimiterSpec::SlidingWindowCounter { .. } => {
                Py::new(py, base.add_subclass(PySlidingWindowCounter))?.into_any()
            }
        })
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("RateItem({:?})", self.0.to_string())
    }
}

/// The proxies whose forwarding headers are believed: IP addresses, CIDR
/// blocks (``"10.0.0.0/8"``, ``"fd00::/8"``), ``"loopback"`` and
/// ``"private"`` (RFC 1918 and ``fc00::/7``). A bad entry raises
/// ``InvalidArgumentError``, its ``position`` the entry's index.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "TrustedProxies")]
#[derive(Debug)]
pub struct PyTrustedProxies {
    proxies: TrustedProxies,
    entries: Vec<String>,
}

fn ip(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<IpAddr> {
    let text = obj.cast::<PyString>().map_err(|_| wrong_type(name, obj, "an IP address (a str)"))?;
    text.to_cow()?.trim().parse().map_err(|_| invalid_named(name, obj, "must be an IP address"))
}

fn optional_text<'a>(obj: Option<&'a Bound<'_, PyAny>>, name: &str) -> PyResult<Option<std::borrow::Cow<'a, str>>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(obj) => Ok(Some(obj.cast::<PyString>().map_err(|_| wrong_type(name, obj, "a str or None"))?.to_cow()?)),
    }
}

#[pymethods]
impl PyTrustedProxies {
    #[new]
    #[pyo3(signature = (entries = None), text_signature = "(entries=())")]
    fn new(entries: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        const EXPECTED: &str = "an iterable of str";
        let mut texts = Vec::new();
        if let Some(entries) = entries.filter(|e| !e.is_none()) {
            if entries.is_instance_of::<PyString>() {
                return Err(wrong_type("entries", entries, "a list of str, not one str"));
            }
            for entry in entries.try_iter().map_err(|_| wrong_type("entries", entries, EXPECTED))? {
                let entry = entry?;
                let text = entry.cast::<PyString>().map_err(|_| wrong_type("entries", entries, EXPECTED))?;
                texts.push(text.to_cow()?.into_owned());
            }
            let proxies = TrustedProxies::parse(texts.iter().map(String::as_str))
                .map_err(|e| invalid_at("entries", entries, e.to_string(), e.index))?;
            return Ok(PyTrustedProxies { proxies, entries: texts });
        }
        Ok(PyTrustedProxies { proxies: TrustedProxies::none(), entries: texts })
    }

    /// Whether ``address`` (an IP address) is a trusted proxy.
    fn contains(&self, address: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.proxies.contains(ip(address, "address")?))
    }

    /// Whether no proxy is trusted (every peer is the client).
    #[getter]
    fn empty(&self) -> bool {
        self.proxies.is_empty()
    }

    /// The client's address: ``peer`` (the TCP peer), or while that hop is
    /// trusted, the hop before it that ``forwarded`` (RFC 7239, preferred)
    /// or ``x_forwarded_for`` names, rightmost first. An untrusted peer's
    /// headers are ignored. IPv4-mapped IPv6 addresses come back as IPv4.
    #[pyo3(signature = (peer, forwarded = None, x_forwarded_for = None))]
    fn client_address(
        &self,
        peer: &Bound<'_, PyAny>,
        forwarded: Option<&Bound<'_, PyAny>>,
        x_forwarded_for: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let peer = ip(peer, "peer")?;
        let forwarded = optional_text(forwarded, "forwarded")?;
        let x_forwarded_for = optional_text(x_forwarded_for, "x_forwarded_for")?;
        Ok(http::client_address(peer, forwarded.as_deref(), x_forwarded_for.as_deref(), &self.proxies).to_string())
    }

    fn __repr__(&self) -> String {
        format!("TrustedProxies({:?})", self.entries)
    }
}

fn decisions(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Decision>> {
    const EXPECTED: &str = "a sequence of Decision";
    let mut out = Vec::new();
    for item in obj.try_iter().map_err(|_| wrong_type(name, obj, EXPECTED))? {
        let item = item?;
        out.push(item.cast::<PyDecision>().map_err(|_| wrong_type(name, obj, EXPECTED))?.get().0);
    }
    Ok(out)
}

/// Every HTTP header field for one request, as ``(name, value)`` pairs in
/// canonical case and in order: ``decision`` admitted or refused it (the
/// combined one of several limits), ``parts`` has one ``Decision`` per limit
/// and ``names`` their policy names. ``style``: ``"draft-8"`` (the
/// default), ``"draft-7"``, ``"draft-6"`` or ``"none"``; ``legacy=True``
/// adds ``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset`` (``now``: the
/// Unix time in seconds, the system's by default); ``Retry-After`` on a
/// refusal that a wait can admit.
#[pyfunction]
#[pyo3(signature = (decision, parts, names, style = None, legacy = false, now = None))]
#[pyo3(text_signature = "(decision, parts, names, style='draft-8', legacy=False, now=None)")]
pub fn response_fields<'py>(
    decision: PyRef<'_, PyDecision>,
    parts: &Bound<'py, PyAny>,
    names: &Bound<'py, PyAny>,
    style: Option<&Bound<'py, PyAny>>,
    legacy: bool,
    now: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let py = parts.py();
    let style = match style.filter(|s| !s.is_none()) {
        None => HeaderStyle::default(),
        Some(obj) => {
            let name = obj.cast::<PyString>().map_err(|_| wrong_type("style", obj, "a str"))?;
            HeaderStyle::from_name(&name.to_cow()?)
                .ok_or_else(|| invalid_named("style", obj, "must be 'draft-6', 'draft-7', 'draft-8' or 'none'"))?
        }
    };
    let now = match now.filter(|n| !n.is_none()) {
        None => SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        Some(obj) => args::non_negative_int(obj, "now")?.unsigned_abs(),
    };
    let decisions = decisions(parts, "parts")?;
    let mut texts = Vec::with_capacity(decisions.len());
    for name in names.try_iter().map_err(|_| wrong_type("names", names, "a sequence of str"))? {
        let name = name?;
        texts.push(name.cast_into::<PyString>().map_err(|_| wrong_type("names", names, "a sequence of str"))?);
    }
    if texts.len() != decisions.len() {
        return Err(invalid_named("names", names, "must name every part, one name per decision"));
    }
    let cows = texts.iter().map(|t| t.to_cow()).collect::<PyResult<Vec<_>>>()?;
    let policies: Vec<Policy<'_>> =
        cows.iter().zip(&decisions).map(|(name, decision)| Policy { name, decision: *decision }).collect();
    let fields = http::response_fields(&decision.0, &policies, style, legacy, now).map_err(|e| from_rust(py, e))?;
    let list = PyList::empty(py);
    for (name, value) in fields {
        list.append(PyTuple::new(py, [PyString::intern(py, name), PyString::new(py, &value)])?)?;
    }
    Ok(list)
}

/// The decision of several limits that must all admit a request, from each
/// one's: the strictest (ratekeeper's composite rule). Empty raises
/// ``InvalidArgumentError``.
#[pyfunction]
pub fn combine_decisions(decisions: &Bound<'_, PyAny>) -> PyResult<PyDecision> {
    let parts = self::decisions(decisions, "decisions")?;
    ratekeeper::core::decision::combine(parts)
        .map(PyDecision)
        .ok_or_else(|| from_rust(decisions.py(), Error::invalid_int(Argument::Limits, 0)))
}

/// Limits as text, one keyed limiter for all of them: per key, every limit
/// admits a request or none takes anything (the core's
/// ``limiter_from_text``: a keyed limiter for one limit, the keyed
/// composite for several). Each limit runs ``algorithm``
/// (``"sliding_window_counter"`` by default); at most ``max_keys`` keys, as
/// ``KeyedLimiter``'s options say. ``check`` answers the combined
/// ``Decision`` and one per limit, in the text's order, their names in
/// ``policies``.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "KeyedLimits")]
#[derive(Debug)]
pub struct PyKeyedLimits {
    limiter: HttpLimiter,
    algorithm: Algorithm,
    clock: Option<Py<PyManualClock>>,
}

fn decisions_out((combined, parts): (Decision, Vec<Decision>)) -> (PyDecision, Vec<PyDecision>) {
    (PyDecision(combined), parts.into_iter().map(PyDecision).collect())
}

#[pymethods]
impl PyKeyedLimits {
    #[new]
    #[pyo3(signature = (limits, algorithm = None, *, max_keys = None, when_full = None, max_key_bytes = None, clock = None))]
    #[pyo3(
        text_signature = "(limits, algorithm='sliding_window_counter', *, max_keys=100000, when_full='refuse_new_keys', max_key_bytes=256, clock=None)"
    )]
    fn new(
        limits: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
        max_keys: Option<&Bound<'_, PyAny>>,
        when_full: Option<&Bound<'_, PyAny>>,
        max_key_bytes: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = limits.py();
        let text = limits.cast::<PyString>().map_err(|_| wrong_type("limits", limits, "limits as text (a str)"))?;
        let algorithm = self::algorithm(algorithm)?;
        let max = match max_keys.filter(|m| !m.is_none()) {
            None => 100_000,
            Some(obj) => args::count(obj, Argument::MaxKeys)?,
        };
        let max = usize::try_from(max).map_err(|_| from_rust(py, Error::invalid_uint(Argument::MaxKeys, max)))?;
        let mut options = KeyedOptions::new(max);
        if let Some(policy) = when_full.filter(|w| !w.is_none()) {
            let name = policy.cast::<PyString>().map_err(|_| wrong_type("when_full", policy, "a str"))?;
            let policy = WhenFull::from_name(&name.to_cow()?).ok_or_else(|| {
                invalid_named("when_full", policy, "must be 'refuse_new_keys' or 'evict_soonest_full'")
            })?;
            options = options.when_full(policy);
        }
        options = options.max_key_bytes(args::max_key_bytes(max_key_bytes)?);
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let limiter = http::limiter_from_text(&text.to_cow()?, algorithm, options, any_clock).map_err(|e| match e {
            LimiterTextError::Text(e) => invalid_at("limits", limits, e.to_string(), e.position),
            LimiterTextError::Invalid(e) => from_rust(py, e),
        })?;
        Ok(PyKeyedLimits { limiter, algorithm, clock })
    }

    /// Admits a request of ``cost`` units for ``key`` when every limit
    /// does, taking them from each, else takes nothing: ``(combined,
    /// [one Decision per limit])``.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn check(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<(PyDecision, Vec<PyDecision>)> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.check(key.as_bytes(), cost.0).map(decisions_out).map_err(|e| from_rust(py, e))
    }

    /// What ``check`` would answer now, taking nothing.
    #[pyo3(signature = (key, cost = Cost::ONE), text_signature = "($self, key, cost=1)")]
    fn peek(&self, key: &Bound<'_, PyAny>, cost: Cost) -> PyResult<(PyDecision, Vec<PyDecision>)> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.peek(key.as_bytes(), cost.0).map(decisions_out).map_err(|e| from_rust(py, e))
    }

    /// Forgets ``key`` (its quota whole again); ``True`` if it was held.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = key.py();
        let key = args::key(key)?;
        self.limiter.remove(key.as_bytes()).map_err(|e| from_rust(py, e))
    }

    fn __len__(&self) -> usize {
        self.limiter.len()
    }

    /// The limits, in the text's order.
    #[getter]
    fn items(&self) -> Vec<PyRateItem> {
        self.limiter.items().iter().copied().map(PyRateItem).collect()
    }

    /// Each limit's policy name (``"10-in-1min"``), in order.
    #[getter]
    fn policies(&self) -> Vec<String> {
        self.limiter.policy_names().to_vec()
    }

    #[getter]
    fn algorithm(&self) -> &'static str {
        self.algorithm.wire_name()
    }

    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        let text: Vec<String> = self.limiter.items().iter().map(ToString::to_string).collect();
        format!("KeyedLimits({:?}, {:?})", text.join("; "), self.algorithm.wire_name())
    }
}

/// The rate-limit key of a client at `address` (an IP address as text):
/// an IPv4 address (and an IPv4-mapped IPv6 one) as it is, an IPv6 one as
/// its block of ``ipv6_prefix`` bits in CIDR notation
/// (``"2001:db8:0:100::/56"``; 128: the address alone). The same key as
/// the Rust and Node middleware give the same client.
#[pyfunction]
#[pyo3(signature = (address, ipv6_prefix = None), text_signature = "(address, ipv6_prefix=56)")]
pub fn client_key(address: &Bound<'_, PyAny>, ipv6_prefix: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let prefix = ipv6_prefix.map_or(Ok(http::Ipv6Prefix::DEFAULT), ipv6_prefix_of)?;
    Ok(http::ClientKey::new(ip(address, "address")?, prefix).to_string())
}

/// An IPv6 key prefix from an `int`, its range checked by the library.
fn ipv6_prefix_of(obj: &Bound<'_, PyAny>) -> PyResult<http::Ipv6Prefix> {
    const NAME: &str = "ipv6_prefix";
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(wrong_type(NAME, obj, "an int"));
    }
    // An int beyond i64 is out of range as surely as 129.
    let bits = obj.extract::<i64>().unwrap_or(i64::MAX);
    http::Ipv6Prefix::new(bits).map_err(|e| invalid_named(NAME, obj, &e.to_string()))
}

/// Adds the classes and functions of `ratekeeper.http`'s native part.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyRateItem>()?;
    module.add_class::<PyTrustedProxies>()?;
    module.add_class::<PyKeyedLimits>()?;
    module.add_function(wrap_pyfunction!(parse_limits, module)?)?;
    module.add_function(wrap_pyfunction!(response_fields, module)?)?;
    module.add_function(wrap_pyfunction!(combine_decisions, module)?)?;
    module.add_function(wrap_pyfunction!(client_key, module)?)?;
    Ok(())
}
