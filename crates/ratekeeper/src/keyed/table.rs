//! One shard's hash table: open addressing with linear probing, the hash
//! stored beside each key (or not: see below), and a capacity that never
//! passes a bound.
//!
//! Why not `std::collections::HashMap`: a keyed limiter's hot path is a
//! lookup of a key that is there, in a table that may be far bigger than
//! the CPU's caches. A SwissTable (std's map, hashbrown, dashmap) keeps its
//! control bytes apart from its entries, so a lookup touches two places in
//! memory; here each slot holds the hash, the key and the state side by
//! side, and a lookup at a load of at most 3/4 usually touches one cache
//! line. And the table must stop growing at the shard's bound, must find a
//! victim near a given place (for eviction by sampling), and must sweep
//! itself in one pass; all three need the slot positions.
//!
//! * A slot is `Option<Slot>`; the stored hash is a `NonZeroU64` (bit 0
//!   forced on), so `None` costs no extra word. The slots are cache-line
//!   aligned (and 2 MiB-aligned, on huge pages, when that large): see
//!   [`SlotArray`].
//! * A state may choose to store no hash ([`SlotState::Tag`] `= ()`) when
//!   it is a word that is never 0 (so `None` still costs nothing): GCRA's
//!   [`GcraKeyState`](super::GcraKeyState), whose slot with a `u64` key is
//!   then 16 bytes instead of 24 — the difference, for a table larger than
//!   the caches, between fitting the last-level cache and not. Growth,
//!   deletion and lookups by hash then hash the keys again (with the
//!   limiter's hasher, given as `rehash`).
//! * A key's home slot is `⌊(low 32 bits of the hash) × capacity / 2³²⌋`,
//!   which works for any capacity, so the last growth step can stop exactly
//!   at the bound rather than at the next power of two. (The shard was
//!   chosen from the high bits, so the two do not correlate.)
//! * Deletion shifts the following entries of the cluster back
//!   (Knuth's Algorithm R): no tombstones, so probe lengths never degrade
//!   under the churn of eviction.
//! * With stored hashes nothing here hashes a key: growth and deletion use
//!   the stored hash, and the only user code run under the shard's lock is
//!   the key's `Eq`, so a panicking `Eq` leaves the table as it was. Without
//!   them, the key's `Hash` (and the hasher) also run under the lock, in
//!   growth and in deletion's shifts; a panic there, in the middle of
//!   moving entries, empties the table (dropping every key, which may let
//!   each be admitted afresh once) rather than leave keys where lookups
//!   cannot find them. A `Hash` that panics only sometimes is the one case;
//!   one that always does panics before any lock is taken. (As for any
//!   hash map, the key's `Hash` must agree with its borrowed form's and
//!   give the same hash every time.)

use std::borrow::Borrow;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::huge_pages::SlotArray;
use std::num::NonZeroU64;

/// The load the table never exceeds, as a fraction: at most 3 entries per 4
/// slots (linear probing stays short below that).
const LOAD_NUM: usize = 3;
const LOAD_DEN: usize = 4;

/// The first capacity allocated.
const MIN_CAPACITY: usize = 8;

/// The most slots a shard's table may have: homes are computed from 32 bits
/// of the hash.
pub(crate) const MAX_CAPACITY: usize = 1 << 32;

/// The most entries a table may be asked to bound itself to.
pub(crate) const MAX_LEN: usize = MAX_CAPACITY / LOAD_DEN * LOAD_NUM - 1;

/// What a slot stores beside a key to find it again: its hash
/// (`NonZeroU64`) or nothing (`()`, then the key is hashed again).
pub trait StoredTag: Copy + fmt::Debug + Send {
    /// Whether the hash is stored.
    const STORED: bool;

    /// What to store for a key whose hash is `tag`.
    fn store(tag: NonZeroU64) -> Self;

    /// The stored hash, if stored.
    fn get(self) -> Option<NonZeroU64>;
}

impl StoredTag for NonZeroU64 {
    const STORED: bool = true;

    #[inline]
    fn store(tag: NonZeroU64) -> Self {
        tag
    }

    #[inline]
    fn get(self) -> Option<NonZeroU64> {
        Some(self)
    }
}

impl StoredTag for () {
    const STORED: bool = false;

    #[inline]
    fn store(_: NonZeroU64) -> Self {}

    #[inline]
    fn get(self) -> Option<NonZeroU64> {
        None
    }
}

/// A state a table can hold: says whether its slots store the key's hash.
/// (A state that stores none must have a niche, so that an empty slot
/// costs nothing: a slot is `Option<Slot>`.)
pub trait SlotState {
    /// `NonZeroU64` to store the hash, `()` to hash the key again when
    /// needed.
    type Tag: StoredTag;
}

/// An occupied slot.
#[derive(Debug)]
pub(crate) struct Slot<K, S: SlotState> {
    tag: S::Tag,
    key: K,
    pub(crate) state: S,
}

impl<K, S: SlotState> Slot<K, S> {
    /// The key's stored hash, or its hash computed again.
    #[inline]
    fn tag(&self, rehash: &impl Fn(&K) -> NonZeroU64) -> NonZeroU64 {
        match self.tag.get() {
            Some(tag) => tag,
            None => rehash(&self.key),
        }
    }

    /// Whether the slot may hold a key whose hash is `tag` (false: surely
    /// not).
    #[inline]
    fn may_be(&self, tag: NonZeroU64) -> bool {
        self.tag.get().is_none_or(|stored| stored == tag)
    }
}

/// A key's stored hash: its hash with bit 0 set (never 0).
#[inline]
pub(crate) fn tag(hash: u64) -> NonZeroU64 {
    NonZeroU64::MIN | hash
}

/// The slot where a lookup of `tag` starts, in a table of `capacity` slots
/// (0 for none).
#[inline]
pub(crate) fn home_of(tag: NonZeroU64, capacity: usize) -> usize {
    ((u64::from(tag.get() as u32) * capacity as u64) >> 32) as usize
}

/// A table of at most `max_len` entries.
/// The capacity a table bounded to `max_len` entries ends at: room for
/// them at the load factor, and one empty slot whatever the bound.
fn final_capacity(max_len: usize) -> usize {
    (max_len * LOAD_DEN).div_ceil(LOAD_NUM).max(max_len + 1).min(MAX_CAPACITY)
}

#[derive(Debug)]
pub(crate) struct Table<K, S: SlotState> {
    slots: SlotArray<Option<Slot<K, S>>>,
    len: usize,
    max_len: usize,
}

impl<K, S: SlotState> Table<K, S> {
    /// An empty table that will hold at most `max_len` (≤ [`MAX_LEN`])
    /// entries; it allocates on the first insertion.
    pub(crate) fn new(max_len: usize) -> Self {
        debug_assert!(max_len <= MAX_LEN);
        Table { slots: SlotArray::new(), len: 0, max_len }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The most entries it holds.
    #[cfg(test)]
    pub(crate) fn bound(&self) -> usize {
        self.max_len
    }

    /// Whether the table holds its bound.
    #[inline]
    pub(crate) fn is_at_bound(&self) -> bool {
        self.len >= self.max_len
    }

    /// The capacity the table ends at.
    fn final_capacity(&self) -> usize {
        final_capacity(self.max_len)
    }

    /// The bytes of slots a table bounded to `max_len` entries holds at
    /// most (when it has grown to its final capacity).
    pub(crate) fn max_slot_bytes(max_len: usize) -> usize {
        final_capacity(max_len).saturating_mul(std::mem::size_of::<Option<Slot<K, S>>>())
    }

    #[inline]
    fn home(&self, tag: NonZeroU64) -> usize {
        home_of(tag, self.slots.len())
    }

    /// Where the slots are and how many (for a prefetch hint).
    pub(crate) fn slots_hint(&self) -> (usize, usize) {
        (self.slots.as_ptr() as usize, self.slots.len())
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() {
            0
        } else {
            i + 1
        }
    }

    /// The slot holding `key`, if any.
    #[inline]
    fn find<Q>(&self, tag: NonZeroU64, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.home(tag);
        loop {
            match &self.slots[i] {
                None => return None,
                Some(slot) if slot.may_be(tag) && slot.key.borrow() == key => return Some(i),
                Some(_) => i = self.next(i),
            }
        }
    }

    /// `key`'s state, if it is held.
    #[inline]
    pub(crate) fn get<Q>(&self, tag: NonZeroU64, key: &Q) -> Option<&S>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let i = self.find(tag, key)?;
        self.slots[i].as_ref().map(|slot| &slot.state)
    }

    /// `key`'s state, if it is held.
    #[inline]
    pub(crate) fn get_mut<Q>(&mut self, tag: NonZeroU64, key: &Q) -> Option<&mut S>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let i = self.find(tag, key)?;
        self.slots[i].as_mut().map(|slot| &mut slot.state)
    }

    /// Inserts a key that is not in the table (the caller checks the bound
    /// first; past it, this does nothing). Returns whether the slots moved
    /// (the table grew). `rehash` gives a key's hash (for growth, when
    /// hashes are not stored).
    pub(crate) fn insert(&mut self, tag: NonZeroU64, key: K, state: S, rehash: &impl Fn(&K) -> NonZeroU64) -> bool {
        if self.len >= self.max_len {
            return false;
        }
        let mut grew = false;
        if (self.len + 1) * LOAD_DEN > self.slots.len() * LOAD_NUM || self.len + 1 >= self.slots.len() {
            let grown = (self.slots.len() * 2).max(MIN_CAPACITY).min(self.final_capacity());
            if grown > self.slots.len() {
                self.emptied_on_panic(|table| table.resize(grown, rehash));
                grew = true;
            }
        }
        self.place(tag, Slot { tag: S::Tag::store(tag), key, state });
        self.len += 1;
        grew
    }

    /// Runs `f`, which may run the key's `Hash` while it moves entries: if
    /// that panics, the table is emptied (every entry dropped) before the
    /// panic goes on, so that no entry is left where a lookup cannot find
    /// it. (With stored hashes, `f` runs no user code.)
    #[inline]
    fn emptied_on_panic<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if S::Tag::STORED {
            return f(self);
        }
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(panic) => {
                self.clear();
                resume_unwind(panic)
            }
        }
    }

    /// Drops every entry (the slots stay allocated).
    pub(crate) fn clear(&mut self) {
        if self.len > 0 {
            for slot in self.slots.iter_mut() {
                *slot = None;
            }
        }
        self.len = 0;
    }

    /// Puts `slot`, whose hash is `tag`, in the first free slot from its
    /// home (there is one: the load stays below 1).
    fn place(&mut self, tag: NonZeroU64, slot: Slot<K, S>) {
        let mut i = self.home(tag);
        while self.slots[i].is_some() {
            i = self.next(i);
        }
        self.slots[i] = Some(slot);
    }

    fn resize(&mut self, capacity: usize, rehash: &impl Fn(&K) -> NonZeroU64) {
        let mut old = std::mem::replace(&mut self.slots, SlotArray::from_fn(capacity, || None));
        for slot in old.iter_mut() {
            if let Some(slot) = slot.take() {
                self.place(slot.tag(rehash), slot);
            }
        }
    }

    /// Removes the entry in slot `i` (which must be occupied) and shifts the
    /// rest of its cluster back over the hole.
    pub(crate) fn remove_at(&mut self, i: usize, rehash: &impl Fn(&K) -> NonZeroU64) -> Option<Slot<K, S>> {
        self.emptied_on_panic(|table| table.remove_at_unguarded(i, rehash))
    }

    fn remove_at_unguarded(&mut self, i: usize, rehash: &impl Fn(&K) -> NonZeroU64) -> Option<Slot<K, S>> {
        let removed = self.slots[i].take()?;
        self.len -= 1;
        let mut hole = i;
        let mut j = self.next(i);
        while let Some(slot) = &self.slots[j] {
            let home = self.home(slot.tag(rehash));
            // The entry at j may move to the hole unless its home lies
            // cyclically in (hole, j]: then its probe never passed the hole.
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j].take();
                hole = j;
            }
            j = self.next(j);
        }
        Some(removed)
    }

    /// Removes `key`'s entry; whether there was one.
    pub(crate) fn remove<Q>(&mut self, tag: NonZeroU64, key: &Q, rehash: &impl Fn(&K) -> NonZeroU64) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        match self.find(tag, key) {
            Some(i) => self.remove_at(i, rehash).is_some(),
            None => false,
        }
    }

    /// The first slot holding an entry with this hash (stored, or computed
    /// again) whose state `accept`s (hashes are 63 bits: two keys of a
    /// shard share one about never, but it is allowed).
    pub(crate) fn find_tag(
        &self,
        tag: NonZeroU64,
        rehash: &impl Fn(&K) -> NonZeroU64,
        mut accept: impl FnMut(&S) -> bool,
    ) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.home(tag);
        while let Some(slot) = &self.slots[i] {
            if slot.tag(rehash) == tag && accept(&slot.state) {
                return Some(i);
            }
            i = self.next(i);
        }
        None
    }

    /// Keeps the entries whose state `keep` accepts, in one pass; `keep` sees
    /// every entry exactly once, with a function that gives its hash (stored,
    /// or computed again: call it only when needed). Returns how many were
    /// removed.
    pub(crate) fn retain(
        &mut self,
        rehash: &impl Fn(&K) -> NonZeroU64,
        mut keep: impl FnMut(&S, &dyn Fn() -> NonZeroU64) -> bool,
    ) -> usize {
        let cap = self.slots.len();
        // Start after an empty slot: no cluster crosses it, so the entries
        // that deletion shifts back are always ones not yet visited.
        let Some(start) = self.slots.iter().position(Option::is_none) else { return 0 };
        let before = self.len;
        let mut i = self.next(start);
        let mut visited = 1;
        while visited < cap {
            let drop = match &self.slots[i] {
                Some(slot) => !keep(&slot.state, &|| slot.tag(rehash)),
                None => false,
            };
            if drop {
                // A later entry of the cluster may now sit at i: look again.
                self.remove_at(i, rehash);
            } else {
                i = self.next(i);
                visited += 1;
            }
        }
        before - self.len
    }

    /// How many slots are allocated.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The entries' keys.
    #[cfg(test)]
    fn keys(&self) -> impl Iterator<Item = &K> {
        self.slots.iter().flatten().map(|slot| &slot.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    impl SlotState for u64 {
        type Tag = NonZeroU64;
    }

    impl SlotState for i64 {
        type Tag = NonZeroU64;
    }

    impl SlotState for () {
        type Tag = NonZeroU64;
    }

    /// A state whose slots store no hash (as GCRA's): a word never 0.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    struct Word(NonZeroU64);

    impl SlotState for Word {
        type Tag = ();
    }

    /// The two kinds of state the model test runs: with and without a
    /// stored hash.
    trait TestState: SlotState + PartialEq + std::fmt::Debug + Copy {
        fn of(v: u64) -> Self;
        fn value(&self) -> u64;
    }

    impl TestState for u64 {
        fn of(v: u64) -> Self {
            v
        }
        fn value(&self) -> u64 {
            *self
        }
    }

    impl TestState for Word {
        fn of(v: u64) -> Self {
            Word(NonZeroU64::MIN | (v << 1))
        }
        fn value(&self) -> u64 {
            self.0.get() >> 1
        }
    }

    /// A hash that makes collisions on purpose: few distinct homes.
    fn crowded(key: u64) -> NonZeroU64 {
        tag((key % 7).wrapping_mul(0x9e37_79b9) << 3)
    }

    fn check_against_model<S: TestState>(ops: &[(u8, u64)], max_len: usize, hash: fn(u64) -> NonZeroU64) {
        let rehash = |k: &u64| hash(*k);
        let mut table = Table::<u64, S>::new(max_len);
        let mut model = HashMap::new();
        for (n, &(op, key)) in ops.iter().enumerate() {
            match op % 4 {
                0 | 1 => {
                    let present = table.get(hash(key), &key).is_some();
                    assert_eq!(present, model.contains_key(&key));
                    if !present && !table.is_at_bound() {
                        table.insert(hash(key), key, S::of(key * 10), &rehash);
                        model.insert(key, S::of(key * 10));
                    }
                }
                2 => assert_eq!(table.remove(hash(key), &key, &rehash), model.remove(&key).is_some()),
                _ => {
                    // Drop the entries whose state is a multiple of 3.
                    let removed = table.retain(&rehash, |s, _| s.value() % 3 != 0);
                    let before = model.len();
                    model.retain(|_, s| s.value() % 3 != 0);
                    assert_eq!(removed, before - model.len());
                }
            }
            assert_eq!(table.len(), model.len(), "after op {n}");
            assert!(table.len() <= max_len);
            for (k, s) in &model {
                assert_eq!(table.get(hash(*k), k), Some(s), "lost {k} after op {n}");
            }
            let mut keys: Vec<_> = table.keys().copied().collect();
            keys.sort_unstable();
            let mut expected: Vec<_> = model.keys().copied().collect();
            expected.sort_unstable();
            assert_eq!(keys, expected);
        }
    }

    /// A small deterministic generator (xorshift), so the test needs no
    /// dependency and replays exactly.
    fn ops(seed: u64, n: usize, keys: u64) -> Vec<(u8, u64)> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // 60% lookups-then-inserts, 20% removals, 10% sweeps.
                let op = match (x >> 40) % 10 {
                    6 | 7 => 2,
                    8 => 3,
                    _ => 0,
                };
                (op, x % keys)
            })
            .collect()
    }

    #[test]
    fn behaves_as_a_map_with_a_bound() {
        fn run<S: TestState>() {
            for seed in 1..40 {
                check_against_model::<S>(&ops(seed, 600, 50), 40, |k| tag(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
                check_against_model::<S>(&ops(seed, 600, 50), 40, crowded);
                check_against_model::<S>(&ops(seed, 300, 10), 1, crowded);
                check_against_model::<S>(&ops(seed, 300, 30), 7, crowded);
            }
        }
        run::<u64>();
        run::<Word>();
    }

    /// A key whose `Hash` panics while the table moves entries (here: in
    /// growth, and in a deletion's shift) empties the table: every entry
    /// gone, none unreachable, and the table usable again.
    #[test]
    fn a_panicking_rehash_empties_the_table() {
        let panicky = |k: &u64| {
            assert!(*k != 13, "hash of 13");
            crowded(*k)
        };
        let mut table = Table::<u64, Word>::new(1_000);
        for k in 0..6 {
            table.insert(crowded(k), k, Word::of(k), &panicky);
        }
        table.insert(crowded(13), 13, Word::of(13), &panicky);
        let grow = catch_unwind(AssertUnwindSafe(|| {
            for k in 100..200 {
                table.insert(crowded(k), k, Word::of(k), &panicky);
            }
        }));
        assert!(grow.is_err());
        assert_eq!(table.len(), 0);
        assert!(table.keys().next().is_none());
        for k in 0..20 {
            table.insert(crowded(k), k, Word::of(k), &|k| crowded(*k));
        }
        assert_eq!(table.len(), 20);
        // 13 sits in a cluster after 6 (same home): removing 6 shifts it.
        let removal = catch_unwind(AssertUnwindSafe(|| table.remove(crowded(6), &6, &panicky)));
        assert!(removal.is_err());
        assert_eq!(table.len(), 0);
        assert!(table.keys().next().is_none());
    }

    #[test]
    fn capacity_stops_at_the_bound() {
        let mut table = Table::<u64, ()>::new(1_000);
        for k in 0..5_000u64 {
            table.insert(tag(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)), k, (), &|_| unreachable!());
        }
        assert_eq!(table.len(), 1_000);
        assert_eq!(table.capacity(), 1_334, "exactly 4/3 of the bound, not a power of two");
        let mut one = Table::<u64, ()>::new(1);
        assert!(one.insert(tag(5), 5, (), &|_| unreachable!()), "grew from nothing");
        assert!(!one.insert(tag(6), 6, (), &|_| unreachable!()));
        assert_eq!(one.len(), 1);
        assert_eq!(one.capacity(), 2);
    }

    #[test]
    fn empty_slots_cost_nothing() {
        assert_eq!(std::mem::size_of::<Option<Slot<u64, [u64; 2]>>>(), 32);
        assert_eq!(std::mem::size_of::<Option<Slot<u64, [u64; 1]>>>(), 24);
        assert_eq!(std::mem::size_of::<Option<Slot<u64, Word>>>(), 16);
        assert_eq!(std::mem::size_of::<Option<Slot<u64, crate::keyed::GcraKeyState>>>(), 16);
    }

    #[test]
    fn entries_are_found_by_stored_hash() {
        let never = |_: &u64| -> NonZeroU64 { unreachable!("stored") };
        let mut table = Table::<u64, i64>::new(100);
        let same = tag(12_345);
        table.insert(same, 1, 10, &never);
        table.insert(same, 2, 20, &never); // two keys, one stored hash
        table.insert(tag(99), 3, 30, &never);
        assert_eq!(table.len(), 3);
        let i = table.find_tag(same, &never, |s| *s == 20).unwrap();
        assert_eq!(table.remove_at(i, &never).map(|slot| slot.key), Some(2));
        assert!(table.find_tag(same, &never, |s| *s == 20).is_none());
        assert!(table.find_tag(same, &never, |s| *s == 10).is_some());
        assert!(table.find_tag(tag(7), &never, |_| true).is_none());
        assert!(Table::<u64, i64>::new(3).find_tag(same, &never, |_| true).is_none());
        // Without stored hashes: found by hashing again.
        let by_key = |k: &u64| if *k == 3 { tag(99) } else { same };
        let mut tagless = Table::<u64, Word>::new(100);
        tagless.insert(same, 1, Word::of(10), &by_key);
        tagless.insert(same, 2, Word::of(20), &by_key);
        tagless.insert(tag(99), 3, Word::of(30), &by_key);
        let i = tagless.find_tag(same, &by_key, |s| s.value() == 20).unwrap();
        assert_eq!(tagless.remove_at(i, &by_key).map(|slot| slot.key), Some(2));
        assert!(tagless.find_tag(tag(99), &by_key, |s| s.value() == 30).is_some());
        assert!(tagless.find_tag(tag(99), &by_key, |s| s.value() == 10).is_none());
    }
}
