//! The exceptions ratekeeper raises in Python, and the one place where a
//! Rust [`Error`] becomes one.
//!
//! ```text
//! Exception
//! └── RateLimitError                      everything ratekeeper raises
//!     ├── InvalidArgumentError            also a ValueError: a value outside its domain
//!     ├── ArgumentTypeError               also a TypeError: an argument of the wrong type
//!     ├── RateLimitExceeded               a limited call was refused (`decision` says why)
//!     │   └── AtCapacity                  a keyed limiter could hold no new key
//!     ├── UnsupportedError                an algorithm or mode that does not run in Redis
//!     ├── ClosedError                     a call on a Redis store, limiter or membership after close()
//!     └── RedisError                      Redis answered with an error, or with what no script sends
//!         ├── RedisUnavailableError       also a ConnectionError: Redis could not answer
//!         │   └── RedisTimeoutError       also a TimeoutError: not within the store's timeout
//!         ├── RedisAuthError              Redis refused the credentials or a command (WRONGPASS, NOPERM)
//!         └── RedisTlsError               TLS could not be set up (a certificate not trusted, ...)
//! ```
//!
//! The Redis errors are never argument errors: a bad argument to a Redis
//! limiter raises the same `InvalidArgumentError` or `ArgumentTypeError` as
//! for a local one, and nothing is sent. `RedisUnavailableError` covers
//! every way Redis can fail to answer (down, refused, dropped, failed
//! moments ago and not retried yet, too slow), which is what a limiter's
//! `when_unavailable` policy decides on; catching it catches the timeout too.
//!
//! The two argument errors derive from the built-in `ValueError` and
//! `TypeError` too, so code that catches those keeps working, and carry
//! `argument` (the parameter's name) and `value` (what was passed). Their
//! messages have one shape, the one the Rust [`Error`] prints:
//! `invalid argument permits = 0: must be between 1 and 2147483647`.
//!
//! The types are created at run time with `type(name, bases, namespace)`
//! because two of them have two bases, which `create_exception!` cannot
//! express; their `__module__` is `ratekeeper`, where the package re-exports
//! them (so they print and pickle under their public name).

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyInt, PyTuple, PyType};
use ratekeeper::{Argument, Error, Value};

static RATE_LIMIT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_ARGUMENT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ARGUMENT_TYPE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static RATE_LIMIT_EXCEEDED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static AT_CAPACITY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNSUPPORTED_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CLOSED_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS_UNAVAILABLE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS_TIMEOUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS_AUTH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS_TLS_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A longer `repr` than this is cut, so that a message stays readable
/// whatever was passed.
const MAX_REPR_CHARS: usize = 80;

fn new_type(py: Python<'_>, name: &str, bases: Bound<'_, PyTuple>, doc: &str, fields: &[&str]) -> PyResult<Py<PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "ratekeeper")?;
    namespace.set_item("__doc__", doc)?;
    for field in fields {
        // Class-level defaults (None), so that an instance raised by user
        // code without them still answers `.argument`, `.value`, ...
        namespace.set_item(field, py.None())?;
    }
    Ok(py.get_type::<PyType>().call1((name, bases, namespace))?.cast_into::<PyType>()?.unbind())
}

fn rate_limit_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    RATE_LIMIT_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [py.get_type::<PyException>()])?;
            new_type(py, "RateLimitError", bases, "The base class of every error ratekeeper raises.", &[])
        })
        .map(|t| t.bind(py))
}

fn invalid_argument_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    INVALID_ARGUMENT_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?, &py.get_type::<pyo3::exceptions::PyValueError>()])?;
            new_type(
                py,
                "InvalidArgumentError",
                bases,
                "An argument's value is outside what the operation accepts (a rate that is not positive, \
                 0 permits, a NaN timeout, ...). Also a ValueError.\n\n\
                 `argument` is the parameter's name and `value` the value passed. Nothing was changed. \
                 `position` is the byte offset at fault in a text argument (limits as text, a trusted \
                 proxy's index in its list), else None.",
                &["argument", "value", "position"],
            )
        })
        .map(|t| t.bind(py))
}

fn argument_type_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ARGUMENT_TYPE_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?, &py.get_type::<pyo3::exceptions::PyTypeError>()])?;
            new_type(
                py,
                "ArgumentTypeError",
                bases,
                "An argument has the wrong type (a float or a bool as a number of permits, a string as \
                 a rate, ...). Also a TypeError.\n\n\
                 `argument` is the parameter's name and `value` the value passed. Nothing was changed.",
                &["argument", "value"],
            )
        })
        .map(|t| t.bind(py))
}

fn rate_limit_exceeded(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    RATE_LIMIT_EXCEEDED
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?])?;
            new_type(
                py,
                "RateLimitExceeded",
                bases,
                "A rate-limited call was refused (it could not get its permits or units within its \
                 timeout, or its limiter said no), and was not made.\n\n\
                 `decision` is the limiter's ``Decision`` when it gave one (its `retry_after`, \
                 its HTTP header fields), else None. `threshold` names the threshold of a \
                 SystemGuard's rule that refused it (\"qps\", \"thread\", \"rt\", \"load\", \"cpu\"), \
                 else None.",
                &["decision", "threshold"],
            )
        })
        .map(|t| t.bind(py))
}

fn at_capacity_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    AT_CAPACITY
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_exceeded(py)?])?;
            new_type(
                py,
                "AtCapacity",
                bases,
                "A keyed limiter's try_check or try_peek for a new key, refused because the limiter \
                 holds max_keys keys and none can be forgotten without changing a decision.\n\n\
                 `decision` is the refusal: remaining 0, retry_after until a key may be forgotten.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn unsupported_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UNSUPPORTED_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?])?;
            new_type(
                py,
                "UnsupportedError",
                bases,
                "The algorithm or mode does not run where it was asked to: a Redis limiter of an \
                 algorithm that has no script (a leaky bucket, a sliding window, a composite), or \
                 leased mode on one other than GCRA and the token bucket. Nothing was sent.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn closed_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    CLOSED_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?])?;
            new_type(
                py,
                "ClosedError",
                bases,
                "A call on a Redis store, limiter or membership after its close() (or its store's; \
                 leaving a with block closes too). Nothing was sent. Node.js's error of the same \
                 case has the code ERR_RATEKEEPER_CLOSED.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

/// A [`ClosedError`](closed_error_type): "this RedisLimiter is closed".
pub fn closed_error(py: Python<'_>, what: &str) -> PyErr {
    match closed_error_type(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), format!("this {what} is closed")),
        Err(e) => e,
    }
}

fn redis_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    REDIS_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [rate_limit_error(py)?])?;
            new_type(
                py,
                "RedisError",
                bases,
                "Redis answered a shared limiter with an error (NOAUTH, OOM, a script's error, ...) \
                 or with a reply no ratekeeper script sends; the base of the errors of Redis not \
                 answering (RedisUnavailableError).",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn redis_unavailable_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    REDIS_UNAVAILABLE_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [redis_error(py)?, &py.get_type::<pyo3::exceptions::PyConnectionError>()])?;
            new_type(
                py,
                "RedisUnavailableError",
                bases,
                "Redis could not answer: it is down, refused or dropped the connection, is \
                 loading, or failed moments ago and is not tried again until the store's \
                 retry_interval has passed. Also a ConnectionError.\n\n\
                 A limiter's when_unavailable policy decides in its place unless it is 'error'.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn redis_timeout_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    REDIS_TIMEOUT_ERROR
        .get_or_try_init(py, || {
            let bases =
                PyTuple::new(py, [redis_unavailable_error(py)?, &py.get_type::<pyo3::exceptions::PyTimeoutError>()])?;
            new_type(
                py,
                "RedisTimeoutError",
                bases,
                "Redis did not answer within the store's timeout (a RedisUnavailableError, and also \
                 a TimeoutError). The request may still have been decided by the server.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn redis_auth_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    REDIS_AUTH_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [redis_error(py)?])?;
            new_type(
                py,
                "RedisAuthError",
                bases,
                "Redis refused the store's credentials or one of its commands: a wrong password or \
                 an unknown user (WRONGPASS), none given where one is needed (NOAUTH), or an ACL \
                 user not allowed a command or key (NOPERM, named in the message). Not an \
                 unavailability: no when_unavailable policy decides instead, and the store is not \
                 marked down. Node.js's error of the same case has the code \
                 ERR_RATEKEEPER_REDIS_AUTH.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

fn redis_tls_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    REDIS_TLS_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [redis_error(py)?])?;
            new_type(
                py,
                "RedisTlsError",
                bases,
                "TLS to Redis could not be set up: the server's certificate is not trusted (not \
                 signed by tls_ca), is for another name or has expired, the server refused the \
                 client certificate, or a tls_ option's file cannot be read or holds no usable PEM. \
                 Not an unavailability: no when_unavailable policy decides instead, and the store \
                 is not marked down. Node.js's error of the same case has the code \
                 ERR_RATEKEEPER_REDIS_TLS.",
                &[],
            )
        })
        .map(|t| t.bind(py))
}

/// The Python exception for an error of a Redis limiter: its argument
/// errors exactly as [`from_rust`] maps the local limiters', its invalid
/// options (a store's timeout, a heartbeat TTL) as `InvalidArgumentError`s
/// too, under the option's name, the others as the `Redis*` types and
/// `UnsupportedError`.
pub fn from_redis(py: Python<'_>, error: ratekeeper_redis::Error) -> PyErr {
    use ratekeeper_redis::Error as E;
    if let E::InvalidOption(invalid) = &error {
        let value = match invalid.value() {
            Value::Float(v) => PyFloat::new(py, v).into_any(),
            Value::Int(v) => PyInt::new(py, v).into_any(),
        };
        return argument_error(invalid_argument_error(py), invalid.to_string(), invalid.name(), value);
    }
    let ty = match &error {
        E::Invalid(_) => None,
        E::Unsupported(_) => Some(unsupported_error(py)),
        E::Timeout => Some(redis_timeout_error(py)),
        E::Unavailable => Some(redis_unavailable_error(py)),
        E::Auth(_) => Some(redis_auth_error(py)),
        E::Tls(_) => Some(redis_tls_error(py)),
        E::Redis(e) if e.is_timeout() => Some(redis_timeout_error(py)),
        e if e.is_unavailability() => Some(redis_unavailable_error(py)),
        _ => Some(redis_error(py)),
    };
    match (ty, error) {
        (None, E::Invalid(invalid)) => from_rust(py, invalid),
        (Some(Ok(ty)), error) => PyErr::from_type(ty.clone(), error.to_string()),
        (Some(Err(e)), _) => e,
        (None, error) => internal(&error.to_string()),
    }
}

/// [`from_redis`] with [`from_rust_passed`]'s care for converted arguments.
pub fn from_redis_passed(
    py: Python<'_>,
    error: ratekeeper_redis::Error,
    passed: &[(Argument, &Bound<'_, PyAny>)],
) -> PyErr {
    match error {
        ratekeeper_redis::Error::Invalid(invalid) => from_rust_passed(py, invalid, passed),
        other => from_redis(py, other),
    }
}

/// An [`AtCapacity`](at_capacity_type) for a keyed limiter's refusal at its
/// bound, with the library's message and the refusal as `decision`.
pub fn at_capacity(py: Python<'_>, full: &ratekeeper::AtCapacity) -> PyErr {
    let raised = at_capacity_type(py).and_then(|ty| {
        let exc = ty.call1((full.to_string(),))?;
        exc.setattr("decision", crate::decision::PyDecision(full.decision()))?;
        Ok(exc)
    });
    match raised {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Creates the exception types and adds them to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("RateLimitError", rate_limit_error(py)?)?;
    module.add("InvalidArgumentError", invalid_argument_error(py)?)?;
    module.add("ArgumentTypeError", argument_type_error(py)?)?;
    module.add("RateLimitExceeded", rate_limit_exceeded(py)?)?;
    module.add("AtCapacity", at_capacity_type(py)?)?;
    module.add("UnsupportedError", unsupported_error(py)?)?;
    module.add("ClosedError", closed_error_type(py)?)?;
    module.add("RedisError", redis_error(py)?)?;
    module.add("RedisUnavailableError", redis_unavailable_error(py)?)?;
    module.add("RedisTimeoutError", redis_timeout_error(py)?)?;
    module.add("RedisAuthError", redis_auth_error(py)?)?;
    module.add("RedisTlsError", redis_tls_error(py)?)?;
    Ok(())
}

/// Instantiates `ty(message)` with `argument` and `value` set.
fn argument_error(ty: PyResult<&Bound<'_, PyType>>, message: String, argument: &str, value: Bound<'_, PyAny>) -> PyErr {
    let raised = ty.and_then(|ty| {
        let exc = ty.call1((message,))?;
        exc.setattr("argument", argument)?;
        exc.setattr("value", value)?;
        Ok(exc)
    });
    match raised {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// The Python exception for a Rust [`Error`]: the one mapping of the
/// binding, covering every variant.
pub fn from_rust(py: Python<'_>, error: Error) -> PyErr {
    match error {
        Error::InvalidArgument(invalid) => {
            let value = match invalid.value() {
                Value::Float(v) => PyFloat::new(py, v).into_any(),
                Value::Int(v) => PyInt::new(py, v).into_any(),
            };
            argument_error(invalid_argument_error(py), error.to_string(), invalid.name(), value)
        }
        // `Error` is non-exhaustive: a kind added later is still a
        // RateLimitError, with the library's own message.
        other => match rate_limit_error(py) {
            Ok(ty) => PyErr::from_type(ty.clone(), other.to_string()),
            Err(e) => e,
        },
    }
}

/// A plain `RateLimitError` with `message` (a store of another process).
pub fn rate_limit_error_with(py: Python<'_>, message: String) -> PyErr {
    match rate_limit_error(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), message),
        Err(e) => e,
    }
}

/// A `RateLimitError` for what cannot happen (a binding's own invariant
/// broken): an error the caller can report, never a panic.
pub fn internal(message: &str) -> PyErr {
    Python::attach(|py| match rate_limit_error(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), format!("internal error: {message}")),
        Err(e) => e,
    })
}

/// [`from_rust`], except that an error about one of the `passed`
/// arguments shows the Python value as the caller passed it rather than the
/// number Rust was given. For arguments converted on the way (seconds made
/// microseconds: `period = 1e-07`, not `period = 0`).
pub fn from_rust_passed(py: Python<'_>, error: Error, passed: &[(Argument, &Bound<'_, PyAny>)]) -> PyErr {
    if let Error::InvalidArgument(invalid) = &error {
        if let Some((argument, value)) = passed.iter().find(|(a, _)| *a == invalid.argument()) {
            return invalid_value(*argument, value, argument.requirement());
        }
    }
    from_rust(py, error)
}

/// An [`InvalidArgumentError`](invalid_argument_error) for a value the Rust
/// side cannot even hold (an int beyond 64 bits, a negative `timedelta`),
/// worded like [`from_rust`]'s: `invalid argument NAME = VALUE: REQUIREMENT`.
pub fn invalid_value(argument: Argument, value: &Bound<'_, PyAny>, requirement: &str) -> PyErr {
    invalid_named(argument.name(), value, requirement)
}

/// An [`InvalidArgumentError`](invalid_argument_error) about a text (limits
/// as text, a list of trusted proxies) whose `message` names the place at
/// fault, also given as its `position` attribute.
pub fn invalid_at(name: &str, value: &Bound<'_, PyAny>, message: String, position: usize) -> PyErr {
    let error = argument_error(invalid_argument_error(value.py()), message, name, value.clone());
    if let Err(e) = error.value(value.py()).setattr("position", position) {
        return e;
    }
    error
}

/// [`invalid_value`] for an argument the library does not check itself
/// (it has no [`Argument`]), named `name`.
pub fn invalid_named(name: &str, value: &Bound<'_, PyAny>, requirement: &str) -> PyErr {
    let message = format!("invalid argument {name} = {}: {requirement}", short_repr(value));
    argument_error(invalid_argument_error(value.py()), message, name, value.clone())
}

/// An [`ArgumentTypeError`](argument_type_error): `invalid argument NAME =
/// VALUE: must be EXPECTED, not TYPE`.
pub fn wrong_type(name: &str, value: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    let py = value.py();
    let type_name = value.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
    let message = format!("invalid argument {name} = {}: must be {expected}, not {type_name}", short_repr(value));
    argument_error(argument_type_error(py), message, name, value.clone())
}

/// `repr(value)`, cut to [`MAX_REPR_CHARS`]; an int too long to print (Python
/// refuses beyond 4300 digits) shows its size instead.
fn short_repr(value: &Bound<'_, PyAny>) -> String {
    let text = match value.repr() {
        Ok(r) => r.to_string(),
        Err(_) => match value.call_method0("bit_length") {
            Ok(bits) => format!("<int of {bits} bits>"),
            Err(_) => "<unprintable>".to_owned(),
        },
    };
    if text.chars().count() > MAX_REPR_CHARS {
        let cut: String = text.chars().take(MAX_REPR_CHARS - 3).collect();
        format!("{cut}...")
    } else {
        text
    }
}
