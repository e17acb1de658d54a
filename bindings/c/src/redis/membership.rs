//! [`rk_redis_membership`]: this process's place in a group of nodes
//! sharing limits (`ratekeeper_redis::Membership`), which counts the live
//! nodes for the local-share fallback of exact mode.

use core::ffi::c_char;
use std::sync::Arc;

use ratekeeper_redis::{Membership, RedisOption};

use super::not_in_callback;
use super::store::rk_redis_store;
use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::write_text;
use crate::status::rk_status;
use crate::text;

/// A node of a group: it heartbeats into Redis (a sorted set of the
/// group's nodes) every third of its TTL, in the background, and re-reads
/// how many nodes are live; a node that stops heartbeating drops out once
/// its TTL has passed, and one that leaves (its last reference freed)
/// drops out at once. While Redis is unreachable it keeps the last count it
/// read.
///
/// Reference-counted: a limiter that falls back to its share
/// (`rk_redis_limiter_fall_back_to_local()`) holds its own reference, so
/// the node stays in the group, heartbeating, until both are freed.
///
/// Thread safety: as `rk_limiter`; only `rk_redis_membership_free()` must
/// not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_membership {
    pub(crate) membership: Arc<Membership>,
}

/// Joins the group named `group` in `store` as a new node (with an id of
/// its own), heartbeating every third of `ttl_micros`, and stores the
/// membership in `*out_membership`. Blocks for the first heartbeat. Free
/// it with `rk_redis_membership_free()`.
///
/// Returns `RK_INVALID_ARGUMENT` when `ttl_micros` is not between 3000 and
/// 86400000000 (3 ms to a day) or `group` is not UTF-8; `RK_UNAVAILABLE`,
/// `RK_TIMEOUT` or `RK_REDIS_ERROR` when the first heartbeat fails;
/// `RK_UNSUPPORTED` from a callback; `RK_NULL_POINTER` when `store`,
/// `group` or `out_membership` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `group` is NULL or a NUL-terminated
/// string; `out_membership` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_membership_join(
    store: *const rk_redis_store,
    group: *const c_char,
    ttl_micros: i64,
    out_membership: *mut *mut rk_redis_membership,
) -> rk_status {
    guard("rk_redis_membership_join", || {
        // SAFETY: the caller's contract.
        let (store, group, out) = unsafe {
            (handle(store, "store")?, text::c_str(group, "group")?, Out::required(out_membership, "out_membership")?)
        };
        let ttl = RedisOption::Ttl.from_micros(ttl_micros)?;
        not_in_callback()?;
        let membership = Membership::join(&store.store, group, ttl)?;
        out.write(Box::into_raw(Box::new(rk_redis_membership { membership: Arc::new(membership) })));
        Ok(())
    })
}

/// Releases the caller's reference to a membership. When it was the last
/// (no limiter falls back with it), the node leaves the group at once
/// (best effort, one round trip of at most the store's timeout; otherwise
/// its TTL removes it). `NULL` does nothing.
///
/// # Safety
/// `membership` is NULL or a membership from `rk_redis_membership_join()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_membership_free(membership: *mut rk_redis_membership) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_membership_join that
    // no other call is using.
    unsafe { free_box("rk_redis_membership_free", membership) }
}

/// The live nodes of the group as last read (at least 1: this one), in
/// `*out_nodes`. Takes no round trip.
///
/// Returns `RK_NULL_POINTER` when `membership` or `out_nodes` is NULL.
///
/// # Safety
/// `membership` is NULL or a live membership; `out_nodes` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_membership_nodes(
    membership: *const rk_redis_membership,
    out_nodes: *mut u64,
) -> rk_status {
    guard("rk_redis_membership_nodes", || {
        // SAFETY: the caller's contract.
        let (membership, out) = unsafe { (handle(membership, "membership")?, Out::required(out_nodes, "out_nodes")?) };
        out.write(membership.membership.nodes());
        Ok(())
    })
}

/// Heartbeats now (the background heartbeat normally does) and stores the
/// live count Redis returned in `*out_nodes` (which may be NULL).
///
/// Returns `RK_UNAVAILABLE`, `RK_TIMEOUT` or `RK_REDIS_ERROR` when the
/// heartbeat fails (the last count is kept); `RK_UNSUPPORTED` from a
/// callback; `RK_NULL_POINTER` when `membership` is NULL.
///
/// # Safety
/// `membership` is NULL or a live membership; `out_nodes` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_membership_refresh(
    membership: *const rk_redis_membership,
    out_nodes: *mut u64,
) -> rk_status {
    guard("rk_redis_membership_refresh", || {
        // SAFETY: the caller's contract.
        let (membership, out) = unsafe { (handle(membership, "membership")?, Out::optional(out_nodes)) };
        not_in_callback()?;
        let nodes = membership.membership.refresh()?;
        if let Some(out) = out {
            out.write(nodes);
        }
        Ok(())
    })
}

/// This node's id in the group, written into `buf` as a NUL-terminated
/// string (the buffer protocol of `rk_decision_write_ratelimit()`: a
/// `buf_len` of 0 asks for the length, in `*out_len`, which never counts
/// the NUL).
///
/// Returns `RK_BUFFER_TOO_SMALL` when `buf` cannot hold the id and its NUL;
/// `RK_NULL_POINTER` when `membership`, `out_len`, or `buf` with a
/// `buf_len` above 0, is NULL.
///
/// # Safety
/// `membership` is NULL or a live membership; `buf` is NULL or valid for
/// writing `buf_len` bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_membership_node_id(
    membership: *const rk_redis_membership,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_redis_membership_node_id", || {
        // SAFETY: the caller's contract.
        let (membership, out) = unsafe { (handle(membership, "membership")?, Out::required(out_len, "out_len")?) };
        // SAFETY: the caller's contract on `buf`.
        unsafe { write_text(membership.membership.node_id(), buf, buf_len, out) }
    })
}
