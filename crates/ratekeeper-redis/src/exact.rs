//! [`RedisLimiter`]: the admission-style algorithms, exact, in Redis.
//!
//! Every decision is one atomic script run at the server's time, with the
//! algorithm's state in the server: GCRA (redis-cell's `CL.THROTTLE`
//! reply), the token bucket (x/time/rate's `AllowN`), the fixed window, the
//! sliding window counter and the sliding log (on a sorted set). Each script
//! repeats ratekeeper-core's arithmetic in exact integers on Lua's doubles,
//! so a limiter shared through Redis decides as one in-process limiter
//! would; the ranges in which that holds are in each script's header
//! (products such as `period × limit` below 2^53).
//!
//! ## Keys
//!
//! A limiter named `N` keeps user key `K`'s state under
//! `rk:{N:K}:<algorithm>` (both parts escaped): the hash tag keeps one
//! key's state in one Redis Cluster slot, while different keys spread over
//! the cluster. Every key expires once its state is whole again, which is
//! exactly when forgetting it changes no decision (GCRA's later, by up to
//! the larger of a second and its lead, so that most writes keep its
//! expiry: see its script).
//!
//! ## Refusals served locally
//!
//! A refusal with a retry-after `R` means the same request cannot be
//! admitted before `R` has passed, and neither can a larger one (every
//! algorithm here is monotone in the cost; other clients' requests only
//! push the time further). So the client remembers it, and refuses such
//! requests itself until `R` after it *sent* the refused request — never
//! later than the server would — with no round trip. Those local decisions
//! carry the server's last `limit` and `remaining` (an under-estimate of
//! what is left) and the retry-after and reset-after counted down. The
//! cache can be turned off ([`RedisLimiter::remember_refusals`]).
//!
//! ## User keys
//!
//! A user key is a byte string: text is its UTF-8 (so a `str` key and the
//! same bytes are one key, in every language), other bytes are taken as
//! they are. Methods take `impl AsRef<[u8]>`, so a `&str`, a `String`, a
//! `&[u8]` or a `Vec<u8>` is passed as it is, with no conversion at the
//! call site and no rule to remember about which one becomes which key.
//!
//! A key is at most [`max_key_bytes`](RedisLimiter::max_key_bytes) long
//! ([`MaxKeyBytes`]: 256 bytes unless set, the bound of the in-process
//! keyed limiters too). Every method that takes a key checks it first, in
//! [`RedisLimiter::checked_key`], and refuses a longer one with
//! [`Error::Invalid`] naming `key` before anything is looked up, stored or
//! sent: every byte of a key travels to Redis with each decision (three
//! once escaped) and is kept there, so a caller's megabyte-long key would
//! otherwise cost every decision queued behind it on the connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{AnyClock, AnyCore, Clock, Decision, LimiterSpec, ParameterValue, NEVER};

use crate::error::Error;
use crate::keys;
use crate::membership::Membership;
use ratekeeper::Algorithm;

use crate::scripts::{self, TimeSource};
use crate::share::LocalShare;
use crate::store::RedisStore;

/// What a decision does when Redis cannot answer (it is down, unreachable,
/// or slower than the store's timeout): one policy for errors and timeouts
/// alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WhenUnavailable {
    /// Return the error (`Error::Timeout`, `Error::Unavailable`,
    /// `Error::Redis`) and let the caller decide. The default.
    #[default]
    Error,
    /// Refuse every request, with a retry-after of the store's retry
    /// interval. Nothing is admitted while Redis is away.
    FailClosed,
    /// Admit every request. Nothing is limited while Redis is away: a
    /// deliberate choice of availability over protection.
    FailOpen,
    /// Decide locally with this node's share of the limit, `limit ÷ the
    /// last known number of live nodes` (never the whole limit in every
    /// process). Set with [`RedisLimiter::fall_back_to_local`], which gives
    /// the node count; each outage starts from whole shares.
    LocalShare,
}

/// At most this many GCRA requests are decided in one script run (the
/// server does nothing else meanwhile: a few hundred microseconds at most).
const MAX_REQUESTS_PER_SCRIPT: usize = 128;

/// At most this many refusals are remembered per limiter.
const MAX_REMEMBERED_REFUSALS: usize = 10_000;

/// An admission-style limiter whose state lives in Redis. Cheap to clone;
/// safe to share between threads.
#[derive(Clone)]
pub struct RedisLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    store: RedisStore,
    name: String,
    algorithm: Algorithm,
    script: Arc<redis::Script>,
    script_source: String,
    /// The algorithm's parameters, as the script reads them.
    parameters: Vec<String>,
    /// The quota: a cost above it is never admitted.
    limit: u64,
    /// For GCRA, whose script replies with the TAT's lead only: the core
    /// limiter that turns the lead into the decision.
    gcra: Option<ratekeeper_core::Gcra>,
    /// The client's clock, for remembered refusals (and, in tests, the
    /// scripts' clock too).
    clock: AnyClock,
    remember_refusals: AtomicBool,
    when_unavailable: Mutex<WhenUnavailable>,
    spec: LimiterSpec,
    /// The local share the `LocalShare` policy decides with, and whether it
    /// has decided since Redis last answered.
    fallback: Mutex<Option<Arc<LocalShare>>>,
    fallback_used: AtomicBool,
    refusals: Mutex<HashMap<Vec<u8>, Refusal>>,
    /// The longest user key, in bytes (a [`MaxKeyBytes`]'s value).
    max_key_bytes: AtomicU32,
    /// Whether the scripts read the time from `clock` (tests only).
    #[cfg_attr(not(feature = "test-clock"), allow(dead_code))]
    time: TimeSource,
}

/// A refusal remembered for a key: requests costing `cost` or more are
/// refused until `until` (the client's clock, in microseconds).
#[derive(Debug, Clone, Copy)]
struct Refusal {
    cost: u64,
    decided: i64,
    until: i64,
    decision: Decision,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("name", &self.inner.name)
            .field("algorithm", &self.inner.algorithm)
            .finish_non_exhaustive()
    }
}

impl RedisLimiter {
    /// A limiter named `name` (processes using the same name and Redis
    /// share its keys' state) running `spec`. Checks the parameters exactly
    /// as the local limiters do; the algorithms that run in Redis are GCRA,
    /// the token bucket, the fixed window, the sliding window counter and
    /// the sliding log (others: [`Error::Unsupported`]).
    pub fn new(store: &RedisStore, name: &str, spec: LimiterSpec) -> Result<Self, Error> {
        Self::build(store, name, spec, TimeSource::Server, AnyClock::default())
    }

    /// Tests only: the scripts read the time from this manual clock, and so
    /// do remembered refusals.
    #[cfg(feature = "test-clock")]
    pub fn with_test_clock(
        store: &RedisStore,
        name: &str,
        spec: LimiterSpec,
        clock: Arc<ratekeeper::ManualClock>,
    ) -> Result<Self, Error> {
        Self::build(store, name, spec, TimeSource::Argument, AnyClock::Manual(clock))
    }

    /// Whether refusals are remembered and served locally (on by default;
    /// see the module docs).
    pub fn remember_refusals(self, on: bool) -> Self {
        self.inner.remember_refusals.store(on, Ordering::Relaxed);
        if !on {
            self.inner.refusals.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        self
    }

    /// Keys of at most `bound` bytes (default [`MaxKeyBytes::DEFAULT`], 256);
    /// a longer one is refused before anything is sent (see the module
    /// docs). The local share of [`WhenUnavailable::LocalShare`] takes the
    /// same keys.
    pub fn max_key_bytes(self, bound: MaxKeyBytes) -> Self {
        self.inner.max_key_bytes.store(bound.get() as u32, Ordering::Relaxed);
        if let Some(share) = self.inner.fallback.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            share.set_max_key_bytes(bound);
        }
        self
    }

    /// The longest key this limiter takes, in bytes.
    pub fn key_bytes_bound(&self) -> MaxKeyBytes {
        MaxKeyBytes::new(self.inner.max_key_bytes.load(Ordering::Relaxed) as usize).unwrap_or_default()
    }

    /// `key` if it is at most [`key_bytes_bound`](Self::key_bytes_bound)
    /// long, else the error naming `key` (its length as the value): the one
    /// check every key-taking method makes before anything else. (Public
    /// for bindings whose callback forms refuse a bad argument at once
    /// rather than call back with it.)
    pub fn checked_key<'k>(&self, key: &'k [u8]) -> Result<&'k [u8], Error> {
        Ok(self.key_bytes_bound().check(key)?)
    }

    /// What decisions do when Redis cannot answer (default:
    /// [`WhenUnavailable::Error`]). [`WhenUnavailable::LocalShare`] needs the
    /// node count: use [`fall_back_to_local`](Self::fall_back_to_local).
    pub fn when_unavailable(self, policy: WhenUnavailable) -> Self {
        *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) = policy;
        self
    }

    /// While Redis cannot answer, decides with this node's share of the
    /// limit (`limit ÷ live nodes`, as `membership` last counted them), for
    /// at most `max_keys` keys; back on Redis as soon as it answers.
    pub fn fall_back_to_local(self, membership: Arc<Membership>, max_keys: usize) -> Result<Self, Error> {
        let share =
            LocalShare::new(membership, self.inner.spec, max_keys, self.key_bytes_bound(), self.inner.clock.clone())?;
        *self.inner.fallback.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(share));
        Ok(self.when_unavailable(WhenUnavailable::LocalShare))
    }

    fn build(
        store: &RedisStore,
        name: &str,
        spec: LimiterSpec,
        time: TimeSource,
        clock: AnyClock,
    ) -> Result<Self, Error> {
        // The local limiter's checks, and its errors.
        let local = AnyCore::new(&spec)?;
        let limit = ratekeeper::Admission::peek(&local, 0, 0).limit;
        let gcra = match local {
            AnyCore::Gcra(gcra) => Some(gcra),
            _ => None,
        };
        let algorithm = spec.kind();
        let script_source =
            scripts::admission(algorithm, time).ok_or(Error::Unsupported("this algorithm does not run in Redis"))?;
        // The parameters in the registry's order, which every script reads.
        let parameters = spec
            .values()
            .map(|(_, value)| match value {
                ParameterValue::Rate(rate) => crate::reply::double_arg(rate),
                ParameterValue::Count(count) => count.to_string(),
                ParameterValue::Micros(micros) => micros.to_string(),
            })
            .collect();
        Ok(RedisLimiter {
            inner: Arc::new(Inner {
                store: store.clone(),
                name: name.to_owned(),
                algorithm,
                script: Arc::new(redis::Script::new(&script_source)),
                script_source,
                parameters,
                limit,
                gcra,
                clock,
                remember_refusals: AtomicBool::new(true),
                when_unavailable: Mutex::new(WhenUnavailable::Error),
                spec,
                fallback: Mutex::new(None),
                fallback_used: AtomicBool::new(false),
                refusals: Mutex::new(HashMap::new()),
                max_key_bytes: AtomicU32::new(MaxKeyBytes::DEFAULT.get() as u32),
                time,
            }),
        })
    }

    /// Admits `cost` units for `key` if the limit allows (consuming them),
    /// or refuses (consuming nothing): one round trip, or none when a
    /// remembered refusal or the limit already decides.
    pub async fn check_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        self.check_key(key.as_ref(), cost).await
    }

    async fn check_key(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let key = self.checked_key(key)?;
        if let Some(decision) = self.decided_locally(key, cost) {
            return Ok(decision);
        }
        let sent = self.inner.clock.now_micros();
        let answer = self.run("check", key, cost).await;
        self.settle(key, cost, sent, answer)
    }

    /// Checks many requests — `(key, cost)`, for any keys, the same key
    /// more than once included — and answers each as
    /// [`check_async`](Self::check_async) would, in order.
    ///
    /// GCRA on a single server decides up to 128 requests in one script run
    /// (one round trip, and the script's fixed costs paid once): what a
    /// client with many checks in flight wants, such as the Node binding,
    /// which sends the checks of one turn of its event loop this way. The
    /// requests are decided in order at one server time, as if they had
    /// arrived together. Other algorithms, and Redis Cluster (whose scripts
    /// may only touch one slot), send one script per request, concurrently.
    /// A key longer than [`key_bytes_bound`](Self::key_bytes_bound) is
    /// answered with its error, and sent with none of the others.
    pub async fn check_many_async(&self, requests: Vec<(Vec<u8>, u64)>) -> Vec<Result<Decision, Error>> {
        let mut answers: Vec<Option<Result<Decision, Error>>> = requests
            .iter()
            .map(|(key, cost)| match self.checked_key(key) {
                Ok(key) => self.decided_locally(key, *cost).map(Ok),
                Err(e) => Some(Err(e)),
            })
            .collect();
        let pending: Vec<usize> = (0..requests.len()).filter(|&i| answers[i].is_none()).collect();
        if self.inner.gcra.is_some() && !self.inner.store.is_cluster() && pending.len() > 1 {
            let sent = self.inner.clock.now_micros();
            let runs: Vec<_> = pending
                .chunks(MAX_REQUESTS_PER_SCRIPT)
                .map(|chunk| {
                    let batch: Vec<(Vec<u8>, u64)> = chunk.iter().map(|&i| requests[i].clone()).collect();
                    let this = self.clone();
                    RedisStore::spawn(async move { this.run_script("check".to_owned(), &batch).await })
                })
                .collect();
            for (chunk, run) in pending.chunks(MAX_REQUESTS_PER_SCRIPT).zip(runs) {
                let reply = run.await;
                for (n, &i) in chunk.iter().enumerate() {
                    let (key, cost) = &requests[i];
                    answers[i] = Some(self.answer(&reply, n, key, *cost, sent));
                }
            }
        } else {
            let runs: Vec<_> = pending
                .iter()
                .map(|&i| {
                    let (this, (key, cost)) = (self.clone(), requests[i].clone());
                    RedisStore::spawn(async move { this.check_key(&key, cost).await })
                })
                .collect();
            for (&i, run) in pending.iter().zip(runs) {
                answers[i] = Some(run.await);
            }
        }
        answers.into_iter().map(|a| a.expect("every request answered")).collect()
    }

    /// A check's answer from Redis, made final: the unavailability policy
    /// when Redis could not answer, the refusal remembered when it refused.
    fn settle(&self, key: &[u8], cost: u64, sent: i64, answer: Result<Decision, Error>) -> Result<Decision, Error> {
        let decision = match answer {
            Ok(decision) => decision,
            Err(e) if e.is_unavailability() => return self.unavailable(e, key, cost),
            Err(e) => return Err(e),
        };
        if self.inner.fallback_used.swap(false, Ordering::Relaxed) {
            // Redis answers again: the next outage starts from whole shares.
            if let Some(share) = self.inner.fallback.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                share.reset();
            }
        }
        if !decision.allowed
            && decision.retry_after_micros != NEVER
            && decision.retry_after_micros > 0
            && self.inner.remember_refusals.load(Ordering::Relaxed)
        {
            self.remember(key, cost, sent, decision);
        }
        Ok(decision)
    }

    /// The decision `check` would make for `key`, consuming nothing.
    pub async fn peek_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        self.peek_key(key.as_ref(), cost).await
    }

    async fn peek_key(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let key = self.checked_key(key)?;
        match self.run("peek", key, cost).await {
            Err(e) if e.is_unavailability() => self.unavailable_peek(e, cost),
            other => other,
        }
    }

    /// The decision the unavailability policy makes for a check.
    fn unavailable(&self, error: Error, key: &[u8], cost: u64) -> Result<Decision, Error> {
        if *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) == WhenUnavailable::LocalShare {
            let share = self.inner.fallback.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(share) = share {
                self.inner.fallback_used.store(true, Ordering::Relaxed);
                return share.check(key, cost);
            }
        }
        self.unavailable_peek(error, cost)
    }

    /// The decision the unavailability policy makes for a peek (the local
    /// share is not consulted: a peek takes nothing).
    fn unavailable_peek(&self, error: Error, cost: u64) -> Result<Decision, Error> {
        let limit = self.inner.limit;
        let retry = i64::try_from(self.inner.store.retry_interval().as_micros()).unwrap_or(NEVER).max(1);
        match *self.inner.when_unavailable.lock().unwrap_or_else(|p| p.into_inner()) {
            WhenUnavailable::Error | WhenUnavailable::LocalShare => Err(error),
            WhenUnavailable::FailClosed => {
                let retry_after = if cost > limit { NEVER } else { retry };
                Ok(Decision {
                    allowed: false,
                    limit,
                    remaining: 0,
                    retry_after_micros: retry_after,
                    reset_after_micros: retry,
                    wait_micros: 0,
                    window_micros: 0,
                })
            }
            WhenUnavailable::FailOpen => Ok(Decision {
                allowed: true,
                limit,
                remaining: limit.saturating_sub(cost),
                retry_after_micros: 0,
                reset_after_micros: 0,
                wait_micros: 0,
                window_micros: 0,
            }),
        }
    }

    /// [`check_async`](Self::check_async) with a callback, called on the
    /// crate's runtime thread (what the language bindings use to resolve a
    /// Promise or an asyncio future). A remembered refusal, or a key too
    /// long, calls back at once, on this thread.
    pub fn check_with(
        &self,
        key: impl Into<Vec<u8>>,
        cost: u64,
        callback: impl FnOnce(Result<Decision, Error>) + Send + 'static,
    ) {
        let key = key.into();
        match self.checked_key(&key) {
            Err(e) => return callback(Err(e)),
            Ok(key) => {
                if let Some(decision) = self.decided_locally(key, cost) {
                    return callback(Ok(decision));
                }
            }
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.check_key(&key, cost).await }, callback);
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
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.peek_key(&key, cost).await }, callback);
    }

    /// The decision a remembered refusal makes now for `key` and `cost` —
    /// what [`check_async`](Self::check_async) would answer without a round
    /// trip — or `None` when the check needs Redis. For bindings that gather
    /// the checks of one turn of their event loop and send them as one task
    /// (their scripts then share a write on the connection): they answer
    /// these at once, as [`check_with`](Self::check_with) does, and send the
    /// rest. (`None` for a key too long: its check gives the error.)
    pub fn remembered_refusal(&self, key: impl AsRef<[u8]>, cost: u64) -> Option<Decision> {
        self.decided_locally(self.checked_key(key.as_ref()).ok()?, cost)
    }

    /// Blocking [`check_async`](Self::check_async).
    pub fn check(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        let key = self.checked_key(key.as_ref())?;
        if let Some(decision) = self.decided_locally(key, cost) {
            return Ok(decision);
        }
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.check_key(&key, cost).await })
    }

    /// Blocking [`peek_async`](Self::peek_async).
    pub fn peek(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        let key = self.checked_key(key.as_ref())?;
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.peek_key(&key, cost).await })
    }

    /// Forgets `key`'s state in Redis — every key its algorithm keeps,
    /// deleted atomically — so that its next request is decided as a new
    /// key's, with the whole limit (the in-process keyed limiters'
    /// `remove`; `limits`' `clear`, rate-limiter-flexible's `delete`).
    /// Whether Redis held a state for it. A key never seen is fine
    /// (`false`).
    ///
    /// This client's remembered refusal for `key` is dropped too (and its
    /// key in the local share of [`WhenUnavailable::LocalShare`]). Other
    /// clients' remembered refusals are theirs: each may go on refusing
    /// `key` locally until the retry-after Redis gave it runs out, never
    /// longer — turn [`remember_refusals`](Self::remember_refusals) off
    /// where a reset must be seen by every client at once. Not a decision:
    /// when Redis cannot answer, the error, whatever the unavailability
    /// policy.
    pub async fn remove_async(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        self.remove_key(key.as_ref()).await
    }

    async fn remove_key(&self, key: &[u8]) -> Result<bool, Error> {
        let key = self.checked_key(key)?;
        self.forget_locally(key);
        let keys = state_keys(&self.inner.name, self.inner.algorithm, key);
        let removed = crate::forget::forget(&self.inner.store, keys).await;
        // A refusal remembered from a check that was in flight meanwhile
        // would outlive the reset: drop it again.
        self.forget_locally(key);
        removed
    }

    /// Drops what this client keeps for `key`: its remembered refusal and
    /// its key in the local share.
    fn forget_locally(&self, key: &[u8]) {
        self.inner.refusals.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        if let Some(share) = self.inner.fallback.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            share.remove(key);
        }
    }

    /// Blocking [`remove_async`](Self::remove_async).
    pub fn remove(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        let key = self.checked_key(key.as_ref())?;
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.remove_key(&key).await })
    }

    /// [`remove_async`](Self::remove_async) with a callback (see
    /// [`check_with`](Self::check_with)).
    pub fn remove_with(&self, key: impl Into<Vec<u8>>, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let key = key.into();
        if let Err(e) = self.checked_key(&key) {
            return callback(Err(e));
        }
        let this = self.clone();
        RedisStore::spawn_with(async move { this.remove_key(&key).await }, callback);
    }

    /// Gives `cost` units admitted earlier for `key` back, as the in-process
    /// limiters do ([`ratekeeper::Admission::refund`]'s table: the same
    /// semantics per algorithm, never more than a fresh key holds), in one
    /// script run at the server's time: a request skipped or failed
    /// (express-rate-limit's `decrement`). This client's remembered refusal
    /// for `key` is dropped, since the units given back may admit what it
    /// refused. Not a decision: when Redis cannot answer, the error,
    /// whatever the unavailability policy (the caller may ignore it). A
    /// refund of 0 sends nothing.
    pub async fn refund_async(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<(), Error> {
        self.refund_key(key.as_ref(), cost).await
    }

    async fn refund_key(&self, key: &[u8], cost: u64) -> Result<(), Error> {
        let key = self.checked_key(key)?;
        if cost == 0 {
            return Ok(());
        }
        self.inner.refusals.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        self.run_script("refund".to_owned(), &[(key.to_vec(), cost)]).await.map(drop)
    }

    /// Blocking [`refund_async`](Self::refund_async).
    pub fn refund(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<(), Error> {
        let key = self.checked_key(key.as_ref())?;
        let (this, key) = (self.clone(), key.to_vec());
        RedisStore::block_on(async move { this.refund_key(&key, cost).await })
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
        RedisStore::spawn_with(async move { this.refund_key(&key, cost).await }, callback);
    }

    /// Whether `other` is this limiter or a clone of it.
    pub fn is(&self, other: &RedisLimiter) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The quota: the most units admitted at once.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    async fn run(&self, op: &'static str, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let reply = self.run_script(op.to_owned(), &[(key.to_vec(), cost)]).await?;
        self.decision(&reply, cost)
    }

    /// The decision in a script's reply to a request of `cost`.
    fn decision(&self, reply: &[i64], cost: u64) -> Result<Decision, Error> {
        match &self.inner.gcra {
            // The TAT's lead over the server's now, in ticks.
            Some(gcra) => match reply.first() {
                Some(&lead) => Ok(gcra.decide_ahead(cost, i128::from(lead))),
                None => Err(Error::Protocol(format!("not a GCRA reply: {reply:?}"))),
            },
            None => decision(reply),
        }
    }

    /// Leased mode's round trip: takes up to `want` units for `key` (which
    /// the caller checked) if that covers `cost`, and returns the decision
    /// with how many were taken.
    pub(crate) async fn lease_async(&self, key: &[u8], cost: u64, want: u64) -> Result<(Decision, u64), Error> {
        let reply = self.run_script(format!("lease:{want}"), &[(key.to_vec(), cost)]).await?;
        self.granted(&reply, cost)
    }

    /// The decision and the units granted in a reply to `lease:N` or
    /// `peek:N` for a request of `cost`.
    fn granted(&self, reply: &[i64], cost: u64) -> Result<(Decision, u64), Error> {
        // After the Decision's seven fields; GCRA's after its lead.
        let at = if self.inner.gcra.is_some() { 1 } else { 7 };
        let granted = reply.get(at).copied().ok_or_else(|| Error::Protocol(format!("no grant in {reply:?}")))?;
        let granted = granted.max(0) as u64;
        // A grant that covers the cost is what the script decided on.
        let decided_cost = if granted > 0 { granted } else { cost };
        Ok((self.decision(reply, decided_cost)?, granted))
    }

    /// Leased mode's peek: what [`lease_async`](Self::lease_async) would
    /// answer, taking nothing (the scripts' `peek:N`).
    pub(crate) async fn peek_lease_async(&self, key: &[u8], cost: u64, want: u64) -> Result<(Decision, u64), Error> {
        let reply = self.run_script(format!("peek:{want}"), &[(key.to_vec(), cost)]).await?;
        self.granted(&reply, cost)
    }

    /// The algorithm (leased mode runs on GCRA and the token bucket only).
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.inner.algorithm
    }

    /// The client clock remembered refusals run on.
    pub(crate) fn clock(&self) -> &AnyClock {
        &self.inner.clock
    }

    /// Runs the algorithm's script for `requests` (one, except for GCRA:
    /// see its script) and returns its reply as integers.
    async fn run_script(&self, op: String, requests: &[(Vec<u8>, u64)]) -> Result<Vec<i64>, Error> {
        let (keys, args) = self.script_call(op, requests.iter().map(|(key, cost)| (key.as_slice(), *cost)))?;
        let reply = RedisStore::spawn(self.inner.store.eval(Arc::clone(&self.inner.script), keys, args)).await?;
        leads(reply)
    }

    /// The keys and arguments of the algorithm's script for `requests`:
    /// any number for GCRA (see its script), one for the others.
    pub(crate) fn script_call<'a>(
        &self,
        op: String,
        requests: impl ExactSizeIterator<Item = (&'a [u8], u64)> + Clone,
    ) -> Result<(Vec<String>, Vec<String>), Error> {
        let inner = &self.inner;
        let mut args = Vec::with_capacity(2 + inner.parameters.len() + requests.len());
        args.push(op);
        let keys = if inner.gcra.is_some() {
            // The parameters, then one cost per key.
            args.extend(inner.parameters.iter().cloned());
            args.extend(requests.clone().map(|(_, cost)| cost.to_string()));
            requests.flat_map(|(key, _)| state_keys(&inner.name, inner.algorithm, key)).collect()
        } else {
            let mut requests = requests;
            let (Some((key, cost)), None) = (requests.next(), requests.next()) else {
                return Err(Error::Unsupported("one request per script for this algorithm"));
            };
            args.push(cost.to_string());
            args.extend(inner.parameters.iter().cloned());
            state_keys(&inner.name, inner.algorithm, key)
        };
        #[cfg(feature = "test-clock")]
        if inner.time == TimeSource::Argument {
            args.push(inner.clock.now_micros().to_string());
        }
        Ok((keys, args))
    }

    /// The script this limiter's checks run.
    pub(crate) fn script(&self) -> &redis::Script {
        &self.inner.script
    }

    /// Its source, for `EVAL` (`pipe`'s answer to `NOSCRIPT`).
    pub(crate) fn script_source(&self) -> &str {
        &self.inner.script_source
    }

    /// Whether one script run decides many checks (GCRA), and how many at most.
    pub(crate) fn checks_per_script(&self) -> usize {
        if self.inner.gcra.is_some() {
            MAX_REQUESTS_PER_SCRIPT
        } else {
            1
        }
    }

    /// The store this limiter talks through.
    pub(crate) fn store(&self) -> &RedisStore {
        &self.inner.store
    }

    /// The answer to the `n`th check of a script run of `requests` whose
    /// reply was `reply` (or which failed): as `check_many_async` makes it.
    pub(crate) fn answer(
        &self,
        reply: &Result<Vec<i64>, Error>,
        n: usize,
        key: &[u8],
        cost: u64,
        sent: i64,
    ) -> Result<Decision, Error> {
        let answer = match reply {
            Ok(leads) if self.inner.gcra.is_some() => self.decision(leads.get(n..).unwrap_or_default(), cost),
            Ok(reply) => self.decision(reply, cost),
            Err(e) => Err(e.clone()),
        };
        self.settle(key, cost, sent, answer)
    }

    /// A decision made without a round trip: a remembered refusal still in
    /// force (see the module docs).
    pub(crate) fn decided_locally(&self, key: &[u8], cost: u64) -> Option<Decision> {
        if cost > self.inner.limit {
            // Never admitted, and the server says so (a retry-after of
            // `NEVER`); a remembered refusal would give a finite one.
            return None;
        }
        let mut refusals = self.inner.refusals.lock().unwrap_or_else(|p| p.into_inner());
        let refusal = *refusals.get(key)?;
        let now = self.inner.clock.now_micros();
        if now >= refusal.until {
            refusals.remove(key);
            return None;
        }
        if cost < refusal.cost {
            return None;
        }
        let elapsed = now - refusal.decided;
        let left = refusal.until - now;
        let mut decision = refusal.decision;
        decision.retry_after_micros = left.max(1);
        if decision.reset_after_micros != NEVER {
            decision.reset_after_micros = (decision.reset_after_micros - elapsed).max(decision.retry_after_micros);
        }
        Some(decision)
    }

    fn remember(&self, key: &[u8], cost: u64, sent: i64, decision: Decision) {
        let until = sent.saturating_add(decision.retry_after_micros);
        let mut refusals = self.inner.refusals.lock().unwrap_or_else(|p| p.into_inner());
        if refusals.len() >= MAX_REMEMBERED_REFUSALS {
            let now = self.inner.clock.now_micros();
            refusals.retain(|_, r| r.until > now);
            if refusals.len() >= MAX_REMEMBERED_REFUSALS {
                return;
            }
        }
        refusals.insert(key.to_vec(), Refusal { cost, decided: sent, until, decision });
    }
}

/// A script's reply as integers (GCRA's reply to a check or a look is one).
pub(crate) fn leads(reply: redis::Value) -> Result<Vec<i64>, Error> {
    match reply {
        redis::Value::Int(n) => Ok(vec![n]),
        reply => redis::from_redis_value(reply).map_err(|e| Error::Protocol(e.to_string())),
    }
}

/// The Redis keys of one user key's state.
fn state_keys(name: &str, algorithm: Algorithm, key: &[u8]) -> Vec<String> {
    let state = keys::keyed_state_key(name, key, algorithm.wire_name());
    if algorithm == Algorithm::SlidingLog {
        let meta = format!("{state}:meta");
        vec![state, meta]
    } else {
        vec![state]
    }
}

/// A script's `Decision` reply: seven integers, -1 for "never" (see
/// `lua/decision.lua`).
pub(crate) fn decision(reply: &[i64]) -> Result<Decision, Error> {
    let [allowed, limit, remaining, retry_after, reset_after, wait, window] = reply
        .get(..7)
        .and_then(|r| <[i64; 7]>::try_from(r).ok())
        .ok_or_else(|| Error::Protocol(format!("not a decision: {reply:?}")))?;
    let duration = |v: i64| if v < 0 { NEVER } else { v };
    Ok(Decision {
        allowed: allowed == 1,
        limit: limit.max(0) as u64,
        remaining: remaining.max(0) as u64,
        retry_after_micros: duration(retry_after),
        reset_after_micros: duration(reset_after),
        wait_micros: duration(wait),
        window_micros: duration(window),
    })
}
