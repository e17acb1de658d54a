//! [`LeakyBucketMeter`] and [`LeakyBucketQueue`]: the leaky bucket as a
//! meter and as a queue, shareable between threads. Semantics in
//! [`core::leaky_bucket`](ratekeeper_core::leaky_bucket).

use std::time::Duration;

use ratekeeper_core::leaky_bucket::{LeakyBucketMeter as CoreMeter, LeakyBucketQueue as CoreQueue};
use ratekeeper_core::{Argument, Decision, Error};

use crate::clock::{Clock, MonotonicClock};
use crate::shared::admission_limiter;
use crate::units::micros_from_duration;

admission_limiter!(
    /// The leaky bucket as a meter: `capacity` units that leak
    /// `count_per_period` per `period`; a request that would overflow is
    /// refused, consuming nothing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use ratekeeper::{LeakyBucketMeter, ManualClock};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let meter = LeakyBucketMeter::with_clock(3, 1, Duration::from_millis(100), Arc::clone(&clock))?;
    /// assert!(meter.check(3).allowed);
    /// assert_eq!(meter.check(1).retry_after_micros, 100_000);
    /// clock.advance(Duration::from_millis(100));
    /// assert!(meter.check(1).allowed);
    /// # Ok::<(), ratekeeper::Error>(())
    /// ```
    LeakyBucketMeter,
    CoreMeter,
    6
);

impl LeakyBucketMeter<MonotonicClock> {
    /// A meter of `capacity` units leaking `count_per_period` every
    /// `period`, on the monotonic clock. Errors on a zero capacity, count or
    /// period (under a microsecond), or values above `i64::MAX`.
    pub fn new(capacity: u64, count_per_period: u64, period: Duration) -> Result<Self, Error> {
        Self::with_clock(capacity, count_per_period, period, MonotonicClock::new())
    }
}

impl<C: Clock> LeakyBucketMeter<C> {
    /// [`LeakyBucketMeter::new`] on `clock`.
    pub fn with_clock(capacity: u64, count_per_period: u64, period: Duration, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(
            CoreMeter::new(capacity, count_per_period, micros_from_duration(Argument::Period, period)?)?,
            clock,
        ))
    }

    /// The water level now, in whole units.
    pub fn level(&self) -> u64 {
        self.inner.read(|m, now| m.level_at(now))
    }
}

admission_limiter!(
    /// The leaky bucket as a queue (a shaper): one unit leaves every
    /// `interval`; each admitted request is given the next free slot —
    /// [`check`](Self::check)'s decision says how long to wait for it
    /// (`wait_micros`), [`acquire`](Self::acquire) sleeps until then — and a
    /// request whose slot lies more than `capacity` units away is refused.
    /// With slack ([`with_slack`](Self::with_slack), Uber's `WithSlack`), up
    /// to `slack` slots left unused while idle are handed out late, so a
    /// burst after a pause does not wait for them.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use ratekeeper::{LeakyBucketQueue, ManualClock};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let queue = LeakyBucketQueue::with_clock(2, Duration::from_millis(100), Arc::clone(&clock))?;
    /// let waits: Vec<i64> = (0..4).map(|_| queue.check(1)).map(|d| if d.allowed { d.wait_micros } else { -1 }).collect();
    /// assert_eq!(waits, [0, 100_000, 200_000, -1]); // the fourth would make three wait
    /// # Ok::<(), ratekeeper::Error>(())
    /// ```
    LeakyBucketQueue,
    CoreQueue,
    4
);

impl LeakyBucketQueue<MonotonicClock> {
    /// A queue releasing one unit per `interval` and holding at most
    /// `capacity` waiting units, on the monotonic clock. Errors on an
    /// interval under a microsecond or a capacity above `i64::MAX`.
    pub fn new(capacity: u64, interval: Duration) -> Result<Self, Error> {
        Self::with_clock(capacity, interval, MonotonicClock::new())
    }
}

impl LeakyBucketQueue<MonotonicClock> {
    /// [`LeakyBucketQueue::new`] saving up to `slack` unused slots (Uber's
    /// `ratelimit.New(rate, WithSlack(slack))` is a queue of `interval = 1 s
    /// / rate` that never refuses: a `capacity` of `i64::MAX`). Errors as
    /// `new` does, and on a slack above `i64::MAX`.
    pub fn with_slack(capacity: u64, interval: Duration, slack: u64) -> Result<Self, Error> {
        Self::with_slack_and_clock(capacity, interval, slack, MonotonicClock::new())
    }
}

impl<C: Clock> LeakyBucketQueue<C> {
    /// [`LeakyBucketQueue::new`] on `clock`.
    pub fn with_clock(capacity: u64, interval: Duration, clock: C) -> Result<Self, Error> {
        Self::with_slack_and_clock(capacity, interval, 0, clock)
    }

    /// [`LeakyBucketQueue::with_slack`] on `clock`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use ratekeeper::{LeakyBucketQueue, ManualClock};
    ///
    /// // Uber's `ratelimit.New(10, WithSlack(2))`, which never refuses.
    /// let clock = Arc::new(ManualClock::new());
    /// let queue = LeakyBucketQueue::with_slack_and_clock(i64::MAX as u64, Duration::from_millis(100), 2, Arc::clone(&clock))?;
    /// assert_eq!(queue.check(1).wait_micros, 0);
    /// clock.advance(Duration::from_secs(1)); // idle: two slots saved
    /// let waits: Vec<i64> = (0..4).map(|_| queue.check(1).wait_micros).collect();
    /// assert_eq!(waits, [0, 0, 0, 100_000]);
    /// # Ok::<(), ratekeeper::Error>(())
    /// ```
    pub fn with_slack_and_clock(capacity: u64, interval: Duration, slack: u64, clock: C) -> Result<Self, Error> {
        let interval_micros = micros_from_duration(Argument::Interval, interval)?;
        Ok(Self::from_core(CoreQueue::with_slack(capacity, interval_micros, slack)?, clock))
    }

    /// Takes a slot for `cost` units and sleeps until it comes; returns the
    /// decision (its `wait_micros` is the time slept). A refusal returns at
    /// once, taking nothing.
    pub fn acquire(&self, cost: u64) -> Decision {
        let decision = self.check(cost);
        if decision.allowed {
            self.inner.sleep_micros(decision.wait_micros);
        }
        decision
    }
}
