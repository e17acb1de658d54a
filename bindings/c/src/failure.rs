//! [`Failure`]: why a call failed. The one place where ratekeeper's errors
//! become C statuses, argument names and messages.

use core::fmt;
use std::any::Any;

use ratekeeper::{Argument, Error};

use crate::status::rk_status;

/// Why an exported function did not return `RK_OK`.
#[derive(Debug)]
pub enum Failure {
    /// A required pointer argument was `NULL`.
    NullPointer {
        /// The parameter's name in the header.
        argument: &'static str,
    },
    /// The std layer refused the call.
    Library(Error),
    /// A panic was caught at the boundary.
    Panic(Box<dyn Any + Send>),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Library(error)
    }
}

impl Failure {
    /// The status a C caller sees.
    pub fn status(&self) -> rk_status {
        match self {
            Failure::NullPointer { .. } => rk_status::RK_NULL_POINTER,
            Failure::Library(Error::InvalidArgument(_)) => rk_status::RK_INVALID_ARGUMENT,
            Failure::Library(_) => rk_status::RK_OTHER_ERROR,
            Failure::Panic(_) => rk_status::RK_PANIC,
        }
    }

    /// The parameter at fault, spelled as in the header, when the failure
    /// is about one argument.
    pub fn argument(&self) -> Option<&'static str> {
        match self {
            Failure::NullPointer { argument } => Some(argument),
            Failure::Library(Error::InvalidArgument(invalid)) => Some(c_name(invalid.argument())),
            Failure::Library(_) | Failure::Panic(_) => None,
        }
    }

    /// Describes the failure, without the function's name.
    pub fn describe(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Failure::NullPointer { argument } => write!(f, "{argument} is NULL"),
            Failure::Library(Error::InvalidArgument(invalid)) => write!(
                f,
                "invalid argument {} = {}: {}",
                c_name(invalid.argument()),
                invalid.value(),
                invalid.requirement()
            ),
            Failure::Library(other) => write!(f, "{other}"),
            Failure::Panic(payload) => {
                let text = payload
                    .downcast_ref::<&'static str>()
                    .copied()
                    .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                    .unwrap_or("(no message)");
                write!(f, "panic (a bug in ratekeeper, please report it): {text}")
            }
        }
    }
}

/// An argument's name as the C parameter that carries it. The C API passes
/// durations as whole microseconds, where the Rust API has `Duration`s or
/// seconds, so those names say so.
pub fn c_name(argument: Argument) -> &'static str {
    match argument {
        Argument::Warmup | Argument::WarmupSeconds => "warmup_micros",
        Argument::Timeout => "timeout_micros",
        // The same name in C as in Rust: permits_per_second, permits,
        // cold_factor, max_burst_seconds, and any argument added later.
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(failure: &Failure) -> String {
        let mut s = String::new();
        failure.describe(&mut s).unwrap();
        s
    }

    #[test]
    fn invalid_arguments_are_named_as_in_the_header() {
        let f = Failure::from(Error::invalid_int(Argument::Warmup, -5));
        assert_eq!(f.status(), rk_status::RK_INVALID_ARGUMENT);
        assert_eq!(f.argument(), Some("warmup_micros"));
        assert_eq!(described(&f), "invalid argument warmup_micros = -5: must not be negative");
        let f = Failure::from(Error::invalid_float(Argument::PermitsPerSecond, f64::NAN));
        assert_eq!(f.argument(), Some("permits_per_second"));
        assert_eq!(described(&f), "invalid argument permits_per_second = NaN: must be positive and not NaN");
    }

    #[test]
    fn null_pointers_and_panics_have_their_own_statuses() {
        let f = Failure::NullPointer { argument: "out_limiter" };
        assert_eq!((f.status(), f.argument()), (rk_status::RK_NULL_POINTER, Some("out_limiter")));
        assert_eq!(described(&f), "out_limiter is NULL");
        let f = Failure::Panic(Box::new(String::from("boom")));
        assert_eq!((f.status(), f.argument()), (rk_status::RK_PANIC, None));
        assert_eq!(described(&f), "panic (a bug in ratekeeper, please report it): boom");
    }
}
