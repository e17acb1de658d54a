//! Accuracy under load, from many processes: 8 processes × 4 threads hammer
//! one key for 10 s. In exact mode the admitted total never exceeds
//! `rate × T + burst` and falls short of it by under 1%; in leased mode it
//! stays within the documented bound, `rate × (T + lease) + burst`.
//!
//! The test re-runs its own binary as the worker processes (environment
//! variable `RK_ACCURACY_WORKER`), each of which prints what it admitted.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLeasedLimiter, RedisLimiter, RedisStore, StoreOptions};
use support::RedisServer;

const PROCESSES: usize = 8;
const THREADS: usize = 4;
const RUN: Duration = Duration::from_secs(10);
/// The burst absorbs the gaps of a loaded machine's scheduling (up to
/// burst ÷ rate = 200 ms without a decision loses nothing): only the last
/// gap before the end of the run can fall short.
const RATE: u64 = 1_000;
const BURST: u64 = 200;
const LEASE: Duration = Duration::from_millis(100);

fn spec() -> LimiterSpec {
    LimiterSpec::Gcra { max_burst: BURST - 1, count_per_period: RATE, period_micros: 1_000_000 }
}

fn unix_micros() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros()
}

/// Runs the workers in `mode` and returns the total they admitted.
fn run_workers(server: &RedisServer, mode: &str) -> u64 {
    let start = unix_micros() + 1_500_000; // every worker starts at the same moment
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "worker", "--nocapture", "--test-threads", "1"])
                .env("RK_ACCURACY_WORKER", format!("{}|{mode}|{start}", server.url()))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "worker failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
            stdout
                .lines()
                .find_map(|l| l.strip_prefix("admitted "))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .expect("worker printed no count")
        })
        .sum()
}

#[test]
fn worker() {
    let Ok(job) = std::env::var("RK_ACCURACY_WORKER") else { return };
    let mut parts = job.split('|');
    let (url, mode) = (parts.next().unwrap(), parts.next().unwrap());
    let start: u128 = parts.next().unwrap().parse().unwrap();
    let store = RedisStore::connect(url, StoreOptions::default()).unwrap();
    let exact = RedisLimiter::new(&store, "accuracy-exact", spec()).unwrap();
    let leased = RedisLeasedLimiter::new(&store, "accuracy-leased", spec(), 20, LEASE).unwrap();
    while unix_micros() < start {
        std::thread::sleep(Duration::from_micros(200));
    }
    let end = start + RUN.as_micros();
    let admitted: u64 = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    let mut n = 0u64;
                    while unix_micros() < end {
                        let allowed = match mode {
                            "exact" => exact.check("k", 1).unwrap().allowed,
                            _ => leased.check("k", 1).unwrap().allowed,
                        };
                        n += u64::from(allowed);
                    }
                    n
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    // On a line of its own: libtest prints "test worker ... " before it.
    println!("\nadmitted {admitted}");
}

#[test]
fn eight_processes_share_one_limit() {
    if std::env::var("RK_ACCURACY_WORKER").is_ok() {
        return;
    }
    let server = RedisServer::start();
    let bound = RATE * RUN.as_secs() + BURST;

    let exact = run_workers(&server, "exact");
    println!("exact mode: {exact} admitted, bound {bound}");
    assert!(exact <= bound, "exact mode admitted {exact} > {bound}");
    assert!(exact as f64 >= 0.99 * bound as f64, "exact mode admitted {exact}, more than 1% short of {bound}");

    let leased = run_workers(&server, "leased");
    let leased_bound = (RATE as f64 * (RUN + LEASE).as_secs_f64()) as u64 + BURST;
    println!("leased mode: {leased} admitted, bound {leased_bound}");
    assert!(leased <= leased_bound, "leased mode admitted {leased} > {leased_bound}");
    assert!(leased as f64 >= 0.95 * bound as f64, "leased mode admitted only {leased}");
}
