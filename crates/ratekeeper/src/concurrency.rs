//! [`ConcurrencyLimiter`]: at most `limit` requests in flight, the limit
//! fixed or adaptive (the gradient rule, AIMD), shareable between threads.
//! Semantics in [`core::concurrency`](ratekeeper_core::concurrency).

use std::time::Duration;

use ratekeeper_core::concurrency::{ConcurrencyLimiter as CoreLimiter, ConcurrencyPolicy, Outcome, Permit};
use ratekeeper_core::{AimdConfig, Argument, Decision, Error, GradientConfig};

use crate::clock::{Clock, MonotonicClock};
use crate::shared::Shared;
use crate::units::micros_from_duration;

/// A concurrency limiter: requests take a [`Permit`] when they start and
/// give it back, with their [`Outcome`], when they end; an adaptive policy
/// learns the limit from their round-trip times.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{AimdConfig, ConcurrencyLimiter, ManualClock, Outcome};
///
/// let clock = Arc::new(ManualClock::new());
/// let config = AimdConfig { initial_limit: 2, min_limit: 1, max_limit: 10, ..AimdConfig::default() };
/// let limiter = ConcurrencyLimiter::aimd_with_clock(config, Arc::clone(&clock))?;
/// let (decision, permit) = limiter.try_acquire();
/// assert!(decision.allowed);
/// clock.advance(Duration::from_millis(20));
/// assert_eq!(limiter.release(permit.unwrap(), Outcome::Success), 3); // half used: +1
///
/// // Or with a guard that releases itself (as "ignored" unless told).
/// let guard = limiter.try_acquire_guard().unwrap();
/// guard.success();
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct ConcurrencyLimiter<C: Clock = MonotonicClock> {
    inner: Shared<CoreLimiter, 13, C>,
}

impl ConcurrencyLimiter<MonotonicClock> {
    /// A fixed limit of `limit` requests in flight. Errors on 0 or above
    /// `i64::MAX`.
    pub fn fixed(limit: u64) -> Result<Self, Error> {
        Ok(Self::with_clock(ConcurrencyPolicy::fixed(limit)?, MonotonicClock::new()))
    }

    /// A limit set by the gradient rule (Netflix's `GradientLimit`).
    pub fn gradient(config: GradientConfig) -> Result<Self, Error> {
        Ok(Self::with_clock(ConcurrencyPolicy::gradient(config)?, MonotonicClock::new()))
    }

    /// A limit set by AIMD (Netflix's `AIMDLimit`).
    pub fn aimd(config: AimdConfig) -> Result<Self, Error> {
        Ok(Self::with_clock(ConcurrencyPolicy::aimd(config)?, MonotonicClock::new()))
    }
}

impl<C: Clock> ConcurrencyLimiter<C> {
    /// A limiter with `policy` on `clock`, nothing in flight.
    pub fn with_clock(policy: ConcurrencyPolicy, clock: C) -> Self {
        ConcurrencyLimiter { inner: Shared::new(CoreLimiter::new(policy), clock) }
    }

    /// [`ConcurrencyLimiter::aimd`] on `clock`.
    pub fn aimd_with_clock(config: AimdConfig, clock: C) -> Result<Self, Error> {
        Ok(Self::with_clock(ConcurrencyPolicy::aimd(config)?, clock))
    }

    /// [`ConcurrencyLimiter::gradient`] on `clock`.
    pub fn gradient_with_clock(config: GradientConfig, clock: C) -> Result<Self, Error> {
        Ok(Self::with_clock(ConcurrencyPolicy::gradient(config)?, clock))
    }

    /// Takes a permit if fewer than `limit` are out. Always returns the
    /// decision; the permit comes with an admitted one and must be given
    /// back to [`release`](Self::release) exactly once. (Plain data, for
    /// bindings; Rust callers may prefer
    /// [`try_acquire_guard`](Self::try_acquire_guard).)
    pub fn try_acquire(&self) -> (Decision, Option<Permit>) {
        match self.inner.decide(|l, now| l.try_acquire(now)) {
            Ok((permit, decision)) => (decision, Some(permit)),
            Err(decision) => (decision, None),
        }
    }

    /// Gives a permit back: its round-trip time is measured now, and a
    /// success or a drop is a sample for an adaptive policy. Returns the new
    /// limit.
    pub fn release(&self, permit: Permit, outcome: Outcome) -> u64 {
        self.inner.decide(|l, now| l.release(permit, outcome, now))
    }

    /// [`try_acquire`](Self::try_acquire) as a guard that releases its
    /// permit when dropped (as [`Outcome::Ignored`] unless
    /// [`success`](PermitGuard::success) or
    /// [`dropped`](PermitGuard::dropped) said otherwise).
    pub fn try_acquire_guard(&self) -> Result<PermitGuard<'_, C>, Decision> {
        match self.try_acquire() {
            (_, Some(permit)) => Ok(PermitGuard { limiter: self, permit: Some(permit) }),
            (decision, None) => Err(decision),
        }
    }

    /// Feeds the policy a sample measured elsewhere (no permit involved):
    /// a request that took `rtt` while `in_flight` were in flight. Returns
    /// the new limit. Errors, changing nothing, on an `rtt` of `i64::MAX`
    /// microseconds or more (the rule of every duration).
    pub fn sample(&self, rtt: Duration, in_flight: u64, dropped: bool) -> Result<u64, Error> {
        let rtt = micros_from_duration(Argument::Rtt, rtt)?;
        Ok(self.inner.decide(|l, _| l.sample(rtt, in_flight, dropped)))
    }

    /// The current limit.
    pub fn limit(&self) -> u64 {
        self.inner.get().limit()
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> u64 {
        self.inner.get().in_flight()
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreLimiter {
        self.inner.get()
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        self.inner.clock()
    }
}

/// A permit that releases itself when dropped. Say how the request went
/// with [`success`](Self::success) or [`dropped`](Self::dropped); otherwise
/// it counts as [`Outcome::Ignored`] (no sample).
#[derive(Debug)]
#[must_use = "dropping the guard releases the permit at once"]
pub struct PermitGuard<'a, C: Clock> {
    limiter: &'a ConcurrencyLimiter<C>,
    permit: Option<Permit>,
}

impl<C: Clock> PermitGuard<'_, C> {
    /// The request succeeded: releases the permit with a sample. Returns the
    /// new limit.
    pub fn success(mut self) -> u64 {
        self.release(Outcome::Success)
    }

    /// The request was dropped or timed out: releases the permit with a
    /// congestion sample. Returns the new limit.
    pub fn dropped(mut self) -> u64 {
        self.release(Outcome::Dropped)
    }

    fn release(&mut self, outcome: Outcome) -> u64 {
        match self.permit.take() {
            Some(permit) => self.limiter.release(permit, outcome),
            None => self.limiter.limit(),
        }
    }
}

impl<C: Clock> Drop for PermitGuard<'_, C> {
    fn drop(&mut self) {
        self.release(Outcome::Ignored);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::Arc;

    #[test]
    fn permits_are_counted_and_guards_release_themselves() {
        let limiter = ConcurrencyLimiter::with_clock(ConcurrencyPolicy::fixed(2).unwrap(), ManualClock::new());
        let a = limiter.try_acquire_guard().unwrap();
        let b = limiter.try_acquire_guard().unwrap();
        let refused = limiter.try_acquire_guard().unwrap_err();
        assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 2, 0));
        drop(a);
        assert_eq!(limiter.in_flight(), 1);
        b.success();
        assert_eq!(limiter.in_flight(), 0);
    }

    #[test]
    fn gradient_learns_from_round_trips() {
        let clock = Arc::new(ManualClock::new());
        let config = GradientConfig { initial_limit: 4, probe_interval: 0, ..GradientConfig::default() };
        let limiter = ConcurrencyLimiter::gradient_with_clock(config, Arc::clone(&clock)).unwrap();
        let permits: Vec<_> = (0..4).map(|_| limiter.try_acquire().1.unwrap()).collect();
        clock.advance(Duration::from_millis(10));
        for p in permits {
            limiter.release(p, Outcome::Success);
        }
        // Flat RTTs: +4 (the queue size) for each sample whose request
        // started with at least half the limit in flight — the 2nd (2 of 4)
        // and the 4th (4 of 8) — and nothing for the others.
        assert_eq!(limiter.limit(), 12);
        assert!(ConcurrencyLimiter::fixed(0).is_err());
    }

    #[test]
    fn threads_never_exceed_the_limit() {
        let limiter = Arc::new(ConcurrencyLimiter::fixed(3).unwrap());
        let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (limiter, peak) = (Arc::clone(&limiter), Arc::clone(&peak));
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        if let Ok(guard) = limiter.try_acquire_guard() {
                            peak.fetch_max(limiter.in_flight(), std::sync::atomic::Ordering::Relaxed);
                            guard.success();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(std::sync::atomic::Ordering::Relaxed) <= 3);
        assert_eq!(limiter.in_flight(), 0);
    }
}
