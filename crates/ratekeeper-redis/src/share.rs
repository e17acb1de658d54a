//! [`LocalShare`]: this node's share of a limit, enforced in-process.
//!
//! The design's second way to share a limit without a round trip per
//! decision: every node enforces `limit ÷ live nodes` on its own, per key
//! (a keyed limiter over [`LimiterSpec::divided`]), and re-reads the node
//! count as the [`Membership`] heartbeats update it. Divided mode decides
//! with it always; exact mode falls back to it while Redis cannot answer.
//!
//! When the count changes, the share is rebuilt from scratch: keys start
//! whole again. So each change of membership can let each key through up
//! to one (new) share more than a single limiter would; membership changes
//! are rare (a node starting, stopping or dying), and the over-admission is
//! bounded by them.

use std::sync::{Arc, Mutex};

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{AnyClock, AnyKeyedLimiter, Decision, KeyedOptions, LimiterSpec};

use crate::error::Error;
use crate::membership::Membership;

/// A node's share of a limit, per key, following the membership's count.
#[derive(Debug)]
pub(crate) struct LocalShare {
    membership: Arc<Membership>,
    spec: LimiterSpec,
    max_keys: usize,
    clock: AnyClock,
    current: Mutex<Current>,
}

/// The keyed limiter's options: the share's key bound is its limiter's.
fn options(max_keys: usize, max_key_bytes: MaxKeyBytes) -> KeyedOptions {
    KeyedOptions::new(max_keys).max_key_bytes(max_key_bytes)
}

#[derive(Debug)]
struct Current {
    /// The node count the limiter was built for (0: none built yet, or
    /// stale — rebuild on next use).
    nodes: u64,
    limiter: Option<AnyKeyedLimiter>,
    /// The longest key (an exact-mode limiter's own bound, or a divided
    /// limiter's).
    max_key_bytes: MaxKeyBytes,
}

impl LocalShare {
    pub(crate) fn new(
        membership: Arc<Membership>,
        spec: LimiterSpec,
        max_keys: usize,
        max_key_bytes: MaxKeyBytes,
        clock: AnyClock,
    ) -> Result<Self, Error> {
        // Build one now so that bad parameters fail at construction.
        let options = options(max_keys, max_key_bytes);
        let limiter = AnyKeyedLimiter::new(&spec.divided(membership.nodes()), options, clock.clone())?;
        Ok(LocalShare {
            current: Mutex::new(Current { nodes: membership.nodes(), limiter: Some(limiter), max_key_bytes }),
            membership,
            spec,
            max_keys,
            clock,
        })
    }

    /// Decides `cost` units for `key` with this node's share.
    pub(crate) fn check(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let nodes = self.membership.nodes();
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.nodes != nodes || current.limiter.is_none() {
            let spec = self.spec.divided(nodes);
            let options = options(self.max_keys, current.max_key_bytes);
            current.limiter = Some(AnyKeyedLimiter::new(&spec, options, self.clock.clone())?);
            current.nodes = nodes;
        }
        Ok(current.limiter.as_ref().expect("built above").check(key, cost)?)
    }

    /// The decision [`check`](Self::check) would make, taking nothing (a
    /// key not held, or a share not built yet for this node count, is
    /// whole).
    pub(crate) fn peek(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        let nodes = self.membership.nodes();
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        match &current.limiter {
            Some(limiter) if current.nodes == nodes => Ok(limiter.peek(key, cost)?),
            // `check` would build a fresh share first: every key whole.
            _ => {
                let options = options(1, current.max_key_bytes);
                let fresh = AnyKeyedLimiter::new(&self.spec.divided(nodes), options, self.clock.clone())?;
                Ok(fresh.peek(key, cost)?)
            }
        }
    }

    /// Forgets `key`: its next request starts from a whole share. Whether
    /// the share held it.
    pub(crate) fn remove(&self, key: &[u8]) -> bool {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        current.limiter.as_ref().is_some_and(|limiter| limiter.remove(key).unwrap_or(false))
    }

    /// Takes keys of at most `bound` bytes from now on (the keys held are
    /// forgotten: the next use starts afresh, as after [`reset`](Self::reset)).
    pub(crate) fn set_max_key_bytes(&self, bound: MaxKeyBytes) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.max_key_bytes != bound {
            current.max_key_bytes = bound;
            current.limiter = None;
        }
    }

    /// The longest key the share takes.
    pub(crate) fn key_bytes_bound(&self) -> MaxKeyBytes {
        self.current.lock().unwrap_or_else(|p| p.into_inner()).max_key_bytes
    }

    /// Forgets every key: the next use starts afresh (after an outage, the
    /// next one starts from whole shares again).
    pub(crate) fn reset(&self) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.limiter.is_some() {
            current.limiter = None;
        }
    }

    /// The node count the share follows.
    pub(crate) fn nodes(&self) -> u64 {
        self.membership.nodes()
    }
}
