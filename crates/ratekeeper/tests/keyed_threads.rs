//! Many threads on one keyed limiter: per key, the units admitted never
//! exceed what the algorithm allows, and the bound on keys always holds —
//! with keys being dropped and recreated while the threads run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use ratekeeper::core::{Gcra, TokenBucket};
use ratekeeper::keyed::{KeyedAlgorithm, KeyedLimiter, KeyedOptions, WhenFull};
use ratekeeper::ManualClock;

const THREADS: usize = 4;
const KEYS: u64 = 48;

/// Runs `THREADS` threads checking random keys (costs 1 to 3) while the main
/// thread moves a manual clock 1 ms at a time for `millis` ms; returns the
/// units each key was admitted and the time elapsed (µs).
fn hammer<A: KeyedAlgorithm + 'static>(
    limiter: Arc<KeyedLimiter<u64, A, Arc<ManualClock>>>,
    clock: &ManualClock,
    millis: u64,
) -> (Vec<u64>, i64) {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(THREADS + 1));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (limiter, stop, start) = (Arc::clone(&limiter), Arc::clone(&stop), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut admitted = vec![0u64; KEYS as usize];
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (t as u64 + 1);
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let (key, cost) = (x % KEYS, 1 + (x >> 32) % 3);
                    let d = limiter.check(&key, cost);
                    if d.allowed {
                        admitted[key as usize] += cost;
                    }
                    assert!(limiter.len() <= limiter.max_keys());
                }
                admitted
            })
        })
        .collect();
    start.wait();
    let begin = clock.now();
    for _ in 0..millis {
        std::thread::sleep(Duration::from_micros(200));
        clock.advance(Duration::from_millis(1));
    }
    let elapsed = (clock.now() - begin).as_micros() as i64;
    stop.store(true, Ordering::Relaxed);
    let mut total = vec![0u64; KEYS as usize];
    for w in workers {
        for (sum, n) in total.iter_mut().zip(w.join().unwrap()) {
            *sum += n;
        }
    }
    (total, elapsed)
}

/// GCRA, 1 per 10 ms with bursts of 3, 48 keys but room for 24: keys are
/// refused at the bound and dropped when full, all while four threads hit
/// them. Per key: at most `limit + elapsed / interval`.
#[test]
fn threads_never_exceed_the_bound_per_key() {
    let clock = Arc::new(ManualClock::new());
    let options = KeyedOptions::new(24).shards(4);
    let limiter =
        Arc::new(KeyedLimiter::with_clock(Gcra::new(2, 1, 10_000).unwrap(), options, Arc::clone(&clock)).unwrap());
    let (admitted, elapsed) = hammer(Arc::clone(&limiter), &clock, 400);
    let bound = 3 + elapsed as u64 / 10_000;
    for (key, &n) in admitted.iter().enumerate() {
        assert!(n <= bound, "key {key}: {n} units admitted, at most {bound} allowed");
    }
    let total: u64 = admitted.iter().sum();
    assert!(total > bound * 4, "the test admitted too little to mean anything: {total}");
    assert!(limiter.refused_new_keys() > 0, "the bound was never reached");
}

/// The token bucket, with the opt-in eviction: the key count stays within
/// the bound whatever happens, and a key that was never evicted keeps its
/// bound (every eviction is counted; with no eviction at all the bound is
/// exact).
#[test]
fn threads_keep_the_key_bound_with_forced_eviction() {
    let clock = Arc::new(ManualClock::new());
    let roomy = KeyedOptions::new(KEYS as usize).shards(2).when_full(WhenFull::EvictSoonestFull);
    let limiter =
        Arc::new(KeyedLimiter::with_clock(TokenBucket::new(200.0, 4).unwrap(), roomy, Arc::clone(&clock)).unwrap());
    let (admitted, elapsed) = hammer(Arc::clone(&limiter), &clock, 300);
    // x/time/rate's bound: burst + rate × T (its float arithmetic may round
    // one token either way).
    let bound = 4 + (200.0 * elapsed as f64 / 1e6).ceil() as u64 + 1;
    if limiter.forced_evictions() == 0 {
        for (key, &n) in admitted.iter().enumerate() {
            assert!(n <= bound, "key {key}: {n} tokens admitted, at most {bound} allowed");
        }
    }
    let tight = KeyedOptions::new(8).shards(2).when_full(WhenFull::EvictSoonestFull);
    let limiter =
        Arc::new(KeyedLimiter::with_clock(TokenBucket::new(200.0, 4).unwrap(), tight, Arc::clone(&clock)).unwrap());
    hammer(Arc::clone(&limiter), &clock, 100);
    assert!(limiter.len() <= 8);
    assert!(limiter.forced_evictions() > 0, "48 keys, room for 8: evictions were forced");
    assert_eq!(limiter.refused_new_keys(), 0);
}
