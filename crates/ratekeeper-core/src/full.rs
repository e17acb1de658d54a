//! [`Full`]: when a limiter's state is back to the state it started in, so
//! that forgetting it changes nothing.
//!
//! A keyed limiter keeps one state per key (per user, per user and action)
//! and must not grow without bound. A key whose state is *full* — every unit
//! of quota back, nothing pending — can be dropped and, when the key comes
//! back, recreated fresh from the template without any decision noticing.
//! This module owns that predicate, per algorithm, because it is a semantic
//! of the algorithm: which fields a decision reads, and how each one ages.
//!
//! ## The contract
//!
//! For a state `s` and a time `now ≥ 0`, `s.is_full_at(now)` promises that
//! `s` and `s.fresh()` (the same configuration, created anew at time 0) give
//! the same [`Decision`](crate::Decision) — every field — to every sequence
//! of [`check`](crate::Admission::check) and [`peek`](crate::Admission::peek)
//! calls at times `≥ now`, in non-decreasing order. Property tests
//! (`tests/full.rs`) drop every full state they meet, replace it with the
//! fresh one, and compare each later decision with a twin that was never
//! dropped.
//!
//! Times before 0 (before any state was created) are never full, and a state
//! that has seen a later time than `now` (time went backwards) is not full
//! at `now`: both keep the predicate conservative where a fresh state would
//! read the clock differently.
//!
//! What "full" means, per algorithm (each impl sits beside its algorithm):
//!
//! | algorithm | full at `now` when |
//! |---|---|
//! | [`Gcra`](crate::Gcra) | the theoretical arrival time is not after `now` |
//! | [`TokenBucket`](crate::TokenBucket) | the bucket has refilled to `burst` by `now` (or the rate is infinite) |
//! | [`LeakyBucketMeter`](crate::LeakyBucketMeter) | the water has drained away by `now` |
//! | [`LeakyBucketQueue`](crate::LeakyBucketQueue) | the queue's first free slot is not after `now` |
//! | [`FixedWindow`](crate::FixedWindow) | nothing is counted in `now`'s window |
//! | [`SlidingWindow`](crate::SlidingWindow) | every sub-window in `now`'s window is empty |
//! | [`SlidingWindowCounter`](crate::SlidingWindowCounter) | both counters are 0 as of `now` |
//! | [`SlidingLog`](crate::SlidingLog) | every logged unit has slid out by `now` |
//! | [`Composite`](crate::Composite) | every part is full |
//!
//! which is the same as "the decision of a free look (cost 0) at `now` has
//! a `reset_after_micros` of 0" — the tests check that too.
//!
//! [`full_at_micros`](Full::full_at_micros) says when a state will be full
//! if nothing more is admitted. A keyed limiter that is at its bound uses it
//! to know, without scanning, that no key can be dropped yet: an admission
//! only ever pushes that time later, so the earliest one over all keys is a
//! lower bound until a new key arrives.

/// A state machine that can tell when its state is indistinguishable from a
/// fresh one. See the [module docs](self) for the contract.
pub trait Full: Sized {
    /// The same configuration, created anew at time 0: what a state is
    /// compared with.
    fn fresh(&self) -> Self;

    /// Whether this state gives the same decisions as [`fresh`](Self::fresh)
    /// to every sequence of calls at times `≥ now_micros`, so that it can be
    /// dropped and recreated. False for a negative `now_micros`.
    fn is_full_at(&self, now_micros: i64) -> bool;

    /// The earliest time (microseconds since creation, `≥ now_micros`) at
    /// which [`is_full_at`](Self::is_full_at) holds if nothing more is
    /// admitted, or an earlier one: never later than the truth, and
    /// `now_micros` exactly when the state is full already. [`NEVER`]
    /// (`i64::MAX`) when it never will be (a token bucket that does not
    /// refill). When the state is not full at `now_micros` this is at least
    /// `now_micros + 1`.
    ///
    /// [`NEVER`]: crate::NEVER
    fn full_at_micros(&self, now_micros: i64) -> i64;
}

/// `max(now + 1, at)` for a state that is not full at `now`: a lower bound
/// must still move past `now`, so that a caller waiting for it makes
/// progress.
#[inline]
pub(crate) fn later_than(now_micros: i64, at: i64) -> i64 {
    at.max(now_micros.saturating_add(1))
}

/// `⌈ticks / per_micro⌉` as microseconds (`per_micro ≥ 1`), saturating at
/// `i64::MAX`; for the algorithms that count time in ticks of
/// `1 / per_micro` µs.
#[inline]
pub(crate) fn micros_ceil_signed(ticks: i128, per_micro: u64) -> i64 {
    // 128-bit division is a slow library call; real limiters fit in 64 bits.
    if let Ok(small) = u64::try_from(ticks) {
        let d = per_micro.max(1);
        return i64::try_from(small / d + u64::from(small % d != 0)).unwrap_or(i64::MAX);
    }
    let d = i128::from(per_micro.max(1));
    let q = ticks.div_euclid(d) + i128::from(ticks.rem_euclid(d) != 0);
    i64::try_from(q).unwrap_or(if q < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(later_than(5, 3), 6);
        assert_eq!(later_than(5, 9), 9);
        assert_eq!(later_than(i64::MAX, 0), i64::MAX);
        assert_eq!(micros_ceil_signed(7, 2), 4);
        assert_eq!(micros_ceil_signed(-7, 2), -3);
        assert_eq!(micros_ceil_signed(6, 3), 2);
        assert_eq!(micros_ceil_signed(i128::MAX, 1), i64::MAX);
        assert_eq!(micros_ceil_signed(i128::MIN, 1), i64::MIN);
        assert_eq!(micros_ceil_signed(5, 0), 5);
        assert_eq!(micros_ceil_signed(i128::from(u64::MAX), 1), i64::MAX);
        assert_eq!(micros_ceil_signed(1 << 70, 1 << 10), 1 << 60);
        assert_eq!(micros_ceil_signed(0, 7), 0);
    }
}
