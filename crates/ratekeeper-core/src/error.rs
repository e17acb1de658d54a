//! The one error type of the core.
//!
//! A refusal to admit a request is never an error: it is a value the
//! algorithm returns. Errors are only for arguments no limiter can be built
//! or asked with. Every such case leaves the limiter's state untouched, so a
//! caller may keep using a limiter after an error.
//!
//! [`Error`] is 16 bytes, so a `Result<bool, Error>` comes back in two
//! registers: a rate limiter's hot path returns one on every call.

use core::fmt;

/// What went wrong. `#[non_exhaustive]`: later algorithms may add variants.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is outside the domain the operation accepts.
    InvalidArgument(InvalidArgument),
}

/// Every argument the library checks, each with its requirement.
///
/// Bindings map these to their own spelling (`permitsPerSecond` in
/// JavaScript) from [`name`](Argument::name), the Rust parameter name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Argument {
    /// A rate in permits per second, as Guava checks it: `> 0`, not NaN
    /// (`+Infinity` allowed).
    PermitsPerSecond,
    /// A number of permits for Guava's algorithms: a positive Java `int`.
    Permits,
    /// A warm-up period in microseconds: not negative.
    Warmup,
    /// A warm-up cold factor: finite and at least 1.
    ColdFactor,
    /// A bursty limiter's saved-up seconds: finite and not negative.
    MaxBurstSeconds,
    /// A timeout in seconds (bindings): not NaN. Negative means "do not wait".
    Timeout,
    /// A warm-up period in seconds (bindings): finite and not negative.
    WarmupSeconds,
    /// Seconds to move a manual clock forward (bindings): finite and not
    /// negative, because a clock never goes back.
    AdvanceSeconds,
}

impl Argument {
    /// The Rust parameter's name, in `snake_case`.
    pub const fn name(self) -> &'static str {
        match self {
            Argument::PermitsPerSecond => "permits_per_second",
            Argument::Permits => "permits",
            Argument::Warmup => "warmup",
            Argument::ColdFactor => "cold_factor",
            Argument::MaxBurstSeconds => "max_burst_seconds",
            Argument::Timeout => "timeout",
            Argument::WarmupSeconds => "warmup",
            Argument::AdvanceSeconds => "seconds",
        }
    }

    /// What a valid value is, as a phrase: "must be …".
    pub const fn requirement(self) -> &'static str {
        match self {
            Argument::PermitsPerSecond => "must be positive and not NaN",
            Argument::Permits => "must be between 1 and 2147483647",
            Argument::Warmup => "must not be negative",
            Argument::ColdFactor => "must be finite and at least 1.0",
            Argument::MaxBurstSeconds => "must be finite and not negative",
            Argument::Timeout => "must not be NaN",
            Argument::WarmupSeconds => "must be finite and not negative",
            Argument::AdvanceSeconds => "must be finite and not negative",
        }
    }

    /// Whether the argument is a floating-point number (else an integer).
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Argument::PermitsPerSecond
                | Argument::ColdFactor
                | Argument::MaxBurstSeconds
                | Argument::Timeout
                | Argument::WarmupSeconds
                | Argument::AdvanceSeconds
        )
    }
}

/// A rejected argument and the value that was passed.
#[derive(Clone, Copy, PartialEq)]
pub struct InvalidArgument {
    argument: Argument,
    /// The value's bits: an `f64`'s or an `i64`'s, as the argument says.
    bits: u64,
}

/// The value of a rejected argument, kept in its own type so that messages
/// print it exactly (`NaN`, `-0.0`, `9223372036854775807`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A floating-point argument such as a rate.
    Float(f64),
    /// An integer argument such as a permit count or a number of microseconds.
    Int(i64),
}

impl InvalidArgument {
    /// Which argument.
    pub const fn argument(&self) -> Argument {
        self.argument
    }

    /// The parameter's name, e.g. `"permits_per_second"`.
    pub const fn name(&self) -> &'static str {
        self.argument.name()
    }

    /// What the value must be, e.g. `"must be positive and not NaN"`.
    pub const fn requirement(&self) -> &'static str {
        self.argument.requirement()
    }

    /// The value that was passed.
    pub const fn value(&self) -> Value {
        if self.argument.is_float() {
            Value::Float(f64::from_bits(self.bits))
        } else {
            Value::Int(self.bits as i64)
        }
    }
}

impl fmt::Debug for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvalidArgument").field("argument", &self.argument).field("value", &self.value()).finish()
    }
}

impl Error {
    /// An [`Error::InvalidArgument`] for a floating-point argument.
    pub const fn invalid_float(argument: Argument, value: f64) -> Self {
        Error::InvalidArgument(InvalidArgument { argument, bits: value.to_bits() })
    }

    /// An [`Error::InvalidArgument`] for an integer argument.
    pub const fn invalid_int(argument: Argument, value: i64) -> Self {
        Error::InvalidArgument(InvalidArgument { argument, bits: value as u64 })
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
        write!(f, "invalid argument {} = {}: {}", self.name(), self.value(), self.requirement())
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
        let e = Error::invalid_float(Argument::PermitsPerSecond, f64::NAN);
        assert_eq!(e.to_string(), "invalid argument permits_per_second = NaN: must be positive and not NaN");
        let e = Error::invalid_float(Argument::PermitsPerSecond, -0.0);
        assert_eq!(e.to_string(), "invalid argument permits_per_second = -0.0: must be positive and not NaN");
        let e = Error::invalid_int(Argument::Permits, i64::MIN);
        assert_eq!(e.to_string(), "invalid argument permits = -9223372036854775808: must be between 1 and 2147483647");
        let Error::InvalidArgument(arg) = e;
        assert_eq!(arg.value(), Value::Int(i64::MIN));
        assert_eq!(arg.argument(), Argument::Permits);
    }

    #[test]
    fn results_fit_in_two_registers() {
        assert!(core::mem::size_of::<Error>() <= 16);
        assert!(core::mem::size_of::<Result<bool, Error>>() <= 16);
    }
}
