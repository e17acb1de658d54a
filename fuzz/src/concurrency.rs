//! The concurrency limiter (`ratekeeper_core::ConcurrencyLimiter`) with a
//! fixed limit, the gradient rule or AIMD, and the std layer's
//! `ConcurrencyLimiter` (permits and guards) on a manual clock.
//!
//! Invariants: a permit is granted exactly when fewer than `limit` are in
//! flight, and then counts itself; the count in flight is the number of
//! permits held; a refusal changes nothing; the limit stays within
//! `[min_limit, max_limit]` (the fixed one never moves), and an ignored
//! outcome changes nothing but the count; configurations are refused
//! exactly as documented. The std limiter decides as its core at the
//! clock's time, and a guard dropped releases its permit.

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::Clock;
use ratekeeper_core::{
    AimdConfig, ConcurrencyLimiter, ConcurrencyPolicy, Decision, GradientConfig, Outcome, Packed, Permit,
};

use crate::contract::{check_fields, Promises};
use crate::mirror::{clock_at, Advance, TestClock};
use crate::values::{wild_f64, wild_i64, wild_u64, Step, Timeline, WildDuration, WildI64, WildU64};

/// Which policy, with what configuration.
#[derive(Debug, Clone, Copy)]
pub enum Policy {
    /// A fixed limit.
    Fixed(u64),
    /// The gradient rule.
    Gradient(GradientConfig),
    /// AIMD.
    Aimd(AimdConfig),
}

fn limit_triple(u: &mut Unstructured<'_>, sane: bool) -> Result<(u64, u64, u64)> {
    if sane {
        let min = u.int_in_range(1..=10)?;
        let max = min + u.int_in_range(0..=200)?;
        Ok((u.int_in_range(min..=max)?, min, max))
    } else {
        Ok((wild_u64(u)?, wild_u64(u)?, wild_u64(u)?))
    }
}

fn ratio(u: &mut Unstructured<'_>, sane: bool, low: u32, high: u32) -> Result<f64> {
    if sane {
        Ok(f64::from(u.int_in_range(low..=high)?) / 100.0)
    } else {
        wild_f64(u)
    }
}

impl<'a> Arbitrary<'a> for Policy {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let sane = u.ratio(3u8, 4)?;
        Ok(match u.int_in_range(0u8..=2)? {
            0 => Policy::Fixed(if sane { u.int_in_range(1..=20)? } else { wild_u64(u)? }),
            1 => {
                let (initial_limit, min_limit, max_limit) = limit_triple(u, sane)?;
                Policy::Gradient(GradientConfig {
                    initial_limit,
                    min_limit,
                    max_limit,
                    smoothing: ratio(u, sane, 1, 100)?,
                    rtt_tolerance: ratio(u, sane, 100, 400)?,
                    queue_size: if sane { u.int_in_range(0..=min_limit)? } else { wild_u64(u)? },
                    backoff_ratio: ratio(u, sane, 50, 100)?,
                    probe_interval: if sane { u.int_in_range(0..=30)? } else { wild_u64(u)? },
                })
            }
            _ => {
                let (initial_limit, min_limit, max_limit) = limit_triple(u, sane)?;
                Policy::Aimd(AimdConfig {
                    initial_limit,
                    min_limit,
                    max_limit,
                    backoff_ratio: ratio(u, sane, 50, 99)?,
                    rtt_timeout_micros: if sane { u.int_in_range(1..=5_000_000)? } else { wild_i64(u)? },
                })
            }
        })
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum End {
    /// `Outcome::Success`.
    Success,
    /// `Outcome::Dropped`.
    Dropped,
    /// `Outcome::Ignored`.
    Ignored,
}

impl End {
    fn outcome(self) -> Outcome {
        match self {
            End::Success => Outcome::Success,
            End::Dropped => Outcome::Dropped,
            End::Ignored => Outcome::Ignored,
        }
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `try_acquire` after moving the time.
    Acquire(Step),
    /// `release` of a held permit (by index) after moving the time.
    Release(Step, u8, End),
    /// `sample` of a request measured elsewhere.
    Sample(WildI64, WildU64, bool),
    /// An operation on the std limiter.
    Std(StdOp),
}

/// What the std limiter is asked.
#[derive(Debug, Arbitrary)]
pub enum StdOp {
    /// Moves the clock.
    Advance(Advance),
    /// `try_acquire`.
    Acquire,
    /// `release` of a held std permit.
    Release(u8, End),
    /// `try_acquire_guard`, then the guard ends: success, dropped, or
    /// dropped unused (ignored), after the clock moved.
    Guard(End, Advance),
    /// `sample`.
    Sample(WildDuration, WildU64, bool),
}

/// A run.
#[derive(Debug, Arbitrary)]
pub struct Input {
    policy: Policy,
    origin: Advance,
    ops: Vec<Op>,
}

fn build(policy: Policy) -> core::result::Result<ConcurrencyPolicy, ratekeeper_core::Error> {
    match policy {
        Policy::Fixed(limit) => ConcurrencyPolicy::fixed(limit),
        Policy::Gradient(c) => ConcurrencyPolicy::gradient(c),
        Policy::Aimd(c) => ConcurrencyPolicy::aimd(c),
    }
}

/// Whether the configuration is valid, as documented.
fn valid(policy: Policy) -> bool {
    let limits = |initial: u64, min: u64, max: u64| {
        min >= 1 && max >= min && max <= i64::MAX as u64 && (min..=max).contains(&initial)
    };
    match policy {
        Policy::Fixed(limit) => (1..=i64::MAX as u64).contains(&limit),
        Policy::Gradient(c) => {
            limits(c.initial_limit, c.min_limit, c.max_limit)
                && c.smoothing > 0.0
                && c.smoothing <= 1.0
                && c.rtt_tolerance >= 1.0
                && c.rtt_tolerance.is_finite()
                && c.queue_size <= c.max_limit
                && (0.5..=1.0).contains(&c.backoff_ratio)
                && c.probe_interval <= i64::MAX as u64
        }
        Policy::Aimd(c) => {
            limits(c.initial_limit, c.min_limit, c.max_limit)
                && c.backoff_ratio >= 0.5
                && c.backoff_ratio < 1.0
                && c.rtt_timeout_micros > 0
        }
    }
}

/// The limit's own bounds.
fn check_limit(l: &ConcurrencyLimiter, policy: Policy) {
    let limit = l.limit();
    match policy {
        Policy::Fixed(fixed) => assert_eq!(limit, fixed, "a fixed limit moved"),
        Policy::Gradient(GradientConfig { min_limit, max_limit, .. })
        | Policy::Aimd(AimdConfig { min_limit, max_limit, .. }) => {
            assert!(
                (min_limit..=max_limit).contains(&limit),
                "limit {limit} outside [{min_limit}, {max_limit}]: {l:?}"
            );
        }
    }
}

/// Runs one input.
pub fn run(input: Input) {
    let policy = input.policy;
    let built = build(policy);
    assert_eq!(built.is_ok(), valid(policy), "{policy:?}: {built:?}");
    let Ok(built) = built else { return };
    let mut l = ConcurrencyLimiter::new(built);
    check_limit(&l, policy);
    let clock = clock_at(input.origin);
    let mut std = StdMirror {
        origin: clock.now_micros(),
        limiter: ratekeeper::ConcurrencyLimiter::with_clock(built, clock.clone()),
        clock,
        core: l,
        held: Vec::new(),
    };
    let mut time = Timeline::default();
    let mut held: Vec<Permit> = Vec::new();
    for op in input.ops {
        match op {
            Op::Acquire(step) => {
                let now = time.step(step);
                let before = l;
                match l.try_acquire(now) {
                    Ok((permit, d)) => {
                        assert!(before.in_flight() < before.limit(), "a permit beyond the limit: {before:?}");
                        check_fields(&d, 1, Promises::default());
                        assert!(d.allowed && d.limit == before.limit());
                        assert_eq!(permit.in_flight, l.in_flight());
                        assert_eq!(d.remaining, l.limit() - l.in_flight());
                        assert_eq!(permit.start_micros, now);
                        held.push(permit);
                    }
                    Err(d) => {
                        assert!(before.in_flight() >= before.limit(), "refused below the limit: {before:?}");
                        assert!(!d.allowed && d.retry_after_micros == 0 && d.remaining == 0);
                        assert_eq!(l, before, "a refusal changed the limiter");
                    }
                }
            }
            Op::Release(step, i, end) => {
                let now = time.step(step);
                if held.is_empty() {
                    continue;
                }
                let permit = held.remove(usize::from(i) % held.len());
                let before = l;
                let limit = l.release(permit, end.outcome(), now);
                assert_eq!(limit, l.limit());
                if let End::Ignored = end {
                    assert_eq!(l.pack()[1..], before.pack()[1..], "an ignored outcome changed the policy");
                }
            }
            Op::Sample(rtt, in_flight, dropped) => {
                let before = l.in_flight();
                let limit = l.sample(rtt.0, in_flight.0, dropped);
                assert_eq!((limit, l.in_flight()), (l.limit(), before));
            }
            Op::Std(op) => std.apply(op),
        }
        assert_eq!(l.in_flight(), held.len() as u64, "in flight is not the permits held");
        check_limit(&l, policy);
    }
}

/// The std limiter and its core at the clock's time.
#[derive(Debug)]
struct StdMirror {
    clock: TestClock,
    origin: i64,
    limiter: ratekeeper::ConcurrencyLimiter<TestClock>,
    core: ConcurrencyLimiter,
    held: Vec<Permit>,
}

impl StdMirror {
    fn now(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin)
    }

    fn acquired(&mut self, got: (Decision, Option<Permit>)) {
        let now = self.now();
        let expected = match self.core.try_acquire(now) {
            Ok((permit, d)) => (d, Some(permit)),
            Err(d) => (d, None),
        };
        assert_eq!(got, expected);
    }

    fn apply(&mut self, op: StdOp) {
        match op {
            StdOp::Advance(by) => self.clock.advance_micros(by.0),
            StdOp::Acquire => {
                let got = self.limiter.try_acquire();
                self.acquired(got);
                if let Some(permit) = got.1 {
                    self.held.push(permit);
                }
            }
            StdOp::Release(i, end) => {
                if !self.held.is_empty() {
                    let permit = self.held.remove(usize::from(i) % self.held.len());
                    let now = self.now();
                    assert_eq!(
                        self.limiter.release(permit, end.outcome()),
                        self.core.release(permit, end.outcome(), now)
                    );
                }
            }
            StdOp::Guard(end, after) => {
                let before = self.core;
                match self.limiter.try_acquire_guard() {
                    Ok(guard) => {
                        let now = self.now();
                        let (permit, _) = self.core.try_acquire(now).expect("the core refused what the std granted");
                        self.clock.advance_micros(after.0);
                        let now = self.now();
                        let limit = match end {
                            End::Success => guard.success(),
                            End::Dropped => guard.dropped(),
                            End::Ignored => {
                                drop(guard);
                                self.limiter.limit()
                            }
                        };
                        assert_eq!(limit, self.core.release(permit, end.outcome(), now));
                    }
                    Err(d) => {
                        let now = self.now();
                        assert_eq!(Err(d), self.core.try_acquire(now).map(|_| ()));
                        assert_eq!(self.core, before);
                    }
                }
            }
            StdOp::Sample(rtt, in_flight, dropped) => {
                let got = self.limiter.sample(rtt.0, in_flight.0, dropped);
                // An RTT too long for the core's microseconds is refused,
                // changing nothing (the rule of every duration).
                match i64::try_from(rtt.0.as_micros()) {
                    Ok(micros) => assert_eq!(got, Ok(self.core.sample(micros, in_flight.0, dropped))),
                    Err(_) => assert!(got.is_err(), "an RTT of {:?} was taken", rtt.0),
                }
            }
        }
        assert_eq!(self.limiter.snapshot().pack(), self.core.pack(), "the std limiter's state is not its core's");
        assert_eq!((self.limiter.limit(), self.limiter.in_flight()), (self.core.limit(), self.core.in_flight()));
        assert_eq!(self.limiter.in_flight(), self.held.len() as u64);
    }
}
