//! A `#![no_std]` crate with its own `#[panic_handler]` that uses
//! `ratekeeper-core`.
//!
//! If the core, or anything it depends on, ever links `std`, this crate stops
//! compiling: `std` defines the `panic_impl` lang item too, and rustc rejects
//! the duplicate (E0152). Building it is the check; there is nothing to run.
#![no_std]

use ratekeeper_core::SmoothRateLimiter;
use ratekeeper_core::{
    composite, Admission, Color, Decision, FixedWindow, Gcra, LogEntry, SlidingLog, SrTcm, TokenBucket, TrTcm,
};

/// Exercises the core so that its code is type-checked and monomorphised in a
/// `no_std` context, not merely named.
pub fn first_waits() -> [i64; 2] {
    match SmoothRateLimiter::bursty(1.0, 1.0) {
        Ok(mut limiter) => [limiter.reserve(1, 0).unwrap_or(-1), limiter.reserve(1, 0).unwrap_or(-1)],
        Err(_) => [-1, -1],
    }
}

/// Exercises the other algorithms the same way, the sliding log over a
/// stack array and the HTTP fields through `core::fmt::Write` into a fixed
/// buffer: nothing here may need `alloc`.
pub fn algorithms() -> (bool, Color, Color, usize) {
    let failed = (false, Color::Red, Color::Red, 0);
    let (Ok(a), Ok(b)) = (FixedWindow::new(2, 1_000), FixedWindow::new(5, 10_000)) else { return failed };
    let admitted = composite::check_all(&mut [a, b], 1, 0).allowed;
    let Ok(mut log) = SlidingLog::new(4, 1_000, [LogEntry::default(); 4]) else { return failed };
    let logged = log.check(2, 0).allowed;
    let bucket = TokenBucket::new(10.0, 2).map(|mut b| b.check(1, 0).allowed).unwrap_or(false);
    let gcra = Gcra::new(1, 1, 1_000_000).map(|mut g| g.check(1, 0).allowed).unwrap_or(false);
    let sr = SrTcm::new(1_000, 1_500, 1_500).map(|mut m| m.mark(1_500, 0)).unwrap_or(Color::Red);
    let tr = TrTcm::new(2_000, 2_000, 1_000, 1_000).map(|mut m| m.mark(1_500, 0)).unwrap_or(Color::Red);
    let mut header = Buffer { bytes: [0; 64], len: 0 };
    let _ = Decision::allowed(10, 9, 100_000, 1_000_000).write_ratelimit("default", &mut header);
    (admitted && logged && bucket && gcra, sr, tr, header.len)
}

/// A fixed buffer that implements `core::fmt::Write`.
struct Buffer {
    bytes: [u8; 64],
    len: usize,
}

impl core::fmt::Write for Buffer {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(core::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
