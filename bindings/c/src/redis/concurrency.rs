//! The concurrency limit shared through Redis
//! ([`rk_redis_concurrency_limiter`]): permits held as leases
//! ([`rk_redis_concurrency_lease`]) that expire on the server's clock.
//! Every rule is the crate's; this module checks pointers and converts.

use core::ffi::c_char;
use std::ffi::CString;

use ratekeeper::{unsigned_from_i64, Argument, Value};
use ratekeeper_redis::{ConcurrencyLease, RedisConcurrencyLimiter, RedisOption, WhenUnavailable};

use super::exact::{
    rk_when_unavailable, RK_WHEN_UNAVAILABLE_ERROR, RK_WHEN_UNAVAILABLE_FAIL_CLOSED, RK_WHEN_UNAVAILABLE_FAIL_OPEN,
};
use super::not_in_callback;
use super::store::rk_redis_store;
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::status::rk_status;
use crate::text;

/// A limit of permits held at once, shared by every process that uses the
/// same name on the same Redis (Sentinel's cluster concurrency tokens,
/// Hystrix's semaphore across processes). A permit is a lease
/// (`rk_redis_concurrency_lease`) that expires `lease_ttl_micros` after it
/// was acquired or last renewed, by the server's clock: released exactly
/// once, renewed by long holders, and given back at its expiry when its
/// holder dies (`kill -9`, a lost host), with no process alive to do it.
///
/// Thread safety: as `rk_limiter`; only
/// `rk_redis_concurrency_limiter_free()` must not race with other calls on
/// the handle.
#[derive(Debug)]
pub struct rk_redis_concurrency_limiter {
    limiter: RedisConcurrencyLimiter,
}

/// A lease of an `rk_redis_concurrency_limiter`: release it with
/// `rk_redis_concurrency_limiter_release()`, then free it with
/// `rk_redis_concurrency_lease_free()` (freeing releases nothing: an
/// unreleased lease expires by itself).
#[derive(Debug)]
pub struct rk_redis_concurrency_lease {
    lease: ConcurrencyLease,
    id: CString,
}

/// Creates the shared concurrency limit `name` in `store`, of `limit`
/// permits held at once (1 to `INT64_MAX`), each lease lasting
/// `lease_ttl_micros` (1 ms to a day) after it was acquired or renewed, in
/// `*out_limiter`. Sends nothing yet. Free it with
/// `rk_redis_concurrency_limiter_free()`.
///
/// Returns `RK_INVALID_ARGUMENT` for a `limit` or `lease_ttl_micros` out of
/// range (naming `limit` or `lease_ttl_micros`) or a `name` that is not
/// UTF-8; `RK_NULL_POINTER` when `store`, `name` or `out_limiter` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `name` is NULL or a NUL-terminated
/// string; `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_new(
    store: *const rk_redis_store,
    name: *const c_char,
    limit: i64,
    lease_ttl_micros: i64,
    out_limiter: *mut *mut rk_redis_concurrency_limiter,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_new", || {
        // SAFETY: the caller's contract.
        let (store, name, out) = unsafe {
            (handle(store, "store")?, text::c_str(name, "name")?, Out::required(out_limiter, "out_limiter")?)
        };
        let limit = unsigned_from_i64(Argument::Limit, limit)?;
        let ttl = RedisOption::LeaseTtl.from_micros(lease_ttl_micros)?;
        let limiter = RedisConcurrencyLimiter::new(&store.store, name, limit, ttl)?;
        out.write(Box::into_raw(Box::new(rk_redis_concurrency_limiter { limiter })));
        Ok(())
    })
}

/// Sets what an acquire does when Redis cannot answer:
/// `RK_WHEN_UNAVAILABLE_ERROR` (the default: the failure is returned),
/// `_FAIL_CLOSED` (refused) or `_FAIL_OPEN` (admitted with a lease Redis
/// does not hold: `rk_redis_concurrency_lease_recorded()` is false).
/// Releases and renewals return the failure whatever the policy.
///
/// Returns `RK_INVALID_ARGUMENT` for another value (`_LOCAL_SHARE`
/// included: a concurrency limit has no share to fall back on);
/// `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_set_when_unavailable(
    limiter: *const rk_redis_concurrency_limiter,
    policy: rk_when_unavailable,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_set_when_unavailable", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let policy = match policy {
            RK_WHEN_UNAVAILABLE_ERROR => WhenUnavailable::Error,
            RK_WHEN_UNAVAILABLE_FAIL_CLOSED => WhenUnavailable::FailClosed,
            RK_WHEN_UNAVAILABLE_FAIL_OPEN => WhenUnavailable::FailOpen,
            other => {
                return Err(Failure::Invalid {
                    argument: "policy",
                    value: Value::Int(i64::from(other)),
                    requirement: "must be RK_WHEN_UNAVAILABLE_ERROR, _FAIL_CLOSED or _FAIL_OPEN",
                })
            }
        };
        // Clones share the limiter's settings.
        let _ = limiter.limiter.clone().when_unavailable(policy)?;
        Ok(())
    })
}

/// Frees a limiter (leases still held expire by themselves; leases made
/// from it stay valid to free). `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_concurrency_limiter_new()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_free(limiter: *mut rk_redis_concurrency_limiter) {
    // SAFETY: the caller's contract: NULL or a live box no other call uses.
    unsafe { free_box("rk_redis_concurrency_limiter_free", limiter) }
}

/// Acquires a lease on `permits` (1 to 2^31 − 1) if the live leases leave
/// room: one round trip, blocking for at most the store's timeout. Stores a
/// new lease in `*out_lease` when admitted and NULL when refused; the
/// decision goes to `*out_decision` unless it is NULL (a refusal's
/// `retry_after_micros` is how long until enough leases expire if none is
/// released or renewed; `RK_NEVER` for more permits than the limit).
///
/// Returns `RK_INVALID_ARGUMENT` for `permits` out of range; the store's
/// failures (`RK_UNAVAILABLE`, `RK_TIMEOUT`, ...) under
/// `RK_WHEN_UNAVAILABLE_ERROR`; `RK_UNSUPPORTED` from a callback of the
/// store's thread; `RK_NULL_POINTER` when `limiter` or `out_lease` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write; `out_lease` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_try_acquire(
    limiter: *const rk_redis_concurrency_limiter,
    permits: i64,
    out_decision: *mut rk_decision,
    out_lease: *mut *mut rk_redis_concurrency_lease,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_try_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out_decision, out_lease) = unsafe {
            (handle(limiter, "limiter")?, Out::optional(out_decision), Out::required(out_lease, "out_lease")?)
        };
        let permits = u64::try_from(permits).map_err(|_| ratekeeper::Error::invalid_int(Argument::Permits, permits))?;
        not_in_callback()?;
        let (decision, lease) = limiter.limiter.try_acquire(permits)?;
        let lease = match lease {
            Some(lease) => {
                // Hex digits: never a NUL inside.
                let id = CString::new(lease.id()).map_err(|_| Failure::Panic(Box::new("a lease id with a NUL")))?;
                Box::into_raw(Box::new(rk_redis_concurrency_lease { lease, id }))
            }
            None => core::ptr::null_mut(),
        };
        if let Some(out) = out_decision {
            out.write(decision.into());
        }
        out_lease.write(lease);
        Ok(())
    })
}

/// Gives `lease` back: `*out_released` is true if this released it, false
/// if it was released before or had expired (nothing freed then). The
/// lease is not freed: free it with `rk_redis_concurrency_lease_free()`.
///
/// Returns the store's failures; `RK_UNSUPPORTED` from a callback of the
/// store's thread; `RK_NULL_POINTER` when `limiter`, `lease` or
/// `out_released` is NULL.
///
/// # Safety
/// `limiter` and `lease` are NULL or live; `out_released` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_release(
    limiter: *const rk_redis_concurrency_limiter,
    lease: *const rk_redis_concurrency_lease,
    out_released: *mut bool,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_release", || {
        // SAFETY: the caller's contract.
        let (limiter, lease, out) = unsafe {
            (handle(limiter, "limiter")?, handle(lease, "lease")?, Out::required(out_released, "out_released")?)
        };
        not_in_callback()?;
        out.write(limiter.limiter.release(&lease.lease)?);
        Ok(())
    })
}

/// Extends a live `lease` to the lease TTL from now (the server's):
/// `*out_renewed` is true, or false if it was released or had expired (it
/// holds nothing then).
///
/// Returns as `rk_redis_concurrency_limiter_release()`.
///
/// # Safety
/// As `rk_redis_concurrency_limiter_release()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_renew(
    limiter: *const rk_redis_concurrency_limiter,
    lease: *const rk_redis_concurrency_lease,
    out_renewed: *mut bool,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_renew", || {
        // SAFETY: the caller's contract.
        let (limiter, lease, out) = unsafe {
            (handle(limiter, "limiter")?, handle(lease, "lease")?, Out::required(out_renewed, "out_renewed")?)
        };
        not_in_callback()?;
        out.write(limiter.limiter.renew(&lease.lease)?);
        Ok(())
    })
}

/// Stores in `*out_held` the permits the live leases hold now (expired ones
/// reclaimed first): one round trip.
///
/// Returns the store's failures; `RK_NULL_POINTER` when `limiter` or
/// `out_held` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_held` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_held(
    limiter: *const rk_redis_concurrency_limiter,
    out_held: *mut u64,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_held", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_held, "out_held")?) };
        not_in_callback()?;
        out.write(limiter.limiter.held()?);
        Ok(())
    })
}

/// The lease's id in Redis (hex digits, unique between processes), valid
/// until the lease is freed; NULL when `lease` is NULL.
///
/// # Safety
/// `lease` is NULL or a live lease.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_lease_id(lease: *const rk_redis_concurrency_lease) -> *const c_char {
    // SAFETY: the caller's contract.
    match unsafe { lease.as_ref() } {
        Some(lease) => lease.id.as_ptr(),
        None => core::ptr::null(),
    }
}

/// The permits the lease holds; 0 when `lease` is NULL.
///
/// # Safety
/// `lease` is NULL or a live lease.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_lease_permits(lease: *const rk_redis_concurrency_lease) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { lease.as_ref() }.map_or(0, |lease| lease.lease.permits())
}

/// Whether Redis holds the lease: false for one admitted by
/// `RK_WHEN_UNAVAILABLE_FAIL_OPEN` while Redis could not answer, and when
/// `lease` is NULL.
///
/// # Safety
/// `lease` is NULL or a live lease.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_lease_recorded(lease: *const rk_redis_concurrency_lease) -> bool {
    // SAFETY: the caller's contract.
    unsafe { lease.as_ref() }.is_some_and(|lease| lease.lease.is_recorded())
}

/// Frees a lease (releasing nothing: release it first, or it expires by
/// itself). `NULL` does nothing.
///
/// # Safety
/// `lease` is NULL or a lease from
/// `rk_redis_concurrency_limiter_try_acquire()` that has not been freed,
/// and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_lease_free(lease: *mut rk_redis_concurrency_lease) {
    // SAFETY: the caller's contract: NULL or a live box no other call uses.
    unsafe { free_box("rk_redis_concurrency_lease_free", lease) }
}

/// The decision `rk_redis_concurrency_limiter_try_acquire()` would make for
/// `permits` now, in `*out_decision`, taking no lease and writing nothing
/// (expired leases are counted out, not reclaimed): one round trip.
///
/// Returns `RK_INVALID_ARGUMENT` for `permits` out of range; the store's
/// failures under `RK_WHEN_UNAVAILABLE_ERROR`; `RK_UNSUPPORTED` from a
/// callback of the store's thread; `RK_NULL_POINTER` when `limiter` or
/// `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_peek(
    limiter: *const rk_redis_concurrency_limiter,
    permits: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        let permits = u64::try_from(permits).map_err(|_| ratekeeper::Error::invalid_int(Argument::Permits, permits))?;
        not_in_callback()?;
        out.write(limiter.limiter.peek(permits)?.into());
        Ok(())
    })
}

/// Deletes every lease at once: the whole limit is free again;
/// `*out_reset` (when not NULL) whether any state was held. Holders are not
/// told (their releases and renewals answer false), so until they finish up
/// to the limit more permits are in use: for a limiter whose holders are
/// gone.
///
/// Returns the store's failures; `RK_UNSUPPORTED` from a callback of the
/// store's thread; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_reset` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_concurrency_limiter_reset(
    limiter: *const rk_redis_concurrency_limiter,
    out_reset: *mut bool,
) -> rk_status {
    guard("rk_redis_concurrency_limiter_reset", || {
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
