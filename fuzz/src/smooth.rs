//! Guava's `SmoothBursty` and `SmoothWarmingUp`
//! (`ratekeeper_core::SmoothRateLimiter`) and the std layer's
//! `RateLimiter` on a manual clock.
//!
//! Invariants: waits are never negative, and a reservation waits exactly
//! what `time_until_available` said just before; `try_reserve` reserves
//! exactly when `can_acquire` says so, within its timeout, and a refusal
//! changes nothing; errors (a permit count of 0 or above `i32::MAX`, a rate
//! that is not positive) change nothing; looks change nothing. And, for a
//! limiter whose rate never changes, the permits granted in any interval of
//! grant times, the last request of it left out (Guava pre-consumes: a
//! request is granted at once and the next one pays), are at most
//! `maxPermits + rate × T`. The std `RateLimiter` decides exactly as its
//! core at the clock's time, sleeping what it says.

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{Clock, RateLimiter};
use ratekeeper_core::smooth::MAX_PERMITS_PER_REQUEST;
use ratekeeper_core::{Packed, SmoothKind, SmoothRateLimiter};

use crate::mirror::{clock_at, Advance, TestClock};
use crate::values::{wild_f64, wild_i64, Step, Timeline, WildDuration, WildF64, WildI64};

/// Which limiter, with what parameters.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    rate: f64,
    kind: SmoothKind,
}

impl<'a> Arbitrary<'a> for Params {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let sane = u.ratio(3u8, 4)?;
        let rate = if sane { f64::from(u.int_in_range(1u32..=200_000)?) / 100.0 } else { wild_f64(u)? };
        let kind = if u.ratio(1u8, 2)? {
            let max_burst_seconds = if sane { f64::from(u.int_in_range(0u32..=40)?) / 4.0 } else { wild_f64(u)? };
            SmoothKind::Bursty { max_burst_seconds }
        } else {
            let warmup_micros = if sane { u.int_in_range(0..=5_000_000)? } else { wild_i64(u)? };
            let cold_factor = if sane { f64::from(u.int_in_range(4u32..=40)?) / 4.0 } else { wild_f64(u)? };
            SmoothKind::WarmingUp { warmup_micros, cold_factor }
        };
        Ok(Params { rate, kind })
    }
}

/// A permit count: mostly small, sometimes 0 or beyond Java's `int`.
#[derive(Debug, Clone, Copy)]
pub struct Permits(pub u32);

impl<'a> Arbitrary<'a> for Permits {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Permits(match u.int_in_range(0u8..=9)? {
            0 => 0,
            1 => MAX_PERMITS_PER_REQUEST,
            2 => u32::arbitrary(u)?,
            _ => u.int_in_range(1..=12)?,
        }))
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `reserve(permits)` after moving the time (the caller then waits).
    Reserve(Step, Permits),
    /// `try_reserve(permits, timeout)`.
    TryReserve(Step, Permits, WildI64),
    /// `set_rate`.
    SetRate(Step, WildF64),
    /// `can_acquire(timeout)` and `time_until_available_micros`.
    Look(Step, WildI64),
    /// An operation on the std `RateLimiter`.
    Std(StdOp),
    /// The unit conversions the bindings use, on any number.
    Units(WildF64),
}

/// What the std limiter is asked.
#[derive(Debug, Arbitrary)]
pub enum StdOp {
    /// Moves the clock.
    Advance(Advance),
    /// `acquire` (sleeps).
    Acquire(Permits),
    /// `try_acquire` (sleeps when it acquires).
    TryAcquire(Permits, WildDuration),
    /// `reserve`.
    Reserve(Permits),
    /// `try_reserve`.
    TryReserve(Permits, WildDuration),
    /// `time_until_available` and `can_acquire`.
    Look(Permits, WildDuration),
    /// `set_rate`.
    SetRate(WildF64),
}

/// A run.
#[derive(Debug, Arbitrary)]
pub struct Input {
    params: Params,
    origin: Advance,
    ops: Vec<Op>,
}

fn build(p: &Params) -> core::result::Result<SmoothRateLimiter, ratekeeper_core::Error> {
    match p.kind {
        SmoothKind::Bursty { max_burst_seconds } => SmoothRateLimiter::bursty(p.rate, max_burst_seconds),
        SmoothKind::WarmingUp { warmup_micros, cold_factor } => {
            SmoothRateLimiter::warming_up(p.rate, warmup_micros, cold_factor)
        }
    }
}

/// Whether the constructor must refuse `p`.
fn invalid(p: &Params) -> bool {
    let bad_rate = p.rate.is_nan() || p.rate <= 0.0;
    match p.kind {
        SmoothKind::Bursty { max_burst_seconds } => {
            bad_rate || !(max_burst_seconds >= 0.0 && ratekeeper::micros_from_secs(max_burst_seconds).is_some())
        }
        SmoothKind::WarmingUp { warmup_micros, cold_factor } => {
            bad_rate || warmup_micros < 0 || !(cold_factor >= 1.0 && cold_factor.is_finite())
        }
    }
}

fn valid_permits(p: u32) -> bool {
    (1..=MAX_PERMITS_PER_REQUEST).contains(&p)
}

/// Grants (time, permits) for the bound, while it can be checked.
#[derive(Debug, Default)]
struct Grants {
    events: Vec<(i128, u64)>,
    /// The rate changed, or the numbers are beyond what the bound's
    /// arithmetic can follow: nothing to check.
    off: bool,
}

impl Grants {
    /// The permits of each interval of grant times, the last grant in it
    /// left out, are at most `max_permits + rate × span` (µs), up to the
    /// truncation of each wait to whole microseconds.
    fn check(&self, rate: f64, max_permits: f64) {
        if self.off {
            return;
        }
        // Grants are made in order of their times (a request is granted at
        // the next free ticket, which only moves forward while the rate
        // stays), and the last one of each interval is left out.
        let per_micro = rate / 1e6;
        for i in 0..self.events.len() {
            let mut sum = 0u128;
            for j in i + 1..self.events.len() {
                sum += u128::from(self.events[j - 1].1);
                let span = (self.events[j].0 - self.events[i].0) as f64;
                let requests = (j - i) as f64;
                // Each wait truncated to whole µs (twice for a warm-up).
                let bound = max_permits + per_micro * (span + 2.0 * requests);
                assert!(
                    sum as f64 <= bound * (1.0 + 1e-9) + 1e-6,
                    "{sum} permits granted in [{}, {}) with the next grant at {}: more than {bound}",
                    self.events[i].0,
                    self.events[j - 1].0,
                    self.events[j].0
                );
            }
        }
    }
}

/// Runs one input.
pub fn run(input: Input) {
    let p = input.params;
    let clock = clock_at(input.origin);
    let mut l = match build(&p) {
        Ok(l) => {
            assert!(!invalid(&p), "{p:?} accepted");
            l
        }
        Err(_) => {
            assert!(invalid(&p), "{p:?} refused");
            return;
        }
    };
    let mut std = StdMirror {
        origin: clock.now_micros(),
        limiter: RateLimiter::from_core(l.clone(), clock.clone()),
        clock,
        core: l.clone(),
    };
    let mut time = Timeline::default();
    let mut grants = Grants::default();
    // The bound is checked only where f64 permits are exact enough.
    let (rate, max_permits) = (l.rate(), l.max_permits());
    grants.off = !(rate.is_finite() && (1e-3..=1e6).contains(&rate) && max_permits.is_finite() && max_permits <= 1e7);
    for op in input.ops {
        match op {
            Op::Reserve(step, permits) => {
                let now = time.step(step);
                wraps(&mut grants, &l, now);
                let before = l.pack();
                let expected = l.time_until_available_micros(now);
                match l.reserve(permits.0, now) {
                    Ok(wait) => {
                        assert!(valid_permits(permits.0));
                        assert!(wait >= 0, "a negative wait: {wait}");
                        assert_eq!(wait, expected, "reserve waits otherwise than time_until_available said");
                        grant(&mut grants, now, wait, permits.0);
                    }
                    Err(_) => {
                        assert!(!valid_permits(permits.0));
                        assert_eq!(l.pack(), before, "an error changed the limiter");
                    }
                }
            }
            Op::TryReserve(step, permits, timeout) => {
                let now = time.step(step);
                wraps(&mut grants, &l, now);
                let before = l.pack();
                let (can, expected) = (l.can_acquire(timeout.0, now), l.time_until_available_micros(now));
                match l.try_reserve(permits.0, timeout.0, now) {
                    Ok(Some(wait)) => {
                        assert!(valid_permits(permits.0) && can, "reserved when can_acquire said no");
                        assert!(wait >= 0 && wait == expected, "waits {wait}, where {expected} was said");
                        let ticket = SmoothRateLimiter::unpack(before).earliest_available_micros();
                        if ticket.checked_sub(timeout.0.max(0)).is_some() {
                            assert!(wait <= timeout.0.max(0), "waits {wait} beyond the timeout {timeout:?}");
                        }
                        grant(&mut grants, now, wait, permits.0);
                    }
                    Ok(None) => {
                        assert!(valid_permits(permits.0) && !can, "refused when can_acquire said yes");
                        assert_eq!(l.pack(), before, "a refusal changed the limiter");
                    }
                    Err(_) => {
                        assert!(!valid_permits(permits.0));
                        assert_eq!(l.pack(), before, "an error changed the limiter");
                    }
                }
            }
            Op::SetRate(step, rate) => {
                let now = time.step(step);
                let before = l.pack();
                match l.set_rate(rate.0, now) {
                    Ok(()) => {
                        assert!(rate.0 > 0.0, "set_rate({}) accepted", rate.0);
                        grants.off = true;
                    }
                    Err(_) => {
                        assert!(rate.0.is_nan() || rate.0 <= 0.0, "set_rate({}) refused", rate.0);
                        assert_eq!(l.pack(), before, "an error changed the limiter");
                    }
                }
            }
            Op::Look(step, timeout) => {
                let now = time.clone().step(step);
                let before = l.pack();
                let wait = l.time_until_available_micros(now);
                assert!(wait >= 0);
                let _ = l.can_acquire(timeout.0, now);
                assert_eq!(l.pack(), before, "a look changed the limiter");
            }
            Op::Std(op) => std.apply(op),
            Op::Units(secs) => units(secs.0),
        }
        if l.stored_permits().is_nan() {
            // Guava's zero warm-up stores NaN permits (0 / 0); the bound's
            // arithmetic cannot follow it.
            grants.off = true;
        }
    }
    grants.check(rate, max_permits);
}

/// A time so far behind the next free ticket that Java's wrapping `long`
/// subtraction wraps (the wait is then 0, as in Guava): grants are no longer
/// in order of time, and the bound is not checked.
fn wraps(grants: &mut Grants, l: &SmoothRateLimiter, now: i64) {
    if l.earliest_available_micros().checked_sub(now).is_none() {
        grants.off = true;
    }
}

/// Records a grant at `now + wait`.
fn grant(grants: &mut Grants, now: i64, wait: i64, permits: u32) {
    let at = i128::from(now) + i128::from(wait);
    // Guava's next free ticket saturates at `Long.MAX_VALUE`: every later
    // request is granted at the end of time, after waits of 292,000 years.
    if at >= i128::from(i64::MAX) {
        grants.off = true;
    }
    grants.events.push((at, u64::from(permits)));
}

/// The bindings' unit conversions: no panic, and errors exactly where
/// documented.
fn units(secs: f64) {
    match ratekeeper::timeout_micros_from_secs(secs) {
        Ok(m) => assert!(m >= 0 && !secs.is_nan()),
        Err(_) => assert!(secs.is_nan()),
    }
    // A duration: not negative, and fewer than 2^63 microseconds.
    let duration = secs >= 0.0 && ratekeeper::micros_from_secs(secs).is_some();
    match ratekeeper::warmup_micros_from_secs(secs) {
        Ok(m) => assert!(m >= 0 && duration),
        Err(_) => assert!(!duration),
    }
    assert_eq!(ratekeeper::advance_micros_from_secs(secs).is_ok(), duration);
    let finite_non_negative = secs >= 0.0 && secs.is_finite();
    if finite_non_negative {
        let _ = ratekeeper::wait_as_seconds(Duration::from_secs_f64(secs.min(1e18)));
    }
}

/// The std `RateLimiter` and its core at the clock's time.
#[derive(Debug)]
struct StdMirror {
    clock: TestClock,
    origin: i64,
    limiter: RateLimiter<TestClock>,
    core: SmoothRateLimiter,
}

/// A duration as the std layer's microseconds (saturating).
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

impl StdMirror {
    fn now(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin)
    }

    fn apply(&mut self, op: StdOp) {
        let now = self.now();
        let reading = self.clock.now_micros();
        let mut slept = 0;
        match op {
            StdOp::Advance(by) => {
                self.clock.advance_micros(by.0);
                slept = by.0;
            }
            StdOp::Acquire(p) => {
                let got = self.limiter.acquire(p.0);
                let expected = self.core.reserve(p.0, now);
                assert_eq!(got.map(micros), expected);
                slept = expected.unwrap_or(0);
            }
            StdOp::TryAcquire(p, timeout) => {
                let got = self.limiter.try_acquire(p.0, timeout.0);
                let expected = self.core.try_reserve(p.0, micros(timeout.0), now);
                assert_eq!(got, expected.map(|w| w.is_some()));
                slept = expected.ok().flatten().unwrap_or(0);
            }
            StdOp::Reserve(p) => {
                assert_eq!(self.limiter.reserve(p.0).map(micros), self.core.reserve(p.0, now));
            }
            StdOp::TryReserve(p, timeout) => {
                let got = self.limiter.try_reserve(p.0, timeout.0);
                let expected = self.core.try_reserve(p.0, micros(timeout.0), now);
                assert_eq!(got.map(|w| w.map(micros)), expected);
            }
            StdOp::Look(p, timeout) => {
                let wait = self.limiter.time_until_available(p.0);
                let can = self.limiter.can_acquire(p.0, timeout.0);
                if valid_permits(p.0) {
                    assert_eq!(wait.map(micros), Ok(self.core.time_until_available_micros(now)));
                    assert_eq!(can, Ok(self.core.can_acquire(micros(timeout.0), now)));
                } else {
                    assert!(wait.is_err() && can.is_err());
                }
            }
            StdOp::SetRate(rate) => {
                assert_eq!(self.limiter.set_rate(rate.0), self.core.set_rate(rate.0, now));
                assert_eq!(self.limiter.rate().to_bits(), self.core.rate().to_bits());
            }
        }
        assert_eq!(self.clock.now_micros(), reading.saturating_add(slept), "the std limiter slept otherwise");
        assert_eq!(self.limiter.snapshot().pack(), self.core.pack(), "the std limiter's state is not its core's");
        assert_eq!(self.limiter.kind(), self.core.kind());
    }
}
