//! Durations and times as the command line and traces write them, read
//! exactly into whole microseconds (the core's unit) — never through a
//! float, so `0.1s` is 100,000 µs and not 99,999.
//!
//! `1s`, `1.5s`, `250ms`, `100us` (or `µs`), `2m` (or `min`), `1h`; a bare
//! number is seconds. Anything finer than a microsecond is an error rather
//! than a silent rounding.

/// Microseconds per unit suffix, longest suffixes first so that `ms` is not
/// read as `m` followed by garbage.
const UNITS: &[(&str, i64)] = &[
    ("min", 60_000_000),
    ("ms", 1_000),
    ("us", 1),
    ("µs", 1),
    ("h", 3_600_000_000),
    ("m", 60_000_000),
    ("s", 1_000_000),
];

/// A duration such as `1.5s` or `250ms` in whole microseconds; not negative.
pub fn parse_duration_micros(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let (number, per_unit) = UNITS
        .iter()
        .find_map(|&(suffix, micros)| text.strip_suffix(suffix).map(|n| (n.trim_end(), micros)))
        .unwrap_or((text, 1_000_000));
    decimal_times(number, per_unit).ok_or_else(|| {
        "expected a duration that is not negative and a whole number of microseconds, such as 1s, 1.5s, 250ms, 100us, 2m, 1h"
            .to_owned()
    })
}

/// A time in decimal seconds (`12.000250`) in whole microseconds; not
/// negative.
pub fn parse_seconds_micros(text: &str) -> Option<i64> {
    decimal_times(text.trim(), 1_000_000)
}

/// `number` (digits, an optional fraction) times `per_unit` microseconds,
/// exactly; `None` when it is malformed, negative, finer than a microsecond
/// or beyond `i64::MAX` microseconds.
fn decimal_times(number: &str, per_unit: i64) -> Option<i64> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros: i64 = 0;
    for b in whole.bytes() {
        micros = micros.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    micros = micros.checked_mul(per_unit)?;
    // The fraction: digit k (from 1) is worth per_unit / 10^k, which must
    // come out whole when the digit is not 0.
    let mut scale = per_unit;
    for b in fraction.bytes() {
        let digit = i64::from(b - b'0');
        if scale % 10 != 0 {
            if digit != 0 {
                return None;
            }
            continue;
        }
        scale /= 10;
        micros = micros.checked_add(digit * scale)?;
    }
    Some(micros)
}

/// A duration for people: `1 s`, `1.5 s`, `250 ms`, `12 µs`, `2.000001 s`.
pub fn format_micros(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let (unit, per) = if m >= 1_000_000 {
        ("s", 1_000_000u64)
    } else if m >= 1_000 {
        ("ms", 1_000)
    } else {
        return format!("{sign}{m} µs");
    };
    let whole = m / per;
    let rest = m % per;
    if rest == 0 {
        format!("{sign}{whole} {unit}")
    } else {
        let digits = if per == 1_000_000 { 6 } else { 3 };
        let fraction = format!("{rest:0digits$}");
        format!("{sign}{whole}.{} {unit}", fraction.trim_end_matches('0'))
    }
}

/// Microseconds as decimal seconds with six places (`1.000250`): exact.
pub fn seconds_text(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    format!("{sign}{}.{:06}", m / 1_000_000, m % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_exact() {
        assert_eq!(parse_duration_micros("1s"), Ok(1_000_000));
        assert_eq!(parse_duration_micros("0.1s"), Ok(100_000));
        assert_eq!(parse_duration_micros("1.5"), Ok(1_500_000));
        assert_eq!(parse_duration_micros("250ms"), Ok(250_000));
        assert_eq!(parse_duration_micros("0.5ms"), Ok(500));
        assert_eq!(parse_duration_micros("100us"), Ok(100));
        assert_eq!(parse_duration_micros("100 µs"), Ok(100));
        assert_eq!(parse_duration_micros("2m"), Ok(120_000_000));
        assert_eq!(parse_duration_micros("2min"), Ok(120_000_000));
        assert_eq!(parse_duration_micros("1h"), Ok(3_600_000_000));
        assert_eq!(parse_duration_micros(".25s"), Ok(250_000));
        assert_eq!(parse_duration_micros("1.000000s"), Ok(1_000_000));
    }

    #[test]
    fn bad_durations_are_errors() {
        for bad in
            ["", "s", "-1s", "1.5us", "0.0000001", "1e3s", "1 parsec", "1..2s", "9223372036854775808us", "99999999999h"]
        {
            assert!(parse_duration_micros(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_seconds_micros("12.000250"), Some(12_000_250));
        assert_eq!(parse_seconds_micros("-1"), None);
    }

    #[test]
    fn formats() {
        assert_eq!(format_micros(1_000_000), "1 s");
        assert_eq!(format_micros(1_500_000), "1.5 s");
        assert_eq!(format_micros(250_000), "250 ms");
        assert_eq!(format_micros(1_250), "1.25 ms");
        assert_eq!(format_micros(12), "12 µs");
        assert_eq!(format_micros(-3), "-3 µs");
        assert_eq!(seconds_text(1_000_250), "1.000250");
        assert_eq!(seconds_text(-5), "-0.000005");
    }
}
