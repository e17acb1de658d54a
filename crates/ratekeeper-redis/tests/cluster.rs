//! The shared limiters on a real three-master Redis Cluster: hash tags keep
//! a limiter's keys in one slot, and limiters on different slots work side
//! by side.

mod support;

use std::time::Duration;

use ratekeeper_redis::{RedisRateLimiter, RedisStore, StoreOptions};
use support::RedisCluster;

#[test]
fn limiters_work_across_the_cluster() {
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    // Enough names that they land on all three masters.
    let limiters: Vec<RedisRateLimiter> =
        (0..12).map(|i| RedisRateLimiter::builder(&format!("tenant-{i}"), 2.0).connect(&store).unwrap()).collect();
    for limiter in &limiters {
        assert_eq!(limiter.reserve(1).unwrap(), Duration::ZERO);
        let wait = limiter.reserve(1).unwrap();
        assert!(wait > Duration::from_millis(450) && wait <= Duration::from_millis(500), "{wait:?}");
        assert_eq!(limiter.rate().unwrap(), 2.0);
    }
    // The keys really are spread over more than one master.
    let mut masters_used = 0;
    for node in &cluster.nodes {
        let mut conn = node.connection();
        let keys: Vec<String> = redis::cmd("KEYS").arg("rk:*").query(&mut conn).unwrap();
        if !keys.is_empty() {
            masters_used += 1;
        }
    }
    assert!(masters_used >= 2, "all keys on one master");
}
