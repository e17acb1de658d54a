//! Keyed limiters beside governor's keyed limiter (`RateLimiter::keyed`, a
//! dashmap of GCRA states), in the same run, interleaved.
//!
//! Workload: `N` keys (1,000 and 1,000,000), all created before timing;
//! each call checks one unit for a key drawn at random from the `N` (the
//! same pseudo-random sequence for every contender), with a rate so high
//! that every call is admitted — so every call reads the clock, finds the
//! key and writes its state. Contenders use their default clocks (TSC) and
//! default hashers, both keyed with secret random keys: governor's is std's
//! `RandomState` (SipHash-1-3); ratekeeper's is `RandomAesHash` (AES-128
//! for these 8-byte keys). One more contender is ratekeeper's GCRA with
//! `RandomSipHash` (SipHash-1-3, as std's), to show what the hash costs.
//!
//! Like `ratios.rs`, the contenders take turns: in each of several rounds
//! every contender runs the same number of calls, in a rotated order, and
//! the ratio reported is the median over rounds of (contender ÷ governor in
//! that round), which a neighbour's load that comes and goes cannot tilt.
//!
//! Memory: a counting global allocator records the bytes each contender
//! allocated to hold `N` keys — retained, and the peak while it was filled
//! (a table that doubles holds the old and the new arrays at once).
//!
//! Times are the calling thread's CPU time, not wall time: on a shared
//! machine, time a thread spends descheduled is not the contender's.
//!
//! Run: `cargo bench -p ratekeeper-benches --bench keyed` (prints Markdown
//! tables; `KEYED_ROUNDS` and `KEYED_MILLIS` tune the length, `KEYED_KEYS`
//! picks key counts, e.g. `KEYED_KEYS=1000`, `KEYED_THREADS=2` thread
//! counts, `KEYED_ONLY=Gcra>` runs only
//! the contenders whose names contain it (and governor), `KEYED_SHARDS`
//! sets ratekeeper's shard count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use governor::{Quota, RateLimiter as Governor};
use ratekeeper::core::{FixedWindow, Gcra, TokenBucket};
use ratekeeper::keyed::{AnyKeyedLimiter, KeyedLimiter, KeyedOptions, RandomSipHash};
use ratekeeper::{AnyClock, LimiterSpec, MonotonicClock};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are only arithmetic on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is System's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = IN_USE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One contender: check one unit for a key; whether it was admitted.
trait Contender: Sync {
    fn check(&self, key: u64) -> bool;
}

type GovernorKeyed = governor::DefaultKeyedRateLimiter<u64>;

impl Contender for GovernorKeyed {
    #[inline]
    fn check(&self, key: u64) -> bool {
        self.check_key(&key).is_ok()
    }
}

impl<A: ratekeeper::keyed::KeyedAlgorithm, H: std::hash::BuildHasher + Sync> Contender
    for KeyedLimiter<u64, A, MonotonicClock, H>
{
    /// The whole decision is made and observed (`black_box` of a reference
    /// may read every field). Not `black_box(decision)`: passing it by
    /// value moved the 56 bytes into another stack slot, reading back with
    /// wide loads what the limiter had just written field by field (loads
    /// the CPU cannot forward from those stores) — a copy that no caller
    /// reading the fields makes, and a tenth of the time measured.
    #[inline]
    fn check(&self, key: u64) -> bool {
        let decision = KeyedLimiter::check(self, &key, 1);
        black_box(&decision).allowed
    }
}

/// `allow`: yes or no, as governor's `check_key` answers an admission
/// (`Ok(())`), without the rest of the decision.
struct YesNo<A: ratekeeper::keyed::KeyedAlgorithm>(KeyedLimiter<u64, A>);

impl<A: ratekeeper::keyed::KeyedAlgorithm> Contender for YesNo<A> {
    #[inline]
    fn check(&self, key: u64) -> bool {
        self.0.allow(&key, 1)
    }
}

/// The bindings' form: keyed by bytes, algorithm chosen at run time.
struct ByBytes(AnyKeyedLimiter);

impl Contender for ByBytes {
    #[inline]
    fn check(&self, key: u64) -> bool {
        black_box(self.0.check(key.to_le_bytes().as_slice(), 1)).is_ok_and(|d| d.allowed)
    }
}

/// A name, a contender, and the bytes it allocated to hold the keys:
/// retained and peak.
struct Entry {
    name: &'static str,
    contender: Box<dyn Contender>,
    retained: usize,
    peak: usize,
}

/// Builds a contender and creates `keys` keys in it, measuring the bytes.
fn build(name: &'static str, keys: u64, make: impl FnOnce() -> Box<dyn Contender>) -> Option<Entry> {
    // `KEYED_ONLY=governor,Gcra>` runs only the contenders whose names
    // contain one of the strings (governor always: the ratios need it).
    if let Ok(only) = std::env::var("KEYED_ONLY") {
        if !name.starts_with("governor") && !only.split(',').any(|part| name.contains(part)) {
            return None;
        }
    }
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let contender = make();
    for key in 0..keys {
        assert!(contender.check(key), "{name}: key {key} refused while filling");
    }
    let retained = IN_USE.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    Some(Entry { name, contender, retained, peak })
}

fn contenders(keys: u64) -> Vec<Entry> {
    // Every call admitted: 1e9 per second for each key.
    let per_second = 1_000_000_000u32;
    // Room for the keys and for the shards filling unevenly.
    let mut options = KeyedOptions::new((keys + keys / 8 + 1_024) as usize);
    if let Ok(shards) = std::env::var("KEYED_SHARDS") {
        options = options.shards(shards.parse().unwrap());
    }
    [
        build("governor keyed (GCRA, dashmap)", keys, || {
            Box::new(Governor::keyed(Quota::per_second(NonZeroU32::new(per_second).unwrap())))
        }),
        build("ratekeeper KeyedLimiter<u64, Gcra>", keys, || {
            Box::new(
                KeyedLimiter::<u64, _>::new(Gcra::new(1_000_000, 1_000_000_000, 1_000_000).unwrap(), options).unwrap(),
            )
        }),
        build("ratekeeper KeyedLimiter<u64, Gcra, RandomSipHash>", keys, || {
            Box::new(
                KeyedLimiter::<u64, _, _, _>::with_clock_and_hasher(
                    Gcra::new(1_000_000, 1_000_000_000, 1_000_000).unwrap(),
                    options,
                    MonotonicClock::default(),
                    RandomSipHash::new(),
                )
                .unwrap(),
            )
        }),
        build("ratekeeper KeyedLimiter<u64, Gcra>::allow (yes/no)", keys, || {
            Box::new(YesNo(
                KeyedLimiter::<u64, _>::new(Gcra::new(1_000_000, 1_000_000_000, 1_000_000).unwrap(), options).unwrap(),
            ))
        }),
        build("ratekeeper KeyedLimiter<u64, TokenBucket>", keys, || {
            Box::new(KeyedLimiter::<u64, _>::new(TokenBucket::new(1e9, 1_000_000).unwrap(), options).unwrap())
        }),
        build("ratekeeper KeyedLimiter<u64, FixedWindow>", keys, || {
            Box::new(KeyedLimiter::<u64, _>::new(FixedWindow::new(1 << 50, 1_000_000).unwrap(), options).unwrap())
        }),
        build("ratekeeper AnyKeyedLimiter (GCRA, byte keys)", keys, || {
            let spec =
                LimiterSpec::Gcra { max_burst: 1_000_000, count_per_period: 1_000_000_000, period_micros: 1_000_000 };
            Box::new(ByBytes(AnyKeyedLimiter::new(&spec, options, AnyClock::default()).unwrap()))
        }),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A pseudo-random sequence of keys below `keys` (xorshift64*): the same
/// for every contender.
fn key_sequence(keys: u64, len: usize) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d) % keys
        })
        .collect()
}

/// ns per call of `contender` run `iters` times on each of `threads`
/// threads at once (the slowest thread's time), each thread walking the
/// key sequence from its own place.
fn ns_per_call(threads: usize, iters: usize, contender: &dyn Contender, seq: &[u64], start: usize) -> f64 {
    let barrier = Barrier::new(threads);
    let run = |t: usize| {
        let mut i = (start + t * seq.len() / threads) % seq.len();
        barrier.wait();
        let begin = thread_cpu_time();
        for _ in 0..iters {
            black_box(contender.check(seq[i]));
            i += 1;
            if i == seq.len() {
                i = 0;
            }
        }
        thread_cpu_time().saturating_sub(begin)
    };
    let slowest = std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|t| s.spawn(move || run(t))).collect();
        let mine = run(0);
        others.into_iter().map(|h| h.join().unwrap()).fold(mine, Duration::max)
    });
    slowest.as_nanos() as f64 / iters as f64
}

/// The calling thread's CPU time: unlike wall time, it stops while the
/// thread is descheduled, so other processes on a shared machine do not
/// count against whichever contender they happened to interrupt.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a
    // constant every Linux has.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // and expects a quick exit.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds = env_or("KEYED_ROUNDS", 15) as usize;
    let millis = env_or("KEYED_MILLIS", 60);
    let key_counts: Vec<u64> = match std::env::var("KEYED_KEYS") {
        Ok(list) => list.split(',').filter_map(|k| k.trim().parse().ok()).collect(),
        Err(_) => vec![1_000, 1_000_000],
    };
    let thread_counts: Vec<usize> = match std::env::var("KEYED_THREADS") {
        Ok(list) => list.split(',').filter_map(|t| t.trim().parse().ok()).collect(),
        Err(_) => vec![1, 2],
    };
    let mut memory = Vec::new();
    println!("| keys | threads | contender | ns/call (median) | ratio to governor (median of rounds) |");
    println!("|---|---|---|---|---|");
    for &keys in &key_counts {
        let entries = contenders(keys);
        if let Ok(rollup) = std::fs::read_to_string("/proc/self/smaps_rollup") {
            for line in rollup.lines().filter(|l| l.starts_with("AnonHugePages") || l.starts_with("Rss")) {
                eprintln!("{keys} keys: {line}");
            }
        }
        let seq = key_sequence(keys, (keys as usize * 4).clamp(1 << 16, 1 << 22));
        for &threads in &thread_counts {
            // Calibrate: enough calls for about `millis` ms of the slowest.
            let probe =
                entries.iter().map(|e| ns_per_call(threads, 50_000, e.contender.as_ref(), &seq, 0)).fold(0.0, f64::max);
            let iters = ((millis as f64 * 1e6) / probe).max(10_000.0) as usize;
            let mut times = vec![Vec::with_capacity(rounds); entries.len()];
            for round in 0..rounds {
                for k in 0..entries.len() {
                    let i = (round + k) % entries.len();
                    let start = (round * 7_919 + k * 104_729) % seq.len();
                    times[i].push(ns_per_call(threads, iters, entries[i].contender.as_ref(), &seq, start));
                }
            }
            for (i, e) in entries.iter().enumerate() {
                let ratios: Vec<f64> = times[i].iter().zip(&times[0]).map(|(t, g)| t / g).collect();
                println!(
                    "| {keys} | {threads} | {} | {:.1} | {:.2} |",
                    e.name,
                    median(times[i].clone()),
                    median(ratios)
                );
            }
        }
        for e in &entries {
            memory.push((keys, e.name, e.retained, e.peak));
        }
    }
    println!();
    println!("| keys | contender | bytes held (per key) | peak while filling |");
    println!("|---|---|---|---|");
    for (keys, name, retained, peak) in memory {
        println!("| {keys} | {name} | {} ({:.1}) | {} |", mib(retained), retained as f64 / keys as f64, mib(peak));
    }
}
