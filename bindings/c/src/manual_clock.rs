//! [`rk_manual_clock`]: ratekeeper's `ManualClock` for C tests.

use std::sync::Arc;

use ratekeeper::{AnyClock, Argument, ManualClock, Value};

use crate::boundary::{free_box, guard, handle, Out};
use crate::failure::Failure;
use crate::status::rk_status;

/// A clock that moves only when told to, for deterministic tests: limiters
/// created with it read their time from it, and their blocking calls
/// advance it by the wait instead of sleeping (so `rk_rate_limiter_acquire`
/// returns at once, reporting the wait it would have slept). It starts at
/// 0 microseconds and never goes backwards.
///
/// Reference-counted: every limiter created with a clock holds its own
/// reference, so `rk_manual_clock_free()` may be called while limiters still
/// use the clock (they keep it alive; it is released with the last of
/// them). Safe to use from several threads at once; only
/// `rk_manual_clock_free()` must not race with other calls on the same
/// handle.
#[derive(Debug)]
pub struct rk_manual_clock {
    clock: Arc<ManualClock>,
}

impl rk_manual_clock {
    /// The clock a limiter created with `clock` uses: this manual clock
    /// (sharing it), or the monotonic clock when `clock` is NULL.
    pub(crate) fn any_clock(clock: Option<&rk_manual_clock>) -> AnyClock {
        match clock {
            Some(c) => AnyClock::Manual(Arc::clone(&c.clock)),
            None => AnyClock::default(),
        }
    }
}

/// Creates a manual clock reading 0 microseconds, in `*out_clock`. Free it
/// with `rk_manual_clock_free()`.
///
/// Returns `RK_NULL_POINTER` when `out_clock` is NULL.
///
/// # Safety
/// `out_clock` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_clock_new(out_clock: *mut *mut rk_manual_clock) -> rk_status {
    guard("rk_manual_clock_new", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_clock, "out_clock") }?;
        out.write(Box::into_raw(Box::new(rk_manual_clock { clock: Arc::new(ManualClock::new()) })));
        Ok(())
    })
}

/// Releases the caller's reference to a clock. Limiters created with it
/// keep working (they hold references of their own). `NULL` does nothing.
///
/// # Safety
/// `clock` is NULL or a clock from `rk_manual_clock_new()` that has not been
/// freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_clock_free(clock: *mut rk_manual_clock) {
    // SAFETY: the caller's contract: NULL or a live box from rk_manual_clock_new that
    // no other call is using.
    unsafe { free_box("rk_manual_clock_free", clock) }
}

/// Moves the clock forward by `micros` microseconds, saturating at
/// `INT64_MAX`; 0 leaves it where it is.
///
/// Returns `RK_INVALID_ARGUMENT` when `micros` is negative (the clock never
/// goes back: a duration is never negative, in any language), and
/// `RK_NULL_POINTER` when `clock` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_clock_advance_micros(clock: *const rk_manual_clock, micros: i64) -> rk_status {
    guard("rk_manual_clock_advance_micros", || {
        // SAFETY: the caller's contract.
        let clock = unsafe { handle(clock, "clock") }?;
        if micros < 0 {
            return Err(Failure::Invalid {
                argument: "micros",
                value: Value::Int(micros),
                requirement: Argument::AdvanceSeconds.requirement(),
            });
        }
        clock.clock.advance_micros(micros);
        Ok(())
    })
}

/// The clock's time in microseconds since it was created (moved by
/// `rk_manual_clock_advance_micros()` and by the waits of limiters using
/// it), in `*out_micros`.
///
/// Returns `RK_NULL_POINTER` when `clock` or `out_micros` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_micros` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_clock_now_micros(clock: *const rk_manual_clock, out_micros: *mut i64) -> rk_status {
    guard("rk_manual_clock_now_micros", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (handle(clock, "clock")?, Out::required(out_micros, "out_micros")?) };
        out.write(ratekeeper::Clock::now_micros(&*clock.clock));
        Ok(())
    })
}
