//! The distributed limiters beside other Redis rate limiters, in the same
//! run, against one local Redis (`RATEKEEPER_REDIS_URL`; `benches/redis/run`
//! starts one):
//!
//! * **server CPU per decision** — what each decision costs Redis itself,
//!   from `INFO commandstats` (`usec_per_call`), under 50 concurrent clients
//!   × pipelines of 16 (the load of the issue's measurements): our scripts
//!   for every exact-mode algorithm and the shared Guava limiter, a peer's
//!   GCRA script (the npm package `redis-gcra`, when `--peer-gcra FILE`
//!   names its Lua), go-redis/redis_rate's GCRA script (when
//!   `--peer-redis-rate FILE` holds its `allowN` Lua: like ours it reads the
//!   server's `TIME`, so it is the closest peer; no registry this project
//!   installs from carries it), and plain `INCR`; five rounds, each
//!   contender's median, and its ratio to the peer as the median of the
//!   rounds' ratios;
//! * **decisions per second** from one process with 32 in flight: exact
//!   GCRA, leased GCRA, the peer's GCRA script, and `INCR`.
//!
//! ```text
//! redis-bench --json FILE [--quick] [--peer-gcra PATH/TO/gcra.lua] [--peer-redis-rate FILE]
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::stream::{FuturesUnordered, StreamExt};
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLeasedLimiter, RedisLimiter, RedisRateLimiter, RedisStore, StoreOptions};
use serde_json::{json, Value};

/// A limit no run reaches: every decision admits, so every contender does
/// the same (full) work.
const GCRA: LimiterSpec =
    LimiterSpec::Gcra { max_burst: 999_999_999, count_per_period: 1_000_000_000, period_micros: 1_000_000 };
const KEYS: usize = 1_000;
/// The same, at 100 per second per key (a burst no run exhausts): each key,
/// visited every few milliseconds, is still owed time when visited again,
/// so its state lives on between decisions. Under [`GCRA`] it is whole
/// again within a microsecond, and only the key's minimum lifetime (a
/// second, in both scripts) keeps it. Both are common; both are measured.
const BUSY: LimiterSpec = LimiterSpec::Gcra { max_burst: 999_999_999, count_per_period: 100, period_micros: 1_000_000 };
/// What the busy-key rows' names end with.
const BUSY_KEYS: &str = ", busy keys";
const BUSY_GCRA: &str = "ratekeeper GCRA (exact mode), busy keys";
const BUSY_REDIS_RATE: &str = "go-redis/redis_rate (GCRA Lua, server TIME), busy keys";

struct Args {
    json: PathBuf,
    quick: bool,
    peer_gcra: Option<PathBuf>,
    peer_redis_rate: Option<PathBuf>,
}

fn args() -> Args {
    let mut args = Args { json: PathBuf::from("redis.json"), quick: false, peer_gcra: None, peer_redis_rate: None };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => args.json = PathBuf::from(it.next().expect("--json FILE")),
            "--quick" => args.quick = true,
            "--peer-gcra" => args.peer_gcra = Some(PathBuf::from(it.next().expect("--peer-gcra FILE"))),
            "--peer-redis-rate" => {
                args.peer_redis_rate = Some(PathBuf::from(it.next().expect("--peer-redis-rate FILE")))
            }
            other => panic!("unknown argument {other:?}"),
        }
    }
    args
}

/// One decision of a contender, as a future that resolves when Redis
/// answered.
type Decide = Box<dyn Fn(usize) -> futures_util::future::BoxFuture<'static, ()> + Send + Sync>;

/// Runs `n` decisions with `in_flight` of them outstanding; returns the
/// wall time.
async fn run(decide: &Decide, n: usize, in_flight: usize) -> Duration {
    let start = Instant::now();
    let mut pending = FuturesUnordered::new();
    for i in 0..n {
        if pending.len() >= in_flight {
            pending.next().await;
        }
        pending.push(decide(i));
    }
    while pending.next().await.is_some() {}
    start.elapsed()
}

/// The median of `xs` (not empty).
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

/// `usec_per_call` of `command` in `INFO commandstats`.
async fn usec_per_call(conn: &mut redis::aio::MultiplexedConnection, command: &str) -> f64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(conn).await.unwrap();
    if std::env::var_os("REDIS_BENCH_DEBUG").is_some() {
        eprintln!("{}", info.lines().filter(|l| l.starts_with("cmdstat_")).collect::<Vec<_>>().join("\n"));
    }
    info.lines()
        .find(|l| l.starts_with(&format!("cmdstat_{command}:")))
        .and_then(|l| l.split("usec_per_call=").nth(1))
        .and_then(|r| r.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

fn unix_millis() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()
}

fn main() {
    let args = args();
    let url = std::env::var("RATEKEEPER_REDIS_URL").expect("RATEKEEPER_REDIS_URL (benches/redis/run sets it)");
    let store = RedisStore::connect(&url, StoreOptions { timeout: Duration::from_secs(5), ..StoreOptions::default() })
        .expect("connect");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut admin = runtime.block_on(client.get_multiplexed_async_connection()).unwrap();
    let peer_conn = runtime.block_on(client.get_multiplexed_async_connection()).unwrap();

    let keys: Arc<Vec<String>> = Arc::new((0..KEYS).map(|i| format!("user-{i}")).collect());
    let exact = |name: &str, spec: LimiterSpec| -> Decide {
        let limiter = RedisLimiter::new(&store, name, spec).unwrap().remember_refusals(false);
        let keys = Arc::clone(&keys);
        Box::new(move |i| {
            let (limiter, keys) = (limiter.clone(), Arc::clone(&keys));
            Box::pin(async move {
                limiter.check_async(&keys[i % KEYS], 1).await.unwrap();
            })
        })
    };
    let mut contenders: Vec<(&str, &str, Decide)> = vec![
        ("ratekeeper GCRA (exact mode)", "evalsha", exact("bench-gcra", GCRA)),
        (BUSY_GCRA, "evalsha", exact("bench-gcra-busy", BUSY)),
        (
            "ratekeeper token bucket",
            "evalsha",
            exact("bench-tb", LimiterSpec::TokenBucket { rate: 1_000.0, burst: 1_000_000_000 }),
        ),
        (
            "ratekeeper fixed window",
            "evalsha",
            exact("bench-fw", LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 60_000_000 }),
        ),
        (
            "ratekeeper sliding window counter",
            "evalsha",
            exact("bench-swc", LimiterSpec::SlidingWindowCounter { limit: 1_000_000_000, window_micros: 60_000_000 }),
        ),
        (
            "ratekeeper sliding log (limit 100, 1 ms)",
            "evalsha",
            exact("bench-log", LimiterSpec::SlidingLog { limit: 100, window_micros: 1_000 }),
        ),
    ];
    {
        let guava = RedisRateLimiter::builder("bench-guava", 1e9).max_burst_seconds(1.0).connect(&store).unwrap();
        contenders.push((
            "ratekeeper Guava SmoothBursty (shared)",
            "evalsha",
            Box::new(move |_| {
                let guava = guava.clone();
                Box::pin(async move {
                    guava.try_reserve_async(1, Duration::ZERO).await.unwrap();
                })
            }),
        ));
    }
    if let Some(path) = &args.peer_gcra {
        // The peer's script takes the time from the client, in ms: `now,
        // burst, rate, period, cost`.
        let script = Arc::new(redis::Script::new(&std::fs::read_to_string(path).expect("the peer's gcra.lua")));
        let (conn, keys) = (peer_conn.clone(), Arc::clone(&keys));
        contenders.push((
            "redis-gcra 0.3.0 (npm; GCRA Lua)",
            "evalsha",
            Box::new(move |i| {
                let (script, mut conn, keys) = (Arc::clone(&script), conn.clone(), Arc::clone(&keys));
                Box::pin(async move {
                    let _: redis::Value = script
                        .key(format!("peer-gcra:{}", keys[i % KEYS]))
                        .arg(unix_millis().to_string())
                        .arg(1_000_000_000) // burst
                        .arg(1_000) // rate: 1,000 per
                        .arg(1_000) // period: 1,000 ms
                        .arg(1)
                        .invoke_async(&mut conn)
                        .await
                        .unwrap();
                })
            }),
        ));
    }
    if let Some(path) = &args.peer_redis_rate {
        // redis_rate's allowN: `burst, rate, period (s), cost`; the time is
        // the server's.
        let script = Arc::new(redis::Script::new(&std::fs::read_to_string(path).expect("redis_rate's script")));
        // At 1,000 per second, not 10⁹ as ours: its TAT is a double in
        // seconds, to which 10⁻⁹ adds nothing, so it would never write.
        for (name, rate) in [("go-redis/redis_rate (GCRA Lua, server TIME)", 1_000), (BUSY_REDIS_RATE, 100)] {
            let (script, conn, keys) = (Arc::clone(&script), peer_conn.clone(), Arc::clone(&keys));
            contenders.push((
                name,
                "evalsha",
                Box::new(move |i| {
                    let (script, mut conn, keys) = (Arc::clone(&script), conn.clone(), Arc::clone(&keys));
                    Box::pin(async move {
                        let _: redis::Value = script
                            .key(format!("redis-rate:{rate}:{}", keys[i % KEYS]))
                            .arg(1_000_000_000) // burst
                            .arg(rate) // per
                            .arg(1) // period: 1 s
                            .arg(1)
                            .invoke_async(&mut conn)
                            .await
                            .unwrap();
                    })
                }),
            ));
        }
    }
    {
        let (conn, keys) = (peer_conn.clone(), Arc::clone(&keys));
        contenders.push((
            "INCR (no limiting: a floor)",
            "incr",
            Box::new(move |i| {
                let (mut conn, keys) = (conn.clone(), Arc::clone(&keys));
                Box::pin(async move {
                    let _: i64 = redis::cmd("INCR")
                        .arg(format!("incr:{}", keys[i % KEYS]))
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                })
            }),
        ));
    }

    let peer = if args.peer_redis_rate.is_some() {
        "go-redis/redis_rate"
    } else if args.peer_gcra.is_some() {
        "redis-gcra"
    } else {
        "ratekeeper GCRA"
    };
    let n = if args.quick { 20_000 } else { 200_000 };
    // Server CPU: every contender once per round, each round in another
    // order (rotated), so that a slow spell of the machine falls on all of
    // them; each row is its median over the rounds, and its ratio the
    // median over rounds of its figure ÷ the reference's in the same round
    // (one run per contender varied by ±8%).
    let rounds = if args.quick { 1 } else { 5 };
    let mut usecs: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    for (_, _, decide) in &contenders {
        // Warm up (loads scripts).
        runtime.block_on(run(decide, 2_000, 800));
    }
    for round in 0..rounds {
        for k in 0..contenders.len() {
            let c = (k + round) % contenders.len();
            let (_, command, decide) = &contenders[c];
            // Measured from zeroed statistics.
            runtime
                .block_on(async { redis::cmd("CONFIG").arg("RESETSTAT").query_async::<()>(&mut admin).await.unwrap() });
            runtime.block_on(run(decide, n, 50 * 16));
            usecs[c].push(runtime.block_on(usec_per_call(&mut admin, command)));
        }
    }
    // The reference of a row: the peer's row of the same workload.
    let reference_of = |name: &str| {
        let busy = name.ends_with(BUSY_KEYS);
        contenders.iter().position(|(n, _, _)| n.starts_with(peer) && n.ends_with(BUSY_KEYS) == busy)
    };
    let mut cpu_rows = Vec::new();
    for (c, (name, _, _)) in contenders.iter().enumerate() {
        let usec = median(&usecs[c]);
        let reference = reference_of(name);
        let ratio = reference.map(|r| median(&usecs[c].iter().zip(&usecs[r]).map(|(x, y)| x / y).collect::<Vec<_>>()));
        if std::env::var_os("REDIS_BENCH_DEBUG").is_some() {
            eprintln!("{name}: {:?}", usecs[c]);
        }
        let shown = ratio.map(|r| format!("  {r:.2}× {peer}")).unwrap_or_default();
        println!("server CPU per decision  {name:45} {usec:.2} µs{shown}");
        let workload = if name.ends_with(BUSY_KEYS) {
            "server CPU per decision (50 clients × 16), busy keys"
        } else {
            "server CPU per decision (50 clients × 16)"
        };
        cpu_rows.push(json!({
            "workload": workload,
            "contender": name,
            "value": usec * 1000.0,
            "ratio": ratio,
        }));
    }

    // Decisions per second from one process, 32 in flight: exact and leased
    // GCRA, and the floor.
    let leased = RedisLeasedLimiter::new(&store, "bench-leased", GCRA, 100, Duration::from_millis(100)).unwrap();
    let leased_decide: Decide = {
        let keys = Arc::clone(&keys);
        Box::new(move |i| {
            let (leased, keys) = (leased.clone(), Arc::clone(&keys));
            Box::pin(async move {
                leased.check_async(&keys[i % 10], 1).await.unwrap();
            })
        })
    };
    let mut rate_rows = Vec::new();
    let mut throughput = |name: &str, decide: &Decide| {
        runtime.block_on(run(decide, 2_000, 32));
        let elapsed = runtime.block_on(run(decide, n, 32));
        let per_second = n as f64 / elapsed.as_secs_f64();
        println!("decisions per second (32 in flight)  {name:45} {per_second:.0}/s");
        rate_rows.push(json!({"workload": "one process, 32 in flight", "contender": name, "value": 1e9 / per_second}));
    };
    throughput("ratekeeper leased GCRA (batch 100, lease 100 ms)", &leased_decide);
    for (name, _, decide) in &contenders {
        if (name.contains("GCRA") || name.starts_with("INCR")) && !name.ends_with(BUSY_KEYS) {
            throughput(name, decide);
        }
    }

    let doc: Value = json!({
        "format": "ratekeeper-bench/1",
        "suite": "redis",
        "title": "Redis: the distributed limiters beside a peer's GCRA script",
        "command": "benches/redis/run",
        "notes": "One local Redis 7.0. Server CPU per decision is Redis's own usec_per_call (INFO commandstats) under 50 concurrent clients × pipelines of 16; decisions per second are from one process with 32 in flight, as ns per decision. Every decision admits (limits out of reach), so each contender does its full work. Two workloads for GCRA: idle keys, whole again between visits, and busy keys (100/s per key, still owed time at each visit). Both scripts keep a key at least a second (ours: or twice its lead, refreshing the expiry only when the lead outgrows it), so the same key's next visits overwrite its state rather than create it. Five rounds, each in a rotated order: a row is its median, its ratio the median of the rounds' ratios to the peer of its workload. redis-cell's CL.THROTTLE module and redis_rate's script are not in any registry this project may install from; the GCRA peers are the npm package redis-gcra (a GCRA Lua script taking the time from the client) and, when REDIS_RATE_LUA names a copy of its allowN script, go-redis/redis_rate (which reads the server's TIME, as ours does).",
        "tables": [
            {"title": "Server CPU per decision", "reference": peer, "rows": cpu_rows},
            {"title": "Decisions per second (one process, 32 in flight)", "reference": "ratekeeper GCRA (exact mode)", "rows": rate_rows},
        ],
    });
    std::fs::write(&args.json, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}
