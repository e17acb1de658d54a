//! [`KeyedAlgorithm`]: how a keyed limiter stores one algorithm's state per
//! key — the state words only, never the configuration.
//!
//! Every key of a keyed limiter has the same configuration (the template's),
//! so storing it per key would multiply it by the number of keys. The core's
//! [`Packed`] layout puts the words a decision can change first
//! ([`Packed::HOT`]); a key stores just those, and a decision unpacks the
//! template's words with the key's hot words in front, decides, and stores
//! the hot words back. Per key that is 8 bytes (leaky bucket queue), 16
//! (fixed window), 24 (token bucket, leaky bucket meter, sliding window
//! counter) or 72 (sliding window's 16 counters). Two exceptions: GCRA keeps
//! its TAT in one word of its own form, modulo 2⁶³ (8 bytes and no stored
//! hash: [`GcraKeyState`](super::GcraKeyState)), and the sliding log's state
//! *is* its log, up to `limit` entries of 16 bytes.
//!
//! The semantics stay in the core: [`Admission`] decides, [`Full`] says when
//! a key can be dropped.

use crate::windows::HeapLogStorage;
use ratekeeper_core::fixed_window::FixedWindow;
use ratekeeper_core::leaky_bucket::{LeakyBucketMeter, LeakyBucketQueue};
use ratekeeper_core::sliding_log::{LogEntry, SlidingLog};
use ratekeeper_core::sliding_window::SlidingWindow;
use ratekeeper_core::sliding_window_counter::SlidingWindowCounter;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{Admission, Algorithm, Decision, Full, Packed};

/// An admission algorithm a [`KeyedLimiter`](super::KeyedLimiter) can hold
/// per key. `self` is the template: every method reads its configuration
/// and the given key's `State`.
///
/// Implemented for every admission-style algorithm of the core. Sealed: the
/// keyed limiter relies on [`Full`]'s contract, which the property tests
/// check for these types only.
pub trait KeyedAlgorithm: Full + Send + Sync + sealed::Sealed {
    /// What a key stores.
    type State: Send + super::table::SlotState;

    /// The algorithm, from the registry.
    const ALGORITHM: Algorithm;

    /// The algorithm's name, as [`LimiterSpec::algorithm`] spells it.
    ///
    /// [`LimiterSpec::algorithm`]: ratekeeper_core::LimiterSpec::algorithm
    fn name(&self) -> &'static str {
        Self::ALGORITHM.wire_name()
    }

    /// A fresh key's state.
    fn fresh_state(&self) -> Self::State;

    /// [`Admission::check`] on a key's state.
    fn check_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) -> Decision;

    /// Whether [`check_state`](Self::check_state) admits, changing the
    /// state as it does: an algorithm may answer without the rest of the
    /// decision.
    #[inline]
    fn allow_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) -> bool {
        self.check_state(state, cost, now_micros).allowed
    }

    /// [`Admission::peek`] on a key's state.
    fn peek_state(&self, state: &Self::State, cost: u64, now_micros: i64) -> Decision;

    /// [`Admission::refund`] on a key's state.
    fn refund_state(&self, state: &mut Self::State, cost: u64, now_micros: i64);

    /// [`Admission::peek`] on a fresh key's state (without making one).
    fn peek_fresh(&self, cost: u64, now_micros: i64) -> Decision;

    /// [`Full::is_full_at`] of a key's state.
    fn state_is_full_at(&self, state: &Self::State, now_micros: i64) -> bool;

    /// [`Full::full_at_micros`] of a key's state.
    fn state_full_at_micros(&self, state: &Self::State, now_micros: i64) -> i64;

    /// A fresh key's state, to be decided at `now_micros` or later: what
    /// the keyed limiter stores for a new key. (A state may be encoded
    /// relative to a time, as GCRA's compact one is.)
    #[doc(hidden)]
    #[inline]
    fn fresh_state_at(&self, now_micros: i64) -> Self::State {
        let _ = now_micros;
        self.fresh_state()
    }

    /// How often a shard holding these states must be aged, if at all:
    /// see [`Aging`].
    #[doc(hidden)]
    fn aging(&self) -> Option<Aging> {
        None
    }

    /// The most heap bytes one key's state can hold beside its slot: 0 for
    /// every algorithm but the sliding log, whose entries live on the heap.
    fn max_state_heap_bytes(&self) -> usize {
        0
    }
}

/// When a shard whose states are encoded modulo a time range must drop
/// its full keys so that no stored time is read in the wrong range (GCRA's
/// [`GcraKeyState`](super::GcraKeyState): see its docs).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aging {
    /// Sweep (drop every full key) once the shard's last sweep is this
    /// many microseconds in the past.
    pub(crate) sweep_every_micros: i64,
    /// A shard that decided nothing for this many microseconds holds only
    /// full keys: they may all be dropped without reading them.
    pub(crate) all_full_after_micros: i64,
}

pub(super) mod sealed {
    pub trait Sealed {}
}

/// What a table slot of this state stores beside the key: the key's hash,
/// or nothing (then the hash is computed again when needed).
impl<const N: usize> super::table::SlotState for [u64; N] {
    type Tag = std::num::NonZeroU64;
}

impl super::table::SlotState for SlidingLog<HeapLogStorage> {
    type Tag = std::num::NonZeroU64;
}

/// The template's words with a key's hot words in front: the key's state.
#[inline]
fn with_hot<T: Packed<N>, const N: usize, const H: usize>(template: &T, hot: &[u64; H]) -> T {
    let mut words = template.pack();
    words[..H].copy_from_slice(hot);
    T::unpack(words)
}

#[inline]
fn hot_of<T: Packed<N>, const N: usize, const H: usize>(value: &T) -> [u64; H] {
    let words = value.pack();
    std::array::from_fn(|i| words[i])
}

/// [`KeyedAlgorithm::check_state`] in general: the template's words with
/// the key's in front, checked as a whole.
#[inline(always)]
fn check_whole<T: Packed<N> + Admission, const N: usize, const H: usize>(
    template: &T,
    state: &mut [u64; H],
    cost: u64,
    now_micros: i64,
) -> Decision {
    let mut value = with_hot::<T, N, H>(template, state);
    let decision = Admission::check(&mut value, cost, now_micros);
    *state = hot_of::<T, N, H>(&value);
    decision
}

/// Implements [`KeyedAlgorithm`] for the fixed-size core algorithm
/// `$core` (the registry's `Algorithm::$core`): `$words` packed words of
/// which the first `$hot` are its state; `$check` decides (by default
/// [`check_whole`]).
macro_rules! keyed_by_hot_words {
    ($core:ident, $words:literal, $hot:literal) => {
        keyed_by_hot_words!($core, $words, $hot, check_whole::<$core, $words, $hot>);
    };
    ($core:ident, $words:literal, $hot:literal, $check:expr) => {
        const _: () = assert!(<$core as Packed<$words>>::HOT == $hot);

        impl sealed::Sealed for $core {}

        impl KeyedAlgorithm for $core {
            type State = [u64; $hot];
            const ALGORITHM: Algorithm = Algorithm::$core;

            #[inline]
            fn fresh_state(&self) -> [u64; $hot] {
                hot_of::<$core, $words, $hot>(&Full::fresh(self))
            }

            #[inline]
            fn check_state(&self, state: &mut [u64; $hot], cost: u64, now_micros: i64) -> Decision {
                $check(self, state, cost, now_micros)
            }

            /// The check inlined where only `allowed` is used, so that
            /// the compiler drops the rest of the decision's arithmetic (a
            /// sliding window counter's 128-bit divisions for `remaining`).
            #[inline(always)]
            fn allow_state(&self, state: &mut [u64; $hot], cost: u64, now_micros: i64) -> bool {
                $check(self, state, cost, now_micros).allowed
            }

            #[inline]
            fn peek_state(&self, state: &[u64; $hot], cost: u64, now_micros: i64) -> Decision {
                Admission::peek(&with_hot::<$core, $words, $hot>(self, state), cost, now_micros)
            }

            #[inline]
            fn refund_state(&self, state: &mut [u64; $hot], cost: u64, now_micros: i64) {
                let mut value = with_hot::<$core, $words, $hot>(self, state);
                Admission::refund(&mut value, cost, now_micros);
                *state = hot_of::<$core, $words, $hot>(&value);
            }

            #[inline]
            fn peek_fresh(&self, cost: u64, now_micros: i64) -> Decision {
                Admission::peek(&Full::fresh(self), cost, now_micros)
            }

            #[inline]
            fn state_is_full_at(&self, state: &[u64; $hot], now_micros: i64) -> bool {
                Full::is_full_at(&with_hot::<$core, $words, $hot>(self, state), now_micros)
            }

            #[inline]
            fn state_full_at_micros(&self, state: &[u64; $hot], now_micros: i64) -> i64 {
                Full::full_at_micros(&with_hot::<$core, $words, $hot>(self, state), now_micros)
            }
        }
    };
}

keyed_by_hot_words!(TokenBucket, 5, 3);
keyed_by_hot_words!(LeakyBucketMeter, 6, 3);
keyed_by_hot_words!(LeakyBucketQueue, 4, 1);
keyed_by_hot_words!(FixedWindow, 4, 2);
keyed_by_hot_words!(SlidingWindow, 11, 9);
keyed_by_hot_words!(SlidingWindowCounter, 5, 3);

impl sealed::Sealed for SlidingLog<HeapLogStorage> {}

/// The sliding log's state is the whole log (its entries cannot be shared):
/// a few words in the slot, and on the heap 16 bytes per entry the key's log
/// has recently needed — none for a key that has not been admitted yet, at
/// most `16 × limit` ([`HeapLogStorage`]).
impl KeyedAlgorithm for SlidingLog<HeapLogStorage> {
    type State = SlidingLog<HeapLogStorage>;
    const ALGORITHM: Algorithm = Algorithm::SlidingLog;

    fn fresh_state(&self) -> Self::State {
        self.fresh()
    }

    fn check_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) -> Decision {
        Admission::check(state, cost, now_micros)
    }

    fn peek_state(&self, state: &Self::State, cost: u64, now_micros: i64) -> Decision {
        Admission::peek(state, cost, now_micros)
    }

    fn refund_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) {
        Admission::refund(state, cost, now_micros)
    }

    fn peek_fresh(&self, cost: u64, now_micros: i64) -> Decision {
        // The template is kept fresh (see `KeyedLimiter::with_clock_and_hasher`).
        Admission::peek(self, cost, now_micros)
    }

    /// A log never holds room for more than `limit` entries of 16 bytes.
    fn max_state_heap_bytes(&self) -> usize {
        usize::try_from(self.limit()).map_or(usize::MAX, |limit| limit.saturating_mul(size_of::<LogEntry>()))
    }

    fn state_is_full_at(&self, state: &Self::State, now_micros: i64) -> bool {
        Full::is_full_at(state, now_micros)
    }

    fn state_full_at_micros(&self, state: &Self::State, now_micros: i64) -> i64 {
        Full::full_at_micros(state, now_micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratekeeper_core::gcra::Gcra;

    /// A key's hot words with the template's configuration decide exactly
    /// as the whole state machine does.
    #[test]
    fn hot_words_decide_as_the_whole_state() {
        fn same<A: KeyedAlgorithm + Admission + Full + Clone>(template: A) {
            let mut whole = template.clone();
            let mut state = template.fresh_state();
            for (i, now) in [0, 0, 10, 500, 500, 1_000, 1_001, 5_000, 5_000, 5_000, 100_000].into_iter().enumerate() {
                let cost = (i % 3) as u64;
                assert_eq!(template.peek_state(&state, cost + 1, now), whole.peek(cost + 1, now));
                let d = template.check_state(&mut state, cost, now);
                assert_eq!(d, whole.check(cost, now), "{} at {now}", template.name());
                if i % 4 == 3 {
                    template.refund_state(&mut state, cost + 1, now);
                    whole.refund(cost + 1, now);
                    assert_eq!(template.peek_state(&state, 1, now), whole.peek(1, now), "refund at {now}");
                }
                assert_eq!(template.state_is_full_at(&state, now), whole.is_full_at(now));
                assert_eq!(template.state_full_at_micros(&state, now), whole.full_at_micros(now));
            }
        }
        same(TokenBucket::new(100.0, 3).unwrap());
        same(Gcra::new(2, 1, 1_000).unwrap());
        same(LeakyBucketMeter::new(3, 1, 1_000).unwrap());
        same(LeakyBucketQueue::new(2, 1_000).unwrap());
        same(FixedWindow::new(3, 1_000).unwrap());
        same(SlidingWindow::new(3, 1_000, 4).unwrap());
        same(SlidingWindowCounter::new(3, 1_000).unwrap());
        same(SlidingLog::new(3, 1_000, HeapLogStorage::default()).unwrap());
    }
}
