//! Property tests of [`Full`]: a state that says it is full can be dropped
//! and recreated fresh without any later decision changing.
//!
//! Each case runs two copies of one limiter through the same random
//! requests and looks: `kept` is never touched, `dropped` is replaced by
//! `fresh()` every time it reports full. Every decision — all its fields —
//! must be the same from both, so a predicate that called a state full too
//! early would show as a difference. Each case ends with a long pause, after
//! which a limiter that refills must be full: so every case drops at least
//! once, and the requests after that drop are compared too.
//!
//! Alongside, the other promises of the trait: full ⇔ a free look's
//! `reset_after_micros` is 0; `full_at_micros` is `now` exactly when full,
//! otherwise later than now and never later than the truth (the state is
//! not full one microsecond before it — also after an admission, which is
//! what lets a keyed limiter skip scanning until then); and, for the
//! integer algorithms, it is exact.

use std::fmt::Debug;

use proptest::prelude::*;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{
    Admission, Composite, FixedWindow, Full, Gcra, LeakyBucketMeter, LeakyBucketQueue, LogEntry, SlidingLog,
    SlidingWindow, SlidingWindowCounter, NEVER,
};

/// A step: a pause before it (µs), a cost, and whether it is a check (else a
/// look that consumes nothing).
type Step = (i64, u64, bool);

/// Steps at the scale of a limiter whose window (or refill time) is about
/// `scale` µs: many at the same time, some shorter than a window, some
/// longer.
fn steps(scale: i64, max_cost: u64) -> impl Strategy<Value = Vec<Step>> {
    let pause = prop_oneof![3 => Just(0i64), 3 => 0..scale.max(2) / 2, 2 => 0..scale.max(1) * 3, 1 => Just(1i64)];
    prop::collection::vec((pause, 0..=max_cost, prop::bool::weighted(0.8)), 1..60)
}

/// Whether `full_at_micros` must be exact (`is_full_at` holds at it): all
/// but the token bucket, whose refill time is computed in doubles.
#[derive(Clone, Copy)]
enum Bound {
    Exact,
    Lower,
}

/// Runs the twins through `steps`, a pause of 100 × `scale` (after which a
/// limiter that `refills` must be full), and `steps` again.
fn run<A: Admission + Full + Clone + Debug>(
    limiter: A,
    steps: &[Step],
    scale: i64,
    bound: Bound,
    refills: bool,
) -> Result<(), TestCaseError> {
    let mut kept = limiter.clone();
    let mut dropped = limiter.fresh();
    let mut now = 0i64;
    // The steps, then a long pause and the steps again.
    let tail = [(scale.saturating_mul(100).max(1), 0, false)];
    for (i, &(pause, cost, is_check)) in steps.iter().chain(&tail).chain(steps).enumerate() {
        now = now.saturating_add(pause);
        let full = dropped.is_full_at(now);
        prop_assert_eq!(full, kept.is_full_at(now), "step {}: the twins disagree on being full", i);
        prop_assert_eq!(full, dropped.peek(0, now).reset_after_micros == 0, "step {}: full vs reset_after", i);
        let at = dropped.full_at_micros(now);
        if i == steps.len() && refills {
            prop_assert!(full, "not full after a long pause: {:?}", dropped);
        }
        if full {
            prop_assert_eq!(at, now, "step {}", i);
            dropped = dropped.fresh();
        } else {
            prop_assert!(at > now, "step {}: full_at {} not after now {}", i, at, now);
            prop_assert!(!dropped.is_full_at(at - 1), "step {}: full before full_at {}", i, at);
            if at != NEVER {
                match bound {
                    Bound::Exact => prop_assert!(dropped.is_full_at(at), "step {}: not full at full_at {}", i, at),
                    // A part in 10^9 and 2 µs early, at most (and 1 µs of
                    // rounding of the time itself).
                    Bound::Lower => {
                        let slack = (at - now) / 500_000_000 + 4;
                        prop_assert!(
                            dropped.is_full_at(at.saturating_add(slack)),
                            "step {}: full_at {} too early",
                            i,
                            at
                        )
                    }
                }
            }
        }
        let (a, b) = if is_check {
            (kept.check(cost, now), dropped.check(cost, now))
        } else {
            (kept.peek(cost, now), dropped.peek(cost, now))
        };
        prop_assert_eq!(a, b, "step {} at {}: cost {}, check {}", i, now, cost, is_check);
        // An admission never makes a state full earlier than its bound said.
        if is_check && at > now + 1 {
            prop_assert!(!dropped.is_full_at(at - 1), "step {}: full earlier after an admission", i);
        }
        if is_check && a.allowed && cost > 0 && !dropped.is_full_at(now) {
            prop_assert!(dropped.full_at_micros(now) > now);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn gcra(max_burst in 0u64..5, count in 1u64..5, period in 1i64..3_000_000, s in steps(3_000_000, 7)) {
        run(Gcra::new(max_burst, count, period).unwrap(), &s, period * (max_burst as i64 + 1), Bound::Exact, true)?;
    }

    #[test]
    fn token_bucket(
        rate in prop_oneof![Just(0.0), 0.1f64..1_000.0, Just(f64::INFINITY), Just(3.0)],
        burst in 0u64..8,
        s in steps(2_000_000, 9),
    ) {
        let limiter = TokenBucket::new(rate, burst).unwrap();
        let scale = if rate > 0.0 && rate.is_finite() { ((burst.max(1) as f64 / rate) * 1e6) as i64 + 1 } else { 1_000_000 };
        // A bucket with a rate of 0 never refills: full only while untouched.
        run(limiter, &s, scale, Bound::Lower, rate > 0.0)?;
    }

    #[test]
    fn leaky_bucket_meter(capacity in 1u64..6, count in 1u64..4, period in 1i64..2_000_000, s in steps(2_000_000, 7)) {
        run(LeakyBucketMeter::new(capacity, count, period).unwrap(), &s, period * capacity as i64, Bound::Exact, true)?;
    }

    #[test]
    fn leaky_bucket_queue(capacity in 0u64..5, interval in 1i64..1_000_000, s in steps(2_000_000, 6)) {
        run(LeakyBucketQueue::new(capacity, interval).unwrap(), &s, interval * (capacity as i64 + 1), Bound::Exact, true)?;
    }

    #[test]
    fn fixed_window(limit in 1u64..8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(FixedWindow::new(limit, window).unwrap(), &s, window, Bound::Exact, true)?;
    }

    #[test]
    fn sliding_window(limit in 1u64..8, sub in 1i64..200_000, n in 1u32..=16, s in steps(2_000_000, 9)) {
        let window = sub * i64::from(n);
        run(SlidingWindow::new(limit, window, n).unwrap(), &s, window, Bound::Exact, true)?;
    }

    #[test]
    fn sliding_window_counter(limit in 1u64..8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(SlidingWindowCounter::new(limit, window).unwrap(), &s, window * 2, Bound::Exact, true)?;
    }

    #[test]
    fn sliding_log(limit in 1u64..=8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(SlidingLog::new(limit, window, [LogEntry::default(); 8]).unwrap(), &s, window, Bound::Exact, true)?;
    }

    #[test]
    fn composite(a in 1u64..4, b in 1u64..10, s in steps(4_000_000, 5)) {
        let parts = [FixedWindow::new(a, 1_000_000).unwrap(), FixedWindow::new(b, 4_000_000).unwrap()];
        run(Composite::new(parts), &s, 4_000_000, Bound::Exact, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// With slack, a full queue is not the fresh one (it has saved slots, a
    /// fresh one none): dropping it forgets them. The other promises of the
    /// trait hold, and so does the worst case across the drops: requests of
    /// one unit, acted on at `max(slot, now)`, never number more than
    /// `slack + 1 + T / interval` in any time T.
    #[test]
    fn leaky_bucket_queue_with_slack_keeps_its_worst_case_when_dropped(
        capacity in 0u64..5, interval in 1i64..100_000, slack in 1u64..12, s in steps(1_000_000, 1),
    ) {
        let mut q = LeakyBucketQueue::with_slack(capacity, interval, slack).unwrap();
        let (mut now, mut acted, mut drops) = (0i64, Vec::new(), 0);
        let tail = [(100_000_000, 0, false)];
        for &(pause, cost, is_check) in s.iter().chain(&tail).chain(&s) {
            now += pause;
            let full = q.is_full_at(now);
            prop_assert_eq!(full, q.peek(0, now).reset_after_micros == 0);
            if full {
                prop_assert_eq!(q.full_at_micros(now), now);
                q = q.fresh();
                drops += 1;
            } else {
                let at = q.full_at_micros(now);
                prop_assert!(at > now && q.is_full_at(at) && !q.is_full_at(at - 1));
            }
            let d = if is_check { q.check(cost, now) } else { q.peek(cost, now) };
            if is_check && cost == 1 && d.allowed {
                acted.push(now + d.wait_micros);
            }
        }
        prop_assert!(drops > 0);
        for (i, &first) in acted.iter().enumerate() {
            for (j, &last) in acted.iter().enumerate().skip(i) {
                let bound = slack as i64 + 1 + (last - first) / interval;
                prop_assert!((j - i + 1) as i64 <= bound, "{} acted in [{}, {}]", j - i + 1, first, last);
            }
        }
    }
}

/// The predicate is not vacuous: right after an admission that consumed
/// something, no limiter is full, and each is full again once it has
/// refilled.
#[test]
fn consumed_states_are_not_full_until_refilled() {
    fn check<A: Admission + Full + Debug>(mut a: A, refilled_at: i64) {
        assert!(a.is_full_at(0), "{a:?}");
        assert!(a.check(1, 10).allowed, "{a:?}");
        assert!(!a.is_full_at(10), "{a:?}");
        assert_eq!(a.full_at_micros(10), refilled_at, "{a:?}");
        assert!(!a.is_full_at(refilled_at - 1), "{a:?}");
        assert!(a.is_full_at(refilled_at), "{a:?}");
        assert!(!a.is_full_at(-1), "{a:?}: before creation");
    }
    check(Gcra::new(2, 1, 1_000).unwrap(), 1_010);
    check(LeakyBucketMeter::new(3, 1, 1_000).unwrap(), 1_010);
    check(LeakyBucketQueue::new(3, 1_000).unwrap(), 1_010);
    check(FixedWindow::new(3, 1_000).unwrap(), 1_000);
    check(SlidingWindow::new(3, 1_000, 4).unwrap(), 1_000);
    check(SlidingWindowCounter::new(3, 1_000).unwrap(), 2_000);
    check(SlidingLog::new(3, 1_000, [LogEntry::default(); 3]).unwrap(), 1_010);
    check(Composite::new([Gcra::new(0, 1, 500).unwrap(), Gcra::new(0, 1, 2_000).unwrap()]), 2_010);
    // 10 per second: one token back after 100 ms. The bound may be a few
    // microseconds early, never late.
    let mut bucket = TokenBucket::new(10.0, 2).unwrap();
    assert!(bucket.check(1, 10).allowed);
    assert!(!bucket.is_full_at(100_009));
    assert!(bucket.is_full_at(100_010));
    let at = bucket.full_at_micros(10);
    assert!((100_000..=100_010).contains(&at), "{at}");
    // Infinite rate: nothing is ever consumed.
    let mut unlimited = TokenBucket::new(f64::INFINITY, 0).unwrap();
    assert!(unlimited.check(5, 10).allowed);
    assert!(unlimited.is_full_at(10));
    // Rate 0: a one-off quota, never full again once used.
    let mut quota = TokenBucket::new(0.0, 2).unwrap();
    assert!(quota.check(1, 0).allowed);
    assert_eq!(quota.full_at_micros(0), NEVER);
    assert!(!quota.is_full_at(i64::MAX));
}

/// A state that has seen a later time (time went backwards) is not full
/// before that time, even when it holds nothing.
#[test]
fn later_times_seen_are_respected() {
    let mut w = FixedWindow::new(2, 1_000).unwrap();
    assert!(!w.check(3, 5_500).allowed); // sees window 5, counts nothing
    assert!(w.is_full_at(5_500));
    let mut log = SlidingLog::new(2, 1_000, [LogEntry::default(); 2]).unwrap();
    assert!(log.check(1, 5_000).allowed);
    assert!(!log.is_full_at(4_000));
    assert_eq!(log.full_at_micros(4_000), 6_000);
    let fresh = log.fresh();
    assert!(fresh.is_full_at(0));
    assert_eq!(fresh.entries().count(), 0);
}
