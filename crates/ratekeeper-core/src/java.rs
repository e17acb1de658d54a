//! Java's arithmetic, where it differs from Rust's defaults.
//!
//! Guava's `RateLimiter` is reproduced bit for bit, so every operation whose
//! result Java and Rust define differently goes through one of these helpers.
//! Plain `f64` `+ - * /` are already identical (both are IEEE-754 binary64
//! with round-to-nearest-even and no fused multiply-add), and Rust's `as i64`
//! from `f64` saturates and sends NaN to 0 exactly as Java's `(long)` cast
//! (JLS §5.1.3), so those need no helper.

/// Java's `Math.min(double, double)`.
///
/// Unlike `f64::min`, which ignores a NaN operand, Java returns NaN when
/// either operand is NaN, and treats `-0.0` as smaller than `0.0`. Guava's
/// `resync` and `reserveEarliestAvailable` rely on the NaN propagation when a
/// zero warm-up period makes the cool-down interval `0.0 / 0.0`.
#[inline]
pub(crate) fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return a;
    }
    if a == 0.0 && b == 0.0 && b.is_sign_negative() {
        return b;
    }
    if a <= b {
        a
    } else {
        b
    }
}

/// Guava's `LongMath.saturatedAdd`: the sum, clamped to `i64::MIN..=i64::MAX`.
#[inline]
pub(crate) fn saturated_add(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

/// Java's `long` `+`, which wraps on overflow (JLS §15.18.2).
#[inline]
pub(crate) fn ladd(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Java's `long` `-`, which wraps on overflow.
#[inline]
pub(crate) fn lsub(a: i64, b: i64) -> i64 {
    a.wrapping_sub(b)
}

/// Java's `(long)` cast of a `double` (JLS §5.1.3): truncation toward zero,
/// saturating at the `long` range, NaN to 0. Rust's `as` does exactly this.
#[inline]
pub(crate) fn d2l(x: f64) -> i64 {
    x as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_propagates_nan_like_java() {
        assert!(min(f64::NAN, 1.0).is_nan());
        assert!(min(1.0, f64::NAN).is_nan());
        // Rust's own min would have returned 1.0 here.
        assert_eq!(f64::min(1.0, f64::NAN), 1.0);
    }

    #[test]
    fn min_orders_signed_zeros_like_java() {
        assert!(min(0.0, -0.0).is_sign_negative());
        assert!(min(-0.0, 0.0).is_sign_negative());
        assert!(!min(0.0, 0.0).is_sign_negative());
    }

    #[test]
    fn min_of_ordinary_values() {
        assert_eq!(min(2.0, 3.0), 2.0);
        assert_eq!(min(3.0, 2.0), 2.0);
        assert_eq!(min(f64::INFINITY, 5.0), 5.0);
        assert_eq!(min(f64::NEG_INFINITY, 5.0), f64::NEG_INFINITY);
    }

    #[test]
    fn casts_match_java() {
        assert_eq!(d2l(f64::NAN), 0);
        assert_eq!(d2l(f64::INFINITY), i64::MAX);
        assert_eq!(d2l(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(d2l(1e300), i64::MAX);
        assert_eq!(d2l(-2.9), -2);
        assert_eq!(d2l(2.9), 2);
    }

    #[test]
    fn long_arithmetic_wraps_and_saturates() {
        assert_eq!(ladd(i64::MAX, i64::MAX), -2);
        assert_eq!(lsub(i64::MIN, 1), i64::MAX);
        assert_eq!(saturated_add(i64::MAX, 1), i64::MAX);
        assert_eq!(saturated_add(i64::MIN, -1), i64::MIN);
        assert_eq!(saturated_add(5, -7), -2);
    }
}
