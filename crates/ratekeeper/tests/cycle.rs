//! The std `CycleLimiter`: Resilience4j's `AtomicRateLimiterTest` cases
//! that park caller threads (their state checks are also in the core's
//! `cycle/resilience4j_tests.rs`), `RateLimiterConfigTest`'s "too large"
//! durations, and the waiting this layer adds.
//!
//! Resilience4j mocks `currentNanoTime()` and its parked callers spin until
//! the mocked time passes their deadline. [`SteppedClock`] is that mock: a
//! caller sleeping on it blocks until the test sets the time past its
//! deadline. Times are Resilience4j's nanoseconds read as microseconds.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use ratekeeper::{cycle_config, Argument, Clock, CycleConfig, CycleLimiter, Error, ManualClock, Value};

const CYCLE: i64 = 250_000;

/// A clock the test sets; a sleep on it blocks until the time is set past
/// the sleeper's deadline.
#[derive(Default)]
struct SteppedClock {
    micros: Mutex<i64>,
    moved: Condvar,
}

impl SteppedClock {
    fn set(&self, micros: i64) {
        *self.micros.lock().unwrap() = micros;
        self.moved.notify_all();
    }
}

impl Clock for SteppedClock {
    fn now_micros(&self) -> i64 {
        *self.micros.lock().unwrap()
    }

    fn sleep_micros(&self, micros: i64) {
        let mut now = self.micros.lock().unwrap();
        let deadline = *now + micros;
        while *now < deadline {
            now = self.moved.wait(now).unwrap();
        }
    }
}

type Limiter = CycleLimiter<Arc<SteppedClock>>;

fn setup(timeout: i64) -> (Arc<Limiter>, Arc<SteppedClock>) {
    let clock = Arc::new(SteppedClock::default());
    let config = CycleConfig { limit_for_period: 1, limit_refresh_period_micros: CYCLE, timeout_micros: timeout };
    (Arc::new(CycleLimiter::with_clock(config, Arc::clone(&clock)).unwrap()), clock)
}

/// (available permissions, time to wait in µs, waiting threads).
fn metrics(limiter: &Limiter) -> (i64, i64, usize) {
    let m = limiter.metrics();
    (m.available_permissions, m.time_to_wait.as_micros() as i64, m.number_of_waiting_threads)
}

/// Resilience4j's `awaitImpatiently().atMost(5, SECONDS).until(...)`.
fn await_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < Duration::from_secs(5), "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn caller(limiter: &Arc<Limiter>) -> thread::JoinHandle<bool> {
    let limiter = Arc::clone(limiter);
    thread::spawn(move || limiter.acquire_permission(1))
}

/// `AtomicRateLimiterTest.reserveAndRefresh`.
#[test]
fn reserve_and_refresh() {
    let (limiter, clock) = setup(CYCLE);
    clock.set(CYCLE);
    assert!(limiter.acquire_permission(1));
    assert_eq!(metrics(&limiter), (0, CYCLE, 0));

    let caller = caller(&limiter);
    await_until("the caller to park", || limiter.metrics().number_of_waiting_threads == 1);
    assert_eq!(metrics(&limiter), (-1, CYCLE + CYCLE, 1));

    clock.set(CYCLE * 2 + 10);
    assert!(caller.join().unwrap());
    assert_eq!(metrics(&limiter), (0, CYCLE - 10, 0));
}

/// `AtomicRateLimiterTest.reserveFewThenSkipCyclesBeforeRefresh`: the
/// second caller, refused, still parks for its timeout, as in Resilience4j.
#[test]
fn reserve_few_then_skip_cycles_before_refresh() {
    let (limiter, clock) = setup(CYCLE);
    clock.set(CYCLE);
    assert!(limiter.acquire_permission(1));
    assert_eq!(metrics(&limiter), (0, CYCLE, 0));

    let first_caller = caller(&limiter);
    await_until("the first caller to park", || limiter.metrics().number_of_waiting_threads == 1);
    assert_eq!(metrics(&limiter), (-1, CYCLE * 2, 1));

    let second_caller = caller(&limiter);
    await_until("the second caller to park", || limiter.metrics().number_of_waiting_threads == 2);
    assert_eq!(metrics(&limiter), (-1, CYCLE * 2, 2));

    clock.set(CYCLE * 6 + 10);
    assert!(first_caller.join().unwrap());
    assert!(!second_caller.join().unwrap());
    assert_eq!(metrics(&limiter), (1, 0, 0));
}

/// `AtomicRateLimiterTest.changePermissionsLimitBetweenCycles`.
#[test]
fn change_permissions_limit_between_cycles() {
    let (limiter, clock) = setup(CYCLE);
    clock.set(CYCLE);
    assert!(limiter.acquire_permission(1));
    assert_eq!(metrics(&limiter), (0, CYCLE, 0));

    let caller = caller(&limiter);
    await_until("the caller to park", || limiter.metrics().number_of_waiting_threads == 1);
    assert_eq!(metrics(&limiter), (-1, CYCLE + CYCLE, 1));

    limiter.change_limit_for_period(2).unwrap();
    assert_eq!(limiter.config().limit_for_period, 2);
    assert_eq!(metrics(&limiter), (-1, CYCLE, 1));

    clock.set(CYCLE * 2 + 10);
    assert!(caller.join().unwrap());
    assert_eq!(metrics(&limiter), (1, 0, 0));
}

/// `AtomicRateLimiterTest.metrics`.
#[test]
fn metrics_waiting_threads() {
    let (limiter, _clock) = setup(0);
    assert_eq!(limiter.metrics().number_of_waiting_threads, 0);
}

/// `RateLimiterConfigTest.buildTimeoutDurationIsNotWithinLimits`, and the
/// same through `change_timeout_duration`.
#[test]
fn build_timeout_duration_is_not_within_limits() {
    let too_large = Duration::from_secs(u64::MAX);
    let Err(Error::InvalidArgument(e)) = cycle_config(50, Duration::from_nanos(500_000), too_large) else {
        panic!("accepted")
    };
    assert_eq!(e.argument(), Argument::TimeoutDuration);
    let (limiter, _clock) = setup(0);
    let Err(Error::InvalidArgument(e)) = limiter.change_timeout_duration(too_large) else { panic!("accepted") };
    assert_eq!(e.argument(), Argument::TimeoutDuration);
    assert_eq!(limiter.config().timeout_micros, 0);
}

/// `RateLimiterConfigTest.buildLimitRefreshPeriodIsNotWithinLimits`.
#[test]
fn build_limit_refresh_period_is_not_within_limits() {
    let Err(Error::InvalidArgument(e)) = cycle_config(50, Duration::from_secs(u64::MAX), Duration::ZERO) else {
        panic!("accepted")
    };
    assert_eq!(e.argument(), Argument::LimitRefreshPeriod);
    // Below a microsecond is 0 µs: too short (Resilience4j's 1 ns minimum
    // is 1 µs here).
    let Err(Error::InvalidArgument(e)) = cycle_config(50, Duration::from_nanos(999), Duration::ZERO) else {
        panic!("accepted")
    };
    assert_eq!((e.argument(), e.value()), (Argument::LimitRefreshPeriod, Value::Int(0)));
    let config = cycle_config(50, Duration::from_nanos(500_000), Duration::from_secs(5)).unwrap();
    assert_eq!(
        config,
        CycleConfig { limit_for_period: 50, limit_refresh_period_micros: 500, timeout_micros: 5_000_000 }
    );
}

fn manual(timeout: i64, limit: u64) -> (CycleLimiter<Arc<ManualClock>>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let config = CycleConfig { limit_for_period: limit, limit_refresh_period_micros: CYCLE, timeout_micros: timeout };
    (CycleLimiter::with_clock(config, Arc::clone(&clock)).unwrap(), clock)
}

/// Blocking acquires sleep for a reservation's wait, and for the timeout
/// before a refusal; a try and a reservation never sleep.
#[test]
fn blocking_acquires_sleep_as_resilience4j_parks() {
    let (limiter, clock) = manual(CYCLE / 2, 1);
    assert!(limiter.acquire_permission(1));
    assert!(!limiter.acquire_permission(1)); // would wait a cycle
    assert_eq!(clock.now_micros(), CYCLE / 2);
    assert!(limiter.acquire_permission(1)); // waits the other half
    assert_eq!(clock.now_micros(), CYCLE);

    assert!(!limiter.try_acquire_permission(1));
    assert_eq!(limiter.reserve_permission(1), None);
    assert_eq!(clock.now_micros(), CYCLE);
    assert_eq!(limiter.drain_permissions(), 0);
    assert_eq!(limiter.available_permissions(), 0);
    let decision = limiter.check(1);
    assert!(!decision.allowed);
    assert_eq!(decision.retry_after_micros, CYCLE / 2);
}

/// Polls a future to the end on this thread.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        thread::park();
    }
}

/// The async acquire awaits the given sleep for the same waits, counted as
/// waiting meanwhile; a dropped wait stops counting.
#[test]
fn async_acquires_await_the_runtimes_sleep() {
    let (limiter, clock) = manual(CYCLE, 1);
    let sleep = |d: Duration| {
        assert_eq!(limiter.metrics().number_of_waiting_threads, 1);
        clock.advance(d);
        std::future::ready(())
    };
    assert!(block_on(limiter.acquire_permission_async(1, sleep)));
    assert_eq!(clock.now_micros(), 0);
    assert!(block_on(limiter.acquire_permission_async(1, sleep)));
    assert_eq!(clock.now_micros(), CYCLE);
    assert!(block_on(limiter.acquire_permission_async(1, sleep)));
    assert_eq!(clock.now_micros(), 2 * CYCLE);
    assert!(!block_on(limiter.acquire_permission_async(2, sleep)));
    assert_eq!(clock.now_micros(), 3 * CYCLE);
    assert_eq!(limiter.metrics().number_of_waiting_threads, 0);

    assert!(limiter.try_acquire_permission(1));
    {
        let mut pending = pin!(limiter.acquire_permission_async(1, |_| std::future::pending::<()>()));
        let waker = Waker::from(Arc::new(NoWake));
        assert!(pending.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        assert_eq!(limiter.metrics().number_of_waiting_threads, 1);
    }
    assert_eq!(limiter.metrics().number_of_waiting_threads, 0);
}

struct NoWake;

impl Wake for NoWake {
    fn wake(self: Arc<Self>) {}
}
