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
//!
//! Which algorithms there are, and their parameters, is the registry's
//! ([`Algorithm`]): a binding reads a spec's parameters through
//! [`LimiterSpec::read`] and writes them out through
//! [`LimiterSpec::values`], both in the registry's order, instead of
//! naming each algorithm itself.

use crate::algorithm::{Algorithm, Parameter, ParameterKind};
use crate::error::Error;

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
        /// How many unused slots may be saved (Uber's slack).
        slack: u64,
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
    /// The algorithm, from the registry.
    pub const fn kind(&self) -> Algorithm {
        match self {
            LimiterSpec::TokenBucket { .. } => Algorithm::TokenBucket,
            LimiterSpec::Gcra { .. } => Algorithm::Gcra,
            LimiterSpec::LeakyBucketMeter { .. } => Algorithm::LeakyBucketMeter,
            LimiterSpec::LeakyBucketQueue { .. } => Algorithm::LeakyBucketQueue,
            LimiterSpec::FixedWindow { .. } => Algorithm::FixedWindow,
            LimiterSpec::SlidingWindow { .. } => Algorithm::SlidingWindow,
            LimiterSpec::SlidingLog { .. } => Algorithm::SlidingLog,
            LimiterSpec::SlidingWindowCounter { .. } => Algorithm::SlidingWindowCounter,
        }
    }

    /// The algorithm's name, as the conformance vectors and the bindings
    /// spell it: [`Algorithm::wire_name`] of [`kind`](Self::kind)
    /// (`"token_bucket"`, `"gcra"`, …).
    pub const fn algorithm(&self) -> &'static str {
        self.kind().wire_name()
    }

    /// The spec of `algorithm` whose parameters `source` gives, asked for in
    /// the order of [`Algorithm::parameters`] (so that the first bad one is
    /// the error, in every binding alike). A value the spec cannot hold (a
    /// sliding window's `sub_windows` above `u32::MAX`) is the core's error
    /// about that parameter, passed through
    /// [`ParameterSource::out_of_range`]; the algorithm's own ranges are
    /// checked when the limiter is built.
    pub fn read<S: ParameterSource + ?Sized>(algorithm: Algorithm, source: &mut S) -> Result<LimiterSpec, S::Error> {
        let p = algorithm.parameters();
        Ok(match algorithm {
            Algorithm::TokenBucket => {
                LimiterSpec::TokenBucket { rate: source.rate(&p[0])?, burst: source.count(&p[1])? }
            }
            Algorithm::Gcra => LimiterSpec::Gcra {
                max_burst: source.count(&p[0])?,
                count_per_period: source.count(&p[1])?,
                period_micros: source.micros(&p[2])?,
            },
            Algorithm::LeakyBucketMeter => LimiterSpec::LeakyBucketMeter {
                capacity: source.count(&p[0])?,
                count_per_period: source.count(&p[1])?,
                period_micros: source.micros(&p[2])?,
            },
            Algorithm::LeakyBucketQueue => {
                let capacity = source.count(&p[0])?;
                let interval_micros = source.micros(&p[1])?;
                LimiterSpec::LeakyBucketQueue { capacity, interval_micros, slack: source.count(&p[2])? }
            }
            Algorithm::FixedWindow => {
                LimiterSpec::FixedWindow { limit: source.count(&p[0])?, window_micros: source.micros(&p[1])? }
            }
            Algorithm::SlidingWindow => {
                let limit = source.count(&p[0])?;
                let window_micros = source.micros(&p[1])?;
                let sub_windows = source.count(&p[2])?;
                // Above `u32::MAX` is the library's error like any value above 16.
                let sub_windows = u32::try_from(sub_windows)
                    .map_err(|_| source.out_of_range(&p[2], Error::invalid_uint(p[2].argument(), sub_windows)))?;
                LimiterSpec::SlidingWindow { limit, window_micros, sub_windows }
            }
            Algorithm::SlidingLog => {
                LimiterSpec::SlidingLog { limit: source.count(&p[0])?, window_micros: source.micros(&p[1])? }
            }
            Algorithm::SlidingWindowCounter => {
                LimiterSpec::SlidingWindowCounter { limit: source.count(&p[0])?, window_micros: source.micros(&p[1])? }
            }
        })
    }

    /// Every parameter with its value, in the order of
    /// [`Algorithm::parameters`]: what a binding writes out (a `repr`, a
    /// script's arguments) without naming the algorithm.
    pub fn values(&self) -> impl Iterator<Item = (&'static Parameter, ParameterValue)> {
        use ParameterValue::{Count, Micros, Rate};
        // The parameters' count cuts the (padded) values short.
        let values = match *self {
            LimiterSpec::TokenBucket { rate, burst } => [Rate(rate), Count(burst), Count(0)],
            LimiterSpec::Gcra { max_burst, count_per_period, period_micros } => {
                [Count(max_burst), Count(count_per_period), Micros(period_micros)]
            }
            LimiterSpec::LeakyBucketMeter { capacity, count_per_period, period_micros } => {
                [Count(capacity), Count(count_per_period), Micros(period_micros)]
            }
            LimiterSpec::LeakyBucketQueue { capacity, interval_micros, slack } => {
                [Count(capacity), Micros(interval_micros), Count(slack)]
            }
            LimiterSpec::FixedWindow { limit, window_micros }
            | LimiterSpec::SlidingLog { limit, window_micros }
            | LimiterSpec::SlidingWindowCounter { limit, window_micros } => {
                [Count(limit), Micros(window_micros), Count(0)]
            }
            LimiterSpec::SlidingWindow { limit, window_micros, sub_windows } => {
                [Count(limit), Micros(window_micros), Count(u64::from(sub_windows))]
            }
        };
        self.kind().parameters().iter().zip(values)
    }

    /// One node's share of this limit when `nodes` nodes enforce it
    /// together, each on its own (the Redis crate's divided mode, docs/redis.md):
    /// rates divided by `nodes`, and quotas (bursts, limits,
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
            // Each node saves its share of the slots, so that the saved
            // slots of all nodes never add up to more than the whole's.
            LimiterSpec::LeakyBucketQueue { capacity, interval_micros, slack } => LimiterSpec::LeakyBucketQueue {
                capacity: capacity / n,
                interval_micros: longer(interval_micros),
                slack: slack / n,
            },
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

/// One parameter's value, of its [`ParameterKind`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParameterValue {
    /// A [`ParameterKind::Rate`].
    Rate(f64),
    /// A [`ParameterKind::Count`].
    Count(u64),
    /// A [`ParameterKind::Duration`], in whole microseconds.
    Micros(i64),
}

impl ParameterValue {
    /// The value's kind.
    pub const fn kind(&self) -> ParameterKind {
        match self {
            ParameterValue::Rate(_) => ParameterKind::Rate,
            ParameterValue::Count(_) => ParameterKind::Count,
            ParameterValue::Micros(_) => ParameterKind::Duration,
        }
    }
}

/// Where [`LimiterSpec::read`] takes an algorithm's parameter values from:
/// a binding's arguments, a vector's fields, a command line's keys. Each
/// method reads one parameter of its kind, converting and checking it as
/// the source's language does, and errors in the source's own terms.
pub trait ParameterSource {
    /// What a failed read is.
    type Error;

    /// A [`ParameterKind::Rate`].
    fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, Self::Error>;

    /// A [`ParameterKind::Count`]: a negative value is an error naming
    /// [`Parameter::argument`].
    fn count(&mut self, parameter: &'static Parameter) -> Result<u64, Self::Error>;

    /// A [`ParameterKind::Duration`] in whole microseconds.
    fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, Self::Error>;

    /// The source's error for `error`, the core's about a value of
    /// `parameter` that was read but that the spec cannot hold.
    fn out_of_range(&mut self, parameter: &'static Parameter, error: Error) -> Self::Error;
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Argument;
    use std::vec::Vec;

    /// One spec of every algorithm, with distinct values.
    fn every_spec() -> [LimiterSpec; 8] {
        [
            LimiterSpec::TokenBucket { rate: 1.5, burst: 2 },
            LimiterSpec::Gcra { max_burst: 3, count_per_period: 4, period_micros: 5 },
            LimiterSpec::LeakyBucketMeter { capacity: 6, count_per_period: 7, period_micros: 8 },
            LimiterSpec::LeakyBucketQueue { capacity: 9, interval_micros: 10, slack: 20 },
            LimiterSpec::FixedWindow { limit: 11, window_micros: 12 },
            LimiterSpec::SlidingWindow { limit: 13, window_micros: 14, sub_windows: 15 },
            LimiterSpec::SlidingLog { limit: 16, window_micros: 17 },
            LimiterSpec::SlidingWindowCounter { limit: 18, window_micros: 19 },
        ]
    }

    /// Gives the values it holds, in order, and remembers what was asked.
    struct Replay {
        values: Vec<ParameterValue>,
        asked: Vec<&'static Parameter>,
    }

    impl ParameterSource for Replay {
        type Error = Error;

        fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, Error> {
            self.asked.push(parameter);
            match self.values.remove(0) {
                ParameterValue::Rate(v) => Ok(v),
                other => panic!("{} read as a rate: {other:?}", parameter.name()),
            }
        }

        fn count(&mut self, parameter: &'static Parameter) -> Result<u64, Error> {
            self.asked.push(parameter);
            match self.values.remove(0) {
                ParameterValue::Count(v) => Ok(v),
                other => panic!("{} read as a count: {other:?}", parameter.name()),
            }
        }

        fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, Error> {
            self.asked.push(parameter);
            match self.values.remove(0) {
                ParameterValue::Micros(v) => Ok(v),
                other => panic!("{} read as a duration: {other:?}", parameter.name()),
            }
        }

        fn out_of_range(&mut self, _: &'static Parameter, error: Error) -> Error {
            error
        }
    }

    #[test]
    fn every_algorithm_has_a_spec_here() {
        let kinds: Vec<Algorithm> = every_spec().iter().map(LimiterSpec::kind).collect();
        assert_eq!(kinds, Algorithm::ALL);
    }

    /// `read` asks for the registry's parameters in its order, with its
    /// kinds, and `values` gives them back the same way: a spec survives
    /// the round trip every binding makes.
    #[test]
    fn read_and_values_follow_the_registry() {
        for spec in every_spec() {
            let algorithm = spec.kind();
            assert_eq!(spec.algorithm(), algorithm.wire_name());
            let values: Vec<(&Parameter, ParameterValue)> = spec.values().collect();
            let parameters: Vec<&Parameter> = values.iter().map(|(p, _)| *p).collect();
            assert_eq!(parameters, algorithm.parameters().iter().collect::<Vec<_>>(), "{spec:?}");
            for (p, v) in &values {
                assert_eq!(p.kind(), v.kind(), "{spec:?}: {}", p.name());
            }
            let mut replay = Replay { values: values.iter().map(|(_, v)| *v).collect(), asked: Vec::new() };
            assert_eq!(LimiterSpec::read(algorithm, &mut replay), Ok(spec));
            assert_eq!(replay.asked, parameters, "{spec:?}");
            assert!(replay.values.is_empty(), "{spec:?}");
        }
    }

    #[test]
    fn sub_windows_beyond_u32_are_the_librarys_error() {
        let values = [ParameterValue::Count(1), ParameterValue::Micros(1), ParameterValue::Count(1 << 32)];
        let mut replay = Replay { values: values.to_vec(), asked: Vec::new() };
        assert_eq!(
            LimiterSpec::read(Algorithm::SlidingWindow, &mut replay),
            Err(Error::invalid_int(Argument::SubWindows, 1 << 32))
        );
    }

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
        let queue = LimiterSpec::LeakyBucketQueue { capacity: 9, interval_micros: 10, slack: 5 };
        assert_eq!(queue.divided(2), LimiterSpec::LeakyBucketQueue { capacity: 4, interval_micros: 20, slack: 2 });
        let huge = LimiterSpec::Gcra { max_burst: 0, count_per_period: 1, period_micros: i64::MAX };
        assert_eq!(huge.divided(2), huge, "the period saturates");
    }
}
