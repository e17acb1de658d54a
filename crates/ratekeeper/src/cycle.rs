//! [`CycleLimiter`]: Resilience4j's `AtomicRateLimiter`, shareable between
//! threads, on a [`Clock`], with the waits it hands out slept (blocking) or
//! awaited (async). Semantics in [`core::cycle`](ratekeeper_core::cycle).
//!
//! The state is a cycle number and a 128-bit count, more than one
//! compare-and-swap publishes portably, so it sits behind a [`Mutex`] held
//! for one core call (Resilience4j's compare-and-set loop, without the
//! back-off). Waiting happens outside the lock, and the waiting callers are
//! counted as Resilience4j counts its parked threads.

use std::future::Future;
use std::time::Duration;

use ratekeeper_core::cycle::{CycleConfig, CycleLimiter as CoreCycle, CycleMetrics};
use ratekeeper_core::{Argument, Decision, Error};

use crate::clock::{micros_to_duration, Clock, MonotonicClock};
use crate::sync::{AtomicUsize, Mutex, Ordering};

/// What the limiter would answer a request for one permit now, and how many
/// callers are waiting (Resilience4j's `AtomicRateLimiterMetrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CycleLimiterMetrics {
    /// Permits available in the current cycle; negative when permits of
    /// later cycles are reserved (`getAvailablePermissions`).
    pub available_permissions: i64,
    /// How long a request for one permit would wait (`getNanosToWait`).
    pub time_to_wait: Duration,
    /// The current cycle, counted from the limiter's creation (`getCycle`).
    pub cycle: i64,
    /// Callers sleeping in [`CycleLimiter::acquire_permission`] or awaiting
    /// [`CycleLimiter::acquire_permission_async`]
    /// (`getNumberOfWaitingThreads`).
    pub number_of_waiting_threads: usize,
}

/// Resilience4j's `AtomicRateLimiter`: `limit_for_period` permits per
/// `limit_refresh_period` cycle, reservations into later cycles within the
/// timeout.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{CycleConfig, CycleLimiter, ManualClock};
///
/// let clock = Arc::new(ManualClock::new());
/// let config = CycleConfig { limit_for_period: 2, limit_refresh_period_micros: 100_000, timeout_micros: 150_000 };
/// let limiter = CycleLimiter::with_clock(config, Arc::clone(&clock))?;
/// assert!(limiter.acquire_permission(2)); // this cycle's two
/// assert!(limiter.acquire_permission(1)); // sleeps to the next cycle
/// assert_eq!(clock.now(), Duration::from_millis(100));
/// assert_eq!(limiter.reserve_permission(1), Some(Duration::ZERO));
/// assert_eq!(limiter.reserve_permission(1), Some(Duration::from_millis(100)));
/// assert_eq!(limiter.reserve_permission(3), None); // would wait 200 ms
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct CycleLimiter<C: Clock = MonotonicClock> {
    state: Mutex<CoreCycle>,
    clock: C,
    origin_micros: i64,
    waiting: AtomicUsize,
}

impl CycleLimiter<MonotonicClock> {
    /// A limiter with `config` on the monotonic clock.
    pub fn new(config: CycleConfig) -> Result<Self, Error> {
        Self::with_clock(config, MonotonicClock::new())
    }
}

/// A [`CycleConfig`] from durations, as Resilience4j's builder takes them:
/// each is whole microseconds (a part below 1 µs is dropped), and one
/// beyond `i64::MAX` µs is an error naming it (Resilience4j's "too large").
pub fn cycle_config(
    limit_for_period: u64,
    limit_refresh_period: Duration,
    timeout_duration: Duration,
) -> Result<CycleConfig, Error> {
    let config = CycleConfig {
        limit_for_period,
        limit_refresh_period_micros: micros(Argument::LimitRefreshPeriod, limit_refresh_period)?,
        timeout_micros: micros(Argument::TimeoutDuration, timeout_duration)?,
    };
    config.validate()?;
    Ok(config)
}

fn micros(argument: Argument, duration: Duration) -> Result<i64, Error> {
    i64::try_from(duration.as_micros()).map_err(|_| Error::invalid_uint(argument, u64::MAX))
}

/// Counts a caller as waiting while it lives (also when an async wait is
/// dropped half-way).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<C: Clock> CycleLimiter<C> {
    /// A limiter with `config` on `clock`; its first cycle starts now.
    pub fn with_clock(config: CycleConfig, clock: C) -> Result<Self, Error> {
        let core = CoreCycle::new(config)?;
        let origin_micros = clock.now_micros();
        Ok(CycleLimiter { state: Mutex::new(core), clock, origin_micros, waiting: AtomicUsize::new(0) })
    }

    /// Runs `f` on the core at the clock's time.
    fn with<R>(&self, f: impl FnOnce(&mut CoreCycle, i64) -> R) -> R {
        let mut core = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = self.clock.now_micros().wrapping_sub(self.origin_micros);
        f(&mut core, now)
    }

    /// Resilience4j's `acquirePermission(permits)`: takes the permits,
    /// sleeping until their cycle when they are reserved ahead, and returns
    /// `true`; or, when the wait would exceed the timeout, takes nothing,
    /// sleeps for the timeout — as Resilience4j does — and returns `false`.
    pub fn acquire_permission(&self, permits: u64) -> bool {
        let (decision, timeout) = self.check_with_timeout(permits);
        let wait = if decision.allowed { decision.wait_micros } else { timeout };
        if wait > 0 {
            let _waiting = Waiting::new(&self.waiting);
            self.clock.sleep_micros(wait);
        }
        decision.allowed
    }

    /// [`acquire_permission`](Self::acquire_permission) for async code:
    /// `sleep` is the runtime's timer (`tokio::time::sleep`, or a manual
    /// clock's advance in tests), awaited for the same wait.
    pub async fn acquire_permission_async<F, Fut>(&self, permits: u64, sleep: F) -> bool
    where
        F: FnOnce(Duration) -> Fut,
        Fut: Future<Output = ()>,
    {
        let (decision, timeout) = self.check_with_timeout(permits);
        let wait = if decision.allowed { decision.wait_micros } else { timeout };
        if wait > 0 {
            let _waiting = Waiting::new(&self.waiting);
            sleep(micros_to_duration(wait)).await;
        }
        decision.allowed
    }

    /// The decision and the timeout it was made with, in one lock.
    fn check_with_timeout(&self, permits: u64) -> (Decision, i64) {
        self.with(|core, now| (core.acquire_permission(permits, now), core.config().timeout_micros))
    }

    /// Asks for the permits with the configured timeout without sleeping:
    /// the core's decision, whose `wait_micros` the caller waits out before
    /// acting (for callers with their own timers).
    pub fn check(&self, permits: u64) -> Decision {
        self.with(|core, now| core.acquire_permission(permits, now))
    }

    /// Resilience4j's `reservePermission(permits)`: the wait the permits
    /// were reserved for (`Some(Duration::ZERO)`: go ahead), or `None` when
    /// it would exceed the timeout (nothing taken). Never sleeps.
    pub fn reserve_permission(&self, permits: u64) -> Option<Duration> {
        self.with(|core, now| core.reserve_permission(permits, now)).map(micros_to_duration)
    }

    /// Takes the permits only if the current cycle has them: no wait, no
    /// reservation ahead, whatever the timeout (not a Resilience4j method;
    /// its `acquirePermission` always uses the configured timeout).
    pub fn try_acquire_permission(&self, permits: u64) -> bool {
        self.check_now(permits).allowed
    }

    /// [`try_acquire_permission`](Self::try_acquire_permission) answered
    /// with the decision (a refusal's `retry_after` is for another try).
    pub fn check_now(&self, permits: u64) -> Decision {
        self.with(|core, now| core.try_acquire_permission(permits, now))
    }

    /// Sets the permits per cycle from the next calculation on
    /// (`changeLimitForPeriod`; the current cycle keeps its count).
    pub fn change_limit_for_period(&self, limit_for_period: u64) -> Result<(), Error> {
        self.with(|core, _| core.change_limit_for_period(limit_for_period))
    }

    /// Sets the timeout for the next requests (`changeTimeoutDuration`).
    pub fn change_timeout_duration(&self, timeout: Duration) -> Result<(), Error> {
        let micros = micros(Argument::TimeoutDuration, timeout)?;
        self.with(|core, _| core.change_timeout_duration(micros))
    }

    /// Takes every permit left in the current cycle, at once
    /// (`drainPermissions`); returns how many.
    pub fn drain_permissions(&self) -> u64 {
        self.with(|core, now| core.drain_permissions(now))
    }

    /// The metrics now.
    pub fn metrics(&self) -> CycleLimiterMetrics {
        let CycleMetrics { available_permissions, micros_to_wait, cycle } = self.with(|core, now| core.metrics(now));
        CycleLimiterMetrics {
            available_permissions,
            time_to_wait: micros_to_duration(micros_to_wait),
            cycle,
            number_of_waiting_threads: self.waiting.load(Ordering::Acquire),
        }
    }

    /// Permits available in the current cycle (negative: reserved ahead).
    pub fn available_permissions(&self) -> i64 {
        self.with(|core, now| core.metrics(now).available_permissions)
    }

    /// The parameters in force.
    pub fn config(&self) -> CycleConfig {
        self.with(|core, _| *core.config())
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreCycle {
        self.with(|core, _| *core)
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}
