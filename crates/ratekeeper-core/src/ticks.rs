//! Ticks: time in units of `1 / count` microsecond.
//!
//! GCRA and the leaky bucket meter run at `count` units per `period`
//! microseconds. Counting time in ticks of `1 / count` µs makes the
//! emission interval exactly `period` ticks, so the rate is exact (no
//! rounding of `period / count`). Ticks need 128 bits (a time of 2^63 µs at
//! a count of 2^63); this module turns them back into microseconds, with a
//! 64-bit fast path because 128-bit division is a slow library call and the
//! values of real limiters fit in 64 bits.

use crate::decision::NEVER;

/// `⌈n ÷ d⌉` for `d > 0`.
#[inline]
pub(crate) fn ceil_div(n: u64, d: u64) -> u64 {
    n / d + u64::from(n % d != 0)
}

/// [`micros_ceil`] of ticks that fit 64 bits: the same result, without
/// the 128-bit comparisons.
#[inline]
pub(crate) fn micros_ceil_narrow(ticks: i64, count: u64) -> i64 {
    if ticks <= 0 {
        return 0;
    }
    // At most `ticks` ≤ i64::MAX: no saturation needed.
    ceil_div(ticks as u64, count.max(1)) as i64
}

/// `ticks` (of `1 / count` µs) as whole microseconds, rounded up; never
/// negative, saturating at [`NEVER`]. A count of 0 (no constructor makes
/// one) counts as 1.
#[inline]
pub(crate) fn micros_ceil(ticks: i128, count: u64) -> i64 {
    if ticks <= 0 {
        return 0;
    }
    let count = count.max(1);
    if let Ok(small) = u64::try_from(ticks) {
        let micros = ceil_div(small, count);
        return i64::try_from(micros).unwrap_or(NEVER);
    }
    let count = i128::from(count);
    let micros = ticks / count + i128::from(ticks % count != 0);
    i64::try_from(micros).unwrap_or(NEVER)
}

/// `⌊num / den⌋` for `num ≥ 0` and `den ≥ 1`, as a count (saturating).
#[inline]
pub(crate) fn units(num: i128, den: i128) -> u64 {
    if num <= 0 {
        return 0;
    }
    let den = den.max(1);
    if let (Ok(n), Ok(d)) = (u64::try_from(num), u64::try_from(den)) {
        return n / d;
    }
    u64::try_from(num / den).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_paths_agree() {
        for (ticks, count) in
            [(7i128, 2u64), (6, 3), (1, 1_000), (0, 5), (-9, 5), (1 << 70, 3), ((1 << 70) + 1, 1 << 40)]
        {
            let slow = if ticks <= 0 { 0 } else { (ticks + i128::from(count) - 1) / i128::from(count) };
            assert_eq!(micros_ceil(ticks, count), i64::try_from(slow).unwrap_or(NEVER), "{ticks} / {count}");
        }
        assert_eq!(micros_ceil(i128::MAX, 1), NEVER);
        assert_eq!(micros_ceil(5, 0), 5);
        assert_eq!(units(7, 2), 3);
        assert_eq!(units(1 << 70, 1 << 7), 1 << 63);
        assert_eq!(units(i128::MAX, 1), u64::MAX);
        assert_eq!(units(-5, 2), 0);
        assert_eq!(units(5, 0), 5);
    }
}
