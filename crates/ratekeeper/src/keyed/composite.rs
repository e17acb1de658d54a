//! [`KeyedCompositeLimiter`]: several limits per key — "10 per second and
//! 1,000 per hour, per client" — admitted all or nothing per key, in the
//! bounded memory of every keyed limiter.
//!
//! It is a [`KeyedLimiter`] whose algorithm is the composite of the parts
//! ([`Parts`]): a key's state is every part's state, decided under the
//! key's shard lock by [`ratekeeper_core::composite`] (peek all, then check
//! all), so the all-or-nothing rule of [`CompositeLimiter`] holds per key,
//! and the bound, the eviction of full keys and [`WhenFull`] are the keyed
//! limiter's own. A key is full — dropped without changing a decision —
//! when every part is.
//!
//! [`CompositeLimiter`]: crate::CompositeLimiter

use std::cell::RefCell;

use ratekeeper_core::composite;
use ratekeeper_core::{Algorithm, Argument, Decision, Error, Full, LimiterSpec};

use super::{AtCapacity, KeyBytes, KeyedAlgorithm, KeyedLimiter, KeyedOptions, MaxKeyBytes, RandomSipHash, WhenFull};
use crate::any_limiter::AnyCore;
use crate::clock::{AnyClock, Clock};

/// The parts of a composite, as a keyed limiter's algorithm: the template
/// holds them fresh, and each key holds its own copy of their states.
#[derive(Debug, Clone)]
pub struct Parts(Box<[AnyCore]>);

thread_local! {
    /// Each part's decision of this thread's last decision on a [`Parts`]:
    /// how [`KeyedCompositeLimiter`] gets them out of the keyed limiter,
    /// whose decisions are one [`Decision`] (the combined one). Written and
    /// read on the same thread, around one call that holds no other.
    static LAST_PARTS: RefCell<Vec<Decision>> = const { RefCell::new(Vec::new()) };
}

fn record(index: usize, decision: &Decision) {
    LAST_PARTS.with_borrow_mut(|last| {
        if last.len() <= index {
            last.resize(index + 1, *decision);
        }
        last[index] = *decision;
    });
}

impl Full for Parts {
    fn fresh(&self) -> Self {
        Parts(self.0.iter().map(Full::fresh).collect())
    }

    /// Full when every part is: the composite decides from its parts alone.
    fn is_full_at(&self, now_micros: i64) -> bool {
        self.0.iter().all(|p| p.is_full_at(now_micros))
    }

    /// The latest of the parts' (a lower bound for each is one for all).
    fn full_at_micros(&self, now_micros: i64) -> i64 {
        self.0.iter().map(|p| p.full_at_micros(now_micros)).fold(now_micros, i64::max)
    }
}

impl super::table::SlotState for Parts {
    type Tag = std::num::NonZeroU64;
}

impl super::algorithm::sealed::Sealed for Parts {}

impl KeyedAlgorithm for Parts {
    type State = Parts;
    /// The trait wants one of the registry's; a composite is none, so
    /// [`name`](KeyedAlgorithm::name), the one reader of this constant, is
    /// overridden to say `"composite"`.
    const ALGORITHM: Algorithm = Algorithm::SlidingWindowCounter;

    fn name(&self) -> &'static str {
        "composite"
    }

    fn fresh_state(&self) -> Self::State {
        self.fresh()
    }

    fn check_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) -> Decision {
        composite::check_all_each(&mut state.0, cost, now_micros, record)
    }

    fn peek_state(&self, state: &Self::State, cost: u64, now_micros: i64) -> Decision {
        composite::peek_all_each(&state.0, cost, now_micros, record)
    }

    fn peek_fresh(&self, cost: u64, now_micros: i64) -> Decision {
        // The template is kept fresh (see `KeyedLimiter::with_clock_and_hasher`).
        composite::peek_all_each(&self.0, cost, now_micros, record)
    }

    /// Every part gives `cost` back, as `CompositeLimiter::refund` does.
    fn refund_state(&self, state: &mut Self::State, cost: u64, now_micros: i64) {
        composite::refund_all(&mut state.0, cost, now_micros)
    }

    fn state_is_full_at(&self, state: &Self::State, now_micros: i64) -> bool {
        state.is_full_at(now_micros)
    }

    fn state_full_at_micros(&self, state: &Self::State, now_micros: i64) -> i64 {
        state.full_at_micros(now_micros)
    }

    /// The parts themselves live on the heap (the slot holds a pointer),
    /// with a sliding log's entries beside them.
    fn max_state_heap_bytes(&self) -> usize {
        self.0.iter().map(AnyCore::max_heap_bytes).fold(size_of_val(&*self.0), usize::saturating_add)
    }
}

/// Several [`LimiterSpec`]s per key, all or nothing per key, in bounded
/// memory ([`KeyedOptions`]), keyed by bytes as [`AnyKeyedLimiter`] is.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::keyed::{KeyedCompositeLimiter, KeyedOptions};
/// use ratekeeper::{AnyClock, LimiterSpec, ManualClock};
///
/// let per_second = LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 };
/// let per_minute = LimiterSpec::FixedWindow { limit: 3, window_micros: 60_000_000 };
/// let clock = AnyClock::from(Arc::new(ManualClock::new()));
/// let limiter = KeyedCompositeLimiter::new(&[per_second, per_minute], KeyedOptions::new(10_000), clock)?;
/// assert!(limiter.check(b"alice", 2)?.0.allowed);
/// let (refused, parts) = limiter.check(b"alice", 1)?;
/// assert!(!refused.allowed);
/// assert_eq!((parts[0].remaining, parts[1].remaining), (0, 1)); // the minute gave nothing
/// assert!(limiter.check(b"bob", 1)?.0.allowed);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
///
/// [`AnyKeyedLimiter`]: super::AnyKeyedLimiter
#[derive(Debug)]
pub struct KeyedCompositeLimiter<C: Clock = AnyClock> {
    max_key_bytes: MaxKeyBytes,
    specs: Vec<LimiterSpec>,
    inner: KeyedLimiter<KeyBytes, Parts, C, RandomSipHash>,
}

impl<C: Clock> KeyedCompositeLimiter<C> {
    /// The composite of `specs` per key, created now on `clock`. Errors
    /// with [`Argument::Limits`] when `specs` is empty, with a part's own
    /// error when one is invalid, or on invalid options.
    pub fn new(specs: &[LimiterSpec], options: KeyedOptions, clock: C) -> Result<Self, Error> {
        if specs.is_empty() {
            return Err(Error::invalid_int(Argument::Limits, 0));
        }
        let parts = specs.iter().map(AnyCore::new).collect::<Result<Box<[_]>, _>>()?;
        let inner = KeyedLimiter::with_clock_and_hasher(Parts(parts), options, clock, RandomSipHash::new())?;
        Ok(KeyedCompositeLimiter { max_key_bytes: options.key_bytes_bound(), specs: specs.to_vec(), inner })
    }

    /// Runs one decision of the inner limiter and collects the parts'
    /// decisions it recorded; at the bound (`AtCapacity`) every part shows
    /// the refusal.
    fn with_parts(
        &self,
        decide: impl FnOnce() -> Result<Decision, AtCapacity>,
    ) -> Result<(Decision, Vec<Decision>), AtCapacity> {
        let mut parts = Vec::with_capacity(self.specs.len());
        self.decide_into(decide, &mut parts).map(|combined| (combined, parts))
    }

    /// Runs one decision of the inner limiter and copies the parts'
    /// decisions it recorded into `parts` (cleared first), leaving the
    /// thread-local's room for the next decision.
    fn decide_into(
        &self,
        decide: impl FnOnce() -> Result<Decision, AtCapacity>,
        parts: &mut Vec<Decision>,
    ) -> Result<Decision, AtCapacity> {
        LAST_PARTS.with_borrow_mut(Vec::clear);
        let combined = decide()?;
        parts.clear();
        LAST_PARTS.with_borrow(|last| parts.extend_from_slice(last));
        parts.resize(self.specs.len(), combined);
        Ok(combined)
    }

    fn at_capacity_parts(&self, full: AtCapacity) -> (Decision, Vec<Decision>) {
        (full.decision(), vec![full.decision(); self.specs.len()])
    }

    /// [`check`](Self::check) into the caller's `parts` (cleared, then one
    /// decision per spec), so that a server deciding request after request
    /// on one thread reuses one vector instead of allocating one each.
    pub fn check_into(&self, key: &[u8], cost: u64, parts: &mut Vec<Decision>) -> Result<Decision, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(self.decide_into(|| self.inner.try_check(key, cost), parts).unwrap_or_else(|full| {
            parts.clear();
            parts.resize(self.specs.len(), full.decision());
            full.decision()
        }))
    }

    /// Admits `cost` units for `key` in every part, or in none: the
    /// combined decision ([`combine`](ratekeeper_core::decision::combine))
    /// and each part's, in the order of the specs (a part that would have
    /// admitted a refused request shows its state untouched). A key longer
    /// than [`max_key_bytes`](Self::max_key_bytes) is an error and changes
    /// nothing. At the bound under [`WhenFull::RefuseNewKeys`] a new key is
    /// refused, every part showing [`AtCapacity::decision`].
    pub fn check(&self, key: &[u8], cost: u64) -> Result<(Decision, Vec<Decision>), Error> {
        Ok(self.try_check(key, cost)?.unwrap_or_else(|full| self.at_capacity_parts(full)))
    }

    /// [`check`](Self::check), telling a refusal at the bound apart.
    #[allow(clippy::type_complexity)]
    pub fn try_check(&self, key: &[u8], cost: u64) -> Result<Result<(Decision, Vec<Decision>), AtCapacity>, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(self.with_parts(|| self.inner.try_check(key, cost)))
    }

    /// The decisions [`check`](Self::check) would make now, consuming
    /// nothing and creating no key.
    pub fn peek(&self, key: &[u8], cost: u64) -> Result<(Decision, Vec<Decision>), Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(self.with_parts(|| self.inner.try_peek(key, cost)).unwrap_or_else(|full| self.at_capacity_parts(full)))
    }

    /// Gives back `cost` units admitted for `key` in every part (as
    /// `CompositeLimiter::refund`); whether the key was held. A key too long
    /// is an error.
    pub fn refund(&self, key: &[u8], cost: u64) -> Result<bool, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(self.inner.refund(key, cost))
    }

    /// Forgets `key` (a reset: its next request is a new key's); whether it
    /// was held. A key too long is an error.
    pub fn remove(&self, key: &[u8]) -> Result<bool, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(self.inner.remove(key))
    }

    /// [`KeyedLimiter::evict_full`].
    pub fn evict_full(&self) -> usize {
        self.inner.evict_full()
    }

    /// The parts' specs, in order.
    pub fn specs(&self) -> &[LimiterSpec] {
        &self.specs
    }

    /// The longest key taken, in bytes.
    pub fn max_key_bytes(&self) -> usize {
        self.max_key_bytes.get()
    }

    /// The most bytes this limiter ever holds on the heap, its keys
    /// included, as [`AnyKeyedLimiter::max_bytes`](super::AnyKeyedLimiter::max_bytes)
    /// counts them: each key's parts (their states and a sliding log's
    /// entries) are one allocation beside its slot.
    pub fn max_bytes(&self) -> usize {
        let key = if self.max_key_bytes.get() > super::INLINE_KEY_BYTES { self.max_key_bytes.get() } else { 0 };
        self.inner.max_bytes().saturating_add(self.inner.max_keys().saturating_mul(key))
    }

    /// [`KeyedLimiter::len`].
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// [`KeyedLimiter::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// [`KeyedLimiter::max_keys`].
    pub fn max_keys(&self) -> usize {
        self.inner.max_keys()
    }

    /// [`KeyedLimiter::when_full`].
    pub fn when_full(&self) -> WhenFull {
        self.inner.when_full()
    }

    /// [`KeyedLimiter::refused_new_keys`].
    pub fn refused_new_keys(&self) -> u64 {
        self.inner.refused_new_keys()
    }

    /// [`KeyedLimiter::forced_evictions`].
    pub fn forced_evictions(&self) -> u64 {
        self.inner.forced_evictions()
    }

    /// [`KeyedLimiter::clock`].
    pub fn clock(&self) -> &C {
        self.inner.clock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CompositeLimiter, ManualClock};
    use std::sync::Arc;
    use std::time::Duration;

    const SECOND: LimiterSpec = LimiterSpec::FixedWindow { limit: 2, window_micros: 1_000_000 };
    const TEN_SECONDS: LimiterSpec = LimiterSpec::SlidingLog { limit: 3, window_micros: 10_000_000 };

    fn limiter(options: KeyedOptions) -> (Arc<ManualClock>, KeyedCompositeLimiter<Arc<ManualClock>>) {
        let clock = Arc::new(ManualClock::new());
        let l = KeyedCompositeLimiter::new(&[SECOND, TEN_SECONDS], options, Arc::clone(&clock)).unwrap();
        (clock, l)
    }

    /// A refund gives the units back in every part of one key, as a
    /// `CompositeLimiter` of its own does, and leaves other keys alone.
    #[test]
    fn refund_gives_back_in_every_part_per_key() {
        let (clock, keyed) = limiter(KeyedOptions::new(100));
        let alone = CompositeLimiter::with_clock(&[SECOND, TEN_SECONDS], Arc::clone(&clock)).unwrap();
        for _ in 0..2 {
            assert!(keyed.check(b"a", 1).unwrap().0.allowed);
            assert!(alone.check(1).allowed);
            assert!(keyed.check(b"b", 1).unwrap().0.allowed);
        }
        assert!(keyed.refund(b"a", 1).unwrap());
        alone.refund(1);
        let (combined, parts) = keyed.peek(b"a", 1).unwrap();
        assert_eq!(combined, alone.peek(1));
        assert!(combined.allowed);
        assert_eq!((parts[0].remaining, parts[1].remaining), (0, 1), "each part got one unit back");
        assert!(!keyed.check(b"b", 1).unwrap().0.allowed, "b kept its two units");
        assert!(!keyed.refund(b"nobody", 1).unwrap());
        assert!(keyed.refund(&[0; 300], 1).is_err());
    }

    /// A refusal by one part consumes nothing in the other, per key; each
    /// key decides exactly as a `CompositeLimiter` of its own would.
    #[test]
    fn all_or_nothing_per_key_as_a_composite_limiter() {
        let (clock, keyed) = limiter(KeyedOptions::new(100));
        let alone = CompositeLimiter::with_clock(&[SECOND, TEN_SECONDS], Arc::clone(&clock)).unwrap();
        let steps: [(u64, u64); 9] =
            [(2, 0), (1, 0), (1, 500), (1, 1_000), (1, 1_000), (1, 0), (1, 9_000), (2, 0), (1, 0)];
        for (i, (cost, advance_ms)) in steps.into_iter().enumerate() {
            clock.advance(Duration::from_millis(advance_ms));
            let want = alone.check_each(cost);
            assert_eq!(keyed.check(b"k", cost).unwrap(), want, "step {i}");
        }
        // After 2 at t=0 the second part refuses a third at t=0, and the
        // 10-second part still has 1 left: nothing was taken from it.
        let (clock, keyed) = limiter(KeyedOptions::new(100));
        assert!(keyed.check(b"k", 2).unwrap().0.allowed);
        let (refused, parts) = keyed.check(b"k", 1).unwrap();
        assert!(!refused.allowed);
        assert_eq!((parts[0].allowed, parts[1].allowed, parts[1].remaining), (false, true, 1));
        clock.advance(Duration::from_secs(1));
        let (admitted, parts) = keyed.check(b"k", 1).unwrap();
        assert!(admitted.allowed);
        assert_eq!((parts[0].remaining, parts[1].remaining), (1, 0));
        assert!(!keyed.peek(b"k", 1).unwrap().0.allowed);
    }

    #[test]
    fn keys_are_independent_and_remove_resets() {
        let (_, keyed) = limiter(KeyedOptions::new(100));
        assert!(keyed.check(b"a", 2).unwrap().0.allowed);
        assert!(!keyed.check(b"a", 1).unwrap().0.allowed);
        let (b, parts) = keyed.check(b"b", 2).unwrap();
        assert!(b.allowed);
        assert_eq!((parts[0].remaining, parts[1].remaining), (0, 1));
        // A look creates nothing.
        assert_eq!(keyed.peek(b"c", 1).unwrap().1.len(), 2);
        assert_eq!(keyed.len(), 2);
        assert!(keyed.remove(b"a").unwrap());
        assert!(!keyed.remove(b"a").unwrap());
        assert!(keyed.check(b"a", 2).unwrap().0.allowed);
        assert!(keyed.check(&[b'x'; 257], 1).is_err());
        // check_into decides as check does, into a reused vector.
        let mut parts = vec![Decision::allowed(9, 9, 9, 9); 5];
        let combined = keyed.check_into(b"d", 2, &mut parts).unwrap();
        assert!(combined.allowed);
        assert_eq!((parts.len(), parts[0].remaining, parts[1].remaining), (2, 0, 1));
        let refused = keyed.check_into(b"d", 1, &mut parts).unwrap();
        assert_eq!((refused, parts.clone()), keyed.peek(b"d", 1).unwrap());
        assert!(keyed.check_into(&[b'x'; 257], 1, &mut parts).is_err());
        assert!(keyed.peek(&[b'x'; 257], 1).is_err());
        assert_eq!(keyed.specs(), &[SECOND, TEN_SECONDS]);
    }

    #[test]
    fn memory_is_bounded_by_max_keys() {
        let (clock, keyed) = limiter(KeyedOptions::new(8).shards(1));
        for i in 0..8u8 {
            assert!(keyed.check(&[i], 1).unwrap().0.allowed);
        }
        // At the bound, nothing full: a new key is refused, consuming
        // nothing, and every part shows the refusal.
        let refused = keyed.try_check(b"new", 1).unwrap().unwrap_err();
        assert!(!refused.decision().allowed);
        let (combined, parts) = keyed.check(b"new", 1).unwrap();
        assert!(!combined.allowed);
        assert!(parts.iter().all(|p| *p == combined));
        assert_eq!(keyed.len(), 8);
        assert_eq!(keyed.refused_new_keys(), 2);
        // Once every part of a key is full again (10 s for the log), keys
        // are dropped to make room; after 1 s only the window is full.
        clock.advance(Duration::from_secs(1));
        assert!(keyed.try_check(b"new", 1).unwrap().is_err());
        assert_eq!(keyed.evict_full(), 0, "a key whose window is full but whose log is not stays");
        clock.advance(Duration::from_secs(9));
        for i in 100..108u8 {
            assert!(keyed.check(&[i], 1).unwrap().0.allowed);
        }
        assert_eq!(keyed.len(), 8);
        assert!(keyed.try_check(b"ninth", 1).unwrap().is_err());
        assert!(keyed.max_bytes() >= 8 * 2 * size_of::<AnyCore>());
        assert_eq!(keyed.evict_full(), 0);
        clock.advance(Duration::from_secs(10));
        assert_eq!(keyed.evict_full(), 8);
        assert!(keyed.is_empty());
    }

    /// Threads deciding on one key see one state: exactly the strictest
    /// part's limit is admitted, and the other part counts exactly that.
    #[test]
    fn concurrent_checks_on_one_key_admit_exactly_the_limit() {
        let clock = Arc::new(ManualClock::new());
        let specs = [
            LimiterSpec::FixedWindow { limit: 1_000, window_micros: 60_000_000 },
            LimiterSpec::SlidingWindowCounter { limit: 37, window_micros: 60_000_000 },
        ];
        let keyed = KeyedCompositeLimiter::new(&specs, KeyedOptions::new(16), Arc::clone(&clock)).unwrap();
        let admitted: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..50).filter(|_| keyed.check(b"shared", 1).unwrap().0.allowed).count()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(admitted, 37);
        let (_, parts) = keyed.peek(b"shared", 1).unwrap();
        assert_eq!(parts[0].remaining, 1_000 - 37);
    }

    #[test]
    fn invalid_composites_are_errors() {
        let clock = AnyClock::from(Arc::new(ManualClock::new()));
        let Err(Error::InvalidArgument(e)) = KeyedCompositeLimiter::new(&[], KeyedOptions::new(1), clock.clone())
        else {
            panic!()
        };
        assert_eq!(e.argument(), Argument::Limits);
        let bad = [SECOND, LimiterSpec::FixedWindow { limit: 0, window_micros: 1 }];
        let Err(Error::InvalidArgument(e)) = KeyedCompositeLimiter::new(&bad, KeyedOptions::new(1), clock.clone())
        else {
            panic!()
        };
        assert_eq!(e.argument(), Argument::Limit);
        assert!(KeyedCompositeLimiter::new(&[SECOND], KeyedOptions::new(0), clock).is_err());
    }
}
