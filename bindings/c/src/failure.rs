//! [`Failure`]: why a call failed. The one place where ratekeeper's errors
//! (the std layer's, and the Redis limiters') become C statuses, argument
//! names and messages.

use core::fmt;
use std::any::Any;

use ratekeeper::{Argument, Error, Value};
use ratekeeper_redis::RedisOption;

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
    /// A value only the C API can get wrong (an enum constant out of
    /// range, a field the algorithm does not use): `RK_INVALID_ARGUMENT`.
    Invalid {
        /// The parameter or struct field, as in the header.
        argument: &'static str,
        /// What was passed.
        value: Value,
        /// What it must be: "must be …".
        requirement: &'static str,
    },
    /// A limiter handle of another algorithm than the function needs.
    WrongAlgorithm {
        /// The handle's parameter name.
        argument: &'static str,
        /// The algorithm the function needs.
        expected: &'static str,
        /// The handle's algorithm.
        actual: &'static str,
    },
    /// A caller's buffer too small for the result.
    BufferTooSmall {
        /// The length parameter's name.
        argument: &'static str,
        /// How many elements are needed.
        needed: usize,
        /// The buffer's length.
        given: usize,
        /// What the elements are: "bytes (the NUL included)".
        unit: &'static str,
    },
    /// A string argument the C API cannot take (a URL Redis cannot parse, a
    /// key that is not UTF-8): `RK_INVALID_ARGUMENT`.
    Malformed {
        /// The parameter, as in the header.
        argument: &'static str,
        /// What is wrong with it, after "invalid argument {argument}: ".
        problem: String,
    },
    /// A Redis limiter's failure to decide (Redis down, slow, answering
    /// with an error…; never an invalid argument, which is `Library`).
    Redis(ratekeeper_redis::Error),
    /// A failure about one element of an array argument (`limits[1]`).
    InElement {
        /// The array parameter.
        array: &'static str,
        /// The element's index.
        index: usize,
        /// What is wrong with it.
        inner: Box<Failure>,
    },
    /// A panic was caught at the boundary.
    Panic(Box<dyn Any + Send>),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Library(error)
    }
}

/// A Redis limiter's error: its invalid arguments are the std layer's,
/// mapped as every other limiter's; its invalid options are the crate's
/// own, named as their C parameters ([`c_option_name`]).
impl From<ratekeeper_redis::Error> for Failure {
    fn from(error: ratekeeper_redis::Error) -> Self {
        match error {
            ratekeeper_redis::Error::Invalid(e) => Failure::Library(e),
            ratekeeper_redis::Error::InvalidOption(invalid) => Failure::Invalid {
                argument: c_option_name(invalid.option()),
                value: invalid.value(),
                requirement: invalid.requirement(),
            },
            other => Failure::Redis(other),
        }
    }
}

/// The status of a Redis limiter's error (not `Invalid`, which is mapped
/// as the std layer's).
fn redis_status(error: &ratekeeper_redis::Error) -> rk_status {
    use ratekeeper_redis::Error as E;
    match error {
        E::Timeout => rk_status::RK_TIMEOUT,
        E::Redis(e) if e.is_timeout() => rk_status::RK_TIMEOUT,
        E::Unsupported(_) => rk_status::RK_UNSUPPORTED,
        E::Protocol(_) => rk_status::RK_PROTOCOL_ERROR,
        E::Auth(_) => rk_status::RK_REDIS_AUTH_ERROR,
        E::Tls(_) => rk_status::RK_REDIS_TLS_ERROR,
        e if e.is_unavailability() => rk_status::RK_UNAVAILABLE,
        E::Invalid(_) | E::InvalidOption(_) => rk_status::RK_INVALID_ARGUMENT,
        _ => rk_status::RK_REDIS_ERROR,
    }
}

impl Failure {
    /// The status a C caller sees.
    pub fn status(&self) -> rk_status {
        match self {
            Failure::NullPointer { .. } => rk_status::RK_NULL_POINTER,
            Failure::Library(Error::InvalidArgument(_)) => rk_status::RK_INVALID_ARGUMENT,
            Failure::Library(_) => rk_status::RK_OTHER_ERROR,
            Failure::Invalid { .. } | Failure::Malformed { .. } => rk_status::RK_INVALID_ARGUMENT,
            Failure::Redis(error) => redis_status(error),
            Failure::WrongAlgorithm { .. } => rk_status::RK_WRONG_ALGORITHM,
            Failure::BufferTooSmall { .. } => rk_status::RK_BUFFER_TOO_SMALL,
            Failure::InElement { inner, .. } => inner.status(),
            Failure::Panic(_) => rk_status::RK_PANIC,
        }
    }

    /// A failure about element `index` of the array parameter `array`.
    pub fn in_element(array: &'static str, index: usize, inner: impl Into<Failure>) -> Failure {
        Failure::InElement { array, index, inner: Box::new(inner.into()) }
    }

    /// The parameter at fault, spelled as in the header, when the failure
    /// is about one argument.
    pub fn argument(&self) -> Option<&'static str> {
        match self {
            Failure::NullPointer { argument }
            | Failure::Invalid { argument, .. }
            | Failure::WrongAlgorithm { argument, .. }
            | Failure::BufferTooSmall { argument, .. }
            | Failure::Malformed { argument, .. } => Some(argument),
            Failure::Library(Error::InvalidArgument(invalid)) => Some(c_name(invalid.argument())),
            Failure::InElement { inner, .. } => inner.argument(),
            Failure::Library(_) | Failure::Redis(_) | Failure::Panic(_) => None,
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
            Failure::Invalid { argument, value, requirement } => {
                write!(f, "invalid argument {argument} = {value}: {requirement}")
            }
            Failure::Malformed { argument, problem } => write!(f, "invalid argument {argument}: {problem}"),
            Failure::Redis(error) => write!(f, "{error}"),
            Failure::WrongAlgorithm { argument, expected, actual } => {
                write!(f, "{argument} is a {actual} limiter; this function needs a {expected}")
            }
            Failure::BufferTooSmall { argument, needed, given, unit } => {
                write!(f, "{argument} = {given}: the buffer must hold {needed} {unit}")
            }
            Failure::InElement { array, index, inner } => {
                write!(f, "{array}[{index}]: ")?;
                inner.describe(f)
            }
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
        Argument::Period => "period_micros",
        Argument::Interval => "interval_micros",
        Argument::Window => "window_micros",
        Argument::RttTimeout => "rtt_timeout_micros",
        Argument::Rtt => "rtt_micros",
        Argument::CoolDown => "cool_down_micros",
        Argument::SampleInterval => "interval_micros",
        Argument::AvgRt => "avg_rt_micros",
        // The parameters that carry them.
        Argument::PolicyName => "name",
        Argument::Limits => "limits_len",
        // Leased mode's lease, in microseconds.
        Argument::Lease => "lease_micros",
        // Resilience4j's cycle limiter's durations (rk_cycle_config).
        Argument::LimitRefreshPeriod => "limit_refresh_period_micros",
        Argument::TimeoutDuration => "timeout_duration_micros",
        // The same name in C as in Rust: permits_per_second, permits,
        // cold_factor, max_burst_seconds, rate, burst, cost, limit, cir, …,
        // and any argument added later.
        other => other.name(),
    }
}

/// A Redis option's name as the C parameter that carries it: every one is
/// a duration, given in whole microseconds.
pub fn c_option_name(option: RedisOption) -> &'static str {
    match option {
        RedisOption::Timeout => "timeout_micros",
        RedisOption::ConnectTimeout => "connect_timeout_micros",
        RedisOption::RetryInterval => "retry_interval_micros",
        RedisOption::Ttl => "ttl_micros",
        RedisOption::HeartbeatTtl => "heartbeat_ttl_micros",
        RedisOption::IdleTtl => "idle_ttl_micros",
        RedisOption::LeaseTtl => "lease_ttl_micros",
        // An option added later, until it is named here.
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
        assert_eq!(
            described(&f),
            "invalid argument warmup_micros = -5: must be between 0 and 9223372036854775807 microseconds (about 292,271 years)"
        );
        let f = Failure::from(Error::invalid_float(Argument::PermitsPerSecond, f64::NAN));
        assert_eq!(f.argument(), Some("permits_per_second"));
        assert_eq!(described(&f), "invalid argument permits_per_second = NaN: must be positive and not NaN");
    }

    #[test]
    fn durations_are_named_in_microseconds() {
        let f = Failure::from(Error::invalid_int(Argument::Window, 0));
        assert_eq!(f.argument(), Some("window_micros"));
        assert_eq!(
            described(&f),
            "invalid argument window_micros = 0: must be between 1 and 9223372036854775807 microseconds (about 292,271 years)"
        );
        for (argument, name) in [
            (Argument::Period, "period_micros"),
            (Argument::Interval, "interval_micros"),
            (Argument::RttTimeout, "rtt_timeout_micros"),
            (Argument::Rtt, "rtt_micros"),
            (Argument::Cost, "cost"),
            (Argument::SubWindows, "sub_windows"),
            (Argument::PolicyName, "name"),
            (Argument::Limits, "limits_len"),
        ] {
            assert_eq!(c_name(argument), name);
        }
    }

    #[test]
    fn the_c_apis_own_failures() {
        let f = Failure::Invalid { argument: "pre_color", value: Value::Int(7), requirement: "must be an rk_color" };
        assert_eq!((f.status(), f.argument()), (rk_status::RK_INVALID_ARGUMENT, Some("pre_color")));
        assert_eq!(described(&f), "invalid argument pre_color = 7: must be an rk_color");
        let f = Failure::WrongAlgorithm { argument: "limiter", expected: "token_bucket", actual: "gcra" };
        assert_eq!((f.status(), f.argument()), (rk_status::RK_WRONG_ALGORITHM, Some("limiter")));
        assert_eq!(described(&f), "limiter is a gcra limiter; this function needs a token_bucket");
        let f = Failure::BufferTooSmall { argument: "buf_len", needed: 12, given: 4, unit: "bytes (the NUL included)" };
        assert_eq!((f.status(), f.argument()), (rk_status::RK_BUFFER_TOO_SMALL, Some("buf_len")));
        assert_eq!(described(&f), "buf_len = 4: the buffer must hold 12 bytes (the NUL included)");
        let f = Failure::in_element("limits", 2, Error::invalid_int(Argument::Limit, 0));
        assert_eq!((f.status(), f.argument()), (rk_status::RK_INVALID_ARGUMENT, Some("limit")));
        assert_eq!(described(&f), "limits[2]: invalid argument limit = 0: must be between 1 and 9223372036854775807");
    }

    #[test]
    fn redis_options_are_named_as_in_the_header_with_the_crates_requirement() {
        let f = Failure::from(RedisOption::Timeout.from_micros(3_600_000_001).unwrap_err());
        assert_eq!((f.status(), f.argument()), (rk_status::RK_INVALID_ARGUMENT, Some("timeout_micros")));
        assert_eq!(
            described(&f),
            "invalid argument timeout_micros = 3600000001: must be above 0 and at most an hour (1 to 3600000000 microseconds)"
        );
        for &option in RedisOption::ALL {
            let name = c_option_name(option);
            assert_eq!(name, format!("{}_micros", option.name()), "{option:?}");
            let f = Failure::from(option.from_micros(-1).unwrap_err());
            assert_eq!((f.status(), f.argument()), (rk_status::RK_INVALID_ARGUMENT, Some(name)));
            assert!(described(&f).ends_with(option.requirement()), "{}", described(&f));
        }
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
