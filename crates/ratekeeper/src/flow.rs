//! [`FlowController`]: Sentinel's flow rule, shareable between threads and
//! reading the time from a [`Clock`]. Semantics in
//! [`core::flow`](ratekeeper_core::flow).
//!
//! The statistics (up to 64 buckets, and a future array as large) are too
//! large to publish with one compare-and-swap, so the controller sits
//! behind a [`Mutex`], held for one core call. [`FlowController::entry`]
//! is Sentinel's `SphU.entry`: it sleeps on the clock for the queueing or
//! occupying wait, outside the lock, and hands back a guard that ends the
//! request (its RT and the thread count) when dropped.

use ratekeeper_core::flow::{FlowController as CoreFlow, FlowPermit, FlowRule, FlowStats};
use ratekeeper_core::{Decision, Error};

use crate::clock::{Clock, MonotonicClock};
use crate::sync::Mutex;

/// The core controller with the latest time it saw, so that the times it is
/// given never go back.
#[derive(Debug)]
struct Timed {
    core: CoreFlow,
    latest_micros: i64,
}

/// Sentinel's flow rule for one resource: the default controller (with
/// prioritized requests occupying a later window), warm-up, uniform
/// queueing, or both, by QPS or by requests in flight.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ratekeeper::{ControlBehavior, FlowController, FlowRule, ManualClock};
///
/// let clock = Arc::new(ManualClock::new());
/// let rule = FlowRule::qps(10.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 500 });
/// let flow = FlowController::with_clock(rule, 2, 1000, Arc::clone(&clock))?;
/// let first = flow.entry(5, false)?.expect("admitted");
/// let second = flow.entry(1, false)?.expect("admitted"); // sleeps 100 ms on the clock
/// assert_eq!((first.decision().wait_micros, second.decision().wait_micros), (0, 100_000));
/// assert_eq!(clock.now(), Duration::from_millis(100));
/// # Ok::<(), ratekeeper::Error>(())
/// ```
#[derive(Debug)]
pub struct FlowController<C: Clock = MonotonicClock> {
    state: Mutex<Timed>,
    clock: C,
    origin_micros: i64,
}

impl FlowController<MonotonicClock> {
    /// A controller for `rule` over `sample_count` buckets of `interval_ms`
    /// (Sentinel's defaults: 2 and 1000), on the monotonic clock.
    pub fn new(rule: FlowRule, sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        Self::with_clock(rule, sample_count, interval_ms, MonotonicClock::new())
    }
}

impl<C: Clock> FlowController<C> {
    /// [`FlowController::new`] on `clock`.
    pub fn with_clock(rule: FlowRule, sample_count: u32, interval_ms: u32, clock: C) -> Result<Self, Error> {
        let core = CoreFlow::new(rule, sample_count, interval_ms)?;
        let origin_micros = clock.now_micros();
        Ok(FlowController { state: Mutex::new(Timed { core, latest_micros: 0 }), clock, origin_micros })
    }

    /// Runs `f` on the core at the current time (never earlier than the
    /// last call's).
    fn with<R>(&self, f: impl FnOnce(&mut CoreFlow, i64) -> R) -> R {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = self.clock.now_micros().wrapping_sub(self.origin_micros).max(state.latest_micros);
        state.latest_micros = now;
        f(&mut state.core, now)
    }

    fn read<R>(&self, f: impl FnOnce(&CoreFlow) -> R) -> R {
        f(&self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).core)
    }

    /// Decides `acquire_count` now without waiting: an admitted decision's
    /// `wait_micros` is how long the caller must wait before going on, and
    /// its permit goes back to [`release`](Self::release) when the request
    /// ends. Errors on an acquire count above `i32::MAX`.
    pub fn check(&self, acquire_count: u32, prioritized: bool) -> Result<(Decision, Option<FlowPermit>), Error> {
        self.with(|flow, now| flow.check(acquire_count, prioritized, now))
    }

    /// Sentinel's `SphU.entry` (`entryWithPriority` when `prioritized`):
    /// decides `acquire_count`, sleeps on the clock for the queueing or
    /// occupying wait of an admitted request, and returns a guard that ends
    /// the request when dropped; a refusal (`Err(decision)`) returns at once.
    pub fn entry(&self, acquire_count: u32, prioritized: bool) -> Result<Result<FlowEntry<'_, C>, Decision>, Error> {
        match self.check(acquire_count, prioritized)? {
            (decision, Some(permit)) => {
                self.clock.sleep_micros(decision.wait_micros);
                Ok(Ok(FlowEntry { flow: self, permit, decision }))
            }
            (decision, None) => Ok(Err(decision)),
        }
    }

    /// The request of `permit` ended now: records its completion and RT, and
    /// takes it out of flight.
    pub fn release(&self, permit: FlowPermit) {
        self.with(|flow, now| flow.release(permit, now));
    }

    /// Counts `count` passes now without asking the rule: usage that
    /// happened anyway.
    pub fn add_pass(&self, count: u64) {
        self.with(|flow, now| flow.add_pass(count, now));
    }

    /// Replaces the rule; the statistics stay, the controller's own state
    /// (warm-up tokens, queue) starts afresh, as when Sentinel reloads rules.
    pub fn set_rule(&self, rule: FlowRule) -> Result<(), Error> {
        self.with(|flow, _| flow.set_rule(rule))
    }

    /// The rule.
    pub fn rule(&self) -> FlowRule {
        self.read(|flow| *flow.rule())
    }

    /// The statistics now.
    pub fn stats(&self) -> FlowStats {
        self.with(|flow, now| flow.stats(now))
    }

    /// A copy of the core state machine.
    pub fn snapshot(&self) -> CoreFlow {
        self.read(CoreFlow::clone)
    }

    /// The controller's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

/// An admitted request (Sentinel's `Entry`): dropping it ends the request,
/// recording its RT and taking it out of flight.
#[derive(Debug)]
#[must_use = "dropping the entry ends the request at once"]
pub struct FlowEntry<'a, C: Clock> {
    flow: &'a FlowController<C>,
    permit: FlowPermit,
    decision: Decision,
}

impl<C: Clock> FlowEntry<'_, C> {
    /// The decision that admitted the request (its `wait_micros` was
    /// slept).
    pub fn decision(&self) -> &Decision {
        &self.decision
    }

    /// The permit.
    pub fn permit(&self) -> FlowPermit {
        self.permit
    }
}

impl<C: Clock> Drop for FlowEntry<'_, C> {
    fn drop(&mut self) {
        self.flow.release(self.permit);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use ratekeeper_core::flow::ControlBehavior;

    use super::*;
    use crate::ManualClock;

    #[test]
    fn entries_sleep_their_queueing_wait() {
        let clock = Arc::new(ManualClock::new());
        let rule = FlowRule::qps(10.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 500 });
        let flow = FlowController::with_clock(rule, 2, 1000, Arc::clone(&clock)).unwrap();
        let waits: Vec<i64> =
            (0..7).map(|_| flow.entry(1, false).unwrap().map_or(-1, |e| e.decision().wait_micros)).collect();
        // Each caller sleeps its turn on the clock before the next asks.
        assert_eq!(waits, [0, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000]);
        assert_eq!(clock.now(), Duration::from_millis(600));
        // Seven callers at once, the last turn being now: the queue of
        // 500 ms holds five, 100 ms apart.
        let decisions: Vec<Decision> = (0..7).map(|_| flow.check(1, false).unwrap().0).collect();
        let waits: Vec<i64> = decisions.iter().map(|d| if d.allowed { d.wait_micros } else { -1 }).collect();
        assert_eq!(waits, [100_000, 200_000, 300_000, 400_000, 500_000, -1, -1]);
    }

    #[test]
    fn the_entry_guard_releases_the_thread_grade_permit() {
        let clock = Arc::new(ManualClock::new());
        let flow = FlowController::with_clock(FlowRule::thread(1.0), 2, 1000, Arc::clone(&clock)).unwrap();
        let entry = flow.entry(1, false).unwrap().unwrap();
        let refused = flow.entry(1, false).unwrap().unwrap_err();
        assert!(!refused.allowed);
        assert_eq!(flow.stats().in_flight, 1);
        clock.advance(Duration::from_millis(30));
        drop(entry);
        let stats = flow.stats();
        assert_eq!((stats.in_flight, stats.success_qps, stats.avg_rt_millis), (0, 1.0, 30.0));
        assert!(flow.entry(1, false).unwrap().is_ok());
    }

    #[test]
    fn a_prioritized_entry_sleeps_until_the_window_it_occupies() {
        let clock = Arc::new(ManualClock::new());
        let flow = FlowController::with_clock(FlowRule::qps(2.0), 2, 1000, Arc::clone(&clock)).unwrap();
        drop(flow.entry(2, false).unwrap().unwrap());
        clock.advance(Duration::from_millis(600));
        assert!(flow.entry(1, false).unwrap().is_err());
        let entry = flow.entry(1, true).unwrap().unwrap();
        assert_eq!(entry.decision().wait_micros, 400_000);
        assert_eq!(clock.now(), Duration::from_secs(1));
        drop(entry);
        assert_eq!(flow.stats().pass_qps, 1.0);
    }

    #[test]
    fn rules_change_at_run_time_and_bad_input_is_an_error() {
        let flow = FlowController::with_clock(FlowRule::qps(1.0), 2, 1000, ManualClock::new()).unwrap();
        assert!(flow.entry(1, false).unwrap().is_ok());
        assert!(flow.entry(1, false).unwrap().is_err());
        flow.set_rule(FlowRule::qps(2.0)).unwrap();
        assert_eq!(flow.rule(), FlowRule::qps(2.0));
        assert!(flow.entry(1, false).unwrap().is_ok());
        flow.add_pass(5);
        assert_eq!(flow.stats().pass_qps, 7.0);
        assert!(flow.set_rule(FlowRule::qps(f64::NAN)).is_err());
        assert!(flow.check(u32::MAX, false).is_err());
        assert!(FlowController::new(FlowRule::qps(1.0), 3, 1000).is_err());
    }

    /// Sentinel's `FlowPartialIntegrationTest`, the cases about one
    /// resource's rule (`testQpsRegex`, `testOriginFlowRule`,
    /// `testFlowRule_other`, `testStrategy` and `testStrategy_chain` pick
    /// resources, origins and nodes, which a `FlowController` has not).
    mod flow_partial_integration_test {
        use super::*;

        /// `testQPSGrade`: one entry per second passes, the second is
        /// blocked.
        #[test]
        fn test_qps_grade() {
            let flow = FlowController::with_clock(FlowRule::qps(1.0), 2, 1000, ManualClock::new()).unwrap();
            let e = flow.entry(1, false).unwrap().expect("the first passes");
            drop(e);
            assert!(flow.entry(1, false).unwrap().is_err());
        }

        /// `testThreadGrade`: while another thread holds its entry, the
        /// second entry of a thread-grade rule of 1 is blocked.
        #[test]
        fn test_thread_grade() {
            let flow = FlowController::with_clock(FlowRule::thread(1.0), 2, 1000, ManualClock::new()).unwrap();
            let (entered, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
            std::thread::scope(|s| {
                s.spawn(|| {
                    let e = flow.entry(1, false).unwrap().expect("the holder passes");
                    entered.wait();
                    release.wait();
                    drop(e);
                });
                entered.wait();
                let second = flow.entry(1, false).unwrap().map(|e| e.decision().allowed);
                release.wait(); // before asserting: a failure must not leave the holder waiting
                assert!(second.is_err());
            });
            assert!(flow.entry(1, false).unwrap().is_ok());
        }
    }
}
