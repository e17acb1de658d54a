//! GCRA (`ratekeeper_core::Gcra`, redis-cell's `CL.THROTTLE`) and the std
//! layer's `Gcra` on a manual clock.
//!
//! Invariants: the admission contract with an exact retry-after, whole
//! again after `reset_after`, refusals that change nothing; and at most
//! `max_burst + 1 + count × T / period` units in any interval of length T
//! (exactly, in integers), at the times passed (GCRA keeps the bound
//! whatever order the times come in).

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper_core::{Argument, Error, Gcra};

use crate::bounds::Ledger;
use crate::contract::{admit_strict, Promises};
use crate::mirror::{clock_at, Advance, Mirror, MirrorOp};
use crate::values::{wild_i64, wild_u64, Count, Step, Timeline};

/// redis-cell's parameters: mostly small (limits are reached), sometimes
/// anything.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    max_burst: u64,
    count_per_period: u64,
    period_micros: i64,
}

impl<'a> Arbitrary<'a> for Params {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(3u8, 4)? {
            Ok(Params {
                max_burst: u.int_in_range(0..=20)?,
                count_per_period: u.int_in_range(1..=20)?,
                period_micros: u.int_in_range(1..=2_000_000)?,
            })
        } else {
            Ok(Params { max_burst: wild_u64(u)?, count_per_period: wild_u64(u)?, period_micros: wild_i64(u)? })
        }
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `check(cost)` on the core after moving the time.
    Check(Step, Count),
    /// `peek(cost)` on the core after moving the time.
    Peek(Step, Count),
    /// An operation on the std limiter.
    Std(MirrorOp),
}

/// A run.
#[derive(Debug, Arbitrary)]
pub struct Input {
    params: Params,
    origin: Advance,
    ops: Vec<Op>,
}

/// The error `Gcra::new` must give for `p`, if any (its documented
/// checks, in order).
fn expected_error(p: &Params) -> Option<Argument> {
    if p.max_burst >= i64::MAX as u64 {
        Some(Argument::MaxBurst)
    } else if p.count_per_period == 0 || p.count_per_period > i64::MAX as u64 {
        Some(Argument::CountPerPeriod)
    } else if p.period_micros <= 0 {
        Some(Argument::Period)
    } else {
        None
    }
}

/// Runs one input.
pub fn run(input: Input) {
    let p = input.params;
    let made = Gcra::new(p.max_burst, p.count_per_period, p.period_micros);
    let clock = clock_at(input.origin);
    let period = Duration::from_micros(p.period_micros.max(0) as u64);
    let std = ratekeeper::Gcra::with_clock(p.max_burst, p.count_per_period, period, clock.clone());
    let mut gcra = match (made, expected_error(&p)) {
        (Ok(g), None) => g,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            assert!(std.is_err(), "the std layer accepted what the core refused: {p:?}");
            return;
        }
        (made, expected) => panic!("Gcra::new{p:?} = {made:?}, expected an error about {expected:?}"),
    };
    let mut mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), gcra);
    let promises =
        Promises { exact_retry: true, whole_after_reset: true, refusal_is_identity: true, ..Promises::default() };
    let mut time = Timeline::default();
    let (mut core_ledger, mut std_ledger) = (Ledger::default(), Ledger::default());
    for op in input.ops {
        match op {
            Op::Check(step, cost) => {
                let t = time.step(step);
                let d = admit_strict(&mut gcra, cost.0, &time, promises);
                assert_eq!(d.limit, p.max_burst + 1);
                if d.allowed {
                    core_ledger.push(i128::from(t), cost.0);
                }
            }
            Op::Peek(step, cost) => {
                let t = time.step(step);
                let before = gcra;
                let _ = ratekeeper_core::Admission::peek(&gcra, cost.0, t);
                assert_eq!(gcra, before);
            }
            Op::Std(MirrorOp::Check(cost)) => {
                let now = mirror.now();
                if mirror.check(cost.0).allowed {
                    std_ledger.push(i128::from(now), cost.0);
                }
            }
            Op::Std(op) => mirror.apply(op),
        }
    }
    let (count, period, burst) = (u128::from(p.count_per_period), p.period_micros as u128, u128::from(p.max_burst) + 1);
    if let Err(e) = core_ledger.check_rate_exact(count, period, burst) {
        panic!("GCRA admitted too much: {e}");
    }
    if let Err(e) = std_ledger.check_rate_exact(count, period, burst) {
        panic!("the std GCRA admitted too much: {e}");
    }
}
