//! Stress: 2, 4, 8, 16, 32 and 64 threads at once on one limiter and on one
//! keyed limiter, released together by a barrier. Whatever the threads do,
//! the units admitted never exceed what the algorithm allows, and — where
//! time stands still — they add up exactly: the units the threads were told
//! they got, plus what a single caller can still get afterwards, are the
//! limiter's whole budget. So no unit is spent twice (that would overshoot)
//! and no update is lost (that would too), and no admission is refused on a
//! torn copy (that would fall short).
//!
//! The loom models (`scripts/loom.sh`) try every interleaving of two
//! threads; these put many threads on 2 cores, where a thread is often
//! preempted halfway through a write and the others must wait it out.
//!
//! Each test prints what it ran (`--nocapture`): calls per thread count,
//! units admitted, the bound. `STRESS_CALLS` sets the calls per run
//! (default 48,000, shared out among the threads).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use ratekeeper::core::Gcra as CoreGcra;
use ratekeeper::keyed::{AnyKeyedLimiter, KeyedLimiter, KeyedOptions};
use ratekeeper::{
    AnyClock, AnyLimiter, Clock, CompositeLimiter, ConcurrencyLimiter, ConcurrencyPolicy, Gcra, LimiterSpec,
    ManualClock, MonotonicClock, Outcome, RateLimiter, TokenBucket,
};

const THREAD_COUNTS: [usize; 6] = [2, 4, 8, 16, 32, 64];

const HOUR: i64 = 3_600_000_000;

/// Calls per run (one limiter, one thread count), shared out among the
/// threads.
fn calls_per_run() -> usize {
    std::env::var("STRESS_CALLS").ok().and_then(|v| v.parse().ok()).unwrap_or(48_000)
}

/// Runs `work(thread)` on `threads` threads released together; returns what
/// each returned, in thread order.
fn on_threads<R: Send>(threads: usize, work: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, work) = (&start, &work);
                s.spawn(move || {
                    start.wait();
                    work(t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A per-thread xorshift: costs and keys without a shared generator.
struct Rng(u64);

impl Rng {
    fn new(thread: usize) -> Self {
        Rng(0x9e37_79b9_7f4a_7c15 ^ (thread as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A cost of 1 to 3.
    fn cost(&mut self) -> u64 {
        1 + self.next() % 3
    }
}

/// Units a single caller gets by asking for one at a time until refused.
fn drain(mut check: impl FnMut() -> bool) -> u64 {
    let mut units = 0;
    while check() {
        units += 1;
    }
    units
}

fn manual() -> Arc<ManualClock> {
    Arc::new(ManualClock::new())
}

/// Every admission algorithm, with a budget of `budget` units and time
/// standing still: threads spend it with costs of 1 to 3, then one caller
/// drains what is left, and the two add up to the budget a fresh limiter
/// drains. The leaky bucket queue (a shaper: it admits with a wait) must
/// also never give two requests the same slot.
#[test]
fn every_algorithm_spends_its_budget_exactly_once() {
    let calls = calls_per_run();
    let budget = (calls / 4) as u64;
    let specs = [
        LimiterSpec::TokenBucket { rate: 1.0, burst: budget },
        LimiterSpec::Gcra { max_burst: budget - 1, count_per_period: 1, period_micros: HOUR },
        LimiterSpec::LeakyBucketMeter { capacity: budget, count_per_period: 1, period_micros: HOUR },
        LimiterSpec::LeakyBucketQueue { capacity: budget, interval_micros: 1_000, slack: 0 },
        LimiterSpec::FixedWindow { limit: budget, window_micros: HOUR },
        LimiterSpec::SlidingWindow { limit: budget, window_micros: HOUR, sub_windows: 4 },
        LimiterSpec::SlidingLog { limit: budget, window_micros: HOUR },
        LimiterSpec::SlidingWindowCounter { limit: budget, window_micros: HOUR },
    ];
    let mut total_calls = 0;
    for spec in &specs {
        let whole = drain({
            let fresh = AnyLimiter::with_clock(spec, manual()).unwrap();
            move || fresh.check(1).allowed
        });
        assert!(whole >= budget, "{spec:?}: a fresh limiter gave only {whole}");
        for threads in THREAD_COUNTS {
            let limiter = AnyLimiter::with_clock(spec, manual()).unwrap();
            let per_thread = calls / threads;
            let results = on_threads(threads, |t| {
                let mut rng = Rng::new(t);
                let (mut units, mut waits) = (0, Vec::new());
                for _ in 0..per_thread {
                    let cost = rng.cost();
                    let d = limiter.check(cost);
                    if d.allowed {
                        units += cost;
                        waits.push((d.wait_micros, cost));
                    }
                }
                (units, waits)
            });
            let admitted: u64 = results.iter().map(|(units, _)| units).sum();
            let mut waits: Vec<_> = results.into_iter().flat_map(|(_, waits)| waits).collect();
            let left = drain(|| {
                let d = limiter.check(1);
                waits.push((d.wait_micros, 1));
                d.allowed
            });
            waits.pop();
            assert_eq!(
                admitted + left,
                whole,
                "{} with {threads} threads: {admitted} admitted + {left} left, of {whole}",
                limiter.algorithm()
            );
            if let LimiterSpec::LeakyBucketQueue { interval_micros, .. } = spec {
                // Each request's slots follow the previous request's, end to
                // end, from 0: none shared, none skipped.
                waits.sort_unstable();
                let mut next = 0;
                for &(wait, cost) in &waits {
                    assert_eq!(wait, next, "{threads} threads: a slot given twice or skipped");
                    next = wait + cost as i64 * interval_micros;
                }
            }
            total_calls += per_thread * threads;
            println!(
                "stress: {:<22} {threads:>2} threads × {per_thread:>5} calls: {admitted:>5} units admitted + \
                 {left} left = {whole}",
                limiter.algorithm()
            );
        }
    }
    println!("stress: every algorithm: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// Guava's `RateLimiter` at 1,000 permits/s, time standing still, threads
/// reserving 1 to 3 permits with a timeout of `budget` ms: the
/// reservations tile the time line end to end from 0 (each starts where the
/// previous one's permits are paid for), so no permit is handed out twice
/// or lost, and none starts after the timeout.
#[test]
fn rate_limiter_reservations_tile_the_time_line() {
    let calls = calls_per_run();
    let budget_millis = (calls / 8) as u64;
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let limiter = RateLimiter::builder(1_000.0).clock(manual()).build().unwrap();
        let timeout = Duration::from_millis(budget_millis);
        let per_thread = calls / threads;
        let mut slots: Vec<(Duration, u32)> = on_threads(threads, |t| {
            let mut rng = Rng::new(t);
            let mut got = Vec::new();
            for _ in 0..per_thread {
                let permits = rng.cost() as u32;
                if let Some(wait) = limiter.try_reserve(permits, timeout).unwrap() {
                    got.push((wait, permits));
                }
            }
            got
        })
        .into_iter()
        .flatten()
        .collect();
        slots.sort_unstable();
        let mut next = Duration::ZERO;
        for &(wait, permits) in &slots {
            assert_eq!(wait, next, "{threads} threads: a reservation overlaps or leaves a gap");
            assert!(wait <= timeout);
            next = wait + Duration::from_millis(u64::from(permits));
        }
        assert_eq!(limiter.time_until_available(1).unwrap(), next);
        assert!(next > timeout, "{threads} threads: the timeout was never reached");
        let permits: u64 = slots.iter().map(|&(_, p)| u64::from(p)).sum();
        total_calls += per_thread * threads;
        println!(
            "stress: RateLimiter::try_reserve {threads:>2} threads × {per_thread:>5} calls: {} reservations, \
             {permits} permits, end to end over {next:?}",
            slots.len()
        );
    }
    println!("stress: RateLimiter: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// Two limits behind one mutex: the bucket's budget is spent exactly, and
/// the window counts exactly the units admitted (a refusal by the bucket
/// takes nothing from the window).
#[test]
fn composite_spends_all_or_nothing() {
    let calls = calls_per_run();
    let budget = (calls / 4) as u64;
    let specs = [
        LimiterSpec::TokenBucket { rate: 1.0, burst: budget },
        LimiterSpec::FixedWindow { limit: 4 * budget, window_micros: HOUR },
    ];
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let limiter = CompositeLimiter::with_clock(&specs, manual()).unwrap();
        let per_thread = calls / threads;
        let admitted: u64 = on_threads(threads, |t| {
            let mut rng = Rng::new(t);
            (0..per_thread).map(|_| rng.cost()).filter(|&cost| limiter.check(cost).allowed).sum::<u64>()
        })
        .into_iter()
        .sum();
        let left = drain(|| limiter.check(1).allowed);
        assert_eq!(admitted + left, budget, "{threads} threads");
        let (_, parts) = limiter.check_each(1);
        assert_eq!(parts[1].remaining, 4 * budget - budget, "{threads} threads: the window took refused units");
        total_calls += per_thread * threads;
        println!(
            "stress: CompositeLimiter {threads:>2} threads × {per_thread:>5} calls: {admitted} + {left} = {budget}"
        );
    }
    println!("stress: CompositeLimiter: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// A concurrency limit of 3: threads take a permit, hold it a moment and
/// give it back. Never more than 3 holders (counted outside the limiter),
/// and nothing left in flight at the end.
#[test]
fn concurrency_limiter_never_exceeds_its_limit() {
    let calls = calls_per_run();
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let limiter = ConcurrencyLimiter::with_clock(ConcurrencyPolicy::fixed(3).unwrap(), manual());
        let (holders, most) = (AtomicU64::new(0), AtomicU64::new(0));
        let per_thread = calls / threads;
        let granted: u64 = on_threads(threads, |_| {
            let mut granted = 0;
            for _ in 0..per_thread {
                if let (_, Some(permit)) = limiter.try_acquire() {
                    let now = holders.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::Relaxed);
                    std::hint::spin_loop();
                    holders.fetch_sub(1, Ordering::SeqCst);
                    limiter.release(permit, Outcome::Success);
                    granted += 1;
                }
            }
            granted
        })
        .into_iter()
        .sum();
        let most = most.load(Ordering::Relaxed);
        assert!(most <= 3, "{threads} threads: {most} holders at once");
        assert_eq!(limiter.in_flight(), 0);
        assert!(granted > 0);
        total_calls += per_thread * threads;
        println!(
            "stress: ConcurrencyLimiter {threads:>2} threads × {per_thread:>5} calls: {granted} permits, at most \
             {most} at once"
        );
    }
    println!("stress: ConcurrencyLimiter: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// One keyed limiter, 64 keys, each with a budget, time standing still:
/// per key, the units the threads got plus what is left add up to the
/// budget — through `KeyedLimiter` (GCRA, `u64` keys) and through
/// `AnyKeyedLimiter` (what the bindings use: byte keys, a sliding window
/// counter).
#[test]
fn keyed_limiters_spend_each_keys_budget_exactly_once() {
    const KEYS: u64 = 64;
    let calls = calls_per_run();
    let budget = (calls as u64 / KEYS / 4).max(4);
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let per_thread = calls / threads;
        let options = KeyedOptions::new(1_024).shards(8);
        let template = CoreGcra::new(budget - 1, 1, HOUR).unwrap();
        let typed: KeyedLimiter<u64, _, _> = KeyedLimiter::with_clock(template, options, manual()).unwrap();
        let spec = LimiterSpec::SlidingWindowCounter { limit: budget, window_micros: HOUR };
        let any: AnyKeyedLimiter = AnyKeyedLimiter::new(&spec, options, AnyClock::from(manual())).unwrap();
        let per_key = on_threads(threads, |t| {
            let mut rng = Rng::new(t);
            let mut got = vec![[0u64; 2]; KEYS as usize];
            for _ in 0..per_thread {
                let (key, cost) = (rng.next() % KEYS, rng.cost());
                if typed.check(&key, cost).allowed {
                    got[key as usize][0] += cost;
                }
                if any.check(format!("user:{key}").as_bytes(), cost).unwrap().allowed {
                    got[key as usize][1] += cost;
                }
            }
            got
        });
        let mut admitted = [0u64; 2];
        for key in 0..KEYS {
            let got: [u64; 2] =
                std::array::from_fn(|which| per_key.iter().map(|thread| thread[key as usize][which]).sum());
            let left = [
                drain(|| typed.check(&key, 1).allowed),
                drain(|| any.check(format!("user:{key}").as_bytes(), 1).unwrap().allowed),
            ];
            for which in 0..2 {
                assert_eq!(got[which] + left[which], budget, "{threads} threads, key {key}, limiter {which}");
                admitted[which] += got[which];
            }
        }
        assert_eq!((typed.len(), any.len()), (KEYS as usize, KEYS as usize));
        total_calls += 2 * per_thread * threads;
        println!(
            "stress: keyed {threads:>2} threads × {per_thread:>5} calls × 2 limiters, {KEYS} keys of {budget}: \
             {} + {} units admitted",
            admitted[0], admitted[1]
        );
    }
    println!("stress: keyed: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// A keyed limiter with room for 16 of the 64 keys the threads use, none of
/// which can be dropped (an hour from full): at most 16 keys are ever
/// admitted, each within its budget, and the count never passes the bound,
/// seen from any thread at any time.
#[test]
fn keyed_limiter_keeps_its_bound_under_threads() {
    const KEYS: u64 = 64;
    let calls = calls_per_run();
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let per_thread = calls / threads;
        let template = CoreGcra::new(7, 1, HOUR).unwrap();
        let limiter: KeyedLimiter<u64, _, _> =
            KeyedLimiter::with_clock(template, KeyedOptions::new(16).shards(4), manual()).unwrap();
        let per_key = on_threads(threads, |t| {
            let mut rng = Rng::new(t);
            let mut got = vec![0u64; KEYS as usize];
            for i in 0..per_thread {
                let key = rng.next() % KEYS;
                if limiter.check(&key, 1).allowed {
                    got[key as usize] += 1;
                }
                if i % 64 == 0 {
                    assert!(limiter.len() <= 16, "{} keys held", limiter.len());
                }
            }
            got
        });
        let got: Vec<u64> = (0..KEYS as usize).map(|k| per_key.iter().map(|thread| thread[k]).sum()).collect();
        let keys_admitted = got.iter().filter(|&&n| n > 0).count();
        assert!(got.iter().all(|&n| n <= 8), "a key got more than its 8: {got:?}");
        assert!(keys_admitted <= 16, "{keys_admitted} keys admitted, room for 16");
        assert_eq!(limiter.len(), keys_admitted);
        assert!(limiter.refused_new_keys() > 0);
        total_calls += per_thread * threads;
        println!(
            "stress: keyed at its bound {threads:>2} threads × {per_thread:>5} calls: {keys_admitted} keys held, \
             {} units, {} new keys refused",
            got.iter().sum::<u64>(),
            limiter.refused_new_keys()
        );
    }
    println!("stress: keyed at its bound: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// Calls each thread makes between two moves of the clock.
const CALLS_PER_STEP: u64 = 8;

/// Moves a manual clock 100 µs at a time, `steps` times, under `threads`
/// threads that each make [`CALLS_PER_STEP`] calls of `check` (the units it
/// admitted) at every reading — all racing at the same instant, then
/// waiting for the next. Returns the units admitted, the time elapsed (µs)
/// and the calls made.
fn while_time_moves(
    threads: usize,
    clock: &ManualClock,
    steps: u64,
    check: impl Fn(&mut Rng) -> u64 + Sync,
) -> (u64, i64, u64) {
    let (step, done) = (AtomicU64::new(0), AtomicU64::new(0));
    let units: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (step, done, check) = (&step, &done, &check);
                s.spawn(move || {
                    let mut rng = Rng::new(t);
                    let mut units = 0;
                    for current in 0..steps {
                        while step.load(Ordering::Acquire) < current {
                            std::thread::yield_now();
                        }
                        for _ in 0..CALLS_PER_STEP {
                            units += check(&mut rng);
                        }
                        done.fetch_add(1, Ordering::AcqRel);
                    }
                    units
                })
            })
            .collect();
        for current in 0..steps {
            while done.load(Ordering::Acquire) < (current + 1) * threads as u64 {
                std::thread::yield_now();
            }
            clock.advance_micros(100);
            step.store(current + 1, Ordering::Release);
        }
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    (units, clock.now_micros(), steps * threads as u64 * CALLS_PER_STEP)
}

/// Time moving under the threads (a manual clock, 100 µs per step, every
/// thread calling at every step), until the last calls at time `T`: GCRA
/// (1 per 100 µs, 10 at once) admits at most `10 + T / 100 µs`, the token
/// bucket (10,000/s, burst 10) `10 + 10,000/s × T`, Guava's limiter
/// (10,000/s, no timeout) `1 + T / 100 µs` (its first permit is free and the
/// permits it saves up are time nobody used), and a keyed GCRA the same as
/// GCRA per key.
#[test]
fn bounds_hold_while_time_moves() {
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let clock = manual();
        let gcra = Gcra::with_clock(9, 1, Duration::from_micros(100), Arc::clone(&clock)).unwrap();
        let bucket = TokenBucket::with_clock(10_000.0, 10, Arc::clone(&clock)).unwrap();
        let guava = RateLimiter::builder(10_000.0).clock(Arc::clone(&clock)).build().unwrap();
        let keyed: KeyedLimiter<u64, _, _> =
            KeyedLimiter::with_clock(gcra.snapshot(), KeyedOptions::new(64).shards(4), Arc::clone(&clock)).unwrap();
        let admitted = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        let keyed_admitted: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        let (_, elapsed, calls) = while_time_moves(threads, &clock, 500, |rng| {
            let which = rng.next() % 4;
            let admitted_one = match which {
                0 => gcra.check(1).allowed,
                1 => bucket.check(1).allowed,
                2 => guava.try_acquire(1, Duration::ZERO).unwrap(),
                _ => {
                    let key = rng.next() % 4;
                    let ok = keyed.check(&key, 1).allowed;
                    keyed_admitted[key as usize].fetch_add(u64::from(ok), Ordering::Relaxed);
                    ok
                }
            };
            if which < 3 {
                admitted[which as usize].fetch_add(u64::from(admitted_one), Ordering::Relaxed);
            }
            u64::from(admitted_one)
        });
        let got: Vec<u64> = admitted.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        // The last calls were made one step before the end.
        let last = (elapsed - 100) as u64;
        let bounds = [10 + last / 100, 10 + (10_000.0 * last as f64 / 1e6).ceil() as u64, 1 + last / 100];
        for (name, (n, bound)) in ["gcra", "token bucket", "RateLimiter"].iter().zip(got.iter().zip(bounds)) {
            assert!(*n <= bound, "{threads} threads, {name}: {n} admitted in {elapsed} µs, bound {bound}");
        }
        for (key, n) in keyed_admitted.iter().enumerate() {
            let n = n.load(Ordering::Relaxed);
            assert!(n <= bounds[0], "{threads} threads, keyed key {key}: {n} admitted, bound {}", bounds[0]);
        }
        // Not vacuous: the limiter refilled and admitted again many times.
        assert!(got[0] > 10 + 50, "{threads} threads: gcra admitted only {} of {}", got[0], bounds[0]);
        total_calls += calls;
        println!(
            "stress: time moving {threads:>2} threads, {calls:>6} calls over {elapsed} µs: gcra {}/{}, token bucket \
             {}/{}, RateLimiter {}/{}",
            got[0], bounds[0], got[1], bounds[1], got[2], bounds[2]
        );
    }
    println!("stress: time moving: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}

/// The real clock (the TSC): GCRA at 20,000/s with bursts of 20, the
/// threads hammering it for 50 ms per thread count. The limiter cannot
/// have seen more time than passed between its creation and the threads'
/// end, so it admits at most `20 + 20,000 × elapsed` (plus 0.1% for the
/// clock's calibration against the OS clock).
#[test]
fn bounds_hold_on_the_monotonic_clock() {
    let mut total_calls = 0;
    for threads in THREAD_COUNTS {
        let start = Instant::now();
        let gcra = Gcra::with_clock(19, 1, Duration::from_micros(50), MonotonicClock::new()).unwrap();
        let deadline = start + Duration::from_millis(50);
        let results = on_threads(threads, |_| {
            let (mut admitted, mut calls) = (0u64, 0u64);
            while Instant::now() < deadline {
                admitted += u64::from(gcra.check(1).allowed);
                calls += 1;
            }
            (admitted, calls)
        });
        // The limiter's clock is read before the elapsed time: read after,
        // a preemption between the two would make the clock look ahead.
        let limiter_now = gcra.clock().now_micros();
        let elapsed = start.elapsed().as_secs_f64();
        let admitted: u64 = results.iter().map(|r| r.0).sum();
        let calls: u64 = results.iter().map(|r| r.1).sum();
        let bound = 20 + (20_000.0 * elapsed * 1.001).ceil() as u64;
        assert!(admitted <= bound, "{threads} threads: {admitted} admitted in {elapsed} s, bound {bound}");
        assert!(limiter_now <= (elapsed * 1.001e6) as i64 + 1, "clock at {limiter_now} µs after {elapsed} s");
        total_calls += calls;
        println!(
            "stress: monotonic clock {threads:>2} threads: {calls:>7} calls in {:.1} ms, {admitted} admitted, bound \
             {bound}",
            elapsed * 1e3
        );
    }
    println!("stress: monotonic clock: {total_calls} calls in all, thread counts {THREAD_COUNTS:?}");
}
