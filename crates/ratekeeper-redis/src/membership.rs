//! [`Membership`]: how many nodes share a limit right now.
//!
//! The design's divided mode has every node enforce `limit ÷ live nodes`
//! locally; the unavailability fallback does the same with the last count
//! it knew. Each node joins a *group* and heartbeats into a Redis sorted
//! set (`rk:{group}:nodes`), every third of its heartbeat TTL; a node that
//! stops (crashed, partitioned) drops out once its TTL has passed, and one
//! that is dropped leaves at once. Every node re-reads the count with each
//! heartbeat; while Redis is unreachable it keeps the last count it read.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::error::Error;
use crate::keys;
use crate::options::RedisOption;
use crate::scripts::{self, TimeSource};
use crate::store::RedisStore;

/// This process's place in a group of nodes sharing limits. Leaves the group
/// when dropped.
#[derive(Debug)]
pub struct Membership {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: RedisStore,
    key: String,
    node_id: String,
    ttl_micros: i64,
    script: Arc<redis::Script>,
    /// The live node count last read (at least 1: this node).
    nodes: AtomicU64,
    stopped: AtomicBool,
}

impl Inner {
    async fn beat(&self, op: &str) -> Result<u64, Error> {
        let args = vec![op.to_owned(), self.node_id.clone(), self.ttl_micros.to_string()];
        let value = self.store.eval(Arc::clone(&self.script), vec![self.key.clone()], args).await?;
        let count: u64 = redis::from_redis_value(value).map_err(|e| Error::Protocol(e.to_string()))?;
        if op == "beat" {
            self.nodes.store(count.max(1), Ordering::Relaxed);
        }
        Ok(count)
    }
}

impl Membership {
    /// Joins `group` as a new node (a random id), heartbeating every third of
    /// `ttl` (3 ms to a day: [`RedisOption::Ttl`]). Errors if Redis cannot
    /// be reached for the first heartbeat.
    pub fn join(store: &RedisStore, group: &str, ttl: Duration) -> Result<Self, Error> {
        Self::join_checked(store, group, RedisOption::Ttl.check(ttl)?)
    }

    /// [`join`](Self::join) with a TTL its caller checked, as its own
    /// option (a divided limiter's `heartbeat_ttl`).
    pub(crate) fn join_checked(store: &RedisStore, group: &str, ttl: Duration) -> Result<Self, Error> {
        // Within a day: no overflow.
        let ttl_micros = ttl.as_micros() as i64;
        let inner = Arc::new(Inner {
            store: store.clone(),
            key: format!("rk:{{{}}}:nodes", keys::escape(group.as_bytes())),
            node_id: node_id(),
            ttl_micros,
            script: Arc::new(scripts::membership(TimeSource::Server)),
            nodes: AtomicU64::new(1),
            stopped: AtomicBool::new(false),
        });
        let first = Arc::clone(&inner);
        RedisStore::block_on(async move { first.beat("beat").await })?;
        let weak = Arc::downgrade(&inner);
        RedisStore::spawn_with(heartbeats(weak, ttl / 3), |()| {});
        Ok(Membership { inner })
    }

    /// The live nodes as last read (at least 1).
    pub fn nodes(&self) -> u64 {
        self.inner.nodes.load(Ordering::Relaxed)
    }

    /// This node's id in the group.
    pub fn node_id(&self) -> &str {
        &self.inner.node_id
    }

    /// Heartbeats now and returns the live count (normally the background
    /// heartbeat does this).
    pub fn refresh(&self) -> Result<u64, Error> {
        let inner = Arc::clone(&self.inner);
        RedisStore::block_on(async move { inner.beat("beat").await })
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.inner.stopped.store(true, Ordering::Relaxed);
        // Leave at once, best effort: otherwise the TTL removes this node.
        // On a plain thread, before returning (at most the store's timeout),
        // so that what this thread asks next — a blocking call runs on its
        // own connection — already sees the node gone; inside an async
        // runtime, in the background, as blocking there is not allowed.
        let inner = Arc::clone(&self.inner);
        if tokio::runtime::Handle::try_current().is_err() {
            let _ = RedisStore::block_on(async move { inner.beat("leave").await });
        } else {
            RedisStore::spawn_with(async move { inner.beat("leave").await }, |_| {});
        }
    }
}

async fn heartbeats(inner: Weak<Inner>, every: Duration) {
    let mut interval = tokio::time::interval(every);
    interval.tick().await;
    loop {
        interval.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        if inner.stopped.load(Ordering::Relaxed) {
            return;
        }
        // A failed heartbeat keeps the last count.
        let _ = inner.beat("beat").await;
    }
}

/// A node id unique enough for a group: host, process, time, a counter.
fn node_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}-{}-{nanos}-{}", host.trim(), std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}
