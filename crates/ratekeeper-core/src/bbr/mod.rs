//! [`Bbr`]: load shedding as Kratos' BBR limiter does it (go-kratos/aegis
//! `ratelimit/bbr`), itself after Sentinel's system-adaptive rule.
//!
//! BBR asks one question per request: is the service already holding more
//! requests than it can finish? It estimates that capacity from its own
//! statistics over a rolling window — the most requests completed in one
//! bucket (`max_pass`) and the lowest average round-trip time of a bucket
//! (`min_rt`, whole milliseconds) — as the bandwidth-delay product
//! `max_pass × min_rt × buckets per second / 1000`. A request is refused
//! when more than that (and more than one) are in flight, but only while
//! the CPU is at or above its threshold, or within the cool-down that
//! follows the moment shedding began: a busy but healthy service is never
//! throttled by this rule.
//!
//! Every arithmetic step is Kratos': the bucket being filled is not counted
//! (its value is not final), `max_pass` is at least 1, `min_rt` at least
//! 1 ms, an RT is the elapsed time rounded up to whole milliseconds and is
//! not recorded when it is 0, and both estimates are cached for one bucket
//! length. Kratos' own tests are translated in `kratos_tests.rs`. The
//! differences, all deliberate:
//!
//! * time is the microseconds passed in, counted from the limiter's creation
//!   (Kratos reads the wall clock), so a bucket is `window / buckets`
//!   whole microseconds;
//! * the CPU reading is passed in with each call ([`Load::cpu_usage`], a
//!   fraction, where Kratos reads a global sampler in permille): Kratos'
//!   threshold 800 is 0.8 here;
//! * the cool-down is a parameter (Kratos fixes it at one second, the
//!   default here);
//! * the capacity product saturates instead of wrapping at `i64::MAX`.

mod rolling;

use rolling::Rolling;
pub use rolling::MAX_BUCKETS;

use crate::decision::Decision;
use crate::error::{Argument, Error};
use crate::load::Load;
use crate::ticks::ceil_div;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// A [`Bbr`]'s parameters, with Kratos' defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BbrConfig {
    /// The statistics' window in microseconds (Kratos' `WithWindow`,
    /// default 10 s).
    pub window_micros: i64,
    /// How many buckets the window is split into (Kratos' `WithBucket`,
    /// default 100): 1 to [`MAX_BUCKETS`], at most one per microsecond.
    pub buckets: u32,
    /// The CPU usage (0.0 to 1.0) at or above which BBR sheds (Kratos'
    /// `WithCPUThreshold`, default 800 permille: 0.8).
    pub cpu_threshold: f64,
    /// How long after shedding began BBR keeps checking the in-flight
    /// count although the CPU is below its threshold (Kratos: one second).
    pub cool_down_micros: i64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            window_micros: 10 * MICROS_PER_SECOND,
            buckets: 100,
            cpu_threshold: 0.8,
            cool_down_micros: MICROS_PER_SECOND,
        }
    }
}

impl BbrConfig {
    /// Checks every parameter; the first bad one is the error.
    pub fn validate(&self) -> Result<(), Error> {
        if self.window_micros < 1 {
            return Err(Error::invalid_int(Argument::Window, self.window_micros));
        }
        let buckets = i64::from(self.buckets);
        if buckets < 1 || buckets > MAX_BUCKETS as i64 || buckets > self.window_micros {
            return Err(Error::invalid_int(Argument::Buckets, buckets));
        }
        if !(0.0..=1.0).contains(&self.cpu_threshold) {
            return Err(Error::invalid_float(Argument::CpuThreshold, self.cpu_threshold));
        }
        if self.cool_down_micros < 0 {
            return Err(Error::invalid_int(Argument::CoolDown, self.cool_down_micros));
        }
        Ok(())
    }

    /// One bucket's length in microseconds.
    pub fn bucket_micros(&self) -> i64 {
        self.window_micros / i64::from(self.buckets)
    }
}

/// An admitted request's token: plain data to give back to
/// [`Bbr::release`] exactly once, when the request ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use = "a BBR permit must be released, or the limiter counts it in flight forever"]
pub struct BbrPermit {
    /// When the request was admitted (microseconds since the limiter's
    /// creation).
    pub start_micros: i64,
}

/// What BBR currently sees, as Kratos' `Stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BbrStats {
    /// The CPU usage passed with the call (0.0 to 1.0).
    pub cpu_usage: f64,
    /// Requests admitted and not yet released.
    pub in_flight: u64,
    /// The most requests completed in one settled bucket (at least 1).
    pub max_pass: u64,
    /// The lowest average RT of a settled bucket, in whole milliseconds
    /// (at least 1).
    pub min_rt_millis: u64,
    /// The capacity: `max_pass × min_rt × buckets per second / 1000`.
    pub max_in_flight: u64,
}

/// A value computed from the window and kept for one bucket length.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cached {
    value: i64,
    at_micros: i64,
}

/// Kratos' BBR as a state machine; see the [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct Bbr {
    config: BbrConfig,
    bucket_micros: i64,
    buckets_per_second: i64,
    passes: Rolling,
    rts: Rolling,
    in_flight: u64,
    /// When shedding began, if it has and the cool-down has not ended.
    drop_since: Option<i64>,
    max_pass_cache: Option<Cached>,
    min_rt_cache: Option<Cached>,
    /// The settled buckets' estimates at one bucket index. Not Kratos'
    /// cache (that one lives one bucket length from when it was computed,
    /// and its timing is part of the semantics) but a memo of the same
    /// values: adding to the current bucket never changes what is settled
    /// at it (the current bucket is not counted, and the buckets an add
    /// empties were already out of the window), so they stay exact until
    /// the bucket index moves or an add lands at another index.
    memo: Option<Settled>,
}

/// [`Bbr::memo`]'s entry.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Settled {
    bucket: i64,
    max_pass: i64,
    min_rt: i64,
}

impl Bbr {
    /// A limiter with empty statistics and nothing in flight.
    pub fn new(config: BbrConfig) -> Result<Self, Error> {
        config.validate()?;
        let bucket_micros = config.bucket_micros();
        let size = config.buckets as usize;
        Ok(Bbr {
            config,
            bucket_micros,
            buckets_per_second: MICROS_PER_SECOND / bucket_micros,
            passes: Rolling::new(size),
            rts: Rolling::new(size),
            in_flight: 0,
            drop_since: None,
            max_pass_cache: None,
            min_rt_cache: None,
            memo: None,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &BbrConfig {
        &self.config
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// When shedding began, while BBR is shedding or cooling down.
    pub fn shedding_since(&self) -> Option<i64> {
        self.drop_since
    }

    fn bucket(&self, now_micros: i64) -> i64 {
        now_micros.div_euclid(self.bucket_micros)
    }

    /// Whether a value cached at `at` is still fresh at `now` (Kratos:
    /// less than one bucket length ago).
    fn fresh(&self, cached: Option<Cached>, now_micros: i64) -> Option<i64> {
        let cached = cached?;
        let age = now_micros.saturating_sub(cached.at_micros);
        (0..self.bucket_micros).contains(&age).then_some(cached.value)
    }

    /// The most requests completed in one settled bucket, at least 1.
    fn scan_max_pass(&self, bucket: i64) -> i64 {
        let most = self.passes.settled(bucket).map(|(sum, _)| sum).max().unwrap_or(0).max(1);
        i64::try_from(most).unwrap_or(i64::MAX)
    }

    /// The lowest average RT of a settled bucket in whole milliseconds,
    /// rounded up, at least 1.
    fn scan_min_rt(&self, bucket: i64) -> i64 {
        let lowest = self
            .rts
            .settled(bucket)
            .filter(|&(_, count)| count > 0)
            .map(|(sum, count)| sum as f64 / count as f64)
            .fold(f64::MAX, f64::min);
        // Kratos converts ceil(lowest) to int64; with no bucket it is
        // MaxFloat64, which Go on amd64 converts to the most negative
        // int64, and both that and 0 become 1.
        let rounded = ceil(lowest);
        if (1.0..i64::MAX as f64).contains(&rounded) {
            rounded as i64
        } else {
            1
        }
    }

    /// The settled estimates (max pass, min RT) at `now_micros`, from the
    /// memo when it is for the same bucket.
    fn settled(&mut self, now_micros: i64) -> (i64, i64) {
        let bucket = self.bucket(now_micros);
        if let Some(memo) = self.memo.filter(|m| m.bucket == bucket) {
            return (memo.max_pass, memo.min_rt);
        }
        let memo = Settled { bucket, max_pass: self.scan_max_pass(bucket), min_rt: self.scan_min_rt(bucket) };
        self.memo = Some(memo);
        (memo.max_pass, memo.min_rt)
    }

    /// Forgets the memo unless an add at `bucket` leaves it exact.
    fn added_at(&mut self, bucket: i64) {
        if self.memo.is_some_and(|m| m.bucket != bucket) {
            self.memo = None;
        }
    }

    /// `max_pass × min_rt × buckets per second / 1000`, floored as Kratos'
    /// `int64(math.Floor(float64(product)/1000.0) + 0.5)`.
    fn capacity(&self, max_pass: i64, min_rt: i64) -> u64 {
        let product = max_pass.saturating_mul(min_rt).saturating_mul(self.buckets_per_second);
        (floor(product as f64 / 1000.0) + 0.5) as u64
    }

    /// The most requests completed in one settled bucket, at least 1
    /// (Kratos' `maxPASS`, whose value is cached for one bucket length).
    pub fn max_pass(&mut self, now_micros: i64) -> u64 {
        if let Some(value) = self.fresh(self.max_pass_cache, now_micros) {
            return value as u64;
        }
        let value = self.settled(now_micros).0;
        self.max_pass_cache = Some(Cached { value, at_micros: now_micros });
        value as u64
    }

    /// The lowest average RT of a settled bucket in whole milliseconds,
    /// rounded up, at least 1 (Kratos' `minRT`, cached for one bucket
    /// length).
    pub fn min_rt_millis(&mut self, now_micros: i64) -> u64 {
        if let Some(value) = self.fresh(self.min_rt_cache, now_micros) {
            return value as u64;
        }
        let value = self.settled(now_micros).1;
        self.min_rt_cache = Some(Cached { value, at_micros: now_micros });
        value as u64
    }

    /// The capacity (Kratos' `maxInFlight`), refreshing the caches.
    pub fn max_in_flight(&mut self, now_micros: i64) -> u64 {
        let max_pass = self.max_pass(now_micros) as i64;
        let min_rt = self.min_rt_millis(now_micros) as i64;
        self.capacity(max_pass, min_rt)
    }

    /// The capacity as [`max_in_flight`](Self::max_in_flight) would answer,
    /// leaving Kratos' caches as they are: a decision reports it without
    /// changing when Kratos would next recompute. (It may fill the memo,
    /// which changes no answer.)
    pub fn peek_max_in_flight(&mut self, now_micros: i64) -> u64 {
        let (max_pass, min_rt) =
            match (self.fresh(self.max_pass_cache, now_micros), self.fresh(self.min_rt_cache, now_micros)) {
                (Some(max_pass), Some(min_rt)) => (max_pass, min_rt),
                (max_pass, min_rt) => {
                    let settled = self.settled(now_micros);
                    (max_pass.unwrap_or(settled.0), min_rt.unwrap_or(settled.1))
                }
            };
        self.capacity(max_pass, min_rt)
    }

    /// Whether `in_flight` exceeds the capacity (and 1). The capacity is
    /// computed only when more than one request is in flight, as Kratos'
    /// short-circuit does: that keeps its caches the same.
    fn over_capacity(&mut self, now_micros: i64) -> bool {
        self.in_flight > 1 && self.in_flight > self.max_in_flight(now_micros)
    }

    /// Whether a request arriving at `now_micros` is shed (Kratos'
    /// `shouldDrop`); records when shedding begins and ends.
    pub fn should_drop(&mut self, now_micros: i64, load: Load) -> bool {
        // Kratos' `cpu < threshold`, where a NaN reading counts as below:
        // nothing is shed on a reading that means nothing.
        let over = load.cpu_usage >= self.config.cpu_threshold;
        if !over {
            let Some(since) = self.drop_since else {
                return false;
            };
            if now_micros.saturating_sub(since) <= self.config.cool_down_micros {
                return self.over_capacity(now_micros);
            }
            self.drop_since = None;
            return false;
        }
        let drop = self.over_capacity(now_micros);
        if drop && self.drop_since.is_none() {
            self.drop_since = Some(now_micros);
        }
        drop
    }

    /// Admits a request at `now_micros` unless BBR sheds it (Kratos'
    /// `Allow`). The decision's `limit` is the capacity and `remaining` the
    /// room under it (both only advice while the CPU is below the
    /// threshold, when nothing is shed); a refusal's `retry_after` is 0:
    /// room frees when a request in flight ends, which nothing foresees.
    pub fn try_acquire(&mut self, now_micros: i64, load: Load) -> Result<(BbrPermit, Decision), Decision> {
        let drop = self.should_drop(now_micros, load);
        let limit = self.peek_max_in_flight(now_micros);
        if drop {
            return Err(Decision::refused(limit, limit.saturating_sub(self.in_flight), 0, 0, 0));
        }
        self.in_flight += 1;
        let decision = Decision::allowed(limit, limit.saturating_sub(self.in_flight), 0, 0);
        Ok((BbrPermit { start_micros: now_micros }, decision))
    }

    /// A request admitted with `permit` ended at `now_micros`: records its
    /// RT (whole milliseconds, rounded up; not when 0) and one completion,
    /// as the function Kratos' `Allow` returns.
    pub fn release(&mut self, permit: BbrPermit, now_micros: i64) {
        let elapsed = now_micros.saturating_sub(permit.start_micros).max(0);
        let rt_millis = ceil_div(elapsed as u64, 1000);
        let bucket = self.bucket(now_micros);
        self.added_at(bucket);
        if rt_millis > 0 {
            self.rts.add(bucket, rt_millis);
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        self.passes.add(bucket, 1);
    }

    /// The statistics at `now_micros` (Kratos' `Stat`; like it, this
    /// refreshes the cached estimates).
    pub fn stats(&mut self, now_micros: i64, load: Load) -> BbrStats {
        BbrStats {
            cpu_usage: load.cpu_usage,
            min_rt_millis: self.min_rt_millis(now_micros),
            max_pass: self.max_pass(now_micros),
            max_in_flight: self.max_in_flight(now_micros),
            in_flight: self.in_flight,
        }
    }

    /// Adds `count` completions at `now_micros` without a permit (Kratos'
    /// `passStat.Add`): for statistics measured elsewhere, and the
    /// translated tests.
    pub fn record_passes(&mut self, now_micros: i64, count: u64) {
        let bucket = self.bucket(now_micros);
        self.added_at(bucket);
        self.passes.add(bucket, count);
    }

    /// Adds one RT sample in milliseconds at `now_micros` without a permit
    /// (Kratos' `rtStat.Add`).
    pub fn record_rt(&mut self, now_micros: i64, rt_millis: u64) {
        let bucket = self.bucket(now_micros);
        self.added_at(bucket);
        self.rts.add(bucket, rt_millis);
    }
}

/// `f64::floor` without std (the core is `no_std`): exact for every value.
pub(crate) fn floor(x: f64) -> f64 {
    if !x.is_finite() || x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    let truncated = x as i64 as f64;
    if truncated > x {
        truncated - 1.0
    } else {
        truncated
    }
}

/// `f64::ceil` without std.
pub(crate) fn ceil(x: f64) -> f64 {
    -floor(-x)
}

#[cfg(test)]
mod kratos_tests;
