//! One shard of a keyed limiter ([`Shard`]): a table of keys behind a lock
//! of its own, with what the shard remembers to make room at its bound (the
//! keys that will be full soonest, and a lower bound on when any other can
//! be) and the latest time it used; and how `max_keys` is shared among the
//! shards. The decisions that read and change this state under the lock
//! are the limiter's (`limiter.rs`); why keys are spread over shards, and
//! why the lock is a spin lock, is in the `keyed` module docs (*Design*).

use std::collections::VecDeque;
use std::num::NonZeroU64;

use ratekeeper_core::NEVER;

use super::lock::{ShardGuard, ShardLock};
use super::table;
use crate::sync::{AtomicU64, AtomicUsize, Ordering};

/// A sweep remembers about one key in this many (at least 16, at most
/// 4,096 per shard): those that will be full soonest.
pub(super) const SOONEST_PER_KEYS: usize = 64;

/// One shard: a lock around a table, on its own cache lines.
///
/// Two groups of lines, in this order (`repr(C)`): the prefetch hints,
/// which every decision reads before it takes the lock and which change
/// only when the table grows; then the lock and what it guards, which
/// every decision writes. Apart, a thread's prefetch does not wait for a
/// line another thread's lock just wrote (a transfer between cores, as long
/// as the miss itself): it goes out at once, and the line follows while
/// the slot is on its way.
#[repr(C, align(64))]
pub(super) struct Shard<K, S: table::SlotState> {
    /// Where the table's slots are and how many, for a prefetch before the
    /// lock is taken. Read without the lock, so possibly stale: a prefetch
    /// of a wrong address is harmless (it cannot fault, and changes nothing).
    slots_hint: AtomicUsize,
    capacity_hint: AtomicUsize,
    /// Counted only at the bound: as rarely written as the hints.
    pub(super) refused: AtomicU64,
    pub(super) forced: AtomicU64,
    state: LineAligned<ShardLock<ShardState<K, S>>>,
    /// The table's length, readable without the lock (written with it).
    pub(super) len: AtomicUsize,
}

/// A value that starts a cache line of its own.
#[repr(align(64))]
struct LineAligned<T>(T);

pub(super) struct ShardState<K, S: table::SlotState> {
    pub(super) table: table::Table<K, S>,
    /// The latest time a decision in this shard used: later decisions use
    /// no earlier time.
    pub(super) latest: i64,
    /// When the shard was last swept or emptied for [`Aging`](super::algorithm::Aging) (states
    /// encoded modulo a time range need it; others ignore it).
    pub(super) aged: i64,
    /// The keys that will be full soonest, as of the last sweep: when each
    /// will be (a lower bound) and its stored hash, earliest first. Room is
    /// made from these first, so a sweep (which reads every key) happens
    /// once per this many keys dropped, not once per key.
    pub(super) soonest: VecDeque<(i64, NonZeroU64)>,
    /// No key outside `soonest` is full before this time ([`NEVER`]: none
    /// ever will be). A lower bound: lowered when a key is added, recomputed
    /// by a sweep. Admissions only push a key's full time later, so they
    /// leave it valid.
    pub(super) rest_full: i64,
}

impl<K, S: table::SlotState> ShardState<K, S> {
    /// No key of the shard is full before this time.
    pub(super) fn earliest_full(&self) -> i64 {
        self.soonest.front().map_or(self.rest_full, |&(at, _)| at.min(self.rest_full))
    }
}

impl<K, S: table::SlotState> Shard<K, S> {
    pub(super) fn new(max_len: usize) -> Self {
        Shard {
            slots_hint: AtomicUsize::new(0),
            capacity_hint: AtomicUsize::new(0),
            state: LineAligned(ShardLock::new(ShardState {
                table: table::Table::new(max_len),
                latest: 0,
                aged: 0,
                soonest: VecDeque::new(),
                rest_full: NEVER,
            })),
            len: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            forced: AtomicU64::new(0),
        }
    }

    /// The shard's lock. A panic under it (only a key's `Eq`, or its `Hash`
    /// in a table that stores no hashes, can) leaves the table consistent:
    /// see the `table` module.
    #[inline]
    pub(super) fn lock(&self) -> ShardGuard<'_, ShardState<K, S>> {
        self.state.0.lock()
    }

    /// Starts fetching the 64 bytes from the slot where a lookup of `tag`
    /// begins: one cache line when that slot starts one, else that line
    /// and the next.
    ///
    /// Why the next: a key is often a slot or two past its home (linear
    /// probing), and with 16-byte slots at the table's usual load, one
    /// lookup in six reads on into the next line — a second miss after the
    /// first, unless it was fetched with it. Fetching both at once costs
    /// memory bandwidth, of which a keyed limiter uses little.
    #[inline]
    pub(super) fn prefetch(&self, tag: NonZeroU64) {
        let (base, capacity) = (self.slots_hint.load(Ordering::Relaxed), self.capacity_hint.load(Ordering::Relaxed));
        let home = base.wrapping_add(table::home_of(tag, capacity) * std::mem::size_of::<Option<table::Slot<K, S>>>());
        prefetch(home);
        prefetch(home.wrapping_add(63));
    }

    /// Records where the table's slots are now (after it grew).
    pub(super) fn publish_slots(&self, s: &ShardState<K, S>) {
        let (base, capacity) = s.table.slots_hint();
        self.slots_hint.store(base, Ordering::Relaxed);
        self.capacity_hint.store(capacity, Ordering::Relaxed);
    }
}

/// Asks the CPU to start loading the cache line at `address`: a hint with
/// no effect on the program's behaviour, whatever the address.
#[inline]
fn prefetch(address: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 never faults and changes no memory, even for an
    // address that is not mapped; SSE is part of x86_64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Shard `i`'s share of `max_keys` over `shards`: the shares differ by at
/// most one and add up to `max_keys`.
pub(super) fn share_of(max_keys: usize, shards: usize, i: usize) -> usize {
    max_keys / shards + usize::from(i < max_keys % shards)
}
