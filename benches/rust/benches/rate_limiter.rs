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
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ratekeeper::{Clock, MonotonicClock};

use ratekeeper_benches::Contenders;

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
            group.bench_function(BenchmarkId::new(name, "1-thread"), |b| b.iter(&*call));
            group.bench_function(BenchmarkId::new(name, "2-threads"), |b| {
                b.iter_custom(|iters| on_two_threads(iters, &*call))
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
