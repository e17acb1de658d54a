//! [`RateLimiter`]: Guava's `RateLimiter`, shareable between threads.
//!
//! The semantics are those of [`SmoothRateLimiter`] in the core (Guava 31.1,
//! bit for bit); this module adds the clock, the sleeping and the locking.
//!
//! ## Concurrency
//!
//! The state machine sits in a [`SeqCell`]. A decision reads the clock,
//! takes a copy of the state, decides on the copy at `max(clock, time of the
//! latest decision)`, and publishes the result only if nobody published
//! since the copy was taken (otherwise it decides again on a fresh copy). A
//! refusal writes nothing. The times fed to the state machine therefore
//! never go backwards, exactly as if each decision had read the clock inside
//! Guava's `synchronized` block. Sleeping always happens afterwards.

use std::time::Duration;

use ratekeeper_core::smooth::{DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use ratekeeper_core::{Argument, Error, SmoothKind, SmoothRateLimiter};

use crate::clock::{duration_to_micros, micros_to_duration, Clock, MonotonicClock};
use crate::seq_cell::{Backoff, SeqCell};
use crate::units::micros_from_duration;

/// A rate limiter with Guava's `RateLimiter` semantics (`SmoothBursty` or
/// `SmoothWarmingUp`), safe to share between threads (`&self` everywhere;
/// wrap it in an `Arc` to share ownership).
///
/// ```no_run
/// use ratekeeper::RateLimiter;
///
/// let limiter = RateLimiter::create(2.0)?; // 2 permits per second
/// for task in ["a", "b", "c"] {
///     limiter.acquire(1)?; // sleeps as needed: one task every 500 ms
///     println!("running {task}");
/// }
/// if !limiter.try_acquire(1, std::time::Duration::ZERO)? {
///     println!("busy, try later");
/// }
/// # Ok::<(), ratekeeper::Error>(())
/// ```
///
/// Like Guava's, it pre-consumes: a request of any size is granted as soon
/// as the limiter is free, and the *next* request waits for it to be paid
/// off. `acquire(100)` on an idle limiter at 1 permit/s returns at once, and
/// the following `acquire(1)` waits 100 s.
#[derive(Debug)]
pub struct RateLimiter<C: Clock = MonotonicClock> {
    state: SeqCell<SmoothRateLimiter, 9>,
    clock: C,
    /// The clock's reading when the limiter was created: Guava's stopwatch
    /// starts at creation, and the core counts from 0.
    origin_micros: i64,
}

impl RateLimiter<MonotonicClock> {
    /// Guava's `RateLimiter.create(permitsPerSecond)`: a `SmoothBursty`
    /// limiter that saves up at most one second of permits.
    ///
    /// Errors when `permits_per_second` is not positive or is NaN
    /// (`f64::INFINITY` is accepted, as in Guava).
    pub fn create(permits_per_second: f64) -> Result<Self, Error> {
        Self::builder(permits_per_second).build()
    }

    /// Guava's `RateLimiter.create(permitsPerSecond, warmupPeriod)`: a
    /// `SmoothWarmingUp` limiter with cold factor 3 that starts cold and
    /// reaches its stable rate after `warmup` of saturated use.
    ///
    /// Errors when `permits_per_second` is not positive or is NaN.
    pub fn create_warming_up(permits_per_second: f64, warmup: Duration) -> Result<Self, Error> {
        Self::builder(permits_per_second).warmup(warmup).build()
    }

    /// A builder for other burst lengths, cold factors or clocks.
    pub fn builder(permits_per_second: f64) -> RateLimiterBuilder<MonotonicClock> {
        RateLimiterBuilder {
            permits_per_second,
            max_burst_seconds: DEFAULT_MAX_BURST_SECONDS,
            warmup: None,
            cold_factor: DEFAULT_COLD_FACTOR,
            clock: MonotonicClock::new(),
        }
    }
}

impl<C: Clock> RateLimiter<C> {
    /// Wraps a core state machine created at the current time of `clock`.
    pub fn from_core(limiter: SmoothRateLimiter, clock: C) -> Self {
        let origin_micros = clock.now_micros();
        RateLimiter { state: SeqCell::new(&limiter, 0), clock, origin_micros }
    }

    /// Microseconds since the limiter was created.
    #[inline]
    fn now_micros(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin_micros)
    }

    /// Runs `f` on the state machine atomically, at the current time.
    #[inline]
    fn with_state<R>(&self, f: impl FnMut(&mut SmoothRateLimiter, i64) -> R) -> R {
        self.state.update(self.now_micros(), f)
    }

    /// Guava's `acquire(permits)`: takes `permits`, sleeping until they are
    /// granted, and returns the time slept.
    ///
    /// Errors, taking nothing, when `permits` is 0 or above `i32::MAX`.
    pub fn acquire(&self, permits: u32) -> Result<Duration, Error> {
        let wait = self.with_state(|s, now| s.reserve(permits, now))?;
        if wait > 0 {
            self.clock.sleep_micros(wait);
        }
        Ok(micros_to_duration(wait))
    }

    /// Guava's `tryAcquire(permits, timeout)`: takes `permits` if they can be
    /// granted within `timeout`, sleeping until then, and returns `true`;
    /// returns `false` at once, taking nothing, if they cannot.
    ///
    /// Errors, taking nothing, when `permits` is 0 or above `i32::MAX`.
    #[inline]
    pub fn try_acquire(&self, permits: u32, timeout: Duration) -> Result<bool, Error> {
        ratekeeper_core::smooth::check_permits(permits)?;
        match self.try_reserve_micros(permits, duration_to_micros(timeout)) {
            Some(wait) => {
                if wait > 0 {
                    self.clock.sleep_micros(wait);
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Takes `permits` now and returns how long the caller must wait before
    /// going ahead, without sleeping: for callers with their own timers
    /// (async runtimes, event loops). [`acquire`](Self::acquire) is this
    /// followed by a sleep.
    pub fn reserve(&self, permits: u32) -> Result<Duration, Error> {
        let wait = self.with_state(|s, now| s.reserve(permits, now))?;
        Ok(micros_to_duration(wait))
    }

    /// Like [`try_acquire`](Self::try_acquire) without the sleep: `Some(wait)`
    /// when the permits were taken and the caller must wait `wait` (at most
    /// `timeout`), `None` when they could not be had within `timeout`.
    pub fn try_reserve(&self, permits: u32, timeout: Duration) -> Result<Option<Duration>, Error> {
        ratekeeper_core::smooth::check_permits(permits)?;
        Ok(self.try_reserve_micros(permits, duration_to_micros(timeout)).map(micros_to_duration))
    }

    /// The hot path of `try_acquire`, in the core's microseconds, for
    /// `permits` already checked: `Some(wait)` when taken, `None` when
    /// refused. (Returning the core's `Result` through here instead costs a
    /// tenth of the call: the error type is too big for registers.)
    #[inline]
    fn try_reserve_micros(&self, permits: u32, timeout_micros: i64) -> Option<i64> {
        let now = self.now_micros();
        let mut backoff = Backoff::default();
        loop {
            let copy = self.state.read_unchecked();
            let time = copy.time(now);
            let mut state: SmoothRateLimiter = copy.value();
            match state.try_reserve(permits, timeout_micros, time) {
                // A refusal changes nothing, so there is nothing to publish;
                // but it must have been made on a consistent copy.
                Ok(None) | Err(_) if self.state.unchanged_since(&copy) => return None,
                Ok(Some(wait)) if self.state.try_write_hot(&copy, time, &state) => return Some(wait),
                _ => backoff.wait(),
            }
        }
    }

    /// How long a request made now would wait, without taking anything
    /// (guava#3044, #3446). Guava grants a request of any size at the same
    /// moment, so `permits` changes nothing but is checked like everywhere
    /// else.
    pub fn time_until_available(&self, permits: u32) -> Result<Duration, Error> {
        ratekeeper_core::smooth::check_permits(permits)?;
        let now = self.now_micros();
        let copy = self.state.read();
        Ok(micros_to_duration(copy.value::<SmoothRateLimiter>().time_until_available_micros(copy.time(now))))
    }

    /// Whether `try_acquire(permits, timeout)` would succeed now, without
    /// taking anything (Guava's package-private `canAcquire`).
    pub fn can_acquire(&self, permits: u32, timeout: Duration) -> Result<bool, Error> {
        ratekeeper_core::smooth::check_permits(permits)?;
        let now = self.now_micros();
        let copy = self.state.read();
        Ok(copy.value::<SmoothRateLimiter>().can_acquire(duration_to_micros(timeout), copy.time(now)))
    }

    /// Guava's `setRate`. Requests already waiting keep their wait; the next
    /// request still pays for the previous one at the old rate.
    ///
    /// Errors, changing nothing, when `permits_per_second` is not positive or
    /// is NaN.
    pub fn set_rate(&self, permits_per_second: f64) -> Result<(), Error> {
        self.with_state(|s, now| s.set_rate(permits_per_second, now))
    }

    /// Guava's `getRate`, bit for bit.
    pub fn rate(&self) -> f64 {
        self.state.get().rate()
    }

    /// Bursty or warming up, with the fixed parameters.
    pub fn kind(&self) -> SmoothKind {
        self.state.get().kind()
    }

    /// A copy of the core state machine, for inspection.
    pub fn snapshot(&self) -> SmoothRateLimiter {
        self.state.get()
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Consumes the limiter and returns its state machine.
    pub fn into_core(self) -> SmoothRateLimiter {
        self.state.get()
    }
}

/// Builds a [`RateLimiter`] with a non-default burst, warm-up, cold factor or
/// clock. Start from [`RateLimiter::builder`].
#[derive(Debug, Clone)]
pub struct RateLimiterBuilder<C> {
    permits_per_second: f64,
    max_burst_seconds: f64,
    warmup: Option<Duration>,
    cold_factor: f64,
    clock: C,
}

impl<C: Clock> RateLimiterBuilder<C> {
    /// For a bursty limiter: how many seconds of permits it saves up while
    /// idle (Guava's `maxBurstSeconds`; default 1.0).
    pub fn max_burst_seconds(mut self, seconds: f64) -> Self {
        self.max_burst_seconds = seconds;
        self
    }

    /// Makes a warming-up limiter with this warm-up period (Guava's
    /// `SmoothWarmingUp`).
    pub fn warmup(mut self, warmup: Duration) -> Self {
        self.warmup = Some(warmup);
        self
    }

    /// For a warming-up limiter: how much slower than the stable rate it runs
    /// when cold (default 3.0, Guava's hard-coded value).
    pub fn cold_factor(mut self, cold_factor: f64) -> Self {
        self.cold_factor = cold_factor;
        self
    }

    /// Uses another clock, such as an `Arc<ManualClock>` in tests.
    pub fn clock<C2: Clock>(self, clock: C2) -> RateLimiterBuilder<C2> {
        RateLimiterBuilder {
            permits_per_second: self.permits_per_second,
            max_burst_seconds: self.max_burst_seconds,
            warmup: self.warmup,
            cold_factor: self.cold_factor,
            clock,
        }
    }

    /// Builds the limiter, created now on its clock.
    ///
    /// Errors on a rate that is not positive or is NaN, a negative or
    /// infinite burst, a cold factor below 1, or a burst or warm-up of
    /// `i64::MAX` microseconds or more (the rule of every duration).
    pub fn build(self) -> Result<RateLimiter<C>, Error> {
        let core = match self.warmup {
            None => SmoothRateLimiter::bursty(self.permits_per_second, self.max_burst_seconds)?,
            Some(warmup) => {
                let warmup_micros = micros_from_duration(Argument::Warmup, warmup)?;
                SmoothRateLimiter::warming_up(self.permits_per_second, warmup_micros, self.cold_factor)?
            }
        };
        Ok(RateLimiter::from_core(core, self.clock))
    }
}

/// A wait as Guava's `acquire` returns it: `1.0 * micros / 1e6` seconds.
/// Bindings use this so that every language reports the same double.
pub fn wait_as_seconds(wait: Duration) -> f64 {
    duration_to_micros(wait) as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;

    fn manual(rate: f64) -> (Arc<ManualClock>, RateLimiter<Arc<ManualClock>>) {
        let clock = Arc::new(ManualClock::new());
        let limiter = RateLimiter::builder(rate).clock(Arc::clone(&clock)).build().unwrap();
        (clock, limiter)
    }

    #[test]
    fn guava_documented_example_on_a_manual_clock() {
        let (clock, limiter) = manual(1.0);
        let waits: Vec<_> = (1..=5).map(|p| limiter.acquire(p).unwrap().as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 3, 4]);
        assert_eq!(clock.now(), Duration::from_secs(10));
    }

    #[test]
    fn try_acquire_refuses_without_consuming() {
        let (clock, limiter) = manual(4.0);
        assert!(limiter.try_acquire(1, Duration::ZERO).unwrap());
        assert!(!limiter.try_acquire(1, Duration::ZERO).unwrap());
        assert!(!limiter.try_acquire(1, Duration::from_micros(249_999)).unwrap());
        assert_eq!(clock.now(), Duration::ZERO);
        assert!(limiter.try_acquire(1, Duration::from_millis(250)).unwrap());
        assert_eq!(clock.now(), Duration::from_millis(250));
    }

    #[test]
    fn time_until_available_and_can_acquire_do_not_consume() {
        let (clock, limiter) = manual(2.0);
        limiter.acquire(1).unwrap();
        limiter.reserve(1).unwrap();
        assert_eq!(limiter.time_until_available(1).unwrap(), Duration::from_secs(1));
        assert_eq!(limiter.time_until_available(1).unwrap(), Duration::from_secs(1));
        assert!(!limiter.can_acquire(1, Duration::ZERO).unwrap());
        assert!(limiter.can_acquire(1, Duration::from_secs(1)).unwrap());
        clock.advance(Duration::from_millis(1_500));
        assert_eq!(limiter.time_until_available(3).unwrap(), Duration::ZERO);
        assert!(limiter.time_until_available(0).is_err());
    }

    #[test]
    fn errors_leave_the_limiter_unchanged() {
        let (_clock, limiter) = manual(5.0);
        limiter.acquire(2).unwrap();
        let before = limiter.snapshot();
        assert!(matches!(limiter.acquire(0), Err(Error::InvalidArgument(a)) if a.name() == "permits"));
        assert!(limiter.try_acquire(i32::MAX as u32 + 1, Duration::ZERO).is_err());
        assert!(limiter.set_rate(f64::NAN).is_err());
        assert!(limiter.set_rate(-1.0).is_err());
        assert_eq!(limiter.snapshot(), before);
        assert_eq!(limiter.rate(), 5.0);
    }

    #[test]
    fn builder_validates_and_builds_each_kind() {
        assert!(RateLimiter::create(0.0).is_err());
        assert!(RateLimiter::builder(1.0).max_burst_seconds(-1.0).build().is_err());
        assert!(RateLimiter::builder(1.0).warmup(Duration::from_secs(1)).cold_factor(0.0).build().is_err());
        let l = RateLimiter::builder(1.0).max_burst_seconds(10.0).build().unwrap();
        assert_eq!(l.kind(), SmoothKind::Bursty { max_burst_seconds: 10.0 });
        let l = RateLimiter::create_warming_up(1.0, Duration::from_secs(2)).unwrap();
        assert_eq!(l.kind(), SmoothKind::WarmingUp { warmup_micros: 2_000_000, cold_factor: 3.0 });
    }

    #[test]
    fn set_rate_applies_to_later_requests() {
        let (_clock, limiter) = manual(1.0);
        limiter.acquire(1).unwrap();
        limiter.set_rate(10.0).unwrap();
        assert_eq!(limiter.rate(), 10.0);
        // The next request still pays for the previous one at the old rate.
        assert_eq!(limiter.acquire(1).unwrap(), Duration::from_secs(1));
        assert_eq!(limiter.acquire(1).unwrap(), Duration::from_millis(100));
    }

    #[test]
    fn wait_as_seconds_matches_guava() {
        assert_eq!(wait_as_seconds(Duration::from_micros(1_001)), 1_001.0 / 1e6);
        assert_eq!(wait_as_seconds(Duration::ZERO), 0.0);
    }

    #[test]
    fn threads_never_take_more_than_the_schedule_allows() {
        // 8 threads race for permits at 1000/s on a real clock for ~200 ms.
        // With no burst the bound is rate × elapsed, plus the first grant
        // (made at once and paid for by the next one).
        let limiter = Arc::new(RateLimiter::builder(1000.0).max_burst_seconds(0.0).build().unwrap());
        let start = std::time::Instant::now();
        let granted: u64 = (0..8)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                std::thread::spawn(move || {
                    let mut n = 0u64;
                    let t0 = std::time::Instant::now();
                    while t0.elapsed() < Duration::from_millis(200) {
                        if limiter.try_acquire(1, Duration::ZERO).unwrap() {
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum();
        let elapsed = start.elapsed().as_secs_f64();
        let bound = (1000.0 * elapsed).floor() as u64 + 1;
        assert!(granted <= bound, "granted {granted} > bound {bound} in {elapsed}s");
        // Not vacuous: permits were granted (how many depends on how much
        // CPU the threads got, which a loaded machine does not promise).
        assert!(granted >= 10, "granted only {granted} in {elapsed}s");
    }
}
