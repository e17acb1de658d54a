//! TLS against plain TCP, from Rust: exact-mode GCRA with 32 checks in
//! flight (`check_async`), decisions per second and the server's CPU per
//! decision, against one redis-server listening on both a plain port
//! (`RATEKEEPER_REDIS_URL`) and a TLS port (`RATEKEEPER_REDIS_TLS_URL`,
//! its CA in `RATEKEEPER_REDIS_TLS_CA`); `benches/redis/tls/run` starts it.
//!
//! The server's CPU is its `utime + stime` in `/proc/REDIS_PID/stat`
//! (clock ticks of `CLK_TCK` per second) before and after each case: the
//! whole process, so TLS's record layer counts whichever thread runs it.
//! Rounds alternate the order of the two cases; each figure is the median
//! over the rounds, the ratio the median of the rounds' TLS ÷ plain.
//!
//! ```text
//! redis-tls-bench [--json FILE] [--quick]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{Pem, RedisLimiter, RedisStore, StoreOptions, TlsOptions};
use serde_json::json;

/// Every decision admits: each does the script's full work.
const GCRA: LimiterSpec =
    LimiterSpec::Gcra { max_burst: 999_999_999, count_per_period: 1_000_000_000, period_micros: 1_000_000 };
const KEYS: usize = 1_000;
const IN_FLIGHT: usize = 32;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set (benches/redis/tls/run sets it)"))
}

/// The server's CPU time so far (user + system), in seconds.
fn server_cpu(pid: &str, ticks_per_second: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's /proc/PID/stat");
    // Fields after the command's closing parenthesis: state is the 3rd
    // field of the line, utime the 14th, stime the 15th.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / ticks_per_second
}

/// `n` checks, `IN_FLIGHT` outstanding: the wall time.
async fn run(limiter: &RedisLimiter, n: usize) -> Duration {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user-{i}")).collect();
    let start = Instant::now();
    let mut pending: FuturesUnordered<futures_util::future::BoxFuture<'static, bool>> = FuturesUnordered::new();
    for i in 0..n {
        if pending.len() >= IN_FLIGHT {
            assert!(pending.next().await.expect("a check"), "admitted");
        }
        let (limiter, key) = (limiter.clone(), keys[i % KEYS].clone());
        pending.push(Box::pin(async move { limiter.check_async(&key, 1).await.expect("a decision").allowed }));
    }
    while let Some(allowed) = pending.next().await {
        assert!(allowed, "admitted");
    }
    start.elapsed()
}

fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

fn main() {
    let mut json = None;
    let mut quick = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = Some(PathBuf::from(args.next().expect("--json FILE"))),
            "--quick" => quick = true,
            other => panic!("unknown argument {other:?}"),
        }
    }
    let pid = env("REDIS_PID");
    let ticks: f64 = std::env::var("CLK_TCK").ok().and_then(|t| t.parse().ok()).unwrap_or(100.0);
    // A timeout far above any decision's time here: a loaded machine must
    // not fail a decision.
    let options = StoreOptions { timeout: Duration::from_secs(5), ..StoreOptions::default() };
    let plain = RedisStore::connect(&env("RATEKEEPER_REDIS_URL"), options.clone()).expect("connect over TCP");
    let tls = TlsOptions { ca: Some(Pem::File(env("RATEKEEPER_REDIS_TLS_CA").into())), ..TlsOptions::default() };
    let secure = RedisStore::connect(&env("RATEKEEPER_REDIS_TLS_URL"), StoreOptions { tls: Some(tls), ..options })
        .expect("connect over TLS");
    let run_id = std::process::id();
    let cases = [
        ("plain TCP", RedisLimiter::new(&plain, &format!("tls-bench-{run_id}-plain"), GCRA).unwrap()),
        ("TLS", RedisLimiter::new(&secure, &format!("tls-bench-{run_id}-tls"), GCRA).unwrap()),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (n, rounds) = if quick { (20_000, 3) } else { (100_000, 5) };
    for (_, limiter) in &cases {
        runtime.block_on(run(limiter, 2_000));
    }
    let mut per_second = [Vec::new(), Vec::new()];
    let mut cpu = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..cases.len() {
            let c = (k + round) % cases.len();
            let before = server_cpu(&pid, ticks);
            let elapsed = runtime.block_on(run(&cases[c].1, n));
            let used = server_cpu(&pid, ticks) - before;
            per_second[c].push(n as f64 / elapsed.as_secs_f64());
            cpu[c].push(used * 1e6 / n as f64);
        }
    }
    let ratio = |xs: &[Vec<f64>; 2]| median(&xs[1].iter().zip(&xs[0]).map(|(t, p)| t / p).collect::<Vec<_>>());
    let mut rows = Vec::new();
    for (c, (name, _)) in cases.iter().enumerate() {
        let (dps, us) = (median(&per_second[c]), median(&cpu[c]));
        println!(
            "exact GCRA, {IN_FLIGHT} in flight, {name:9}  {dps:8.0} decisions/s  {us:6.2} µs server CPU per decision"
        );
        rows.push(json!({"workload": "decisions per second (32 in flight)", "contender": name, "value": 1e9 / dps}));
        rows.push(json!({"workload": "server CPU per decision", "contender": name, "value": us * 1e3}));
    }
    let (dps_ratio, cpu_ratio) = (ratio(&per_second), ratio(&cpu));
    println!("TLS ÷ plain TCP: decisions per second {dps_ratio:.2}×, server CPU per decision {cpu_ratio:.2}×");
    if let Some(path) = json {
        let doc = json!({
            "format": "ratekeeper-bench/1",
            "suite": "redis-tls-rust",
            "title": "Redis over TLS against plain TCP, from Rust",
            "command": "benches/redis/tls/run",
            "notes": format!("One redis-server with a plain and a TLS port (P-256 certificate, TLS 1.3); exact-mode GCRA, {IN_FLIGHT} checks in flight from one process (check_async), every decision admitted. Server CPU per decision from /proc/PID/stat (utime + stime). {rounds} rounds of {n} decisions per case, alternating; medians. TLS ÷ plain: decisions per second {dps_ratio:.2}×, server CPU per decision {cpu_ratio:.2}×."),
            "tables": [{"title": "TLS against plain TCP (exact GCRA, 32 in flight)", "reference": "plain TCP", "rows": rows}],
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
}
