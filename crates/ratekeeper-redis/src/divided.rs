//! [`RedisDividedLimiter`]: divided mode, where each node enforces its
//! share of the limit (docs/redis.md, "The modes").
//!
//! Every node joins the limiter's group ([`Membership`]: heartbeats into
//! Redis with a TTL) and enforces `limit ÷ live nodes` on its own, per key
//! (see `share.rs`). A decision never waits for Redis: the heartbeats run in
//! the background and only update the count. While Redis is unreachable the
//! node keeps the last count it read.
//!
//! The shares add up to the whole limit when every node gets its share of
//! the traffic; when traffic is uneven, a busy node is refused while an idle
//! one has room (the price of deciding locally — exact and leased modes do
//! not pay it). Quotas are rounded down, never below one unit per node.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{AnyClock, Decision, LimiterSpec};

use crate::error::Error;
use crate::membership::Membership;
use crate::options::RedisOption;
use crate::share::LocalShare;
use crate::store::RedisStore;

/// A limit divided between the live nodes, each deciding locally. Cheap to
/// clone; safe to share between threads; leaves the group when the last
/// clone is dropped.
#[derive(Debug, Clone)]
pub struct RedisDividedLimiter {
    share: Arc<LocalShare>,
    membership: Arc<Membership>,
}

impl RedisDividedLimiter {
    /// Joins group `name` (heartbeats every third of `heartbeat_ttl`, 3 ms
    /// to a day: [`RedisOption::HeartbeatTtl`]) and enforces this node's
    /// share of `spec`, for at most `max_keys` keys.
    pub fn new(
        store: &RedisStore,
        name: &str,
        spec: LimiterSpec,
        heartbeat_ttl: Duration,
        max_keys: usize,
    ) -> Result<Self, Error> {
        let heartbeat_ttl = RedisOption::HeartbeatTtl.check(heartbeat_ttl)?;
        let membership = Arc::new(Membership::join_checked(store, name, heartbeat_ttl)?);
        let share = Arc::new(LocalShare::new(
            Arc::clone(&membership),
            spec,
            max_keys,
            MaxKeyBytes::DEFAULT,
            AnyClock::default(),
        )?);
        Ok(RedisDividedLimiter { share, membership })
    }

    /// Keys of at most `bound` bytes (default [`MaxKeyBytes::DEFAULT`],
    /// 256), as every keyed limiter: a longer one is an error naming `key`,
    /// and nothing is stored. Setting it forgets the keys held.
    pub fn max_key_bytes(self, bound: MaxKeyBytes) -> Self {
        self.share.set_max_key_bytes(bound);
        self
    }

    /// The longest key this limiter takes, in bytes.
    pub fn key_bytes_bound(&self) -> MaxKeyBytes {
        self.share.key_bytes_bound()
    }

    /// Decides `cost` units for `key` (any bytes; text is its UTF-8) with
    /// this node's share: no round trip.
    pub fn check(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        self.share.check(key.as_ref(), cost)
    }

    /// The decision [`check`](Self::check) would make now with this node's
    /// share, taking nothing: divided mode keeps no per-key state in Redis,
    /// so this is the local share's `peek` (no round trip).
    pub fn peek(&self, key: impl AsRef<[u8]>, cost: u64) -> Result<Decision, Error> {
        let key = self.share.key_bytes_bound().check(key.as_ref())?;
        self.share.peek(key, cost)
    }

    /// Forgets `key` in this node's share: its next request starts from a
    /// whole share. Whether the share held it. Divided mode keeps no
    /// per-key state in Redis, so other nodes' shares are untouched: each
    /// keeps what it counted, and a reset on one node gives `key` back that
    /// node's share only (`limit ÷ live nodes`). Call it on every node for
    /// a reset of the whole limit.
    pub fn remove(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        let key = self.share.key_bytes_bound().check(key.as_ref())?;
        Ok(self.share.remove(key))
    }

    /// The live nodes as last read.
    pub fn nodes(&self) -> u64 {
        self.share.nodes()
    }

    /// This node's membership in the group.
    pub fn membership(&self) -> &Membership {
        &self.membership
    }
}
