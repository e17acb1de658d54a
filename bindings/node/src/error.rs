//! The one place where failures become JavaScript errors.
//!
//! Every error the library can return ([`ratekeeper::Error`], each
//! [`Argument`]), every argument the binding itself rejects, and every Rust
//! panic (caught at the boundary of each native call: a panic must never
//! unwind into Node) is a [`Failure`], and [`throw`] turns it into the error
//! the JavaScript caller sees:
//!
//! | failure | class | `code` |
//! |---|---|---|
//! | a value outside its domain (`NaN` rate, 0 permits, 1.5 permits) | `RangeError` | `ERR_RATEKEEPER_INVALID_ARGUMENT` |
//! | a value of the wrong type (a string, a bigint, `null`) | `TypeError` | `ERR_RATEKEEPER_INVALID_ARG_TYPE` |
//! | an unknown option, or options that exclude each other | `TypeError` | `ERR_RATEKEEPER_INVALID_OPTION` |
//! | a Rust panic or a failing Node-API call: a bug | `Error` | `ERR_RATEKEEPER_INTERNAL` |
//! | a keyed limiter's new key refused at its bound (`tryCheck`) | `Error` | `ERR_RATEKEEPER_AT_CAPACITY` |
//! | a call on a closed Redis store, limiter or membership | `Error` | `ERR_RATEKEEPER_CLOSED` |
//! | Redis cannot be reached (down, refused, dropped, failed moments ago) | `Error` | `ERR_RATEKEEPER_REDIS_UNAVAILABLE` |
//! | Redis did not answer within the store's timeout | `Error` | `ERR_RATEKEEPER_REDIS_TIMEOUT` |
//! | Redis answered with an error (a script's, `NOAUTH`, `OOM`, …) | `Error` | `ERR_RATEKEEPER_REDIS_ERROR` |
//! | a reply this client does not understand | `Error` | `ERR_RATEKEEPER_REDIS_PROTOCOL` |
//! | an algorithm or mode that does not run in Redis | `Error` | `ERR_RATEKEEPER_REDIS_UNSUPPORTED` |
//!
//! Argument errors also carry `argument` (the JavaScript name, camelCase) and
//! `value` (the value given), and their message names both, as Node's own
//! errors do. The Redis errors are never argument errors: a bad argument to
//! a Redis limiter is the same `RangeError` or `TypeError` as for a local one.
//!
//! Not here: a wait aborted by its `signal` rejects with the platform's
//! `AbortError` (`code` `ABORT_ERR`, the signal's reason as `cause`), made
//! in node/lib/sleep.js as Node's own waits make it: it is not a
//! ratekeeper error, and it carries a JavaScript value (the reason) that
//! never crosses into Rust.
//!
//! A failure is thrown ([`throw`]) by a synchronous call, or becomes the
//! rejection of a Promise ([`value`]) — which is how the Redis limiters'
//! failures arrive, on the JavaScript thread, after the call has returned.

use std::any::Any;
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::{sys, Env};
use ratekeeper::{Argument, Value};

use crate::js::{self, Js};

/// `code` of a `RangeError`: the value is of the right type but outside
/// what the operation accepts (the conformance vectors' `invalid_argument`).
pub(crate) const INVALID_ARGUMENT: &str = "ERR_RATEKEEPER_INVALID_ARGUMENT";
/// `code` of a `TypeError`: the value is of the wrong type.
pub(crate) const INVALID_ARG_TYPE: &str = "ERR_RATEKEEPER_INVALID_ARG_TYPE";
/// `code` of a `TypeError`: an unknown option, or options that cannot go
/// together.
pub(crate) const INVALID_OPTION: &str = "ERR_RATEKEEPER_INVALID_OPTION";
/// `code` of an `Error` that is a bug in ratekeeper (a caught panic).
pub(crate) const INTERNAL: &str = "ERR_RATEKEEPER_INTERNAL";
/// `code` of the `Error` a keyed limiter's `tryCheck` throws when a new
/// key's request is refused at the bound (`ratekeeper::AtCapacity`).
pub(crate) const AT_CAPACITY: &str = "ERR_RATEKEEPER_AT_CAPACITY";
/// `code` of an `Error`: the store, limiter or membership was closed.
pub(crate) const CLOSED: &str = "ERR_RATEKEEPER_CLOSED";
/// `code` of an `Error`: Redis cannot be reached, or failed to answer
/// moments ago and is not tried again until the store's retry interval has
/// passed.
pub(crate) const REDIS_UNAVAILABLE: &str = "ERR_RATEKEEPER_REDIS_UNAVAILABLE";
/// `code` of an `Error`: Redis did not answer within the store's timeout.
pub(crate) const REDIS_TIMEOUT: &str = "ERR_RATEKEEPER_REDIS_TIMEOUT";
/// `code` of an `Error`: Redis answered with an error.
pub(crate) const REDIS_ERROR: &str = "ERR_RATEKEEPER_REDIS_ERROR";
/// `code` of an `Error`: a script replied with something this client does
/// not understand.
pub(crate) const REDIS_PROTOCOL: &str = "ERR_RATEKEEPER_REDIS_PROTOCOL";
/// `code` of an `Error`: the algorithm or mode does not run in Redis.
pub(crate) const REDIS_UNSUPPORTED: &str = "ERR_RATEKEEPER_REDIS_UNSUPPORTED";

/// Why a native call failed.
pub(crate) enum Failure {
    /// An error of the Rust library: every variant, mapped in [`throw`].
    Library(ratekeeper::Error),
    /// A value of the right type that the binding cannot pass on (a
    /// fractional permit count, a `NaN` duration).
    OutOfRange { argument: &'static str, value: Js, requirement: &'static str },
    /// A value of the wrong type; `expected` completes "must be …".
    WrongType { argument: &'static str, value: Js, expected: &'static str },
    /// A value of the wrong type found by the package's JavaScript, which
    /// names the argument itself (`throwWrongType`).
    WrongTypeNamed { argument: String, value: Js, expected: String },
    /// An options object with an unknown key or keys that exclude each other.
    InvalidOption(String),
    /// A failure in the `index`-th limit of a composite: the argument it
    /// names becomes `limits[index].name`.
    InPart { index: usize, inner: Box<Failure> },
    /// The same as `OutOfRange`, found after the call that received the
    /// value returned (a Redis limiter's constructor runs on another
    /// thread): the value is kept as a [`Primitive`].
    OutOfRangeLater { argument: &'static str, value: Primitive, requirement: &'static str },
    /// A keyed limiter's new key refused at its bound.
    AtCapacity(ratekeeper::AtCapacity),
    /// A call on something closed: `what` names it ("this RedisStore").
    Closed(&'static str),
    /// An error of a Redis limiter (`Invalid` ones are mapped as
    /// `Library`).
    Redis(ratekeeper_redis::Error),
    /// A JavaScript exception is already pending (a getter on an options
    /// object threw): it propagates unchanged.
    Thrown,
    /// A bug: a Rust panic, or a Node-API call that should not fail.
    Internal(String),
}

/// A [`Failure`] in a box: what the bound methods return. A
/// `Result<_, Failure>` is 56 bytes and crosses the panic boundary through
/// memory; boxed, the result is 16 bytes, and only a failing call
/// allocates. (On the hot path the difference measured a few ns of ~35.)
pub(crate) struct Boxed(pub(crate) Box<Failure>);

impl<E: Into<Failure>> From<E> for Boxed {
    #[cold]
    fn from(failure: E) -> Self {
        Boxed(Box::new(failure.into()))
    }
}

impl From<ratekeeper::Error> for Failure {
    fn from(error: ratekeeper::Error) -> Self {
        Failure::Library(error)
    }
}

impl From<ratekeeper_redis::Error> for Failure {
    fn from(error: ratekeeper_redis::Error) -> Self {
        match error {
            // A bad argument is the same error as for a local limiter.
            ratekeeper_redis::Error::Invalid(invalid) => Failure::Library(invalid),
            other => Failure::Redis(other),
        }
    }
}

/// A primitive JavaScript value kept beyond the call that received it, to
/// show in an error found later ([`Failure::OutOfRangeLater`]).
#[derive(Debug, Clone)]
pub(crate) enum Primitive {
    Number(f64),
    BigInt(i64),
}

impl Primitive {
    /// `value` if it is a number or a bigint that fits an `i64`.
    pub(crate) fn keep(value: Js) -> Option<Primitive> {
        match value.bigint_i64() {
            Some(Ok(i)) => Some(Primitive::BigInt(i)),
            Some(Err(())) => None,
            None => value.number().map(Primitive::Number),
        }
    }

    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value, Failure> {
        match *self {
            Primitive::Number(x) => js::number(env, x),
            Primitive::BigInt(i) => js::bigint(env, i),
        }
    }
}

/// An argument as the caller gave it, kept for an error found after the
/// call returned: [`Given`] without the live value.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub(crate) argument: Argument,
    pub(crate) name: &'static str,
    pub(crate) value: Primitive,
    /// What the value must be, as the message says it.
    pub(crate) requirement: &'static str,
}

impl Kept {
    /// `given`, if its value is a number or a bigint (what durations and
    /// counts are); `None` otherwise.
    pub(crate) fn keep(given: Given) -> Option<Kept> {
        let requirement = requirement(given.argument);
        Some(Kept { argument: given.argument, name: given.name, value: Primitive::keep(given.value)?, requirement })
    }
}

/// [`blame`] for a Redis limiter's result: its invalid-argument errors are
/// blamed as a local limiter's are, the others pass through.
pub(crate) fn blame_redis<T>(result: Result<T, ratekeeper_redis::Error>, given: &[Given]) -> Result<T, Failure> {
    match result {
        Ok(value) => Ok(value),
        Err(ratekeeper_redis::Error::Invalid(invalid)) => blame(Err(invalid), given),
        Err(other) => Err(Failure::from(other)),
    }
}

/// [`blame`] for an error found after the call returned (on another
/// thread): the argument is named as the caller wrote it.
pub(crate) fn blame_later<T>(result: Result<T, ratekeeper_redis::Error>, kept: &[Kept]) -> Result<T, Failure> {
    result.map_err(|error| match error {
        ratekeeper_redis::Error::Invalid(ratekeeper::Error::InvalidArgument(invalid)) => {
            match kept.iter().find(|k| k.argument == invalid.argument()) {
                Some(k) => {
                    Failure::OutOfRangeLater { argument: k.name, value: k.value.clone(), requirement: k.requirement }
                }
                None => Failure::from(ratekeeper_redis::Error::Invalid(ratekeeper::Error::InvalidArgument(invalid))),
            }
        }
        other => Failure::from(other),
    })
}

/// The JavaScript name of a library argument. Names follow the JavaScript
/// API, where durations carry their unit: the library's `warmup` is the
/// microseconds the binding passed for `warmupMicros` (a millisecond
/// `warmupMs` is checked before it reaches the library).
pub(crate) fn argument_name(argument: Argument) -> Cow<'static, str> {
    Cow::Borrowed(match argument {
        Argument::PermitsPerSecond => "permitsPerSecond",
        Argument::Permits => "permits",
        Argument::Warmup => "warmupMicros",
        Argument::ColdFactor => "coldFactor",
        Argument::MaxBurstSeconds => "maxBurstSeconds",
        Argument::Timeout => "timeoutMs",
        Argument::WarmupSeconds => "warmupMs",
        // `ManualClock.advance(ms)`.
        Argument::AdvanceSeconds => "ms",
        Argument::Rate => "rate",
        Argument::Burst => "burst",
        Argument::Cost => "cost",
        Argument::MaxBurst => "maxBurst",
        Argument::CountPerPeriod => "countPerPeriod",
        // Durations reach the library in microseconds; one given in
        // milliseconds is blamed under its own name (`blame`).
        Argument::Period => "periodMicros",
        Argument::Capacity => "capacity",
        Argument::Interval => "intervalMicros",
        Argument::Limit => "limit",
        Argument::Window => "windowMicros",
        Argument::SubWindows => "subWindows",
        Argument::Cir => "cir",
        Argument::Cbs => "cbs",
        Argument::Ebs => "ebs",
        Argument::Pir => "pir",
        Argument::Pbs => "pbs",
        Argument::InitialLimit => "initialLimit",
        Argument::MinLimit => "minLimit",
        Argument::MaxLimit => "maxLimit",
        Argument::Smoothing => "smoothing",
        Argument::RttTolerance => "rttTolerance",
        Argument::QueueSize => "queueSize",
        Argument::BackoffRatio => "backoffRatio",
        Argument::ProbeInterval => "probeInterval",
        Argument::RttTimeout => "rttTimeoutMicros",
        Argument::Rtt => "rttMicros",
        Argument::InFlight => "inFlight",
        Argument::PolicyName => "name",
        Argument::Limits => "limits",
        Argument::Bytes => "bytes",
        // The distributed limiters'.
        Argument::Batch => "batch",
        Argument::Lease => "leaseMicros",
        // Arguments added to the library later get their camelCase name.
        other => return Cow::Owned(camel_case(other.name())),
    })
}

/// An argument as the caller gave it: the library [`Argument`] it became,
/// its JavaScript name and its JavaScript value.
#[derive(Clone, Copy)]
pub(crate) struct Given {
    pub(crate) argument: Argument,
    pub(crate) name: &'static str,
    pub(crate) value: Js,
}

/// A library result whose invalid-argument error, when it concerns one of
/// the `given` arguments, names that argument as the caller wrote it and
/// shows the value the caller passed — `periodMs = 0.0004`, not the library's
/// `period = 0` microseconds; `burst = -1n`, not `-1`. Other errors pass
/// through unchanged.
pub(crate) fn blame<T>(result: Result<T, ratekeeper::Error>, given: &[Given]) -> Result<T, Failure> {
    result.map_err(|error| {
        // `ratekeeper::Error` is non-exhaustive: other errors pass through.
        #[allow(irrefutable_let_patterns)]
        let ratekeeper::Error::InvalidArgument(invalid) = error
        else {
            return Failure::Library(error);
        };
        match given.iter().find(|g| g.argument == invalid.argument()) {
            Some(g) => Failure::OutOfRange { argument: g.name, value: g.value, requirement: requirement(g.argument) },
            None => Failure::Library(error),
        }
    })
}

/// What a valid value is, in JavaScript's terms.
pub(crate) fn requirement(argument: Argument) -> &'static str {
    match argument {
        // JavaScript has no integer type: say that it must be one.
        Argument::Permits => PERMITS_REQUIREMENT,
        other => other.requirement(),
    }
}

/// The requirement on a permit count, for the library's check and the
/// binding's (fractions, infinities) alike.
pub(crate) const PERMITS_REQUIREMENT: &str = "must be an integer between 1 and 2147483647";

/// `snake_case` → `camelCase`: the library's names in JavaScript's spelling.
pub(crate) fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Class {
    Range,
    Type,
    Plain,
}

/// What to throw, before it becomes a JavaScript object.
struct Described {
    class: Class,
    code: &'static str,
    message: Message,
    argument: Option<Cow<'static, str>>,
    value: Option<sys::napi_value>,
}

/// An error's message: about a named argument ("invalid argument NAME…",
/// with what follows the name), or whole.
enum Message {
    Argument(String),
    Whole(String),
}

impl Described {
    fn message(&self) -> String {
        match (&self.message, &self.argument) {
            (Message::Argument(rest), Some(name)) => format!("invalid argument {name}{rest}"),
            (Message::Argument(rest), None) => format!("invalid argument{rest}"),
            (Message::Whole(message), _) => message.clone(),
        }
    }
}

fn library_value(env: sys::napi_env, value: Value) -> Result<sys::napi_value, Failure> {
    match value {
        Value::Float(x) => js::number(env, x),
        // Integers that a double holds exactly come back as numbers (they
        // were given as numbers); larger ones (microseconds) as bigints.
        Value::Int(i) if i.unsigned_abs() < (1 << 53) => js::number(env, i as f64),
        Value::Int(i) => js::bigint(env, i),
    }
}

fn received(value: Js) -> String {
    let (kind, shown) = (value.kind(), value.describe());
    if shown == kind.noun() {
        shown
    } else {
        format!("{} ({shown})", kind.noun())
    }
}

fn describe(env: sys::napi_env, failure: Failure) -> Result<Option<Described>, Failure> {
    Ok(Some(match failure {
        Failure::Library(ratekeeper::Error::InvalidArgument(invalid)) => {
            let value = library_value(env, invalid.value())?;
            Described {
                class: Class::Range,
                code: INVALID_ARGUMENT,
                message: Message::Argument(format!(
                    " = {}: {}",
                    Js::new(env, value).describe(),
                    requirement(invalid.argument())
                )),
                argument: Some(argument_name(invalid.argument())),
                value: Some(value),
            }
        }
        // `ratekeeper::Error` is non-exhaustive: a variant added later and
        // not yet mapped above still reaches JavaScript as an error.
        #[allow(unreachable_patterns)]
        Failure::Library(other) => Described {
            class: Class::Plain,
            code: INTERNAL,
            message: Message::Whole(format!("ratekeeper: unmapped library error: {other}")),
            argument: None,
            value: None,
        },
        Failure::OutOfRange { argument, value, requirement } => Described {
            class: Class::Range,
            code: INVALID_ARGUMENT,
            message: Message::Argument(format!(" = {}: {requirement}", value.describe())),
            argument: Some(Cow::Borrowed(argument)),
            value: Some(value.raw),
        },
        Failure::WrongType { argument, value, expected } => Described {
            class: Class::Type,
            code: INVALID_ARG_TYPE,
            message: Message::Argument(format!(": must be {expected}, received {}", received(value))),
            argument: Some(Cow::Borrowed(argument)),
            value: Some(value.raw),
        },
        Failure::WrongTypeNamed { argument, value, expected } => Described {
            class: Class::Type,
            code: INVALID_ARG_TYPE,
            message: Message::Argument(format!(": must be {expected}, received {}", received(value))),
            argument: Some(Cow::Owned(argument)),
            value: Some(value.raw),
        },
        Failure::InvalidOption(message) => Described {
            class: Class::Type,
            code: INVALID_OPTION,
            message: Message::Whole(message),
            argument: Some(Cow::Borrowed("options")),
            value: None,
        },
        Failure::InPart { index, inner } => {
            let Some(mut d) = describe(env, *inner)? else { return Ok(None) };
            let part = format!("limits[{index}]");
            d.argument = d.argument.map(|name| match name.as_ref() {
                "options" => Cow::Owned(part.clone()),
                name => Cow::Owned(format!("{part}.{name}")),
            });
            if let Message::Whole(message) = d.message {
                d.message = Message::Whole(format!("{part}: {message}"));
            }
            d
        }
        Failure::OutOfRangeLater { argument, value, requirement } => {
            let value = value.to_js(env)?;
            Described {
                class: Class::Range,
                code: INVALID_ARGUMENT,
                message: Message::Argument(format!(" = {}: {requirement}", Js::new(env, value).describe())),
                argument: Some(Cow::Borrowed(argument)),
                value: Some(value),
            }
        }
        Failure::AtCapacity(full) => Described {
            class: Class::Plain,
            code: AT_CAPACITY,
            message: Message::Whole(full.to_string()),
            argument: None,
            value: None,
        },
        Failure::Closed(what) => Described {
            class: Class::Plain,
            code: CLOSED,
            message: Message::Whole(format!("{what} is closed")),
            argument: None,
            value: None,
        },
        Failure::Redis(error) => Described {
            class: Class::Plain,
            code: redis_code(&error),
            message: Message::Whole(format!("ratekeeper: {error}")),
            argument: None,
            value: None,
        },
        Failure::Thrown => return Ok(None),
        Failure::Internal(message) => Described {
            class: Class::Plain,
            code: INTERNAL,
            message: Message::Whole(format!("ratekeeper internal error (a bug, please report it): {message}")),
            argument: None,
            value: None,
        },
    }))
}

fn build(env: sys::napi_env, d: &Described) -> Result<sys::napi_value, Failure> {
    let code = js::string(env, d.code)?;
    let message = js::string(env, &d.message())?;
    let mut error = ptr::null_mut();
    // SAFETY: `code` and `message` are strings of the running call; the
    // `code` argument sets the error's `code` property.
    let status = unsafe {
        match d.class {
            Class::Range => sys::napi_create_range_error(env, code, message, &mut error),
            Class::Type => sys::napi_create_type_error(env, code, message, &mut error),
            Class::Plain => sys::napi_create_error(env, code, message, &mut error),
        }
    };
    js::check(env, status, "create error")?;
    if let Some(argument) = &d.argument {
        js::set(env, error, c"argument", js::string(env, argument)?)?;
    }
    if let Some(value) = d.value {
        js::set(env, error, c"value", value)?;
    }
    Ok(error)
}

/// The `code` of a Redis limiter's error (`Invalid` ones are `Library`).
fn redis_code(error: &ratekeeper_redis::Error) -> &'static str {
    use ratekeeper_redis::Error;
    match error {
        // The crate's own bound, or the client's response timeout (set to
        // the same duration, it may fire first): the same timeout.
        Error::Timeout => REDIS_TIMEOUT,
        Error::Redis(e) if e.is_timeout() => REDIS_TIMEOUT,
        // Down, refused, dropped, a cluster that is down: the same "cannot
        // answer now" as `Unavailable`, which a policy other than `error`
        // would have decided.
        e if e.is_unavailability() => REDIS_UNAVAILABLE,
        Error::Unsupported(_) => REDIS_UNSUPPORTED,
        Error::Protocol(_) => REDIS_PROTOCOL,
        _ => REDIS_ERROR,
    }
}

/// What the caller sees when the error object cannot be built.
fn fallback() -> Described {
    Described {
        class: Class::Plain,
        code: INTERNAL,
        message: Message::Whole("ratekeeper internal error: could not describe an error".to_owned()),
        argument: None,
        value: None,
    }
}

/// Throws `failure` as a JavaScript exception in `env` (nothing when one is
/// already pending). Never fails: if the error object cannot be built, a
/// plain `Error` with the same code and message is thrown instead.
pub(crate) fn throw(env: sys::napi_env, failure: Failure) {
    let described = match describe(env, failure) {
        Ok(Some(d)) => d,
        Ok(None) | Err(Failure::Thrown) => return,
        Err(_) => fallback(),
    };
    match build(env, &described) {
        // SAFETY: throwing a freshly built error object of the running call.
        Ok(error) => unsafe {
            sys::napi_throw(env, error);
        },
        Err(Failure::Thrown) => {}
        Err(_) => {
            let code = std::ffi::CString::new(described.code).unwrap_or_default();
            let message = std::ffi::CString::new(described.message().replace('\0', " ")).unwrap_or_default();
            // SAFETY: NUL-terminated strings.
            unsafe { sys::napi_throw_error(env, code.as_ptr(), message.as_ptr()) };
        }
    }
}

/// The error object for `failure`, to reject a Promise with: the one
/// [`throw`] would throw. A pending exception (a getter that threw) is
/// taken and returned as it is. Never fails: `None` only if not even a
/// plain `Error` can be made.
pub(crate) fn value(env: sys::napi_env, failure: Failure) -> Option<sys::napi_value> {
    let described = match describe(env, failure) {
        Ok(Some(d)) => d,
        Ok(None) | Err(Failure::Thrown) => return take_pending(env),
        Err(_) => fallback(),
    };
    match build(env, &described) {
        Ok(error) => Some(error),
        Err(Failure::Thrown) => take_pending(env),
        Err(_) => build(env, &fallback()).ok(),
    }
}

/// Takes the pending JavaScript exception, if there is one.
fn take_pending(env: sys::napi_env) -> Option<sys::napi_value> {
    let mut error = ptr::null_mut();
    // SAFETY: clears and returns the pending exception (or `undefined`).
    let status = unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
    (status == sys::Status::napi_ok && !error.is_null()).then_some(error)
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_owned()
    }
}

/// Runs the body of a native call so that no panic leaves it: a panic
/// becomes [`Failure::Internal`]. (Keep `R` small — a [`Boxed`] error, not a
/// [`Failure`]: the result crosses the unwinding boundary through memory.)
#[inline]
pub(crate) fn boundary<R>(body: impl FnOnce() -> R) -> Result<R, Failure> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => Ok(result),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            // Dropping a payload can itself panic; leak it instead.
            std::mem::forget(payload);
            Err(Failure::Internal(message))
        }
    }
}

/// [`boundary`] for a napi-rs `#[napi]` function: the failure is thrown
/// here, and napi-rs is told that an exception is pending, so it throws
/// nothing of its own.
pub(crate) fn guarded<T>(env: &Env, body: impl FnOnce() -> Result<T, Failure>) -> napi::Result<T> {
    boundary(body).and_then(|result| result).map_err(|failure| {
        throw(env.raw(), failure);
        napi::Error::new(napi::Status::PendingException, "")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_argument_has_a_camel_case_name() {
        // The names that are more than the camelCase of the library's.
        let named = [
            (Argument::Warmup, "warmupMicros"),
            (Argument::Timeout, "timeoutMs"),
            (Argument::WarmupSeconds, "warmupMs"),
            (Argument::AdvanceSeconds, "ms"),
            (Argument::Period, "periodMicros"),
            (Argument::Interval, "intervalMicros"),
            (Argument::Window, "windowMicros"),
            (Argument::RttTimeout, "rttTimeoutMicros"),
            (Argument::Rtt, "rttMicros"),
            (Argument::PolicyName, "name"),
            (Argument::Lease, "leaseMicros"),
        ];
        for &argument in Argument::ALL {
            let name = argument_name(argument);
            assert!(requirement(argument).starts_with("must "), "{argument:?}");
            // Each is the JavaScript spelling of the library's name (plus a
            // unit where the library's is implied), never a new word.
            match named.iter().find(|(a, _)| *a == argument) {
                Some((_, expected)) => assert_eq!(name, *expected),
                None => assert_eq!(name, camel_case(argument.name()), "{argument:?}"),
            }
        }
        assert_eq!(argument_name(Argument::SlidingLogLimit), "limit");
        assert_eq!(camel_case("max_burst_seconds"), "maxBurstSeconds");
        assert_eq!(camel_case("rate"), "rate");
    }

    #[test]
    fn a_panic_becomes_an_internal_failure() {
        let outcome = boundary::<()>(|| panic!("boom"));
        assert!(matches!(outcome, Err(Failure::Internal(m)) if m == "panic: boom"));
        assert!(matches!(boundary(|| 7), Ok(7)));
    }
}
