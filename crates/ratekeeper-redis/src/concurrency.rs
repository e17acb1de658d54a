//! [`RedisConcurrencyLimiter`]: one concurrency limit shared by many
//! processes (Sentinel's cluster concurrency tokens, Hystrix's semaphore
//! across processes), its permits held as leases in Redis.
//!
//! A holder acquires a [`ConcurrencyLease`] — a unique id, worth some
//! permits, expiring `lease_ttl` after it was acquired or last renewed, by
//! the server's clock — or is refused. It gives the lease back with
//! [`release`](RedisConcurrencyLimiter::release), which answers `true`
//! exactly once: a second release, or one after the lease expired, answers
//! `false` and frees nothing. A holder that works longer than the TTL
//! heartbeats with [`renew`](RedisConcurrencyLimiter::renew).
//!
//! ## Dead holders
//!
//! A holder that dies (`kill -9`, a lost host, a partition) never releases.
//! Its lease still counts until its expiry — the holder may be alive and
//! working, only cut off — and from then on it is gone: every script run
//! first removes the leases whose expiry has come (`lua/concurrency.lua`),
//! so no process has to be alive to reclaim them, and the next acquire
//! after the expiry sees the permits free. A lease may be released or
//! renewed until its expiry, never after, even if no script ran meanwhile.
//!
//! ## What is guaranteed
//!
//! At no server time do the live leases hold more than `limit` permits
//! (every acquire is one atomic script; processes must agree on `limit`, as
//! on any shared limiter's parameters). A holder is inside that bound as
//! long as it works within its lease: one that outlives its lease without
//! renewing (a process paused longer than the TTL) is no longer counted,
//! and its permits may go to someone else — the price of reclaiming dead
//! holders' permits without any process watching. Choose the TTL above the
//! longest pause a live holder may see, or renew well within it.
//!
//! ## Keys
//!
//! A limiter named `N` keeps a sorted set `rk:{N}:leases` (lease id →
//! expiry) and a hash `rk:{N}:lease-permits` (lease id → permits, and their
//! sum), under one hash tag: one Redis Cluster slot. Both expire when the
//! last lease does, and are deleted when the last one is released.
//!
//! ## Peek and reset
//!
//! [`peek`](RedisConcurrencyLimiter::peek) answers what
//! [`try_acquire`](RedisConcurrencyLimiter::try_acquire) would answer for
//! some permits — allowed, the permits left (`remaining`), retry-after and
//! reset-after — taking no lease and writing nothing: leases whose expiry
//! has come are counted out, not reclaimed.
//!
//! [`reset`](RedisConcurrencyLimiter::reset) deletes every lease at once:
//! the whole limit is free again. The holders are not told: each goes on
//! working, and its release or renewal answers `false` (unknown lease). Until
//! they finish, up to the limit more permits are in use than the limit (the
//! holders' and the new ones'): a reset is for a limiter whose holders are
//! known to be gone (a deployment's clean-up, a test), not a way to take
//! permits back from live ones.
//!
//! ## When Redis cannot answer
//!
//! [`WhenUnavailable::Error`] (the default) returns the error;
//! [`WhenUnavailable::FailClosed`] refuses every acquire;
//! [`WhenUnavailable::FailOpen`] admits with a lease kept in this process
//! only ([`ConcurrencyLease::is_recorded`] is `false`), which counts
//! against nothing and releases locally. `LocalShare` does not apply (a
//! concurrency limit has no per-node share to fall back on). Releases and
//! renewals return the error whatever the policy: a lease that could not
//! be released expires by itself. An acquire that fails without an answer
//! (a timeout) may still take its lease on the server, even after the call
//! gave up: it is released in the background, and released again while
//! that finds nothing (the script may arrive later), backing off from the
//! store's timeout until the lease would have expired.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratekeeper::{AnyClock, Argument, Decision, NEVER};

use crate::error::Error;
use crate::exact::{leads, WhenUnavailable};
use crate::keys;
use crate::options::RedisOption;
use crate::scripts::{self, TimeSource};
use crate::store::RedisStore;

/// A permit-holding lease of a [`RedisConcurrencyLimiter`]: give it back
/// with [`release`](RedisConcurrencyLimiter::release), once. Clones are the
/// same lease.
#[derive(Debug, Clone)]
pub struct ConcurrencyLease {
    id: String,
    permits: u64,
    /// For a lease admitted while Redis could not answer
    /// ([`WhenUnavailable::FailOpen`]): whether it was released, here.
    unrecorded: Option<Arc<AtomicBool>>,
}

impl ConcurrencyLease {
    /// Its id in Redis (hex digits, unique between processes).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The permits it holds.
    pub fn permits(&self) -> u64 {
        self.permits
    }

    /// Whether Redis holds it: `false` for a lease admitted by
    /// [`WhenUnavailable::FailOpen`] while Redis could not answer.
    pub fn is_recorded(&self) -> bool {
        self.unrecorded.is_none()
    }
}

/// A limit of permits held at once, shared through Redis by every process
/// using the same name. Cheap to clone; safe to share between threads.
/// Every operation has a blocking form, an `_async` form and a `_with`
/// (callback) form.
#[derive(Clone)]
pub struct RedisConcurrencyLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    store: RedisStore,
    name: String,
    keys: Vec<String>,
    limit: u64,
    lease_ttl: Duration,
    script: Arc<redis::Script>,
    when_unavailable: Mutex<WhenUnavailable>,
    /// The scripts' clock in tests.
    #[cfg_attr(not(feature = "test-clock"), allow(dead_code))]
    clock: AnyClock,
    #[cfg_attr(not(feature = "test-clock"), allow(dead_code))]
    time: TimeSource,
}

impl std::fmt::Debug for RedisConcurrencyLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConcurrencyLimiter")
            .field("name", &self.inner.name)
            .field("limit", &self.inner.limit)
            .field("lease_ttl", &self.inner.lease_ttl)
            .finish_non_exhaustive()
    }
}

/// What a script run answered, or that it failed.
type Reply = Result<Vec<i64>, Error>;

impl RedisConcurrencyLimiter {
    /// A limit of `limit` permits held at once (1 to `i64::MAX`: the core's
    /// [`Argument::Limit`]; exact below 2^53) shared by every process that
    /// uses `name` on this Redis, each lease lasting `lease_ttl` after it
    /// was acquired or renewed (1 ms to a day: [`RedisOption::LeaseTtl`]).
    /// Nothing is sent to Redis until the first acquire.
    pub fn new(store: &RedisStore, name: &str, limit: u64, lease_ttl: Duration) -> Result<Self, Error> {
        Self::build(store, name, limit, lease_ttl, TimeSource::Server, AnyClock::default())
    }

    /// Tests only: the scripts read the time from this manual clock.
    #[cfg(feature = "test-clock")]
    pub fn with_test_clock(
        store: &RedisStore,
        name: &str,
        limit: u64,
        lease_ttl: Duration,
        clock: Arc<ratekeeper::ManualClock>,
    ) -> Result<Self, Error> {
        Self::build(store, name, limit, lease_ttl, TimeSource::Argument, AnyClock::Manual(clock))
    }

    fn build(
        store: &RedisStore,
        name: &str,
        limit: u64,
        lease_ttl: Duration,
        time: TimeSource,
        clock: AnyClock,
    ) -> Result<Self, Error> {
        if limit == 0 || limit > i64::MAX as u64 {
            return Err(ratekeeper::Error::invalid_uint(Argument::Limit, limit).into());
        }
        let lease_ttl = RedisOption::LeaseTtl.check(lease_ttl)?;
        Ok(RedisConcurrencyLimiter {
            inner: Arc::new(Inner {
                store: store.clone(),
                name: name.to_owned(),
                keys: vec![keys::state_key(name, "leases", None), keys::state_key(name, "lease-permits", None)],
                limit,
                lease_ttl,
                script: Arc::new(scripts::concurrency(time)),
                when_unavailable: Mutex::new(WhenUnavailable::Error),
                clock,
                time,
            }),
        })
    }

    /// What an acquire does when Redis cannot answer (see the module docs);
    /// [`WhenUnavailable::LocalShare`] is [`Error::Unsupported`].
    pub fn when_unavailable(self, policy: WhenUnavailable) -> Result<Self, Error> {
        if policy == WhenUnavailable::LocalShare {
            return Err(Error::Unsupported("a concurrency limit has no local share to fall back on"));
        }
        *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) = policy;
        Ok(self)
    }

    /// The most permits held at once.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    /// How long a lease lasts after it was acquired or renewed.
    pub fn lease_ttl(&self) -> Duration {
        self.inner.lease_ttl
    }

    /// The name processes share the limit under.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The Redis keys of the limiter's state: the sorted set of leases and
    /// the hash of their permits.
    pub fn keys(&self) -> (&str, &str) {
        (&self.inner.keys[0], &self.inner.keys[1])
    }

    /// Acquires a lease on `permits` (1 to 2^31 − 1, Guava's
    /// [`Argument::Permits`]) if the live leases leave room: the decision,
    /// and the lease when admitted. A refusal's `retry_after_micros` is how
    /// long until enough leases expire if none is released or renewed
    /// ([`NEVER`] for more permits than the limit); `reset_after_micros`
    /// until the last lease expires; `remaining`, the permits left.
    pub async fn try_acquire_async(&self, permits: u64) -> Result<(Decision, Option<ConcurrencyLease>), Error> {
        check_permits(permits)?;
        let id = lease_id();
        let reply = self.run("acquire", &id, permits).await;
        self.acquired(id, permits, reply)
    }

    /// Blocking [`try_acquire_async`](Self::try_acquire_async).
    pub fn try_acquire(&self, permits: u64) -> Result<(Decision, Option<ConcurrencyLease>), Error> {
        check_permits(permits)?;
        let this = self.clone();
        RedisStore::block_on(async move { this.try_acquire_async(permits).await })
    }

    /// [`try_acquire_async`](Self::try_acquire_async) with a callback, on
    /// the crate's runtime thread (a bad `permits`: at once, on this one).
    pub fn try_acquire_with(
        &self,
        permits: u64,
        callback: impl FnOnce(Result<(Decision, Option<ConcurrencyLease>), Error>) + Send + 'static,
    ) {
        if let Err(e) = check_permits(permits) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.try_acquire_async(permits).await }, callback);
    }

    /// Gives `lease` back: `true` if this released it, `false` if it was
    /// released before or had expired (nothing freed then).
    pub async fn release_async(&self, lease: &ConcurrencyLease) -> Result<bool, Error> {
        if let Some(released) = &lease.unrecorded {
            return Ok(!released.swap(true, Ordering::AcqRel));
        }
        self.flag("release", &lease.id).await
    }

    /// Blocking [`release_async`](Self::release_async).
    pub fn release(&self, lease: &ConcurrencyLease) -> Result<bool, Error> {
        let (this, lease) = (self.clone(), lease.clone());
        RedisStore::block_on(async move { this.release_async(&lease).await })
    }

    /// [`release_async`](Self::release_async) with a callback, on the
    /// crate's runtime thread.
    pub fn release_with(&self, lease: &ConcurrencyLease, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let (this, lease) = (self.clone(), lease.clone());
        RedisStore::spawn_with(async move { this.release_async(&lease).await }, callback);
    }

    /// Extends a live `lease` to `lease_ttl` from now (the server's):
    /// `true`, or `false` if it was released or had expired — then it
    /// holds nothing, and the holder should stop or acquire again. (A
    /// lease Redis does not hold, [`ConcurrencyLease::is_recorded`]: `true`
    /// until released.)
    pub async fn renew_async(&self, lease: &ConcurrencyLease) -> Result<bool, Error> {
        if let Some(released) = &lease.unrecorded {
            return Ok(!released.load(Ordering::Acquire));
        }
        self.flag("renew", &lease.id).await
    }

    /// Blocking [`renew_async`](Self::renew_async).
    pub fn renew(&self, lease: &ConcurrencyLease) -> Result<bool, Error> {
        let (this, lease) = (self.clone(), lease.clone());
        RedisStore::block_on(async move { this.renew_async(&lease).await })
    }

    /// [`renew_async`](Self::renew_async) with a callback, on the crate's
    /// runtime thread.
    pub fn renew_with(&self, lease: &ConcurrencyLease, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let (this, lease) = (self.clone(), lease.clone());
        RedisStore::spawn_with(async move { this.renew_async(&lease).await }, callback);
    }

    /// The permits the live leases hold now (expired ones reclaimed first).
    pub async fn held_async(&self) -> Result<u64, Error> {
        let reply = self.run("held", "-", 0).await?;
        Ok(field(&reply, 0)?.max(0) as u64)
    }

    /// Blocking [`held_async`](Self::held_async).
    pub fn held(&self) -> Result<u64, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.held_async().await })
    }

    /// The decision [`try_acquire_async`](Self::try_acquire_async) would
    /// make for `permits` now, taking nothing (see the module docs). When
    /// Redis cannot answer, the policy's decision (no lease), as for an
    /// acquire.
    pub async fn peek_async(&self, permits: u64) -> Result<Decision, Error> {
        check_permits(permits)?;
        let reply = match self.run("peek", "-", permits).await {
            // No lease to give back (`acquired` would try to).
            Err(e) if e.is_unavailability() => return self.unavailable(e, permits).map(|(decision, _)| decision),
            reply => reply,
        };
        self.acquired(String::new(), permits, reply).map(|(decision, _)| decision)
    }

    /// Blocking [`peek_async`](Self::peek_async).
    pub fn peek(&self, permits: u64) -> Result<Decision, Error> {
        check_permits(permits)?;
        let this = self.clone();
        RedisStore::block_on(async move { this.peek_async(permits).await })
    }

    /// [`peek_async`](Self::peek_async) with a callback, on the crate's
    /// runtime thread (a bad `permits`: at once, on this one).
    pub fn peek_with(&self, permits: u64, callback: impl FnOnce(Result<Decision, Error>) + Send + 'static) {
        if let Err(e) = check_permits(permits) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.peek_async(permits).await }, callback);
    }

    /// Deletes every lease (see the module docs: the holders are not
    /// told): whether there was any state.
    pub async fn reset_async(&self) -> Result<bool, Error> {
        crate::forget::forget(&self.inner.store, self.inner.keys.clone()).await
    }

    /// Blocking [`reset_async`](Self::reset_async).
    pub fn reset(&self) -> Result<bool, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.reset_async().await })
    }

    /// [`reset_async`](Self::reset_async) with a callback, on the crate's
    /// runtime thread.
    pub fn reset_with(&self, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let this = self.clone();
        RedisStore::spawn_with(async move { this.reset_async().await }, callback);
    }

    /// `true` or `false` from a release or a renewal.
    async fn flag(&self, op: &'static str, id: &str) -> Result<bool, Error> {
        let reply = self.run(op, id, 0).await?;
        Ok(field(&reply, 0)? == 1)
    }

    async fn run(&self, op: &'static str, id: &str, permits: u64) -> Reply {
        let inner = &self.inner;
        let mut args = vec![
            op.to_owned(),
            inner.limit.to_string(),
            crate::reply::micros_arg(inner.lease_ttl),
            id.to_owned(),
            permits.to_string(),
        ];
        #[cfg(feature = "test-clock")]
        if inner.time == TimeSource::Argument {
            use ratekeeper::Clock;
            args.push(inner.clock.now_micros().to_string());
        }
        #[cfg(not(feature = "test-clock"))]
        let _ = &mut args;
        let call = inner.store.eval(Arc::clone(&inner.script), inner.keys.clone(), args);
        leads(RedisStore::spawn(call).await?)
    }

    /// The decision and lease an acquire's reply gives (or the policy's,
    /// when Redis did not answer).
    fn acquired(&self, id: String, permits: u64, reply: Reply) -> Result<(Decision, Option<ConcurrencyLease>), Error> {
        let limit = self.inner.limit;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) if e.is_unavailability() => {
                if matches!(e, Error::Timeout) || matches!(&e, Error::Redis(r) if r.is_timeout()) {
                    // The script may have run, or may still: give its lease back.
                    let this = self.clone();
                    RedisStore::spawn_with(async move { this.give_back(id).await }, |()| {});
                }
                return self.unavailable(e, permits);
            }
            Err(e) => return Err(e),
        };
        let held = field(&reply, 1)?.max(0) as u64;
        let never = |v: i64| if v < 0 { NEVER } else { v };
        let decision = Decision {
            allowed: field(&reply, 0)? == 1,
            limit,
            remaining: limit.saturating_sub(held),
            retry_after_micros: never(field(&reply, 2)?),
            reset_after_micros: never(field(&reply, 3)?),
            wait_micros: 0,
            window_micros: 0,
        };
        let lease = decision.allowed.then_some(ConcurrencyLease { id, permits, unrecorded: None });
        Ok((decision, lease))
    }

    /// Releases the lease of an acquire that got no answer in time. Its
    /// script may still be on its way to the server (this release can go
    /// out on another connection and arrive first), so a release that finds
    /// nothing is tried again after the store's timeout, then twice as long
    /// each time, until the lease would have expired anyway.
    async fn give_back(&self, id: String) {
        let ttl = self.inner.lease_ttl;
        let mut wait = self.inner.store.timeout();
        let mut waited = Duration::ZERO;
        loop {
            match self.flag("release", &id).await {
                Ok(true) => return,
                Err(e) if !e.is_unavailability() => return,
                Ok(false) | Err(_) => {}
            }
            if waited + wait > ttl {
                return;
            }
            RedisStore::sleep(wait).await;
            waited += wait;
            wait = wait.saturating_mul(2);
        }
    }

    /// What the unavailability policy answers an acquire.
    fn unavailable(&self, error: Error, permits: u64) -> Result<(Decision, Option<ConcurrencyLease>), Error> {
        let limit = self.inner.limit;
        let retry = i64::try_from(self.inner.store.retry_interval().as_micros()).unwrap_or(NEVER).max(1);
        match *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) {
            WhenUnavailable::FailClosed => {
                let retry_after = if permits > limit { NEVER } else { retry };
                Ok((Decision::refused(limit, 0, retry_after, retry, 0), None))
            }
            WhenUnavailable::FailOpen => {
                let lease =
                    ConcurrencyLease { id: lease_id(), permits, unrecorded: Some(Arc::new(AtomicBool::new(false))) };
                Ok((Decision::allowed(limit, limit.saturating_sub(permits), 0, 0), Some(lease)))
            }
            _ => Err(error),
        }
    }
}

fn check_permits(permits: u64) -> Result<(), Error> {
    if permits == 0 || permits > i32::MAX as u64 {
        return Err(ratekeeper::Error::invalid_uint(Argument::Permits, permits).into());
    }
    Ok(())
}

fn field(reply: &[i64], i: usize) -> Result<i64, Error> {
    reply.get(i).copied().ok_or_else(|| Error::Protocol(format!("not a lease reply: {reply:?}")))
}

/// A lease id unique between processes and hosts: 128 bits from keyed
/// hashes (random keys per process) of the process, the time and a
/// counter, then the counter itself (unique within the process). Hex
/// digits only, so never the script's `held` field.
fn lease_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut halves = [0u64; 2];
    for (i, half) in halves.iter_mut().enumerate() {
        *half = RandomState::new().hash_one((i, n, nanos, std::process::id()));
    }
    format!("{:016x}{:016x}{n:x}", halves[0], halves[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_ids_are_hex_and_distinct() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| lease_id()).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|id| id.len() > 32 && id.bytes().all(|b| b.is_ascii_hexdigit())));
    }
}
