//! Nodes joining, leaving and going silent: the live count every node reads.

mod support;

use std::time::Duration;

use ratekeeper_redis::{Membership, RedisStore, StoreOptions};
use support::RedisServer;

#[test]
fn nodes_count_each_other_and_drop_out() {
    let server = RedisServer::start();
    let stores: Vec<RedisStore> =
        (0..3).map(|_| RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()).collect();
    let ttl = Duration::from_millis(300);
    let a = Membership::join(&stores[0], "api", ttl).unwrap();
    let b = Membership::join(&stores[1], "api", ttl).unwrap();
    let c = Membership::join(&stores[2], "api", ttl).unwrap();
    assert_eq!(a.refresh().unwrap(), 3);
    assert_ne!(a.node_id(), b.node_id());
    // Another group is counted apart.
    let other = Membership::join(&stores[0], "other", ttl).unwrap();
    assert_eq!(other.nodes(), 1);
    // A node that leaves is gone at once.
    drop(c);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(a.refresh().unwrap(), 2);
    // A node that went silent drops out after its TTL.
    let mut conn = server.connection();
    let _: () = redis::cmd("ZADD").arg("rk:{api}:nodes").arg(1).arg("a-silent-node").query(&mut conn).unwrap();
    assert_eq!(b.refresh().unwrap(), 2, "a heartbeat whose time has passed does not count");
    // The background heartbeats keep the live ones in (3 TTLs later).
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(a.nodes(), 2);
    assert_eq!(b.nodes(), 2);
}
