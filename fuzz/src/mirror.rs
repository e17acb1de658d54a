//! The std layer on a `ManualClock`, checked against the core.
//!
//! A std limiter is a core state machine behind a clock and a lock (a
//! seqlock cell or a mutex); it must decide exactly as the core does at
//! the clock's time, microsecond for microsecond. A [`Mirror`] drives a
//! std limiter on a manual clock (which only moves forward, as every
//! clock must) and a copy of its core at `clock − origin`, and every
//! answer and state must agree. The clock starts at an arbitrary reading,
//! so the origin subtraction is exercised, and moves by huge amounts too,
//! up to its saturation at `i64::MAX`.

use std::fmt::Debug;
use std::sync::Arc;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::{Clock, ManualClock};
use ratekeeper_core::{Admission, Decision};

use crate::contract::{check_fields, Promises};
use crate::values::wild_i64;

/// The manual clock every std limiter of a target runs on.
pub type TestClock = Arc<ManualClock>;

/// A clock reading to start from, or an advance: mostly small, sometimes
/// anything up to `i64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advance(pub i64);

impl<'a> Arbitrary<'a> for Advance {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Advance(match u.int_in_range(0u8..=7)? {
            0 => 0,
            1 => wild_i64(u)?.max(0),
            2 => u.int_in_range(0i64..=3_000_000)?,
            _ => u.int_in_range(0i64..=2_000)?,
        }))
    }
}

/// A new manual clock, advanced to `start` (the limiter's origin).
pub fn clock_at(start: Advance) -> TestClock {
    let clock = Arc::new(ManualClock::new());
    clock.advance_micros(start.0);
    clock
}

/// The common surface of the std layer's admission-style limiters.
pub trait StdAdmission: Debug {
    /// The core state machine inside.
    type Core: Admission + Clone + Debug;
    /// `check` at the clock's time.
    fn check(&self, cost: u64) -> Decision;
    /// `peek` at the clock's time.
    fn peek(&self, cost: u64) -> Decision;
    /// Whether the limiter's state is `core`'s (when it can tell).
    fn holds(&self, core: &Self::Core) -> bool;
    /// The promises its decisions keep.
    fn promises() -> Promises {
        Promises::default()
    }
}

macro_rules! std_admission {
    ($std:ty, $core:ty) => {
        std_admission!($std, $core, Promises::default());
    };
    ($std:ty, $core:ty, $promises:expr) => {
        impl StdAdmission for $std {
            type Core = $core;
            fn check(&self, cost: u64) -> Decision {
                <$std>::check(self, cost)
            }
            fn peek(&self, cost: u64) -> Decision {
                <$std>::peek(self, cost)
            }
            fn holds(&self, core: &$core) -> bool {
                self.snapshot() == *core
            }
            fn promises() -> Promises {
                $promises
            }
        }
    };
}

std_admission!(
    ratekeeper::TokenBucket<TestClock>,
    ratekeeper_core::TokenBucket,
    Promises { zero_may_be_refused: true, ..Promises::default() }
);
std_admission!(ratekeeper::Gcra<TestClock>, ratekeeper_core::Gcra);
std_admission!(ratekeeper::LeakyBucketMeter<TestClock>, ratekeeper_core::LeakyBucketMeter);
std_admission!(ratekeeper::LeakyBucketQueue<TestClock>, ratekeeper_core::LeakyBucketQueue);
std_admission!(ratekeeper::FixedWindow<TestClock>, ratekeeper_core::FixedWindow);
std_admission!(ratekeeper::SlidingWindow<TestClock>, ratekeeper_core::SlidingWindow);
std_admission!(ratekeeper::SlidingWindowCounter<TestClock>, ratekeeper_core::SlidingWindowCounter);

/// The std sliding log keeps its log behind a mutex with no way to copy
/// it out; its answers are compared instead.
impl StdAdmission for ratekeeper::SlidingLog<TestClock> {
    type Core = ratekeeper_core::SlidingLog<Box<[ratekeeper_core::LogEntry]>>;
    fn check(&self, cost: u64) -> Decision {
        ratekeeper::SlidingLog::check(self, cost)
    }
    fn peek(&self, cost: u64) -> Decision {
        ratekeeper::SlidingLog::peek(self, cost)
    }
    fn holds(&self, _core: &Self::Core) -> bool {
        true
    }
}

/// A std limiter on a manual clock, and its core driven at the clock's
/// time.
#[derive(Debug)]
pub struct Mirror<L: StdAdmission> {
    /// The clock the std limiter reads.
    pub clock: TestClock,
    /// The std limiter.
    pub limiter: L,
    /// The core, driven by hand.
    pub core: L::Core,
    origin: i64,
}

impl<L: StdAdmission> Mirror<L> {
    /// `limiter` (created on `clock` just now) and a core in its initial
    /// state.
    pub fn new(clock: TestClock, limiter: L, core: L::Core) -> Self {
        let origin = clock.now_micros();
        let mirror = Mirror { clock, limiter, core, origin };
        assert!(mirror.limiter.holds(&mirror.core), "a new std limiter is not its core: {mirror:?}");
        mirror
    }

    /// The core's time: microseconds since the std limiter was created.
    pub fn now(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin)
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Advance) {
        self.clock.advance_micros(by.0);
    }

    /// A `check` on both; they must agree.
    pub fn check(&mut self, cost: u64) -> Decision {
        let now = self.now();
        let d = self.limiter.check(cost);
        let expected = self.core.check(cost, now);
        assert_eq!(d, expected, "the std limiter decided otherwise than its core at {now}");
        check_fields(&d, cost, L::promises());
        self.assert_same();
        d
    }

    /// A `peek` on both; they must agree, and nothing may change.
    pub fn peek(&mut self, cost: u64) -> Decision {
        let now = self.now();
        let d = self.limiter.peek(cost);
        assert_eq!(d, self.core.peek(cost, now), "the std limiter peeked otherwise than its core at {now}");
        self.assert_same();
        d
    }

    /// The std limiter's state is the core's.
    pub fn assert_same(&self) {
        assert!(self.limiter.holds(&self.core), "the std limiter's state is not its core's: {self:?}");
    }
}

/// What a target does to its std limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum MirrorOp {
    /// Moves the clock forward.
    Advance(Advance),
    /// `check(cost)`.
    Check(crate::values::Count),
    /// `peek(cost)`.
    Peek(crate::values::Count),
}

impl<L: StdAdmission> Mirror<L> {
    /// Applies one [`MirrorOp`].
    pub fn apply(&mut self, op: MirrorOp) {
        match op {
            MirrorOp::Advance(by) => self.advance(by),
            MirrorOp::Check(cost) => {
                self.check(cost.0);
            }
            MirrorOp::Peek(cost) => {
                self.peek(cost.0);
            }
        }
    }
}
