//! Loom models of the crate's internal concurrent building blocks: the
//! seqlock [`SeqCell`] (every lock-free limiter's state) and the keyed
//! limiter's shard lock. `tests/loom.rs` models the public limiters built
//! on them.
//!
//! Built only with `RUSTFLAGS="--cfg loom"`, when [`crate::sync`] hands out
//! loom's atomics: loom then runs each model under every interleaving of its
//! threads, and every value each relaxed load may return, that the memory
//! model allows (up to `LOOM_MAX_PREEMPTIONS` preemptions; 3 unless set).
//! Run them with `scripts/loom.sh`.
//!
//! What the seqlock must guarantee, and the models check:
//!
//! * **no lost update** — every published decision is applied to the state
//!   the previous one left (counts add up);
//! * **no torn read accepted** — a decision computed on a copy that mixes
//!   two versions is never returned nor published (the copy may be torn:
//!   `read_unchecked` does not check; the version does);
//! * **no double spending** — two threads racing for the last unit: exactly
//!   one takes it; the refusal writes nothing;
//! * **times never go backwards** — the times the published decisions used,
//!   in publication order, never decrease, even when the threads read their
//!   clocks in the other order; and each is a time some caller read;
//! * **hot writes keep the configuration** — a decision (`try_write_hot`,
//!   which stores only the hot words) racing a reconfiguration (`update`,
//!   which may store any word) neither loses the reconfiguration nor mixes
//!   an old configuration into the published state.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc as StdArc;
use std::time::Instant;

use loom::sync::Arc;
use loom::thread;
use ratekeeper_core::Packed;

use crate::keyed::ShardLock;
use crate::seq_cell::SeqCell;

/// Runs `model` under loom, exhaustively within the preemption bound, and
/// prints how many executions that took.
fn check(name: &str, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = builder.preemption_bound.or(Some(3));
    // Exhaustive: no time or permutation cap may cut the search short.
    builder.max_duration = None;
    builder.max_permutations = None;
    let executions = StdArc::new(AtomicUsize::new(0));
    let counter = StdArc::clone(&executions);
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        model();
    });
    println!(
        "loom: {name}: {} executions in {:.2} s (preemption bound {:?})",
        executions.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64(),
        builder.preemption_bound
    );
}

/// Two words that a consistent state always has equal, and a third the
/// models use for a configuration word (not hot) or a time.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Twin {
    a: u64,
    b: u64,
    cold: u64,
}

impl Twin {
    fn new(value: u64, cold: u64) -> Self {
        Twin { a: value, b: value, cold }
    }

    fn torn(&self) -> bool {
        self.a != self.b
    }
}

impl Packed<3> for Twin {
    const HOT: usize = 2;

    fn pack(&self) -> [u64; 3] {
        [self.a, self.b, self.cold]
    }

    fn unpack(w: [u64; 3]) -> Self {
        Twin { a: w[0], b: w[1], cold: w[2] }
    }
}

/// `update` (consistent copies, any word): two threads add 1 each; neither
/// addition is lost, and no copy either saw was torn.
#[test]
fn update_loses_no_addition() {
    check("SeqCell::update, 2 threads", || {
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 0), 0));
        let other = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || {
                cell.update(0, |t: &mut Twin, _| {
                    assert!(!t.torn(), "update saw a torn copy: {t:?}");
                    *t = Twin::new(t.a + 1, t.cold);
                })
            })
        };
        cell.update(0, |t: &mut Twin, _| {
            assert!(!t.torn(), "update saw a torn copy: {t:?}");
            *t = Twin::new(t.a + 1, t.cold);
        });
        other.join().unwrap();
        assert_eq!(cell.get(), Twin::new(2, 0));
    });
}

/// `decide` (the hot path: an unchecked copy, one CAS): two writers add 1
/// each while a reader takes unchecked copies. A decision may be computed
/// on a torn copy, but its result is never returned; a copy that
/// `unchanged_since` vouches for is never torn; and no addition is lost.
#[test]
fn decide_never_accepts_a_torn_copy_nor_loses_an_addition() {
    check("SeqCell::decide + read_unchecked/unchanged_since, 2 writers + 1 reader", || {
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 7), 0));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let cell = Arc::clone(&cell);
                thread::spawn(move || {
                    let saw_torn = cell.decide(0, |t: &mut Twin, _| {
                        let torn = t.torn();
                        // What a state machine does with any words: computes.
                        t.a = t.a.wrapping_add(1);
                        t.b = t.b.wrapping_add(1);
                        torn
                    });
                    assert!(!saw_torn, "decide returned a result computed on a torn copy");
                })
            })
            .collect();
        let copy = cell.read_unchecked();
        if cell.unchanged_since(&copy) {
            let t: Twin = copy.value();
            assert!(!t.torn() && t.cold == 7, "a vouched-for copy was torn: {t:?}");
        }
        let t = cell.get();
        assert!(!t.torn() && t.a <= 2, "read() returned {t:?}");
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(cell.get(), Twin::new(2, 7));
    });
}

/// The last unit: two threads race to take 1 from a budget of 1 through
/// `decide`. Exactly one wins; the loser's refusal writes nothing (the
/// version moves once).
#[test]
fn the_last_unit_is_taken_once() {
    check("SeqCell::decide, last unit, 2 threads", || {
        // a = b = units left.
        let cell = Arc::new(SeqCell::new(&Twin::new(1, 0), 0));
        let take = |cell: &SeqCell<Twin, 3>| {
            cell.decide(0, |t: &mut Twin, _| {
                if t.a >= 1 && !t.torn() {
                    *t = Twin::new(t.a - 1, t.cold);
                    true
                } else {
                    false
                }
            })
        };
        let other = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || take(&cell))
        };
        let mine = take(&cell);
        let theirs = other.join().unwrap();
        assert!(mine ^ theirs, "winners: this thread {mine}, the other {theirs}");
        assert_eq!(cell.get(), Twin::new(0, 0));
        assert_eq!(cell.read().version(), 2, "exactly one write: the refusal wrote nothing");
    });
}

/// `Snapshot::time`: two threads decide with clock readings 20 and 10 (the
/// first read later but may publish first). Along the order of
/// publication the times used never decrease, each is at least the
/// caller's reading, and each is a reading some caller took.
#[test]
fn decision_times_never_go_backwards() {
    check("SeqCell::decide/update times, 2 threads", || {
        // a = b = the time the latest published decision used.
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 0), 0));
        let decide = |cell: &SeqCell<Twin, 3>, now: i64, via_update: bool| {
            let f = |t: &mut Twin, time: i64| {
                let before = t.a as i64;
                *t = Twin::new(time as u64, t.cold);
                (before, time, t.torn())
            };
            let (before, time, _) = if via_update { cell.update(now, f) } else { cell.decide(now, f) };
            assert!(time >= before, "a published decision at {time} followed one at {before}");
            assert!(time >= now, "a decision at {time} before its clock reading {now}");
            assert!(time == 10 || time == 20, "a time nobody read: {time}");
            time
        };
        let other = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || decide(&cell, 20, false))
        };
        let mine = decide(&cell, 10, true);
        let theirs = other.join().unwrap();
        assert_eq!(theirs, 20);
        assert!(mine == 10 || mine == 20);
        assert_eq!(cell.read().time(0), 20, "the latest time is kept");
        assert_eq!(cell.get(), Twin::new(20, 0));
    });
}

/// A decision that stores only the hot words (`decide` → `try_write_hot`)
/// against a reconfiguration that stores a cold word (`update`): the
/// decision adds the configuration it saw, and the reconfiguration is never
/// lost. Either the decision came first (1 added, then the configuration
/// became 10) or second (10 added).
#[test]
fn hot_writes_keep_the_configuration() {
    check("SeqCell::decide (hot words) vs update (cold word), 2 threads", || {
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 1), 0));
        let reconfigure = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || cell.update(0, |t: &mut Twin, _| t.cold = 10))
        };
        cell.decide(0, |t: &mut Twin, _| {
            let add = t.cold;
            t.a = t.a.wrapping_add(add);
            t.b = t.b.wrapping_add(add);
        });
        reconfigure.join().unwrap();
        let end = cell.get();
        assert!(end == Twin::new(1, 10) || end == Twin::new(10, 10), "{end:?}");
    });
}

/// `try_write_hot`/`try_write` on a stale copy fail without writing, while
/// another thread's write goes through; `unchanged_since` says so.
#[test]
fn writes_on_a_stale_copy_fail() {
    check("SeqCell::try_write_hot/try_write, 2 threads", || {
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 0), 0));
        let copy = cell.read();
        let other = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || {
                let copy = cell.read();
                cell.try_write(&copy, 5, &Twin::new(copy.value::<Twin>().a + 1, 3))
            })
        };
        let mine = cell.try_write_hot(&copy, 4, &Twin::new(1, 0));
        let theirs = other.join().unwrap();
        let end = cell.get();
        if mine && theirs {
            // Then theirs copied after mine was published.
            assert_eq!(end, Twin::new(2, 3));
        } else {
            assert!(mine || theirs, "both writes failed");
            assert!(!cell.unchanged_since(&copy));
            assert_eq!(end, if mine { Twin::new(1, 0) } else { Twin::new(1, 3) });
        }
    });
}

/// The shard lock: three threads add to a plain (non-atomic) counter under
/// it. Loom tracks each guard's access to the cell, so two guards at once
/// would fail the model; and no addition is lost.
#[test]
fn the_shard_lock_excludes() {
    check("keyed ShardLock, 3 threads", || {
        let lock = Arc::new(ShardLock::new(0u64));
        let others: Vec<_> = (0..2)
            .map(|_| {
                let lock = Arc::clone(&lock);
                thread::spawn(move || *lock.lock() += 1)
            })
            .take(std::env::var("SHARD_THREADS").map_or(2, |v| v.parse().unwrap()))
            .collect();
        *lock.lock() += 1;
        let n = others.len() as u64 + 1;
        for t in others {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), n);
    });
}
