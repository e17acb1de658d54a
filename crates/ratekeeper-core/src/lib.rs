//! # ratekeeper-core
//!
//! Rate-limiting algorithms as pure state machines. Every operation takes the
//! current time as an argument (whole microseconds since the limiter was
//! created); the core has no clock, no lock and never allocates, so it runs
//! anywhere `#![no_std]` does and gives the same answer for the same inputs
//! on every platform and from every language binding.
//!
//! The `ratekeeper` crate wraps these state machines with clocks, thread
//! safety and blocking/async waits; most users want that crate.
//!
//! ## Algorithms
//!
//! * [`SmoothRateLimiter`] — Guava 31.1's `SmoothBursty` and
//!   `SmoothWarmingUp`, reproduced bit for bit.
//! * [`TokenBucket`] — Go's `golang.org/x/time/rate`: allow, reserve (and
//!   cancel), wait with a deadline, change the rate or burst.
//! * [`Gcra`] — the generic cell rate algorithm with redis-cell's
//!   `CL.THROTTLE` reply.
//! * [`LeakyBucketMeter`] and [`LeakyBucketQueue`] — the leaky bucket as a
//!   meter (overflow refused) and as a queue (each request gets its slot).
//! * [`FixedWindow`], [`SlidingWindow`] (sub-window counters),
//!   [`SlidingLog`] (exact, over caller-provided storage) and
//!   [`SlidingWindowCounter`] (the weighted two-window approximation).
//! * [`SrTcm`] and [`TrTcm`] — the three-colour markers of RFC 2697 and
//!   RFC 2698, colour-blind and colour-aware.
//! * [`Gradient`] and [`Aimd`] — adaptive concurrency limits (Netflix
//!   concurrency-limits' rules), driving a [`ConcurrencyLimiter`].
//! * [`Bbr`] and [`SystemGuard`] — load shedding driven by the system's
//!   [`Load`]: Kratos' BBR limiter and Sentinel's system rule.
//! * [`CycleLimiter`] — Resilience4j's `AtomicRateLimiter`: permits per
//!   cycle, reserved ahead within a timeout.
//! * [`FlowController`] — Sentinel's flow rule: its default (with
//!   occupy-next-window priority), warm-up, rate-limiter and warm-up
//!   rate-limiter controllers on its sliding statistics.
//! * [`Composite`] and [`composite::check_all`] — several limits admitted
//!   all or nothing.
//!
//! Every admission-style algorithm implements [`Admission`] and answers with
//! the one [`Decision`] type, which also writes the HTTP `RateLimit`,
//! `RateLimit-Policy` and `Retry-After` fields; [`LimiterSpec`] describes any
//! of them with plain numbers, and [`Algorithm`] is the one list of them,
//! with their names and parameters. Fixed-size states implement [`Packed`], so
//! the std layer shares them between threads without a lock, and [`Full`],
//! which says when a state is back to fresh — so a keyed limiter can drop
//! it without changing any decision.
//!
//! ```
//! use ratekeeper_core::SmoothRateLimiter;
//!
//! // Guava's RateLimiter.create(1.0): one permit per second.
//! let mut limiter = SmoothRateLimiter::bursty(1.0, 1.0).unwrap();
//! assert_eq!(limiter.reserve(1, 0), Ok(0)); // granted at once
//! assert_eq!(limiter.reserve(1, 0), Ok(1_000_000)); // waits one second
//! ```
#![no_std]
#![warn(missing_docs)]

mod admission;
pub mod aimd;
pub mod algorithm;
pub mod bbr;
mod color;
pub mod composite;
pub mod concurrency;
pub mod cycle;
pub mod decision;
pub mod duration;
mod error;
pub mod fixed_window;
pub mod flow;
pub mod full;
pub mod gcra;
mod go;
pub mod gradient;
mod java;
pub mod leaky_bucket;
pub mod load;
mod packed;
pub mod sliding_log;
pub mod sliding_window;
pub mod sliding_window_counter;
pub mod smooth;
pub mod spec;
pub mod srtcm;
pub mod system_guard;
mod ticks;
pub mod token_bucket;
pub mod trtcm;

pub use admission::{cost_from_i64, unsigned_from_i64, Admission};
pub use aimd::{Aimd, AimdConfig};
pub use algorithm::{Algorithm, Parameter, ParameterKind, UnknownAlgorithm};
pub use bbr::{Bbr, BbrConfig, BbrPermit, BbrStats};
pub use color::Color;
pub use composite::Composite;
pub use concurrency::{ConcurrencyLimiter, ConcurrencyPolicy, Outcome, Permit};
pub use cycle::{CycleConfig, CycleLimiter, CycleMetrics};
pub use decision::{Decision, NEVER};
pub use error::{Argument, Error, InvalidArgument, Value};
pub use fixed_window::FixedWindow;
pub use flow::{ControlBehavior, FlowController, FlowGrade, FlowPermit, FlowRule, FlowStats};
pub use full::Full;
pub use gcra::Gcra;
pub use gradient::{Gradient, GradientConfig};
pub use leaky_bucket::{LeakyBucketMeter, LeakyBucketQueue};
pub use load::Load;
pub use packed::Packed;
pub use sliding_log::{LogEntry, SlidingLog};
pub use sliding_window::SlidingWindow;
pub use sliding_window_counter::SlidingWindowCounter;
pub use smooth::{SmoothKind, SmoothRateLimiter};
pub use spec::{LimiterSpec, ParameterSource, ParameterValue};
pub use srtcm::SrTcm;
pub use system_guard::{SystemGuard, SystemPermit, SystemRefusal, SystemRule, SystemStats, SystemThreshold};
pub use token_bucket::{Reservation, TokenBucket};
pub use trtcm::TrTcm;
