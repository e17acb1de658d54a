//! The distributed limiters of `ratekeeper-redis` for C: the store
//! ([`rk_redis_store`]), exact mode ([`rk_redis_limiter`], with its
//! unavailability policy), leased mode ([`rk_redis_leased_limiter`]),
//! several limits all or nothing ([`rk_redis_composite_limiter`]), divided
//! mode ([`rk_redis_divided_limiter`]), membership
//! ([`rk_redis_membership`]), Guava's limiter shared through Redis
//! ([`rk_redis_rate_limiter`]) and the concurrency limit shared as leases
//! ([`rk_redis_concurrency_limiter`]).
//!
//! Every call that needs Redis has a blocking form, which waits on the
//! calling thread (at most the store's timeout per round trip), and the
//! decisions an `_async` form for event loops: it returns at once, and the
//! crate's runtime thread calls a C callback with the outcome (the crate's
//! `check_with`/`reserve_with`). [`Callback`] is that bridge: it converts
//! the outcome inside a panic boundary, records a failure as that thread's
//! last error (so the callback can read `rk_last_error_message()`), and
//! calls the C function exactly once.
//!
//! A blocking call made from such a callback would wait for the very
//! thread it runs on; it returns `RK_UNSUPPORTED` instead ([`not_in_callback`]).
//!
//! The failures of Redis are statuses of their own (`RK_UNAVAILABLE`,
//! `RK_TIMEOUT`, `RK_REDIS_ERROR`, `RK_PROTOCOL_ERROR`, `RK_UNSUPPORTED`;
//! see `failure.rs`), never `RK_INVALID_ARGUMENT`: a bad argument to a
//! Redis limiter is the same error as to a local one, and nothing is sent.
//! The options only these limiters take (a store's timeouts, a heartbeat
//! or idle TTL) are checked by the crate (`ratekeeper_redis::RedisOption`),
//! from the microseconds given here, and reported under the C names.
//!
//! | module | owns |
//! |---|---|
//! | `store` | `rk_redis_store`: connecting, options |
//! | `membership` | `rk_redis_membership` |
//! | `exact` | exact mode, with its unavailability policy |
//! | `composite` | several exact-mode limits on one key, all or nothing |
//! | `leased` | leased mode |
//! | `divided` | divided mode |
//! | `smooth` | Guava's limiter shared through Redis |
//! | `concurrency` | the concurrency limit shared as leases |

pub mod store;

pub mod membership;

pub mod exact;

pub mod composite;

pub mod leased;

pub mod divided;
pub mod smooth;

pub mod concurrency;

use core::ffi::c_void;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use ratekeeper::keyed::{MaxKeyBytes, MAX_KEYS};
use ratekeeper::{unsigned_from_i64, AnyCore, Argument, Decision, LimiterSpec};

use crate::boundary::{handle, record};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;

/// What an `_async` decision calls with its outcome: `status` is `RK_OK`
/// and `decision` points to the decision, or `status` is the failure (as
/// the blocking form would have returned it) and `decision` is NULL; in
/// both cases `user_data` is what the caller passed.
///
/// Called exactly once per call that returned `RK_OK`, on the library's
/// Redis thread — or on the calling thread, before the call returns, when
/// the decision needs no round trip (a remembered refusal, a lease). It
/// should return quickly (it holds up every Redis reply of the process
/// while it runs): hand the decision to your event loop (a pipe, an
/// eventfd, a queue) and return. `*decision` is valid only during the
/// call. Inside it, `rk_last_error_message()` describes a failure. It may
/// free the limiter, and make other `_async` calls; blocking `rk_redis_*`
/// calls return `RK_UNSUPPORTED` there.
pub type rk_decision_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, status: rk_status, decision: *const rk_decision)>;

/// What an `_async` reservation of a shared Guava limiter calls with its
/// outcome: `status` `RK_OK` with `reserved` (always true for
/// `rk_redis_rate_limiter_reserve_async()`; for
/// `rk_redis_rate_limiter_try_reserve_async()`, whether the permits were
/// taken) and the wait the caller owes before going ahead, in
/// microseconds; or a failure, with `reserved` false and `wait_micros` 0.
///
/// Called as an `rk_decision_callback` is: once, on the library's Redis
/// thread, quickly.
pub type rk_wait_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, status: rk_status, reserved: bool, wait_micros: i64)>;

thread_local! {
    /// Whether this thread is running a C callback (no destructor, so no
    /// allocation on any thread).
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// `Err(RK_UNSUPPORTED)` inside a callback: a blocking call there would
/// wait for the thread it blocks (the crate's one runtime thread).
pub(crate) fn not_in_callback() -> Result<(), Failure> {
    if IN_CALLBACK.with(Cell::get) {
        return Err(ratekeeper_redis::Error::Unsupported(
            "a blocking call from an _async callback would wait for its own thread: use an _async form there",
        )
        .into());
    }
    Ok(())
}

/// A C callback and its user data, to be called once from another thread.
pub(crate) struct Callback<F> {
    function: &'static str,
    callback: F,
    user_data: *mut c_void,
}

// SAFETY: the caller of an `_async` function promises that the callback
// may be called, with its user data, from the library's Redis thread.
unsafe impl<F> Send for Callback<F> {}

impl<F: Copy> Callback<F> {
    /// The callback argument of `function`: `RK_NULL_POINTER` when NULL.
    pub(crate) fn new(function: &'static str, callback: Option<F>, user_data: *mut c_void) -> Result<Self, Failure> {
        let callback = callback.ok_or(Failure::NullPointer { argument: "callback" })?;
        Ok(Callback { function, callback, user_data })
    }

    /// Converts `result` in a panic boundary; a failure becomes this
    /// thread's last error and its status.
    fn outcome<T, U>(
        &self,
        result: Result<T, ratekeeper_redis::Error>,
        convert: impl FnOnce(T) -> U,
    ) -> Result<U, rk_status> {
        let converted = catch_unwind(AssertUnwindSafe(|| result.map(convert).map_err(Failure::from)));
        match converted {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(failure)) => Err(record(self.function, &failure)),
            Err(payload) => Err(record(self.function, &Failure::Panic(payload))),
        }
    }

    /// Runs the C callback with `IN_CALLBACK` set.
    fn call(&self, f: impl FnOnce(F, *mut c_void)) {
        let outer = IN_CALLBACK.with(|c| c.replace(true));
        f(self.callback, self.user_data);
        IN_CALLBACK.with(|c| c.set(outer));
    }
}

type DecisionFn = unsafe extern "C" fn(*mut c_void, rk_status, *const rk_decision);
type WaitFn = unsafe extern "C" fn(*mut c_void, rk_status, bool, i64);

impl Callback<DecisionFn> {
    /// Calls back with a decision or a failure.
    pub(crate) fn decided(self, result: Result<Decision, ratekeeper_redis::Error>) {
        let outcome = self.outcome(result, rk_decision::from);
        self.call(|callback, user_data| match outcome {
            // SAFETY: the caller's contract on the callback; the decision
            // lives until it returns.
            Ok(decision) => unsafe { callback(user_data, rk_status::RK_OK, &decision) },
            // SAFETY: as above.
            Err(status) => unsafe { callback(user_data, status, core::ptr::null()) },
        });
    }
}

impl Callback<WaitFn> {
    /// Calls back with a reservation (`None`: not reserved) or a failure.
    pub(crate) fn reserved(self, result: Result<Option<Duration>, ratekeeper_redis::Error>) {
        let outcome = self.outcome(result, |wait| wait.map(crate::rate_limiter::micros));
        self.call(|callback, user_data| {
            let (status, reserved, wait) = match outcome {
                Ok(Some(wait)) => (rk_status::RK_OK, true, wait),
                Ok(None) => (rk_status::RK_OK, false, 0),
                Err(status) => (status, false, 0),
            };
            // SAFETY: the caller's contract on the callback.
            unsafe { callback(user_data, status, reserved, wait) }
        });
    }
}

/// The limiter's parameters from C, checked as a local limiter's (the
/// std layer's errors) before anything is sent to Redis.
///
/// # Safety
/// `spec` is NULL or valid for reading.
pub(crate) unsafe fn checked_spec(spec: *const rk_limiter_spec) -> Result<LimiterSpec, Failure> {
    // SAFETY: the caller's contract.
    let spec = unsafe { handle(spec, "spec") }?.to_spec()?;
    AnyCore::new(&spec)?;
    Ok(spec)
}

/// The longest key a limiter takes, from C: 1 to 65536.
pub(crate) fn max_key_bytes(max_key_bytes: i64) -> Result<MaxKeyBytes, Failure> {
    let bytes = unsigned_from_i64(Argument::MaxKeyBytes, max_key_bytes)?;
    Ok(MaxKeyBytes::new(usize::try_from(bytes).unwrap_or(usize::MAX))?)
}

/// A local keyed limiter's bound, as `rk_keyed_options.max_keys`.
pub(crate) fn max_keys(max_keys: i64) -> Result<usize, Failure> {
    let keys = unsigned_from_i64(Argument::MaxKeys, max_keys)?;
    match usize::try_from(keys) {
        Ok(keys) if (1..=MAX_KEYS).contains(&keys) => Ok(keys),
        _ => Err(ratekeeper::Error::invalid_uint(Argument::MaxKeys, keys).into()),
    }
}
