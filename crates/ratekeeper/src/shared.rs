//! [`Shared`]: a core state machine, a clock and a [`SeqCell`] — what every
//! thread-safe limiter of this crate is made of.
//!
//! Each limiter wrapper (token bucket, GCRA, windows, markers…) is a thin
//! shell around one `Shared`: it reads the clock once per call, runs the
//! core's decision at [`Snapshot::time`](crate::seq_cell) (the clock reading,
//! or the latest published decision's time if later, so the times the core
//! sees never go backwards), and publishes the result with one
//! compare-and-swap. All semantics stay in `ratekeeper-core`.

use ratekeeper_core::Packed;

use crate::clock::Clock;
use crate::seq_cell::SeqCell;

/// A core state machine `T` shared between threads, on clock `C`.
#[derive(Debug)]
pub(crate) struct Shared<T: Packed<N>, const N: usize, C: Clock> {
    state: SeqCell<T, N>,
    clock: C,
    /// The clock's reading when the limiter was created: the core counts
    /// time from 0.
    origin_micros: i64,
}

impl<T: Packed<N>, const N: usize, C: Clock> Shared<T, N, C> {
    /// Wraps `core`, created at the current time of `clock`.
    pub(crate) fn new(core: T, clock: C) -> Self {
        let origin_micros = clock.now_micros();
        Shared { state: SeqCell::new(&core, 0), clock, origin_micros }
    }

    /// Microseconds since the limiter was created.
    #[inline]
    pub(crate) fn now_micros(&self) -> i64 {
        self.clock.now_micros().wrapping_sub(self.origin_micros)
    }

    /// A decision (admission, reservation, release): publishes only a
    /// change to the hot words. See [`SeqCell::decide`].
    #[inline]
    pub(crate) fn decide<R>(&self, f: impl FnMut(&mut T, i64) -> R) -> R {
        self.state.decide(self.now_micros(), f)
    }

    /// A reconfiguration (a new rate, say): may change any word.
    pub(crate) fn update<R>(&self, f: impl FnMut(&mut T, i64) -> R) -> R {
        self.state.update(self.now_micros(), f)
    }

    /// A query at the current time on a consistent copy; changes nothing.
    #[inline]
    pub(crate) fn read<R>(&self, f: impl FnOnce(&T, i64) -> R) -> R {
        let now = self.now_micros();
        let copy = self.state.read();
        f(&copy.value(), copy.time(now))
    }

    /// A copy of the state machine.
    pub(crate) fn get(&self) -> T {
        self.state.get()
    }

    /// The clock.
    pub(crate) fn clock(&self) -> &C {
        &self.clock
    }

    /// Sleeps `micros` on the clock (a manual clock advances instead).
    pub(crate) fn sleep_micros(&self, micros: i64) {
        if micros > 0 {
            self.clock.sleep_micros(micros);
        }
    }
}

/// Declares the thread-safe wrapper of a fixed-size admission-style core
/// state machine: the struct (generic over its clock, monotonic by
/// default) and the methods every such wrapper has — `from_core`, `check`,
/// `peek`, `snapshot`, `clock`. Each algorithm's module adds its
/// constructors and extras.
macro_rules! admission_limiter {
    ($(#[$doc:meta])* $name:ident, $core:ty, $words:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<C: $crate::Clock = $crate::MonotonicClock> {
            inner: $crate::shared::Shared<$core, $words, C>,
        }

        impl<C: $crate::Clock> $name<C> {
            /// Wraps a core state machine, whose time 0 becomes now on `clock`.
            pub fn from_core(core: $core, clock: C) -> Self {
                $name { inner: $crate::shared::Shared::new(core, clock) }
            }

            /// Admits `cost` units now if the limit allows it, consuming them;
            /// a refusal consumes nothing. A cost of 0 is a free look.
            #[inline]
            pub fn check(&self, cost: u64) -> ratekeeper_core::Decision {
                use ratekeeper_core::Admission;
                self.inner.decide(|s, now| s.check(cost, now))
            }

            /// The decision [`check`](Self::check) would make now, consuming
            /// nothing.
            pub fn peek(&self, cost: u64) -> ratekeeper_core::Decision {
                use ratekeeper_core::Admission;
                self.inner.read(|s, now| s.peek(cost, now))
            }

            /// Gives back `cost` units admitted earlier that should not
            /// count (a request skipped or failed), now: what each algorithm
            /// gives back is in [`Admission::refund`](ratekeeper_core::Admission::refund)'s
            /// table (a leaky bucket queue gives nothing back).
            #[inline]
            pub fn refund(&self, cost: u64) {
                use ratekeeper_core::Admission;
                self.inner.decide(|s, now| s.refund(cost, now))
            }

            /// A copy of the core state machine.
            pub fn snapshot(&self) -> $core {
                self.inner.get()
            }

            /// The limiter's clock.
            pub fn clock(&self) -> &C {
                self.inner.clock()
            }
        }
    };
}
pub(crate) use admission_limiter;
