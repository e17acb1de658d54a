//! Guava's documented scenario, as the demo runs it in every language: a
//! limiter of 1 permit per second asked for 1, 2, 3, 4 and 5 permits.
//!
//! The limiter runs on a `ManualClock` that the program moves in step with
//! real time: `acquire` returns the wait at once (moving the manual clock by
//! it), and the program then sleeps that long for real. So the waits the
//! limiter returns are exact — 0, 1, 2, 3 and 4 s, the same to the
//! microsecond from Rust, Python, Node.js and C — while the real sleeps
//! show what the operating system made of them.
//!
//! Prints one line per request: `acquire(N) waited W slept S` (seconds, six
//! places). `--no-sleep` skips the real sleeps (for tests).
//! Run with `cargo run -p ratekeeper-examples --bin guava-scenario`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratekeeper::{wait_as_seconds, ManualClock, RateLimiter};

fn main() -> Result<(), ratekeeper::Error> {
    let sleep = !std::env::args().any(|a| a == "--no-sleep");
    let clock = Arc::new(ManualClock::new());
    let limiter = RateLimiter::builder(1.0).clock(Arc::clone(&clock)).build()?;
    for permits in 1..=5 {
        let waited = limiter.acquire(permits)?;
        let before = Instant::now();
        if sleep {
            std::thread::sleep(waited);
        }
        let slept = before.elapsed();
        println!("acquire({permits}) waited {:.6} slept {:.6}", wait_as_seconds(waited), slept.as_secs_f64());
    }
    assert_eq!(clock.now(), Duration::from_secs(10), "the manual clock moved by the waits");
    Ok(())
}
