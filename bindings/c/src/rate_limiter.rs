//! [`rk_rate_limiter`]: Guava's `RateLimiter` (`SmoothBursty` and
//! `SmoothWarmingUp`), through ratekeeper's `RateLimiter<AnyClock>`.
//!
//! Durations cross the boundary as whole microseconds in `int64_t`, the
//! unit the core counts in, so nothing is rounded on the way;
//! [`rk_rate_limiter_acquire`] also reports Guava's `double` seconds.

use std::time::Duration;

use ratekeeper::core::smooth::permits_from_i64;
use ratekeeper::{wait_as_seconds, AnyClock, RateLimiter, SmoothRateLimiter};

use crate::boundary::{free_box, guard, handle, Out};
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

// Literals, because cbindgen cannot follow a path to another crate's
// constant; a test checks that they are the core's.

/// The permits a bursty limiter saves up while idle, in seconds of its rate,
/// when created like Guava's `RateLimiter.create(permitsPerSecond)`.
pub const RK_DEFAULT_MAX_BURST_SECONDS: f64 = 1.0;

/// How much slower than its stable rate a cold warming-up limiter runs,
/// when created like Guava's `RateLimiter.create(permitsPerSecond,
/// warmupPeriod, unit)`.
pub const RK_DEFAULT_COLD_FACTOR: f64 = 3.0;

/// A rate limiter with the semantics of Guava's `RateLimiter`, to the
/// microsecond: `SmoothBursty` or `SmoothWarmingUp`.
///
/// Like Guava's, it pre-consumes: a request of any size is granted as soon
/// as the limiter is free, and the *next* request waits for it to be paid
/// off.
///
/// Thread safety: every function taking a `const rk_rate_limiter *` may be
/// called on the same handle from any number of threads at once (the state
/// is updated atomically; decisions are never lost or torn). Only
/// `rk_rate_limiter_free()` must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_rate_limiter {
    limiter: RateLimiter<AnyClock>,
}

impl rk_rate_limiter {
    /// Boxes a limiter on the given clock and hands it to the caller.
    fn create(
        core: Result<SmoothRateLimiter, ratekeeper::Error>,
        clock: Option<&rk_manual_clock>,
        out: Out<*mut rk_rate_limiter>,
    ) -> Result<(), Failure> {
        let limiter = RateLimiter::from_core(core?, rk_manual_clock::any_clock(clock));
        out.write(Box::into_raw(Box::new(rk_rate_limiter { limiter })));
        Ok(())
    }
}

/// A timeout as Guava's `tryAcquire` treats it: negative means "do not
/// wait". (Every blocking call of the C API takes timeouts so.)
pub(crate) fn timeout(timeout_micros: i64) -> Duration {
    Duration::from_micros(timeout_micros.max(0) as u64)
}

/// A wait in whole microseconds; the limiters never return more than
/// `INT64_MAX`.
pub(crate) fn micros(wait: Duration) -> i64 {
    i64::try_from(wait.as_micros()).unwrap_or(i64::MAX)
}

/// Creates a `SmoothBursty` limiter of `permits_per_second` that saves up
/// to `max_burst_seconds` of permits while idle (Guava's
/// `RateLimiter.create(permitsPerSecond)` with
/// `RK_DEFAULT_MAX_BURST_SECONDS`), in `*out_limiter`. Free it with
/// `rk_rate_limiter_free()`.
///
/// `clock`: a manual clock to read the time from (the limiter shares it),
/// or NULL for the system's monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT` when `permits_per_second` is not positive
/// or is NaN (`INFINITY` is accepted, as in Guava) or `max_burst_seconds`
/// is negative, NaN, infinite or 2^63 microseconds' worth or more (the
/// bound of every duration); `RK_NULL_POINTER` when `out_limiter` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_limiter` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_new_bursty(
    permits_per_second: f64,
    max_burst_seconds: f64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_rate_limiter,
) -> rk_status {
    guard("rk_rate_limiter_new_bursty", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        rk_rate_limiter::create(SmoothRateLimiter::bursty(permits_per_second, max_burst_seconds), clock, out)
    })
}

/// Creates a `SmoothWarmingUp` limiter of `permits_per_second` that starts
/// cold, `cold_factor` times slower, and reaches its stable rate after
/// `warmup_micros` microseconds of saturated use (Guava's
/// `RateLimiter.create(permitsPerSecond, warmupPeriod, MICROSECONDS)` with
/// `RK_DEFAULT_COLD_FACTOR`), in `*out_limiter`. Free it with
/// `rk_rate_limiter_free()`.
///
/// `clock`: a manual clock to read the time from (the limiter shares it),
/// or NULL for the system's monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT` when `permits_per_second` is not positive
/// or is NaN, `warmup_micros` is negative, or `cold_factor` is below 1, NaN
/// or infinite; `RK_NULL_POINTER` when `out_limiter` is NULL.
///
/// # Safety
/// As `rk_rate_limiter_new_bursty()`.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_new_warming_up(
    permits_per_second: f64,
    warmup_micros: i64,
    cold_factor: f64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_rate_limiter,
) -> rk_status {
    guard("rk_rate_limiter_new_warming_up", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        rk_rate_limiter::create(
            SmoothRateLimiter::warming_up(permits_per_second, warmup_micros, cold_factor),
            clock,
            out,
        )
    })
}

/// Frees a limiter (and its reference to its clock). `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_rate_limiter_new_*()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_free(limiter: *mut rk_rate_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_rate_limiter_new_* that
    // no other call is using.
    unsafe { free_box("rk_rate_limiter_free", limiter) }
}

/// Guava's `acquire(permits)`: takes `permits`, blocking the calling thread
/// until they are granted, and stores the time it waited in seconds in
/// `*out_waited_seconds` (Guava's value, exactly: `micros / 1e6`; 0.0 when
/// it did not wait). On a manual clock it advances the clock instead of
/// sleeping, and returns at once.
///
/// `out_waited_seconds` may be NULL when the wait is of no interest.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is not
/// between 1 and `INT32_MAX`; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_waited_seconds` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_acquire(
    limiter: *const rk_rate_limiter,
    permits: i64,
    out_waited_seconds: *mut f64,
) -> rk_status {
    guard("rk_rate_limiter_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_waited_seconds)) };
        let waited = limiter.limiter.acquire(permits_from_i64(permits)?)?;
        if let Some(out) = out {
            out.write(wait_as_seconds(waited));
        }
        Ok(())
    })
}

/// `rk_rate_limiter_acquire()`, reporting the wait in whole microseconds
/// in `*out_waited_micros` (which may be NULL).
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_waited_micros` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_acquire_micros(
    limiter: *const rk_rate_limiter,
    permits: i64,
    out_waited_micros: *mut i64,
) -> rk_status {
    guard("rk_rate_limiter_acquire_micros", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_waited_micros)) };
        let waited = limiter.limiter.acquire(permits_from_i64(permits)?)?;
        if let Some(out) = out {
            out.write(micros(waited));
        }
        Ok(())
    })
}

/// Guava's `tryAcquire(permits, timeout, MICROSECONDS)`: when `permits`
/// can be granted within `timeout_micros`, takes them, blocks until then
/// (a manual clock is advanced instead) and stores `true` in
/// `*out_acquired`; otherwise stores `false` at once, taking nothing. A
/// negative timeout means "do not wait", as in Guava.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is not
/// between 1 and `INT32_MAX`; `RK_NULL_POINTER` when `limiter` or
/// `out_acquired` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_acquired` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_try_acquire(
    limiter: *const rk_rate_limiter,
    permits: i64,
    timeout_micros: i64,
    out_acquired: *mut bool,
) -> rk_status {
    guard("rk_rate_limiter_try_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_acquired, "out_acquired")?) };
        out.write(limiter.limiter.try_acquire(permits_from_i64(permits)?, timeout(timeout_micros))?);
        Ok(())
    })
}

/// Takes `permits` now, without blocking, and stores in `*out_wait_micros`
/// how long the caller must wait before going ahead: for callers with
/// their own timers (event loops). `rk_rate_limiter_acquire_micros()` is
/// this followed by the wait.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is not
/// between 1 and `INT32_MAX`; `RK_NULL_POINTER` when `limiter` or
/// `out_wait_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_wait_micros` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_reserve(
    limiter: *const rk_rate_limiter,
    permits: i64,
    out_wait_micros: *mut i64,
) -> rk_status {
    guard("rk_rate_limiter_reserve", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_wait_micros, "out_wait_micros")?) };
        out.write(micros(limiter.limiter.reserve(permits_from_i64(permits)?)?));
        Ok(())
    })
}

/// Guava's `setRate(permitsPerSecond)`. Requests already waiting keep
/// their wait; the next request still pays for the previous one at the old
/// rate.
///
/// Returns `RK_INVALID_ARGUMENT`, changing nothing, when
/// `permits_per_second` is not positive or is NaN; `RK_NULL_POINTER` when
/// `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_set_rate(
    limiter: *const rk_rate_limiter,
    permits_per_second: f64,
) -> rk_status {
    guard("rk_rate_limiter_set_rate", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        Ok(limiter.limiter.set_rate(permits_per_second)?)
    })
}

/// Guava's `getRate()`, bit for bit, in `*out_permits_per_second`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_permits_per_second` is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_permits_per_second` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_get_rate(
    limiter: *const rk_rate_limiter,
    out_permits_per_second: *mut f64,
) -> rk_status {
    guard("rk_rate_limiter_get_rate", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_permits_per_second, "out_permits_per_second")?) };
        out.write(limiter.limiter.rate());
        Ok(())
    })
}

/// How long, in microseconds, a request made now would wait, in
/// `*out_micros` (0 when it would be granted at once); takes nothing. Guava
/// grants a request of any size at the same moment, so `permits` changes
/// nothing, but is checked like everywhere else.
///
/// Returns `RK_INVALID_ARGUMENT` when `permits` is not between 1 and
/// `INT32_MAX`; `RK_NULL_POINTER` when `limiter` or `out_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_micros` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_time_until_available(
    limiter: *const rk_rate_limiter,
    permits: i64,
    out_micros: *mut i64,
) -> rk_status {
    guard("rk_rate_limiter_time_until_available", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_micros, "out_micros")?) };
        out.write(micros(limiter.limiter.time_until_available(permits_from_i64(permits)?)?));
        Ok(())
    })
}

/// Whether `rk_rate_limiter_try_acquire(limiter, permits, timeout_micros,
/// …)` would acquire now, in `*out_can_acquire`; takes nothing (Guava's
/// package-private `canAcquire`). A negative timeout means "do not wait".
///
/// Returns `RK_INVALID_ARGUMENT` when `permits` is not between 1 and
/// `INT32_MAX`; `RK_NULL_POINTER` when `limiter` or `out_can_acquire` is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_can_acquire` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_limiter_can_acquire(
    limiter: *const rk_rate_limiter,
    permits: i64,
    timeout_micros: i64,
    out_can_acquire: *mut bool,
) -> rk_status {
    guard("rk_rate_limiter_can_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_can_acquire, "out_can_acquire")?) };
        out.write(limiter.limiter.can_acquire(permits_from_i64(permits)?, timeout(timeout_micros))?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manual_clock::{rk_manual_clock_free, rk_manual_clock_new, rk_manual_clock_now_micros};
    use core::ptr::{null, null_mut};

    #[test]
    fn the_header_constants_are_the_cores() {
        assert_eq!(RK_DEFAULT_MAX_BURST_SECONDS, ratekeeper::core::smooth::DEFAULT_MAX_BURST_SECONDS);
        assert_eq!(RK_DEFAULT_COLD_FACTOR, ratekeeper::core::smooth::DEFAULT_COLD_FACTOR);
    }

    #[test]
    fn guavas_example_on_a_manual_clock_that_outlives_its_handle() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut clock = null_mut();
            assert_eq!(rk_manual_clock_new(&mut clock), rk_status::RK_OK);
            let mut limiter = null_mut();
            assert_eq!(rk_rate_limiter_new_bursty(1.0, 1.0, clock, &mut limiter), rk_status::RK_OK);
            let mut waits = Vec::new();
            for permits in 1..=5 {
                let mut waited = -1.0;
                assert_eq!(rk_rate_limiter_acquire(limiter, permits, &mut waited), rk_status::RK_OK);
                waits.push(waited);
            }
            assert_eq!(waits, [0.0, 1.0, 2.0, 3.0, 4.0]);
            let mut now = 0;
            assert_eq!(rk_manual_clock_now_micros(clock, &mut now), rk_status::RK_OK);
            assert_eq!(now, 10_000_000);
            // The limiter holds its own reference to the clock.
            rk_manual_clock_free(clock);
            let mut micros = -1;
            assert_eq!(rk_rate_limiter_time_until_available(limiter, 1, &mut micros), rk_status::RK_OK);
            assert_eq!(micros, 5_000_000);
            rk_rate_limiter_free(limiter);
            rk_rate_limiter_free(null_mut());
            rk_manual_clock_free(null_mut());
        }
    }

    #[test]
    fn failures_name_the_argument_and_write_nothing() {
        use crate::boundary::tests::{last_argument, last_message};
        // SAFETY: as above.
        unsafe {
            let mut limiter = null_mut();
            let status = rk_rate_limiter_new_warming_up(2.0, -1, 3.0, null(), &mut limiter);
            assert_eq!(status, rk_status::RK_INVALID_ARGUMENT);
            assert!(limiter.is_null());
            assert_eq!(last_argument().as_deref(), Some("warmup_micros"));
            assert_eq!(
                last_message(),
                "rk_rate_limiter_new_warming_up: invalid argument warmup_micros = -1: must be between 0 and 9223372036854775807 microseconds (about 292,271 years)"
            );
            assert_eq!(rk_rate_limiter_new_bursty(2.0, 1.0, null(), &mut limiter), rk_status::RK_OK);
            let mut acquired = true;
            assert_eq!(rk_rate_limiter_try_acquire(limiter, -3, 0, &mut acquired), rk_status::RK_INVALID_ARGUMENT);
            assert!(acquired, "written on failure");
            assert_eq!(last_argument().as_deref(), Some("permits"));
            assert_eq!(rk_rate_limiter_try_acquire(limiter, 1, 0, null_mut()), rk_status::RK_NULL_POINTER);
            assert_eq!(last_argument().as_deref(), Some("out_acquired"));
            // The NULL out-parameter was caught before anything was taken.
            assert_eq!(rk_rate_limiter_try_acquire(limiter, 1, 0, &mut acquired), rk_status::RK_OK);
            assert!(acquired);
            assert_eq!(rk_rate_limiter_set_rate(null(), 1.0), rk_status::RK_NULL_POINTER);
            assert_eq!(last_argument().as_deref(), Some("limiter"));
            rk_rate_limiter_free(limiter);
        }
    }
}
