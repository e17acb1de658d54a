//! The concurrency limiter: at most `limit` requests in flight, with the
//! limit fixed or driven by an adaptive policy.
//!
//! A request takes a [`Permit`] when it starts (refused when `limit`
//! permits are out) and gives it back when it ends, saying how it went
//! ([`Outcome`]). With an adaptive policy ([`Gradient`], [`Aimd`]) every
//! successful or dropped request is a sample: its round-trip time (from
//! the permit's start to its release) and the number of requests in flight
//! when it started, exactly what Netflix concurrency-limits'
//! `AbstractLimiter` feeds its `Limit.onSample`. So the limit finds the
//! capacity of a service nobody configured.
//!
//! Refusals answer with the same [`Decision`] as every admission-style
//! algorithm: `limit`, `remaining` (permits left), and a `retry_after` of 0
//! — a permit frees up when a request in flight ends, which nothing can
//! foresee. `reset_after` and `window` are 0: concurrency has no window.

use crate::aimd::{Aimd, AimdConfig};
use crate::decision::Decision;
use crate::error::{Argument, Error};
use crate::gradient::{Gradient, GradientConfig};
use crate::packed::Packed;

/// What sets a [`ConcurrencyLimiter`]'s limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConcurrencyPolicy {
    /// A fixed limit (at least 1).
    Fixed(u64),
    /// The gradient rule (Netflix's `GradientLimit`).
    Gradient(Gradient),
    /// Additive increase, multiplicative decrease (Netflix's `AIMDLimit`).
    Aimd(Aimd),
}

impl ConcurrencyPolicy {
    /// A fixed limit; errors when it is 0 or above `i64::MAX`.
    pub fn fixed(limit: u64) -> Result<Self, Error> {
        if limit == 0 || limit > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::Limit, limit));
        }
        Ok(ConcurrencyPolicy::Fixed(limit))
    }

    /// The gradient rule with `config`.
    pub fn gradient(config: GradientConfig) -> Result<Self, Error> {
        Gradient::new(config).map(ConcurrencyPolicy::Gradient)
    }

    /// AIMD with `config`.
    pub fn aimd(config: AimdConfig) -> Result<Self, Error> {
        Aimd::new(config).map(ConcurrencyPolicy::Aimd)
    }

    /// The current limit.
    #[inline]
    pub fn limit(&self) -> u64 {
        match self {
            ConcurrencyPolicy::Fixed(limit) => *limit,
            ConcurrencyPolicy::Gradient(g) => g.limit(),
            ConcurrencyPolicy::Aimd(a) => a.limit(),
        }
    }

    /// Feeds one sample to an adaptive policy (a fixed one ignores it) and
    /// returns the new limit.
    #[inline]
    pub fn on_sample(&mut self, rtt_micros: i64, in_flight: u64, dropped: bool) -> u64 {
        match self {
            ConcurrencyPolicy::Fixed(limit) => *limit,
            ConcurrencyPolicy::Gradient(g) => g.on_sample(rtt_micros, in_flight, dropped),
            ConcurrencyPolicy::Aimd(a) => a.on_sample(rtt_micros, in_flight, dropped),
        }
    }
}

/// How a request that held a permit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It completed: its RTT is a sample (Netflix's `onSuccess`).
    Success,
    /// It was dropped, timed out or rejected downstream: a congestion
    /// signal (Netflix's `onDropped`).
    Dropped,
    /// It ended in a way that says nothing about the service (a client
    /// error, a cancellation): no sample (Netflix's `onIgnore`).
    Ignored,
}

impl Outcome {
    /// `"success"`, `"dropped"` or `"ignored"`.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Dropped => "dropped",
            Outcome::Ignored => "ignored",
        }
    }

    /// The outcome of that name.
    pub fn from_name(name: &str) -> Option<Outcome> {
        match name {
            "success" => Some(Outcome::Success),
            "dropped" => Some(Outcome::Dropped),
            "ignored" => Some(Outcome::Ignored),
            _ => None,
        }
    }
}

/// A request's permit: plain data to give back to
/// [`ConcurrencyLimiter::release`] exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use = "a permit must be released, or the limiter stays one short"]
pub struct Permit {
    /// When the request started (microseconds since the limiter's creation).
    pub start_micros: i64,
    /// Requests in flight right after this one started, itself included.
    pub in_flight: u64,
}

/// At most `limit` requests in flight; the limit set by a
/// [`ConcurrencyPolicy`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConcurrencyLimiter {
    in_flight: u64,
    policy: ConcurrencyPolicy,
}

impl ConcurrencyLimiter {
    /// A limiter with nothing in flight.
    pub fn new(policy: ConcurrencyPolicy) -> Self {
        ConcurrencyLimiter { in_flight: 0, policy }
    }

    /// The current limit.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.policy.limit()
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The policy, with its state.
    pub fn policy(&self) -> &ConcurrencyPolicy {
        &self.policy
    }

    /// Takes a permit at `now_micros` if fewer than `limit` are out.
    #[inline]
    pub fn try_acquire(&mut self, now_micros: i64) -> Result<(Permit, Decision), Decision> {
        let limit = self.limit();
        if self.in_flight >= limit {
            return Err(Decision::refused(limit, 0, 0, 0, 0));
        }
        self.in_flight += 1;
        let decision = Decision::allowed(limit, limit - self.in_flight, 0, 0);
        Ok((Permit { start_micros: now_micros, in_flight: self.in_flight }, decision))
    }

    /// Gives back a permit at `now_micros`; a success or a drop feeds the
    /// policy a sample (RTT = `now − start`, never negative). Returns the new
    /// limit. Requests now in flight may exceed a limit that just shrank;
    /// new ones wait until they drain.
    #[inline]
    pub fn release(&mut self, permit: Permit, outcome: Outcome, now_micros: i64) -> u64 {
        self.in_flight = self.in_flight.saturating_sub(1);
        let rtt = now_micros.saturating_sub(permit.start_micros).max(0);
        match outcome {
            Outcome::Success => self.policy.on_sample(rtt, permit.in_flight, false),
            Outcome::Dropped => self.policy.on_sample(rtt, permit.in_flight, true),
            Outcome::Ignored => self.limit(),
        }
    }

    /// Feeds the policy a sample measured elsewhere, without any permit:
    /// for callers that track their own requests. Returns the new limit.
    #[inline]
    pub fn sample(&mut self, rtt_micros: i64, in_flight: u64, dropped: bool) -> u64 {
        self.policy.on_sample(rtt_micros, in_flight, dropped)
    }
}

const FIXED: u64 = 0;
const GRADIENT: u64 = 1;
const AIMD: u64 = 2;

/// Words: in flight and the policy's state (limit or estimate, no-load RTT,
/// probe countdown), then the policy's kind and parameters.
impl Packed<13> for ConcurrencyLimiter {
    /// Acquiring, releasing and sampling change the count in flight and the
    /// policy's state.
    const HOT: usize = 4;

    #[inline]
    fn pack(&self) -> [u64; 13] {
        let mut w = [0u64; 13];
        w[0] = self.in_flight;
        match self.policy {
            ConcurrencyPolicy::Fixed(limit) => {
                w[1] = limit;
                w[4] = FIXED;
            }
            ConcurrencyPolicy::Gradient(g) => {
                let c = g.config;
                w[1] = g.estimated_limit.to_bits();
                w[2] = g.rtt_noload as u64;
                w[3] = g.probe_countdown;
                w[4] = GRADIENT;
                w[5..13].copy_from_slice(&[
                    c.initial_limit,
                    c.min_limit,
                    c.max_limit,
                    c.queue_size,
                    c.smoothing.to_bits(),
                    c.rtt_tolerance.to_bits(),
                    c.backoff_ratio.to_bits(),
                    c.probe_interval,
                ]);
            }
            ConcurrencyPolicy::Aimd(a) => {
                let c = a.config;
                w[1] = a.limit;
                w[4] = AIMD;
                w[5..8].copy_from_slice(&[c.initial_limit, c.min_limit, c.max_limit]);
                w[11] = c.backoff_ratio.to_bits();
                w[12] = c.rtt_timeout_micros as u64;
            }
        }
        w
    }

    #[inline]
    fn unpack(w: [u64; 13]) -> Self {
        let policy = match w[4] {
            GRADIENT => ConcurrencyPolicy::Gradient(Gradient {
                estimated_limit: f64::from_bits(w[1]),
                rtt_noload: w[2] as i64,
                probe_countdown: w[3],
                config: GradientConfig {
                    initial_limit: w[5],
                    min_limit: w[6],
                    max_limit: w[7],
                    queue_size: w[8],
                    smoothing: f64::from_bits(w[9]),
                    rtt_tolerance: f64::from_bits(w[10]),
                    backoff_ratio: f64::from_bits(w[11]),
                    probe_interval: w[12],
                },
            }),
            AIMD => ConcurrencyPolicy::Aimd(Aimd {
                limit: w[1],
                config: AimdConfig {
                    initial_limit: w[5],
                    min_limit: w[6],
                    max_limit: w[7],
                    backoff_ratio: f64::from_bits(w[11]),
                    rtt_timeout_micros: w[12] as i64,
                },
            }),
            _ => ConcurrencyPolicy::Fixed(w[1]),
        };
        ConcurrencyLimiter { in_flight: w[0], policy }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_limit_counts_permits() {
        let mut l = ConcurrencyLimiter::new(ConcurrencyPolicy::fixed(2).unwrap());
        let (a, d) = l.try_acquire(0).unwrap();
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 2, 1));
        let (b, _) = l.try_acquire(5).unwrap();
        let refused = l.try_acquire(6).unwrap_err();
        assert_eq!((refused.allowed, refused.remaining, refused.retry_after_micros), (false, 0, 0));
        assert_eq!(l.release(a, Outcome::Success, 10), 2);
        assert_eq!(l.in_flight(), 1);
        assert!(l.try_acquire(11).is_ok());
        l.release(b, Outcome::Ignored, 12);
        assert_eq!(b.in_flight, 2);
    }

    #[test]
    fn adaptive_policy_is_driven_by_releases() {
        let aimd = ConcurrencyPolicy::aimd(AimdConfig {
            initial_limit: 2,
            min_limit: 1,
            max_limit: 10,
            ..AimdConfig::default()
        })
        .unwrap();
        let mut l = ConcurrencyLimiter::new(aimd);
        let (p, _) = l.try_acquire(0).unwrap();
        // One in flight of a limit of 2: half used, so a success raises it.
        assert_eq!(l.release(p, Outcome::Success, 1_000), 3);
        let (p, _) = l.try_acquire(2_000).unwrap();
        assert_eq!(l.release(p, Outcome::Dropped, 2_500), 2);
        let (p, _) = l.try_acquire(3_000).unwrap();
        assert_eq!(l.release(p, Outcome::Ignored, 3_001), 2);
        // An RTT over the timeout is a drop.
        let (p, _) = l.try_acquire(0).unwrap();
        assert_eq!(l.release(p, Outcome::Success, 5_000_001), 1);
    }

    #[test]
    fn invalid_fixed_limits_are_errors() {
        assert_eq!(ConcurrencyPolicy::fixed(0), Err(Error::invalid_int(Argument::Limit, 0)));
        assert!(ConcurrencyPolicy::fixed(u64::MAX).is_err());
    }

    #[test]
    fn releases_never_underflow_and_rtts_never_go_negative() {
        let mut l = ConcurrencyLimiter::new(ConcurrencyPolicy::gradient(GradientConfig::default()).unwrap());
        let stray = Permit { start_micros: i64::MAX, in_flight: u64::MAX };
        l.release(stray, Outcome::Success, i64::MIN);
        assert_eq!(l.in_flight(), 0);
        assert!(l.try_acquire(0).is_ok());
    }

    #[test]
    fn packing_round_trips_every_policy() {
        for policy in [
            ConcurrencyPolicy::fixed(7).unwrap(),
            ConcurrencyPolicy::gradient(GradientConfig::default()).unwrap(),
            ConcurrencyPolicy::aimd(AimdConfig::default()).unwrap(),
        ] {
            let mut l = ConcurrencyLimiter::new(policy);
            let before = l.pack();
            let (p, _) = l.try_acquire(3).unwrap();
            l.release(p, Outcome::Success, 900);
            l.sample(100, 60, false);
            assert_eq!(before[ConcurrencyLimiter::HOT..], l.pack()[ConcurrencyLimiter::HOT..]);
            assert_eq!(ConcurrencyLimiter::unpack(l.pack()), l);
        }
    }
}
