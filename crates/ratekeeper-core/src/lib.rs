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
//!
//! Every admission-style algorithm implements [`Admission`] and answers with
//! the one [`Decision`] type, which also writes the HTTP `RateLimit`,
//! `RateLimit-Policy` and `Retry-After` fields.
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
pub mod decision;
mod error;
mod go;
mod java;
mod packed;
pub mod smooth;
pub mod token_bucket;

pub use admission::{cost_from_i64, unsigned_from_i64, Admission};
pub use decision::{Decision, NEVER};
pub use error::{Argument, Error, InvalidArgument, Value};
pub use packed::Packed;
pub use smooth::{SmoothKind, SmoothRateLimiter};
pub use token_bucket::{Reservation, TokenBucket};
