//! Go's arithmetic on durations, where it differs from the obvious Rust.
//!
//! The token bucket reproduces golang.org/x/time/rate, which does its
//! arithmetic on `time.Duration` (signed 64-bit nanoseconds) and `float64`.
//! Each helper here is one Go function or conversion, named after it, so the
//! token bucket can follow x/time/rate expression by expression.

/// Nanoseconds per second, Go's `time.Second`.
pub(crate) const SECOND: i64 = 1_000_000_000;

/// Go's `rate.InfDuration`: `time.Duration(math.MaxInt64)`.
pub(crate) const INF_DURATION: i64 = i64::MAX;

/// Go's `Duration.Seconds()`: whole seconds and the nanosecond remainder
/// converted separately, then added, which rounds differently from a
/// single `d as f64 / 1e9`.
#[inline]
pub(crate) fn seconds(d: i64) -> f64 {
    let sec = d / SECOND;
    let nsec = d % SECOND;
    sec as f64 + nsec as f64 / 1e9
}

/// Go's `t.Sub(u)` for times kept as nanoseconds since a common origin: the
/// difference, saturating at the `Duration` range as Go's does.
#[inline]
pub(crate) fn sub(t: i64, u: i64) -> i64 {
    t.saturating_sub(u)
}

/// Go's `t.Add(d)`, saturating instead of leaving the representable range
/// (which times within ±292 years of the origin never do).
#[inline]
pub(crate) fn add(t: i64, d: i64) -> i64 {
    t.saturating_add(d)
}

/// Go's `time.Duration(f)` for a `float64` `f`: truncation toward zero.
/// Go leaves out-of-range values to the platform; Rust's `as` saturates
/// (and sends NaN to 0), which is what amd64 gives for negative overflow.
#[inline]
pub(crate) fn duration_from_float(f: f64) -> i64 {
    f as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_splits_like_go() {
        assert_eq!(seconds(1_500_000_000), 1.5);
        assert_eq!(seconds(-1_500_000_000), -1.5);
        assert_eq!(seconds(i64::MAX), 9_223_372_036.0 + 854_775_807.0 / 1e9);
        // A value where the split matters: one division would round
        // differently from Go's two-part sum.
        let d = 4_503_599_627_370_497_i64;
        assert_eq!(seconds(d), (d / SECOND) as f64 + (d % SECOND) as f64 / 1e9);
    }

    #[test]
    fn conversions_saturate() {
        assert_eq!(duration_from_float(1e30), i64::MAX);
        assert_eq!(duration_from_float(-1e30), i64::MIN);
        assert_eq!(duration_from_float(f64::NAN), 0);
        assert_eq!(duration_from_float(2.9), 2);
        assert_eq!(sub(i64::MIN, 1), i64::MIN);
        assert_eq!(add(i64::MAX, 1), i64::MAX);
    }
}
