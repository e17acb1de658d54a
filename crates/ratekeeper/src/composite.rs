//! [`CompositeLimiter`]: several limits on one key, admitted all or
//! nothing, shareable between threads. Semantics in
//! [`core::composite`](ratekeeper_core::composite).

use std::sync::PoisonError;

use ratekeeper_core::composite;
use ratekeeper_core::{Argument, Decision, Error, LimiterSpec};

use crate::any_limiter::AnyCore;
use crate::clock::{Clock, MonotonicClock};
use crate::sync::Mutex;

/// Several limits of any kinds — "10 per second *and* 1,000 per hour" — that
/// must all admit a request; a refusal by any consumes nothing in any.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::{CompositeLimiter, LimiterSpec, ManualClock};
///
/// let per_second = LimiterSpec::TokenBucket { rate: 10.0, burst: 10 };
/// let per_hour = LimiterSpec::FixedWindow { limit: 1_000, window_micros: 3_600_000_000 };
/// let limiter = CompositeLimiter::with_clock(&[per_second, per_hour], Arc::new(ManualClock::new()))?;
/// let (decision, parts) = limiter.check_each(1);
/// assert!(decision.allowed);
/// assert_eq!((parts[0].remaining, parts[1].remaining), (9, 999));
/// # Ok::<(), ratekeeper::Error>(())
/// ```
///
/// The parts sit together behind a [`Mutex`]: the point is that they change
/// together, and their number and kinds are only known at run time, so they
/// do not fit the fixed handful of words a lock-free compare-and-swap
/// publishes. The clock is read under the lock, so decisions are made in
/// the order of their times.
#[derive(Debug)]
pub struct CompositeLimiter<C: Clock = MonotonicClock> {
    parts: Mutex<Vec<AnyCore>>,
    specs: Vec<LimiterSpec>,
    clock: C,
    origin_micros: i64,
}

impl CompositeLimiter<MonotonicClock> {
    /// The composite of `specs` on the monotonic clock.
    pub fn new(specs: &[LimiterSpec]) -> Result<Self, Error> {
        Self::with_clock(specs, MonotonicClock::new())
    }
}

impl<C: Clock> CompositeLimiter<C> {
    /// The composite of `specs`, created now on `clock`. Errors when `specs`
    /// is empty (a composite of nothing would admit everything) or any part
    /// is invalid (that part's own error).
    pub fn with_clock(specs: &[LimiterSpec], clock: C) -> Result<Self, Error> {
        if specs.is_empty() {
            return Err(Error::invalid_int(Argument::Limits, 0));
        }
        let parts = specs.iter().map(AnyCore::new).collect::<Result<Vec<_>, _>>()?;
        let origin_micros = clock.now_micros();
        Ok(CompositeLimiter { parts: Mutex::new(parts), specs: specs.to_vec(), clock, origin_micros })
    }

    fn with_parts<R>(&self, f: impl FnOnce(&mut [AnyCore], i64) -> R) -> R {
        // The core never panics, so a poisoned lock holds consistent parts.
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.clock.now_micros().wrapping_sub(self.origin_micros);
        f(&mut parts, now)
    }

    /// Admits `cost` units in every part, or in none. The decision is the
    /// strictest part's (see [`ratekeeper_core::decision::combine`]).
    pub fn check(&self, cost: u64) -> Decision {
        self.with_parts(|parts, now| composite::check_all(parts, cost, now))
    }

    /// [`check`](Self::check), with each part's own decision too (in the
    /// order of the specs): one `RateLimit` item per policy.
    pub fn check_each(&self, cost: u64) -> (Decision, Vec<Decision>) {
        let mut each = vec![Decision::allowed(0, 0, 0, 0); self.specs.len()];
        let combined = self.with_parts(|parts, now| composite::check_all_each(parts, cost, now, |i, d| each[i] = *d));
        (combined, each)
    }

    /// The decision [`check`](Self::check) would make now, consuming
    /// nothing.
    pub fn peek(&self, cost: u64) -> Decision {
        self.with_parts(|parts, now| composite::peek_all(parts, cost, now))
    }

    /// Gives back `cost` units to every part
    /// ([`composite::refund_all`]): what a check admitted, it admitted in
    /// all of them. Each part gives back what its algorithm can.
    pub fn refund(&self, cost: u64) {
        self.with_parts(|parts, now| composite::refund_all(parts, cost, now))
    }

    /// The parts' specs, in order.
    pub fn specs(&self) -> &[LimiterSpec] {
        &self.specs
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn all_or_nothing_with_each_parts_decision() {
        let clock = Arc::new(ManualClock::new());
        let specs = [
            LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 },
            LimiterSpec::SlidingLog { limit: 3, window_micros: 10_000_000 },
        ];
        let limiter = CompositeLimiter::with_clock(&specs, Arc::clone(&clock)).unwrap();
        assert_eq!(limiter.specs(), &specs);
        assert!(limiter.check(2).allowed);
        let (refused, parts) = limiter.check_each(1);
        assert!(!refused.allowed);
        assert_eq!((parts[0].allowed, parts[1].allowed, parts[1].remaining), (false, true, 1));
        clock.advance(Duration::from_secs(1));
        assert!(limiter.check(1).allowed);
        let (refused, parts) = limiter.check_each(1);
        assert_eq!((refused.allowed, refused.limit, refused.retry_after_micros), (false, 3, 9_000_000));
        assert_eq!(parts[0].remaining, 1, "the admitting part shows nothing taken");
        assert_eq!(limiter.peek(1), refused);
    }

    #[test]
    fn a_refund_gives_back_to_every_part() {
        let clock = Arc::new(ManualClock::new());
        let specs = [
            LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 },
            LimiterSpec::SlidingLog { limit: 3, window_micros: 10_000_000 },
        ];
        let limiter = CompositeLimiter::with_clock(&specs, Arc::clone(&clock)).unwrap();
        assert!(limiter.check(2).allowed);
        assert!(!limiter.check(1).allowed);
        limiter.refund(1);
        let (d, parts) = limiter.check_each(1);
        assert!(d.allowed);
        assert_eq!((parts[0].remaining, parts[1].remaining), (0, 1));
        // The second window still holds two units after the first rolled:
        // a refund there gives one back.
        clock.advance(Duration::from_secs(1));
        limiter.refund(1);
        assert_eq!(limiter.check_each(0).1[1].remaining, 2);
    }

    #[test]
    fn invalid_composites_are_errors() {
        assert!(
            matches!(CompositeLimiter::new(&[]), Err(Error::InvalidArgument(e)) if e.argument() == Argument::Limits)
        );
        let bad = [LimiterSpec::FixedWindow { limit: 0, window_micros: 1 }];
        assert!(
            matches!(CompositeLimiter::new(&bad), Err(Error::InvalidArgument(e)) if e.argument() == Argument::Limit)
        );
    }
}
