//! Durations in the units the other languages pass (seconds or
//! milliseconds as a float) and Rust's [`Duration`], as the core's whole
//! microseconds: the one rule for every duration argument, in every
//! binding.
//!
//! **The rule.** A duration becomes whole microseconds: seconds truncate
//! toward zero, as Guava's `TimeUnit.toMicros` does; milliseconds round to
//! the nearest (a decimal such as `1.005` ms means the 1,005 µs it says,
//! although its double is 1.00499999… ms). It must then lie between the
//! argument's own lower bound (0, or 1 µs for a period, a window, an
//! interval, a lease, an RTT timeout) and `i64::MAX` microseconds (about
//! 292,271 years). A duration that is NaN, infinite, negative or longer is
//! an invalid-argument error naming the argument, with the value as
//! passed: it is never clamped, so "a million years" is an error, not
//! 292,271 years. The core checks the lower bounds; these functions the
//! rest.
//!
//! **Timeouts are the one exception**, because a bound on waiting has a
//! natural "forever": a negative timeout means "do not wait", and an
//! infinite one (or any of `i64::MAX` microseconds or more) means "no
//! deadline". NaN is still an error.

use std::time::Duration;

pub use ratekeeper_core::duration::micros_from_secs;
use ratekeeper_core::duration::whole_micros;
use ratekeeper_core::{Argument, Error};

/// Whole microseconds in `ms` milliseconds, rounded to the nearest (half
/// away from zero), or `None` when it is NaN, infinite or beyond the `i64`
/// range: the conversion of [`duration_micros_from_millis`], for a
/// duration with no [`Argument`] of its own (a Redis store's timeouts),
/// whose caller reports the error. [`micros_from_secs`] is its twin for
/// seconds (truncated).
pub fn micros_from_millis(ms: f64) -> Option<i64> {
    whole_micros((ms * 1e3).round())
}

/// A duration in seconds, as whole microseconds: truncated toward zero;
/// an error as `argument` (with `secs` as the value) when it is NaN,
/// negative, infinite or `i64::MAX` microseconds or more. The algorithm
/// then checks its own lower bound (a period of at least one microsecond,
/// say) on the microseconds.
///
/// A negative value is refused even when it truncates to 0 µs (-1e-9 s):
/// the sign is the caller's mistake, whatever the unit.
pub fn duration_micros_from_secs(argument: Argument, secs: f64) -> Result<i64, Error> {
    match micros_from_secs(secs) {
        Some(micros) if secs >= 0.0 => Ok(micros),
        _ => Err(Error::invalid_float(argument, secs)),
    }
}

/// A duration in milliseconds (JavaScript's unit), as whole microseconds
/// rounded to the nearest (half away from zero), so that every whole
/// number of microseconds below 2^51 (71 years) survives the trip
/// µs → ms → µs. Errors as [`duration_micros_from_secs`] does, with `ms` as
/// the value.
pub fn duration_micros_from_millis(argument: Argument, ms: f64) -> Result<i64, Error> {
    match micros_from_millis(ms) {
        Some(micros) if ms >= 0.0 => Ok(micros),
        _ => Err(Error::invalid_float(argument, ms)),
    }
}

/// A Rust [`Duration`] as whole microseconds (truncated), or an error as
/// `argument` when it is `i64::MAX` microseconds or longer: the rule of
/// [`duration_micros_from_secs`] for the Rust API. The value of the error
/// is the duration's microseconds.
pub fn micros_from_duration(argument: Argument, duration: Duration) -> Result<i64, Error> {
    let micros = duration.as_micros();
    i64::try_from(micros).map_err(|_| Error::invalid_uint(argument, u64::try_from(micros).unwrap_or(u64::MAX)))
}

/// A timeout in seconds as Guava's `tryAcquire` treats it: negative means
/// "do not wait" (0); infinite, or `i64::MAX` microseconds or more, means
/// "no deadline" (`i64::MAX`). Errors on NaN.
pub fn timeout_micros_from_secs(secs: f64) -> Result<i64, Error> {
    timeout_micros(secs, micros_from_secs(secs))
}

/// [`timeout_micros_from_secs`] for a timeout in milliseconds (rounded to
/// the nearest microsecond, as [`duration_micros_from_millis`]).
pub fn timeout_micros_from_millis(ms: f64) -> Result<i64, Error> {
    timeout_micros(ms, micros_from_millis(ms))
}

fn timeout_micros(given: f64, micros: Option<i64>) -> Result<i64, Error> {
    match micros {
        Some(micros) => Ok(micros.max(0)),
        None if given.is_nan() => Err(Error::invalid_float(Argument::Timeout, given)),
        None if given > 0.0 => Ok(i64::MAX),
        None => Ok(0),
    }
}

/// A warm-up period in seconds: a duration of at least 0
/// ([`Argument::WarmupSeconds`]).
pub fn warmup_micros_from_secs(secs: f64) -> Result<i64, Error> {
    duration_micros_from_secs(Argument::WarmupSeconds, secs)
}

/// Seconds to move a [`ManualClock`](crate::ManualClock) forward, as whole
/// microseconds: a duration of at least 0 ([`Argument::AdvanceSeconds`]),
/// because a clock never goes back (and `ManualClock::advance_micros` would
/// silently ignore a negative move).
pub fn advance_micros_from_secs(secs: f64) -> Result<i64, Error> {
    duration_micros_from_secs(Argument::AdvanceSeconds, secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a duration can fail the rule.
    const NEVER_DURATIONS: [f64; 6] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1.0, -1e-9];

    #[test]
    fn seconds_truncate_to_microseconds_and_are_never_clamped() {
        assert_eq!(duration_micros_from_secs(Argument::Period, 0.25), Ok(250_000));
        assert_eq!(duration_micros_from_secs(Argument::Period, 0.000_000_9), Ok(0));
        assert_eq!(duration_micros_from_secs(Argument::Period, 9_223_372_036_854.773), Ok(9_223_372_036_854_773_760));
        for bad in NEVER_DURATIONS.into_iter().chain([9_223_372_036_854.775]) {
            let err = duration_micros_from_secs(Argument::Window, bad).unwrap_err();
            assert_eq!(err, Error::invalid_float(Argument::Window, bad), "{bad}");
            assert!(err.to_string().contains("9223372036854775807 microseconds"), "{err}");
        }
    }

    #[test]
    fn milliseconds_round_to_microseconds_and_are_never_clamped() {
        let ms = |x| duration_micros_from_millis(Argument::Window, x);
        assert_eq!(ms(1.005), Ok(1_005));
        assert_eq!(ms(0.001), Ok(1));
        assert_eq!(ms(0.0004), Ok(0));
        assert_eq!(ms(1234.567), Ok(1_234_567));
        // Every whole number of microseconds below 2^51 survives µs → ms → µs.
        for m in [1_i64, 999, 1_001, 123_456_789, (1 << 51) - 1, (1 << 51) - 999] {
            assert_eq!(ms(m as f64 / 1_000.0), Ok(m), "{m}");
        }
        for bad in NEVER_DURATIONS {
            assert_eq!(ms(bad), Err(Error::invalid_float(Argument::Window, bad)), "{bad}");
        }
    }

    #[test]
    fn rust_durations_beyond_the_i64_range_are_errors() {
        let micros = |d| micros_from_duration(Argument::Window, d);
        assert_eq!(micros(Duration::from_nanos(1_999)), Ok(1));
        assert_eq!(micros(Duration::from_micros(i64::MAX as u64)), Ok(i64::MAX));
        assert_eq!(
            micros(Duration::from_micros(i64::MAX as u64 + 1)),
            Err(Error::invalid_uint(Argument::Window, i64::MAX as u64 + 1))
        );
        assert_eq!(micros(Duration::MAX), Err(Error::invalid_uint(Argument::Window, u64::MAX)));
    }

    #[test]
    fn timeouts_may_be_negative_or_infinite_but_not_nan() {
        assert_eq!(timeout_micros_from_secs(-1.0), Ok(0));
        assert_eq!(timeout_micros_from_secs(f64::NEG_INFINITY), Ok(0));
        assert_eq!(timeout_micros_from_secs(0.25), Ok(250_000));
        assert_eq!(timeout_micros_from_secs(f64::INFINITY), Ok(i64::MAX));
        assert_eq!(timeout_micros_from_secs(1e300), Ok(i64::MAX));
        assert_eq!(timeout_micros_from_millis(1.005), Ok(1_005));
        assert_eq!(timeout_micros_from_millis(f64::INFINITY), Ok(i64::MAX));
        assert_eq!(timeout_micros_from_millis(-5.0), Ok(0));
        assert!(timeout_micros_from_secs(f64::NAN).is_err());
        assert!(timeout_micros_from_millis(f64::NAN).is_err());
    }

    #[test]
    fn warmups_and_clock_advances_follow_the_rule() {
        assert_eq!(warmup_micros_from_secs(2.0), Ok(2_000_000));
        assert_eq!(advance_micros_from_secs(0.0), Ok(0));
        for bad in NEVER_DURATIONS {
            assert_eq!(warmup_micros_from_secs(bad), Err(Error::invalid_float(Argument::WarmupSeconds, bad)));
            let err = advance_micros_from_secs(bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid argument seconds = "), "{err}");
        }
    }
}
