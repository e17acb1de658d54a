//! [`RedisCompositeLimiter`]: several limits on one key — "10 per second
//! *and* 1,000 per hour, per client" — decided all or nothing in Redis.
//!
//! Checking several [`RedisLimiter`](crate::RedisLimiter)s one after the
//! other is wrong twice over: when a later one refuses, the earlier ones
//! have already taken the cost (rate-limiter-flexible#280 asks for exactly
//! this), and between the round trips other clients change the states. So
//! the parts are decided by one script run (`lua/composite.lua`), at one
//! server time: every part is asked whether it would admit, and only if all
//! would is the cost taken from each — the rule, and the decisions, of the
//! in-process [`CompositeLimiter`](ratekeeper::CompositeLimiter) and
//! [`KeyedCompositeLimiter`](ratekeeper::keyed::KeyedCompositeLimiter).
//!
//! ## Keys
//!
//! A composite named `N` keeps part `i`'s state for user key `K` under
//! `rk:{N:K}:<i>:<algorithm>`: one hash tag for every part of one user key,
//! so one script run touches one Redis Cluster slot (a script may only touch
//! keys of one slot there), while different user keys spread over the
//! cluster. Each part's key expires as a [`RedisLimiter`](crate::RedisLimiter)'s
//! does, once that part is whole again.
//!
//! ## What it does not do
//!
//! It remembers no refusal: a refusal's retry-after is the longest of the
//! refusing parts', and a later request of the same cost is refused until
//! then — but the cost of the round trip it would save is small next to
//! knowing, in each reply, every part's state for the `RateLimit` fields.
//! When Redis cannot answer, [`WhenUnavailable::FailOpen`] and
//! [`WhenUnavailable::FailClosed`] decide every part so; there is no local
//! share ([`WhenUnavailable::LocalShare`] acts as [`WhenUnavailable::Error`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{AnyClock, AnyCore, Argument, Decision, LimiterSpec, ParameterValue, NEVER};

use crate::error::Error;
use crate::exact::WhenUnavailable;
use crate::keys;
use crate::scripts::{self, TimeSource};
use crate::store::RedisStore;
use ratekeeper::Algorithm;

/// A composite's decision: the combined one (the strictest part's, as
/// [`ratekeeper_core::decision::combine`] picks it) and each part's, in the
/// order of the specs — one `RateLimit` item per policy. In a refusal, a
/// part that would have admitted shows its state untouched: nothing was
/// taken from it.
///
/// (The in-process composites return the same pair as a tuple,
/// `(Decision, Vec<Decision>)`; named fields here read better across the
/// language bindings.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositeDecision {
    /// What the request gets: admitted by every part, or refused.
    pub combined: Decision,
    /// Each part's decision, in the order of the specs.
    pub parts: Vec<Decision>,
}

/// Several [`LimiterSpec`]s on the same user keys, shared through Redis and
/// decided all or nothing in one script run (see the module docs). Cheap to
/// clone; safe to share between threads.
///
/// ```no_run
/// use ratekeeper::LimiterSpec;
/// use ratekeeper_redis::{RedisCompositeLimiter, RedisStore, StoreOptions};
///
/// let store = RedisStore::connect("redis://127.0.0.1/", StoreOptions::default())?;
/// let per_second = LimiterSpec::SlidingWindowCounter { limit: 10, window_micros: 1_000_000 };
/// let per_hour = LimiterSpec::FixedWindow { limit: 1_000, window_micros: 3_600_000_000 };
/// let limiter = RedisCompositeLimiter::new(&store, "api", &[per_second, per_hour])?;
/// let decision = limiter.check("alice", 1)?;
/// assert!(decision.combined.allowed);
/// # Ok::<(), ratekeeper_redis::Error>(())
/// ```
#[derive(Clone)]
pub struct RedisCompositeLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    store: RedisStore,
    name: String,
    specs: Vec<LimiterSpec>,
    parts: Vec<Part>,
    script: Arc<redis::Script>,
    when_unavailable: Mutex<WhenUnavailable>,
    /// The longest user key, in bytes (a [`MaxKeyBytes`]'s value).
    max_key_bytes: AtomicU32,
    /// The scripts' clock in tests (`TimeSource::Argument`).
    #[cfg_attr(not(feature = "test-clock"), allow(dead_code))]
    clock: AnyClock,
    #[cfg_attr(not(feature = "test-clock"), allow(dead_code))]
    time: TimeSource,
}

/// One part: what its script reads, and what the client needs to make its
/// decision from the reply.
struct Part {
    algorithm: Algorithm,
    /// The parameters in the registry's order, as the script reads them.
    parameters: Vec<String>,
    /// The quota (for the unavailability policies' decisions).
    limit: u64,
    /// For GCRA, whose script replies with the TAT's lead only.
    gcra: Option<ratekeeper_core::Gcra>,
}

impl std::fmt::Debug for RedisCompositeLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCompositeLimiter")
            .field("name", &self.inner.name)
            .field("specs", &self.inner.specs)
            .finish_non_exhaustive()
    }
}

impl RedisCompositeLimiter {
    /// A composite named `name` (processes using the same name and Redis
    /// share its keys' state) of `specs`, in order. Checks every spec as the
    /// in-process limiters do (a part's own error); no specs is
    /// [`Error::Invalid`] (a composite of nothing would admit everything,
    /// as the in-process composites refuse it); a part whose algorithm does
    /// not run in Redis is [`Error::Unsupported`] (those that do: GCRA, the
    /// token bucket, the fixed window, the sliding window counter, the
    /// sliding log — every one `ratekeeper::http`'s limits produce).
    pub fn new(store: &RedisStore, name: &str, specs: &[LimiterSpec]) -> Result<Self, Error> {
        Self::build(store, name, specs, TimeSource::Server, AnyClock::default())
    }

    /// Tests only: the script reads the time from this manual clock.
    #[cfg(feature = "test-clock")]
    pub fn with_test_clock(
        store: &RedisStore,
        name: &str,
        specs: &[LimiterSpec],
        clock: Arc<ratekeeper::ManualClock>,
    ) -> Result<Self, Error> {
        Self::build(store, name, specs, TimeSource::Argument, AnyClock::Manual(clock))
    }

    fn build(
        store: &RedisStore,
        name: &str,
        specs: &[LimiterSpec],
        time: TimeSource,
        clock: AnyClock,
    ) -> Result<Self, Error> {
        if specs.is_empty() {
            return Err(ratekeeper::Error::invalid_int(Argument::Limits, 0).into());
        }
        let mut parts = Vec::with_capacity(specs.len());
        for spec in specs {
            // The local limiter's checks, and its errors.
            let local = AnyCore::new(spec)?;
            let limit = ratekeeper::Admission::peek(&local, 0, 0).limit;
            let gcra = match local {
                AnyCore::Gcra(gcra) => Some(gcra),
                _ => None,
            };
            let parameters = spec
                .values()
                .map(|(_, value)| match value {
                    ParameterValue::Rate(rate) => crate::reply::double_arg(rate),
                    ParameterValue::Count(count) => count.to_string(),
                    ParameterValue::Micros(micros) => micros.to_string(),
                })
                .collect();
            parts.push(Part { algorithm: spec.kind(), parameters, limit, gcra });
        }
        let algorithms: Vec<Algorithm> = parts.iter().map(|p| p.algorithm).collect();
        let source = scripts::composite(&algorithms, time).ok_or(Error::Unsupported(
            "a composite's parts must run in Redis: gcra, token_bucket, fixed_window, sliding_window_counter or sliding_log",
        ))?;
        Ok(RedisCompositeLimiter {
            inner: Arc::new(Inner {
                store: store.clone(),
                name: name.to_owned(),
                specs: specs.to_vec(),
                parts,
                script: Arc::new(redis::Script::new(&source)),
                when_unavailable: Mutex::new(WhenUnavailable::Error),
                max_key_bytes: AtomicU32::new(MaxKeyBytes::DEFAULT.get() as u32),
                clock,
                time,
            }),
        })
    }

    /// What checks and peeks answer when Redis cannot (default:
    /// [`WhenUnavailable::Error`]): [`WhenUnavailable::FailOpen`] admits
    /// in every part, [`WhenUnavailable::FailClosed`] refuses in every part
    /// with the store's retry interval. There is no local share here:
    /// [`WhenUnavailable::LocalShare`] returns the error.
    pub fn when_unavailable(self, policy: WhenUnavailable) -> Self {
        *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) = policy;
        self
    }

    /// Keys of at most `bound` bytes (default [`MaxKeyBytes::DEFAULT`],
    /// 256), as [`RedisLimiter::max_key_bytes`](crate::RedisLimiter::max_key_bytes).
    pub fn max_key_bytes(self, bound: MaxKeyBytes) -> Self {
        self.inner.max_key_bytes.store(bound.get() as u32, Ordering::Relaxed);
        self
    }

    /// The longest key this limiter takes, in bytes.
    pub fn key_bytes_bound(&self) -> MaxKeyBytes {
        MaxKeyBytes::new(self.inner.max_key_bytes.load(Ordering::Relaxed) as usize).unwrap_or_default()
    }

    /// `key` if it is at most [`key_bytes_bound`](Self::key_bytes_bound)
    /// long, else the error naming `key`: checked before anything is sent.
    /// (Public for bindings that refuse a bad argument at once.)
    pub fn checked_key<'k>(&self, key: &'k [u8]) -> Result<&'k [u8], Error> {
        Ok(self.key_bytes_bound().check(key)?)
    }

    /// The parts' specs, in order.
    pub fn parts(&self) -> &[LimiterSpec] {
        &self.inner.specs
    }

    /// The strictest quota of the parts: the most units ever admitted at
    /// once.
    pub fn limit(&self) -> u64 {
        self.inner.parts.iter().map(|p| p.limit).min().unwrap_or(0)
    }

    /// Admits `cost` units for `key` in every part, or in none (a refusal
    /// takes nothing from any part): one round trip.
    pub async fn check_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<CompositeDecision, Error> {
        self.decide("check", key.as_ref(), cost).await
    }

    /// The decision [`check_async`](Self::check_async) would make now,
    /// writing nothing in Redis.
    pub async fn peek_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<CompositeDecision, Error> {
        self.decide("peek", key.as_ref(), cost).await
    }

    /// Gives `cost` units back to every part of `key`, as the in-process
    /// composites' `refund` (each part's algorithm gives back what it can:
    /// [`ratekeeper::Admission::refund`]'s table; never more than a fresh
    /// part holds), in one script run at the server's time. Not a
    /// decision: when Redis cannot answer, the error, whatever the
    /// unavailability policy. A refund of 0 sends nothing.
    pub async fn refund_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<(), Error> {
        let key = self.checked_key(key.as_ref())?;
        if cost == 0 {
            return Ok(());
        }
        self.run("refund", key, cost).await.map(drop)
    }

    /// Forgets `key`'s state in every part — every key, deleted atomically —
    /// so that its next request is decided as a new key's. Whether Redis
    /// held any. Not a decision: when Redis cannot answer, the error.
    pub async fn remove_async(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        let key = self.checked_key(key.as_ref())?;
        crate::forget::forget(&self.inner.store, self.state_keys(key)).await
    }

    /// Blocking [`check_async`](Self::check_async).
    pub fn check(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<CompositeDecision, Error> {
        let key = self.checked_key(key.as_ref())?.to_vec();
        let this = self.clone();
        RedisStore::block_on(async move { this.check_async(key, cost).await })
    }

    /// Blocking [`peek_async`](Self::peek_async).
    pub fn peek(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<CompositeDecision, Error> {
        let key = self.checked_key(key.as_ref())?.to_vec();
        let this = self.clone();
        RedisStore::block_on(async move { this.peek_async(key, cost).await })
    }

    /// Blocking [`refund_async`](Self::refund_async).
    pub fn refund(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<(), Error> {
        let key = self.checked_key(key.as_ref())?.to_vec();
        let this = self.clone();
        RedisStore::block_on(async move { this.refund_async(key, cost).await })
    }

    /// Blocking [`remove_async`](Self::remove_async).
    pub fn remove(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        let key = self.checked_key(key.as_ref())?.to_vec();
        let this = self.clone();
        RedisStore::block_on(async move { this.remove_async(key).await })
    }

    /// [`check_async`](Self::check_async) with a callback, called on the
    /// crate's runtime thread (what the language bindings use to resolve a
    /// Promise or an asyncio future); a key too long calls back at once, on
    /// this thread.
    pub fn check_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<CompositeDecision, Error>) + Send + 'static,
    ) {
        let key = key.into();
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.check_async(key, cost).await }, callback);
    }

    /// [`peek_async`](Self::peek_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn peek_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<CompositeDecision, Error>) + Send + 'static,
    ) {
        let key = key.into();
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.peek_async(key, cost).await }, callback);
    }

    /// [`refund_async`](Self::refund_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn refund_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) {
        let key = key.into();
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.refund_async(key, cost).await }, callback);
    }

    /// [`remove_async`](Self::remove_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn remove_with(&self, key: impl Into<Vec<u8>>, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let key = key.into();
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.remove_async(key).await }, callback);
    }

    /// A check or a peek: the script's reply made into decisions, or the
    /// unavailability policy's when Redis could not answer.
    async fn decide(&self, op: &'static str, key: &[u8], cost: u64) -> Result<CompositeDecision, Error> {
        let key = self.checked_key(key)?;
        match self.run(op, key, cost).await {
            Ok(reply) => self.decisions(reply, cost),
            Err(e) if e.is_unavailability() => self.unavailable(e, cost),
            Err(e) => Err(e),
        }
    }

    async fn run(&self, op: &'static str, key: &[u8], cost: u64) -> Result<redis::Value, Error> {
        let inner = &self.inner;
        let mut args = Vec::with_capacity(3 + inner.parts.iter().map(|p| 3 + p.parameters.len()).sum::<usize>());
        args.extend([op.to_owned(), cost.to_string(), inner.parts.len().to_string()]);
        for part in &inner.parts {
            args.push(part.algorithm.wire_name().to_owned());
            args.push(part_keys(part.algorithm).to_string());
            args.push(part.parameters.len().to_string());
            args.extend(part.parameters.iter().cloned());
        }
        #[cfg(feature = "test-clock")]
        if inner.time == TimeSource::Argument {
            use ratekeeper::Clock;
            args.push(inner.clock.now_micros().to_string());
        }
        let keys = self.state_keys(key);
        RedisStore::spawn(inner.store.eval(Arc::clone(&inner.script), keys, args)).await
    }

    /// Every part's Redis keys for user key `key`, part after part.
    fn state_keys(&self, key: &[u8]) -> Vec<String> {
        let mut keys = Vec::new();
        for (i, part) in self.inner.parts.iter().enumerate() {
            let state = keys::keyed_state_key(&self.inner.name, key, &format!("{i}:{}", part.algorithm.wire_name()));
            if part_keys(part.algorithm) == 2 {
                let meta = format!("{state}:meta");
                keys.extend([state, meta]);
            } else {
                keys.push(state);
            }
        }
        keys
    }

    /// The decisions in the script's reply: one array per part (see
    /// `lua/composite.lua`), combined as the in-process composite combines
    /// them.
    fn decisions(&self, reply: redis::Value, cost: u64) -> Result<CompositeDecision, Error> {
        let replies: Vec<Vec<i64>> = redis::from_redis_value(reply).map_err(|e| Error::Protocol(e.to_string()))?;
        if replies.len() != self.inner.parts.len() {
            return Err(Error::Protocol(format!(
                "{} parts' decisions for {} parts",
                replies.len(),
                self.inner.parts.len()
            )));
        }
        let parts = self
            .inner
            .parts
            .iter()
            .zip(&replies)
            .map(|(part, reply)| match (&part.gcra, reply.as_slice()) {
                (Some(gcra), &[lead, at_cost]) => {
                    Ok(gcra.decide_ahead(if at_cost == 1 { cost } else { 0 }, i128::from(lead)))
                }
                (Some(_), _) => Err(Error::Protocol(format!("not a GCRA part's reply: {reply:?}"))),
                (None, reply) => crate::exact::decision(reply),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CompositeDecision { combined: combined(&parts), parts })
    }

    /// The decision the unavailability policy makes for every part.
    fn unavailable(&self, error: Error, cost: u64) -> Result<CompositeDecision, Error> {
        let policy = *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner());
        let retry = i64::try_from(self.inner.store.retry_interval().as_micros()).unwrap_or(NEVER).max(1);
        let part = |limit: u64| match policy {
            WhenUnavailable::FailClosed => Some(Decision {
                allowed: false,
                limit,
                remaining: 0,
                retry_after_micros: if cost > limit { NEVER } else { retry },
                reset_after_micros: retry,
                wait_micros: 0,
                window_micros: 0,
            }),
            WhenUnavailable::FailOpen => Some(Decision::allowed(limit, limit.saturating_sub(cost), 0, 0)),
            _ => None,
        };
        let parts = self.inner.parts.iter().map(|p| part(p.limit)).collect::<Option<Vec<_>>>().ok_or(error)?;
        Ok(CompositeDecision { combined: combined(&parts), parts })
    }
}

/// How many Redis keys a part of `algorithm` keeps (the sliding log: its
/// sorted set and a companion hash).
fn part_keys(algorithm: Algorithm) -> usize {
    if algorithm == Algorithm::SlidingLog {
        2
    } else {
        1
    }
}

fn combined(parts: &[Decision]) -> Decision {
    ratekeeper_core::decision::combine(parts.iter().copied()).unwrap_or(Decision::allowed(0, 0, 0, 0))
}
