//! `ratekeeper._ratekeeper`: the Python extension module of ratekeeper.
//!
//! A thin binding: it converts Python arguments ([`args`]), calls the std
//! crate `ratekeeper`, maps its errors ([`errors`]) and waits with the GIL
//! released ([`wait`]). No rate-limiting logic lives here. The pure-Python
//! package `python/ratekeeper` re-exports it and adds what is naturally
//! Python: `async` methods on top of the `_reserve*` methods, the
//! decorator, and the context manager of a concurrency permit.
//!
//! * `RateLimiter`, Guava's, in [`rate_limiter`];
//! * the base class of the admission-style algorithms, one code path
//!   through `AnyLimiter`/`CompositeLimiter`, in [`limiter`], and the named
//!   classes (`TokenBucket`, `Gcra`, ...) in [`admission`];
//! * `Decision` and the HTTP header fields in [`decision`];
//! * `SrTcm`, `TrTcm` and `Color` in [`markers`];
//! * `ConcurrencyLimiter` and its policies in [`concurrency`];
//! * Sentinel's flow rule, `FlowRule` and `FlowController`, in [`flow`];
//! * the load-driven limiters `Bbr` and `SystemGuard`, and the load
//!   signals `ManualLoad` and `SystemLoad`, in [`load`];
//! * `KeyedLimiter` (one limiter per key, from any of them) in [`keyed`];
//! * the limiters shared through Redis (`RedisStore`, `RedisLimiter`,
//!   `RedisLeasedLimiter`, `RedisDividedLimiter`, `Membership`,
//!   `RedisRateLimiter`) in [`redis`];
//! * `CycleLimiter` (Resilience4j's) and `CycleMetrics` in [`cycle`];
//! * `ManualClock` in [`clock`];
//! * the native part of `ratekeeper.http` (limits as text, the response's
//!   header fields, the client behind trusted proxies) in [`http`].
//!
//! Nothing here may panic: a panic would reach Python as a
//! `pyo3_runtime.PanicException`. Conversions saturate or return errors,
//! and the library's operations return `Result`s.

mod admission;
mod args;
mod clock;
mod concurrency;
mod cycle;
mod decision;
mod errors;
mod flow;
mod http;
mod keyed;
mod limiter;
mod load;
mod markers;
mod rate_limiter;
mod redis;
mod wait;

use pyo3::prelude::*;
use pyo3::types::PyFloat;

/// A float as Python's `repr` prints it (`1e+20`, not Rust's `1e20`), for
/// the `__repr__`s.
fn float_repr(py: Python<'_>, value: f64) -> PyResult<String> {
    Ok(PyFloat::new(py, value).repr()?.to_string())
}

/// The native part of ratekeeper; import from ``ratekeeper`` instead.
#[pymodule]
fn _ratekeeper(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<rate_limiter::PyRateLimiter>()?;
    module.add_class::<clock::PyManualClock>()?;
    module.add_class::<decision::PyDecision>()?;
    module.add_function(wrap_pyfunction!(decision::ratelimit_header, module)?)?;
    module.add_function(wrap_pyfunction!(decision::ratelimit_policy_header, module)?)?;
    module.add_class::<limiter::PyLimiter>()?;
    module.add_class::<admission::PyTokenBucket>()?;
    module.add_class::<admission::PyReservation>()?;
    module.add_class::<admission::PyGcra>()?;
    module.add_class::<admission::PyLeakyBucketMeter>()?;
    module.add_class::<admission::PyLeakyBucketQueue>()?;
    module.add_class::<admission::PyFixedWindow>()?;
    module.add_class::<admission::PySlidingWindow>()?;
    module.add_class::<admission::PySlidingLog>()?;
    module.add_class::<admission::PySlidingWindowCounter>()?;
    module.add_class::<admission::PyCompositeLimiter>()?;
    module.add("MAX_SLIDING_LOG_LIMIT", ratekeeper::MAX_SLIDING_LOG_LIMIT)?;
    module.add_class::<markers::PySrTcm>()?;
    module.add_class::<markers::PyTrTcm>()?;
    markers::register(module)?;
    module.add_class::<concurrency::PyConcurrencyLimiter>()?;
    module.add_class::<concurrency::PyGradientPolicy>()?;
    module.add_class::<concurrency::PyAimdPolicy>()?;
    module.add_class::<concurrency::PyPermitHandle>()?;
    load::register(module)?;
    flow::register(module)?;
    module.add_class::<cycle::PyCycleLimiter>()?;
    module.add_class::<cycle::PyCycleMetrics>()?;
    module.add_class::<keyed::PyKeyedLimiter>()?;
    redis::register(module)?;
    http::register(module)?;
    errors::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
