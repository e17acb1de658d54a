//! [`AnyKeyedLimiter`]: a keyed limiter of any admission-style algorithm,
//! chosen at run time from a [`LimiterSpec`] — what the language bindings
//! wrap.
//!
//! The binding-facing surface is small on purpose: build it from a spec,
//! [`KeyedOptions`] and a clock; then [`check`](AnyKeyedLimiter::check)
//! (or [`try_check`](AnyKeyedLimiter::try_check), which tells a refusal at
//! the bound apart), [`peek`](AnyKeyedLimiter::peek),
//! [`refund`](AnyKeyedLimiter::refund), [`remove`](AnyKeyedLimiter::remove) and [`len`](AnyKeyedLimiter::len).
//! Keys are bytes ([`KeyBytes`]: up to 22 bytes inline in the table,
//! looked up by `&[u8]` without an allocation): a binding passes a string's
//! UTF-8 or a buffer as it is. A key longer than the limiter's
//! [`MaxKeyBytes`] is refused with an error naming `key`, and nothing is
//! stored: what a key can cost in memory is bounded, whoever sends it.

use ratekeeper_core::fixed_window::FixedWindow;
use ratekeeper_core::gcra::Gcra;
use ratekeeper_core::leaky_bucket::{LeakyBucketMeter, LeakyBucketQueue};
use ratekeeper_core::sliding_log::SlidingLog;
use ratekeeper_core::sliding_window::SlidingWindow;
use ratekeeper_core::sliding_window_counter::SlidingWindowCounter;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{Decision, Error, LimiterSpec};

use super::{AtCapacity, KeyBytes, KeyedAlgorithm, KeyedLimiter, KeyedOptions, MaxKeyBytes, RandomSipHash, WhenFull};
use crate::any_limiter::AnyCore;
use crate::clock::{AnyClock, Clock};
use crate::windows::HeapLogStorage;

/// A [`KeyedLimiter`] of any admission-style algorithm, built from a
/// [`LimiterSpec`], keyed by byte strings of at most
/// [`KeyedOptions::max_key_bytes`], on an [`AnyClock`] unless told
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
///     assert!(limiter.check(b"user:42/post", 1)?.allowed);
/// }
/// let refused = limiter.check(b"user:42/post", 1)?;
/// assert_eq!((refused.allowed, refused.retry_after_micros), (false, 60_000_000));
/// assert!(limiter.check(b"user:42/like", 1)?.allowed);
/// assert_eq!(limiter.len(), 2);
/// // Keys are at most 256 bytes unless the options say otherwise.
/// assert!(limiter.check(&[b'k'; 257], 1).is_err());
/// # Ok::<(), ratekeeper::Error>(())
/// ```
///
/// Its keys are hashed with SipHash-1-3 ([`RandomSipHash`]), not the
/// default [`RandomAesHash`](super::RandomAesHash): a byte string hashes as
/// its 8-byte length and then its bytes, so only keys of up to 7 bytes
/// would fit AES's one block, and the rest would pay for being buffered
/// before SipHash took them (BENCHMARKS.md, the `keyed` benchmark's
/// *Earlier measurements*).
#[derive(Debug)]
pub struct AnyKeyedLimiter<C: Clock = AnyClock> {
    max_key_bytes: MaxKeyBytes,
    inner: ByAlgorithm<C>,
}

/// Declares `ByAlgorithm`, the keyed limiter of each of the registry's
/// algorithms (each variant named as its `Algorithm` and its `AnyCore`),
/// from one list of their templates' types, with the dispatch every method
/// needs: `on_inner!` and the construction from an `AnyCore` template.
macro_rules! by_algorithm {
    ($($variant:ident($template:ty),)*) => {
        /// The keyed limiter of each algorithm.
        #[derive(Debug)]
        enum ByAlgorithm<C: Clock> {
            $($variant(KeyedLimiter<KeyBytes, $template, C, RandomSipHash>),)*
        }

        impl<C: Clock> ByAlgorithm<C> {
            /// The keyed limiter whose template is `template`.
            fn new(template: AnyCore, options: KeyedOptions, clock: C) -> Result<Self, Error> {
                Ok(match template {
                    $(AnyCore::$variant(t) => ByAlgorithm::$variant(keyed(t, options, clock)?),)*
                })
            }
        }

        /// Runs `$body` on the inner [`KeyedLimiter`], whatever the algorithm.
        macro_rules! on_inner {
            ($self:expr, $inner:ident => $body:expr) => {
                match &$self.inner {
                    $(ByAlgorithm::$variant($inner) => $body,)*
                }
            };
        }
    };
}

by_algorithm! {
    TokenBucket(TokenBucket),
    Gcra(Gcra),
    LeakyBucketMeter(LeakyBucketMeter),
    LeakyBucketQueue(LeakyBucketQueue),
    FixedWindow(FixedWindow),
    SlidingWindow(SlidingWindow),
    SlidingLog(SlidingLog<HeapLogStorage>),
    SlidingWindowCounter(SlidingWindowCounter),
}

/// One variant's limiter: the template's, on `clock`, hashed with SipHash.
fn keyed<A: KeyedAlgorithm, C: Clock>(
    template: A,
    options: KeyedOptions,
    clock: C,
) -> Result<KeyedLimiter<KeyBytes, A, C, RandomSipHash>, Error> {
    KeyedLimiter::with_clock_and_hasher(template, options, clock, RandomSipHash::new())
}

impl<C: Clock> AnyKeyedLimiter<C> {
    /// A keyed limiter of the algorithm `spec` describes, created now on
    /// `clock`. Errors with the algorithm's own invalid-argument error, or on
    /// invalid options (`max_keys`, `shards`).
    pub fn new(spec: &LimiterSpec, options: KeyedOptions, clock: C) -> Result<Self, Error> {
        let inner = ByAlgorithm::new(AnyCore::new(spec)?, options, clock)?;
        Ok(AnyKeyedLimiter { max_key_bytes: options.key_bytes_bound(), inner })
    }

    /// [`KeyedLimiter::check`]; a key longer than
    /// [`max_key_bytes`](Self::max_key_bytes) is an error, and changes
    /// nothing.
    #[inline]
    pub fn check(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.check(key, cost)))
    }

    /// [`KeyedLimiter::allow`]; a key too long is an error.
    #[inline]
    pub fn allow(&self, key: &[u8], cost: u64) -> Result<bool, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.allow(key, cost)))
    }

    /// [`KeyedLimiter::try_check`]; a key too long is an error (the outer
    /// one).
    #[inline]
    pub fn try_check(&self, key: &[u8], cost: u64) -> Result<Result<Decision, AtCapacity>, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.try_check(key, cost)))
    }

    /// [`KeyedLimiter::peek`]; a key too long is an error, as for
    /// [`check`](Self::check).
    pub fn peek(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.peek(key, cost)))
    }

    /// [`KeyedLimiter::try_peek`]; a key too long is an error (the outer
    /// one).
    pub fn try_peek(&self, key: &[u8], cost: u64) -> Result<Result<Decision, AtCapacity>, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.try_peek(key, cost)))
    }

    /// [`KeyedLimiter::refund`]; a key too long is an error, as for
    /// [`check`](Self::check).
    pub fn refund(&self, key: &[u8], cost: u64) -> Result<bool, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.refund(key, cost)))
    }

    /// [`KeyedLimiter::remove`]; a key too long is an error, as for
    /// [`check`](Self::check).
    pub fn remove(&self, key: &[u8]) -> Result<bool, Error> {
        let key = self.max_key_bytes.check(key)?;
        Ok(on_inner!(self, l => l.remove(key)))
    }

    /// [`KeyedLimiter::evict_full`].
    pub fn evict_full(&self) -> usize {
        on_inner!(self, l => l.evict_full())
    }

    /// The longest key taken, in bytes.
    pub fn max_key_bytes(&self) -> usize {
        self.max_key_bytes.get()
    }

    /// The most bytes this limiter ever holds on the heap, its keys
    /// included: [`KeyedLimiter::max_bytes`], and `max_keys` keys of
    /// `max_key_bytes` (a key longer than [`INLINE_KEY_BYTES`] is a heap
    /// allocation of its length; shorter ones live in their slots). The
    /// allocator's own overhead per allocation (some 16 bytes with glibc's
    /// malloc, for each long key and each sliding log) comes on top.
    ///
    /// [`INLINE_KEY_BYTES`]: super::INLINE_KEY_BYTES
    pub fn max_bytes(&self) -> usize {
        let key = if self.max_key_bytes.get() > super::INLINE_KEY_BYTES { self.max_key_bytes.get() } else { 0 };
        on_inner!(self, l => l.max_bytes().saturating_add(l.max_keys().saturating_mul(key)))
    }

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
