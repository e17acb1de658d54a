//! Sentinel's four traffic-shaping controllers (`TrafficShapingController`
//! and its implementations), each deciding one request from a
//! [`FlowNode`]'s statistics and its own state.

use super::node::FlowNode;
use super::FlowGrade;

/// Sentinel's `OccupyTimeoutProperty` default: a prioritized request waits
/// at most this long (exclusive) for a later window.
pub const OCCUPY_TIMEOUT_MS: i64 = 500;

/// A controller's answer (Sentinel's `canPass`, and the
/// `PriorityWaitException` the default controller throws).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanPass {
    /// Admitted after waiting `wait_micros` (0: at once). The wait is
    /// Sentinel's sleep: whole milliseconds, or nanoseconds rounded up to
    /// microseconds.
    Pass {
        /// The queueing wait.
        wait_micros: i64,
    },
    /// A prioritized request admitted into a later window, after waiting
    /// `wait_micros` for it to begin; its passes are booked there.
    PriorityWait {
        /// The wait for the window.
        wait_micros: i64,
    },
    /// Refused.
    Blocked,
}

/// Whole milliseconds of a time in microseconds (floor).
pub(crate) fn millis(now_micros: i64) -> i64 {
    now_micros.div_euclid(1000)
}

/// Java's `Math.round`: half up; NaN is 0; beyond the range, the nearest
/// bound. (`f64::round` needs std, and rounds halves away from zero.)
fn java_round(x: f64) -> i64 {
    const INTEGRAL: f64 = 4_503_599_627_370_496.0; // 2^52: every double beyond is whole
    if !(-INTEGRAL < x && x < INTEGRAL) {
        return x as i64;
    }
    let whole = x as i64; // toward zero, exact here
    let fraction = x - whole as f64; // exact too
    if fraction >= 0.5 {
        whole + 1
    } else if fraction < -0.5 {
        whole - 1
    } else {
        whole
    }
}

/// Java's `Math.nextUp` (`f64::next_up` is newer than the crate's
/// minimum Rust).
fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

/// Sentinel's `DefaultController`: refuses what would take the interval's
/// passes (QPS grade) or the requests in flight (thread grade) above the
/// count; a prioritized QPS request may occupy a window that begins within
/// [`OCCUPY_TIMEOUT_MS`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DefaultController {
    count: f64,
    grade: FlowGrade,
    occupy_timeout_ms: i64,
}

impl DefaultController {
    /// A controller of `count` for `grade`.
    pub(crate) fn new(count: f64, grade: FlowGrade) -> Self {
        DefaultController { count, grade, occupy_timeout_ms: OCCUPY_TIMEOUT_MS }
    }

    /// Decides `acquire_count` at `now_micros`.
    pub fn can_pass(
        &mut self,
        node: &mut impl FlowNode,
        acquire_count: u32,
        prioritized: bool,
        now_micros: i64,
    ) -> CanPass {
        let now_ms = millis(now_micros);
        let current = match self.grade {
            FlowGrade::Thread => node.cur_thread_num().min(i64::MAX as u64) as i64,
            FlowGrade::Qps => node.pass_qps(now_ms) as i64,
        };
        if current.saturating_add(i64::from(acquire_count)) as f64 <= self.count {
            return CanPass::Pass { wait_micros: 0 };
        }
        if prioritized && self.grade == FlowGrade::Qps {
            let wait_ms = node.try_occupy_next(now_ms, acquire_count, self.count, self.occupy_timeout_ms);
            if wait_ms < self.occupy_timeout_ms {
                node.add_waiting_request(now_ms + wait_ms, acquire_count);
                node.add_occupied_pass(acquire_count, now_ms);
                return CanPass::PriorityWait { wait_micros: wait_ms * 1000 };
            }
        }
        CanPass::Blocked
    }
}

/// Sentinel's `ThrottlingController` (the rate limiter of uniform
/// queueing): requests are spaced by their cost, `stat_duration_ms ×
/// acquire_count / count`, charged before the request; a request whose
/// turn is more than `max_queueing_time_ms` away is refused.
///
/// Like Sentinel, it counts in milliseconds when the count divides the
/// duration and is at most one per millisecond, and in nanoseconds
/// otherwise (time is then `now_micros × 1000`). Sentinel's latest pass
/// starts at -1, decades before its clock's now: here a fresh controller
/// admits its first request at once whatever its cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottlingController {
    max_queueing_time_ms: i64,
    stat_duration_ms: i64,
    count: f64,
    use_nanos: bool,
    /// When the last admitted request's turn is, in the controller's unit.
    latest_passed: Option<i64>,
}

impl ThrottlingController {
    /// A controller spacing `count` per `stat_duration_ms` (Sentinel uses
    /// 1000) with a queue of at most `max_queueing_time_ms`.
    pub(crate) fn new(max_queueing_time_ms: u32, count: f64, stat_duration_ms: u32) -> Self {
        let stat_duration_ms = i64::from(stat_duration_ms.max(1));
        let use_nanos = if count > 0.0 {
            // Sentinel divides by `Math.round(count)`, which throws for a
            // count below 0.5; such a rate is only exact in nanoseconds.
            let rounded = java_round(count);
            rounded == 0 || stat_duration_ms % rounded != 0 || count / stat_duration_ms as f64 > 1.0
        } else {
            false
        };
        ThrottlingController {
            max_queueing_time_ms: i64::from(max_queueing_time_ms),
            stat_duration_ms,
            count,
            use_nanos,
            latest_passed: None,
        }
    }

    /// Whether the controller counts in nanoseconds.
    pub fn uses_nanos(&self) -> bool {
        self.use_nanos
    }

    /// `(now, cost of acquire_count, queueing bound)` in the controller's
    /// unit.
    fn units(&self, acquire_count: u32, now_micros: i64) -> (i64, i64, i64) {
        let acquire = f64::from(acquire_count);
        if self.use_nanos {
            let cost = java_round(1_000_000.0 * self.stat_duration_ms as f64 * acquire / self.count);
            (now_micros.saturating_mul(1000), cost, self.max_queueing_time_ms * 1_000_000)
        } else {
            let cost = java_round(self.stat_duration_ms as f64 * acquire / self.count);
            (millis(now_micros), cost, self.max_queueing_time_ms)
        }
    }

    /// A wait in the controller's unit as microseconds (rounded up).
    fn wait_micros(&self, wait: i64) -> i64 {
        if self.use_nanos {
            wait.saturating_add(999) / 1000
        } else {
            wait.saturating_mul(1000)
        }
    }

    /// Decides `acquire_count` at `now_micros`.
    pub fn can_pass(&mut self, acquire_count: u32, now_micros: i64) -> CanPass {
        if acquire_count == 0 {
            return CanPass::Pass { wait_micros: 0 };
        }
        if self.count <= 0.0 {
            return CanPass::Blocked;
        }
        let (now, cost, max_wait) = self.units(acquire_count, now_micros);
        let latest = match self.latest_passed {
            Some(latest) if latest.saturating_add(cost) > now => latest,
            _ => {
                self.latest_passed = Some(now);
                return CanPass::Pass { wait_micros: 0 };
            }
        };
        let wait = latest.saturating_add(cost) - now;
        if wait > max_wait {
            return CanPass::Blocked;
        }
        self.latest_passed = Some(latest.saturating_add(cost));
        CanPass::Pass { wait_micros: self.wait_micros(wait) }
    }

    /// How long until `acquire_count` would be admitted (its queueing wait
    /// within the bound), in microseconds; 0 when it would be now.
    pub fn retry_after_micros(&self, acquire_count: u32, now_micros: i64) -> i64 {
        if self.count <= 0.0 {
            return crate::decision::NEVER;
        }
        let (now, cost, max_wait) = self.units(acquire_count, now_micros);
        match self.latest_passed {
            Some(latest) => self.wait_micros((latest.saturating_add(cost) - max_wait - now).max(0)),
            None => 0,
        }
    }

    /// How long until the queue is empty, in microseconds.
    pub fn queue_micros(&self, now_micros: i64) -> i64 {
        let (now, _, _) = self.units(1, now_micros);
        self.latest_passed.map_or(0, |latest| self.wait_micros((latest - now).max(0)))
    }

    /// How many single requests the queue still admits at `now_micros`.
    pub fn room(&self, now_micros: i64) -> u64 {
        if self.count <= 0.0 {
            return 0;
        }
        let (now, cost, max_wait) = self.units(1, now_micros);
        let start = match self.latest_passed {
            Some(latest) if latest.saturating_add(cost) > now => latest,
            // The next one passes at once and restarts the queue from now.
            _ => return 1 + (max_wait / cost.max(1)) as u64,
        };
        let room = (now.saturating_add(max_wait) - start) / cost.max(1);
        room.max(0) as u64
    }
}

/// Sentinel's `WarmUpController`: tokens, driven by the previous second's
/// passes, decide the threshold. A full store (a cold service) admits
/// `count / cold_factor` per second, rising to `count` as the store drains
/// below the warning line.
///
/// Sentinel's token counts are 32-bit and overflow past 2^31 tokens
/// (`warm_up_period_sec × count`); here they are 64-bit. Sentinel's last
/// fill time starts at 0, decades before its clock's now, so its first
/// request fills the store: here a fresh controller fills it on its first
/// request too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmUpController {
    count: f64,
    cold_factor: i64,
    warning_token: i64,
    max_token: i64,
    slope: f64,
    stored_tokens: i64,
    /// The whole second (in milliseconds) tokens were last synced at.
    last_filled_ms: Option<i64>,
}

impl WarmUpController {
    /// A controller warming up to `count` per second over
    /// `warm_up_period_sec`, starting at `count / cold_factor`.
    pub(crate) fn new(count: f64, warm_up_period_sec: u32, cold_factor: u32) -> Self {
        let cold_factor = i64::from(cold_factor.max(2));
        let period = f64::from(warm_up_period_sec);
        let warning_token = (period * count) as i64 / (cold_factor - 1);
        let max_token = warning_token + (2.0 * period * count / (1.0 + cold_factor as f64)) as i64;
        let slope = (cold_factor as f64 - 1.0) / count / (max_token - warning_token) as f64;
        WarmUpController { count, cold_factor, warning_token, max_token, slope, stored_tokens: 0, last_filled_ms: None }
    }

    /// The tokens stored.
    pub fn stored_tokens(&self) -> i64 {
        self.stored_tokens
    }

    /// The warning line: below it the full count is admitted.
    pub fn warning_token(&self) -> i64 {
        self.warning_token
    }

    /// The most tokens stored.
    pub fn max_token(&self) -> i64 {
        self.max_token
    }

    /// The admitted rate with `rest` tokens stored at or above the warning
    /// line (`warningQps`).
    fn warning_qps(&self, rest: i64) -> f64 {
        let above = (rest - self.warning_token) as f64;
        next_up(1.0 / (above * self.slope + 1.0 / self.count))
    }

    /// The rate admitted now: `count` below the warning line, less above.
    pub fn threshold(&self) -> f64 {
        if self.stored_tokens >= self.warning_token {
            self.warning_qps(self.stored_tokens)
        } else {
            self.count
        }
    }

    /// Refills and spends the store once per whole second (`syncToken`).
    pub(crate) fn sync_token(&mut self, pass_qps: i64, now_ms: i64) {
        let current = now_ms - now_ms.rem_euclid(1000);
        if matches!(self.last_filled_ms, Some(last) if current <= last) {
            return;
        }
        let value = self.cool_down_tokens(current, pass_qps);
        self.stored_tokens = value.saturating_sub(pass_qps).max(0);
        self.last_filled_ms = Some(current);
    }

    fn cool_down_tokens(&self, current: i64, pass_qps: i64) -> i64 {
        let old = self.stored_tokens;
        let refill = || {
            if self.count == 0.0 {
                return old;
            }
            let elapsed = self.last_filled_ms.map_or(f64::INFINITY, |last| (current - last) as f64);
            (old as f64 + elapsed * self.count / 1000.0) as i64
        };
        // Tokens are added below the warning line, and above it only while
        // the traffic is below a cold service's rate.
        let adds =
            old < self.warning_token || (old > self.warning_token && pass_qps < self.count as i64 / self.cold_factor);
        let value = if adds { refill() } else { old };
        value.min(self.max_token)
    }

    /// Decides `acquire_count` at `now_micros`.
    pub fn can_pass(&mut self, node: &mut impl FlowNode, acquire_count: u32, now_micros: i64) -> CanPass {
        let now_ms = millis(now_micros);
        let pass_qps = node.pass_qps(now_ms) as i64;
        let previous_qps = node.previous_pass_qps(now_ms) as i64;
        self.sync_token(previous_qps, now_ms);
        let wanted = pass_qps.saturating_add(i64::from(acquire_count)) as f64;
        if wanted <= self.threshold() {
            CanPass::Pass { wait_micros: 0 }
        } else {
            CanPass::Blocked
        }
    }
}

/// Sentinel's `WarmUpRateLimiterController`: the warm-up controller's rate
/// as a throttling controller's spacing (in milliseconds), with a queue of
/// at most `max_queueing_time_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmUpRateLimiterController {
    warm_up: WarmUpController,
    timeout_ms: i64,
    latest_passed_ms: Option<i64>,
}

impl WarmUpRateLimiterController {
    /// A controller warming up to `count` per second over
    /// `warm_up_period_sec` with a queue of `max_queueing_time_ms`.
    pub(crate) fn new(count: f64, warm_up_period_sec: u32, max_queueing_time_ms: u32, cold_factor: u32) -> Self {
        WarmUpRateLimiterController {
            warm_up: WarmUpController::new(count, warm_up_period_sec, cold_factor),
            timeout_ms: i64::from(max_queueing_time_ms),
            latest_passed_ms: None,
        }
    }

    /// The warm-up state.
    pub fn warm_up(&self) -> &WarmUpController {
        &self.warm_up
    }

    /// The spacing of `acquire_count` at the current rate, in milliseconds.
    fn cost_ms(&self, acquire_count: u32) -> i64 {
        java_round(f64::from(acquire_count) / self.warm_up.threshold() * 1000.0)
    }

    /// Decides `acquire_count` at `now_micros`.
    pub fn can_pass(&mut self, node: &mut impl FlowNode, acquire_count: u32, now_micros: i64) -> CanPass {
        let now_ms = millis(now_micros);
        let previous_qps = node.previous_pass_qps(now_ms) as i64;
        self.warm_up.sync_token(previous_qps, now_ms);
        let cost = self.cost_ms(acquire_count);
        let latest = match self.latest_passed_ms {
            Some(latest) if latest.saturating_add(cost) > now_ms => latest,
            _ => {
                self.latest_passed_ms = Some(now_ms);
                return CanPass::Pass { wait_micros: 0 };
            }
        };
        let wait = latest.saturating_add(cost) - now_ms;
        if wait > self.timeout_ms {
            return CanPass::Blocked;
        }
        self.latest_passed_ms = Some(latest.saturating_add(cost));
        CanPass::Pass { wait_micros: wait.max(0) * 1000 }
    }

    /// How long until `acquire_count` would be admitted at the current
    /// rate, in microseconds.
    pub fn retry_after_micros(&self, acquire_count: u32, now_micros: i64) -> i64 {
        let cost = self.cost_ms(acquire_count);
        self.latest_passed_ms.map_or(0, |latest| {
            (latest.saturating_add(cost) - self.timeout_ms - millis(now_micros)).max(0).saturating_mul(1000)
        })
    }

    /// How long until the queue is empty, in microseconds.
    pub fn queue_micros(&self, now_micros: i64) -> i64 {
        self.latest_passed_ms.map_or(0, |latest| (latest - millis(now_micros)).max(0).saturating_mul(1000))
    }

    /// How many single requests the queue still admits at `now_micros`.
    pub fn room(&self, now_micros: i64) -> u64 {
        let now = millis(now_micros);
        let cost = self.cost_ms(1).max(1);
        match self.latest_passed_ms {
            Some(latest) if latest.saturating_add(cost) > now => {
                ((now.saturating_add(self.timeout_ms) - latest) / cost).max(0) as u64
            }
            _ => 1 + (self.timeout_ms / cost) as u64,
        }
    }
}
