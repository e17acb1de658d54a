//! Keyed limiters: one limiter per key (per user, per user and action),
//! created on first use from a template, in bounded memory.
//!
//! [`KeyedLimiter<K, A>`](KeyedLimiter) holds, for every key `K` it has
//! seen, the state of one algorithm `A` — any admission-style algorithm of
//! the core — all with the template's configuration, one clock and one time
//! origin. [`AnyKeyedLimiter`] is the same built from a
//! [`LimiterSpec`](ratekeeper_core::LimiterSpec) and keyed by bytes
//! ([`KeyBytes`]: short keys inline): what the language bindings wrap.
//!
//! ```
//! use std::sync::Arc;
//! use ratekeeper::core::Gcra;
//! use ratekeeper::keyed::{KeyedLimiter, KeyedOptions};
//! use ratekeeper::ManualClock;
//!
//! // Per user: 2 per second, bursts of 3; at most 100,000 users remembered.
//! let clock = Arc::new(ManualClock::new());
//! let users: KeyedLimiter<u64, Gcra, _> =
//!     KeyedLimiter::with_clock(Gcra::new(2, 2, 1_000_000)?, KeyedOptions::new(100_000), Arc::clone(&clock))?;
//! for _ in 0..3 {
//!     assert!(users.check(&42, 1).allowed);
//! }
//! assert!(!users.check(&42, 1).allowed);
//! assert!(users.check(&7, 1).allowed); // another user, another limiter
//! assert_eq!(users.len(), 2);
//! clock.advance(std::time::Duration::from_secs(2));
//! assert_eq!(users.evict_full(), 2); // both back to full: forgotten, nothing changes
//! # Ok::<(), ratekeeper::Error>(())
//! ```
//!
//! The design's `isAllowed(uid, action, period, maxCount)` is one keyed
//! limiter per `(period, maxCount)` — per action — keyed by the user, or one
//! keyed by `(uid, action)` when every action shares a limit: any `Hash +
//! Eq` key works, tuples and enums included.
//!
//! ## Design
//!
//! * **Sharded.** Keys are spread over a power-of-two number of shards by
//!   their hash; each shard is a lock and a hash table. A decision holds
//!   its shard's lock for one lookup and one state update (tens of
//!   nanoseconds); other shards are untouched. The default count is 4 × the
//!   available parallelism (at most 1,024), so threads rarely meet at a
//!   lock, and fewer when a shard would hold under 256 keys of the bound.
//!   The lock is a spin lock (one compare-and-swap to take, a plain store to
//!   release; waiters poll it, then yield), and the key's slot is
//!   prefetched before it is taken, so the memory access overlaps the clock
//!   read and the lock. A per-key lock-free cell was the alternative; but
//!   every admission writes, so it costs the same compare-and-swap, and it
//!   cannot cover a key arriving or leaving.
//! * **A short hash between two misses.** In a loop of decisions on a
//!   table larger than the caches, the time per decision is set by how
//!   much of the next key's miss the CPU starts before this key's returns,
//!   and the instructions between them — the next key's hash most of all —
//!   decide that. The default hasher ([`RandomAesHash`]) is AES-128 under
//!   a secret key for keys of up to 15 bytes: ten AES instructions where
//!   SipHash-1-3 of a `u64` is some eighty, as unpredictable to whoever
//!   chooses the keys (longer keys, and CPUs without AES instructions, get
//!   SipHash-1-3, [`RandomSipHash`]). In a raw loop of the same shape (a
//!   lock, a clock read, a prefetch) a decision took 233 ns with SipHash
//!   and 152 ns with AES; at a million keys GCRA's `allow` went from
//!   0.45–0.52× governor's time to 0.36–0.42× (two threads).
//! * **Yes or no when that is all.** [`check`](KeyedLimiter::check)
//!   returns a whole [`Decision`]; [`allow`](KeyedLimiter::allow) only
//!   whether it admits, which for GCRA is a comparison and an addition —
//!   short enough that, in a loop of decisions, the CPU starts the next
//!   key's miss before the last one's has returned.
//! * **One cache line per decision.** Each shard's table stores the hash,
//!   the key and the state side by side (open addressing, linear probing,
//!   load ≤ 3/4), so a lookup in a table far larger than the caches costs
//!   about one miss. GCRA's slots store no hash: its state is one word
//!   ([`GcraKeyState`]), so a slot with a `u64` key is 16 bytes, and a
//!   million keys take 24 MiB rather than 48 — mostly within a server's
//!   last-level cache. A SwissTable — what `dashmap`, and so governor's keyed
//!   limiter, uses — reads its control bytes and then the entry: two. On
//!   Linux, tables of 2 MiB and more ask for transparent huge pages, so that
//!   miss does not also miss the TLB (few shards keep tables that large).
//! * **Only state words per key.** The configuration lives once, in the
//!   template; a key stores the words a decision can change (8 bytes for
//!   GCRA — its TAT modulo 2⁶³, see [`GcraKeyState`] — 16 for a fixed
//!   window, 24 for a token bucket): see [`KeyedAlgorithm`].
//! * **One clock, one origin.** Time is counted from the limiter's creation
//!   on its [`Clock`]; each shard keeps the latest time it used, so the
//!   times a key sees never go backwards, not even across a drop and a
//!   re-creation.
//!
//! ## Bounded memory
//!
//! [`KeyedOptions::new(max_keys)`](KeyedOptions::new) bounds the number of
//! keys held: each shard holds at most its share of `max_keys` (the shares
//! add up to `max_keys`), its table never grows past room for that share,
//! and so a flood of unique keys cannot grow memory past the bound
//! (`tests/keyed_flood.rs` floods millions and checks the count and the
//! allocated bytes).
//!
//! A key is dropped only when that changes nothing: when its state is
//! **full**, indistinguishable from a fresh one for every later decision
//! ([`Full`](ratekeeper_core::Full), per algorithm, with the property tests
//! that prove it). A new key arriving at a shard at its bound makes room by
//! dropping full keys, and finds them without scanning every time:
//!
//! * a sweep (one pass over the shard) drops every full key and remembers
//!   the 1/64 of the others that will be full soonest
//!   ([`Full::full_at_micros`](ratekeeper_core::Full)), and a lower bound on
//!   when any other key can be;
//! * room is then made from those remembered keys, in order, as each comes
//!   due; the next sweep comes only when they are used up and another key
//!   may be full — so a shard whose keys expire one by one under a flood
//!   pays one pass per 64 keys it lets in, not one per key;
//! * before the earliest of those times, the shard knows without looking
//!   that no key can go: a flood that fills a shard costs a comparison per
//!   refused key.
//!
//! When the shard is at its bound and no key is full, [`WhenFull`] decides:
//!
//! * [`WhenFull::RefuseNewKeys`] (the default) never over-admits: the new
//!   key's request is refused — [`try_check`](KeyedLimiter::try_check)
//!   says so with [`AtCapacity`], [`check`](KeyedLimiter::check) with a
//!   refused [`Decision`] (remaining 0, retry-after: until the shard's
//!   earliest key can be full) — and
//!   [`refused_new_keys`](KeyedLimiter::refused_new_keys) counts it. Keys already held are
//!   decided as always.
//! * [`WhenFull::EvictSoonestFull`] (opt-in) keeps admitting new keys by
//!   forgetting a key that is not full: among 16 keys sampled near the new
//!   key's slot, the one that would be full soonest (the one owed the
//!   least). **That over-admits:** the evicted key comes back fresh, so it
//!   can be admitted up to one whole `limit` more than its algorithm allows,
//!   once per eviction. [`forced_evictions`](KeyedLimiter::forced_evictions)
//!   counts them.
//!
//! [`len`](KeyedLimiter::len) never exceeds `max_keys` under either.
//!
//! The bound is in bytes as well as keys. [`KeyedLimiter::max_bytes`]
//! is the most the limiter holds (its shards, each table at its final
//! capacity, and each key's state at its largest: only a sliding log's
//! grows, with use, to at most 16 bytes per unit of its limit); a key of a
//! type that owns heap memory adds its own. [`AnyKeyedLimiter`], keyed by
//! byte strings, bounds those too: a key longer than
//! [`KeyedOptions::max_key_bytes`] ([`MaxKeyBytes`], 256 bytes by default)
//! is refused with an error naming `key`, and its
//! [`max_bytes`](AnyKeyedLimiter::max_bytes) counts `max_keys` keys of that
//! length. The README tabulates the figure per algorithm, and
//! `tests/keyed_flood.rs` checks it against what is allocated.
//!
//! A request that is refused, or a free look (cost 0), never creates a key:
//! a refusal consumes nothing, so the fresh state it would store is full.

mod algorithm;
mod any;
mod gcra_state;
mod hash;
mod huge_pages;
mod key_bytes;
mod table;

use std::borrow::Borrow;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::mem::ManuallyDrop;
use std::num::NonZeroU64;

use ratekeeper_core::{Argument, Decision, Error, NEVER};

use crate::clock::{Clock, MonotonicClock};
use crate::sync::{spin, yield_now, AtomicBool, AtomicU64, AtomicUsize, CellAccess, Ordering, UnsafeCell};

use algorithm::Aging;
pub use algorithm::KeyedAlgorithm;
pub use any::AnyKeyedLimiter;
pub use gcra_state::GcraKeyState;
pub use hash::{AesHasher, DefaultKeyHasher, RandomAesHash, RandomSipHash, SipHasher13};
pub use key_bytes::{KeyBytes, MaxKeyBytes, INLINE as INLINE_KEY_BYTES};

/// The largest `max_keys`.
pub const MAX_KEYS: usize = 1 << 40;

/// The most shards.
const MAX_SHARDS: usize = 1 << 16;

/// A sweep remembers about one key in this many (at least 16, at most
/// 4,096 per shard): those that will be full soonest.
const SOONEST_PER_KEYS: usize = 64;

/// What a keyed limiter does when a new key arrives at a shard that holds
/// its share of `max_keys` and no key there is full. See the
/// [module docs](self#bounded-memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum WhenFull {
    /// Refuse the new key's request (never over-admits). The default.
    #[default]
    RefuseNewKeys,
    /// Forget the sampled key that would be full soonest, and admit the new
    /// one. Over-admits: the forgotten key starts fresh when it returns.
    EvictSoonestFull,
}

impl WhenFull {
    /// `"refuse_new_keys"` or `"evict_soonest_full"`, as the bindings spell
    /// it.
    pub const fn name(self) -> &'static str {
        match self {
            WhenFull::RefuseNewKeys => "refuse_new_keys",
            WhenFull::EvictSoonestFull => "evict_soonest_full",
        }
    }

    /// The policy named by [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "refuse_new_keys" => Some(WhenFull::RefuseNewKeys),
            "evict_soonest_full" => Some(WhenFull::EvictSoonestFull),
            _ => None,
        }
    }
}

/// A keyed limiter's options: the bound, the policy at the bound, the
/// shard count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyedOptions {
    max_keys: usize,
    when_full: WhenFull,
    shards: Option<usize>,
    max_key_bytes: MaxKeyBytes,
}

impl KeyedOptions {
    /// At most `max_keys` keys (1 to [`MAX_KEYS`]), new keys refused at the
    /// bound when no key is full, the default shard count.
    pub const fn new(max_keys: usize) -> Self {
        KeyedOptions { max_keys, when_full: WhenFull::RefuseNewKeys, shards: None, max_key_bytes: MaxKeyBytes::DEFAULT }
    }

    /// What to do at the bound.
    pub const fn when_full(mut self, policy: WhenFull) -> Self {
        self.when_full = policy;
        self
    }

    /// A shard count of its own: a power of two from 1 to 65,536, at most
    /// `max_keys`.
    pub const fn shards(mut self, shards: usize) -> Self {
        self.shards = Some(shards);
        self
    }

    /// The longest byte key an [`AnyKeyedLimiter`] takes (a
    /// [`KeyedLimiter`]'s keys are of a type of your own, which bounds them).
    pub const fn max_key_bytes(mut self, bound: MaxKeyBytes) -> Self {
        self.max_key_bytes = bound;
        self
    }

    /// The bound.
    pub const fn max_keys(&self) -> usize {
        self.max_keys
    }

    /// The bound on byte keys.
    pub const fn key_bytes_bound(&self) -> MaxKeyBytes {
        self.max_key_bytes
    }

    /// The policy at the bound.
    pub const fn policy(&self) -> WhenFull {
        self.when_full
    }

    /// How many shards to make, checking every option.
    fn shard_count(&self) -> Result<usize, Error> {
        let max_keys = self.max_keys;
        if max_keys == 0 || max_keys > MAX_KEYS {
            return Err(Error::invalid_uint(Argument::MaxKeys, max_keys as u64));
        }
        let shards = match self.shards {
            Some(shards) => shards,
            None => {
                let parallelism = std::thread::available_parallelism().map_or(1, |n| n.get());
                let by_contention = (4 * parallelism).next_power_of_two().min(1_024);
                // Each shard's table has at most 2^32 slots.
                let by_size = max_keys.div_ceil(table::MAX_LEN / 2).next_power_of_two();
                let mut shards = by_contention.max(by_size);
                while shards > by_size && max_keys / shards < 256 {
                    shards /= 2;
                }
                shards
            }
        };
        let fits = shards.is_power_of_two() && shards <= MAX_SHARDS && shards <= max_keys;
        if !fits || max_keys.div_ceil(shards) > table::MAX_LEN {
            return Err(Error::invalid_uint(Argument::Shards, shards as u64));
        }
        Ok(shards)
    }
}

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
struct Shard<K, S: table::SlotState> {
    /// Where the table's slots are and how many, for a prefetch before the
    /// lock is taken. Read without the lock, so possibly stale: a prefetch
    /// of a wrong address is harmless (it cannot fault, and changes nothing).
    slots_hint: AtomicUsize,
    capacity_hint: AtomicUsize,
    /// Counted only at the bound: as rarely written as the hints.
    refused: AtomicU64,
    forced: AtomicU64,
    state: LineAligned<ShardLock<ShardState<K, S>>>,
    /// The table's length, readable without the lock (written with it).
    len: AtomicUsize,
}

/// A value that starts a cache line of its own.
#[repr(align(64))]
struct LineAligned<T>(T);

struct ShardState<K, S: table::SlotState> {
    table: table::Table<K, S>,
    /// The latest time a decision in this shard used: later decisions use
    /// no earlier time.
    latest: i64,
    /// When the shard was last swept or emptied for [`Aging`] (states
    /// encoded modulo a time range need it; others ignore it).
    aged: i64,
    /// The keys that will be full soonest, as of the last sweep: when each
    /// will be (a lower bound) and its stored hash, earliest first. Room is
    /// made from these first, so a sweep (which reads every key) happens
    /// once per this many keys dropped, not once per key.
    soonest: VecDeque<(i64, NonZeroU64)>,
    /// No key outside `soonest` is full before this time ([`NEVER`]: none
    /// ever will be). A lower bound: lowered when a key is added, recomputed
    /// by a sweep. Admissions only push a key's full time later, so they
    /// leave it valid.
    rest_full: i64,
}

impl<K, S: table::SlotState> ShardState<K, S> {
    /// No key of the shard is full before this time.
    fn earliest_full(&self) -> i64 {
        self.soonest.front().map_or(self.rest_full, |&(at, _)| at.min(self.rest_full))
    }
}

impl<K, S: table::SlotState> Shard<K, S> {
    fn new(max_len: usize) -> Self {
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
    fn lock(&self) -> ShardGuard<'_, ShardState<K, S>> {
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
    fn prefetch(&self, tag: NonZeroU64) {
        let (base, capacity) = (self.slots_hint.load(Ordering::Relaxed), self.capacity_hint.load(Ordering::Relaxed));
        let home = base.wrapping_add(table::home_of(tag, capacity) * std::mem::size_of::<Option<table::Slot<K, S>>>());
        prefetch(home);
        prefetch(home.wrapping_add(63));
    }

    /// Records where the table's slots are now (after it grew).
    fn publish_slots(&self, s: &ShardState<K, S>) {
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

/// How many times a waiter polls a shard's lock before it starts yielding
/// the CPU between polls: some tens of microseconds, far longer than a
/// decision holds it, so a waiter yields only to a holder that was
/// descheduled or is sweeping its shard.
const SHARD_POLLS: u32 = 1_000;

/// A spin lock: an uncontended lock is one compare-and-swap and its unlock
/// a plain store (std's `Mutex` unlocks with a second atomic swap, to wake
/// sleepers). A shard is held for tens of nanoseconds (in a table larger
/// than the caches, a cache miss more), except while its table grows or is
/// swept; waiters poll it, then yield the CPU.
pub(crate) struct ShardLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `value`, so it can
// be shared whenever `T` can be sent between threads (as for `Mutex`).
unsafe impl<T: Send> Sync for ShardLock<T> {}

impl<T> ShardLock<T> {
    pub(crate) fn new(value: T) -> Self {
        ShardLock { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    #[inline]
    pub(crate) fn lock(&self) -> ShardGuard<'_, T> {
        if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            self.lock_contended();
        }
        ShardGuard { lock: self, access: ManuallyDrop::new(self.value.access()) }
    }

    /// Waits for the lock by polling it, a pause apart, then yielding the
    /// CPU between polls once it has polled [`SHARD_POLLS`] times.
    ///
    /// Not the doubling backoff of `seq_cell::Backoff`: a shard is held for about
    /// one cache miss, a few hundred nanoseconds, and a waiter whose pauses
    /// double finds it free, on average, as long after its release as it had
    /// already waited — a tenth of a decision's time with two threads on a
    /// million keys. A waiter's poll only reads the line.
    #[cold]
    fn lock_contended(&self) {
        let mut polls = 0;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if polls < SHARD_POLLS {
                    spin(1);
                    polls += 1;
                } else {
                    yield_now();
                }
            }
            if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return;
            }
        }
    }
}

/// Access to a [`ShardLock`]'s value; unlocks when dropped (also when
/// unwinding).
pub(crate) struct ShardGuard<'a, T> {
    lock: &'a ShardLock<T>,
    /// The access the lock grants, ended before the unlock (under loom, a
    /// tracked access: two guards at once would be reported).
    access: ManuallyDrop<CellAccess<T>>,
}

impl<T> std::ops::Deref for ShardGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock: no other access exists.
        unsafe { self.access.get() }
    }
}

impl<T> std::ops::DerefMut for ShardGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` is unique.
        unsafe { self.access.get_mut() }
    }
}

impl<T> Drop for ShardGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.access) };
        self.lock.locked.store(false, Ordering::Release);
    }
}

/// Shard `i`'s share of `max_keys` over `shards`: the shares differ by at
/// most one and add up to `max_keys`.
fn share_of(max_keys: usize, shards: usize, i: usize) -> usize {
    max_keys / shards + usize::from(i < max_keys % shards)
}

/// One limiter per key, in bounded memory. See the [module docs](self).
///
/// `K` is the key (`Hash + Eq`; look keys up by any borrowed form: `&str`
/// for `Box<str>`, `&[u8]` for `Box<[u8]>`), `A` the core algorithm
/// ([`KeyedAlgorithm`]), `C` the clock, `H` the hasher.
pub struct KeyedLimiter<K, A: KeyedAlgorithm, C: Clock = MonotonicClock, H = DefaultKeyHasher> {
    shards: Box<[Shard<K, A::State>]>,
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
    /// Errors when `max_keys` is 0 or above [`MAX_KEYS`], or a shard count
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
    /// thread deciding). The module docs give the figures per algorithm.
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
        let max_keys = options.max_keys;
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
            when_full: options.when_full,
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
    /// written, a store the CPU cannot forward — about a tenth of a keyed
    /// decision's time.)
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

#[cfg(test)]
mod tests;
