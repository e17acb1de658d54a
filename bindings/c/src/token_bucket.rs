//! The token bucket's own operations (Go's `golang.org/x/time/rate`): the
//! `rk_token_bucket_*` functions on an `rk_limiter` made by
//! `rk_limiter_new_token_bucket()`, and [`rk_reservation`], Go's
//! `Reservation`, through the std layer's `TokenBucket<AnyClock>`.

use std::sync::{Arc, Mutex, PoisonError};

use ratekeeper::{cost_from_i64, unsigned_from_i64, Argument, Reservation};

use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::limiter::rk_limiter;
use crate::rate_limiter::{micros, timeout};
use crate::status::rk_status;

/// Go's `Reservation`: tokens taken from a token bucket, possibly from the
/// future, by `rk_token_bucket_reserve()`. Act after
/// `rk_reservation_delay_micros()`, or give them back with
/// `rk_reservation_cancel()`; free it with `rk_reservation_free()` either
/// way (freeing does not cancel, as dropping one in Go does not).
///
/// It holds its own reference to its bucket, so it stays valid after
/// `rk_limiter_free()`. Safe to use from several threads at once; only
/// `rk_reservation_free()` must not race with other calls on it.
#[derive(Debug)]
pub struct rk_reservation {
    bucket: Arc<rk_limiter>,
    reservation: Mutex<Reservation>,
}

impl rk_reservation {
    fn get(&self) -> Reservation {
        *self.reservation.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Go's `ReserveN(now, cost)`: takes `cost` tokens now, possibly from the
/// future, and stores a new reservation in `*out_reservation` (free it
/// with `rk_reservation_free()`). A reservation of more than the burst is
/// refused (`rk_reservation_ok()` says false) and takes nothing, but is
/// still a reservation to free.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_INVALID_ARGUMENT`, taking nothing, when `cost` is negative;
/// `RK_NULL_POINTER` when `limiter` or `out_reservation` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_reservation` is NULL or valid
/// for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_reserve(
    limiter: *const rk_limiter,
    cost: i64,
    out_reservation: *mut *mut rk_reservation,
) -> rk_status {
    guard("rk_token_bucket_reserve", || {
        // SAFETY: the caller's contract.
        let (limiter_ref, out) =
            unsafe { (handle(limiter, "limiter")?, Out::required(out_reservation, "out_reservation")?) };
        let reservation = limiter_ref.token_bucket()?.reserve_n(cost_from_i64(cost)?);
        // SAFETY: `limiter` came from Arc::into_raw (rk_limiter::create) and
        // is live: this takes a reference of the reservation's own.
        let bucket = unsafe {
            Arc::increment_strong_count(limiter);
            Arc::from_raw(limiter)
        };
        out.write(Box::into_raw(Box::new(rk_reservation { bucket, reservation: Mutex::new(reservation) })));
        Ok(())
    })
}

/// Go's `Reservation.OK()`: whether the tokens were granted, in `*out_ok`.
///
/// Returns `RK_NULL_POINTER` when `reservation` or `out_ok` is NULL.
///
/// # Safety
/// `reservation` is NULL or a live reservation; `out_ok` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_reservation_ok(reservation: *const rk_reservation, out_ok: *mut bool) -> rk_status {
    guard("rk_reservation_ok", || {
        // SAFETY: the caller's contract.
        let (reservation, out) = unsafe { (handle(reservation, "reservation")?, Out::required(out_ok, "out_ok")?) };
        out.write(reservation.get().ok());
        Ok(())
    })
}

/// The tokens the reservation holds, in `*out_tokens`: 0 when it was
/// refused or has been cancelled.
///
/// Returns `RK_NULL_POINTER` when `reservation` or `out_tokens` is NULL.
///
/// # Safety
/// `reservation` is NULL or a live reservation; `out_tokens` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_reservation_tokens(reservation: *const rk_reservation, out_tokens: *mut u64) -> rk_status {
    guard("rk_reservation_tokens", || {
        // SAFETY: the caller's contract.
        let (reservation, out) =
            unsafe { (handle(reservation, "reservation")?, Out::required(out_tokens, "out_tokens")?) };
        out.write(reservation.get().tokens());
        Ok(())
    })
}

/// Go's `Reservation.Delay()`: how long from now, in whole microseconds
/// rounded up, until the holder may act, in `*out_micros` (0 when it may
/// act now; `RK_NEVER` for a refused reservation).
///
/// Returns `RK_NULL_POINTER` when `reservation` or `out_micros` is NULL.
///
/// # Safety
/// `reservation` is NULL or a live reservation; `out_micros` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_reservation_delay_micros(
    reservation: *const rk_reservation,
    out_micros: *mut i64,
) -> rk_status {
    guard("rk_reservation_delay_micros", || {
        // SAFETY: the caller's contract.
        let (reservation, out) =
            unsafe { (handle(reservation, "reservation")?, Out::required(out_micros, "out_micros")?) };
        let bucket = reservation.bucket.token_bucket()?;
        out.write(micros(bucket.delay(&reservation.get())));
        Ok(())
    })
}

/// Go's `Reservation.Cancel()`: gives the tokens back to the bucket, as
/// x/time/rate does (those a later reservation has since counted on stay
/// taken), if the time to act has not come yet. Cancelling again does
/// nothing.
///
/// Returns `RK_NULL_POINTER` when `reservation` is NULL.
///
/// # Safety
/// `reservation` is NULL or a live reservation.
#[no_mangle]
pub unsafe extern "C" fn rk_reservation_cancel(reservation: *const rk_reservation) -> rk_status {
    guard("rk_reservation_cancel", || {
        // SAFETY: the caller's contract.
        let reservation = unsafe { handle(reservation, "reservation") }?;
        let bucket = reservation.bucket.token_bucket()?;
        let mut held = reservation.reservation.lock().unwrap_or_else(PoisonError::into_inner);
        bucket.cancel(&mut held);
        Ok(())
    })
}

/// Frees a reservation (and its reference to its bucket), without
/// cancelling it. `NULL` does nothing.
///
/// # Safety
/// `reservation` is NULL or a reservation from `rk_token_bucket_reserve()`
/// that has not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_reservation_free(reservation: *mut rk_reservation) {
    // SAFETY: the caller's contract: NULL or a live box from rk_token_bucket_reserve that
    // no other call is using.
    unsafe { free_box("rk_reservation_free", reservation) }
}

/// Go's `WaitN(ctx, cost)` with a deadline `timeout_micros` from now: when
/// the `cost` tokens can be had by then, takes them, blocks the calling
/// thread until they are due (a manual clock is advanced instead) and
/// stores the decision in `*out_decision` (`allowed`, and the time waited
/// in `wait_micros`); otherwise stores a refusal at once, taking nothing.
/// A negative timeout means "do not wait"; `INT64_MAX` waits as long as it
/// takes. A cost above the burst is always refused.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_INVALID_ARGUMENT` when `cost` is negative; `RK_NULL_POINTER` when
/// `limiter` or `out_decision` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_decision` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_wait(
    limiter: *const rk_limiter,
    cost: i64,
    timeout_micros: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_token_bucket_wait", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        let bucket = limiter.token_bucket()?;
        out.write(bucket.wait_n(cost_from_i64(cost)?, timeout(timeout_micros)).into());
        Ok(())
    })
}

/// `rk_token_bucket_wait()` without the wait, for callers with timers of
/// their own (event loops): takes the tokens when they can be had within
/// `timeout_micros` and returns at once; the decision's `wait_micros` says
/// how long to wait before acting.
///
/// # Safety
/// As `rk_token_bucket_wait()`.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_reserve_within(
    limiter: *const rk_limiter,
    cost: i64,
    timeout_micros: i64,
    out_decision: *mut rk_decision,
) -> rk_status {
    guard("rk_token_bucket_reserve_within", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_decision, "out_decision")?) };
        let bucket = limiter.token_bucket()?;
        out.write(bucket.reserve_within(cost_from_i64(cost)?, timeout(timeout_micros)).into());
        Ok(())
    })
}

/// Go's `SetLimit`: refills up to now at the old rate, then refills at
/// `rate` tokens per second (0: never; `INFINITY`: no limit).
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_INVALID_ARGUMENT`, changing nothing, when `rate` is negative or NaN;
/// `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_set_rate(limiter: *const rk_limiter, rate: f64) -> rk_status {
    guard("rk_token_bucket_set_rate", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        Ok(limiter.token_bucket()?.set_rate(rate)?)
    })
}

/// Go's `SetBurst`: refills up to now, then the bucket holds `burst`
/// tokens at most.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_INVALID_ARGUMENT`, changing nothing, when `burst` is negative;
/// `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_set_burst(limiter: *const rk_limiter, burst: i64) -> rk_status {
    guard("rk_token_bucket_set_burst", || {
        // SAFETY: the caller's contract.
        let limiter = unsafe { handle(limiter, "limiter") }?;
        let bucket = limiter.token_bucket()?;
        Ok(bucket.set_burst(unsigned_from_i64(Argument::Burst, burst)?)?)
    })
}

/// Go's `Limit()`: the refill rate in tokens per second (`INFINITY` for
/// no limit), in `*out_rate`.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_NULL_POINTER` when `limiter` or `out_rate` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_rate` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_rate(limiter: *const rk_limiter, out_rate: *mut f64) -> rk_status {
    guard("rk_token_bucket_rate", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_rate, "out_rate")?) };
        out.write(limiter.token_bucket()?.rate());
        Ok(())
    })
}

/// Go's `Burst()`, in `*out_burst`.
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_NULL_POINTER` when `limiter` or `out_burst` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_burst` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_burst(limiter: *const rk_limiter, out_burst: *mut u64) -> rk_status {
    guard("rk_token_bucket_burst", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_burst, "out_burst")?) };
        out.write(limiter.token_bucket()?.burst());
        Ok(())
    })
}

/// Go's `Tokens()`: the tokens available now, in `*out_tokens` (Go's
/// `float64`, bit for bit; negative while reservations are outstanding).
///
/// Returns `RK_WRONG_ALGORITHM` when `limiter` is not a token bucket;
/// `RK_NULL_POINTER` when `limiter` or `out_tokens` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_tokens` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_token_bucket_tokens(limiter: *const rk_limiter, out_tokens: *mut f64) -> rk_status {
    guard("rk_token_bucket_tokens", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_tokens, "out_tokens")?) };
        out.write(limiter.token_bucket()?.tokens());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{rk_limiter_free, rk_limiter_new_token_bucket};
    use crate::manual_clock::{rk_manual_clock_advance_micros, rk_manual_clock_free, rk_manual_clock_new};
    use core::ptr::null_mut;

    #[test]
    fn a_reservation_outlives_its_handle_and_cancels_once() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut clock = null_mut();
            assert_eq!(rk_manual_clock_new(&mut clock), rk_status::RK_OK);
            let mut bucket = null_mut();
            assert_eq!(rk_limiter_new_token_bucket(10.0, 1, clock, &mut bucket), rk_status::RK_OK);
            let mut first = null_mut();
            assert_eq!(rk_token_bucket_reserve(bucket, 1, &mut first), rk_status::RK_OK);
            let mut second = null_mut();
            assert_eq!(rk_token_bucket_reserve(bucket, 1, &mut second), rk_status::RK_OK);
            let mut delay = -1;
            assert_eq!(rk_reservation_delay_micros(second, &mut delay), rk_status::RK_OK);
            assert_eq!(delay, 100_000);
            assert_eq!(rk_manual_clock_advance_micros(clock, 40_000), rk_status::RK_OK);
            let mut tokens = f64::NAN;
            let b = bucket.cast_const();
            rk_limiter_free(bucket);
            assert_eq!(rk_reservation_delay_micros(second, &mut delay), rk_status::RK_OK);
            assert_eq!(delay, 60_000);
            assert_eq!(rk_reservation_cancel(second), rk_status::RK_OK);
            assert_eq!(rk_reservation_cancel(second), rk_status::RK_OK);
            let mut held = 9;
            assert_eq!(rk_reservation_tokens(second, &mut held), rk_status::RK_OK);
            assert_eq!(held, 0);
            assert_eq!(rk_reservation_tokens(first, &mut held), rk_status::RK_OK);
            assert_eq!(held, 1);
            // The bucket is alive while its reservations are.
            assert_eq!(rk_token_bucket_tokens(b, &mut tokens), rk_status::RK_OK);
            assert!((tokens - 0.4).abs() < 1e-12, "{tokens}");
            rk_reservation_free(first);
            rk_reservation_free(second);
            rk_reservation_free(null_mut());
            rk_manual_clock_free(clock);
        }
    }
}
