//! Conversions from the units other languages pass (seconds as a float) to
//! the core's whole microseconds, with the same checks in every binding.
//!
//! Durations truncate to whole microseconds, as Guava's
//! `TimeUnit.toMicros` does, and saturate at `i64::MAX` microseconds.

use ratekeeper_core::{Argument, Error};

/// Whole microseconds in `secs` seconds, truncated toward zero and
/// saturating (`+Infinity` → `i64::MAX`, `-Infinity` → `i64::MIN`); NaN
/// gives 0. The building block of the checked conversions below.
pub fn micros_from_secs(secs: f64) -> i64 {
    // `as` truncates, saturates and sends NaN to 0, as Java's `(long)` does.
    (secs * 1e6) as i64
}

/// A timeout in seconds as Guava's `tryAcquire` treats it: negative means
/// "do not wait" (0). Errors on NaN.
pub fn timeout_micros_from_secs(secs: f64) -> Result<i64, Error> {
    if secs.is_nan() {
        return Err(Error::invalid_float(Argument::Timeout, secs));
    }
    Ok(micros_from_secs(secs).max(0))
}

/// A warm-up period in seconds. Errors on NaN, infinities and negative
/// values, as Guava's `warmupPeriod must not be negative`.
pub fn warmup_micros_from_secs(secs: f64) -> Result<i64, Error> {
    if !(secs >= 0.0 && secs.is_finite()) {
        return Err(Error::invalid_float(Argument::WarmupSeconds, secs));
    }
    Ok(micros_from_secs(secs))
}

/// Seconds to move a [`ManualClock`](crate::ManualClock) forward, as whole
/// microseconds. Errors on NaN, infinities and negative values: a clock
/// never goes back, and `ManualClock::advance_micros` would silently ignore
/// them.
pub fn advance_micros_from_secs(secs: f64) -> Result<i64, Error> {
    if !(secs >= 0.0 && secs.is_finite()) {
        return Err(Error::invalid_float(Argument::AdvanceSeconds, secs));
    }
    Ok(micros_from_secs(secs))
}

/// A duration argument in seconds that must not be negative (a period, a
/// window, an interval, a round-trip time), as whole microseconds:
/// truncated toward zero, `+Infinity` saturating to `i64::MAX`. Errors on
/// NaN and negative values, as `argument`, with the seconds as passed; the
/// algorithm then checks its own lower bound (a period of at least one
/// microsecond, say) on the microseconds.
///
/// NaN must be refused here: truncated, it would become a valid 0.
pub fn duration_micros_from_secs(argument: Argument, secs: f64) -> Result<i64, Error> {
    if secs.is_nan() || secs < 0.0 {
        return Err(Error::invalid_float(argument, secs));
    }
    Ok(micros_from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_truncate_to_microseconds() {
        assert_eq!(micros_from_secs(1.5), 1_500_000);
        assert_eq!(micros_from_secs(0.000_000_9), 0);
        assert_eq!(micros_from_secs(f64::INFINITY), i64::MAX);
        assert_eq!(micros_from_secs(-2.5e-6), -2);
    }

    #[test]
    fn timeouts_clamp_negative_and_reject_nan() {
        assert_eq!(timeout_micros_from_secs(-1.0), Ok(0));
        assert_eq!(timeout_micros_from_secs(0.25), Ok(250_000));
        assert_eq!(timeout_micros_from_secs(f64::INFINITY), Ok(i64::MAX));
        assert!(timeout_micros_from_secs(f64::NAN).is_err());
    }

    #[test]
    fn clock_advances_reject_negative_and_non_finite() {
        assert_eq!(advance_micros_from_secs(0.25), Ok(250_000));
        assert_eq!(advance_micros_from_secs(0.0), Ok(0));
        for bad in [-1e-9, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = advance_micros_from_secs(bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid argument seconds = "), "{err}");
        }
    }

    #[test]
    fn durations_reject_nan_and_negative_and_saturate() {
        assert_eq!(duration_micros_from_secs(Argument::Period, 0.25), Ok(250_000));
        assert_eq!(duration_micros_from_secs(Argument::Period, 0.000_000_9), Ok(0));
        assert_eq!(duration_micros_from_secs(Argument::Window, f64::INFINITY), Ok(i64::MAX));
        for bad in [-1e-9, f64::NAN, f64::NEG_INFINITY] {
            let err = duration_micros_from_secs(Argument::Rtt, bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid argument rtt = "), "{err}");
        }
    }

    #[test]
    fn warmups_reject_negative_and_non_finite() {
        assert_eq!(warmup_micros_from_secs(2.0), Ok(2_000_000));
        assert_eq!(warmup_micros_from_secs(0.0), Ok(0));
        for bad in [-1e-9, f64::NAN, f64::INFINITY, -0.5] {
            assert!(warmup_micros_from_secs(bad).is_err(), "{bad}");
        }
    }
}
