//! `try_acquire(1)` on one shared limiter, beside governor's `check()` on a
//! direct limiter and Guava's algorithm behind a `std::sync::Mutex`, in the
//! same run; plus the clock reads that dominate all of them.
//!
//! Two workloads: "admit" (a rate so high every call is granted: every call
//! writes the state) and "refuse" (a limiter exhausted for the whole run:
//! every call is refused). Each on 1 thread, and on 2 threads hammering the
//! same limiter (the time reported is per call, per thread).
//!
//! Run: `cargo bench -p ratekeeper-benches --bench rate_limiter`.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use governor::clock::{Clock as GovernorClock, DefaultClock, MonotonicClock as GovernorMonotonic};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::Quota;
use ratekeeper::core::SmoothRateLimiter;
use ratekeeper::{Clock, MonotonicClock, RateLimiter};

/// Guava's own design: the state machine behind a mutex, the clock read
/// inside it (`synchronized` + `Stopwatch`).
struct GuavaInAMutex {
    state: Mutex<SmoothRateLimiter>,
    origin: Instant,
}

impl GuavaInAMutex {
    fn new(rate: f64) -> Self {
        GuavaInAMutex { state: Mutex::new(SmoothRateLimiter::bursty(rate, 1.0).unwrap()), origin: Instant::now() }
    }

    fn try_acquire(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        let now = self.origin.elapsed().as_micros() as i64;
        state.try_reserve(1, 0, now).unwrap().is_some()
    }
}

type GovernorDirect<C> =
    governor::RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<<C as GovernorClock>::Instant>>;

struct Contenders {
    ratekeeper: RateLimiter,
    governor_tsc: GovernorDirect<DefaultClock>,
    governor_instant: GovernorDirect<GovernorMonotonic>,
    guava_mutex: GuavaInAMutex,
}

impl Contenders {
    /// Every call admitted: 1e9 permits per second.
    fn admitting() -> Self {
        let quota = Quota::per_second(NonZeroU32::new(1_000_000_000).unwrap());
        Contenders {
            ratekeeper: RateLimiter::create(1e9).unwrap(),
            governor_tsc: governor::RateLimiter::direct(quota),
            governor_instant: governor::RateLimiter::direct_with_clock(quota, GovernorMonotonic),
            guava_mutex: GuavaInAMutex::new(1e9),
        }
    }

    /// Every call refused: one permit per 1000 s, already taken.
    fn refusing() -> Self {
        let quota = Quota::with_period(Duration::from_secs(1000)).unwrap();
        let c = Contenders {
            ratekeeper: RateLimiter::create(1e-3).unwrap(),
            governor_tsc: governor::RateLimiter::direct(quota),
            governor_instant: governor::RateLimiter::direct_with_clock(quota, GovernorMonotonic),
            guava_mutex: GuavaInAMutex::new(1e-3),
        };
        assert!(c.ratekeeper.try_acquire(1, Duration::ZERO).unwrap());
        assert!(c.governor_tsc.check().is_ok());
        assert!(c.governor_instant.check().is_ok());
        assert!(c.guava_mutex.try_acquire());
        c
    }

    fn calls(&self) -> [(&'static str, Box<dyn Fn() -> bool + Sync + '_>); 4] {
        [
            ("ratekeeper", Box::new(|| self.ratekeeper.try_acquire(1, Duration::ZERO).unwrap())),
            ("governor-tsc", Box::new(|| self.governor_tsc.check().is_ok())),
            ("governor-instant", Box::new(|| self.governor_instant.check().is_ok())),
            ("guava-in-mutex", Box::new(|| self.guava_mutex.try_acquire())),
        ]
    }
}

/// Runs `f` `iters` times on each of two threads at once and returns the
/// slower thread's time: the per-call cost under contention.
fn on_two_threads(iters: u64, f: &(dyn Fn() -> bool + Sync)) -> Duration {
    let barrier = Barrier::new(2);
    let run = || {
        barrier.wait();
        let start = Instant::now();
        for _ in 0..iters {
            black_box(f());
        }
        start.elapsed()
    };
    std::thread::scope(|s| {
        let other = s.spawn(run);
        let mine = run();
        mine.max(other.join().unwrap())
    })
}

fn try_acquire(c: &mut Criterion) {
    for (workload, contenders) in [("admit", Contenders::admitting()), ("refuse", Contenders::refusing())] {
        let mut group = c.benchmark_group(format!("try_acquire/{workload}"));
        for (name, call) in contenders.calls() {
            group.bench_function(BenchmarkId::new(name, "1-thread"), |b| b.iter(&call));
            group.bench_function(BenchmarkId::new(name, "2-threads"), |b| {
                b.iter_custom(|iters| on_two_threads(iters, &call))
            });
        }
        group.finish();
    }
}

fn clocks(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    let ours = MonotonicClock::new();
    group.bench_function("ratekeeper-monotonic", |b| b.iter(|| ours.now_micros()));
    let quanta = quanta::Clock::new();
    group.bench_function("quanta-now", |b| b.iter(|| quanta.now()));
    group.bench_function("std-instant-now", |b| b.iter(Instant::now));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = clocks, try_acquire
}
criterion_main!(benches);
