//! Guava's `SmoothRateLimiter` — `SmoothBursty` and `SmoothWarmingUp` — as a
//! plain state machine.
//!
//! This module owns the semantics of Guava 31.1's `RateLimiter` and nothing
//! else: no clock (every call takes `now_micros`, whole microseconds since the
//! limiter was created, which is what Guava's `SleepingStopwatch.readMicros`
//! returns), no lock, no sleeping, no allocation. The std crate adds those.
//!
//! Every expression below follows Guava's source operation by operation, in
//! the same order and with the same types, because the point is to give the
//! same answers as Guava to the microsecond, including its corner cases:
//!
//! * Java's truncating `(long)` casts of waits (`(long) (freshPermits *
//!   stableIntervalMicros)`), and the *wrapping* `long` sum of the two parts of
//!   a wait;
//! * the saturating `nextFreeTicketMicros` (`LongMath.saturatedAdd`);
//! * `Math.min`'s NaN propagation (a zero warm-up makes the cool-down interval
//!   `0.0 / 0.0`);
//! * the unclamped rescale of stored permits on `setRate`
//!   (`storedPermits * maxPermits / oldMaxPermits`);
//! * `+Infinity` accepted as a rate (the stable interval becomes 0, and a
//!   later finite rate starts a bursty limiter full, a warming-up one empty);
//! * the warm-up's cool-down interval, `warmupPeriodMicros / maxPermits`,
//!   instead of the stable interval.
//!
//! Guava pre-consumes: a request of any size is granted at
//! [`earliest_available_micros`](SmoothRateLimiter::earliest_available_micros)
//! and the *next* request pays for it. So the wait returned by
//! [`reserve`](SmoothRateLimiter::reserve) is the debt left by earlier
//! requests, not the cost of this one.

use crate::error::{Argument, Error};
use crate::java;
use crate::packed::Packed;

/// Microseconds in a second, as Guava's `SECONDS.toMicros(1L)` converted to
/// `double`.
const MICROS_PER_SECOND: f64 = 1_000_000.0;

/// The largest permit count Guava accepts: its `permits` are a Java `int`.
pub const MAX_PERMITS_PER_REQUEST: u32 = i32::MAX as u32;

/// Guava's default cold factor for `RateLimiter.create(rate, warmup, unit)`.
pub const DEFAULT_COLD_FACTOR: f64 = 3.0;

/// Guava's default burst for `RateLimiter.create(rate)`: one second of permits.
pub const DEFAULT_MAX_BURST_SECONDS: f64 = 1.0;

/// A Guava `SmoothRateLimiter`: bursty or warming up.
///
/// Build one with [`bursty`](Self::bursty) or
/// [`warming_up`](Self::warming_up); the limiter is created at time 0.
#[derive(Debug, Clone, PartialEq)]
pub struct SmoothRateLimiter {
    /// Guava's `storedPermits`: permits saved up while the limiter was unused.
    stored_permits: f64,
    /// Guava's `maxPermits`: the most permits that can be saved up.
    max_permits: f64,
    /// Guava's `stableIntervalMicros`: `1e6 / permitsPerSecond`.
    stable_interval_micros: f64,
    /// Guava's `nextFreeTicketMicros`: when the next request may be granted.
    /// Can lie in the past (the limiter was idle) or the future (in debt).
    next_free_ticket_micros: i64,
    shape: Shape,
}

/// Which of Guava's two subclasses this limiter is, with its own fields.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// Guava's `SmoothBursty`: stored permits cost nothing.
    Bursty {
        /// How many seconds of permits can be saved up.
        max_burst_seconds: f64,
    },
    /// Guava's `SmoothWarmingUp`: stored permits above the threshold cost more
    /// than fresh ones, so a cold limiter starts slowly.
    WarmingUp {
        warmup_period_micros: i64,
        cold_factor: f64,
        /// Slope of the line from the stable interval (at `threshold_permits`)
        /// to the cold interval (at `max_permits`).
        slope: f64,
        threshold_permits: f64,
    },
}

/// Which kind of smooth limiter, and its fixed parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SmoothKind {
    /// `SmoothBursty` with this many seconds of burst.
    Bursty {
        /// Seconds of permits that can be saved up while idle.
        max_burst_seconds: f64,
    },
    /// `SmoothWarmingUp` with this warm-up period and cold factor.
    WarmingUp {
        /// The warm-up period in microseconds.
        warmup_micros: i64,
        /// The cold interval divided by the stable interval.
        cold_factor: f64,
    },
}

fn check_rate(permits_per_second: f64) -> Result<(), Error> {
    // Guava: `checkArgument(permitsPerSecond > 0.0 && !Double.isNaN(permitsPerSecond))`.
    // +Infinity passes, as in Guava.
    if permits_per_second > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_float(Argument::PermitsPerSecond, permits_per_second))
    }
}

/// Guava's `checkPermits`, with the upper bound of Java's `int`.
#[inline]
pub fn check_permits(permits: u32) -> Result<(), Error> {
    if permits == 0 || permits > MAX_PERMITS_PER_REQUEST {
        Err(Error::invalid_int(Argument::Permits, i64::from(permits)))
    } else {
        Ok(())
    }
}

/// A permit count from a binding's integer type: the same check as
/// [`check_permits`], with negative and oversized values reported as given.
pub fn permits_from_i64(permits: i64) -> Result<u32, Error> {
    match u32::try_from(permits) {
        Ok(p) if (1..=MAX_PERMITS_PER_REQUEST).contains(&p) => Ok(p),
        _ => Err(Error::invalid_int(Argument::Permits, permits)),
    }
}

impl SmoothRateLimiter {
    /// Guava's `SmoothBursty`: `RateLimiter.create(permitsPerSecond)` when
    /// `max_burst_seconds` is 1.0 ([`DEFAULT_MAX_BURST_SECONDS`]).
    ///
    /// Starts with no stored permits, as Guava does; the first request is
    /// granted at once all the same, because of pre-consumption.
    ///
    /// Errors: `permits_per_second` not positive or NaN (`+Infinity` is
    /// accepted, as in Guava); `max_burst_seconds` negative, NaN, or
    /// `i64::MAX` microseconds or more (infinite included), the bound of
    /// every duration ([`Argument::MaxBurstSeconds`]).
    pub fn bursty(permits_per_second: f64, max_burst_seconds: f64) -> Result<Self, Error> {
        // Not negative (not even by less than a microsecond), and within the
        // rule of every duration in seconds (`crate::duration`).
        if !(max_burst_seconds >= 0.0 && crate::duration::micros_from_secs(max_burst_seconds).is_some()) {
            return Err(Error::invalid_float(Argument::MaxBurstSeconds, max_burst_seconds));
        }
        Self::create(Shape::Bursty { max_burst_seconds }, permits_per_second)
    }

    /// Guava's `SmoothWarmingUp`: `RateLimiter.create(permitsPerSecond,
    /// warmupPeriod, MICROSECONDS)` when `cold_factor` is 3.0
    /// ([`DEFAULT_COLD_FACTOR`]).
    ///
    /// Starts cold (all `maxPermits` stored), as Guava does.
    ///
    /// Errors: `permits_per_second` not positive or NaN; `warmup_micros`
    /// negative (Guava's `warmupPeriod must not be negative`); `cold_factor`
    /// below 1.0, NaN or infinite (Guava does not check its package-private
    /// cold factor; a factor below 1 would make a cold limiter *faster*).
    pub fn warming_up(permits_per_second: f64, warmup_micros: i64, cold_factor: f64) -> Result<Self, Error> {
        if warmup_micros < 0 {
            return Err(Error::invalid_int(Argument::Warmup, warmup_micros));
        }
        if !(cold_factor >= 1.0 && cold_factor.is_finite()) {
            return Err(Error::invalid_float(Argument::ColdFactor, cold_factor));
        }
        let shape =
            Shape::WarmingUp { warmup_period_micros: warmup_micros, cold_factor, slope: 0.0, threshold_permits: 0.0 };
        Self::create(shape, permits_per_second)
    }

    /// Guava's factories: construct with every field zero, then `setRate` at
    /// time 0.
    fn create(shape: Shape, permits_per_second: f64) -> Result<Self, Error> {
        let mut limiter = SmoothRateLimiter {
            stored_permits: 0.0,
            max_permits: 0.0,
            stable_interval_micros: 0.0,
            next_free_ticket_micros: 0,
            shape,
        };
        limiter.set_rate(permits_per_second, 0)?;
        Ok(limiter)
    }

    /// The kind of limiter and its fixed parameters.
    pub fn kind(&self) -> SmoothKind {
        match self.shape {
            Shape::Bursty { max_burst_seconds } => SmoothKind::Bursty { max_burst_seconds },
            Shape::WarmingUp { warmup_period_micros, cold_factor, .. } => {
                SmoothKind::WarmingUp { warmup_micros: warmup_period_micros, cold_factor }
            }
        }
    }

    /// Guava's `setRate`: resync to `now_micros` at the old rate, then change
    /// the rate. Stored permits are rescaled in proportion to the new
    /// maximum, without clamping, exactly as Guava does.
    ///
    /// On error the state is unchanged.
    pub fn set_rate(&mut self, permits_per_second: f64, now_micros: i64) -> Result<(), Error> {
        check_rate(permits_per_second)?;
        // SmoothRateLimiter.doSetRate(double, long)
        self.resync(now_micros);
        let stable_interval_micros = MICROS_PER_SECOND / permits_per_second;
        self.stable_interval_micros = stable_interval_micros;
        self.shape_set_rate(permits_per_second, stable_interval_micros);
        Ok(())
    }

    /// The `doSetRate(double, double)` of each subclass.
    fn shape_set_rate(&mut self, permits_per_second: f64, stable_interval_micros: f64) {
        let old_max_permits = self.max_permits;
        match &mut self.shape {
            Shape::Bursty { max_burst_seconds } => {
                self.max_permits = *max_burst_seconds * permits_per_second;
                if old_max_permits == f64::INFINITY {
                    // Guava: "if we don't special-case this, we would get
                    // storedPermits == NaN, below".
                    self.stored_permits = self.max_permits;
                } else {
                    self.stored_permits = if old_max_permits == 0.0 {
                        0.0 // initial state
                    } else {
                        self.stored_permits * self.max_permits / old_max_permits
                    };
                }
            }
            Shape::WarmingUp { warmup_period_micros, cold_factor, slope, threshold_permits } => {
                let warmup = *warmup_period_micros as f64;
                let cold_interval_micros = stable_interval_micros * *cold_factor;
                *threshold_permits = 0.5 * warmup / stable_interval_micros;
                self.max_permits = *threshold_permits + 2.0 * warmup / (stable_interval_micros + cold_interval_micros);
                *slope = (cold_interval_micros - stable_interval_micros) / (self.max_permits - *threshold_permits);
                if old_max_permits == f64::INFINITY {
                    self.stored_permits = 0.0;
                } else {
                    self.stored_permits = if old_max_permits == 0.0 {
                        self.max_permits // initial state is cold
                    } else {
                        self.stored_permits * self.max_permits / old_max_permits
                    };
                }
            }
        }
    }

    /// Guava's `getRate`: `1e6 / stableIntervalMicros`, bit for bit (so a
    /// rate of `5e-324` reads back as `0.0`, and `+Infinity` as `+Infinity`).
    #[inline]
    pub fn rate(&self) -> f64 {
        MICROS_PER_SECOND / self.stable_interval_micros
    }

    /// Guava's `reserve(permits)`: take `permits` now and return how many
    /// microseconds the caller must wait before going ahead (never negative).
    ///
    /// On error (`permits` is 0 or above `i32::MAX`) the state is unchanged.
    #[inline]
    pub fn reserve(&mut self, permits: u32, now_micros: i64) -> Result<i64, Error> {
        check_permits(permits)?;
        Ok(self.reserve_and_get_wait_length(permits, now_micros))
    }

    /// Guava's `tryAcquire(permits, timeout, MICROSECONDS)` without the sleep:
    /// `Some(wait)` when the permits were taken and the caller must wait
    /// `wait` microseconds (at most the timeout), `None` when they could not
    /// be had within `timeout_micros` and nothing was taken.
    ///
    /// A negative timeout counts as zero, as in Guava. On error the state is
    /// unchanged.
    #[inline]
    pub fn try_reserve(&mut self, permits: u32, timeout_micros: i64, now_micros: i64) -> Result<Option<i64>, Error> {
        check_permits(permits)?;
        if !self.can_acquire(timeout_micros, now_micros) {
            return Ok(None);
        }
        Ok(Some(self.reserve_and_get_wait_length(permits, now_micros)))
    }

    /// Guava's `canAcquire(nowMicros, timeoutMicros)`: whether a request made
    /// at `now_micros` would be granted within `timeout_micros` (negative
    /// counts as zero). Requests of every size give the same answer: Guava
    /// grants any request at the earliest available time and makes later
    /// requests pay. Takes nothing.
    #[inline]
    pub fn can_acquire(&self, timeout_micros: i64, now_micros: i64) -> bool {
        let timeout_micros = timeout_micros.max(0);
        java::lsub(self.next_free_ticket_micros, timeout_micros) <= now_micros
    }

    /// Guava's `queryEarliestAvailable`: the time (microseconds since
    /// creation) at which the next request will be granted. Takes nothing.
    #[inline]
    pub fn earliest_available_micros(&self) -> i64 {
        self.next_free_ticket_micros
    }

    /// How long a request made at `now_micros` would wait, without taking
    /// anything: `max(earliest_available - now, 0)`, the wait that
    /// [`reserve`](Self::reserve) would return. What guava#3044 and #3446 ask
    /// for.
    #[inline]
    pub fn time_until_available_micros(&self, now_micros: i64) -> i64 {
        // As `reserve` computes it: after the resync, which moves a ticket
        // in the past to now. (Subtracting first would wrap when Guava's
        // wrapping sum of a wait has left the ticket far below now.)
        if now_micros > self.next_free_ticket_micros {
            return 0;
        }
        java::lsub(self.next_free_ticket_micros, now_micros).max(0)
    }

    /// Guava's `storedPermits` as of the last operation (not resynced to a
    /// later time).
    pub fn stored_permits(&self) -> f64 {
        self.stored_permits
    }

    /// Guava's `maxPermits`.
    pub fn max_permits(&self) -> f64 {
        self.max_permits
    }

    /// Guava's `stableIntervalMicros`.
    pub fn stable_interval_micros(&self) -> f64 {
        self.stable_interval_micros
    }

    /// Guava's `reserveAndGetWaitLength`.
    #[inline]
    fn reserve_and_get_wait_length(&mut self, permits: u32, now_micros: i64) -> i64 {
        let moment_available = self.reserve_earliest_available(permits, now_micros);
        java::lsub(moment_available, now_micros).max(0)
    }

    /// Guava's `reserveEarliestAvailable`: returns the moment this request is
    /// granted and pushes the next free ticket past the cost of this one.
    #[inline]
    fn reserve_earliest_available(&mut self, required_permits: u32, now_micros: i64) -> i64 {
        self.resync(now_micros);
        let return_value = self.next_free_ticket_micros;
        let required = f64::from(required_permits);
        if matches!(self.shape, Shape::Bursty { .. }) && self.stored_permits >= required {
            // The same result as the general path below, with a shorter chain
            // of dependent floating-point operations: `min` picks `required`,
            // so no fresh permits are needed, `(long) (0.0 * interval)` is 0
            // (NaN → 0 when the interval is infinite), a bursty limiter's
            // stored permits cost nothing, and adding a zero wait leaves the
            // next free ticket where it is.
            self.stored_permits -= required;
            return return_value;
        }
        let stored_permits_to_spend = java::min(required, self.stored_permits);
        let fresh_permits = required - stored_permits_to_spend;
        let wait_micros = java::ladd(
            self.stored_permits_to_wait_time(self.stored_permits, stored_permits_to_spend),
            java::d2l(fresh_permits * self.stable_interval_micros),
        );
        self.next_free_ticket_micros = java::saturated_add(self.next_free_ticket_micros, wait_micros);
        self.stored_permits -= stored_permits_to_spend;
        return_value
    }

    /// Guava's `resync`: if the next free ticket is in the past, turn the idle
    /// time into stored permits (at the cool-down interval) and move the
    /// ticket to now. Time that goes backwards changes nothing.
    #[inline]
    fn resync(&mut self, now_micros: i64) {
        if now_micros > self.next_free_ticket_micros {
            let idle = java::lsub(now_micros, self.next_free_ticket_micros) as f64;
            let new_permits = idle / self.cool_down_interval_micros();
            self.stored_permits = java::min(self.max_permits, self.stored_permits + new_permits);
            self.next_free_ticket_micros = now_micros;
        }
    }

    /// Guava's `coolDownIntervalMicros` of each subclass: how long it takes
    /// to store one permit while idle.
    #[inline]
    fn cool_down_interval_micros(&self) -> f64 {
        match self.shape {
            Shape::Bursty { .. } => self.stable_interval_micros,
            Shape::WarmingUp { warmup_period_micros, .. } => warmup_period_micros as f64 / self.max_permits,
        }
    }

    /// Guava's `storedPermitsToWaitTime` of each subclass: the integral of the
    /// throttling function over `[stored - to_take, stored]`.
    #[inline]
    fn stored_permits_to_wait_time(&self, stored_permits: f64, permits_to_take: f64) -> i64 {
        match self.shape {
            Shape::Bursty { .. } => 0,
            Shape::WarmingUp { slope, threshold_permits, .. } => {
                let stable = self.stable_interval_micros;
                let permits_to_time = |permits: f64| stable + permits * slope;
                let mut permits_to_take = permits_to_take;
                let available_permits_above_threshold = stored_permits - threshold_permits;
                let mut micros: i64 = 0;
                // The integral over the climbing line, right of the threshold.
                if available_permits_above_threshold > 0.0 {
                    let permits_above_threshold_to_take = java::min(available_permits_above_threshold, permits_to_take);
                    let length = permits_to_time(available_permits_above_threshold)
                        + permits_to_time(available_permits_above_threshold - permits_above_threshold_to_take);
                    micros = java::d2l(permits_above_threshold_to_take * length / 2.0);
                    permits_to_take -= permits_above_threshold_to_take;
                }
                // The integral over the flat line, left of the threshold.
                java::ladd(micros, java::d2l(stable * permits_to_take))
            }
        }
    }
}

/// Words: the two that a decision changes first (stored permits, next free
/// ticket), then the rate-dependent ones, then the shape's.
impl Packed<9> for SmoothRateLimiter {
    /// `reserve` and `try_reserve` change only the stored permits and the
    /// next free ticket; `set_rate` changes the rest.
    const HOT: usize = 2;

    #[inline]
    fn pack(&self) -> [u64; 9] {
        let (tag, a, b, c, d) = match self.shape {
            Shape::Bursty { max_burst_seconds } => (0, max_burst_seconds.to_bits(), 0, 0, 0),
            Shape::WarmingUp { warmup_period_micros, cold_factor, slope, threshold_permits } => {
                (1, warmup_period_micros as u64, cold_factor.to_bits(), slope.to_bits(), threshold_permits.to_bits())
            }
        };
        [
            self.stored_permits.to_bits(),
            self.next_free_ticket_micros as u64,
            self.max_permits.to_bits(),
            self.stable_interval_micros.to_bits(),
            tag,
            a,
            b,
            c,
            d,
        ]
    }

    #[inline]
    fn unpack(w: [u64; 9]) -> Self {
        let shape = if w[4] == 0 {
            Shape::Bursty { max_burst_seconds: f64::from_bits(w[5]) }
        } else {
            Shape::WarmingUp {
                warmup_period_micros: w[5] as i64,
                cold_factor: f64::from_bits(w[6]),
                slope: f64::from_bits(w[7]),
                threshold_permits: f64::from_bits(w[8]),
            }
        };
        SmoothRateLimiter {
            stored_permits: f64::from_bits(w[0]),
            next_free_ticket_micros: w[1] as i64,
            max_permits: f64::from_bits(w[2]),
            stable_interval_micros: f64::from_bits(w[3]),
            shape,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bursty(rate: f64) -> SmoothRateLimiter {
        SmoothRateLimiter::bursty(rate, DEFAULT_MAX_BURST_SECONDS).unwrap()
    }

    /// Replays `acquire` calls the way Guava's blocking `acquire` does: the
    /// clock moves by each wait.
    fn acquire_all(limiter: &mut SmoothRateLimiter, now: &mut i64, permits: &[u32]) -> [i64; 8] {
        let mut waits = [0i64; 8];
        for (i, &p) in permits.iter().enumerate() {
            waits[i] = limiter.reserve(p, *now).unwrap();
            *now += waits[i];
        }
        waits
    }

    fn same_bits(a: &SmoothRateLimiter, b: &SmoothRateLimiter) -> bool {
        a.pack() == b.pack()
    }

    #[test]
    fn packing_round_trips_bit_for_bit() {
        let mut nan_state = SmoothRateLimiter::warming_up(1.0, 0, 3.0).unwrap();
        nan_state.reserve(1, 5).unwrap();
        for mut l in [
            bursty(5.0),
            bursty(f64::INFINITY),
            SmoothRateLimiter::bursty(1e-3, 0.0).unwrap(),
            SmoothRateLimiter::warming_up(2.0, 4_000_000, 3.0).unwrap(),
            SmoothRateLimiter::warming_up(1e9, i64::MAX, 10.0).unwrap(),
            nan_state,
        ] {
            let before = l.pack();
            l.reserve(7, 1_000).unwrap();
            l.try_reserve(1, 10, 2_000).unwrap();
            // A decision changes only the hot words.
            assert_eq!(before[SmoothRateLimiter::HOT..], l.pack()[SmoothRateLimiter::HOT..]);
            let back = SmoothRateLimiter::unpack(l.pack());
            assert!(same_bits(&l, &back), "{l:?} != {back:?}");
            assert_eq!(back.kind(), l.kind());
        }
    }

    #[test]
    fn guava_documented_example_pays_for_the_previous_request() {
        // create(1); acquire(1..=5): each waits for the one before it.
        let mut l = bursty(1.0);
        let mut now = 0;
        let waits = acquire_all(&mut l, &mut now, &[1, 2, 3, 4, 5]);
        assert_eq!(&waits[..5], &[0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn bursty_saves_one_second_of_permits() {
        let mut l = bursty(5.0);
        assert_eq!(l.reserve(1, 0), Ok(0));
        // Idle for 10 s: only 5 permits are stored (max_burst_seconds = 1).
        let now = 10_000_000;
        for _ in 0..5 {
            assert_eq!(l.reserve(1, now), Ok(0));
        }
        // The sixth is also granted at once (pre-consumption); the seventh waits.
        assert_eq!(l.reserve(1, now), Ok(0));
        assert_eq!(l.reserve(1, now), Ok(200_000));
    }

    #[test]
    fn try_reserve_respects_timeout_and_takes_nothing_on_refusal() {
        let mut l = bursty(1.0);
        assert_eq!(l.try_reserve(1, 0, 0), Ok(Some(0)));
        let before = l.clone();
        assert_eq!(l.try_reserve(1, 999_999, 0), Ok(None));
        assert_eq!(l, before);
        assert_eq!(l.try_reserve(1, 1_000_000, 0), Ok(Some(1_000_000)));
        // A negative timeout counts as zero.
        assert_eq!(l.try_reserve(1, i64::MIN, 2_000_000), Ok(Some(0)));
    }

    #[test]
    fn invalid_arguments_are_errors_and_change_nothing() {
        for rate in [0.0, -0.0, -1.0, f64::NAN, f64::NEG_INFINITY, -f64::MIN_POSITIVE] {
            assert!(SmoothRateLimiter::bursty(rate, 1.0).is_err(), "{rate}");
            assert!(SmoothRateLimiter::warming_up(rate, 1_000_000, 3.0).is_err(), "{rate}");
        }
        assert!(SmoothRateLimiter::warming_up(1.0, -1, 3.0).is_err());
        assert!(SmoothRateLimiter::warming_up(1.0, 1, 0.5).is_err());
        assert!(SmoothRateLimiter::warming_up(1.0, 1, f64::NAN).is_err());
        assert!(SmoothRateLimiter::bursty(1.0, -1.0).is_err());
        assert!(SmoothRateLimiter::bursty(1.0, f64::INFINITY).is_err());

        let mut l = bursty(5.0);
        l.reserve(3, 0).unwrap();
        let before = l.clone();
        assert!(l.reserve(0, 10).is_err());
        assert!(l.reserve(u32::MAX, 10).is_err());
        assert!(l.try_reserve(0, 0, 10).is_err());
        assert!(l.set_rate(0.0, 10).is_err());
        assert!(l.set_rate(f64::NAN, 10).is_err());
        assert_eq!(l, before);
    }

    #[test]
    fn permits_from_i64_checks_the_java_int_range() {
        assert_eq!(permits_from_i64(1), Ok(1));
        assert_eq!(permits_from_i64(i64::from(i32::MAX)), Ok(i32::MAX as u32));
        for bad in [0, -1, i64::from(i32::MAX) + 1, i64::MIN, i64::MAX] {
            assert_eq!(permits_from_i64(bad), Err(Error::invalid_int(Argument::Permits, bad)));
        }
    }

    #[test]
    fn infinite_rate_is_accepted_and_reads_back() {
        let mut l = bursty(f64::INFINITY);
        assert_eq!(l.rate(), f64::INFINITY);
        for _ in 0..3 {
            assert_eq!(l.reserve(i32::MAX as u32, 0), Ok(0));
        }
        // Back to a finite rate: Guava starts the bursty limiter full.
        l.set_rate(1.0, 0).unwrap();
        assert_eq!(l.stored_permits(), 1.0);
    }

    #[test]
    fn tiny_rate_reads_back_as_zero_and_saturates() {
        let mut l = bursty(f64::from_bits(1)); // 5e-324
        assert_eq!(l.rate(), 0.0);
        assert_eq!(l.try_reserve(1, 0, 0), Ok(Some(0)));
        assert_eq!(l.earliest_available_micros(), i64::MAX);
        assert_eq!(l.try_reserve(1, 0, i64::MAX - 1), Ok(None));
    }

    #[test]
    fn warming_up_starts_cold_and_speeds_up() {
        // Guava's testWarmUp shape: 2 permits/s, 4 s warm-up.
        let mut l = SmoothRateLimiter::warming_up(2.0, 4_000_000, 3.0).unwrap();
        assert_eq!(l.stored_permits(), l.max_permits());
        let mut now = 0;
        let mut waits = [0i64; 8];
        for w in waits.iter_mut() {
            *w = l.reserve(1, now).unwrap();
            now += *w;
        }
        // Cold requests cost up to 3 × the stable 500 ms, then fall to it.
        assert_eq!(waits[0], 0);
        assert!(waits[1] > 1_000_000, "{waits:?}");
        assert!(waits.windows(2).skip(1).all(|w| w[1] <= w[0]), "{waits:?}");
        assert_eq!(waits[7], 500_000);
    }

    #[test]
    fn zero_warmup_propagates_nan_like_java() {
        // Guava divides 0 by 0 for the cool-down interval; Math.min keeps the
        // NaN, and casting NaN to long gives 0.
        let mut l = SmoothRateLimiter::warming_up(1.0, 0, 3.0).unwrap();
        assert_eq!(l.reserve(1, 0), Ok(0));
        assert_eq!(l.reserve(1, 0), Ok(1_000_000));
        assert_eq!(l.reserve(1, 5_000_000), Ok(0));
        assert!(l.stored_permits().is_nan());
    }

    #[test]
    fn time_going_backwards_never_panics_or_mints_permits() {
        let mut l = bursty(10.0);
        l.reserve(1, 5_000_000).unwrap();
        let stored = l.stored_permits();
        assert_eq!(l.reserve(1, 0), Ok(5_000_000));
        assert!(l.stored_permits() <= stored);
        // Java's wrapping `long` subtraction: the wait to a time this far in
        // the past wraps negative and is clamped to zero. Nothing is minted.
        let stored = l.stored_permits();
        assert_eq!(l.reserve(1, i64::MIN), Ok(0));
        assert!(l.stored_permits() <= stored);
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/smooth.rs): a rate so small
    /// that Guava's wrapping `long` sum of a wait goes negative leaves the
    /// next free ticket far below zero; `time_until_available` then wrapped
    /// to a wait of 292,000 years where `reserve` waits 0.
    #[test]
    fn time_until_available_is_the_wait_of_reserve_after_a_wrapped_ticket() {
        let mut l = SmoothRateLimiter::warming_up(2.220446049250313e-16, 119, 1.0).unwrap();
        assert_eq!(l.reserve(8, 0), Ok(0));
        assert!(l.earliest_available_micros() < -(1 << 62), "{l:?}");
        assert_eq!(l.time_until_available_micros(8_192), 0);
        assert_eq!(l.reserve(2, 8_192), Ok(0));
    }

    #[test]
    fn time_until_available_does_not_consume() {
        let mut l = bursty(2.0);
        l.reserve(1, 0).unwrap();
        l.reserve(1, 0).unwrap();
        let before = l.clone();
        // Two requests at time 0: the second pushed the next ticket to 1 s.
        assert_eq!(l.time_until_available_micros(0), 1_000_000);
        assert_eq!(l.time_until_available_micros(600_000), 400_000);
        assert_eq!(l.time_until_available_micros(2_000_000), 0);
        assert!(!l.can_acquire(999_999, 0));
        assert!(l.can_acquire(1_000_000, 0));
        assert_eq!(l, before);
    }
}
