//! The limiters a simulation compares: parsed from `--limiter` arguments
//! and run on one shared [`ManualClock`].
//!
//! Every admission-style algorithm of the std layer (through
//! [`LimiterSpec`] → [`AnyLimiter`]), composites of them
//! (`token_bucket:rate=10,burst=10+fixed_window:limit=1000,window=1h`, a
//! [`CompositeLimiter`]), and Guava's [`RateLimiter`], bursty or warming
//! up. The parameter names are the core's (those of [`LimiterSpec`] and of
//! the conformance vectors), durations written `1s`, `250ms`….
//!
//! The load-driven limiters — Kratos' [`Bbr`], Sentinel's system rule
//! ([`SystemGuard`]) and `none`, which admits everything (the baseline) —
//! are not in the core's registry: they judge a service by its load and by
//! how long its requests take, so their lanes run against a simulated
//! server ([`crate::server`]) whose requests end, each releasing its
//! permit at its completion time.
//!
//! Resilience4j's cycle limiter (`cycle`, a [`CycleLimiter`]) and
//! Sentinel's flow rule (`flow`, a [`FlowController`]) are lanes of their
//! own, under their parameters' names (Resilience4j's and Sentinel's, with
//! Sentinel's units where the name carries them). A cycle request that must
//! wait for a later cycle, or a flow request queued by the rate limiter,
//! goes ahead after its wait as a queue's does. A flow lane of the thread
//! grade counts requests in flight, so it runs against the simulated server
//! like `bbr`; a QPS lane ends each request as it goes ahead (its
//! controllers read passes, not completions).
//!
//! Each request of a trace is an independent caller arriving at its time:
//! a policing limiter admits or refuses it then; a shaping one (the leaky
//! bucket as a queue) or Guava's blocking `acquire` admits it with a wait,
//! and it goes ahead at arrival + wait. The clock is moved only by
//! arrivals — a wait is a reservation (`reserve`, `check`'s `wait_micros`),
//! never a sleep — so one caller's wait does not delay the next arrival.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::core::smooth::{DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use std::sync::LazyLock;

use ratekeeper::core::flow::{
    DEFAULT_COLD_FACTOR as FLOW_DEFAULT_COLD_FACTOR, DEFAULT_INTERVAL_MS, DEFAULT_MAX_QUEUEING_TIME_MS,
    DEFAULT_SAMPLE_COUNT, DEFAULT_WARM_UP_PERIOD_SEC,
};
use ratekeeper::Algorithm as Admission;
use ratekeeper::{
    AnyLimiter, Argument, Bbr, BbrConfig, BbrPermit, CompositeLimiter, ControlBehavior, CycleConfig, CycleLimiter,
    FlowController, FlowGrade, FlowPermit, FlowRule, LimiterSpec, Load, ManualClock, ManualLoad, Parameter,
    ParameterKind, ParameterSource, ParameterValue, RateLimiter, SystemGuard, SystemPermit, SystemRule,
    SystemThreshold, NEVER,
};

use crate::spec_syntax::{SpecError, SpecText};

/// The algorithms `--limiter` accepts, with their parameters (for help and
/// errors): the registry's, the window algorithms first (the ones a
/// simulation of the boundary attack compares), then Guava's.
pub static ALGORITHMS: LazyLock<Vec<(&'static str, String)>> = LazyLock::new(|| {
    let is_window = |a: &&Admission| a.parameters().iter().any(|p| p.argument() == Argument::Window);
    let windows = Admission::ALL.iter().filter(is_window);
    let others = Admission::ALL.iter().filter(|a| !is_window(a));
    let mut all: Vec<(&'static str, String)> = windows.chain(others).map(|a| (a.wire_name(), parameters(*a))).collect();
    all.push((
        "guava",
        "rate, max_burst_seconds (default 1) | warmup, cold_factor (default 3); timeout (none: blocking acquire)"
            .to_owned(),
    ));
    all.push((
        "bbr",
        "window (default 10s), buckets (default 100), cpu_threshold (default 0.8), cool_down (default 1s); needs --server"
            .to_owned(),
    ));
    all.push((
        "system_guard",
        "qps, max_thread, avg_rt, highest_system_load, highest_cpu_usage (each optional); needs --server".to_owned(),
    ));
    all.push((
        "cycle",
        "limit_for_period, limit_refresh_period, timeout_duration (default 5s, Resilience4j's)".to_owned(),
    ));
    all.push((
        "flow",
        "count, grade (qps | thread; default qps), control_behavior (default | warm_up | rate_limiter | \
         warm_up_rate_limiter), warm_up_period_sec (default 10), cold_factor (default 3), max_queueing_time_ms \
         (default 500), sample_count (default 2), interval_ms (default 1000), prioritized (default false); \
         grade=thread needs --server"
            .to_owned(),
    ));
    all.push(("none", "admits everything: the baseline against the --server".to_owned()));
    all
});

/// An algorithm's parameters, as the help lists them: `rate (per second),
/// burst`, `sub_windows (default 10)`.
fn parameters(algorithm: Admission) -> String {
    let described: Vec<String> = algorithm
        .parameters()
        .iter()
        .map(|p| match (p.kind(), p.default()) {
            (ParameterKind::Rate, _) => format!("{} (per second)", p.name()),
            (_, Some(default)) => format!("{} (default {default})", p.name()),
            (_, None) => p.name().to_owned(),
        })
        .collect();
    described.join(", ")
}

/// Guava's `RateLimiter`, and how the simulated callers use it.
#[derive(Debug, Clone, PartialEq)]
pub struct GuavaConfig {
    /// Permits per second.
    pub rate: f64,
    /// `SmoothWarmingUp`'s warm-up in microseconds; `None` for
    /// `SmoothBursty`.
    pub warmup_micros: Option<i64>,
    /// `SmoothBursty`'s saved-up seconds.
    pub max_burst_seconds: f64,
    /// `SmoothWarmingUp`'s cold factor.
    pub cold_factor: f64,
    /// `None`: every caller calls `acquire` (admitted, after its wait);
    /// `Some(t)`: `tryAcquire(permits, t)` (admitted if it can be within
    /// `t`, refused otherwise; 0 is `tryAcquire()`).
    pub timeout_micros: Option<i64>,
}

/// Resilience4j's timeout when none is given (`RateLimiterConfig`'s
/// default `timeoutDuration`, 5 s).
pub const DEFAULT_CYCLE_TIMEOUT_MICROS: i64 = 5_000_000;

/// Sentinel's flow rule and the shape of its statistics, as one lane runs
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowConfig {
    /// The rule.
    pub rule: FlowRule,
    /// Buckets per interval (`sampleCount`).
    pub sample_count: u32,
    /// The statistics' interval in milliseconds (`intervalMs`).
    pub interval_ms: u32,
    /// Every request asks as Sentinel's `entryWithPriority`: one the
    /// default QPS controller would refuse may occupy a later window,
    /// waiting for it.
    pub prioritized: bool,
}

impl FlowConfig {
    /// Whether the rule queues requests (the rate limiters).
    fn queues(&self) -> bool {
        matches!(
            self.rule.control_behavior,
            ControlBehavior::RateLimiter { .. } | ControlBehavior::WarmUpRateLimiter { .. }
        )
    }
}

/// Which algorithm one lane runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Algorithm {
    /// One admission-style algorithm.
    Admission(LimiterSpec),
    /// Several, all or nothing.
    Composite(Vec<LimiterSpec>),
    /// Guava's `RateLimiter`.
    Guava(GuavaConfig),
    /// Kratos' BBR, against the simulated server.
    Bbr(BbrConfig),
    /// Sentinel's system rule, against the simulated server.
    SystemGuard(SystemRule),
    /// Resilience4j's cycle limiter.
    Cycle(CycleConfig),
    /// Sentinel's flow rule (against the simulated server for the thread
    /// grade).
    Flow(FlowConfig),
    /// No limiter: every request reaches the simulated server.
    Unlimited,
}

/// One `--limiter`: what to run, and the name its lane is shown under.
#[derive(Debug, Clone, PartialEq)]
pub struct LimiterConfig {
    /// The lane's name in the summary, the decisions and the plot.
    pub label: String,
    /// The argument as given.
    pub text: String,
    /// The algorithm and its parameters.
    pub algorithm: Algorithm,
}

impl LimiterConfig {
    /// Parses one `--limiter` argument; `+` joins several algorithms into a
    /// composite. The label is `label=` if given, else the algorithm's name.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let parts: Vec<&str> = text.split('+').collect();
        let mut label = None;
        let mut specs = Vec::new();
        let mut guava = None;
        // A lane that is not an admission-style limiter: load-driven, cycle, flow.
        let mut own_lane = None;
        for part in &parts {
            let spec = SpecText::parse(part).map_err(|e| SpecError { text: text.to_owned(), message: e.message })?;
            if let Some(l) = spec.raw("label") {
                label = Some(l.to_owned());
            }
            match spec.name.as_str() {
                "guava" | "smooth_bursty" | "smooth_warming_up" => {
                    if parts.len() > 1 {
                        return Err(
                            spec.invalid("guava cannot be part of a composite (it is not an admission-style limiter)")
                        );
                    }
                    guava = Some(parse_guava(&spec)?);
                }
                "bbr" | "system_guard" | "none" | "cycle" | "flow" => {
                    if parts.len() > 1 {
                        let kind = if matches!(spec.name.as_str(), "cycle" | "flow") {
                            "not an admission-style limiter"
                        } else {
                            "a load-driven limiter"
                        };
                        return Err(spec.invalid(format!("{} cannot be part of a composite (it is {kind})", spec.name)));
                    }
                    own_lane = Some(match spec.name.as_str() {
                        "cycle" => parse_cycle(&spec)?,
                        "flow" => parse_flow(&spec)?,
                        _ => parse_load_driven(&spec)?,
                    });
                }
                _ => specs.push(parse_admission(&spec)?),
            }
        }
        let algorithm = match (guava, own_lane, specs.len()) {
            (Some(g), _, _) => Algorithm::Guava(g),
            (None, Some(l), _) => l,
            (None, None, 1) => Algorithm::Admission(specs[0]),
            (None, None, _) => Algorithm::Composite(specs),
        };
        let label = label.unwrap_or_else(|| default_label(&algorithm));
        Ok(LimiterConfig { label, text: text.to_owned(), algorithm })
    }

    /// Whether requests are admitted with waits (shaping or blocking), so
    /// that mean and p99 waits mean something.
    pub fn waits(&self) -> bool {
        match &self.algorithm {
            Algorithm::Admission(spec) => matches!(spec, LimiterSpec::LeakyBucketQueue { .. }),
            Algorithm::Composite(specs) => specs.iter().any(|s| matches!(s, LimiterSpec::LeakyBucketQueue { .. })),
            Algorithm::Guava(g) => g.timeout_micros != Some(0),
            Algorithm::Cycle(c) => c.timeout_micros > 0,
            Algorithm::Flow(f) => f.rule.grade == FlowGrade::Qps && (f.prioritized || f.queues()),
            Algorithm::Bbr(_) | Algorithm::SystemGuard(_) | Algorithm::Unlimited => false,
        }
    }

    /// Whether the lane runs against the simulated server (`bbr`,
    /// `system_guard`, `none`, `flow` of the thread grade): its requests
    /// end, and it is summarised by their latency.
    pub fn load_driven(&self) -> bool {
        match &self.algorithm {
            Algorithm::Bbr(_) | Algorithm::SystemGuard(_) | Algorithm::Unlimited => true,
            Algorithm::Flow(f) => f.rule.grade == FlowGrade::Thread,
            _ => false,
        }
    }

    /// The window of a window algorithm (the first one of a composite): its
    /// `window` parameter; a cycle limiter's cycle, a QPS flow rule's
    /// statistics interval (both aligned to the limiter's creation, as the
    /// windows are).
    pub fn window_micros(&self) -> Option<i64> {
        let window = |s: &LimiterSpec| {
            s.values().find_map(|(p, value)| match value {
                ParameterValue::Micros(micros) if p.argument() == Argument::Window => Some(micros),
                _ => None,
            })
        };
        match &self.algorithm {
            Algorithm::Admission(spec) => window(spec),
            Algorithm::Composite(specs) => specs.iter().find_map(window),
            Algorithm::Cycle(c) => Some(c.limit_refresh_period_micros),
            Algorithm::Flow(f) if f.rule.grade == FlowGrade::Qps => Some(i64::from(f.interval_ms) * 1000),
            Algorithm::Guava(_)
            | Algorithm::Bbr(_)
            | Algorithm::SystemGuard(_)
            | Algorithm::Unlimited
            | Algorithm::Flow(_) => None,
        }
    }

    /// How many units the limiter lets through, sustained, in `window_micros`
    /// (its rate × the window, or its limit scaled to the window): the
    /// reference line of the plot. The smallest part's for a composite.
    pub fn nominal_per(&self, window_micros: i64) -> Option<f64> {
        let w = window_micros as f64;
        let per = |s: &LimiterSpec| -> Option<f64> {
            let rate_per_micro = match *s {
                LimiterSpec::TokenBucket { rate, .. } => rate / 1e6,
                LimiterSpec::Gcra { count_per_period, period_micros, .. }
                | LimiterSpec::LeakyBucketMeter { count_per_period, period_micros, .. } => {
                    count_per_period as f64 / period_micros as f64
                }
                LimiterSpec::LeakyBucketQueue { interval_micros, .. } => 1.0 / interval_micros as f64,
                LimiterSpec::FixedWindow { limit, window_micros }
                | LimiterSpec::SlidingWindow { limit, window_micros, .. }
                | LimiterSpec::SlidingLog { limit, window_micros }
                | LimiterSpec::SlidingWindowCounter { limit, window_micros } => limit as f64 / window_micros as f64,
            };
            Some(rate_per_micro * w).filter(|x| x.is_finite())
        };
        match &self.algorithm {
            Algorithm::Admission(spec) => per(spec),
            Algorithm::Composite(specs) => specs.iter().filter_map(per).reduce(f64::min),
            Algorithm::Guava(g) => Some(g.rate / 1e6 * w).filter(|x| x.is_finite()),
            Algorithm::Cycle(c) => Some(c.limit_for_period as f64 / c.limit_refresh_period_micros as f64 * w),
            Algorithm::Flow(f) if f.rule.grade == FlowGrade::Qps => Some(f.rule.count / 1e6 * w),
            Algorithm::Bbr(_) | Algorithm::SystemGuard(_) | Algorithm::Unlimited | Algorithm::Flow(_) => None,
        }
    }

    /// Builds the limiter on `clock` (created at the clock's time); errors
    /// with the algorithm's own message (`invalid argument limit = 0: …`).
    pub fn build(&self, clock: &Arc<ManualClock>) -> Result<Lane, SpecError> {
        let err = |e: ratekeeper::Error| SpecError { text: self.text.clone(), message: e.to_string() };
        let kind = match &self.algorithm {
            Algorithm::Admission(spec) => {
                LaneKind::Admission(AnyLimiter::with_clock(spec, Arc::clone(clock)).map_err(err)?)
            }
            Algorithm::Composite(specs) => {
                LaneKind::Composite(CompositeLimiter::with_clock(specs, Arc::clone(clock)).map_err(err)?)
            }
            Algorithm::Guava(g) => {
                let mut builder = RateLimiter::builder(g.rate).clock(Arc::clone(clock));
                builder = match g.warmup_micros {
                    Some(w) => builder.warmup(Duration::from_micros(w.unsigned_abs())).cold_factor(g.cold_factor),
                    None => builder.max_burst_seconds(g.max_burst_seconds),
                };
                LaneKind::Guava { limiter: builder.build().map_err(err)?, timeout_micros: g.timeout_micros }
            }
            Algorithm::Bbr(config) => {
                let load = Arc::new(ManualLoad::new());
                let limiter = Bbr::with_clock(*config, load.clone(), Arc::clone(clock)).map_err(err)?;
                // Boxed: a BBR window of up to 128 buckets would make every lane that large.
                LaneKind::Bbr { limiter: Box::new(limiter), load }
            }
            Algorithm::SystemGuard(rule) => {
                let load = Arc::new(ManualLoad::new());
                let limiter = SystemGuard::with_clock(*rule, load.clone(), Arc::clone(clock)).map_err(err)?;
                LaneKind::SystemGuard { limiter: Box::new(limiter), load }
            }
            Algorithm::Cycle(config) => {
                LaneKind::Cycle(CycleLimiter::with_clock(*config, Arc::clone(clock)).map_err(err)?)
            }
            Algorithm::Flow(f) => {
                let flow = FlowController::with_clock(f.rule, f.sample_count, f.interval_ms, Arc::clone(clock));
                // Boxed: Sentinel's statistics are fixed arrays of some kilobytes.
                LaneKind::Flow { flow: Box::new(flow.map_err(err)?), prioritized: f.prioritized }
            }
            Algorithm::Unlimited => LaneKind::Unlimited,
        };
        Ok(Lane { kind })
    }
}

fn default_label(algorithm: &Algorithm) -> String {
    match algorithm {
        Algorithm::Admission(spec) => spec.algorithm().to_owned(),
        Algorithm::Composite(specs) => specs.iter().map(LimiterSpec::algorithm).collect::<Vec<_>>().join("+"),
        Algorithm::Guava(g) => {
            let mode = match g.timeout_micros {
                None => "acquire",
                Some(0) => "tryAcquire",
                Some(_) => "tryAcquire(timeout)",
            };
            let kind = if g.warmup_micros.is_some() { "warming up" } else { "bursty" };
            format!("guava {kind} {mode}")
        }
        Algorithm::Bbr(_) => "bbr".to_owned(),
        Algorithm::SystemGuard(_) => "system_guard".to_owned(),
        Algorithm::Cycle(_) => "cycle".to_owned(),
        Algorithm::Flow(f) => match (f.rule.grade, f.rule.control_behavior) {
            (FlowGrade::Thread, _) => "flow thread".to_owned(),
            (FlowGrade::Qps, ControlBehavior::Default) if f.prioritized => "flow qps prioritized".to_owned(),
            (FlowGrade::Qps, ControlBehavior::Default) => "flow qps".to_owned(),
            (FlowGrade::Qps, ControlBehavior::WarmUp { .. }) => "flow qps warm_up".to_owned(),
            (FlowGrade::Qps, ControlBehavior::RateLimiter { .. }) => "flow qps rate_limiter".to_owned(),
            (FlowGrade::Qps, ControlBehavior::WarmUpRateLimiter { .. }) => "flow qps warm_up_rate_limiter".to_owned(),
        },
        Algorithm::Unlimited => "none".to_owned(),
    }
}

fn parse_admission(spec: &SpecText) -> Result<LimiterSpec, SpecError> {
    let Some(algorithm) = Admission::from_wire_name(&spec.name) else {
        let names: Vec<&str> = ALGORITHMS.iter().map(|(n, _)| *n).collect();
        return Err(spec.invalid(format!("unknown algorithm `{}` (known: {})", spec.name, names.join(", "))));
    };
    let mut known: Vec<&str> = algorithm.parameters().iter().map(Parameter::name).collect();
    known.push("label");
    spec.only_keys(&known)?;
    // An optional parameter's value is checked first (a bad `sub_windows=`
    // is reported before a missing `limit=`), as it always was.
    for optional in algorithm.parameters().iter().filter(|p| p.default().is_some()) {
        spec.count(optional.name())?;
    }
    LimiterSpec::read(algorithm, &mut Keys(spec))
}

/// A `--limiter`'s keys as an algorithm's parameters: each under its bare
/// name (`window`, not `window_micros`), durations with their unit, a
/// parameter with a default optional.
struct Keys<'a>(&'a SpecText);

impl ParameterSource for Keys<'_> {
    type Error = SpecError;

    fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, SpecError> {
        self.0.required_number(parameter.name())
    }

    fn count(&mut self, parameter: &'static Parameter) -> Result<u64, SpecError> {
        match parameter.default() {
            Some(default) => Ok(self.0.count(parameter.name())?.unwrap_or(default)),
            None => self.0.required_count(parameter.name()),
        }
    }

    fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, SpecError> {
        self.0.required_duration(parameter.name())
    }

    fn out_of_range(&mut self, parameter: &'static Parameter, error: ratekeeper::Error) -> SpecError {
        match self.0.count(parameter.name()) {
            Ok(Some(value)) => self.0.invalid(format!("{} = {value} is too large", parameter.name())),
            _ => self.0.invalid(error.to_string()),
        }
    }
}

/// `bbr`, `system_guard` and `none`, under the core's field names
/// (durations without their `_micros`).
fn parse_load_driven(spec: &SpecText) -> Result<Algorithm, SpecError> {
    match spec.name.as_str() {
        "bbr" => {
            spec.only_keys(&["window", "buckets", "cpu_threshold", "cool_down", "label"])?;
            let default = BbrConfig::default();
            let buckets = match spec.count("buckets")? {
                Some(b) => u32::try_from(b).map_err(|_| spec.invalid(format!("buckets = {b} is too large")))?,
                None => default.buckets,
            };
            Ok(Algorithm::Bbr(BbrConfig {
                window_micros: spec.duration("window")?.unwrap_or(default.window_micros),
                buckets,
                cpu_threshold: spec.number("cpu_threshold")?.unwrap_or(default.cpu_threshold),
                cool_down_micros: spec.duration("cool_down")?.unwrap_or(default.cool_down_micros),
            }))
        }
        "system_guard" => {
            spec.only_keys(&["qps", "max_thread", "avg_rt", "highest_system_load", "highest_cpu_usage", "label"])?;
            Ok(Algorithm::SystemGuard(SystemRule {
                qps: spec.number("qps")?,
                max_thread: spec.count("max_thread")?,
                avg_rt_micros: spec.duration("avg_rt")?,
                highest_system_load: spec.number("highest_system_load")?,
                highest_cpu_usage: spec.number("highest_cpu_usage")?,
            }))
        }
        _ => {
            spec.only_keys(&["label"])?;
            Ok(Algorithm::Unlimited)
        }
    }
}

/// `cycle`: Resilience4j's `RateLimiterConfig` under its own names
/// (durations without their `Duration`).
fn parse_cycle(spec: &SpecText) -> Result<Algorithm, SpecError> {
    spec.only_keys(&["limit_for_period", "limit_refresh_period", "timeout_duration", "label"])?;
    let timeout_micros = spec.duration("timeout_duration")?.unwrap_or(DEFAULT_CYCLE_TIMEOUT_MICROS);
    Ok(Algorithm::Cycle(CycleConfig {
        limit_for_period: spec.required_count("limit_for_period")?,
        limit_refresh_period_micros: spec.required_duration("limit_refresh_period")?,
        timeout_micros,
    }))
}

/// `flow`: Sentinel's `FlowRule` under its field names (snake_case) and
/// units, with Sentinel's defaults; a parameter the rule would not read
/// (`cold_factor` without a warm-up, a behaviour for the thread grade) is
/// an error rather than silently ignored.
fn parse_flow(spec: &SpecText) -> Result<Algorithm, SpecError> {
    const WARM_UP: &[&str] = &["warm_up", "warm_up_rate_limiter"];
    const QUEUEING: &[&str] = &["rate_limiter", "warm_up_rate_limiter"];
    spec.only_keys(&[
        "count",
        "grade",
        "control_behavior",
        "warm_up_period_sec",
        "cold_factor",
        "max_queueing_time_ms",
        "sample_count",
        "interval_ms",
        "prioritized",
        "label",
    ])?;
    let grade = match spec.raw("grade") {
        None | Some("qps") => FlowGrade::Qps,
        Some("thread") => FlowGrade::Thread,
        Some(other) => return Err(spec.invalid(format!("grade = `{other}` is not qps or thread"))),
    };
    let behavior = spec.raw("control_behavior").unwrap_or("default");
    if !["default", "warm_up", "rate_limiter", "warm_up_rate_limiter"].contains(&behavior) {
        return Err(spec.invalid(format!(
            "control_behavior = `{behavior}` is not default, warm_up, rate_limiter or warm_up_rate_limiter"
        )));
    }
    if grade == FlowGrade::Thread && behavior != "default" {
        return Err(spec.invalid("control_behavior is for grade=qps: the thread grade always refuses at once"));
    }
    for (key, applies) in
        [("warm_up_period_sec", WARM_UP), ("cold_factor", WARM_UP), ("max_queueing_time_ms", QUEUEING)]
    {
        if spec.raw(key).is_some() && !applies.contains(&behavior) {
            return Err(spec.invalid(format!("{key} is for control_behavior={}", applies.join(" or "))));
        }
    }
    let small = |key: &str, default: u32| -> Result<u32, SpecError> {
        match spec.count(key)? {
            None => Ok(default),
            Some(n) => u32::try_from(n).map_err(|_| spec.invalid(format!("{key} = {n} is too large"))),
        }
    };
    let warm_up_period_sec = small("warm_up_period_sec", DEFAULT_WARM_UP_PERIOD_SEC)?;
    let cold_factor = small("cold_factor", FLOW_DEFAULT_COLD_FACTOR)?;
    let max_queueing_time_ms = small("max_queueing_time_ms", DEFAULT_MAX_QUEUEING_TIME_MS)?;
    let control_behavior = match behavior {
        "warm_up" => ControlBehavior::WarmUp { warm_up_period_sec, cold_factor },
        "rate_limiter" => ControlBehavior::RateLimiter { max_queueing_time_ms },
        "warm_up_rate_limiter" => {
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms }
        }
        _ => ControlBehavior::Default,
    };
    let count = spec.required_number("count")?;
    let prioritized = match spec.raw("prioritized") {
        None | Some("false") => false,
        Some("true") if grade == FlowGrade::Qps && behavior == "default" => true,
        Some("true") => {
            return Err(spec.invalid("prioritized is for grade=qps with control_behavior=default (it occupies windows)"))
        }
        Some(other) => return Err(spec.invalid(format!("prioritized = `{other}` is not true or false"))),
    };
    let sample_count = small("sample_count", DEFAULT_SAMPLE_COUNT)?;
    let interval_ms = small("interval_ms", DEFAULT_INTERVAL_MS)?;
    let rule = FlowRule { grade, count, control_behavior };
    Ok(Algorithm::Flow(FlowConfig { rule, sample_count, interval_ms, prioritized }))
}

fn parse_guava(spec: &SpecText) -> Result<GuavaConfig, SpecError> {
    spec.only_keys(&["rate", "max_burst_seconds", "warmup", "cold_factor", "timeout", "label"])?;
    let warmup_micros = spec.duration("warmup")?;
    match (spec.name.as_str(), warmup_micros) {
        ("smooth_warming_up", None) => return Err(spec.invalid("smooth_warming_up needs `warmup=`")),
        ("smooth_bursty", Some(_)) => return Err(spec.invalid("smooth_bursty has no warm-up: use smooth_warming_up")),
        _ => {}
    }
    if warmup_micros.is_some() && spec.raw("max_burst_seconds").is_some() {
        return Err(spec.invalid("max_burst_seconds is for a bursty limiter, warmup for a warming-up one: give one"));
    }
    if warmup_micros.is_none() && spec.raw("cold_factor").is_some() {
        return Err(spec.invalid("cold_factor needs warmup="));
    }
    Ok(GuavaConfig {
        rate: spec.required_number("rate")?,
        warmup_micros,
        max_burst_seconds: spec.number("max_burst_seconds")?.unwrap_or(DEFAULT_MAX_BURST_SECONDS),
        cold_factor: spec.number("cold_factor")?.unwrap_or(DEFAULT_COLD_FACTOR),
        timeout_micros: spec.duration("timeout")?,
    })
}

/// What one limiter decided about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Admitted (and its cost consumed).
    pub allowed: bool,
    /// For an admitted request, how long after its arrival it goes ahead.
    pub wait_micros: i64,
    /// Units left after the decision (`None` for Guava, which has no such
    /// count).
    pub remaining: Option<u64>,
    /// For a refused request, how long until it would be admitted
    /// ([`NEVER`] when never).
    pub retry_after_micros: Option<i64>,
}

/// A limiter built for a simulation.
#[derive(Debug)]
pub struct Lane {
    kind: LaneKind,
}

#[derive(Debug)]
enum LaneKind {
    Admission(AnyLimiter<Arc<ManualClock>>),
    Composite(CompositeLimiter<Arc<ManualClock>>),
    Guava { limiter: RateLimiter<Arc<ManualClock>>, timeout_micros: Option<i64> },
    Bbr { limiter: Box<Bbr<Arc<ManualClock>>>, load: Arc<ManualLoad> },
    SystemGuard { limiter: Box<SystemGuard<Arc<ManualClock>>>, load: Arc<ManualLoad> },
    Cycle(CycleLimiter<Arc<ManualClock>>),
    Flow { flow: Box<FlowController<Arc<ManualClock>>>, prioritized: bool },
    Unlimited,
}

/// What a load-driven lane holds for an admitted request until it ends.
#[derive(Debug)]
pub enum Held {
    /// BBR's permit.
    Bbr(BbrPermit),
    /// The system rule's permit.
    System(SystemPermit),
    /// The flow rule's permit (thread grade).
    Flow(FlowPermit),
    /// Nothing (the `none` lane).
    Nothing,
}

/// A load-driven lane's decision: the outcome, the permit of an admitted
/// request, and for the system rule the threshold that refused.
#[derive(Debug)]
pub struct LoadOutcome {
    /// The decision, as for every lane.
    pub outcome: Outcome,
    /// What to release when an admitted request ends.
    pub held: Option<Held>,
    /// The system rule's refusing threshold.
    pub threshold: Option<SystemThreshold>,
}

impl Lane {
    /// Decides about a request of `cost` arriving now (the clock's time).
    /// Errors only for Guava, whose permits are 1 to 2^31 − 1, and for a
    /// flow rule, whose acquire count is at most 2^31 − 1.
    pub fn decide(&self, cost: u64) -> Result<Outcome, ratekeeper::Error> {
        let from_decision = |d: ratekeeper::Decision| Outcome {
            allowed: d.allowed,
            wait_micros: if d.allowed { d.wait_micros } else { 0 },
            remaining: Some(d.remaining),
            retry_after_micros: (!d.allowed).then_some(d.retry_after_micros),
        };
        match &self.kind {
            LaneKind::Admission(l) => Ok(from_decision(l.check(cost))),
            LaneKind::Composite(l) => Ok(from_decision(l.check(cost))),
            LaneKind::Cycle(l) => Ok(from_decision(l.check(cost))),
            LaneKind::Bbr { .. } | LaneKind::SystemGuard { .. } | LaneKind::Flow { .. } | LaneKind::Unlimited => {
                let load = Load { cpu_usage: 0.0, load_average: 0.0 };
                let decided = self.acquire(cost, load)?;
                if let Some(held) = decided.held {
                    self.release(held);
                }
                Ok(decided.outcome)
            }
            LaneKind::Guava { limiter, timeout_micros } => {
                let permits = ratekeeper::core::smooth::permits_from_i64(i64::try_from(cost).unwrap_or(i64::MAX))?;
                let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(NEVER);
                let reserved = match timeout_micros {
                    None => Some(limiter.reserve(permits)?),
                    Some(t) => limiter.try_reserve(permits, Duration::from_micros(t.unsigned_abs()))?,
                };
                Ok(match reserved {
                    Some(wait) => {
                        Outcome { allowed: true, wait_micros: micros(wait), remaining: None, retry_after_micros: None }
                    }
                    None => {
                        let until = micros(limiter.time_until_available(permits)?);
                        Outcome { allowed: false, wait_micros: 0, remaining: None, retry_after_micros: Some(until) }
                    }
                })
            }
        }
    }
}

impl Lane {
    /// A load-driven lane's decision about a request of `cost` arriving
    /// now, the service reading `load` (other lanes: as [`decide`](Self::decide),
    /// holding nothing). The CPU reading is clamped to 0..=1.
    pub fn acquire(&self, cost: u64, load: Load) -> Result<LoadOutcome, ratekeeper::Error> {
        let from_decision = |d: ratekeeper::Decision| Outcome {
            allowed: d.allowed,
            wait_micros: 0,
            remaining: Some(d.remaining),
            retry_after_micros: (!d.allowed).then_some(d.retry_after_micros),
        };
        let set = |signal: &ManualLoad| -> Result<(), ratekeeper::Error> {
            signal.set_cpu_usage(load.cpu_usage.clamp(0.0, 1.0))?;
            signal.set_load_average(load.load_average.max(0.0))
        };
        match &self.kind {
            LaneKind::Bbr { limiter, load: signal } => {
                set(signal)?;
                let (decision, permit) = limiter.try_acquire();
                Ok(LoadOutcome { outcome: from_decision(decision), held: permit.map(Held::Bbr), threshold: None })
            }
            LaneKind::SystemGuard { limiter, load: signal } => {
                set(signal)?;
                let (decision, result) = limiter.try_acquire(cost);
                let (held, threshold) = match result {
                    Ok(permit) => (Some(Held::System(permit)), None),
                    Err(threshold) => (None, Some(threshold)),
                };
                Ok(LoadOutcome { outcome: from_decision(decision), held, threshold })
            }
            LaneKind::Flow { flow, prioritized } => {
                let count =
                    u32::try_from(cost).map_err(|_| ratekeeper::Error::invalid_uint(Argument::AcquireCount, cost))?;
                let (decision, permit) = flow.check(count, *prioritized)?;
                let outcome = Outcome {
                    allowed: decision.allowed,
                    wait_micros: if decision.allowed { decision.wait_micros } else { 0 },
                    remaining: Some(decision.remaining),
                    retry_after_micros: (!decision.allowed).then_some(decision.retry_after_micros),
                };
                Ok(LoadOutcome { outcome, held: permit.map(Held::Flow), threshold: None })
            }
            LaneKind::Unlimited => Ok(LoadOutcome {
                outcome: Outcome { allowed: true, wait_micros: 0, remaining: None, retry_after_micros: None },
                held: Some(Held::Nothing),
                threshold: None,
            }),
            _ => {
                let outcome = self.decide(cost)?;
                Ok(LoadOutcome { held: outcome.allowed.then_some(Held::Nothing), outcome, threshold: None })
            }
        }
    }

    /// An admitted request ended now: gives its permit back (BBR records
    /// its round trip, the system rule its RT and completion).
    pub fn release(&self, held: Held) {
        match (&self.kind, held) {
            (LaneKind::Bbr { limiter, .. }, Held::Bbr(permit)) => limiter.release(permit),
            (LaneKind::SystemGuard { limiter, .. }, Held::System(permit)) => limiter.release(permit),
            (LaneKind::Flow { flow, .. }, Held::Flow(permit)) => flow.release(permit),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_parses_and_builds() {
        let clock = Arc::new(ManualClock::new());
        for text in [
            "fixed_window:limit=100,window=1s",
            "sliding_window:limit=100,window=1s,sub_windows=4",
            "sliding_window:limit=100,window=1s",
            "sliding_log:limit=100,window=1s",
            "sliding_window_counter:limit=100,window=1s",
            "token_bucket:rate=100,burst=100",
            "gcra:max_burst=99,count_per_period=100,period=1s",
            "leaky_bucket_meter:capacity=100,count_per_period=100,period=1s",
            "leaky_bucket_queue:capacity=100,interval=10ms",
            "leaky_bucket_queue:capacity=100,interval=10ms,slack=10",
            "guava:rate=100",
            "guava:rate=100,max_burst_seconds=2,timeout=0",
            "guava:rate=100,warmup=2s,cold_factor=4,timeout=50ms",
            "smooth_warming_up:rate=100,warmup=2s",
            "token_bucket:rate=10,burst=10+fixed_window:limit=1000,window=1h",
            "bbr",
            "bbr:window=1s,buckets=10,cpu_threshold=0.9,cool_down=500ms",
            "system_guard:qps=10,max_thread=4,avg_rt=50ms,highest_system_load=8,highest_cpu_usage=0.9",
            "system_guard",
            "none",
            "cycle:limit_for_period=10,limit_refresh_period=1s",
            "cycle:limit_for_period=10,limit_refresh_period=500ms,timeout_duration=0",
            "flow:count=10",
            "flow:count=2.5,grade=qps,control_behavior=default,sample_count=10,interval_ms=500",
            "flow:count=10,control_behavior=warm_up,warm_up_period_sec=5,cold_factor=4",
            "flow:count=10,control_behavior=rate_limiter,max_queueing_time_ms=100",
            "flow:count=10,control_behavior=warm_up_rate_limiter,warm_up_period_sec=1,cold_factor=2,max_queueing_time_ms=1",
            "flow:count=1,grade=thread",
            "flow:count=1,prioritized=true",
        ] {
            let config = LimiterConfig::parse(text).unwrap_or_else(|e| panic!("{e}"));
            let lane = config.build(&clock).unwrap_or_else(|e| panic!("{e}"));
            assert!(lane.decide(1).unwrap().allowed, "{text}");
        }
    }

    /// Every algorithm of the registry is a `--limiter`, under its wire
    /// name with its parameters' names, and is listed in the help.
    #[test]
    fn every_registered_algorithm_is_a_limiter() {
        let clock = Arc::new(ManualClock::new());
        for algorithm in Admission::ALL {
            let params: Vec<String> = algorithm
                .parameters()
                .iter()
                .map(|p| match p.kind() {
                    ParameterKind::Duration => format!("{}=1s", p.name()),
                    ParameterKind::Rate | ParameterKind::Count => format!("{}=1", p.name()),
                })
                .collect();
            let text = format!("{algorithm}:{}", params.join(","));
            let config = LimiterConfig::parse(&text).unwrap_or_else(|e| panic!("{e}"));
            assert!(matches!(config.algorithm, Algorithm::Admission(spec) if spec.kind() == *algorithm), "{text}");
            assert!(config.build(&clock).unwrap_or_else(|e| panic!("{e}")).decide(1).unwrap().allowed, "{text}");
            assert!(ALGORITHMS.iter().any(|(name, _)| name == &algorithm.wire_name()), "{algorithm} in the help");
        }
        assert_eq!(ALGORITHMS.len(), Admission::ALL.len() + 6, "and guava, bbr, system_guard, cycle, flow, none");
    }

    #[test]
    fn labels() {
        assert_eq!(LimiterConfig::parse("fixed_window:limit=1,window=1s").unwrap().label, "fixed_window");
        assert_eq!(LimiterConfig::parse("fixed_window:limit=1,window=1s,label=fw").unwrap().label, "fw");
        assert_eq!(LimiterConfig::parse("guava:rate=1").unwrap().label, "guava bursty acquire");
        assert_eq!(
            LimiterConfig::parse("guava:rate=1,warmup=1s,timeout=0").unwrap().label,
            "guava warming up tryAcquire"
        );
        assert_eq!(
            LimiterConfig::parse("token_bucket:rate=1,burst=1+sliding_log:limit=1,window=1s").unwrap().label,
            "token_bucket+sliding_log"
        );
        let label = |t: &str| LimiterConfig::parse(t).unwrap().label;
        assert_eq!(label("cycle:limit_for_period=1,limit_refresh_period=1s"), "cycle");
        assert_eq!(label("flow:count=1"), "flow qps");
        assert_eq!(label("flow:count=1,grade=thread"), "flow thread");
        assert_eq!(label("flow:count=1,control_behavior=warm_up"), "flow qps warm_up");
        assert_eq!(label("flow:count=1,prioritized=true"), "flow qps prioritized");
        assert_eq!(label("flow:count=1,prioritized=false"), "flow qps");
        assert_eq!(label("flow:count=1,control_behavior=rate_limiter"), "flow qps rate_limiter");
        assert_eq!(label("flow:count=1,control_behavior=warm_up_rate_limiter"), "flow qps warm_up_rate_limiter");
    }

    /// `cycle` takes Resilience4j's names, its timeout defaulting to
    /// Resilience4j's 5 s; `flow` Sentinel's, with Sentinel's defaults.
    #[test]
    fn cycle_and_flow_parameters_and_defaults() {
        let parsed = |t: &str| LimiterConfig::parse(t).unwrap().algorithm;
        assert_eq!(
            parsed("cycle:limit_for_period=50,limit_refresh_period=500ms"),
            Algorithm::Cycle(CycleConfig {
                limit_for_period: 50,
                limit_refresh_period_micros: 500_000,
                timeout_micros: 5_000_000
            })
        );
        assert_eq!(
            parsed("cycle:limit_for_period=1,limit_refresh_period=1s,timeout_duration=250ms"),
            Algorithm::Cycle(CycleConfig {
                limit_for_period: 1,
                limit_refresh_period_micros: 1_000_000,
                timeout_micros: 250_000
            })
        );
        assert_eq!(
            parsed("flow:count=20"),
            Algorithm::Flow(FlowConfig {
                rule: FlowRule::qps(20.0),
                sample_count: 2,
                interval_ms: 1000,
                prioritized: false
            })
        );
        assert_eq!(
            parsed("flow:count=4,grade=thread,sample_count=4,interval_ms=2000"),
            Algorithm::Flow(FlowConfig {
                rule: FlowRule::thread(4.0),
                sample_count: 4,
                interval_ms: 2000,
                prioritized: false
            })
        );
        let behavior = |t: &str| match parsed(t) {
            Algorithm::Flow(f) => f.rule.control_behavior,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            behavior("flow:count=1,control_behavior=warm_up"),
            ControlBehavior::WarmUp { warm_up_period_sec: 10, cold_factor: 3 }
        );
        assert_eq!(
            behavior("flow:count=1,control_behavior=rate_limiter"),
            ControlBehavior::RateLimiter { max_queueing_time_ms: 500 }
        );
        assert_eq!(
            behavior("flow:count=1,control_behavior=warm_up_rate_limiter,warm_up_period_sec=2,cold_factor=5,max_queueing_time_ms=20"),
            ControlBehavior::WarmUpRateLimiter { warm_up_period_sec: 2, cold_factor: 5, max_queueing_time_ms: 20 }
        );
        let cycle = LimiterConfig::parse("cycle:limit_for_period=50,limit_refresh_period=500ms").unwrap();
        assert!(cycle.waits() && !cycle.load_driven());
        assert!(!LimiterConfig::parse("cycle:limit_for_period=5,limit_refresh_period=1s,timeout_duration=0")
            .unwrap()
            .waits());
        let thread = LimiterConfig::parse("flow:count=4,grade=thread").unwrap();
        assert!(thread.load_driven() && !thread.waits());
        assert!(!LimiterConfig::parse("flow:count=4").unwrap().load_driven());
        assert!(LimiterConfig::parse("flow:count=4,control_behavior=rate_limiter").unwrap().waits());
        assert!(!LimiterConfig::parse("flow:count=4,control_behavior=warm_up").unwrap().waits());
        assert!(LimiterConfig::parse("flow:count=4,prioritized=true").unwrap().waits(), "it occupies, waiting");
    }

    #[test]
    fn cycle_and_flow_errors_name_the_parameter() {
        let msg = |t: &str| LimiterConfig::parse(t).unwrap_err().to_string();
        assert!(msg("cycle:limit_refresh_period=1s").contains("cycle needs `limit_for_period=`"));
        assert!(msg("cycle:limit_for_period=1").contains("cycle needs `limit_refresh_period=`"));
        assert!(
            msg("cycle:limit_for_period=1,limit_refresh_period=1s,timeout=1s").contains("unknown parameter `timeout`")
        );
        assert!(msg("cycle:limit_for_period=x,limit_refresh_period=1s").contains("limit_for_period = `x`"));
        assert!(
            msg("cycle:limit_for_period=1,limit_refresh_period=1s,timeout_duration=soon").contains("timeout_duration")
        );
        assert!(msg("cycle:limit_for_period=1,limit_refresh_period=1s+fixed_window:limit=1,window=1s")
            .contains("cycle cannot be part of a composite"));
        assert!(msg("flow:grade=qps").contains("flow needs `count=`"));
        assert!(msg("flow:count=1,grade=rt").contains("grade = `rt` is not qps or thread"));
        assert!(msg("flow:count=1,control_behavior=warmup").contains("control_behavior = `warmup`"));
        assert!(msg("flow:count=1,grade=thread,control_behavior=rate_limiter")
            .contains("control_behavior is for grade=qps"));
        assert!(msg("flow:count=1,cold_factor=4").contains("cold_factor is for control_behavior=warm_up"));
        assert!(msg("flow:count=1,control_behavior=warm_up,max_queueing_time_ms=4")
            .contains("max_queueing_time_ms is for control_behavior=rate_limiter"));
        assert!(msg("flow:count=1,prioritized=yes").contains("prioritized = `yes` is not true or false"));
        assert!(msg("flow:count=1,grade=thread,prioritized=true").contains("prioritized is for grade=qps"));
        assert!(msg("flow:count=1,control_behavior=warm_up,prioritized=true").contains("prioritized is for grade=qps"));
        assert!(msg("flow:count=1,sample_count=99999999999").contains("sample_count = 99999999999 is too large"));
        assert!(msg("flow:count=1,limit=3").contains("unknown parameter `limit`"));
        assert!(msg("flow:count=1+token_bucket:rate=1,burst=1").contains("flow cannot be part of a composite"));
        let clock = Arc::new(ManualClock::new());
        let invalid = |t: &str| LimiterConfig::parse(t).unwrap().build(&clock).unwrap_err().to_string();
        assert!(invalid("cycle:limit_for_period=0,limit_refresh_period=1s").contains("limit_for_period"));
        // The core refuses a warm-up whose tokens overflow Sentinel's `int`.
        assert!(invalid("flow:count=1e300,control_behavior=warm_up").contains("2147483647 / warm_up_period_sec"));
        assert!(invalid("flow:count=1e18,control_behavior=warm_up_rate_limiter,warm_up_period_sec=5")
            .contains("2147483647 / warm_up_period_sec"));
        assert!(
            LimiterConfig::parse("flow:count=1e300").unwrap().build(&clock).is_ok(),
            "only the warm-up stores tokens"
        );
        assert!(invalid("cycle:limit_for_period=1,limit_refresh_period=0s").contains("limit_refresh_period"));
        assert!(invalid("flow:count=-1").contains("count"));
        assert!(invalid("flow:count=10,control_behavior=warm_up,cold_factor=1").contains("cold_factor"));
        assert!(invalid("flow:count=10,control_behavior=warm_up,warm_up_period_sec=0").contains("warm_up_period_sec"));
        assert!(invalid("flow:count=10,control_behavior=rate_limiter,max_queueing_time_ms=0")
            .contains("max_queueing_time_ms"));
        assert!(invalid("flow:count=10,sample_count=3,interval_ms=1000").contains("interval_ms"));
        assert!(invalid("flow:count=10,sample_count=0").contains("sample_count"));
    }

    /// A cycle request served by a later cycle, and a flow request queued
    /// by the rate limiter, are admitted with their wait; a flow request
    /// above `i32::MAX` is the core's error, not a panic.
    #[test]
    fn cycle_and_flow_waits() {
        let clock = Arc::new(ManualClock::new());
        let build = |t: &str| LimiterConfig::parse(t).unwrap().build(&clock).unwrap();
        let cycle = build("cycle:limit_for_period=2,limit_refresh_period=100ms,timeout_duration=150ms");
        let waits: Vec<(bool, i64)> =
            (0..5).map(|_| cycle.decide(1).unwrap()).map(|o| (o.allowed, o.wait_micros)).collect();
        assert_eq!(waits, [(true, 0), (true, 0), (true, 100_000), (true, 100_000), (false, 0)]);
        // Sentinel's example: 10 per second queued, five permits then one wait 0 and 100 ms.
        let flow = build("flow:count=10,control_behavior=rate_limiter");
        assert_eq!(flow.decide(5).unwrap().wait_micros, 0);
        assert_eq!(flow.decide(1).unwrap().wait_micros, 100_000);
        assert!(flow.decide(u64::from(u32::MAX) + 1).unwrap_err().to_string().contains("acquire_count"));
        assert!(flow.decide(u64::from(u32::MAX)).unwrap_err().to_string().contains("acquire_count"));
        // A prioritized request beyond the count occupies the next bucket
        // (500 ms of the default two), waiting for it.
        // The two passes at 0 leave the interval at 1 s: at 0 that is too
        // far (Sentinel's occupy timeout is 500 ms), at 600 ms 400 ms away.
        let prioritized = build("flow:count=2,prioritized=true");
        let decide = || prioritized.decide(1).map(|o| (o.allowed, o.wait_micros)).unwrap();
        assert_eq!([decide(), decide(), decide()], [(true, 0), (true, 0), (false, 0)]);
        clock.advance_micros(600_000);
        assert_eq!(decide(), (true, 400_000));
        // The thread grade counts in flight: a permit held refuses the next.
        let thread = build("flow:count=1,grade=thread");
        let load = Load { cpu_usage: 0.0, load_average: 0.0 };
        let first = thread.acquire(1, load).unwrap();
        assert!(first.outcome.allowed);
        assert!(!thread.acquire(1, load).unwrap().outcome.allowed);
        thread.release(first.held.unwrap());
        assert!(thread.acquire(1, load).unwrap().outcome.allowed);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let msg = |t: &str| LimiterConfig::parse(t).unwrap_err().to_string();
        assert!(msg("fixed:limit=1").contains("unknown algorithm `fixed`"));
        assert!(msg("fixed_window:limit=1").contains("fixed_window needs `window=`"));
        assert!(msg("fixed_window:limit=1,window=1s,burst=3").contains("unknown parameter `burst`"));
        assert!(msg("guava:rate=1+fixed_window:limit=1,window=1s").contains("cannot be part of a composite"));
        assert!(msg("guava:rate=1,warmup=1s,max_burst_seconds=2").contains("give one"));
        assert!(msg("guava:rate=1,cold_factor=2").contains("cold_factor needs warmup"));
        assert!(msg("smooth_warming_up:rate=1").contains("needs `warmup=`"));
        assert!(msg("bbr+fixed_window:limit=1,window=1s").contains("load-driven"));
        assert!(msg("bbr:cpu=0.5").contains("unknown parameter `cpu`"));
        assert!(msg("bbr:buckets=99999999999").contains("too large"));
        assert!(msg("system_guard:avg_rt=x").contains("avg_rt"));
        assert!(msg("none:x=1").contains("unknown parameter `x`"));
        let clock = Arc::new(ManualClock::new());
        let invalid = LimiterConfig::parse("fixed_window:limit=0,window=1s").unwrap().build(&clock).unwrap_err();
        assert!(invalid.to_string().contains("limit"), "{invalid}");
        let invalid = LimiterConfig::parse("bbr:cpu_threshold=2").unwrap().build(&clock).unwrap_err();
        assert!(invalid.to_string().contains("cpu_threshold"), "{invalid}");
        let invalid = LimiterConfig::parse("system_guard:highest_cpu_usage=-1").unwrap().build(&clock).unwrap_err();
        assert!(invalid.to_string().contains("highest_cpu_usage"), "{invalid}");
        let invalid = LimiterConfig::parse("guava:rate=0").unwrap().build(&clock).unwrap_err();
        assert!(invalid.to_string().contains("permits_per_second"), "{invalid}");
    }

    #[test]
    fn guava_modes() {
        let clock = Arc::new(ManualClock::new());
        let blocking = LimiterConfig::parse("guava:rate=1").unwrap();
        assert!(blocking.waits());
        let lane = blocking.build(&clock).unwrap();
        assert_eq!(lane.decide(1).unwrap().wait_micros, 0);
        assert_eq!(lane.decide(1).unwrap().wait_micros, 1_000_000);
        let trying = LimiterConfig::parse("guava:rate=1,timeout=0").unwrap();
        assert!(!trying.waits());
        let lane = trying.build(&clock).unwrap();
        assert!(lane.decide(1).unwrap().allowed);
        let refused = lane.decide(1).unwrap();
        assert_eq!((refused.allowed, refused.retry_after_micros), (false, Some(1_000_000)));
        assert!(lane.decide(0).is_err(), "Guava's permits start at 1");
    }

    #[test]
    fn nominal_rates() {
        let w = 1_000_000;
        let n = |t: &str| LimiterConfig::parse(t).unwrap().nominal_per(w);
        assert_eq!(n("fixed_window:limit=100,window=2s"), Some(50.0));
        assert_eq!(n("token_bucket:rate=100,burst=1"), Some(100.0));
        assert_eq!(n("token_bucket:rate=inf,burst=1"), None);
        assert_eq!(n("leaky_bucket_queue:capacity=1,interval=10ms"), Some(100.0));
        assert_eq!(n("guava:rate=5"), Some(5.0));
        assert_eq!(n("token_bucket:rate=10,burst=1+fixed_window:limit=5,window=1s"), Some(5.0));
        assert_eq!(n("cycle:limit_for_period=50,limit_refresh_period=500ms"), Some(100.0));
        assert_eq!(n("flow:count=20,control_behavior=rate_limiter"), Some(20.0));
        assert_eq!(n("flow:count=20,grade=thread"), None);
        let window = |t: &str| LimiterConfig::parse(t).unwrap().window_micros();
        assert_eq!(window("cycle:limit_for_period=50,limit_refresh_period=500ms"), Some(500_000));
        assert_eq!(window("flow:count=20,interval_ms=2000"), Some(2_000_000));
        assert_eq!(window("flow:count=20,grade=thread"), None);
    }
}
