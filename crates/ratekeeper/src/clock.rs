//! Clocks: where a limiter's "now" comes from, and how its waits are slept.
//!
//! The core state machines take the time as an argument; this module is the
//! only place that reads a real clock. A [`Clock`] gives whole microseconds
//! from an arbitrary origin that never go backwards, and knows how to sleep.
//!
//! * [`MonotonicClock`] reads the CPU's invariant time-stamp counter through
//!   `quanta` (the same clock governor uses): a read is an instruction, not
//!   a call into the OS's vDSO as `std::time::Instant::now` is, and the read
//!   dominates the cost of a rate-limiting decision (BENCHMARKS.md, the
//!   `rate_limiter` benchmark's `clock` group, measures both). Where the TSC is missing or not
//!   invariant, quanta falls back to the OS monotonic clock by itself.
//! * [`ManualClock`] moves only when told to, and sleeping on it advances it
//!   (as Guava's test stopwatch does), so code built on a limiter can be
//!   tested deterministically and instantly.

use std::sync::Arc;
use std::time::Duration;

use crate::sync::{AtomicI64, Ordering};

/// A source of time for limiters.
///
/// Implementations must be monotonic: `now_micros` never returns less than an
/// earlier call returned, on any thread.
pub trait Clock: Send + Sync {
    /// Whole microseconds since this clock's origin (an arbitrary fixed
    /// moment, usually its creation).
    fn now_micros(&self) -> i64;

    /// Blocks the calling thread for `micros` microseconds (nothing when
    /// `micros <= 0`). A manual clock advances itself instead.
    fn sleep_micros(&self, micros: i64);
}

/// The default clock: monotonic wall time from the CPU's time-stamp counter.
///
/// Cloning is cheap; every clone shares the same origin.
#[derive(Debug, Clone)]
pub struct MonotonicClock {
    clock: quanta::Clock,
    origin_raw: u64,
    /// Microseconds per raw tick, as a 0.64 fixed-point fraction: one
    /// multiplication turns ticks into microseconds.
    micros_per_tick: u64,
    /// Whether quanta's raw ticks are the x86 TSC, which we then read inline
    /// (`rdtsc`) rather than through a call into quanta.
    raw_is_tsc: bool,
}

impl MonotonicClock {
    /// A clock whose origin is now. The first clock in a process calibrates
    /// the TSC against the OS clock (a few milliseconds, once).
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        // quanta's raw ticks are TSC cycles, or nanoseconds where it fell
        // back to the OS clock; its calibration says how many nanoseconds
        // 2^32 of them last. Rounded up, so that a whole number of
        // microseconds is never read one short.
        let nanos_per_2_32_ticks = u128::from(clock.delta_as_nanos(0, 1 << 32));
        let micros_per_tick = u64::try_from((nanos_per_2_32_ticks << 32).div_ceil(1_000)).unwrap_or(u64::MAX);
        // quanta scales only the TSC; its OS-clock fallback counts
        // nanoseconds already. (A TSC of exactly 1 GHz would read as the
        // fallback, and merely take the slower path.)
        let raw_is_tsc = cfg!(target_arch = "x86_64") && nanos_per_2_32_ticks != 1 << 32;
        let origin_raw = clock.raw();
        MonotonicClock { clock, origin_raw, micros_per_tick, raw_is_tsc }
    }

    #[inline]
    fn raw(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.raw_is_tsc {
            // What quanta's raw() returns in this mode, without the call.
            #[allow(unused_unsafe)]
            // SAFETY: every x86_64 CPU has RDTSC; quanta chose the TSC only
            // after checking that it is invariant.
            return unsafe { core::arch::x86_64::_rdtsc() };
        }
        self.clock.raw()
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_micros(&self) -> i64 {
        // Whole microseconds, truncated, as Guava's
        // `Stopwatch.elapsed(MICROSECONDS)`. A counter read on another core
        // may lag the origin by a few ticks: that reads as 0, never as a
        // wrapped-around huge time.
        let ticks = self.raw().saturating_sub(self.origin_raw);
        ((u128::from(ticks) * u128::from(self.micros_per_tick)) >> 64) as i64
    }

    fn sleep_micros(&self, micros: i64) {
        if micros > 0 {
            std::thread::sleep(Duration::from_micros(micros as u64));
        }
    }
}

/// A clock that moves only when told to. Sleeping on it advances it by the
/// time slept, so a limiter's blocking calls return at once with the wait
/// they would have slept, as with Guava's fake stopwatch in its own tests.
///
/// It counts whole microseconds (like the limiters); the sub-microsecond part
/// of a [`Duration`] passed to [`advance`](Self::advance) is dropped. It
/// saturates at `i64::MAX` microseconds (about 292,000 years).
///
/// Share it with a limiter through an `Arc` (or a reference) and keep a
/// handle to move time:
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{ManualClock, RateLimiter};
///
/// let clock = Arc::new(ManualClock::new());
/// let limiter = RateLimiter::builder(2.0).clock(Arc::clone(&clock)).build().unwrap();
/// assert_eq!(limiter.acquire(1).unwrap(), Duration::ZERO);
/// assert_eq!(limiter.acquire(1).unwrap(), Duration::from_millis(500)); // returns at once
/// assert_eq!(clock.now(), Duration::from_millis(500)); // the "sleep" moved the clock
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    micros: AtomicI64,
}

impl ManualClock {
    /// A manual clock reading zero.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        ManualClock { micros: AtomicI64::new(0) }
    }

    /// A manual clock reading zero (loom's atomics have no `const fn new`).
    #[cfg(loom)]
    pub fn new() -> Self {
        ManualClock { micros: AtomicI64::new(0) }
    }

    /// Moves the clock forward by `by` (whole microseconds).
    pub fn advance(&self, by: Duration) {
        self.advance_micros(i64::try_from(by.as_micros()).unwrap_or(i64::MAX));
    }

    /// Moves the clock forward by `micros` microseconds, saturating at
    /// `i64::MAX`. Negative values are ignored: the clock never goes back.
    pub fn advance_micros(&self, micros: i64) {
        if micros <= 0 {
            return;
        }
        // fetch_update never fails here: the closure always returns Some.
        let _ = self.micros.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| Some(t.saturating_add(micros)));
    }

    /// The time since the clock was created, as moved by `advance` and sleeps.
    pub fn now(&self) -> Duration {
        Duration::from_micros(self.micros.load(Ordering::Acquire) as u64)
    }
}

impl Clock for ManualClock {
    fn now_micros(&self) -> i64 {
        self.micros.load(Ordering::Acquire)
    }

    fn sleep_micros(&self, micros: i64) {
        self.advance_micros(micros);
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    #[inline]
    fn now_micros(&self) -> i64 {
        (**self).now_micros()
    }

    fn sleep_micros(&self, micros: i64) {
        (**self).sleep_micros(micros)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now_micros(&self) -> i64 {
        (**self).now_micros()
    }

    fn sleep_micros(&self, micros: i64) {
        (**self).sleep_micros(micros)
    }
}

/// A clock chosen at run time: the monotonic clock, or a shared manual one.
///
/// The language bindings use this one type for every limiter, so that a
/// Python, Node.js or C caller can pass a `ManualClock` or nothing.
#[derive(Debug, Clone)]
pub enum AnyClock {
    /// [`MonotonicClock`], the default.
    Monotonic(MonotonicClock),
    /// A [`ManualClock`] shared with the caller.
    Manual(Arc<ManualClock>),
}

impl AnyClock {
    /// Whether this is a manual clock (sleeping on it advances it, so an
    /// asynchronous wait should not wait for real).
    pub fn is_manual(&self) -> bool {
        matches!(self, AnyClock::Manual(_))
    }
}

impl Default for AnyClock {
    fn default() -> Self {
        AnyClock::Monotonic(MonotonicClock::new())
    }
}

impl From<Arc<ManualClock>> for AnyClock {
    fn from(clock: Arc<ManualClock>) -> Self {
        AnyClock::Manual(clock)
    }
}

impl Clock for AnyClock {
    #[inline]
    fn now_micros(&self) -> i64 {
        match self {
            AnyClock::Monotonic(c) => c.now_micros(),
            AnyClock::Manual(c) => c.now_micros(),
        }
    }

    fn sleep_micros(&self, micros: i64) {
        match self {
            AnyClock::Monotonic(c) => c.sleep_micros(micros),
            AnyClock::Manual(c) => c.sleep_micros(micros),
        }
    }
}

/// Converts a duration to whole microseconds for the core, saturating at
/// `i64::MAX` (Guava's `TimeUnit.toMicros` saturates likewise).
#[inline]
pub(crate) fn duration_to_micros(d: Duration) -> i64 {
    // In u64 arithmetic: cheaper than `as_micros`'s u128 on the hot path.
    let micros = d.as_secs().saturating_mul(1_000_000).saturating_add(u64::from(d.subsec_micros()));
    i64::try_from(micros).unwrap_or(i64::MAX)
}

/// Converts a wait from the core (never negative) to a `Duration`.
#[inline]
pub(crate) fn micros_to_duration(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_moves_forward_and_sleeps() {
        let clock = MonotonicClock::new();
        let a = clock.now_micros();
        clock.sleep_micros(2_000);
        let b = clock.now_micros();
        assert!(b - a >= 2_000, "{a} -> {b}");
        assert!(b - a < 2_000_000, "{a} -> {b}");
    }

    #[test]
    fn monotonic_clock_agrees_with_std() {
        let clock = MonotonicClock::new();
        let start = std::time::Instant::now();
        let a = clock.now_micros();
        std::thread::sleep(Duration::from_millis(50));
        let b = clock.now_micros();
        let elapsed = start.elapsed().as_micros() as i64;
        // Within 2% (and 200 µs) of std's own measure of the same interval.
        assert!((b - a - elapsed).abs() <= 200 + elapsed / 50, "{} µs vs {elapsed} µs", b - a);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new();
        assert_eq!(clock.now_micros(), 0);
        clock.advance(Duration::from_nanos(1_999));
        assert_eq!(clock.now_micros(), 1);
        clock.sleep_micros(10);
        assert_eq!(clock.now_micros(), 11);
        clock.advance_micros(-5);
        assert_eq!(clock.now_micros(), 11);
        clock.advance_micros(i64::MAX);
        assert_eq!(clock.now_micros(), i64::MAX);
    }
}
