//! GCRA, the generic cell rate algorithm, with the reply of redis-cell's
//! `CL.THROTTLE`.
//!
//! GCRA (ITU-T I.371's "virtual scheduling" algorithm, from ATM networks)
//! keeps a single time per limiter: the *theoretical arrival time* (TAT) at
//! which the next request would be due if requests came exactly at the
//! rate. A request of cost `c` pushes the TAT by `c × emission interval`;
//! it is admitted if the pushed TAT is no more than the *delay variation
//! tolerance* (the burst, as a time) ahead of now. It is the token bucket
//! seen from the other side, in one word of state.
//!
//! This module follows redis-cell (brandur/redis-cell, `src/cell/mod.rs`,
//! `CL.THROTTLE key max_burst count period [quantity]`):
//!
//! * the rate is `count_per_period` per `period`; the emission interval is
//!   `period / count_per_period`;
//! * `limit = max_burst + 1` — an idle limiter admits `max_burst + 1` units
//!   at once — and the tolerance is `emission interval × limit`;
//! * the reply is `limited` (here `!allowed`), `limit`, `remaining`,
//!   `retry_after` and `reset_after`, with `remaining = ⌊(tolerance −
//!   (TAT − now)) / emission interval⌋` and `reset_after = TAT − now`;
//! * a cost of 0 is a free look; a cost above `limit` is refused and its
//!   retry-after is [`NEVER`] (redis-cell's `-1`): no wait can admit it.
//!
//! Three differences, each where redis-cell loses precision or goes wrong:
//! redis-cell truncates the emission interval to whole nanoseconds (3 per
//! second becomes 333,333,333 ns, a rate slightly above 3/s), while here
//! every time is counted in ticks of `1 / count_per_period` microsecond, so
//! `period / count_per_period` is exact and the limiter never admits more
//! than `count_per_period` per `period` in the long run. Durations are
//! reported in microseconds, rounded up (redis-cell rounds whole seconds up
//! only past a whole millisecond). And when an impossible request arrives
//! at an idle limiter, redis-cell's `reset_after` goes negative and its
//! `remaining` above the limit; here both are taken from `max(TAT, now)`.
//!
//! The worst case is the token bucket's: at most `limit + rate × T` units in
//! any interval of length T.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::full::{later_than, micros_ceil_signed, Full};
use crate::packed::Packed;
use crate::ticks;

/// GCRA with redis-cell's parameters and reply. Created idle (whole) at
/// time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gcra {
    /// The theoretical arrival time, in ticks of `1 / count_per_period` µs.
    tat: i128,
    /// redis-cell's `max_burst`.
    max_burst: u64,
    /// Units per period, at least 1 and at most `i64::MAX`.
    count_per_period: u64,
    /// The period in microseconds, at least 1. In ticks this is the
    /// emission interval.
    period_micros: i64,
    /// Derived from the three above when made, so that a decision need
    /// not divide for them: the tolerance in whole microseconds (the
    /// decision's `window_micros`) and the emission interval in whole
    /// microseconds (the `reset_after` of one unit taken from an idle
    /// limiter, the commonest decision of a keyed limiter). Both rounded
    /// up.
    window_micros: i64,
    interval_micros: i64,
}

impl Gcra {
    /// redis-cell's `CL.THROTTLE key max_burst count_per_period period`,
    /// with the period in microseconds: `count_per_period` units per
    /// `period_micros`, and `max_burst + 1` units at once.
    ///
    /// Errors when `max_burst` is `i64::MAX` or more (the limit would not
    /// fit), `count_per_period` is 0 or above `i64::MAX`, or `period_micros`
    /// is not positive.
    pub fn new(max_burst: u64, count_per_period: u64, period_micros: i64) -> Result<Self, Error> {
        if max_burst >= i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::MaxBurst, max_burst));
        }
        if count_per_period == 0 || count_per_period > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::CountPerPeriod, count_per_period));
        }
        if period_micros <= 0 {
            return Err(Error::invalid_int(Argument::Period, period_micros));
        }
        Ok(Gcra::from_parts(0, max_burst, count_per_period, period_micros))
    }

    /// A limiter with these fields and the values derived from them.
    fn from_parts(tat: i128, max_burst: u64, count_per_period: u64, period_micros: i64) -> Self {
        let mut g = Gcra { tat, max_burst, count_per_period, period_micros, window_micros: 0, interval_micros: 0 };
        g.window_micros = g.micros_ceil(g.tolerance());
        g.interval_micros = g.micros_ceil(g.emission_interval());
        g
    }

    /// redis-cell's `limit`: `max_burst + 1`.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.max_burst.saturating_add(1)
    }

    /// redis-cell's `max_burst`.
    pub fn max_burst(&self) -> u64 {
        self.max_burst
    }

    /// Units per period.
    pub fn count_per_period(&self) -> u64 {
        self.count_per_period
    }

    /// The period in microseconds.
    pub fn period_micros(&self) -> i64 {
        self.period_micros
    }

    /// The decision for `cost` when the TAT lies `lead_ticks` ahead of now
    /// (0 or less: not ahead), consuming nothing.
    ///
    /// For a store that keeps the TAT on its own clock and reports only how
    /// far ahead of that clock it lies — ratekeeper-redis's script, timed
    /// by the server — so the decision's fields come from this arithmetic,
    /// not from a second copy of it. A `check` admits exactly when this
    /// decision is admitted.
    pub fn decide_ahead(&self, cost: u64, lead_ticks: i128) -> Decision {
        let mut tat = lead_ticks.max(0);
        self.decide(tat, cost, 0, &mut tat)
    }

    /// [`check`](Admission::check) of a TAT kept outside the limiter:
    /// `self` gives the configuration (its own TAT is not read); `tat` is
    /// read and, when a cost is admitted, advanced.
    ///
    /// For a keyed limiter, which keeps one TAT per key beside one
    /// template: each decision reads the template where it is, rather
    /// than assembling a whole limiter from it.
    #[inline]
    pub fn check_tat(&self, tat: &mut i128, cost: u64, now_micros: i64) -> Decision {
        self.decide(*tat, cost, now_micros, tat)
    }

    /// [`refund`](Admission::refund) of a TAT kept outside the limiter, as
    /// [`check_tat`](Self::check_tat) decides on one: the TAT moved back by
    /// `cost` emission intervals, never before now.
    #[inline]
    pub fn refund_tat(&self, tat: &mut i128, cost: u64, now_micros: i64) {
        let now = self.ticks(now_micros);
        if *tat <= now {
            return;
        }
        let back = self.emission_interval().saturating_mul(i128::from(cost));
        *tat = tat.saturating_sub(back).max(now);
    }

    /// The emission interval in ticks (the period in microseconds).
    #[inline]
    fn emission_interval(&self) -> i128 {
        // (At least 1 even in a state no constructor makes: see `ticks`.)
        i128::from(self.period_micros.max(1))
    }

    /// The delay variation tolerance in ticks: `emission interval × limit`.
    #[inline]
    fn tolerance(&self) -> i128 {
        self.emission_interval().saturating_mul(i128::from(self.limit()))
    }

    /// A time in microseconds as ticks. Every product and difference of
    /// ticks saturates: valid parameters never come near `i128`'s range,
    /// but the std layer may decide on a torn copy of the state (then
    /// discarded), and the core never panics.
    #[inline]
    fn ticks(&self, micros: i64) -> i128 {
        i128::from(micros).saturating_mul(i128::from(self.count_per_period))
    }

    /// Ticks as whole microseconds, rounded up (never negative; saturating
    /// at [`NEVER`]).
    #[inline]
    fn micros_ceil(&self, ticks: i128) -> i64 {
        ticks::micros_ceil(ticks, self.count_per_period)
    }

    /// The decision for `cost` at `now_micros` with the TAT `tat` (not
    /// `self`'s); when it admits a cost, the new TAT is written to
    /// `tat_out`.
    ///
    /// (The TAT goes out through a reference rather than beside the
    /// decision in a tuple: moving the decision out of a tuple copied its
    /// `allowed` byte as a whole word just after writing it as a byte, a
    /// store the CPU cannot forward — a stall of a dozen cycles in every
    /// keyed decision.)
    #[inline(always)]
    fn decide(&self, tat: i128, cost: u64, now_micros: i64, tat_out: &mut i128) -> Decision {
        match self.narrow_ticks(tat, cost, now_micros) {
            Some(ticks) => self.decide_narrow(cost, ticks, tat_out),
            None => {
                let (decision, new_tat) = self.decide_wide(tat, cost, now_micros);
                if let Some(tat) = new_tat {
                    *tat_out = tat;
                }
                decision
            }
        }
    }

    /// A decision's inputs in 64-bit ticks, when each lies below 2⁶⁰ in
    /// magnitude (so no sum or difference of four of them leaves `i64`).
    ///
    /// Why a 64-bit path: a keyed limiter decides in a few tens of
    /// nanoseconds, and 128-bit arithmetic with saturation on every step
    /// was a large share of a GCRA decision. Real limiters stay on this
    /// path: ticks fit for 2⁶⁰ ÷ `count` microseconds after the limiter's
    /// time 0 (36 years at 1,000 per period, 19 minutes at 10⁹ — past
    /// that, the wide path decides, alike and a little slower).
    #[inline]
    fn narrow_ticks(&self, tat: i128, cost: u64, now_micros: i64) -> Option<NarrowTicks> {
        const BOUND: u64 = 1 << 60;
        let fits = |v: i64| v.unsigned_abs() < BOUND;
        let interval = self.period_micros.max(1);
        let ticks = NarrowTicks {
            now: now_micros.checked_mul(i64::try_from(self.count_per_period).ok()?)?,
            tat: i64::try_from(tat).ok()?,
            interval,
            tolerance: interval.checked_mul(i64::try_from(self.limit()).ok()?)?,
            increment: interval.checked_mul(i64::try_from(cost).ok()?)?,
        };
        (fits(ticks.now) && fits(ticks.tat) && fits(ticks.tolerance) && fits(ticks.increment)).then_some(ticks)
    }

    /// [`decide_wide`](Self::decide_wide) for inputs that fit 64 bits: the
    /// same steps, none of which can overflow, so none of the wide path's
    /// saturations can happen and both decide alike (the unit test
    /// `narrow_and_wide_decide_alike` compares them).
    #[inline]
    fn decide_narrow(&self, cost: u64, t: NarrowTicks, tat_out: &mut i128) -> Decision {
        let micros_ceil = |ticks: i64| ticks::micros_ceil_narrow(ticks, self.count_per_period);
        let tat = t.tat.max(t.now);
        let new_tat = tat + t.increment;
        let allow_at = new_tat - t.tolerance;
        // How far the TAT is ahead of now: 0 for an idle limiter.
        let lead = (tat - t.now) as u64;
        let lead_units = if lead == 0 { 0 } else { ticks::ceil_div(lead, t.interval as u64) };
        // `ttl`: the TAT's lead after the decision; `owed`: ⌈ttl ÷
        // interval⌉, computed without dividing when the limiter was idle.
        let (allowed, ttl, owed, retry_after) = if cost > 0 && t.now < allow_at {
            let retry_after = if t.increment <= t.tolerance { micros_ceil(allow_at - t.now) } else { NEVER };
            (false, tat - t.now, lead_units, retry_after)
        } else {
            (true, new_tat - t.now, lead_units + cost, 0)
        };
        if allowed && cost > 0 {
            *tat_out = i128::from(new_tat);
        }
        Decision {
            allowed,
            limit: self.limit(),
            // The wide path's ⌊(tolerance − ttl) ÷ interval⌋, 0 if negative:
            // with tolerance = interval × limit, that is `limit − owed`.
            remaining: self.limit().saturating_sub(owed),
            retry_after_micros: retry_after,
            reset_after_micros: if ttl == t.interval { self.interval_micros } else { micros_ceil(ttl) },
            wait_micros: 0,
            window_micros: self.window_micros,
        }
    }

    /// [`decide`](Self::decide) in 128-bit arithmetic, saturating: for
    /// every state, however large its values.
    #[cold]
    #[inline(never)]
    fn decide_wide(&self, tat: i128, cost: u64, now_micros: i64) -> (Decision, Option<i128>) {
        let now = self.ticks(now_micros);
        let interval = self.emission_interval();
        let tolerance = self.tolerance();
        let increment = interval.saturating_mul(i128::from(cost));
        let tat = tat.max(now);
        let new_tat = tat.saturating_add(increment);
        let allow_at = new_tat.saturating_sub(tolerance);
        let window = self.micros_ceil(tolerance);
        // A cost of 0 is a free look, admitted even when `now` lies so far
        // behind the TAT (time went backwards) that nothing else would be.
        let (allowed, ttl, retry_after) = if cost > 0 && now < allow_at {
            let retry_after =
                if increment <= tolerance { self.micros_ceil(allow_at.saturating_sub(now)) } else { NEVER };
            (false, tat.saturating_sub(now), retry_after)
        } else {
            (true, new_tat.saturating_sub(now), 0)
        };
        // ttl ≥ 0 (the TAT is taken no earlier than now), so the tolerance
        // left is at most the whole tolerance.
        let next = tolerance.saturating_sub(ttl);
        let remaining = ticks::units(next, interval);
        let decision = Decision {
            allowed,
            limit: self.limit(),
            remaining,
            retry_after_micros: retry_after,
            reset_after_micros: self.micros_ceil(ttl),
            wait_micros: 0,
            window_micros: window,
        };
        (decision, (allowed && cost > 0).then_some(new_tat))
    }
}

/// A GCRA decision's inputs in ticks, each below 2⁶⁰ in magnitude: see
/// [`Gcra::narrow_ticks`].
#[derive(Clone, Copy)]
struct NarrowTicks {
    now: i64,
    tat: i64,
    interval: i64,
    tolerance: i64,
    increment: i64,
}

impl Admission for Gcra {
    /// redis-cell's `CL.THROTTLE` with `quantity = cost`.
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let mut tat = self.tat;
        let decision = self.check_tat(&mut tat, cost, now_micros);
        self.tat = tat;
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(self.tat, cost, now_micros, &mut self.tat.clone())
    }

    /// Moves the theoretical arrival time back by `cost` emission
    /// intervals, never before now: the TAT is "when the limiter is idle
    /// again", and an idle limiter (TAT at or before now) has nothing to
    /// give back. A check and a refund of the same cost at the same time
    /// leave `max(TAT, now)`, all a decision reads, as it was.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let mut tat = self.tat;
        self.refund_tat(&mut tat, cost, now_micros);
        self.tat = tat;
    }
}

/// Full when the theoretical arrival time is not after now: the TAT of a
/// fresh limiter is 0, and a decision reads the TAT only as `max(TAT, now)`.
impl Full for Gcra {
    fn fresh(&self) -> Self {
        Gcra { tat: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        now_micros >= 0 && self.tat <= self.ticks(now_micros)
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        later_than(now_micros, micros_ceil_signed(self.tat, self.count_per_period).max(0))
    }
}

/// Words: the TAT (two words, low first), then the configuration, then
/// the values derived from it (kept, not recomputed: unpacking is on a
/// keyed limiter's hot path).
impl Packed<7> for Gcra {
    /// A decision changes only the TAT.
    const HOT: usize = 2;

    #[inline]
    fn pack(&self) -> [u64; 7] {
        let tat = self.tat as u128;
        [
            tat as u64,
            (tat >> 64) as u64,
            self.max_burst,
            self.count_per_period,
            self.period_micros as u64,
            self.window_micros as u64,
            self.interval_micros as u64,
        ]
    }

    #[inline]
    fn unpack(w: [u64; 7]) -> Self {
        Gcra {
            tat: (u128::from(w[0]) | (u128::from(w[1]) << 64)) as i128,
            max_burst: w[2],
            count_per_period: w[3],
            period_micros: w[4] as i64,
            window_micros: w[5] as i64,
            interval_micros: w[6] as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit path decides exactly as the 128-bit one wherever it
    /// decides at all, and it does decide for ordinary limiters.
    #[test]
    fn narrow_and_wide_decide_alike() {
        const EDGES: [i64; 16] = [
            i64::MIN,
            i64::MIN + 1,
            -(1 << 40),
            -7,
            -1,
            0,
            1,
            2,
            3,
            999,
            1_000_000,
            1 << 31,
            1 << 40,
            1 << 62,
            i64::MAX - 1,
            i64::MAX,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // A small value mostly, any value sometimes.
        let mut pick = |small: u64| {
            let r = random();
            if r % 3 == 0 {
                r >> (r % 64)
            } else {
                r % small
            }
        };
        let (mut cases, mut narrow) = (0, 0);
        for i in 0..60_000usize {
            let (a, b) = if i < EDGES.len() * EDGES.len() {
                (EDGES[i / EDGES.len()], EDGES[i % EDGES.len()])
            } else {
                (pick(1 << 50) as i64 - (1 << 40), pick(5_000_000) as i64)
            };
            let g = Gcra::from_parts(
                i128::from(a) << (i % 3),
                pick(50),
                if i % 7 == 0 { 0 } else { pick(2_000).max(1) },
                if i % 11 == 0 { b } else { pick(5_000_000) as i64 },
            );
            // Now near the TAT half the time, so both outcomes come up.
            let now = if i % 2 == 0 { b } else { (a / g.count_per_period.max(1) as i64).saturating_add(b % 1_000) };
            let cost = pick(60);
            cases += 1;
            if let Some(ticks) = g.narrow_ticks(g.tat, cost, now) {
                narrow += 1;
                let mut tat = None;
                let mut out = i128::MIN;
                let decision = g.decide_narrow(cost, ticks, &mut out);
                if out != i128::MIN {
                    tat = Some(out);
                }
                assert_eq!((decision, tat), g.decide_wide(g.tat, cost, now), "{g:?} cost {cost} now {now}");
            }
        }
        assert!(narrow > cases / 2, "{narrow} of {cases}");
        let ordinary = Gcra::new(9, 100, 1_000_000).unwrap();
        assert!(ordinary.narrow_ticks(0, 3, 1 << 50).is_some());
    }

    const SEC: i64 = 1_000_000;

    /// redis-cell's own `it_rate_limits` walk: max_burst 4, 1 per second.
    /// Reply: (limited, remaining, reset_after, retry_after) in µs.
    #[test]
    fn redis_cell_walkthrough() {
        let mut g = Gcra::new(4, 1, SEC).unwrap();
        let cases: &[(i64, u64, bool, u64, i64, i64)] = &[
            // (now, quantity, limited, remaining, reset_after, retry_after)
            (0, 6, true, 5, 0, NEVER), // more than the limit: never
            (0, 1, false, 4, SEC, 0),
            (0, 1, false, 3, 2 * SEC, 0),
            (0, 1, false, 2, 3 * SEC, 0),
            (0, 1, false, 1, 4 * SEC, 0),
            (0, 1, false, 0, 5 * SEC, 0),
            (0, 1, true, 0, 5 * SEC, SEC),
            (3_000_000, 1, false, 2, 3 * SEC, 0),
            (3_100_000, 1, false, 1, 3_900_000, 0),
            (4_000_000, 1, false, 1, 4 * SEC, 0),
            (8_000_000, 1, false, 4, SEC, 0),
            (9_500_000, 1, false, 4, SEC, 0),
            (9_500_000, 0, false, 4, SEC, 0), // a free look
            (9_500_000, 2, false, 2, 3 * SEC, 0),
            (9_500_000, 5, true, 2, 3 * SEC, 3 * SEC),
        ];
        for (i, &(now, quantity, limited, remaining, reset, retry)) in cases.iter().enumerate() {
            let d = g.check(quantity, now);
            assert_eq!(d.allowed, !limited, "case {i}");
            assert_eq!(d.limit, 5, "case {i}");
            assert_eq!(d.remaining, remaining, "case {i}");
            assert_eq!(d.reset_after_micros, reset, "case {i}");
            assert_eq!(d.retry_after_micros, retry, "case {i}");
            assert_eq!(d.window_micros, 5 * SEC);
        }
    }

    #[test]
    fn emission_interval_is_exact() {
        // 3 per second with room for 3,000: once spent, the limiter is whole
        // again after exactly 1,000 s. With redis-cell's interval truncated
        // to 333,333,333 ns it would be whole 1 µs earlier.
        let mut g = Gcra::new(2_999, 3, SEC).unwrap();
        assert!(g.check(3_000, 0).allowed);
        assert!(!g.peek(3_000, 1_000 * SEC - 1).allowed);
        assert_eq!(g.peek(0, 1_000 * SEC - 1).remaining, 2_999);
        assert!(g.peek(3_000, 1_000 * SEC).allowed);
        // One unit is 333,333.33 µs: reported rounded up.
        let d = Gcra::new(0, 3, SEC).unwrap().check(1, 0);
        assert_eq!(d.reset_after_micros, 333_334);
    }

    #[test]
    fn refusals_and_looks_change_nothing() {
        let mut g = Gcra::new(1, 10, SEC).unwrap();
        g.check(2, 0);
        let before = g;
        assert!(!g.check(1, 0).allowed);
        assert!(g.check(0, 50_000).allowed);
        let peeked = g.peek(1, 100_000);
        assert_eq!(g, before);
        assert!(peeked.allowed);
        assert_eq!(peeked, { g }.check(1, 100_000));
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert_eq!(Gcra::new(i64::MAX as u64, 1, 1), Err(Error::invalid_int(Argument::MaxBurst, i64::MAX)));
        assert_eq!(Gcra::new(0, 0, 1), Err(Error::invalid_int(Argument::CountPerPeriod, 0)));
        assert!(Gcra::new(0, u64::MAX, 1).is_err());
        assert_eq!(Gcra::new(0, 1, 0), Err(Error::invalid_int(Argument::Period, 0)));
        assert!(Gcra::new(0, 1, -5).is_err());
        assert!(Gcra::new(i64::MAX as u64 - 1, i64::MAX as u64, i64::MAX).is_ok());
    }

    #[test]
    fn time_going_backwards_mints_nothing() {
        let mut g = Gcra::new(2, 1, SEC).unwrap();
        assert!(g.check(3, 10 * SEC).allowed);
        assert!(!g.check(1, 0).allowed);
        assert!(!g.check(1, i64::MIN).allowed);
        assert!(!g.check(1, 10 * SEC).allowed);
        assert!(g.check(1, 11 * SEC).allowed);
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/gcra.rs): a look of cost 0
    /// at a time further back than the tolerance was refused, where every
    /// algorithm admits a cost of 0 (the `Admission` contract).
    #[test]
    fn a_look_of_cost_zero_is_admitted_even_back_in_time() {
        let mut g = Gcra::new(0, 1, 131_112).unwrap();
        let d = g.check(0, -580_593);
        assert!(d.allowed, "{d:?}");
        assert_eq!((d.remaining, d.retry_after_micros, d.reset_after_micros), (0, 0, 580_593));
        assert_eq!(g, Gcra::new(0, 1, 131_112).unwrap());
        let mut g = Gcra::new(2, 1, SEC).unwrap();
        assert!(g.check(3, 10 * SEC).allowed);
        assert!(g.check(0, 0).allowed && g.check(0, i64::MIN).allowed);
        assert!(!g.check(1, 0).allowed);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        for (burst, count, period) in [(0, 1, 1), (i64::MAX as u64 - 1, i64::MAX as u64, i64::MAX), (5, 1, i64::MAX)] {
            let mut g = Gcra::new(burst, count, period).unwrap();
            for now in [i64::MIN, -1, 0, 1, i64::MAX] {
                for cost in [0, 1, u64::MAX] {
                    let _ = g.check(cost, now);
                    let _ = g.peek(cost, now);
                }
            }
        }
    }

    #[test]
    fn packing_round_trips() {
        let mut g = Gcra::new(3, 7, 1_000).unwrap();
        let before = g.pack();
        g.check(2, -5);
        g.check(1, i64::MAX);
        assert_eq!(before[Gcra::HOT..], g.pack()[Gcra::HOT..]);
        assert_eq!(Gcra::unpack(g.pack()), g);
    }

    /// What the Redis script relies on: the decision from the TAT's lead
    /// alone is the decision of a limiter holding that TAT, for every cost,
    /// and it admits exactly when a check would.
    #[test]
    fn deciding_from_the_lead_matches_the_limiter() {
        let mut g = Gcra::new(4, 3, 1_000_000).unwrap();
        let mut now = 1_000;
        for step in 0..40i64 {
            let lead = g.tat - g.ticks(now);
            for cost in [0, 1, 2, 5, 6] {
                assert_eq!(g.decide_ahead(cost, lead), g.peek(cost, now), "cost {cost} at {now}");
            }
            let expected = g.decide_ahead(1 + step as u64 % 3, lead);
            assert_eq!(g.check(1 + step as u64 % 3, now), expected);
            now += 97_001 * (step % 5);
        }
    }
}
