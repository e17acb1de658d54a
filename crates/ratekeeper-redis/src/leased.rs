//! [`RedisLeasedLimiter`]: leased mode, where each node takes a batch of
//! units from the shared limiter and spends them locally (docs/redis.md,
//! "The modes").
//!
//! One round trip to the shared limiter (GCRA or the token bucket, in
//! Redis) takes up to `batch` units at once — a *lease* — and the node then
//! admits requests from it locally, without a round trip, until it runs
//! out or the lease expires. Every unit a node admits was first taken from
//! the shared limiter, so the total never exceeds what one limiter admits.
//! What changes is *when*:
//!
//! * **Burst shift.** A unit taken at time `t` may be spent until `t + L`
//!   (`L`, the lease's lifetime). So in any interval of length `T` the
//!   nodes together admit at most `rate × (T + L) + burst` units — the
//!   shared limiter's bound, stretched by `L`. With `L` = 100 ms and
//!   `T` = 1 s, at most 10% above the rate, plus the burst.
//! * **Under-admission.** Units still leased when a lease expires are lost:
//!   at most `batch` per node per lease lifetime. Leases therefore suit
//!   many requests per key per node; for a rare key, use exact mode.
//!
//! A refusal costs a round trip (the shared limiter had too little left) and
//! carries the shared limiter's retry-after; an admission from a lease
//! carries the node's own count of units left in the lease as `remaining`.
//!
//! ## Peek and remove
//!
//! [`peek`](RedisLeasedLimiter::peek) answers what
//! [`check`](RedisLeasedLimiter::check) would answer on this node, taking
//! nothing: from this node's lease when it holds enough (no round trip),
//! else from Redis's shared state plus what this node holds — the lease
//! the check would take, computed by the same script without writing.
//! Other nodes' leases are not seen: what they hold was taken from the
//! shared state already.
//!
//! [`remove`](RedisLeasedLimiter::remove) deletes the key's shared state
//! and drops this node's lease on it. Other nodes keep theirs and spend
//! what they hold: after a reset, each other node may still admit up to
//! `batch` units for the key, within the lifetime of the lease it holds
//! (`L` at most) — on top of the whole limit the reset gave back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{Argument, Clock, Decision, LimiterSpec};

use crate::error::Error;
use crate::exact::RedisLimiter;
use crate::store::RedisStore;
use ratekeeper::Algorithm;

/// At most this many keys hold a lease at once per limiter; beyond it the
/// expired leases are dropped, and if none has expired the request goes to
/// Redis without leasing.
const MAX_LEASES: usize = 100_000;

/// A limiter in Redis whose units each node takes in batches and spends
/// locally. Cheap to clone; safe to share between threads.
#[derive(Clone)]
pub struct RedisLeasedLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    shared: RedisLimiter,
    batch: u64,
    lease_micros: i64,
    leases: Mutex<HashMap<Vec<u8>, Lease>>,
}

/// Units a node took for a key: `left` of them, spendable until `expires`
/// (client clock, µs).
#[derive(Debug, Clone, Copy)]
struct Lease {
    left: u64,
    expires: i64,
}

impl std::fmt::Debug for RedisLeasedLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLeasedLimiter")
            .field("shared", &self.inner.shared)
            .field("batch", &self.inner.batch)
            .field("lease_micros", &self.inner.lease_micros)
            .finish_non_exhaustive()
    }
}

impl RedisLeasedLimiter {
    /// A leased limiter named `name` over `spec` (GCRA or the token bucket),
    /// taking up to `batch` units per round trip and spending them within
    /// `lease`. Errors when `batch` is 0 or above the limit, or `lease` is
    /// zero.
    pub fn new(store: &RedisStore, name: &str, spec: LimiterSpec, batch: u64, lease: Duration) -> Result<Self, Error> {
        let shared = RedisLimiter::new(store, name, spec)?;
        Self::wrap(shared, batch, lease)
    }

    /// Tests only: leases and the scripts run on this manual clock.
    #[cfg(feature = "test-clock")]
    pub fn with_test_clock(
        store: &RedisStore,
        name: &str,
        spec: LimiterSpec,
        batch: u64,
        lease: Duration,
        clock: Arc<ratekeeper::ManualClock>,
    ) -> Result<Self, Error> {
        Self::wrap(RedisLimiter::with_test_clock(store, name, spec, clock)?, batch, lease)
    }

    fn wrap(shared: RedisLimiter, batch: u64, lease: Duration) -> Result<Self, Error> {
        if !matches!(shared.algorithm(), Algorithm::Gcra | Algorithm::TokenBucket) {
            return Err(Error::Unsupported("leased mode runs on GCRA and the token bucket"));
        }
        if batch == 0 || batch > shared.limit() {
            return Err(ratekeeper::Error::invalid_uint(Argument::Batch, batch).into());
        }
        let lease_micros = ratekeeper::micros_from_duration(Argument::Lease, lease)?;
        if lease_micros <= 0 {
            return Err(ratekeeper::Error::invalid_int(Argument::Lease, lease_micros).into());
        }
        let shared = shared.remember_refusals(false);
        Ok(RedisLeasedLimiter {
            inner: Arc::new(Inner { shared, batch, lease_micros, leases: Mutex::new(HashMap::new()) }),
        })
    }

    /// Keys of at most `bound` bytes (default [`MaxKeyBytes::DEFAULT`],
    /// 256); a longer one is refused before anything is sent, as
    /// [`RedisLimiter::max_key_bytes`] does.
    pub fn max_key_bytes(self, bound: MaxKeyBytes) -> Self {
        let _ = self.inner.shared.clone().max_key_bytes(bound);
        self
    }

    /// The longest key this limiter takes, in bytes.
    pub fn key_bytes_bound(&self) -> MaxKeyBytes {
        self.inner.shared.key_bytes_bound()
    }

    /// `key` if this limiter takes it, else the error naming `key`, as
    /// [`RedisLimiter::checked_key`].
    pub fn checked_key<'k>(&self, key: &'k [u8]) -> Result<&'k [u8], Error> {
        self.inner.shared.checked_key(key)
    }

    /// Admits `cost` units for `key` (any bytes; text is its UTF-8) from
    /// this node's lease, or takes a new lease (one round trip) when it
    /// holds too few.
    pub async fn check_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        self.check_key(key.as_ref(), cost).await
    }

    async fn check_key(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let inner = &self.inner;
        let key = inner.shared.checked_key(key)?;
        let (now, need) = loop {
            if let Some(decision) = self.spend(key, cost) {
                return Ok(decision);
            }
            let now = inner.shared.clock().now_micros();
            match self.valid_lease(key, now) {
                Some(lease) if lease.left >= cost => {}
                lease => break (now, cost - lease.map_or(0, |l| l.left)),
            }
            // Another thread's lease came in after `spend` looked: spend
            // from it. (Taking `cost - left` here underflowed: a panic in a
            // debug build, a lease of 2^64 units asked for in a release one.)
        };
        let (decision, granted) = inner.shared.lease_async(key, need, inner.batch.max(need)).await?;
        if granted < need || !decision.allowed {
            return Ok(decision);
        }
        let mut leases = inner.leases.lock().unwrap_or_else(|p| p.into_inner());
        // Units leased earlier keep their own deadline, which is sooner.
        let expires = match leases.get(key) {
            Some(old) if old.expires > now && old.left > 0 => old.expires,
            _ => now.saturating_add(inner.lease_micros),
        };
        let old_left = leases.get(key).filter(|l| l.expires > now).map_or(0, |l| l.left);
        let left = (old_left + granted).saturating_sub(cost);
        if leases.len() >= MAX_LEASES && !leases.contains_key(key) {
            leases.retain(|_, l| l.expires > now && l.left > 0);
        }
        if left > 0 && (leases.len() < MAX_LEASES || leases.contains_key(key)) {
            leases.insert(key.to_vec(), Lease { left, expires });
        } else {
            leases.remove(key);
        }
        Ok(Decision { remaining: left, ..decision })
    }

    /// [`check_async`](Self::check_async) with a callback, called on the
    /// crate's runtime thread, or at once on this one when the lease decides
    /// (or the key is too long).
    pub fn check_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<Decision, Error>) + Send + 'static,
    ) {
        let key = key.into();
        match self.inner.shared.checked_key(&key) {
            Err(e) => return callback(Err(e)),
            Ok(key) => {
                if let Some(decision) = self.spend(key, cost) {
                    return callback(Ok(decision));
                }
            }
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.check_key(&key, cost).await }, callback);
    }

    /// Blocking [`check_async`](Self::check_async).
    pub fn check(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        let key = self.inner.shared.checked_key(key.as_ref())?;
        if let Some(decision) = self.spend(key, cost) {
            return Ok(decision);
        }
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.check_key(&key, cost).await })
    }

    /// The decision [`check_async`](Self::check_async) would make now on
    /// this node, taking nothing (see the module docs): from this node's
    /// lease when it holds `cost`, else one round trip that computes the
    /// lease the check would take without taking it.
    pub async fn peek_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        self.peek_key(key.as_ref(), cost).await
    }

    async fn peek_key(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let inner = &self.inner;
        let key = inner.shared.checked_key(key)?;
        if let Some(decision) = self.peek_lease(key, cost) {
            return Ok(decision);
        }
        let now = inner.shared.clock().now_micros();
        let held = self.valid_lease(key, now).map_or(0, |l| l.left);
        if held >= cost {
            // Another thread's lease came in after `peek_lease` looked.
            return Ok(self.lease_decision(held - cost));
        }
        let need = cost - held;
        let (decision, granted) = inner.shared.peek_lease_async(key, need, inner.batch.max(need)).await?;
        if granted < need || !decision.allowed {
            return Ok(decision);
        }
        Ok(Decision { remaining: (held + granted).saturating_sub(cost), ..decision })
    }

    /// [`peek_async`](Self::peek_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn peek_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<Decision, Error>) + Send + 'static,
    ) {
        let key = key.into();
        match self.inner.shared.checked_key(&key) {
            Err(e) => return callback(Err(e)),
            Ok(key) => {
                if let Some(decision) = self.peek_lease(key, cost) {
                    return callback(Ok(decision));
                }
            }
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.peek_key(&key, cost).await }, callback);
    }

    /// Blocking [`peek_async`](Self::peek_async).
    pub fn peek(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        let key = self.inner.shared.checked_key(key.as_ref())?;
        if let Some(decision) = self.peek_lease(key, cost) {
            return Ok(decision);
        }
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.peek_key(&key, cost).await })
    }

    /// Forgets `key`: deletes its shared state in Redis (atomically) and
    /// drops this node's lease on it; whether Redis held a state. Other
    /// nodes spend the leases they hold (see the module docs for the
    /// bound). A key never seen is fine (`false`).
    pub async fn remove_async(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        self.remove_key(key.as_ref()).await
    }

    async fn remove_key(&self, key: &[u8]) -> Result<bool, Error> {
        let key = self.inner.shared.checked_key(key)?;
        self.drop_lease(key);
        let removed = self.inner.shared.remove_async(key).await;
        // A lease taken by a check in flight meanwhile came from the state
        // before the reset: drop it too.
        self.drop_lease(key);
        removed
    }

    fn drop_lease(&self, key: &[u8]) {
        self.inner.leases.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }

    /// Blocking [`remove_async`](Self::remove_async).
    pub fn remove(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        let key = self.inner.shared.checked_key(key.as_ref())?;
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.remove_key(&key).await })
    }

    /// [`remove_async`](Self::remove_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn remove_with(&self, key: impl Into<Vec<u8>>, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let key = key.into();
        if let Err(e) = self.inner.shared.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.remove_key(&key).await }, callback);
    }

    /// What [`spend`](Self::spend) would answer, spending nothing.
    fn peek_lease(&self, key: &[u8], cost: u64) -> Option<Decision> {
        let now = self.inner.shared.clock().now_micros();
        let lease = self.valid_lease(key, now).filter(|l| l.left >= cost)?;
        Some(self.lease_decision(lease.left - cost))
    }

    fn valid_lease(&self, key: &[u8], now: i64) -> Option<Lease> {
        let leases = self.inner.leases.lock().unwrap_or_else(|p| p.into_inner());
        leases.get(key).copied().filter(|l| l.expires > now)
    }

    /// Spends `cost` units of this node's lease on `key`, if it holds enough.
    fn spend(&self, key: &[u8], cost: u64) -> Option<Decision> {
        let inner = &self.inner;
        let now = inner.shared.clock().now_micros();
        let mut leases = inner.leases.lock().unwrap_or_else(|p| p.into_inner());
        let lease = leases.get_mut(key)?;
        if lease.expires <= now || lease.left < cost {
            return None;
        }
        lease.left -= cost;
        Some(self.lease_decision(lease.left))
    }

    /// An admission from this node's lease, `left` units left in it.
    fn lease_decision(&self, left: u64) -> Decision {
        Decision {
            allowed: true,
            limit: self.inner.shared.limit(),
            remaining: left,
            retry_after_micros: 0,
            reset_after_micros: 0,
            wait_micros: 0,
            window_micros: 0,
        }
    }
}
