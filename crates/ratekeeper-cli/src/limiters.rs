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

use ratekeeper::Algorithm as Admission;
use ratekeeper::{
    AnyLimiter, Argument, CompositeLimiter, LimiterSpec, ManualClock, Parameter, ParameterKind, ParameterSource,
    ParameterValue, RateLimiter, NEVER,
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

/// Which algorithm one lane runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Algorithm {
    /// One admission-style algorithm.
    Admission(LimiterSpec),
    /// Several, all or nothing.
    Composite(Vec<LimiterSpec>),
    /// Guava's `RateLimiter`.
    Guava(GuavaConfig),
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
                _ => specs.push(parse_admission(&spec)?),
            }
        }
        let algorithm = match (guava, specs.len()) {
            (Some(g), _) => Algorithm::Guava(g),
            (None, 1) => Algorithm::Admission(specs[0]),
            (None, _) => Algorithm::Composite(specs),
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
        }
    }

    /// The window of a window algorithm (the first one of a composite): its
    /// `window` parameter.
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
            Algorithm::Guava(_) => None,
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
}

impl Lane {
    /// Decides about a request of `cost` arriving now (the clock's time).
    /// Errors only for Guava, whose permits are 1 to 2^31 − 1.
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
            "guava:rate=100",
            "guava:rate=100,max_burst_seconds=2,timeout=0",
            "guava:rate=100,warmup=2s,cold_factor=4,timeout=50ms",
            "smooth_warming_up:rate=100,warmup=2s",
            "token_bucket:rate=10,burst=10+fixed_window:limit=1000,window=1h",
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
        assert_eq!(ALGORITHMS.len(), Admission::ALL.len() + 1, "and guava");
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
        let clock = Arc::new(ManualClock::new());
        let invalid = LimiterConfig::parse("fixed_window:limit=0,window=1s").unwrap().build(&clock).unwrap_err();
        assert!(invalid.to_string().contains("limit"), "{invalid}");
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
    }
}
