//! srTCM, the single rate three colour marker of RFC 2697.
//!
//! Two token buckets share one rate, the Committed Information Rate (CIR,
//! bytes per second): the committed bucket C of size CBS and the excess
//! bucket E of size EBS, both full at the start. CIR times per second a
//! token is added to C, or to E once C is full (RFC 2697 §3: "if Tc is less
//! than CBS, Tc is incremented by one, else if Te is less than EBS, Te is
//! incremented by one, else neither Tc nor Te is incremented"). A packet of
//! B bytes is marked (§4):
//!
//! * colour-blind: green if `Tc − B ≥ 0` (and `Tc −= B`); else yellow if
//!   `Te − B ≥ 0` (and `Te −= B`); else red;
//! * colour-aware: green if it arrives green and `Tc − B ≥ 0`; else yellow
//!   if it arrives green or yellow and `Te − B ≥ 0`; else red.
//!
//! Tokens are whole bytes and the increments happen exactly as the RFC
//! says, one at a time, the k-th at `k / CIR` seconds after creation (time
//! is whole microseconds; the k-th increment is due at the first
//! microsecond `t` with `⌊t × CIR / 10⁶⌋ ≥ k`). A property test replays the
//! RFC's rules one increment at a time against this implementation.
//!
//! A marker polices: it never refuses or delays; what to do with a yellow or
//! red packet (drop it, lower its priority) is the caller's choice. A time
//! earlier than the latest seen counts as the latest.

use crate::color::{events, Color};
use crate::error::{Argument, Error};
use crate::packed::Packed;

/// RFC 2697's srTCM. Created with both buckets full at time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrTcm {
    /// Tc: committed tokens (bytes).
    tc: u64,
    /// Te: excess tokens (bytes).
    te: u64,
    /// When the tokens were last updated (microseconds).
    last: i64,
    cir: u64,
    cbs: u64,
    ebs: u64,
}

impl SrTcm {
    /// An srTCM with a committed rate of `cir` bytes per second, a committed
    /// burst of `cbs` bytes and an excess burst of `ebs` bytes.
    ///
    /// Errors when `cir` is 0, any parameter is above `i64::MAX`, or `cbs`
    /// and `ebs` are both 0 (RFC 2697 §2: "at least one of them must be
    /// larger than 0"). The RFC recommends bursts at least as large as the
    /// largest packet.
    pub fn new(cir: u64, cbs: u64, ebs: u64) -> Result<Self, Error> {
        if cir == 0 || cir > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::Cir, cir));
        }
        if cbs > i64::MAX as u64 || (cbs == 0 && ebs == 0) {
            return Err(Error::invalid_uint(Argument::SrTcmCbs, cbs));
        }
        if ebs > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::Ebs, ebs));
        }
        Ok(SrTcm { tc: cbs, te: ebs, last: 0, cir, cbs, ebs })
    }

    /// The committed information rate, bytes per second.
    pub fn cir(&self) -> u64 {
        self.cir
    }

    /// The committed burst size, bytes.
    pub fn cbs(&self) -> u64 {
        self.cbs
    }

    /// The excess burst size, bytes.
    pub fn ebs(&self) -> u64 {
        self.ebs
    }

    /// `(Tc, Te)` at `now_micros`, after the increments due by then.
    #[inline]
    pub fn tokens_at(&self, now_micros: i64) -> (u64, u64) {
        let s = self.updated(now_micros);
        (s.tc, s.te)
    }

    /// Marks a packet of `bytes` arriving at `now_micros`, colour-blind.
    /// (Colour-blind marking is colour-aware marking of a green packet: the
    /// RFC's two rule sets coincide then.)
    #[inline]
    pub fn mark(&mut self, bytes: u64, now_micros: i64) -> Color {
        self.mark_aware(bytes, Color::Green, now_micros)
    }

    /// Marks a packet of `bytes` that arrives already coloured `color`,
    /// colour-aware: the mark is never better than `color`.
    #[inline]
    pub fn mark_aware(&mut self, bytes: u64, color: Color, now_micros: i64) -> Color {
        *self = self.updated(now_micros);
        if color == Color::Green && self.tc >= bytes {
            self.tc -= bytes;
            Color::Green
        } else if color != Color::Red && self.te >= bytes {
            self.te -= bytes;
            Color::Yellow
        } else {
            Color::Red
        }
    }

    /// The state after the increments due by `now` (clamped to the latest
    /// time seen).
    #[inline]
    fn updated(&self, now: i64) -> SrTcm {
        let now = now.max(self.last);
        let due = events(now, self.cir) - events(self.last, self.cir);
        // Each increment goes to C until it is full, then to E.
        let cbs = self.cbs.max(self.tc);
        let to_c = due.min(u128::from(cbs - self.tc)) as u64;
        let to_e = (due - u128::from(to_c)).min(u128::from(u64::MAX)) as u64;
        let te = if self.te >= self.ebs { self.te } else { self.te.saturating_add(to_e).min(self.ebs) };
        SrTcm { tc: self.tc + to_c, te, last: now, ..*self }
    }
}

/// Words: the two buckets and their time, then the configuration.
impl Packed<6> for SrTcm {
    /// Marking changes the buckets and their time.
    const HOT: usize = 3;

    #[inline]
    fn pack(&self) -> [u64; 6] {
        [self.tc, self.te, self.last as u64, self.cir, self.cbs, self.ebs]
    }

    #[inline]
    fn unpack(w: [u64; 6]) -> Self {
        SrTcm { tc: w[0], te: w[1], last: w[2] as i64, cir: w[3], cbs: w[4], ebs: w[5] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Color::*;

    #[test]
    fn colour_blind_marking_follows_section_4() {
        // CIR 1000 B/s, CBS 1500, EBS 1500: full buckets take a 1500-byte
        // packet green, the next yellow, the next red.
        let mut m = SrTcm::new(1_000, 1_500, 1_500).unwrap();
        assert_eq!(m.mark(1_500, 0), Green);
        assert_eq!(m.mark(1_500, 0), Yellow);
        assert_eq!(m.mark(1_500, 0), Red);
        assert_eq!(m.tokens_at(0), (0, 0));
        // A red packet takes nothing: a small one still fits nowhere, but
        // after 100 ms C has 100 bytes again.
        assert_eq!(m.mark(1, 999), Red);
        assert_eq!(m.mark(100, 100_000), Green);
    }

    #[test]
    fn tokens_fill_c_first_then_e() {
        let mut m = SrTcm::new(1_000, 1_000, 500).unwrap();
        m.mark(1_000, 0);
        m.mark(500, 0);
        assert_eq!(m.tokens_at(0), (0, 0));
        assert_eq!(m.tokens_at(999_999), (999, 0));
        assert_eq!(m.tokens_at(1_000_000), (1_000, 0));
        assert_eq!(m.tokens_at(1_250_000), (1_000, 250));
        assert_eq!(m.tokens_at(100_000_000), (1_000, 500));
    }

    #[test]
    fn colour_aware_never_improves_a_colour() {
        let mut m = SrTcm::new(1_000, 1_000, 1_000).unwrap();
        assert_eq!(m.mark_aware(100, Red, 0), Red);
        assert_eq!(m.tokens_at(0), (1_000, 1_000));
        // A yellow packet uses E even while C is full.
        assert_eq!(m.mark_aware(100, Yellow, 0), Yellow);
        assert_eq!(m.tokens_at(0), (1_000, 900));
        // A green packet too large for C falls back to E.
        assert_eq!(m.mark_aware(950, Green, 0), Green);
        assert_eq!(m.mark_aware(100, Green, 0), Yellow);
        assert_eq!(m.mark_aware(900, Green, 0), Red);
    }

    #[test]
    fn zero_byte_packets_are_green_and_one_bucket_may_be_empty() {
        let mut m = SrTcm::new(1, 0, 10).unwrap();
        assert_eq!(m.mark(0, 0), Green);
        assert_eq!(m.mark(1, 0), Yellow);
        let mut m = SrTcm::new(1, 10, 0).unwrap();
        assert_eq!(m.mark(11, 0), Red);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert_eq!(SrTcm::new(0, 1, 1), Err(Error::invalid_int(Argument::Cir, 0)));
        assert_eq!(SrTcm::new(1, 0, 0), Err(Error::invalid_int(Argument::SrTcmCbs, 0)));
        assert!(SrTcm::new(u64::MAX, 1, 1).is_err());
        assert!(SrTcm::new(1, u64::MAX, 1).is_err());
        assert!(SrTcm::new(1, 1, u64::MAX).is_err());
    }

    #[test]
    fn time_going_backwards_adds_nothing() {
        let mut m = SrTcm::new(1_000, 10, 0).unwrap();
        assert_eq!(m.mark(10, 5_000_000), Green);
        assert_eq!(m.mark(1, 0), Red);
        assert_eq!(m.mark(1, i64::MIN), Red);
        assert_eq!(m.mark(1, 5_001_000), Green);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let max = i64::MAX as u64;
        let mut m = SrTcm::new(max, max, max).unwrap();
        for now in [i64::MIN, 0, i64::MAX, 5] {
            for bytes in [0, 1, u64::MAX] {
                for c in [Green, Yellow, Red] {
                    let _ = (m.mark(bytes, now), m.mark_aware(bytes, c, now), m.tokens_at(now));
                }
            }
        }
        let _ = SrTcm::unpack([u64::MAX; 6]).tokens_at(i64::MAX);
        let _ = SrTcm::unpack([u64::MAX, 0, 0, u64::MAX, 0, 0]).tokens_at(i64::MAX);
    }

    #[test]
    fn packing_round_trips() {
        let mut m = SrTcm::new(1_000, 100, 100).unwrap();
        let before = m.pack();
        m.mark(150, 10);
        assert_eq!(before[SrTcm::HOT..], m.pack()[SrTcm::HOT..]);
        assert_eq!(SrTcm::unpack(m.pack()), m);
    }
}
