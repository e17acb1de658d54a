//! A Sentinel store follows a failover while limiters in several processes
//! decide through it. Run under `tests/redis/with-redis --sentinel` (a
//! master, one replica, three sentinels); without it the test says so and
//! runs nothing.
//!
//! Four worker processes (this binary, run with `RK_SENTINEL_WORKER` set)
//! each decide, every 2 ms, on four limiters of one
//! [`RedisStore::connect_sentinel`] store: an exact-mode GCRA and a fixed
//! window that the workers exhaust together (policy `Error`, so every
//! decision counted came from Redis), and two generous fixed windows under
//! the fail-closed and fail-open policies. The master is killed with
//! `kill -9` 1.5 s in. Asserted:
//!
//! * decisions come from Redis again, in every worker, within the
//!   sentinels' failover (the time until a sentinel names the replica) plus
//!   1 s, and every worker's store ends on the replica;
//! * meanwhile the policy holds: the `Error` limiters fail with an
//!   unavailability only (and only then), the fail-closed one refuses and
//!   the fail-open one admits in its stead (neither errs), and both do so
//!   at least once;
//! * no call takes longer than the store's timeout plus a scheduling
//!   margin;
//! * the admitted totals of the two exhausted limiters are at least their
//!   limit (the new master kept their state: a failover that lost it would
//!   admit the limit again) and at most their limit plus what was admitted
//!   in the last second before the kill — the bound of SECURITY.md ("What
//!   a failover can cost"): writes the old master acknowledged but had not
//!   yet sent to its replica, which acknowledges once a second.
//!
//! Its figures (time to recover, admitted beyond the limit) are printed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};

const TEST_NAME: &str = "limiters_in_several_processes_follow_a_sentinel_failover";
const WORKERS: usize = 4;
/// The limit of the two limiters the workers exhaust: more than they admit
/// before the kill (about 2 per ms together), less than they try after it.
const LIMIT: u64 = 4000;
const KILL_AFTER: Duration = Duration::from_millis(1500);
const RUN: Duration = Duration::from_secs(10);
const TIMEOUT: Duration = Duration::from_millis(100);
const RETRY_INTERVAL: Duration = Duration::from_millis(200);
/// Scheduling room beyond the store's timeout: two cores shared by four
/// workers, four Redis processes and the test.
const MARGIN: Duration = Duration::from_millis(100);

fn main() {
    if std::env::var_os("RK_SENTINEL_WORKER").is_some() {
        return worker();
    }
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| TEST_NAME.contains(f.as_str())) {
        println!("running 0 tests");
        return;
    }
    println!("running 1 test");
    if std::env::var_os("RATEKEEPER_REDIS_SENTINELS").is_none() {
        println!(
            "test {TEST_NAME} ... not run: RATEKEEPER_REDIS_SENTINELS is not set \
             (run under tests/redis/with-redis --sentinel, as scripts/test.sh does)"
        );
        return;
    }
    limiters_in_several_processes_follow_a_sentinel_failover();
    println!("test {TEST_NAME} ... ok");
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set (tests/redis/with-redis --sentinel sets it)"))
}

fn now_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

fn store() -> RedisStore {
    let sentinels = env("RATEKEEPER_REDIS_SENTINELS");
    let sentinels: Vec<&str> = sentinels.split(',').collect();
    let options = StoreOptions { timeout: TIMEOUT, retry_interval: RETRY_INTERVAL, ..StoreOptions::default() };
    RedisStore::connect_sentinel(&sentinels, &env("RATEKEEPER_REDIS_MASTER_NAME"), options).expect("connect_sentinel")
}

const GENEROUS: LimiterSpec = LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 3_600_000_000 };

/// One worker: decides every 2 ms until `RK_SENTINEL_UNTIL` (Unix µs) and
/// prints one line per call: `time_us limiter outcome duration_us`, then
/// `master HOST:PORT`.
fn worker() {
    let until: i64 = env("RK_SENTINEL_UNTIL").parse().unwrap();
    let run = env("RK_SENTINEL_RUN");
    let store = store();
    let gcra = LimiterSpec::Gcra { max_burst: LIMIT - 1, count_per_period: 1, period_micros: 3_600_000_000 };
    let window = LimiterSpec::FixedWindow { limit: LIMIT, window_micros: 3_600_000_000 };
    let limiters = [
        ("gcra", RedisLimiter::new(&store, &format!("gcra-{run}"), gcra).unwrap()),
        ("window", RedisLimiter::new(&store, &format!("window-{run}"), window).unwrap()),
        (
            "closed",
            RedisLimiter::new(&store, &format!("closed-{run}"), GENEROUS)
                .unwrap()
                .when_unavailable(WhenUnavailable::FailClosed),
        ),
        (
            "open",
            RedisLimiter::new(&store, &format!("open-{run}"), GENEROUS)
                .unwrap()
                .when_unavailable(WhenUnavailable::FailOpen),
        ),
    ];
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut next = Instant::now();
    while now_micros() < until {
        for (name, limiter) in &limiters {
            let started = Instant::now();
            let at = now_micros();
            let result = limiter.check("k", 1);
            let took = started.elapsed().as_micros();
            let outcome = match (*name, result) {
                // The policies' own decisions: a refusal that waits out the
                // retry interval, an admission that resets nothing (a Redis
                // window always has a reset ahead).
                ("closed", Ok(d)) if !d.allowed && d.reset_after_micros == RETRY_INTERVAL.as_micros() as i64 => {
                    "policy-refused".to_owned()
                }
                ("open", Ok(d)) if d.allowed && d.reset_after_micros == 0 => "policy-admitted".to_owned(),
                (_, Ok(d)) if d.allowed => "admitted".to_owned(),
                (_, Ok(_)) => "refused".to_owned(),
                (_, Err(e)) if e.is_unavailability() => "unavailable".to_owned(),
                (_, Err(e)) => format!("error:{}", describe(&e).replace(' ', "_")),
            };
            writeln!(out, "{at} {name} {outcome} {took}").unwrap();
        }
        next += Duration::from_millis(2);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    writeln!(out, "master {}", store.sentinel_master().unwrap_or_default()).unwrap();
}

fn describe(e: &Error) -> String {
    e.to_string()
}

struct Call {
    at: i64,
    limiter: String,
    outcome: String,
    took: i64,
}

fn limiters_in_several_processes_follow_a_sentinel_failover() {
    let replica = format!("127.0.0.1:{}", env("RATEKEEPER_REDIS_REPLICA_PORT"));
    let master_pid = env("RATEKEEPER_REDIS_MASTER_PID");
    let sentinels = env("RATEKEEPER_REDIS_SENTINELS");
    let name = env("RATEKEEPER_REDIS_MASTER_NAME");
    let sentinel = redis::Client::open(sentinels.split(',').next().unwrap()).unwrap();
    let mut sentinel = sentinel.get_connection().unwrap();

    // The limits' fixed windows (an hour, aligned) must not roll over
    // during the run.
    let hour = 3_600_000_000i64;
    let left = hour - now_micros().rem_euclid(hour);
    if left < (RUN + Duration::from_secs(5)).as_micros() as i64 {
        std::thread::sleep(Duration::from_micros(left as u64 + 100_000));
    }

    let run = format!("{}-{}", std::process::id(), now_micros());
    let start = now_micros();
    let until = start + RUN.as_micros() as i64;
    let exe = std::env::current_exe().unwrap();
    let logs: Vec<std::path::PathBuf> =
        (0..WORKERS).map(|i| std::env::temp_dir().join(format!("ratekeeper-sentinel-{run}-{i}.log"))).collect();
    let children: Vec<Child> = logs
        .iter()
        .map(|log| {
            Command::new(&exe)
                .env("RK_SENTINEL_WORKER", "1")
                .env("RK_SENTINEL_UNTIL", until.to_string())
                .env("RK_SENTINEL_RUN", &run)
                .stdout(Stdio::from(std::fs::File::create(log).unwrap()))
                .spawn()
                .unwrap()
        })
        .collect();

    std::thread::sleep(KILL_AFTER);
    let killed = now_micros();
    assert!(Command::new("kill").args(["-9", &master_pid]).status().unwrap().success());
    // The failover, as the sentinels see it: the time until one names the
    // replica.
    let failed_over = loop {
        let named: Option<(String, u16)> =
            redis::cmd("SENTINEL").arg("GET-MASTER-ADDR-BY-NAME").arg(&name).query(&mut sentinel).unwrap();
        if named.is_some_and(|(host, port)| format!("{host}:{port}") == replica) {
            break now_micros();
        }
        assert!(now_micros() < until - 3_000_000, "the sentinels did not fail over in time");
        std::thread::sleep(Duration::from_millis(5));
    };

    let mut calls: Vec<Vec<Call>> = Vec::new();
    for (mut child, log) in children.into_iter().zip(&logs) {
        assert!(child.wait().unwrap().success(), "a worker failed");
        let mut mine = Vec::new();
        let mut master = None;
        let file = std::fs::File::open(log).unwrap();
        std::fs::remove_file(log).unwrap();
        for line in BufReader::new(file).lines() {
            let line = line.unwrap();
            let fields: Vec<&str> = line.split(' ').collect();
            if fields[0] == "master" {
                master = fields.get(1).map(|s| s.to_string());
                continue;
            }
            mine.push(Call {
                at: fields[0].parse().unwrap(),
                limiter: fields[1].to_owned(),
                outcome: fields[2].to_owned(),
                took: fields[3].parse().unwrap(),
            });
        }
        assert_eq!(master.as_deref(), Some(replica.as_str()), "a worker's store did not end on the new master");
        calls.push(mine);
    }

    let deadline = failed_over + 1_000_000;
    let mut recovered = 0i64;
    let mut slowest = 0i64;
    let (mut refused_by_policy, mut admitted_by_policy) = (0, 0);
    for mine in &calls {
        for call in mine {
            slowest = slowest.max(call.took);
            assert!(
                call.took <= (TIMEOUT + MARGIN).as_micros() as i64,
                "a call took {} µs ({} {} at {} µs after the kill)",
                call.took,
                call.limiter,
                call.outcome,
                call.at - killed
            );
            let from_redis = call.outcome == "admitted" || call.outcome == "refused";
            // Sent before the kill, a call may still end after it.
            let during = call.at + call.took >= killed && call.at <= deadline;
            assert!(
                from_redis || during,
                "{} {} outside the failover ({} µs after the kill)",
                call.limiter,
                call.outcome,
                call.at - killed
            );
            match (call.limiter.as_str(), call.outcome.as_str()) {
                (_, "admitted" | "refused") => {}
                ("gcra" | "window", "unavailable") => {}
                ("closed", "policy-refused") => refused_by_policy += 1,
                ("open", "policy-admitted") => admitted_by_policy += 1,
                (limiter, outcome) => panic!("{limiter}: {outcome} is not what its policy decides"),
            }
        }
        // Per limiter, the first decision from Redis after the kill.
        for limiter in ["gcra", "window", "closed", "open"] {
            let first = mine
                .iter()
                .filter(|c| c.limiter == limiter && c.at > killed)
                .skip_while(|c| c.outcome == "admitted" || c.outcome == "refused")
                .find(|c| c.outcome == "admitted" || c.outcome == "refused")
                .unwrap_or_else(|| panic!("{limiter}: no decision from Redis after the failover"));
            assert!(
                first.at <= deadline,
                "{limiter}: decisions came back from Redis {} ms after the sentinels' failover",
                (first.at - failed_over) / 1000
            );
            recovered = recovered.max(first.at - killed);
        }
    }
    assert!(refused_by_policy > 0, "the fail-closed limiter never decided by its policy");
    assert!(admitted_by_policy > 0, "the fail-open limiter never decided by its policy");

    let mut beyond = Vec::new();
    for limiter in ["gcra", "window"] {
        let admitted = calls.iter().flatten().filter(|c| c.limiter == limiter && c.outcome == "admitted");
        let total = admitted.clone().count() as u64;
        let last_second = admitted.filter(|c| c.at <= killed && c.at > killed - 1_000_000).count() as u64;
        assert!(
            total >= LIMIT,
            "{limiter}: {total} admitted in all, under the limit {LIMIT}: the run did not exhaust it"
        );
        assert!(
            total <= LIMIT + last_second,
            "{limiter}: {total} admitted, beyond the limit {LIMIT} by more than the {last_second} admitted \
             in the last second before the kill"
        );
        beyond.push(format!("{limiter} {} (bound {last_second})", total - LIMIT));
    }
    println!(
        "sentinel failover: the sentinels named the new master {} ms after kill -9; decisions came from it \
         {} ms after the kill in every worker ({} ms after the failover); slowest call {} µs; \
         policy decisions: {refused_by_policy} refused (fail-closed), {admitted_by_policy} admitted (fail-open); \
         admitted beyond the limit: {}",
        (failed_over - killed) / 1000,
        recovered / 1000,
        (killed + recovered - failed_over) / 1000,
        slowest,
        beyond.join(", ")
    );
}
