//! The fixed window counter: at most `limit` units per window.
//!
//! Time is cut into windows of `window_micros`, aligned to the limiter's
//! creation (time 0); a counter per limiter counts the units admitted in
//! the current window and starts again at 0 when the next window begins.
//! The cheapest algorithm there is — two words of state — and the one whose
//! worst case everyone should know:
//!
//! **Worst case: 2 × `limit` in an arbitrarily short interval.** A client
//! that spends the whole limit at the very end of one window and again at
//! the very start of the next gets `2 × limit` through in a moment (a test
//! below shows it). Use [`SlidingWindow`](crate::SlidingWindow),
//! [`SlidingLog`](crate::SlidingLog) or a bucket when that matters.
//!
//! A time earlier than the latest seen counts as the latest, so time going
//! backwards never reopens an old window.
//!
//! The limit may change at run time ([`FixedWindow::set_limit`]), keeping
//! the count: every admission leaves its window within the limit of that
//! moment, so the worst case holds with the largest limit in force.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::full::{later_than, Full};
use crate::packed::Packed;

/// A fixed window counter: `limit` units per `window_micros`, windows
/// aligned to time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWindow {
    /// The current window's number (`now / window`, rounded down).
    index: i64,
    /// Units admitted in that window.
    count: u64,
    limit: u64,
    window_micros: i64,
}

/// Checks a window algorithm's `limit`, at creation and at run time: from 1
/// to `max_limit`, reported as `limit_argument` (whose requirement names
/// that bound).
pub(crate) fn check_limit(limit: u64, max_limit: u64, limit_argument: Argument) -> Result<(), Error> {
    if limit == 0 || limit > max_limit {
        return Err(Error::invalid_uint(limit_argument, limit));
    }
    Ok(())
}

/// Checks the parameters every window algorithm takes: `limit` as
/// [`check_limit`] does, and a positive window.
pub(crate) fn check_limit_and_window(
    limit: u64,
    max_limit: u64,
    limit_argument: Argument,
    window_micros: i64,
) -> Result<(), Error> {
    check_limit(limit, max_limit, limit_argument)?;
    if window_micros <= 0 {
        return Err(Error::invalid_int(Argument::Window, window_micros));
    }
    Ok(())
}

impl FixedWindow {
    /// At most `limit` units in each window of `window_micros`.
    ///
    /// Errors when `limit` is 0 or above `i64::MAX`, or `window_micros` is
    /// not positive.
    pub fn new(limit: u64, window_micros: i64) -> Result<Self, Error> {
        check_limit_and_window(limit, i64::MAX as u64, Argument::Limit, window_micros)?;
        Ok(FixedWindow { index: 0, count: 0, limit, window_micros })
    }

    /// Units per window.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The window's length in microseconds.
    pub fn window_micros(&self) -> i64 {
        self.window_micros
    }

    /// Changes the limit at `now_micros`, keeping what the window has
    /// counted, as Go's `SetLimitAt` and Guava's `setRate` keep what was
    /// taken: the units admitted in the current window stay admitted, so a
    /// lower limit refuses until the window's count is under it (the next
    /// window, at the latest), and a higher one admits the difference at
    /// once. The state first moves to `now_micros` (a window that ended
    /// counts nothing), as a decision there would see it.
    ///
    /// Errors, changing nothing, on the bounds of [`new`](Self::new).
    pub fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        check_limit(limit, i64::MAX as u64, Argument::Limit)?;
        (self.index, self.count) = self.current(now_micros);
        self.limit = limit;
        Ok(())
    }

    /// The window at `now` (never before the current one) and its count.
    #[inline]
    fn current(&self, now: i64) -> (i64, u64) {
        let index = now.div_euclid(self.window_micros);
        if index > self.index {
            (index, 0)
        } else {
            (self.index, self.count)
        }
    }

    #[inline]
    fn decide(&self, cost: u64, now_micros: i64) -> (Decision, Option<(i64, u64)>) {
        let (index, count) = self.current(now_micros);
        // The end of the window, from now (from the window's start if time
        // went backwards: never shorter than the truth).
        let end = i128::from(index) * i128::from(self.window_micros) + i128::from(self.window_micros);
        let now = i128::from(now_micros).max(i128::from(index) * i128::from(self.window_micros));
        let to_end = i64::try_from(end - now).unwrap_or(NEVER);
        // Whole again at the end of the window, or now if nothing is counted.
        let reset_after = |counted: u64| if counted == 0 { 0 } else { to_end };
        let after = count.saturating_add(cost);
        // A cost of 0 is a free look, admitted even over a limit lowered
        // below the count (`set_limit`).
        if cost == 0 || after <= self.limit {
            let decision =
                Decision::allowed(self.limit, self.limit.saturating_sub(after), reset_after(after), self.window_micros);
            return (decision, (cost > 0).then_some((index, after)));
        }
        let retry_after = if cost > self.limit { NEVER } else { to_end };
        let remaining = self.limit.saturating_sub(count);
        let decision = Decision::refused(self.limit, remaining, retry_after, reset_after(count), self.window_micros);
        (decision, None)
    }
}

impl Admission for FixedWindow {
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let (decision, update) = self.decide(cost, now_micros);
        if let Some((index, count)) = update {
            self.index = index;
            self.count = count;
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(cost, now_micros).0
    }

    /// Counts `cost` fewer units in `now_micros`'s window, saturating at
    /// 0: express-rate-limit's memory store's `decrement`. Once the window
    /// has rolled, the units admitted in an earlier one are gone already,
    /// and nothing is given back.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let (index, count) = self.current(now_micros);
        self.index = index;
        self.count = count.saturating_sub(cost);
    }
}

/// Full when nothing is counted in now's window (and the state has not seen
/// a later window): a fresh counter is at window 0 with nothing counted,
/// and a decision starts every later window at 0.
impl Full for FixedWindow {
    fn fresh(&self) -> Self {
        FixedWindow { index: 0, count: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        if now_micros < 0 {
            return false;
        }
        let window = now_micros.div_euclid(self.window_micros.max(1));
        self.index < window || (self.index == window && self.count == 0)
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        // When the state's own window starts (if it counts nothing) or ends.
        let window = i128::from(self.window_micros.max(1));
        let index = i128::from(self.index) + i128::from(self.count > 0);
        let at = i64::try_from(index * window).unwrap_or(if index < 0 { 0 } else { NEVER });
        later_than(now_micros, at.max(0))
    }
}

/// Words: the window and its count, then the configuration.
impl Packed<4> for FixedWindow {
    /// A decision changes the window and its count.
    const HOT: usize = 2;

    #[inline]
    fn pack(&self) -> [u64; 4] {
        [self.index as u64, self.count, self.limit, self.window_micros as u64]
    }

    #[inline]
    fn unpack(w: [u64; 4]) -> Self {
        FixedWindow { index: w[0] as i64, count: w[1], limit: w[2], window_micros: (w[3] as i64).max(1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_window() {
        let mut w = FixedWindow::new(3, 1_000_000).unwrap();
        let d = w.check(2, 250_000);
        assert_eq!((d.allowed, d.limit, d.remaining, d.reset_after_micros), (true, 3, 1, 750_000));
        assert!(w.check(1, 500_000).allowed);
        let refused = w.check(1, 999_999);
        assert_eq!((refused.allowed, refused.retry_after_micros, refused.remaining), (false, 1, 0));
        assert!(w.check(3, 1_000_000).allowed);
        assert_eq!(w.check(4, 5_000_000).retry_after_micros, NEVER);
        assert_eq!(w.peek(0, 5_000_000).reset_after_micros, 0, "an empty window is whole");
    }

    #[test]
    fn worst_case_is_twice_the_limit_across_a_boundary() {
        // 100 per second: 100 in the last microsecond of one window and 100
        // in the first of the next — 200 within 2 µs.
        let mut w = FixedWindow::new(100, 1_000_000).unwrap();
        let mut admitted = 0;
        for now in [999_999, 1_000_000] {
            for _ in 0..100 {
                admitted += u32::from(w.check(1, now).allowed);
            }
        }
        assert_eq!(admitted, 200);
    }

    #[test]
    fn time_going_backwards_never_reopens_a_window() {
        let mut w = FixedWindow::new(1, 1_000).unwrap();
        assert!(w.check(1, 5_500).allowed);
        assert!(!w.check(1, 4_500).allowed);
        assert!(!w.check(1, i64::MIN).allowed);
        assert_eq!(w.peek(1, 0).retry_after_micros, 1_000);
        assert!(w.check(1, 6_000).allowed);
    }

    #[test]
    fn set_limit_keeps_the_count() {
        let mut w = FixedWindow::new(5, 1_000).unwrap();
        assert!(w.check(4, 100).allowed);
        // Lower than the count: refused until the next window.
        w.set_limit(2, 200).unwrap();
        let refused = w.check(1, 300);
        assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 2, 0));
        assert_eq!(refused.retry_after_micros, 700);
        let look = w.peek(0, 300);
        assert_eq!((look.allowed, look.remaining), (true, 0), "a cost of 0 is a free look");
        let d = w.check(2, 1_000);
        assert_eq!((d.allowed, d.remaining), (true, 0));
        // Higher: the difference at once, in the same window.
        w.set_limit(6, 1_100).unwrap();
        let d = w.check(4, 1_200);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 6, 0));
        assert!(!w.check(1, 1_300).allowed);
        assert_eq!(w.limit(), 6);
    }

    #[test]
    fn set_limit_errors_change_nothing() {
        let mut w = FixedWindow::new(3, 1_000).unwrap();
        w.check(2, 10);
        let before = w;
        assert_eq!(w.set_limit(0, 20), Err(Error::invalid_int(Argument::Limit, 0)));
        assert_eq!(w.set_limit(u64::MAX, 20), Err(Error::invalid_uint(Argument::Limit, u64::MAX)));
        assert_eq!(w, before);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert_eq!(FixedWindow::new(0, 1), Err(Error::invalid_int(Argument::Limit, 0)));
        assert_eq!(FixedWindow::new(1, 0), Err(Error::invalid_int(Argument::Window, 0)));
        assert!(FixedWindow::new(u64::MAX, 1).is_err());
        assert!(FixedWindow::new(1, -1).is_err());
    }

    #[test]
    fn extreme_inputs_never_panic() {
        for (limit, window) in [(1, 1), (i64::MAX as u64, i64::MAX)] {
            let mut w = FixedWindow::new(limit, window).unwrap();
            for now in [i64::MIN, -1, 0, 1, i64::MAX, i64::MIN] {
                for cost in [0, 1, u64::MAX] {
                    let _ = (w.check(cost, now), w.peek(cost, now));
                }
            }
        }
        // Garbage words (a torn read in the std layer) must not panic either.
        let w = FixedWindow::unpack([u64::MAX, u64::MAX, 0, 0]);
        let _ = w.peek(1, 0);
    }

    #[test]
    fn packing_round_trips() {
        let mut w = FixedWindow::new(5, 1_000).unwrap();
        let before = w.pack();
        w.check(3, 10_000);
        assert_eq!(before[FixedWindow::HOT..], w.pack()[FixedWindow::HOT..]);
        assert_eq!(FixedWindow::unpack(w.pack()), w);
    }
}
