//! # ratekeeper
//!
//! Rate limiting that behaves identically — to the microsecond — from Rust,
//! Python, Node.js and C.
//!
//! This crate is the std layer: it puts the pure state machines of
//! [`ratekeeper_core`] behind a [`Clock`] and a lock, so they can be shared
//! between threads, and sleeps the waits they compute.
//!
//! * [`RateLimiter`] — Guava's `RateLimiter` (`SmoothBursty` and
//!   `SmoothWarmingUp`), bit for bit, plus what Guava's users asked for and
//!   never got: [`time_until_available`](RateLimiter::time_until_available)
//!   and [`can_acquire`](RateLimiter::can_acquire), which take nothing.
//! * [`KeyedLimiter`] and [`AnyKeyedLimiter`] — one limiter per key (per
//!   user, per user and action) in bounded memory: see [`keyed`].
//! * [`MonotonicClock`] (TSC-based, the default) and [`ManualClock`] (moves
//!   when told; sleeping on it advances it) for deterministic tests.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use ratekeeper::{ManualClock, RateLimiter};
//!
//! let clock = Arc::new(ManualClock::new());
//! let limiter = RateLimiter::builder(5.0).clock(Arc::clone(&clock)).build()?;
//! assert!(limiter.try_acquire(1, Duration::ZERO)?);
//! assert!(!limiter.try_acquire(1, Duration::ZERO)?); // next permit in 200 ms
//! clock.advance(Duration::from_millis(200));
//! assert!(limiter.try_acquire(1, Duration::ZERO)?);
//! # Ok::<(), ratekeeper::Error>(())
//! ```
#![warn(missing_docs)]

mod any_limiter;
mod clock;
mod composite;
mod concurrency;
mod cycle;
mod flow;
mod gcra;
pub mod headers;
pub mod http;
pub mod keyed;
mod leaky_bucket;
pub mod load;
mod load_driven;
#[cfg(all(test, loom))]
mod loom_models;
mod markers;
mod rate_limiter;
mod seq_cell;
mod shared;
mod sync;
mod token_bucket;
mod units;
mod windows;

pub use any_limiter::{AnyCore, AnyLimiter};
pub use clock::{AnyClock, Clock, ManualClock, MonotonicClock};
pub use composite::CompositeLimiter;
pub use concurrency::{ConcurrencyLimiter, PermitGuard};
pub use cycle::{cycle_config, CycleLimiter, CycleLimiterMetrics};
pub use flow::{FlowController, FlowEntry};
pub use gcra::Gcra;
pub use keyed::{AnyKeyedLimiter, AtCapacity, KeyedCompositeLimiter, KeyedLimiter, KeyedOptions, WhenFull};
pub use leaky_bucket::{LeakyBucketMeter, LeakyBucketQueue};
pub use load::{LoadSignal, ManualLoad, SamplerOptions, SystemLoad};
pub use load_driven::{Bbr, BbrGuard, SystemGuard, SystemPermitGuard};
pub use markers::{SrTcm, TrTcm};
pub use rate_limiter::{wait_as_seconds, RateLimiter, RateLimiterBuilder};
pub use ratekeeper_core::cycle::CycleConfig;
pub use ratekeeper_core::flow::{ControlBehavior, FlowGrade, FlowPermit, FlowRule, FlowStats};
pub use ratekeeper_core::token_bucket::Reservation;
pub use ratekeeper_core::{
    cost_from_i64, unsigned_from_i64, Admission, AimdConfig, Algorithm, Argument, BbrConfig, BbrPermit, BbrStats,
    Color, ConcurrencyPolicy, Decision, Error, Full, GradientConfig, InvalidArgument, LimiterSpec, Load, Outcome,
    Packed, Parameter, ParameterKind, ParameterSource, ParameterValue, Permit, SmoothKind, SmoothRateLimiter,
    SystemPermit, SystemRefusal, SystemRule, SystemStats, SystemThreshold, UnknownAlgorithm, Value, NEVER,
};
pub use token_bucket::TokenBucket;
pub use units::{
    advance_micros_from_secs, duration_micros_from_millis, duration_micros_from_secs, micros_from_duration,
    micros_from_millis, micros_from_secs, timeout_micros_from_millis, timeout_micros_from_secs,
    warmup_micros_from_secs,
};
pub use windows::{
    FixedWindow, HeapLogStorage, SlidingLog, SlidingWindow, SlidingWindowCounter, MAX_SLIDING_LOG_LIMIT,
};

/// The core state machines, for callers that bring their own clock and lock.
pub use ratekeeper_core as core;
