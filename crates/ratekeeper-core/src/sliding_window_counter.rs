//! The sliding window counter: the weighted two-window approximation.
//!
//! Two counters per limiter, as in Cloudflare's description ("How we built
//! rate limiting capable of scaling to millions of domains", 2017): the
//! units admitted in the current fixed window and in the previous one. The
//! previous window's count is assumed spread evenly over it, so at a point
//! `elapsed` into the current window the estimate of the last `window` is
//!
//! ```text
//! previous × (window − elapsed) / window + current
//! ```
//!
//! and a request is admitted if the estimate plus its cost stays within
//! `limit`. Here the comparison is done in exact integers (everything
//! multiplied by `window`), so no rounding decides a boundary case.
//!
//! **Worst case: up to 2 × `limit` in an interval of length `window`**, when
//! the previous window's units all came at its very end (the estimate then
//! counts them as mostly gone); exact when traffic is even. Any interval of
//! length `window` overlaps at most two fixed windows, each holding at most
//! `limit`. Memory: two counters.
//!
//! A time earlier than the latest seen counts as the latest.
//!
//! The limit may change at run time ([`SlidingWindowCounter::set_limit`]),
//! keeping both counts: the worst case holds with the largest limit in
//! force in the two windows.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::fixed_window::{check_limit, check_limit_and_window};
use crate::full::{later_than, Full};
use crate::packed::Packed;

/// The weighted two-window approximation: about `limit` units per
/// `window_micros`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindowCounter {
    /// The current fixed window's number.
    index: i64,
    /// Units admitted in the previous window.
    previous: u64,
    /// Units admitted in the current window.
    current: u64,
    limit: u64,
    window_micros: i64,
}

impl SlidingWindowCounter {
    /// About `limit` units per sliding `window_micros`.
    ///
    /// Errors when `limit` is 0 or above `i64::MAX`, or `window_micros` is
    /// not positive.
    pub fn new(limit: u64, window_micros: i64) -> Result<Self, Error> {
        check_limit_and_window(limit, i64::MAX as u64, Argument::Limit, window_micros)?;
        Ok(SlidingWindowCounter { index: 0, previous: 0, current: 0, limit, window_micros })
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

    /// Changes the limit at `now_micros`, keeping both counts, as Go's
    /// `SetLimitAt` and Guava's `setRate` keep what was taken: a lower
    /// limit refuses until the estimate is under it (as the previous
    /// window weighs less, or in the next windows), and a higher one admits
    /// the difference at once. The state first moves to `now_micros`, as a
    /// decision there would see it.
    ///
    /// Errors, changing nothing, on the bounds of [`new`](Self::new).
    pub fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        check_limit(limit, i64::MAX as u64, Argument::Limit)?;
        (self.index, self.previous, self.current, _) = self.at(now_micros);
        self.limit = limit;
        Ok(())
    }

    /// The window at `now` (never before the current one), its two counts,
    /// and how far into it `now` is (0 if time went backwards).
    #[inline]
    fn at(&self, now: i64) -> (i64, u64, u64, i128) {
        let window = self.window_micros.max(1);
        // Most decisions fall in the current window: told by a
        // multiplication, not a division (its tens of cycles are a good
        // part of a keyed check).
        let start = i128::from(self.index) * i128::from(window);
        let offset = i128::from(now) - start;
        if offset >= 0 && offset < i128::from(window) {
            return (self.index, self.previous, self.current, offset);
        }
        let index = now.div_euclid(window).max(self.index);
        let (previous, current) = match i128::from(index) - i128::from(self.index) {
            0 => (self.previous, self.current),
            1 => (self.current, 0),
            _ => (0, 0),
        };
        let elapsed = (i128::from(now) - i128::from(index) * i128::from(window)).max(0);
        (index, previous, current, elapsed)
    }

    // Always inlined: a caller that wants only `allowed` (a keyed
    // limiter's `allow`) then drops the divisions for `remaining` and
    // the retry time.
    #[inline(always)]
    fn decide(&self, cost: u64, now_micros: i64) -> (Decision, Option<(i64, u64, u64)>) {
        let (index, previous, current, elapsed) = self.at(now_micros);
        let w = i128::from(self.window_micros.max(1));
        let limit = i128::from(self.limit);
        // Everything times `w`: the estimate is `previous × (w − elapsed) +
        // current × w`, compared with `limit × w`.
        // (Saturating: a garbage state from a torn read must not panic.)
        let weighted_previous = i128::from(previous).saturating_mul(w - elapsed);
        let used = |current: u64| weighted_previous.saturating_add(i128::from(current).saturating_mul(w));
        let capacity = limit.saturating_mul(w);
        let remaining = |current: u64| ((capacity - used(current)).max(0) / w) as u64;
        let reset_after = |current: u64| -> i64 {
            let until = if current > 0 {
                2 * w - elapsed
            } else if previous > 0 {
                w - elapsed
            } else {
                0
            };
            i64::try_from(until).unwrap_or(NEVER)
        };
        let after = current.saturating_add(cost);
        // A cost of 0 is a free look, admitted even when a time earlier than
        // the latest (counted from the start of the current window) makes
        // the estimate exceed the limit.
        if cost == 0 || used(after) <= capacity {
            let decision = Decision::allowed(self.limit, remaining(after), reset_after(after), self.window_micros);
            return (decision, (cost > 0).then_some((index, previous, after)));
        }
        let retry_after = if cost > self.limit {
            NEVER
        } else {
            let cost = i128::from(cost);
            let room = limit - i128::from(current) - cost;
            // The earliest `elapsed` at which `p × (w − e) <= room × w`: the
            // smallest `e >= w − room × w / p`.
            let earliest = |p: i128, room: i128| if p == 0 { 0 } else { (w - room.saturating_mul(w) / p).max(0) };
            let retry = if room >= 0 && earliest(i128::from(previous), room) < w {
                earliest(i128::from(previous), room) - elapsed
            } else {
                // In the next window the current count becomes the previous.
                let next = earliest(i128::from(current), limit - cost);
                (w - elapsed) + next
            };
            i64::try_from(retry).unwrap_or(NEVER)
        };
        (Decision::refused(self.limit, remaining(current), retry_after, reset_after(current), self.window_micros), None)
    }
}

impl Admission for SlidingWindowCounter {
    #[inline(always)]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let (decision, update) = self.decide(cost, now_micros);
        if let Some((index, previous, current)) = update {
            self.index = index;
            self.previous = previous;
            self.current = current;
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(cost, now_micros).0
    }

    /// Counts `cost` fewer units in `now_micros`'s window, saturating at
    /// 0. The previous window's count is left alone: once a window has
    /// rolled, its units are history the estimate weighs, and a refund
    /// after the roll gives back nothing.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let (index, previous, current, _) = self.at(now_micros);
        self.index = index;
        self.previous = previous;
        self.current = current.saturating_sub(cost);
    }
}

/// Full when both counters are 0 as of now (and the state has not seen a
/// later window): a fresh limiter counts nothing, and a decision reads the
/// counters only as they have aged to now's window.
impl Full for SlidingWindowCounter {
    fn fresh(&self) -> Self {
        SlidingWindowCounter { index: 0, previous: 0, current: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        if now_micros < 0 || self.index > now_micros.div_euclid(self.window_micros.max(1)) {
            return false;
        }
        let (_, previous, current, _) = self.at(now_micros);
        previous == 0 && current == 0
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        let w = i128::from(self.window_micros.max(1));
        let t = i128::from(now_micros).max(i128::from(self.index) * w).max(0);
        let t64 = i64::try_from(t).unwrap_or(NEVER);
        let (index, previous, current, _) = self.at(t64);
        // The current count is forgotten two windows on, the previous one.
        let windows = if current > 0 { 2 } else { i128::from(previous > 0) };
        let at = if windows == 0 { t64 } else { i64::try_from((i128::from(index) + windows) * w).unwrap_or(NEVER) };
        later_than(now_micros, at)
    }
}

/// Words: the window and its two counts, then the configuration.
impl Packed<5> for SlidingWindowCounter {
    /// A decision changes the window and the counts.
    const HOT: usize = 3;

    #[inline]
    fn pack(&self) -> [u64; 5] {
        [self.index as u64, self.previous, self.current, self.limit, self.window_micros as u64]
    }

    #[inline]
    fn unpack(w: [u64; 5]) -> Self {
        SlidingWindowCounter {
            index: w[0] as i64,
            previous: w[1],
            current: w[2],
            limit: w[3],
            window_micros: w[4] as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the fuzzer (fuzz/fuzz_targets/sliding_window_counter.rs):
    /// a time earlier than the start of the current window counts from that
    /// start, where the previous window still weighs whole; a look of cost
    /// 0 there was refused, where every algorithm admits a cost of 0.
    #[test]
    fn a_look_of_cost_zero_is_admitted_back_in_time() {
        let w = 1_704_192;
        let mut c = SlidingWindowCounter::new(16, w).unwrap();
        assert!(c.check(15, 618_614).allowed);
        assert!(c.check(2, 2_330_859).allowed); // the next window: 15 weigh 63%
        let before = c;
        let d = c.check(0, 643_481); // back in the previous window
        assert!(d.allowed && d.remaining == 0 && d.retry_after_micros == 0, "{d:?}");
        assert_eq!(c, before);
        assert!(!c.check(1, 643_481).allowed);
    }

    #[test]
    fn previous_window_weighs_in_proportion() {
        // 10 per second.
        let mut c = SlidingWindowCounter::new(10, 1_000_000).unwrap();
        assert!(c.check(10, 500_000).allowed);
        // 25% into the next window, 75% of the previous 10 still count.
        let d = c.check(2, 1_250_000);
        assert_eq!((d.allowed, d.remaining), (true, 0));
        assert_eq!(d.reset_after_micros, 1_750_000);
        let refused = c.check(1, 1_250_000);
        assert!(!refused.allowed);
        // 7.5 + 2 + 1 <= 10 once 0.5 more of the previous has gone: 1.3 s.
        assert_eq!(refused.retry_after_micros, 50_000);
        assert!(!c.check(1, 1_299_999).allowed);
        assert!(c.check(1, 1_300_000).allowed);
        assert_eq!(c.check(11, 1_300_000).retry_after_micros, NEVER);
    }

    #[test]
    fn retry_may_wait_for_the_next_window() {
        let mut c = SlidingWindowCounter::new(4, 1_000).unwrap();
        assert!(c.check(4, 100).allowed);
        let refused = c.check(2, 200);
        // In the next window the 4 weigh (1000 − e)/1000: 2 fit when e >= 500.
        assert_eq!(refused.retry_after_micros, 1_300);
        assert!(!c.check(2, 1_499).allowed);
        assert!(c.check(2, 1_500).allowed);
        // A whole limit must wait for the count to weigh nothing.
        let mut c = SlidingWindowCounter::new(4, 1_000).unwrap();
        c.check(1, 0);
        assert_eq!(c.check(4, 0).retry_after_micros, 2_000);
    }

    #[test]
    fn worst_case_is_below_twice_the_limit_in_a_window() {
        // The previous window's 100 all at its end, then the estimate lets
        // in about 100 more over the next window.
        let mut c = SlidingWindowCounter::new(100, 1_000_000).unwrap();
        assert!(c.check(100, 999_999).allowed);
        let mut admitted = 100;
        for now in (1_000_000..1_999_999).step_by(1_000) {
            admitted += u64::from(c.check(1, now).allowed);
        }
        assert!(admitted > 190 && admitted <= 200, "{admitted}");
    }

    #[test]
    fn set_limit_keeps_the_counts() {
        let mut c = SlidingWindowCounter::new(10, 1_000).unwrap();
        assert!(c.check(8, 500).allowed);
        // Lower than the 8 counted: in the next window the 8 weigh
        // (1000 − e)/1000, and 8 × (1000 − e)/1000 + 1 <= 4 when e >= 625.
        c.set_limit(4, 600).unwrap();
        let refused = c.check(1, 700);
        assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 4, 0));
        assert_eq!(refused.retry_after_micros, 925);
        let look = c.check(0, 700);
        assert_eq!((look.allowed, look.remaining), (true, 0), "a cost of 0 is a free look");
        assert!(!c.check(1, 1_624).allowed);
        assert!(c.check(1, 1_625).allowed);
        // Higher: the difference at once (3 of the 8 still weigh, plus 1).
        c.set_limit(12, 1_625).unwrap();
        let d = c.check(8, 1_625);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 12, 0));
        assert_eq!(c.limit(), 12);
    }

    #[test]
    fn set_limit_errors_change_nothing() {
        let mut c = SlidingWindowCounter::new(3, 1_000).unwrap();
        c.check(2, 10);
        let before = c;
        assert_eq!(c.set_limit(0, 5_000), Err(Error::invalid_int(Argument::Limit, 0)));
        assert_eq!(c.set_limit(u64::MAX, 5_000), Err(Error::invalid_uint(Argument::Limit, u64::MAX)));
        assert_eq!(c, before);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert!(SlidingWindowCounter::new(0, 1).is_err());
        assert!(SlidingWindowCounter::new(1, 0).is_err());
        assert!(SlidingWindowCounter::new(u64::MAX, 1).is_err());
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let mut c = SlidingWindowCounter::new(i64::MAX as u64, i64::MAX).unwrap();
        let mut small = SlidingWindowCounter::new(1, 1).unwrap();
        for now in [i64::MIN, -1, 0, 1, i64::MAX, i64::MIN] {
            for cost in [0, 1, u64::MAX] {
                let _ = (c.check(cost, now), c.peek(cost, now), small.check(cost, now));
            }
        }
        let _ = SlidingWindowCounter::unpack([u64::MAX; 5]).peek(1, 0);
    }

    #[test]
    fn packing_round_trips() {
        let mut c = SlidingWindowCounter::new(9, 100).unwrap();
        let before = c.pack();
        c.check(3, 150);
        assert_eq!(before[SlidingWindowCounter::HOT..], c.pack()[SlidingWindowCounter::HOT..]);
        assert_eq!(SlidingWindowCounter::unpack(c.pack()), c);
    }
}
