//! Sentinel's own tests of its flow controllers and sliding statistics,
//! translated (alibaba/Sentinel, `sentinel-core/src/test`): one module per
//! test class, the tests keeping their names in snake case and their
//! expected values. Sentinel mocks `TimeUtil.currentTimeMillis` and the
//! node; here time is passed in and [`MockNode`] gives a controller the
//! readings the test sets. Where a test sleeps for real, a caller here
//! moves its time on by the wait the controller gave it.
//!
//! Not translated:
//! - `DefaultControllerTest.testCanPassForQpsMultiThread`: empty upstream.
//! - `BucketLeapArrayTest.testWindowDeprecatedRefresh`: not a test upstream
//!   (no `@Test`, marked deprecated).
//! - `StatisticNodeTest`: threads with random real sleeps that check only
//!   that the counters return to zero; the node's counters are checked by
//!   the tests below and in `tests` at the end.
//! - `testMultiThreadUpdateEmptyWindow` (two classes) run their sixteen
//!   updates one after the other: there are no threads in the core, and
//!   the wrapper's lock serialises them.
//!
//! Differences kept on purpose (see the module documentation):
//! - windows and whole seconds are aligned to the controller's creation,
//!   not to the epoch;
//! - a fresh rate limiter admits its first request at once and a fresh
//!   warm-up controller fills its store on its first request, as Sentinel's
//!   do when its clock reads decades after 1970;
//! - a request admitted after a queueing wait counts as passed when it is
//!   decided; Sentinel counts it after its sleep, in the window where it
//!   goes through (the core cannot write into a window that has not begun
//!   without booking it, which only occupied passes do);
//! - the occupy timeout is Sentinel's default, 500 ms, not a setting;
//! - a rule Sentinel would ignore (or fall back from, for a cold factor of
//!   1 or less) is an error, and an infinite count is refused;
//! - the rate limiter counts a count below 0.5 in nanoseconds, where
//!   Sentinel's constructor divides by zero;
//! - token counts are 64-bit where Sentinel's `int`s overflow, and
//!   arithmetic saturates where Java's wraps.

extern crate std;
use std::vec::Vec;

use super::controllers::{
    CanPass, DefaultController, ThrottlingController, WarmUpController, WarmUpRateLimiterController, OCCUPY_TIMEOUT_MS,
};
use super::leap_array::{LeapArray, MetricBucket, OccupiableBucketLeapArray};
use super::node::FlowNode;
use super::{ControlBehavior, FlowController, FlowGrade, FlowRule};
use crate::error::{Argument, Error};

/// A node whose readings the test sets (Sentinel's tests mock `Node`).
#[derive(Debug, Default)]
struct MockNode {
    pass_qps: f64,
    previous_pass_qps: f64,
    cur_thread_num: u64,
}

impl FlowNode for MockNode {
    fn pass_qps(&mut self, _now_ms: i64) -> f64 {
        self.pass_qps
    }
    fn previous_pass_qps(&mut self, _now_ms: i64) -> f64 {
        self.previous_pass_qps
    }
    fn cur_thread_num(&self) -> u64 {
        self.cur_thread_num
    }
    fn try_occupy_next(&mut self, _now_ms: i64, _acquire_count: u32, _threshold: f64, timeout_ms: i64) -> i64 {
        timeout_ms
    }
    fn add_waiting_request(&mut self, _future_time_ms: i64, _acquire_count: u32) {}
    fn add_occupied_pass(&mut self, _acquire_count: u32, _now_ms: i64) {}
}

fn passes(outcome: CanPass) -> bool {
    !matches!(outcome, CanPass::Blocked)
}

fn wait_of(outcome: CanPass) -> i64 {
    match outcome {
        CanPass::Pass { wait_micros } | CanPass::PriorityWait { wait_micros } => wait_micros,
        CanPass::Blocked => panic!("blocked"),
    }
}

/// A time that is not on any window boundary (Sentinel's tests read the
/// real clock).
const T: i64 = 1_234_567;

mod leap_array_test {
    use super::*;

    /// `LeapArrayTest.testGetValidHead`: the head is the window the next
    /// one replaces.
    #[test]
    fn test_get_valid_head() {
        let (window_length, interval) = (100, 1000);
        let sample_count = interval / window_length;
        let mut leap_array = LeapArray::<u64>::new(sample_count as u32, interval as u32).unwrap();
        let mut now = 0;
        let w = leap_array.current_window(now, |_| 0).unwrap();
        w.value += 1;
        let expected1 = *w;
        now += window_length;
        let w = leap_array.current_window(now, |_| 0).unwrap();
        w.value += 2;
        let expected2 = *w;
        for i in 0..sample_count - 2 {
            now += window_length;
            leap_array.current_window(now, |_| 0).unwrap().value += i as u64 + 3;
        }
        assert_eq!(leap_array.valid_head(now), Some(&expected1));
        now += window_length;
        assert_eq!(leap_array.valid_head(now), Some(&expected2));
    }
}

mod bucket_leap_array_test {
    use super::*;

    const WINDOW_LENGTH_IN_MS: i64 = 1000;
    const INTERVAL_IN_MS: u32 = 2000;
    const SAMPLE_COUNT: u32 = 2;

    fn array() -> LeapArray<MetricBucket> {
        LeapArray::new(SAMPLE_COUNT, INTERVAL_IN_MS).unwrap()
    }

    /// `BucketLeapArrayTest.testNewWindow`.
    #[test]
    fn test_new_window() {
        let mut leap_array = array();
        let window = *leap_array.current_window(T, |_| MetricBucket::default()).unwrap();
        assert_eq!(leap_array.window_length_ms(), WINDOW_LENGTH_IN_MS);
        assert_eq!(window.start_ms, T - T % WINDOW_LENGTH_IN_MS);
        assert_eq!(window.value.pass, 0);
    }

    /// `BucketLeapArrayTest.testLeapArrayWindowStart`.
    #[test]
    fn test_leap_array_window_start() {
        let mut leap_array = array();
        let previous_window_start = T - T % WINDOW_LENGTH_IN_MS;
        let window = leap_array.current_window(T, |_| MetricBucket::default()).unwrap();
        assert_eq!(window.start_ms, previous_window_start);
    }

    /// `BucketLeapArrayTest.testWindowAfterOneInterval`: the same window
    /// within its length, a new empty one after.
    #[test]
    fn test_window_after_one_interval() {
        let mut leap_array = array();
        let previous_window_start = T - T % WINDOW_LENGTH_IN_MS;
        let bucket = leap_array.current_bucket(previous_window_start).unwrap();
        bucket.pass += 1;
        bucket.block += 1;
        assert_eq!((bucket.pass, bucket.block), (1, 1));
        let middle_time = previous_window_start + WINDOW_LENGTH_IN_MS / 2;
        let window = leap_array.current_window(middle_time, |_| MetricBucket::default()).unwrap();
        assert_eq!(window.start_ms, previous_window_start);
        window.value.pass += 1;
        assert_eq!((window.value.pass, window.value.block), (2, 1));
        let next_time = middle_time + WINDOW_LENGTH_IN_MS / 2;
        let window = leap_array.current_window(next_time, |_| MetricBucket::default()).unwrap();
        assert_eq!(window.start_ms - previous_window_start, WINDOW_LENGTH_IN_MS);
        assert_eq!((window.value.pass, window.value.block), (0, 0));
    }

    /// `BucketLeapArrayTest.testMultiThreadUpdateEmptyWindow`, the sixteen
    /// updates in turn.
    #[test]
    fn test_multi_thread_update_empty_window() {
        let mut leap_array = array();
        for _ in 0..16 {
            leap_array.current_bucket(T).unwrap().pass += 1;
        }
        assert_eq!(leap_array.current_bucket(T).unwrap().pass, 16);
    }

    /// `BucketLeapArrayTest.testGetPreviousWindow`.
    #[test]
    fn test_get_previous_window() {
        let mut leap_array = array();
        let previous_window = *leap_array.current_window(T, |_| MetricBucket::default()).unwrap();
        assert_eq!(leap_array.previous_window(T), None);
        assert_eq!(leap_array.previous_window(T + WINDOW_LENGTH_IN_MS), Some(&previous_window));
        assert_eq!(leap_array.previous_window(T + 11 * WINDOW_LENGTH_IN_MS), None);
    }

    /// `BucketLeapArrayTest.testListWindowsResetOld`: a deprecated window is
    /// replaced when its slot is reused.
    #[test]
    fn test_list_windows_reset_old() {
        let (window_length, interval) = (100, 1000);
        let mut leap_array = LeapArray::<MetricBucket>::new(10, interval as u32).unwrap();
        let first = *leap_array.current_window(T, |_| MetricBucket::default()).unwrap();
        let second = *leap_array.current_window(T + window_length, |_| MetricBucket::default()).unwrap();
        for wrap in leap_array.list(T + window_length) {
            assert!(*wrap == first || *wrap == second);
        }
        assert_eq!(leap_array.list(T + window_length).count(), 2);
        let now = T + window_length + interval;
        leap_array.current_bucket(now).unwrap().pass += 1;
        assert_eq!(leap_array.list(now).count(), 1);
    }

    /// `BucketLeapArrayTest.testListWindowsNewBucket`: deprecated windows
    /// are left out of a list even when their slots were not reused.
    #[test]
    fn test_list_windows_new_bucket() {
        let (window_length, interval) = (100, 1000);
        let mut leap_array = LeapArray::<MetricBucket>::new(10, interval as u32).unwrap();
        let first = *leap_array.current_window(T, |_| MetricBucket::default()).unwrap();
        let second = *leap_array.current_window(T + window_length, |_| MetricBucket::default()).unwrap();
        let now = T + interval + window_length * 3;
        for wrap in leap_array.list(now) {
            assert!(*wrap == first || *wrap == second);
        }
        leap_array.current_bucket(now).unwrap().pass += 1;
        assert_eq!(leap_array.list(now).count(), 1);
    }
}

mod future_bucket_leap_array_test {
    use super::*;

    /// `FutureBucketLeapArrayTest.testFutureMetricLeapArray`: a future
    /// array never counts the window of the read or an older one.
    #[test]
    fn test_future_metric_leap_array() {
        let (window_length, interval) = (200, 2000);
        let mut array = LeapArray::<u64>::future(interval / window_length, interval).unwrap();
        for i in (0..i64::from(interval)).step_by(window_length as usize) {
            array.current_window(i + T, |_| 0).unwrap().value += 1;
            assert_eq!(array.values(i + T).count(), 0);
        }
    }
}

mod occupiable_bucket_leap_array_test {
    use super::*;

    const WINDOW_LENGTH_IN_MS: i64 = 200;
    const INTERVAL_IN_MS: u32 = 2000;

    fn array() -> OccupiableBucketLeapArray {
        OccupiableBucketLeapArray::new(INTERVAL_IN_MS / WINDOW_LENGTH_IN_MS as u32, INTERVAL_IN_MS).unwrap()
    }

    /// `OccupiableBucketLeapArrayTest.testNewWindow`: booking a later window
    /// leaves the current one alone.
    #[test]
    fn test_new_window() {
        let mut leap_array = array();
        leap_array.current_bucket(T).unwrap().pass += 1;
        assert_eq!(leap_array.current_bucket(T).unwrap().pass, 1);
        leap_array.add_waiting(T + WINDOW_LENGTH_IN_MS, 1);
        assert_eq!(leap_array.current_waiting(T), 1);
        assert_eq!(leap_array.current_bucket(T).unwrap().pass, 1);
    }

    /// `OccupiableBucketLeapArrayTest.testWindowInOneInterval`: the booked
    /// passes count once their window begins.
    #[test]
    fn test_window_in_one_interval() {
        let mut leap_array = array();
        leap_array.current_bucket(T).unwrap().pass += 1;
        leap_array.add_waiting(T + WINDOW_LENGTH_IN_MS, 2);
        assert_eq!(leap_array.current_waiting(T), 2);
        assert_eq!(leap_array.current_bucket(T).unwrap().pass, 1);
        leap_array.current_window(T + WINDOW_LENGTH_IN_MS);
        let values: Vec<u64> = leap_array.data().values(T + WINDOW_LENGTH_IN_MS).map(|b| b.pass).collect();
        assert_eq!(values.len(), 2);
        assert_eq!(values.iter().sum::<u64>(), 3);
    }

    /// `OccupiableBucketLeapArrayTest.testMultiThreadUpdateEmptyWindow`, the
    /// sixteen updates in turn.
    #[test]
    fn test_multi_thread_update_empty_window() {
        let mut leap_array = array();
        let n = 16;
        for _ in 0..n {
            leap_array.current_bucket(T).unwrap().pass += 1;
            leap_array.add_waiting(T + WINDOW_LENGTH_IN_MS, 1);
        }
        assert_eq!(leap_array.current_bucket(T).unwrap().pass, n);
        assert_eq!(leap_array.current_waiting(T), n);
        leap_array.current_window(T + WINDOW_LENGTH_IN_MS);
        let values: Vec<u64> = leap_array.data().values(T + WINDOW_LENGTH_IN_MS).map(|b| b.pass).collect();
        assert_eq!(values.len(), 2);
        assert_eq!(values.iter().sum::<u64>(), n * 2);
    }

    /// `OccupiableBucketLeapArrayTest.testWindowAfterOneInterval`: ten
    /// windows, each counting its own pass and the one booked by the window
    /// before; the waiting count is read at the first window's time.
    #[test]
    fn test_window_after_one_interval() {
        let mut leap_array = array();
        let windows = i64::from(INTERVAL_IN_MS) / WINDOW_LENGTH_IN_MS;
        for i in 0..windows {
            leap_array.current_bucket(T + i * WINDOW_LENGTH_IN_MS).unwrap().pass += 1;
            leap_array.add_waiting(T + (i + 1) * WINDOW_LENGTH_IN_MS, 1);
        }
        let at = T - T % WINDOW_LENGTH_IN_MS + i64::from(INTERVAL_IN_MS);
        let values: Vec<u64> = leap_array.data().values(at).map(|b| b.pass).collect();
        assert_eq!(values.len() as i64, windows);
        assert_eq!(values.iter().sum::<u64>() as i64, 2 * windows - 1);
        assert_eq!(leap_array.current_waiting(T), 10);
    }
}

mod default_controller_test {
    use super::*;

    /// `DefaultControllerTest.testCanPassForQps`.
    #[test]
    fn test_can_pass_for_qps() {
        let threshold = 10.0;
        let mut controller = DefaultController::new(threshold, FlowGrade::Qps);
        let mut node = MockNode { pass_qps: threshold - 1.0, ..MockNode::default() };
        assert!(passes(controller.can_pass(&mut node, 1, false, 0)));
        node.pass_qps = threshold;
        assert!(!passes(controller.can_pass(&mut node, 1, false, 0)));
    }

    /// `DefaultControllerTest.testCanPassForThreadCount`.
    #[test]
    fn test_can_pass_for_thread_count() {
        let threshold: u32 = 8;
        let mut controller = DefaultController::new(f64::from(threshold), FlowGrade::Thread);
        let mut node = MockNode { cur_thread_num: u64::from(threshold) - 1, ..MockNode::default() };
        assert!(passes(controller.can_pass(&mut node, 1, false, 0)));
        node.cur_thread_num = u64::from(threshold);
        assert!(!passes(controller.can_pass(&mut node, 1, false, 0)));
    }
}

mod throttling_controller_test {
    use super::*;

    /// `ThrottlingControllerTest.testThrottlingControllerNormal`: six
    /// requests at 10 per second, each caller sleeping as told, take more
    /// than 400 ms (500 here: the first passes at once, the others wait
    /// 100 ms each).
    #[test]
    fn test_throttling_controller_normal() {
        let mut pace_controller = ThrottlingController::new(500, 10.0, 1000);
        let start = 5_000_000;
        let mut now = start;
        for _ in 0..6 {
            now += wait_of(pace_controller.can_pass(1, now));
        }
        assert!(now - start > 400_000);
        assert_eq!(now - start, 500_000);
    }

    /// `ThrottlingControllerTest.testThrottlingControllerQueueTimeout`: ten
    /// callers at once, a queue of 500 ms at 10 per second: some are
    /// refused (exactly four: the turns at 600 ms and later).
    #[test]
    fn test_throttling_controller_queue_timeout() {
        let mut pace_controller = ThrottlingController::new(500, 10.0, 1000);
        let outcomes: Vec<CanPass> = (0..10).map(|_| pace_controller.can_pass(1, 0)).collect();
        let block_count = outcomes.iter().filter(|o| !passes(**o)).count();
        assert!(block_count > 0);
        assert_eq!(block_count, 4);
        let waits: Vec<i64> = outcomes[..6].iter().map(|o| wait_of(*o)).collect();
        assert_eq!(waits, [0, 100_000, 200_000, 300_000, 400_000, 500_000]);
    }

    /// `ThrottlingControllerTest.testThrottlingControllerZeroThreshold`.
    #[test]
    fn test_throttling_controller_zero_threshold() {
        let mut pace_controller = ThrottlingController::new(500, 0.0, 1000);
        for _ in 0..2 {
            assert!(!passes(pace_controller.can_pass(1, 0)));
            assert!(passes(pace_controller.can_pass(0, 0)));
        }
    }

    /// Not upstream: a count that does not divide the second is counted in
    /// nanoseconds (Sentinel's `useNanoSeconds`), so 3 per second are a
    /// third of a second apart, rounded up to whole microseconds.
    #[test]
    fn counts_in_nanoseconds_when_the_count_does_not_divide_the_second() {
        let mut controller = ThrottlingController::new(1000, 3.0, 1000);
        assert!(controller.uses_nanos());
        assert_eq!(wait_of(controller.can_pass(1, 0)), 0);
        assert_eq!(wait_of(controller.can_pass(1, 0)), 333_334);
        assert_eq!(wait_of(controller.can_pass(1, 0)), 666_667);
        assert!(!ThrottlingController::new(500, 10.0, 1000).uses_nanos());
        assert!(ThrottlingController::new(500, 2000.0, 1000).uses_nanos());
    }
}

mod warm_up_controller_test {
    use super::*;

    /// `WarmUpControllerTest.testWarmUp`: cold, 8 per second is too many
    /// and 1 is not; after ten seconds of 10 per second the store is below
    /// the warning line, so the full count (10) is the threshold.
    #[test]
    fn test_warm_up() {
        let mut warmup_controller = WarmUpController::new(10.0, 10, 3);
        let mut now = 1_700_000_123_000; // Sentinel sets the real time
        let mut node = MockNode { pass_qps: 8.0, previous_pass_qps: 1.0, ..MockNode::default() };
        assert!(!passes(warmup_controller.can_pass(&mut node, 1, now)));
        assert_eq!(warmup_controller.stored_tokens(), 99);
        node.pass_qps = 1.0;
        node.previous_pass_qps = 1.0;
        assert!(passes(warmup_controller.can_pass(&mut node, 1, now)));
        node.previous_pass_qps = 10.0;
        for _ in 0..100 {
            now += 100_000;
            warmup_controller.can_pass(&mut node, 1, now);
        }
        node.pass_qps = 8.0;
        assert!(passes(warmup_controller.can_pass(&mut node, 1, now)));
        node.pass_qps = 10.0;
        assert!(!passes(warmup_controller.can_pass(&mut node, 1, now)));
        assert!(warmup_controller.stored_tokens() < warmup_controller.warning_token());
    }
}

mod warm_up_rate_limiter_controller_test {
    use super::*;

    /// `WarmUpRateLimiterControllerTest.testPace`: ten requests, each
    /// caller sleeping as told, take 100 ms each on average (within 10 ms
    /// upstream; exactly here).
    #[test]
    fn test_pace() {
        let mut controller = WarmUpRateLimiterController::new(10.0, 10, 1000, 3);
        let mut node = MockNode { pass_qps: 100.0, previous_pass_qps: 100.0, ..MockNode::default() };
        let mut now = 7_000_000;
        assert!(passes(controller.can_pass(&mut node, 1, now)));
        let start = now;
        let requests = 10;
        for _ in 0..requests {
            let outcome = controller.can_pass(&mut node, 1, now);
            assert!(passes(outcome));
            now += wait_of(outcome);
        }
        let cost = (now - start) as f64 / 1000.0 / f64::from(requests);
        assert!((cost - 100.0).abs() < 10.0);
        assert_eq!(cost, 100.0);
    }

    /// `WarmUpRateLimiterControllerTest.testPaceCanNotPass`: a queue of
    /// 10 ms cannot hold a second request 100 ms after the first.
    #[test]
    fn test_pace_can_not_pass() {
        let mut controller = WarmUpRateLimiterController::new(10.0, 10, 10, 3);
        let mut node = MockNode { pass_qps: 100.0, previous_pass_qps: 100.0, ..MockNode::default() };
        assert!(passes(controller.can_pass(&mut node, 1, 0)));
        assert!(!passes(controller.can_pass(&mut node, 1, 0)));
    }
}

/// The flow controller as a whole: the example, priority, rules
/// changed at run time and the checks of a rule (not upstream tests: they
/// check the behaviour the upstream code gives).
mod tests {
    use super::*;

    fn error_of(result: Result<FlowController, Error>) -> Argument {
        match result {
            Err(Error::InvalidArgument(invalid)) => invalid.argument(),
            Ok(_) => panic!("accepted"),
        }
    }

    /// The example: the rate limiter at 10 per second charges the
    /// cost of 5 permits before them, so 5 then 1 wait 0 and 100 ms.
    #[test]
    fn rate_limiter_charges_the_cost_up_front() {
        let rule = FlowRule::qps(10.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 500 });
        let mut flow = FlowController::new(rule, 2, 1000).unwrap();
        let (first, permit) = flow.check(5, false, 0).unwrap();
        assert!(first.allowed && permit.is_some());
        assert_eq!(first.wait_micros, 0);
        let (second, _) = flow.check(1, false, 0).unwrap();
        assert!(second.allowed);
        assert_eq!(second.wait_micros, 100_000);
        // The queue now ends 600 ms away: 5 more permits would wait 600 ms.
        let (third, permit) = flow.check(5, false, 0).unwrap();
        assert!(!third.allowed && permit.is_none());
        assert_eq!(third.retry_after_micros, 100_000);
        assert_eq!(flow.stats(0).pass_qps, 6.0);
        assert_eq!(flow.stats(0).block_qps, 5.0);
    }

    /// A prioritized request that would be refused occupies the next window
    /// when dropping the oldest one leaves room: it waits for it, and
    /// counts there.
    #[test]
    fn prioritized_request_occupies_the_next_window() {
        let mut flow = FlowController::new(FlowRule::qps(10.0), 2, 1000).unwrap();
        for _ in 0..10 {
            assert!(flow.check(1, false, 0).unwrap().0.allowed);
        }
        assert!(!flow.check(1, false, 600_000).unwrap().0.allowed);
        let (decision, permit) = flow.check(1, true, 600_000).unwrap();
        assert!(decision.allowed && permit.is_some());
        assert_eq!(decision.wait_micros, 400_000);
        let stats = flow.stats(600_000);
        assert_eq!((stats.waiting, stats.occupied_pass, stats.in_flight), (1, 1, 11));
        // At 1 s the window of 0 has left and the occupied pass counts.
        assert_eq!(flow.stats(1_000_000).pass_qps, 1.0);
        assert_eq!(flow.stats(1_000_000).waiting, 0);
    }

    /// A prioritized request cannot occupy a window 500 ms or more away
    /// (`OccupyTimeoutProperty`), nor one when the bookings already reach
    /// the count.
    #[test]
    fn prioritized_request_waits_less_than_the_occupy_timeout() {
        let mut flow = FlowController::new(FlowRule::qps(10.0), 2, 1000).unwrap();
        for _ in 0..10 {
            assert!(flow.check(1, false, 0).unwrap().0.allowed);
        }
        // At 100 ms the passes are all in the current window: the next
        // window that drops them begins 900 ms away.
        assert!(!flow.check(1, true, 100_000).unwrap().0.allowed);
        assert_eq!(OCCUPY_TIMEOUT_MS, 500);
        let mut flow = FlowController::new(FlowRule::qps(2.0), 2, 1000).unwrap();
        assert!(flow.check(2, false, 0).unwrap().0.allowed);
        assert_eq!(flow.check(2, true, 600_000).unwrap().0.wait_micros, 400_000);
        // The bookings reach the count.
        assert!(!flow.check(1, true, 600_000).unwrap().0.allowed);
        // The thread grade never occupies.
        let mut flow = FlowController::new(FlowRule::thread(1.0), 2, 1000).unwrap();
        let (_, permit) = flow.check(1, true, 0).unwrap();
        assert!(!flow.check(1, true, 600_000).unwrap().0.allowed);
        flow.release(permit.unwrap(), 700_000);
        assert!(flow.check(1, true, 700_000).unwrap().0.allowed);
    }

    /// The thread grade counts requests in flight; a release records the
    /// completion and its RT.
    #[test]
    fn thread_grade_counts_requests_in_flight() {
        let mut flow = FlowController::new(FlowRule::thread(2.0), 2, 1000).unwrap();
        let (_, a) = flow.check(1, false, 0).unwrap();
        let (_, b) = flow.check(1, false, 0).unwrap();
        let (refused, none) = flow.check(1, false, 0).unwrap();
        assert!(!refused.allowed && none.is_none());
        assert_eq!((refused.retry_after_micros, refused.remaining), (0, 0));
        flow.release(a.unwrap(), 30_000);
        flow.release(b.unwrap(), 50_500);
        let stats = flow.stats(60_000);
        assert_eq!((stats.in_flight, stats.success_qps, stats.avg_rt_millis), (0, 2.0, 40.0));
        assert!(flow.check(2, false, 60_000).unwrap().0.allowed);
        assert_eq!(flow.check(3, false, 60_000).unwrap().0.retry_after_micros, crate::decision::NEVER);
    }

    /// The default QPS controller: a refusal's retry is the boundary where
    /// enough passes leave the interval.
    #[test]
    fn default_qps_refusal_waits_for_the_window_to_roll() {
        let mut flow = FlowController::new(FlowRule::qps(4.0), 2, 1000).unwrap();
        for now in [0, 0, 600_000, 600_000] {
            assert!(flow.check(1, false, now).unwrap().0.allowed);
        }
        let (refused, _) = flow.check(1, false, 700_000).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_micros, 300_000);
        assert_eq!(refused.reset_after_micros, 800_000);
        assert!(flow.check(2, false, 1_000_000).unwrap().0.allowed);
        assert_eq!(flow.check(5, false, 1_000_000).unwrap().0.retry_after_micros, crate::decision::NEVER);
    }

    /// In the first second the previous second is empty: it lies before
    /// the creation (a Sentinel clock never reads such a time).
    #[test]
    fn the_previous_second_of_the_first_is_empty() {
        let mut flow = FlowController::new(FlowRule::qps(100.0), 2, 1000).unwrap();
        flow.add_pass(15, 0);
        assert_eq!(flow.stats(680_000).previous_pass_qps, 0.0);
        assert_eq!(flow.stats(1_680_000).previous_pass_qps, 15.0);
        assert_eq!(flow.stats(2_000_000).previous_pass_qps, 0.0);
    }

    /// Usage added unconditionally counts against the rule.
    #[test]
    fn added_passes_count() {
        let mut flow = FlowController::new(FlowRule::qps(5.0), 2, 1000).unwrap();
        flow.add_pass(5, 0);
        assert!(!flow.check(1, false, 0).unwrap().0.allowed);
        assert_eq!(flow.stats(0).in_flight, 0);
    }

    /// A new rule keeps the statistics (Sentinel keeps its nodes) and makes
    /// a new controller (Sentinel makes new ones).
    #[test]
    fn set_rule_keeps_statistics_and_resets_the_controller() {
        let mut flow = FlowController::new(FlowRule::qps(10.0), 2, 1000).unwrap();
        for _ in 0..10 {
            assert!(flow.check(1, false, 0).unwrap().0.allowed);
        }
        flow.set_rule(FlowRule::qps(15.0)).unwrap();
        assert_eq!(flow.stats(0).pass_qps, 10.0);
        for _ in 0..5 {
            assert!(flow.check(1, false, 0).unwrap().0.allowed);
        }
        assert!(!flow.check(1, false, 0).unwrap().0.allowed);
        let limiter = FlowRule::qps(10.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 100 });
        flow.set_rule(limiter).unwrap();
        assert_eq!(flow.check(1, false, 0).unwrap().0.wait_micros, 0);
        assert_eq!(flow.check(1, false, 0).unwrap().0.wait_micros, 100_000);
        flow.set_rule(limiter).unwrap();
        assert_eq!(flow.check(1, false, 0).unwrap().0.wait_micros, 0);
        assert!(flow.set_rule(FlowRule::qps(-1.0)).is_err());
        assert_eq!(flow.rule(), &limiter);
    }

    /// The warm-up controller through the flow controller: cold, a fresh
    /// service admits about `count / cold_factor` per second.
    #[test]
    fn warm_up_starts_cold() {
        let behavior = ControlBehavior::WarmUp { warm_up_period_sec: 10, cold_factor: 3 };
        let mut flow = FlowController::new(FlowRule::qps(30.0).with_behavior(behavior), 2, 1000).unwrap();
        let admitted = (0..30).filter(|_| flow.check(1, false, 0).unwrap().0.allowed).count();
        assert_eq!(admitted, 10);
    }

    /// The whole state is fixed arrays: 64 metric buckets, 64 booking
    /// buckets and the two seconds of the minute array.
    #[test]
    fn the_state_is_bounded() {
        let size = core::mem::size_of::<FlowController>();
        assert!(size <= 5_600, "{size} bytes");
    }

    /// A rule Sentinel's `FlowRuleUtil.isValidRule` ignores is an error
    /// naming the field; so is a statistics shape its `LeapArray` refuses.
    #[test]
    fn invalid_rules_are_errors() {
        let new = |rule: FlowRule| FlowController::new(rule, 2, 1000);
        assert_eq!(error_of(new(FlowRule::qps(-1.0))), Argument::Count);
        assert_eq!(error_of(new(FlowRule::qps(f64::NAN))), Argument::Count);
        assert_eq!(error_of(new(FlowRule::qps(f64::INFINITY))), Argument::Count);
        let warm = |warm_up_period_sec, cold_factor| ControlBehavior::WarmUp { warm_up_period_sec, cold_factor };
        assert_eq!(error_of(new(FlowRule::qps(1.0).with_behavior(warm(0, 3)))), Argument::WarmUpPeriodSec);
        assert_eq!(error_of(new(FlowRule::qps(1.0).with_behavior(warm(10, 1)))), Argument::FlowColdFactor);
        // A warm-up's tokens fit Sentinel's `int`: 2^31 − 1 of them is the most.
        assert!(new(FlowRule::qps(f64::from(i32::MAX)).with_behavior(warm(1, 3))).is_ok());
        assert_eq!(
            error_of(new(FlowRule::qps(f64::from(i32::MAX) / 10.0 + 1.0).with_behavior(warm(10, 3)))),
            Argument::WarmUpCount
        );
        assert_eq!(error_of(new(FlowRule::qps(1e300).with_behavior(warm(10, 3)))), Argument::WarmUpCount);
        let cold_queue =
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec: 2, cold_factor: 3, max_queueing_time_ms: 1 };
        assert_eq!(error_of(new(FlowRule::qps(2e9).with_behavior(cold_queue))), Argument::WarmUpCount);
        assert!(new(FlowRule::qps(1e300)).is_ok(), "only a warm-up counts tokens");
        let queue = ControlBehavior::RateLimiter { max_queueing_time_ms: 0 };
        assert_eq!(error_of(new(FlowRule::qps(1.0).with_behavior(queue))), Argument::MaxQueueingTimeMs);
        let both =
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec: 1, cold_factor: 3, max_queueing_time_ms: 0 };
        assert_eq!(error_of(new(FlowRule::qps(1.0).with_behavior(both))), Argument::MaxQueueingTimeMs);
        // The thread grade ignores the behaviour, as Sentinel does.
        assert!(new(FlowRule::thread(1.0).with_behavior(warm(0, 0))).is_ok());
        assert_eq!(error_of(FlowController::new(FlowRule::qps(1.0), 3, 1000)), Argument::SampleCount);
        assert_eq!(error_of(FlowController::new(FlowRule::qps(1.0), 0, 1000)), Argument::SampleCount);
        assert_eq!(error_of(FlowController::new(FlowRule::qps(1.0), 128, 1280)), Argument::SampleCount);
        assert_eq!(error_of(FlowController::new(FlowRule::qps(1.0), 2, 0)), Argument::IntervalMs);
        let mut flow = new(FlowRule::qps(1.0)).unwrap();
        let Err(Error::InvalidArgument(invalid)) = flow.check(u32::MAX, false, 0) else { panic!() };
        assert_eq!(invalid.argument(), Argument::AcquireCount);
        assert!(flow.check(0, false, 0).unwrap().0.allowed);
    }
}
