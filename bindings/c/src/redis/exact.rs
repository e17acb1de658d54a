//! Exact mode ([`rk_redis_limiter`]): every decision one atomic script
//! run at the server's time, with the unavailability policy. Made from an
//! `rk_limiter_spec`, checked exactly as a local limiter's, it answers with
//! an `rk_decision`.

use core::ffi::{c_char, c_void};
use std::sync::Arc;

use ratekeeper::{cost_from_i64, Value};
use ratekeeper_redis::{RedisLimiter, WhenUnavailable};

use super::membership::rk_redis_membership;
use super::store::rk_redis_store;
use super::{checked_spec, max_key_bytes, max_keys, not_in_callback, rk_decision_callback, Callback};
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;
use crate::text;

/// What an exact-mode decision does when Redis cannot answer (down,
/// unreachable, slower than the store's timeout): one of the
/// `RK_WHEN_UNAVAILABLE_*` constants. One policy for errors and timeouts
/// alike.
pub type rk_when_unavailable = u32;

/// Return the failure (`RK_UNAVAILABLE`, `RK_TIMEOUT`) and let the caller
/// decide. The default.
pub const RK_WHEN_UNAVAILABLE_ERROR: rk_when_unavailable = 0;
/// Refuse every request, with a retry-after of the store's retry interval:
/// nothing is admitted while Redis is away.
pub const RK_WHEN_UNAVAILABLE_FAIL_CLOSED: rk_when_unavailable = 1;
/// Admit every request: nothing is limited while Redis is away (a
/// deliberate choice of availability over protection).
pub const RK_WHEN_UNAVAILABLE_FAIL_OPEN: rk_when_unavailable = 2;
/// Decide locally with this node's share of the limit, `limit ÷ the last
/// known number of live nodes`: set with
/// `rk_redis_limiter_fall_back_to_local()`, which gives the node count.
pub const RK_WHEN_UNAVAILABLE_LOCAL_SHARE: rk_when_unavailable = 3;

/// An admission-style limiter whose state lives in Redis, per key: every
/// decision is one atomic script run (GCRA with redis-cell's reply, the
/// token bucket, the fixed window, the sliding window counter or the
/// sliding log), timed by the server's clock, so every process using the
/// same name and Redis shares one limit per key and decides exactly as one
/// in-process limiter would.
///
/// A refusal with a retry-after is remembered: the same key is refused
/// locally, with no round trip, until then (never later than the server
/// would) — `rk_redis_limiter_set_remember_refusals()` turns that off.
///
/// A key is any bytes (`key`, `key_len`), as a keyed limiter's: the same
/// bytes another language's string or byte string of them gives, so C,
/// Python and Node share a key's limit. It is at most 256 bytes long unless
/// `rk_redis_limiter_set_max_key_bytes()` says otherwise; a longer one is
/// `RK_INVALID_ARGUMENT` (naming `key`) and nothing is sent.
///
/// Thread safety: as `rk_limiter`; only `rk_redis_limiter_free()` must not
/// race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_limiter {
    limiter: RedisLimiter,
}

/// Creates an exact-mode limiter named `name` in `store` running `*spec`,
/// in `*out_limiter`: processes using the same store (the same Redis) and
/// name share its keys' state — in any language. Sends nothing yet. Free
/// it with `rk_redis_limiter_free()`.
///
/// The algorithms that run in Redis are `RK_ALGORITHM_GCRA`,
/// `RK_ALGORITHM_TOKEN_BUCKET`, `RK_ALGORITHM_FIXED_WINDOW`,
/// `RK_ALGORITHM_SLIDING_WINDOW_COUNTER` and `RK_ALGORITHM_SLIDING_LOG`.
/// The name may be any text (it is escaped into the keys).
///
/// Returns `RK_INVALID_ARGUMENT` for a spec `rk_limiter_new()` refuses or a
/// `name` that is not UTF-8; `RK_UNSUPPORTED` for another algorithm;
/// `RK_NULL_POINTER` when `store`, `name`, `spec` or `out_limiter` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `name` is NULL or a NUL-terminated
/// string; `spec` is NULL or valid for reading; `out_limiter` is NULL or
/// valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_new(
    store: *const rk_redis_store,
    name: *const c_char,
    spec: *const rk_limiter_spec,
    out_limiter: *mut *mut rk_redis_limiter,
) -> rk_status {
    guard("rk_redis_limiter_new", || {
        // SAFETY: the caller's contract.
        let (store, name, spec, out) = unsafe {
            (
                handle(store, "store")?,
                text::c_str(name, "name")?,
                checked_spec(spec)?,
                Out::required(out_limiter, "out_limiter")?,
            )
        };
        let limiter = RedisLimiter::new(&store.store, name, spec)?;
        out.write(Box::into_raw(Box::new(rk_redis_limiter { limiter })));
        Ok(())
    })
}

/// Frees a limiter (its state stays in Redis, shared, and expires there
/// once whole again). A pending `_async` decision still calls back.
/// `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_limiter_new()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_free(limiter: *mut rk_redis_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_limiter_new that
    // no other call is using.
    unsafe { free_box("rk_redis_limiter_free", limiter) }
}

/// Sets what decisions do when Redis cannot answer:
/// `RK_WHEN_UNAVAILABLE_ERROR` (the default), `_FAIL_CLOSED` or
/// `_FAIL_OPEN`. (`_LOCAL_SHARE` is set by
/// `rk_redis_limiter_fall_back_to_local()`, which gives what it needs.)
///
/// Returns `RK_INVALID_ARGUMENT` for another value, `_LOCAL_SHARE`
/// included; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_set_when_unavailable(
    limiter: *const rk_redis_limiter,
    policy: rk_when_unavailable,
) -> rk_status {
    guard("rk_redis_limiter_set_when_unavailable", || {
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
                    requirement: "must be RK_WHEN_UNAVAILABLE_ERROR, _FAIL_CLOSED or _FAIL_OPEN \
                                  (rk_redis_limiter_fall_back_to_local() sets _LOCAL_SHARE)",
                })
            }
        };
        // Clones share the limiter's settings.
        let _ = limiter.limiter.clone().when_unavailable(policy);
        Ok(())
    })
}

/// Sets the `RK_WHEN_UNAVAILABLE_LOCAL_SHARE` policy: while Redis cannot
/// answer, decisions are made in this process with its share of the
/// limit, `limit ÷ the live nodes` as `membership` last counted them
/// (never the whole limit in every process), for at most `max_keys` keys;
/// they are back on Redis as soon as it answers, and each outage starts
/// from whole shares. The limiter holds its own reference to `membership`.
///
/// Returns `RK_INVALID_ARGUMENT` when `max_keys` is not between 1 and
/// 2^40; `RK_NULL_POINTER` when `limiter` or `membership` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `membership` is NULL or a live
/// membership.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_fall_back_to_local(
    limiter: *const rk_redis_limiter,
    membership: *const rk_redis_membership,
    max_keys: i64,
) -> rk_status {
    guard("rk_redis_limiter_fall_back_to_local", || {
        // SAFETY: the caller's contract.
        let (limiter, membership) = unsafe { (handle(limiter, "limiter")?, handle(membership, "membership")?) };
        let max_keys = self::max_keys(max_keys)?;
        limiter.limiter.clone().fall_back_to_local(Arc::clone(&membership.membership), max_keys)?;
        Ok(())
    })
}

/// Sets the longest key the limiter takes, in bytes: 1 to 65536 (256 until
/// set). A longer key is `RK_INVALID_ARGUMENT` (naming `key`, with its
/// length as the value) and nothing is sent. The local share of
/// `RK_WHEN_UNAVAILABLE_LOCAL_SHARE` takes the same keys.
///
/// Returns `RK_INVALID_ARGUMENT` when `max_key_bytes` is not between 1 and
/// 65536; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_set_max_key_bytes(
    limiter: *const rk_redis_limiter,
    max_key_bytes: i64,
) -> rk_status {
    guard("rk_redis_limiter_set_max_key_bytes", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let bound = self::max_key_bytes(max_key_bytes)?;
        // Clones share the limiter's settings.
        let _ = limiter.limiter.clone().max_key_bytes(bound);
        Ok(())
    })
}

/// Whether refusals are remembered and served locally until their
/// retry-after (on by default; see `rk_redis_limiter`).
///
/// Returns `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_set_remember_refusals(
    limiter: *const rk_redis_limiter,
    remember: bool,
) -> rk_status {
    guard("rk_redis_limiter_set_remember_refusals", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let _ = limiter.limiter.clone().remember_refusals(remember);
        Ok(())
    })
}

/// Admits `cost` units for the key of `key_len` bytes at `key` if the
/// shared limit allows it, consuming them (one round trip, or none when a
/// remembered refusal decides), and stores the decision in
/// `*out_decision`; blocks the calling thread for at most the store's
/// timeout. A refusal consumes nothing and is not an error.
///
/// The key is any bytes, of at most the limiter's `max_key_bytes` (see
/// `rk_redis_limiter`).
///
/// When Redis cannot answer, the policy decides: `RK_UNAVAILABLE` or
/// `RK_TIMEOUT` under `RK_WHEN_UNAVAILABLE_ERROR`, a decision under the
/// others.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative or the key is
/// longer than the limiter's `max_key_bytes` (nothing is sent then);
/// `RK_UNAVAILABLE`, `RK_TIMEOUT`, `RK_REDIS_ERROR` or
/// `RK_PROTOCOL_ERROR` when Redis did not decide; `RK_UNSUPPORTED` from a
/// callback; `RK_NULL_POINTER` when `limiter`, `out_decision`, or `key`
/// with a `key_len` above 0, is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_decision` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_check(
    limiter: *const rk_redis_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_limiter_check", || {
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

/// The decision `rk_redis_limiter_check()` would make now, in
/// `*out_decision`; consumes nothing (one round trip). Under
/// `RK_WHEN_UNAVAILABLE_LOCAL_SHARE` a peek while Redis is away returns
/// the failure (a peek takes nothing, so it has no share to look at).
///
/// Returns as `rk_redis_limiter_check()`.
///
/// # Safety
/// As `rk_redis_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_peek(
    limiter: *const rk_redis_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_limiter_peek", || {
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

/// `rk_redis_limiter_check()` for event loops: returns at once, and
/// `callback(user_data, status, decision)` is called exactly once with the
/// outcome — on the library's Redis thread, or on this thread before this
/// returns when no round trip is needed (see `rk_decision_callback`).
///
/// Returns `RK_OK` when the decision is under way (and then the callback
/// will be called); `RK_INVALID_ARGUMENT` or `RK_NULL_POINTER` as
/// `rk_redis_limiter_check()` (`callback` included), and then the
/// callback is never called.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes (it is copied before this returns); `callback` may be
/// called with `user_data` from another thread.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_check_async(
    limiter: *const rk_redis_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    callback: rk_decision_callback,
    user_data: *mut c_void,
) -> rk_status {
    guard("rk_redis_limiter_check_async", || {
        // SAFETY: the caller's contract.
        let (limiter, key) = unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?) };
        let callback = Callback::new("rk_redis_limiter_check_async", callback, user_data)?;
        let cost = cost_from_i64(cost)?;
        // Refused here, not through the callback (see the returns above).
        limiter.limiter.checked_key(key)?;
        // A clone: the callback may free the handle, even before this returns.
        let limiter = limiter.limiter.clone();
        limiter.check_with(key, cost, move |result| callback.decided(result));
        Ok(())
    })
}

/// The limit: the most units the limiter admits at once (a GCRA's
/// `max_burst + 1`, a bucket's burst, a window's limit), in `*out_limit`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_limit` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_limit` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_limit(limiter: *const rk_redis_limiter, out_limit: *mut u64) -> rk_status {
    guard("rk_redis_limiter_limit", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_limit, "out_limit")?) };
        out.write(limiter.limiter.limit());
        Ok(())
    })
}

/// Forgets `key`'s state in Redis — every key its algorithm keeps, deleted
/// atomically — so that its next request is decided as a new key's, with
/// the whole limit (`rk_keyed_limiter_remove()` for a Redis limiter;
/// `limits`' `clear`, rate-limiter-flexible's `delete`): `*out_removed`
/// (when not NULL) whether Redis held a state (false for a key never
/// seen). This limiter's remembered refusal for the key goes too; other
/// processes' run out by their retry-after. Not a decision: the store's
/// failure whatever the unavailability policy.
///
/// Returns `RK_INVALID_ARGUMENT` when the key is longer than the limiter's
/// `max_key_bytes`; the store's failures (`RK_UNAVAILABLE`, `RK_TIMEOUT`,
/// ...); `RK_UNSUPPORTED` from a callback of the store's thread;
/// `RK_NULL_POINTER` when `limiter`, or `key` with a `key_len` above 0, is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_removed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_remove(
    limiter: *const rk_redis_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_redis_limiter_remove", || {
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

/// Gives `cost` units admitted earlier for the key back — a request that
/// was skipped or failed (express-rate-limit's `decrement`) — with the same
/// semantics per algorithm as `rk_limiter_refund()`: never more than a
/// fresh key holds, nothing once the units have aged out. One script run
/// at the server's time; this limiter's remembered refusal for the key is
/// dropped (what was given back may admit what it refused). A refund of 0
/// sends nothing. Not a decision: the store's failure whatever the
/// unavailability policy (the caller may ignore it).
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative or the key is
/// longer than the limiter's `max_key_bytes` (nothing is sent then); the
/// store's failures (`RK_UNAVAILABLE`, `RK_TIMEOUT`, ...);
/// `RK_UNSUPPORTED` from a callback of the store's thread;
/// `RK_NULL_POINTER` when `limiter`, or `key` with a `key_len` above 0, is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_limiter_refund(
    limiter: *const rk_redis_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
) -> rk_status {
    guard("rk_redis_limiter_refund", || {
        // SAFETY: the caller's contract.
        let (limiter, key) = unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?) };
        let cost = cost_from_i64(cost)?;
        not_in_callback()?;
        limiter.limiter.refund(key, cost)?;
        Ok(())
    })
}
