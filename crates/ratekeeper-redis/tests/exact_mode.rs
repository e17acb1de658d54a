//! Exact mode on the server's own clock: keys expire exactly when their
//! state is whole, remembered refusals save round trips without changing a
//! decision, and the cluster spreads one limiter's keys.

mod support;

use std::time::{Duration, Instant};

use ratekeeper::{Admission, AnyCore, LimiterSpec};
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions};
use support::{RedisCluster, RedisServer};

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

fn key_exists(server: &RedisServer, pattern: &str) -> bool {
    let mut conn = server.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut conn).unwrap();
    !keys.is_empty()
}

#[test]
fn keys_expire_once_whole_and_nothing_changes() {
    let server = RedisServer::start();
    let s = store(&server);
    let specs = [
        ("gcra", LimiterSpec::Gcra { max_burst: 1, count_per_period: 10, period_micros: 1_000_000 }),
        ("token_bucket", LimiterSpec::TokenBucket { rate: 10.0, burst: 2 }),
        ("fixed_window", LimiterSpec::FixedWindow { limit: 2, window_micros: 200_000 }),
        ("sliding_window_counter", LimiterSpec::SlidingWindowCounter { limit: 2, window_micros: 100_000 }),
        ("sliding_log", LimiterSpec::SlidingLog { limit: 2, window_micros: 200_000 }),
    ];
    for (name, spec) in specs {
        let limiter = RedisLimiter::new(&s, name, spec).unwrap().remember_refusals(false);
        assert!(limiter.check("user", 2).unwrap().allowed, "{name}");
        assert!(!limiter.check("user", 1).unwrap().allowed, "{name}");
        assert!(key_exists(&server, &format!("rk:{{{name}:user}}:*")), "{name}");
        // Every state above is whole within 400 ms (two windows at most);
        // GCRA keeps its keys at least a second (see its script).
        std::thread::sleep(Duration::from_millis(if name == "gcra" { 1_050 } else { 450 }));
        assert!(!key_exists(&server, &format!("rk:{{{name}:user}}:*")), "{name}: the key outlived its state");
        // A fresh limiter would admit the whole limit again: so does this one.
        let whole = AnyCore::new(&spec).unwrap().peek(2, 0);
        let decision = limiter.check("user", 2).unwrap();
        assert!(decision.allowed, "{name}");
        assert_eq!(decision.remaining, whole.remaining, "{name}");
    }
}

#[test]
fn remembered_refusals_skip_round_trips_until_their_retry_after() {
    let server = RedisServer::start();
    let s = store(&server);
    // One unit per 200 ms, no burst.
    let spec = LimiterSpec::Gcra { max_burst: 0, count_per_period: 5, period_micros: 1_000_000 };
    let cached = RedisLimiter::new(&s, "cached", spec).unwrap();
    let reference = RedisLimiter::new(&s, "reference", spec).unwrap().remember_refusals(false);
    assert!(cached.check("k", 1).unwrap().allowed);
    assert!(reference.check("k", 1).unwrap().allowed);
    let first = cached.check("k", 1).unwrap();
    assert!(!first.allowed);
    // What a binding answers at once, before sending the rest of a batch.
    let remembered = cached.remembered_refusal("k", 1).expect("a remembered refusal");
    assert!(!remembered.allowed && remembered.retry_after_micros <= first.retry_after_micros);
    assert!(cached.remembered_refusal("k", 0).is_none());
    assert!(cached.remembered_refusal("other", 1).is_none());
    assert!(reference.remembered_refusal("k", 1).is_none());
    let before = server.evalsha_calls();
    let start = Instant::now();
    let mut local = 0;
    while start.elapsed() < Duration::from_millis(100) {
        let d = cached.check("k", 1).unwrap();
        // Never a different decision than the server's own.
        assert_eq!(d.allowed, reference.peek("k", 1).unwrap().allowed);
        assert!(!d.allowed);
        assert!(d.retry_after_micros > 0 && d.retry_after_micros <= first.retry_after_micros);
        local += 1;
    }
    let server_calls = server.evalsha_calls() - before;
    // Only the reference's peeks reached the server.
    assert_eq!(server_calls, local, "refusals served locally still reached Redis");
    // A cost above the limit is refused for ever, as the server says,
    // not with the remembered refusal's retry-after.
    assert_eq!(cached.check("k", 2).unwrap().retry_after_micros, ratekeeper::NEVER);
    // A smaller request is not covered by the remembered refusal.
    assert!(cached.check("k", 0).unwrap().allowed);
    // Once the retry-after has passed, the request is admitted again.
    std::thread::sleep(Duration::from_millis(150));
    assert!(cached.remembered_refusal("k", 1).is_none());
    assert!(cached.check("k", 1).unwrap().allowed);
}

#[test]
fn unsupported_algorithms_and_bad_parameters_are_typed_errors() {
    let server = RedisServer::start();
    let s = store(&server);
    let queue = LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: 1, slack: 0 };
    assert!(matches!(RedisLimiter::new(&s, "q", queue), Err(Error::Unsupported(_))));
    let bad = LimiterSpec::FixedWindow { limit: 0, window_micros: 1 };
    assert!(matches!(RedisLimiter::new(&s, "w", bad), Err(Error::Invalid(_))));
}

#[test]
fn a_limiters_keys_spread_over_the_cluster() {
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    let spec = LimiterSpec::SlidingLog { limit: 3, window_micros: 10_000_000 };
    let limiter = RedisLimiter::new(&store, "api", spec).unwrap();
    for user in 0..30 {
        let key = format!("user-{user}");
        for i in 0..3 {
            assert_eq!(limiter.check(&key, 1).unwrap().remaining, 2 - i);
        }
        assert!(!limiter.check(&key, 1).unwrap().allowed);
    }
    let masters_used = cluster
        .nodes
        .iter()
        .filter(|node| {
            let mut conn = node.connection();
            let keys: Vec<String> = redis::cmd("KEYS").arg("rk:{api:*").query(&mut conn).unwrap();
            !keys.is_empty()
        })
        .count();
    assert_eq!(masters_used, 3, "one limiter's keys should spread over every master");
}

#[test]
fn a_gcra_key_holding_something_else_is_an_error_not_a_guess() {
    let server = RedisServer::start();
    let s = store(&server);
    let spec = LimiterSpec::Gcra { max_burst: 1, count_per_period: 10, period_micros: 1_000_000 };
    let limiter = RedisLimiter::new(&s, "foreign", spec).unwrap().remember_refusals(false);
    assert!(limiter.check("user", 1).unwrap().allowed);
    let mut conn = server.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg("rk:{foreign:user}:*").query(&mut conn).unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    // The state is 24 bytes; a value of another length (here the text an
    // older script wrote) is refused as not the script's own.
    let state: Vec<u8> = redis::cmd("GET").arg(&keys[0]).query(&mut conn).unwrap();
    assert_eq!(state.len(), 24);
    let () = redis::cmd("SET").arg(&keys[0]).arg("1700000000 123456 7").query(&mut conn).unwrap();
    let error = limiter.check("user", 1).unwrap_err();
    assert!(!error.is_unavailability(), "{error:?}");
    assert!(error.to_string().contains("does not hold a GCRA state"), "{error}");
    // Other keys of the limiter are unaffected.
    assert!(limiter.check("other", 1).unwrap().allowed);
}

#[test]
fn a_gcra_state_of_the_version_before_is_read_and_rewritten_with_its_expiry() {
    let server = RedisServer::start();
    let s = store(&server);
    // 10/s with a burst of 2: one unit leaves 100 ms of the 200 ms room.
    let spec = LimiterSpec::Gcra { max_burst: 1, count_per_period: 10, period_micros: 1_000_000 };
    let limiter = RedisLimiter::new(&s, "upgrade", spec).unwrap().remember_refusals(false);
    assert!(limiter.check("k", 1).unwrap().allowed);
    let mut conn = server.connection();
    let key = "rk:{upgrade:k}:gcra";
    let state: Vec<u8> = redis::cmd("GET").arg(key).query(&mut conn).unwrap();
    // The version before kept the time written and the offset only (16
    // bytes), as a rolling upgrade leaves them.
    let () = redis::cmd("SET").arg(key).arg(&state[..16]).arg("PX").arg(1_000).query(&mut conn).unwrap();
    let refused = limiter.check("k", 2).unwrap();
    assert!(!refused.allowed, "the lead it holds counts: {refused:?}");
    assert!(limiter.check("k", 1).unwrap().allowed);
    let state: Vec<u8> = redis::cmd("GET").arg(key).query(&mut conn).unwrap();
    assert_eq!(state.len(), 24, "written back in this version's form");
    let pttl: i64 = redis::cmd("PTTL").arg(key).query(&mut conn).unwrap();
    assert!(pttl > 900, "its expiry set anew: {pttl} ms");
}

#[test]
fn a_gcra_keys_expiry_moves_only_when_its_state_outgrows_it() {
    let server = RedisServer::start();
    let s = store(&server);
    // 10/s with a burst of 100: each unit pushes the TAT 100 ms ahead.
    let spec = LimiterSpec::Gcra { max_burst: 99, count_per_period: 10, period_micros: 1_000_000 };
    let limiter = RedisLimiter::new(&s, "expiry", spec).unwrap();
    let mut conn = server.connection();
    let pttl =
        |conn: &mut redis::Connection| -> i64 { redis::cmd("PTTL").arg("rk:{expiry:k}:gcra").query(conn).unwrap() };
    // Set when the key is made: twice the lead (500 ms), and at least a
    // second.
    assert!(limiter.check("k", 5).unwrap().allowed);
    let made = pttl(&mut conn);
    assert!((900..=1001).contains(&made), "{made} ms");
    // A lead of 700 ms is still covered: kept.
    assert!(limiter.check("k", 2).unwrap().allowed);
    let kept = pttl(&mut conn);
    assert!(kept <= made && kept > 800, "{kept} ms after {made}");
    // A lead of 1,200 ms is not: moved to twice that.
    assert!(limiter.check("k", 5).unwrap().allowed);
    let moved = pttl(&mut conn);
    assert!((2_200..=2_401).contains(&moved), "{moved} ms");
}
