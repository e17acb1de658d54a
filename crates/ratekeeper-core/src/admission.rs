//! [`Admission`]: the one interface of every admission-style algorithm.
//!
//! A request of some cost arrives at some time; the algorithm admits it
//! (consuming the cost) or refuses it (consuming nothing), and says so with a
//! [`Decision`]. Token bucket, GCRA, both leaky buckets and all four window
//! algorithms implement this trait, which is what lets a composite limit
//! combine any of them and the std layer wrap all of them the same way.
//!
//! Costs are `u64`. A cost of 0 asks "what is the state?" without taking
//! anything: it is always admitted (redis-cell's `quantity` 0), with one
//! exception: the token bucket refuses it while reservations hold the
//! bucket in debt, as x/time/rate's `AllowN(t, 0)` does.

use crate::decision::Decision;
use crate::error::{Argument, Error};

/// An algorithm that admits or refuses requests of a given cost at a given
/// time (whole microseconds since the limiter was created).
///
/// Implementations never panic, whatever the arguments: times may go
/// backwards (they are then treated as the latest time seen, so no quota is
/// minted) and costs may exceed anything the limiter can hold (refused with
/// a retry-after of [`NEVER`](crate::NEVER)).
pub trait Admission {
    /// Admits `cost` units at `now_micros` if the algorithm allows it, and
    /// consumes them; a refusal changes nothing.
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision;

    /// The decision [`check`](Self::check) would make, without consuming
    /// anything.
    fn peek(&self, cost: u64, now_micros: i64) -> Decision;

    /// Gives back `cost` units admitted earlier that should not count (a
    /// request skipped or failed), at `now_micros`. A refund of 0, or of
    /// more than was taken, never panics: it gives back nothing, or at most
    /// what makes the state fresh again.
    ///
    /// What needs it: express-rate-limit's `Store.decrement` (behind its
    /// `skipSuccessfulRequests` and `skipFailedRequests` options), Go
    /// x/time/rate's `Reservation.Cancel` (which restores tokens), a request
    /// that failed before doing any work. A refund never lets a limiter hold
    /// more than a fresh one does, and never changes the past: what each
    /// algorithm gives back, and what it cannot, is
    ///
    /// | algorithm | a refund of `cost` at `now` |
    /// |---|---|
    /// | [`TokenBucket`](crate::TokenBucket) | `cost` tokens back, capped at the burst; while reservations hold the bucket in debt, only what exceeds the debt (x/time/rate's `CancelAt` keeps the tokens later reservations depend on); nothing under an infinite rate |
    /// | [`Gcra`](crate::Gcra) | the theoretical arrival time moved back by `cost` × the emission interval, never before `now`: nothing when the limiter is idle |
    /// | [`LeakyBucketMeter`](crate::LeakyBucketMeter) | the level at `now` down by `cost`, floored at empty |
    /// | [`FixedWindow`](crate::FixedWindow), [`SlidingWindowCounter`](crate::SlidingWindowCounter) | the current window's count down by `cost`, saturating: once the window has rolled, the units admitted in an earlier one are not given back |
    /// | [`SlidingWindow`](crate::SlidingWindow) | `cost` units off the sub-windows still in the window, newest first |
    /// | [`SlidingLog`](crate::SlidingLog) | the newest `cost` logged units still in the window dropped |
    /// | [`Composite`](crate::Composite) | every part's refund |
    /// | [`LeakyBucketQueue`](crate::LeakyBucketQueue), [`CycleLimiter`](crate::CycleLimiter) | nothing (a documented no-op) |
    ///
    /// The last two hand out *slots* (a time to act) rather than a count: a
    /// refund cannot know whose slot it gives back, and moving the next free
    /// slot back would give a later request a slot that overlaps slots already
    /// handed out (their spacing is what a shaper promises), so they keep
    /// their state: conservative, never over-admitting. Guava's
    /// `RateLimiter` has no refund, and [`SmoothRateLimiter`](crate::SmoothRateLimiter)
    /// is not an `Admission`.
    ///
    /// A check followed at the same time by a refund of the same cost leaves
    /// every later [`peek`](Self::peek) as it was before the check (for
    /// every algorithm but the two no-ops; the token bucket's token count is a
    /// double, so its tokens may differ in the last bits, and its decisions by
    /// a microsecond of rounding). A refund at a later time gives back against
    /// the state as it has aged by then: a window that has rolled, a bucket
    /// that has refilled to its burst, give back nothing.
    fn refund(&mut self, cost: u64, now_micros: i64);
}

/// A cost from a binding's signed integer: not negative. (Every `u64` is a
/// valid cost for the algorithms; those whose arithmetic is on `i64`
/// saturate.)
pub fn cost_from_i64(cost: i64) -> Result<u64, Error> {
    unsigned_from_i64(Argument::Cost, cost)
}

/// Any count or size from a binding's signed integer: negative values are an
/// invalid `argument`. The algorithms then check their own upper bounds.
pub fn unsigned_from_i64(argument: Argument, value: i64) -> Result<u64, Error> {
    u64::try_from(value).map_err(|_| Error::invalid_int(argument, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_from_bindings() {
        assert_eq!(cost_from_i64(0), Ok(0));
        assert_eq!(cost_from_i64(i64::MAX), Ok(i64::MAX as u64));
        assert_eq!(cost_from_i64(-1), Err(Error::invalid_int(Argument::Cost, -1)));
    }
}
