//! [`KeyedLimiter`]: its decisions — a key looked up in its shard and
//! decided on its state, or admitted as a new key, or refused at the bound
//! ([`AtCapacity`]) — and how room is made for new keys (full keys dropped,
//! shards swept, the [`WhenFull`] policy). The rules these keep are in the
//! `keyed` module docs.

use std::borrow::Borrow;
use std::collections::BinaryHeap;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::num::NonZeroU64;

use ratekeeper_core::{Decision, Error, NEVER};

use super::algorithm::{Aging, KeyedAlgorithm};
use super::hash::DefaultKeyHasher;
use super::options::{KeyedOptions, WhenFull};
use super::shard::{share_of, Shard, ShardState, SOONEST_PER_KEYS};
use super::table;
use crate::clock::{Clock, MonotonicClock};
use crate::sync::Ordering;

/// A new key's request refused because its shard holds its share of
/// `max_keys`, no key there is full, and the policy is
/// [`WhenFull::RefuseNewKeys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtCapacity {
    decision: Decision,
}

impl AtCapacity {
    /// The refusal [`KeyedLimiter::check`] returns for it: `remaining` 0,
    /// `retry_after_micros` (and `reset_after_micros`) until the earliest
    /// time a key of the shard can be full ([`NEVER`] if none ever will be),
    /// `limit` and `window_micros` the template's.
    pub const fn decision(&self) -> Decision {
        self.decision
    }
}

impl fmt::Display for AtCapacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("keyed limiter at capacity: no key can be dropped without changing a decision")?;
        match self.decision.retry_after_micros {
            NEVER => f.write_str(" (none ever will be)"),
            micros => write!(f, " (one may be in {micros} µs)"),
        }
    }
}

impl std::error::Error for AtCapacity {}

/// One limiter per key, in bounded memory. See the [module docs](super).
///
/// `K` is the key (`Hash + Eq`; look keys up by any borrowed form: `&str`
/// for `Box<str>`, `&[u8]` for `Box<[u8]>`), `A` the core algorithm
/// ([`KeyedAlgorithm`]), `C` the clock, `H` the hasher.
pub struct KeyedLimiter<K, A: KeyedAlgorithm, C: Clock = MonotonicClock, H = DefaultKeyHasher> {
    /// Seen by the `keyed` tests too, which check how `max_keys` is shared.
    pub(super) shards: Box<[Shard<K, A::State>]>,
    shard_mask: usize,
    template: A,
    hasher: H,
    clock: C,
    origin_micros: i64,
    max_keys: usize,
    when_full: WhenFull,
    /// The template's [`KeyedAlgorithm::aging`], once.
    aging: Option<Aging>,
}

impl<K, A: KeyedAlgorithm> KeyedLimiter<K, A, MonotonicClock, DefaultKeyHasher> {
    /// A keyed limiter whose keys each get `template`'s configuration (its
    /// state is not used: every key starts fresh), on the monotonic clock.
    ///
    /// Errors when `max_keys` is 0 or above [`MAX_KEYS`](super::MAX_KEYS), or a shard count
    /// given is not a power of two from 1 to 65,536 and at most `max_keys`.
    pub fn new(template: A, options: KeyedOptions) -> Result<Self, Error> {
        Self::with_clock(template, options, MonotonicClock::new())
    }
}

impl<K, A: KeyedAlgorithm, C: Clock> KeyedLimiter<K, A, C, DefaultKeyHasher> {
    /// [`KeyedLimiter::new`] on `clock`; time 0 of every key is now.
    pub fn with_clock(template: A, options: KeyedOptions, clock: C) -> Result<Self, Error> {
        Self::with_clock_and_hasher(template, options, clock, DefaultKeyHasher::new())
    }
}

impl<K, A: KeyedAlgorithm, C: Clock, H> KeyedLimiter<K, A, C, H> {
    /// The most bytes this limiter ever holds on the heap, keys of a type
    /// that owns heap memory aside: its shards, each table's slots at its
    /// final capacity (room for the shard's share of `max_keys` at a load
    /// of 3/4), the keys each shard's sweep remembers, and `max_keys` times
    /// the most a key's state holds beside its slot (a sliding log's
    /// entries). While a table grows, its old slots are held beside the new
    /// ones for a moment (up to half as much again, for one shard per
    /// thread deciding). The README tabulates the figure per algorithm.
    pub fn max_bytes(&self) -> usize {
        let shards = self.shards.len();
        let per_shard: usize = (0..shards)
            .map(|i| {
                let share = share_of(self.max_keys, shards, i);
                let remembered = (share / SOONEST_PER_KEYS).clamp(16, 4_096) + 1;
                table::Table::<K, A::State>::max_slot_bytes(share)
                    .saturating_add(remembered * size_of::<(i64, NonZeroU64)>())
            })
            .fold(0, usize::saturating_add);
        (shards * size_of::<Shard<K, A::State>>())
            .saturating_add(per_shard)
            .saturating_add(self.max_keys.saturating_mul(self.template.max_state_heap_bytes()))
    }

    /// [`KeyedLimiter::with_clock`] with a hasher of its own. Choose one
    /// whose keys outsiders cannot predict: they choose the keys.
    pub fn with_clock_and_hasher(template: A, options: KeyedOptions, clock: C, hasher: H) -> Result<Self, Error> {
        let shards = options.shard_count()?;
        let max_keys = options.max_keys();
        let origin_micros = clock.now_micros();
        Ok(KeyedLimiter {
            shards: (0..shards).map(|i| Shard::new(share_of(max_keys, shards, i))).collect(),
            shard_mask: shards - 1,
            aging: template.aging(),
            template: template.fresh(),
            hasher,
            clock,
            origin_micros,
            max_keys,
            when_full: options.policy(),
        })
    }
}

impl<K, A, C, H> KeyedLimiter<K, A, C, H>
where
    K: Hash + Eq + Send,
    A: KeyedAlgorithm,
    C: Clock,
    H: BuildHasher,
{
    /// Admits `cost` units for `key` now if its limiter allows it,
    /// consuming them; a refusal consumes nothing. A new key gets a fresh
    /// limiter, made only if the request is admitted. A cost of 0 is a free
    /// look ([`peek`](Self::peek)).
    ///
    /// At the bound, under [`WhenFull::RefuseNewKeys`], a new key's
    /// request is refused as [`AtCapacity::decision`] says.
    #[inline]
    pub fn check<Q>(&self, key: &Q, cost: u64) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        self.check_flagging_capacity(key, cost, &mut false)
    }

    /// [`check`](Self::check), telling a refusal at the bound apart.
    #[inline]
    pub fn try_check<Q>(&self, key: &Q, cost: u64) -> Result<Decision, AtCapacity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        let mut at_capacity = false;
        let decision = self.check_flagging_capacity(key, cost, &mut at_capacity);
        if at_capacity {
            Err(AtCapacity { decision })
        } else {
            Ok(decision)
        }
    }

    /// [`check`](Self::check), setting `at_capacity` when the refusal is
    /// [`AtCapacity`]'s.
    ///
    /// (Both public forms share this rather than `check` unwrapping
    /// `try_check`'s `Result`: that moved the decision out of the `Result`,
    /// copying its `allowed` byte as a whole word right after it was
    /// written, a store the CPU cannot forward: a cost BENCHMARKS.md gives
    /// under the `keyed` benchmark's *Earlier measurements*.)
    #[inline]
    fn check_flagging_capacity<Q>(&self, key: &Q, cost: u64, at_capacity: &mut bool) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        if cost == 0 {
            return self.try_peek(key, 0).unwrap_or_else(|full| {
                *at_capacity = true;
                full.decision
            });
        }
        self.on_key_state(
            key,
            cost,
            at_capacity,
            #[inline(always)]
            |template, state, now| template.check_state(state, cost, now),
            #[inline(always)]
            |decision| decision,
        )
    }

    /// Whether [`check`](Self::check) admits `cost` units for `key` now,
    /// consuming exactly what it would — without computing the rest of its
    /// [`Decision`] (remaining, retry-after, reset-after) for a key held.
    ///
    /// For callers that only act on yes or no, as with x/time/rate's
    /// `AllowN` or governor's `check_key`: for GCRA, whose decision is
    /// otherwise most of a keyed check's work outside the one memory
    /// access, that is a comparison and an addition. The answer is always
    /// `check(key, cost).allowed` (a property test compares them across
    /// every operation).
    #[inline]
    pub fn allow<Q>(&self, key: &Q, cost: u64) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        if cost == 0 {
            return self.peek(key, 0).allowed;
        }
        self.on_key_state(
            key,
            cost,
            &mut false,
            #[inline(always)]
            |template, state, now| template.allow_state(state, cost, now),
            #[inline(always)]
            |decision| decision.allowed,
        )
    }

    /// A check of `cost` (more than 0) for `key`: `held` decides on the
    /// key's state at the shard's time, under its lock; a key not held is
    /// decided by [`admit_new_key`](Self::admit_new_key), whose decision
    /// `new` answers from.
    #[inline(always)]
    fn on_key_state<Q, R>(
        &self,
        key: &Q,
        cost: u64,
        at_capacity: &mut bool,
        held: impl FnOnce(&A, &mut A::State, i64) -> R,
        new: impl FnOnce(Decision) -> R,
    ) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        let hash = self.hasher.hash_one(key);
        let shard = self.shard(hash);
        let tag = table::tag(hash);
        // The key's slot is on its way from memory while the clock is read
        // and the lock taken (the clock before the lock: it is held for less).
        shard.prefetch(tag);
        let clock_now = self.now_micros();
        let mut guard = shard.lock();
        let s = &mut *guard;
        let now = self.advance(shard, s, clock_now);
        if let Some(state) = s.table.get_mut(tag, key) {
            return held(&self.template, state, now);
        }
        new(self.admit_new_key(shard, s, tag, key, cost, now, at_capacity))
    }

    /// The decision [`check`](Self::check) would make now, consuming
    /// nothing and creating no key.
    pub fn peek<Q>(&self, key: &Q, cost: u64) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.try_peek(key, cost).unwrap_or_else(|full| full.decision)
    }

    /// [`peek`](Self::peek), telling a refusal at the bound apart.
    pub fn try_peek<Q>(&self, key: &Q, cost: u64) -> Result<Decision, AtCapacity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let shard = self.shard(hash);
        let clock_now = self.now_micros();
        let mut guard = shard.lock();
        let s = &mut *guard;
        let now = self.advance(shard, s, clock_now);
        if let Some(state) = s.table.get(table::tag(hash), key) {
            return Ok(self.template.peek_state(state, cost, now));
        }
        let decision = self.template.peek_fresh(cost, now);
        if !decision.allowed || cost == 0 || !s.table.is_at_bound() || self.when_full == WhenFull::EvictSoonestFull {
            return Ok(decision);
        }
        // Would a check find room? Dropping full keys changes no decision,
        // so a look may drop them.
        if self.drop_full_key(shard, s, now) {
            return Ok(decision);
        }
        Err(self.at_capacity(decision, s.earliest_full(), now))
    }

    /// Gives back `cost` units admitted for `key` that should not count (a
    /// request skipped or failed: express-rate-limit's `decrement`), now;
    /// what the algorithm gives back is in
    /// [`Admission::refund`](ratekeeper_core::Admission::refund)'s table.
    /// Whether the key was held: a key not held is fresh (never admitted,
    /// or dropped when full), and has nothing to give back.
    pub fn refund<Q>(&self, key: &Q, cost: u64) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let shard = self.shard(hash);
        let clock_now = self.now_micros();
        let mut guard = shard.lock();
        let s = &mut *guard;
        let now = self.advance(shard, s, clock_now);
        let Some(state) = s.table.get_mut(table::tag(hash), key) else {
            return false;
        };
        self.template.refund_state(state, cost, now);
        // A refund brings the key's full time earlier, which the shard's
        // bound on the others' (`rest_full`, kept for admissions, which only
        // push it later) must not miss: else a new key could be refused at
        // the bound while this one could be dropped.
        s.rest_full = s.rest_full.min(self.template.state_full_at_micros(state, now));
        true
    }

    /// Forgets `key`: its next request is decided as a new key's. (Unlike
    /// eviction this can change decisions — that is its purpose, as a
    /// reset.) Whether the key was held.
    pub fn remove<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let shard = self.shard(hash);
        let mut s = shard.lock();
        let removed = s.table.remove(table::tag(hash), key, &|k: &K| self.tag_of(k));
        shard.len.store(s.table.len(), Ordering::Relaxed);
        removed
    }

    /// A new key's request, with the shard locked; sets `at_capacity` when
    /// refused for want of room.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn admit_new_key<Q>(
        &self,
        shard: &Shard<K, A::State>,
        s: &mut ShardState<K, A::State>,
        tag: NonZeroU64,
        key: &Q,
        cost: u64,
        now: i64,
        at_capacity: &mut bool,
    ) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        let decision = self.template.peek_fresh(cost, now);
        if !decision.allowed {
            // Nothing consumed: the fresh state needs no storing.
            return decision;
        }
        if s.table.is_at_bound() && !self.make_room(shard, s, now) {
            shard.refused.fetch_add(1, Ordering::Relaxed);
            *at_capacity = true;
            return self.at_capacity(decision, s.earliest_full(), now).decision;
        }
        let mut state = self.template.fresh_state_at(now);
        let admitted = self.template.check_state(&mut state, cost, now);
        debug_assert_eq!(admitted, decision, "a fresh state's check and peek differ");
        if !self.template.state_is_full_at(&state, now) {
            s.rest_full = s.rest_full.min(self.template.state_full_at_micros(&state, now));
            if s.table.insert(tag, key.to_owned().into(), state, &|k: &K| self.tag_of(k)) {
                shard.publish_slots(s);
            }
            shard.len.store(s.table.len(), Ordering::Relaxed);
        }
        admitted
    }

    /// Makes room for one key in a shard at its bound: drops a full key if
    /// there is one, else applies the policy. Whether there is room.
    fn make_room(&self, shard: &Shard<K, A::State>, s: &mut ShardState<K, A::State>, now: i64) -> bool {
        if self.drop_full_key(shard, s, now) {
            return true;
        }
        if self.when_full == WhenFull::RefuseNewKeys {
            return false;
        }
        // Forget the key that will be full soonest (as of the last sweep;
        // a sweep remembers only keys that are held).
        for _ in 0..2 {
            if s.soonest.is_empty() {
                self.sweep(shard, s, now);
            }
            while let Some((_, tag)) = s.soonest.pop_front() {
                if let Some(victim) = s.table.find_tag(tag, &|k: &K| self.tag_of(k), |_| true) {
                    s.table.remove_at(victim, &|k: &K| self.tag_of(k));
                    shard.forced.fetch_add(1, Ordering::Relaxed);
                    shard.len.store(s.table.len(), Ordering::Relaxed);
                    return true;
                }
            }
        }
        false
    }

    /// Drops at least one full key of the shard, if it has any; whether it
    /// did. Looks at the keys expected soonest first, and sweeps the whole
    /// shard only when they are used up and another key may be full.
    fn drop_full_key(&self, shard: &Shard<K, A::State>, s: &mut ShardState<K, A::State>, now: i64) -> bool {
        let template = &self.template;
        let rehash = |k: &K| self.tag_of(k);
        while let Some(&(at, tag)) = s.soonest.front() {
            if at > now {
                break;
            }
            s.soonest.pop_front();
            if let Some(i) = s.table.find_tag(tag, &rehash, |state| template.state_is_full_at(state, now)) {
                s.table.remove_at(i, &rehash);
                shard.len.store(s.table.len(), Ordering::Relaxed);
                return true;
            }
            // Gone, or admitted again since the sweep: then its new full time
            // is the rest's to watch.
            let mut later = NEVER;
            s.table.find_tag(tag, &rehash, |state| {
                later = later.min(template.state_full_at_micros(state, now));
                false
            });
            s.rest_full = s.rest_full.min(later);
        }
        now >= s.rest_full && self.sweep(shard, s, now) > 0
    }

    /// Drops every full key of a shard, and remembers the keys that will be
    /// full soonest. Returns how many were dropped.
    fn sweep(&self, shard: &Shard<K, A::State>, s: &mut ShardState<K, A::State>, now: i64) -> usize {
        let template = &self.template;
        let keep = (s.table.len() / SOONEST_PER_KEYS).clamp(16, 4_096);
        // The `keep` earliest full times (a max-heap, so the latest of them
        // is the one to replace), and the earliest of all the others.
        let mut soonest: BinaryHeap<(i64, NonZeroU64)> = BinaryHeap::with_capacity(keep + 1);
        let mut rest_full = NEVER;
        let dropped = s.table.retain(&|k: &K| self.tag_of(k), |state, tag_of| {
            if template.state_is_full_at(state, now) {
                return false;
            }
            let at = template.state_full_at_micros(state, now);
            // The `keep` least (time, hash) pairs stay in the heap. The hash
            // is asked for only when needed: a table that stores none
            // computes it again.
            match soonest.peek() {
                Some(&(latest, _)) if soonest.len() >= keep && at > latest => rest_full = rest_full.min(at),
                _ => {
                    soonest.push((at, tag_of()));
                    if soonest.len() > keep {
                        if let Some((at, _)) = soonest.pop() {
                            rest_full = rest_full.min(at);
                        }
                    }
                }
            }
            true
        });
        s.soonest = soonest.into_sorted_vec().into();
        s.rest_full = rest_full;
        shard.len.store(s.table.len(), Ordering::Relaxed);
        dropped
    }

    /// Drops every key whose state is full now — which changes no decision
    /// — and returns how many. (Keys are also dropped when room is needed;
    /// this is for callers who want the count down, say before measuring.)
    pub fn evict_full(&self) -> usize {
        let clock_now = self.now_micros();
        self.shards
            .iter()
            .map(|shard| {
                let mut guard = shard.lock();
                let s = &mut *guard;
                let now = self.advance(shard, s, clock_now);
                self.sweep(shard, s, now)
            })
            .sum()
    }

    fn at_capacity(&self, fresh: Decision, earliest_full: i64, now: i64) -> AtCapacity {
        let retry = if earliest_full == NEVER { NEVER } else { earliest_full.saturating_sub(now).max(1) };
        AtCapacity {
            decision: Decision {
                allowed: false,
                limit: fresh.limit,
                remaining: 0,
                retry_after_micros: retry,
                reset_after_micros: retry,
                wait_micros: 0,
                window_micros: fresh.window_micros,
            },
        }
    }

    /// A key's hash as the tables use it (for keys they hold without it).
    #[inline]
    fn tag_of(&self, key: &K) -> NonZeroU64 {
        table::tag(self.hasher.hash_one(key))
    }

    /// A shard's time for a decision at `clock_now`: never before its
    /// latest. Ages the shard when that is due (see [`Aging`]), before any
    /// of its states is read at the new time.
    #[inline]
    fn advance(&self, shard: &Shard<K, A::State>, s: &mut ShardState<K, A::State>, clock_now: i64) -> i64 {
        let now = clock_now.max(s.latest);
        if let Some(aging) = self.aging {
            if now - s.aged >= aging.sweep_every_micros {
                self.age(shard, s, now, aging);
            }
        }
        s.latest = now;
        now
    }

    /// Ages a shard at `now` (its latest time not yet advanced): drops
    /// every key if it has been idle long enough for all to be full,
    /// otherwise sweeps it.
    #[cold]
    #[inline(never)]
    fn age(&self, shard: &Shard<K, A::State>, s: &mut ShardState<K, A::State>, now: i64, aging: Aging) {
        if now - s.latest >= aging.all_full_after_micros {
            s.table.clear();
            s.soonest.clear();
            s.rest_full = NEVER;
            shard.len.store(0, Ordering::Relaxed);
        } else {
            self.sweep(shard, s, now);
        }
        s.aged = now;
    }

    #[inline]
    fn shard(&self, hash: u64) -> &Shard<K, A::State> {
        // The high half picks the shard; the table uses the low half.
        &self.shards[(hash >> 32) as usize & self.shard_mask]
    }
}

impl<K, A: KeyedAlgorithm, C: Clock, H> KeyedLimiter<K, A, C, H> {
    /// Microseconds since the limiter was created.
    #[inline]
    fn now_micros(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin_micros).max(0)
    }

    /// How many keys are held (a snapshot: other threads may be adding or
    /// dropping keys). Never more than [`max_keys`](Self::max_keys).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len.load(Ordering::Relaxed)).sum()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bound on [`len`](Self::len).
    pub fn max_keys(&self) -> usize {
        self.max_keys
    }

    /// The policy at the bound.
    pub fn when_full(&self) -> WhenFull {
        self.when_full
    }

    /// How many shards the keys are spread over.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The algorithm's name (`"gcra"`, …).
    pub fn algorithm(&self) -> &'static str {
        self.template.name()
    }

    /// The template every key's limiter is made from (fresh).
    pub fn template(&self) -> &A {
        &self.template
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// How many new keys' requests were refused at the bound
    /// ([`WhenFull::RefuseNewKeys`]).
    pub fn refused_new_keys(&self) -> u64 {
        self.shards.iter().map(|s| s.refused.load(Ordering::Relaxed)).sum()
    }

    /// How many keys that were not full were evicted to make room
    /// ([`WhenFull::EvictSoonestFull`]): each may over-admit once.
    pub fn forced_evictions(&self) -> u64 {
        self.shards.iter().map(|s| s.forced.load(Ordering::Relaxed)).sum()
    }
}

impl<K, A: KeyedAlgorithm, C: Clock, H> fmt::Debug for KeyedLimiter<K, A, C, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedLimiter")
            .field("algorithm", &self.algorithm())
            .field("len", &self.len())
            .field("max_keys", &self.max_keys)
            .field("shards", &self.shards.len())
            .field("when_full", &self.when_full)
            .finish_non_exhaustive()
    }
}
