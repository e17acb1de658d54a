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

    /// One node's share of this limit when `nodes` nodes enforce it
    /// together, each on its own (the design's "divide the limit by the node
    /// count"): rates divided by `nodes`, and quotas (bursts, limits,
    /// capacities) divided and rounded down — but never below one unit, so
    /// that every node can still admit something. The shares therefore never
    /// add up to more than the whole, except that floor of one unit when
    /// there are more nodes than units. `nodes` of 0 counts as 1.
    pub fn divided(&self, nodes: u64) -> LimiterSpec {
        let n = nodes.max(1);
        let share = |quota: u64| (quota / n).max(1);
        let longer = |micros: i64| micros.saturating_mul(i64::try_from(n).unwrap_or(i64::MAX));
        match *self {
            LimiterSpec::TokenBucket { rate, burst } => {
                let burst = if burst == 0 { 0 } else { share(burst) };
                LimiterSpec::TokenBucket { rate: rate / n as f64, burst }
            }
            LimiterSpec::Gcra { max_burst, count_per_period, period_micros } => LimiterSpec::Gcra {
                max_burst: share(max_burst.saturating_add(1)) - 1,
                count_per_period,
                period_micros: longer(period_micros),
            },
            LimiterSpec::LeakyBucketMeter { capacity, count_per_period, period_micros } => {
                LimiterSpec::LeakyBucketMeter {
                    capacity: share(capacity),
                    count_per_period,
                    period_micros: longer(period_micros),
                }
            }
            LimiterSpec::LeakyBucketQueue { capacity, interval_micros } => {
                LimiterSpec::LeakyBucketQueue { capacity: capacity / n, interval_micros: longer(interval_micros) }
            }
            LimiterSpec::FixedWindow { limit, window_micros } => {
                LimiterSpec::FixedWindow { limit: share(limit), window_micros }
            }
            LimiterSpec::SlidingWindow { limit, window_micros, sub_windows } => {
                LimiterSpec::SlidingWindow { limit: share(limit), window_micros, sub_windows }
            }
            LimiterSpec::SlidingLog { limit, window_micros } => {
                LimiterSpec::SlidingLog { limit: share(limit), window_micros }
            }
            LimiterSpec::SlidingWindowCounter { limit, window_micros } => {
                LimiterSpec::SlidingWindowCounter { limit: share(limit), window_micros }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_never_add_up_to_more_than_the_whole() {
        let gcra = LimiterSpec::Gcra { max_burst: 99, count_per_period: 1_000, period_micros: 1_000_000 };
        assert_eq!(
            gcra.divided(3),
            LimiterSpec::Gcra { max_burst: 32, count_per_period: 1_000, period_micros: 3_000_000 }
        );
        let bucket = LimiterSpec::TokenBucket { rate: 90.0, burst: 10 };
        assert_eq!(bucket.divided(4), LimiterSpec::TokenBucket { rate: 22.5, burst: 2 });
        assert_eq!(bucket.divided(0), bucket);
        let window = LimiterSpec::FixedWindow { limit: 5, window_micros: 1_000 };
        // More nodes than units: each keeps one.
        assert_eq!(window.divided(8), LimiterSpec::FixedWindow { limit: 1, window_micros: 1_000 });
        let queue = LimiterSpec::LeakyBucketQueue { capacity: 9, interval_micros: 10 };
        assert_eq!(queue.divided(2), LimiterSpec::LeakyBucketQueue { capacity: 4, interval_micros: 20 });
        let huge = LimiterSpec::Gcra { max_burst: 0, count_per_period: 1, period_micros: i64::MAX };
        assert_eq!(huge.divided(2), huge, "the period saturates");
    }
}
