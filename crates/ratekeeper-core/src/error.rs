//! The one error type of the core.
//!
//! A refusal to admit a request is never an error: it is a value the
//! algorithm returns. Errors are only for arguments no limiter can be built
//! or asked with. Every such case leaves the limiter's state untouched, so a
//! caller may keep using a limiter after an error.

use core::fmt;

/// What went wrong. `#[non_exhaustive]`: later algorithms may add variants.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is outside the domain the operation accepts.
    InvalidArgument(InvalidArgument),
}

/// A rejected argument: its name, the value given and what was required.
///
/// Argument names are the Rust parameter names in `snake_case`
/// (`permits_per_second`, `permits`, `warmup`, …); bindings translate them to
/// their own language's spelling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvalidArgument {
    /// The parameter's name, e.g. `"permits_per_second"`.
    pub name: &'static str,
    /// The value that was passed.
    pub value: Value,
    /// What the value must be, e.g. `"must be positive"`.
    pub requirement: &'static str,
}

/// The value of a rejected argument, kept in its own type so that messages
/// print it exactly (`NaN`, `-0`, `9223372036854775807`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A floating-point argument such as a rate.
    Float(f64),
    /// An integer argument such as a permit count or a number of microseconds.
    Int(i64),
}

impl Error {
    /// Shorthand for an [`Error::InvalidArgument`] on a floating-point value.
    pub const fn invalid_float(name: &'static str, value: f64, requirement: &'static str) -> Self {
        Error::InvalidArgument(InvalidArgument { name, value: Value::Float(value), requirement })
    }

    /// Shorthand for an [`Error::InvalidArgument`] on an integer value.
    pub const fn invalid_int(name: &'static str, value: i64, requirement: &'static str) -> Self {
        Error::InvalidArgument(InvalidArgument { name, value: Value::Int(value), requirement })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Int(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid argument {} = {}: {}", self.name, self.value, self.requirement)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(arg) => arg.fmt(f),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn messages_name_the_argument_and_value() {
        let e = Error::invalid_float("permits_per_second", f64::NAN, "must be positive");
        assert_eq!(e.to_string(), "invalid argument permits_per_second = NaN: must be positive");
        let e = Error::invalid_float("permits_per_second", -0.0, "must be positive");
        assert_eq!(e.to_string(), "invalid argument permits_per_second = -0.0: must be positive");
        let e = Error::invalid_int("permits", i64::MIN, "must be at least 1");
        assert_eq!(e.to_string(), "invalid argument permits = -9223372036854775808: must be at least 1");
    }
}
