//! Limits as text: `"10/minute"`, `"10 per 2 hours"`, `"100/hour; 1000/day"`.
//!
//! The forms are those of the Python `limits` library (and so of slowapi
//! and Flask-Limiter, which use it): an amount, `/` or `per`, an optional
//! count of units, and a unit — `second`, `minute`, `hour`, `day`, `month`
//! (30 days) or `year` (365 days), singular or plural, in any case — with
//! spaces allowed around each part. Several items are separated by `;`,
//! `,` or `|` (the three separators `limits` accepts) and make a composite:
//! a request must be admitted by every one.
//!
//! One parser serves every binding, so `"10 / Minutes"` means the same in
//! Python, JavaScript and C, and every error names the byte where the text
//! went wrong.

use std::fmt;

use ratekeeper_core::{Algorithm, Argument, Error, LimiterSpec};

const MICROS_PER_SECOND: i64 = 1_000_000;

/// The unit of a limit's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// One second.
    Second,
    /// 60 seconds.
    Minute,
    /// 3,600 seconds.
    Hour,
    /// 86,400 seconds (no leap seconds, no daylight saving: limits count
    /// elapsed time).
    Day,
    /// 30 days, as the `limits` library counts a month.
    Month,
    /// 365 days, as the `limits` library counts a year.
    Year,
}

impl TimeUnit {
    /// Every unit, shortest first.
    pub const ALL: [TimeUnit; 6] =
        [TimeUnit::Second, TimeUnit::Minute, TimeUnit::Hour, TimeUnit::Day, TimeUnit::Month, TimeUnit::Year];

    /// The singular name: `"second"`, `"minute"`, …
    pub const fn name(self) -> &'static str {
        match self {
            TimeUnit::Second => "second",
            TimeUnit::Minute => "minute",
            TimeUnit::Hour => "hour",
            TimeUnit::Day => "day",
            TimeUnit::Month => "month",
            TimeUnit::Year => "year",
        }
    }

    /// The unit's length in whole seconds.
    pub const fn seconds(self) -> u64 {
        match self {
            TimeUnit::Second => 1,
            TimeUnit::Minute => 60,
            TimeUnit::Hour => 3_600,
            TimeUnit::Day => 86_400,
            TimeUnit::Month => 30 * 86_400,
            TimeUnit::Year => 365 * 86_400,
        }
    }

    /// The unit named `word`, singular or plural, in any case.
    pub fn from_name(word: &str) -> Option<TimeUnit> {
        let singular = match word.len().checked_sub(1) {
            Some(last) if word.as_bytes()[last].eq_ignore_ascii_case(&b's') => &word[..last],
            _ => word,
        };
        TimeUnit::ALL
            .into_iter()
            .find(|unit| unit.name().eq_ignore_ascii_case(word) || unit.name().eq_ignore_ascii_case(singular))
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One limit: `amount` units per `multiples` × `unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateItem {
    /// How many units the window admits (at least 1).
    pub amount: u64,
    /// How many `unit`s the window lasts (at least 1): the 2 of
    /// `"10/2 minutes"`.
    pub multiples: u64,
    /// The window's unit.
    pub unit: TimeUnit,
}

/// The longest window a limiter takes, in whole seconds: `i64::MAX`
/// microseconds (about 292,271 years).
const MAX_WINDOW_SECONDS: u64 = (i64::MAX / MICROS_PER_SECOND) as u64;

impl RateItem {
    /// The window in whole microseconds, as limiters take it; `i64::MAX`
    /// when it would be longer (which [`parse_limits`] never returns).
    pub fn window_micros(&self) -> i64 {
        self.window_seconds().filter(|&s| s <= MAX_WINDOW_SECONDS).map_or(i64::MAX, |s| s as i64 * MICROS_PER_SECOND)
    }

    fn window_seconds(&self) -> Option<u64> {
        self.multiples.checked_mul(self.unit.seconds())
    }

    /// The policy's name as express-rate-limit's default `identifier`
    /// spells it for the draft-8 fields, so that a user who moves from it
    /// sees the same names: `"{amount}-in-{duration}"` where the duration is
    /// the window in the largest of seconds (`"5sec"`), minutes (`"1min"`),
    /// hours (`"1hr"`, `"2hrs"`) or days (`"1day"`, `"30days"`) in which it
    /// is under the next unit, a fraction written as JavaScript would
    /// (`"1.5min"` for 90 seconds). Source: express-rate-limit's
    /// `source/rate-limit.ts` and its headers tests (`"5-in-1min"`,
    /// `"8-in-2days"`).
    pub fn policy_name(&self) -> String {
        let seconds = self.window_seconds().unwrap_or(u64::MAX) as f64;
        let (minutes, hours, days) = (seconds / 60.0, seconds / 3_600.0, seconds / 86_400.0);
        // Rust's `Display` for f64 prints the shortest text that reads back
        // as the same number, without an exponent — JavaScript's
        // `Number.prototype.toString` for every window we can hold.
        let duration = if seconds < 60.0 {
            format!("{seconds}sec")
        } else if minutes < 60.0 {
            format!("{minutes}min")
        } else if hours < 24.0 {
            format!("{hours}hr{}", if hours > 1.0 { "s" } else { "" })
        } else {
            format!("{days}day{}", if days > 1.0 { "s" } else { "" })
        };
        format!("{}-in-{duration}", self.amount)
    }

    /// The spec of `algorithm` that enforces this item: `amount` units per
    /// window, with bursts of at most `amount` after an idle window.
    ///
    /// * windows (`fixed_window`, `sliding_log`, `sliding_window_counter`):
    ///   `limit = amount` over the window;
    /// * `sliding_window`: the same with the most sub-windows it allows (16)
    ///   that divide the window — always 16 for a window of whole seconds,
    ///   the finest rolling it can do;
    /// * `gcra`: `max_burst = amount − 1` (a burst of `amount`),
    ///   `amount` per window;
    /// * `token_bucket`: `burst = amount`, refilled at `amount / window`
    ///   per second;
    /// * `leaky_bucket_meter`: `capacity = amount`, leaking `amount` per
    ///   window;
    /// * `leaky_bucket_queue`: a shaper, as nginx's `limit_req` with a
    ///   `burst`: slots `window / amount` apart (rounded up to a
    ///   microsecond), one served now and `amount − 1` waiting
    ///   (`capacity`), no slack. It admits `amount` at once like the others,
    ///   but an admitted request's decision carries a `wait_micros` that the
    ///   middleware must delay it by (or the queue does not shape anything).
    ///
    /// Errors when the window is longer than `i64::MAX` microseconds or
    /// `amount` is out of the algorithm's range (the limiter's own check,
    /// when it is built, names it).
    pub fn spec(&self, algorithm: Algorithm) -> Result<LimiterSpec, Error> {
        let window_micros = match self.window_seconds() {
            Some(s) if s <= MAX_WINDOW_SECONDS => s as i64 * MICROS_PER_SECOND,
            _ => return Err(Error::invalid_uint(Argument::Window, self.window_seconds().unwrap_or(u64::MAX))),
        };
        let limit = self.amount;
        Ok(match algorithm {
            Algorithm::FixedWindow => LimiterSpec::FixedWindow { limit, window_micros },
            Algorithm::SlidingWindow => {
                let sub_windows = (1..=16).rev().find(|n| window_micros % i64::from(*n) == 0).unwrap_or(1);
                LimiterSpec::SlidingWindow { limit, window_micros, sub_windows }
            }
            Algorithm::SlidingLog => LimiterSpec::SlidingLog { limit, window_micros },
            Algorithm::SlidingWindowCounter => LimiterSpec::SlidingWindowCounter { limit, window_micros },
            Algorithm::Gcra => LimiterSpec::Gcra {
                max_burst: limit.saturating_sub(1),
                count_per_period: limit,
                period_micros: window_micros,
            },
            Algorithm::TokenBucket => {
                LimiterSpec::TokenBucket { rate: limit as f64 * 1e6 / window_micros as f64, burst: limit }
            }
            Algorithm::LeakyBucketMeter => {
                LimiterSpec::LeakyBucketMeter { capacity: limit, count_per_period: limit, period_micros: window_micros }
            }
            Algorithm::LeakyBucketQueue => {
                if limit == 0 {
                    return Err(Error::invalid_uint(Argument::Limit, 0));
                }
                let interval_micros = (window_micros as u64).div_ceil(limit).max(1) as i64;
                LimiterSpec::LeakyBucketQueue { capacity: limit - 1, interval_micros, slack: 0 }
            }
        })
    }
}

/// `"10 per 1 minute"`, `"10 per 2 minutes"`: text that [`parse_limits`]
/// reads back as the same item.
impl fmt::Display for RateItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.multiples == 1 { "" } else { "s" };
        write!(f, "{} per {} {}{plural}", self.amount, self.multiples, self.unit)
    }
}

/// Why limits text was refused: the byte where it went wrong and what was
/// expected there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitsTextError {
    /// Byte offset into the text (its length when the text ended early).
    pub position: usize,
    /// What the parser expected at `position`, e.g. `"a unit (second,
    /// minute, hour, day, month, year)"`.
    pub expected: &'static str,
}

/// `"invalid rate limit text at position 3: expected a unit (second, …)"`.
impl fmt::Display for LimitsTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid rate limit text at position {}: expected {}", self.position, self.expected)
    }
}

impl std::error::Error for LimitsTextError {}

const EXPECTED_AMOUNT: &str = "an amount (a whole number of at least 1)";
const EXPECTED_AMOUNT_RANGE: &str = "an amount from 1 to 9223372036854775807";
const EXPECTED_PER: &str = "'/' or 'per'";
const EXPECTED_MULTIPLES: &str = "a count of units of at least 1";
const EXPECTED_UNIT: &str = "a unit (second, minute, hour, day, month, year)";
const EXPECTED_WINDOW: &str = "a window of at most 292471 years of 365 days (i64::MAX microseconds)";
const EXPECTED_SEPARATOR: &str = "a separator (';', ',' or '|') or the end";

/// Parses limits text into its items, in order.
///
/// ```
/// use ratekeeper::http::{parse_limits, RateItem, TimeUnit};
///
/// let items = parse_limits("100/hour; 1000 per 2 days")?;
/// assert_eq!(items[0], RateItem { amount: 100, multiples: 1, unit: TimeUnit::Hour });
/// assert_eq!(items[1].to_string(), "1000 per 2 days");
/// let err = parse_limits("10/fortnight").unwrap_err();
/// assert_eq!((err.position, err.to_string().as_str()), (3, "invalid rate limit text at position 3: \
///     expected a unit (second, minute, hour, day, month, year)"));
/// # Ok::<(), ratekeeper::http::LimitsTextError>(())
/// ```
pub fn parse_limits(text: &str) -> Result<Vec<RateItem>, LimitsTextError> {
    let mut parser = Parser { text: text.as_bytes(), at: 0 };
    let mut items = Vec::new();
    loop {
        items.push(parser.item()?);
        parser.spaces();
        match parser.peek() {
            None => return Ok(items),
            Some(b';' | b',' | b'|') => parser.at += 1,
            Some(_) => return Err(parser.error(EXPECTED_SEPARATOR)),
        }
    }
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn error(&self, expected: &'static str) -> LimitsTextError {
        LimitsTextError { position: self.at, expected }
    }

    fn spaces(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A run of ASCII digits as a number; `None` when there is no digit.
    /// Saturates (the callers' range checks then refuse it).
    fn number(&mut self) -> Option<u64> {
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(b @ b'0'..=b'9') = self.peek() {
            value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
            self.at += 1;
        }
        (self.at > start).then_some(value)
    }

    fn item(&mut self) -> Result<RateItem, LimitsTextError> {
        self.spaces();
        let amount_at = self.at;
        let amount = self.number().ok_or_else(|| self.error(EXPECTED_AMOUNT))?;
        if amount == 0 || amount > i64::MAX as u64 {
            return Err(LimitsTextError { position: amount_at, expected: EXPECTED_AMOUNT_RANGE });
        }
        self.spaces();
        if self.peek() == Some(b'/') {
            self.at += 1;
        } else if self.text.len() >= self.at + 3 && self.text[self.at..self.at + 3].eq_ignore_ascii_case(b"per") {
            self.at += 3;
        } else {
            return Err(self.error(EXPECTED_PER));
        }
        self.spaces();
        let multiples_at = self.at;
        let multiples = match self.number() {
            None => 1,
            Some(0) => return Err(LimitsTextError { position: multiples_at, expected: EXPECTED_MULTIPLES }),
            Some(n) => n,
        };
        self.spaces();
        let unit_at = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.at += 1;
        }
        // The run is ASCII letters, so it is valid UTF-8 on its own.
        let word = std::str::from_utf8(&self.text[unit_at..self.at]).unwrap_or_default();
        let unit = TimeUnit::from_name(word).ok_or(LimitsTextError { position: unit_at, expected: EXPECTED_UNIT })?;
        let item = RateItem { amount, multiples, unit };
        if item.window_seconds().is_none_or(|s| s > MAX_WINDOW_SECONDS) {
            return Err(LimitsTextError { position: multiples_at, expected: EXPECTED_WINDOW });
        }
        Ok(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(amount: u64, multiples: u64, unit: TimeUnit) -> RateItem {
        RateItem { amount, multiples, unit }
    }

    #[test]
    fn every_form_parses() {
        use TimeUnit::*;
        let cases: &[(&str, &[RateItem])] = &[
            ("10/minute", &[item(10, 1, Minute)]),
            ("10 per minute", &[item(10, 1, Minute)]),
            ("10/2 minutes", &[item(10, 2, Minute)]),
            ("10 per 30 seconds", &[item(10, 30, Second)]),
            ("10/2minutes", &[item(10, 2, Minute)]),
            ("  7 / Second  ", &[item(7, 1, Second)]),
            ("1 PER 3 HOURS", &[item(1, 3, Hour)]),
            ("5/day", &[item(5, 1, Day)]),
            ("5/days", &[item(5, 1, Day)]),
            ("2 per month", &[item(2, 1, Month)]),
            ("2/10 years", &[item(2, 10, Year)]),
            ("100/hour; 1000/day", &[item(100, 1, Hour), item(1000, 1, Day)]),
            ("1/second,10/minute|100 per hour", &[item(1, 1, Second), item(10, 1, Minute), item(100, 1, Hour)]),
            ("9223372036854775807/second", &[item(i64::MAX as u64, 1, Second)]),
        ];
        for (text, want) in cases {
            assert_eq!(parse_limits(text).as_deref(), Ok(*want), "{text:?}");
        }
    }

    #[test]
    fn every_error_names_its_position() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, EXPECTED_AMOUNT),
            ("   ", 3, EXPECTED_AMOUNT),
            ("minute", 0, EXPECTED_AMOUNT),
            ("-1/minute", 0, EXPECTED_AMOUNT),
            ("0/minute", 0, EXPECTED_AMOUNT_RANGE),
            (" 9223372036854775808/second", 1, EXPECTED_AMOUNT_RANGE),
            ("99999999999999999999999/second", 0, EXPECTED_AMOUNT_RANGE),
            ("10", 2, EXPECTED_PER),
            ("10 minute", 3, EXPECTED_PER),
            ("10 pe minute", 3, EXPECTED_PER),
            ("10/0 minutes", 3, EXPECTED_MULTIPLES),
            ("10/", 3, EXPECTED_UNIT),
            ("10/fortnight", 3, EXPECTED_UNIT),
            ("10 per 2 minutess", 9, EXPECTED_UNIT),
            ("10/ 5", 5, EXPECTED_UNIT),
            ("10/1.5 hours", 4, EXPECTED_UNIT),
            ("10/292472 years", 3, EXPECTED_WINDOW),
            ("10/18446744073709551615 seconds", 3, EXPECTED_WINDOW),
            ("10/minute foo", 10, EXPECTED_SEPARATOR),
            ("10/minute;", 10, EXPECTED_AMOUNT),
            ("10/minute;;1/second", 10, EXPECTED_AMOUNT),
            ("10/minute; 5/é", 13, EXPECTED_UNIT),
            ("é", 0, EXPECTED_AMOUNT),
        ];
        for (text, position, expected) in cases {
            let err = parse_limits(text).unwrap_err();
            assert_eq!((err.position, err.expected), (*position, *expected), "{text:?}");
        }
        assert_eq!(
            parse_limits("10/fortnight").unwrap_err().to_string(),
            "invalid rate limit text at position 3: expected a unit (second, minute, hour, day, month, year)"
        );
        // The longest window that fits still parses.
        assert!(parse_limits("10/292471 years").is_ok());
    }

    #[test]
    fn display_round_trips() {
        for text in ["10/minute", "10 per 30 seconds", "3/2 days", "1/month", "4 per 7 years", "5/1 hour"] {
            for item in parse_limits(text).unwrap() {
                let shown = item.to_string();
                assert_eq!(parse_limits(&shown), Ok(vec![item]), "{shown}");
            }
        }
        assert_eq!(item(10, 1, TimeUnit::Minute).to_string(), "10 per 1 minute");
        assert_eq!(item(10, 2, TimeUnit::Minute).to_string(), "10 per 2 minutes");
    }

    #[test]
    fn policy_names_match_express_rate_limit() {
        use TimeUnit::*;
        // express-rate-limit's headers tests: windows of 5 s, 1 min, 1 h,
        // 1 day, 2 days, 2 h.
        assert_eq!(item(1, 5, Second).policy_name(), "1-in-5sec");
        assert_eq!(item(5, 1, Minute).policy_name(), "5-in-1min");
        assert_eq!(item(6, 1, Hour).policy_name(), "6-in-1hr");
        assert_eq!(item(7, 1, Day).policy_name(), "7-in-1day");
        assert_eq!(item(8, 2, Day).policy_name(), "8-in-2days");
        assert_eq!(item(5, 2, Hour).policy_name(), "5-in-2hrs");
        assert_eq!(item(5, 90, Second).policy_name(), "5-in-1.5min");
        assert_eq!(item(5, 60, Minute).policy_name(), "5-in-1hr");
        assert_eq!(item(5, 1, Month).policy_name(), "5-in-30days");
        assert_eq!(item(5, 1, Year).policy_name(), "5-in-365days");
    }

    #[test]
    fn specs_carry_the_limit_and_window() {
        let it = item(10, 1, TimeUnit::Minute);
        assert_eq!(it.window_micros(), 60_000_000);
        let w = 60_000_000;
        assert_eq!(it.spec(Algorithm::FixedWindow), Ok(LimiterSpec::FixedWindow { limit: 10, window_micros: w }));
        assert_eq!(
            it.spec(Algorithm::SlidingWindow),
            Ok(LimiterSpec::SlidingWindow { limit: 10, window_micros: w, sub_windows: 16 })
        );
        assert_eq!(it.spec(Algorithm::SlidingLog), Ok(LimiterSpec::SlidingLog { limit: 10, window_micros: w }));
        assert_eq!(
            it.spec(Algorithm::SlidingWindowCounter),
            Ok(LimiterSpec::SlidingWindowCounter { limit: 10, window_micros: w })
        );
        assert_eq!(
            it.spec(Algorithm::Gcra),
            Ok(LimiterSpec::Gcra { max_burst: 9, count_per_period: 10, period_micros: w })
        );
        assert_eq!(it.spec(Algorithm::TokenBucket), Ok(LimiterSpec::TokenBucket { rate: 10.0 / 60.0, burst: 10 }));
        assert_eq!(
            it.spec(Algorithm::LeakyBucketMeter),
            Ok(LimiterSpec::LeakyBucketMeter { capacity: 10, count_per_period: 10, period_micros: w })
        );
        assert_eq!(
            item(7, 1, TimeUnit::Minute).spec(Algorithm::LeakyBucketQueue),
            Ok(LimiterSpec::LeakyBucketQueue { capacity: 6, interval_micros: 8_571_429, slack: 0 })
        );
        // Items built by hand are checked too.
        let huge = item(1, u64::MAX, TimeUnit::Year);
        assert_eq!(huge.window_micros(), i64::MAX);
        assert!(huge.spec(Algorithm::FixedWindow).is_err());
        assert!(item(0, 1, TimeUnit::Second).spec(Algorithm::LeakyBucketQueue).is_err());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn unit() -> impl Strategy<Value = TimeUnit> {
            proptest::sample::select(TimeUnit::ALL.to_vec())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

            /// Any item whose window fits reads back from its Display, and
            /// several joined by any separator read back in order.
            #[test]
            fn display_round_trips(
                items in proptest::collection::vec((1..=i64::MAX as u64, 1..=292_471u64, unit()), 1..5),
                separator in proptest::sample::select(vec![";", ",", "|", " ; ", "\t|\t"]),
            ) {
                let items: Vec<RateItem> =
                    items.into_iter().map(|(amount, multiples, unit)| RateItem { amount, multiples, unit }).collect();
                let text = items.iter().map(ToString::to_string).collect::<Vec<_>>().join(separator);
                prop_assert_eq!(parse_limits(&text), Ok(items));
            }

            /// Any text: a list of items or an error at a byte inside it
            /// (or at its end), never a panic.
            #[test]
            fn any_text_parses_or_names_a_byte_in_it(text in "[0-9a-zA-Z /;,|\\-é]{0,40}") {
                match parse_limits(&text) {
                    Ok(items) => prop_assert!(!items.is_empty()),
                    Err(e) => prop_assert!(e.position <= text.len()),
                }
            }
        }
    }

    /// Every algorithm's spec from text builds a limiter that admits exactly
    /// `amount` at once (the burst the text promises), shows `amount` as its
    /// limit, and then refuses.
    #[test]
    fn every_spec_admits_the_amount_then_refuses() {
        use std::sync::Arc;
        for algorithm in Algorithm::ALL {
            let spec = item(5, 1, TimeUnit::Minute).spec(*algorithm).unwrap();
            let clock = Arc::new(crate::ManualClock::new());
            let limiter = crate::AnyLimiter::with_clock(&spec, clock).unwrap();
            for i in 0..5 {
                let d = limiter.check(1);
                assert!(d.allowed, "{algorithm:?} request {i}");
                assert_eq!(d.limit, 5, "{algorithm:?}");
            }
            assert!(!limiter.check(1).allowed, "{algorithm:?}");
        }
    }
}
