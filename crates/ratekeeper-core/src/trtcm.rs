//! trTCM, the two rate three colour marker of RFC 2698.
//!
//! Two independent token buckets: the peak bucket P of size PBS filled at
//! the Peak Information Rate (PIR), and the committed bucket C of size CBS
//! filled at the Committed Information Rate (CIR), both in bytes and bytes
//! per second, both full at the start (RFC 2698 §3: "Tp is incremented by
//! one PIR times per second up to PBS and Tc is incremented by one CIR
//! times per second up to CBS"). A packet of B bytes is marked (§3):
//!
//! * colour-blind: red if `Tp − B < 0`; else yellow if `Tc − B < 0` (and
//!   `Tp −= B`); else green (and both `Tp −= B`, `Tc −= B`);
//! * colour-aware: red if it arrives red or `Tp − B < 0`; else yellow if it
//!   arrives yellow or `Tc − B < 0` (and `Tp −= B`); else green (both).
//!
//! So a green packet conforms to both rates, a yellow one to the peak rate
//! only, and a red one exceeds the peak. As in [`srtcm`](crate::srtcm),
//! tokens are whole bytes and each bucket's k-th increment is at `k / rate`
//! seconds after creation; a property test replays the RFC's rules one
//! increment at a time against this implementation. A time earlier than the
//! latest seen counts as the latest.

use crate::color::{events, Color};
use crate::error::{Argument, Error};
use crate::packed::Packed;

/// RFC 2698's trTCM. Created with both buckets full at time 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrTcm {
    /// Tp: peak tokens (bytes).
    tp: u64,
    /// Tc: committed tokens (bytes).
    tc: u64,
    /// When the tokens were last updated (microseconds).
    last: i64,
    pir: u64,
    pbs: u64,
    cir: u64,
    cbs: u64,
}

impl TrTcm {
    /// A trTCM with a peak rate of `pir` bytes per second and burst of `pbs`
    /// bytes, and a committed rate of `cir` and burst of `cbs`.
    ///
    /// Errors when a rate or burst is 0 or above `i64::MAX`, or `pir` is
    /// below `cir` (RFC 2698 §2: "The PIR must be equal to or greater than
    /// the CIR"; both bursts "must be configured to be greater than 0").
    pub fn new(pir: u64, pbs: u64, cir: u64, cbs: u64) -> Result<Self, Error> {
        let max = i64::MAX as u64;
        if cir == 0 || cir > max {
            return Err(Error::invalid_uint(Argument::Cir, cir));
        }
        if pir < cir || pir > max {
            return Err(Error::invalid_uint(Argument::Pir, pir));
        }
        if pbs == 0 || pbs > max {
            return Err(Error::invalid_uint(Argument::Pbs, pbs));
        }
        if cbs == 0 || cbs > max {
            return Err(Error::invalid_uint(Argument::Cbs, cbs));
        }
        Ok(TrTcm { tp: pbs, tc: cbs, last: 0, pir, pbs, cir, cbs })
    }

    /// The peak information rate, bytes per second.
    pub fn pir(&self) -> u64 {
        self.pir
    }

    /// The peak burst size, bytes.
    pub fn pbs(&self) -> u64 {
        self.pbs
    }

    /// The committed information rate, bytes per second.
    pub fn cir(&self) -> u64 {
        self.cir
    }

    /// The committed burst size, bytes.
    pub fn cbs(&self) -> u64 {
        self.cbs
    }

    /// `(Tp, Tc)` at `now_micros`, after the increments due by then.
    #[inline]
    pub fn tokens_at(&self, now_micros: i64) -> (u64, u64) {
        let s = self.updated(now_micros);
        (s.tp, s.tc)
    }

    /// Marks a packet of `bytes` arriving at `now_micros`, colour-blind.
    #[inline]
    pub fn mark(&mut self, bytes: u64, now_micros: i64) -> Color {
        self.mark_aware(bytes, Color::Green, now_micros)
    }

    /// Marks a packet of `bytes` that arrives already coloured `color`,
    /// colour-aware: the mark is never better than `color`. (Colour-blind
    /// marking is colour-aware marking of a green packet: the RFC's two
    /// rule sets coincide then.)
    #[inline]
    pub fn mark_aware(&mut self, bytes: u64, color: Color, now_micros: i64) -> Color {
        *self = self.updated(now_micros);
        if color == Color::Red || self.tp < bytes {
            Color::Red
        } else if color == Color::Yellow || self.tc < bytes {
            self.tp -= bytes;
            Color::Yellow
        } else {
            self.tp -= bytes;
            self.tc -= bytes;
            Color::Green
        }
    }

    /// The state after the increments due by `now` (clamped to the latest
    /// time seen).
    #[inline]
    fn updated(&self, now: i64) -> TrTcm {
        let now = now.max(self.last);
        let refill = |tokens: u64, size: u64, rate: u64| -> u64 {
            let due = events(now, rate) - events(self.last, rate);
            if tokens >= size {
                tokens
            } else {
                (u128::from(tokens) + due).min(u128::from(size)) as u64
            }
        };
        TrTcm { tp: refill(self.tp, self.pbs, self.pir), tc: refill(self.tc, self.cbs, self.cir), last: now, ..*self }
    }
}

/// Words: the two buckets and their time, then the configuration.
impl Packed<7> for TrTcm {
    /// Marking changes the buckets and their time.
    const HOT: usize = 3;

    #[inline]
    fn pack(&self) -> [u64; 7] {
        [self.tp, self.tc, self.last as u64, self.pir, self.pbs, self.cir, self.cbs]
    }

    #[inline]
    fn unpack(w: [u64; 7]) -> Self {
        TrTcm { tp: w[0], tc: w[1], last: w[2] as i64, pir: w[3], pbs: w[4], cir: w[5], cbs: w[6] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Color::*;

    #[test]
    fn colour_blind_marking_follows_section_3() {
        // PIR 2000 B/s, PBS 2000; CIR 1000 B/s, CBS 1000.
        let mut m = TrTcm::new(2_000, 2_000, 1_000, 1_000).unwrap();
        assert_eq!(m.mark(1_000, 0), Green); // both buckets
        assert_eq!(m.mark(500, 0), Yellow); // C empty, P has 1000
        assert_eq!(m.tokens_at(0), (500, 0));
        assert_eq!(m.mark(600, 0), Red); // P has only 500
        assert_eq!(m.tokens_at(0), (500, 0), "red takes nothing");
        // 250 ms later P has 1000, C 250.
        assert_eq!(m.tokens_at(250_000), (1_000, 250));
        assert_eq!(m.mark(250, 250_000), Green);
    }

    #[test]
    fn colour_aware_never_improves_a_colour() {
        let mut m = TrTcm::new(2_000, 2_000, 1_000, 1_000).unwrap();
        assert_eq!(m.mark_aware(100, Red, 0), Red);
        assert_eq!(m.tokens_at(0), (2_000, 1_000));
        assert_eq!(m.mark_aware(100, Yellow, 0), Yellow);
        assert_eq!(m.tokens_at(0), (1_900, 1_000));
        assert_eq!(m.mark_aware(100, Green, 0), Green);
        assert_eq!(m.tokens_at(0), (1_800, 900));
        assert_eq!(m.mark_aware(1_900, Green, 0), Red);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert_eq!(TrTcm::new(1, 1, 2, 1), Err(Error::invalid_int(Argument::Pir, 1)));
        assert_eq!(TrTcm::new(1, 1, 0, 1), Err(Error::invalid_int(Argument::Cir, 0)));
        assert_eq!(TrTcm::new(1, 0, 1, 1), Err(Error::invalid_int(Argument::Pbs, 0)));
        assert_eq!(TrTcm::new(1, 1, 1, 0), Err(Error::invalid_int(Argument::Cbs, 0)));
        assert!(TrTcm::new(u64::MAX, 1, 1, 1).is_err());
        assert!(TrTcm::new(5, 5, 5, 5).is_ok());
    }

    #[test]
    fn time_going_backwards_adds_nothing() {
        let mut m = TrTcm::new(1_000, 10, 1_000, 10).unwrap();
        assert_eq!(m.mark(10, 5_000_000), Green);
        assert_eq!(m.mark(1, 0), Red);
        assert_eq!(m.mark(1, i64::MIN), Red);
        assert_eq!(m.mark(1, 5_001_000), Green);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let max = i64::MAX as u64;
        let mut m = TrTcm::new(max, max, max, max).unwrap();
        for now in [i64::MIN, 0, i64::MAX, 5] {
            for bytes in [0, 1, u64::MAX] {
                for c in [Green, Yellow, Red] {
                    let _ = (m.mark(bytes, now), m.mark_aware(bytes, c, now), m.tokens_at(now));
                }
            }
        }
        let _ = TrTcm::unpack([u64::MAX; 7]).tokens_at(i64::MAX);
    }

    #[test]
    fn packing_round_trips() {
        let mut m = TrTcm::new(2_000, 200, 1_000, 100).unwrap();
        let before = m.pack();
        m.mark(150, 10);
        assert_eq!(before[TrTcm::HOT..], m.pack()[TrTcm::HOT..]);
        assert_eq!(TrTcm::unpack(m.pack()), m);
    }
}
