//! A `#![no_std]` crate with its own `#[panic_handler]` that uses
//! `ratekeeper-core`.
//!
//! If the core, or anything it depends on, ever links `std`, this crate stops
//! compiling: `std` defines the `panic_impl` lang item too, and rustc rejects
//! the duplicate (E0152). Building it is the check; there is nothing to run.
#![no_std]

use ratekeeper_core::SmoothRateLimiter;

/// Exercises the core so that its code is type-checked and monomorphised in a
/// `no_std` context, not merely named.
pub fn first_waits() -> [i64; 2] {
    match SmoothRateLimiter::bursty(1.0, 1.0) {
        Ok(mut limiter) => [limiter.reserve(1, 0).unwrap_or(-1), limiter.reserve(1, 0).unwrap_or(-1)],
        Err(_) => [-1, -1],
    }
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
