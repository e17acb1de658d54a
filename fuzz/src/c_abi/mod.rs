//! The C ABI (`bindings/c`), called as a C program would call it: any
//! sequence of `rk_` calls on a pool of live handles, with NULL for any
//! pointer, negative and extreme counts, NaN and infinite rates, unknown
//! enum values, buffers of every size, and the freeing patterns the header
//! allows (freeing NULL, freeing a manual clock while limiters use it, a
//! limiter while its reservations live on, a concurrency limiter while
//! permits are out, releasing a permit with a bad outcome and then again).
//!
//! The functions are the very ones `libratekeeper` exports (the fuzz
//! crate compiles `bindings/c/src` as an rlib, `c-abi/Cargo.toml`), so
//! AddressSanitizer sees every pointer they follow and LeakSanitizer every
//! handle they fail to free. After every call the header's conventions
//! are checked:
//!
//! * the status is one of the documented ones and never `RK_PANIC` (a panic
//!   aborts the fuzzer even before the boundary could catch it) or
//!   `RK_OTHER_ERROR` (ratekeeper has no error that is not about an
//!   argument);
//! * a NULL required pointer is `RK_NULL_POINTER` naming that pointer
//!   (where the header says it is checked first);
//! * a failure's message starts with the function's name and names the
//!   argument `rk_last_error_argument()` gives; a success leaves both
//!   alone;
//! * out-parameters are written only on `RK_OK`, and a failed call changes
//!   nothing observable in the handle (on a manual clock, every answer
//!   before and after it is the same);
//! * what each call returns keeps the header's promises: decisions in
//!   range (the contract of [`crate::contract::check_fields`]), `peek`
//!   predicting `check`, blocking calls advancing a manual clock by exactly
//!   the wait they report, permits counted in flight until released,
//!   colours never improved, strings within the documented sizes, and the
//!   buffer protocol (length query, too small gets nothing, NUL-terminated
//!   otherwise).
//!
//! Handles on the system's monotonic clock (a NULL `clock`) are made too,
//! but the calls that would block the thread are never made on them.
//!
//! The parts: [`input`], what the fuzzer's bytes decode to (the calls and
//! their arguments); [`model`], what the target knows of the live handles
//! and in which order it frees them; [`checks`], each call made and what
//! it answered checked, one submodule per kind of handle as in
//! `bindings/c/src`. This module runs them: [`run`].

use core::ptr::null_mut;

use ratekeeper_c::composite::*;
use ratekeeper_c::concurrency::*;
use ratekeeper_c::limiter::*;
use ratekeeper_c::manual_clock::*;
use ratekeeper_c::markers::*;
use ratekeeper_c::rate_limiter::*;
use ratekeeper_c::token_bucket::*;
use ratekeeper_c::{rk_last_error_argument, rk_last_error_message};

mod checks;
mod input;
mod model;

pub use input::Input;
use input::Op;
use model::{c_str, World};

impl World {
    /// Makes one call (or makes or frees a handle) and checks what it did.
    fn apply(&mut self, op: Op) {
        match op {
            Op::NewClock(null_out) => self.new_clock(null_out),
            Op::FreeClock(i) => {
                if !self.clocks.is_empty() {
                    let c = self.clocks.remove(usize::from(i) % self.clocks.len());
                    // SAFETY: live; limiters using it hold their own references.
                    unsafe { rk_manual_clock_free(c.ptr) };
                }
            }
            Op::AdvanceClock(p, micros) => self.advance_clock(p, micros),
            Op::ReadClock(p, null_out) => self.read_clock(p, null_out),
            Op::NewLimiter(ctor, clock, null_out) => self.new_limiter(ctor, clock, null_out),
            Op::FreeLimiter(i) => {
                if !self.limiters.is_empty() {
                    let l = self.limiters.remove(usize::from(i) % self.limiters.len());
                    // SAFETY: live; its reservations hold references of their own.
                    unsafe { rk_limiter_free(l.ptr) };
                }
            }
            Op::Limiter(p, op) => self.limiter_op(p, op),
            Op::Reservation(p, op) => self.reservation_op(p, op),
            Op::FreeReservation(i) => {
                if !self.reservations.is_empty() {
                    let r = self.reservations.remove(usize::from(i) % self.reservations.len());
                    // SAFETY: live.
                    unsafe { rk_reservation_free(r) };
                }
            }
            Op::NewRateLimiter { warming, rate, burst_seconds, warmup, cold, clock, null_out } => {
                self.new_rate_limiter(warming, rate.0, burst_seconds.0, warmup.0, cold.0, clock, null_out)
            }
            Op::FreeRateLimiter(i) => {
                if !self.rate_limiters.is_empty() {
                    let l = self.rate_limiters.remove(usize::from(i) % self.rate_limiters.len());
                    // SAFETY: live.
                    unsafe { rk_rate_limiter_free(l.ptr) };
                }
            }
            Op::RateLimiter(p, op) => self.rate_op(p, op),
            Op::NewComposite { specs, null_specs, clock, null_out } => {
                self.new_composite(&specs, null_specs, clock, null_out)
            }
            Op::FreeComposite(i) => {
                if !self.composites.is_empty() {
                    let l = self.composites.remove(usize::from(i) % self.composites.len());
                    // SAFETY: live.
                    unsafe { rk_composite_limiter_free(l.ptr) };
                }
            }
            Op::Composite { which, cost, how, parts_len, null_out, null_parts } => {
                self.composite_op(which, cost.0, how, parts_len, null_out, null_parts)
            }
            Op::NewConcurrency(policy, clock, null_out) => self.new_concurrency(policy, clock, null_out),
            Op::FreeConcurrency(i) => {
                if !self.concurrency.is_empty() {
                    let l = self.concurrency.remove(usize::from(i) % self.concurrency.len());
                    // SAFETY: live; its permits hold references of their own.
                    unsafe { rk_concurrency_limiter_free(l.ptr) };
                }
            }
            Op::TryAcquire { which, null_decision, null_permit } => self.try_acquire(which, null_decision, null_permit),
            Op::Release { which, outcome, null_out } => self.release(which, outcome, null_out),
            Op::Sample { which, rtt, in_flight, dropped, null_out } => {
                self.sample(which, rtt, in_flight, dropped, null_out)
            }
            Op::ConcurrencyRead { which, in_flight, null_out } => self.concurrency_read(which, in_flight, null_out),
            Op::NewMarker { two_rate, rates, clock, null_out } => self.new_marker(two_rate, rates, clock, null_out),
            Op::FreeMarker(two_rate, i) => {
                if two_rate && !self.trtcms.is_empty() {
                    let m = self.trtcms.remove(usize::from(i) % self.trtcms.len());
                    // SAFETY: live.
                    unsafe { rk_trtcm_free(m.ptr) };
                } else if !two_rate && !self.srtcms.is_empty() {
                    let m = self.srtcms.remove(usize::from(i) % self.srtcms.len());
                    // SAFETY: live.
                    unsafe { rk_srtcm_free(m.ptr) };
                }
            }
            Op::Mark { two_rate, which, bytes, pre_color, null_out } => {
                self.mark(two_rate, which, bytes.0, pre_color, null_out)
            }
            Op::MarkerTokens { two_rate, which, null_first, null_second } => {
                self.marker_tokens(two_rate, which, null_first, null_second)
            }
            Op::WriteField { kind, decision, null_decision, name, null_name, buf_len, null_out_len } => {
                self.write_field(kind, decision, null_decision, &name, null_name, buf_len, null_out_len)
            }
            Op::WriteFields { policy, items, null_arrays, buf_len, null_out_len } => {
                self.write_fields(policy, &items, null_arrays, buf_len, null_out_len)
            }
            Op::Statics { status, algorithm, color } => checks::statics(status, algorithm, color),
            Op::FreeNulls => {
                // SAFETY: freeing NULL does nothing, as the header says.
                unsafe {
                    rk_manual_clock_free(null_mut());
                    rk_limiter_free(null_mut());
                    rk_reservation_free(null_mut());
                    rk_rate_limiter_free(null_mut());
                    rk_composite_limiter_free(null_mut());
                    rk_concurrency_limiter_free(null_mut());
                    rk_srtcm_free(null_mut());
                    rk_trtcm_free(null_mut());
                }
            }
        }
    }
}

/// Runs the calls, then frees every handle.
pub fn run(input: Input) {
    let mut world = World {
        last_error: (c_str(rk_last_error_message()).unwrap(), c_str(rk_last_error_argument())),
        ..World::default()
    };
    for op in input.ops.into_iter().take(200) {
        world.apply(op);
    }
    world.finish();
}
