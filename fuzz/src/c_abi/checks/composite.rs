//! Composite limiters: a decision allowed only when every part allows,
//! the parts written within their buffer, `peek` predicting `check`.

use core::ptr::{null, null_mut};

use ratekeeper_c::composite::*;
use ratekeeper_c::decision::*;
use ratekeeper_c::spec::*;
use ratekeeper_c::status::rk_status;
use ratekeeper_core::Decision;

use super::super::input::{ClockChoice, MaybeNull, Pick, Spec};
use super::super::model::{out, pick, ptr_of, Facts, Held, World, MAX_LIVE};
use super::UNWRITTEN;
use crate::contract::{check_fields, Promises};

impl World {
    pub(crate) fn new_composite(&mut self, specs: &[Spec], null_specs: bool, clock: ClockChoice, null_out: MaybeNull) {
        if self.composites.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let specs: Vec<rk_limiter_spec> = specs.iter().take(4).map(|s| s.0).collect();
        // A NULL array with a length: it must not be read.
        let (limits, len) = if null_specs { (null(), specs.len() + 1) } else { (specs.as_ptr(), specs.len()) };
        let mut ptr = null_mut();
        // SAFETY: `len` specs or NULL; a live clock or NULL; a local or NULL.
        let s = unsafe { rk_composite_limiter_new(limits, len, clock_ptr, out(&mut ptr, null_out)) };
        if self.status("rk_composite_limiter_new", s, &[("out_limiter", null_out.0), ("limits", null_specs)], false) {
            assert!(!null_specs && !specs.is_empty());
            let mut n = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_composite_limiter_len(ptr, &mut n) }, rk_status::RK_OK);
            assert_eq!(n, specs.len());
            let id = self.id();
            self.composites.push(Held { ptr, clock: clock_id, id, facts: Facts { len: n, ..Facts::default() } });
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if null_out.0 {
                assert_eq!(s, rk_status::RK_NULL_POINTER);
            } else if specs.is_empty() && !null_specs {
                assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "limits_len"));
            } else if null_specs {
                assert_eq!((s, self.argument()), (rk_status::RK_NULL_POINTER, "limits"));
            } else {
                assert!(self.last_error.0.starts_with("rk_composite_limiter_new: limits["), "{}", self.last_error.0);
            }
        }
    }

    pub(crate) fn composite_op(
        &mut self,
        p: Pick,
        cost: i64,
        how: u8,
        parts_len: i8,
        null_out: MaybeNull,
        null_parts: MaybeNull,
    ) {
        let h = pick(&self.composites, p);
        let (ptr, clock, len) = (ptr_of(h), h.and_then(|h| h.clock), h.map_or(0, |h| h.facts.len));
        let manual = h.is_some() && self.clock_ptr(clock).is_some();
        let looks = || composite_looks(ptr);
        let before = (!ptr.is_null() && manual).then(looks);
        let predicted = (!ptr.is_null() && manual && cost >= 0).then(|| composite_peek(ptr, cost));
        let mut d = UNWRITTEN;
        let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
        let ok = match how % 3 {
            0 | 1 => {
                let peek_only = how % 3 == 1;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, s) = unsafe {
                    if peek_only {
                        ("rk_composite_limiter_peek", rk_composite_limiter_peek(ptr, cost, out(&mut d, null_out)))
                    } else {
                        ("rk_composite_limiter_check", rk_composite_limiter_check(ptr, cost, out(&mut d, null_out)))
                    }
                };
                let ok = self.status(function, s, &required, true);
                self.cost_status(s, cost, ok);
                ok
            }
            _ => {
                let parts_len = (len as isize + isize::from(parts_len % 3)).max(0) as usize;
                let mut parts = vec![UNWRITTEN; parts_len];
                let parts_ptr = if null_parts.0 { null_mut() } else { parts.as_mut_ptr() };
                // SAFETY: a live limiter or NULL; locals or NULL; `parts_len` decisions.
                let s =
                    unsafe { rk_composite_limiter_check_each(ptr, cost, out(&mut d, null_out), parts_ptr, parts_len) };
                let required = [required[0], required[1], ("out_parts", null_parts.0)];
                let ok = self.status("rk_composite_limiter_check_each", s, &required, true);
                if s != rk_status::RK_NULL_POINTER && parts_len < len {
                    assert_eq!((s, self.argument()), (rk_status::RK_BUFFER_TOO_SMALL, "parts_len"));
                } else {
                    self.cost_status(s, cost, ok);
                }
                if ok {
                    for part in &parts[..len] {
                        check_fields(
                            &Decision::from(part),
                            cost as u64,
                            Promises { zero_may_be_refused: true, ..Promises::default() },
                        );
                    }
                    assert_eq!(
                        d.allowed,
                        parts[..len].iter().all(|p| p.allowed),
                        "a composite's decision and its parts'"
                    );
                    assert!(parts[len..].iter().all(|p| *p == UNWRITTEN), "written beyond the parts");
                } else {
                    assert!(parts.iter().all(|p| *p == UNWRITTEN), "a failed call wrote its out-parameter");
                }
                ok
            }
        };
        if ok {
            check_fields(
                &Decision::from(&d),
                cost as u64,
                Promises { zero_may_be_refused: true, ..Promises::default() },
            );
            if let Some(predicted) = predicted {
                assert_eq!(d, predicted, "the composite's peek did not predict its decision");
            }
            self.latest = Some(d);
        } else {
            assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
            self.unchanged(clock, before, looks);
        }
    }
}

fn composite_peek(ptr: *const rk_composite_limiter, cost: i64) -> rk_decision {
    let mut d = UNWRITTEN;
    // SAFETY: a live limiter; a local.
    assert_eq!(unsafe { rk_composite_limiter_peek(ptr, cost, &mut d) }, rk_status::RK_OK);
    d
}

fn composite_looks(ptr: *const rk_composite_limiter) -> Vec<String> {
    [0, 1, 7, i64::MAX].iter().map(|&c| format!("{:?}", composite_peek(ptr, c))).collect()
}
