//! [`rk_redis_rate_limiter`]: Guava's `RateLimiter` (`SmoothBursty`,
//! `SmoothWarmingUp`) shared by many processes through Redis
//! (`ratekeeper_redis::RedisRateLimiter`), with the operations of the
//! local `rk_rate_limiter`.

use core::ffi::{c_char, c_void};
use std::time::Duration;

use ratekeeper::core::smooth::permits_from_i64;
use ratekeeper::{wait_as_seconds, Argument};
use ratekeeper_redis::{RedisOption, RedisRateLimiter, RedisRateLimiterBuilder};

use super::store::rk_redis_store;
use super::{not_in_callback, rk_wait_callback, Callback};
use crate::boundary::{free_box, guard, handle, Out};
use crate::failure::Failure;
use crate::rate_limiter::{micros, timeout};
use crate::status::rk_status;
use crate::text;

/// Guava's `RateLimiter`, its state (stored permits, next free ticket,
/// rate) in one Redis hash: every operation is one atomic script run at
/// the server's time performing exactly the local limiter's steps, so
/// `acquire`/`try_acquire` from any number of processes — in any language —
/// get the waits one Guava limiter would give for the same sequence.
///
/// Like a Guava limiter, the shared one counts time from its creation: the
/// first process to connect creates it, and later ones join it, keeping
/// its rate and parameters (theirs are checked, then ignored).
///
/// Thread safety: as `rk_rate_limiter`; only `rk_redis_rate_limiter_free()`
/// must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_rate_limiter {
    limiter: RedisRateLimiter,
}

/// Connects `builder` with the idle TTL, and hands the limiter over.
fn connect(
    builder: RedisRateLimiterBuilder,
    store: &rk_redis_store,
    idle_ttl_micros: i64,
    out: Out<*mut rk_redis_rate_limiter>,
) -> Result<(), Failure> {
    let builder = match idle_ttl_micros {
        0 => builder,
        micros => builder.idle_ttl(RedisOption::IdleTtl.from_micros(micros)?),
    };
    not_in_callback()?;
    let limiter = builder.connect(&store.store)?;
    out.write(Box::into_raw(Box::new(rk_redis_rate_limiter { limiter })));
    Ok(())
}

/// Creates — or joins, when another process already has — the shared
/// `SmoothBursty` limiter named `name` in `store`, of `permits_per_second`
/// saving up to `max_burst_seconds` of permits while idle (Guava's
/// `RateLimiter.create(permitsPerSecond)` with
/// `RK_DEFAULT_MAX_BURST_SECONDS`), in `*out_limiter`; one round trip. Free
/// it with `rk_redis_rate_limiter_free()`.
///
/// `idle_ttl_micros`: the state expires after this long unused (rounded
/// to milliseconds), and a limiter made after that starts afresh — with no
/// stored permits, where an idle one would be full; 0: never expires.
///
/// Returns `RK_INVALID_ARGUMENT` as `rk_rate_limiter_new_bursty()`, or when
/// `idle_ttl_micros` is negative or `name` is not UTF-8; `RK_UNAVAILABLE`,
/// `RK_TIMEOUT`, `RK_REDIS_ERROR` or `RK_PROTOCOL_ERROR` when Redis did not
/// answer; `RK_UNSUPPORTED` from a callback; `RK_NULL_POINTER` when
/// `store`, `name` or `out_limiter` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `name` is NULL or a NUL-terminated
/// string; `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_new_bursty(
    store: *const rk_redis_store,
    name: *const c_char,
    permits_per_second: f64,
    max_burst_seconds: f64,
    idle_ttl_micros: i64,
    out_limiter: *mut *mut rk_redis_rate_limiter,
) -> rk_status {
    guard("rk_redis_rate_limiter_new_bursty", || {
        // SAFETY: the caller's contract.
        let (store, name, out) = unsafe {
            (handle(store, "store")?, text::c_str(name, "name")?, Out::required(out_limiter, "out_limiter")?)
        };
        let builder = RedisRateLimiter::builder(name, permits_per_second).max_burst_seconds(max_burst_seconds);
        connect(builder, store, idle_ttl_micros, out)
    })
}

/// Creates — or joins — the shared `SmoothWarmingUp` limiter named `name`
/// of `permits_per_second` that starts cold, `cold_factor` times slower,
/// and reaches its stable rate after `warmup_micros` of saturated use
/// (Guava's `RateLimiter.create(permitsPerSecond, warmupPeriod,
/// MICROSECONDS)` with `RK_DEFAULT_COLD_FACTOR`), in `*out_limiter`.
/// `idle_ttl_micros` as for `rk_redis_rate_limiter_new_bursty()`.
///
/// Returns `RK_INVALID_ARGUMENT` as `rk_rate_limiter_new_warming_up()`, and
/// otherwise as `rk_redis_rate_limiter_new_bursty()`.
///
/// # Safety
/// As `rk_redis_rate_limiter_new_bursty()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_new_warming_up(
    store: *const rk_redis_store,
    name: *const c_char,
    permits_per_second: f64,
    warmup_micros: i64,
    cold_factor: f64,
    idle_ttl_micros: i64,
    out_limiter: *mut *mut rk_redis_rate_limiter,
) -> rk_status {
    guard("rk_redis_rate_limiter_new_warming_up", || {
        // SAFETY: the caller's contract.
        let (store, name, out) = unsafe {
            (handle(store, "store")?, text::c_str(name, "name")?, Out::required(out_limiter, "out_limiter")?)
        };
        // The local limiter's error for a negative warm-up (a Duration
        // cannot hold one).
        let warmup = u64::try_from(warmup_micros)
            .map_err(|_| ratekeeper::Error::invalid_int(Argument::Warmup, warmup_micros))?;
        let builder = RedisRateLimiter::builder(name, permits_per_second)
            .warmup(Duration::from_micros(warmup))
            .cold_factor(cold_factor);
        connect(builder, store, idle_ttl_micros, out)
    })
}

/// Frees the caller's handle (the shared state stays in Redis). A pending
/// `_async` reservation still calls back. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_rate_limiter_new_*()` that
/// has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_free(limiter: *mut rk_redis_rate_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_rate_limiter_new_* that
    // no other call is using.
    unsafe { free_box("rk_redis_rate_limiter_free", limiter) }
}

/// Guava's `acquire(permits)` on the shared limiter: takes `permits` (one
/// round trip), then sleeps the calling thread until they are granted,
/// and stores the time waited in seconds in `*out_waited_seconds` (which
/// may be NULL).
///
/// Returns `RK_INVALID_ARGUMENT`, taking nothing, when `permits` is not
/// between 1 and `INT32_MAX`; `RK_UNAVAILABLE`, `RK_TIMEOUT`,
/// `RK_REDIS_ERROR` or `RK_PROTOCOL_ERROR` when Redis did not answer;
/// `RK_UNSUPPORTED` from a callback; `RK_NULL_POINTER` when `limiter` is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_waited_seconds` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_acquire(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    out_waited_seconds: *mut f64,
) -> rk_status {
    guard("rk_redis_rate_limiter_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_waited_seconds)) };
        let permits = permits_from_i64(permits)?;
        not_in_callback()?;
        let waited = limiter.limiter.acquire(permits)?;
        if let Some(out) = out {
            out.write(wait_as_seconds(waited));
        }
        Ok(())
    })
}

/// `rk_redis_rate_limiter_acquire()`, reporting the wait in whole
/// microseconds in `*out_waited_micros` (which may be NULL).
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_waited_micros` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_acquire_micros(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    out_waited_micros: *mut i64,
) -> rk_status {
    guard("rk_redis_rate_limiter_acquire_micros", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_waited_micros)) };
        let permits = permits_from_i64(permits)?;
        not_in_callback()?;
        let waited = limiter.limiter.acquire(permits)?;
        if let Some(out) = out {
            out.write(micros(waited));
        }
        Ok(())
    })
}

/// Guava's `tryAcquire(permits, timeout, MICROSECONDS)` on the shared
/// limiter: when `permits` can be granted within `timeout_micros`, takes
/// them, sleeps until then and stores `true` in `*out_acquired`; otherwise
/// stores `false` at once, taking nothing. A negative timeout means "do
/// not wait".
///
/// Returns as `rk_redis_rate_limiter_acquire()`, and `RK_NULL_POINTER`
/// when `out_acquired` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_acquired` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_try_acquire(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    timeout_micros: i64,
    out_acquired: *mut bool,
) -> rk_status {
    guard("rk_redis_rate_limiter_try_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_acquired, "out_acquired")?) };
        let permits = permits_from_i64(permits)?;
        not_in_callback()?;
        out.write(limiter.limiter.try_acquire(permits, timeout(timeout_micros))?);
        Ok(())
    })
}

/// Takes `permits` now without sleeping (one round trip) and stores in
/// `*out_wait_micros` how long the caller must wait before going ahead:
/// for callers with their own timers.
///
/// Returns as `rk_redis_rate_limiter_acquire()`, and `RK_NULL_POINTER`
/// when `out_wait_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_wait_micros` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_reserve(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    out_wait_micros: *mut i64,
) -> rk_status {
    guard("rk_redis_rate_limiter_reserve", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_wait_micros, "out_wait_micros")?) };
        let permits = permits_from_i64(permits)?;
        not_in_callback()?;
        out.write(micros(limiter.limiter.reserve(permits)?));
        Ok(())
    })
}

/// `rk_redis_rate_limiter_try_acquire()` without the sleep: when `permits`
/// can be granted within `timeout_micros`, takes them and stores `true` in
/// `*out_reserved` and the wait the caller owes in `*out_wait_micros`;
/// otherwise stores `false` and 0, taking nothing.
///
/// Returns as `rk_redis_rate_limiter_acquire()`, and `RK_NULL_POINTER`
/// when `out_reserved` or `out_wait_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_reserved` and
/// `out_wait_micros` are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_try_reserve(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    timeout_micros: i64,
    out_reserved: *mut bool,
    out_wait_micros: *mut i64,
) -> rk_status {
    guard("rk_redis_rate_limiter_try_reserve", || {
        // SAFETY: the caller's contract.
        let (limiter, reserved, wait) = unsafe {
            (
                handle(limiter, "limiter")?,
                Out::required(out_reserved, "out_reserved")?,
                Out::required(out_wait_micros, "out_wait_micros")?,
            )
        };
        let permits = permits_from_i64(permits)?;
        not_in_callback()?;
        let taken = limiter.limiter.try_reserve(permits, timeout(timeout_micros))?;
        reserved.write(taken.is_some());
        wait.write(taken.map_or(0, micros));
        Ok(())
    })
}

/// `rk_redis_rate_limiter_reserve()` for event loops: returns at once, and
/// `callback(user_data, status, reserved, wait_micros)` is called exactly
/// once, on the library's Redis thread, with the wait to arm a timer for
/// (see `rk_wait_callback`).
///
/// Returns `RK_OK` when the reservation is under way; `RK_INVALID_ARGUMENT`
/// when `permits` is not between 1 and `INT32_MAX`; `RK_NULL_POINTER` when
/// `limiter` or `callback` is NULL — and then the callback is never
/// called.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `callback` may be called with
/// `user_data` from another thread.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_reserve_async(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    callback: rk_wait_callback,
    user_data: *mut c_void,
) -> rk_status {
    guard("rk_redis_rate_limiter_reserve_async", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let callback = Callback::new("rk_redis_rate_limiter_reserve_async", callback, user_data)?;
        let permits = permits_from_i64(permits)?;
        limiter.limiter.reserve_with(permits, move |result| callback.reserved(result.map(Some)));
        Ok(())
    })
}

/// `rk_redis_rate_limiter_try_reserve()` for event loops, as
/// `rk_redis_rate_limiter_reserve_async()`: the callback's `reserved` says
/// whether the permits were taken within `timeout_micros`.
///
/// # Safety
/// As `rk_redis_rate_limiter_reserve_async()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_try_reserve_async(
    limiter: *const rk_redis_rate_limiter,
    permits: i64,
    timeout_micros: i64,
    callback: rk_wait_callback,
    user_data: *mut c_void,
) -> rk_status {
    guard("rk_redis_rate_limiter_try_reserve_async", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let callback = Callback::new("rk_redis_rate_limiter_try_reserve_async", callback, user_data)?;
        let permits = permits_from_i64(permits)?;
        limiter.limiter.try_reserve_with(permits, timeout(timeout_micros), move |result| callback.reserved(result));
        Ok(())
    })
}

/// Guava's `setRate(permitsPerSecond)`, for every process sharing the
/// limiter.
///
/// Returns `RK_INVALID_ARGUMENT`, changing nothing, when
/// `permits_per_second` is not positive or is NaN; the Redis statuses as
/// `rk_redis_rate_limiter_acquire()`; `RK_NULL_POINTER` when `limiter` is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_set_rate(
    limiter: *const rk_redis_rate_limiter,
    permits_per_second: f64,
) -> rk_status {
    guard("rk_redis_rate_limiter_set_rate", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        not_in_callback()?;
        Ok(limiter.limiter.set_rate(permits_per_second)?)
    })
}

/// Guava's `getRate()` of the shared limiter, bit for bit, in
/// `*out_permits_per_second` (one round trip).
///
/// Returns the Redis statuses as `rk_redis_rate_limiter_acquire()`;
/// `RK_NULL_POINTER` when `limiter` or `out_permits_per_second` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_permits_per_second` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_get_rate(
    limiter: *const rk_redis_rate_limiter,
    out_permits_per_second: *mut f64,
) -> rk_status {
    guard("rk_redis_rate_limiter_get_rate", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_permits_per_second, "out_permits_per_second")?) };
        not_in_callback()?;
        out.write(limiter.limiter.rate()?);
        Ok(())
    })
}

/// How long, in microseconds, a request made now would wait, in
/// `*out_micros` (0 when it would be granted at once); takes nothing (one
/// round trip).
///
/// Returns the Redis statuses as `rk_redis_rate_limiter_acquire()`;
/// `RK_NULL_POINTER` when `limiter` or `out_micros` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_micros` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_time_until_available(
    limiter: *const rk_redis_rate_limiter,
    out_micros: *mut i64,
) -> rk_status {
    guard("rk_redis_rate_limiter_time_until_available", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_micros, "out_micros")?) };
        not_in_callback()?;
        out.write(micros(limiter.limiter.time_until_available()?));
        Ok(())
    })
}

/// Whether a try-acquire with `timeout_micros` would acquire now, in
/// `*out_can_acquire`; takes nothing (one round trip). A negative timeout
/// means "do not wait".
///
/// Returns the Redis statuses as `rk_redis_rate_limiter_acquire()`;
/// `RK_NULL_POINTER` when `limiter` or `out_can_acquire` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_can_acquire` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_can_acquire(
    limiter: *const rk_redis_rate_limiter,
    timeout_micros: i64,
    out_can_acquire: *mut bool,
) -> rk_status {
    guard("rk_redis_rate_limiter_can_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_can_acquire, "out_can_acquire")?) };
        not_in_callback()?;
        out.write(limiter.limiter.can_acquire(timeout(timeout_micros))?);
        Ok(())
    })
}

/// A shared Guava limiter's state as `rk_redis_rate_limiter_inspect()`
/// reads it, at the server's time of the read.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rk_redis_rate_limiter_state {
    /// Permits per second.
    pub rate: f64,
    /// The permits stored now (Guava's `storedPermits`, brought up to now).
    pub stored_permits: f64,
    /// The most permits that can be stored (`maxPermits`).
    pub max_permits: f64,
    /// Microseconds until the next permit is free: what a reserve made now
    /// would wait (0 when one is free).
    pub time_until_available_micros: i64,
}

/// The shared state as of now, in `*out_state`, writing nothing (a state
/// deleted by `rk_redis_rate_limiter_reset()` reads as the new limiter the
/// next call makes). One round trip.
///
/// Returns the Redis statuses as `rk_redis_rate_limiter_acquire()`;
/// `RK_NULL_POINTER` when `limiter` or `out_state` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_state` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_inspect(
    limiter: *const rk_redis_rate_limiter,
    out_state: *mut rk_redis_rate_limiter_state,
) -> rk_status {
    guard("rk_redis_rate_limiter_inspect", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_state, "out_state")?) };
        not_in_callback()?;
        let state = limiter.limiter.inspect()?;
        out.write(rk_redis_rate_limiter_state {
            rate: state.rate,
            stored_permits: state.stored_permits,
            max_permits: state.max_permits,
            time_until_available_micros: micros(state.time_until_available),
        });
        Ok(())
    })
}

/// Deletes the shared state: every process's next call finds a new limiter
/// — no stored permits, made with the rate and parameters of the process
/// that makes it (a rate set since is forgotten). `*out_reset` (when not
/// NULL) whether there was a state.
///
/// Returns the Redis statuses as `rk_redis_rate_limiter_acquire()`;
/// `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_reset` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_rate_limiter_reset(
    limiter: *const rk_redis_rate_limiter,
    out_reset: *mut bool,
) -> rk_status {
    guard("rk_redis_rate_limiter_reset", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_reset)) };
        not_in_callback()?;
        let reset = limiter.limiter.reset()?;
        if let Some(out) = out {
            out.write(reset);
        }
        Ok(())
    })
}
