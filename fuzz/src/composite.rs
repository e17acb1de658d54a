//! Composite limits (`ratekeeper_core::composite`, the std layer's
//! `CompositeLimiter` on a manual clock): several limits of any algorithms,
//! admitted all or nothing.
//!
//! Invariants: when the composite admits, every part changed exactly as
//! its own `check` would have, and the decision is `combine` of theirs;
//! when it refuses, no part changed (nothing observable), and the decision
//! is `combine` of the refusing parts' refusals and the others' looks of
//! cost 0; `peek` predicts `check`; a cost of 0 takes nothing. Building a
//! composite fails exactly when one of its specs fails (or there is none).

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{AnyCore, Clock, CompositeLimiter};
use ratekeeper_core::composite::{check_all, check_all_each, peek_all};
use ratekeeper_core::decision::combine;
use ratekeeper_core::{Admission, Decision, LimiterSpec};

use crate::contract::{check_fields, Promises};
use crate::mirror::{clock_at, Advance};
use crate::values::{wild_f64, wild_i64, wild_u64, Count, Step, Timeline};

/// A limit of any admission-style algorithm, its numbers mostly small.
#[derive(Debug, Clone, Copy)]
pub struct Spec(pub LimiterSpec);

impl<'a> Arbitrary<'a> for Spec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let sane = u.ratio(4u8, 5)?;
        let count = |u: &mut Unstructured<'a>, max: u64| if sane { u.int_in_range(1..=max) } else { wild_u64(u) };
        let micros = |u: &mut Unstructured<'a>| if sane { u.int_in_range(1..=3_000_000) } else { wild_i64(u) };
        Ok(Spec(match u.int_in_range(0u8..=7)? {
            0 => LimiterSpec::TokenBucket {
                rate: if sane { f64::from(u.int_in_range(0u32..=10_000)?) / 100.0 } else { wild_f64(u)? },
                burst: count(u, 20)?,
            },
            1 => LimiterSpec::Gcra {
                max_burst: count(u, 20)?,
                count_per_period: count(u, 20)?,
                period_micros: micros(u)?,
            },
            2 => LimiterSpec::LeakyBucketMeter {
                capacity: count(u, 20)?,
                count_per_period: count(u, 20)?,
                period_micros: micros(u)?,
            },
            3 => LimiterSpec::LeakyBucketQueue {
                capacity: count(u, 10)?,
                interval_micros: micros(u)?,
                slack: count(u, 10)?,
            },
            4 => LimiterSpec::FixedWindow { limit: count(u, 20)?, window_micros: micros(u)? },
            5 => {
                let sub_windows = if sane { u.int_in_range(1..=16)? } else { u32::arbitrary(u)? };
                let window = micros(u)?;
                let window =
                    if sane { window - window % i64::from(sub_windows) + i64::from(sub_windows) } else { window };
                LimiterSpec::SlidingWindow { limit: count(u, 20)?, window_micros: window, sub_windows }
            }
            // (The log allocates its limit's entries: at most 4096 here.)
            6 => LimiterSpec::SlidingLog { limit: count(u, 20)?.min(4_096), window_micros: micros(u)? },
            _ => LimiterSpec::SlidingWindowCounter { limit: count(u, 20)?, window_micros: micros(u)? },
        }))
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `check_all` (and `check_all_each`) after moving the time.
    Check(Step, Count),
    /// `peek_all` after moving the time.
    Peek(Step, Count),
    /// Moves the std composite's clock.
    StdAdvance(Advance),
    /// The std composite's `check`, `check_each` or `peek`.
    Std(u8, Count),
}

/// A run.
#[derive(Debug, Arbitrary)]
pub struct Input {
    specs: Vec<Spec>,
    origin: Advance,
    ops: Vec<Op>,
}

/// Every part's answers to a few probes at `t` and after: what a refusal
/// must leave as it was.
fn probes(parts: &[AnyCore], t: i64, cost: u64) -> Vec<Decision> {
    let mut out = Vec::new();
    for p in parts {
        for at in [t, t.saturating_add(1), t.saturating_add(1_000_000)] {
            for c in [cost, 1] {
                out.push(p.peek(c, at));
            }
        }
    }
    out
}

/// Runs one input.
pub fn run(input: Input) {
    let specs: Vec<LimiterSpec> = input.specs.iter().take(5).map(|s| s.0).collect();
    let clock = clock_at(input.origin);
    let built = CompositeLimiter::with_clock(&specs, clock.clone());
    let parts: core::result::Result<Vec<AnyCore>, _> = specs.iter().map(AnyCore::new).collect();
    let mut parts = match (parts, built) {
        (Ok(parts), Ok(std)) if !parts.is_empty() => {
            assert_eq!(std.specs(), &specs[..]);
            run_std(std, parts.clone(), &input.ops);
            parts
        }
        (Ok(parts), Err(_)) => {
            assert!(parts.is_empty(), "the std composite refused specs that each build");
            return;
        }
        (Err(_), built) => {
            assert!(built.is_err(), "the std composite accepted a spec that does not build");
            return;
        }
        (Ok(_), Ok(_)) => panic!("a composite of no limits was built"),
    };
    let mut time = Timeline::default();
    for op in &input.ops {
        match *op {
            Op::Check(step, cost) => {
                let now = time.step(step);
                let cost = cost.0;
                let before = parts.clone();
                let peeked = peek_all(&parts, cost, now);
                let mut each = vec![None; parts.len()];
                let d = check_all_each(&mut parts, cost, now, |i, d| each[i] = Some(*d));
                let each: Vec<Decision> = each.into_iter().map(|d| d.expect("a part not reported")).collect();
                assert_eq!(d, peeked, "peek_all and check_all disagree at {now}");
                check_fields(&d, cost, Promises { zero_may_be_refused: true, ..Promises::default() });
                assert_eq!(Some(d), combine(each.iter().copied()), "the decision is not combine of the parts'");
                // What each part alone would have said.
                let alone: Vec<Decision> = before.iter().map(|p| p.peek(cost, now)).collect();
                if d.allowed && cost > 0 {
                    assert!(alone.iter().all(|a| a.allowed));
                    for ((part, was), shown) in parts.iter().zip(&before).zip(&each) {
                        let mut own = was.clone();
                        assert_eq!(own.check(cost, now), *shown, "a part decided otherwise than on its own");
                        assert_eq!(probes(std::slice::from_ref(part), now, cost), probes(&[own], now, cost));
                    }
                } else {
                    assert!(cost == 0 || alone.iter().any(|a| !a.allowed), "refused though every part admits");
                    assert_eq!(
                        probes(&parts, time.latest, cost),
                        probes(&before, time.latest, cost),
                        "a refusal took something"
                    );
                    let refused = alone.iter().any(|a| !a.allowed);
                    for ((shown, a), p) in each.iter().zip(&alone).zip(&before) {
                        let expected = if refused && a.allowed { p.peek(0, now) } else { *a };
                        assert_eq!(*shown, expected, "a part shown otherwise in a refusal");
                    }
                }
                // check_all is check_all_each.
                let mut again = before.clone();
                assert_eq!(check_all(&mut again, cost, now), d);
            }
            Op::Peek(step, cost) => {
                let now = time.clone().step(step);
                let before = probes(&parts, now, cost.0);
                let _ = peek_all(&parts, cost.0, now);
                assert_eq!(probes(&parts, now, cost.0), before);
            }
            Op::StdAdvance(_) | Op::Std(..) => {}
        }
    }
}

/// The std composite against its parts driven at the clock's time.
fn run_std(std: CompositeLimiter<crate::mirror::TestClock>, mut parts: Vec<AnyCore>, ops: &[Op]) {
    let start = std.clock().now_micros();
    for op in ops {
        let now = std.clock().now_micros().wrapping_sub(start);
        match *op {
            Op::StdAdvance(by) => std.clock().advance_micros(by.0),
            Op::Std(which, cost) => match which % 3 {
                0 => assert_eq!(std.check(cost.0), check_all(&mut parts, cost.0, now)),
                1 => {
                    let (d, each) = std.check_each(cost.0);
                    let mut expected = vec![Decision::allowed(0, 0, 0, 0); parts.len()];
                    let e = check_all_each(&mut parts, cost.0, now, |i, d| expected[i] = *d);
                    assert_eq!((d, each), (e, expected));
                }
                _ => assert_eq!(std.peek(cost.0), peek_all(&parts, cost.0, now)),
            },
            Op::Check(..) | Op::Peek(..) => {}
        }
    }
}
