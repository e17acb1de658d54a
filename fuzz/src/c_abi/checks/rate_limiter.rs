//! Guava's limiters (`rk_rate_limiter`): the permits' range, waits told
//! exactly as the manual clock moved, `can_acquire` agreeing with the
//! time until available.

use core::ptr::null_mut;

use ratekeeper_c::rate_limiter::*;
use ratekeeper_c::status::rk_status;

use super::super::input::{ClockChoice, MaybeNull, Pick, RateOp};
use super::super::model::{out, pick, ptr_of, Facts, Held, World, MAX_LIVE};

impl World {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_rate_limiter(
        &mut self,
        warming: bool,
        rate: f64,
        burst_seconds: f64,
        warmup: i64,
        cold: f64,
        clock: ClockChoice,
        null_out: MaybeNull,
    ) {
        if self.rate_limiters.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        // SAFETY: a live clock or NULL; a local or NULL.
        let (function, s, valid, args): (_, _, _, &[&str]) = unsafe {
            if warming {
                let valid = rate > 0.0 && warmup >= 0 && cold >= 1.0 && cold.is_finite();
                (
                    "rk_rate_limiter_new_warming_up",
                    rk_rate_limiter_new_warming_up(rate, warmup, cold, clock_ptr, out(&mut ptr, null_out)),
                    valid,
                    &["permits_per_second", "warmup_micros", "cold_factor"],
                )
            } else {
                // A burst is a duration: at most i64::MAX microseconds
                // (2^63 µs, as a double, is the first too long).
                let valid = rate > 0.0 && burst_seconds >= 0.0 && burst_seconds * 1e6 < 9_223_372_036_854_775_808.0;
                (
                    "rk_rate_limiter_new_bursty",
                    rk_rate_limiter_new_bursty(rate, burst_seconds, clock_ptr, out(&mut ptr, null_out)),
                    valid,
                    &["permits_per_second", "max_burst_seconds"],
                )
            }
        };
        if self.status(function, s, &[("out_limiter", null_out.0)], true) {
            assert!(valid, "{function} accepted invalid arguments");
            let id = self.id();
            self.rate_limiters.push(Held { ptr, clock: clock_id, id, facts: Facts::default() });
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if !null_out.0 {
                assert!(!valid, "{function} refused valid arguments: {}", self.last_error.0);
                assert!(args.contains(&self.argument()), "{function} named {}", self.argument());
            }
        }
    }

    pub(crate) fn rate_op(&mut self, p: Pick, op: RateOp) {
        let h = pick(&self.rate_limiters, p);
        let (ptr, clock) = (ptr_of(h), h.and_then(|h| h.clock));
        let monotonic = h.is_some() && clock.is_none();
        let looks = || rate_limiter_looks(ptr);
        let before = (!ptr.is_null() && self.clock_ptr(clock).is_some()).then(looks);
        let valid_permits = |n: i64| (1..=i64::from(i32::MAX)).contains(&n);
        let now = self.now(clock);
        let ok = match op {
            RateOp::Acquire { permits, micros, null_out } => {
                if monotonic {
                    return; // It would sleep.
                }
                let (mut secs, mut us) = (-7.0, -7);
                // SAFETY: a live limiter or NULL; locals or NULL.
                let (function, s) = unsafe {
                    if micros {
                        let o = if null_out { null_mut() } else { &mut us };
                        ("rk_rate_limiter_acquire_micros", rk_rate_limiter_acquire_micros(ptr, permits.0, o))
                    } else {
                        let o = if null_out { null_mut() } else { &mut secs };
                        ("rk_rate_limiter_acquire", rk_rate_limiter_acquire(ptr, permits.0, o))
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null())], true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok && !null_out {
                    if let (Some(before), Some(after)) = (now, self.now(clock)) {
                        if after < i64::MAX {
                            let moved = after - before;
                            if micros {
                                assert_eq!(us, moved, "{function} waited {moved} µs and says {us}");
                            } else {
                                assert_eq!(secs, moved as f64 / 1e6, "{function} waited {moved} µs and says {secs} s");
                            }
                        }
                    }
                }
                if !ok {
                    assert_eq!((secs, us), (-7.0, -7), "a failed call wrote its out-parameter");
                }
                ok
            }
            RateOp::TryAcquire { permits, timeout, null_out } => {
                let timeout = if monotonic { timeout.0.min(0) } else { timeout.0 };
                let mut got = false;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_try_acquire(ptr, permits.0, timeout, out(&mut got, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_acquired", null_out.0)];
                let ok = self.status("rk_rate_limiter_try_acquire", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok {
                    if let (Some(before), Some(after)) = (now, self.now(clock)) {
                        let moved = after - before;
                        if got {
                            assert!(
                                moved <= timeout.max(0),
                                "try_acquire waited {moved} µs beyond its timeout {timeout}"
                            );
                        } else {
                            assert_eq!(moved, 0, "a failed try_acquire waited");
                        }
                    }
                }
                ok
            }
            RateOp::Reserve { permits, null_out } => {
                let mut w = -7;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_reserve(ptr, permits.0, out(&mut w, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_wait_micros", null_out.0)];
                let ok = self.status("rk_rate_limiter_reserve", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                assert!(if ok { w >= 0 } else { w == -7 }, "reserve: {w}");
                ok
            }
            RateOp::SetRate(rate) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_rate_limiter_set_rate(ptr, rate.0) };
                let ok = self.status("rk_rate_limiter_set_rate", s, &[("limiter", ptr.is_null())], true);
                if !ptr.is_null() {
                    assert_eq!(ok, rate.0 > 0.0, "set_rate({})", rate.0);
                    if !ok {
                        assert_eq!(self.argument(), "permits_per_second");
                    }
                }
                ok
            }
            RateOp::GetRate(null_out) => {
                let mut r = -7.0;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_get_rate(ptr, out(&mut r, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_permits_per_second", null_out.0)];
                let ok = self.status("rk_rate_limiter_get_rate", s, &required, true);
                // Guava's 1e6 / stableIntervalMicros: 0 for a rate so small
                // that the interval is infinite.
                assert!(if ok { r >= 0.0 } else { r == -7.0 }, "get_rate: {r}");
                ok
            }
            RateOp::TimeUntilAvailable { permits, null_out } => {
                let mut w = -7;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_time_until_available(ptr, permits.0, out(&mut w, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_micros", null_out.0)];
                let ok = self.status("rk_rate_limiter_time_until_available", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                assert!(if ok { w >= 0 } else { w == -7 }, "time_until_available: {w}");
                ok
            }
            RateOp::CanAcquire { permits, timeout, null_out } => {
                let mut can = false;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_can_acquire(ptr, permits.0, timeout.0, out(&mut can, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_can_acquire", null_out.0)];
                let ok = self.status("rk_rate_limiter_can_acquire", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok && self.clock_ptr(clock).is_some() {
                    // Guava's canAcquire: the wait of a request now against
                    // the timeout (a negative one is 0).
                    let mut wait = 0;
                    // SAFETY: live; a local.
                    let s = unsafe { rk_rate_limiter_time_until_available(ptr, permits.0, &mut wait) };
                    assert_eq!(s, rk_status::RK_OK);
                    // A ticket that Guava's wrapping sum left far in the
                    // past waits 0, yet canAcquire's wrapping subtraction
                    // refuses it (bit for bit Guava): only a wait that is
                    // due ahead says what canAcquire must answer.
                    let within = wait <= timeout.0.max(0);
                    assert!(!can || within, "can_acquire says yes, the wait is {wait} µs, the timeout {}", timeout.0);
                    assert!(can || !within || wait == 0, "can_acquire says no, the wait is {wait} µs");
                }
                ok
            }
        };
        if !ok {
            self.unchanged(clock, before, looks);
        }
    }

    fn permits_status(&self, s: rk_status, permits: i64, valid: bool) {
        if s == rk_status::RK_NULL_POINTER {
            return;
        }
        assert_eq!(s == rk_status::RK_OK, valid, "permits {permits}: {s:?}");
        if !valid {
            assert_eq!(self.argument(), "permits");
        }
    }
}

fn rate_limiter_looks(ptr: *const rk_rate_limiter) -> Vec<String> {
    let (mut wait, mut rate, mut can) = (0, 0.0, false);
    // SAFETY: a live limiter; locals.
    unsafe {
        assert_eq!(rk_rate_limiter_time_until_available(ptr, 1, &mut wait), rk_status::RK_OK);
        assert_eq!(rk_rate_limiter_get_rate(ptr, &mut rate), rk_status::RK_OK);
        assert_eq!(rk_rate_limiter_can_acquire(ptr, 1, 0, &mut can), rk_status::RK_OK);
    }
    vec![format!("{wait} {rate:?} {can}")]
}
