//! Property tests of [`Admission::refund`]: giving back units that were
//! admitted but should not count.
//!
//! * A check admitted and refunded at the same time leaves every later
//!   look as it was before the check (the token bucket up to the rounding
//!   of its double token count). That is the promise a middleware relies on
//!   for express-rate-limit's `skipFailedRequests`: a skipped request costs
//!   nothing.
//! * A refund never makes a limiter more generous than a fresh one: after
//!   any refund `remaining` stays within the limit, and a refund of
//!   everything (`u64::MAX`) makes the state full ([`Full`]) — except the
//!   sliding window counter, whose previous window is history (see below).
//! * A refund of 0 changes no decision; the two algorithms that hand out
//!   slots (leaky bucket queue, cycle limiter) give nothing back at all.
//! * [`Full`]'s contract holds with refunds among the operations: twins,
//!   one replaced by a fresh state whenever it reports full, decide alike,
//!   and `full_at_micros` stays a lower bound.
//!
//! The unit tests below pin each algorithm's own rule (a refund after the
//! window rolled, a refund in debt, …).

use std::fmt::Debug;

use proptest::prelude::*;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{
    Admission, Composite, CycleConfig, CycleLimiter, Decision, FixedWindow, Full, Gcra, LeakyBucketMeter,
    LeakyBucketQueue, LogEntry, SlidingLog, SlidingWindow, SlidingWindowCounter, NEVER,
};

/// An operation on a limiter.
#[derive(Debug, Clone, Copy)]
enum Op {
    Check(u64),
    Peek(u64),
    Refund(u64),
}

/// A pause before it (µs) and the operation.
type Step = (i64, Op);

/// Steps at the scale of a limiter whose window (or refill time) is about
/// `scale` µs, costs up to `max_cost` (refunds up to twice that: more than
/// was taken).
fn steps(scale: i64, max_cost: u64) -> impl Strategy<Value = Vec<Step>> {
    let pause = prop_oneof![3 => Just(0i64), 3 => 0..scale.max(2) / 2, 2 => 0..scale.max(1) * 3, 1 => Just(1i64)];
    let op = prop_oneof![
        5 => (0..=max_cost).prop_map(Op::Check),
        1 => (0..=max_cost).prop_map(Op::Peek),
        3 => (0..=max_cost * 2).prop_map(Op::Refund),
    ];
    prop::collection::vec((pause, op), 1..60)
}

/// How two states' looks must agree.
#[derive(Clone, Copy)]
enum Compare {
    Exact,
    /// The token bucket: the same admission and whole tokens, durations
    /// within a microsecond (its tokens are a double, and `(a − c) + c` is
    /// not always `a`).
    Rounded,
}

fn same(a: &Decision, b: &Decision, compare: Compare) -> bool {
    match compare {
        Compare::Exact => a == b,
        Compare::Rounded => {
            let close = |x: i64, y: i64| x == y || (x != NEVER && y != NEVER && x.abs_diff(y) <= 1);
            a.allowed == b.allowed
                && a.limit == b.limit
                && a.remaining == b.remaining
                && close(a.retry_after_micros, b.retry_after_micros)
                && close(a.reset_after_micros, b.reset_after_micros)
                && a.window_micros == b.window_micros
        }
    }
}

/// Every look (costs 0 to `max_cost + 1`) at `now` and at later times up to
/// 3 × `scale` on, from `a` and `b`, must agree.
fn same_looks<A: Admission>(
    a: &A,
    b: &A,
    now: i64,
    scale: i64,
    max_cost: u64,
    compare: Compare,
) -> Result<(), TestCaseError> {
    for later in [0, 1, scale / 3, scale / 2, scale, scale * 3] {
        let t = now.saturating_add(later);
        for cost in 0..=max_cost + 1 {
            let (x, y) = (a.peek(cost, t), b.peek(cost, t));
            prop_assert!(same(&x, &y, compare), "at {} (+{}), cost {}: {:?} vs {:?}", t, later, cost, x, y);
        }
    }
    Ok(())
}

/// Runs `steps` on `limiter`, checking at every step the properties in the
/// module docs. `full_after_all` says whether a refund of everything makes
/// the state full.
fn run<A: Admission + Full + Clone + Debug>(
    limiter: A,
    steps: &[Step],
    scale: i64,
    max_cost: u64,
    compare: Compare,
    full_after_all: bool,
) -> Result<(), TestCaseError> {
    let mut kept = limiter.clone();
    let mut dropped = limiter.fresh();
    let limit = limiter.peek(0, 0).limit;
    let mut now = 0i64;
    for (i, &(pause, op)) in steps.iter().enumerate() {
        now = now.saturating_add(pause);
        if dropped.is_full_at(now) {
            dropped = dropped.fresh();
        }
        match op {
            Op::Check(cost) => {
                let before = kept.clone();
                let (a, b) = (kept.check(cost, now), dropped.check(cost, now));
                prop_assert_eq!(a, b, "step {}: check {} at {}", i, cost, now);
                if a.allowed {
                    let mut undone = kept.clone();
                    undone.refund(cost, now);
                    same_looks(&before, &undone, now, scale, max_cost, compare)?;
                }
            }
            Op::Peek(cost) => {
                prop_assert_eq!(kept.peek(cost, now), dropped.peek(cost, now), "step {}: peek {} at {}", i, cost, now);
            }
            Op::Refund(cost) => {
                let before = kept.clone();
                kept.refund(cost, now);
                dropped.refund(cost, now);
                let look = kept.peek(0, now);
                prop_assert_eq!(look, dropped.peek(0, now), "step {}: refund {} at {}", i, cost, now);
                prop_assert!(look.remaining <= limit, "step {}: {:?}", i, look);
                if cost == 0 {
                    same_looks(&before, &kept, now, scale, max_cost, Compare::Exact)?;
                }
                // A refund brings full_at earlier, never past the truth.
                let at = kept.full_at_micros(now);
                if kept.is_full_at(now) {
                    prop_assert_eq!(at, now);
                } else {
                    prop_assert!(at > now && !kept.is_full_at(at - 1), "step {}: full_at {} at {}", i, at, now);
                }
                let mut all = before;
                all.refund(u64::MAX, now);
                if full_after_all {
                    prop_assert!(all.is_full_at(now), "step {}: a refund of everything left {:?}", i, all);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn gcra(max_burst in 0u64..5, count in 1u64..5, period in 1i64..3_000_000, s in steps(3_000_000, 7)) {
        let scale = period * (max_burst as i64 + 1);
        run(Gcra::new(max_burst, count, period).unwrap(), &s, scale, 7, Compare::Exact, true)?;
    }

    #[test]
    fn token_bucket(
        rate in prop_oneof![Just(0.0), 0.1f64..1_000.0, Just(f64::INFINITY), Just(3.0)],
        burst in 0u64..8,
        s in steps(2_000_000, 9),
    ) {
        let limiter = TokenBucket::new(rate, burst).unwrap();
        let scale = if rate > 0.0 && rate.is_finite() { ((burst.max(1) as f64 / rate) * 1e6) as i64 + 1 } else { 1_000_000 };
        run(limiter, &s, scale, 9, Compare::Rounded, true)?;
    }

    #[test]
    fn leaky_bucket_meter(capacity in 1u64..6, count in 1u64..4, period in 1i64..2_000_000, s in steps(2_000_000, 7)) {
        let scale = period * capacity as i64;
        run(LeakyBucketMeter::new(capacity, count, period).unwrap(), &s, scale, 7, Compare::Exact, true)?;
    }

    #[test]
    fn fixed_window(limit in 1u64..8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(FixedWindow::new(limit, window).unwrap(), &s, window, 9, Compare::Exact, true)?;
    }

    #[test]
    fn sliding_window(limit in 1u64..8, sub in 1i64..200_000, n in 1u32..=16, s in steps(2_000_000, 9)) {
        let window = sub * i64::from(n);
        run(SlidingWindow::new(limit, window, n).unwrap(), &s, window, 9, Compare::Exact, true)?;
    }

    /// A refund of everything leaves the previous window's count, which
    /// the estimate still weighs: not full.
    #[test]
    fn sliding_window_counter(limit in 1u64..8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(SlidingWindowCounter::new(limit, window).unwrap(), &s, window * 2, 9, Compare::Exact, false)?;
    }

    #[test]
    fn sliding_log(limit in 1u64..=8, window in 1i64..2_000_000, s in steps(2_000_000, 9)) {
        run(SlidingLog::new(limit, window, [LogEntry::default(); 8]).unwrap(), &s, window, 9, Compare::Exact, true)?;
    }

    #[test]
    fn composite(a in 1u64..4, b in 1u64..10, s in steps(4_000_000, 5)) {
        let parts = [FixedWindow::new(a, 1_000_000).unwrap(), FixedWindow::new(b, 4_000_000).unwrap()];
        run(Composite::new(parts), &s, 4_000_000, 5, Compare::Exact, true)?;
    }

    /// The two algorithms that hand out slots give nothing back: a refund
    /// leaves the state exactly as it was.
    #[test]
    fn slot_algorithms_give_nothing_back(
        capacity in 0u64..5, interval in 1i64..1_000_000, slack in 0u64..3, s in steps(2_000_000, 6),
    ) {
        let mut queue = LeakyBucketQueue::with_slack(capacity, interval, slack).unwrap();
        let config = CycleConfig { limit_for_period: capacity + 1, limit_refresh_period_micros: interval, timeout_micros: interval };
        let mut cycle = CycleLimiter::new(config).unwrap();
        let mut now = 0i64;
        for &(pause, op) in &s {
            now += pause;
            match op {
                Op::Check(cost) => {
                    queue.check(cost, now);
                    cycle.check(cost, now);
                }
                Op::Peek(_) => {}
                Op::Refund(cost) => {
                    let (q, c) = (queue, cycle);
                    queue.refund(cost, now);
                    cycle.refund(cost, now);
                    prop_assert_eq!(queue, q);
                    prop_assert_eq!(cycle, c);
                }
            }
        }
    }
}

#[test]
fn token_bucket_gives_tokens_back_capped_at_the_burst() {
    let mut b = TokenBucket::new(1.0, 5).unwrap();
    assert!(b.check(3, 0).allowed);
    b.refund(2, 0);
    assert_eq!(b.tokens_at(0), 4.0);
    b.refund(100, 0);
    assert_eq!(b.tokens_at(0), 5.0, "capped at the burst");
    // Refilled to the burst by now: nothing to give back.
    assert!(b.check(5, 1_000_000).allowed);
    b.refund(5, 10_000_000);
    assert_eq!(b.tokens_at(10_000_000), 5.0);
    // An infinite rate has nothing to give back, and changes no state.
    let mut inf = TokenBucket::new(f64::INFINITY, 0).unwrap();
    let before = inf;
    inf.refund(3, 7);
    assert_eq!(inf, before);
}

/// x/time/rate's `CancelAt` keeps the tokens later reservations depend on:
/// a refund while the bucket is in debt gives back only what exceeds it.
#[test]
fn token_bucket_in_debt_gives_back_only_what_exceeds_the_debt() {
    let mut b = TokenBucket::new(1.0, 2).unwrap();
    assert!(b.check(2, 0).allowed);
    assert!(b.reserve_n(1, 0).ok());
    assert_eq!(b.tokens_at(0), -1.0);
    b.refund(1, 0);
    assert_eq!(b.tokens_at(0), -1.0, "the reservation depends on the refunded token");
    b.refund(2, 0);
    assert_eq!(b.tokens_at(0), 0.0, "one token beyond the debt");
}

#[test]
fn gcra_moves_the_tat_back_never_before_now() {
    // 1 per second, 3 at once.
    let mut g = Gcra::new(2, 1, 1_000_000).unwrap();
    assert!(g.check(3, 0).allowed);
    assert!(!g.check(1, 0).allowed);
    g.refund(1, 0);
    let d = g.check(1, 0);
    assert!(d.allowed && d.remaining == 0, "{d:?}");
    // Half a unit has drained by 1.5 s; a refund of 3 leaves the limiter
    // idle, not more than idle.
    g.refund(3, 1_500_000);
    assert!(g.is_full_at(1_500_000));
    assert_eq!(g.peek(0, 1_500_000).remaining, 3);
    assert!(!g.check(4, 1_500_000).allowed);
    // Idle already: nothing to give back.
    let before = g;
    g.refund(1, 1_500_000);
    assert_eq!(g, before);
}

#[test]
fn leaky_bucket_meter_level_down_floored_at_empty() {
    // 3 units, leaking 1 per 100 ms.
    let mut m = LeakyBucketMeter::new(3, 1, 100_000).unwrap();
    assert!(m.check(3, 0).allowed);
    m.refund(1, 50_000);
    assert_eq!(m.level_at(50_000), 1, "2.5 units drained to 1.5, less one");
    m.refund(10, 50_000);
    assert_eq!(m.level_at(50_000), 0);
    assert!(m.is_full_at(50_000));
    assert!(m.check(3, 50_000).allowed);
    assert!(!m.check(1, 50_000).allowed);
}

#[test]
fn fixed_window_refund_after_the_window_rolled_gives_nothing_back() {
    let mut w = FixedWindow::new(3, 1_000).unwrap();
    assert!(w.check(3, 100).allowed);
    w.refund(1, 900);
    assert_eq!(w.peek(0, 900).remaining, 1);
    w.refund(5, 900);
    assert_eq!(w.peek(0, 900).remaining, 3, "saturates at an empty window");
    assert!(w.check(3, 950).allowed);
    // The next window: the units of the last one are gone already.
    assert!(w.check(2, 1_000).allowed);
    w.refund(3, 1_500);
    assert_eq!(w.peek(0, 1_500).remaining, 3);
    assert!(w.check(3, 1_600).allowed);
    w.refund(1, 2_000);
    assert_eq!(w.peek(0, 2_000).remaining, 3, "nothing to give back in a new window");
    assert!(!w.check(4, 2_000).allowed);
}

#[test]
fn sliding_window_takes_the_newest_sub_windows_first() {
    // 4 per second, in 4 sub-windows of 250 ms.
    let mut w = SlidingWindow::new(4, 1_000_000, 4).unwrap();
    assert!(w.check(2, 0).allowed);
    assert!(w.check(2, 500_000).allowed);
    // At 800 ms the current sub-window holds nothing: the refund comes off
    // the newest that holds some, the one at 500 ms (not the oldest, at 0).
    w.refund(1, 800_000);
    assert!(w.check(1, 800_000).allowed);
    assert!(!w.check(1, 800_000).allowed);
    // The two units at 0 slide out at 1 s: the window then holds one at
    // 500 ms and one at 800 ms.
    assert_eq!(w.peek(0, 1_000_000).remaining, 2);
    // A refund after the sub-windows slid out gives nothing back for them.
    w.refund(4, 1_000_000);
    assert_eq!(w.peek(0, 1_000_000).remaining, 4);
    assert!(!w.check(5, 1_000_000).allowed);
}

#[test]
fn sliding_window_counter_refunds_only_the_current_window() {
    let mut w = SlidingWindowCounter::new(4, 1_000).unwrap();
    assert!(w.check(4, 0).allowed);
    w.refund(2, 500);
    assert_eq!(w.peek(0, 500).remaining, 2);
    assert!(w.check(2, 500).allowed);
    // At 1,500 the previous window's 4 weigh half: 2 left; a refund then
    // finds nothing in the current window to give back.
    assert_eq!(w.peek(0, 1_500).remaining, 2);
    w.refund(4, 1_500);
    assert_eq!(w.peek(0, 1_500).remaining, 2);
}

#[test]
fn sliding_log_drops_the_newest_units() {
    let mut l = SlidingLog::new(4, 1_000, [LogEntry::default(); 4]).unwrap();
    assert!(l.check(1, 0).allowed);
    assert!(l.check(2, 100).allowed);
    assert!(l.check(1, 200).allowed);
    l.refund(2, 300);
    // Left: the unit at 0 and one of the two at 100.
    let entries: Vec<_> = l.entries().map(|e| (e.at_micros, e.units)).collect();
    assert_eq!(entries, [(0, 1), (100, 1)]);
    // The unit at 0 slides out at 1,000: a refund of 5 then empties the log.
    l.refund(5, 1_000);
    assert_eq!(l.entries().count(), 0);
    assert!(l.is_full_at(1_000));
    assert!(l.check(4, 1_000).allowed);
}

#[test]
fn composite_refunds_every_part() {
    let mut c = Composite::new([FixedWindow::new(2, 1_000).unwrap(), FixedWindow::new(3, 10_000).unwrap()]);
    assert!(c.check(2, 0).allowed);
    assert!(!c.check(1, 0).allowed);
    c.refund(1, 0);
    assert_eq!((c.parts()[0].peek(0, 0).remaining, c.parts()[1].peek(0, 0).remaining), (1, 2));
    // The second window still holds the other unit after the first rolled.
    c.refund(1, 1_000);
    assert_eq!(c.parts()[1].peek(0, 1_000).remaining, 3);
}
