//! Keyed limiters: one limiter per key (per user, per user and action),
//! created on first use from a template, in bounded memory.
//!
//! [`KeyedLimiter<K, A>`](KeyedLimiter) holds, for every key `K` it has
//! seen, the state of one algorithm `A` — any admission-style algorithm of
//! the core — all with the template's configuration, one clock and one time
//! origin. [`AnyKeyedLimiter`] is the same built from a
//! [`LimiterSpec`](ratekeeper_core::LimiterSpec) and keyed by bytes
//! ([`KeyBytes`]: short keys inline): what the language bindings wrap.
//! [`KeyedCompositeLimiter`] holds several limits per key, all or nothing
//! per key ("10 per second and 1,000 per hour, per client"), in the same
//! bounded memory.
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
//! A check of the form `isAllowed(uid, action, period, maxCount)` is one
//! keyed limiter per `(period, maxCount)` — per action — keyed by the user,
//! or one keyed by `(uid, action)` when every action shares a limit: any
//! `Hash + Eq` key works, tuples and enums included.
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
//!   SipHash-1-3, [`RandomSipHash`]). Fewer instructions there let more of
//!   the next miss overlap this one: BENCHMARKS.md has the two hashers
//!   side by side in the `keyed` benchmark, and under its *Earlier
//!   measurements* what led to AES.
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
//!
//! [`Decision`]: ratekeeper_core::Decision
//! [`Clock`]: crate::Clock

mod algorithm;
mod any;
mod composite;
mod gcra_state;
mod hash;
mod huge_pages;
mod key_bytes;
mod limiter;
mod lock;
mod options;
mod shard;
mod table;

pub use algorithm::KeyedAlgorithm;
pub use any::AnyKeyedLimiter;
pub use composite::KeyedCompositeLimiter;
pub use gcra_state::GcraKeyState;
pub use hash::{AesHasher, DefaultKeyHasher, RandomAesHash, RandomSipHash, SipHasher13};
pub use key_bytes::{KeyBytes, MaxKeyBytes, INLINE as INLINE_KEY_BYTES};
pub use limiter::{AtCapacity, KeyedLimiter};
#[cfg(all(test, loom))]
pub(crate) use lock::ShardLock;
pub use options::{KeyedOptions, WhenFull, MAX_KEYS};

#[cfg(test)]
mod tests;
