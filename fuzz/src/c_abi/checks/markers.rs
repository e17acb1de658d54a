//! The RFC 2697 and RFC 2698 markers: the constructors' ranges, a colour
//! never better than the one a packet came with, buckets within their
//! bursts.

use core::ptr::null_mut;

use ratekeeper_c::markers::*;
use ratekeeper_c::status::rk_status;

use super::super::input::{ClockChoice, MaybeNull, Pick, Signed};
use super::super::model::{out, pick, ptr_of, Facts, Held, World, MAX_LIVE};

impl World {
    pub(crate) fn new_marker(&mut self, two_rate: bool, rates: [Signed; 4], clock: ClockChoice, null_out: MaybeNull) {
        if self.srtcms.len() + self.trtcms.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let [a, b, c, d] = rates.map(|r| r.0);
        let id = self.id();
        let args: &[&str];
        let ok = if two_rate {
            let mut ptr = null_mut();
            args = &["pir", "pbs", "cir", "cbs"];
            // SAFETY: a live clock or NULL; a local or NULL.
            let s = unsafe { rk_trtcm_new(a, b, c, d, clock_ptr, out(&mut ptr, null_out)) };
            let ok = self.status("rk_trtcm_new", s, &[("out_marker", null_out.0)], true);
            if ok {
                assert!(a > 0 && b > 0 && c > 0 && d > 0 && a >= c, "rk_trtcm_new({a}, {b}, {c}, {d}) accepted");
                let facts = Facts { bursts: (b as u64, d as u64), ..Facts::default() };
                self.trtcms.push(Held { ptr, clock: clock_id, id, facts });
            } else {
                assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            }
            ok
        } else {
            let mut ptr = null_mut();
            args = &["cir", "cbs", "ebs"];
            // SAFETY: as above.
            let s = unsafe { rk_srtcm_new(a, b, c, clock_ptr, out(&mut ptr, null_out)) };
            let ok = self.status("rk_srtcm_new", s, &[("out_marker", null_out.0)], true);
            if ok {
                assert!(a > 0 && b >= 0 && c >= 0 && (b > 0 || c > 0), "rk_srtcm_new({a}, {b}, {c}) accepted");
                let facts = Facts { bursts: (b as u64, c as u64), ..Facts::default() };
                self.srtcms.push(Held { ptr, clock: clock_id, id, facts });
            } else {
                assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            }
            ok
        };
        if !ok && !null_out.0 {
            assert!(args.contains(&self.argument()), "a marker's constructor named {}", self.argument());
        }
    }

    pub(crate) fn mark(&mut self, two_rate: bool, p: Pick, bytes: i64, pre_color: Option<u8>, null_out: MaybeNull) {
        let (ptr_sr, ptr_tr, clock) = if two_rate {
            let h = pick(&self.trtcms, p);
            (null_mut(), ptr_of(h), h.and_then(|h| h.clock))
        } else {
            let h = pick(&self.srtcms, p);
            (ptr_of(h), null_mut(), h.and_then(|h| h.clock))
        };
        let null_handle = ptr_sr.is_null() && ptr_tr.is_null();
        let looks = || marker_looks(ptr_sr, ptr_tr);
        let before = (!null_handle && self.clock_ptr(clock).is_some()).then(looks);
        // Mostly a real colour.
        let pre = pre_color.map(|c| if c < 240 { u32::from(c % 3) } else { u32::from(c) });
        let mut color = 0xDEAD;
        let o = out(&mut color, null_out);
        // SAFETY: a live marker or NULL; a local or NULL.
        let (function, s) = unsafe {
            match (two_rate, pre) {
                (false, None) => ("rk_srtcm_mark", rk_srtcm_mark(ptr_sr, bytes, o)),
                (false, Some(pre)) => ("rk_srtcm_mark_aware", rk_srtcm_mark_aware(ptr_sr, bytes, pre, o)),
                (true, None) => ("rk_trtcm_mark", rk_trtcm_mark(ptr_tr, bytes, o)),
                (true, Some(pre)) => ("rk_trtcm_mark_aware", rk_trtcm_mark_aware(ptr_tr, bytes, pre, o)),
            }
        };
        if self.status(function, s, &[("marker", null_handle), ("out_color", null_out.0)], true) {
            assert!(bytes >= 0 && pre.is_none_or(|c| c <= 2), "{function}({bytes}, {pre:?}) accepted");
            assert!(color <= 2, "{function}: colour {color}");
            assert!(color >= pre.unwrap_or(0), "{function} improved colour {pre:?} to {color}");
        } else {
            assert_eq!(color, 0xDEAD, "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT {
                assert_eq!(self.argument(), if bytes < 0 { "bytes" } else { "pre_color" });
            }
            self.unchanged(clock, before, looks);
        }
    }

    pub(crate) fn marker_tokens(&mut self, two_rate: bool, p: Pick, null_first: MaybeNull, null_second: MaybeNull) {
        let (mut first, mut second) = (0xDEAD_u64, 0xDEAD_u64);
        let (a, b) = (out(&mut first, null_first), out(&mut second, null_second));
        let (function, s, bursts, names, null_handle) = if two_rate {
            let h = pick(&self.trtcms, p);
            // SAFETY: a live marker or NULL; locals or NULL.
            let s = unsafe { rk_trtcm_tokens(ptr_of(h), a, b) };
            ("rk_trtcm_tokens", s, h.map(|h| h.facts.bursts), ["out_peak", "out_committed"], h.is_none())
        } else {
            let h = pick(&self.srtcms, p);
            // SAFETY: as above.
            let s = unsafe { rk_srtcm_tokens(ptr_of(h), a, b) };
            ("rk_srtcm_tokens", s, h.map(|h| h.facts.bursts), ["out_committed", "out_excess"], h.is_none())
        };
        let required = [("marker", null_handle), (names[0], null_first.0), (names[1], null_second.0)];
        if self.status(function, s, &required, true) {
            let (x, y) = bursts.unwrap();
            assert!(first <= x && second <= y, "{function}: ({first}, {second}) beyond the bursts ({x}, {y})");
        } else {
            assert_eq!((first, second), (0xDEAD, 0xDEAD), "a failed call wrote its out-parameter");
        }
    }
}

fn marker_looks(sr: *const rk_srtcm, tr: *const rk_trtcm) -> Vec<String> {
    let (mut a, mut b) = (0, 0);
    // SAFETY: one live marker, the other NULL; locals.
    let s = unsafe {
        if sr.is_null() {
            rk_trtcm_tokens(tr, &mut a, &mut b)
        } else {
            rk_srtcm_tokens(sr, &mut a, &mut b)
        }
    };
    assert_eq!(s, rk_status::RK_OK);
    vec![format!("{a} {b}")]
}
