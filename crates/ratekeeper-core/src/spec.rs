//! [`LimiterSpec`]: any admission-style algorithm, described by plain
//! numbers.
//!
//! A binding (Python, Node.js, C) or a configuration file names an
//! algorithm and its parameters; this enum is that description, with the
//! same names the conformance vectors use. The std layer builds a limiter
//! from it (`ratekeeper::AnyLimiter`, `ratekeeper::CompositeLimiter`), so a
//! binding needs one code path for every algorithm rather than one each.
//! Validation happens when the limiter is built, with the algorithm's own
//! typed errors.

/// An admission-style algorithm and its parameters; durations in whole
/// microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimiterSpec {
    /// [`TokenBucket`](crate::TokenBucket): `rate` tokens per second, `burst`.
    TokenBucket {
        /// Tokens per second (`f64::INFINITY`: no limit; 0: no refill).
        rate: f64,
        /// The bucket's size.
        burst: u64,
    },
    /// [`Gcra`](crate::Gcra): redis-cell's `max_burst`, `count_per_period`,
    /// `period`.
    Gcra {
        /// `limit − 1`.
        max_burst: u64,
        /// Units per period.
        count_per_period: u64,
        /// The period.
        period_micros: i64,
    },
    /// [`LeakyBucketMeter`](crate::LeakyBucketMeter).
    LeakyBucketMeter {
        /// The bucket's size in units.
        capacity: u64,
        /// Units leaked per period.
        count_per_period: u64,
        /// The period.
        period_micros: i64,
    },
    /// [`LeakyBucketQueue`](crate::LeakyBucketQueue).
    LeakyBucketQueue {
        /// How many units may wait.
        capacity: u64,
        /// The spacing of slots.
        interval_micros: i64,
    },
    /// [`FixedWindow`](crate::FixedWindow).
    FixedWindow {
        /// Units per window.
        limit: u64,
        /// The window.
        window_micros: i64,
    },
    /// [`SlidingWindow`](crate::SlidingWindow).
    SlidingWindow {
        /// Units per window.
        limit: u64,
        /// The window.
        window_micros: i64,
        /// Sub-windows per window (1 to 16, dividing the window).
        sub_windows: u32,
    },
    /// [`SlidingLog`](crate::SlidingLog).
    SlidingLog {
        /// Units per window.
        limit: u64,
        /// The window.
        window_micros: i64,
    },
    /// [`SlidingWindowCounter`](crate::SlidingWindowCounter).
    SlidingWindowCounter {
        /// Units per window.
        limit: u64,
        /// The window.
        window_micros: i64,
    },
}

impl LimiterSpec {
    /// The algorithm's name, as the conformance vectors and the bindings
    /// spell it: `"token_bucket"`, `"gcra"`, `"leaky_bucket_meter"`,
    /// `"leaky_bucket_queue"`, `"fixed_window"`, `"sliding_window"`,
    /// `"sliding_log"`, `"sliding_window_counter"`.
    pub const fn algorithm(&self) -> &'static str {
        match self {
            LimiterSpec::TokenBucket { .. } => "token_bucket",
            LimiterSpec::Gcra { .. } => "gcra",
            LimiterSpec::LeakyBucketMeter { .. } => "leaky_bucket_meter",
            LimiterSpec::LeakyBucketQueue { .. } => "leaky_bucket_queue",
            LimiterSpec::FixedWindow { .. } => "fixed_window",
            LimiterSpec::SlidingWindow { .. } => "sliding_window",
            LimiterSpec::SlidingLog { .. } => "sliding_log",
            LimiterSpec::SlidingWindowCounter { .. } => "sliding_window_counter",
        }
    }
}
