//! `ratekeeper.Limiter`: the base class of every admission-style limiter,
//! and the one code path they share.
//!
//! Each named class (`TokenBucket`, `Gcra`, the windows, ...; see
//! [`admission`](crate::admission)) only turns its constructor's arguments
//! into a [`LimiterSpec`]; this base builds the Rust limiter from it
//! ([`AnyLimiter`], or a [`CompositeLimiter`] of several) and owns `check`,
//! `peek` and `allow`. It keeps the spec, so that any limiter can serve as
//! the template of another (a `CompositeLimiter`'s parts, a
//! `KeyedLimiter`'s per-key limiter).

use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use ratekeeper::{
    Algorithm, AnyClock, AnyLimiter, Argument, CompositeLimiter, Decision, LeakyBucketMeter, LeakyBucketQueue,
    LimiterSpec, Parameter, ParameterKind, ParameterSource, ParameterValue, TokenBucket,
};

use crate::args::{self, Cost};
use crate::clock::{self, PyManualClock};
use crate::decision::PyDecision;
use crate::errors::{from_rust, from_rust_passed, internal, wrong_type};
use crate::float_repr;

/// The Rust limiter behind a `Limiter`.
///
/// (Its variants differ in size, which clippy flags; there is one per
/// Python object, so boxing the larger would only add a pointer to follow
/// on every call.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Engine {
    /// One algorithm, and the spec it was built from (a token bucket's rate
    /// and burst, a window's limit, may change since;
    /// [`PyLimiter::current_spec`] reads them).
    One { limiter: AnyLimiter<AnyClock>, spec: LimiterSpec },
    /// Several, admitted all or nothing.
    All(CompositeLimiter<AnyClock>),
}

/// The base class of every admission-style limiter (``TokenBucket``,
/// ``Gcra``, ``LeakyBucketMeter``, ``LeakyBucketQueue``, ``FixedWindow``,
/// ``SlidingWindow``, ``SlidingLog``, ``SlidingWindowCounter``,
/// ``CompositeLimiter``): each answers ``check(cost)`` with a ``Decision``.
///
/// Not instantiated itself; use it in type hints and ``isinstance``. Every
/// limiter is safe to share between threads: a decision is one atomic
/// compare-and-swap (a mutex for ``SlidingLog`` and ``CompositeLimiter``).
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "Limiter")]
#[derive(Debug)]
pub struct PyLimiter {
    pub(crate) engine: Engine,
    /// The `ManualClock` the limiter runs on, as the caller passed it.
    pub(crate) clock: Option<Py<PyManualClock>>,
}

impl PyLimiter {
    /// The base of a limiter of one algorithm: built from `spec` on the
    /// clock `clock` (the `clock=` argument). `passed` are the arguments
    /// converted on the way to `spec` (durations), so that an error about
    /// one shows it as passed.
    pub(crate) fn one(
        py: Python<'_>,
        spec: LimiterSpec,
        clock: Option<&Bound<'_, PyAny>>,
        passed: &[(Argument, &Bound<'_, PyAny>)],
    ) -> PyResult<PyClassInitializer<Self>> {
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let limiter = AnyLimiter::with_clock(&spec, any_clock).map_err(|e| from_rust_passed(py, e, passed))?;
        Ok(PyClassInitializer::from(PyLimiter { engine: Engine::One { limiter, spec }, clock }))
    }

    /// The base of a limiter of `algorithm` from its constructor's
    /// `arguments`: the registry's parameters, in its order, each converted
    /// as its kind is (a float, an int, seconds or a `timedelta`) and
    /// checked as its argument, on the clock `clock` (the `clock=`
    /// argument). Trailing parameters with a registry default may be left
    /// out of `arguments` (their keyword defaulted to `None`).
    pub(crate) fn of(
        algorithm: Algorithm,
        arguments: &[&Bound<'_, PyAny>],
        clock: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let Some(first) = arguments.first() else {
            return Err(internal("a limiter of one algorithm takes its parameters"));
        };
        let py = first.py();
        let spec = LimiterSpec::read(algorithm, &mut Arguments { py, arguments, next: 0 })?;
        // An error about a duration shows it as passed, not in microseconds.
        let passed: Vec<(Argument, &Bound<'_, PyAny>)> = algorithm
            .parameters()
            .iter()
            .zip(arguments)
            .filter(|(p, _)| p.kind() == ParameterKind::Duration)
            .map(|(p, a)| (p.argument(), *a))
            .collect();
        Self::one(py, spec, clock, &passed)
    }

    /// The base of a composite of `specs`, on `clock`.
    pub(crate) fn all(
        py: Python<'_>,
        specs: &[LimiterSpec],
        any_clock: AnyClock,
        clock: Option<Py<PyManualClock>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let composite = CompositeLimiter::with_clock(specs, any_clock).map_err(|e| from_rust(py, e))?;
        Ok(PyClassInitializer::from(PyLimiter { engine: Engine::All(composite), clock }))
    }

    #[inline]
    fn decide(&self, cost: u64) -> Decision {
        match &self.engine {
            Engine::One { limiter, .. } => limiter.check(cost),
            Engine::All(composite) => composite.check(cost),
        }
    }

    /// The spec of a one-algorithm limiter with its parameters now (a token
    /// bucket's rate and burst, a window's limit, as last set); `None` for
    /// a composite.
    pub(crate) fn current_spec(&self) -> Option<LimiterSpec> {
        match &self.engine {
            Engine::One { limiter: AnyLimiter::TokenBucket(bucket), .. } => {
                Some(LimiterSpec::TokenBucket { rate: bucket.rate(), burst: bucket.burst() })
            }
            Engine::One { limiter, spec } => {
                let mut spec = *spec;
                if let (
                    Some(now),
                    LimiterSpec::FixedWindow { limit, .. }
                    | LimiterSpec::SlidingWindow { limit, .. }
                    | LimiterSpec::SlidingLog { limit, .. }
                    | LimiterSpec::SlidingWindowCounter { limit, .. },
                ) = (limiter.window_limit(), &mut spec)
                {
                    *limit = now;
                }
                Some(spec)
            }
            Engine::All(_) => None,
        }
    }

    /// The limiter of a window (`FixedWindow`, `SlidingWindow`,
    /// `SlidingLog`, `SlidingWindowCounter`).
    pub(crate) fn window(&self) -> PyResult<&AnyLimiter<AnyClock>> {
        match &self.engine {
            Engine::One { limiter, .. } if limiter.window_limit().is_some() => Ok(limiter),
            _ => Err(not_a("window")),
        }
    }

    /// The token bucket of a `TokenBucket`.
    pub(crate) fn token_bucket(&self) -> PyResult<&TokenBucket<AnyClock>> {
        match &self.engine {
            Engine::One { limiter: AnyLimiter::TokenBucket(bucket), .. } => Ok(bucket),
            _ => Err(not_a("token bucket")),
        }
    }

    /// The queue of a `LeakyBucketQueue`.
    pub(crate) fn queue(&self) -> PyResult<&LeakyBucketQueue<AnyClock>> {
        match &self.engine {
            Engine::One { limiter: AnyLimiter::LeakyBucketQueue(queue), .. } => Ok(queue),
            _ => Err(not_a("leaky bucket queue")),
        }
    }

    /// The meter of a `LeakyBucketMeter`.
    pub(crate) fn meter(&self) -> PyResult<&LeakyBucketMeter<AnyClock>> {
        match &self.engine {
            Engine::One { limiter: AnyLimiter::LeakyBucketMeter(meter), .. } => Ok(meter),
            _ => Err(not_a("leaky bucket meter")),
        }
    }

    /// The composite of a `CompositeLimiter`.
    pub(crate) fn composite(&self) -> PyResult<&CompositeLimiter<AnyClock>> {
        match &self.engine {
            Engine::All(composite) => Ok(composite),
            Engine::One { .. } => Err(not_a("composite limiter")),
        }
    }
}

/// The spec of a `template` argument (a `KeyedLimiter`'s, a Redis
/// limiter's): a limiter of one algorithm, with its parameters now.
pub(crate) fn template_spec(template: &Bound<'_, PyAny>) -> PyResult<LimiterSpec> {
    const EXPECTED_TEMPLATE: &str = "a limiter of one algorithm (TokenBucket, Gcra, FixedWindow, ...)";
    let part = template.cast::<PyLimiter>().map_err(|_| wrong_type("template", template, EXPECTED_TEMPLATE))?;
    part.get().current_spec().ok_or_else(|| wrong_type("template", template, EXPECTED_TEMPLATE))
}

/// Cannot happen (each class builds its own kind); an error, not a panic.
fn not_a(kind: &str) -> PyErr {
    internal(&format!("this limiter is not a {kind}"))
}

#[pymethods]
impl PyLimiter {
    /// Admits a request of ``cost`` units now if the limit allows it,
    /// taking them, and says so with a ``Decision``; a refusal takes
    /// nothing. Never waits (a ``LeakyBucketQueue``'s decision says how long
    /// to wait for its slot). A cost of 0 is a free look.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn check(&self, cost: Cost) -> PyDecision {
        PyDecision(self.decide(cost.0))
    }

    /// The ``Decision`` that ``check(cost)`` would make now, taking nothing.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn peek(&self, cost: Cost) -> PyDecision {
        PyDecision(match &self.engine {
            Engine::One { limiter, .. } => limiter.peek(cost.0),
            Engine::All(composite) => composite.peek(cost.0),
        })
    }

    /// ``check(cost).allowed``, without making a ``Decision``: the
    /// cheapest call (x/time/rate's ``AllowN``).
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn allow(&self, cost: Cost) -> bool {
        self.decide(cost.0).allowed
    }

    /// Gives back ``cost`` units admitted earlier that should not count (a
    /// request skipped, or failed before doing any work), now. A token
    /// bucket gets its tokens back (capped at its burst; while reservations
    /// hold it in debt, only what exceeds the debt), GCRA moves its
    /// theoretical arrival time back, a meter lowers its level, a fixed
    /// window or sliding window counter counts fewer in the current window
    /// (nothing once it has rolled), a sliding window takes them off its
    /// newest sub-windows, a sliding log drops its newest units, a
    /// composite gives back to every part: never more than a fresh limiter
    /// holds. A ``LeakyBucketQueue`` gives nothing back: it hands out
    /// slots, and a refund cannot tell whose it returns.
    #[pyo3(signature = (cost = Cost::ONE), text_signature = "($self, cost=1)")]
    fn refund(&self, cost: Cost) {
        match &self.engine {
            Engine::One { limiter, .. } => limiter.refund(cost.0),
            Engine::All(composite) => composite.refund(cost.0),
        }
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.get();
        let name = slf.get_type().name()?.to_string();
        let body = match (&this.engine, this.current_spec()) {
            (_, Some(spec)) => spec_arguments(py, &spec)?,
            (Engine::All(composite), None) => {
                let parts = composite.specs().iter().map(|s| spec_repr(py, s)).collect::<PyResult<Vec<_>>>()?;
                format!("[{}]", parts.join(", "))
            }
            (Engine::One { .. }, None) => String::new(),
        };
        Ok(format!("{name}({body}{})", clock::clock_repr(py, &this.clock)?))
    }
}

/// A constructor's arguments as the parameters of its algorithm, in the
/// registry's order.
struct Arguments<'a, 'py> {
    py: Python<'py>,
    arguments: &'a [&'a Bound<'py, PyAny>],
    next: usize,
}

impl<'py> Arguments<'_, 'py> {
    fn take(&mut self) -> PyResult<&Bound<'py, PyAny>> {
        let argument = self.arguments.get(self.next).ok_or_else(|| internal("an argument too few"))?;
        self.next += 1;
        Ok(argument)
    }
}

impl ParameterSource for Arguments<'_, '_> {
    type Error = PyErr;

    fn rate(&mut self, parameter: &'static Parameter) -> PyResult<f64> {
        args::real(self.take()?, parameter.argument())
    }

    /// A count left out takes the registry's default, if it has one.
    fn count(&mut self, parameter: &'static Parameter) -> PyResult<u64> {
        match parameter.default() {
            Some(default) if self.next >= self.arguments.len() => Ok(default),
            _ => args::count(self.take()?, parameter.argument()),
        }
    }

    fn micros(&mut self, parameter: &'static Parameter) -> PyResult<i64> {
        args::duration_micros(self.take()?, parameter.argument())
    }

    fn out_of_range(&mut self, _: &'static Parameter, error: ratekeeper::Error) -> PyErr {
        from_rust(self.py, error)
    }
}

/// The class a spec makes (the registry's display name), and its
/// arguments: `Gcra(max_burst=4, ...)`.
pub(crate) fn spec_repr(py: Python<'_>, spec: &LimiterSpec) -> PyResult<String> {
    Ok(format!("{}({})", spec.kind().display_name(), spec_arguments(py, spec)?))
}

/// A spec's constructor arguments, by the registry's parameter names,
/// durations in seconds.
fn spec_arguments(py: Python<'_>, spec: &LimiterSpec) -> PyResult<String> {
    let arguments = spec
        .values()
        .map(|(parameter, value)| {
            let value = match value {
                ParameterValue::Rate(rate) => float_repr(py, rate)?,
                ParameterValue::Count(count) => count.to_string(),
                ParameterValue::Micros(micros) => float_repr(py, micros as f64 / 1e6)?,
            };
            Ok(format!("{}={value}", parameter.name()))
        })
        .collect::<PyResult<Vec<String>>>()?;
    Ok(arguments.join(", "))
}
