//! [`rk_concurrency_limiter`]: at most `limit` requests in flight, the
//! limit fixed or learned (Netflix concurrency-limits' gradient rule and
//! AIMD), through the std layer's `ConcurrencyLimiter<AnyClock>`; and
//! [`rk_permit`], the handle a request holds while in flight.
//!
//! A permit is a heap handle that `rk_permit_release()` consumes, never a
//! plain value: one that is never released is a leak that valgrind and
//! LeakSanitizer report, rather than a limiter silently one short. Like
//! the limiter handle (the inside of an `Arc`), a permit holds a
//! reference to its limiter, so it can be released after
//! `rk_concurrency_limiter_free()`.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{
    unsigned_from_i64, AimdConfig, AnyClock, Argument, ConcurrencyLimiter, ConcurrencyPolicy, GradientConfig, Outcome,
    Permit, Value,
};

use crate::boundary::{free_arc, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

/// How a request that held a permit ended: one of the `RK_OUTCOME_*`
/// constants.
pub type rk_outcome = u32;

/// It completed: its round-trip time is a sample for an adaptive limit
/// (Netflix's `onSuccess`).
pub const RK_OUTCOME_SUCCESS: rk_outcome = 0;
/// It was dropped, timed out or rejected downstream: a congestion signal
/// (Netflix's `onDropped`).
pub const RK_OUTCOME_DROPPED: rk_outcome = 1;
/// It ended in a way that says nothing about the service (a client error,
/// a cancellation): no sample (Netflix's `onIgnore`).
pub const RK_OUTCOME_IGNORED: rk_outcome = 2;

/// The gradient rule's parameters (Netflix's `GradientLimit`), for
/// `rk_concurrency_limiter_new_gradient()`. Start from
/// `rk_gradient_config_default()` and change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_gradient_config {
    /// The limit to start from, between `min_limit` and `max_limit`.
    pub initial_limit: i64,
    /// The smallest limit a decrease may reach, at least 1.
    pub min_limit: i64,
    /// The largest limit.
    pub max_limit: i64,
    /// How much of a decrease to apply at once, above 0 and at most 1.
    pub smoothing: f64,
    /// How much slower than the no-load round trip still counts as no
    /// queueing, at least 1.
    pub rtt_tolerance: f64,
    /// The headroom added to the limit, at most `max_limit`.
    pub queue_size: i64,
    /// The factor applied on a drop, 0.5 to 1.
    pub backoff_ratio: f64,
    /// Samples between probes for a new no-load round trip; 0: never.
    pub probe_interval: i64,
}

/// AIMD's parameters (Netflix's `AIMDLimit`), for
/// `rk_concurrency_limiter_new_aimd()`. Start from
/// `rk_aimd_config_default()` and change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_aimd_config {
    /// The limit to start from, between `min_limit` and `max_limit`.
    pub initial_limit: i64,
    /// The smallest limit, at least 1.
    pub min_limit: i64,
    /// The largest limit.
    pub max_limit: i64,
    /// The factor applied on a drop or a timeout, at least 0.5 and below 1.
    pub backoff_ratio: f64,
    /// A round trip above this counts as a drop (at least 1 µs).
    pub rtt_timeout_micros: i64,
}

/// A limiter of requests in flight. A request takes an `rk_permit` when it
/// starts (`rk_concurrency_limiter_try_acquire()`) and releases it, saying
/// how it went, when it ends (`rk_permit_release()`); an adaptive limit
/// learns from their round-trip times.
///
/// Thread safety: as `rk_limiter`; only `rk_concurrency_limiter_free()`
/// must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_concurrency_limiter {
    limiter: ConcurrencyLimiter<AnyClock>,
}

/// A request's permit from `rk_concurrency_limiter_try_acquire()`: release
/// it exactly once with `rk_permit_release()`, which frees it. Until then
/// it counts as in flight, even after `rk_concurrency_limiter_free()`. A
/// permit may be released from any thread, but only once.
#[derive(Debug)]
pub struct rk_permit {
    limiter: Arc<rk_concurrency_limiter>,
    permit: Permit,
}

fn count(argument: Argument, value: i64) -> Result<u64, Failure> {
    Ok(unsigned_from_i64(argument, value)?)
}

impl rk_gradient_config {
    fn to_config(self) -> Result<GradientConfig, Failure> {
        Ok(GradientConfig {
            initial_limit: count(Argument::InitialLimit, self.initial_limit)?,
            min_limit: count(Argument::MinLimit, self.min_limit)?,
            max_limit: count(Argument::MaxLimit, self.max_limit)?,
            smoothing: self.smoothing,
            rtt_tolerance: self.rtt_tolerance,
            queue_size: count(Argument::QueueSize, self.queue_size)?,
            backoff_ratio: self.backoff_ratio,
            probe_interval: count(Argument::ProbeInterval, self.probe_interval)?,
        })
    }
}

impl rk_aimd_config {
    fn to_config(self) -> Result<AimdConfig, Failure> {
        Ok(AimdConfig {
            initial_limit: count(Argument::InitialLimit, self.initial_limit)?,
            min_limit: count(Argument::MinLimit, self.min_limit)?,
            max_limit: count(Argument::MaxLimit, self.max_limit)?,
            backoff_ratio: self.backoff_ratio,
            rtt_timeout_micros: self.rtt_timeout_micros,
        })
    }
}

/// A count from the core as C's `int64_t` (the core's are at most
/// `i64::MAX`).
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Netflix's defaults for the gradient rule, in `*out_config`: initial
/// limit 50, minimum 1, maximum 1000, smoothing 0.2, tolerance 2.0, queue
/// size 4, backoff 0.9, a probe every 1000 samples.
///
/// Returns `RK_NULL_POINTER` when `out_config` is NULL.
///
/// # Safety
/// `out_config` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_gradient_config_default(out_config: *mut rk_gradient_config) -> rk_status {
    guard("rk_gradient_config_default", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_config, "out_config") }?;
        let d = GradientConfig::default();
        out.write(rk_gradient_config {
            initial_limit: signed(d.initial_limit),
            min_limit: signed(d.min_limit),
            max_limit: signed(d.max_limit),
            smoothing: d.smoothing,
            rtt_tolerance: d.rtt_tolerance,
            queue_size: signed(d.queue_size),
            backoff_ratio: d.backoff_ratio,
            probe_interval: signed(d.probe_interval),
        });
        Ok(())
    })
}

/// Netflix's defaults for AIMD, in `*out_config`: initial limit 20,
/// minimum 20, maximum 200, backoff 0.9, timeout 5 s.
///
/// Returns `RK_NULL_POINTER` when `out_config` is NULL.
///
/// # Safety
/// `out_config` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_aimd_config_default(out_config: *mut rk_aimd_config) -> rk_status {
    guard("rk_aimd_config_default", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_config, "out_config") }?;
        let d = AimdConfig::default();
        out.write(rk_aimd_config {
            initial_limit: signed(d.initial_limit),
            min_limit: signed(d.min_limit),
            max_limit: signed(d.max_limit),
            backoff_ratio: d.backoff_ratio,
            rtt_timeout_micros: d.rtt_timeout_micros,
        });
        Ok(())
    })
}

/// Hands a new limiter with `policy` on `clock` to the caller.
fn create(
    policy: ConcurrencyPolicy,
    clock: Option<&rk_manual_clock>,
    out: Out<*mut rk_concurrency_limiter>,
) -> Result<(), Failure> {
    let limiter = ConcurrencyLimiter::with_clock(policy, rk_manual_clock::any_clock(clock));
    out.write(Arc::into_raw(Arc::new(rk_concurrency_limiter { limiter })).cast_mut());
    Ok(())
}

/// Creates a limiter of at most `limit` requests in flight, in
/// `*out_limiter`; free it with `rk_concurrency_limiter_free()`. `clock`: a
/// manual clock (round trips are measured on it), or NULL for the
/// monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT` when `limit` is not positive;
/// `RK_NULL_POINTER` when `out_limiter` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_limiter` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_new_fixed(
    limit: i64,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_concurrency_limiter,
) -> rk_status {
    guard("rk_concurrency_limiter_new_fixed", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        create(ConcurrencyPolicy::fixed(count(Argument::Limit, limit)?)?, clock, out)
    })
}

/// Creates a limiter whose limit the gradient rule sets (Netflix's
/// `GradientLimit`), from `*config`, in `*out_limiter`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when a parameter is
/// outside its range (see `rk_gradient_config`); `RK_NULL_POINTER` when
/// `config` or `out_limiter` is NULL.
///
/// # Safety
/// `config` is NULL or valid for reading; `clock` is NULL or a live clock;
/// `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_new_gradient(
    config: *const rk_gradient_config,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_concurrency_limiter,
) -> rk_status {
    guard("rk_concurrency_limiter_new_gradient", || {
        // SAFETY: the caller's contract.
        let (config, clock, out) =
            unsafe { (handle(config, "config")?, clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        create(ConcurrencyPolicy::gradient(config.to_config()?)?, clock, out)
    })
}

/// Creates a limiter whose limit AIMD sets (Netflix's `AIMDLimit`), from
/// `*config`, in `*out_limiter`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when a parameter is
/// outside its range (see `rk_aimd_config`); `RK_NULL_POINTER` when
/// `config` or `out_limiter` is NULL.
///
/// # Safety
/// As `rk_concurrency_limiter_new_gradient()`.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_new_aimd(
    config: *const rk_aimd_config,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_concurrency_limiter,
) -> rk_status {
    guard("rk_concurrency_limiter_new_aimd", || {
        // SAFETY: the caller's contract.
        let (config, clock, out) =
            unsafe { (handle(config, "config")?, clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        create(ConcurrencyPolicy::aimd(config.to_config()?)?, clock, out)
    })
}

/// Frees the caller's handle of a limiter. Permits still out keep it
/// alive until they are released. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_concurrency_limiter_new_*()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_free(limiter: *mut rk_concurrency_limiter) {
    // SAFETY: the caller's contract: NULL or the caller's reference, from
    // Arc::into_raw in create, that no other call is using.
    unsafe { free_arc("rk_concurrency_limiter_free", limiter) }
}

/// Takes a permit if fewer than the limit are in flight. Stores a new
/// permit in `*out_permit` when admitted — release it with
/// `rk_permit_release()` when the request ends — and NULL when refused.
/// The decision goes to `*out_decision` unless it is NULL (a refusal's
/// `retry_after_micros` is 0: nothing can foresee when a request ends).
///
/// Returns `RK_NULL_POINTER`, taking nothing, when `limiter` or
/// `out_permit` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write; `out_permit` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_try_acquire(
    limiter: *const rk_concurrency_limiter,
    out_decision: *mut rk_decision,
    out_permit: *mut *mut rk_permit,
) -> rk_status {
    guard("rk_concurrency_limiter_try_acquire", || {
        // SAFETY: the caller's contract.
        let (limiter_ref, out_decision, out_permit) = unsafe {
            (handle(limiter, "limiter")?, Out::optional(out_decision), Out::required(out_permit, "out_permit")?)
        };
        let (decision, permit) = limiter_ref.limiter.try_acquire();
        let handle = match permit {
            Some(permit) => {
                // SAFETY: `limiter` came from Arc::into_raw (create) and is
                // live: this takes a reference of the permit's own.
                let shared = unsafe {
                    Arc::increment_strong_count(limiter);
                    Arc::from_raw(limiter)
                };
                Box::into_raw(Box::new(rk_permit { limiter: shared, permit }))
            }
            None => core::ptr::null_mut(),
        };
        if let Some(out) = out_decision {
            out.write(decision.into());
        }
        out_permit.write(handle);
        Ok(())
    })
}

/// Releases a permit and frees it: the request it stood for has ended with
/// `outcome` (an `RK_OUTCOME_*`). Its round-trip time is measured now; a
/// success or a drop is a sample for an adaptive limit. The new limit goes
/// to `*out_limit` unless it is NULL. Do not use the permit again.
///
/// Returns `RK_INVALID_ARGUMENT`, releasing nothing (the permit is still
/// yours), when `outcome` is not an `RK_OUTCOME_*`; `RK_NULL_POINTER` when
/// `permit` is NULL. After any other status the permit is gone.
///
/// # Safety
/// `permit` is NULL or a permit from `rk_concurrency_limiter_try_acquire()`
/// that has not been released, and no other call is using it; `out_limit`
/// is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_permit_release(
    permit: *mut rk_permit,
    outcome: rk_outcome,
    out_limit: *mut u64,
) -> rk_status {
    guard("rk_permit_release", || {
        // SAFETY: the caller's contract.
        let out = unsafe {
            handle(permit.cast_const(), "permit")?;
            Out::optional(out_limit)
        };
        let outcome = match outcome {
            RK_OUTCOME_SUCCESS => Outcome::Success,
            RK_OUTCOME_DROPPED => Outcome::Dropped,
            RK_OUTCOME_IGNORED => Outcome::Ignored,
            other => {
                return Err(Failure::Invalid {
                    argument: "outcome",
                    value: Value::Int(i64::from(other)),
                    requirement: "must be RK_OUTCOME_SUCCESS, RK_OUTCOME_DROPPED or RK_OUTCOME_IGNORED",
                })
            }
        };
        // SAFETY: the caller's contract: a live box from try_acquire, now
        // taken back (the permit is consumed even if what follows panics).
        let permit = unsafe { Box::from_raw(permit) };
        let limit = permit.limiter.limiter.release(permit.permit, outcome);
        if let Some(out) = out {
            out.write(limit);
        }
        Ok(())
    })
}

/// Feeds an adaptive limit a sample measured elsewhere, without a permit:
/// a request that took `rtt_micros` while `in_flight` requests were in
/// flight, `dropped` or not. The new limit goes to `*out_limit` unless it
/// is NULL. A fixed limit ignores samples.
///
/// Returns `RK_INVALID_ARGUMENT` when `rtt_micros` or `in_flight` is
/// negative; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_limit` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_sample(
    limiter: *const rk_concurrency_limiter,
    rtt_micros: i64,
    in_flight: i64,
    dropped: bool,
    out_limit: *mut u64,
) -> rk_status {
    guard("rk_concurrency_limiter_sample", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_limit)) };
        let rtt = Duration::from_micros(count(Argument::Rtt, rtt_micros)?);
        let limit = limiter.limiter.sample(rtt, count(Argument::InFlight, in_flight)?, dropped)?;
        if let Some(out) = out {
            out.write(limit);
        }
        Ok(())
    })
}

/// The current limit, in `*out_limit`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_limit` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_limit` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_limit(
    limiter: *const rk_concurrency_limiter,
    out_limit: *mut u64,
) -> rk_status {
    guard("rk_concurrency_limiter_limit", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_limit, "out_limit")?) };
        out.write(limiter.limiter.limit());
        Ok(())
    })
}

/// The requests in flight now (permits taken and not yet released), in
/// `*out_in_flight`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_in_flight` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_in_flight` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_concurrency_limiter_in_flight(
    limiter: *const rk_concurrency_limiter,
    out_in_flight: *mut u64,
) -> rk_status {
    guard("rk_concurrency_limiter_in_flight", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_in_flight, "out_in_flight")?) };
        out.write(limiter.limiter.in_flight());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::last_argument;
    use core::ptr::{null, null_mut};

    #[test]
    fn defaults_are_the_cores_and_valid() {
        let mut g = core::mem::MaybeUninit::uninit();
        let mut a = core::mem::MaybeUninit::uninit();
        // SAFETY: valid out-pointers; written on RK_OK.
        unsafe {
            assert_eq!(rk_gradient_config_default(g.as_mut_ptr()), rk_status::RK_OK);
            assert_eq!(rk_aimd_config_default(a.as_mut_ptr()), rk_status::RK_OK);
            let (g, a) = (g.assume_init(), a.assume_init());
            assert_eq!(g.to_config().unwrap(), GradientConfig::default());
            assert_eq!(a.to_config().unwrap(), AimdConfig::default());
        }
    }

    #[test]
    fn a_permit_outlives_its_limiter_handle() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut limiter = null_mut();
            assert_eq!(rk_concurrency_limiter_new_fixed(1, null(), &mut limiter), rk_status::RK_OK);
            let mut permit = null_mut();
            let mut d = core::mem::zeroed::<rk_decision>();
            assert_eq!(rk_concurrency_limiter_try_acquire(limiter, &mut d, &mut permit), rk_status::RK_OK);
            assert!(d.allowed && !permit.is_null());
            let mut refused = null_mut();
            assert_eq!(rk_concurrency_limiter_try_acquire(limiter, null_mut(), &mut refused), rk_status::RK_OK);
            assert!(refused.is_null());
            rk_concurrency_limiter_free(limiter);
            assert_eq!(rk_permit_release(permit, 3, null_mut()), rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("outcome"));
            let mut limit = 0;
            assert_eq!(rk_permit_release(permit, RK_OUTCOME_SUCCESS, &mut limit), rk_status::RK_OK);
            assert_eq!(limit, 1);
        }
    }
}
