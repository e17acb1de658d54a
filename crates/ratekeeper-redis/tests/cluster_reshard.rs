//! A slot moves between masters while limiters on it decide, under load
//! from several processes: no error reaches any caller, and every unit
//! admitted is counted exactly once.
//!
//! Under `tests/redis/with-redis --cluster-replicas` (skipped, saying so,
//! elsewhere). The limiters — GCRA checked in batches, the token bucket,
//! the fixed window, the sliding window counter and the sliding log (two
//! keys per user key), and leased mode over the token bucket — keep their
//! user key's state in one chosen slot.
//! Three child processes check them in a loop, with the default
//! unavailability policy (`Error`: any failure reaches the caller), while
//! the test moves the slot from master to master three times, a key at a
//! time with pauses between, so that the clients meet `ASK` (a key
//! already moved), `TRYAGAIN` (the sliding log's two keys on different
//! nodes) and `MOVED` (the move done); each target's script cache is
//! flushed first, so an `ASK`ed script meets `NOSCRIPT` there too.
//!
//! Asserted: no call fails; the servers did answer with `ASK`, `TRYAGAIN`
//! and `NOSCRIPT` (the test exercised what it means to); and for each limiter,
//! the units the children saw admitted plus what the limiter has left
//! equal its limit exactly — `MIGRATE` moves a key atomically (it is
//! deleted from the source only once the target has it, and the source
//! runs nothing meanwhile), so a migration neither loses nor repeats a
//! decision. (Leased mode: at most the limit, since units leased and not
//! spent are taken and never admitted.)
//!
//! Its own `main` (`harness = false`): the binary is also the child
//! processes (see `cluster_support`).

mod cluster_support;

use std::path::Path;
use std::time::{Duration, Instant};

use cluster_support::{key_in_slot, slot, Cluster};
use ratekeeper::{Algorithm, LimiterSpec};
use ratekeeper_redis::{RedisLeasedLimiter, RedisLimiter, RedisStore, StoreOptions};

const TEST_NAME: &str = "moving_a_slot_under_load_loses_no_decision_and_fails_no_call";
const CHILDREN: usize = 3;
/// Every limiter's limit: large enough that the children are still being
/// admitted while the slot moves, small enough for the sliding log (one
/// member per unit) and for the scripts' exact ranges (window × limit
/// below 2^53).
const LIMIT: u64 = 50_000;
/// 10^11 µs, about 28 hours: nothing refills during the test (the windows
/// are aligned to multiples of it: one boundary a day).
const LONG: i64 = 100_000_000_000;
/// Three migrations; each step of one is followed by this pause.
const PAUSE: Duration = Duration::from_millis(60);
/// GCRA's checks go out in batches of this many (`check_many_async`).
const BATCH: usize = 4;
/// Leased mode's batch and lease.
const LEASE_BATCH: u64 = 10;
const LEASE: Duration = Duration::from_secs(1);

fn specs() -> Vec<(&'static str, LimiterSpec)> {
    vec![
        ("gcra", LimiterSpec::Gcra { max_burst: LIMIT - 1, count_per_period: 1, period_micros: LONG }),
        ("token-bucket", LimiterSpec::TokenBucket { rate: 1e-5, burst: LIMIT }),
        ("fixed-window", LimiterSpec::FixedWindow { limit: LIMIT, window_micros: LONG }),
        ("sliding-counter", LimiterSpec::SlidingWindowCounter { limit: LIMIT, window_micros: LONG }),
        ("sliding-log", LimiterSpec::SlidingLog { limit: LIMIT, window_micros: LONG }),
        // Leased mode over the token bucket: the children take units in
        // batches (`RedisLeasedLimiter`); the test reads its shared state.
        ("leased", LimiterSpec::TokenBucket { rate: 1e-5, burst: LIMIT }),
    ]
}

fn options() -> StoreOptions {
    // Generous for a loaded two-core machine: a timeout is not what this
    // test is about, and any failure at all fails it.
    StoreOptions { timeout: Duration::from_millis(500), ..StoreOptions::default() }
}

/// The limiters of run `run` (a name each) and their user keys, all in
/// `slot`.
fn limiters(store: &RedisStore, run: &str, slot: u16) -> Vec<(String, RedisLimiter, String)> {
    specs()
        .into_iter()
        .map(|(kind, spec)| {
            let name = format!("reshard-{run}-{kind}");
            let key = key_in_slot(&name, slot);
            // Every check must reach Redis: a remembered refusal would not.
            let limiter = RedisLimiter::new(store, &name, spec).unwrap().remember_refusals(false);
            (kind.to_owned(), limiter, key)
        })
        .collect()
}

fn main() {
    if std::env::var_os("RK_CLUSTER_CHILD").is_some() {
        return child();
    }
    if !cluster_support::selected(TEST_NAME) {
        println!("running 0 tests");
        return;
    }
    println!("running 1 test");
    match Cluster::from_env(TEST_NAME) {
        Some(cluster) => {
            moving_a_slot_under_load_loses_no_decision_and_fails_no_call(&cluster);
            println!("test {TEST_NAME} ... ok");
        }
        None => println!("test {TEST_NAME} ... skipped"),
    }
}

fn moving_a_slot_under_load_loses_no_decision_and_fails_no_call(cluster: &Cluster) {
    let run = std::process::id().to_string();
    let slot = slot(&format!("reshard-{run}"));
    let dir = cluster_support::scratch("reshard");
    let store = RedisStore::connect_cluster(&cluster.node_urls(), options()).unwrap();
    let limiters = limiters(&store, &run, slot);
    let home = cluster.owner(slot);
    let mut children = cluster_support::spawn_children(
        CHILDREN,
        &dir,
        &[("RK_RESHARD_RUN", run.clone()), ("RK_RESHARD_SLOT", slot.to_string())],
    );
    for n in 0..CHILDREN {
        if !cluster_support::exists_within(&dir.join(format!("ready-{n}")), Duration::from_secs(20)) {
            children.iter_mut().for_each(|c| drop(c.kill()));
            panic!("child {n} did not start");
        }
    }
    // Every limiter's keys exist (the children checked each once) before
    // the slot moves: a migration moves keys, and a key made later would
    // be made on the target.
    std::thread::sleep(Duration::from_millis(300));
    cluster.reset_stats();
    let log = limiters.iter().find(|(kind, ..)| kind == "sliding-log").unwrap();
    let log_key = format!("rk:{{reshard-{run}-sliding-log:{}}}:{}", log.2, Algorithm::SlidingLog.wire_name());
    let meta_key = format!("{log_key}:meta");
    std::fs::write(dir.join("moving"), b"").unwrap();
    let started = Instant::now();
    let mut route = vec![home.port];
    for hop in 0..3 {
        let masters = cluster.masters();
        let from = cluster.owner(slot);
        // Round the masters: away from home, on, then home again.
        let to = if hop == 2 {
            masters.iter().find(|m| m.port == home.port).unwrap().clone()
        } else {
            masters.iter().find(|m| m.port != from.port && !route.contains(&m.port)).unwrap().clone()
        };
        // The target has never run the scripts: the first `ASK`ed call
        // there meets `NOSCRIPT`, and must load them there.
        let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut cluster.connection(to.port)).unwrap();
        cluster.migrate_slot(slot, &to, std::slice::from_ref(&log_key), std::slice::from_ref(&meta_key), PAUSE);
        route.push(to.port);
        std::thread::sleep(PAUSE);
    }
    let moving = started.elapsed();
    std::fs::remove_file(dir.join("moving")).unwrap();
    std::fs::write(dir.join("stop"), b"").unwrap();
    let results = cluster_support::results(children, &dir);
    let _ = std::fs::remove_dir_all(&dir);

    let ask = cluster.stat("errorstats", "errorstat_ASK:", "count");
    let tryagain = cluster.stat("errorstats", "errorstat_TRYAGAIN:", "count");
    let moved = cluster.stat("errorstats", "errorstat_MOVED:", "count");
    let asking = cluster.stat("commandstats", "cmdstat_asking:", "calls");
    let noscript = cluster.stat("errorstats", "errorstat_NOSCRIPT:", "count");
    let field = |lines: &Vec<String>, name: &str| -> u64 {
        lines.iter().find_map(|l| l.strip_prefix(&format!("{name} "))).map_or(0, |v| v.parse().unwrap())
    };
    let errors: u64 = results.iter().map(|r| field(r, "errors")).sum();
    let calls: u64 = results.iter().map(|r| field(r, "calls")).sum();
    let during: u64 = results.iter().map(|r| field(r, "calls-while-moving")).sum();
    let messages: Vec<&String> = results.iter().flatten().filter(|l| l.starts_with("error ")).collect();
    println!(
        "resharding: slot {slot} moved {route:?} in {moving:?}; {calls} calls from {CHILDREN} processes \
         ({during} while it moved), {errors} failed; the servers answered ASK {ask}, TRYAGAIN {tryagain}, \
         MOVED {moved}, NOSCRIPT {noscript} times (ASKING {asking})"
    );
    assert_eq!(errors, 0, "calls failed during the migration: {messages:?}");
    assert!(during > 0, "no call was made while the slot moved");
    assert!(ask > 0, "no client was sent elsewhere with ASK: the test did not exercise a migration");
    assert!(tryagain > 0, "no script met its keys split (TRYAGAIN): the test did not exercise it");
    assert!(noscript > 0, "no target lacked the scripts (NOSCRIPT): the test did not exercise it");

    for (kind, limiter, key) in &limiters {
        let admitted: u64 = results.iter().map(|r| field(r, &format!("admitted-{kind}"))).sum();
        let left = limiter.peek(key, 0).unwrap().remaining;
        println!("  {kind}: {admitted} admitted, {left} left of {LIMIT}");
        assert!(admitted > 0, "{kind}: nothing admitted");
        if kind == "leased" {
            // Units leased and not spent (the children's last leases, and
            // any that expired while a child waited) are taken, never
            // admitted: what is exact is that nothing is admitted twice.
            assert!(admitted + left <= LIMIT, "{kind}: admitted {admitted} + left {left} is above the limit");
            continue;
        }
        assert_eq!(admitted + left, LIMIT, "{kind}: admitted {admitted} + left {left} is not the limit");
    }
}

/// A child: checks every limiter in turn until the parent's stop file
/// appears, then writes what it saw.
fn child() {
    let var = |name: &str| std::env::var(name).unwrap();
    let n = var("RK_CLUSTER_CHILD");
    let dir = std::path::PathBuf::from(var("RK_CLUSTER_DIR"));
    let cluster = Cluster::from_env(TEST_NAME).expect("the parent's cluster");
    let store = RedisStore::connect_cluster(&cluster.node_urls(), options()).unwrap();
    let run = var("RK_RESHARD_RUN");
    let limiters = limiters(&store, &run, var("RK_RESHARD_SLOT").parse().unwrap());
    let (_, spec) = specs().into_iter().find(|(kind, _)| *kind == "leased").unwrap();
    let leased = RedisLeasedLimiter::new(&store, &format!("reshard-{run}-leased"), spec, LEASE_BATCH, LEASE).unwrap();
    let mut admitted = vec![0u64; limiters.len()];
    let (mut calls, mut errors, mut during) = (0u64, 0u64, 0u64);
    let mut messages = Vec::new();
    let stop = dir.join("stop");
    let mut ready = false;
    while !stop.exists() {
        let moving = is_moving(&dir);
        for (i, (kind, limiter, key)) in limiters.iter().enumerate() {
            let answers = if kind == "gcra" {
                let (limiter, requests) = (limiter.clone(), vec![(key.as_bytes().to_vec(), 1); BATCH]);
                RedisStore::block_on(async move { limiter.check_many_async(requests).await })
            } else if kind == "leased" {
                vec![leased.check(key, 1)]
            } else {
                vec![limiter.check(key, 1)]
            };
            for answer in answers {
                calls += 1;
                during += u64::from(moving);
                match answer {
                    Ok(d) => admitted[i] += u64::from(d.allowed),
                    Err(e) => {
                        errors += 1;
                        if messages.len() < 5 {
                            messages.push(format!("{kind}: {e}"));
                        }
                    }
                }
            }
        }
        if !ready {
            std::fs::write(dir.join(format!("ready-{n}")), b"").unwrap();
            ready = true;
        }
    }
    let mut out = String::new();
    for ((kind, ..), admitted) in limiters.iter().zip(&admitted) {
        out += &format!("admitted-{kind} {admitted}\n");
    }
    out += &format!("calls {calls}\nerrors {errors}\ncalls-while-moving {during}\n");
    for message in messages {
        out += &format!("error {message}\n");
    }
    std::fs::write(dir.join(format!("child-{n}")), out).unwrap();
}

/// Whether the parent is moving the slot (it holds a file meanwhile).
fn is_moving(dir: &Path) -> bool {
    dir.join("moving").exists()
}
