//! `ratekeeper._ratekeeper`: the Python extension module of ratekeeper.
//!
//! A thin binding: it converts Python arguments ([`args`]), calls the std
//! crate `ratekeeper`, maps its errors ([`errors`]) and waits with the GIL
//! released ([`wait`]). No rate-limiting logic lives here. The pure-Python
//! package `python/ratekeeper` re-exports it and adds what is naturally
//! Python: `async` methods on top of `_reserve`/`_try_reserve`, and the
//! decorator.
//!
//! Nothing here may panic: a panic would reach Python as a
//! `pyo3_runtime.PanicException`. Conversions saturate or return errors,
//! and the library's operations return `Result`s.

mod args;
mod clock;
mod errors;
mod rate_limiter;
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
    errors::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
