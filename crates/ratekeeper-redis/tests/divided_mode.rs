//! Divided mode, and the local-share fallback: each node enforces `limit ÷
//! live nodes` on its own, from the count its heartbeats read.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{Membership, RedisDividedLimiter, RedisLimiter, RedisStore, StoreOptions};
use support::RedisServer;

/// 30 per minute, 30 at once: a node's share of 30 is 30 ÷ nodes.
const SPEC: LimiterSpec = LimiterSpec::Gcra { max_burst: 29, count_per_period: 30, period_micros: 60_000_000 };

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

fn admitted(limiter: &RedisDividedLimiter, key: &str) -> usize {
    (0..100).take_while(|_| limiter.check(key, 1).unwrap().allowed).count()
}

#[test]
fn each_node_enforces_its_share() {
    let server = RedisServer::start();
    let stores: Vec<RedisStore> = (0..3).map(|_| store(&server)).collect();
    let ttl = Duration::from_millis(300);
    let nodes: Vec<RedisDividedLimiter> =
        stores.iter().map(|s| RedisDividedLimiter::new(s, "divided", SPEC, ttl, 1_000).unwrap()).collect();
    for node in &nodes {
        node.membership().refresh().unwrap();
    }
    assert!(nodes.iter().all(|n| n.nodes() == 3));
    // Each node admits its third of the burst; together, the whole of it.
    let total: usize = nodes.iter().map(|n| admitted(n, "user")).sum();
    assert_eq!(total, 30);
    // One node leaves: the two left get half each, from whole shares.
    let mut nodes = nodes;
    drop(nodes.pop());
    std::thread::sleep(Duration::from_millis(50));
    for node in &nodes {
        node.membership().refresh().unwrap();
    }
    assert_eq!(admitted(&nodes[0], "other"), 15);
}

#[test]
fn exact_mode_falls_back_to_its_share_while_redis_is_away() {
    let mut server = RedisServer::start();
    let s = store(&server);
    let other = store(&server);
    let ttl = Duration::from_secs(30);
    let me = Arc::new(Membership::join(&s, "api", ttl).unwrap());
    let _peer = Membership::join(&other, "api", ttl).unwrap();
    me.refresh().unwrap();
    let limiter = RedisLimiter::new(&s, "api", SPEC).unwrap().fall_back_to_local(Arc::clone(&me), 1_000).unwrap();
    // On Redis: the whole limit.
    let on_redis = (0..100).take_while(|_| limiter.check("k", 1).unwrap().allowed).count();
    assert_eq!(on_redis, 30);
    server.kill();
    // Away: this node's half of the limit, for a key Redis had refused too.
    let away = (0..100).take_while(|_| limiter.check("k2", 1).unwrap().allowed).count();
    assert_eq!(away, 15);
    server.restart();
    std::thread::sleep(Duration::from_millis(400));
    // Back on Redis (which restarted empty): the whole limit again.
    let back = (0..100).take_while(|_| limiter.check("k3", 1).unwrap().allowed).count();
    assert_eq!(back, 30);
}
