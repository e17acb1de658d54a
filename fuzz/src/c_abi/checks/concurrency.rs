//! Concurrency limiters: a permit exactly when fewer than the limit are
//! in flight, permits counted until released, bad outcomes refused
//! keeping the permit, samples' ranges.

use core::ptr::{null, null_mut};

use ratekeeper_c::concurrency::*;
use ratekeeper_c::status::rk_status;
use ratekeeper_core::Decision;

use super::super::input::{ClockChoice, MaybeNull, Micros, Pick, Policy, Signed};
use super::super::model::{out, pick, ptr_of, Facts, Held, PermitHeld, World, MAX_LIVE};
use super::UNWRITTEN;
use crate::contract::{check_fields, Promises};

impl World {
    pub(crate) fn new_concurrency(&mut self, policy: Policy, clock: ClockChoice, null_out: MaybeNull) {
        if self.concurrency.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        let out_ptr = out(&mut ptr, null_out);
        // SAFETY: locals or NULL; a live clock or NULL.
        let (function, s, null_config) = unsafe {
            match policy {
                Policy::Fixed(limit) => (
                    "rk_concurrency_limiter_new_fixed",
                    rk_concurrency_limiter_new_fixed(limit.0, clock_ptr, out_ptr),
                    false,
                ),
                Policy::Gradient { edits, floats, null_config } => {
                    let mut c = core::mem::zeroed();
                    assert_eq!(rk_gradient_config_default(&mut c), rk_status::RK_OK);
                    let ints = [
                        &mut c.initial_limit,
                        &mut c.min_limit,
                        &mut c.max_limit,
                        &mut c.queue_size,
                        &mut c.probe_interval,
                    ];
                    for (field, edit) in ints.into_iter().zip(edits) {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    for (field, edit) in
                        [&mut c.smoothing, &mut c.rtt_tolerance, &mut c.backoff_ratio].into_iter().zip(floats)
                    {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    let config: *const rk_gradient_config = if null_config.0 { null() } else { &c };
                    (
                        "rk_concurrency_limiter_new_gradient",
                        rk_concurrency_limiter_new_gradient(config, clock_ptr, out_ptr),
                        null_config.0,
                    )
                }
                Policy::Aimd { edits, backoff, timeout, null_config } => {
                    let mut c = core::mem::zeroed();
                    assert_eq!(rk_aimd_config_default(&mut c), rk_status::RK_OK);
                    for (field, edit) in
                        [&mut c.initial_limit, &mut c.min_limit, &mut c.max_limit].into_iter().zip(edits)
                    {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    if let Some(b) = backoff {
                        c.backoff_ratio = b.0;
                    }
                    if let Some(t) = timeout {
                        c.rtt_timeout_micros = t.0;
                    }
                    let config: *const rk_aimd_config = if null_config.0 { null() } else { &c };
                    (
                        "rk_concurrency_limiter_new_aimd",
                        rk_concurrency_limiter_new_aimd(config, clock_ptr, out_ptr),
                        null_config.0,
                    )
                }
            }
        };
        if self.status(function, s, &[("out_limiter", null_out.0), ("config", null_config)], true) {
            let id = self.id();
            self.concurrency.push(Held { ptr, clock: clock_id, id, facts: Facts::default() });
            let mut limit = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_concurrency_limiter_limit(ptr, &mut limit) }, rk_status::RK_OK);
            assert!(limit >= 1, "{function}: a limit of {limit}");
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
        }
    }

    pub(crate) fn try_acquire(&mut self, p: Pick, null_decision: bool, null_permit: MaybeNull) {
        let h = pick(&self.concurrency, p);
        let (ptr, id) = (ptr_of(h), h.map_or(0, |h| h.id));
        let (limit, in_flight) = if ptr.is_null() { (0, 0) } else { concurrency_looks(ptr) };
        let mut d = UNWRITTEN;
        let mut permit = null_mut::<rk_permit>();
        let out_decision = if null_decision { null_mut() } else { &mut d };
        // SAFETY: a live limiter or NULL; locals or NULL.
        let s = unsafe { rk_concurrency_limiter_try_acquire(ptr, out_decision, out(&mut permit, null_permit)) };
        let required = [("limiter", ptr.is_null()), ("out_permit", null_permit.0)];
        if self.status("rk_concurrency_limiter_try_acquire", s, &required, true) {
            assert_eq!(!permit.is_null(), in_flight < limit, "{in_flight} in flight of {limit}: permit {permit:?}");
            if !null_decision {
                check_fields(&Decision::from(&d), 1, Promises::default());
                assert_eq!(d.allowed, !permit.is_null());
                self.latest = Some(d);
            }
            if !permit.is_null() {
                self.permits.push(PermitHeld { ptr: permit, limiter: id });
            }
        } else {
            assert_eq!((d, permit), (UNWRITTEN, null_mut()), "a failed call wrote its out-parameter");
            if !ptr.is_null() {
                assert_eq!(concurrency_looks(ptr), (limit, in_flight), "a failed call changed the limiter");
            }
        }
    }

    pub(crate) fn release(&mut self, p: Pick, outcome: u8, null_out: bool) {
        let i = p.0.filter(|_| !self.permits.is_empty()).map(|i| usize::from(i) % self.permits.len());
        let permit = i.map_or(null_mut(), |i| self.permits[i].ptr);
        // Mostly a real outcome.
        let outcome = if outcome < 240 { u32::from(outcome % 3) } else { u32::from(outcome) };
        let mut limit = 0xDEAD;
        let out_limit = if null_out { null_mut() } else { &mut limit };
        // SAFETY: a permit not yet released, or NULL; a local or NULL.
        let s = unsafe { rk_permit_release(permit, outcome, out_limit) };
        if self.status("rk_permit_release", s, &[("permit", permit.is_null())], true) {
            assert!(outcome <= 2, "outcome {outcome} accepted");
            assert!(null_out || limit >= 1, "a limit of {limit}");
            self.permits.remove(i.unwrap());
        } else {
            assert_eq!(limit, 0xDEAD, "a failed call wrote its out-parameter");
            if !permit.is_null() {
                // The permit is still ours: it is released later.
                assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "outcome"));
            }
        }
    }

    pub(crate) fn sample(&mut self, which: Pick, rtt: Micros, in_flight: Signed, dropped: bool, null_out: bool) {
        let h = pick(&self.concurrency, which);
        let ptr = ptr_of(h);
        let mut limit = 0xDEAD;
        let out_limit = if null_out { null_mut() } else { &mut limit };
        // SAFETY: a live limiter or NULL; a local or NULL.
        let s = unsafe { rk_concurrency_limiter_sample(ptr, rtt.0, in_flight.0, dropped, out_limit) };
        if self.status("rk_concurrency_limiter_sample", s, &[("limiter", ptr.is_null())], true) {
            assert!(rtt.0 >= 0 && in_flight.0 >= 0, "a negative rtt or in_flight accepted");
            assert!(null_out || limit >= 1, "a limit of {limit}");
        } else {
            assert_eq!(limit, 0xDEAD, "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT {
                let expected = if rtt.0 < 0 { "rtt_micros" } else { "in_flight" };
                assert_eq!(self.argument(), expected);
            }
        }
    }

    pub(crate) fn concurrency_read(&mut self, which: Pick, in_flight: bool, null_out: MaybeNull) {
        let h = pick(&self.concurrency, which);
        let (ptr, id) = (ptr_of(h), h.map(|h| h.id));
        let mut value = 0xDEAD;
        let (function, s) = if in_flight {
            // SAFETY: a live limiter or NULL; a local or NULL.
            ("rk_concurrency_limiter_in_flight", unsafe {
                rk_concurrency_limiter_in_flight(ptr, out(&mut value, null_out))
            })
        } else {
            // SAFETY: as above.
            ("rk_concurrency_limiter_limit", unsafe { rk_concurrency_limiter_limit(ptr, out(&mut value, null_out)) })
        };
        let arg = if in_flight { "out_in_flight" } else { "out_limit" };
        if self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true) {
            if in_flight {
                let held = self.permits.iter().filter(|p| Some(p.limiter) == id).count() as u64;
                assert_eq!(value, held, "in flight: {value}, permits out: {held}");
            } else {
                assert!(value >= 1, "a limit of {value}");
            }
        } else {
            assert_eq!(value, 0xDEAD, "a failed call wrote its out-parameter");
        }
    }
}

fn concurrency_looks(ptr: *const rk_concurrency_limiter) -> (u64, u64) {
    let (mut limit, mut in_flight) = (0, 0);
    // SAFETY: a live limiter; locals.
    unsafe {
        assert_eq!(rk_concurrency_limiter_limit(ptr, &mut limit), rk_status::RK_OK);
        assert_eq!(rk_concurrency_limiter_in_flight(ptr, &mut in_flight), rk_status::RK_OK);
    }
    (limit, in_flight)
}
