//! [`Gcra`]: GCRA with redis-cell's `CL.THROTTLE` reply, shareable between
//! threads. Semantics in [`core::gcra`](ratekeeper_core::gcra).

use std::time::Duration;

use ratekeeper_core::gcra::Gcra as CoreGcra;
use ratekeeper_core::{Argument, Error};

use crate::clock::{Clock, MonotonicClock};
use crate::shared::admission_limiter;
use crate::units::micros_from_duration;

admission_limiter!(
    /// GCRA (the generic cell rate algorithm) with redis-cell's reply: one
    /// time per limiter, `count_per_period` units per `period`, and
    /// `max_burst + 1` units at once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use ratekeeper::{Gcra, ManualClock};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// // CL.THROTTLE key 4 1 1: one per second, 5 at once.
    /// let gcra = Gcra::with_clock(4, 1, Duration::from_secs(1), Arc::clone(&clock))?;
    /// for _ in 0..5 {
    ///     assert!(gcra.check(1).allowed);
    /// }
    /// let d = gcra.check(1);
    /// assert!(!d.allowed);
    /// assert_eq!((d.limit, d.remaining, d.retry_after_micros), (5, 0, 1_000_000));
    /// assert_eq!(gcra.check(6).retry_after_micros, ratekeeper::NEVER); // above the limit
    /// # Ok::<(), ratekeeper::Error>(())
    /// ```
    Gcra,
    CoreGcra,
    7
);

impl Gcra<MonotonicClock> {
    /// redis-cell's `CL.THROTTLE key max_burst count_per_period period` on
    /// the monotonic clock.
    ///
    /// Errors when `max_burst` is `i64::MAX` or more, `count_per_period` is
    /// 0 or above `i64::MAX`, or `period` is under a microsecond.
    pub fn new(max_burst: u64, count_per_period: u64, period: Duration) -> Result<Self, Error> {
        Self::with_clock(max_burst, count_per_period, period, MonotonicClock::new())
    }
}

impl<C: Clock> Gcra<C> {
    /// [`Gcra::new`] on `clock`.
    pub fn with_clock(max_burst: u64, count_per_period: u64, period: Duration, clock: C) -> Result<Self, Error> {
        let core = CoreGcra::new(max_burst, count_per_period, micros_from_duration(Argument::Period, period)?)?;
        Ok(Self::from_core(core, clock))
    }

    /// redis-cell's `limit`: `max_burst + 1`.
    pub fn limit(&self) -> u64 {
        self.snapshot().limit()
    }
}
