//! # ratekeeper-redis
//!
//! ratekeeper's limiters shared by many processes and hosts through Redis —
//! the server users already run, never a home-made one.
//!
//! Every decision is one atomic Lua script run (`EVALSHA`, reloaded after
//! `NOSCRIPT`) timed by the server's own clock (`TIME` inside the script),
//! so the clocks of the clients never matter. Redis 6.0 or later (GCRA's
//! script keeps a key's expiry with `SET … KEEPTTL`).
//!
//! * [`RedisLimiter`] — GCRA (redis-cell's reply), the token bucket, the
//!   fixed window, the sliding window counter and the sliding log, per user
//!   key, each deciding as the in-process limiter would.
//! * [`RedisCompositeLimiter`] — several of those limits on one key
//!   ("10 per second and 1,000 per hour"), decided all or nothing in one
//!   script run, as the in-process composites decide.
//! * [`RedisLeasedLimiter`] — leased mode: one round trip takes a
//!   batch of units that a node then spends locally, with the over-time
//!   bound and the losses stated in its docs.
//! * [`RedisDividedLimiter`] — divided mode: nodes heartbeat
//!   into Redis and each enforces `limit ÷ live nodes` locally.
//! * [`ScriptPipe`] — [`RedisLimiter`]'s checks on a connection the
//!   caller drives from its own event loop (the Node binding's), sans I/O.
//! * [`RedisRateLimiter`] — Guava's `SmoothBursty`/`SmoothWarmingUp` shared
//!   by many processes, giving the waits one Guava limiter would give.
//! * [`RedisConcurrencyLimiter`] — a concurrency limit shared by many
//!   processes: permits held as leases that expire, so a dead holder's
//!   permits come back without anyone releasing them.
//! * [`RedisOption`] — the options only these limiters take (a store's
//!   timeouts, a heartbeat TTL), each with its domain, checked here for
//!   every language.

mod composite;
mod concurrency;
mod divided;
mod error;
mod exact;
mod forget;
mod frame;
mod keys;
mod leased;
mod membership;
mod options;
mod pipe;
mod reconnect;
mod reply;
mod scripts;
mod sentinel;
mod share;
mod smooth;
mod store;
mod tls;

pub use composite::{CompositeDecision, RedisCompositeLimiter};
pub use concurrency::{ConcurrencyLease, RedisConcurrencyLimiter};
pub use divided::RedisDividedLimiter;
pub use error::Error;
pub use exact::{RedisLimiter, WhenUnavailable};
pub use leased::RedisLeasedLimiter;
pub use membership::Membership;
pub use options::{InvalidOption, RedisOption};
pub use pipe::{Answered, PipeTls, Requests, ScriptPipe};
pub use smooth::{RateLimiterState, RedisRateLimiter, RedisRateLimiterBuilder};
pub use store::{RedisStore, StoreOptions};
pub use tls::{Pem, TlsOptions};

/// The README's Rust blocks, run by rustdoc as doctests (`cargo test`), so
/// that none stops compiling or running unnoticed. Hosted here because this
/// is the one crate that sees `ratekeeper` and `ratekeeper_redis` (and
/// `ratekeeper_tower`, a dev-dependency);
/// `scripts/doc_snippets.py check` fails on a Rust block in a markdown file
/// no such item includes.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
