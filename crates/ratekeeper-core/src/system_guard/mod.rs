//! [`SystemGuard`]: Sentinel's system rule (`SystemRuleManager.checkSystem`)
//! as a state machine — one guard at the entrance of a whole service,
//! refusing new requests while the service as a whole is overloaded.
//!
//! A [`SystemRule`] sets any of five thresholds, each optional, checked in
//! Sentinel's order; the first one exceeded refuses the request and is
//! named in the answer ([`SystemThreshold`], Sentinel's `limitType`):
//!
//! 1. `qps`: the requests admitted over the last second, plus this one's
//!    count, above the threshold;
//! 2. `max_thread`: more requests in flight than the threshold *before*
//!    this one (so Sentinel admits `max_thread + 1` at once; kept);
//! 3. `avg_rt`: the average round-trip time of the requests completed over
//!    the last second above the threshold;
//! 4. `highest_system_load`: the load average above the threshold *and* the
//!    BBR check fails: more than one request in flight and more than
//!    `max success QPS × min RT / 1000`;
//! 5. `highest_cpu_usage`: the CPU usage above the threshold.
//!
//! The statistics are Sentinel's entry node's: the last second in two
//! buckets of 500 ms (`SAMPLE_COUNT = 2`, `INTERVAL = 1000`), counting
//! admitted requests, completions, their RT sum and their lowest RT (5000 ms
//! when none, Sentinel's `statisticMaxRt`), all in whole milliseconds.
//! Sentinel's own tests are translated in `sentinel_tests.rs`. The
//! differences, deliberate: time is passed in and counted from the guard's
//! creation (buckets are aligned to it, not to the epoch); the load and
//! CPU readings are passed in ([`Load`]); a rule's values are checked when
//! it is made (Sentinel ignores a negative or out-of-range threshold with a
//! log line; here it is an error).

use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::load::Load;

/// Sentinel's bucket length: the second is two buckets of 500 ms.
const BUCKET_MILLIS: i64 = 500;
/// Sentinel's `statisticMaxRt`: the lowest RT of a bucket with none.
const STATISTIC_MAX_RT_MILLIS: u64 = 5_000;

/// The thresholds of a [`SystemGuard`], each optional (`None`: not checked),
/// named as Sentinel's `SystemRule` names them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SystemRule {
    /// Admitted requests per second (Sentinel's `qps`): finite, not
    /// negative.
    pub qps: Option<f64>,
    /// Requests in flight (Sentinel's `maxThread`).
    pub max_thread: Option<u64>,
    /// Average round-trip time in microseconds (Sentinel's `avgRt`, in
    /// milliseconds there: compared as `threshold / 1000` milliseconds).
    pub avg_rt_micros: Option<i64>,
    /// The one-minute load average (Sentinel's `highestSystemLoad`): finite,
    /// not negative; refuses only when the BBR check also fails.
    pub highest_system_load: Option<f64>,
    /// CPU usage, 0.0 to 1.0 (Sentinel's `highestCpuUsage`).
    pub highest_cpu_usage: Option<f64>,
}

impl SystemRule {
    /// Checks every threshold; the first bad one is the error.
    pub fn validate(&self) -> Result<(), Error> {
        if let Some(qps) = self.qps {
            if !(qps.is_finite() && qps >= 0.0) {
                return Err(Error::invalid_float(Argument::Qps, qps));
            }
        }
        if let Some(max_thread) = self.max_thread {
            if max_thread > i64::MAX as u64 {
                return Err(Error::invalid_uint(Argument::MaxThread, max_thread));
            }
        }
        if let Some(avg_rt) = self.avg_rt_micros {
            if avg_rt < 0 {
                return Err(Error::invalid_int(Argument::AvgRt, avg_rt));
            }
        }
        if let Some(load) = self.highest_system_load {
            if !(load.is_finite() && load >= 0.0) {
                return Err(Error::invalid_float(Argument::HighestSystemLoad, load));
            }
        }
        if let Some(cpu) = self.highest_cpu_usage {
            if !(0.0..=1.0).contains(&cpu) {
                return Err(Error::invalid_float(Argument::HighestCpuUsage, cpu));
            }
        }
        Ok(())
    }

    /// Whether any threshold is set (Sentinel's `checkSystemStatus`).
    pub fn is_set(&self) -> bool {
        self.qps.is_some()
            || self.max_thread.is_some()
            || self.avg_rt_micros.is_some()
            || self.highest_system_load.is_some()
            || self.highest_cpu_usage.is_some()
    }

    /// The strictest of two rules, threshold by threshold, as Sentinel's
    /// `loadRules` keeps the lowest of each kind.
    pub fn strictest(self, other: SystemRule) -> SystemRule {
        fn low<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(if b < a { b } else { a }),
                (a, None) => a,
                (None, b) => b,
            }
        }
        SystemRule {
            qps: low(self.qps, other.qps),
            max_thread: low(self.max_thread, other.max_thread),
            avg_rt_micros: low(self.avg_rt_micros, other.avg_rt_micros),
            highest_system_load: low(self.highest_system_load, other.highest_system_load),
            highest_cpu_usage: low(self.highest_cpu_usage, other.highest_cpu_usage),
        }
    }
}

/// Which threshold refused a request: Sentinel's `SystemBlockException`
/// limit types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemThreshold {
    /// Entry QPS.
    Qps,
    /// Requests in flight.
    Thread,
    /// Average RT.
    Rt,
    /// System load (with the BBR check).
    Load,
    /// CPU usage.
    Cpu,
}

impl SystemThreshold {
    /// Every threshold, in the order they are checked.
    pub const ALL: [SystemThreshold; 5] = [
        SystemThreshold::Qps,
        SystemThreshold::Thread,
        SystemThreshold::Rt,
        SystemThreshold::Load,
        SystemThreshold::Cpu,
    ];

    /// Sentinel's name: `"qps"`, `"thread"`, `"rt"`, `"load"` or `"cpu"`.
    pub const fn name(self) -> &'static str {
        match self {
            SystemThreshold::Qps => "qps",
            SystemThreshold::Thread => "thread",
            SystemThreshold::Rt => "rt",
            SystemThreshold::Load => "load",
            SystemThreshold::Cpu => "cpu",
        }
    }

    /// The threshold of that name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A refusal: the decision and the threshold that refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SystemRefusal {
    /// The refused decision.
    pub decision: Decision,
    /// The threshold exceeded.
    pub threshold: SystemThreshold,
}

/// An admitted request's permit: plain data to give back to
/// [`SystemGuard::release`] exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use = "a system permit must be released, or the guard counts it in flight forever"]
pub struct SystemPermit {
    /// When the request was admitted (microseconds since the guard's
    /// creation).
    pub start_micros: i64,
    /// Its count (Sentinel's `acquireCount`).
    pub count: u64,
}

/// The entry statistics a [`SystemGuard`] checks, as Sentinel's entry node
/// reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemStats {
    /// Requests admitted over the last second (`passQps`).
    pub pass_qps: f64,
    /// Requests refused over the last second (`blockQps`).
    pub block_qps: f64,
    /// Requests completed over the last second (`successQps`).
    pub success_qps: f64,
    /// Requests in flight (`curThreadNum`).
    pub in_flight: u64,
    /// Average RT of the last second's completions in milliseconds, 0 when
    /// none (`avgRt`).
    pub avg_rt_millis: f64,
    /// Lowest RT of the last second in milliseconds, 5000 when none, at
    /// least 1 (`minRt`).
    pub min_rt_millis: u64,
    /// The most completions in one bucket, as a rate per second, at least 2
    /// (`maxSuccessQps`).
    pub max_success_qps: f64,
}

/// One 500 ms bucket of the entry statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    /// Which bucket of time (milliseconds / 500) it counts.
    index: i64,
    pass: u64,
    block: u64,
    success: u64,
    rt_sum_millis: u64,
    min_rt_millis: u64,
}

impl Bucket {
    const fn empty(index: i64) -> Self {
        Bucket { index, pass: 0, block: 0, success: 0, rt_sum_millis: 0, min_rt_millis: STATISTIC_MAX_RT_MILLIS }
    }
}

/// Sentinel's system rule as a state machine; see the
/// [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemGuard {
    rule: SystemRule,
    in_flight: u64,
    buckets: [Bucket; 2],
}

impl SystemGuard {
    /// A guard with `rule`, empty statistics and nothing in flight.
    pub fn new(rule: SystemRule) -> Result<Self, Error> {
        rule.validate()?;
        Ok(SystemGuard { rule, in_flight: 0, buckets: [Bucket::empty(0), Bucket::empty(-1)] })
    }

    /// The rule.
    pub fn rule(&self) -> &SystemRule {
        &self.rule
    }

    /// Replaces the rule (Sentinel's `loadRules` at run time); the
    /// statistics stay.
    pub fn set_rule(&mut self, rule: SystemRule) -> Result<(), Error> {
        rule.validate()?;
        self.rule = rule;
        Ok(())
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The bucket index of `now_micros` (whole milliseconds, then 500 ms).
    fn index(now_micros: i64) -> i64 {
        now_micros.div_euclid(1000).div_euclid(BUCKET_MILLIS)
    }

    /// The current bucket, emptied first if it still counts an old one
    /// (Sentinel's `LeapArray.currentWindow`).
    fn current(&mut self, now_micros: i64) -> &mut Bucket {
        let index = Self::index(now_micros);
        let slot = &mut self.buckets[index.rem_euclid(2) as usize];
        if slot.index != index {
            *slot = Bucket::empty(index);
        }
        slot
    }

    /// The buckets of the last second (the current one and the one before).
    fn live(&self, now_micros: i64) -> impl Iterator<Item = &Bucket> {
        let index = Self::index(now_micros);
        self.buckets.iter().filter(move |b| b.index == index || b.index == index - 1)
    }

    /// The entry statistics at `now_micros`.
    pub fn stats(&mut self, now_micros: i64) -> SystemStats {
        self.current(now_micros);
        let (mut pass, mut block, mut success, mut rt_sum) = (0u64, 0u64, 0u64, 0u64);
        let (mut min_rt, mut max_success) = (STATISTIC_MAX_RT_MILLIS, 0u64);
        for b in self.live(now_micros) {
            pass += b.pass;
            block += b.block;
            success += b.success;
            rt_sum += b.rt_sum_millis;
            min_rt = min_rt.min(b.min_rt_millis);
            max_success = max_success.max(b.success);
        }
        SystemStats {
            pass_qps: pass as f64,
            block_qps: block as f64,
            success_qps: success as f64,
            in_flight: self.in_flight,
            avg_rt_millis: if success == 0 { 0.0 } else { rt_sum as f64 / success as f64 },
            min_rt_millis: min_rt.max(1),
            // Sentinel: maxSuccess (at least 1) × sample count / interval in seconds.
            max_success_qps: max_success.max(1) as f64 * 2.0 / 1.0,
        }
    }

    /// Which threshold, if any, refuses `count` more at `now_micros` under
    /// `load` (Sentinel's `checkSystem`).
    pub fn check(&mut self, now_micros: i64, count: u64, load: Load) -> Option<SystemThreshold> {
        let stats = self.stats(now_micros);
        let rule = self.rule;
        if let Some(qps) = rule.qps {
            if stats.pass_qps + count as f64 > qps {
                return Some(SystemThreshold::Qps);
            }
        }
        if let Some(max_thread) = rule.max_thread {
            if stats.in_flight > max_thread {
                return Some(SystemThreshold::Thread);
            }
        }
        if let Some(avg_rt) = rule.avg_rt_micros {
            if stats.avg_rt_millis > avg_rt as f64 / 1000.0 {
                return Some(SystemThreshold::Rt);
            }
        }
        if let Some(highest) = rule.highest_system_load {
            // Sentinel's checkBbr: the load alone refuses nothing while the
            // requests in flight are within what the service completes.
            let bbr_refuses = stats.in_flight > 1
                && stats.in_flight as f64 > stats.max_success_qps * stats.min_rt_millis as f64 / 1000.0;
            if load.load_average > highest && bbr_refuses {
                return Some(SystemThreshold::Load);
            }
        }
        if let Some(highest) = rule.highest_cpu_usage {
            if load.cpu_usage > highest {
                return Some(SystemThreshold::Cpu);
            }
        }
        None
    }

    /// Admits `count` at `now_micros` unless a threshold refuses it; an
    /// admitted request is counted in flight and as passed, a refused one as
    /// blocked (Sentinel's `StatisticSlot`).
    ///
    /// The decision speaks of the `qps` threshold when it is set (`limit`:
    /// its whole part; `remaining`: what the second still admits; a QPS
    /// refusal's `retry_after`: until enough of the second has rolled off)
    /// and is all zeros otherwise: the other thresholds are not quotas, and
    /// room under them frees when requests end, which nothing foresees.
    pub fn try_acquire(
        &mut self,
        now_micros: i64,
        count: u64,
        load: Load,
    ) -> Result<(SystemPermit, Decision), SystemRefusal> {
        let refused = self.check(now_micros, count, load);
        let bucket = self.current(now_micros);
        if let Some(threshold) = refused {
            bucket.block = bucket.block.saturating_add(count);
            let decision = self.decision(now_micros, count, false);
            return Err(SystemRefusal { decision, threshold });
        }
        bucket.pass = bucket.pass.saturating_add(count);
        self.in_flight += 1;
        Ok((SystemPermit { start_micros: now_micros, count }, self.decision(now_micros, count, true)))
    }

    fn decision(&mut self, now_micros: i64, count: u64, allowed: bool) -> Decision {
        let Some(qps) = self.rule.qps else {
            return if allowed { Decision::allowed(0, 0, 0, 0) } else { Decision::refused(0, 0, 0, 0, 0) };
        };
        const SECOND: i64 = 1_000_000;
        let passed = self.stats(now_micros).pass_qps;
        let limit = qps as u64;
        let remaining = (qps - passed).max(0.0) as u64;
        // The older bucket rolls off at the next boundary, the current one
        // 500 ms later.
        let index = Self::index(now_micros);
        let next_boundary =
            index.saturating_add(1).saturating_mul(BUCKET_MILLIS * 1000).saturating_sub(now_micros).max(0);
        let current = self.buckets[index.rem_euclid(2) as usize].pass;
        let reset_after = if passed > 0.0 { next_boundary.saturating_add(BUCKET_MILLIS * 1000) } else { 0 };
        if allowed {
            return Decision::allowed(limit, remaining, reset_after, SECOND);
        }
        let retry_after = if count as f64 > qps {
            NEVER
        } else if current.saturating_add(count) as f64 > qps {
            next_boundary.saturating_add(BUCKET_MILLIS * 1000)
        } else if passed + count as f64 > qps {
            next_boundary
        } else {
            0 // another threshold refused: room frees when requests end
        };
        Decision::refused(limit, remaining, retry_after, reset_after, SECOND)
    }

    /// A request admitted with `permit` ended at `now_micros`: records its
    /// RT (whole milliseconds) and its completion (Sentinel's
    /// `addRtAndSuccess`, then `decreaseThreadNum`).
    pub fn release(&mut self, permit: SystemPermit, now_micros: i64) {
        let rt = now_micros.div_euclid(1000) - permit.start_micros.div_euclid(1000);
        let rt = rt.max(0) as u64;
        let bucket = self.current(now_micros);
        bucket.success = bucket.success.saturating_add(permit.count);
        bucket.rt_sum_millis = bucket.rt_sum_millis.saturating_add(rt);
        bucket.min_rt_millis = bucket.min_rt_millis.min(rt);
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

#[cfg(test)]
mod sentinel_tests;
