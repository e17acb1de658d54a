//! [`Bbr`] and [`SystemGuard`]: the load-driven limiters, shareable between
//! threads, reading the time from a [`Clock`] and the load from a
//! [`LoadSignal`]. Semantics in [`core::bbr`](ratekeeper_core::bbr) and
//! [`core::system_guard`](ratekeeper_core::system_guard).
//!
//! Both keep rolling statistics too large to publish with one
//! compare-and-swap (a BBR window has up to 128 buckets), so each sits
//! behind a [`Mutex`], as the sliding log does; the lock is held for one
//! core call.

use std::sync::Arc;

use ratekeeper_core::bbr::{Bbr as CoreBbr, BbrConfig, BbrPermit, BbrStats};
use ratekeeper_core::system_guard::{
    SystemGuard as CoreGuard, SystemPermit, SystemRefusal, SystemRule, SystemStats, SystemThreshold,
};
use ratekeeper_core::{Decision, Error, Load};

use crate::clock::{Clock, MonotonicClock};
use crate::load::{LoadSignal, SystemLoad};
use crate::sync::Mutex;

impl SystemLoad {
    /// The process-wide sampler (default options), started on first use and
    /// never stopped: the signal the bindings give a limiter made without
    /// one, as every Kratos limiter reads its one global CPU sampler.
    pub fn shared() -> Arc<SystemLoad> {
        static SHARED: std::sync::OnceLock<Arc<SystemLoad>> = std::sync::OnceLock::new();
        Arc::clone(SHARED.get_or_init(|| Arc::new(SystemLoad::start())))
    }
}

/// A core state machine with the latest time it saw, so that the times it
/// is given never go back (as [`Shared`](crate::shared) does for the
/// others).
#[derive(Debug)]
struct Timed<T> {
    core: T,
    latest_micros: i64,
}

/// What the load-driven limiters share: the lock, the clock, the signal.
#[derive(Debug)]
struct Driven<T, C: Clock> {
    state: Mutex<Timed<T>>,
    signal: Arc<dyn LoadSignal>,
    clock: C,
    origin_micros: i64,
}

impl<T, C: Clock> Driven<T, C> {
    fn new(core: T, signal: Arc<dyn LoadSignal>, clock: C) -> Self {
        let origin_micros = clock.now_micros();
        Driven { state: Mutex::new(Timed { core, latest_micros: 0 }), signal, clock, origin_micros }
    }

    /// The signal's reading; an unknown value reads 0.0 (see [`Load`]).
    fn load(&self) -> Load {
        Load::new(self.signal.cpu_usage().unwrap_or(0.0), self.signal.load_average().unwrap_or(0.0))
    }

    /// Reads the core without a time or a load: for what no decision
    /// changes (the parameters).
    fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).core)
    }

    /// Runs `f` on the core at the current time (never earlier than the
    /// last call's).
    fn with<R>(&self, f: impl FnOnce(&mut T, i64, Load) -> R) -> R {
        let load = self.load();
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = self.clock.now_micros().wrapping_sub(self.origin_micros).max(state.latest_micros);
        state.latest_micros = now;
        f(&mut state.core, now, load)
    }
}

/// Kratos' BBR limiter: sheds requests while the CPU is at or above its
/// threshold (or cooling down) and more are in flight than the service
/// completes. Each admitted request holds a [`BbrPermit`] until it ends.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{Bbr, BbrConfig, ManualClock, ManualLoad};
///
/// let clock = Arc::new(ManualClock::new());
/// let load = Arc::new(ManualLoad::new());
/// let bbr = Bbr::with_clock(BbrConfig::default(), load.clone(), Arc::clone(&clock))?;
/// let guard = bbr.try_acquire_guard().unwrap();
/// clock.advance(Duration::from_millis(20));
/// drop(guard); // records a 20 ms round trip
/// load.set_cpu_usage(0.95)?; // overloaded: BBR now sheds beyond its estimate
/// assert_eq!(bbr.stats().in_flight, 0);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct Bbr<C: Clock = MonotonicClock> {
    inner: Driven<CoreBbr, C>,
}

impl Bbr<MonotonicClock> {
    /// A BBR limiter reading `signal` (usually [`SystemLoad`](crate::SystemLoad)).
    pub fn new(config: BbrConfig, signal: Arc<dyn LoadSignal>) -> Result<Self, Error> {
        Self::with_clock(config, signal, MonotonicClock::new())
    }
}

impl<C: Clock> Bbr<C> {
    /// A BBR limiter on `clock`.
    pub fn with_clock(config: BbrConfig, signal: Arc<dyn LoadSignal>, clock: C) -> Result<Self, Error> {
        Ok(Bbr { inner: Driven::new(CoreBbr::new(config)?, signal, clock) })
    }

    /// Admits a request unless BBR sheds it (Kratos' `Allow`). The permit
    /// comes with an admitted decision and must be given back to
    /// [`release`](Self::release) exactly once.
    pub fn try_acquire(&self) -> (Decision, Option<BbrPermit>) {
        match self.inner.with(|bbr, now, load| bbr.try_acquire(now, load)) {
            Ok((permit, decision)) => (decision, Some(permit)),
            Err(decision) => (decision, None),
        }
    }

    /// The request of `permit` ended: records its round-trip time.
    pub fn release(&self, permit: BbrPermit) {
        self.inner.with(|bbr, now, _| bbr.release(permit, now));
    }

    /// [`try_acquire`](Self::try_acquire) as a guard that releases itself
    /// when dropped.
    pub fn try_acquire_guard(&self) -> Result<BbrGuard<'_, C>, Decision> {
        match self.try_acquire() {
            (_, Some(permit)) => Ok(BbrGuard { bbr: self, permit }),
            (decision, None) => Err(decision),
        }
    }

    /// What BBR sees now (Kratos' `Stat`).
    pub fn stats(&self) -> BbrStats {
        self.inner.with(|bbr, now, load| bbr.stats(now, load))
    }

    /// The parameters.
    pub fn config(&self) -> BbrConfig {
        self.inner.read(|bbr| *bbr.config())
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreBbr {
        self.inner.read(CoreBbr::clone)
    }

    /// The limiter's clock.
    pub fn clock(&self) -> &C {
        &self.inner.clock
    }
}

/// A BBR permit that records its round trip when dropped.
#[derive(Debug)]
#[must_use = "dropping the guard ends the request at once"]
pub struct BbrGuard<'a, C: Clock> {
    bbr: &'a Bbr<C>,
    permit: BbrPermit,
}

impl<C: Clock> Drop for BbrGuard<'_, C> {
    fn drop(&mut self) {
        self.bbr.release(self.permit);
    }
}

/// Sentinel's system rule: refuses new requests while the service as a
/// whole exceeds a threshold of its [`SystemRule`], and says which.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::{ManualClock, ManualLoad, SystemGuard, SystemRule, SystemThreshold};
///
/// let load = Arc::new(ManualLoad::new());
/// let rule = SystemRule { highest_cpu_usage: Some(0.9), max_thread: Some(100), ..SystemRule::default() };
/// let guard = SystemGuard::with_clock(rule, load.clone(), ManualClock::new())?;
/// assert!(guard.try_acquire_guard(1).is_ok());
/// load.set_cpu_usage(0.95)?;
/// assert_eq!(guard.try_acquire_guard(1).unwrap_err().threshold, SystemThreshold::Cpu);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct SystemGuard<C: Clock = MonotonicClock> {
    inner: Driven<CoreGuard, C>,
}

impl SystemGuard<MonotonicClock> {
    /// A guard with `rule` reading `signal` (usually
    /// [`SystemLoad`](crate::SystemLoad)).
    pub fn new(rule: SystemRule, signal: Arc<dyn LoadSignal>) -> Result<Self, Error> {
        Self::with_clock(rule, signal, MonotonicClock::new())
    }
}

impl<C: Clock> SystemGuard<C> {
    /// A guard on `clock`.
    pub fn with_clock(rule: SystemRule, signal: Arc<dyn LoadSignal>, clock: C) -> Result<Self, Error> {
        Ok(SystemGuard { inner: Driven::new(CoreGuard::new(rule)?, signal, clock) })
    }

    /// Admits a request of `count` (Sentinel's `acquireCount`, usually 1)
    /// unless a threshold refuses it. Always returns the decision; the
    /// permit comes with an admitted one, the threshold with a refused one.
    pub fn try_acquire(&self, count: u64) -> (Decision, Result<SystemPermit, SystemThreshold>) {
        match self.inner.with(|guard, now, load| guard.try_acquire(now, count, load)) {
            Ok((permit, decision)) => (decision, Ok(permit)),
            Err(SystemRefusal { decision, threshold }) => (decision, Err(threshold)),
        }
    }

    /// The request of `permit` ended: records its round-trip time.
    pub fn release(&self, permit: SystemPermit) {
        self.inner.with(|guard, now, _| guard.release(permit, now));
    }

    /// [`try_acquire`](Self::try_acquire) as a guard that releases itself
    /// when dropped.
    pub fn try_acquire_guard(&self, count: u64) -> Result<SystemPermitGuard<'_, C>, SystemRefusal> {
        match self.try_acquire(count) {
            (_, Ok(permit)) => Ok(SystemPermitGuard { guard: self, permit }),
            (decision, Err(threshold)) => Err(SystemRefusal { decision, threshold }),
        }
    }

    /// Replaces the rule; the statistics stay (Sentinel's `loadRules`).
    pub fn set_rule(&self, rule: SystemRule) -> Result<(), Error> {
        self.inner.with(|guard, _, _| guard.set_rule(rule))
    }

    /// The rule.
    pub fn rule(&self) -> SystemRule {
        self.inner.read(|guard| *guard.rule())
    }

    /// The entry statistics now (Sentinel's entry node).
    pub fn stats(&self) -> SystemStats {
        self.inner.with(|guard, now, _| guard.stats(now))
    }

    /// The load the guard reads now.
    pub fn load(&self) -> Load {
        self.inner.load()
    }

    /// The guard's clock.
    pub fn clock(&self) -> &C {
        &self.inner.clock
    }
}

/// A system permit that records its round trip when dropped.
#[derive(Debug)]
#[must_use = "dropping the guard ends the request at once"]
pub struct SystemPermitGuard<'a, C: Clock> {
    guard: &'a SystemGuard<C>,
    permit: SystemPermit,
}

impl<C: Clock> Drop for SystemPermitGuard<'_, C> {
    fn drop(&mut self) {
        self.guard.release(self.permit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// A CPU reading the test sets.
    #[derive(Debug, Default)]
    struct Cpu(AtomicU64);

    impl LoadSignal for Cpu {
        fn cpu_usage(&self) -> Option<f64> {
            Some(f64::from_bits(self.0.load(Ordering::Relaxed)))
        }
        fn load_average(&self) -> Option<f64> {
            None
        }
    }

    #[test]
    fn bbr_sheds_only_while_the_cpu_is_high() {
        let clock = Arc::new(ManualClock::new());
        let cpu = Arc::new(Cpu::default());
        let config = BbrConfig { window_micros: 1_000_000, buckets: 10, ..BbrConfig::default() };
        let bbr = Bbr::with_clock(config, cpu.clone(), Arc::clone(&clock)).unwrap();
        // Ten requests of 10 ms in a row: nine end in the first 100 ms
        // bucket, so capacity ⌊9 × 10 ms × 10 buckets/s / 1000⌋ = 0.
        for _ in 0..10 {
            let guard = bbr.try_acquire_guard().unwrap();
            clock.advance(Duration::from_millis(10));
            drop(guard);
        }
        clock.advance(Duration::from_millis(100));
        let held: Vec<_> = (0..5).map(|_| bbr.try_acquire().1.unwrap()).collect();
        cpu.0.store(0.9f64.to_bits(), Ordering::Relaxed);
        let (refused, permit) = bbr.try_acquire();
        assert!(permit.is_none());
        assert_eq!((refused.allowed, refused.limit), (false, 0));
        let stats = bbr.stats();
        assert_eq!((stats.in_flight, stats.max_pass, stats.min_rt_millis), (5, 9, 10));
        // Below the threshold but within the cool-down: still shedding.
        cpu.0.store(0.1f64.to_bits(), Ordering::Relaxed);
        assert!(bbr.try_acquire().1.is_none());
        clock.advance(Duration::from_millis(1_001));
        let admitted = bbr.try_acquire().1.unwrap();
        for permit in held.into_iter().chain([admitted]) {
            bbr.release(permit);
        }
        assert_eq!(bbr.stats().in_flight, 0);
    }

    #[test]
    fn the_system_guard_names_the_threshold_and_counts_in_flight() {
        let clock = ManualClock::new();
        let rule = SystemRule { max_thread: Some(1), ..SystemRule::default() };
        let guard = SystemGuard::with_clock(rule, Arc::new(Cpu::default()), clock).unwrap();
        let a = guard.try_acquire_guard(1).unwrap();
        let b = guard.try_acquire_guard(1).unwrap(); // 1 in flight: not above 1
        let refused = guard.try_acquire_guard(1).unwrap_err();
        assert_eq!(refused.threshold, SystemThreshold::Thread);
        assert_eq!(guard.stats().in_flight, 2);
        drop((a, b));
        assert_eq!(guard.stats().in_flight, 0);
        assert!(guard.set_rule(SystemRule { qps: Some(-1.0), ..SystemRule::default() }).is_err());
        assert_eq!(guard.rule(), rule);
    }
}
