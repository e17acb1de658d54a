//! The token bucket (`ratekeeper_core::TokenBucket`, Go's x/time/rate):
//! allow, reserve, cancel, wait with a deadline, set the rate and the
//! burst; and the std layer's `TokenBucket` on a manual clock.
//!
//! Invariants: the admission contract (refusals change nothing); errors
//! change nothing; the tokens never exceed the burst and are never NaN; a
//! reservation is granted whole or refused empty, within its deadline; a
//! cancelled reservation is cancelled once; and the tokens acted on (at
//! the time of each admission, at each reservation's time to act, less the
//! reservations cancelled before they acted) never exceed `rate × T +
//! burst` in any interval T, with the largest rate and burst the bucket
//! ever had — unless the rate changed while reservations were waiting:
//! they keep their times (x/time/rate's `SetLimitAt`), so a higher rate
//! lets new reservations act beside them, and cancelling one gives back
//! tokens reckoned at the rate it was made at.

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{Clock, Decision, Packed};
use ratekeeper_core::token_bucket::{Reservation, TokenBucket};
use ratekeeper_core::{Argument, Error, NEVER};

use crate::bounds::Ledger;
use crate::contract::{admit_strict, check_fields, Promises};
use crate::mirror::{clock_at, Advance, Mirror, MirrorOp, TestClock};
use crate::values::{wild_f64, wild_u64, Count, Step, Timeline, WildDuration, WildF64, WildI64, WildU64};

/// A rate: mostly an ordinary one, sometimes 0 or no limit, sometimes
/// anything (NaN and negative included).
#[derive(Debug, Clone, Copy)]
pub struct Rate(pub f64);

impl<'a> Arbitrary<'a> for Rate {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Rate(match u.int_in_range(0u8..=9)? {
            0 => 0.0,
            1 => f64::INFINITY,
            2 | 3 => wild_f64(u)?,
            4 => f64::from(u.int_in_range(1u32..=10_000_000)?) / 1_000.0,
            _ => f64::from(u.int_in_range(1u32..=100_000)?) / 100.0,
        }))
    }
}

/// A burst: mostly small, sometimes anything.
#[derive(Debug, Clone, Copy)]
pub struct Burst(pub u64);

impl<'a> Arbitrary<'a> for Burst {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Burst(if u.ratio(1u8, 5)? { wild_u64(u)? } else { u.int_in_range(0..=50)? }))
    }
}

/// One operation on the core (after moving the time) or the std bucket.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `check(cost)` (x/time/rate's `AllowN` as a decision).
    Check(Step, Count),
    /// `check_within(cost, timeout)`.
    CheckWithin(Step, Count, WildI64),
    /// `reserve_n(cost)`, kept to cancel later.
    Reserve(Step, Count),
    /// `wait_n(cost, deadline = now + by)`, kept to cancel later.
    Wait(Step, Count, WildI64),
    /// `cancel_at` of a kept reservation (by index, modulo their number).
    Cancel(Step, u8),
    /// `set_rate`.
    SetRate(Step, Rate),
    /// `set_burst`.
    SetBurst(Step, Burst),
    /// `tokens_at`.
    Tokens(Step),
    /// A std operation.
    Std(StdOp),
}

/// What the std bucket is asked (the clock moves only forward).
#[derive(Debug, Arbitrary)]
pub enum StdOp {
    /// `check`, `peek`, or moving the clock.
    Admission(MirrorOp),
    /// `reserve_n`, kept to cancel later.
    Reserve(Count),
    /// `cancel` of a kept std reservation.
    Cancel(u8),
    /// `wait_n` (sleeps on the manual clock).
    Wait(Count, WildDuration),
    /// `reserve_within`.
    ReserveWithin(Count, WildDuration),
    /// `set_rate`.
    SetRate(WildF64),
    /// `set_burst`.
    SetBurst(WildU64),
    /// `tokens` and `delay` of the kept reservations.
    Read,
}

/// A run.
#[derive(Debug, Arbitrary)]
pub struct Input {
    rate: Rate,
    burst: Burst,
    origin: Advance,
    ops: Vec<Op>,
}

/// A reservation and whether its holder still acts on it.
#[derive(Debug)]
struct Held {
    reservation: Reservation,
    /// The ledger entry of its tokens, while they count.
    entry: Option<usize>,
}

/// Tokens acted on, at nanosecond times; entries are voided (set to 0
/// units) when their reservation is cancelled before its time.
#[derive(Debug, Default)]
struct Acted {
    events: Vec<(i64, u64)>,
    max_rate: f64,
    max_burst: u64,
    /// The rate changed while reservations were waiting: no bound holds.
    rate_changed_in_debt: bool,
}

impl Acted {
    fn push(&mut self, at_nanos: i64, tokens: u64) -> Option<usize> {
        // A reservation under a zero rate acts at the end of time: never.
        if tokens == 0 || at_nanos == i64::MAX {
            return None;
        }
        self.events.push((at_nanos, tokens));
        Some(self.events.len() - 1)
    }

    fn saw(&mut self, bucket: &TokenBucket) {
        self.max_rate = self.max_rate.max(bucket.rate());
        self.max_burst = self.max_burst.max(bucket.burst());
    }

    fn check(&self) {
        // The bound is only as good as f64 tokens are: beyond 2^50 tokens
        // or an unlimited rate, there is nothing to check.
        if self.rate_changed_in_debt || !(self.max_rate.is_finite() && self.max_burst < 1 << 50 && self.max_rate < 1e12)
        {
            return;
        }
        let mut ledger = Ledger::default();
        for &(t, n) in &self.events {
            ledger.push(i128::from(t), n);
        }
        // x/time/rate truncates a wait to whole nanoseconds: a reservation
        // may act up to 1 ns early.
        if let Err(e) = ledger.check_rate_float(self.max_rate / 1e9, self.max_burst as f64, 1.0, 1e-9) {
            panic!("the token bucket admitted too much: {e}");
        }
    }
}

/// The bucket's `last` (nanoseconds), from its packed words.
fn last_nanos(bucket: &TokenBucket) -> i64 {
    bucket.pack()[1] as i64
}

/// What every reservation promises on its own.
fn check_reservation(r: &Reservation, n: u64, now: i64) {
    if r.ok() {
        assert_eq!(r.tokens(), n, "a granted reservation of {n} holds {r:?}");
        assert!(r.delay_micros(now) >= 0);
    } else {
        assert_eq!(r.tokens(), 0, "a refused reservation holds tokens: {r:?}");
        assert_eq!(r.delay_micros(now), NEVER, "a refused reservation has a delay: {r:?}");
    }
}

/// The bucket's own invariant: never more tokens than the burst, never NaN.
fn check_tokens(bucket: &TokenBucket, now: i64) {
    let tokens = bucket.tokens_at(now);
    assert!(!tokens.is_nan(), "NaN tokens: {bucket:?}");
    assert!(tokens <= bucket.burst() as f64, "{tokens} tokens above the burst: {bucket:?}");
}

/// The error a rate must give, if any.
fn rate_error(rate: f64) -> bool {
    rate.is_nan() || rate < 0.0
}

/// Runs one input.
pub fn run(input: Input) {
    let (rate, burst) = (input.rate.0, input.burst.0);
    let made = TokenBucket::new(rate, burst);
    let clock = clock_at(input.origin);
    let std = ratekeeper::TokenBucket::with_clock(rate, burst, clock.clone());
    let expected = if rate_error(rate) {
        Some(Argument::Rate)
    } else if burst > i64::MAX as u64 {
        Some(Argument::Burst)
    } else {
        None
    };
    let mut bucket = match (made, expected) {
        (Ok(b), None) => b,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "TokenBucket::new({rate}, {burst})");
            assert!(std.is_err());
            return;
        }
        (made, expected) => {
            panic!("TokenBucket::new({rate}, {burst}) = {made:?}, expected an error about {expected:?}")
        }
    };
    let mut mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), bucket);
    let mut std_held: Vec<Reservation> = Vec::new();
    let mut time = Timeline::default();
    let mut held: Vec<Held> = Vec::new();
    let mut acted = Acted::default();
    acted.saw(&bucket);
    let promises = Promises { horizon: Some(i64::MAX / 1_000), zero_may_be_refused: true, ..Promises::default() };
    for op in input.ops {
        match op {
            Op::Check(step, cost) => {
                let now = time.step(step);
                let tokens = bucket.tokens_at(now);
                let d = admit_strict(&mut bucket, cost.0, &time, promises);
                assert_eq!(d.limit, bucket.burst());
                // A look is refused only in debt (Go's `AllowN(t, 0)`).
                assert!(d.allowed || cost.0 > 0 || tokens < 0.0, "a look refused with {tokens} tokens: {d:?}");
                if d.allowed {
                    acted.push(last_nanos(&bucket), cost.0);
                }
            }
            Op::CheckWithin(step, cost, timeout) => {
                let now = time.step(step);
                let before = bucket;
                let tokens = bucket.tokens_at(now);
                let d = bucket.check_within(cost.0, now, timeout.0);
                check_fields(&d, cost.0, promises);
                assert!(d.allowed || cost.0 > 0 || tokens < 0.0, "a look refused with {tokens} tokens: {d:?}");
                if d.allowed {
                    if timeout.0 != i64::MAX {
                        assert!(
                            d.wait_micros <= timeout.0.max(0),
                            "waits {} beyond the timeout {timeout:?}",
                            d.wait_micros
                        );
                    }
                    acted.push(bucket.pack()[2] as i64, cost.0);
                } else {
                    assert_eq!(bucket, before, "a refusal changed the bucket");
                }
            }
            Op::Reserve(step, cost) => {
                let now = time.step(step);
                let before = bucket;
                let r = bucket.reserve_n(cost.0, now);
                check_reservation(&r, cost.0, now);
                if !r.ok() {
                    assert_eq!(bucket, before, "a refused reservation changed the bucket");
                    assert!(cost.0 > before.burst() && before.rate() != f64::INFINITY, "{r:?} refused: {before:?}");
                }
                let entry = if r.ok() { acted.push(r.time_to_act_nanos(), r.tokens()) } else { None };
                keep(&mut held, Held { reservation: r, entry });
            }
            Op::Wait(step, cost, by) => {
                let now = time.step(step);
                let deadline = now.saturating_add(by.0);
                let before = bucket;
                let r = bucket.wait_n(cost.0, now, deadline);
                check_reservation(&r, cost.0, now);
                if r.ok() {
                    if deadline != i64::MAX {
                        let deadline_nanos = deadline.saturating_mul(1_000);
                        assert!(r.time_to_act_nanos() <= deadline_nanos, "{r:?} acts after the deadline {deadline}");
                    }
                } else {
                    assert_eq!(bucket, before, "a refused wait changed the bucket");
                }
                let entry = if r.ok() { acted.push(r.time_to_act_nanos(), r.tokens()) } else { None };
                keep(&mut held, Held { reservation: r, entry });
            }
            Op::Cancel(step, i) => {
                let now = time.step(step);
                if held.is_empty() {
                    continue;
                }
                let index = usize::from(i) % held.len();
                let h = &mut held[index];
                let t = (now.saturating_mul(1_000)).max(last_nanos(&bucket));
                let r = h.reservation;
                bucket.cancel_at(&mut h.reservation, now);
                assert_eq!(h.reservation.tokens(), 0, "a cancelled reservation still holds tokens");
                if r.ok() && r.tokens() > 0 && r.time_to_act_nanos() >= t {
                    // Cancelled before its time: the holder does not act.
                    if let Some(entry) = h.entry.take() {
                        acted.events[entry].1 = 0;
                    }
                }
                // Cancelling again gives nothing back.
                let after = bucket;
                bucket.cancel_at(&mut h.reservation, now);
                assert_eq!(bucket, after, "a second cancel changed the bucket");
            }
            Op::SetRate(step, rate) => {
                let now = time.step(step);
                let before = bucket;
                let t = now.saturating_mul(1_000).max(last_nanos(&bucket));
                match bucket.set_rate(rate.0, now) {
                    Ok(()) => {
                        assert!(!rate_error(rate.0));
                        // Reservations wait when the latest acts after now, or
                        // a cancellable one acts now (Go cancels until its
                        // time has passed, with its own rate).
                        let waiting = before.pack()[2] as i64 > t
                            || held.iter().any(|h| h.entry.is_some() && h.reservation.time_to_act_nanos() >= t);
                        acted.rate_changed_in_debt |= waiting && bucket.rate().to_bits() != before.rate().to_bits();
                    }
                    Err(_) => {
                        assert!(rate_error(rate.0), "set_rate({}) refused", rate.0);
                        assert_eq!(bucket, before, "a refused set_rate changed the bucket");
                    }
                }
                acted.saw(&bucket);
            }
            Op::SetBurst(step, burst) => {
                let now = time.step(step);
                let before = bucket;
                match bucket.set_burst(burst.0, now) {
                    Ok(()) => assert!(burst.0 <= i64::MAX as u64),
                    Err(_) => {
                        assert!(burst.0 > i64::MAX as u64, "set_burst({}) refused", burst.0);
                        assert_eq!(bucket, before, "a refused set_burst changed the bucket");
                    }
                }
                acted.saw(&bucket);
            }
            Op::Tokens(step) => {
                let now = time.step(step);
                let before = bucket;
                check_tokens(&bucket, now);
                assert_eq!(bucket, before);
            }
            Op::Std(op) => std_op(&mut mirror, &mut std_held, op),
        }
        check_tokens(&bucket, time.latest);
    }
    acted.check();
}

/// Keeps at most 64 reservations (the oldest go).
fn keep(held: &mut Vec<Held>, h: Held) {
    if held.len() == 64 {
        held.remove(0);
    }
    held.push(h);
}

type StdBucket = ratekeeper::TokenBucket<TestClock>;

/// One std operation, checked against the core at the clock's time.
fn std_op(m: &mut Mirror<StdBucket>, held: &mut Vec<Reservation>, op: StdOp) {
    let now = m.now();
    match op {
        StdOp::Admission(op) => m.apply(op),
        StdOp::Reserve(cost) => {
            let r = m.limiter.reserve_n(cost.0);
            assert_eq!(r, m.core.reserve_n(cost.0, now));
            if held.len() == 64 {
                held.remove(0);
            }
            held.push(r);
        }
        StdOp::Cancel(i) => {
            if !held.is_empty() {
                let index = usize::from(i) % held.len();
                let mut copy = held[index];
                m.limiter.cancel(&mut held[index]);
                m.core.cancel_at(&mut copy, now);
                assert_eq!(held[index], copy);
            }
        }
        StdOp::Wait(cost, timeout) => {
            let reading = m.clock.now_micros();
            let d = m.limiter.wait_n(cost.0, timeout.0);
            let expected = m.core.check_within(cost.0, now, micros(timeout.0));
            assert_eq!(d, expected);
            // wait_n slept on the manual clock: it moved by the wait.
            let slept = if d.allowed { d.wait_micros } else { 0 };
            assert_eq!(m.clock.now_micros(), reading.saturating_add(slept));
        }
        StdOp::ReserveWithin(cost, timeout) => {
            let d: Decision = m.limiter.reserve_within(cost.0, timeout.0);
            assert_eq!(d, m.core.check_within(cost.0, now, micros(timeout.0)));
        }
        StdOp::SetRate(rate) => {
            let got = m.limiter.set_rate(rate.0);
            assert_eq!(got, m.core.set_rate(rate.0, now));
        }
        StdOp::SetBurst(burst) => {
            let got = m.limiter.set_burst(burst.0);
            assert_eq!(got, m.core.set_burst(burst.0, now));
        }
        StdOp::Read => {
            let tokens = m.limiter.tokens();
            assert_eq!(tokens.to_bits(), m.core.tokens_at(now).to_bits());
            assert_eq!((m.limiter.rate().to_bits(), m.limiter.burst()), (m.core.rate().to_bits(), m.core.burst()));
            for r in held.iter() {
                let delay = m.limiter.delay(r);
                assert_eq!(delay, Duration::from_micros(r.delay_micros(now).max(0) as u64));
            }
        }
    }
    m.assert_same();
}

/// A `Duration` as the std layer's whole microseconds (saturating).
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}
