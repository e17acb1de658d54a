//! [`KeyedOptions`] and [`WhenFull`]: what a keyed limiter is asked for —
//! its bound on keys, what it does at that bound, its shard count, the
//! longest byte key — and the check of those values, made once when a
//! limiter is built so that no decision needs to make it again.

use ratekeeper_core::{Argument, Error};

use super::key_bytes::MaxKeyBytes;
use super::table;

/// The largest `max_keys`.
pub const MAX_KEYS: usize = 1 << 40;

/// The most shards.
const MAX_SHARDS: usize = 1 << 16;

/// What a keyed limiter does when a new key arrives at a shard that holds
/// its share of `max_keys` and no key there is full. See the
/// [module docs](super#bounded-memory).
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

    /// The longest byte key an [`AnyKeyedLimiter`](super::AnyKeyedLimiter)
    /// takes (a [`KeyedLimiter`](super::KeyedLimiter)'s keys are of a type of
    /// your own, which bounds them).
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
    pub(super) fn shard_count(&self) -> Result<usize, Error> {
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
