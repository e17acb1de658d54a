//! Sentinel's `StatisticNode` as far as flow control reads it: the second's
//! statistics (an [`OccupiableBucketLeapArray`] of `sample_count` buckets
//! over `interval_ms`), the previous second's passes, and the requests in
//! flight.
//!
//! Sentinel also keeps a minute of one-second buckets; the flow controllers
//! read only its previous second (`previousPassQps`, for the warm-up
//! controllers), so this node keeps two one-second buckets, which gives the
//! same previous window.

use super::leap_array::{LeapArray, MetricBucket, OccupiableBucketLeapArray};
use crate::error::Error;

/// What a flow controller asks of the statistics (Sentinel's `Node`, the
/// methods the controllers call). [`StatisticNode`] is the real one; tests
/// give a controller made-up readings, as Sentinel's mock their node.
pub trait FlowNode {
    /// Requests admitted per second over the interval (`passQps`).
    fn pass_qps(&mut self, now_ms: i64) -> f64;
    /// Requests admitted in the previous whole second (`previousPassQps`).
    fn previous_pass_qps(&mut self, now_ms: i64) -> f64;
    /// Requests in flight (`curThreadNum`).
    fn cur_thread_num(&self) -> u64;
    /// How long a prioritized request of `acquire_count` waits for a window
    /// with room under `threshold` per second, `occupy_timeout_ms` when none
    /// comes sooner (`tryOccupyNext`).
    fn try_occupy_next(&mut self, now_ms: i64, acquire_count: u32, threshold: f64, occupy_timeout_ms: i64) -> i64;
    /// Books `acquire_count` passes into the window of `future_time_ms`
    /// (`addWaitingRequest`).
    fn add_waiting_request(&mut self, future_time_ms: i64, acquire_count: u32);
    /// Counts `acquire_count` occupied passes now (`addOccupiedPass`).
    fn add_occupied_pass(&mut self, acquire_count: u32, now_ms: i64);
}

/// Sentinel's statistic node; see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatisticNode {
    second: OccupiableBucketLeapArray,
    /// The last two whole seconds (Sentinel's minute array, cut down).
    minute: LeapArray<MetricBucket, 2>,
    cur_thread_num: u64,
}

impl StatisticNode {
    /// Empty statistics over `sample_count` buckets of `interval_ms`.
    pub fn new(sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        Ok(StatisticNode {
            second: OccupiableBucketLeapArray::new(sample_count, interval_ms)?,
            minute: LeapArray::new(2, 2_000)?,
            cur_thread_num: 0,
        })
    }

    /// The second's statistics.
    pub fn second(&self) -> &OccupiableBucketLeapArray {
        &self.second
    }

    fn interval_in_second(&self) -> f64 {
        self.second.data().interval_ms() as f64 / 1000.0
    }

    /// Refused requests per second over the interval (`blockQps`).
    pub fn block_qps(&mut self, now_ms: i64) -> f64 {
        self.second.sum(now_ms, |b| b.block) as f64 / self.interval_in_second()
    }

    /// Completed requests per second over the interval (`successQps`).
    pub fn success_qps(&mut self, now_ms: i64) -> f64 {
        self.second.sum(now_ms, |b| b.success) as f64 / self.interval_in_second()
    }

    /// The average RT of the interval's completions in milliseconds, 0 when
    /// none (`avgRt`).
    pub fn avg_rt(&mut self, now_ms: i64) -> f64 {
        let success = self.second.sum(now_ms, |b| b.success);
        if success == 0 {
            return 0.0;
        }
        self.second.sum(now_ms, |b| b.rt) as f64 / success as f64
    }

    /// Occupied passes counted in the current whole second (Sentinel counts
    /// them in its minute array only).
    pub fn occupied_pass(&mut self, now_ms: i64) -> u64 {
        self.minute.current_bucket(now_ms).map_or(0, |b| b.occupied_pass)
    }

    /// Passes booked into windows that have not begun (`waiting`).
    pub fn waiting(&mut self, now_ms: i64) -> u64 {
        self.second.current_waiting(now_ms)
    }

    /// Counts `count` admitted requests (`addPassRequest`).
    pub fn add_pass_request(&mut self, count: u64, now_ms: i64) {
        if let Some(b) = self.second.current_bucket(now_ms) {
            b.pass = b.pass.saturating_add(count);
        }
        if let Some(b) = self.minute.current_bucket(now_ms) {
            b.pass = b.pass.saturating_add(count);
        }
    }

    /// Counts `count` completions that took `rt_ms` (`addRtAndSuccess`).
    pub fn add_rt_and_success(&mut self, rt_ms: u64, count: u64, now_ms: i64) {
        if let Some(b) = self.second.current_bucket(now_ms) {
            b.success = b.success.saturating_add(count);
            b.rt = b.rt.saturating_add(rt_ms);
        }
        if let Some(b) = self.minute.current_bucket(now_ms) {
            b.success = b.success.saturating_add(count);
            b.rt = b.rt.saturating_add(rt_ms);
        }
    }

    /// Counts `count` refused requests (`increaseBlockQps`).
    pub fn increase_block_qps(&mut self, count: u64, now_ms: i64) {
        if let Some(b) = self.second.current_bucket(now_ms) {
            b.block = b.block.saturating_add(count);
        }
        if let Some(b) = self.minute.current_bucket(now_ms) {
            b.block = b.block.saturating_add(count);
        }
    }

    /// One more request in flight (`increaseThreadNum`).
    pub fn increase_thread_num(&mut self) {
        self.cur_thread_num = self.cur_thread_num.saturating_add(1);
    }

    /// One request fewer in flight (`decreaseThreadNum`), never below 0.
    pub fn decrease_thread_num(&mut self) {
        self.cur_thread_num = self.cur_thread_num.saturating_sub(1);
    }
}

impl FlowNode for StatisticNode {
    fn pass_qps(&mut self, now_ms: i64) -> f64 {
        self.second.sum(now_ms, |b| b.pass) as f64 / self.interval_in_second()
    }

    fn previous_pass_qps(&mut self, now_ms: i64) -> f64 {
        self.minute.current_bucket(now_ms);
        self.minute.previous_window(now_ms).map_or(0, |w| w.value.pass) as f64
    }

    fn cur_thread_num(&self) -> u64 {
        self.cur_thread_num
    }

    fn try_occupy_next(&mut self, now_ms: i64, acquire_count: u32, threshold: f64, occupy_timeout_ms: i64) -> i64 {
        let interval = self.second.data().interval_ms();
        let max_count = threshold * interval as f64 / 1000.0;
        let current_borrow = self.second.current_waiting(now_ms);
        if current_borrow as f64 >= max_count {
            return occupy_timeout_ms;
        }
        let window_length = self.second.data().window_length_ms();
        let mut earliest = now_ms - now_ms.rem_euclid(window_length) + window_length - interval;
        let mut current_pass = self.second.sum(now_ms, |b| b.pass) as i64;
        let mut idx = 0;
        while earliest < now_ms {
            let wait_ms = idx * window_length + window_length - now_ms.rem_euclid(window_length);
            if wait_ms >= occupy_timeout_ms {
                break;
            }
            let window_pass = self.second.window_pass(earliest) as i64;
            let after = current_pass.saturating_add(current_borrow as i64).saturating_add(i64::from(acquire_count))
                - window_pass;
            if after as f64 <= max_count {
                return wait_ms;
            }
            earliest += window_length;
            current_pass -= window_pass;
            idx += 1;
        }
        occupy_timeout_ms
    }

    fn add_waiting_request(&mut self, future_time_ms: i64, acquire_count: u32) {
        self.second.add_waiting(future_time_ms, u64::from(acquire_count));
    }

    fn add_occupied_pass(&mut self, acquire_count: u32, now_ms: i64) {
        if let Some(b) = self.minute.current_bucket(now_ms) {
            b.occupied_pass = b.occupied_pass.saturating_add(u64::from(acquire_count));
            b.pass = b.pass.saturating_add(u64::from(acquire_count));
        }
    }
}
