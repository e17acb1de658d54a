//! [`Failure`]: why a native call failed, and the JavaScript error each
//! failure is — its class, `code`, message, `argument` and `value`
//! ([`describe`]), before it is built as an object ([`boundary`](mod@super::boundary)).
//! The `code`s are here too, each with the failure it stands for.

use std::borrow::Cow;

use napi::sys;
use ratekeeper::Value;

use super::names::{argument_name, requirement};
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
/// `code` of an `Error`: Redis refused the credentials (`WRONGPASS`,
/// `NOAUTH`) or a command of an ACL user (`NOPERM`).
pub(crate) const REDIS_AUTH: &str = "ERR_RATEKEEPER_REDIS_AUTH";
/// `code` of an `Error`: TLS could not be set up (a certificate not
/// trusted, for another name, expired, or refused; unusable TLS settings).
pub(crate) const REDIS_TLS: &str = "ERR_RATEKEEPER_REDIS_TLS";

/// Why a native call failed.
pub(crate) enum Failure {
    /// An error of the Rust library: every variant, mapped in [`throw`](super::throw).
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
    /// Text the library refused (limits text, a trusted proxy): the
    /// invalid-argument error with the library's own message, naming
    /// `argument`, with the byte `position` where it went wrong if known.
    BadText { argument: Cow<'static, str>, value: Js, message: String, position: Option<usize> },
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
            // The bindings check options before the crate does
            // (`redis::option_duration`), so this is a fallback: still a
            // `RangeError` naming the option, its value in microseconds.
            ratekeeper_redis::Error::InvalidOption(invalid) => Failure::OutOfRangeLater {
                argument: super::names::redis_option_names(invalid.option()).1,
                value: match invalid.value() {
                    ratekeeper::Value::Int(i) => Primitive::BigInt(i),
                    ratekeeper::Value::Float(x) => Primitive::Number(x),
                },
                requirement: invalid.requirement(),
            },
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

/// The JavaScript class of an error.
#[derive(Clone, Copy)]
pub(super) enum Class {
    Range,
    Type,
    Plain,
}

/// What to throw, before it becomes a JavaScript object.
pub(super) struct Described {
    pub(super) class: Class,
    pub(super) code: &'static str,
    message: Message,
    pub(super) argument: Option<Cow<'static, str>>,
    pub(super) value: Option<sys::napi_value>,
}

/// An error's message: about a named argument ("invalid argument NAME…",
/// with what follows the name), or whole.
enum Message {
    Argument(String),
    Whole(String),
    /// Whole, and the byte of the text it is about (the error's
    /// `position`).
    Positioned(String, usize),
}

impl Described {
    pub(super) fn message(&self) -> String {
        match (&self.message, &self.argument) {
            (Message::Argument(rest), Some(name)) => format!("invalid argument {name}{rest}"),
            (Message::Argument(rest), None) => format!("invalid argument{rest}"),
            (Message::Whole(message) | Message::Positioned(message, _), _) => message.clone(),
        }
    }

    /// The byte of the text the error is about, if it names one.
    pub(super) fn position(&self) -> Option<usize> {
        match self.message {
            Message::Positioned(_, position) => Some(position),
            _ => None,
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

pub(super) fn describe(env: sys::napi_env, failure: Failure) -> Result<Option<Described>, Failure> {
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
        Failure::BadText { argument, value, message, position } => Described {
            class: Class::Range,
            code: INVALID_ARGUMENT,
            message: match position {
                Some(position) => Message::Positioned(message, position),
                None => Message::Whole(message),
            },
            argument: Some(argument),
            value: Some(value.raw),
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
        // Refusals, not unavailability: no policy decides instead.
        Error::Auth(_) => REDIS_AUTH,
        Error::Tls(_) => REDIS_TLS,
        _ => REDIS_ERROR,
    }
}

/// What the caller sees when the error object cannot be built.
pub(super) fn fallback() -> Described {
    Described {
        class: Class::Plain,
        code: INTERNAL,
        message: Message::Whole("ratekeeper internal error: could not describe an error".to_owned()),
        argument: None,
        value: None,
    }
}
