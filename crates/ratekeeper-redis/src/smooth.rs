//! [`RedisRateLimiter`]: Guava's `RateLimiter` shared by many processes.
//!
//! The state of Guava's `SmoothBursty`/`SmoothWarmingUp` (stored permits,
//! next free ticket, rate) lives in one Redis hash, and every operation is
//! one atomic script run (`lua/smooth.lua`) that performs exactly the steps
//! of ratekeeper-core's `SmoothRateLimiter` at the server's time. So
//! `acquire`/`try_acquire` from any number of processes give the waits one
//! Guava limiter would give for the same sequence of calls.
//!
//! ## Exactness
//!
//! Lua's only number type is the IEEE double, so the script keeps Guava's
//! `long`s (microsecond times and waits) as doubles: exact while they stay
//! within ±2^53 µs (285 years), rounded beyond. Doubles (stored permits,
//! intervals, rates) are computed bit for bit as in Java. Of the 439 Guava
//! vectors, the 2 whose results depend on a `long` beyond 2^53 differ
//! (listed with the reason in `tests/smooth_vectors.rs`); all others pass.
//!
//! ## Lifetime
//!
//! Like a Guava limiter, the shared one counts time from its creation: the
//! first [`connect`](RedisRateLimiterBuilder::connect) creates the hash, and
//! later ones (other processes) join it, keeping its rate and parameters.
//! A new Guava limiter starts with no stored permits while an idle one is
//! full, so recreating an expired limiter is not the same as keeping it:
//! the hash expires only after it has been unused for the configured idle
//! TTL (default: never), and a limiter recreated after that starts afresh.
//!
//! ## Inspect and reset
//!
//! [`inspect`](RedisRateLimiter::inspect) reads the shared state as of the
//! server's now — the rate, the stored permits, the most that can be
//! stored, and how long until the next permit is free (what a `reserve`
//! made now would wait) — writing nothing: a missing hash is read as the
//! new limiter the next operation would create. Guava has no such method
//! (the local `RateLimiter` shows the same through `time_until_available`
//! and its snapshot); it is named as the Redis limiters' other state reads.
//!
//! [`reset`](RedisRateLimiter::reset) deletes the hash: the next operation,
//! from any process, creates the limiter afresh (as a new Guava limiter:
//! no stored permits, the next permit free at once) with the rate and
//! parameters of the process that makes it — a rate set with `set_rate` is
//! forgotten.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper_core::smooth::{check_permits, DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use ratekeeper_core::{SmoothKind, SmoothRateLimiter};

use crate::error::Error;
use crate::keys;
use crate::options::RedisOption;
use crate::reply::{self, Reply};
use crate::scripts::{self, TimeSource};
use crate::store::RedisStore;

/// Guava's `RateLimiter`, its state in Redis. Cheap to clone; safe to share
/// between threads. Every method has a blocking form and an `_async` form.
#[derive(Clone)]
pub struct RedisRateLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    store: RedisStore,
    key: String,
    script: Arc<redis::Script>,
    /// What creates the state if the hash does not exist yet: kind, rate,
    /// burst seconds or warm-up micros, cold factor; then the idle TTL.
    create_args: [String; 5],
    #[cfg(feature = "test-clock")]
    test_clock: Option<Arc<ratekeeper::ManualClock>>,
}

/// The state of a [`RedisRateLimiter`] as [`inspect`](RedisRateLimiter::inspect)
/// reads it, at the server's time of the read.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RateLimiterState {
    /// Permits per second (Guava's `getRate`).
    pub rate: f64,
    /// The permits stored now (Guava's `storedPermits`, brought up to now).
    pub stored_permits: f64,
    /// The most permits that can be stored (`maxPermits`).
    pub max_permits: f64,
    /// How long until the next permit is free: what a `reserve` made now
    /// would wait (zero when one is free now).
    pub time_until_available: Duration,
}

/// Builds a [`RedisRateLimiter`]; start from [`RedisRateLimiter::builder`].
#[derive(Debug, Clone)]
pub struct RedisRateLimiterBuilder {
    name: String,
    permits_per_second: f64,
    max_burst_seconds: f64,
    warmup: Option<Duration>,
    cold_factor: f64,
    idle_ttl: Option<Duration>,
    #[cfg(feature = "test-clock")]
    test_clock: Option<Arc<ratekeeper::ManualClock>>,
}

impl std::fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiter").field("key", &self.inner.key).finish_non_exhaustive()
    }
}

impl Inner {
    async fn run(self: Arc<Self>, op: &'static str, a: String, b: String) -> Result<Reply, Error> {
        let mut args = Vec::with_capacity(10);
        args.push(op.to_owned());
        args.extend(self.create_args.iter().cloned());
        args.push(a);
        args.push(b);
        #[cfg(feature = "test-clock")]
        if let Some(clock) = &self.test_clock {
            use ratekeeper::Clock;
            args.push(clock.now_micros().to_string());
        }
        let value = self.store.eval(Arc::clone(&self.script), vec![self.key.clone()], args).await?;
        Reply::new(value)
    }

    /// Sleeps a granted wait: on the test clock (which it advances) or for
    /// real, on the store's runtime.
    async fn sleep(&self, wait: Duration) {
        #[cfg(feature = "test-clock")]
        if let Some(clock) = &self.test_clock {
            clock.advance(wait);
            return;
        }
        if !wait.is_zero() {
            RedisStore::sleep(wait).await;
        }
    }
}

impl RedisRateLimiter {
    /// A limiter named `name` (every process using the same name and Redis
    /// shares it) at `permits_per_second`. The name is escaped into the key,
    /// so any string is safe.
    pub fn builder(name: &str, permits_per_second: f64) -> RedisRateLimiterBuilder {
        RedisRateLimiterBuilder {
            name: name.to_owned(),
            permits_per_second,
            max_burst_seconds: DEFAULT_MAX_BURST_SECONDS,
            warmup: None,
            cold_factor: DEFAULT_COLD_FACTOR,
            idle_ttl: None,
            #[cfg(feature = "test-clock")]
            test_clock: None,
        }
    }

    /// The Redis key holding the state.
    pub fn key(&self) -> &str {
        &self.inner.key
    }

    fn run(&self, op: &'static str, a: String, b: String) -> impl std::future::Future<Output = Result<Reply, Error>> {
        RedisStore::spawn(Arc::clone(&self.inner).run(op, a, b))
    }

    /// Guava's `reserve`: takes `permits` and returns how long to wait.
    pub async fn reserve_async(&self, permits: u32) -> Result<Duration, Error> {
        check_permits(permits)?;
        let reply = self.run("reserve", permits.to_string(), String::new()).await?;
        Ok(reply::wait(reply.micros(0)?))
    }

    /// Guava's `acquire`: takes `permits`, waits until they are granted, and
    /// returns the time waited.
    pub async fn acquire_async(&self, permits: u32) -> Result<Duration, Error> {
        let wait = self.reserve_async(permits).await?;
        let inner = Arc::clone(&self.inner);
        RedisStore::spawn(async move { inner.sleep(wait).await }).await;
        Ok(wait)
    }

    /// Guava's `tryAcquire(permits, timeout)` without the wait: `Some(wait)`
    /// when taken (the caller should wait that long), `None` when they could
    /// not be had within `timeout` (nothing taken).
    pub async fn try_reserve_async(&self, permits: u32, timeout: Duration) -> Result<Option<Duration>, Error> {
        check_permits(permits)?;
        let reply = self.run("try", permits.to_string(), reply::micros_arg(timeout)).await?;
        let wait = reply.micros(0)?;
        Ok((wait >= 0).then(|| reply::wait(wait)))
    }

    /// Guava's `tryAcquire(permits, timeout)`, waiting when taken.
    pub async fn try_acquire_async(&self, permits: u32, timeout: Duration) -> Result<bool, Error> {
        match self.try_reserve_async(permits, timeout).await? {
            Some(wait) => {
                let inner = Arc::clone(&self.inner);
                RedisStore::spawn(async move { inner.sleep(wait).await }).await;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Guava's `setRate`, for every process sharing the limiter.
    pub async fn set_rate_async(&self, permits_per_second: f64) -> Result<(), Error> {
        // The same check as the local limiter (and Guava).
        SmoothRateLimiter::bursty(permits_per_second, 0.0)?;
        self.run("set_rate", reply::double_arg(permits_per_second), String::new()).await?;
        Ok(())
    }

    /// Guava's `getRate`, bit for bit.
    pub async fn rate_async(&self) -> Result<f64, Error> {
        self.run("get", String::new(), String::new()).await?.double(0)
    }

    /// How long a request made now would wait, without taking anything.
    pub async fn time_until_available_async(&self) -> Result<Duration, Error> {
        let reply = self.run("query", "0".to_owned(), String::new()).await?;
        Ok(reply::wait(reply.micros(0)?))
    }

    /// Whether `try_acquire(_, timeout)` would succeed now, taking nothing.
    pub async fn can_acquire_async(&self, timeout: Duration) -> Result<bool, Error> {
        let reply = self.run("query", reply::micros_arg(timeout), String::new()).await?;
        Ok(reply.micros(1)? == 1)
    }

    /// The shared state as of now, writing nothing (see the module docs).
    pub async fn inspect_async(&self) -> Result<RateLimiterState, Error> {
        let reply = self.run("inspect", String::new(), String::new()).await?;
        Ok(RateLimiterState {
            rate: reply.double(0)?,
            stored_permits: reply.double(1)?,
            max_permits: reply.double(2)?,
            time_until_available: reply::wait(reply.micros(3)?),
        })
    }

    /// [`inspect_async`](Self::inspect_async) with a callback on the
    /// crate's runtime thread.
    pub fn inspect_with(&self, callback: impl FnOnce(Result<RateLimiterState, Error>) + Send + 'static) {
        let this = self.clone();
        RedisStore::spawn_with(async move { this.inspect_async().await }, callback);
    }

    /// Blocking [`inspect_async`](Self::inspect_async).
    pub fn inspect(&self) -> Result<RateLimiterState, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.inspect_async().await })
    }

    /// Deletes the shared state (see the module docs): whether there was
    /// one. Every process's next operation finds a new limiter.
    pub async fn reset_async(&self) -> Result<bool, Error> {
        crate::forget::forget(&self.inner.store, vec![self.inner.key.clone()]).await
    }

    /// [`reset_async`](Self::reset_async) with a callback on the crate's
    /// runtime thread.
    pub fn reset_with(&self, callback: impl FnOnce(Result<bool, Error>) + Send + 'static) {
        let this = self.clone();
        RedisStore::spawn_with(async move { this.reset_async().await }, callback);
    }

    /// Blocking [`reset_async`](Self::reset_async).
    pub fn reset(&self) -> Result<bool, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.reset_async().await })
    }

    /// [`reserve_async`](Self::reserve_async) with a callback on the crate's
    /// runtime thread (for bindings: the caller then waits on its own timer).
    pub fn reserve_with(&self, permits: u32, callback: impl FnOnce(Result<Duration, Error>) + Send + 'static) {
        let this = self.clone();
        RedisStore::spawn_with(async move { this.reserve_async(permits).await }, callback);
    }

    /// [`try_reserve_async`](Self::try_reserve_async) with a callback.
    pub fn try_reserve_with(
        &self,
        permits: u32,
        timeout: Duration,
        callback: impl FnOnce(Result<Option<Duration>, Error>) + Send + 'static,
    ) {
        let this = self.clone();
        RedisStore::spawn_with(async move { this.try_reserve_async(permits, timeout).await }, callback);
    }

    /// Blocking [`reserve_async`](Self::reserve_async).
    pub fn reserve(&self, permits: u32) -> Result<Duration, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.reserve_async(permits).await })
    }

    /// Blocking [`acquire_async`](Self::acquire_async): sleeps this thread.
    pub fn acquire(&self, permits: u32) -> Result<Duration, Error> {
        let wait = self.reserve(permits)?;
        self.sleep_blocking(wait);
        Ok(wait)
    }

    /// Blocking [`try_reserve_async`](Self::try_reserve_async).
    pub fn try_reserve(&self, permits: u32, timeout: Duration) -> Result<Option<Duration>, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.try_reserve_async(permits, timeout).await })
    }

    /// Blocking [`try_acquire_async`](Self::try_acquire_async): sleeps this
    /// thread when taken.
    pub fn try_acquire(&self, permits: u32, timeout: Duration) -> Result<bool, Error> {
        match self.try_reserve(permits, timeout)? {
            Some(wait) => {
                self.sleep_blocking(wait);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Blocking [`set_rate_async`](Self::set_rate_async).
    pub fn set_rate(&self, permits_per_second: f64) -> Result<(), Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.set_rate_async(permits_per_second).await })
    }

    /// Blocking [`rate_async`](Self::rate_async).
    pub fn rate(&self) -> Result<f64, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.rate_async().await })
    }

    /// Blocking [`time_until_available_async`](Self::time_until_available_async).
    pub fn time_until_available(&self) -> Result<Duration, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.time_until_available_async().await })
    }

    /// Blocking [`can_acquire_async`](Self::can_acquire_async).
    pub fn can_acquire(&self, timeout: Duration) -> Result<bool, Error> {
        let this = self.clone();
        RedisStore::block_on(async move { this.can_acquire_async(timeout).await })
    }

    fn sleep_blocking(&self, wait: Duration) {
        #[cfg(feature = "test-clock")]
        if let Some(clock) = &self.inner.test_clock {
            clock.advance(wait);
            return;
        }
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}

impl RedisRateLimiterBuilder {
    /// For a bursty limiter: seconds of permits saved up while idle
    /// (default 1.0, Guava's).
    pub fn max_burst_seconds(mut self, seconds: f64) -> Self {
        self.max_burst_seconds = seconds;
        self
    }

    /// Makes a warming-up limiter (Guava's `SmoothWarmingUp`).
    pub fn warmup(mut self, warmup: Duration) -> Self {
        self.warmup = Some(warmup);
        self
    }

    /// For a warming-up limiter: the cold factor (default 3.0).
    pub fn cold_factor(mut self, cold_factor: f64) -> Self {
        self.cold_factor = cold_factor;
        self
    }

    /// Lets the state expire after this long unused (default: never; see
    /// the module docs for why recreation is not free): at least 1 µs
    /// ([`RedisOption::IdleTtl`]), checked by [`connect`](Self::connect).
    pub fn idle_ttl(mut self, ttl: Duration) -> Self {
        self.idle_ttl = Some(ttl);
        self
    }

    /// Tests only: the scripts read the time from this manual clock, and
    /// waiting advances it.
    #[cfg(feature = "test-clock")]
    pub fn test_clock(mut self, clock: Arc<ratekeeper::ManualClock>) -> Self {
        self.test_clock = Some(clock);
        self
    }

    /// Checks the parameters exactly as the local limiter does, then creates
    /// the shared state unless another process already has (see the module
    /// docs: like a Guava limiter, it counts time from its creation).
    pub fn connect(self, store: &RedisStore) -> Result<RedisRateLimiter, Error> {
        let warmup_micros =
            self.warmup.map(|w| ratekeeper::micros_from_duration(ratekeeper::Argument::Warmup, w)).transpose()?;
        let local = match warmup_micros {
            None => SmoothRateLimiter::bursty(self.permits_per_second, self.max_burst_seconds)?,
            Some(w) => SmoothRateLimiter::warming_up(self.permits_per_second, w, self.cold_factor)?,
        };
        let (kind, parameter, cold_factor) = match local.kind() {
            SmoothKind::Bursty { max_burst_seconds } => ("bursty", reply::double_arg(max_burst_seconds), "0".into()),
            SmoothKind::WarmingUp { warmup_micros, cold_factor } => {
                ("warming", warmup_micros.to_string(), reply::double_arg(cold_factor))
            }
        };
        let idle_ttl = self.idle_ttl.map(|t| RedisOption::IdleTtl.check(t)).transpose()?;
        // Whole milliseconds for `PEXPIRE`; 0: never expires.
        let idle_ttl_millis = idle_ttl.map_or(0, |t| t.as_millis().max(1));
        #[cfg(feature = "test-clock")]
        let time = if self.test_clock.is_some() { TimeSource::Argument } else { TimeSource::Server };
        #[cfg(not(feature = "test-clock"))]
        let time = TimeSource::Server;
        let limiter = RedisRateLimiter {
            inner: Arc::new(Inner {
                store: store.clone(),
                key: keys::state_key(&self.name, "smooth", None),
                script: Arc::new(scripts::smooth(time)),
                create_args: [
                    kind.to_owned(),
                    reply::double_arg(self.permits_per_second),
                    parameter,
                    cold_factor,
                    idle_ttl_millis.to_string(),
                ],
                #[cfg(feature = "test-clock")]
                test_clock: self.test_clock,
            }),
        };
        let this = limiter.clone();
        RedisStore::block_on(async move { this.run("init", String::new(), String::new()).await })?;
        Ok(limiter)
    }
}
