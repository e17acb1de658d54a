//! The manual clocks: made reading 0, moved only forward and by exactly
//! what is asked (saturating), read back.

use core::ptr::{null, null_mut};

use ratekeeper_c::manual_clock::*;
use ratekeeper_c::status::rk_status;

use super::super::input::{MaybeNull, Micros, Pick};
use super::super::model::{out, pick, Clock, World, MAX_LIVE};

impl World {
    pub(crate) fn new_clock(&mut self, null_out: MaybeNull) {
        if self.clocks.len() >= MAX_LIVE {
            return;
        }
        let mut ptr = null_mut();
        // SAFETY: a local or NULL.
        let s = unsafe { rk_manual_clock_new(out(&mut ptr, null_out)) };
        if self.status("rk_manual_clock_new", s, &[("out_clock", null_out.0)], true) {
            assert!(!ptr.is_null());
            let id = self.id();
            self.clocks.push(Clock { ptr, id });
            assert_eq!(self.now(Some(id)), Some(0), "a new clock reads 0");
        }
    }

    pub(crate) fn advance_clock(&mut self, p: Pick, micros: Micros) {
        let c = pick(&self.clocks, p).map(|c| (c.ptr, c.id));
        let before = c.and_then(|(_, id)| self.now(Some(id)));
        // SAFETY: a live clock or NULL.
        let s = unsafe { rk_manual_clock_advance_micros(c.map_or(null(), |c| c.0), micros.0) };
        if self.status("rk_manual_clock_advance_micros", s, &[("clock", c.is_none())], true) {
            let (before, after) = (before.unwrap(), self.now(c.map(|c| c.1)).unwrap());
            assert!(micros.0 >= 0, "a clock moved back by {}", micros.0);
            assert_eq!(after, before.saturating_add(micros.0), "advance by {}", micros.0);
        } else if c.is_some() {
            // A negative move is refused, moving nothing.
            assert_eq!((s, micros.0 < 0, self.argument()), (rk_status::RK_INVALID_ARGUMENT, true, "micros"));
            assert_eq!(self.now(c.map(|c| c.1)), before);
        }
    }

    pub(crate) fn read_clock(&mut self, p: Pick, null_out: MaybeNull) {
        let c = pick(&self.clocks, p).map(|c| c.ptr);
        let mut now = -7;
        // SAFETY: a live clock or NULL; a local or NULL.
        let s = unsafe { rk_manual_clock_now_micros(c.unwrap_or(null_mut()), out(&mut now, null_out)) };
        if self.status("rk_manual_clock_now_micros", s, &[("clock", c.is_none()), ("out_micros", null_out.0)], true) {
            assert!(now >= 0);
        } else {
            assert_eq!(now, -7, "a failed call wrote its out-parameter");
        }
    }
}
