//! Waiting out a reservation from Python.
//!
//! The Rust library decides how long a caller must wait; this module waits
//! it the way Python code expects:
//!
//! * on the monotonic clock, [`sleep`] sleeps *without* the GIL, so other
//!   Python threads run meanwhile, and wakes every
//!   [`SIGNAL_CHECK_INTERVAL`] to run Python's signal handlers, so Ctrl-C
//!   interrupts a long wait as it interrupts `time.sleep` (the permits stay
//!   taken: a reservation cannot be handed back);
//! * on a [`ManualClock`](ratekeeper::ManualClock), waiting *is* moving the
//!   clock forward by the wait, as the Rust library's own sleep does;
//! * for the `async` methods, [`for_event_loop`] does the manual clock's
//!   part and says how long the event loop must sleep.

use std::time::{Duration, Instant};

use pyo3::prelude::*;
use ratekeeper::AnyClock;

/// How often a blocking wait wakes to let Python handle signals.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Waits `wait` on `clock`: sleeps with the GIL released, or advances a
/// manual clock. Errors only when a signal handler raises (`KeyboardInterrupt`).
pub fn sleep(py: Python<'_>, clock: &AnyClock, wait: Duration) -> PyResult<()> {
    if wait.is_zero() {
        return Ok(());
    }
    match clock {
        AnyClock::Manual(clock) => {
            clock.advance(wait);
            Ok(())
        }
        AnyClock::Monotonic(_) => sleep_for_real(py, wait),
    }
}

/// Sleeps `wait` of real time with the GIL released, waking every
/// [`SIGNAL_CHECK_INTERVAL`] to run Python's signal handlers (a limiter
/// shared through Redis, whose waits are always real).
pub fn sleep_for_real(py: Python<'_>, wait: Duration) -> PyResult<()> {
    let start = Instant::now();
    loop {
        let left = wait.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Ok(());
        }
        let nap = left.min(SIGNAL_CHECK_INTERVAL);
        py.detach(move || std::thread::sleep(nap));
        py.check_signals()?;
    }
}

/// For an `async` wait: advances a manual clock by `wait` and returns 0.0,
/// or returns the seconds the event loop must sleep on a real clock.
pub fn for_event_loop(clock: &AnyClock, wait: Duration) -> f64 {
    match clock {
        AnyClock::Manual(clock) => {
            clock.advance(wait);
            0.0
        }
        AnyClock::Monotonic(_) => wait.as_secs_f64(),
    }
}

/// [`sleep`] for a wait in the core's whole microseconds (a decision's
/// `wait_micros`).
pub fn sleep_micros(py: Python<'_>, clock: &AnyClock, micros: i64) -> PyResult<()> {
    sleep(py, clock, Duration::from_micros(micros.max(0) as u64))
}

/// [`for_event_loop`] for a wait in whole microseconds.
pub fn for_event_loop_micros(clock: &AnyClock, micros: i64) -> f64 {
    for_event_loop(clock, Duration::from_micros(micros.max(0) as u64))
}
