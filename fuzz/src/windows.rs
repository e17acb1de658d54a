//! The four window algorithms (`ratekeeper_core::{FixedWindow,
//! SlidingWindow, SlidingWindowCounter, SlidingLog}`) and their std
//! wrappers on a manual clock.
//!
//! Each keeps the admission contract (the fixed-size ones with refusals
//! that change nothing bit for bit, the log with refusals that change
//! nothing observable), and its own bound, at the times it works at (a
//! time earlier than the latest counts as the latest):
//!
//! * fixed window: at most `limit` per aligned window;
//! * sliding window of n sub-windows: at most `limit` in any n consecutive
//!   sub-windows;
//! * sliding window counter: at most `2 × limit` in any interval of length
//!   `window` (its documented worst case), and never more than `limit` in
//!   one fixed window;
//! * sliding log: at most `limit` in any interval of length `window`,
//!   exactly; its log holds at most `limit` entries, in order.

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper_core::{
    Admission, Argument, Error, FixedWindow, LogEntry, Packed, SlidingLog, SlidingWindow, SlidingWindowCounter,
};

use crate::bounds::Ledger;
use crate::contract::{admit, admit_strict, Promises};
use crate::mirror::{clock_at, Advance, Mirror, MirrorOp, StdAdmission};
use crate::values::{wild_i64, wild_u64, Count, Step, Timeline};

/// A window's limit and length (and, for the sliding window, its number
/// of sub-windows).
#[derive(Debug, Clone, Copy)]
pub struct Params {
    limit: u64,
    window_micros: i64,
    sub_windows: u32,
}

impl<'a> Arbitrary<'a> for Params {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(3u8, 4)? {
            let sub_windows = u.int_in_range(1..=16)?;
            let sub = u.int_in_range(1..=200_000)?;
            Ok(Params { limit: u.int_in_range(1..=20)?, window_micros: sub * i64::from(sub_windows), sub_windows })
        } else {
            let sub_windows = if u.ratio(1u8, 2)? { u32::arbitrary(u)? } else { u.int_in_range(0..=17)? };
            Ok(Params { limit: wild_u64(u)?, window_micros: wild_i64(u)?, sub_windows })
        }
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `check(cost)` after moving the time.
    Check(Step, Count),
    /// `peek(cost)` after moving the time.
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

/// The limit and window checks every window constructor makes: a limit
/// from 1 to `max_limit` (reported as `limit`, the variant whose
/// requirement names that bound), a positive window.
fn window_error(p: &Params, max_limit: u64, limit: Argument) -> Option<Argument> {
    if p.limit == 0 || p.limit > max_limit {
        Some(limit)
    } else if p.window_micros <= 0 {
        Some(Argument::Window)
    } else {
        None
    }
}

/// Checks that a constructor failed as it must (or succeeded when it
/// must); `Some` when it succeeded.
fn expect_built<T: std::fmt::Debug>(
    made: core::result::Result<T, Error>,
    expected: Option<Argument>,
    p: &Params,
) -> Option<T> {
    match (made, expected) {
        (Ok(t), None) => Some(t),
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            None
        }
        (made, expected) => panic!("{p:?}: built {made:?}, expected an error about {expected:?}"),
    }
}

fn duration(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}

/// The shared loop: `check` and `peek` on the core with the contract, the
/// std limiter mirrored; `record` is told each admission (the limiter
/// after it, the cost, the time), and the std admissions are recorded at
/// the clock's time.
fn drive<A, L>(
    core: &mut A,
    mut mirror: Mirror<L>,
    ops: Vec<Op>,
    promises: Promises,
    strict: impl Fn(&mut A, u64, &Timeline, Promises) -> ratekeeper_core::Decision,
    mut record: impl FnMut(&A, u64, &Timeline),
    std_ledger: &mut Ledger,
) where
    A: Admission + Clone + std::fmt::Debug,
    L: StdAdmission,
{
    let mut time = Timeline::default();
    for op in ops {
        match op {
            Op::Check(step, cost) => {
                time.step(step);
                let d = strict(core, cost.0, &time, promises);
                if d.allowed {
                    record(core, cost.0, &time);
                }
            }
            Op::Peek(step, cost) => {
                // A look at some time, which the limiter does not take
                // as a time it has seen.
                let now = time.clone().step(step);
                let _ = core.peek(cost.0, now);
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
}

const EXACT: Promises = Promises {
    exact_retry: true,
    whole_after_reset: true,
    refusal_is_identity: true,
    horizon: None,
    zero_may_be_refused: false,
};

/// Runs the fixed window.
pub fn run_fixed(input: Input) {
    let p = input.params;
    let clock = clock_at(input.origin);
    let std = ratekeeper::FixedWindow::with_clock(p.limit, duration(p.window_micros), clock.clone());
    let Some(mut w) = expect_built(
        FixedWindow::new(p.limit, p.window_micros),
        window_error(&p, i64::MAX as u64, Argument::Limit),
        &p,
    ) else {
        assert!(std.is_err());
        return;
    };
    let mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), w);
    let (mut ledger, mut std_ledger) = (Ledger::default(), Ledger::default());
    drive(
        &mut w,
        mirror,
        input.ops,
        EXACT,
        admit_strict,
        // Counted in the window the limiter is in (its index, the latest).
        |w, cost, _| ledger.push(i128::from(w.pack()[0] as i64), cost),
        &mut std_ledger,
    );
    assert!(ledger.max_at_once() <= u128::from(p.limit), "a fixed window admitted more than {} in one window", p.limit);
    let most = {
        let mut per_window = Ledger::default();
        for (t, units) in std_events(&std_ledger) {
            per_window.push(t.div_euclid(i128::from(p.window_micros)), units);
        }
        per_window.max_at_once()
    };
    assert!(most <= u128::from(p.limit), "the std fixed window admitted {most} in one window");
}

/// The events of a ledger (for regrouping).
fn std_events(ledger: &Ledger) -> Vec<(i128, u64)> {
    ledger.events().iter().map(|&(t, u)| (t, u as u64)).collect()
}

/// Runs the sliding window.
pub fn run_sliding(input: Input) {
    let p = input.params;
    let clock = clock_at(input.origin);
    let std = ratekeeper::SlidingWindow::with_clock(p.limit, duration(p.window_micros), p.sub_windows, clock.clone());
    let expected = window_error(&p, u64::from(u32::MAX), Argument::SlidingWindowLimit).or_else(|| {
        (p.sub_windows == 0 || p.sub_windows > 16 || p.window_micros % i64::from(p.sub_windows) != 0)
            .then_some(Argument::SubWindows)
    });
    let Some(mut w) = expect_built(SlidingWindow::new(p.limit, p.window_micros, p.sub_windows), expected, &p) else {
        assert!(std.is_err());
        return;
    };
    let sub = p.window_micros / i64::from(p.sub_windows);
    let mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), w);
    let (mut ledger, mut std_ledger) = (Ledger::default(), Ledger::default());
    drive(
        &mut w,
        mirror,
        input.ops,
        EXACT,
        admit_strict,
        // Counted in the sub-window the limiter is in (the latest).
        |w, cost, _| ledger.push(i128::from(w.pack()[0] as i64), cost),
        &mut std_ledger,
    );
    let n = i128::from(p.sub_windows);
    let most = ledger.max_in_window(n);
    assert!(most <= u128::from(p.limit), "a sliding window admitted {most} in {n} sub-windows");
    let mut per_sub = Ledger::default();
    for (t, units) in std_events(&std_ledger) {
        per_sub.push(t.div_euclid(i128::from(sub)), units);
    }
    assert!(per_sub.max_in_window(n) <= u128::from(p.limit), "the std sliding window admitted too much");
}

/// Runs the sliding window counter.
pub fn run_counter(input: Input) {
    let p = input.params;
    let clock = clock_at(input.origin);
    let std = ratekeeper::SlidingWindowCounter::with_clock(p.limit, duration(p.window_micros), clock.clone());
    let made = SlidingWindowCounter::new(p.limit, p.window_micros);
    let Some(mut c) = expect_built(made, window_error(&p, i64::MAX as u64, Argument::Limit), &p) else {
        assert!(std.is_err());
        return;
    };
    let mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), c);
    let (mut ledger, mut per_window, mut std_ledger) = (Ledger::default(), Ledger::default(), Ledger::default());
    let w = i128::from(p.window_micros);
    drive(
        &mut c,
        mirror,
        input.ops,
        EXACT,
        admit_strict,
        |c, cost, time| {
            // The counter works at the latest time it counted at: never
            // before the start of its current window.
            let index = i128::from(c.pack()[0] as i64);
            ledger.push(i128::from(time.now).max(index * w), cost);
            per_window.push(index, cost);
        },
        &mut std_ledger,
    );
    let most = ledger.max_in_window(w);
    assert!(most <= 2 * u128::from(p.limit), "a sliding window counter admitted {most} in one window");
    assert!(per_window.max_at_once() <= u128::from(p.limit), "a sliding window counter's window held too much");
    assert!(std_ledger.max_in_window(w) <= 2 * u128::from(p.limit), "the std sliding window counter admitted too much");
}

/// A run of the sliding log.
#[derive(Debug, Arbitrary)]
pub struct SlidingLogInput {
    params: Params,
    /// How much storage to give: room for the limit (up to 256), and
    /// -3 to 3 entries more (too little must be refused).
    extra_storage: i8,
    origin: Advance,
    ops: Vec<Op>,
}

/// Runs the sliding log.
pub fn run_log(input: SlidingLogInput) {
    let p = input.params;
    let storage =
        usize::try_from(p.limit.min(256)).unwrap_or(0).saturating_add_signed(isize::from(input.extra_storage) % 4);
    let made = SlidingLog::new(p.limit, p.window_micros, vec![LogEntry::default(); storage]);
    let expected = window_error(&p, storage as u64, Argument::SlidingLogStorageLimit);
    let Some(mut log) = expect_built(made, expected, &p) else {
        return;
    };
    // The std log's storage grows with use (HeapLogStorage), checked here
    // against a core log over fixed storage of the whole limit.
    let clock = clock_at(input.origin);
    let std = ratekeeper::SlidingLog::with_clock(p.limit, duration(p.window_micros), clock.clone())
        .expect("the std layer refused what the core accepted");
    let core =
        SlidingLog::new(p.limit, p.window_micros, vec![LogEntry::default(); p.limit as usize].into_boxed_slice())
            .expect("a log with room for its limit");
    let mirror = Mirror::new(clock, std, core);
    let (mut ledger, mut std_ledger) = (Ledger::default(), Ledger::default());
    let promises = Promises { exact_retry: true, whole_after_reset: true, ..Promises::default() };
    // The latest time the log was asked to check at: the time it works at.
    let latest = std::cell::Cell::new(i64::MIN);
    drive(
        &mut log,
        mirror,
        input.ops,
        promises,
        |log, cost, time, promises| {
            latest.set(latest.get().max(time.now));
            let d = admit(log, cost, time, promises);
            // The log: live entries only, in order, each holding units,
            // never more than the limit.
            let entries: Vec<LogEntry> = log.entries().collect();
            assert!(entries.len() as u64 <= p.limit, "{} entries for a limit of {}", entries.len(), p.limit);
            assert!(entries.windows(2).all(|e| e[0].at_micros < e[1].at_micros), "entries out of order: {entries:?}");
            assert!(entries.iter().all(|e| e.units > 0));
            assert!(entries.iter().map(|e| e.units).sum::<u64>() <= p.limit);
            d
        },
        // The log works at the latest time it was asked at.
        |_, cost, _| ledger.push(i128::from(latest.get()), cost),
        &mut std_ledger,
    );
    let w = i128::from(p.window_micros);
    let most = ledger.max_in_window(w);
    assert!(most <= u128::from(p.limit), "a sliding log admitted {most} in a window of {w} µs");
    assert!(std_ledger.max_in_window(w) <= u128::from(p.limit), "the std sliding log admitted too much");
}
