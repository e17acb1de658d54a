//! Python arguments to the values the Rust API takes.
//!
//! This module owns *types*: which Python objects an argument accepts, and
//! the [`ArgumentTypeError`](crate::errors::wrong_type) for the others. The
//! *domains* (permits between 1 and 2^31 − 1, a rate above 0, a timeout that
//! is not NaN, ...) are checked by the Rust library, whose errors
//! [`from_rust`](crate::errors::from_rust) maps; the only domain errors made
//! here are for values Rust cannot hold at all (ints beyond 64 bits, floats
//! beyond a double).
//!
//! * Counts (`permits`) are `int`s, or objects with `__index__`; never a
//!   `bool` (it is an `int` in Python, but `acquire(True)` is a bug) nor a
//!   `float`.
//! * Real numbers (a rate, a burst, a cold factor) are `float`s, `int`s or
//!   objects with `__float__`; never a `bool`.
//! * Durations (a timeout, a warm-up, a clock advance) are seconds as such a
//!   real number, or a `datetime.timedelta`, converted exactly to whole
//!   microseconds (`timedelta` holds whole microseconds; floats truncate,
//!   as Guava's `TimeUnit.toMicros` does). The one rule of every duration
//!   (`ratekeeper`'s `units`): NaN, infinite, negative, or `2**63`
//!   microseconds or more is an `InvalidArgumentError` naming it, never
//!   clamped; a timeout alone may be negative (do not wait) or that long
//!   (no deadline).
//!
//! * Counts and sizes of the other algorithms (`cost`, `burst`, `limit`,
//!   `capacity`, `bytes`, ...) are ints too, checked not negative here
//!   (`ratekeeper::unsigned_from_i64`, the one conversion every binding
//!   uses) and against their upper bounds by the algorithm.
//! * Lengths of time (`period`, `window`, `interval`, `rtt`, ...) are
//!   seconds or a `timedelta` like every duration
//!   (`ratekeeper::duration_micros_from_secs`).
//!
//! [`Permits`], [`Timeout`] and [`Cost`] are `FromPyObject` types so that
//! the hot methods get them from pyo3's argument parsing with constant
//! defaults (no Python object is made for an omitted argument).

use std::time::Duration;

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyType};
use ratekeeper::{Argument, Error};
use ratekeeper_redis::RedisOption;

use crate::errors::{from_rust, invalid_named, invalid_value, wrong_type};

const EXPECTED_INT: &str = "an int";
const EXPECTED_BOOL: &str = "a bool";
const EXPECTED_REAL: &str = "a real number (int or float)";
const EXPECTED_SECONDS: &str = "a number of seconds (int or float) or a datetime.timedelta";
const TOO_BIG_FOR_A_FLOAT: &str = "must fit in a float";

/// A number of permits as the caller passed it (any 64-bit int): the
/// algorithm checks its range.
#[derive(Debug, Clone, Copy)]
pub struct Permits(pub i64);

impl Permits {
    /// The default of every `permits` parameter.
    pub const ONE: Permits = Permits(1);
}

impl<'py> FromPyObject<'_, 'py> for Permits {
    type Error = PyErr;

    #[inline]
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        int(&obj, Argument::Permits).map(Permits)
    }
}

/// What a request costs, in units of the algorithm (tokens, bytes, ...):
/// not negative; 0 asks without taking.
#[derive(Debug, Clone, Copy)]
pub struct Cost(pub u64);

impl Cost {
    /// The default of every `cost` parameter.
    pub const ONE: Cost = Cost(1);
}

impl<'py> FromPyObject<'_, 'py> for Cost {
    type Error = PyErr;

    #[inline]
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let cost = int(&obj, Argument::Cost)?;
        ratekeeper::cost_from_i64(cost).map(Cost).map_err(|e| from_rust(obj.py(), e))
    }
}

/// A timeout as Guava's `tryAcquire` takes it: whole microseconds, negative
/// meaning "do not wait" (0), saturating at `i64::MAX`.
#[derive(Debug, Clone, Copy)]
pub struct Timeout(i64);

impl Timeout {
    /// The default of every `timeout` parameter: do not wait.
    pub const ZERO: Timeout = Timeout(0);

    /// As the `Duration` the Rust API takes.
    #[inline]
    pub fn duration(self) -> Duration {
        Duration::from_micros(self.0.max(0) as u64)
    }
}

impl<'py> FromPyObject<'_, 'py> for Timeout {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let micros = match seconds(&obj, Argument::Timeout)? {
            Seconds::Float(secs) => ratekeeper::timeout_micros_from_secs(secs).map_err(|e| from_rust(obj.py(), e))?,
            Seconds::Micros(micros) => micros.max(0),
            // The rule's exception for timeouts: negative is "do not wait",
            // too long to hold is "no deadline".
            Seconds::Overflow { negative } => {
                if negative {
                    0
                } else {
                    i64::MAX
                }
            }
        };
        Ok(Timeout(micros))
    }
}

/// A timeout that may be `None`, "no deadline" (as long as it takes).
#[derive(Debug, Clone, Copy)]
pub struct Deadline(Option<Timeout>);

impl Deadline {
    /// The default: no deadline.
    pub const NONE: Deadline = Deadline(None);

    /// As the `Duration` the Rust API takes (`Duration::MAX`: no deadline).
    #[inline]
    pub fn duration(self) -> Duration {
        self.0.map_or(Duration::MAX, Timeout::duration)
    }
}

impl<'py> FromPyObject<'_, 'py> for Deadline {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_none() {
            return Ok(Deadline::NONE);
        }
        obj.extract::<Timeout>().map(|t| Deadline(Some(t)))
    }
}

/// A duration argument, before its domain is checked.
enum Seconds {
    /// Seconds as a double (from a float, an int or `__float__`).
    Float(f64),
    /// Exact microseconds (from a `timedelta`).
    Micros(i64),
    /// An int too large for a double, or a `timedelta` of `2**63`
    /// microseconds or more either way; `negative` gives its sign.
    Overflow { negative: bool },
}

fn seconds(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<Seconds> {
    seconds_named(obj, argument.name())
}

fn seconds_named(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Seconds> {
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Ok(Seconds::Float(f.value()));
    }
    if obj.is_instance(timedelta_type(obj.py())?)? {
        return Ok(match timedelta_micros(obj)? {
            Ok(micros) => Seconds::Micros(micros),
            Err(negative) => Seconds::Overflow { negative },
        });
    }
    match real_or_overflow(obj, name, EXPECTED_SECONDS)? {
        Ok(secs) => Ok(Seconds::Float(secs)),
        Err(()) => Ok(Seconds::Overflow { negative: obj.lt(0)? }),
    }
}

/// An option only a shared limiter takes (a store's timeouts, a heartbeat
/// or idle TTL: [`RedisOption`]): seconds or a `timedelta`, converted here
/// to whole microseconds and checked by the Redis crate, whose refusal is
/// an `InvalidArgumentError` naming the option (its Rust name is Python's)
/// with the crate's requirement and the value as given.
pub fn redis_option(obj: &Bound<'_, PyAny>, option: RedisOption) -> PyResult<Duration> {
    let micros = match seconds_named(obj, option.name())? {
        // Truncated to whole microseconds, as every duration here; NaN,
        // infinite or negative (even when it truncates to 0) is no
        // duration, and neither is one beyond the `i64` range.
        Seconds::Float(secs) => ratekeeper::micros_from_secs(secs).filter(|_| secs >= 0.0),
        Seconds::Micros(micros) => Some(micros),
        Seconds::Overflow { .. } => None,
    };
    match micros.map(|micros| option.from_micros(micros)) {
        Some(Ok(duration)) => Ok(duration),
        Some(Err(_)) | None => Err(invalid_named(option.name(), obj, option.requirement())),
    }
}

/// A key's bytes: a `str`'s UTF-8 (borrowed from the string when Python
/// has it cached), or a `bytes` object's own bytes — so `"a"` and `b"a"` are
/// the same key, as in every binding.
pub enum Key<'a> {
    Bytes(&'a [u8]),
    Text(std::borrow::Cow<'a, str>),
}

impl Key<'_> {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Bytes(b) => b,
            Key::Text(s) => s.as_bytes(),
        }
    }
}

/// What a key may be.
pub const EXPECTED_KEY: &str = "a str or bytes";

/// A key argument: `str` or `bytes`. A `str` holding a lone surrogate
/// (`"\ud800"`, which Python allows and UTF-8 cannot encode) is refused
/// with the invalid-argument error naming `key`, its value the surrogate's
/// index — not a bare `UnicodeEncodeError`, and never a replacement
/// character that would make distinct strings one key.
pub fn key<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Key<'a>> {
    if let Ok(s) = obj.cast::<pyo3::types::PyString>() {
        return match s.to_cow() {
            Ok(text) => Ok(Key::Text(text)),
            Err(e) => {
                let py = obj.py();
                let at = e.value(py).getattr("start").and_then(|v| v.extract::<i64>()).unwrap_or(-1);
                Err(from_rust(py, Error::invalid_int(Argument::KeyText, at)))
            }
        };
    }
    match obj.cast::<pyo3::types::PyBytes>() {
        Ok(b) => Ok(Key::Bytes(b.as_bytes())),
        Err(_) => Err(wrong_type("key", obj, EXPECTED_KEY)),
    }
}

/// The `max_key_bytes` of a keyed or Redis limiter: an int from 1 to 65536
/// (`None`: 256).
pub fn max_key_bytes(obj: Option<&Bound<'_, PyAny>>) -> PyResult<ratekeeper::keyed::MaxKeyBytes> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(ratekeeper::keyed::MaxKeyBytes::DEFAULT) };
    let bytes = count(obj, Argument::MaxKeyBytes)?;
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    ratekeeper::keyed::MaxKeyBytes::new(bytes).map_err(|e| from_rust(obj.py(), e))
}

/// A `str` argument (a limiter's name, a URL).
pub fn text(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match obj.cast::<pyo3::types::PyString>() {
        Ok(s) => Ok(s.to_cow()?.into_owned()),
        Err(_) => Err(wrong_type(name, obj, "a str")),
    }
}

/// A warm-up period in whole microseconds: finite and not negative.
pub fn warmup_micros(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    non_negative_micros(obj, Argument::WarmupSeconds, ratekeeper::warmup_micros_from_secs)
}

/// How far to move a manual clock, in whole microseconds: finite and not
/// negative.
pub fn advance_micros(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    non_negative_micros(obj, Argument::AdvanceSeconds, ratekeeper::advance_micros_from_secs)
}

fn non_negative_micros(
    obj: &Bound<'_, PyAny>,
    argument: Argument,
    from_secs: fn(f64) -> Result<i64, Error>,
) -> PyResult<i64> {
    match seconds(obj, argument)? {
        Seconds::Float(secs) => from_secs(secs).map_err(|e| from_rust(obj.py(), e)),
        Seconds::Micros(micros) if micros >= 0 => Ok(micros),
        Seconds::Micros(_) => Err(invalid_value(argument, obj, argument.requirement())),
        Seconds::Overflow { .. } => Err(invalid_value(argument, obj, argument.requirement())),
    }
}

/// A length of time that must not be negative (a period, a window, an
/// interval, a round-trip time), in whole microseconds, under the rule of
/// every duration: NaN, infinite, or `2**63` microseconds or more is an
/// error naming `argument`. The algorithm checks its own lower bound; map
/// its error with [`from_rust_passed`](crate::errors::from_rust_passed) so
/// that the message shows the value as passed, not as microseconds.
pub fn duration_micros(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<i64> {
    match seconds(obj, argument)? {
        Seconds::Float(secs) => {
            ratekeeper::duration_micros_from_secs(argument, secs).map_err(|e| from_rust(obj.py(), e))
        }
        Seconds::Micros(micros) if micros >= 0 => Ok(micros),
        Seconds::Micros(_) | Seconds::Overflow { .. } => Err(invalid_value(argument, obj, argument.requirement())),
    }
}

/// A count or size (a burst, a limit, a capacity, ...): an int, not
/// negative; the algorithm checks its upper bound.
pub fn count(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<u64> {
    let value = int(obj, argument)?;
    ratekeeper::unsigned_from_i64(argument, value).map_err(|e| from_rust(obj.py(), e))
}

/// A `bool` argument; ints and other truthy objects are refused, as they
/// are almost always a misplaced argument.
pub fn boolean(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    match obj.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(wrong_type(name, obj, EXPECTED_BOOL)),
    }
}

/// An int argument that is not a library [`Argument`] (a field of a
/// `Decision` built by hand): an `i64`, not negative.
pub fn non_negative_int(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    const REQUIREMENT: &str = "must be between 0 and 9223372036854775807";
    let value = int_named(obj, name, REQUIREMENT)?;
    if value < 0 {
        return Err(invalid_named(name, obj, REQUIREMENT));
    }
    Ok(value)
}

/// A real-number argument (a rate, a burst, a cold factor) as a double.
pub fn real(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<f64> {
    match real_or_overflow(obj, argument.name(), EXPECTED_REAL)? {
        Ok(value) => Ok(value),
        Err(()) => Err(invalid_value(argument, obj, TOO_BIG_FOR_A_FLOAT)),
    }
}

/// `Ok(Err(()))` for an int too large for a double.
fn real_or_overflow(obj: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyResult<Result<f64, ()>> {
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Ok(Ok(f.value()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, obj, expected));
    }
    match obj.extract::<f64>() {
        Ok(value) => Ok(Ok(value)),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => Ok(Err(())),
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => Err(wrong_type(name, obj, expected)),
        Err(e) => Err(e),
    }
}

/// An integer argument as an `i64`; ints beyond 64 bits are out of every
/// domain the library has, and say so with the argument's requirement.
pub fn int(obj: &Bound<'_, PyAny>, argument: Argument) -> PyResult<i64> {
    int_named(obj, argument.name(), argument.requirement())
}

fn int_named(obj: &Bound<'_, PyAny>, name: &str, requirement: &str) -> PyResult<i64> {
    let is_exact_int = obj.is_exact_instance_of::<PyInt>();
    if !is_exact_int && (obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>()) {
        return Err(wrong_type(name, obj, EXPECTED_INT));
    }
    match obj.extract::<i64>() {
        Ok(value) => Ok(value),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => Err(invalid_named(name, obj, requirement)),
        Err(e) if !is_exact_int && e.is_instance_of::<PyTypeError>(obj.py()) => {
            Err(wrong_type(name, obj, EXPECTED_INT))
        }
        Err(e) => Err(e),
    }
}

fn timedelta_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    TIMEDELTA.import(py, "datetime", "timedelta")
}

/// A `timedelta`'s exact length in microseconds, or `Err(negative)` when
/// it is beyond the 64-bit range (its range, ±999,999,999 days, is about
/// ten times wider).
fn timedelta_micros(obj: &Bound<'_, PyAny>) -> PyResult<Result<i64, bool>> {
    let days: i64 = obj.getattr("days")?.extract()?;
    let seconds: i64 = obj.getattr("seconds")?.extract()?;
    let micros: i64 = obj.getattr("microseconds")?.extract()?;
    let total = (i128::from(days) * 86_400 + i128::from(seconds)) * 1_000_000 + i128::from(micros);
    Ok(i64::try_from(total).map_err(|_| total < 0))
}
