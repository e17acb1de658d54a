//! The sliding window of sub-window counters: at most `limit` units in the
//! last `sub_windows` sub-windows.
//!
//! The window of `window_micros` is cut into `sub_windows` equal parts (at
//! most [`MAX_SUB_WINDOWS`]), aligned to the limiter's creation, each with
//! its own counter in a fixed ring (no allocation). A request is admitted if
//! the counts of the current sub-window and the `sub_windows − 1` before it,
//! plus its cost, stay within `limit`. As time passes, the oldest
//! sub-window drops out whole. With one sub-window this is the
//! [`FixedWindow`](crate::FixedWindow).
//!
//! **Worst case.** At most `limit` units in any interval of length
//! `window × (sub_windows − 1) / sub_windows`; up to `2 × limit` in an
//! interval of length `window` (the whole limit at the end of one
//! sub-window and again at the start of the sub-window that evicts it,
//! `window − sub` later). More sub-windows push the burst apart: the fixed
//! window's `2 × limit` in an instant becomes `2 × limit` across most of a
//! window. Memory: 4 bytes per sub-window.
//!
//! A time earlier than the latest seen counts as the latest, so time going
//! backwards never revives an old sub-window.
//!
//! The limit may change at run time ([`SlidingWindow::set_limit`]), keeping
//! the counts: every admission leaves its sub-windows within the limit of
//! that moment, so the worst case holds with the largest limit in force.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::fixed_window::{check_limit, check_limit_and_window};
use crate::full::{later_than, Full};
use crate::packed::Packed;

/// The most sub-windows a [`SlidingWindow`] may have.
pub const MAX_SUB_WINDOWS: u32 = 16;

const SLOTS: usize = MAX_SUB_WINDOWS as usize;

/// A sliding window of `sub_windows` counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindow {
    /// The current sub-window's number (`now / sub`, rounded down).
    current: i64,
    /// Units admitted per sub-window: sub-window `i` is in slot
    /// `i mod sub_windows`; the slots hold the current sub-window and the
    /// `sub_windows − 1` before it.
    counts: [u32; SLOTS],
    limit: u32,
    sub_windows: u32,
    /// One sub-window's length in microseconds.
    sub_micros: i64,
}

impl SlidingWindow {
    /// At most `limit` units in any `sub_windows` consecutive sub-windows of
    /// `window_micros / sub_windows` each.
    ///
    /// Errors when `limit` is 0 or above `u32::MAX`, `window_micros` is not
    /// positive, or `sub_windows` is 0, above [`MAX_SUB_WINDOWS`] or does not
    /// divide `window_micros`.
    pub fn new(limit: u64, window_micros: i64, sub_windows: u32) -> Result<Self, Error> {
        check_limit_and_window(limit, u64::from(u32::MAX), Argument::SlidingWindowLimit, window_micros)?;
        if sub_windows == 0 || sub_windows > MAX_SUB_WINDOWS || window_micros % i64::from(sub_windows) != 0 {
            return Err(Error::invalid_int(Argument::SubWindows, i64::from(sub_windows)));
        }
        Ok(SlidingWindow {
            current: 0,
            counts: [0; SLOTS],
            limit: limit as u32,
            sub_windows,
            sub_micros: window_micros / i64::from(sub_windows),
        })
    }

    /// Units per window.
    #[inline]
    pub fn limit(&self) -> u64 {
        u64::from(self.limit)
    }

    /// The window's length in microseconds.
    pub fn window_micros(&self) -> i64 {
        self.sub_micros.saturating_mul(i64::from(self.n()))
    }

    /// How many sub-windows the window has.
    pub fn sub_windows(&self) -> u32 {
        self.sub_windows
    }

    /// Changes the limit at `now_micros`, keeping every sub-window's count,
    /// as Go's `SetLimitAt` and Guava's `setRate` keep what was taken: a
    /// lower limit refuses until enough sub-windows have slid out to bring
    /// the count under it, and a higher one admits the difference at once.
    /// The state first moves to `now_micros` (the sub-windows that slid out
    /// count nothing), as a decision there would see it.
    ///
    /// Errors, changing nothing, on the bounds of [`new`](Self::new).
    pub fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        check_limit(limit, u64::from(u32::MAX), Argument::SlidingWindowLimit)?;
        let (index, _, counts) = self.advanced(now_micros);
        self.current = index;
        self.counts = counts;
        self.limit = limit as u32;
        Ok(())
    }

    /// The number of sub-windows, from a state that may be garbage (a torn
    /// read in the std layer): always in `1..=16`.
    #[inline]
    fn n(&self) -> u32 {
        self.sub_windows.clamp(1, MAX_SUB_WINDOWS)
    }

    #[inline]
    fn slot(&self, sub_window: i64) -> usize {
        sub_window.rem_euclid(i64::from(self.n())) as usize
    }

    /// The ring as of `now`: the current sub-window (never before the
    /// latest seen), its slot, and the counts, the ones that slid out set
    /// to 0.
    #[inline]
    fn advanced(&self, now: i64) -> (i64, usize, [u32; SLOTS]) {
        let sub = self.sub_micros.max(1);
        let n = self.n() as usize;
        let index = now.div_euclid(sub).max(self.current);
        let mut counts = self.counts;
        let passed = i128::from(index) - i128::from(self.current);
        let mut slot = self.slot(self.current);
        if passed >= n as i128 {
            counts = [0; SLOTS];
            slot = self.slot(index);
        } else {
            // Walk the ring forward one sub-window at a time (no division).
            for _ in 0..passed {
                slot = if slot + 1 == n { 0 } else { slot + 1 };
                counts[slot] = 0;
            }
        }
        (index, slot, counts)
    }

    #[inline]
    fn decide(&self, cost: u64, now_micros: i64) -> (Decision, Option<(i64, [u32; SLOTS])>) {
        let (index, slot, mut counts) = self.advanced(now_micros);
        let n = self.n() as usize;
        let limit = u64::from(self.limit);
        let sub = i128::from(self.sub_micros.max(1));
        let now = i128::from(now_micros).max(i128::from(index) * sub);
        let window = i64::try_from(sub * n as i128).unwrap_or(NEVER);
        // The k-th oldest sub-window (k = 0 is `index − n + 1`) sits in the
        // slot after the current one, wrapping, and stops counting when
        // sub-window `index + 1 + k` starts.
        let oldest = if slot + 1 == n { 0 } else { slot + 1 };
        let kth = |counts: &[u32; SLOTS], k: usize| {
            let at = oldest + k;
            u64::from(counts[if at >= n { at - n } else { at }])
        };
        let expires = |k: usize| i64::try_from((i128::from(index) + 1 + k as i128) * sub - now).unwrap_or(NEVER);
        let reset_after = |counts: &[u32; SLOTS]| match (0..n).rev().find(|&k| kth(counts, k) > 0) {
            Some(newest) => expires(newest),
            None => 0,
        };
        let total: u64 = counts[..n].iter().map(|&c| u64::from(c)).sum();
        let after = total.saturating_add(cost);
        // A cost of 0 is a free look, admitted even over a limit lowered
        // below the count (`set_limit`).
        if cost == 0 || after <= limit {
            counts[slot] = counts[slot].saturating_add(cost as u32);
            let decision = Decision::allowed(limit, limit.saturating_sub(after), reset_after(&counts), window);
            return (decision, (cost > 0).then_some((index, counts)));
        }
        let retry_after = if cost > limit {
            NEVER
        } else {
            // Wait for the oldest sub-windows to slide out until it fits.
            let mut left = total;
            let mut retry = NEVER;
            for k in 0..n {
                left = left.saturating_sub(kth(&counts, k));
                if left + cost <= limit {
                    retry = expires(k);
                    break;
                }
            }
            retry
        };
        let remaining = limit.saturating_sub(total);
        (Decision::refused(limit, remaining, retry_after, reset_after(&counts), window), None)
    }
}

impl Admission for SlidingWindow {
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let (decision, update) = self.decide(cost, now_micros);
        if let Some((current, counts)) = update {
            self.current = current;
            self.counts = counts;
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(cost, now_micros).0
    }

    /// Takes `cost` units off the sub-windows still in `now_micros`'s
    /// window, newest first (a check's units go to the current sub-window,
    /// so a check and a refund at the same time cancel out), saturating:
    /// the sub-windows that slid out are gone, and give nothing back.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let (index, mut slot, mut counts) = self.advanced(now_micros);
        let n = self.n() as usize;
        let mut left = cost;
        for _ in 0..n {
            if left == 0 {
                break;
            }
            let taken = u64::from(counts[slot]).min(left);
            counts[slot] -= taken as u32;
            left -= taken;
            slot = if slot == 0 { n - 1 } else { slot - 1 };
        }
        self.current = index;
        self.counts = counts;
    }
}

/// Full when every sub-window of now's window is empty (and the state has
/// not seen a later sub-window): the ring of a fresh limiter is all zeros,
/// and a decision reads only the sub-windows that have not slid out.
impl Full for SlidingWindow {
    fn fresh(&self) -> Self {
        SlidingWindow { current: 0, counts: [0; SLOTS], ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        if now_micros < 0 || self.current > now_micros.div_euclid(self.sub_micros.max(1)) {
            return false;
        }
        let (_, _, counts) = self.advanced(now_micros);
        counts[..self.n() as usize].iter().all(|&c| c == 0)
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        let sub = i128::from(self.sub_micros.max(1));
        let n = self.n() as usize;
        // From the start of the state's own sub-window if time went back.
        let t = i128::from(now_micros).max(i128::from(self.current) * sub).max(0);
        let t64 = i64::try_from(t).unwrap_or(NEVER);
        let (index, slot, counts) = self.advanced(t64);
        // The newest non-empty sub-window, `k` places after the oldest, slides
        // out when sub-window `index + 1 + k` starts.
        let oldest = if slot + 1 == n { 0 } else { slot + 1 };
        let newest = (0..n).rev().find(|&k| counts[(oldest + k) % n] > 0);
        let at = match newest {
            Some(k) => i64::try_from((i128::from(index) + 1 + k as i128) * sub).unwrap_or(NEVER),
            None => t64,
        };
        later_than(now_micros, at)
    }
}

/// Words: the current sub-window, the 16 counters two to a word, then the
/// configuration (limit and sub-window count in one word, the sub-window
/// length).
impl Packed<11> for SlidingWindow {
    /// A decision changes the current sub-window and the counters.
    const HOT: usize = 9;

    #[inline]
    fn pack(&self) -> [u64; 11] {
        let mut w = [0u64; 11];
        w[0] = self.current as u64;
        for (i, pair) in self.counts.chunks_exact(2).enumerate() {
            w[1 + i] = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        }
        w[9] = u64::from(self.limit) | (u64::from(self.sub_windows) << 32);
        w[10] = self.sub_micros as u64;
        w
    }

    #[inline]
    fn unpack(w: [u64; 11]) -> Self {
        let mut counts = [0u32; SLOTS];
        for (i, pair) in counts.chunks_exact_mut(2).enumerate() {
            pair[0] = w[1 + i] as u32;
            pair[1] = (w[1 + i] >> 32) as u32;
        }
        SlidingWindow {
            current: w[0] as i64,
            counts,
            limit: w[9] as u32,
            sub_windows: (w[9] >> 32) as u32,
            sub_micros: w[10] as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_sub_windows_slide_out() {
        // 4 per second in quarters.
        let mut w = SlidingWindow::new(4, 1_000_000, 4).unwrap();
        assert!(w.check(3, 100_000).allowed); // quarter 0
        assert!(w.check(1, 600_000).allowed); // quarter 2
        let refused = w.check(1, 900_000);
        assert!(!refused.allowed);
        // Quarter 0 slides out when quarter 4 starts, at 1 s.
        assert_eq!(refused.retry_after_micros, 100_000);
        // Whole again when quarter 2 slides out, at 1.5 s.
        assert_eq!(refused.reset_after_micros, 600_000);
        let d = w.check(3, 1_000_000);
        assert_eq!((d.allowed, d.remaining), (true, 0));
        assert_eq!(w.check(5, 1_000_000).retry_after_micros, NEVER);
    }

    #[test]
    fn one_sub_window_is_a_fixed_window() {
        let mut s = SlidingWindow::new(5, 1_000, 1).unwrap();
        let mut f = crate::FixedWindow::new(5, 1_000).unwrap();
        for (now, cost) in [(0, 2), (10, 3), (999, 1), (1_000, 5), (1_500, 1), (2_999, 4), (3_000, 6)] {
            assert_eq!(s.check(cost, now), f.check(cost, now), "at {now}");
        }
    }

    #[test]
    fn worst_case_needs_most_of_a_window() {
        // 10 per second in 10 sub-windows: the full limit twice within 2 ×
        // limit needs the bursts 0.9 s apart.
        let mut w = SlidingWindow::new(10, 1_000_000, 10).unwrap();
        assert!(w.check(10, 99_999).allowed);
        assert!(!w.check(1, 999_999).allowed);
        assert!(w.check(10, 1_000_000).allowed);
    }

    #[test]
    fn set_limit_keeps_the_sub_windows() {
        // 6 per second in quarters: 3 in quarter 0, 2 in quarter 1.
        let mut w = SlidingWindow::new(6, 1_000_000, 4).unwrap();
        assert!(w.check(3, 100_000).allowed);
        assert!(w.check(2, 300_000).allowed);
        // Lower than the 5 counted: refused until quarter 0 slides out at
        // 1 s, which leaves 2, under 3.
        w.set_limit(3, 400_000).unwrap();
        let refused = w.check(1, 500_000);
        assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 3, 0));
        assert_eq!(refused.retry_after_micros, 500_000);
        let look = w.check(0, 500_000);
        assert_eq!((look.allowed, look.remaining), (true, 0), "a cost of 0 is a free look");
        assert!(!w.check(1, 999_999).allowed);
        assert!(w.check(1, 1_000_000).allowed);
        // Higher: the difference at once.
        w.set_limit(10, 1_000_000).unwrap();
        let d = w.check(7, 1_000_000);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 10, 0));
        assert_eq!(w.limit(), 10);
    }

    #[test]
    fn set_limit_errors_change_nothing() {
        let mut w = SlidingWindow::new(3, 1_000, 2).unwrap();
        w.check(2, 10);
        let before = w;
        assert_eq!(w.set_limit(0, 5_000), Err(Error::invalid_int(Argument::SlidingWindowLimit, 0)));
        let above = u64::from(u32::MAX) + 1;
        assert_eq!(w.set_limit(above, 5_000), Err(Error::invalid_uint(Argument::SlidingWindowLimit, above)));
        assert_eq!(w, before);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert!(SlidingWindow::new(0, 1_000, 2).is_err());
        assert!(SlidingWindow::new(u64::from(u32::MAX) + 1, 1_000, 2).is_err());
        assert_eq!(SlidingWindow::new(1, 1_000, 0), Err(Error::invalid_int(Argument::SubWindows, 0)));
        assert_eq!(SlidingWindow::new(1, 1_000, 17), Err(Error::invalid_int(Argument::SubWindows, 17)));
        assert_eq!(SlidingWindow::new(1, 1_000, 3), Err(Error::invalid_int(Argument::SubWindows, 3)));
        assert!(SlidingWindow::new(1, 0, 1).is_err());
        assert!(SlidingWindow::new(u64::from(u32::MAX), 16, 16).is_ok());
    }

    #[test]
    fn time_going_backwards_revives_nothing() {
        let mut w = SlidingWindow::new(2, 1_000, 2).unwrap();
        assert!(w.check(2, 10_200).allowed);
        assert!(!w.check(1, 9_000).allowed);
        assert!(!w.check(1, i64::MIN).allowed);
        assert!(w.check(1, 11_000).allowed);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let mut w = SlidingWindow::new(u64::from(u32::MAX), i64::MAX - i64::MAX % 16, 16).unwrap();
        let mut small = SlidingWindow::new(1, 1, 1).unwrap();
        for now in [i64::MIN, -1, 0, 1, i64::MAX, i64::MIN] {
            for cost in [0, 1, u64::from(u32::MAX), u64::MAX] {
                let _ = (w.check(cost, now), w.peek(cost, now), small.check(cost, now));
            }
        }
        for garbage in [[u64::MAX; 11], [0; 11]] {
            let _ = SlidingWindow::unpack(garbage).peek(1, 5);
        }
    }

    #[test]
    fn packing_round_trips() {
        let mut w = SlidingWindow::new(100, 1_600, 16).unwrap();
        let before = w.pack();
        for now in (0..3_000).step_by(70) {
            w.check(3, now);
        }
        assert_eq!(before[SlidingWindow::HOT..], w.pack()[SlidingWindow::HOT..]);
        assert_eq!(SlidingWindow::unpack(w.pack()), w);
    }
}
