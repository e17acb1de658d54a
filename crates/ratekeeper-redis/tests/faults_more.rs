//! The Redis faults of the reliability issue, beyond those of `faults.rs`:
//! a flushed script cache, a network stall, a failover in the cluster, and
//! memory running out — each with the configured policy holding.

mod support;

use std::time::{Duration, Instant};

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};
use support::{RedisCluster, RedisServer};

/// Windows are aligned to multiples of their length: one of about 11.6 days
/// keeps a test's few seconds from straddling a boundary (which would start
/// a fresh count, as it should, and spoil a comparison of counts).
const GENEROUS: LimiterSpec = LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 1_000_000_000_000 };
const TIMEOUT: Duration = Duration::from_millis(100);

fn options() -> StoreOptions {
    StoreOptions { timeout: TIMEOUT, ..StoreOptions::default() }
}

/// Calls `check` until `deadline`, returning (admitted, refused, errors,
/// longest call).
fn hammer(limiter: &RedisLimiter, key: &str, deadline: Instant) -> (usize, usize, usize, Duration) {
    let (mut admitted, mut refused, mut errors, mut longest) = (0, 0, 0, Duration::ZERO);
    while Instant::now() < deadline {
        let start = Instant::now();
        match limiter.check(key, 1) {
            Ok(d) if d.allowed => admitted += 1,
            Ok(_) => refused += 1,
            Err(_) => errors += 1,
        }
        longest = longest.max(start.elapsed());
        std::thread::sleep(Duration::from_millis(2));
    }
    (admitted, refused, errors, longest)
}

#[test]
fn a_flushed_script_cache_is_reloaded() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), options()).unwrap();
    let limiter = RedisLimiter::new(&store, "flush", GENEROUS).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
    let mut conn = server.connection();
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut conn).unwrap();
    // NOSCRIPT, then the script is loaded again: no error reaches the caller.
    for _ in 0..10 {
        let d = limiter.check("k", 1).unwrap();
        assert!(d.allowed);
    }
    assert_eq!(limiter.peek("k", 0).unwrap().remaining, 1_000_000_000 - 11);
}

#[test]
fn a_stalled_server_costs_at_most_the_timeout() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), options()).unwrap();
    let limiter = RedisLimiter::new(&store, "stall", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    assert!(limiter.check("k", 1).unwrap().allowed);
    server.stall();
    let (admitted, refused, errors, longest) = hammer(&limiter, "k", Instant::now() + Duration::from_millis(600));
    server.resume();
    assert_eq!((admitted, errors), (0, 0), "fail-closed admits nothing and raises nothing while stalled");
    assert!(refused > 0);
    assert!(longest <= TIMEOUT + Duration::from_millis(150), "a call took {longest:?}");
    // Back within a second of the server answering again.
    let resumed = Instant::now();
    while !limiter.check("k", 1).unwrap().allowed {
        assert!(resumed.elapsed() < Duration::from_secs(1), "not back on Redis after a second");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn memory_running_out_is_unavailability() {
    let server = RedisServer::start_with(&["--maxmemory-policy", "noeviction"]);
    let store = RedisStore::connect(&server.url(), options()).unwrap();
    let closed = RedisLimiter::new(&store, "oom", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let erring = RedisLimiter::new(&store, "oom", GENEROUS).unwrap();
    assert!(closed.check("k", 1).unwrap().allowed);
    // Fill the memory with other data, in small pieces, until Redis refuses
    // writes (the write that crosses maxmemory is still accepted; then
    // every write is refused).
    let mut conn = server.connection();
    let blob = "x".repeat(1024);
    for i in 0..2_000 {
        let _: () = redis::cmd("SET").arg(format!("filler-{i}")).arg(&blob).query(&mut conn).unwrap();
    }
    // Then lower the limit well below what is used: every write is refused
    // (memory hovering at the limit would make that a matter of chance).
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("512kb").query(&mut conn).unwrap();
    // The limiter cannot keep state: its policy decides; no panic.
    let r = erring.check("other", 1);
    assert!(matches!(&r, Err(e) if e.is_unavailability()), "{r:?}");
    std::thread::sleep(Duration::from_millis(250)); // past the retry interval
    let d = closed.check("another", 1).unwrap();
    assert!(!d.allowed, "fail-closed must refuse when Redis is out of memory");
    // Memory freed: back to Redis.
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("0").query(&mut conn).unwrap();
    std::thread::sleep(Duration::from_millis(250));
    assert!(closed.check("k", 1).unwrap().allowed);
}

#[test]
fn eviction_under_maxmemory_forgets_state_but_never_breaks() {
    // allkeys-lru may evict a limiter's key: its state is lost (the key
    // comes back whole — an over-admission SECURITY.md warns about), but
    // every decision is still made, by Redis, without an error.
    let server = RedisServer::start_with(&["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"]);
    let store = RedisStore::connect(&server.url(), options()).unwrap();
    let limiter =
        RedisLimiter::new(&store, "evicted", LimiterSpec::FixedWindow { limit: 3, window_micros: 60_000_000 })
            .unwrap()
            .remember_refusals(false);
    for _ in 0..3 {
        assert!(limiter.check("k", 1).unwrap().allowed);
    }
    assert!(!limiter.check("k", 1).unwrap().allowed);
    let mut conn = server.connection();
    let blob = "x".repeat(64 * 1024);
    for i in 0..200 {
        let _: () = redis::cmd("SET").arg(format!("filler-{i}")).arg(&blob).query(&mut conn).unwrap();
    }
    let exists: bool = redis::cmd("EXISTS").arg("rk:{evicted:k}:fixed_window").query(&mut conn).unwrap();
    let d = limiter.check("k", 1).unwrap();
    assert_eq!(d.allowed, !exists, "an evicted key starts whole; a kept one is still spent");
}

#[test]
fn a_failover_in_the_cluster_returns_to_redis() {
    let mut cluster = RedisCluster::start_with_replicas(1);
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, options()).unwrap();
    let limiter =
        RedisLimiter::new(&store, "failover", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let key = "rk:{failover:k}:fixed_window";
    assert!(limiter.check("k", 1).unwrap().allowed);
    let master = cluster.master_of(key);
    // Replication is asynchronous: wait for the replica to have the count,
    // so the test shows what survives a failover rather than racing it.
    cluster.wait_replicated(master, Duration::from_secs(5));
    cluster.nodes[master].kill();
    let killed = Instant::now();
    // While the replica takes over (the node timeout is 2 s), decisions are
    // the policy's (fail closed: refusals, never errors, never a call much
    // longer than the timeout); then Redis's again, once the client has
    // learned the new topology.
    let mut back = None;
    let mut longest = Duration::ZERO;
    while killed.elapsed() < Duration::from_secs(20) {
        let start = Instant::now();
        let decision = limiter.check("k", 1);
        longest = longest.max(start.elapsed());
        match decision {
            Ok(d) if d.allowed => {
                back = Some(killed.elapsed());
                break;
            }
            Ok(_) => {}
            Err(e) => panic!("the policy must decide during a failover, got {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let back = back.expect("decisions never came back to Redis after the failover");
    println!("failover: back on Redis {back:?} after the master died; longest call {longest:?}");
    assert!(longest <= TIMEOUT + Duration::from_millis(400), "a call took {longest:?}");
    assert_ne!(cluster.master_of(key), master, "a replica should now be the master");
    // The promoted replica kept the window's count: the key was replicated.
    // A cost of 0 is always allowed by Redis, so a refusal here is the
    // policy's: the client can still meet the old topology once more (a
    // pooled connection to the dead node) and mark the store down for one
    // retry interval. Ask until Redis answers, within 5 s.
    let asked = Instant::now();
    let state = loop {
        let d = limiter.check("k", 0).unwrap();
        if d.allowed || asked.elapsed() > Duration::from_secs(5) {
            break d;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(state.remaining, 1_000_000_000 - 2, "the replica lost the window's count: {state:?}");
}
