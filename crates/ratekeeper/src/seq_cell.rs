//! `SeqCell`: where every shared limiter keeps its core state machine.
//!
//! A decision is a pure function of a few words of state, the time and the
//! request, so a shared limiter does not need to hold a lock while deciding.
//! `SeqCell` keeps the state as [`Packed`] words in atomics behind a version
//! counter (a seqlock):
//!
//! * [`read_unchecked`](SeqCell::read_unchecked) copies the words without
//!   writing anything: refusals and queries never contend with each other;
//! * a decision is computed on that copy, and
//!   [`try_write_hot`](SeqCell::try_write_hot) publishes it only if the
//!   version has not moved since the copy was taken — one compare-and-swap,
//!   then plain stores of the words that changed. If another thread got
//!   there first, the caller takes a fresh copy and decides again.
//!
//! So the state is updated atomically as a whole (as if under a lock),
//! decisions are linearizable in the order of their successful CAS, and the
//! core's state machines stay plain `f64`/`i64` fields — Guava-exact — with
//! no 128-bit atomics.
//!
//! ## Time
//!
//! Beside the state the cell keeps the latest time any published decision
//! used, and every decision uses `max(its clock reading, that time)`. So the
//! times a state machine sees never go backwards — not when two threads read
//! the clock in one order and publish in the other, nor when a counter read
//! on another core lags by a few ticks — and each decision's time still lies
//! between the call and its return (the later reading was taken before the
//! earlier decision was published). This is what lets a caller read the
//! clock *before* taking its copy, which keeps the copy-to-CAS window short.

use ratekeeper_core::Packed;
use std::fmt;
use std::marker::PhantomData;

use crate::sync::{fence, spin, yield_now, AtomicI64, AtomicU64, Ordering};

/// Backing off doubles the spin up to 2^`MAX_SPIN_SHIFT` pauses, then yields
/// the CPU.
const MAX_SPIN_SHIFT: u32 = 6;

/// A `T` stored as `N` atomic words behind a version counter, with the time
/// of the latest decision.
#[repr(C, align(64))]
pub(crate) struct SeqCell<T: Packed<N>, const N: usize> {
    /// Even when no write is in progress; odd during one.
    version: AtomicU64,
    /// The time (microseconds) the latest published decision used.
    time: AtomicI64,
    words: [AtomicU64; N],
    _value: PhantomData<T>,
}

/// A copy of a [`SeqCell`]'s contents and the version it was taken at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snapshot<const N: usize> {
    version: u64,
    time: i64,
    words: [u64; N],
}

impl<const N: usize> Snapshot<N> {
    /// The time a decision made now must use: the clock reading `now`, or
    /// the latest published decision's time if that is later.
    #[inline]
    pub(crate) fn time(&self, now: i64) -> i64 {
        now.max(self.time)
    }

    /// The version the copy was taken at (even; +2 per write).
    #[cfg(all(test, loom))]
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// The state as of this copy.
    #[inline]
    pub(crate) fn value<T: Packed<N>>(&self) -> T {
        T::unpack(self.words)
    }
}

impl<T: Packed<N>, const N: usize> SeqCell<T, N> {
    pub(crate) fn new(value: &T, time: i64) -> Self {
        SeqCell {
            version: AtomicU64::new(0),
            time: AtomicI64::new(time),
            words: value.pack().map(AtomicU64::new),
            _value: PhantomData,
        }
    }

    /// A copy taken at an even version, without the re-check: a concurrent
    /// write may have torn it. Then [`try_write_hot`](Self::try_write_hot)
    /// fails, so a caller that publishes its result needs no other check; one
    /// that publishes nothing must check
    /// [`unchanged_since`](Self::unchanged_since) before trusting the copy.
    /// The hot path uses this with the core's state machines, which accept
    /// any state without panicking (their arithmetic never traps).
    #[inline]
    pub(crate) fn read_unchecked(&self) -> Snapshot<N> {
        let mut backoff = Backoff::default();
        loop {
            let version = self.version.load(Ordering::Acquire);
            if version & 1 == 0 {
                let time = self.time.load(Ordering::Relaxed);
                let mut words = [0u64; N];
                for (word, slot) in words.iter_mut().zip(&self.words) {
                    *word = slot.load(Ordering::Relaxed);
                }
                return Snapshot { version, time, words };
            }
            backoff.wait();
        }
    }

    /// Whether nothing was written since `copy` was taken, making it a
    /// consistent copy.
    #[inline]
    pub(crate) fn unchanged_since(&self, copy: &Snapshot<N>) -> bool {
        // Orders the copy's loads before the re-check (seqlock reader).
        fence(Ordering::Acquire);
        self.version.load(Ordering::Relaxed) == copy.version
    }

    /// A consistent copy.
    #[inline]
    pub(crate) fn read(&self) -> Snapshot<N> {
        let mut backoff = Backoff::default();
        loop {
            let copy = self.read_unchecked();
            if self.unchanged_since(&copy) {
                return copy;
            }
            backoff.wait();
        }
    }

    /// Takes the write side if nothing was written since `copy`.
    #[inline]
    fn begin_write(&self, copy: &Snapshot<N>, time: i64) -> bool {
        if self
            .version
            .compare_exchange_weak(copy.version, copy.version + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // A reader that sees any store below also sees the odd version
        // (pairs with the fence in `unchanged_since`).
        fence(Ordering::Release);
        if time != copy.time {
            self.time.store(time, Ordering::Relaxed);
        }
        true
    }

    #[inline]
    fn end_write(&self, copy: &Snapshot<N>) {
        self.version.store(copy.version + 2, Ordering::Release);
    }

    /// Publishes a decision made at `time` on `copy` — a `new` value that
    /// differs from the copy in its [`Packed::HOT`] words only — if nothing
    /// was written since; returns whether it did.
    #[inline]
    pub(crate) fn try_write_hot(&self, copy: &Snapshot<N>, time: i64, new: &T) -> bool {
        let new = new.pack();
        debug_assert_eq!(copy.words[T::HOT..], new[T::HOT..], "a decision changed a configuration word");
        if !self.begin_write(copy, time) {
            return false;
        }
        for ((slot, &before), after) in self.words[..T::HOT].iter().zip(&copy.words).zip(new) {
            if before != after {
                slot.store(after, Ordering::Relaxed);
            }
        }
        self.end_write(copy);
        true
    }

    /// Publishes any change made at `time` on `copy` if nothing was written
    /// since; returns whether it did.
    pub(crate) fn try_write(&self, copy: &Snapshot<N>, time: i64, new: &T) -> bool {
        if !self.begin_write(copy, time) {
            return false;
        }
        for ((slot, &before), after) in self.words.iter().zip(&copy.words).zip(new.pack()) {
            if before != after {
                slot.store(after, Ordering::Relaxed);
            }
        }
        self.end_write(copy);
        true
    }

    /// Applies `f` atomically to the value, at the time a decision made now
    /// must use (see the module docs; `now` is a clock reading), and returns
    /// its result. `f` may run more than once, on fresh consistent copies,
    /// when other threads write at the same time, so it must only compute.
    pub(crate) fn update<R>(&self, now: i64, mut f: impl FnMut(&mut T, i64) -> R) -> R {
        let mut backoff = Backoff::default();
        loop {
            let copy = self.read();
            let time = copy.time(now);
            let mut value = copy.value();
            let result = f(&mut value, time);
            if self.try_write(&copy, time, &value) {
                return result;
            }
            backoff.wait();
        }
    }

    /// Runs a decision `f` at the time a decision made now must use, on the
    /// hot path: the copy is taken without a check, and the result is
    /// published with one CAS only if `f` changed a [`Packed::HOT`] word; a
    /// decision that changed nothing (a refusal, a query) writes nothing,
    /// once the copy is known to be consistent. `f` may run more than once,
    /// on fresh copies, so it must only compute; it must not change the
    /// configuration words.
    #[inline]
    pub(crate) fn decide<R>(&self, now: i64, mut f: impl FnMut(&mut T, i64) -> R) -> R {
        let mut backoff = Backoff::default();
        loop {
            let copy = self.read_unchecked();
            let time = copy.time(now);
            let mut value: T = copy.value();
            let result = f(&mut value, time);
            let unchanged = value.pack()[..T::HOT] == copy.words[..T::HOT];
            if unchanged {
                if self.unchanged_since(&copy) {
                    return result;
                }
            } else if self.try_write_hot(&copy, time, &value) {
                return result;
            }
            backoff.wait();
        }
    }

    /// The current value.
    pub(crate) fn get(&self) -> T {
        self.read().value()
    }
}

impl<T: Packed<N> + fmt::Debug, const N: usize> fmt::Debug for SeqCell<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let copy = self.read();
        f.debug_struct("SeqCell").field("time", &copy.time).field("value", &copy.value::<T>()).finish()
    }
}

/// Exponential back-off between attempts on a contended cell.
///
/// A waiter that retries at once steals the cache line from the thread that
/// is about to write it, which must then fetch it back: under contention
/// that doubles the traffic. Waiting longer after each failure lets the line
/// change hands about once per decision.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    #[inline]
    pub(crate) fn wait(&mut self) {
        if self.step <= MAX_SPIN_SHIFT {
            spin(1 << self.step);
            self.step += 1;
        } else {
            yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Two words that must always be equal: a torn read or a lost update
    /// shows up as a mismatch or a short count.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pair(u64, u64);

    impl Packed<2> for Pair {
        const HOT: usize = 2;
        fn pack(&self) -> [u64; 2] {
            [self.0, self.1]
        }
        fn unpack(w: [u64; 2]) -> Self {
            Pair(w[0], w[1])
        }
    }

    #[test]
    fn a_write_fails_once_the_version_moved() {
        let cell = SeqCell::new(&Pair(0, 0), 0);
        let copy = cell.read();
        assert!(cell.try_write_hot(&copy, 5, &Pair(1, 1)));
        assert!(!cell.try_write_hot(&copy, 6, &Pair(2, 2)));
        assert!(!cell.unchanged_since(&copy));
        assert_eq!(cell.get(), Pair(1, 1));
    }

    #[test]
    fn decision_times_never_go_backwards() {
        let cell = SeqCell::new(&Pair(0, 0), 0);
        assert_eq!(cell.update(100, |_, t| t), 100);
        // A later decision that read an earlier clock runs at the later time.
        assert_eq!(cell.update(40, |_, t| t), 100);
        assert_eq!(cell.update(150, |_, t| t), 150);
        assert_eq!(cell.read().time(0), 150);
    }

    #[test]
    fn no_update_is_lost_and_no_read_is_torn() {
        let cell = Arc::new(SeqCell::new(&Pair(0, 0), 0));
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let cell = Arc::clone(&cell);
                std::thread::spawn(move || {
                    for i in 0..50_000 {
                        cell.update(i, |p, _| {
                            assert_eq!(p.0, p.1);
                            *p = Pair(p.0 + 1, p.1 + 1);
                        });
                    }
                })
            })
            .collect();
        let reader = {
            let cell = Arc::clone(&cell);
            std::thread::spawn(move || {
                for _ in 0..200_000 {
                    let p = cell.get();
                    assert_eq!(p.0, p.1);
                }
            })
        };
        for t in writers {
            t.join().unwrap();
        }
        reader.join().unwrap();
        assert_eq!(cell.get(), Pair(200_000, 200_000));
    }
}
