//! [`GcraKeyState`]: a GCRA key's state in one word, so that a keyed GCRA
//! slot (a `u64` key and its state) is 16 bytes. How it works is in the
//! type's docs (public, since it is `<Gcra as KeyedAlgorithm>::State`).

use std::fmt;
use std::num::NonZeroU64;

use ratekeeper_core::gcra::Gcra;
use ratekeeper_core::{Admission, Algorithm, Decision, Full, Packed};

use super::algorithm::{sealed, Aging, KeyedAlgorithm};
use super::table::SlotState;

/// The bits of a compact TAT: it is stored modulo 2⁶³.
const COMPACT_BITS: u32 = 63;
const COMPACT_MASK: u64 = (1 << COMPACT_BITS) - 1;

/// The largest tolerance, in ticks, that the compact form holds.
const MAX_COMPACT_TOLERANCE: u128 = 1 << 60;

/// The most ticks per microsecond (`count_per_period`) for the compact
/// form: more would make sweeps frequent.
const MAX_COMPACT_COUNT: u64 = 1 << 40;

/// A shard is swept once this many ticks have passed since its last sweep.
const SWEEP_TICKS: u64 = 1 << 62;

// The bound in `GcraKeyState`'s docs: a key is read at most a sweep period, a tolerance
// and a microsecond's ticks after its shard's last sweep, and that never
// wraps a full key's TAT into the window of leads. And sweeps are at least
// 2²² µs apart.
const _: () = {
    let furthest = SWEEP_TICKS as u128 + MAX_COMPACT_TOLERANCE + MAX_COMPACT_COUNT as u128;
    assert!(furthest < (1u128 << COMPACT_BITS) - MAX_COMPACT_TOLERANCE);
    assert!(SWEEP_TICKS / MAX_COMPACT_COUNT >= 1 << 22);
};

/// [`GcraKeyState`]: a GCRA key's state in one word, so that a keyed GCRA
/// slot (a `u64` key and its state) is 16 bytes.
///
/// Why: a keyed limiter with a million keys is a table far larger than the
/// CPU's caches, and a decision's time is mostly its one slot's miss. The
/// unkeyed [`Gcra`] keeps its TAT (theoretical arrival time) as an `i128`
/// of ticks (`1 / count_per_period` µs: see `ratekeeper_core::gcra`);
/// stored as such with the key and its hash, a slot was 32 bytes and the
/// table of a million keys 48 MiB. At 16 bytes it is 24 MiB, which a
/// server's last-level cache mostly holds.
///
/// ## The compact form: the TAT modulo 2⁶³
///
/// GCRA reads its TAT only as `max(TAT, now)`, and a keyed shard's time
/// never goes backwards, while an admission never leaves the TAT more than
/// the tolerance (`emission interval × limit`, in ticks) ahead of the time
/// it was made at. So at any time `now` a key's TAT is either within
/// `(now, now + tolerance]` — and then `lead = TAT − now` says everything —
/// or at most `now`, and then the key is *full*: decided exactly as a fresh
/// key ([`Full`](ratekeeper_core::Full)). The compact form stores
/// `TAT mod 2⁶³` (bit 0 set, so the word is never 0 and the state tells
/// itself apart from the wide form), and reads it back as
/// `d = (stored − now) mod 2⁶³`: `lead = d` when `0 < d ≤ tolerance`, else
/// the key is full.
///
/// That reading is wrong only for a full key whose TAT lies `2⁶³ −
/// tolerance` ticks or more behind now: its `d` wraps into the window.
/// The keyed limiter prevents it by **aging**: every shard
/// sweeps (drops its full keys, which changes no decision) once `2⁶²`
/// ticks have passed since its last sweep, and so every key it holds has a
/// TAT after its last sweep. A shard that decided nothing for a whole
/// tolerance holds only full keys, so when it is due a sweep after such a
/// pause it drops them all without reading them. With a tolerance of at
/// most 2⁶⁰ ticks and at most 2⁴⁰ ticks per microsecond, a key is never
/// read more than `2⁶² + 2⁶⁰ + 2⁴⁰ < 2⁶³ − 2⁶⁰` ticks after the sweep before
/// it (a compile-time assertion checks the sum), and a sweep
/// comes at most every 2²² µs (4 s; at 10⁹ per period, every 71 minutes).
///
/// A decision on a compact state is made by the core itself, on the TAT
/// relative to now: [`Gcra::check_tat`] with the TAT `lead` at time 0. Every
/// step of GCRA is a difference of times, so that is the decision at `now`
/// with the TAT `now + lead` (the property tests in the keyed module
/// compare it with the unkeyed `Gcra` across time jumps of more than 2⁶⁴
/// ticks).
///
/// ## The wide form: the TAT on the heap
///
/// A template with a tolerance above 2⁶⁰ ticks or more than 2⁴⁰ ticks per
/// microsecond (`count_per_period` above about 1.1 × 10¹²) keeps each key's
/// TAT as the core does, an `i128`, in a box the word points to (bit 0
/// clear): 16 more bytes per key and an allocation per new key, for
/// configurations that are rare. [`KeyedAlgorithm::fresh_state`] also
/// returns this form (TAT 0, valid at any time).
///
/// (Opaque: only the keyed limiter reads or makes one.)
pub struct GcraKeyState(NonZeroU64);

// SAFETY (for the auto traits): a wide state owns its `Box<i128>` alone;
// `&GcraKeyState` gives only shared reads of it. Both `Send` and `Sync`
// follow from `Box<i128>`'s, which NonZeroU64 already has.

impl GcraKeyState {
    /// The compact form of the TAT whose value modulo 2⁶³ is `tat`.
    #[inline]
    fn compact(tat: u64) -> Self {
        GcraKeyState(NonZeroU64::MIN | ((tat & COMPACT_MASK) << 1))
    }

    /// The TAT modulo 2⁶³, if the state is compact.
    #[inline]
    fn compact_tat(&self) -> Option<u64> {
        let word = self.0.get();
        (word & 1 == 1).then_some(word >> 1)
    }

    /// The wide form of `tat`.
    fn wide(tat: i128) -> Self {
        let ptr = Box::into_raw(Box::new(tat));
        // A box's address is never 0, and even (an i128 is aligned to at
        // least 8): bit 0 clear marks the wide form.
        let word = NonZeroU64::new(ptr as usize as u64).expect("a box is never at address 0");
        debug_assert_eq!(word.get() & 1, 0);
        GcraKeyState(word)
    }

    /// The wide form's TAT. Only for a state that is not compact.
    #[inline]
    fn wide_tat(&mut self) -> &mut i128 {
        debug_assert!(self.compact_tat().is_none());
        // SAFETY: a state with bit 0 clear was made by `wide` from a live
        // `Box<i128>` that only this state owns (it is not `Clone`), and
        // `&mut self` is unique.
        unsafe { &mut *(self.0.get() as usize as *mut i128) }
    }

    /// The wide form's TAT, read. Only for a state that is not compact.
    #[inline]
    fn wide_tat_value(&self) -> i128 {
        debug_assert!(self.compact_tat().is_none());
        // SAFETY: as in `wide_tat`; a shared read.
        unsafe { *(self.0.get() as usize as *const i128) }
    }
}

impl Drop for GcraKeyState {
    /// (Inlined: a decision overwrites a compact state, and the check that
    /// it owns no box then folds away rather than costing a call.)
    #[inline]
    fn drop(&mut self) {
        if self.compact_tat().is_none() {
            // SAFETY: a wide state owns the box `wide` leaked; it is freed
            // once, here.
            drop(unsafe { Box::from_raw(self.0.get() as usize as *mut i128) });
        }
    }
}

impl fmt::Debug for GcraKeyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.compact_tat() {
            Some(tat) => f.debug_struct("GcraKeyState").field("tat_mod_2_63", &tat).finish(),
            None => f.debug_struct("GcraKeyState").field("tat", &self.wide_tat_value()).finish(),
        }
    }
}

/// A GCRA slot stores no hash: the key and this one word fill 16 bytes, and
/// the state's word is never 0, which marks empty slots.
impl SlotState for GcraKeyState {
    type Tag = ();
}

/// The template's compact parameters: ticks per microsecond and the
/// tolerance in ticks, if the compact form can hold its keys' TATs.
#[inline]
fn compact_params(template: &Gcra) -> Option<(u64, u64)> {
    let count = template.count_per_period();
    let tolerance = u128::from(template.period_micros().max(1) as u64) * u128::from(template.limit());
    (count <= MAX_COMPACT_COUNT && tolerance <= MAX_COMPACT_TOLERANCE).then_some((count, tolerance as u64))
}

/// `now` in ticks, modulo 2⁶³ (`now_micros ≥ 0`).
#[inline]
fn now_mod(now_micros: i64, count: u64) -> u64 {
    (now_micros as u64).wrapping_mul(count) & COMPACT_MASK
}

/// How far a compact TAT lies ahead of now, in ticks: 0 when it does not
/// (the key is full). See [`GcraKeyState`] for why this reading is exact.
#[inline]
fn lead(stored: u64, now_mod: u64, tolerance: u64) -> u64 {
    let d = stored.wrapping_sub(now_mod) & COMPACT_MASK;
    if d <= tolerance {
        d
    } else {
        0
    }
}

/// The template with a key's TAT: the unkeyed limiter that key's state is.
#[inline]
fn with_tat(template: &Gcra, tat: i128) -> Gcra {
    let mut words = template.pack();
    let tat = tat as u128;
    words[0] = tat as u64;
    words[1] = (tat >> 64) as u64;
    Gcra::unpack(words)
}

/// A key's TAT as the unkeyed limiter would hold it at `now_micros`: for a
/// compact state, `now + lead` in ticks (for a full key, now itself, which
/// every decision reads as an earlier TAT).
#[inline]
fn absolute_tat(template: &Gcra, state: &GcraKeyState, now_micros: i64) -> i128 {
    match state.compact_tat() {
        Some(stored) => {
            let (count, tolerance) = compact_params(template).expect("a compact state has a compact template");
            let lead = lead(stored, now_mod(now_micros, count), tolerance);
            i128::from(now_micros) * i128::from(count) + i128::from(lead)
        }
        None => state.wide_tat_value(),
    }
}

impl sealed::Sealed for Gcra {}

/// GCRA per key: one word ([`GcraKeyState`]), decided where the template
/// is ([`Gcra::check_tat`]): GCRA is the keyed limiter's usual algorithm,
/// and assembling a whole limiter per decision was measurable there.
impl KeyedAlgorithm for Gcra {
    type State = GcraKeyState;
    const ALGORITHM: Algorithm = Algorithm::Gcra;

    /// The wide form with TAT 0, as [`Full::fresh`] has: valid at any time.
    fn fresh_state(&self) -> GcraKeyState {
        GcraKeyState::wide(0)
    }

    #[inline]
    fn fresh_state_at(&self, now_micros: i64) -> GcraKeyState {
        match compact_params(self) {
            // TAT = now: full, as a fresh TAT of 0 is (GCRA reads max(TAT, now)).
            Some((count, _)) => GcraKeyState::compact(now_mod(now_micros, count)),
            None => GcraKeyState::wide(0),
        }
    }

    fn aging(&self) -> Option<Aging> {
        let (count, tolerance) = compact_params(self)?;
        Some(Aging {
            sweep_every_micros: (SWEEP_TICKS / count.max(1)) as i64,
            all_full_after_micros: tolerance.div_ceil(count.max(1)) as i64,
        })
    }

    /// Inlined into the keyed check, with the wide case out of line: a
    /// call here put the decision through memory between the key's miss
    /// and the next key's hash.
    #[inline(always)]
    fn check_state(&self, state: &mut GcraKeyState, cost: u64, now_micros: i64) -> Decision {
        let Some(stored) = state.compact_tat() else {
            return check_wide(self, state, cost, now_micros);
        };
        // A compact state exists only for a compact template (the limiter
        // makes every state with `fresh_state_at`): the tolerance fits 64
        // bits, so it is computed without checking (a debug build checks).
        debug_assert!(compact_params(self).is_some());
        let count = self.count_per_period();
        let tolerance = (self.period_micros().max(1) as u64).wrapping_mul(self.limit());
        let now = now_mod(now_micros, count);
        let before = lead(stored, now, tolerance);
        // The decision at time 0 with the TAT `lead` ahead: GCRA's at `now`.
        let mut tat = i128::from(before);
        let decision = self.check_tat(&mut tat, cost, 0);
        if tat != i128::from(before) {
            // Admitted: the new lead is at most the tolerance, so it fits.
            *state = GcraKeyState::compact(now.wrapping_add(tat as u64));
        }
        decision
    }

    /// GCRA's test alone: a cost is admitted when the TAT it leads to is at
    /// most the tolerance ahead of now (`Gcra::decide_narrow`'s
    /// `now < allow_at` refuses, with `allow_at = TAT + increment −
    /// tolerance` and the TAT at least now). In 128 bits: an interval times
    /// a cost does not fit 64.
    #[inline]
    fn allow_state(&self, state: &mut GcraKeyState, cost: u64, now_micros: i64) -> bool {
        let Some(stored) = state.compact_tat() else {
            return self.check_state(state, cost, now_micros).allowed;
        };
        if cost == 0 {
            // A free look: admitted, nothing consumed.
            return true;
        }
        debug_assert!(compact_params(self).is_some());
        let tolerance = (self.period_micros().max(1) as u64).wrapping_mul(self.limit());
        let now = now_mod(now_micros, self.count_per_period());
        let after = u128::from(lead(stored, now, tolerance))
            + u128::from(self.period_micros().max(1) as u64) * u128::from(cost);
        if after > u128::from(tolerance) {
            return false;
        }
        // At most the tolerance: it fits.
        *state = GcraKeyState::compact(now.wrapping_add(after as u64));
        true
    }

    #[inline]
    fn peek_state(&self, state: &GcraKeyState, cost: u64, now_micros: i64) -> Decision {
        Admission::peek(&with_tat(self, absolute_tat(self, state, now_micros)), cost, now_micros)
    }

    #[inline]
    fn peek_fresh(&self, cost: u64, now_micros: i64) -> Decision {
        Admission::peek(&Full::fresh(self), cost, now_micros)
    }

    /// The lead over now shortened by `cost` emission intervals, never
    /// below 0 ([`Gcra::refund_tat`] on the TAT relative to now): a lead
    /// only ever shrinks, so the compact form still holds it.
    fn refund_state(&self, state: &mut GcraKeyState, cost: u64, now_micros: i64) {
        let Some(stored) = state.compact_tat() else {
            return self.refund_tat(state.wide_tat(), cost, now_micros);
        };
        let count = self.count_per_period();
        let tolerance = (self.period_micros().max(1) as u64).wrapping_mul(self.limit());
        let now = now_mod(now_micros, count);
        let mut tat = i128::from(lead(stored, now, tolerance));
        self.refund_tat(&mut tat, cost, 0);
        *state = GcraKeyState::compact(now.wrapping_add(tat as u64));
    }

    #[inline]
    fn state_is_full_at(&self, state: &GcraKeyState, now_micros: i64) -> bool {
        Full::is_full_at(&with_tat(self, absolute_tat(self, state, now_micros)), now_micros)
    }

    #[inline]
    fn state_full_at_micros(&self, state: &GcraKeyState, now_micros: i64) -> i64 {
        Full::full_at_micros(&with_tat(self, absolute_tat(self, state, now_micros)), now_micros)
    }
}

/// GCRA's check of a state kept in 128 bits (a template whose ticks do not
/// fit 64): rare, so out of line.
#[cold]
#[inline(never)]
fn check_wide(gcra: &Gcra, state: &mut GcraKeyState, cost: u64, now_micros: i64) -> Decision {
    gcra.check_tat(state.wide_tat(), cost, now_micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_sizes() {
        assert_eq!(std::mem::size_of::<Option<GcraKeyState>>(), 8);
        let g = Gcra::new(1_000_000, 1_000_000_000, 1_000_000).unwrap();
        assert!(g.fresh_state_at(5).compact_tat().is_some());
        assert!(g.aging().is_some());
        // Tolerance 2⁶² ticks: wide.
        let wide = Gcra::new((1 << 32) - 1, 1, 1 << 30).unwrap();
        assert!(wide.fresh_state_at(5).compact_tat().is_none());
        assert!(wide.aging().is_none());
        let mut state = wide.fresh_state_at(5);
        assert!(wide.check_state(&mut state, 1, 5).allowed);
        assert_eq!(format!("{state:?}"), format!("GcraKeyState {{ tat: {} }}", 5 + (1i128 << 30)));
        // Too many ticks per microsecond: wide.
        assert!(Gcra::new(1, 1 << 41, 1).unwrap().aging().is_none());
    }

    #[test]
    fn a_full_key_reads_as_full_until_the_window_wraps() {
        let tolerance = 1_000;
        assert_eq!(lead(5_000, 4_000, tolerance), 1_000);
        assert_eq!(lead(5_000, 5_000, tolerance), 0);
        assert_eq!(lead(5_000, 5_001, tolerance), 0);
        // 2⁶³ − tolerance ticks behind: would wrap; aging never lets a
        // key be read that late.
        assert_eq!(lead(5_000, (5_000 + (1u64 << 63) - 1) & COMPACT_MASK, tolerance), 1);
        // Across the wrap of the modulus.
        assert_eq!(lead(10, COMPACT_MASK - 9, tolerance), 20);
    }
}
