//! Several limits on one key through Redis ([`rk_redis_composite_limiter`]):
//! `ratekeeper_redis::RedisCompositeLimiter`, every limit decided all or
//! nothing in one script run at the server's time.

use core::ffi::{c_char, c_void};

use ratekeeper::{cost_from_i64, Value};
use ratekeeper_redis::{CompositeDecision, RedisCompositeLimiter, WhenUnavailable};

use super::exact::{
    rk_when_unavailable, RK_WHEN_UNAVAILABLE_ERROR, RK_WHEN_UNAVAILABLE_FAIL_CLOSED, RK_WHEN_UNAVAILABLE_FAIL_OPEN,
};
use super::store::rk_redis_store;
use super::{max_key_bytes, not_in_callback, Callback};
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;
use crate::text;

/// Several limits on the same keys — "10 per second *and* 1,000 per hour,
/// per client" — shared through Redis and decided all or nothing in one
/// atomic script run at the server's time: a request refused by one limit
/// takes nothing from any other, and no other process's request comes in
/// between the limits (checking one `rk_redis_limiter` per limit in turn
/// would allow both). The decisions are those of an in-process
/// `rk_composite_limiter` per key. Every limit of one key lives under one
/// Redis Cluster hash tag, so it runs on a cluster too.
///
/// Keys are bytes as `rk_redis_limiter`'s (at most 256 unless
/// `rk_redis_composite_set_max_key_bytes()` says otherwise). It remembers
/// no refusals: each check is one round trip.
///
/// Thread safety: as `rk_redis_limiter`; only
/// `rk_redis_composite_free()` must not race with other calls on the
/// handle.
#[derive(Debug)]
pub struct rk_redis_composite_limiter {
    limiter: RedisCompositeLimiter,
}

/// What `rk_redis_composite_check_async()` calls with its outcome: `status`
/// `RK_OK` with the combined decision in `*decision` and each limit's in
/// `parts[0 .. parts_len]` (`parts_len` the number of limits), or the
/// failure with both NULL and `parts_len` 0. Called once, on the library's
/// Redis thread, as an `rk_decision_callback` is; the decisions are valid
/// only during the call.
pub type rk_composite_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: rk_status,
        decision: *const rk_decision,
        parts: *const rk_decision,
        parts_len: usize,
    ),
>;

type CompositeFn = unsafe extern "C" fn(*mut c_void, rk_status, *const rk_decision, *const rk_decision, usize);

impl Callback<CompositeFn> {
    /// Calls back with a composite's decisions or a failure.
    fn decided_all(self, result: Result<CompositeDecision, ratekeeper_redis::Error>) {
        let outcome = self.outcome(result, |d| {
            (rk_decision::from(d.combined), d.parts.into_iter().map(rk_decision::from).collect::<Vec<_>>())
        });
        self.call(|callback, user_data| match outcome {
            // SAFETY: the caller's contract on the callback; the decisions
            // live until it returns.
            Ok((combined, parts)) => unsafe {
                callback(user_data, rk_status::RK_OK, &combined, parts.as_ptr(), parts.len())
            },
            // SAFETY: as above.
            Err(status) => unsafe { callback(user_data, status, core::ptr::null(), core::ptr::null(), 0) },
        });
    }
}

/// Creates a composite of the `limits_len` limits in `limits` (each as
/// `rk_redis_limiter_new()` takes one), named `name` in `store`, in
/// `*out_limiter`: processes using the same store and name share each
/// key's limits, in any language. Sends nothing yet. Free it with
/// `rk_redis_composite_free()`.
///
/// Returns `RK_INVALID_ARGUMENT` when `limits_len` is 0, a limit is
/// invalid (the message names it: `limits[1]: …`) or `name` is not UTF-8;
/// `RK_UNSUPPORTED` when a limit's algorithm does not run in Redis (those
/// that do: GCRA, the token bucket, the fixed window, the sliding window
/// counter, the sliding log); `RK_NULL_POINTER` when `store`, `name`,
/// `limits` (with a `limits_len` above 0) or `out_limiter` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `name` is NULL or a NUL-terminated
/// string; `limits` is NULL or valid for reading `limits_len` specs;
/// `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_new(
    store: *const rk_redis_store,
    name: *const c_char,
    limits: *const rk_limiter_spec,
    limits_len: usize,
    out_limiter: *mut *mut rk_redis_composite_limiter,
) -> rk_status {
    guard("rk_redis_composite_new", || {
        // SAFETY: the caller's contract.
        let (store, name, out) = unsafe {
            (handle(store, "store")?, text::c_str(name, "name")?, Out::required(out_limiter, "out_limiter")?)
        };
        // SAFETY: the caller's contract.
        let specs = unsafe { crate::composite::specs(limits, limits_len) }?;
        let limiter = RedisCompositeLimiter::new(&store.store, name, &specs).map_err(|error| {
            // Which limit: the first that fails on its own (only on this
            // failing path, so nothing is built twice otherwise).
            let alone = |spec: &_| RedisCompositeLimiter::new(&store.store, name, std::slice::from_ref(spec)).is_err();
            match specs.iter().position(alone) {
                Some(i) => Failure::in_element("limits", i, error),
                None => Failure::from(error),
            }
        })?;
        out.write(Box::into_raw(Box::new(rk_redis_composite_limiter { limiter })));
        Ok(())
    })
}

/// Frees a composite (its state stays in Redis, shared, and expires there
/// once whole again). A pending `_async` decision still calls back. `NULL`
/// does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_composite_new()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_free(limiter: *mut rk_redis_composite_limiter) {
    // SAFETY: the caller's contract.
    unsafe { free_box("rk_redis_composite_free", limiter) }
}

/// How many limits the composite has, in `*out_len`: the length of the
/// `out_parts` arrays its checks fill.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_len` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_len` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_len(
    limiter: *const rk_redis_composite_limiter,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_redis_composite_len", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_len, "out_len")?) };
        out.write(limiter.limiter.parts().len());
        Ok(())
    })
}

/// Sets what checks and peeks do when Redis cannot answer:
/// `RK_WHEN_UNAVAILABLE_ERROR` (the default: the failure),
/// `_FAIL_CLOSED` (every limit refuses, with the store's retry interval)
/// or `_FAIL_OPEN` (every limit admits).
///
/// Returns `RK_INVALID_ARGUMENT` for another value (`_LOCAL_SHARE`
/// included: a composite has no local share); `RK_NULL_POINTER` when
/// `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_set_when_unavailable(
    limiter: *const rk_redis_composite_limiter,
    policy: rk_when_unavailable,
) -> rk_status {
    guard("rk_redis_composite_set_when_unavailable", || {
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
        let _ = limiter.limiter.clone().when_unavailable(policy);
        Ok(())
    })
}

/// Sets the longest key the composite takes, in bytes: 1 to 65536 (256
/// until set). A longer key is `RK_INVALID_ARGUMENT` and nothing is sent.
///
/// Returns `RK_INVALID_ARGUMENT` when `max_key_bytes` is not between 1 and
/// 65536; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_set_max_key_bytes(
    limiter: *const rk_redis_composite_limiter,
    max_key_bytes: i64,
) -> rk_status {
    guard("rk_redis_composite_set_max_key_bytes", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let bound = self::max_key_bytes(max_key_bytes)?;
        let _ = limiter.limiter.clone().max_key_bytes(bound);
        Ok(())
    })
}

/// The checks on `out_parts` before anything is sent: NULL only with a
/// `parts_len` of 0, else room for every limit.
fn parts_room(
    limiter: &rk_redis_composite_limiter,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> Result<(), Failure> {
    if parts_len > 0 && out_parts.is_null() {
        return Err(Failure::NullPointer { argument: "out_parts" });
    }
    let needed = limiter.limiter.parts().len();
    if parts_len > 0 && parts_len < needed {
        return Err(Failure::BufferTooSmall {
            argument: "parts_len",
            needed,
            given: parts_len,
            unit: "decisions (one per limit)",
        });
    }
    Ok(())
}

/// One check or peek into the caller's out-parameters.
///
/// # Safety
/// As `rk_redis_composite_check()`.
#[allow(clippy::too_many_arguments)]
unsafe fn decide(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
    peek: bool,
) -> Result<(), Failure> {
    // SAFETY: the caller's contract.
    let (limiter, key, out) = unsafe {
        (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::required(out_decision, "out_decision")?)
    };
    parts_room(limiter, out_parts, parts_len)?;
    let cost = cost_from_i64(cost)?;
    not_in_callback()?;
    let decision = if peek { limiter.limiter.peek(key, cost)? } else { limiter.limiter.check(key, cost)? };
    out.write(decision.combined.into());
    if parts_len > 0 {
        for (i, part) in decision.parts.into_iter().enumerate() {
            // SAFETY: the caller's contract; `i < needed <= parts_len`.
            unsafe { out_parts.add(i).write(part.into()) };
        }
    }
    Ok(())
}

/// Admits `cost` units for the key of `key_len` bytes at `key` in every
/// limit, or in none (one round trip; blocks at most the store's timeout),
/// storing the combined decision (the strictest limit's) in
/// `*out_decision` and, when `parts_len` is not 0, each limit's own in
/// `out_parts[0 .. len]` (`len` from `rk_redis_composite_len()`; a limit
/// that would have admitted a refused request shows its state untouched)
/// — one `RateLimit` item per policy. A refusal consumes nothing anywhere
/// and is not an error.
///
/// When Redis cannot answer, the policy decides (see
/// `rk_redis_composite_set_when_unavailable()`).
///
/// Returns `RK_BUFFER_TOO_SMALL`, sending nothing, when `parts_len` is not
/// 0 and below the number of limits; `RK_INVALID_ARGUMENT` when `cost` is
/// negative or the key too long (nothing is sent); `RK_UNAVAILABLE`,
/// `RK_TIMEOUT`, `RK_REDIS_ERROR` or `RK_PROTOCOL_ERROR` when Redis did
/// not decide; `RK_UNSUPPORTED` from a callback; `RK_NULL_POINTER` when
/// `limiter` or `out_decision` is NULL, `key` is NULL with a `key_len`
/// above 0, or `out_parts` is NULL with a `parts_len` above 0.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_decision` is NULL or valid for a write;
/// `out_parts` is NULL or valid for writing `parts_len` decisions.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_check(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> rk_status {
    guard("rk_redis_composite_check", || {
        // SAFETY: the caller's contract.
        unsafe { decide(limiter, key, key_len, cost, out_decision, out_parts, parts_len, false) }
    })
}

/// The decisions `rk_redis_composite_check()` would make now; writes
/// nothing in Redis. Arguments and statuses as
/// `rk_redis_composite_check()`.
///
/// # Safety
/// As `rk_redis_composite_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_peek(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> rk_status {
    guard("rk_redis_composite_peek", || {
        // SAFETY: the caller's contract.
        unsafe { decide(limiter, key, key_len, cost, out_decision, out_parts, parts_len, true) }
    })
}

/// `rk_redis_composite_check()` for event loops: returns at once, and
/// `callback(user_data, status, decision, parts, parts_len)` is called
/// exactly once with the outcome, on the library's Redis thread (see
/// `rk_composite_callback`).
///
/// Returns `RK_OK` when the decision is under way (and then the callback
/// will be called); `RK_INVALID_ARGUMENT` or `RK_NULL_POINTER` as
/// `rk_redis_composite_check()` (`callback` included), and then the
/// callback is never called.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes (it is copied before this returns); `callback` may be
/// called with `user_data` from another thread.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_check_async(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    callback: rk_composite_callback,
    user_data: *mut c_void,
) -> rk_status {
    guard("rk_redis_composite_check_async", || {
        // SAFETY: the caller's contract.
        let (limiter, key) = unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?) };
        let callback = Callback::new("rk_redis_composite_check_async", callback, user_data)?;
        let cost = cost_from_i64(cost)?;
        // Refused here, not through the callback (see the returns above).
        limiter.limiter.checked_key(key)?;
        // A clone: the callback may free the handle, even before this returns.
        let limiter = limiter.limiter.clone();
        limiter.check_with(key, cost, move |result| callback.decided_all(result));
        Ok(())
    })
}

/// Gives `cost` units back to every limit of the key (each as
/// `rk_redis_limiter_refund()` gives back: never more than a fresh key
/// holds), in one script run. A refund of 0 sends nothing. Not a decision:
/// the store's failure whatever the unavailability policy.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative or the key too
/// long (nothing is sent); the store's failures (`RK_UNAVAILABLE`,
/// `RK_TIMEOUT`, ...); `RK_UNSUPPORTED` from a callback;
/// `RK_NULL_POINTER` when `limiter`, or `key` with a `key_len` above 0, is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_refund(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
) -> rk_status {
    guard("rk_redis_composite_refund", || {
        // SAFETY: the caller's contract.
        let (limiter, key) = unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?) };
        let cost = cost_from_i64(cost)?;
        not_in_callback()?;
        limiter.limiter.refund(key, cost)?;
        Ok(())
    })
}

/// Forgets the key's state in every limit — every key, deleted atomically
/// — so that its next request is decided as a new key's; `*out_removed`
/// (when not NULL) whether Redis held any. Not a decision: the store's
/// failure whatever the unavailability policy.
///
/// Returns as `rk_redis_limiter_remove()`.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_removed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_composite_remove(
    limiter: *const rk_redis_composite_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_redis_composite_remove", || {
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
