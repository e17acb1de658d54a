//! The master serving a limiter's slot is killed (`kill -9`) under load
//! from several processes; its replica takes over.
//!
//! Under `tests/redis/with-redis --cluster-replicas` (node timeout 1 s;
//! skipped, saying so, elsewhere). Three child processes check two
//! limiters (GCRA in batches, the fixed window), both failing closed, in a
//! loop; the test kills the master of their slot and watches its replica
//! become master. Asserted:
//!
//! * no call returns an error: while the slot has no master the policy
//!   decides (refusals), and no call takes longer than the store's timeout
//!   plus scheduling slack, a batch of checks included;
//! * every process is back on Redis (no more policy decisions) within the
//!   failover — from the kill to the replica's promotion, which the test
//!   measures and bounds by the node timeout plus Redis's election delay —
//!   plus one second;
//! * the units the children saw admitted exceed what the promoted replica
//!   counts as taken by at most what was admitted in the last second
//!   before the kill: replication is asynchronous, so the new master may
//!   lack the old one's last writes, and those units can be admitted again
//!   (see SECURITY.md, "What a failover can cost"). On loopback the replica
//!   is a fraction of a millisecond behind; the figure is printed.
//!
//! Its own `main` (`harness = false`): the binary is also the child
//! processes (see `cluster_support`).

mod cluster_support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cluster_support::{key_in_slot, slot, Cluster};
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};

const TEST_NAME: &str = "killing_a_master_under_load_fails_over_to_its_replica_within_the_bound";
const CHILDREN: usize = 3;
const LIMIT: u64 = 1_000_000;
/// 10^9 µs: nothing refills during the test (window × limit below 2^53).
const LONG: i64 = 1_000_000_000;
const TIMEOUT: Duration = Duration::from_millis(100);
/// A loaded two-core machine's scheduling on top of the timeout.
const SLACK: Duration = Duration::from_millis(250);
/// The node timeout `with-redis --cluster-replicas` sets.
const NODE_TIMEOUT: Duration = Duration::from_millis(1000);
/// After the node timeout, the other masters must agree on the failure
/// (gossip: up to about half a node timeout more), then the replica waits
/// 500 ms plus up to 500 ms at random before asking for votes (more for a
/// replica ranked behind others: each master here has one); and a second
/// for a loaded machine. Seen: 2.4 to 2.7 s in all.
const ELECTION: Duration = Duration::from_millis(2500);
/// How long the children run on each side of the kill.
const BEFORE: Duration = Duration::from_millis(1500);
const AFTER: Duration = Duration::from_secs(3);
const BATCH: usize = 4;

fn specs() -> Vec<(&'static str, LimiterSpec)> {
    vec![
        ("gcra", LimiterSpec::Gcra { max_burst: LIMIT - 1, count_per_period: 1, period_micros: LONG }),
        ("fixed-window", LimiterSpec::FixedWindow { limit: LIMIT, window_micros: LONG }),
    ]
}

fn options() -> StoreOptions {
    StoreOptions { timeout: TIMEOUT, ..StoreOptions::default() }
}

fn limiters(store: &RedisStore, run: &str, slot: u16) -> Vec<(String, RedisLimiter, String)> {
    specs()
        .into_iter()
        .map(|(kind, spec)| {
            let name = format!("failover-{run}-{kind}");
            let key = key_in_slot(&name, slot);
            let limiter = RedisLimiter::new(store, &name, spec)
                .unwrap()
                .remember_refusals(false)
                .when_unavailable(WhenUnavailable::FailClosed);
            (kind.to_owned(), limiter, key)
        })
        .collect()
}

fn unix_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
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
            killing_a_master_under_load_fails_over_to_its_replica_within_the_bound(&cluster);
            println!("test {TEST_NAME} ... ok");
        }
        None => println!("test {TEST_NAME} ... skipped"),
    }
}

fn killing_a_master_under_load_fails_over_to_its_replica_within_the_bound(cluster: &Cluster) {
    let run = std::process::id().to_string();
    // A slot whose master has a replica (an earlier failover may have
    // left one master without).
    let (slot, master, replica) = (0..)
        .map(|i| slot(&format!("failover-{run}-{i}")))
        .find_map(|slot| {
            let master = cluster.owner(slot);
            let replica = cluster.replica_of(&master)?;
            Some((slot, master, replica))
        })
        .unwrap();
    let dir = cluster_support::scratch("failover");
    let mut children = cluster_support::spawn_children(
        CHILDREN,
        &dir,
        &[("RK_FAILOVER_RUN", run.clone()), ("RK_FAILOVER_SLOT", slot.to_string())],
    );
    for n in 0..CHILDREN {
        if !cluster_support::exists_within(&dir.join(format!("ready-{n}")), Duration::from_secs(20)) {
            children.iter_mut().for_each(|c| drop(c.kill()));
            panic!("child {n} did not start");
        }
    }
    std::thread::sleep(BEFORE);
    cluster.kill(master.port);
    let killed = Instant::now();
    let killed_at = unix_micros();
    std::fs::write(dir.join("killed"), killed_at.to_string()).unwrap();
    // The replica's promotion, as it reports it.
    let mut replica_connection = cluster.connection(replica);
    let promoted = loop {
        let info: String = redis::cmd("INFO").arg("replication").query(&mut replica_connection).unwrap();
        if info.contains("role:master") {
            break killed.elapsed();
        }
        assert!(killed.elapsed() < Duration::from_secs(15), "the replica was never promoted");
        std::thread::sleep(Duration::from_millis(5));
    };
    std::thread::sleep(AFTER.saturating_sub(killed.elapsed()));
    std::fs::write(dir.join("stop"), b"").unwrap();
    let results = cluster_support::results(children, &dir);
    let _ = std::fs::remove_dir_all(&dir);

    let field = |lines: &Vec<String>, name: &str| -> i64 {
        lines.iter().find_map(|l| l.strip_prefix(&format!("{name} "))).map_or(0, |v| v.parse().unwrap())
    };
    let sum = |name: &str| -> i64 { results.iter().map(|r| field(r, name)).sum() };
    let errors = sum("errors");
    let policy = sum("policy-decisions");
    let longest = |name: &str| Duration::from_micros(results.iter().map(|r| field(r, name)).max().unwrap() as u64);
    let (longest, longest_batch) = (longest("longest-call-micros"), longest("longest-batch-micros"));
    // Each process is back on Redis after its last policy decision.
    let back = Duration::from_micros(results.iter().map(|r| field(r, "back-micros")).max().unwrap().max(0) as u64);
    let messages: Vec<&String> = results.iter().flatten().filter(|l| l.starts_with("error ")).collect();
    let store = RedisStore::connect_cluster(&cluster.node_urls(), options()).unwrap();
    let mut report = Vec::new();
    for (kind, limiter, key) in limiters(&store, &run, slot) {
        let admitted = sum(&format!("admitted-{kind}")) as u64;
        let last_second = sum(&format!("admitted-last-second-{kind}")) as u64;
        let taken = LIMIT - limiter.peek(&key, 0).unwrap().remaining;
        report.push((kind, admitted, taken, last_second));
    }
    println!(
        "failover: master {} killed; replica {replica} promoted after {promoted:?}; every process back on \
         Redis {back:?} after the kill; {policy} decisions by the policy (fail closed) meanwhile, {errors} \
         errors; longest call {longest:?}, longest batch of {BATCH} {longest_batch:?}",
        master.port
    );
    for (kind, admitted, taken, last_second) in &report {
        println!(
            "  {kind}: {admitted} admitted, {taken} counted by the new master: {} beyond ({last_second} admitted \
             in the last second before the kill)",
            *admitted as i64 - *taken as i64
        );
    }
    for line in results.iter().flatten().filter(|l| l.starts_with("longest-call ")) {
        println!("  {line}");
    }
    assert_eq!(errors, 0, "errors reached callers through a fail-closed policy: {messages:?}");
    assert!(policy > 0, "no decision fell to the policy: was the master really killed under load?");
    assert!(longest <= TIMEOUT + SLACK, "a call took {longest:?}");
    // A batch's checks on a cluster run one after another in a blocking
    // call (in order, as `check_many_async` promises), each within the
    // timeout; but once one has timed out with nothing answered, the store
    // is down and the rest fail at once. (Following the nodes' `MOVED` to
    // the dead master until the deadline kept it up: 412 to 449 ms.)
    assert!(longest_batch <= TIMEOUT + SLACK, "a batch of {BATCH} took {longest_batch:?}");
    assert!(promoted <= NODE_TIMEOUT + ELECTION, "the replica took {promoted:?} to take over");
    assert!(back <= promoted + Duration::from_secs(1), "back on Redis {back:?} after the kill, promoted {promoted:?}");
    for (kind, admitted, taken, last_second) in report {
        assert!(admitted <= taken + last_second, "{kind}: {admitted} admitted, {taken} counted, {last_second} lately");
        // The other way, a call that timed out (the policy refused) may
        // have run: counted, never seen admitted.
        assert!(taken <= admitted + policy as u64, "{kind}: {taken} counted for {admitted} admitted");
    }
}

/// A child: checks both limiters in turn until the parent's stop file
/// appears, timing each call, then writes what it saw.
fn child() {
    let var = |name: &str| std::env::var(name).unwrap();
    let n = var("RK_CLUSTER_CHILD");
    let dir = std::path::PathBuf::from(var("RK_CLUSTER_DIR"));
    let cluster = Cluster::from_env(TEST_NAME).expect("the parent's cluster");
    let store = RedisStore::connect_cluster(&cluster.node_urls(), options()).unwrap();
    let limiters = limiters(&store, &var("RK_FAILOVER_RUN"), var("RK_FAILOVER_SLOT").parse().unwrap());
    // Per limiter, the end time (Unix µs) of each admitted call; and the
    // end of the last decision the policy made.
    let mut admissions: Vec<Vec<i64>> = vec![Vec::new(); limiters.len()];
    let (mut errors, mut policy, mut last_policy, mut longest) = (0i64, 0i64, 0i64, Duration::ZERO);
    let (mut longest_batch, mut longest_at) = (Duration::ZERO, (String::new(), 0));
    let mut messages = Vec::new();
    let stop = dir.join("stop");
    let mut ready = false;
    while !stop.exists() {
        for (i, (kind, limiter, key)) in limiters.iter().enumerate() {
            let start = Instant::now();
            let answers = if kind == "gcra" {
                let (limiter, requests) = (limiter.clone(), vec![(key.as_bytes().to_vec(), 1); BATCH]);
                RedisStore::block_on(async move { limiter.check_many_async(requests).await })
            } else {
                vec![limiter.check(key, 1)]
            };
            let end = unix_micros();
            let took = start.elapsed();
            if kind == "gcra" {
                longest_batch = longest_batch.max(took);
            } else if took > longest {
                longest = took;
                longest_at = (kind.clone(), end);
            }
            for answer in answers {
                match answer {
                    Ok(d) if d.allowed => admissions[i].push(end),
                    // Redis refuses nothing here (the limit is far off): a
                    // refusal is the policy's.
                    Ok(_) => {
                        policy += 1;
                        last_policy = end;
                    }
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
    let killed: i64 = std::fs::read_to_string(dir.join("killed")).unwrap().parse().unwrap();
    let mut out = String::new();
    for ((kind, ..), times) in limiters.iter().zip(&admissions) {
        let last_second = times.iter().filter(|&&t| t <= killed && t > killed - 1_000_000).count();
        out += &format!("admitted-{kind} {}\nadmitted-last-second-{kind} {last_second}\n", times.len());
    }
    out += &format!(
        "errors {errors}\npolicy-decisions {policy}\nlongest-call-micros {}\nlongest-batch-micros {}\nback-micros {}\n",
        longest.as_micros(),
        longest_batch.as_micros(),
        last_policy - killed
    );
    out += &format!("longest-call {} {} µs after the kill\n", longest_at.0, longest_at.1 - killed);
    for message in messages {
        out += &format!("error {message}\n");
    }
    std::fs::write(dir.join(format!("child-{n}")), out).unwrap();
}
