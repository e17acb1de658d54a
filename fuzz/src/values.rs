//! Numbers the fuzzer draws: mostly the values where arithmetic breaks.
//!
//! A uniformly random `i64` is almost never 0, -1 or `i64::MAX`, yet those
//! are the values a rate limiter's arithmetic gets wrong. Every number a
//! target takes goes through one of these types, which draw a special
//! value (0, ±1, the extremes and their neighbours, powers of two, NaN,
//! the infinities, subnormals) often, a small value often, and any value
//! the rest of the time. libFuzzer mutates the bytes underneath; the
//! choice of kind is one byte, so it learns them quickly.

use arbitrary::{Arbitrary, Result, Unstructured};

/// Any `i64`, extremes favoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WildI64(pub i64);

/// Any `u64`, extremes favoured (including the values just above
/// `i64::MAX`, which every `u64` parameter must refuse or saturate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WildU64(pub u64);

/// Any `f64`, NaN and the infinities included, extremes favoured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WildF64(pub f64);

/// A small count: mostly 0 to 40, the scale at which limits are hit and
/// boundaries crossed within a short run; sometimes wild.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

/// An `i64` drawn mostly from the values where arithmetic breaks.
pub fn wild_i64(u: &mut Unstructured<'_>) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=15)? {
        0 => 0,
        1 => 1,
        2 => -1,
        3 => i64::MAX,
        4 => i64::MIN,
        5 => i64::MAX - 1,
        6 => i64::MIN + 1,
        7 => 1i64 << u.int_in_range(0u32..=62)?,
        8 => -(1i64 << u.int_in_range(0u32..=62)?),
        9 => (1i64 << u.int_in_range(0u32..=62)?) - 1,
        10 | 11 => u.int_in_range(0i64..=1_000)?,
        12 => u.int_in_range(-1_000i64..=1_000)?,
        13 => u.int_in_range(0i64..=10_000_000_000)?,
        _ => i64::arbitrary(u)?,
    })
}

/// A `u64` drawn mostly from the values where arithmetic breaks.
pub fn wild_u64(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=15)? {
        0 => 0,
        1 => 1,
        2 => u64::MAX,
        3 => i64::MAX as u64,
        4 => i64::MAX as u64 + 1,
        5 => i64::MAX as u64 - 1,
        6 => u64::from(u32::MAX),
        7 => 1u64 << u.int_in_range(0u32..=63)?,
        8 => (1u64 << u.int_in_range(0u32..=63)?) - 1,
        9 => (1u64 << 53) + u.int_in_range(0u64..=3)?,
        10..=12 => u.int_in_range(0u64..=1_000)?,
        13 => u.int_in_range(0u64..=10_000_000_000)?,
        _ => u64::arbitrary(u)?,
    })
}

/// An `f64` drawn mostly from the values where floating point breaks.
pub fn wild_f64(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=23)? {
        0 => f64::NAN,
        1 => -f64::NAN,
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => 0.0,
        5 => -0.0,
        6 => f64::MIN_POSITIVE,
        7 => f64::from_bits(1), // the smallest subnormal
        8 => f64::MAX,
        9 => -f64::MAX,
        10 => i64::MAX as f64, // 2^63: i64::MAX rounded
        11 => 1.0,
        12 => -1.0,
        13 => f64::EPSILON,
        14 => 10f64.powi(u.int_in_range(-320i32..=308)?),
        15 => -(10f64.powi(u.int_in_range(-320i32..=308)?)),
        16..=18 => f64::from(u.int_in_range(0u32..=2_000)?) / 8.0,
        19 => f64::from(u.int_in_range(0u32..=u32::MAX)?) / 1_000.0,
        _ => f64::from_bits(u64::arbitrary(u)?),
    })
}

/// A small count, now and then a wild one.
pub fn count(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => wild_u64(u)?,
        1 => u.int_in_range(0u64..=1_000)?,
        _ => u.int_in_range(0u64..=40)?,
    })
}

impl<'a> Arbitrary<'a> for WildI64 {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        wild_i64(u).map(WildI64)
    }
}

impl<'a> Arbitrary<'a> for WildU64 {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        wild_u64(u).map(WildU64)
    }
}

impl<'a> Arbitrary<'a> for WildF64 {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        wild_f64(u).map(WildF64)
    }
}

impl<'a> Arbitrary<'a> for Count {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        count(u).map(Count)
    }
}

/// How the time moves before an operation.
///
/// Mostly forward by a little (so that limits are reached and refills and
/// window boundaries are crossed), sometimes not at all, backwards, by a
/// huge amount, or to any time at all (`i64::MIN` and `i64::MAX`
/// included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The same time again.
    Stay,
    /// Forward by this many microseconds.
    Forward(i64),
    /// Back by this many microseconds.
    Back(i64),
    /// To this time.
    Jump(i64),
}

impl<'a> Arbitrary<'a> for Step {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0u8..=15)? {
            0..=2 => Step::Stay,
            3..=6 => Step::Forward(u.int_in_range(0i64..=2_000)?),
            7..=9 => Step::Forward(u.int_in_range(0i64..=3_000_000)?),
            10 => Step::Forward(wild_i64(u)?.max(0)),
            11 | 12 => Step::Back(u.int_in_range(0i64..=1_000_000)?),
            13 => Step::Back(wild_i64(u)?.max(0)),
            _ => Step::Jump(wild_i64(u)?),
        })
    }
}

/// The time as the fuzzer moves it, and what an observer knows of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeline {
    /// The time of the current operation (any `i64`).
    pub now: i64,
    /// The latest time passed so far (the time a limiter that treats an
    /// earlier time as the latest works at).
    pub latest: i64,
    /// Whether `now` is the latest time passed so far: the operation does
    /// not go back in time.
    pub forward: bool,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline { now: 0, latest: 0, forward: true }
    }
}

impl Timeline {
    /// Moves the time by `step` (saturating at the ends of `i64`).
    pub fn step(&mut self, step: Step) -> i64 {
        self.now = match step {
            Step::Stay => self.now,
            Step::Forward(d) => self.now.saturating_add(d),
            Step::Back(d) => self.now.saturating_sub(d),
            Step::Jump(t) => t,
        };
        self.forward = self.now >= self.latest;
        self.latest = self.latest.max(self.now);
        self.now
    }
}

/// A duration for the std layer's APIs: mostly short, sometimes the
/// longest there is (`Duration::MAX`), which a timeout saturates to "no
/// deadline" and every other duration refuses (`micros_from_duration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WildDuration(pub std::time::Duration);

impl<'a> Arbitrary<'a> for WildDuration {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        use std::time::Duration;
        Ok(WildDuration(match u.int_in_range(0u8..=7)? {
            0 => Duration::ZERO,
            1 => Duration::MAX,
            2 => Duration::new(u64::arbitrary(u)?, u.int_in_range(0u32..=999_999_999)?),
            3 => Duration::from_nanos(u.int_in_range(0u64..=5_000)?),
            _ => Duration::from_micros(u.int_in_range(0u64..=3_000_000)?),
        }))
    }
}
