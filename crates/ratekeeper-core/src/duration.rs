//! The one rule for durations given as floating-point numbers.
//!
//! The core keeps every duration as whole microseconds in an `i64`, so the
//! longest one is `i64::MAX` µs (about 292,271 years). A duration given in
//! seconds or milliseconds (the bindings' units, and a bursty limiter's
//! `max_burst_seconds`) is truncated to whole microseconds; one that is NaN,
//! infinite or too long for an `i64` has no such form and is refused by the
//! caller as an invalid argument naming it — never clamped to the longest
//! duration, which would silently turn "a million years" into "292,271".
//! (Timeouts are the one exception, decided by their callers: a wait's
//! bound may be "forever".)

/// 2^63 as a double: the first number of microseconds an `i64` cannot hold.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Whole microseconds in `micros` (a double), truncated toward zero, or
/// `None` when it is NaN, infinite or outside the `i64` range.
#[inline]
pub fn whole_micros(micros: f64) -> Option<i64> {
    // NaN is in no range.
    if (-TWO_POW_63..TWO_POW_63).contains(&micros) {
        // In range: `as` truncates toward zero, exactly.
        Some(micros as i64)
    } else {
        None
    }
}

/// Whole microseconds in `secs` seconds, truncated toward zero (as Guava's
/// `TimeUnit.toMicros`), or `None` when there is no such `i64`.
#[inline]
pub fn micros_from_secs(secs: f64) -> Option<i64> {
    whole_micros(secs * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_truncate_to_whole_microseconds_within_the_i64_range() {
        assert_eq!(micros_from_secs(1.5), Some(1_500_000));
        assert_eq!(micros_from_secs(0.000_000_9), Some(0));
        assert_eq!(micros_from_secs(-2.5e-6), Some(-2));
        assert_eq!(micros_from_secs(-0.0), Some(0));
        // Just below 2^63 µs, and just not (9223372036854.775 s rounds to
        // 2^63 µs as a double).
        assert_eq!(micros_from_secs(9_223_372_036_854.773), Some(9_223_372_036_854_773_760));
        for never in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300, 9_223_372_036_854.775] {
            assert_eq!(micros_from_secs(never), None, "{never}");
        }
        assert_eq!(whole_micros(-9_223_372_036_854_775_808.0), Some(i64::MIN));
        assert_eq!(whole_micros(9_223_372_036_854_775_808.0), None);
    }
}
