//! Arguments by their JavaScript names: the library's [`Argument`]s in
//! JavaScript's spelling ([`argument_name`]), what a valid value is in
//! JavaScript's terms ([`requirement`]), and [`blame`], which names an
//! invalid argument as the caller wrote it (`periodMs`, not the library's
//! `period` in microseconds) and shows the value the caller passed.

use std::borrow::Cow;

use ratekeeper::Argument;

use super::failure::{Failure, Primitive};
use crate::js::Js;

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
        // Resilience4j's cycle limiter: durations in microseconds, as above.
        Argument::LimitRefreshPeriod => "limitRefreshPeriodMicros",
        Argument::TimeoutDuration => "timeoutDurationMicros",
        // Arguments added to the library later get their camelCase name.
        other => return Cow::Owned(camel_case(other.name())),
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
            (Argument::LimitRefreshPeriod, "limitRefreshPeriodMicros"),
            (Argument::TimeoutDuration, "timeoutDurationMicros"),
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
}

/// The JavaScript spellings of a Redis-only option: in milliseconds, and in
/// exact microseconds (`timeoutMs`, `timeoutMicros`). The crate names the
/// option ([`RedisOption::name`](ratekeeper_redis::RedisOption::name)); this
/// is the one place the package's spelling of it is written.
pub(crate) const fn redis_option_names(option: ratekeeper_redis::RedisOption) -> (&'static str, &'static str) {
    use ratekeeper_redis::RedisOption as O;
    match option {
        O::Timeout => ("timeoutMs", "timeoutMicros"),
        O::ConnectTimeout => ("connectTimeoutMs", "connectTimeoutMicros"),
        O::RetryInterval => ("retryIntervalMs", "retryIntervalMicros"),
        O::Ttl => ("ttlMs", "ttlMicros"),
        O::HeartbeatTtl => ("heartbeatTtlMs", "heartbeatTtlMicros"),
        O::IdleTtl => ("idleTtlMs", "idleTtlMicros"),
        O::LeaseTtl => ("leaseTtlMs", "leaseTtlMicros"),
        // `RedisOption` is non-exhaustive: an option added to the crate
        // without a spelling here is caught by the test below.
        _ => ("options", "options"),
    }
}

#[cfg(test)]
mod redis_option_tests {
    use super::redis_option_names;

    #[test]
    fn every_redis_option_has_a_spelling_of_its_own() {
        let mut seen = std::collections::HashSet::new();
        for &option in ratekeeper_redis::RedisOption::ALL {
            let (ms, micros) = redis_option_names(option);
            assert!(ms.ends_with("Ms") && micros.ends_with("Micros"), "{option:?}");
            assert_eq!(ms.trim_end_matches("Ms"), micros.trim_end_matches("Micros"), "{option:?}");
            assert!(seen.insert(ms), "{option:?} shares {ms}");
        }
    }
}
