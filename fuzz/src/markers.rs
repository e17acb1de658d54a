//! The three-colour markers (`ratekeeper_core::{SrTcm, TrTcm}`, RFC 2697
//! and RFC 2698) and their std wrappers on a manual clock.
//!
//! Invariants, after every packet: the buckets never above their sizes; a
//! red packet takes nothing, a yellow one only from the bucket its colour
//! says, a green one exactly its size; colour-aware marking never improves
//! a packet's colour, and colour-blind marking is colour-aware marking of
//! a green packet. Over the run, in any interval `[a, b]` of the times the
//! marker works at (a time earlier than the latest counts as the latest),
//! the bytes marked green are at most the committed bucket's size plus the
//! increments of its rate in `(a, b]` (the RFCs' increments: the k-th at
//! `k / rate` seconds) — and green and yellow together at most the sizes
//! of the buckets they come from plus their increments.

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::Clock;
use ratekeeper_core::{Argument, Color, Error, Packed, SrTcm, TrTcm};

use crate::mirror::{clock_at, Advance, TestClock};
use crate::values::{wild_u64, Step, Timeline};

/// Packet sizes: small ones against small buckets (exact fits are
/// common), large ones, sometimes anything.
#[derive(Debug, Clone, Copy)]
pub struct Bytes(pub u64);

impl<'a> Arbitrary<'a> for Bytes {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Bytes(match u.int_in_range(0u8..=9)? {
            0 => wild_u64(u)?,
            1..=3 => u.int_in_range(0..=1_600)?,
            _ => u.int_in_range(0..=12)?,
        }))
    }
}

/// A packet's colour as it arrives: none (colour-blind) or one.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum PreColor {
    /// Colour-blind `mark`.
    Blind,
    /// `mark_aware` of a green packet.
    Green,
    /// `mark_aware` of a yellow packet.
    Yellow,
    /// `mark_aware` of a red packet.
    Red,
}

impl PreColor {
    fn color(self) -> Option<Color> {
        match self {
            PreColor::Blind => None,
            PreColor::Green => Some(Color::Green),
            PreColor::Yellow => Some(Color::Yellow),
            PreColor::Red => Some(Color::Red),
        }
    }
}

/// One operation.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// Marks a packet after moving the time.
    Mark(Step, Bytes, PreColor),
    /// `tokens_at` after moving the time.
    Tokens(Step),
    /// Moves the std marker's clock.
    StdAdvance(Advance),
    /// Marks a packet on the std marker.
    StdMark(Bytes, PreColor),
    /// The std marker's `tokens`.
    StdTokens,
}

/// A rate in bytes per second, or a bucket size.
fn param(u: &mut Unstructured<'_>, sane: bool, max: u64) -> Result<u64> {
    if sane {
        u.int_in_range(0..=max)
    } else {
        wild_u64(u)
    }
}

/// `⌊t × rate / 10⁶⌋`: how many increments of `rate` per second are due
/// by `t` µs (RFC 2697 §3: the k-th at `k / rate` seconds).
fn increments(t: i64, rate: u64) -> u128 {
    u128::from(t.max(0) as u64) * u128::from(rate) / 1_000_000
}

/// Bytes marked at times: at most `size + increments(b) − increments(a)`
/// in every closed interval `[a, b]`.
fn check_bucket_bound(events: &[(i64, u64)], size: u64, rate: u64, what: &str) {
    let mut events: Vec<(i64, u64)> = events.iter().copied().filter(|e| e.1 > 0).collect();
    events.sort_unstable();
    for i in 0..events.len() {
        let mut sum = 0u128;
        for &(t, bytes) in &events[i..] {
            sum += u128::from(bytes);
            let allowed = u128::from(size) + increments(t, rate) - increments(events[i].0, rate);
            assert!(sum <= allowed, "{sum} bytes {what} in [{}, {t}]: more than {allowed}", events[i].0);
        }
    }
}

/// The std marker and its core at the clock's time.
#[derive(Debug)]
struct StdMirror<S, M> {
    clock: TestClock,
    origin: i64,
    std: S,
    core: M,
}

impl<S, M> StdMirror<S, M> {
    fn now(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin)
    }
}

/// srTCM's parameters.
#[derive(Debug, Clone, Copy)]
pub struct SrParams {
    cir: u64,
    cbs: u64,
    ebs: u64,
}

impl<'a> Arbitrary<'a> for SrParams {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let sane = u.ratio(3u8, 4)?;
        Ok(SrParams { cir: param(u, sane, 20_000)?, cbs: param(u, sane, 3_000)?, ebs: param(u, sane, 3_000)? })
    }
}

/// A run of srTCM.
#[derive(Debug, Arbitrary)]
pub struct SrInput {
    params: SrParams,
    origin: Advance,
    ops: Vec<Op>,
}

fn sr_error(p: &SrParams) -> Option<Argument> {
    let max = i64::MAX as u64;
    if p.cir == 0 || p.cir > max {
        Some(Argument::Cir)
    } else if p.cbs > max || (p.cbs == 0 && p.ebs == 0) {
        Some(Argument::SrTcmCbs)
    } else if p.ebs > max {
        Some(Argument::Ebs)
    } else {
        None
    }
}

fn sr_mark(m: &mut SrTcm, bytes: u64, pre: PreColor, now: i64) -> Color {
    match pre.color() {
        None => m.mark(bytes, now),
        Some(c) => m.mark_aware(bytes, c, now),
    }
}

/// Runs srTCM.
pub fn run_srtcm(input: SrInput) {
    let p = input.params;
    let made = SrTcm::new(p.cir, p.cbs, p.ebs);
    let clock = clock_at(input.origin);
    let std = ratekeeper::SrTcm::with_clock(p.cir, p.cbs, p.ebs, clock.clone());
    let mut m = match (made, sr_error(&p)) {
        (Ok(m), None) => m,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            assert!(std.is_err());
            return;
        }
        (made, expected) => panic!("SrTcm::new{p:?} = {made:?}, expected an error about {expected:?}"),
    };
    let origin = clock.now_micros();
    let mut mirror =
        StdMirror { clock, origin, std: std.expect("the std layer refused what the core accepted"), core: m };
    let mut time = Timeline::default();
    let (mut green, mut passed) = (Vec::new(), Vec::new());
    for op in input.ops {
        match op {
            Op::Mark(step, bytes, pre) => {
                let now = time.step(step);
                let at = time.latest;
                let (tc, te) = m.tokens_at(now);
                let blind = {
                    let mut copy = m;
                    copy.mark(bytes.0, now)
                };
                let aware_green = {
                    let mut copy = m;
                    copy.mark_aware(bytes.0, Color::Green, now)
                };
                assert_eq!(blind, aware_green, "colour-blind marking is not that of a green packet");
                let color = sr_mark(&mut m, bytes.0, pre, now);
                if let Some(c) = pre.color() {
                    assert!(color >= c, "a {c:?} packet marked {color:?}");
                }
                let after = m.tokens_at(now);
                let expected = match color {
                    Color::Green => (tc - bytes.0, te),
                    Color::Yellow => (tc, te - bytes.0),
                    Color::Red => (tc, te),
                };
                assert_eq!(after, expected, "{bytes:?} marked {color:?} took otherwise from ({tc}, {te})");
                match color {
                    Color::Green => green.push((at, bytes.0)),
                    Color::Yellow => passed.push((at, bytes.0)),
                    Color::Red => {}
                }
            }
            Op::Tokens(step) => {
                let now = time.clone().step(step);
                let before = m;
                let _ = m.tokens_at(now);
                assert_eq!(m, before);
            }
            Op::StdAdvance(by) => mirror.clock.advance_micros(by.0),
            Op::StdMark(bytes, pre) => {
                let now = mirror.now();
                let got = match pre.color() {
                    None => mirror.std.mark(bytes.0),
                    Some(c) => mirror.std.mark_aware(bytes.0, c),
                };
                assert_eq!(got, sr_mark(&mut mirror.core, bytes.0, pre, now));
                assert_eq!(mirror.std.snapshot(), mirror.core);
            }
            Op::StdTokens => {
                let now = mirror.now();
                assert_eq!(mirror.std.tokens(), mirror.core.tokens_at(now));
            }
        }
        let (tc, te) = m.tokens_at(time.latest);
        assert!(tc <= p.cbs && te <= p.ebs, "tokens ({tc}, {te}) above the sizes: {m:?}");
        assert_eq!(m.pack()[3..], [p.cir, p.cbs, p.ebs], "a mark changed the configuration");
    }
    check_bucket_bound(&green, p.cbs, p.cir, "green");
    passed.extend_from_slice(&green);
    check_bucket_bound(&passed, p.cbs.saturating_add(p.ebs), p.cir, "green or yellow");
}

/// trTCM's parameters.
#[derive(Debug, Clone, Copy)]
pub struct TrParams {
    pir: u64,
    pbs: u64,
    cir: u64,
    cbs: u64,
}

impl<'a> Arbitrary<'a> for TrParams {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let sane = u.ratio(3u8, 4)?;
        let cir = param(u, sane, 20_000)?;
        let extra = param(u, sane, 20_000)?;
        let pir = if sane { cir + extra } else { extra };
        Ok(TrParams { pir, pbs: param(u, sane, 3_000)?, cir, cbs: param(u, sane, 3_000)? })
    }
}

/// A run of trTCM.
#[derive(Debug, Arbitrary)]
pub struct TrInput {
    params: TrParams,
    origin: Advance,
    ops: Vec<Op>,
}

fn tr_error(p: &TrParams) -> Option<Argument> {
    let max = i64::MAX as u64;
    if p.cir == 0 || p.cir > max {
        Some(Argument::Cir)
    } else if p.pir < p.cir || p.pir > max {
        Some(Argument::Pir)
    } else if p.pbs == 0 || p.pbs > max {
        Some(Argument::Pbs)
    } else if p.cbs == 0 || p.cbs > max {
        Some(Argument::Cbs)
    } else {
        None
    }
}

fn tr_mark(m: &mut TrTcm, bytes: u64, pre: PreColor, now: i64) -> Color {
    match pre.color() {
        None => m.mark(bytes, now),
        Some(c) => m.mark_aware(bytes, c, now),
    }
}

/// Runs trTCM.
pub fn run_trtcm(input: TrInput) {
    let p = input.params;
    let made = TrTcm::new(p.pir, p.pbs, p.cir, p.cbs);
    let clock = clock_at(input.origin);
    let std = ratekeeper::TrTcm::with_clock(p.pir, p.pbs, p.cir, p.cbs, clock.clone());
    let mut m = match (made, tr_error(&p)) {
        (Ok(m), None) => m,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            assert!(std.is_err());
            return;
        }
        (made, expected) => panic!("TrTcm::new{p:?} = {made:?}, expected an error about {expected:?}"),
    };
    let origin = clock.now_micros();
    let mut mirror =
        StdMirror { clock, origin, std: std.expect("the std layer refused what the core accepted"), core: m };
    let mut time = Timeline::default();
    let (mut green, mut passed) = (Vec::new(), Vec::new());
    for op in input.ops {
        match op {
            Op::Mark(step, bytes, pre) => {
                let now = time.step(step);
                let at = time.latest;
                let (tp, tc) = m.tokens_at(now);
                let blind = {
                    let mut copy = m;
                    copy.mark(bytes.0, now)
                };
                let aware_green = {
                    let mut copy = m;
                    copy.mark_aware(bytes.0, Color::Green, now)
                };
                assert_eq!(blind, aware_green, "colour-blind marking is not that of a green packet");
                let color = tr_mark(&mut m, bytes.0, pre, now);
                if let Some(c) = pre.color() {
                    assert!(color >= c, "a {c:?} packet marked {color:?}");
                }
                let expected = match color {
                    Color::Green => (tp - bytes.0, tc - bytes.0),
                    Color::Yellow => (tp - bytes.0, tc),
                    Color::Red => (tp, tc),
                };
                assert_eq!(m.tokens_at(now), expected, "{bytes:?} marked {color:?} took otherwise from ({tp}, {tc})");
                match color {
                    Color::Green => green.push((at, bytes.0)),
                    Color::Yellow => passed.push((at, bytes.0)),
                    Color::Red => {}
                }
            }
            Op::Tokens(step) => {
                let now = time.clone().step(step);
                let before = m;
                let _ = m.tokens_at(now);
                assert_eq!(m, before);
            }
            Op::StdAdvance(by) => mirror.clock.advance_micros(by.0),
            Op::StdMark(bytes, pre) => {
                let now = mirror.now();
                let got = match pre.color() {
                    None => mirror.std.mark(bytes.0),
                    Some(c) => mirror.std.mark_aware(bytes.0, c),
                };
                assert_eq!(got, tr_mark(&mut mirror.core, bytes.0, pre, now));
                assert_eq!(mirror.std.snapshot(), mirror.core);
            }
            Op::StdTokens => {
                let now = mirror.now();
                assert_eq!(mirror.std.tokens(), mirror.core.tokens_at(now));
            }
        }
        let (tp, tc) = m.tokens_at(time.latest);
        assert!(tp <= p.pbs && tc <= p.cbs, "tokens ({tp}, {tc}) above the sizes: {m:?}");
        assert_eq!(m.pack()[3..], [p.pir, p.pbs, p.cir, p.cbs], "a mark changed the configuration");
    }
    check_bucket_bound(&green, p.cbs, p.cir, "green");
    passed.extend_from_slice(&green);
    check_bucket_bound(&passed, p.pbs, p.pir, "green or yellow");
}
