//! The load-driven limiters and their load signals: `manualLoad`,
//! `systemLoad` and `systemLoadShared` return functions bound to one
//! [`LoadSignal`], `bbr` to one [`ratekeeper::Bbr`] and `systemGuard` to
//! one [`ratekeeper::SystemGuard`], which `node/lib/load.js` wraps in
//! `ManualLoad`, `SystemLoad`, `Bbr` and `SystemGuard`.
//!
//! A signal's object is tagged ([`Tagged`]) so that a limiter's `load`
//! option finds the signal again ([`signal_of`]); without one a limiter
//! reads the process-wide sampler ([`SystemLoad::shared`]), as the Rust
//! library's users do.
//!
//! Results go through the scratch words, as the concurrency limiter's do:
//! `tryAcquire` writes its decision record at word 0 and an admitted
//! request's permit after it (`layout::PERMIT`: its start, then a system
//! permit's count); `stats` and `rule` write their fields from word 0, in
//! the order [`BBR_STATS`], [`SYSTEM_STATS`] and [`RULE`] name them
//! (exported to JavaScript with the methods, so that only this file spells
//! the order out). A permit's start is microseconds since the limiter was
//! created: a double holds it exactly for 285 years.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::load::{LoadSignal, ManualLoad, SamplerOptions, SystemLoad};
use ratekeeper::{
    AnyClock, Argument, Bbr, BbrConfig, BbrPermit, Error, SystemGuard, SystemPermit, SystemRule, SystemThreshold,
};

use crate::args;
use crate::bound::{Args, Binder, Named, Returned, Scratch, Tagged};
use crate::clock;
use crate::error::{blame, guarded, Boxed, Failure, Given};
use crate::js::{self, Js};
use crate::layout;

/// Where `tryAcquire` writes the permit: after the decision record.
const PERMIT_AT: usize = layout::PERMIT as usize;

/// The fields `Bbr.stats()` reads, in the order of their words.
const BBR_STATS: &[&str] = &["cpuUsage", "inFlight", "maxPass", "minRtMs", "maxInFlight"];
/// The fields `SystemGuard.stats()` reads, in the order of their words.
const SYSTEM_STATS: &[&str] = &["passQps", "blockQps", "successQps", "inFlight", "avgRtMs", "minRtMs", "maxSuccessQps"];
/// The thresholds of `SystemGuard.rule`, in the order of their words
/// (`NaN`: not set).
const RULE: &[&str] = &["qps", "maxThread", "avgRtMs", "highestSystemLoad", "highestCpuUsage"];

/// Scratch words a load-driven limiter needs: a decision record and a
/// permit, or its longest set of fields.
const SCRATCH_WORDS: usize = {
    let permit = PERMIT_AT + 2;
    if permit > SYSTEM_STATS.len() {
        permit
    } else {
        SYSTEM_STATS.len()
    }
};

// ---------------------------------------------------------------------------
// Load signals.

/// One JavaScript load signal: what a limiter reads, and the manual one
/// behind it when it is a `ManualLoad`.
pub(crate) struct Signal {
    signal: Arc<dyn LoadSignal>,
    manual: Option<Arc<ManualLoad>>,
}

impl Tagged for Signal {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x5c1e_77a0_93d4_4b2f, upper: 0x8e06_f1b2_2d9a_c305 };
}

/// The object the load-signal functions return.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct LoadMethods {
    /// The CPU usage (0 to 1) the signal reads now; `undefined` while
    /// unknown.
    #[napi(ts_type = "() => number | undefined")]
    pub cpu_usage: (),
    /// The 1-minute load average the signal reads now; `undefined` while
    /// unknown.
    #[napi(ts_type = "() => number | undefined")]
    pub load_average: (),
    /// A `ManualLoad`'s only: sets the CPU usage.
    #[napi(ts_type = "(cpuUsage: unknown) => void")]
    pub set_cpu_usage: (),
    /// A `ManualLoad`'s only: sets the load average.
    #[napi(ts_type = "(loadAverage: unknown) => void")]
    pub set_load_average: (),
    /// A `ManualLoad`'s only: both readings unknown again.
    #[napi(ts_type = "() => void")]
    pub clear: (),
}

fn reading(x: Option<f64>) -> Result<Returned, Boxed> {
    Ok(x.map_or(Returned::Undefined, Returned::Number))
}

fn manual(s: &Signal) -> Result<&ManualLoad, Failure> {
    s.manual.as_deref().ok_or(Failure::Internal("a setter called on a signal that is not a ManualLoad".to_owned()))
}

/// `value`, named `name`, into the manual signal through `set`.
fn set_reading(
    value: Js,
    argument: Argument,
    name: &'static str,
    set: impl FnOnce(f64) -> Result<(), Error>,
) -> Result<(), Failure> {
    let x = args::number(value, name)?;
    blame(set(x), &[Given { argument, name, value }])
}

fn set_cpu_usage(s: &Arc<Signal>, args: &Args) -> Result<Returned, Boxed> {
    let load = manual(s)?;
    set_reading(args.get(0), Argument::CpuUsage, "cpuUsage", |x| load.set_cpu_usage(x))?;
    Ok(Returned::Undefined)
}

fn set_load_average(s: &Arc<Signal>, args: &Args) -> Result<Returned, Boxed> {
    let load = manual(s)?;
    set_reading(args.get(0), Argument::LoadAverage, "loadAverage", |x| load.set_load_average(x))?;
    Ok(Returned::Undefined)
}

const READINGS: &[Named<Signal>] = &[
    (c"cpuUsage", 0, |s, _| reading(s.signal.cpu_usage())),
    (c"loadAverage", 0, |s, _| reading(s.signal.load_average())),
];

const SETTERS: &[Named<Signal>] = &[
    (c"setCpuUsage", 1, set_cpu_usage),
    (c"setLoadAverage", 1, set_load_average),
    (c"clear", 0, |s, _| {
        manual(s)?.clear();
        Ok(Returned::Undefined)
    }),
];

fn bind_signal(env: &Env, target: Signal) -> Result<Unknown<'_>, Failure> {
    let is_manual = target.manual.is_some();
    let mut binder = Binder::new(env.raw(), Arc::new(target))?;
    binder.methods(READINGS)?;
    if is_manual {
        binder.methods(SETTERS)?;
    }
    let object = binder.tagged()?.finish();
    // SAFETY: a value just created in this call's environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
}

/// Creates a manual load signal, each reading unknown unless given
/// (`undefined`).
#[napi(ts_args_type = "cpuUsage: unknown, loadAverage: unknown", ts_return_type = "LoadMethods")]
pub fn manual_load<'env>(
    env: &'env Env,
    cpu_usage: Unknown<'_>,
    load_average: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let load = Arc::new(ManualLoad::new());
        let (cpu, average) = (js(cpu_usage), js(load_average));
        if !cpu.is_undefined() {
            set_reading(cpu, Argument::CpuUsage, "cpuUsage", |x| load.set_cpu_usage(x))?;
        }
        if !average.is_undefined() {
            set_reading(average, Argument::LoadAverage, "loadAverage", |x| load.set_load_average(x))?;
        }
        bind_signal(env, Signal { signal: load.clone(), manual: Some(load) })
    })
}

/// Starts a sampler of this machine's load: every `intervalMs` (or
/// `intervalMicros`; absent: 500 ms), CPU smoothed with `decay` (absent:
/// 0.95).
#[napi(ts_args_type = "intervalMs: unknown, intervalMicros: unknown, decay: unknown", ts_return_type = "LoadMethods")]
pub fn system_load<'env>(
    env: &'env Env,
    interval_ms: Unknown<'_>,
    interval_micros: Unknown<'_>,
    decay: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let mut options = SamplerOptions::default();
        let mut given = Vec::new();
        let names = ("intervalMs", "intervalMicros");
        let (ms, micros) = (js(interval_ms), js(interval_micros));
        if !(ms.is_undefined() && micros.is_undefined()) {
            let (interval, g) = args::required_duration(ms, micros, names, Argument::SampleInterval)?;
            // The sampler checks the range (at least 1 ms); a negative
            // interval fails the same check.
            let interval = u64::try_from(interval).unwrap_or(0);
            options.interval = std::time::Duration::from_micros(interval);
            given.push(g);
        }
        let decay = js(decay);
        if !decay.is_undefined() {
            options.decay = args::number(decay, "decay")?;
            given.push(Given { argument: Argument::Decay, name: "decay", value: decay });
        }
        let load = blame(SystemLoad::with_options(options), &given)?;
        bind_signal(env, Signal { signal: Arc::new(load), manual: None })
    })
}

/// The process-wide sampler (started on first use), which the limiters
/// read when given no `load`.
#[napi(ts_return_type = "LoadMethods")]
pub fn system_load_shared(env: &Env) -> napi::Result<Unknown<'_>> {
    guarded(env, || bind_signal(env, Signal { signal: SystemLoad::shared(), manual: None }))
}

/// The signal of a limiter's `load` option: the shared sampler when
/// `undefined`, else a `ManualLoad`'s or a `SystemLoad`'s.
fn signal_of(value: Js) -> Result<Arc<dyn LoadSignal>, Failure> {
    if value.is_undefined() {
        return Ok(SystemLoad::shared());
    }
    crate::bound::target_of::<Signal>(value).map(|s| Arc::clone(&s.signal)).ok_or(Failure::WrongType {
        argument: "load",
        value,
        expected: "a ManualLoad or a SystemLoad",
    })
}

// ---------------------------------------------------------------------------
// Options.

/// Reads optional options, each absent one keeping its default, and
/// remembers them for [`blame`].
struct Options {
    given: Vec<Given>,
}

impl Options {
    fn number(&mut self, value: Js, argument: Argument, name: &'static str) -> Result<Option<f64>, Failure> {
        if value.is_undefined() {
            return Ok(None);
        }
        self.given.push(Given { argument, name, value });
        args::number(value, name).map(Some)
    }

    fn count(&mut self, value: Js, argument: Argument, name: &'static str) -> Result<Option<u64>, Failure> {
        if value.is_undefined() {
            return Ok(None);
        }
        self.given.push(Given { argument, name, value });
        args::count(value, argument, name).map(Some)
    }

    /// A duration given as `names.0` (milliseconds) or `names.1` (exact
    /// microseconds), or neither.
    fn duration(
        &mut self,
        ms: Js,
        micros: Js,
        names: (&'static str, &'static str),
        argument: Argument,
    ) -> Result<Option<i64>, Failure> {
        if ms.is_undefined() && micros.is_undefined() {
            return Ok(None);
        }
        let (micros, given) = args::required_duration(ms, micros, names, argument)?;
        self.given.push(given);
        Ok(Some(micros))
    }
}

// ---------------------------------------------------------------------------
// BBR.

/// One JavaScript `Bbr`.
struct BbrTarget {
    bbr: Bbr<AnyClock>,
    scratch: Scratch,
}

/// The object `bbr` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct BbrMethods {
    /// Admits a request unless BBR sheds it: the decision to `scratch` as a
    /// decision record, an admitted one's permit (its start) to the word
    /// from `layout().permit`.
    #[napi(ts_type = "() => boolean")]
    pub try_acquire: (),
    /// The request that took the permit starting at `start` ended.
    #[napi(ts_type = "(start: number) => void")]
    pub release: (),
    /// Writes the statistics to `scratch`, in the order of `statsFields`.
    #[napi(ts_type = "() => void")]
    pub stats: (),
    /// The names of the statistics' words.
    #[napi(ts_type = "string[]")]
    pub stats_fields: (),
    /// See `tryAcquire`.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

/// A permit's start from JavaScript: what `tryAcquire` wrote.
fn start_of(value: Js) -> Result<i64, Failure> {
    match value.number() {
        Some(x) if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&x) => Ok(x as i64),
        _ => Err(Failure::Internal("a permit that tryAcquire did not write".to_owned())),
    }
}

fn bbr_try_acquire(b: &Arc<BbrTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let (decision, permit) = b.bbr.try_acquire();
    b.scratch.write_decision(0, &decision);
    if let Some(permit) = permit {
        b.scratch.set_f64(PERMIT_AT, permit.start_micros as f64);
    }
    Ok(Returned::Bool(decision.allowed))
}

fn bbr_release(b: &Arc<BbrTarget>, args: &Args) -> Result<Returned, Boxed> {
    b.bbr.release(BbrPermit { start_micros: start_of(args.get(0))? });
    Ok(Returned::Undefined)
}

fn bbr_stats(b: &Arc<BbrTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let s = b.bbr.stats();
    let words = [s.cpu_usage, s.in_flight as f64, s.max_pass as f64, s.min_rt_millis as f64, s.max_in_flight as f64];
    for (i, x) in words.into_iter().enumerate() {
        b.scratch.set_f64(i, x);
    }
    Ok(Returned::Undefined)
}

const BBR_METHODS: &[Named<BbrTarget>] =
    &[(c"tryAcquire", 0, bbr_try_acquire), (c"release", 1, bbr_release), (c"stats", 0, bbr_stats)];

/// Creates a BBR limiter; absent options (`undefined`) take Kratos'
/// defaults, an absent `load` the shared sampler.
#[napi(
    ts_args_type = "windowMs: unknown, windowMicros: unknown, buckets: unknown, cpuThreshold: unknown, coolDownMs: unknown, coolDownMicros: unknown, load: unknown, clock: unknown",
    ts_return_type = "BbrMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn bbr<'env>(
    env: &'env Env,
    window_ms: Unknown<'_>,
    window_micros: Unknown<'_>,
    buckets: Unknown<'_>,
    cpu_threshold: Unknown<'_>,
    cool_down_ms: Unknown<'_>,
    cool_down_micros: Unknown<'_>,
    load: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let d = BbrConfig::default();
        let mut o = Options { given: Vec::new() };
        let window = o.duration(js(window_ms), js(window_micros), ("windowMs", "windowMicros"), Argument::Window)?;
        let buckets = match o.count(js(buckets), Argument::Buckets, "buckets")? {
            None => d.buckets,
            Some(n) => blame(u32::try_from(n).map_err(|_| Error::invalid_uint(Argument::Buckets, n)), &o.given)?,
        };
        let cpu_threshold = o.number(js(cpu_threshold), Argument::CpuThreshold, "cpuThreshold")?;
        let names = ("coolDownMs", "coolDownMicros");
        let cool_down = o.duration(js(cool_down_ms), js(cool_down_micros), names, Argument::CoolDown)?;
        let config = BbrConfig {
            window_micros: window.unwrap_or(d.window_micros),
            buckets,
            cpu_threshold: cpu_threshold.unwrap_or(d.cpu_threshold),
            cool_down_micros: cool_down.unwrap_or(d.cool_down_micros),
        };
        let signal = signal_of(js(load))?;
        let clock = clock::from_option(js(clock))?;
        let bbr = blame(Bbr::with_clock(config, signal, clock), &o.given)?;
        let target = Arc::new(BbrTarget { bbr, scratch: Scratch::new(SCRATCH_WORDS) });
        let fields = string_array(env, BBR_STATS)?;
        let object = Binder::new(env.raw(), target)?
            .methods(BBR_METHODS)?
            .value(c"statsFields", fields)?
            .scratch(c"scratch", |b| &b.scratch)?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}

/// A JavaScript array of `names`.
pub(crate) fn string_array(env: &Env, names: &[&str]) -> Result<sys::napi_value, Failure> {
    let mut array = std::ptr::null_mut();
    // SAFETY: plain value creation in the running call's environment.
    js::check(env.raw(), unsafe { sys::napi_create_array_with_length(env.raw(), names.len(), &mut array) }, "array")?;
    for (i, name) in names.iter().enumerate() {
        let element = js::string(env.raw(), name)?;
        // SAFETY: as above; `array` was just created.
        let status = unsafe { sys::napi_set_element(env.raw(), array, i as u32, element) };
        js::check(env.raw(), status, "set element")?;
    }
    Ok(array)
}

// ---------------------------------------------------------------------------
// Sentinel's system rule.

/// One JavaScript `SystemGuard`.
struct GuardTarget {
    guard: SystemGuard<AnyClock>,
    scratch: Scratch,
}

impl Tagged for GuardTarget {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x2b7d_04e1_c6f3_9a58, upper: 0xd41a_5f90_7e2c_b816 };
}

/// The object `systemGuard` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct SystemGuardMethods {
    /// Admits a request of `count` (`undefined`: 1) unless a threshold
    /// refuses it: the decision to `scratch` as a decision record, an
    /// admitted one's permit (its start, its count) to the two words from
    /// `layout().permit`. Returns the refusing threshold's name, or
    /// `undefined` when admitted.
    #[napi(ts_type = "(count: unknown) => string | undefined")]
    pub try_acquire: (),
    /// The request that took the permit (`start`, `count`) ended.
    #[napi(ts_type = "(start: number, count: number) => void")]
    pub release: (),
    /// Writes the statistics to `scratch`, in the order of `statsFields`.
    #[napi(ts_type = "() => void")]
    pub stats: (),
    /// The names of the statistics' words.
    #[napi(ts_type = "string[]")]
    pub stats_fields: (),
    /// Writes the rule's thresholds to `scratch`, in the order of
    /// `ruleFields` (`NaN`: not set).
    #[napi(ts_type = "() => void")]
    pub rule: (),
    /// The names of the rule's words.
    #[napi(ts_type = "string[]")]
    pub rule_fields: (),
    /// See `tryAcquire`.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

fn guard_try_acquire(g: &Arc<GuardTarget>, args: &Args) -> Result<Returned, Boxed> {
    let value = args.get(0);
    let count = if value.is_undefined() { 1 } else { args::count(value, Argument::Cost, "count")? };
    let (decision, outcome) = g.guard.try_acquire(count);
    g.scratch.write_decision(0, &decision);
    match outcome {
        Ok(permit) => {
            g.scratch.set_f64(PERMIT_AT, permit.start_micros as f64);
            g.scratch.set_f64(PERMIT_AT + 1, permit.count as f64);
            Ok(Returned::Undefined)
        }
        Err(threshold) => Ok(Returned::Value(threshold_name(args.env, threshold)?)),
    }
}

fn threshold_name(env: sys::napi_env, threshold: SystemThreshold) -> Result<sys::napi_value, Failure> {
    js::string(env, threshold.name())
}

fn guard_release(g: &Arc<GuardTarget>, args: &Args) -> Result<Returned, Boxed> {
    let start = start_of(args.get(0))?;
    let count = start_of(args.get(1))? as u64;
    g.guard.release(SystemPermit { start_micros: start, count });
    Ok(Returned::Undefined)
}

fn guard_stats(g: &Arc<GuardTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let s = g.guard.stats();
    let words = [
        s.pass_qps,
        s.block_qps,
        s.success_qps,
        s.in_flight as f64,
        s.avg_rt_millis,
        s.min_rt_millis as f64,
        s.max_success_qps,
    ];
    for (i, x) in words.into_iter().enumerate() {
        g.scratch.set_f64(i, x);
    }
    Ok(Returned::Undefined)
}

fn guard_rule(g: &Arc<GuardTarget>, _args: &Args) -> Result<Returned, Boxed> {
    let r = g.guard.rule();
    let words = [
        r.qps,
        r.max_thread.map(|n| n as f64),
        r.avg_rt_micros.map(|m| m as f64 / 1e3),
        r.highest_system_load,
        r.highest_cpu_usage,
    ];
    for (i, x) in words.into_iter().enumerate() {
        g.scratch.set_f64(i, x.unwrap_or(f64::NAN));
    }
    Ok(Returned::Undefined)
}

/// A rule from the options that make one.
fn rule_of(thresholds: [Js; 6]) -> Result<(SystemRule, Vec<Given>), Failure> {
    let [qps, max_thread, avg_rt_ms, avg_rt_micros, highest_system_load, highest_cpu_usage] = thresholds;
    let mut o = Options { given: Vec::new() };
    let rule = SystemRule {
        qps: o.number(qps, Argument::Qps, "qps")?,
        max_thread: o.count(max_thread, Argument::MaxThread, "maxThread")?,
        avg_rt_micros: o.duration(avg_rt_ms, avg_rt_micros, ("avgRtMs", "avgRtMicros"), Argument::AvgRt)?,
        highest_system_load: o.number(highest_system_load, Argument::HighestSystemLoad, "highestSystemLoad")?,
        highest_cpu_usage: o.number(highest_cpu_usage, Argument::HighestCpuUsage, "highestCpuUsage")?,
    };
    Ok((rule, o.given))
}

/// Replaces the rule of `guard` (a `systemGuard` object) with one made of
/// the thresholds given, as `systemGuard` makes one. (A function of its own
/// rather than a bound method: a bound method reads at most five
/// arguments.)
#[napi(
    ts_args_type = "guard: SystemGuardMethods, qps: unknown, maxThread: unknown, avgRtMs: unknown, avgRtMicros: unknown, highestSystemLoad: unknown, highestCpuUsage: unknown"
)]
#[allow(clippy::too_many_arguments)]
pub fn system_guard_set_rule(
    env: &Env,
    guard: Unknown<'_>,
    qps: Unknown<'_>,
    max_thread: Unknown<'_>,
    avg_rt_ms: Unknown<'_>,
    avg_rt_micros: Unknown<'_>,
    highest_system_load: Unknown<'_>,
    highest_cpu_usage: Unknown<'_>,
) -> napi::Result<()> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let value = js(guard);
        let target = crate::bound::target_of::<GuardTarget>(value).ok_or(Failure::WrongType {
            argument: "guard",
            value,
            expected: "a SystemGuard",
        })?;
        let thresholds = [qps, max_thread, avg_rt_ms, avg_rt_micros, highest_system_load, highest_cpu_usage].map(js);
        let (rule, given) = rule_of(thresholds)?;
        blame(target.guard.set_rule(rule), &given)
    })
}

const GUARD_METHODS: &[Named<GuardTarget>] = &[
    (c"tryAcquire", 1, guard_try_acquire),
    (c"release", 2, guard_release),
    (c"stats", 0, guard_stats),
    (c"rule", 0, guard_rule),
];

/// Creates a guard of Sentinel's system rule; an absent (`undefined`)
/// threshold is not checked, an absent `load` is the shared sampler.
#[napi(
    ts_args_type = "qps: unknown, maxThread: unknown, avgRtMs: unknown, avgRtMicros: unknown, highestSystemLoad: unknown, highestCpuUsage: unknown, load: unknown, clock: unknown",
    ts_return_type = "SystemGuardMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn system_guard<'env>(
    env: &'env Env,
    qps: Unknown<'_>,
    max_thread: Unknown<'_>,
    avg_rt_ms: Unknown<'_>,
    avg_rt_micros: Unknown<'_>,
    highest_system_load: Unknown<'_>,
    highest_cpu_usage: Unknown<'_>,
    load: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let thresholds = [qps, max_thread, avg_rt_ms, avg_rt_micros, highest_system_load, highest_cpu_usage].map(js);
        let (rule, given) = rule_of(thresholds)?;
        let signal = signal_of(js(load))?;
        let clock = clock::from_option(js(clock))?;
        let guard = blame(SystemGuard::with_clock(rule, signal, clock), &given)?;
        let target = Arc::new(GuardTarget { guard, scratch: Scratch::new(SCRATCH_WORDS) });
        let (stats, rule) = (string_array(env, SYSTEM_STATS)?, string_array(env, RULE)?);
        let object = Binder::new(env.raw(), target)?
            .methods(GUARD_METHODS)?
            .value(c"statsFields", stats)?
            .value(c"ruleFields", rule)?
            .scratch(c"scratch", |g| &g.scratch)?
            .tagged()?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}
