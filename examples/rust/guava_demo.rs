//! Guava's documented example, with real waits: a limiter of 1 permit per
//! second, asked for 1, 2, 3, 4 and 5 permits in a row.
//!
//! Guava pre-consumes: each request is granted as soon as the limiter is free
//! and the *next* one pays for it, so the waits are 0, 1, 2, 3 and 4 seconds
//! (each pays for the request before it), not 1, 2, 3, 4 and 5.
//!
//! Run with `cargo run -p ratekeeper-examples --bin guava-demo`.

use std::time::Instant;

use ratekeeper::{wait_as_seconds, RateLimiter};

fn main() -> Result<(), ratekeeper::Error> {
    let limiter = RateLimiter::create(1.0)?;
    println!("RateLimiter::create(1.0), then acquire(1) .. acquire(5), sleeping for real:");
    let start = Instant::now();
    for permits in 1..=5 {
        let before = Instant::now();
        let waited = limiter.acquire(permits)?;
        println!(
            "  acquire({permits}) -> waited {:.6} s (slept {:.6} s, t = {:.3} s)",
            wait_as_seconds(waited),
            before.elapsed().as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
    }
    println!("the next request would wait {:?} more", limiter.time_until_available(1)?);
    Ok(())
}
