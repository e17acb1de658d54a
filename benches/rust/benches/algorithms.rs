//! The decision cost of every algorithm, in the same run as the peers:
//! governor's `check()` on a direct limiter and ratekeeper's Guava
//! `RateLimiter::try_acquire`.
//!
//! * `decision/admit` — one shared limiter (the std wrapper, monotonic TSC
//!   clock), parameters so that every call is admitted: every call reads
//!   the clock, decides and publishes its new state.
//! * `decision/refuse` — the same limiters exhausted for the whole run:
//!   every call reads the clock and decides, and publishes nothing.
//! * `core/admit` — the bare core state machine, time passed in (no clock,
//!   no sharing): the algorithm alone.
//!
//! Every decision is passed whole through `black_box`, so that none of its
//! fields (remaining, retry-after, reset-after…) is optimised away: callers
//! get all of them. One thread. Run:
//! `cargo bench -p ratekeeper-benches --bench algorithms`.

use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use governor::{Quota, RateLimiter as Governor};
use ratekeeper::core::{self as core_algorithms, Admission};
use ratekeeper::{
    AnyLimiter, Bbr, BbrConfig, Color, CompositeLimiter, ConcurrencyLimiter, FixedWindow, Gcra, LeakyBucketMeter,
    LeakyBucketQueue, LimiterSpec, ManualLoad, Outcome, RateLimiter, SlidingLog, SlidingWindow, SlidingWindowCounter,
    SrTcm, SystemGuard, SystemRule, TokenBucket, TrTcm,
};
use std::sync::Arc;

const SECOND: Duration = Duration::from_secs(1);

/// One contender: a name and a call that returns whether it admitted.
type Call = (&'static str, Box<dyn Fn() -> bool>);

fn admitting() -> Vec<Call> {
    let bucket = TokenBucket::new(1e9, 1_000_000).unwrap();
    let gcra = Gcra::new(1_000_000, 1_000_000_000, SECOND).unwrap();
    let meter = LeakyBucketMeter::new(1_000_000, 1_000_000_000, SECOND).unwrap();
    let queue = LeakyBucketQueue::new(1 << 50, Duration::from_nanos(1_000)).unwrap();
    let fixed = FixedWindow::new(1 << 50, SECOND).unwrap();
    let sliding = SlidingWindow::new(u64::from(u32::MAX), SECOND, 10).unwrap();
    let log = SlidingLog::new(1 << 20, Duration::from_millis(1)).unwrap();
    let counter = SlidingWindowCounter::new(1 << 50, SECOND).unwrap();
    let srtcm = SrTcm::new(1 << 40, 1 << 40, 1 << 40).unwrap();
    let trtcm = TrTcm::new(1 << 40, 1 << 40, 1 << 40, 1 << 40).unwrap();
    let concurrency = ConcurrencyLimiter::fixed(1 << 20).unwrap();
    // The load-driven limiters on an idle manual signal: they admit, and
    // each call is the full check plus a release that records the RT.
    let bbr = Bbr::new(BbrConfig::default(), Arc::new(ManualLoad::new())).unwrap();
    let rule = SystemRule {
        qps: Some(1e18),
        max_thread: Some(1 << 20),
        highest_cpu_usage: Some(0.9),
        ..SystemRule::default()
    };
    let guard = SystemGuard::new(rule, Arc::new(ManualLoad::new())).unwrap();
    let any = AnyLimiter::new(&LimiterSpec::Gcra {
        max_burst: 1_000_000,
        count_per_period: 1_000_000_000,
        period_micros: 1_000_000,
    })
    .unwrap();
    let composite = CompositeLimiter::new(&[
        LimiterSpec::TokenBucket { rate: 1e9, burst: 1_000_000 },
        LimiterSpec::FixedWindow { limit: 1 << 50, window_micros: 3_600_000_000 },
    ])
    .unwrap();
    let guava = RateLimiter::create(1e9).unwrap();
    let governor = Governor::direct(Quota::per_second(NonZeroU32::new(1_000_000_000).unwrap()));
    vec![
        ("token_bucket", Box::new(move || black_box(bucket.check(1)).allowed)),
        ("gcra", Box::new(move || black_box(gcra.check(1)).allowed)),
        ("leaky_bucket_meter", Box::new(move || black_box(meter.check(1)).allowed)),
        ("leaky_bucket_queue", Box::new(move || black_box(queue.check(1)).allowed)),
        ("fixed_window", Box::new(move || black_box(fixed.check(1)).allowed)),
        ("sliding_window", Box::new(move || black_box(sliding.check(1)).allowed)),
        ("sliding_log", Box::new(move || black_box(log.check(1)).allowed)),
        ("sliding_window_counter", Box::new(move || black_box(counter.check(1)).allowed)),
        ("srtcm", Box::new(move || black_box(srtcm.mark(1)) == Color::Green)),
        ("trtcm", Box::new(move || black_box(trtcm.mark(1)) == Color::Green)),
        (
            "concurrency (acquire+release)",
            Box::new(move || {
                let (_, permit) = concurrency.try_acquire();
                permit.map(|p| concurrency.release(p, Outcome::Success)).is_some()
            }),
        ),
        (
            "bbr (acquire+release)",
            Box::new(move || {
                let (_, permit) = bbr.try_acquire();
                permit.map(|p| bbr.release(p)).is_some()
            }),
        ),
        (
            "system_guard (acquire+release)",
            Box::new(move || {
                let (_, permit) = guard.try_acquire(1);
                permit.map(|p| guard.release(p)).is_ok()
            }),
        ),
        ("any_limiter (gcra)", Box::new(move || black_box(any.check(1)).allowed)),
        ("composite (bucket + window)", Box::new(move || black_box(composite.check(1)).allowed)),
        ("guava RateLimiter", Box::new(move || guava.try_acquire(1, Duration::ZERO).unwrap())),
        ("governor", Box::new(move || governor.check().is_ok())),
    ]
}

fn refusing() -> Vec<Call> {
    let hour = Duration::from_secs(3_600);
    let bucket = TokenBucket::new(1e-3, 1).unwrap();
    let gcra = Gcra::new(0, 1, hour).unwrap();
    let meter = LeakyBucketMeter::new(1, 1, hour).unwrap();
    let queue = LeakyBucketQueue::new(0, hour).unwrap();
    let fixed = FixedWindow::new(1, hour).unwrap();
    let sliding = SlidingWindow::new(1, hour, 10).unwrap();
    let log = SlidingLog::new(1, hour).unwrap();
    let counter = SlidingWindowCounter::new(1, hour).unwrap();
    let concurrency = ConcurrencyLimiter::fixed(1).unwrap();
    // BBR sheds: CPU at 100 % and two in flight, beyond its estimate of an
    // empty window; the system guard refuses on threads.
    let load = Arc::new(ManualLoad::new());
    load.set_cpu_usage(1.0).unwrap();
    let bbr = Bbr::new(BbrConfig::default(), load).unwrap();
    let guard =
        SystemGuard::new(SystemRule { max_thread: Some(0), ..SystemRule::default() }, Arc::new(ManualLoad::new()))
            .unwrap();
    let composite = CompositeLimiter::new(&[
        LimiterSpec::TokenBucket { rate: 1e-3, burst: 1 },
        LimiterSpec::FixedWindow { limit: 1, window_micros: 3_600_000_000 },
    ])
    .unwrap();
    let guava = RateLimiter::create(1e-3).unwrap();
    let governor = Governor::direct(Quota::with_period(hour).unwrap());
    for admitted in [
        bucket.check(1).allowed,
        gcra.check(1).allowed,
        meter.check(1).allowed,
        queue.check(1).allowed,
        fixed.check(1).allowed,
        sliding.check(1).allowed,
        log.check(1).allowed,
        counter.check(1).allowed,
        concurrency.try_acquire().1.is_some(),
        bbr.try_acquire().1.is_some(),
        bbr.try_acquire().1.is_some(),
        guard.try_acquire(1).1.is_ok(),
        composite.check(1).allowed,
        guava.try_acquire(1, Duration::ZERO).unwrap(),
        governor.check().is_ok(),
    ] {
        assert!(admitted, "the first call must be admitted");
    }
    vec![
        ("token_bucket", Box::new(move || black_box(bucket.check(1)).allowed)),
        ("gcra", Box::new(move || black_box(gcra.check(1)).allowed)),
        ("leaky_bucket_meter", Box::new(move || black_box(meter.check(1)).allowed)),
        ("leaky_bucket_queue", Box::new(move || black_box(queue.check(1)).allowed)),
        ("fixed_window", Box::new(move || black_box(fixed.check(1)).allowed)),
        ("sliding_window", Box::new(move || black_box(sliding.check(1)).allowed)),
        ("sliding_log", Box::new(move || black_box(log.check(1)).allowed)),
        ("sliding_window_counter", Box::new(move || black_box(counter.check(1)).allowed)),
        ("concurrency (acquire)", Box::new(move || concurrency.try_acquire().1.is_some())),
        ("bbr (shed)", Box::new(move || bbr.try_acquire().1.is_some())),
        ("system_guard (refused)", Box::new(move || guard.try_acquire(1).1.is_ok())),
        ("composite (bucket + window)", Box::new(move || black_box(composite.check(1)).allowed)),
        ("guava RateLimiter", Box::new(move || guava.try_acquire(1, Duration::ZERO).unwrap())),
        ("governor", Box::new(move || governor.check().is_ok())),
    ]
}

fn decisions(c: &mut Criterion) {
    for (workload, calls, expected) in [("admit", admitting(), true), ("refuse", refusing(), false)] {
        let mut group = c.benchmark_group(format!("decision/{workload}"));
        for (name, call) in calls {
            assert_eq!(call(), expected, "{name} in the {workload} workload");
            group.bench_function(BenchmarkId::from_parameter(name), |b| b.iter(|| black_box(call())));
        }
        group.finish();
    }
}

/// The bare state machines, time moving 1 µs per call.
fn core_only(c: &mut Criterion) {
    fn bench<A: Admission>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        name: &str,
        mut a: A,
    ) {
        let mut now = 0i64;
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                now += 1;
                black_box(a.check(1, now))
            })
        });
    }
    let mut group = c.benchmark_group("core/admit");
    bench(&mut group, "token_bucket", core_algorithms::TokenBucket::new(1e9, 1_000_000).unwrap());
    bench(&mut group, "gcra", core_algorithms::Gcra::new(1_000_000, 1_000_000_000, 1_000_000).unwrap());
    bench(
        &mut group,
        "leaky_bucket_meter",
        core_algorithms::LeakyBucketMeter::new(1_000_000, 1_000_000_000, 1_000_000).unwrap(),
    );
    bench(&mut group, "leaky_bucket_queue", core_algorithms::LeakyBucketQueue::new(1 << 50, 1).unwrap());
    bench(&mut group, "fixed_window", core_algorithms::FixedWindow::new(1 << 50, 1_000_000).unwrap());
    bench(
        &mut group,
        "sliding_window",
        core_algorithms::SlidingWindow::new(u64::from(u32::MAX), 1_000_000, 10).unwrap(),
    );
    let storage = vec![core_algorithms::LogEntry::default(); 1 << 20];
    bench(&mut group, "sliding_log", core_algorithms::SlidingLog::new(1 << 20, 1_000, storage).unwrap());
    bench(
        &mut group,
        "sliding_window_counter",
        core_algorithms::SlidingWindowCounter::new(1 << 50, 1_000_000).unwrap(),
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = decisions, core_only
}
criterion_main!(benches);
