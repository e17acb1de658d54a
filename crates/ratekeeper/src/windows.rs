//! The window algorithms, shareable between threads: [`FixedWindow`],
//! [`SlidingWindow`] and [`SlidingWindowCounter`] (lock-free, like every
//! fixed-size limiter) and [`SlidingLog`] (behind a mutex). Semantics in
//! the core modules of the same names.

use std::sync::PoisonError;
use std::time::Duration;

use ratekeeper_core::fixed_window::FixedWindow as CoreFixed;
use ratekeeper_core::sliding_log::{LogEntry, LogStorage, SlidingLog as CoreLog};
use ratekeeper_core::sliding_window::SlidingWindow as CoreSliding;
use ratekeeper_core::sliding_window_counter::SlidingWindowCounter as CoreCounter;
use ratekeeper_core::{Admission, Argument, Decision, Error};

use crate::clock::{Clock, MonotonicClock};
use crate::shared::admission_limiter;
use crate::sync::Mutex;
use crate::units::micros_from_duration;

admission_limiter!(
    /// At most `limit` units per fixed window of `window`, windows aligned
    /// to the limiter's creation. Worst case: `2 × limit` across a window
    /// boundary.
    FixedWindow,
    CoreFixed,
    4
);

impl FixedWindow<MonotonicClock> {
    /// `limit` units per `window` on the monotonic clock. Errors on a zero
    /// limit or a window under a microsecond.
    pub fn new(limit: u64, window: Duration) -> Result<Self, Error> {
        Self::with_clock(limit, window, MonotonicClock::new())
    }
}

impl<C: Clock> FixedWindow<C> {
    /// [`FixedWindow::new`] on `clock`.
    pub fn with_clock(limit: u64, window: Duration, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(CoreFixed::new(limit, micros_from_duration(Argument::Window, window)?)?, clock))
    }

    /// Units per window.
    pub fn limit(&self) -> u64 {
        self.inner.get().limit()
    }

    /// Changes the limit now, keeping what the current window has counted
    /// ([`ratekeeper_core::FixedWindow::set_limit`]): a lower limit refuses
    /// until the count is under it, a higher one admits the difference at
    /// once. Errors, changing nothing, on a zero limit or one above
    /// `i64::MAX`.
    pub fn set_limit(&self, limit: u64) -> Result<(), Error> {
        self.inner.update(|w, now| w.set_limit(limit, now))
    }
}

admission_limiter!(
    /// At most `limit` units in the last `sub_windows` sub-windows of
    /// `window / sub_windows` each (a ring of counters, no allocation).
    SlidingWindow,
    CoreSliding,
    11
);

impl SlidingWindow<MonotonicClock> {
    /// `limit` units per sliding `window` of `sub_windows` parts (1 to 16,
    /// dividing the window in whole microseconds), on the monotonic clock.
    pub fn new(limit: u64, window: Duration, sub_windows: u32) -> Result<Self, Error> {
        Self::with_clock(limit, window, sub_windows, MonotonicClock::new())
    }
}

impl<C: Clock> SlidingWindow<C> {
    /// [`SlidingWindow::new`] on `clock`.
    pub fn with_clock(limit: u64, window: Duration, sub_windows: u32, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(
            CoreSliding::new(limit, micros_from_duration(Argument::Window, window)?, sub_windows)?,
            clock,
        ))
    }

    /// Units per window.
    pub fn limit(&self) -> u64 {
        self.inner.get().limit()
    }

    /// Changes the limit now, keeping every sub-window's count
    /// ([`ratekeeper_core::SlidingWindow::set_limit`]): a lower limit
    /// refuses until enough sub-windows slide out, a higher one admits the
    /// difference at once. Errors, changing nothing, on a zero limit or one
    /// above `u32::MAX`.
    pub fn set_limit(&self, limit: u64) -> Result<(), Error> {
        self.inner.update(|w, now| w.set_limit(limit, now))
    }
}

admission_limiter!(
    /// About `limit` units per sliding `window`: the weighted two-window
    /// approximation (two counters).
    SlidingWindowCounter,
    CoreCounter,
    5
);

impl SlidingWindowCounter<MonotonicClock> {
    /// About `limit` units per sliding `window`, on the monotonic clock.
    pub fn new(limit: u64, window: Duration) -> Result<Self, Error> {
        Self::with_clock(limit, window, MonotonicClock::new())
    }
}

impl<C: Clock> SlidingWindowCounter<C> {
    /// [`SlidingWindowCounter::new`] on `clock`.
    pub fn with_clock(limit: u64, window: Duration, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(CoreCounter::new(limit, micros_from_duration(Argument::Window, window)?)?, clock))
    }

    /// Units per window.
    pub fn limit(&self) -> u64 {
        self.inner.get().limit()
    }

    /// Changes the limit now, keeping both counts
    /// ([`ratekeeper_core::SlidingWindowCounter::set_limit`]): a lower
    /// limit refuses until the estimate is under it, a higher one admits
    /// the difference at once. Errors, changing nothing, on a zero limit or
    /// one above `i64::MAX`.
    pub fn set_limit(&self, limit: u64) -> Result<(), Error> {
        self.inner.update(|w, now| w.set_limit(limit, now))
    }
}

/// The largest limit a std [`SlidingLog`] accepts
/// ([`Argument::SlidingLogLimit`]): its log grows with use up to 16 bytes
/// per unit of limit, so this bounds one log at 16 MiB. Beyond it, a
/// [`SlidingWindow`] or [`SlidingWindowCounter`] does the job in a few
/// words.
pub const MAX_SLIDING_LOG_LIMIT: u64 = 1 << 20;

/// Exactly `limit` units in any window of `window`: the sliding log.
///
/// Unlike the other limiters it sits behind a [`Mutex`]: its state is a log
/// of up to `limit` entries, far more than the few words a lock-free
/// compare-and-swap can publish, and a decision may drop many expired
/// entries at once. The lock is held for the decision only, with the clock
/// read inside it, so decisions are made in the order of their times.
#[derive(Debug)]
pub struct SlidingLog<C: Clock = MonotonicClock> {
    log: Mutex<CoreLog<HeapLogStorage>>,
    clock: C,
    origin_micros: i64,
}

impl SlidingLog<MonotonicClock> {
    /// At most `limit` units in any `window`, on the monotonic clock. Errors
    /// on a zero limit, one above [`MAX_SLIDING_LOG_LIMIT`], or a window
    /// under a microsecond.
    pub fn new(limit: u64, window: Duration) -> Result<Self, Error> {
        Self::with_clock(limit, window, MonotonicClock::new())
    }
}

impl<C: Clock> SlidingLog<C> {
    /// [`SlidingLog::new`] on `clock`.
    pub fn with_clock(limit: u64, window: Duration, clock: C) -> Result<Self, Error> {
        Ok(Self::from_core(new_log(limit, micros_from_duration(Argument::Window, window)?)?, clock))
    }

    /// Wraps a core sliding log, whose time 0 becomes now on `clock`.
    pub fn from_core(log: CoreLog<HeapLogStorage>, clock: C) -> Self {
        let origin_micros = clock.now_micros();
        SlidingLog { log: Mutex::new(log), clock, origin_micros }
    }

    /// Runs `f` on the log under the lock, at the current time.
    fn with_log<R>(&self, f: impl FnOnce(&mut CoreLog<HeapLogStorage>, i64) -> R) -> R {
        // A panic cannot leave the log half-updated (the core never panics),
        // so a poisoned lock is safe to use.
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.clock.now_micros().wrapping_sub(self.origin_micros);
        f(&mut log, now)
    }

    /// Admits `cost` units now if the window allows it, consuming them.
    pub fn check(&self, cost: u64) -> Decision {
        self.with_log(|log, now| log.check(cost, now))
    }

    /// The decision [`check`](Self::check) would make now, consuming
    /// nothing.
    pub fn peek(&self, cost: u64) -> Decision {
        self.with_log(|log, now| log.peek(cost, now))
    }

    /// Drops the newest `cost` units still in the window: units admitted
    /// that should not count (a request skipped or failed).
    pub fn refund(&self, cost: u64) {
        self.with_log(|log, now| log.refund(cost, now))
    }

    /// Units per window.
    pub fn limit(&self) -> u64 {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).limit()
    }

    /// Changes the limit now, keeping the log
    /// ([`ratekeeper_core::SlidingLog::set_limit`]): a lower limit refuses
    /// until enough logged units slide out, a higher one admits the
    /// difference at once. Errors, changing nothing, on a zero limit or one
    /// above [`MAX_SLIDING_LOG_LIMIT`] ([`Argument::SlidingLogLimit`], as at
    /// creation).
    pub fn set_limit(&self, limit: u64) -> Result<(), Error> {
        check_log_limit(limit)?;
        self.with_log(|log, now| log.set_limit(limit, now))
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

/// The bound of a std sliding log's limit, at creation and at run time.
fn check_log_limit(limit: u64) -> Result<(), Error> {
    if limit == 0 || limit > MAX_SLIDING_LOG_LIMIT {
        return Err(Error::invalid_uint(Argument::SlidingLogLimit, limit));
    }
    Ok(())
}

/// A core sliding log on the heap, empty until its first unit.
pub(crate) fn new_log(limit: u64, window_micros: i64) -> Result<CoreLog<HeapLogStorage>, Error> {
    check_log_limit(limit)?;
    CoreLog::new(limit, window_micros, HeapLogStorage::default())
}

/// A sliding log's entries on the heap, sized by use: empty at first, then
/// resized by the core log as it fills and empties (doubled when full,
/// cut to twice what it holds when three quarters unused; see
/// [`ratekeeper_core::sliding_log`]), so a log holds 16 bytes for about
/// each entry it recently needed, never more than its `limit`'s worth.
/// A boxed slice, not a `Vec`: 16 bytes beside the log, not 24, which a
/// keyed limiter pays per key.
#[derive(Debug, Clone, Default)]
pub struct HeapLogStorage(Box<[LogEntry]>);

impl LogStorage for HeapLogStorage {
    fn slots(&self) -> &[LogEntry] {
        &self.0
    }

    fn slots_mut(&mut self) -> &mut [LogEntry] {
        &mut self.0
    }

    fn resize(&mut self, len: usize) -> bool {
        let mut resized = vec![LogEntry::default(); len].into_boxed_slice();
        let kept = len.min(self.0.len());
        resized[..kept].copy_from_slice(&self.0[..kept]);
        self.0 = resized;
        true
    }

    fn resizes(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;

    #[test]
    fn sliding_log_is_exact_on_a_manual_clock() {
        let clock = Arc::new(ManualClock::new());
        let log = SlidingLog::with_clock(2, Duration::from_millis(10), Arc::clone(&clock)).unwrap();
        assert!(log.check(2).allowed);
        let refused = log.check(1);
        assert_eq!((refused.allowed, refused.retry_after_micros), (false, 10_000));
        clock.advance(Duration::from_millis(10));
        assert!(log.check(2).allowed);
        assert!(SlidingLog::new(MAX_SLIDING_LOG_LIMIT + 1, Duration::from_secs(1)).is_err());
        assert!(SlidingLog::new(1, Duration::from_nanos(999)).is_err(), "under a microsecond");
    }

    #[test]
    fn set_limit_keeps_the_state_of_every_window() {
        let clock = Arc::new(ManualClock::new());
        let window = Duration::from_secs(1);
        let fixed = FixedWindow::with_clock(4, window, Arc::clone(&clock)).unwrap();
        let sliding = SlidingWindow::with_clock(4, window, 2, Arc::clone(&clock)).unwrap();
        let counter = SlidingWindowCounter::with_clock(4, window, Arc::clone(&clock)).unwrap();
        let log = SlidingLog::with_clock(4, window, Arc::clone(&clock)).unwrap();
        let checks: [&dyn Fn(u64) -> Decision; 4] =
            [&|n| fixed.check(n), &|n| sliding.check(n), &|n| counter.check(n), &|n| log.check(n)];
        let set_limits: [&dyn Fn(u64) -> Result<(), Error>; 4] =
            [&|l| fixed.set_limit(l), &|l| sliding.set_limit(l), &|l| counter.set_limit(l), &|l| log.set_limit(l)];
        for (check, set_limit) in checks.iter().zip(set_limits) {
            assert!(check(3).allowed);
            set_limit(2).unwrap();
            let refused = check(1);
            assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 2, 0));
            set_limit(5).unwrap();
            let d = check(2);
            assert_eq!((d.allowed, d.limit, d.remaining), (true, 5, 0));
            assert!(set_limit(0).is_err());
            assert!(!check(1).allowed, "a refused change changed nothing");
        }
        assert_eq!((fixed.limit(), sliding.limit(), counter.limit(), log.limit()), (5, 5, 5, 5));
        assert_eq!(fixed.set_limit(0), Err(Error::invalid_int(Argument::Limit, 0)));
        assert_eq!(sliding.set_limit(1 << 32), Err(Error::invalid_uint(Argument::SlidingWindowLimit, 1 << 32)));
        assert_eq!(counter.set_limit(u64::MAX), Err(Error::invalid_uint(Argument::Limit, u64::MAX)));
        let above = MAX_SLIDING_LOG_LIMIT + 1;
        assert_eq!(log.set_limit(above), Err(Error::invalid_uint(Argument::SlidingLogLimit, above)));
        assert_eq!((fixed.limit(), sliding.limit(), counter.limit(), log.limit()), (5, 5, 5, 5));
    }

    #[test]
    fn threads_never_exceed_a_sliding_log() {
        // 4 threads against 100 per 50 ms on a real clock for ~200 ms: at
        // most the limit per window started, plus the one in progress.
        let log = Arc::new(SlidingLog::new(100, Duration::from_millis(50)).unwrap());
        let start = std::time::Instant::now();
        let admitted: u64 = (0..4)
            .map(|_| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    let t0 = std::time::Instant::now();
                    let mut n = 0;
                    while t0.elapsed() < Duration::from_millis(200) {
                        n += u64::from(log.check(1).allowed);
                    }
                    n
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum();
        let windows = (start.elapsed().as_secs_f64() / 0.05).ceil() as u64;
        assert!(admitted <= 100 * windows, "{admitted} in {windows} windows");
        assert!(admitted >= 100, "only {admitted}");
    }
}
