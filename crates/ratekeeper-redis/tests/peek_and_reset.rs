//! Peek (inspect) and remove (reset) on every Redis limiter: a peek answers
//! what the next check would, takes nothing and writes nothing; a remove or
//! reset deletes every key of the state and gives the whole limit back.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{LimiterSpec, ManualClock};
use ratekeeper_redis::{
    RedisConcurrencyLimiter, RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter, RedisRateLimiter, RedisStore,
    StoreOptions,
};
use support::{RedisCluster, RedisServer};

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

const SPECS: [(&str, LimiterSpec); 5] = [
    ("gcra", LimiterSpec::Gcra { max_burst: 2, count_per_period: 3, period_micros: 1_000_000 }),
    ("token_bucket", LimiterSpec::TokenBucket { rate: 3.0, burst: 3 }),
    ("fixed_window", LimiterSpec::FixedWindow { limit: 3, window_micros: 1_000_000 }),
    ("sliding_window_counter", LimiterSpec::SlidingWindowCounter { limit: 3, window_micros: 1_000_000 }),
    ("sliding_log", LimiterSpec::SlidingLog { limit: 3, window_micros: 1_000_000 }),
];

/// Every key on the server with its value (`DUMP`) and whether it expires
/// later than `PTTL` said before: a snapshot that any write changes.
fn snapshot(server: &RedisServer) -> BTreeMap<String, (Vec<u8>, i64)> {
    let mut conn = server.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    keys.into_iter()
        .map(|k| {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(&mut conn).unwrap();
            let pttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut conn).unwrap();
            (k, (dump, pttl))
        })
        .collect()
}

/// No write between two snapshots: the same keys and values, and no expiry
/// pushed later (a write's would be an hour later on the test clock).
fn assert_unchanged(before: &BTreeMap<String, (Vec<u8>, i64)>, after: &BTreeMap<String, (Vec<u8>, i64)>, what: &str) {
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>(), "{what}: keys changed");
    for (key, (dump, pttl)) in before {
        let (dump_after, pttl_after) = &after[key];
        assert_eq!(dump, dump_after, "{what}: {key} was written");
        assert!(pttl_after <= pttl, "{what}: {key}'s expiry was pushed from {pttl} to {pttl_after} ms");
    }
}

fn key_count(server: &RedisServer) -> usize {
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut server.connection()).unwrap();
    keys.len()
}

#[test]
fn exact_peek_answers_the_next_check_and_writes_nothing() {
    let server = RedisServer::start();
    let s = store(&server);
    for (name, spec) in SPECS {
        let clock = Arc::new(ManualClock::new());
        let limiter =
            RedisLimiter::with_test_clock(&s, name, spec, Arc::clone(&clock)).unwrap().remember_refusals(false);
        // A peek at a key never seen creates nothing.
        for _ in 0..5 {
            assert!(limiter.peek("k", 1).unwrap().allowed, "{name}");
        }
        assert_eq!(key_count(&server), 0, "{name}: a peek created a key");
        // Peeking many times takes nothing: the full limit is still there.
        for k in 0..5 {
            clock.advance(Duration::from_millis(1));
            let before = snapshot(&server);
            let peeked = limiter.peek("k", 1).unwrap();
            for _ in 0..10 {
                assert_eq!(limiter.peek("k", 1).unwrap(), peeked, "{name}");
            }
            assert_unchanged(&before, &snapshot(&server), name);
            // …and the check that follows answers what the peek said.
            let checked = limiter.check("k", 1).unwrap();
            assert_eq!(peeked, checked, "{name}: check {}", k + 1);
            assert_eq!(checked.allowed, k < 3, "{name}: check {}", k + 1);
        }
        // A cost above what is left, and above the limit.
        assert_eq!(limiter.peek("k", 4).unwrap(), limiter.check("k", 4).unwrap(), "{name}");
        limiter.remove("k").unwrap();
    }
}

#[test]
fn exact_remove_restores_the_whole_limit() {
    let server = RedisServer::start();
    let s = store(&server);
    for (name, spec) in SPECS {
        // Remembered refusals on (the default): the reset must drop this
        // client's too.
        let limiter = RedisLimiter::new(&s, name, spec).unwrap();
        assert!(!limiter.remove("never-seen").unwrap(), "{name}: an unknown key");
        for _ in 0..3 {
            assert!(limiter.check("k", 1).unwrap().allowed, "{name}");
        }
        assert!(!limiter.check("k", 1).unwrap().allowed, "{name}");
        assert!(!limiter.check("k", 1).unwrap().allowed, "{name}: remembered");
        assert!(limiter.remove("k").unwrap(), "{name}: the key held a state");
        assert_eq!(key_count(&server), 0, "{name}: every key of the state is deleted");
        for i in 0..3 {
            assert!(limiter.check("k", 1).unwrap().allowed, "{name}: check {} after the reset", i + 1);
        }
        assert!(!limiter.check("k", 1).unwrap().allowed, "{name}");
        // The async form too.
        assert!(RedisStore::block_on({
            let limiter = limiter.clone();
            async move { limiter.remove_async("k").await.unwrap() }
        }));
        let (tx, rx) = std::sync::mpsc::channel();
        limiter.remove_with("k", move |r| tx.send(r.unwrap()).unwrap());
        assert!(!rx.recv().unwrap(), "{name}: removed already");
        assert!(limiter.remove(vec![b'x'; 257]).is_err(), "{name}: a key too long");
    }
}

#[test]
fn leased_peek_counts_the_nodes_lease_and_remove_drops_it() {
    let server = RedisServer::start();
    let s = store(&server);
    for (name, spec) in &SPECS[..2] {
        let clock = Arc::new(ManualClock::new());
        let limiter =
            RedisLeasedLimiter::with_test_clock(&s, name, *spec, 2, Duration::from_secs(10), Arc::clone(&clock))
                .unwrap();
        assert!(limiter.peek("k", 1).unwrap().allowed, "{name}");
        assert_eq!(key_count(&server), 0, "{name}: a peek created a key");
        for k in 0..5 {
            let before = snapshot(&server);
            let peeked = limiter.peek("k", 1).unwrap();
            assert_eq!(limiter.peek("k", 1).unwrap(), peeked, "{name}");
            assert_unchanged(&before, &snapshot(&server), name);
            let checked = limiter.check("k", 1).unwrap();
            assert_eq!(peeked, checked, "{name}: check {}", k + 1);
            assert_eq!(checked.allowed, k < 3, "{name}: check {}", k + 1);
        }
        // Reset: the shared state and this node's lease both go.
        assert!(limiter.remove("k").unwrap(), "{name}");
        assert!(!limiter.remove("k").unwrap(), "{name}");
        assert!(limiter.check("k", 1).unwrap().allowed, "{name}");
        // It holds a lease of 1 more now; a remove drops it with the state.
        assert!(limiter.remove("k").unwrap(), "{name}");
        let admitted = (0..6).filter(|_| limiter.check("k", 1).unwrap().allowed).count();
        assert_eq!(admitted, 3, "{name}: the whole limit, and no unit of the dropped lease");
        limiter.remove("k").unwrap();
    }
}

#[test]
fn divided_peek_and_remove_work_on_the_local_share() {
    let server = RedisServer::start();
    let s = store(&server);
    let spec = LimiterSpec::FixedWindow { limit: 3, window_micros: 60_000_000 };
    let limiter = RedisDividedLimiter::new(&s, "divided", spec, Duration::from_secs(5), 100).unwrap();
    let keys_before = key_count(&server);
    for k in 0..5 {
        let peeked = limiter.peek("k", 1).unwrap();
        for _ in 0..5 {
            limiter.peek("k", 1).unwrap();
        }
        let checked = limiter.check("k", 1).unwrap();
        assert_eq!(peeked.allowed, checked.allowed, "check {}", k + 1);
        assert_eq!(peeked.remaining, checked.remaining, "check {}", k + 1);
        assert_eq!(checked.allowed, k < 3, "check {}", k + 1);
    }
    assert_eq!(key_count(&server), keys_before, "no per-key state in Redis");
    assert!(limiter.remove("k").unwrap());
    assert!(!limiter.remove("k").unwrap());
    assert_eq!((0..5).filter(|_| limiter.check("k", 1).unwrap().allowed).count(), 3);
}

#[test]
fn guava_inspect_reads_and_reset_starts_afresh() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let limiter = RedisRateLimiter::builder("guava", 2.0).test_clock(Arc::clone(&clock)).connect(&s).unwrap();
    let fresh = limiter.inspect().unwrap();
    assert_eq!((fresh.rate, fresh.stored_permits, fresh.max_permits), (2.0, 0.0, 2.0));
    assert_eq!(fresh.time_until_available, Duration::ZERO);
    assert_eq!(limiter.reserve(1).unwrap(), Duration::ZERO);
    // The next permit is free 500 ms from now; inspecting many times takes
    // nothing and writes nothing.
    let before = snapshot(&server);
    for _ in 0..10 {
        assert_eq!(limiter.inspect().unwrap().time_until_available, Duration::from_millis(500));
    }
    assert_unchanged(&before, &snapshot(&server), "inspect");
    assert_eq!(limiter.reserve(1).unwrap(), Duration::from_millis(500));
    // Stored permits accumulate while idle (resynced to now, not stored).
    clock.advance(Duration::from_secs(3));
    let idle = limiter.inspect().unwrap();
    assert_eq!(idle.stored_permits, 2.0);
    // Reset: a new limiter (no stored permits); inspect on the missing hash
    // writes nothing either.
    assert!(limiter.reset().unwrap());
    assert!(!limiter.reset().unwrap());
    assert_eq!(limiter.inspect().unwrap(), fresh);
    assert_eq!(key_count(&server), 0, "inspect created the hash");
    assert_eq!(limiter.reserve(1).unwrap(), Duration::ZERO);
    assert_eq!(limiter.reserve(1).unwrap(), Duration::from_millis(500));
}

#[test]
fn concurrency_peek_answers_the_next_acquire_and_reset_frees_every_permit() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let limiter =
        RedisConcurrencyLimiter::with_test_clock(&s, "pool", 3, Duration::from_secs(10), Arc::clone(&clock)).unwrap();
    assert!(limiter.peek(3).unwrap().allowed);
    assert_eq!(key_count(&server), 0, "a peek created a key");
    let mut leases = Vec::new();
    for k in 0..5 {
        clock.advance(Duration::from_millis(100));
        let before = snapshot(&server);
        let peeked = limiter.peek(1).unwrap();
        assert_eq!(limiter.peek(1).unwrap(), peeked);
        assert_unchanged(&before, &snapshot(&server), "peek");
        let (acquired, lease) = limiter.try_acquire(1).unwrap();
        assert_eq!(peeked, acquired, "acquire {}", k + 1);
        assert_eq!(acquired.allowed, k < 3);
        leases.extend(lease);
    }
    assert_eq!(limiter.peek(4).unwrap(), limiter.try_acquire(4).unwrap().0, "more than the limit");
    // A lease whose expiry has come counts for nothing, and is not
    // reclaimed: now 10.15 s, the first lease expired at 10.1 s, the
    // second expires at 10.2 s.
    clock.advance(Duration::from_millis(9_650));
    let before = snapshot(&server);
    let refused = limiter.peek(2).unwrap();
    assert!(!refused.allowed && refused.retry_after_micros == 50_000, "{refused:?}");
    let admitted = limiter.peek(1).unwrap();
    assert!(admitted.allowed && admitted.remaining == 0, "{admitted:?}");
    assert_unchanged(&before, &snapshot(&server), "peek past an expiry");
    assert_eq!(limiter.try_acquire(2).unwrap().0, refused);
    assert_eq!(limiter.try_acquire(1).unwrap().0, admitted);
    // Reset: every lease gone, the whole limit free; old leases unknown.
    assert!(limiter.reset().unwrap());
    assert_eq!(key_count(&server), 0);
    assert_eq!(limiter.held().unwrap(), 0);
    assert!(!limiter.release(&leases[2]).unwrap());
    assert!(limiter.try_acquire(3).unwrap().0.allowed);
    assert!(limiter.reset().unwrap());
    assert!(!limiter.reset().unwrap(), "nothing left to reset");
}

#[test]
fn peek_and_remove_on_a_cluster() {
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let s = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    for (name, spec) in SPECS {
        let limiter = RedisLimiter::new(&s, name, spec).unwrap().remember_refusals(false);
        // Keys spread over the masters; the sliding log's two keys share a
        // slot, so its reset is one script.
        for key in ["a", "b", "c", "d"] {
            assert!(!limiter.remove(key).unwrap(), "{name}");
            for _ in 0..3 {
                assert!(limiter.check(key, 1).unwrap().allowed, "{name}");
            }
            let refused = limiter.peek(key, 1).unwrap();
            assert!(!refused.allowed, "{name}");
            assert!(limiter.remove(key).unwrap(), "{name}");
            assert!(limiter.peek(key, 3).unwrap().allowed, "{name}");
        }
    }
    let guava = RedisRateLimiter::builder("guava", 1.0).connect(&s).unwrap();
    assert!(guava.reset().unwrap());
    let pool = RedisConcurrencyLimiter::new(&s, "pool", 2, Duration::from_secs(10)).unwrap();
    let _held = pool.try_acquire(2).unwrap();
    assert!(!pool.peek(1).unwrap().allowed);
    assert!(pool.reset().unwrap());
    assert!(pool.peek(2).unwrap().allowed);
}
