//! [`FlowController`]: Sentinel's flow rule (`FlowRule`, checked by
//! `FlowRuleChecker` through its traffic-shaping controller) as a state
//! machine over Sentinel's own sliding statistics.
//!
//! A [`FlowRule`] limits a resource by one of two [`FlowGrade`]s: the
//! requests admitted per second (QPS) or the requests in flight (thread
//! count). For the QPS grade its [`ControlBehavior`] picks Sentinel's
//! controller:
//!
//! - [`ControlBehavior::Default`] (`DefaultController`): refuse what would
//!   take the interval's passes above `count` per second. A *prioritized*
//!   request that would be refused may instead occupy a window that begins
//!   within 500 ms (`OccupyTimeoutProperty`) if that window has room: it
//!   waits for the window and counts there (`tryOccupyNext`).
//! - [`ControlBehavior::WarmUp`] (`WarmUpController`): Sentinel's own
//!   token math, not Guava's: a store of tokens refilled at `count` per
//!   second and spent by the *previous second's* passes, synced once per
//!   whole second; a full store (cold) admits about `count / cold_factor`
//!   per second, an emptied one `count`.
//! - [`ControlBehavior::RateLimiter`] (`ThrottlingController`): uniform
//!   queueing. Each request's cost (`1000 × acquire_count / count` ms) is
//!   charged before it: a request waits until the previous one's turn plus
//!   its own cost, and is refused if that is more than
//!   `max_queueing_time_ms` away. With `count` 10, five permits then one
//!   wait 0 and 100 ms.
//! - [`ControlBehavior::WarmUpRateLimiter`] (`WarmUpRateLimiterController`):
//!   the warm-up rate as the rate limiter's spacing.
//!
//! The thread grade always uses the default controller (as Sentinel's
//! `generateRater` does) and ignores the behaviour.
//!
//! The statistics are Sentinel's `StatisticNode`: a leap array of
//! `sample_count` buckets over `interval_ms` (Sentinel's defaults 2 and
//! 1000) counting passes, blocks, completions and their RT, with a future
//! array for occupied windows, and the previous whole second's passes
//! ([`node`] says what is kept). They are kept when the rule changes
//! ([`FlowController::set_rule`]), as Sentinel keeps its nodes when rules
//! are reloaded, while the controller's own state (the warm-up tokens, the
//! rate limiter's latest turn) starts afresh, as Sentinel builds new
//! controllers.
//!
//! Time is passed in as microseconds since the controller's creation and
//! counted in whole milliseconds (floor), so every window and every whole
//! second is aligned to the creation, not to the epoch; the rate limiter
//! counts in nanoseconds (`now × 1000`) where Sentinel does. A wait is
//! Sentinel's sleep, in whole milliseconds (nanoseconds rounded up to
//! microseconds). Sentinel's own tests are translated in `sentinel_tests.rs`,
//! which lists the differences kept on purpose.
//!
//! # Worst case
//!
//! - Default, QPS: the last `sample_count` buckets (the current one
//!   included) hold at most `count × interval` passes (plus one for an
//!   interval that is not a whole second, whose QPS is rounded down), so
//!   any `interval` of time, which overlaps one bucket more, admits at most
//!   twice that. Occupied passes count in the windows they occupy.
//! - Thread grade: at most `count` requests in flight.
//! - Rate limiter: turns are at least one cost apart, so any span of `d`
//!   admits at most `1 + (d + max_queueing_time_ms) / cost` requests of one
//!   permit. Warm-up with rate limiter: the same with the current rate,
//!   which is at most `count`.
//! - Warm-up: at most `count` per second, as the default controller.

pub mod controllers;
pub mod leap_array;
pub mod node;

use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use controllers::{
    millis, CanPass, DefaultController, ThrottlingController, WarmUpController, WarmUpRateLimiterController,
};
use leap_array::check_shape;
use node::{FlowNode, StatisticNode};

/// Sentinel's default number of buckets per interval (`SAMPLE_COUNT`).
pub const DEFAULT_SAMPLE_COUNT: u32 = 2;
/// Sentinel's default statistics interval in milliseconds (`INTERVAL`).
pub const DEFAULT_INTERVAL_MS: u32 = 1000;
/// Sentinel's default warm-up period (`FlowRule.warmUpPeriodSec`).
pub const DEFAULT_WARM_UP_PERIOD_SEC: u32 = 10;
/// Sentinel's default cold factor (`SentinelConfig.coldFactor`).
pub const DEFAULT_COLD_FACTOR: u32 = 3;
/// Sentinel's default queueing bound (`FlowRule.maxQueueingTimeMs`).
pub const DEFAULT_MAX_QUEUEING_TIME_MS: u32 = 500;

/// What a flow rule counts (Sentinel's `grade`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowGrade {
    /// Requests admitted per second (`FLOW_GRADE_QPS`).
    Qps,
    /// Requests in flight (`FLOW_GRADE_THREAD`).
    Thread,
}

/// How a QPS rule shapes traffic (Sentinel's `controlBehavior`), in
/// Sentinel's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlBehavior {
    /// Refuse at once (`CONTROL_BEHAVIOR_DEFAULT`).
    Default,
    /// Warm up (`CONTROL_BEHAVIOR_WARM_UP`).
    WarmUp {
        /// Seconds to warm up (`warmUpPeriodSec`): at least 1.
        warm_up_period_sec: u32,
        /// How much slower a cold service starts (`coldFactor`): an
        /// integer of at least 2.
        cold_factor: u32,
    },
    /// Uniform queueing (`CONTROL_BEHAVIOR_RATE_LIMITER`).
    RateLimiter {
        /// The longest wait for a turn (`maxQueueingTimeMs`): at least 1.
        max_queueing_time_ms: u32,
    },
    /// Warm up, queueing (`CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER`).
    WarmUpRateLimiter {
        /// Seconds to warm up: at least 1.
        warm_up_period_sec: u32,
        /// How much slower a cold service starts: at least 2.
        cold_factor: u32,
        /// The longest wait for a turn: at least 1.
        max_queueing_time_ms: u32,
    },
}

/// A flow rule: Sentinel's `FlowRule` for one resource, less what picks
/// the resource and the node (strategy, origin, cluster mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowRule {
    /// What is counted.
    pub grade: FlowGrade,
    /// The threshold (`count`): per second for QPS, in flight for threads.
    pub count: f64,
    /// The shaping of a QPS rule.
    pub control_behavior: ControlBehavior,
}

impl FlowRule {
    /// A QPS rule with the default behaviour.
    pub const fn qps(count: f64) -> Self {
        FlowRule { grade: FlowGrade::Qps, count, control_behavior: ControlBehavior::Default }
    }

    /// A thread-count rule.
    pub const fn thread(count: f64) -> Self {
        FlowRule { grade: FlowGrade::Thread, count, control_behavior: ControlBehavior::Default }
    }

    /// The same rule with `behavior`.
    pub const fn with_behavior(self, behavior: ControlBehavior) -> Self {
        FlowRule { control_behavior: behavior, ..self }
    }

    /// Checks the rule as Sentinel's `FlowRuleUtil.isValidRule` does, and
    /// what its controllers assume: an error where Sentinel ignores the
    /// rule with a log line. The count must also be finite (Sentinel
    /// accepts `+Infinity`, which its warm-up math overflows on). The thread
    /// grade's behaviour is not checked: it is not used.
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.count.is_finite() && self.count >= 0.0) {
            return Err(Error::invalid_float(Argument::Count, self.count));
        }
        if self.grade == FlowGrade::Thread {
            return Ok(());
        }
        let period = |p: u32| {
            if p == 0 || p > i32::MAX as u32 {
                return Err(Error::invalid_int(Argument::WarmUpPeriodSec, i64::from(p)));
            }
            Ok(())
        };
        let cold = |c: u32| {
            if c < 2 || c > i32::MAX as u32 {
                return Err(Error::invalid_int(Argument::FlowColdFactor, i64::from(c)));
            }
            Ok(())
        };
        let queue = |q: u32| {
            if q == 0 || q > i32::MAX as u32 {
                return Err(Error::invalid_int(Argument::MaxQueueingTimeMs, i64::from(q)));
            }
            Ok(())
        };
        // Sentinel keeps a warm-up's tokens (`count × warm_up_period_sec`)
        // in an `int`: beyond it its casts saturate and its sums wrap, so
        // such a rule is refused rather than decided some other way.
        let tokens = |p: u32| {
            if self.count * f64::from(p) > f64::from(i32::MAX) {
                return Err(Error::invalid_float(Argument::WarmUpCount, self.count));
            }
            Ok(())
        };
        match self.control_behavior {
            ControlBehavior::Default => Ok(()),
            ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
                period(warm_up_period_sec)?;
                cold(cold_factor)?;
                tokens(warm_up_period_sec)
            }
            ControlBehavior::RateLimiter { max_queueing_time_ms } => queue(max_queueing_time_ms),
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
                period(warm_up_period_sec)?;
                cold(cold_factor)?;
                queue(max_queueing_time_ms)?;
                tokens(warm_up_period_sec)
            }
        }
    }
}

/// The controller a rule makes (Sentinel's `generateRater`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rater {
    Default(DefaultController),
    Throttling(ThrottlingController),
    WarmUp(WarmUpController),
    WarmUpRateLimiter(WarmUpRateLimiterController),
}

impl Rater {
    fn of(rule: &FlowRule) -> Self {
        if rule.grade == FlowGrade::Thread {
            return Rater::Default(DefaultController::new(rule.count, rule.grade));
        }
        match rule.control_behavior {
            ControlBehavior::Default => Rater::Default(DefaultController::new(rule.count, rule.grade)),
            ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
                Rater::WarmUp(WarmUpController::new(rule.count, warm_up_period_sec, cold_factor))
            }
            ControlBehavior::RateLimiter { max_queueing_time_ms } => {
                Rater::Throttling(ThrottlingController::new(max_queueing_time_ms, rule.count, 1000))
            }
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
                Rater::WarmUpRateLimiter(WarmUpRateLimiterController::new(
                    rule.count,
                    warm_up_period_sec,
                    max_queueing_time_ms,
                    cold_factor,
                ))
            }
        }
    }
}

/// An admitted request's permit: plain data to give back to
/// [`FlowController::release`] exactly once, when the request ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use = "a flow permit must be released, or the controller counts it in flight forever"]
pub struct FlowPermit {
    /// When the request was decided (microseconds since the controller's
    /// creation): its RT counts from there, its wait included, as
    /// Sentinel's entry's creation time.
    pub start_micros: i64,
    /// Its count (`acquireCount`).
    pub count: u32,
}

/// The statistics of a [`FlowController`], as Sentinel's node reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowStats {
    /// Requests admitted per second over the interval (`passQps`).
    pub pass_qps: f64,
    /// Requests refused per second over the interval (`blockQps`).
    pub block_qps: f64,
    /// Requests completed per second over the interval (`successQps`).
    pub success_qps: f64,
    /// Requests admitted in the previous whole second (`previousPassQps`).
    pub previous_pass_qps: f64,
    /// Prioritized requests that occupied a later window, counted in the
    /// current whole second (`occupiedPass` of Sentinel's minute array).
    pub occupied_pass: u64,
    /// Passes booked into windows that have not begun (`waiting`).
    pub waiting: u64,
    /// Requests in flight (`curThreadNum`).
    pub in_flight: u64,
    /// The average RT of the interval's completions in milliseconds, 0 when
    /// none (`avgRt`).
    pub avg_rt_millis: f64,
}

/// Sentinel's flow rule as a state machine; see the
/// [module documentation](self).
///
/// Worst case (detailed in the module documentation): the default and
/// warm-up controllers admit at most `count × interval` in the last
/// `sample_count` buckets, so up to twice that in any `interval` of time;
/// the thread grade at most `count` in flight; the rate limiters one
/// request per cost, plus what their queue of `max_queueing_time_ms`
/// holds. The state is fixed arrays (5,456 bytes), never allocated.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowController {
    rule: FlowRule,
    node: StatisticNode,
    rater: Rater,
}

impl FlowController {
    /// A controller for `rule` over statistics of `sample_count` buckets
    /// of `interval_ms` (Sentinel's defaults: [`DEFAULT_SAMPLE_COUNT`],
    /// [`DEFAULT_INTERVAL_MS`]).
    pub fn new(rule: FlowRule, sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        rule.validate()?;
        check_shape(sample_count, interval_ms, leap_array::MAX_SAMPLE_COUNT)?;
        Ok(FlowController { rule, node: StatisticNode::new(sample_count, interval_ms)?, rater: Rater::of(&rule) })
    }

    /// The rule.
    pub fn rule(&self) -> &FlowRule {
        &self.rule
    }

    /// The statistics.
    pub fn node(&self) -> &StatisticNode {
        &self.node
    }

    /// Replaces the rule at run time (Sentinel's `FlowRuleManager.loadRules`):
    /// the statistics stay, the controller starts afresh.
    pub fn set_rule(&mut self, rule: FlowRule) -> Result<(), Error> {
        rule.validate()?;
        self.rule = rule;
        self.rater = Rater::of(&rule);
        Ok(())
    }

    /// Decides `acquire_count` (at most `i32::MAX`, 0 allowed as in
    /// Sentinel) at `now_micros`; `prioritized` lets a QPS request of the
    /// default behaviour occupy a later window. An admitted request is
    /// counted in flight and as passed (an occupied one counts in the window
    /// it occupies), a refused one as blocked (Sentinel's `StatisticSlot`).
    /// The permit of an admitted request goes back to
    /// [`release`](Self::release) when the request ends.
    ///
    /// The decision: `wait_micros` is the queueing or occupying wait;
    /// `limit` the count (whole); `remaining` what the controller still
    /// admits at once (for the rate limiters, the turns within the queueing
    /// bound); a refusal's `retry_after_micros` the first moment the same
    /// request would be admitted if nothing else happens (for the warm-up
    /// controller, at its current rate, which moves each second), 0 for the
    /// thread grade (room frees when a request ends, which nothing
    /// foresees) and [`NEVER`] for a request above the count.
    pub fn check(
        &mut self,
        acquire_count: u32,
        prioritized: bool,
        now_micros: i64,
    ) -> Result<(Decision, Option<FlowPermit>), Error> {
        if acquire_count > i32::MAX as u32 {
            return Err(Error::invalid_int(Argument::AcquireCount, i64::from(acquire_count)));
        }
        let now_ms = millis(now_micros);
        let outcome = match &mut self.rater {
            Rater::Default(c) => c.can_pass(&mut self.node, acquire_count, prioritized, now_micros),
            Rater::Throttling(c) => c.can_pass(acquire_count, now_micros),
            Rater::WarmUp(c) => c.can_pass(&mut self.node, acquire_count, now_micros),
            Rater::WarmUpRateLimiter(c) => c.can_pass(&mut self.node, acquire_count, now_micros),
        };
        let permit = FlowPermit { start_micros: now_micros, count: acquire_count };
        match outcome {
            CanPass::Pass { wait_micros } => {
                self.node.increase_thread_num();
                self.node.add_pass_request(u64::from(acquire_count), now_ms);
                Ok((self.decision(true, acquire_count, wait_micros, now_micros), Some(permit)))
            }
            CanPass::PriorityWait { wait_micros } => {
                self.node.increase_thread_num();
                Ok((self.decision(true, acquire_count, wait_micros, now_micros), Some(permit)))
            }
            CanPass::Blocked => {
                self.node.increase_block_qps(u64::from(acquire_count), now_ms);
                Ok((self.decision(false, acquire_count, 0, now_micros), None))
            }
        }
    }

    /// A request admitted with `permit` ended at `now_micros`: records its
    /// completion and RT in whole milliseconds, and takes it out of flight
    /// (Sentinel's `addRtAndSuccess`, then `decreaseThreadNum`).
    pub fn release(&mut self, permit: FlowPermit, now_micros: i64) {
        let now_ms = millis(now_micros);
        let rt = (now_ms - millis(permit.start_micros)).max(0) as u64;
        self.node.add_rt_and_success(rt, u64::from(permit.count), now_ms);
        self.node.decrease_thread_num();
    }

    /// Counts `count` passes at `now_micros` without asking the rule
    /// (usage that happened anyway), as Sentinel's `addPassRequest`.
    pub fn add_pass(&mut self, count: u64, now_micros: i64) {
        self.node.add_pass_request(count, millis(now_micros));
    }

    /// The statistics at `now_micros`.
    pub fn stats(&mut self, now_micros: i64) -> FlowStats {
        let now_ms = millis(now_micros);
        let node = &mut self.node;
        FlowStats {
            pass_qps: node.pass_qps(now_ms),
            block_qps: node.block_qps(now_ms),
            success_qps: node.success_qps(now_ms),
            previous_pass_qps: node.previous_pass_qps(now_ms),
            occupied_pass: node.occupied_pass(now_ms),
            waiting: node.waiting(now_ms),
            in_flight: node.cur_thread_num(),
            avg_rt_millis: node.avg_rt(now_ms),
        }
    }

    fn decision(&mut self, allowed: bool, acquire_count: u32, wait_micros: i64, now_micros: i64) -> Decision {
        let limit = self.rule.count as u64;
        let now_ms = millis(now_micros);
        let interval_micros = self.node.second().data().interval_ms() * 1000;
        let (remaining, retry_after, reset_after, window) = match (&self.rater, self.rule.grade) {
            (_, FlowGrade::Thread) => {
                let in_flight = self.node.cur_thread_num();
                let retry = if f64::from(acquire_count) > self.rule.count { NEVER } else { 0 };
                (limit.saturating_sub(in_flight), retry, 0, 0)
            }
            (Rater::Throttling(c), _) => (
                c.room(now_micros),
                c.retry_after_micros(acquire_count, now_micros),
                c.queue_micros(now_micros),
                1_000_000,
            ),
            (Rater::WarmUpRateLimiter(c), _) => (
                c.room(now_micros),
                c.retry_after_micros(acquire_count, now_micros),
                c.queue_micros(now_micros),
                1_000_000,
            ),
            (rater, _) => {
                let threshold = match rater {
                    Rater::WarmUp(c) => c.threshold(),
                    _ => self.rule.count,
                };
                let pass_qps = self.node.pass_qps(now_ms) as i64;
                let remaining = (threshold as i64).saturating_sub(pass_qps).max(0) as u64;
                let retry = self.roll_off_retry(acquire_count, threshold, now_micros);
                (remaining, retry, self.reset_after(now_micros), interval_micros)
            }
        };
        if allowed {
            Decision { wait_micros, ..Decision::allowed(limit, remaining, reset_after, window) }
        } else {
            Decision::refused(limit, remaining, retry_after, reset_after, window)
        }
    }

    /// When the last counted pass leaves the interval, in microseconds.
    fn reset_after(&self, now_micros: i64) -> i64 {
        let now_ms = millis(now_micros);
        let second = self.node.second();
        let data = second.data();
        let newest = data.list(now_ms).filter(|w| w.value.pass > 0).map(|w| w.start_ms).max();
        let booked = second.booked(now_ms).filter(|&(_, pass)| pass > 0).map(|(start, _)| start).max();
        match newest.max(booked) {
            Some(start) => (start + data.interval_ms()).saturating_mul(1000).saturating_sub(now_micros).max(0),
            None => 0,
        }
    }

    /// The first window boundary at which the passes then counted (those
    /// of later windows, and the ones booked up to it) leave room for
    /// `acquire_count` under `threshold` per second.
    fn roll_off_retry(&self, acquire_count: u32, threshold: f64, now_micros: i64) -> i64 {
        if f64::from(acquire_count) > self.rule.count {
            return NEVER;
        }
        let now_ms = millis(now_micros);
        let second = self.node.second();
        let data = second.data();
        let (length, interval) = (data.window_length_ms(), data.interval_ms());
        let interval_in_second = interval as f64 / 1000.0;
        let current_start = now_ms - now_ms.rem_euclid(length);
        for k in 1..=2 * i64::from(data.sample_count()) {
            let at = current_start + k * length;
            let counted = data
                .list(now_ms)
                .filter(|w| w.start_ms > at - interval)
                .map(|w| w.value.pass)
                .chain(second.booked(now_ms).filter(|&(start, _)| start <= at).map(|(_, pass)| pass))
                .fold(0u64, u64::saturating_add);
            let qps = (counted as f64 / interval_in_second) as i64;
            if qps.saturating_add(i64::from(acquire_count)) as f64 <= threshold {
                return at.saturating_mul(1000).saturating_sub(now_micros);
            }
        }
        // The warm-up rate moves at the next whole second.
        (now_ms - now_ms.rem_euclid(1000) + 1000).saturating_mul(1000).saturating_sub(now_micros)
    }
}

#[cfg(test)]
mod sentinel_tests;
