//! [`SrTcm`] and [`TrTcm`]: the three-colour markers of RFC 2697 and RFC
//! 2698, shareable between threads. Semantics in
//! [`core::srtcm`](ratekeeper_core::srtcm) and
//! [`core::trtcm`](ratekeeper_core::trtcm).

use ratekeeper_core::srtcm::SrTcm as CoreSrTcm;
use ratekeeper_core::trtcm::TrTcm as CoreTrTcm;
use ratekeeper_core::{Color, Error};

use crate::clock::{Clock, MonotonicClock};
use crate::shared::Shared;

/// RFC 2697's single rate three colour marker: marks packets green, yellow
/// or red against a committed rate `cir` (bytes per second) with a
/// committed burst `cbs` and an excess burst `ebs`.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::{Color, ManualClock, SrTcm};
///
/// let marker = SrTcm::with_clock(1_000, 1_500, 1_500, Arc::new(ManualClock::new()))?;
/// assert_eq!(marker.mark(1_500), Color::Green);
/// assert_eq!(marker.mark(1_500), Color::Yellow);
/// assert_eq!(marker.mark(1_500), Color::Red);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct SrTcm<C: Clock = MonotonicClock> {
    inner: Shared<CoreSrTcm, 6, C>,
}

impl SrTcm<MonotonicClock> {
    /// An srTCM on the monotonic clock. Errors on a zero `cir`, on `cbs` and
    /// `ebs` both 0, or values above `i64::MAX`.
    pub fn new(cir: u64, cbs: u64, ebs: u64) -> Result<Self, Error> {
        Self::with_clock(cir, cbs, ebs, MonotonicClock::new())
    }
}

impl<C: Clock> SrTcm<C> {
    /// [`SrTcm::new`] on `clock`.
    pub fn with_clock(cir: u64, cbs: u64, ebs: u64, clock: C) -> Result<Self, Error> {
        Ok(SrTcm { inner: Shared::new(CoreSrTcm::new(cir, cbs, ebs)?, clock) })
    }

    /// Marks a packet of `bytes` now, colour-blind.
    #[inline]
    pub fn mark(&self, bytes: u64) -> Color {
        self.inner.decide(|m, now| m.mark(bytes, now))
    }

    /// Marks a packet of `bytes` that arrives coloured `color`, colour-aware.
    #[inline]
    pub fn mark_aware(&self, bytes: u64, color: Color) -> Color {
        self.inner.decide(|m, now| m.mark_aware(bytes, color, now))
    }

    /// `(Tc, Te)` now: the committed and excess tokens, in bytes.
    pub fn tokens(&self) -> (u64, u64) {
        self.inner.read(|m, now| m.tokens_at(now))
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreSrTcm {
        self.inner.get()
    }

    /// The marker's clock.
    pub fn clock(&self) -> &C {
        self.inner.clock()
    }
}

/// RFC 2698's two rate three colour marker: red above the peak rate `pir`
/// (burst `pbs`), yellow above the committed rate `cir` (burst `cbs`),
/// green within both.
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::{Color, ManualClock, TrTcm};
///
/// let marker = TrTcm::with_clock(2_000, 2_000, 1_000, 1_000, Arc::new(ManualClock::new()))?;
/// assert_eq!(marker.mark(1_000), Color::Green);
/// assert_eq!(marker.mark(500), Color::Yellow);
/// assert_eq!(marker.mark(600), Color::Red);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct TrTcm<C: Clock = MonotonicClock> {
    inner: Shared<CoreTrTcm, 7, C>,
}

impl TrTcm<MonotonicClock> {
    /// A trTCM on the monotonic clock. Errors on a zero rate or burst, `pir`
    /// below `cir`, or values above `i64::MAX`.
    pub fn new(pir: u64, pbs: u64, cir: u64, cbs: u64) -> Result<Self, Error> {
        Self::with_clock(pir, pbs, cir, cbs, MonotonicClock::new())
    }
}

impl<C: Clock> TrTcm<C> {
    /// [`TrTcm::new`] on `clock`.
    pub fn with_clock(pir: u64, pbs: u64, cir: u64, cbs: u64, clock: C) -> Result<Self, Error> {
        Ok(TrTcm { inner: Shared::new(CoreTrTcm::new(pir, pbs, cir, cbs)?, clock) })
    }

    /// Marks a packet of `bytes` now, colour-blind.
    #[inline]
    pub fn mark(&self, bytes: u64) -> Color {
        self.inner.decide(|m, now| m.mark(bytes, now))
    }

    /// Marks a packet of `bytes` that arrives coloured `color`, colour-aware.
    #[inline]
    pub fn mark_aware(&self, bytes: u64, color: Color) -> Color {
        self.inner.decide(|m, now| m.mark_aware(bytes, color, now))
    }

    /// `(Tp, Tc)` now: the peak and committed tokens, in bytes.
    pub fn tokens(&self) -> (u64, u64) {
        self.inner.read(|m, now| m.tokens_at(now))
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreTrTcm {
        self.inner.get()
    }

    /// The marker's clock.
    pub fn clock(&self) -> &C {
        self.inner.clock()
    }
}
