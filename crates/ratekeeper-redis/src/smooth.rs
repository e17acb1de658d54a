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
//! intervals, rates) are computed bit for bit as in Java. The Guava vectors
//! whose results depend on a `long` beyond 2^53 are listed, with the reason,
//! in this crate's `tests/smooth_vectors.rs`; every other vector passes.
//!
//! ## Expiry
//!
//! A new Guava limiter starts with no stored permits, one that has been idle
//! starts full: recreating an expired limiter is not the same as keeping it.
//! So the hash expires only after it has been unused for the configured idle
//! TTL (default: never), and a limiter recreated after that starts afresh.

use std::sync::Mutex;
use std::time::Duration;

use ratekeeper_core::smooth::{check_permits, DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use ratekeeper_core::{SmoothKind, SmoothRateLimiter};

use crate::error::Error;
use crate::keys;
use crate::scripts::{self, TimeSource};

/// Guava's `RateLimiter`, its state in Redis. Safe to share between threads.
pub struct RedisRateLimiter {
    conn: Mutex<redis::Connection>,
    key: String,
    script: redis::Script,
    /// What creates the state if the hash does not exist yet: kind, rate,
    /// burst seconds or warm-up micros, cold factor.
    create_args: [String; 4],
    idle_ttl_millis: u64,
    #[cfg(feature = "test-clock")]
    test_clock: Option<std::sync::Arc<ratekeeper::ManualClock>>,
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
    test_clock: Option<std::sync::Arc<ratekeeper::ManualClock>>,
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
        &self.key
    }

    fn run(&self, op: &str, a: &str, b: &str) -> Result<Vec<String>, Error> {
        let mut invocation = self.script.key(&self.key);
        invocation.arg(op).arg(&self.create_args[..]).arg(self.idle_ttl_millis).arg(a).arg(b);
        #[cfg(feature = "test-clock")]
        if let Some(clock) = &self.test_clock {
            use ratekeeper::Clock;
            invocation.arg(clock.now_micros());
        }
        let mut conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(invocation.invoke(&mut *conn)?)
    }

    fn sleep(&self, micros: i64) {
        if micros <= 0 {
            return;
        }
        #[cfg(feature = "test-clock")]
        if let Some(clock) = &self.test_clock {
            clock.advance_micros(micros);
            return;
        }
        std::thread::sleep(Duration::from_micros(micros as u64));
    }

    /// Guava's `reserve`: takes `permits` and returns how long to wait.
    pub fn reserve(&self, permits: u32) -> Result<Duration, Error> {
        check_permits(permits)?;
        let reply = self.run("reserve", &permits.to_string(), "")?;
        Ok(micros_to_duration(micros(&reply, 0)?))
    }

    /// Guava's `acquire`: takes `permits`, sleeping until they are granted,
    /// and returns the time slept.
    pub fn acquire(&self, permits: u32) -> Result<Duration, Error> {
        let wait = self.reserve(permits)?;
        self.sleep(wait.as_micros() as i64);
        Ok(wait)
    }

    /// Guava's `tryAcquire(permits, timeout)`: `Some(wait)` when taken (the
    /// caller should wait that long), `None` when they could not be had
    /// within `timeout` (nothing taken).
    pub fn try_reserve(&self, permits: u32, timeout: Duration) -> Result<Option<Duration>, Error> {
        check_permits(permits)?;
        let timeout = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX);
        let reply = self.run("try", &permits.to_string(), &timeout.to_string())?;
        let wait = micros(&reply, 0)?;
        Ok((wait >= 0).then(|| micros_to_duration(wait)))
    }

    /// Guava's `tryAcquire(permits, timeout)`, sleeping the wait when taken.
    pub fn try_acquire(&self, permits: u32, timeout: Duration) -> Result<bool, Error> {
        match self.try_reserve(permits, timeout)? {
            Some(wait) => {
                self.sleep(wait.as_micros() as i64);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Guava's `setRate`, for every process sharing the limiter.
    pub fn set_rate(&self, permits_per_second: f64) -> Result<(), Error> {
        // The same check as the local limiter (and Guava).
        SmoothRateLimiter::bursty(permits_per_second, 0.0)?;
        self.run("set_rate", &format!("{permits_per_second:?}"), "")?;
        Ok(())
    }

    /// Guava's `getRate`, bit for bit.
    pub fn rate(&self) -> Result<f64, Error> {
        let reply = self.run("get", "", "")?;
        double(&reply, 0)
    }

    /// How long a request made now would wait, without taking anything.
    pub fn time_until_available(&self) -> Result<Duration, Error> {
        let reply = self.run("query", "0", "")?;
        Ok(micros_to_duration(micros(&reply, 0)?))
    }

    /// Whether `try_acquire(_, timeout)` would succeed now, taking nothing.
    pub fn can_acquire(&self, timeout: Duration) -> Result<bool, Error> {
        let timeout = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX);
        let reply = self.run("query", &timeout.to_string(), "")?;
        Ok(reply.get(1).map(String::as_str) == Some("1"))
    }
}

impl std::fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiter").field("key", &self.key).finish_non_exhaustive()
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
    /// the module docs for why recreation is not free).
    pub fn idle_ttl(mut self, ttl: Duration) -> Self {
        self.idle_ttl = Some(ttl);
        self
    }

    /// Tests only: the scripts read the time from this manual clock, and
    /// sleeping advances it.
    #[cfg(feature = "test-clock")]
    pub fn test_clock(mut self, clock: std::sync::Arc<ratekeeper::ManualClock>) -> Self {
        self.test_clock = Some(clock);
        self
    }

    /// Checks the parameters exactly as the local limiter does, takes a
    /// connection from `client`, and creates the shared state unless another
    /// process already has: like a Guava limiter, it starts counting time
    /// from its creation.
    pub fn connect(self, client: &redis::Client) -> Result<RedisRateLimiter, Error> {
        let warmup_micros = self.warmup.map(|w| i64::try_from(w.as_micros()).unwrap_or(i64::MAX));
        let local = match warmup_micros {
            None => SmoothRateLimiter::bursty(self.permits_per_second, self.max_burst_seconds)?,
            Some(w) => SmoothRateLimiter::warming_up(self.permits_per_second, w, self.cold_factor)?,
        };
        let create_args = match local.kind() {
            SmoothKind::Bursty { max_burst_seconds } => [
                "bursty".to_owned(),
                lua_double(self.permits_per_second),
                lua_double(max_burst_seconds),
                "0".to_owned(),
            ],
            SmoothKind::WarmingUp { warmup_micros, cold_factor } => [
                "warming".to_owned(),
                lua_double(self.permits_per_second),
                warmup_micros.to_string(),
                lua_double(cold_factor),
            ],
        };
        #[cfg(feature = "test-clock")]
        let time = if self.test_clock.is_some() { TimeSource::Argument } else { TimeSource::Server };
        #[cfg(not(feature = "test-clock"))]
        let time = TimeSource::Server;
        let limiter = RedisRateLimiter {
            conn: Mutex::new(client.get_connection()?),
            key: keys::state_key(&self.name, "smooth", None),
            script: scripts::smooth(time),
            create_args,
            idle_ttl_millis: self.idle_ttl.map_or(0, |t| t.as_millis().max(1) as u64),
            #[cfg(feature = "test-clock")]
            test_clock: self.test_clock,
        };
        limiter.run("init", "", "")?;
        Ok(limiter)
    }
}

/// A double as Lua's `tonumber` reads it back exactly (`inf` for infinity;
/// NaN never reaches a script: the checks reject it).
fn lua_double(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{x:?}")
    }
}

fn field(reply: &[String], i: usize) -> Result<&str, Error> {
    reply.get(i).map(String::as_str).ok_or_else(|| Error::Protocol(format!("reply too short: {reply:?}")))
}

/// A number the script printed with `%.17g` (`inf`, `nan`, `-nan` included).
fn double(reply: &[String], i: usize) -> Result<f64, Error> {
    let s = field(reply, i)?;
    let s = s.strip_prefix('-').filter(|rest| rest.eq_ignore_ascii_case("nan")).unwrap_or(s);
    s.parse::<f64>().map_err(|_| Error::Protocol(format!("not a number: {s:?}")))
}

/// A `long` the script kept as a double: 2^63 stands for `i64::MAX`, as the
/// saturating cast gives.
fn micros(reply: &[String], i: usize) -> Result<i64, Error> {
    Ok(double(reply, i)? as i64)
}

fn micros_to_duration(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}
