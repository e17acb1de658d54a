//! [`rk_cycle_limiter`]: Resilience4j's `AtomicRateLimiter` through the std
//! layer's `CycleLimiter<AnyClock>`. The decisions are non-blocking
//! (`rk_cycle_limiter_acquire_permission()` hands out the wait in its
//! decision); `rk_cycle_limiter_acquire_permission_blocking()` sleeps as
//! Resilience4j's `acquirePermission` does, and is what the waiting
//! callers of `rk_cycle_metrics` count.

use std::time::Duration;

use ratekeeper::{unsigned_from_i64, AnyClock, Argument, CycleConfig, CycleLimiter, Error, Value};

use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

/// Resilience4j's `RateLimiterConfig`, for `rk_cycle_limiter_new()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rk_cycle_config {
    /// Permits each cycle brings: 1 to `INT32_MAX` (Resilience4j's `int`).
    pub limit_for_period: i64,
    /// A cycle's length, at least 1 µs; cycles are counted from the
    /// limiter's creation.
    pub limit_refresh_period_micros: i64,
    /// The longest wait a request may be given, 0 or more: 0 refuses what
    /// the current cycle cannot serve.
    pub timeout_duration_micros: i64,
}

impl rk_cycle_config {
    fn to_config(self) -> Result<CycleConfig, Failure> {
        let config = CycleConfig {
            limit_for_period: unsigned_from_i64(Argument::LimitForPeriod, self.limit_for_period)?,
            limit_refresh_period_micros: self.limit_refresh_period_micros,
            timeout_micros: self.timeout_duration_micros,
        };
        config.validate()?;
        Ok(config)
    }
}

/// What a request for one permit would get now, from
/// `rk_cycle_limiter_metrics()` (Resilience4j's
/// `AtomicRateLimiterMetrics`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rk_cycle_metrics {
    /// Permits available in the current cycle; negative when permits of
    /// later cycles are reserved.
    pub available_permissions: i64,
    /// How long a request for one permit would wait, whatever the timeout.
    pub micros_to_wait: i64,
    /// The current cycle, counted from the limiter's creation.
    pub cycle: i64,
    /// Callers sleeping in `rk_cycle_limiter_acquire_permission_blocking()`.
    pub number_of_waiting_threads: u64,
}

/// Resilience4j's `AtomicRateLimiter`: `limit_for_period` permits per
/// cycle; unused permits carry over up to `limit_for_period`; a request the
/// current cycle cannot serve is reserved in the first cycle by which
/// enough permits will have come, when that wait is at most the timeout,
/// and refused (taking nothing) otherwise.
///
/// Thread safety: as `rk_limiter`; only `rk_cycle_limiter_free()` must not
/// race with other calls on the handle.
#[derive(Debug)]
pub struct rk_cycle_limiter {
    limiter: CycleLimiter<AnyClock>,
}

/// A permit count from C: 0 (asks without taking) or more.
fn permits(permits: i64) -> Result<u64, Failure> {
    u64::try_from(permits).map_err(|_| Failure::Invalid {
        argument: "permits",
        value: Value::Int(permits),
        requirement: "must be between 0 and 9223372036854775807",
    })
}

/// Creates a cycle limiter from `*config` on `clock` (a manual clock, or
/// NULL for the monotonic clock), in `*out_limiter`; its first cycle starts
/// now. Free it with `rk_cycle_limiter_free()`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when one is out of
/// range (see `rk_cycle_config`); `RK_NULL_POINTER` when `config` or
/// `out_limiter` is NULL.
///
/// # Safety
/// `config` is NULL or valid for reading; `clock` is NULL or live;
/// `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_new(
    config: *const rk_cycle_config,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_cycle_limiter,
) -> rk_status {
    guard("rk_cycle_limiter_new", || {
        // SAFETY: the caller's contract.
        let (config, clock, out) =
            unsafe { (handle(config, "config")?, clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        let config = config.to_config()?;
        let limiter = CycleLimiter::with_clock(config, rk_manual_clock::any_clock(clock))?;
        out.write(Box::into_raw(Box::new(rk_cycle_limiter { limiter })));
        Ok(())
    })
}

/// Frees a cycle limiter. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_cycle_limiter_new()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_free(limiter: *mut rk_cycle_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from
    // rk_cycle_limiter_new that no other call is using.
    unsafe { free_box("rk_cycle_limiter_free", limiter) }
}

/// Resilience4j's `acquirePermission(permits)` without the sleep: admitted
/// (the permits taken) with the `wait_micros` to wait before acting, or
/// refused, taking nothing, with the `retry_after_micros` from which the
/// same request would be reserved (`RK_NEVER`: never). The decision goes to
/// `*out_decision`. Never blocks.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_decision` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_acquire_permission(
    limiter: *const rk_cycle_limiter,
    permits: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_cycle_limiter_acquire_permission", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.check(self::permits(permits)?).into());
        Ok(())
    })
}

/// Resilience4j's `acquirePermission(permits)`: takes the permits, blocking
/// the calling thread until their cycle when they are reserved ahead, and
/// stores `true` in `*out_acquired`; or, when the wait would exceed the
/// timeout, takes nothing, blocks for the timeout as Resilience4j does and
/// stores `false`. On a manual clock it advances the clock instead.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_acquired` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_acquired` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_acquire_permission_blocking(
    limiter: *const rk_cycle_limiter,
    permits: i64,
    out_acquired: *mut bool,
) -> rk_status {
    guard("rk_cycle_limiter_acquire_permission_blocking", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_acquired, "out_acquired")?) };
        out.write(limiter.limiter.acquire_permission(self::permits(permits)?));
        Ok(())
    })
}

/// Takes the permits only if the current cycle has them: no wait, no
/// reservation ahead, whatever the timeout. The decision goes to
/// `*out_decision`.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_decision` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_try_acquire_permission(
    limiter: *const rk_cycle_limiter,
    permits: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_cycle_limiter_try_acquire_permission", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.check_now(self::permits(permits)?).into());
        Ok(())
    })
}

/// Resilience4j's `reservePermission(permits)`: takes the permits and
/// stores the wait before acting on them in `*out_wait_micros` (0: at
/// once), or, when that wait would exceed the timeout, takes nothing and
/// stores -1 (Resilience4j's answer). Never blocks.
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_wait_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_wait_micros` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_reserve_permission(
    limiter: *const rk_cycle_limiter,
    permits: i64,
    out_wait_micros: *mut i64,
) -> rk_status {
    guard("rk_cycle_limiter_reserve_permission", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_wait_micros, "out_wait_micros")?) };
        let reserved = limiter.limiter.reserve_permission(self::permits(permits)?);
        out.write(reserved.map_or(-1, |wait| i64::try_from(wait.as_micros()).unwrap_or(i64::MAX)));
        Ok(())
    })
}

/// Sets the permits per cycle from the next calculation on
/// (`changeLimitForPeriod`); the current cycle keeps its count.
///
/// Returns `RK_INVALID_ARGUMENT` naming `limit_for_period`, changing
/// nothing, when it is not between 1 and `INT32_MAX`; `RK_NULL_POINTER`
/// when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_change_limit_for_period(
    limiter: *const rk_cycle_limiter,
    limit_for_period: i64,
) -> rk_status {
    guard("rk_cycle_limiter_change_limit_for_period", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let limit = unsigned_from_i64(Argument::LimitForPeriod, limit_for_period)?;
        Ok(limiter.limiter.change_limit_for_period(limit)?)
    })
}

/// Sets the timeout for the next requests (`changeTimeoutDuration`);
/// reservations already made stand.
///
/// Returns `RK_INVALID_ARGUMENT` naming `timeout_duration_micros`,
/// changing nothing, when it is negative; `RK_NULL_POINTER` when `limiter`
/// is NULL.
///
/// # Safety
/// `limiter` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_change_timeout_duration(
    limiter: *const rk_cycle_limiter,
    timeout_duration_micros: i64,
) -> rk_status {
    guard("rk_cycle_limiter_change_timeout_duration", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let micros = u64::try_from(timeout_duration_micros)
            .map_err(|_| Error::invalid_int(Argument::TimeoutDuration, timeout_duration_micros))?;
        Ok(limiter.limiter.change_timeout_duration(Duration::from_micros(micros))?)
    })
}

/// Takes every permit left in the current cycle at once
/// (`drainPermissions`), storing how many in `*out_drained`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_drained` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_drained` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_drain_permissions(
    limiter: *const rk_cycle_limiter,
    out_drained: *mut u64,
) -> rk_status {
    guard("rk_cycle_limiter_drain_permissions", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_drained, "out_drained")?) };
        out.write(limiter.limiter.drain_permissions());
        Ok(())
    })
}

/// The metrics now, in `*out_metrics`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_metrics` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_metrics` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_metrics(
    limiter: *const rk_cycle_limiter,
    out_metrics: *mut rk_cycle_metrics,
) -> rk_status {
    guard("rk_cycle_limiter_metrics", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_metrics, "out_metrics")?) };
        let m = limiter.limiter.metrics();
        out.write(rk_cycle_metrics {
            available_permissions: m.available_permissions,
            micros_to_wait: i64::try_from(m.time_to_wait.as_micros()).unwrap_or(i64::MAX),
            cycle: m.cycle,
            number_of_waiting_threads: m.number_of_waiting_threads as u64,
        });
        Ok(())
    })
}

/// The parameters in force (after any change), in `*out_config`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_config` is NULL.
///
/// # Safety
/// `limiter` is NULL or live; `out_config` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_cycle_limiter_config(
    limiter: *const rk_cycle_limiter,
    out_config: *mut rk_cycle_config,
) -> rk_status {
    guard("rk_cycle_limiter_config", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_config, "out_config")?) };
        let c = limiter.limiter.config();
        out.write(rk_cycle_config {
            limit_for_period: c.limit_for_period as i64,
            limit_refresh_period_micros: c.limit_refresh_period_micros,
            timeout_duration_micros: c.timeout_micros,
        });
        Ok(())
    })
}
