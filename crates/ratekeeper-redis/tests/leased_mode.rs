//! Leased mode: nodes take batches of units from the shared limiter and
//! spend them locally. Nothing is admitted that the shared limiter did not
//! grant; in any interval of length T the nodes admit at most
//! rate × (T + lease) + burst.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ratekeeper::{LimiterSpec, ManualClock};
use ratekeeper_redis::{Error, RedisLeasedLimiter, RedisStore, StoreOptions};
use support::RedisServer;

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

#[test]
fn a_lease_is_spent_locally_then_expires() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    // 10 per second, limit 10; batches of 4, spendable for 100 ms.
    let spec = LimiterSpec::Gcra { max_burst: 9, count_per_period: 10, period_micros: 1_000_000 };
    let node =
        RedisLeasedLimiter::with_test_clock(&s, "lease", spec, 4, Duration::from_millis(100), Arc::clone(&clock))
            .unwrap();
    let other =
        RedisLeasedLimiter::with_test_clock(&s, "lease", spec, 4, Duration::from_millis(100), Arc::clone(&clock))
            .unwrap();
    // Loads the script (a first EVALSHA fails with NOSCRIPT, then succeeds).
    node.check("warm-up", 0).unwrap();
    let before = server.evalsha_calls();
    let remaining: Vec<u64> = (0..4).map(|_| node.check("k", 1).unwrap().remaining).collect();
    assert_eq!(remaining, [3, 2, 1, 0]);
    assert_eq!(server.evalsha_calls() - before, 1, "one round trip for four decisions");
    // The other node leases from what is left: 6 units, in batches of 4.
    assert!(other.check("k", 4).unwrap().allowed);
    assert!(other.check("k", 2).unwrap().allowed);
    let refused = other.check("k", 1).unwrap();
    assert!(!refused.allowed, "the shared limiter is spent");
    assert_eq!(refused.retry_after_micros, 100_000);
    // A lease not spent within 100 ms is lost.
    assert!(node.check("k", 0).unwrap().allowed);
    clock.advance(Duration::from_millis(200));
    let fresh = node.check("k", 1).unwrap();
    assert!(fresh.allowed);
    assert_eq!(fresh.remaining, 1, "two units refilled in 200 ms; one spent, one leased");
}

#[test]
fn bad_parameters_are_typed_errors() {
    let server = RedisServer::start();
    let s = store(&server);
    let gcra = LimiterSpec::Gcra { max_burst: 9, count_per_period: 10, period_micros: 1_000_000 };
    let lease = Duration::from_millis(100);
    assert!(matches!(RedisLeasedLimiter::new(&s, "x", gcra, 0, lease), Err(Error::Invalid(_))));
    assert!(matches!(RedisLeasedLimiter::new(&s, "x", gcra, 11, lease), Err(Error::Invalid(_))));
    assert!(matches!(RedisLeasedLimiter::new(&s, "x", gcra, 5, Duration::ZERO), Err(Error::Invalid(_))));
    let window = LimiterSpec::FixedWindow { limit: 10, window_micros: 1_000_000 };
    assert!(matches!(RedisLeasedLimiter::new(&s, "x", window, 5, lease), Err(Error::Unsupported(_))));
}

#[test]
fn nodes_hammering_one_key_stay_within_the_stated_bound() {
    const RATE: u64 = 1_000;
    const LIMIT: u64 = 100;
    const LEASE: Duration = Duration::from_millis(100);
    const RUN: Duration = Duration::from_secs(3);
    let server = RedisServer::start();
    let spec = LimiterSpec::Gcra { max_burst: LIMIT - 1, count_per_period: RATE, period_micros: 1_000_000 };
    let stores: Vec<RedisStore> = (0..4).map(|_| store(&server)).collect();
    let nodes: Vec<RedisLeasedLimiter> =
        stores.iter().map(|s| RedisLeasedLimiter::new(s, "hammer", spec, 25, LEASE).unwrap()).collect();
    let admissions = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for node in &nodes {
            for _ in 0..2 {
                let admissions = &admissions;
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    while start.elapsed() < RUN {
                        if node.check("k", 1).unwrap().allowed {
                            mine.push(start.elapsed());
                        }
                    }
                    admissions.lock().unwrap().extend(mine);
                });
            }
        }
    });
    let mut at = admissions.into_inner().unwrap();
    at.sort();
    let total = at.len() as u64;
    // Everything admitted came from the shared limiter (plus the run's
    // slack: the last round trips end after RUN).
    let elapsed = at.last().copied().unwrap_or_default().as_secs_f64();
    assert!(total as f64 <= RATE as f64 * elapsed + LIMIT as f64 + 1.0, "{total} admitted in {elapsed} s");
    // The leases stretch the shared bound by at most their lifetime.
    let window = Duration::from_secs(1);
    let bound = RATE as f64 * (window + LEASE).as_secs_f64() + LIMIT as f64;
    let mut most = 0;
    let mut first = 0;
    for (last, t) in at.iter().enumerate() {
        while *t - at[first] >= window {
            first += 1;
        }
        most = most.max(last + 1 - first);
    }
    assert!(most as f64 <= bound, "{most} admitted in one second, bound {bound}");
    // And little is lost: the nodes admit close to the rate.
    assert!(total as f64 >= 0.85 * RATE as f64 * RUN.as_secs_f64(), "only {total} admitted");
    println!("leased: {total} admitted in {elapsed:.3} s; at most {most} in any second (bound {bound})");
}
