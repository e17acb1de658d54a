//! [`rk_composite_limiter`]: several limits of any admission-style kinds
//! on one key, admitted all or nothing, through the std layer's
//! `CompositeLimiter<AnyClock>`.

use ratekeeper::{cost_from_i64, AnyClock, AnyCore, CompositeLimiter, LimiterSpec};

use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::spec::rk_limiter_spec;
use crate::status::rk_status;

/// Several limits — "10 per second *and* 1,000 per hour" — that must all
/// admit a request; a refusal by any consumes nothing in any. Its decision
/// is the strictest part's.
///
/// Thread safety: as `rk_limiter` (the parts change together, under one
/// lock); only `rk_composite_limiter_free()` must not race with other
/// calls on the handle.
#[derive(Debug)]
pub struct rk_composite_limiter {
    limiter: CompositeLimiter<AnyClock>,
}

/// The specs from C, each converted; a failure names the element.
///
/// # Safety
/// `limits` is valid for reading `limits_len` specs.
pub(crate) unsafe fn specs(limits: *const rk_limiter_spec, limits_len: usize) -> Result<Vec<LimiterSpec>, Failure> {
    if limits_len == 0 {
        // No limits: the std layer's own error (`limits_len`), below.
        return Ok(Vec::new());
    }
    if limits.is_null() {
        return Err(Failure::NullPointer { argument: "limits" });
    }
    // SAFETY: the caller's contract.
    let limits = unsafe { core::slice::from_raw_parts(limits, limits_len) };
    limits.iter().enumerate().map(|(i, spec)| spec.to_spec().map_err(|f| Failure::in_element("limits", i, f))).collect()
}

/// Creates a composite of the `limits_len` limits in `limits` (each as
/// `rk_limiter_new()` takes it), in `*out_limiter`; free it with
/// `rk_composite_limiter_free()`. `clock`: a manual clock, or NULL for the
/// monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT` when `limits_len` is 0 (a composite of
/// nothing would admit everything) or a limit is invalid (the message
/// names it: `limits[1]: …`, and `rk_last_error_argument()` its field);
/// `RK_NULL_POINTER` when `limits` (with a `limits_len` above 0) or
/// `out_limiter` is NULL.
///
/// # Safety
/// `limits` is NULL or valid for reading `limits_len` specs; `clock` is
/// NULL or a live clock; `out_limiter` is NULL or valid for writing a
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_new(
    limits: *const rk_limiter_spec,
    limits_len: usize,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_composite_limiter,
) -> rk_status {
    guard("rk_composite_limiter_new", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_limiter, "out_limiter")?) };
        // SAFETY: the caller's contract.
        let specs = unsafe { specs(limits, limits_len) }?;
        let clock = rk_manual_clock::any_clock(clock);
        let limiter = CompositeLimiter::with_clock(&specs, clock).map_err(|error| {
            // Which limit: the first that cannot be built on its own (only
            // on this failing path, so nothing is built twice otherwise).
            match specs.iter().position(|spec| AnyCore::new(spec).is_err()) {
                Some(i) => Failure::in_element("limits", i, error),
                None => Failure::from(error),
            }
        })?;
        out.write(Box::into_raw(Box::new(rk_composite_limiter { limiter })));
        Ok(())
    })
}

/// Frees a composite limiter. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_composite_limiter_new()` that
/// has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_free(limiter: *mut rk_composite_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_composite_limiter_new that
    // no other call is using.
    unsafe { free_box("rk_composite_limiter_free", limiter) }
}

/// How many limits the composite has, in `*out_len`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_len` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_len` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_len(
    limiter: *const rk_composite_limiter,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_composite_limiter_len", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_len, "out_len")?) };
        out.write(limiter.limiter.specs().len());
        Ok(())
    })
}

/// Admits `cost` units in every limit, or in none, and stores the decision
/// in `*out_decision`: when admitted, the limit with the fewest units left
/// (with the longest reset and wait); when refused, the refusing limit
/// with the longest retry-after.
///
/// Returns `RK_INVALID_ARGUMENT`, consuming nothing, when `cost` is
/// negative; `RK_NULL_POINTER` when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_check(
    limiter: *const rk_composite_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_composite_limiter_check", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.check(cost_from_i64(cost)?).into());
        Ok(())
    })
}

/// `rk_composite_limiter_check()`, with each limit's own decision too, in
/// the order of the specs, in `out_parts[0 .. len]` (`len` from
/// `rk_composite_limiter_len()`): one `RateLimit` item per policy (see
/// `rk_decisions_write_ratelimit()`). When the request is refused, the
/// limits that would have admitted it show their state untouched.
///
/// Returns `RK_BUFFER_TOO_SMALL`, consuming nothing, when `parts_len` is
/// below the number of limits; `RK_INVALID_ARGUMENT` when `cost` is
/// negative; `RK_NULL_POINTER` when `limiter`, `out_decision` or
/// `out_parts` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write; `out_parts` is NULL or valid for writing `parts_len`
/// decisions.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_check_each(
    limiter: *const rk_composite_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> rk_status {
    guard("rk_composite_limiter_check_each", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        if out_parts.is_null() {
            return Err(Failure::NullPointer { argument: "out_parts" });
        }
        let needed = limiter.limiter.specs().len();
        if parts_len < needed {
            return Err(Failure::BufferTooSmall {
                argument: "parts_len",
                needed,
                given: parts_len,
                unit: "decisions (one per limit)",
            });
        }
        let (decision, parts) = limiter.limiter.check_each(cost_from_i64(cost)?);
        out.write(decision.into());
        for (i, part) in parts.into_iter().enumerate() {
            // SAFETY: the caller's contract; `i < needed <= parts_len`.
            unsafe { out_parts.add(i).write(part.into()) };
        }
        Ok(())
    })
}

/// The decision `rk_composite_limiter_check()` would make now, in
/// `*out_decision`; consumes nothing.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative; `RK_NULL_POINTER`
/// when `limiter` or `out_decision` is NULL.
///
/// # Safety
/// As `rk_composite_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_peek(
    limiter: *const rk_composite_limiter,
    cost: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_composite_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        out.write(limiter.limiter.peek(cost_from_i64(cost)?).into());
        Ok(())
    })
}

/// Gives back `cost` units to every part (`rk_limiter_refund()` on each):
/// what a check admitted, it admitted in all of them.
///
/// Returns `RK_INVALID_ARGUMENT`, changing nothing, when `cost` is
/// negative; `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live composite.
#[no_mangle]
pub unsafe extern "C" fn rk_composite_limiter_refund(limiter: *const rk_composite_limiter, cost: i64) -> rk_status {
    guard("rk_composite_limiter_refund", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter")? };
        limiter.limiter.refund(cost_from_i64(cost)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use crate::spec::RK_ALGORITHM_FIXED_WINDOW;
    use core::ptr::{null, null_mut};

    #[test]
    fn failures_name_the_limit() {
        let good =
            rk_limiter_spec { algorithm: RK_ALGORITHM_FIXED_WINDOW, limit: 1, window_micros: 1, ..Default::default() };
        let mut limiter = null_mut();
        // SAFETY: valid pointers and lengths.
        unsafe {
            assert_eq!(rk_composite_limiter_new(null(), 0, null(), &mut limiter), rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("limits_len"));
            let bad_range = [good, rk_limiter_spec { window_micros: 0, ..good }];
            assert_eq!(
                rk_composite_limiter_new(bad_range.as_ptr(), 2, null(), &mut limiter),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("window_micros"));
            assert!(
                last_message().starts_with("rk_composite_limiter_new: limits[1]: invalid argument window_micros = 0"),
                "{}",
                last_message()
            );
            let bad_field = [rk_limiter_spec { rate: 2.0, ..good }, good];
            assert_eq!(
                rk_composite_limiter_new(bad_field.as_ptr(), 2, null(), &mut limiter),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("rate"));
            assert!(
                last_message().starts_with("rk_composite_limiter_new: limits[0]: invalid argument rate = 2.0"),
                "{}",
                last_message()
            );
            assert!(limiter.is_null());
            assert_eq!(rk_composite_limiter_new(null(), 1, null(), &mut limiter), rk_status::RK_NULL_POINTER);
        }
    }
}
