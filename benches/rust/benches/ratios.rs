//! Same-run ratios against governor, robust to a noisy machine.
//!
//! Criterion measures one function after another, so a neighbour's load that
//! comes and goes can tilt a comparison. This harness interleaves the
//! contenders instead: in each of several rounds every contender runs the
//! same number of calls, in a rotated order, and the reported ratio is the
//! median over rounds of (contender ÷ governor in that round).
//!
//! Run: `cargo bench -p ratekeeper-benches --bench ratios` (prints a
//! Markdown table; `RATIO_ROUNDS` and `RATIO_MILLIS` tune the length,
//! `RATIO_FILTER=admit/2` runs one workload; `RATIO_JSON=path` also writes
//! the results there, in the `ratekeeper-bench/1` format that
//! `benches/report.py` turns into BENCHMARKS.md, with each contender's
//! ratio to ratekeeper as well, also a median of per-round ratios).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use ratekeeper_benches::{Call, Contenders};

/// ns per call of `f` run `iters` times on `threads` threads at once (the
/// slowest thread's time).
fn ns_per_call(threads: usize, iters: u64, f: &Call<'_>) -> f64 {
    let barrier = Barrier::new(threads);
    let run = || {
        barrier.wait();
        let start = Instant::now();
        for _ in 0..iters {
            black_box(f());
        }
        start.elapsed()
    };
    let slowest = std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(run)).collect();
        let mine = run();
        others.into_iter().map(|h| h.join().unwrap()).fold(mine, Duration::max)
    });
    slowest.as_nanos() as f64 / iters as f64
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // and expects a quick exit.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds = env_or("RATIO_ROUNDS", 15) as usize;
    let millis = env_or("RATIO_MILLIS", 40);
    let mut json_rows = Vec::new();
    println!("| workload | threads | contender | ns/call (median) | ratio to governor-tsc (median of rounds) |");
    println!("|---|---|---|---|---|");
    for (workload, contenders) in [("admit", Contenders::admitting()), ("refuse", Contenders::refusing())] {
        let calls = contenders.calls();
        for threads in [1, 2] {
            if let Ok(filter) = std::env::var("RATIO_FILTER") {
                if !format!("{workload}/{threads}").contains(&filter) {
                    continue;
                }
            }
            // Calibrate: enough calls for about `millis` ms of the slowest.
            let probe = calls.iter().map(|(_, f)| ns_per_call(threads, 20_000, f)).fold(0.0, f64::max);
            let iters = ((millis as f64 * 1e6) / probe).max(1_000.0) as u64;
            let mut times = vec![Vec::with_capacity(rounds); calls.len()];
            for round in 0..rounds {
                for k in 0..calls.len() {
                    let i = (round + k) % calls.len();
                    times[i].push(ns_per_call(threads, iters, &calls[i].1));
                }
            }
            let base = calls.iter().position(|(name, _)| *name == "governor-tsc").unwrap();
            let ours = calls.iter().position(|(name, _)| *name == "ratekeeper").unwrap();
            let ratio_to = |i: usize, j: usize| median(times[i].iter().zip(&times[j]).map(|(t, b)| t / b).collect());
            for (i, (name, _)) in calls.iter().enumerate() {
                let ns = median(times[i].clone());
                println!("| {workload} | {threads} | {name} | {ns:.1} | {:.2} |", ratio_to(i, base));
                json_rows.push(format!(
                    r#"{{"workload": "{}, {threads} thread{}", "contender": "{name}", "value": {ns:.3}, "ratio": {:.4}}}"#,
                    if workload == "admit" { "every call admitted" } else { "every call refused" },
                    if threads == 1 { "" } else { "s" },
                    ratio_to(i, ours)
                ));
            }
        }
    }
    if let Ok(path) = std::env::var("RATIO_JSON") {
        let json = format!(
            r#"{{"format": "ratekeeper-bench/1", "suite": "rust-ratios", "title": "Rust: try_acquire(1) on one shared limiter, interleaved rounds", "command": "cargo bench -p ratekeeper-benches --bench ratios", "notes": "Median over {rounds} rounds; each round runs every contender for the same number of calls in a rotated order. Ratios are medians of per-round ratios to ratekeeper (time ÷ ratekeeper's). governor-tsc is governor's default direct limiter (its TSC clock), governor-instant the same on std's Instant, guava-in-mutex Guava's design (the state machine behind a std Mutex).", "tables": [{{"title": "try_acquire(1), ns per call", "unit": "ns", "reference": "ratekeeper", "rows": [{}]}}]}}"#,
            json_rows.join(", ")
        );
        std::fs::write(&path, json).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
}
