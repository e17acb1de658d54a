//! [`rk_limiter`]: every admission-style algorithm behind one handle — the
//! token bucket, GCRA, the leaky bucket as a meter and as a queue, and the
//! four windows — through the std layer's `AnyLimiter<AnyClock>`.
//!
//! One handle type and one code path (`rk_limiter_check`,
//! `rk_limiter_peek`) for all of them, created from an [`rk_limiter_spec`]
//! or by a typed constructor per algorithm (`rk_limiter_new_gcra`, …).
//! The few operations only one algorithm has are named after it
//! (`rk_gcra_limit`, `rk_leaky_bucket_queue_acquire`, the token bucket's in
//! `token_bucket.rs`) and return `RK_WRONG_ALGORITHM` on another's handle.
//!
//! The handle is the inside of an `Arc` (`Arc::into_raw`): a token bucket's
//! reservations hold a reference of their own, so they stay valid after
//! `rk_limiter_free`, as a Go `Reservation` holds its limiter.

use std::sync::Arc;

use ratekeeper::{cost_from_i64, unsigned_from_i64, AnyClock, AnyLimiter, Argument, TokenBucket};

use crate::boundary::{free_arc, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::spec::{algorithm_name, algorithm_of, rk_algorithm, rk_limiter_spec};
use crate::spec::{
    RK_ALGORITHM_FIXED_WINDOW, RK_ALGORITHM_GCRA, RK_ALGORITHM_LEAKY_BUCKET_METER, RK_ALGORITHM_LEAKY_BUCKET_QUEUE,
    RK_ALGORITHM_SLIDING_LOG, RK_ALGORITHM_SLIDING_WINDOW, RK_ALGORITHM_SLIDING_WINDOW_COUNTER,
    RK_ALGORITHM_TOKEN_BUCKET,
};
use crate::status::rk_status;

/// An admission-style rate limiter of any algorithm (`RK_ALGORITHM_*`):
/// `rk_limiter_check()` admits a request of some cost or refuses it,
/// consuming nothing, and says so in an `rk_decision`.
///
/// Thread safety: every function taking a `const rk_limiter *` may be
/// called on the same handle from any number of threads at once; no
/// decision is lost or torn (the state is published atomically; the
/// sliding log, whose state is a log, takes a lock). Only
/// `rk_limiter_free()` must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_limiter {
    pub(crate) limiter: AnyLimiter<AnyClock>,
    algorithm: rk_algorithm,
}

impl rk_limiter {
    /// Builds the limiter `spec` describes on `clock` and hands it over.
    pub(crate) fn create(
        spec: &rk_limiter_spec,
        clock: Option<&rk_manual_clock>,
        out: Out<*mut rk_limiter>,
    ) -> Result<(), Failure> {
        let spec = spec.to_spec()?;
        let limiter = AnyLimiter::with_clock(&spec, rk_manual_clock::any_clock(clock))?;
        let handle = Arc::new(rk_limiter { limiter, algorithm: algorithm_of(&spec) });
        out.write(Arc::into_raw(handle).cast_mut());
        Ok(())
    }

    /// The handle's algorithm name, for messages.
    pub(crate) fn name(&self) -> &'static str {
        self.limiter.algorithm()
    }

    /// The token bucket inside, or `RK_WRONG_ALGORITHM`.
    pub(crate) fn token_bucket(&self) -> Result<&TokenBucket<AnyClock>, Failure> {
        match &self.limiter {
            AnyLimiter::TokenBucket(bucket) => Ok(bucket),
            _ => Err(self.wrong("token_bucket")),
        }
    }

    fn wrong(&self, expected: &'static str) -> Failure {
        Failure::WrongAlgorithm { argument: "limiter", expected, actual: self.name() }
    }
}

/// A limiter made by a typed constructor: its spec, then the shared path.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_limiter` is NULL or valid for
/// writing a pointer.
unsafe fn create(
    function: &'static str,
    spec: rk_limiter_spec,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    guard(function, || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        rk_limiter::create(&spec, clock, out)
    })
}

/// Creates the limiter `*spec` describes, in `*out_limiter`. Free it with
/// `rk_limiter_free()`. The typed constructors (`rk_limiter_new_gcra()`,
/// …) do the same with the parameters as arguments.
///
/// `clock`: a manual clock to read the time from (the limiter shares it),
/// or NULL for the system's monotonic clock. The limiter starts whole (a
/// full bucket, an empty window) at the clock's current time.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when `spec->algorithm`
/// is not an `RK_ALGORITHM_*`, a count is negative, a field the algorithm
/// does not use is not 0, or a parameter is outside the algorithm's range;
/// `RK_NULL_POINTER` when `spec` or `out_limiter` is NULL.
///
/// # Safety
/// `spec` is NULL or valid for reading; `clock` is NULL or a live clock;
/// `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new(
    spec: *const rk_limiter_spec,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    guard("rk_limiter_new", || {
        // SAFETY: the caller's contract.
        let (spec, clock, out) =
            unsafe { (handle(spec, "spec")?, clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        rk_limiter::create(spec, clock, out)
    })
}

/// Creates a token bucket with the semantics of Go's
/// `golang.org/x/time/rate` (`NewLimiter(rate, burst)`), to the
/// nanosecond: `burst` tokens, full at creation, refilled at `rate` tokens
/// per second (0: never; `INFINITY`: everything is admitted). Besides
/// `rk_limiter_check()` it has Go's reservations, waits and setters: the
/// `rk_token_bucket_*()` functions.
///
/// Returns `RK_INVALID_ARGUMENT` when `rate` is negative or NaN, or
/// `burst` is negative; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_limiter` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_token_bucket(
    rate: f64,
    burst: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec { algorithm: RK_ALGORITHM_TOKEN_BUCKET, rate, burst, ..Default::default() };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_token_bucket", spec, clock, out_limiter) }
}

/// Creates a GCRA limiter with redis-cell's semantics (`CL.THROTTLE key
/// max_burst count_per_period period`): `count_per_period` units per
/// `period_micros`, and up to `max_burst + 1` at once (the decisions'
/// `limit`). One time per limiter, no counters.
///
/// Returns `RK_INVALID_ARGUMENT` when `max_burst` is negative or
/// `INT64_MAX`, `count_per_period` is not positive, or `period_micros` is
/// not positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_gcra(
    max_burst: i64,
    count_per_period: i64,
    period_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec {
        algorithm: RK_ALGORITHM_GCRA,
        max_burst,
        count_per_period,
        period_micros,
        ..Default::default()
    };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_gcra", spec, clock, out_limiter) }
}

/// Creates a leaky bucket meter: a bucket of `capacity` units that leaks
/// `count_per_period` units every `period_micros`; a request that would
/// overflow it is refused, consuming nothing.
///
/// Returns `RK_INVALID_ARGUMENT` when `capacity`, `count_per_period` or
/// `period_micros` is not positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_leaky_bucket_meter(
    capacity: i64,
    count_per_period: i64,
    period_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec {
        algorithm: RK_ALGORITHM_LEAKY_BUCKET_METER,
        capacity,
        count_per_period,
        period_micros,
        ..Default::default()
    };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_leaky_bucket_meter", spec, clock, out_limiter) }
}

/// Creates a leaky bucket queue (a shaper): one unit leaves every
/// `interval_micros`, and each admitted request is given the next free
/// slot — its decision's `wait_micros` says how long to wait for it
/// (`rk_leaky_bucket_queue_acquire()` sleeps until then). A request whose
/// slot lies more than `capacity` units away is refused. The decisions'
/// `limit` is `capacity + 1`.
///
/// Returns `RK_INVALID_ARGUMENT` when `capacity` is negative or
/// `interval_micros` is not positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_leaky_bucket_queue(
    capacity: i64,
    interval_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec =
        rk_limiter_spec { algorithm: RK_ALGORITHM_LEAKY_BUCKET_QUEUE, capacity, interval_micros, ..Default::default() };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_leaky_bucket_queue", spec, clock, out_limiter) }
}

/// Creates a leaky bucket queue that saves up to `slack` slots left unused
/// while idle (uber-go/ratelimit's `WithSlack`): a request's slot is the
/// later of the next free slot and `slack × interval_micros` before now, so
/// after a pause up to `slack + 1` units go at once (wait 0) before the
/// queue spaces them again. Nothing is saved before the first admitted
/// request. Otherwise as `rk_limiter_new_leaky_bucket_queue()`, which is
/// this with `slack` 0. (Uber's `ratelimit.New(rate, WithSlack(n))` never
/// refuses: `capacity` `INT64_MAX`, `interval_micros` `1000000 / rate`.)
///
/// Returns `RK_INVALID_ARGUMENT` when `capacity` or `slack` is negative or
/// `interval_micros` is not positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_leaky_bucket_queue_with_slack(
    capacity: i64,
    interval_micros: i64,
    slack: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec {
        algorithm: RK_ALGORITHM_LEAKY_BUCKET_QUEUE,
        capacity,
        interval_micros,
        slack,
        ..Default::default()
    };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_leaky_bucket_queue_with_slack", spec, clock, out_limiter) }
}

/// Creates a fixed window limiter: at most `limit` units per window of
/// `window_micros`, windows aligned to the limiter's creation (up to twice
/// `limit` across a window boundary).
///
/// Returns `RK_INVALID_ARGUMENT` when `limit` or `window_micros` is not
/// positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_fixed_window(
    limit: i64,
    window_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec { algorithm: RK_ALGORITHM_FIXED_WINDOW, limit, window_micros, ..Default::default() };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_fixed_window", spec, clock, out_limiter) }
}

/// Creates a sliding window limiter: at most `limit` units in the last
/// `sub_windows` sub-windows of `window_micros / sub_windows` each (a ring
/// of counters).
///
/// Returns `RK_INVALID_ARGUMENT` when `limit` is not between 1 and
/// `UINT32_MAX`, `sub_windows` is not between 1 and 16, or `window_micros`
/// is not a positive multiple of `sub_windows`; as `rk_limiter_new()`
/// otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_sliding_window(
    limit: i64,
    window_micros: i64,
    sub_windows: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec {
        algorithm: RK_ALGORITHM_SLIDING_WINDOW,
        limit,
        window_micros,
        sub_windows,
        ..Default::default()
    };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_sliding_window", spec, clock, out_limiter) }
}

/// Creates a sliding log: exactly `limit` units in any window of
/// `window_micros`, from a log of the admitted requests (allocated up
/// front: 16 bytes per unit of `limit`).
///
/// Returns `RK_INVALID_ARGUMENT` when `limit` is not between 1 and
/// 1048576 or `window_micros` is not positive; as `rk_limiter_new()`
/// otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_sliding_log(
    limit: i64,
    window_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec = rk_limiter_spec { algorithm: RK_ALGORITHM_SLIDING_LOG, limit, window_micros, ..Default::default() };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_sliding_log", spec, clock, out_limiter) }
}

/// Creates a sliding window counter: about `limit` units per sliding
/// window of `window_micros`, the previous window's count weighted by how
/// much of it the sliding window still covers (two counters).
///
/// Returns `RK_INVALID_ARGUMENT` when `limit` or `window_micros` is not
/// positive; as `rk_limiter_new()` otherwise.
///
/// # Safety
/// As `rk_limiter_new_token_bucket()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_new_sliding_window_counter(
    limit: i64,
    window_micros: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_limiter,
) -> rk_status {
    let spec =
        rk_limiter_spec { algorithm: RK_ALGORITHM_SLIDING_WINDOW_COUNTER, limit, window_micros, ..Default::default() };
    // SAFETY: the caller's contract.
    unsafe { create("rk_limiter_new_sliding_window_counter", spec, clock, out_limiter) }
}

/// Frees a limiter (and its reference to its clock). A token bucket's
/// reservations keep working. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_limiter_new*()` that has not
/// been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_free(limiter: *mut rk_limiter) {
    // SAFETY: the caller's contract: NULL or the caller's reference, from
    // Arc::into_raw in rk_limiter::create, that no other call is using.
    unsafe { free_arc("rk_limiter_free", limiter) }
}

/// Admits a request of `cost` units now if the limit allows it, consuming
/// them, and stores the decision in `*out_decision`. A refusal (`allowed`
/// false) consumes nothing and is not an error. Never waits: a leaky
/// bucket queue's decision says how long to wait for the slot it gave
/// (`wait_micros`). A cost of 0 is a free look.
///
/// Returns `RK_INVALID_ARGUMENT`, consuming nothing, when `cost` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_check(
    limiter: *const rk_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_limiter_check", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.check(cost_from_i64(cost)?).into());
        Ok(())
    })
}

/// The decision `rk_limiter_check()` would make now, in `*out_decision`;
/// consumes nothing.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative; `RK_NULL_POINTER`
/// when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// As `rk_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_peek(
    limiter: *const rk_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.peek(cost_from_i64(cost)?).into());
        Ok(())
    })
}

/// Gives back `cost` units admitted earlier that should not count (a
/// request skipped, or failed before doing any work), now. A token bucket
/// gets its tokens back (capped at its burst; while reservations hold it in
/// debt, only what exceeds the debt), GCRA moves its theoretical arrival
/// time back, a meter lowers its level, a fixed window or sliding window
/// counter counts fewer in the current window (nothing once it has
/// rolled), a sliding window takes them off its newest sub-windows, a
/// sliding log drops its newest units: never more than a fresh limiter
/// holds. A leaky bucket queue gives nothing back (it hands out slots, and
/// a refund cannot tell whose it returns).
///
/// Returns `RK_INVALID_ARGUMENT`, changing nothing, when `cost` is
/// negative; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_refund(limiter: *const rk_limiter, cost: i64) -> rk_status {
    guard("rk_limiter_refund", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter")? };
        limiter.limiter.refund(cost_from_i64(cost)?);
        Ok(())
    })
}

/// The limiter's algorithm, an `RK_ALGORITHM_*`, in `*out_algorithm`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_algorithm` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_algorithm` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_limiter_algorithm(
    limiter: *const rk_limiter,
    out_algorithm: *mut rk_algorithm,
) -> rk_status {
    guard("rk_limiter_algorithm", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_algorithm, "out_algorithm")?) };
        out.write(limiter.algorithm);
        Ok(())
    })
}

/// An algorithm's name, as every language and the conformance vectors
/// spell it (`"token_bucket"`, `"gcra"`, `"leaky_bucket_meter"`,
/// `"leaky_bucket_queue"`, `"fixed_window"`, `"sliding_window"`,
/// `"sliding_log"`, `"sliding_window_counter"`), or NULL for a value that
/// is not an `RK_ALGORITHM_*`.
///
/// Never fails; the string is static and must not be freed.
#[no_mangle]
pub extern "C" fn rk_algorithm_name(algorithm: rk_algorithm) -> *const core::ffi::c_char {
    std::panic::catch_unwind(|| algorithm_name(algorithm).map_or(core::ptr::null(), |name| name.as_ptr()))
        .unwrap_or(core::ptr::null())
}

/// A GCRA limiter's limit, redis-cell's `max_burst + 1`, in `*out_limit`.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a GCRA;
/// `RK_NULL_POINTER` when `limiter` or `out_limit` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_limit` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_gcra_limit(limiter: *const rk_limiter, out_limit: *mut u64) -> rk_status {
    guard("rk_gcra_limit", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_limit, "out_limit")?) };
        let AnyLimiter::Gcra(gcra) = &limiter.limiter else { return Err(limiter.wrong("gcra")) };
        out.write(gcra.limit());
        Ok(())
    })
}

/// A leaky bucket meter's water level now, in whole units, in
/// `*out_level`.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a leaky bucket
/// meter; `RK_NULL_POINTER` when `limiter` or `out_level` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_level` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_leaky_bucket_meter_level(limiter: *const rk_limiter, out_level: *mut u64) -> rk_status {
    guard("rk_leaky_bucket_meter_level", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_level, "out_level")?) };
        let AnyLimiter::LeakyBucketMeter(meter) = &limiter.limiter else {
            return Err(limiter.wrong("leaky_bucket_meter"));
        };
        out.write(meter.level());
        Ok(())
    })
}

/// A leaky bucket queue's blocking admission: takes the next slot for
/// `cost` units and blocks the calling thread until it comes (a manual
/// clock is advanced instead), then stores the decision in
/// `*out_decision` (its `wait_micros` is the time waited). A refusal
/// returns at once, taking nothing.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a leaky bucket queue;
/// `RK_INVALID_ARGUMENT` when `cost` is negative; `RK_NULL_POINTER` when
/// `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_leaky_bucket_queue_acquire(
    limiter: *const rk_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_leaky_bucket_queue_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        let AnyLimiter::LeakyBucketQueue(queue) = &limiter.limiter else {
            return Err(limiter.wrong("leaky_bucket_queue"));
        };
        out.write(queue.acquire(cost_from_i64(cost)?).into());
        Ok(())
    })
}

/// A window's limit (`rk_limiter_new_fixed_window()`,
/// `..._sliding_window()`, `..._sliding_log()`,
/// `..._sliding_window_counter()`), as last set, in `*out_limit`.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not one of the four
/// windows; `RK_NULL_POINTER` when `limiter` or `out_limit` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_limit` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_window_limit(limiter: *const rk_limiter, out_limit: *mut u64) -> rk_status {
    guard("rk_window_limit", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_limit, "out_limit")?) };
        out.write(limiter.limiter.window_limit().ok_or_else(|| limiter.wrong("window"))?);
        Ok(())
    })
}

/// Changes a window's limit now, keeping what it has counted: a lower
/// limit refuses until the count is under it, a higher one admits the
/// difference at once (Go's `SetLimitAt` and Guava's `setRate` keep what
/// was taken alike).
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not one of the four
/// windows; `RK_INVALID_ARGUMENT`, changing nothing, when `limit` is 0,
/// negative or above the window's bound (as at creation: 2^32 − 1 for a
/// sliding window, 1048576 for a sliding log);
/// `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_window_set_limit(limiter: *const rk_limiter, limit: i64) -> rk_status {
    guard("rk_window_set_limit", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let limit = unsigned_from_i64(Argument::Limit, limit)?;
        Ok(limiter.limiter.set_window_limit(limit).ok_or_else(|| limiter.wrong("window"))??)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use crate::manual_clock::{
        rk_manual_clock_advance_micros, rk_manual_clock_free, rk_manual_clock_new, rk_manual_clock_now_micros,
    };
    use core::ffi::CStr;
    use core::ptr::{null, null_mut};

    #[test]
    fn every_algorithm_through_one_handle() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut clock = null_mut();
            assert_eq!(rk_manual_clock_new(&mut clock), rk_status::RK_OK);
            let mut queue = null_mut();
            assert_eq!(rk_limiter_new_leaky_bucket_queue(1, 100, clock, &mut queue), rk_status::RK_OK);
            let mut d = core::mem::zeroed::<rk_decision>();
            assert_eq!(rk_leaky_bucket_queue_acquire(queue, 1, &mut d), rk_status::RK_OK);
            assert_eq!((d.allowed, d.wait_micros, d.limit), (true, 0, 2));
            assert_eq!(rk_leaky_bucket_queue_acquire(queue, 1, &mut d), rk_status::RK_OK);
            assert_eq!((d.allowed, d.wait_micros), (true, 100));
            let mut now = 0;
            assert_eq!(rk_manual_clock_now_micros(clock, &mut now), rk_status::RK_OK);
            assert_eq!(now, 100, "the queue slept on the manual clock");
            let mut algorithm = 0;
            assert_eq!(rk_limiter_algorithm(queue, &mut algorithm), rk_status::RK_OK);
            assert_eq!(CStr::from_ptr(rk_algorithm_name(algorithm)).to_str(), Ok("leaky_bucket_queue"));
            let mut limit = 7;
            assert_eq!(rk_gcra_limit(queue, &mut limit), rk_status::RK_WRONG_ALGORITHM);
            assert_eq!(limit, 7);
            assert_eq!(
                last_message(),
                "rk_gcra_limit: limiter is a leaky_bucket_queue limiter; this function needs a gcra"
            );
            rk_limiter_free(queue);

            let mut gcra = null_mut();
            assert_eq!(rk_limiter_new_gcra(4, 1, 1_000_000, clock, &mut gcra), rk_status::RK_OK);
            assert_eq!(rk_gcra_limit(gcra, &mut limit), rk_status::RK_OK);
            assert_eq!(limit, 5);
            assert_eq!(rk_limiter_check(gcra, 6, &mut d), rk_status::RK_OK);
            assert_eq!((d.allowed, d.retry_after_micros), (false, crate::decision::RK_NEVER));
            assert_eq!(rk_limiter_check(gcra, -1, &mut d), rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("cost"));
            rk_limiter_free(gcra);

            let spec = rk_limiter_spec {
                algorithm: RK_ALGORITHM_LEAKY_BUCKET_METER,
                capacity: 3,
                count_per_period: 1,
                period_micros: 100,
                ..Default::default()
            };
            let mut meter = null_mut();
            assert_eq!(rk_limiter_new(&spec, clock, &mut meter), rk_status::RK_OK);
            assert_eq!(rk_limiter_check(meter, 3, &mut d), rk_status::RK_OK);
            assert_eq!(rk_manual_clock_advance_micros(clock, 100), rk_status::RK_OK);
            let mut level = 0;
            assert_eq!(rk_leaky_bucket_meter_level(meter, &mut level), rk_status::RK_OK);
            assert_eq!(level, 2);
            rk_limiter_free(meter);
            rk_manual_clock_free(clock);

            let mut none = null_mut();
            assert_eq!(rk_limiter_new_sliding_window(10, 30, 4, null(), &mut none), rk_status::RK_INVALID_ARGUMENT);
            assert!(none.is_null());
            assert_eq!(last_argument().as_deref(), Some("sub_windows"));
            assert!(rk_algorithm_name(0).is_null());
        }
    }
}
