//! Loom models of the std layer's concurrent code. This module holds the
//! internal building blocks — the seqlock [`SeqCell`] (every lock-free
//! limiter's state) and the keyed limiter's shard lock; [`limiters`] drives
//! the public limiters (every algorithm, `RateLimiter`, the composite, the
//! concurrency limiter, the clocks) and [`keyed`] the keyed limiters, all
//! through their public methods.
//!
//! Built only with `RUSTFLAGS="--cfg loom"`, when [`crate::sync`] hands out
//! loom's atomics, cells and locks: loom then runs each model under the
//! interleavings of its threads, and the values relaxed loads may return,
//! that the memory model allows — all of them as its partial-order
//! reduction tells them apart (no preemption bound unless
//! `LOOM_MAX_PREEMPTIONS` sets one). That reduction has a blind spot, which
//! [`linearizable`] works around. Run them with `scripts/loom.sh`.
//!
//! Each model was seen to fail on a broken variant of the code it covers:
//! the version CAS replaced by a swap, the re-check or either fence
//! removed, `Relaxed` for the version's or the shard lock's
//! acquire/release, no shard lock, a refusal returned without the re-check,
//! `update` on an unchecked copy, `try_acquire` ignoring its CAS, the
//! manual clock advanced by a load and a store.
//!
//! Models have two threads, three where the third only reads. Loom cannot
//! finish a model in which two threads wait for a third by spinning (the
//! seqlock's retry, the shard lock): a spinning thread yields, and loom may
//! then schedule the two spinners alone, forever, since a yield is not a
//! preemption that a bound could cut; it gives up at its branch limit.
//! More threads are the stress tests' job (`tests/stress.rs`, 2 to 64).
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

mod keyed;
mod limiters;

/// Runs `model` under loom, exhaustively, and prints how many executions
/// that took.
///
/// No preemption bound unless `LOOM_MAX_PREEMPTIONS` sets one: every model
/// here is small enough for loom to try every interleaving its partial-order
/// reduction distinguishes (all of them take a few seconds), so nothing is
/// left to a bound. No time or permutation cap may cut the search short
/// either.
pub(crate) fn check(name: &str, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
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

/// What two calls on one object returned (the first caller's, the
/// second's) and what the object looked like afterwards.
type Outcome<R, S> = ([R; 2], S);

/// Linearizability of two calls: under loom, caller 0 and caller 1 each
/// make their call on one object from `make`; what they get, and the
/// object's state after both (`end`), must be what one of the two serial
/// orders gives on a fresh object. The two orders must give different
/// outcomes (else the model would show nothing), and every call happens at
/// one instant of a manual clock unless a call moves it, so the serial
/// outcomes are exact.
///
/// The race is modelled twice, with caller 0 on the model's main thread
/// and then on the spawned one. Loom's exploration (DPOR) remembers only
/// the latest access to each atomic, so a thread's own load can hide an
/// earlier load by another thread from the race check: it finds the
/// interleavings in which a spawned thread's copy is torn by the main
/// thread's write, but not always the mirror image. Both placements cover
/// both.
pub(crate) fn linearizable<L, R, S>(name: &str, make: fn() -> L, call: fn(&L, usize) -> R, end: fn(&L) -> S)
where
    L: Send + Sync + 'static,
    R: PartialEq + std::fmt::Debug + Send + 'static,
    S: PartialEq + std::fmt::Debug + 'static,
{
    for spawned in [1, 0] {
        let title = format!("{name} (caller {spawned} spawned)");
        let name = title.clone();
        check(&title, move || {
            let name = &name;
            let serial = |order: [usize; 2]| -> Outcome<R, S> {
                let object = make();
                let first = call(&object, order[0]);
                let second = call(&object, order[1]);
                let results = if order[0] == 0 { [first, second] } else { [second, first] };
                (results, end(&object))
            };
            let (zero_first, one_first) = (serial([0, 1]), serial([1, 0]));
            assert_ne!(zero_first, one_first, "{name}: the order of the calls changes nothing; the model is vacuous");
            let object = Arc::new(make());
            let other = {
                let object = Arc::clone(&object);
                thread::spawn(move || call(&object, spawned))
            };
            let mine = call(&object, 1 - spawned);
            let theirs = other.join().unwrap();
            let results = if spawned == 1 { [mine, theirs] } else { [theirs, mine] };
            let got = (results, end(&object));
            assert!(
                got == zero_first || got == one_first,
                "{name}: not linearizable: got {got:?}; caller 0 first gives {zero_first:?}; caller 1 first \
                 gives {one_first:?}"
            );
        });
    }
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

/// A refusal (a decision that changes nothing, so publishes nothing) is
/// returned only if made on a consistent copy: a spawned thread decides
/// while this one writes both words, and the decision reports the copy it
/// was made on. Also `read` (a consistent copy, as `peek` takes).
#[test]
fn a_refusal_is_made_on_a_consistent_copy() {
    check("SeqCell::decide (refusal) and read vs update, 2 threads", || {
        let cell = Arc::new(SeqCell::new(&Twin::new(0, 7), 0));
        let reader = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || {
                let seen: Twin = cell.decide(0, |t: &mut Twin, _| *t);
                assert!(!seen.torn() && seen.cold == 7, "a refusal was made on {seen:?}");
                let read: Twin = cell.read().value();
                assert!(!read.torn() && read.a >= seen.a, "read {read:?} after {seen:?}");
            })
        };
        cell.update(0, |t: &mut Twin, _| *t = Twin::new(t.a + 1, t.cold));
        reader.join().unwrap();
        assert_eq!(cell.get(), Twin::new(1, 7));
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

/// The shard lock: two threads add to a plain (non-atomic) counter under
/// it. Loom tracks each guard's access to the cell, so two guards at once
/// would fail the model; and no addition is lost.
///
/// Two threads (see the module docs): mutual exclusion is a property of
/// pairs, and the [`keyed`] models run the lock in the limiter's own paths.
#[test]
fn the_shard_lock_excludes() {
    check("keyed ShardLock, 2 threads", || {
        let lock = Arc::new(ShardLock::new(0u64));
        let other = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                let mut guard = lock.lock();
                let seen = *guard;
                // A window for the other thread to barge in, if it could.
                thread::yield_now();
                *guard = seen + 1;
            })
        };
        {
            let mut guard = lock.lock();
            let seen = *guard;
            thread::yield_now();
            *guard = seen + 1;
        }
        other.join().unwrap();
        assert_eq!(*lock.lock(), 2);
    });
}
