//! `SeqCell`: where every shared limiter keeps its core state machine.
//!
//! A decision is a pure function of a few words of state, the time and the
//! request, so a shared limiter does not need to hold a lock while deciding.
//! `SeqCell` keeps the state as [`Packed`] words in atomics behind a version
//! counter (a seqlock):
//!
//! * [`read`](SeqCell::read) copies the words without writing anything:
//!   refusals and queries never contend with each other;
//! * a decision is computed on that copy, and
//!   [`try_write`](SeqCell::try_write) publishes it only if the version has
//!   not moved since the copy was taken — one compare-and-swap, then plain
//!   stores of the words that changed. If another thread got there first,
//!   the caller takes a fresh copy and decides again.
//!
//! So the state is updated atomically as a whole (as if under a lock),
//! decisions are linearizable in the order of their successful CAS, and the
//! core's state machines stay plain `f64`/`i64` fields — Guava-exact — with
//! no 128-bit atomics. A writer that is preempted between its CAS and its
//! last store delays the others by its preemption: the version is odd until
//! it finishes, and readers wait (spinning, then yielding).

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{fence, AtomicU64, Ordering};

use ratekeeper_core::Packed;

/// Backing off doubles the spin up to 2^`MAX_SPIN_SHIFT` pauses, then yields
/// the CPU.
const MAX_SPIN_SHIFT: u32 = 6;

/// A `T` stored as `N` atomic words behind a version counter.
#[repr(C, align(64))]
pub(crate) struct SeqCell<T: Packed<N>, const N: usize> {
    /// Even when no write is in progress; odd during one.
    version: AtomicU64,
    words: [AtomicU64; N],
    _value: PhantomData<T>,
}

impl<T: Packed<N>, const N: usize> SeqCell<T, N> {
    pub(crate) fn new(value: &T) -> Self {
        SeqCell { version: AtomicU64::new(0), words: value.pack().map(AtomicU64::new), _value: PhantomData }
    }

    /// A copy of the words and the (even) version they were read at, without
    /// the re-check: the copy may be torn by a concurrent write. Then
    /// [`try_write`](Self::try_write) fails, so a caller that publishes its
    /// result needs no other check; one that publishes nothing must check
    /// [`unchanged_since`](Self::unchanged_since) before trusting the copy.
    /// The hot path uses this with the core's state machines, which accept
    /// any state without panicking (their arithmetic never traps).
    #[inline]
    pub(crate) fn read_unchecked(&self) -> (u64, [u64; N]) {
        let mut backoff = Backoff::default();
        loop {
            let version = self.version.load(Ordering::Acquire);
            if version & 1 == 0 {
                let mut words = [0u64; N];
                for (word, slot) in words.iter_mut().zip(&self.words) {
                    *word = slot.load(Ordering::Relaxed);
                }
                return (version, words);
            }
            backoff.wait();
        }
    }

    /// Whether nothing was written since `version`: words read after that
    /// version was read are then a consistent copy.
    #[inline]
    pub(crate) fn unchanged_since(&self, version: u64) -> bool {
        // Orders the word loads before the re-check (seqlock reader).
        fence(Ordering::Acquire);
        self.version.load(Ordering::Relaxed) == version
    }

    /// A consistent copy of the value and the (even) version it belongs to.
    #[inline]
    pub(crate) fn read(&self) -> (u64, [u64; N]) {
        let mut backoff = Backoff::default();
        loop {
            let (version, words) = self.read_unchecked();
            if self.unchanged_since(version) {
                return (version, words);
            }
            backoff.wait();
        }
    }

    /// The current value.
    #[inline]
    pub(crate) fn get(&self) -> T {
        T::unpack(self.read().1)
    }

    /// Publishes `new` if nothing was written since `version` (as returned by
    /// [`read`](Self::read) together with `old`); returns whether it did.
    #[inline]
    pub(crate) fn try_write(&self, version: u64, old: &[u64; N], new: &T) -> bool {
        if self.version.compare_exchange_weak(version, version + 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return false;
        }
        // A reader that sees any word below also sees the odd version
        // (pairs with the fence in `read`).
        fence(Ordering::Release);
        for ((slot, &before), after) in self.words.iter().zip(old).zip(new.pack()) {
            // Most decisions change one or two words; leaving the others
            // alone keeps their cache lines shared between cores.
            if before != after {
                slot.store(after, Ordering::Relaxed);
            }
        }
        self.version.store(version + 2, Ordering::Release);
        true
    }

    /// Publishes a decision — a `new` that differs from the copy `old` taken
    /// at `version` in its [`Packed::HOT`] words only — if nothing was written
    /// since; returns whether it did.
    #[inline]
    pub(crate) fn try_write_hot(&self, version: u64, old: &[u64; N], new: &T) -> bool {
        let new = new.pack();
        debug_assert_eq!(old[T::HOT..], new[T::HOT..], "a decision changed a configuration word");
        if self.version.compare_exchange_weak(version, version + 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return false;
        }
        fence(Ordering::Release);
        for (slot, word) in self.words[..T::HOT].iter().zip(new) {
            slot.store(word, Ordering::Relaxed);
        }
        self.version.store(version + 2, Ordering::Release);
        true
    }

    /// Applies `f` to the value atomically and returns its result. `f` may
    /// run more than once (on fresh, consistent copies) when other threads
    /// write at the same time, so it must only compute.
    #[inline]
    pub(crate) fn update<R>(&self, mut f: impl FnMut(&mut T) -> R) -> R {
        let mut backoff = Backoff::default();
        loop {
            let (version, words) = self.read();
            let mut value = T::unpack(words);
            let result = f(&mut value);
            if self.try_write(version, &words, &value) {
                return result;
            }
            backoff.wait();
        }
    }
}

impl<T: Packed<N> + fmt::Debug, const N: usize> fmt::Debug for SeqCell<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SeqCell").field(&self.get()).finish()
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
            for _ in 0..1u32 << self.step {
                std::hint::spin_loop();
            }
            self.step += 1;
        } else {
            std::thread::yield_now();
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
    fn try_write_fails_once_the_version_moved() {
        let cell = SeqCell::new(&Pair(0, 0));
        let (v, words) = cell.read();
        assert!(cell.try_write(v, &words, &Pair(1, 1)));
        assert!(!cell.try_write(v, &words, &Pair(2, 2)));
        assert_eq!(cell.get(), Pair(1, 1));
    }

    #[test]
    fn no_update_is_lost_and_no_read_is_torn() {
        let cell = Arc::new(SeqCell::new(&Pair(0, 0)));
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let cell = Arc::clone(&cell);
                std::thread::spawn(move || {
                    for _ in 0..50_000 {
                        cell.update(|p| {
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
