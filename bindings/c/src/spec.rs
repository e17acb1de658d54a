//! [`rk_limiter_spec`]: any admission-style algorithm described by plain
//! numbers, as C code writes it (a designated initializer), and its
//! conversion to the std layer's `LimiterSpec` — the one place where the C
//! API's counts and fields become an algorithm's parameters, shared by
//! `rk_limiter_new()`, the typed constructors and the composite limiter.

use ratekeeper::{unsigned_from_i64, Argument, LimiterSpec, Value};

use crate::failure::Failure;

/// Which admission-style algorithm an `rk_limiter_spec` describes, or an
/// `rk_limiter` is: one of the `RK_ALGORITHM_*` constants. 0 is none, so a
/// zeroed spec is an error rather than some limiter.
pub type rk_algorithm = u32;

/// Go's `golang.org/x/time/rate` token bucket: `rate`, `burst`.
pub const RK_ALGORITHM_TOKEN_BUCKET: rk_algorithm = 1;
/// GCRA with redis-cell's reply: `max_burst`, `count_per_period`,
/// `period_micros`.
pub const RK_ALGORITHM_GCRA: rk_algorithm = 2;
/// The leaky bucket as a meter (overflow refused): `capacity`,
/// `count_per_period`, `period_micros`.
pub const RK_ALGORITHM_LEAKY_BUCKET_METER: rk_algorithm = 3;
/// The leaky bucket as a queue (each request gets a slot and a wait):
/// `capacity`, `interval_micros`.
pub const RK_ALGORITHM_LEAKY_BUCKET_QUEUE: rk_algorithm = 4;
/// `limit` units per aligned window: `limit`, `window_micros`.
pub const RK_ALGORITHM_FIXED_WINDOW: rk_algorithm = 5;
/// `limit` units in the last `sub_windows` sub-windows: `limit`,
/// `window_micros`, `sub_windows`.
pub const RK_ALGORITHM_SLIDING_WINDOW: rk_algorithm = 6;
/// Exactly `limit` units in any window (a log of them): `limit`,
/// `window_micros`.
pub const RK_ALGORITHM_SLIDING_LOG: rk_algorithm = 7;
/// About `limit` units per sliding window (two counters, weighted):
/// `limit`, `window_micros`.
pub const RK_ALGORITHM_SLIDING_WINDOW_COUNTER: rk_algorithm = 8;

/// An admission-style limiter's algorithm and parameters, for
/// `rk_limiter_new()` and `rk_composite_limiter_new()`. Set `algorithm` and
/// the fields it lists (`RK_ALGORITHM_*`); every other field must be 0 (a
/// designated initializer zeroes them), so that a field meant for another
/// algorithm is an error, never silently ignored:
///
/// ```c
/// rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 100, .window_micros = 60000000};
/// ```
///
/// Counts are `int64_t` and must not be negative; durations are whole
/// microseconds. Each algorithm checks its own ranges when the limiter is
/// created (`RK_INVALID_ARGUMENT` naming the field).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct rk_limiter_spec {
    /// One of the `RK_ALGORITHM_*` constants.
    pub algorithm: rk_algorithm,
    /// Token bucket: tokens per second; 0 never refills, `INFINITY` admits
    /// everything; not negative or NaN.
    pub rate: f64,
    /// Token bucket: the bucket's size (it starts full).
    pub burst: i64,
    /// GCRA: redis-cell's `max_burst`; the limit is `max_burst + 1`.
    pub max_burst: i64,
    /// GCRA, leaky bucket meter: units per period (at least 1).
    pub count_per_period: i64,
    /// GCRA, leaky bucket meter: the period (at least 1 µs).
    /// Durations are whole microseconds from 1 to `INT64_MAX` (about 292,271
    /// years), the range every language's durations share.
    pub period_micros: i64,
    /// Leaky bucket meter: the bucket's size in units (1 to `INT64_MAX`);
    /// leaky bucket queue: how many units may wait (0 admits only when idle).
    pub capacity: i64,
    /// Leaky bucket queue: the spacing of slots (at least 1 µs).
    pub interval_micros: i64,
    /// Windows: units per window (at least 1; a sliding log's at most
    /// 1048576, a sliding window's at most `UINT32_MAX`).
    pub limit: i64,
    /// Windows: the window's length (at least 1 µs).
    pub window_micros: i64,
    /// Sliding window: sub-windows per window, 1 to 16, dividing
    /// `window_micros`.
    pub sub_windows: i64,
}

/// An algorithm's name as the conformance vectors, the other languages
/// and `rk_algorithm_name()` spell it; `None` for a value that is not an
/// `RK_ALGORITHM_*`.
pub(crate) fn algorithm_name(algorithm: rk_algorithm) -> Option<&'static core::ffi::CStr> {
    Some(match algorithm {
        RK_ALGORITHM_TOKEN_BUCKET => c"token_bucket",
        RK_ALGORITHM_GCRA => c"gcra",
        RK_ALGORITHM_LEAKY_BUCKET_METER => c"leaky_bucket_meter",
        RK_ALGORITHM_LEAKY_BUCKET_QUEUE => c"leaky_bucket_queue",
        RK_ALGORITHM_FIXED_WINDOW => c"fixed_window",
        RK_ALGORITHM_SLIDING_WINDOW => c"sliding_window",
        RK_ALGORITHM_SLIDING_LOG => c"sliding_log",
        RK_ALGORITHM_SLIDING_WINDOW_COUNTER => c"sliding_window_counter",
        _ => return None,
    })
}

/// The `RK_ALGORITHM_*` of a limiter built from `spec`.
pub(crate) fn algorithm_of(spec: &LimiterSpec) -> rk_algorithm {
    match spec {
        LimiterSpec::TokenBucket { .. } => RK_ALGORITHM_TOKEN_BUCKET,
        LimiterSpec::Gcra { .. } => RK_ALGORITHM_GCRA,
        LimiterSpec::LeakyBucketMeter { .. } => RK_ALGORITHM_LEAKY_BUCKET_METER,
        LimiterSpec::LeakyBucketQueue { .. } => RK_ALGORITHM_LEAKY_BUCKET_QUEUE,
        LimiterSpec::FixedWindow { .. } => RK_ALGORITHM_FIXED_WINDOW,
        LimiterSpec::SlidingWindow { .. } => RK_ALGORITHM_SLIDING_WINDOW,
        LimiterSpec::SlidingLog { .. } => RK_ALGORITHM_SLIDING_LOG,
        LimiterSpec::SlidingWindowCounter { .. } => RK_ALGORITHM_SLIDING_WINDOW_COUNTER,
    }
}

impl rk_limiter_spec {
    /// The std layer's description of the same limiter. Errors on an
    /// unknown algorithm, a negative count, or a field the algorithm does
    /// not use that is not 0; the algorithm's own ranges are checked when
    /// the limiter is built.
    pub(crate) fn to_spec(self) -> Result<LimiterSpec, Failure> {
        let count = |argument: Argument, value: i64| unsigned_from_i64(argument, value);
        let spec = match self.algorithm {
            RK_ALGORITHM_TOKEN_BUCKET => {
                LimiterSpec::TokenBucket { rate: self.rate, burst: count(Argument::Burst, self.burst)? }
            }
            RK_ALGORITHM_GCRA => LimiterSpec::Gcra {
                max_burst: count(Argument::MaxBurst, self.max_burst)?,
                count_per_period: count(Argument::CountPerPeriod, self.count_per_period)?,
                period_micros: self.period_micros,
            },
            RK_ALGORITHM_LEAKY_BUCKET_METER => LimiterSpec::LeakyBucketMeter {
                capacity: count(Argument::Capacity, self.capacity)?,
                count_per_period: count(Argument::CountPerPeriod, self.count_per_period)?,
                period_micros: self.period_micros,
            },
            RK_ALGORITHM_LEAKY_BUCKET_QUEUE => LimiterSpec::LeakyBucketQueue {
                capacity: count(Argument::QueueCapacity, self.capacity)?,
                interval_micros: self.interval_micros,
            },
            RK_ALGORITHM_FIXED_WINDOW => LimiterSpec::FixedWindow {
                limit: count(Argument::Limit, self.limit)?,
                window_micros: self.window_micros,
            },
            RK_ALGORITHM_SLIDING_WINDOW => LimiterSpec::SlidingWindow {
                limit: count(Argument::SlidingWindowLimit, self.limit)?,
                window_micros: self.window_micros,
                sub_windows: u32::try_from(self.sub_windows)
                    .map_err(|_| ratekeeper::Error::invalid_int(Argument::SubWindows, self.sub_windows))?,
            },
            RK_ALGORITHM_SLIDING_LOG => LimiterSpec::SlidingLog {
                limit: count(Argument::SlidingLogLimit, self.limit)?,
                window_micros: self.window_micros,
            },
            RK_ALGORITHM_SLIDING_WINDOW_COUNTER => LimiterSpec::SlidingWindowCounter {
                limit: count(Argument::Limit, self.limit)?,
                window_micros: self.window_micros,
            },
            other => {
                return Err(Failure::Invalid {
                    argument: "algorithm",
                    value: Value::Int(i64::from(other)),
                    requirement: "must be one of the RK_ALGORITHM_* constants",
                })
            }
        };
        self.check_unused(&spec)?;
        Ok(spec)
    }

    /// Every field `spec`'s algorithm does not use must be 0.
    fn check_unused(&self, spec: &LimiterSpec) -> Result<(), Failure> {
        let used: &[&str] = match spec {
            LimiterSpec::TokenBucket { .. } => &["rate", "burst"],
            LimiterSpec::Gcra { .. } => &["max_burst", "count_per_period", "period_micros"],
            LimiterSpec::LeakyBucketMeter { .. } => &["capacity", "count_per_period", "period_micros"],
            LimiterSpec::LeakyBucketQueue { .. } => &["capacity", "interval_micros"],
            LimiterSpec::SlidingWindow { .. } => &["limit", "window_micros", "sub_windows"],
            LimiterSpec::FixedWindow { .. }
            | LimiterSpec::SlidingLog { .. }
            | LimiterSpec::SlidingWindowCounter { .. } => &["limit", "window_micros"],
        };
        let fields = [
            ("rate", (self.rate != 0.0).then_some(Value::Float(self.rate))),
            ("burst", (self.burst != 0).then_some(Value::Int(self.burst))),
            ("max_burst", (self.max_burst != 0).then_some(Value::Int(self.max_burst))),
            ("count_per_period", (self.count_per_period != 0).then_some(Value::Int(self.count_per_period))),
            ("period_micros", (self.period_micros != 0).then_some(Value::Int(self.period_micros))),
            ("capacity", (self.capacity != 0).then_some(Value::Int(self.capacity))),
            ("interval_micros", (self.interval_micros != 0).then_some(Value::Int(self.interval_micros))),
            ("limit", (self.limit != 0).then_some(Value::Int(self.limit))),
            ("window_micros", (self.window_micros != 0).then_some(Value::Int(self.window_micros))),
            ("sub_windows", (self.sub_windows != 0).then_some(Value::Int(self.sub_windows))),
        ];
        for (field, set) in fields {
            if let Some(value) = set.filter(|_| !used.contains(&field)) {
                return Err(Failure::Invalid {
                    argument: field,
                    value,
                    requirement: "must be 0: the algorithm has no such parameter",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_std_layers() {
        let specs = [
            LimiterSpec::TokenBucket { rate: 1.0, burst: 1 },
            LimiterSpec::Gcra { max_burst: 1, count_per_period: 1, period_micros: 1 },
            LimiterSpec::LeakyBucketMeter { capacity: 1, count_per_period: 1, period_micros: 1 },
            LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: 1 },
            LimiterSpec::FixedWindow { limit: 1, window_micros: 1 },
            LimiterSpec::SlidingWindow { limit: 1, window_micros: 1, sub_windows: 1 },
            LimiterSpec::SlidingLog { limit: 1, window_micros: 1 },
            LimiterSpec::SlidingWindowCounter { limit: 1, window_micros: 1 },
        ];
        for spec in specs {
            let name = algorithm_name(algorithm_of(&spec)).unwrap();
            assert_eq!(name.to_str().unwrap(), spec.algorithm());
        }
        assert_eq!(algorithm_name(0), None);
        assert_eq!(algorithm_name(9), None);
    }

    #[test]
    fn a_spec_converts_and_refuses_what_its_algorithm_does_not_use() {
        let spec =
            rk_limiter_spec { algorithm: RK_ALGORITHM_FIXED_WINDOW, limit: 5, window_micros: 10, ..Default::default() };
        assert_eq!(spec.to_spec().unwrap(), LimiterSpec::FixedWindow { limit: 5, window_micros: 10 });
        let stray = rk_limiter_spec { burst: 3, ..spec };
        let failure = stray.to_spec().unwrap_err();
        assert_eq!(failure.argument(), Some("burst"));
        let negative = rk_limiter_spec { limit: -1, ..spec };
        assert_eq!(negative.to_spec().unwrap_err().argument(), Some("limit"));
        let unknown = rk_limiter_spec { algorithm: 0, ..spec };
        assert_eq!(unknown.to_spec().unwrap_err().argument(), Some("algorithm"));
        let sub = rk_limiter_spec { algorithm: RK_ALGORITHM_SLIDING_WINDOW, sub_windows: 1 << 40, ..spec };
        assert_eq!(sub.to_spec().unwrap_err().argument(), Some("sub_windows"));
        let tb = rk_limiter_spec { algorithm: RK_ALGORITHM_TOKEN_BUCKET, rate: -0.0, burst: 0, ..Default::default() };
        assert_eq!(tb.to_spec().unwrap(), LimiterSpec::TokenBucket { rate: -0.0, burst: 0 });
    }
}
