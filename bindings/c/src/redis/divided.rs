//! Divided mode ([`rk_redis_divided_limiter`]): this process joins a group
//! and enforces its share of the limit, `limit ÷ live nodes`, locally.
//! Made from an `rk_limiter_spec` (any algorithm), checked exactly as a
//! local limiter's, it answers with an `rk_decision`.

use core::ffi::c_char;

use ratekeeper::cost_from_i64;
use ratekeeper_redis::{RedisDividedLimiter, RedisOption};

use super::store::rk_redis_store;
use super::{checked_spec, max_key_bytes, max_keys, not_in_callback};
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;
use crate::text;

/// The design's divided mode: this process joins the group `name` (a
/// heartbeat into Redis every third of the TTL, in the background) and
/// enforces `limit ÷ live nodes` on its own, per key — a decision never
/// waits for Redis. The shares add up to the whole limit when every node
/// gets its share of the traffic; a busy node is refused while an idle one
/// has room (exact and leased modes do not pay that price). When the count
/// changes, every key starts whole again.
///
/// Thread safety: as `rk_limiter`; only `rk_redis_divided_limiter_free()`
/// must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_divided_limiter {
    limiter: RedisDividedLimiter,
}

/// Joins the group `name` in `store` (blocking for the first heartbeat,
/// then heartbeating every third of `heartbeat_ttl_micros`) and creates a
/// limiter enforcing this node's share of `*spec` (any `RK_ALGORITHM_*`)
/// for at most `max_keys` keys, in `*out_limiter`. Free it with
/// `rk_redis_divided_limiter_free()`, which leaves the group.
///
/// Returns `RK_INVALID_ARGUMENT` for a spec `rk_limiter_new()` refuses, a
/// `heartbeat_ttl_micros` not between 3000 and 86400000000 (3 ms to a
/// day), a `max_keys` not between 1 and 2^40, or a `name` that is not
/// UTF-8; `RK_UNAVAILABLE`, `RK_TIMEOUT` or `RK_REDIS_ERROR` when the
/// first heartbeat fails; `RK_UNSUPPORTED` from a callback;
/// `RK_NULL_POINTER` when `store`, `name`, `spec` or `out_limiter` is
/// NULL.
///
/// # Safety
/// As `rk_redis_limiter_new()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_new(
    store: *const rk_redis_store,
    name: *const c_char,
    spec: *const rk_limiter_spec,
    heartbeat_ttl_micros: i64,
    max_keys: i64,
    out_limiter: *mut *mut rk_redis_divided_limiter,
) -> rk_status {
    guard("rk_redis_divided_limiter_new", || {
        // SAFETY: the caller's contract.
        let (store, name, spec, out) = unsafe {
            (
                handle(store, "store")?,
                text::c_str(name, "name")?,
                checked_spec(spec)?,
                Out::required(out_limiter, "out_limiter")?,
            )
        };
        let ttl = RedisOption::HeartbeatTtl.from_micros(heartbeat_ttl_micros)?;
        let max_keys = self::max_keys(max_keys)?;
        not_in_callback()?;
        let limiter = RedisDividedLimiter::new(&store.store, name, spec, ttl, max_keys)?;
        out.write(Box::into_raw(Box::new(rk_redis_divided_limiter { limiter })));
        Ok(())
    })
}

/// Frees a divided limiter and leaves its group (best effort, one round
/// trip of at most the store's timeout; otherwise the TTL removes this
/// node). `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_redis_divided_limiter_new()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_free(limiter: *mut rk_redis_divided_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_divided_limiter_new that
    // no other call is using.
    unsafe { free_box("rk_redis_divided_limiter_free", limiter) }
}

/// Decides `cost` units for the key with this node's share, in
/// `*out_decision`: no round trip, never blocks (the heartbeats only
/// update the share). Keys are any bytes, as for `rk_redis_limiter_check()`.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative or the key is
/// longer than the limiter's `max_key_bytes`; `RK_NULL_POINTER` when
/// `limiter`, `out_decision`, or `key` with a `key_len` above 0, is NULL.
///
/// # Safety
/// As `rk_redis_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_check(
    limiter: *const rk_redis_divided_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_divided_limiter_check", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
            )
        };
        out.write(limiter.limiter.check(key, cost_from_i64(cost)?)?.into());
        Ok(())
    })
}

/// Sets the longest key the divided limiter takes, in bytes, as
/// `rk_redis_limiter_set_max_key_bytes()` does (1 to 65536; 256 until
/// set). The keys it holds are forgotten (their next requests start
/// whole), so set it before the first decision.
///
/// Returns `RK_INVALID_ARGUMENT` when `max_key_bytes` is not between 1 and
/// 65536; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_set_max_key_bytes(
    limiter: *const rk_redis_divided_limiter,
    max_key_bytes: i64,
) -> rk_status {
    guard("rk_redis_divided_limiter_set_max_key_bytes", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let bound = self::max_key_bytes(max_key_bytes)?;
        let _ = limiter.limiter.clone().max_key_bytes(bound);
        Ok(())
    })
}

/// The live nodes of the group as last read (at least 1), in
/// `*out_nodes`: this node's share is the limit divided by it.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_nodes` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_nodes` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_nodes(
    limiter: *const rk_redis_divided_limiter,
    out_nodes: *mut u64,
) -> rk_status {
    guard("rk_redis_divided_limiter_nodes", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_nodes, "out_nodes")?) };
        out.write(limiter.limiter.nodes());
        Ok(())
    })
}

/// The decision `rk_redis_divided_limiter_check()` would make now with this
/// node's share, in `*out_decision`, taking nothing (divided mode keeps no
/// per-key state in Redis: no round trip).
///
/// Returns as `rk_redis_divided_limiter_check()`.
///
/// # Safety
/// As `rk_redis_divided_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_peek(
    limiter: *const rk_redis_divided_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_redis_divided_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
            )
        };
        out.write(limiter.limiter.peek(key, cost_from_i64(cost)?)?.into());
        Ok(())
    })
}

/// Forgets `key` in this node's share: its next request starts from a
/// whole share; `*out_removed` (when not NULL) whether the share held it.
/// Other nodes' shares keep their counts: call it on every node to reset
/// the whole limit.
///
/// Returns `RK_INVALID_ARGUMENT` when the key is longer than the limiter's
/// `max_key_bytes`; `RK_NULL_POINTER` when `limiter`, or `key` with a
/// `key_len` above 0, is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_removed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_divided_limiter_remove(
    limiter: *const rk_redis_divided_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_redis_divided_limiter_remove", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) =
            unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::optional(out_removed)) };
        let removed = limiter.limiter.remove(key)?;
        if let Some(out) = out {
            out.write(removed);
        }
        Ok(())
    })
}
