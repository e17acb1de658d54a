//! [`AnyKeyedLimiter`]: a keyed limiter of any admission-style algorithm,
//! chosen at run time from a [`LimiterSpec`] — what the language bindings
//! wrap.
//!
//! The binding-facing surface is small on purpose: build it from a spec,
//! [`KeyedOptions`] and a clock; then [`check`](AnyKeyedLimiter::check)
//! (or [`try_check`](AnyKeyedLimiter::try_check), which tells a refusal at
//! the bound apart), [`peek`](AnyKeyedLimiter::peek),
//! [`remove`](AnyKeyedLimiter::remove) and [`len`](AnyKeyedLimiter::len).
//! Keys are bytes by default ([`KeyBytes`]: up to 22 bytes inline in the
//! table, looked up by `&[u8]` without an allocation): a binding passes a
//! string's UTF-8 or a buffer as it is.

use std::borrow::Borrow;
use std::hash::Hash;

use ratekeeper_core::fixed_window::FixedWindow;
use ratekeeper_core::gcra::Gcra;
use ratekeeper_core::leaky_bucket::{LeakyBucketMeter, LeakyBucketQueue};
use ratekeeper_core::sliding_log::{LogEntry, SlidingLog};
use ratekeeper_core::sliding_window::SlidingWindow;
use ratekeeper_core::sliding_window_counter::SlidingWindowCounter;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{Decision, Error, LimiterSpec};

use super::{AtCapacity, KeyBytes, KeyedAlgorithm, KeyedLimiter, KeyedOptions, RandomSipHash, WhenFull};
use crate::any_limiter::AnyCore;
use crate::clock::{AnyClock, Clock};

/// A [`KeyedLimiter`] of any admission-style algorithm, built from a
/// [`LimiterSpec`]; keyed by bytes and on an [`AnyClock`] unless told
/// otherwise.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::keyed::{AnyKeyedLimiter, KeyedOptions};
/// use ratekeeper::{AnyClock, LimiterSpec, ManualClock};
///
/// // isAllowed(uid, action, period = 60 s, maxCount = 5), per user and action.
/// let spec = LimiterSpec::FixedWindow { limit: 5, window_micros: 60_000_000 };
/// let clock = AnyClock::from(Arc::new(ManualClock::new()));
/// let limiter: AnyKeyedLimiter = AnyKeyedLimiter::new(&spec, KeyedOptions::new(1_000_000), clock)?;
/// for _ in 0..5 {
///     assert!(limiter.check(b"user:42/post".as_slice(), 1).allowed);
/// }
/// let refused = limiter.check(b"user:42/post".as_slice(), 1);
/// assert_eq!((refused.allowed, refused.retry_after_micros), (false, 60_000_000));
/// assert!(limiter.check(b"user:42/like".as_slice(), 1).allowed);
/// assert_eq!(limiter.len(), 2);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
///
/// Its keys are hashed with SipHash-1-3 ([`RandomSipHash`]), not the
/// default [`RandomAesHash`](super::RandomAesHash): a byte string hashes as
/// its 8-byte length and then its bytes, so only keys of up to 7 bytes
/// would fit AES's one block, and the rest would pay for being buffered
/// before SipHash took them (1.14× governor's time at a thousand keys,
/// against 0.95× with SipHash directly).
#[derive(Debug)]
pub enum AnyKeyedLimiter<K = KeyBytes, C: Clock = AnyClock> {
    /// Token buckets (x/time/rate).
    TokenBucket(KeyedLimiter<K, TokenBucket, C, RandomSipHash>),
    /// GCRA (redis-cell).
    Gcra(KeyedLimiter<K, Gcra, C, RandomSipHash>),
    /// Leaky buckets as meters.
    LeakyBucketMeter(KeyedLimiter<K, LeakyBucketMeter, C, RandomSipHash>),
    /// Leaky buckets as queues.
    LeakyBucketQueue(KeyedLimiter<K, LeakyBucketQueue, C, RandomSipHash>),
    /// Fixed windows.
    FixedWindow(KeyedLimiter<K, FixedWindow, C, RandomSipHash>),
    /// Sliding windows of sub-window counters.
    SlidingWindow(KeyedLimiter<K, SlidingWindow, C, RandomSipHash>),
    /// Sliding logs (`16 × limit` bytes per key).
    SlidingLog(KeyedLimiter<K, SlidingLog<Box<[LogEntry]>>, C, RandomSipHash>),
    /// Sliding window counters.
    SlidingWindowCounter(KeyedLimiter<K, SlidingWindowCounter, C, RandomSipHash>),
}

/// One variant's limiter: the template's, on `clock`, hashed with SipHash.
fn keyed<K: Hash + Eq + Send, A: KeyedAlgorithm, C: Clock>(
    template: A,
    options: KeyedOptions,
    clock: C,
) -> Result<KeyedLimiter<K, A, C, RandomSipHash>, Error> {
    KeyedLimiter::with_clock_and_hasher(template, options, clock, RandomSipHash::new())
}

/// Runs `$body` on the inner [`KeyedLimiter`], whatever the algorithm.
macro_rules! on_inner {
    ($self:expr, $inner:ident => $body:expr) => {
        match $self {
            AnyKeyedLimiter::TokenBucket($inner) => $body,
            AnyKeyedLimiter::Gcra($inner) => $body,
            AnyKeyedLimiter::LeakyBucketMeter($inner) => $body,
            AnyKeyedLimiter::LeakyBucketQueue($inner) => $body,
            AnyKeyedLimiter::FixedWindow($inner) => $body,
            AnyKeyedLimiter::SlidingWindow($inner) => $body,
            AnyKeyedLimiter::SlidingLog($inner) => $body,
            AnyKeyedLimiter::SlidingWindowCounter($inner) => $body,
        }
    };
}

impl<K: Hash + Eq + Send, C: Clock> AnyKeyedLimiter<K, C> {
    /// A keyed limiter of the algorithm `spec` describes, created now on
    /// `clock`. Errors with the algorithm's own invalid-argument error, or on
    /// invalid options (`max_keys`, `shards`).
    pub fn new(spec: &LimiterSpec, options: KeyedOptions, clock: C) -> Result<Self, Error> {
        Ok(match AnyCore::new(spec)? {
            AnyCore::TokenBucket(t) => Self::TokenBucket(keyed(t, options, clock)?),
            AnyCore::Gcra(t) => Self::Gcra(keyed(t, options, clock)?),
            AnyCore::LeakyBucketMeter(t) => Self::LeakyBucketMeter(keyed(t, options, clock)?),
            AnyCore::LeakyBucketQueue(t) => Self::LeakyBucketQueue(keyed(t, options, clock)?),
            AnyCore::FixedWindow(t) => Self::FixedWindow(keyed(t, options, clock)?),
            AnyCore::SlidingWindow(t) => Self::SlidingWindow(keyed(t, options, clock)?),
            AnyCore::SlidingLog(t) => Self::SlidingLog(keyed(t, options, clock)?),
            AnyCore::SlidingWindowCounter(t) => Self::SlidingWindowCounter(keyed(t, options, clock)?),
        })
    }

    /// [`KeyedLimiter::check`].
    #[inline]
    pub fn check<Q>(&self, key: &Q, cost: u64) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        on_inner!(self, l => l.check(key, cost))
    }

    /// [`KeyedLimiter::allow`].
    #[inline]
    pub fn allow<Q>(&self, key: &Q, cost: u64) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        on_inner!(self, l => l.allow(key, cost))
    }

    /// [`KeyedLimiter::try_check`].
    #[inline]
    pub fn try_check<Q>(&self, key: &Q, cost: u64) -> Result<Decision, AtCapacity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<K>,
    {
        on_inner!(self, l => l.try_check(key, cost))
    }

    /// [`KeyedLimiter::peek`].
    pub fn peek<Q>(&self, key: &Q, cost: u64) -> Decision
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        on_inner!(self, l => l.peek(key, cost))
    }

    /// [`KeyedLimiter::try_peek`].
    pub fn try_peek<Q>(&self, key: &Q, cost: u64) -> Result<Decision, AtCapacity>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        on_inner!(self, l => l.try_peek(key, cost))
    }

    /// [`KeyedLimiter::remove`].
    pub fn remove<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        on_inner!(self, l => l.remove(key))
    }

    /// [`KeyedLimiter::evict_full`].
    pub fn evict_full(&self) -> usize {
        on_inner!(self, l => l.evict_full())
    }
}

impl<K, C: Clock> AnyKeyedLimiter<K, C> {
    /// [`KeyedLimiter::len`].
    pub fn len(&self) -> usize {
        on_inner!(self, l => l.len())
    }

    /// [`KeyedLimiter::is_empty`].
    pub fn is_empty(&self) -> bool {
        on_inner!(self, l => l.is_empty())
    }

    /// [`KeyedLimiter::max_keys`].
    pub fn max_keys(&self) -> usize {
        on_inner!(self, l => l.max_keys())
    }

    /// [`KeyedLimiter::when_full`].
    pub fn when_full(&self) -> WhenFull {
        on_inner!(self, l => l.when_full())
    }

    /// The algorithm's name, as [`LimiterSpec::algorithm`] spells it.
    pub fn algorithm(&self) -> &'static str {
        on_inner!(self, l => l.algorithm())
    }

    /// [`KeyedLimiter::refused_new_keys`].
    pub fn refused_new_keys(&self) -> u64 {
        on_inner!(self, l => l.refused_new_keys())
    }

    /// [`KeyedLimiter::forced_evictions`].
    pub fn forced_evictions(&self) -> u64 {
        on_inner!(self, l => l.forced_evictions())
    }

    /// [`KeyedLimiter::clock`].
    pub fn clock(&self) -> &C {
        on_inner!(self, l => l.clock())
    }
}
