//! Leased mode ([`rk_redis_leased_limiter`]): one round trip takes a batch
//! of a shared limiter's units, which this process spends locally. Made
//! from an `rk_limiter_spec` (GCRA or the token bucket), checked exactly as
//! a local limiter's, it answers with an `rk_decision`.

use core::ffi::{c_char, c_void};
use std::time::Duration;

use ratekeeper::{cost_from_i64, unsigned_from_i64, Argument};
use ratekeeper_redis::RedisLeasedLimiter;

use super::store::rk_redis_store;
use super::{checked_spec, max_key_bytes, not_in_callback, rk_decision_callback, Callback};
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;
use crate::text;

/// The design's leases: one round trip takes up to `batch` units of a
/// shared limiter (GCRA or the token bucket, in Redis) for a key, which
/// this process then spends locally, with no round trip, until they run
/// out or `lease_micros` has passed. Every unit admitted was first taken
/// from the shared limiter; what changes is when: in any interval `T` the
/// processes together admit at most `rate × (T + lease) + burst`, and up to
/// `batch` units per process per lease may go unused.
///
/// Thread safety: as `rk_limiter`; only `rk_redis_leased_limiter_free()`
/// must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_leased_limiter {
    limiter: RedisLeasedLimiter,
}

/// Creates a leased limiter named `name` in `store` over `*spec`
/// (`RK_ALGORITHM_GCRA` or `RK_ALGORITHM_TOKEN_BUCKET`), taking up to
/// `batch` units per round trip and spending them within `lease_micros`,
/// in `*out_limiter`. It shares its state with exact-mode limiters of the
/// same name and spec. Sends nothing yet. Free it with
/// `rk_redis_leased_limiter_free()`.
///
/// Returns `RK_INVALID_ARGUMENT` for a spec `rk_limiter_new()` refuses, a
/// `batch` that is not between 1 and the limit, a `lease_micros` that is
/// not positive, or a `name` that is not UTF-8; `RK_UNSUPPORTED` for
/// another algorithm; `RK_NULL_POINTER` when `store`, `name`, `spec` or
/// `out_limiter` is NULL.
///
/// # Safety
/// As `rk_redis_limiter_new()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_new(
    store: *const rk_redis_store,
    name: *const c_char,
    spec: *const rk_limiter_spec,
    batch: i64,
    lease_micros: i64,
    out_limiter: *mut *mut rk_redis_leased_limiter,
) -> rk_status {
    guard("rk_redis_leased_limiter_new", || {
        // SAFETY: the caller's contract.
        let (store, name, spec, out) = unsafe {
            (
                handle(store, "store")?,
                text::c_str(name, "name")?,
                checked_spec(spec)?,
                Out::required(out_limiter, "out_limiter")?,
            )
        };
        let batch = unsigned_from_i64(Argument::Batch, batch)?;
        // The crate refuses a lease of 0 (as `lease_micros`).
        let lease = Duration::from_micros(unsigned_from_i64(Argument::Lease, lease_micros)?);
        let limiter = RedisLeasedLimiter::new(&store.store, name, spec, batch, lease)?;
        out.write(Box::into_raw(Box::new(rk_redis_leased_limiter { limiter })));
        Ok(())
    })
}

/// Sets the longest key the leased limiter takes, in bytes, as
/// `rk_redis_limiter_set_max_key_bytes()` does (1 to 65536; 256 until set).
///
/// Returns `RK_INVALID_ARGUMENT` when `max_key_bytes` is not between 1 and
/// 65536; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_set_max_key_bytes(
    limiter: *const rk_redis_leased_limiter,
    max_key_bytes: i64,
) -> rk_status {
    guard("rk_redis_leased_limiter_set_max_key_bytes", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let bound = self::max_key_bytes(max_key_bytes)?;
        let _ = limiter.limiter.clone().max_key_bytes(bound);
        Ok(())
    })
}

/// Frees a leased limiter; units still leased are lost (the shared
/// limiter counted them). `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_leased_limiter_new()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_free(limiter: *mut rk_redis_leased_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_leased_limiter_new that
    // no other call is using.
    unsafe { free_box("rk_redis_leased_limiter_free", limiter) }
}

/// Admits `cost` units for the key from this process's lease, or takes a
/// new lease (one round trip, blocking for at most the store's timeout)
/// when it holds too few, and stores the decision in `*out_decision`. An
/// admission's `remaining` is what is left of this process's lease; a
/// refusal carries the shared limiter's retry-after.
///
/// Returns as `rk_redis_limiter_check()` (there is no unavailability
/// policy: a failed round trip is returned).
///
/// # Safety
/// As `rk_redis_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_check(
    limiter: *const rk_redis_leased_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_leased_limiter_check", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
            )
        };
        let cost = cost_from_i64(cost)?;
        not_in_callback()?;
        out.write(limiter.limiter.check(key, cost)?.into());
        Ok(())
    })
}

/// `rk_redis_leased_limiter_check()` for event loops, as
/// `rk_redis_limiter_check_async()`: a decision from the lease calls back
/// at once, on this thread.
///
/// # Safety
/// As `rk_redis_limiter_check_async()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_check_async(
    limiter: *const rk_redis_leased_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    callback: rk_decision_callback,
    user_data: *mut c_void,
) -> rk_status {
    guard("rk_redis_leased_limiter_check_async", || {
        // SAFETY: the caller's contract.
        let (limiter, key) = unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?) };
        let callback = Callback::new("rk_redis_leased_limiter_check_async", callback, user_data)?;
        let cost = cost_from_i64(cost)?;
        limiter.limiter.checked_key(key)?;
        let limiter = limiter.limiter.clone();
        limiter.check_with(key, cost, move |result| callback.decided(result));
        Ok(())
    })
}

/// The decision `rk_redis_leased_limiter_check()` would make now on this
/// node, in `*out_decision`, taking nothing: from this node's lease when it
/// holds `cost` (no round trip), else Redis's shared state plus that lease
/// — the lease the check would take, computed without taking it. Other
/// nodes' leases are not seen (taken from the shared state already).
///
/// Returns as `rk_redis_leased_limiter_check()`.
///
/// # Safety
/// As `rk_redis_leased_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_peek(
    limiter: *const rk_redis_leased_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_leased_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
            )
        };
        let cost = cost_from_i64(cost)?;
        not_in_callback()?;
        out.write(limiter.limiter.peek(key, cost)?.into());
        Ok(())
    })
}

/// Forgets `key`: deletes its shared state in Redis (atomically) and drops
/// this node's lease on it; `*out_removed` (when not NULL) whether Redis
/// held a state. Other nodes spend the leases they hold: each may still
/// admit up to `batch` units for the key within its lease's lifetime.
///
/// Returns as `rk_redis_limiter_remove()`.
///
/// # Safety
/// As `rk_redis_limiter_remove()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_leased_limiter_remove(
    limiter: *const rk_redis_leased_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_redis_leased_limiter_remove", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) =
            unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::optional(out_removed)) };
        not_in_callback()?;
        let removed = limiter.limiter.remove(key)?;
        if let Some(out) = out {
            out.write(removed);
        }
        Ok(())
    })
}
