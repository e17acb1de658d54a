//! The admission-style limiters (`rk_limiter`): made from a spec or by a
//! typed constructor, each field checked; `peek` predicting `check`; the
//! token bucket's own operations, refused on another algorithm's limiter,
//! and its reservations.

use core::ptr::{null, null_mut};

use ratekeeper_c::decision::*;
use ratekeeper_c::limiter::*;
use ratekeeper_c::spec::*;
use ratekeeper_c::status::rk_status;
use ratekeeper_c::token_bucket::*;

use super::super::input::{ClockChoice, LimiterCtor, LimiterOp, MaybeNull, Pick, ReservationOp, Spec};
use super::super::model::{out, pick, ptr_of, stray_fields, Facts, Held, World, MAX_LIVE, SPEC_FIELDS};
use super::UNWRITTEN;

impl World {
    pub(crate) fn new_limiter(&mut self, ctor: LimiterCtor, clock: ClockChoice, null_out: MaybeNull) {
        if self.limiters.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        let out_ptr = out(&mut ptr, null_out);
        let (function, spec, null_spec, s) = match ctor {
            LimiterCtor::FromSpec(Spec(spec), null_spec) => {
                let spec_ptr: *const rk_limiter_spec = if null_spec.0 { null() } else { &spec };
                // SAFETY: a local or NULL; a live clock or NULL.
                ("rk_limiter_new", spec, null_spec.0, unsafe { rk_limiter_new(spec_ptr, clock_ptr, out_ptr) })
            }
            LimiterCtor::Typed(Spec(spec)) => {
                let spec = rk_limiter_spec { algorithm: spec.algorithm.clamp(1, 8), ..spec };
                // The typed constructors take only their own fields.
                let only = |mut s: rk_limiter_spec| {
                    let stray = stray_fields(&s);
                    for f in stray {
                        match f {
                            "rate" => s.rate = 0.0,
                            "burst" => s.burst = 0,
                            "max_burst" => s.max_burst = 0,
                            "count_per_period" => s.count_per_period = 0,
                            "period_micros" => s.period_micros = 0,
                            "capacity" => s.capacity = 0,
                            "interval_micros" => s.interval_micros = 0,
                            "limit" => s.limit = 0,
                            "window_micros" => s.window_micros = 0,
                            "sub_windows" => s.sub_windows = 0,
                            "slack" => s.slack = 0,
                            other => unreachable!("no spec field {other}"),
                        }
                    }
                    s
                };
                let s = only(spec);
                // SAFETY: a live clock or NULL; a local or NULL.
                let (function, status) = unsafe {
                    match s.algorithm {
                        RK_ALGORITHM_TOKEN_BUCKET => (
                            "rk_limiter_new_token_bucket",
                            rk_limiter_new_token_bucket(s.rate, s.burst, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_GCRA => (
                            "rk_limiter_new_gcra",
                            rk_limiter_new_gcra(s.max_burst, s.count_per_period, s.period_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_LEAKY_BUCKET_METER => (
                            "rk_limiter_new_leaky_bucket_meter",
                            rk_limiter_new_leaky_bucket_meter(
                                s.capacity,
                                s.count_per_period,
                                s.period_micros,
                                clock_ptr,
                                out_ptr,
                            ),
                        ),
                        RK_ALGORITHM_LEAKY_BUCKET_QUEUE if s.slack == 0 => (
                            "rk_limiter_new_leaky_bucket_queue",
                            rk_limiter_new_leaky_bucket_queue(s.capacity, s.interval_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_LEAKY_BUCKET_QUEUE => (
                            "rk_limiter_new_leaky_bucket_queue_with_slack",
                            rk_limiter_new_leaky_bucket_queue_with_slack(
                                s.capacity,
                                s.interval_micros,
                                s.slack,
                                clock_ptr,
                                out_ptr,
                            ),
                        ),
                        RK_ALGORITHM_FIXED_WINDOW => (
                            "rk_limiter_new_fixed_window",
                            rk_limiter_new_fixed_window(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_SLIDING_WINDOW => (
                            "rk_limiter_new_sliding_window",
                            rk_limiter_new_sliding_window(s.limit, s.window_micros, s.sub_windows, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_SLIDING_LOG => (
                            "rk_limiter_new_sliding_log",
                            rk_limiter_new_sliding_log(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                        _ => (
                            "rk_limiter_new_sliding_window_counter",
                            rk_limiter_new_sliding_window_counter(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                    }
                };
                (function, s, false, status)
            }
        };
        let required = [("out_limiter", null_out.0), ("spec", null_spec)];
        if self.status(function, s, &required, true) {
            assert!((1..=8).contains(&spec.algorithm), "{function} accepted algorithm {}", spec.algorithm);
            assert!(stray_fields(&spec).is_empty(), "{function} ignored fields {:?}", stray_fields(&spec));
            let id = self.id();
            let held =
                Held { ptr, clock: clock_id, id, facts: Facts { algorithm: spec.algorithm, ..Facts::default() } };
            let mut algorithm = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_limiter_algorithm(ptr, &mut algorithm) }, rk_status::RK_OK);
            assert_eq!(algorithm, spec.algorithm, "{function} made a limiter of another algorithm");
            // A new limiter is whole (the token bucket counts its tokens in
            // a double, as Go does: a burst beyond 2^53 is whole to the
            // nearest double).
            if clock_id.is_some() {
                let d = peek(ptr, 0);
                let whole = if spec.algorithm == RK_ALGORITHM_TOKEN_BUCKET {
                    d.remaining as f64 == d.limit as f64
                } else {
                    d.remaining == d.limit
                };
                assert!(whole, "{function}: a new limiter that is not whole: {d:?}");
            }
            self.limiters.push(held);
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT {
                assert!(SPEC_FIELDS.contains(&self.argument()), "{function} named {}", self.argument());
            }
            if !(1..=8).contains(&spec.algorithm) && !null_out.0 && !null_spec {
                assert_eq!(s, rk_status::RK_INVALID_ARGUMENT);
                assert_eq!(self.argument(), "algorithm");
            }
        }
        if !null_spec && !null_out.0 && !stray_fields(&spec).is_empty() {
            assert_eq!(s, rk_status::RK_INVALID_ARGUMENT, "{function}: fields {:?} set", stray_fields(&spec));
        }
    }

    pub(crate) fn limiter_op(&mut self, p: Pick, op: LimiterOp) {
        let h = pick(&self.limiters, p);
        let (ptr, clock, algorithm) = (ptr_of(h), h.and_then(|h| h.clock), h.map_or(0, |h| h.facts.algorithm));
        let manual = h.is_some() && clock.is_some();
        let monotonic = h.is_some() && clock.is_none();
        let looks = || limiter_looks(ptr, algorithm);
        let before = (!ptr.is_null() && self.clock_ptr(clock).is_some()).then(looks);
        let is = |a: u32| ptr.is_null() || algorithm == a;
        let ok = match op {
            LimiterOp::Check { cost, peek_only, null_out } => {
                let mut predicted = UNWRITTEN;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_limiter_peek(ptr, cost.0, out(&mut predicted, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
                let peeked = self.status("rk_limiter_peek", s, &required, true);
                self.cost_status(s, cost.0, peeked);
                if peeked {
                    self.decision(&predicted, cost.0, algorithm);
                } else {
                    assert_eq!(predicted, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                if peek_only {
                    peeked
                } else {
                    let mut d = UNWRITTEN;
                    // SAFETY: as above.
                    let s = unsafe { rk_limiter_check(ptr, cost.0, out(&mut d, null_out)) };
                    let checked = self.status("rk_limiter_check", s, &required, true);
                    assert_eq!(peeked, checked, "peek and check disagree on the arguments");
                    if checked {
                        self.decision(&d, cost.0, algorithm);
                        if manual {
                            assert_eq!(d, predicted, "peek did not predict check (cost {})", cost.0);
                        }
                    } else {
                        assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                    }
                    checked
                }
            }
            LimiterOp::Algorithm(null_out) => {
                let mut a = 0xDEAD;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_limiter_algorithm(ptr, out(&mut a, null_out)) };
                let ok = self.status(
                    "rk_limiter_algorithm",
                    s,
                    &[("limiter", ptr.is_null()), ("out_algorithm", null_out.0)],
                    true,
                );
                assert_eq!(a, if ok { algorithm } else { 0xDEAD });
                ok
            }
            LimiterOp::GcraLimit(null_out) | LimiterOp::MeterLevel(null_out) => {
                let gcra = matches!(op, LimiterOp::GcraLimit(_));
                let mut v = 0xDEAD;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, arg, s) = unsafe {
                    if gcra {
                        ("rk_gcra_limit", "out_limit", rk_gcra_limit(ptr, out(&mut v, null_out)))
                    } else {
                        (
                            "rk_leaky_bucket_meter_level",
                            "out_level",
                            rk_leaky_bucket_meter_level(ptr, out(&mut v, null_out)),
                        )
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true);
                self.algorithm_status(
                    s,
                    is(if gcra { RK_ALGORITHM_GCRA } else { RK_ALGORITHM_LEAKY_BUCKET_METER }),
                    null_out.0,
                );
                if ok && manual {
                    let limit = peek(ptr, 0).limit;
                    if gcra {
                        assert_eq!(v, limit, "rk_gcra_limit and the decisions' limit differ");
                    } else {
                        assert!(v <= limit, "a meter's level {v} above its capacity {limit}");
                    }
                }
                if !ok {
                    assert_eq!(v, 0xDEAD, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::QueueAcquire { cost, null_out } => {
                if monotonic {
                    return; // It would sleep.
                }
                let now = self.now(clock);
                let mut d = UNWRITTEN;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_leaky_bucket_queue_acquire(ptr, cost.0, out(&mut d, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
                let ok = self.status("rk_leaky_bucket_queue_acquire", s, &required, true);
                self.algorithm_status(s, is(RK_ALGORITHM_LEAKY_BUCKET_QUEUE), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    self.decision(&d, cost.0, algorithm);
                    self.waited(clock, now, if d.allowed { d.wait_micros } else { 0 }, "rk_leaky_bucket_queue_acquire");
                } else {
                    assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::Reserve { cost, null_out } => {
                let mut r = null_mut();
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_token_bucket_reserve(ptr, cost.0, out(&mut r, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_reservation", null_out.0)];
                let ok = self.status("rk_token_bucket_reserve", s, &required, true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    assert!(!r.is_null());
                    let (granted, tokens, delay) = reservation_facts(r);
                    assert!(tokens <= cost.0 as u64, "a reservation of {} holds {tokens}", cost.0);
                    if !granted {
                        assert_eq!((tokens, delay), (0, RK_NEVER), "a refused reservation");
                    } else {
                        assert!(delay >= 0);
                    }
                    if self.reservations.len() >= MAX_LIVE {
                        // SAFETY: just made.
                        unsafe { rk_reservation_free(r) };
                    } else {
                        self.reservations.push(r);
                    }
                } else {
                    assert!(r.is_null(), "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::Wait { cost, timeout, within, null_out } => {
                // On the monotonic clock only what does not sleep.
                let timeout = if monotonic && !within { timeout.0.min(0) } else { timeout.0 };
                let now = self.now(clock);
                let mut d = UNWRITTEN;
                let function = if within { "rk_token_bucket_reserve_within" } else { "rk_token_bucket_wait" };
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe {
                    if within {
                        rk_token_bucket_reserve_within(ptr, cost.0, timeout, out(&mut d, null_out))
                    } else {
                        rk_token_bucket_wait(ptr, cost.0, timeout, out(&mut d, null_out))
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), ("out_decision", null_out.0)], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    self.decision(&d, cost.0, algorithm);
                    if d.allowed {
                        assert!(
                            d.wait_micros <= timeout.max(0),
                            "{function} waits {} beyond its timeout {timeout}",
                            d.wait_micros
                        );
                    }
                    let slept = if within || !d.allowed { 0 } else { d.wait_micros };
                    self.waited(clock, now, slept, function);
                } else {
                    assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::SetRate(rate) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_token_bucket_set_rate(ptr, rate.0) };
                let ok = self.status("rk_token_bucket_set_rate", s, &[("limiter", ptr.is_null())], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), false);
                if s != rk_status::RK_WRONG_ALGORITHM && !ptr.is_null() {
                    assert_eq!(ok, rate.0 >= 0.0, "rk_token_bucket_set_rate({})", rate.0);
                    if ok {
                        // f64::MAX and +Infinity are both Go's rate.Inf.
                        let read = token_bucket_rate(ptr);
                        let inf = |r: f64| r == f64::MAX || r == f64::INFINITY;
                        assert!(read == rate.0 || inf(read) && inf(rate.0), "set the rate {}, read {read}", rate.0);
                    }
                }
                ok
            }
            LimiterOp::SetBurst(burst) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_token_bucket_set_burst(ptr, burst.0) };
                let ok = self.status("rk_token_bucket_set_burst", s, &[("limiter", ptr.is_null())], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), false);
                if s != rk_status::RK_WRONG_ALGORITHM && !ptr.is_null() {
                    assert_eq!(ok, burst.0 >= 0, "rk_token_bucket_set_burst({})", burst.0);
                    if ok {
                        let mut b = 0;
                        // SAFETY: live; a local.
                        assert_eq!(unsafe { rk_token_bucket_burst(ptr, &mut b) }, rk_status::RK_OK);
                        assert_eq!(b, burst.0 as u64, "the burst set is not the burst read");
                    }
                }
                ok
            }
            LimiterOp::Read { which, null_out } => {
                let mut f = f64::from_bits(0xDEAD);
                let mut n = 0xDEAD_u64;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, arg, s) = unsafe {
                    match which % 3 {
                        0 => ("rk_token_bucket_rate", "out_rate", rk_token_bucket_rate(ptr, out(&mut f, null_out))),
                        1 => ("rk_token_bucket_burst", "out_burst", rk_token_bucket_burst(ptr, out(&mut n, null_out))),
                        _ => {
                            ("rk_token_bucket_tokens", "out_tokens", rk_token_bucket_tokens(ptr, out(&mut f, null_out)))
                        }
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if ok && which % 3 != 1 {
                    assert!(!f.is_nan(), "{function} is NaN");
                }
                if ok && which % 3 == 0 {
                    assert!(f >= 0.0, "a rate of {f}");
                }
                if !ok {
                    assert_eq!((f.to_bits(), n), (0xDEAD, 0xDEAD), "a failed call wrote its out-parameter");
                }
                ok
            }
        };
        if !ok {
            self.unchanged(clock, before, looks);
        }
    }

    /// A token bucket operation's status on another algorithm's limiter.
    fn algorithm_status(&self, s: rk_status, right_algorithm: bool, null_out: bool) {
        if !right_algorithm && !null_out {
            assert_eq!(s, rk_status::RK_WRONG_ALGORITHM, "an algorithm's own function on another's limiter");
            assert_eq!(self.argument(), "limiter");
        }
        if right_algorithm {
            assert_ne!(s, rk_status::RK_WRONG_ALGORITHM);
        }
    }

    pub(crate) fn reservation_op(&mut self, p: Pick, op: ReservationOp) {
        let r = pick(&self.reservations, p).copied().unwrap_or(null_mut());
        match op {
            ReservationOp::Read { which, null_out } => {
                let mut b = false;
                let mut n = 0xDEAD_u64;
                let mut m = -7_i64;
                // SAFETY: a live reservation or NULL; locals or NULL.
                let (function, arg, s) = unsafe {
                    match which % 3 {
                        0 => ("rk_reservation_ok", "out_ok", rk_reservation_ok(r, out(&mut b, null_out))),
                        1 => ("rk_reservation_tokens", "out_tokens", rk_reservation_tokens(r, out(&mut n, null_out))),
                        _ => (
                            "rk_reservation_delay_micros",
                            "out_micros",
                            rk_reservation_delay_micros(r, out(&mut m, null_out)),
                        ),
                    }
                };
                if self.status(function, s, &[("reservation", r.is_null()), (arg, null_out.0)], true) {
                    assert!(m == -7 || m >= 0, "a negative delay");
                } else {
                    assert_eq!((b, n, m), (false, 0xDEAD, -7), "a failed call wrote its out-parameter");
                }
            }
            ReservationOp::Cancel => {
                // SAFETY: a live reservation or NULL.
                let s = unsafe { rk_reservation_cancel(r) };
                if self.status("rk_reservation_cancel", s, &[("reservation", r.is_null())], true) {
                    // The tokens went back, or the time to act had come.
                    let (_, tokens, delay) = reservation_facts(r);
                    assert!(tokens == 0 || delay == 0, "cancelled, yet {tokens} held for {delay} µs more");
                }
            }
        }
    }
}

fn peek(ptr: *const rk_limiter, cost: i64) -> rk_decision {
    let mut d = UNWRITTEN;
    // SAFETY: a live limiter; a local.
    assert_eq!(unsafe { rk_limiter_peek(ptr, cost, &mut d) }, rk_status::RK_OK);
    d
}

/// Everything observable of a limiter, without changing it.
fn limiter_looks(ptr: *const rk_limiter, algorithm: u32) -> Vec<String> {
    let mut looks: Vec<String> = [0, 1, 7, i64::MAX].iter().map(|&c| format!("{:?}", peek(ptr, c))).collect();
    if algorithm == RK_ALGORITHM_TOKEN_BUCKET {
        let mut tokens = 0.0;
        // SAFETY: a live limiter; a local.
        assert_eq!(unsafe { rk_token_bucket_tokens(ptr, &mut tokens) }, rk_status::RK_OK);
        looks.push(format!("{tokens:?} {:?}", token_bucket_rate(ptr)));
    }
    looks
}

fn token_bucket_rate(ptr: *const rk_limiter) -> f64 {
    let mut rate = 0.0;
    // SAFETY: a live token bucket; a local.
    assert_eq!(unsafe { rk_token_bucket_rate(ptr, &mut rate) }, rk_status::RK_OK);
    rate
}

/// A reservation's `ok`, `tokens` and `delay`.
fn reservation_facts(r: *const rk_reservation) -> (bool, u64, i64) {
    let (mut ok, mut tokens, mut delay) = (false, 0, 0);
    // SAFETY: a live reservation; locals.
    unsafe {
        assert_eq!(rk_reservation_ok(r, &mut ok), rk_status::RK_OK);
        assert_eq!(rk_reservation_tokens(r, &mut tokens), rk_status::RK_OK);
        assert_eq!(rk_reservation_delay_micros(r, &mut delay), rk_status::RK_OK);
    }
    (ok, tokens, delay)
}
