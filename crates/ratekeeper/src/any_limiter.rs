//! Any admission-style algorithm from a [`LimiterSpec`]: [`AnyLimiter`]
//! (thread-safe, what bindings construct) and [`AnyCore`] (the bare state
//! machine, what [`CompositeLimiter`](crate::CompositeLimiter) holds).
//!
//! A binding turns its caller's arguments into a `LimiterSpec` (plain
//! numbers, durations in microseconds) and gets a limiter with `check` and
//! `peek`, whatever the algorithm: one code path instead of eight.

use crate::windows::HeapLogStorage;
use ratekeeper_core::fixed_window::FixedWindow as CoreFixed;
use ratekeeper_core::gcra::Gcra as CoreGcra;
use ratekeeper_core::leaky_bucket::{LeakyBucketMeter as CoreMeter, LeakyBucketQueue as CoreQueue};
use ratekeeper_core::sliding_log::SlidingLog as CoreLog;
use ratekeeper_core::sliding_window::SlidingWindow as CoreSliding;
use ratekeeper_core::sliding_window_counter::SlidingWindowCounter as CoreCounter;
use ratekeeper_core::token_bucket::TokenBucket as CoreTokenBucket;
use ratekeeper_core::{Admission, Algorithm, Decision, Error, Full, LimiterSpec};

use crate::clock::{Clock, MonotonicClock};
use crate::windows::new_log;
use crate::{
    FixedWindow, Gcra, LeakyBucketMeter, LeakyBucketQueue, SlidingLog, SlidingWindow, SlidingWindowCounter, TokenBucket,
};

/// Declares [`AnyCore`] and [`AnyLimiter`] from one list of the
/// registry's algorithms (each variant named as its [`Algorithm`]), with
/// the dispatch every method repeats; only [`AnyCore::new`], which reads
/// each algorithm's own parameters, is written out.
macro_rules! any_algorithm {
    ($($variant:ident($core:ty, $std:ident),)*) => {
        /// The core state machine of any admission-style algorithm (the
        /// sliding log's entries in a boxed slice).
        #[derive(Debug, Clone)]
        pub enum AnyCore {
            $(
                #[doc = concat!("[`ratekeeper_core::", stringify!($variant), "`].")]
                $variant($core),
            )*
        }

        impl AnyCore {
            /// The algorithm, from the registry.
            pub fn kind(&self) -> Algorithm {
                match self {
                    $(AnyCore::$variant(_) => Algorithm::$variant,)*
                }
            }

            /// The most heap bytes the state can hold: a sliding log's
            /// entries (16 bytes each, up to its limit); 0 for the others.
            pub(crate) fn max_heap_bytes(&self) -> usize {
                match self {
                    AnyCore::SlidingLog(log) => usize::try_from(log.limit())
                        .map_or(usize::MAX, |limit| limit.saturating_mul(size_of::<ratekeeper_core::sliding_log::LogEntry>())),
                    _ => 0,
                }
            }

            fn as_admission(&self) -> &dyn Admission {
                match self {
                    $(AnyCore::$variant(a) => a,)*
                }
            }

            fn as_admission_mut(&mut self) -> &mut dyn Admission {
                match self {
                    $(AnyCore::$variant(a) => a,)*
                }
            }
        }

        /// Full when the algorithm's state is: see [`Full`].
        impl Full for AnyCore {
            fn fresh(&self) -> Self {
                match self {
                    $(AnyCore::$variant(a) => AnyCore::$variant(a.fresh()),)*
                }
            }

            fn is_full_at(&self, now_micros: i64) -> bool {
                match self {
                    $(AnyCore::$variant(a) => a.is_full_at(now_micros),)*
                }
            }

            fn full_at_micros(&self, now_micros: i64) -> i64 {
                match self {
                    $(AnyCore::$variant(a) => a.full_at_micros(now_micros),)*
                }
            }
        }

        /// Any admission-style limiter, thread-safe, built from a [`LimiterSpec`].
        ///
        /// ```
        /// use std::sync::Arc;
        /// use ratekeeper::{AnyLimiter, LimiterSpec, ManualClock};
        ///
        /// let spec = LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 };
        /// let limiter = AnyLimiter::with_clock(&spec, Arc::new(ManualClock::new()))?;
        /// assert_eq!(limiter.algorithm(), "fixed_window");
        /// assert!(limiter.check(2).allowed);
        /// assert!(!limiter.check(1).allowed);
        /// # Ok::<(), ratekeeper::Error>(())
        /// ```
        #[derive(Debug)]
        pub enum AnyLimiter<C: Clock = MonotonicClock> {
            $(
                #[doc = concat!("A [`", stringify!($std), "`].")]
                $variant($std<C>),
            )*
        }

        impl<C: Clock> AnyLimiter<C> {
            /// The limiter `spec` describes, created now on `clock`; errors with the
            /// algorithm's own invalid-argument error.
            pub fn with_clock(spec: &LimiterSpec, clock: C) -> Result<Self, Error> {
                Ok(match AnyCore::new(spec)? {
                    $(AnyCore::$variant(core) => AnyLimiter::$variant($std::from_core(core, clock)),)*
                })
            }

            /// Admits `cost` units now if the limit allows it, consuming them; a
            /// refusal consumes nothing. A shaper (the leaky bucket queue) admits
            /// with a wait (`wait_micros`) and does not sleep.
            pub fn check(&self, cost: u64) -> Decision {
                match self {
                    $(AnyLimiter::$variant(l) => l.check(cost),)*
                }
            }

            /// The decision [`check`](Self::check) would make now, consuming
            /// nothing.
            pub fn peek(&self, cost: u64) -> Decision {
                match self {
                    $(AnyLimiter::$variant(l) => l.peek(cost),)*
                }
            }

            /// Gives back `cost` units admitted earlier that should not
            /// count (a request skipped or failed: express-rate-limit's
            /// `decrement`), now. What each algorithm gives back is in
            /// [`Admission::refund`]'s table; a leaky bucket queue gives
            /// nothing back.
            pub fn refund(&self, cost: u64) {
                match self {
                    $(AnyLimiter::$variant(l) => l.refund(cost),)*
                }
            }

            /// The algorithm, from the registry.
            pub fn kind(&self) -> Algorithm {
                match self {
                    $(AnyLimiter::$variant(_) => Algorithm::$variant,)*
                }
            }
        }
    };
}

any_algorithm! {
    TokenBucket(CoreTokenBucket, TokenBucket),
    Gcra(CoreGcra, Gcra),
    LeakyBucketMeter(CoreMeter, LeakyBucketMeter),
    LeakyBucketQueue(CoreQueue, LeakyBucketQueue),
    FixedWindow(CoreFixed, FixedWindow),
    SlidingWindow(CoreSliding, SlidingWindow),
    SlidingLog(CoreLog<HeapLogStorage>, SlidingLog),
    SlidingWindowCounter(CoreCounter, SlidingWindowCounter),
}

impl AnyCore {
    /// Builds the algorithm `spec` describes, created at time 0; errors with
    /// the algorithm's own invalid-argument error. (The sliding log is at
    /// most [`MAX_SLIDING_LOG_LIMIT`](crate::MAX_SLIDING_LOG_LIMIT).)
    pub fn new(spec: &LimiterSpec) -> Result<Self, Error> {
        Ok(match *spec {
            LimiterSpec::TokenBucket { rate, burst } => AnyCore::TokenBucket(CoreTokenBucket::new(rate, burst)?),
            LimiterSpec::Gcra { max_burst, count_per_period, period_micros } => {
                AnyCore::Gcra(CoreGcra::new(max_burst, count_per_period, period_micros)?)
            }
            LimiterSpec::LeakyBucketMeter { capacity, count_per_period, period_micros } => {
                AnyCore::LeakyBucketMeter(CoreMeter::new(capacity, count_per_period, period_micros)?)
            }
            LimiterSpec::LeakyBucketQueue { capacity, interval_micros, slack } => {
                AnyCore::LeakyBucketQueue(CoreQueue::with_slack(capacity, interval_micros, slack)?)
            }
            LimiterSpec::FixedWindow { limit, window_micros } => {
                AnyCore::FixedWindow(CoreFixed::new(limit, window_micros)?)
            }
            LimiterSpec::SlidingWindow { limit, window_micros, sub_windows } => {
                AnyCore::SlidingWindow(CoreSliding::new(limit, window_micros, sub_windows)?)
            }
            LimiterSpec::SlidingLog { limit, window_micros } => AnyCore::SlidingLog(new_log(limit, window_micros)?),
            LimiterSpec::SlidingWindowCounter { limit, window_micros } => {
                AnyCore::SlidingWindowCounter(CoreCounter::new(limit, window_micros)?)
            }
        })
    }
}

impl Admission for AnyCore {
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        self.as_admission_mut().check(cost, now_micros)
    }

    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.as_admission().peek(cost, now_micros)
    }

    fn refund(&mut self, cost: u64, now_micros: i64) {
        self.as_admission_mut().refund(cost, now_micros)
    }
}

impl AnyLimiter<MonotonicClock> {
    /// The limiter `spec` describes, on the monotonic clock.
    pub fn new(spec: &LimiterSpec) -> Result<Self, Error> {
        Self::with_clock(spec, MonotonicClock::new())
    }
}

impl<C: Clock> AnyLimiter<C> {
    /// The algorithm's name, as [`LimiterSpec::algorithm`] spells it.
    pub fn algorithm(&self) -> &'static str {
        self.kind().wire_name()
    }

    /// A window's limit (the four windows); `None` for the other
    /// algorithms, whose quota is not one number that changes alone.
    pub fn window_limit(&self) -> Option<u64> {
        Some(match self {
            AnyLimiter::FixedWindow(w) => w.limit(),
            AnyLimiter::SlidingWindow(w) => w.limit(),
            AnyLimiter::SlidingLog(w) => w.limit(),
            AnyLimiter::SlidingWindowCounter(w) => w.limit(),
            _ => return None,
        })
    }

    /// Changes a window's limit now, keeping what it has counted (each
    /// window's `set_limit`); `None`, changing nothing, for the other
    /// algorithms (a token bucket changes with `set_rate`/`set_burst`), so
    /// a binding can say the limiter is of the wrong kind.
    pub fn set_window_limit(&self, limit: u64) -> Option<Result<(), Error>> {
        Some(match self {
            AnyLimiter::FixedWindow(w) => w.set_limit(limit),
            AnyLimiter::SlidingWindow(w) => w.set_limit(limit),
            AnyLimiter::SlidingLog(w) => w.set_limit(limit),
            AnyLimiter::SlidingWindowCounter(w) => w.set_limit(limit),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;

    fn every_spec() -> [LimiterSpec; 8] {
        [
            LimiterSpec::TokenBucket { rate: 1.0, burst: 2 },
            LimiterSpec::Gcra { max_burst: 1, count_per_period: 1, period_micros: 1_000_000 },
            LimiterSpec::LeakyBucketMeter { capacity: 2, count_per_period: 1, period_micros: 1_000_000 },
            LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: 1_000_000, slack: 0 },
            LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 },
            LimiterSpec::SlidingWindow { limit: 2, window_micros: 1_000_000, sub_windows: 4 },
            LimiterSpec::SlidingLog { limit: 2, window_micros: 1_000_000 },
            LimiterSpec::SlidingWindowCounter { limit: 2, window_micros: 1_000_000 },
        ]
    }

    #[test]
    fn every_algorithm_admits_two_then_refuses() {
        let kinds: Vec<Algorithm> = every_spec().iter().map(LimiterSpec::kind).collect();
        assert_eq!(kinds, Algorithm::ALL, "a spec of every algorithm");
        for spec in every_spec() {
            let limiter = AnyLimiter::with_clock(&spec, Arc::new(ManualClock::new())).unwrap();
            assert_eq!(limiter.algorithm(), spec.algorithm());
            assert_eq!(limiter.kind(), spec.kind());
            assert_eq!(AnyCore::new(&spec).unwrap().kind(), spec.kind());
            assert!(limiter.check(1).allowed, "{spec:?}");
            assert!(limiter.check(1).allowed, "{spec:?}");
            let refused = limiter.check(1);
            assert!(!refused.allowed, "{spec:?}");
            assert_eq!(limiter.peek(1), refused, "{spec:?}");
            assert_eq!(limiter.check(3).retry_after_micros, crate::NEVER, "{spec:?}");
        }
    }

    /// Every algorithm but the queue gives a refunded unit back, through
    /// the thread-safe wrapper of each; the queue keeps its slots.
    #[test]
    fn every_algorithm_but_the_queue_takes_a_refund() {
        for spec in every_spec() {
            let limiter = AnyLimiter::with_clock(&spec, Arc::new(ManualClock::new())).unwrap();
            assert!(limiter.check(2).allowed, "{spec:?}");
            let before = limiter.peek(1);
            assert!(!before.allowed, "{spec:?}");
            limiter.refund(0);
            assert_eq!(limiter.peek(1), before, "{spec:?}: a refund of 0 gives nothing back");
            limiter.refund(1);
            let after = limiter.peek(1);
            if spec.kind() == Algorithm::LeakyBucketQueue {
                assert_eq!(after, before, "{spec:?}: no refund");
            } else {
                assert!(after.allowed, "{spec:?}");
                limiter.refund(u64::MAX);
                assert_eq!(limiter.peek(0).remaining, 2, "{spec:?}: never more than a fresh limiter");
            }
        }
    }

    #[test]
    fn only_windows_change_their_limit() {
        for spec in every_spec() {
            let limiter = AnyLimiter::with_clock(&spec, Arc::new(ManualClock::new())).unwrap();
            let window = matches!(
                spec.kind(),
                Algorithm::FixedWindow
                    | Algorithm::SlidingWindow
                    | Algorithm::SlidingLog
                    | Algorithm::SlidingWindowCounter
            );
            assert!(limiter.check(2).allowed, "{spec:?}");
            match limiter.set_window_limit(3) {
                Some(result) => {
                    assert!(window, "{spec:?}");
                    result.unwrap();
                    assert_eq!(limiter.window_limit(), Some(3));
                    assert!(limiter.check(1).allowed, "{spec:?}: the two taken stay, one more fits");
                    assert!(!limiter.check(1).allowed, "{spec:?}");
                    assert!(matches!(limiter.set_window_limit(0), Some(Err(Error::InvalidArgument(_)))));
                }
                None => assert!(!window && limiter.window_limit().is_none(), "{spec:?}"),
            }
        }
    }

    #[test]
    fn invalid_specs_are_the_algorithms_errors() {
        let bad = [
            LimiterSpec::TokenBucket { rate: f64::NAN, burst: 1 },
            LimiterSpec::Gcra { max_burst: 1, count_per_period: 0, period_micros: 1 },
            LimiterSpec::LeakyBucketMeter { capacity: 0, count_per_period: 1, period_micros: 1 },
            LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: -1, slack: 0 },
            LimiterSpec::FixedWindow { limit: 0, window_micros: 1 },
            LimiterSpec::SlidingWindow { limit: 1, window_micros: 10, sub_windows: 3 },
            LimiterSpec::SlidingLog { limit: crate::MAX_SLIDING_LOG_LIMIT + 1, window_micros: 1 },
            LimiterSpec::SlidingWindowCounter { limit: 1, window_micros: 0 },
        ];
        for spec in bad {
            assert!(matches!(AnyLimiter::new(&spec), Err(Error::InvalidArgument(_))), "{spec:?}");
        }
    }
}
