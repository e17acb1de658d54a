//! One shard's hash table: open addressing with linear probing, the hash
//! stored beside each key, and a capacity that never passes a bound.
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
//! * A key's home slot is `⌊(low 32 bits of the hash) × capacity / 2³²⌋`,
//!   which works for any capacity, so the last growth step can stop exactly
//!   at the bound rather than at the next power of two. (The shard was
//!   chosen from the high bits, so the two do not correlate.)
//! * Deletion shifts the following entries of the cluster back
//!   (Knuth's Algorithm R): no tombstones, so probe lengths never degrade
//!   under the churn of eviction.
//! * Nothing here hashes a key: growth and deletion use the stored hash. The
//!   only user code run under the shard's lock is the key's `Eq`, so a
//!   panicking `Eq` leaves the table as it was.

use std::borrow::Borrow;

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

/// An occupied slot.
#[derive(Debug)]
pub(crate) struct Slot<K, S> {
    tag: NonZeroU64,
    key: K,
    pub(crate) state: S,
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
#[derive(Debug)]
pub(crate) struct Table<K, S> {
    slots: SlotArray<Option<Slot<K, S>>>,
    len: usize,
    max_len: usize,
}

impl<K, S> Table<K, S> {
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

    /// The capacity the table ends at: room for `max_len` at the load
    /// factor, and one empty slot whatever the bound.
    fn final_capacity(&self) -> usize {
        (self.max_len * LOAD_DEN).div_ceil(LOAD_NUM).max(self.max_len + 1).min(MAX_CAPACITY)
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
                Some(slot) if slot.tag == tag && slot.key.borrow() == key => return Some(i),
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
    /// (the table grew).
    pub(crate) fn insert(&mut self, tag: NonZeroU64, key: K, state: S) -> bool {
        if self.len >= self.max_len {
            return false;
        }
        let mut grew = false;
        if (self.len + 1) * LOAD_DEN > self.slots.len() * LOAD_NUM || self.len + 1 >= self.slots.len() {
            let grown = (self.slots.len() * 2).max(MIN_CAPACITY).min(self.final_capacity());
            if grown > self.slots.len() {
                self.resize(grown);
                grew = true;
            }
        }
        self.place(Slot { tag, key, state });
        self.len += 1;
        grew
    }

    /// Puts `slot` in the first free slot from its home (there is one: the
    /// load stays below 1).
    fn place(&mut self, slot: Slot<K, S>) {
        let mut i = self.home(slot.tag);
        while self.slots[i].is_some() {
            i = self.next(i);
        }
        self.slots[i] = Some(slot);
    }

    fn resize(&mut self, capacity: usize) {
        let mut old = std::mem::replace(&mut self.slots, SlotArray::from_fn(capacity, || None));
        for slot in old.iter_mut() {
            if let Some(slot) = slot.take() {
                self.place(slot);
            }
        }
    }

    /// Removes the entry in slot `i` (which must be occupied) and shifts the
    /// rest of its cluster back over the hole.
    pub(crate) fn remove_at(&mut self, i: usize) -> Option<Slot<K, S>> {
        let removed = self.slots[i].take()?;
        self.len -= 1;
        let mut hole = i;
        let mut j = self.next(i);
        while let Some(slot) = &self.slots[j] {
            let home = self.home(slot.tag);
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
    pub(crate) fn remove<Q>(&mut self, tag: NonZeroU64, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        match self.find(tag, key) {
            Some(i) => self.remove_at(i).is_some(),
            None => false,
        }
    }

    /// The first slot holding an entry with this stored hash whose state
    /// `accept`s (stored hashes are 63 bits: two keys of a shard share one
    /// about never, but it is allowed).
    pub(crate) fn find_tag(&self, tag: NonZeroU64, mut accept: impl FnMut(&S) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.home(tag);
        while let Some(slot) = &self.slots[i] {
            if slot.tag == tag && accept(&slot.state) {
                return Some(i);
            }
            i = self.next(i);
        }
        None
    }

    /// Keeps the entries whose state `keep` accepts, in one pass; `keep` sees
    /// every entry (with its stored hash) exactly once. Returns how many were
    /// removed.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(NonZeroU64, &S) -> bool) -> usize {
        let cap = self.slots.len();
        // Start after an empty slot: no cluster crosses it, so the entries
        // that deletion shifts back are always ones not yet visited.
        let Some(start) = self.slots.iter().position(Option::is_none) else { return 0 };
        let before = self.len;
        let mut i = self.next(start);
        let mut visited = 1;
        while visited < cap {
            match &self.slots[i] {
                Some(slot) if !keep(slot.tag, &slot.state) => {
                    // A later entry of the cluster may now sit at i: look again.
                    self.remove_at(i);
                }
                _ => {
                    i = self.next(i);
                    visited += 1;
                }
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

    /// A hash that makes collisions on purpose: few distinct homes.
    fn crowded(key: u64) -> NonZeroU64 {
        tag((key % 7).wrapping_mul(0x9e37_79b9) << 3)
    }

    fn check_against_model(ops: &[(u8, u64)], max_len: usize, hash: fn(u64) -> NonZeroU64) {
        let mut table = Table::<u64, u64>::new(max_len);
        let mut model = HashMap::new();
        for (n, &(op, key)) in ops.iter().enumerate() {
            match op % 4 {
                0 | 1 => {
                    let present = table.get(hash(key), &key).is_some();
                    assert_eq!(present, model.contains_key(&key));
                    if !present && !table.is_at_bound() {
                        table.insert(hash(key), key, key * 10);
                        model.insert(key, key * 10);
                    }
                }
                2 => assert_eq!(table.remove(hash(key), &key), model.remove(&key).is_some()),
                _ => {
                    // Drop the entries whose state is a multiple of 3.
                    let removed = table.retain(|_, s| s % 3 != 0);
                    let before = model.len();
                    model.retain(|_, s| *s % 3 != 0);
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
        for seed in 1..40 {
            check_against_model(&ops(seed, 600, 50), 40, |k| tag(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
            check_against_model(&ops(seed, 600, 50), 40, crowded);
            check_against_model(&ops(seed, 300, 10), 1, crowded);
            check_against_model(&ops(seed, 300, 30), 7, crowded);
        }
    }

    #[test]
    fn capacity_stops_at_the_bound() {
        let mut table = Table::<u64, ()>::new(1_000);
        for k in 0..5_000u64 {
            table.insert(tag(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)), k, ());
        }
        assert_eq!(table.len(), 1_000);
        assert_eq!(table.capacity(), 1_334, "exactly 4/3 of the bound, not a power of two");
        let mut one = Table::<u64, ()>::new(1);
        assert!(one.insert(tag(5), 5, ()), "grew from nothing");
        assert!(!one.insert(tag(6), 6, ()));
        assert_eq!(one.len(), 1);
        assert_eq!(one.capacity(), 2);
    }

    #[test]
    fn empty_slots_cost_nothing() {
        assert_eq!(std::mem::size_of::<Option<Slot<u64, [u64; 2]>>>(), 32);
        assert_eq!(std::mem::size_of::<Option<Slot<u64, [u64; 1]>>>(), 24);
    }

    #[test]
    fn entries_are_found_by_stored_hash() {
        let mut table = Table::<u64, i64>::new(100);
        let same = tag(12_345);
        table.insert(same, 1, 10);
        table.insert(same, 2, 20); // two keys, one stored hash
        table.insert(tag(99), 3, 30);
        assert_eq!(table.len(), 3);
        let i = table.find_tag(same, |s| *s == 20).unwrap();
        assert_eq!(table.remove_at(i).map(|slot| slot.key), Some(2));
        assert!(table.find_tag(same, |s| *s == 20).is_none());
        assert!(table.find_tag(same, |s| *s == 10).is_some());
        assert!(table.find_tag(tag(7), |_| true).is_none());
        assert!(Table::<u64, i64>::new(3).find_tag(same, |_| true).is_none());
    }
}
