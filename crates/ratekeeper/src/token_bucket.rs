//! [`TokenBucket`]: Go's `golang.org/x/time/rate` limiter, shareable
//! between threads.
//!
//! The semantics are those of [`core::TokenBucket`](CoreTokenBucket) (state
//! in nanoseconds, x/time/rate's arithmetic); this module adds the clock,
//! the sleeping and the lock-free sharing ([`Shared`]).

use std::time::Duration;

use ratekeeper_core::token_bucket::{Reservation, TokenBucket as CoreTokenBucket};
use ratekeeper_core::{Admission, Decision, Error};

use crate::clock::{duration_to_micros, micros_to_duration, Clock, MonotonicClock};
use crate::shared::Shared;

/// A token bucket with x/time/rate's semantics, safe to share between
/// threads: `burst` tokens, full at creation, refilled at `rate` tokens per
/// second.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{ManualClock, TokenBucket};
///
/// let clock = Arc::new(ManualClock::new());
/// let bucket = TokenBucket::with_clock(10.0, 2, Arc::clone(&clock))?; // 10/s, burst 2
/// assert!(bucket.check(2).allowed);
/// let refused = bucket.check(1);
/// assert!(!refused.allowed);
/// assert_eq!(refused.retry_after_micros, 100_000);
/// clock.advance(Duration::from_millis(100));
/// assert!(bucket.check(1).allowed);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct TokenBucket<C: Clock = MonotonicClock> {
    inner: Shared<CoreTokenBucket, 5, C>,
}

impl TokenBucket<MonotonicClock> {
    /// Go's `NewLimiter(rate, burst)` on the monotonic clock.
    ///
    /// `rate` may be 0 (never refills) or `f64::INFINITY` (no limit). Errors
    /// on a negative or NaN rate, or a burst above `i64::MAX`.
    pub fn new(rate: f64, burst: u64) -> Result<Self, Error> {
        Self::with_clock(rate, burst, MonotonicClock::new())
    }
}

impl<C: Clock> TokenBucket<C> {
    /// Go's `NewLimiter(rate, burst)` on `clock` (an `Arc<ManualClock>` in
    /// tests, an [`AnyClock`](crate::AnyClock) in bindings).
    pub fn with_clock(rate: f64, burst: u64, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(CoreTokenBucket::new(rate, burst)?, clock))
    }

    /// Wraps a core state machine, whose time 0 becomes now on `clock`.
    pub fn from_core(core: CoreTokenBucket, clock: C) -> Self {
        TokenBucket { inner: Shared::new(core, clock) }
    }

    /// Go's `AllowN(now, cost)`: takes `cost` tokens if they are there, and
    /// says so with a [`Decision`]. Never waits.
    #[inline]
    pub fn check(&self, cost: u64) -> Decision {
        self.inner.decide(|b, now| b.check(cost, now))
    }

    /// The decision [`check`](Self::check) would make now, taking nothing.
    pub fn peek(&self, cost: u64) -> Decision {
        self.inner.read(|b, now| b.peek(cost, now))
    }

    /// Puts back `cost` tokens taken by [`check`](Self::check) that should
    /// not count, capped at the burst (while reservations hold the bucket
    /// in debt, only what exceeds the debt:
    /// [`Admission::refund`](ratekeeper_core::Admission::refund)). A
    /// reservation is given back with [`cancel`](Self::cancel).
    pub fn refund(&self, cost: u64) {
        self.inner.decide(|b, now| b.refund(cost, now))
    }

    /// Go's `ReserveN(now, n)`: takes `n` tokens, possibly from the future.
    /// Act after [`delay`](Self::delay), or give them back with
    /// [`cancel`](Self::cancel). Refused (`!ok()`) when `n` is above the
    /// burst.
    pub fn reserve_n(&self, n: u64) -> Reservation {
        self.inner.decide(|b, now| b.reserve_n(n, now))
    }

    /// Go's `Reservation.Delay()`: how long from now until the holder of
    /// `reservation` may act (`Duration::ZERO` if it may act now). A refused
    /// reservation gives the largest `Duration` the core can express (about
    /// 292,000 years): never.
    pub fn delay(&self, reservation: &Reservation) -> Duration {
        micros_to_duration(reservation.delay_micros(self.inner.now_micros()))
    }

    /// Go's `Reservation.Cancel()`: gives the tokens back as x/time/rate
    /// does, if the holder has not acted yet. Cancelling twice does nothing
    /// the second time.
    pub fn cancel(&self, reservation: &mut Reservation) {
        // The closure may run more than once: each run cancels a fresh copy,
        // and the copy of the run that was published is handed back.
        let r = *reservation;
        *reservation = self.inner.decide(|b, now| {
            let mut copy = r;
            b.cancel_at(&mut copy, now);
            copy
        });
    }

    /// Go's `WaitN(ctx, n)` with a deadline `timeout` from now: if the `n`
    /// tokens can be had by then, takes them, sleeps until they are due and
    /// returns the decision (its `wait_micros` is the time slept); otherwise
    /// returns a refusal at once, taking nothing. `Duration::MAX` waits as
    /// long as it takes.
    pub fn wait_n(&self, n: u64, timeout: Duration) -> Decision {
        let decision = self.reserve_within(n, timeout);
        if decision.allowed {
            self.inner.sleep_micros(decision.wait_micros);
        }
        decision
    }

    /// [`wait_n`](Self::wait_n) without the sleep, for callers with their
    /// own timers (async runtimes, event loops): the decision says how long
    /// to wait (`wait_micros`).
    pub fn reserve_within(&self, n: u64, timeout: Duration) -> Decision {
        let timeout = duration_to_micros(timeout);
        self.inner.decide(|b, now| b.check_within(n, now, timeout))
    }

    /// Go's `SetLimit`: refills up to now at the old rate, then changes it.
    /// Errors, changing nothing, on a negative or NaN rate.
    pub fn set_rate(&self, rate: f64) -> Result<(), Error> {
        self.inner.update(|b, now| b.set_rate(rate, now))
    }

    /// Go's `SetBurst`. Errors, changing nothing, above `i64::MAX`.
    pub fn set_burst(&self, burst: u64) -> Result<(), Error> {
        self.inner.update(|b, now| b.set_burst(burst, now))
    }

    /// Go's `Limit()`, with `rate.Inf` as `f64::INFINITY`.
    pub fn rate(&self) -> f64 {
        self.inner.get().rate()
    }

    /// Go's `Burst()`.
    pub fn burst(&self) -> u64 {
        self.inner.get().burst()
    }

    /// Go's `Tokens()`: tokens available now (negative while reservations
    /// are outstanding).
    pub fn tokens(&self) -> f64 {
        self.inner.read(|b, now| b.tokens_at(now))
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreTokenBucket {
        self.inner.get()
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        self.inner.clock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;

    fn manual(rate: f64, burst: u64) -> (Arc<ManualClock>, TokenBucket<Arc<ManualClock>>) {
        let clock = Arc::new(ManualClock::new());
        (Arc::clone(&clock), TokenBucket::with_clock(rate, burst, clock).unwrap())
    }

    #[test]
    fn wait_sleeps_on_the_clock() {
        let (clock, bucket) = manual(4.0, 1);
        assert_eq!(bucket.wait_n(1, Duration::ZERO).wait_micros, 0);
        assert!(!bucket.wait_n(1, Duration::from_millis(249)).allowed);
        let d = bucket.wait_n(1, Duration::from_millis(250));
        assert!(d.allowed);
        assert_eq!(d.wait_micros, 250_000);
        assert_eq!(clock.now(), Duration::from_millis(250));
        assert!(!bucket.wait_n(2, Duration::MAX).allowed, "above the burst");
    }

    #[test]
    fn reservations_can_be_cancelled_once() {
        let (clock, bucket) = manual(10.0, 1);
        assert!(bucket.check(1).allowed);
        let mut r = bucket.reserve_n(1);
        assert_eq!(bucket.delay(&r), Duration::from_millis(100));
        clock.advance(Duration::from_millis(40));
        assert_eq!(bucket.delay(&r), Duration::from_millis(60));
        bucket.cancel(&mut r);
        assert_eq!(r.tokens(), 0);
        assert!((bucket.tokens() - 0.4).abs() < 1e-12, "{}", bucket.tokens());
        let before = bucket.snapshot();
        bucket.cancel(&mut r);
        assert_eq!(bucket.snapshot(), before);
    }

    #[test]
    fn reconfiguring_keeps_state_and_validates() {
        let (clock, bucket) = manual(1.0, 5);
        assert!(bucket.check(5).allowed);
        clock.advance(Duration::from_secs(2));
        bucket.set_rate(10.0).unwrap();
        bucket.set_burst(3).unwrap();
        assert_eq!((bucket.rate(), bucket.burst()), (10.0, 3));
        assert_eq!(bucket.tokens(), 2.0);
        assert!(bucket.set_rate(f64::NAN).is_err());
        assert!(bucket.set_burst(u64::MAX).is_err());
        assert_eq!(bucket.rate(), 10.0);
        assert!(TokenBucket::new(-1.0, 1).is_err());
    }

    #[test]
    fn threads_never_take_more_than_rate_times_time_plus_burst() {
        let bucket = Arc::new(TokenBucket::new(1000.0, 10).unwrap());
        let start = std::time::Instant::now();
        let granted: u64 = (0..4)
            .map(|_| {
                let bucket = Arc::clone(&bucket);
                std::thread::spawn(move || {
                    let t0 = std::time::Instant::now();
                    let mut n = 0;
                    while t0.elapsed() < Duration::from_millis(100) {
                        n += u64::from(bucket.check(1).allowed);
                    }
                    n
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum();
        let bound = (1000.0 * start.elapsed().as_secs_f64()).ceil() as u64 + 10;
        assert!(granted <= bound, "{granted} > {bound}");
        assert!(granted >= 50, "only {granted}");
    }
}
