//! The load-driven limiters: `ratekeeper.Bbr` (Kratos' BBR) and
//! `ratekeeper.SystemGuard` (Sentinel's system rule), and the load signals
//! they read, `ManualLoad` (set by hand, for tests) and `SystemLoad` (the
//! `/proc` and cgroup sampler).
//!
//! As for `ConcurrencyLimiter`, an admitted request's permit is a handle
//! ([`PyLoadPermitHandle`], one class for both) that releases the Rust
//! permit exactly once, and releases it if it is garbage-collected first so
//! that the limiter never counts a lost request in flight forever. The
//! package wraps the handles in `ratekeeper.BbrPermit` and
//! `ratekeeper.SystemPermit`, context managers that release on exit.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::PyDict;
use ratekeeper::load::{LoadSignal, ManualLoad, SamplerOptions, SystemLoad};
use ratekeeper::{
    AnyClock, Argument, Bbr, BbrConfig, BbrPermit, BbrStats, Error, SystemGuard, SystemPermit, SystemRule, SystemStats,
};

use crate::args;
use crate::clock::{self, PyManualClock};
use crate::decision::{seconds_from_micros, PyDecision};
use crate::errors::{from_rust, from_rust_passed, wrong_type};
use crate::float_repr;

/// A load signal set by hand, for deterministic tests: ``None`` (unknown,
/// which the limiters read as 0.0) until a value is set.
///
/// >>> load = ManualLoad(cpu_usage=0.5)
/// >>> load.set_load_average(3.0)
/// >>> load.cpu_usage, load.load_average
/// (0.5, 3.0)
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "ManualLoad")]
#[derive(Debug)]
pub struct PyManualLoad {
    load: Arc<ManualLoad>,
}

#[pymethods]
impl PyManualLoad {
    #[new]
    #[pyo3(signature = (cpu_usage=None, load_average=None))]
    fn new(cpu_usage: Option<&Bound<'_, PyAny>>, load_average: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let this = PyManualLoad { load: Arc::new(ManualLoad::new()) };
        if let Some(cpu) = cpu_usage.filter(|o| !o.is_none()) {
            this.set_cpu_usage(cpu)?;
        }
        if let Some(load) = load_average.filter(|o| !o.is_none()) {
            this.set_load_average(load)?;
        }
        Ok(this)
    }

    /// Sets the CPU usage, a fraction from 0.0 to 1.0 of what the process
    /// may use.
    fn set_cpu_usage(&self, cpu_usage: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = args::real(cpu_usage, Argument::CpuUsage)?;
        self.load.set_cpu_usage(value).map_err(|e| from_rust(cpu_usage.py(), e))
    }

    /// Sets the one-minute load average (finite, not negative).
    fn set_load_average(&self, load_average: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = args::real(load_average, Argument::LoadAverage)?;
        self.load.set_load_average(value).map_err(|e| from_rust(load_average.py(), e))
    }

    /// Makes both readings unknown again.
    fn clear(&self) {
        self.load.clear();
    }

    /// The CPU usage set, or ``None``.
    #[getter]
    fn cpu_usage(&self) -> Option<f64> {
        self.load.cpu_usage()
    }

    /// The load average set, or ``None``.
    #[getter]
    fn load_average(&self) -> Option<f64> {
        self.load.load_average()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        readings_repr(py, "ManualLoad", self.load.as_ref())
    }
}

/// `Name(cpu_usage=..., load_average=...)`.
fn readings_repr(py: Python<'_>, name: &str, signal: &dyn LoadSignal) -> PyResult<String> {
    let show = |value: Option<f64>| value.map_or(Ok("None".to_owned()), |v| float_repr(py, v));
    Ok(format!("{name}(cpu_usage={}, load_average={})", show(signal.cpu_usage())?, show(signal.load_average())?))
}

/// The system's load, sampled on a background thread every ``interval``
/// seconds: the CPU usage of the process's cgroup (its quota when it has
/// one) or of the host, from ``/proc`` and the cgroup files, smoothed as
/// Kratos does (``decay`` of the previous value kept at each sample), and
/// the one-minute load average. ``None`` until the first readings.
///
/// ``SystemLoad.shared()`` is the process-wide sampler the limiters read
/// when given no ``load``; the thread of any other stops when it is
/// collected.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "SystemLoad")]
#[derive(Debug)]
pub struct PySystemLoad {
    load: Arc<SystemLoad>,
}

#[pymethods]
impl PySystemLoad {
    #[new]
    #[pyo3(signature = (interval=None, decay=None))]
    #[pyo3(text_signature = "(interval=0.5, decay=0.95)")]
    fn new(interval: Option<&Bound<'_, PyAny>>, decay: Option<&Bound<'_, PyAny>>, py: Python<'_>) -> PyResult<Self> {
        let mut options = SamplerOptions::default();
        let mut passed = Vec::new();
        if let Some(obj) = interval.filter(|o| !o.is_none()) {
            let micros = args::duration_micros(obj, Argument::SampleInterval)?;
            options.interval = Duration::from_micros(micros as u64);
            passed.push((Argument::SampleInterval, obj));
        }
        if let Some(obj) = decay.filter(|o| !o.is_none()) {
            options.decay = args::real(obj, Argument::Decay)?;
        }
        let load = SystemLoad::with_options(options).map_err(|e| from_rust_passed(py, e, &passed))?;
        Ok(PySystemLoad { load: Arc::new(load) })
    }

    /// The process-wide sampler (started on first use), which every
    /// limiter made without ``load`` reads.
    #[staticmethod]
    fn shared() -> Self {
        PySystemLoad { load: SystemLoad::shared() }
    }

    /// The latest smoothed CPU usage (0.0 to 1.0), or ``None`` before the
    /// first two samples.
    #[getter]
    fn cpu_usage(&self) -> Option<f64> {
        self.load.cpu_usage()
    }

    /// The latest one-minute load average, or ``None`` where there is none.
    #[getter]
    fn load_average(&self) -> Option<f64> {
        self.load.load_average()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        readings_repr(py, "SystemLoad", self.load.as_ref())
    }
}

/// The signal a limiter reads, and the Python object it came from (`None`
/// for the shared sampler).
type LoadArg = (Arc<dyn LoadSignal>, Option<Py<PyAny>>);

/// A limiter's `load=` argument: `None` for the process-wide sampler, a
/// `ManualLoad` or a `SystemLoad`; the object is kept to return it from the
/// limiter's `load` property.
fn load_arg(load: Option<&Bound<'_, PyAny>>) -> PyResult<LoadArg> {
    let Some(obj) = load.filter(|o| !o.is_none()) else {
        return Ok((SystemLoad::shared(), None));
    };
    let signal: Arc<dyn LoadSignal> = if let Ok(manual) = obj.cast::<PyManualLoad>() {
        manual.get().load.clone()
    } else if let Ok(system) = obj.cast::<PySystemLoad>() {
        system.get().load.clone()
    } else {
        return Err(wrong_type("load", obj, "a ratekeeper.ManualLoad, a ratekeeper.SystemLoad or None"));
    };
    Ok((signal, Some(obj.clone().unbind())))
}

/// `, load=..., clock=...` for a limiter's `repr`, or nothing.
fn signal_repr(py: Python<'_>, load: &Option<Py<PyAny>>, clock: &Option<Py<PyManualClock>>) -> PyResult<String> {
    let load = match load {
        Some(load) => format!(", load={}", load.bind(py).repr()?),
        None => String::new(),
    };
    Ok(format!("{load}{}", clock::clock_repr(py, clock)?))
}

/// An optional duration argument in microseconds, with its default.
fn micros_or(obj: Option<&Bound<'_, PyAny>>, argument: Argument, default: i64) -> PyResult<i64> {
    obj.filter(|o| !o.is_none()).map_or(Ok(default), |o| args::duration_micros(o, argument))
}

/// Kratos' BBR limiter; see ``ratekeeper.Bbr``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "Bbr")]
#[derive(Debug)]
pub struct PyBbr {
    bbr: Bbr<AnyClock>,
    load: Option<Py<PyAny>>,
    clock: Option<Py<PyManualClock>>,
}

#[pymethods]
impl PyBbr {
    #[new]
    #[pyo3(signature = (window=None, buckets=None, cpu_threshold=None, cool_down=None, *, load=None, clock=None))]
    #[pyo3(text_signature = "(window=10.0, buckets=100, cpu_threshold=0.8, cool_down=1.0, *, load=None, clock=None)")]
    fn new(
        window: Option<&Bound<'_, PyAny>>,
        buckets: Option<&Bound<'_, PyAny>>,
        cpu_threshold: Option<&Bound<'_, PyAny>>,
        cool_down: Option<&Bound<'_, PyAny>>,
        load: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let d = BbrConfig::default();
        let buckets = match buckets.filter(|o| !o.is_none()) {
            None => d.buckets,
            Some(obj) => {
                let n = args::count(obj, Argument::Buckets)?;
                u32::try_from(n).map_err(|_| from_rust(py, Error::invalid_uint(Argument::Buckets, n)))?
            }
        };
        let config = BbrConfig {
            window_micros: micros_or(window, Argument::Window, d.window_micros)?,
            buckets,
            cpu_threshold: cpu_threshold
                .filter(|o| !o.is_none())
                .map_or(Ok(d.cpu_threshold), |o| args::real(o, Argument::CpuThreshold))?,
            cool_down_micros: micros_or(cool_down, Argument::CoolDown, d.cool_down_micros)?,
        };
        let passed: Vec<(Argument, &Bound<'_, PyAny>)> = [(Argument::Window, window), (Argument::CoolDown, cool_down)]
            .into_iter()
            .filter_map(|(a, o)| o.map(|o| (a, o)))
            .collect();
        config.validate().map_err(|e| from_rust_passed(py, e, &passed))?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let (signal, load) = load_arg(load)?;
        let bbr = Bbr::with_clock(config, signal, any_clock).map_err(|e| from_rust(py, e))?;
        Ok(PyClassInitializer::from(PyBbr { bbr, load, clock }))
    }

    /// The statistics' window in seconds.
    #[getter]
    fn window(&self) -> f64 {
        seconds_from_micros(self.bbr.config().window_micros)
    }

    /// How many buckets the window is split into.
    #[getter]
    fn buckets(&self) -> u32 {
        self.bbr.config().buckets
    }

    /// The CPU usage at or above which BBR sheds.
    #[getter]
    fn cpu_threshold(&self) -> f64 {
        self.bbr.config().cpu_threshold
    }

    /// Seconds after shedding began during which BBR keeps shedding
    /// although the CPU is below its threshold.
    #[getter]
    fn cool_down(&self) -> f64 {
        seconds_from_micros(self.bbr.config().cool_down_micros)
    }

    /// What BBR sees now (Kratos' ``Stat``).
    fn stats(&self) -> PyBbrStats {
        PyBbrStats(self.bbr.stats())
    }

    /// The ``ManualLoad`` or ``SystemLoad`` the limiter reads, or ``None``
    /// for the process-wide sampler.
    #[getter]
    fn load(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.load.as_ref().map(|l| l.clone_ref(py))
    }

    /// The ``ManualClock`` the limiter runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// Admits a request unless BBR sheds it: the decision, and the permit's
    /// handle when admitted (``ratekeeper.BbrPermit`` wraps it).
    #[pyo3(name = "_try_acquire")]
    fn try_acquire(slf: &Bound<'_, Self>) -> (PyDecision, Option<PyLoadPermitHandle>) {
        let (decision, permit) = slf.get().bbr.try_acquire();
        let handle = permit.map(|p| PyLoadPermitHandle::new(Held::Bbr(slf.clone().unbind(), p)));
        (PyDecision(decision), handle)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.get();
        let c = this.bbr.config();
        Ok(format!(
            "{}(window={}, buckets={}, cpu_threshold={}, cool_down={}{})",
            slf.get_type().name()?,
            float_repr(py, seconds_from_micros(c.window_micros))?,
            c.buckets,
            float_repr(py, c.cpu_threshold)?,
            float_repr(py, seconds_from_micros(c.cool_down_micros))?,
            signal_repr(py, &this.load, &this.clock)?
        ))
    }
}

/// An admitted request of a ``Bbr`` or a ``SystemGuard``: the limiter and
/// its permit.
#[derive(Debug)]
enum Held {
    Bbr(Py<PyBbr>, BbrPermit),
    Guard(Py<PySystemGuard>, SystemPermit),
}

impl Held {
    /// Ends the request in its limiter: records its round trip (and, for the
    /// guard, its completion).
    fn release(self) {
        match self {
            Held::Bbr(bbr, permit) => bbr.get().bbr.release(permit),
            Held::Guard(guard, permit) => guard.get().guard.release(permit),
        }
    }
}

/// A permit of a ``Bbr`` or a ``SystemGuard``, released exactly once; see
/// ``ratekeeper.BbrPermit`` and ``ratekeeper.SystemPermit``.
#[pyclass(frozen, module = "ratekeeper._ratekeeper", name = "_LoadPermitHandle")]
#[derive(Debug)]
pub struct PyLoadPermitHandle {
    held: Mutex<Option<Held>>,
}

impl PyLoadPermitHandle {
    fn new(held: Held) -> Self {
        PyLoadPermitHandle { held: Mutex::new(Some(held)) }
    }
}

#[pymethods]
impl PyLoadPermitHandle {
    /// Ends the request: its round-trip time is recorded. Does nothing once
    /// released.
    fn release(&self) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(held) = held {
            held.release();
        }
    }

    /// Whether the permit was released.
    #[getter]
    fn released(&self) -> bool {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }
}

impl Drop for PyLoadPermitHandle {
    /// A permit nobody released is released when it is collected (its
    /// round trip ends then): the limiter never counts it in flight forever.
    fn drop(&mut self) {
        if let Some(held) = self.held.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            held.release();
        }
    }
}

/// What a ``Bbr`` sees (Kratos' ``Stat``): ``cpu_usage`` (0.0 to 1.0),
/// ``in_flight``, ``max_pass`` (the most requests completed in one bucket
/// of the window), ``min_rt`` (the lowest average round trip of a bucket,
/// seconds, whole milliseconds) and ``max_in_flight`` (the capacity BBR
/// allows while shedding).
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "BbrStats")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyBbrStats(BbrStats);

#[pymethods]
impl PyBbrStats {
    /// The CPU usage read (0.0 to 1.0; 0.0 while unknown).
    #[getter]
    fn cpu_usage(&self) -> f64 {
        self.0.cpu_usage
    }

    /// Requests admitted and not yet released.
    #[getter]
    fn in_flight(&self) -> u64 {
        self.0.in_flight
    }

    /// The most requests completed in one settled bucket (at least 1).
    #[getter]
    fn max_pass(&self) -> u64 {
        self.0.max_pass
    }

    /// The lowest average round trip of a settled bucket, in seconds (whole
    /// milliseconds, at least 0.001).
    #[getter]
    fn min_rt(&self) -> f64 {
        self.0.min_rt_millis as f64 / 1000.0
    }

    /// The capacity: ``max_pass × min_rt × buckets per second``.
    #[getter]
    fn max_in_flight(&self) -> u64 {
        self.0.max_in_flight
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "BbrStats(cpu_usage={}, in_flight={}, max_pass={}, min_rt={}, max_in_flight={})",
            float_repr(py, self.0.cpu_usage)?,
            self.0.in_flight,
            self.0.max_pass,
            float_repr(py, self.min_rt())?,
            self.0.max_in_flight
        ))
    }
}

/// The five thresholds of a system rule from keyword arguments (each
/// `None`: not checked).
fn system_rule(
    qps: Option<&Bound<'_, PyAny>>,
    max_thread: Option<&Bound<'_, PyAny>>,
    avg_rt: Option<&Bound<'_, PyAny>>,
    highest_system_load: Option<&Bound<'_, PyAny>>,
    highest_cpu_usage: Option<&Bound<'_, PyAny>>,
) -> PyResult<SystemRule> {
    fn set<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
        o.filter(|o| !o.is_none())
    }
    let real = |o, argument| set(o).map(|o| args::real(o, argument)).transpose();
    Ok(SystemRule {
        qps: real(qps, Argument::Qps)?,
        max_thread: set(max_thread).map(|o| args::count(o, Argument::MaxThread)).transpose()?,
        avg_rt_micros: set(avg_rt).map(|o| args::duration_micros(o, Argument::AvgRt)).transpose()?,
        highest_system_load: real(highest_system_load, Argument::HighestSystemLoad)?,
        highest_cpu_usage: real(highest_cpu_usage, Argument::HighestCpuUsage)?,
    })
}

/// The `avg_rt` passed, to show it as given in an error (seconds, not the
/// microseconds Rust was given).
fn passed_avg_rt<'a, 'py>(avg_rt: Option<&'a Bound<'py, PyAny>>) -> Vec<(Argument, &'a Bound<'py, PyAny>)> {
    avg_rt.filter(|o| !o.is_none()).map(|o| (Argument::AvgRt, o)).into_iter().collect()
}

/// Sentinel's system rule; see ``ratekeeper.SystemGuard``.
#[pyclass(frozen, subclass, module = "ratekeeper._ratekeeper", name = "SystemGuard")]
#[derive(Debug)]
pub struct PySystemGuard {
    guard: SystemGuard<AnyClock>,
    load: Option<Py<PyAny>>,
    clock: Option<Py<PyManualClock>>,
}

#[pymethods]
impl PySystemGuard {
    #[new]
    #[pyo3(signature = (
        *, qps=None, max_thread=None, avg_rt=None, highest_system_load=None, highest_cpu_usage=None, load=None,
        clock=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        qps: Option<&Bound<'_, PyAny>>,
        max_thread: Option<&Bound<'_, PyAny>>,
        avg_rt: Option<&Bound<'_, PyAny>>,
        highest_system_load: Option<&Bound<'_, PyAny>>,
        highest_cpu_usage: Option<&Bound<'_, PyAny>>,
        load: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let rule = system_rule(qps, max_thread, avg_rt, highest_system_load, highest_cpu_usage)?;
        let passed = passed_avg_rt(avg_rt);
        rule.validate().map_err(|e| from_rust_passed(py, e, &passed))?;
        let (any_clock, clock) = clock::clock_arg(clock)?;
        let (signal, load) = load_arg(load)?;
        let guard = SystemGuard::with_clock(rule, signal, any_clock).map_err(|e| from_rust(py, e))?;
        Ok(PyClassInitializer::from(PySystemGuard { guard, load, clock }))
    }

    /// Replaces the rule (every threshold not given is no longer checked);
    /// the statistics stay. A bad threshold changes nothing.
    #[pyo3(signature = (*, qps=None, max_thread=None, avg_rt=None, highest_system_load=None, highest_cpu_usage=None))]
    fn set_rule(
        &self,
        qps: Option<&Bound<'_, PyAny>>,
        max_thread: Option<&Bound<'_, PyAny>>,
        avg_rt: Option<&Bound<'_, PyAny>>,
        highest_system_load: Option<&Bound<'_, PyAny>>,
        highest_cpu_usage: Option<&Bound<'_, PyAny>>,
        py: Python<'_>,
    ) -> PyResult<()> {
        let rule = system_rule(qps, max_thread, avg_rt, highest_system_load, highest_cpu_usage)?;
        let passed = passed_avg_rt(avg_rt);
        self.guard.set_rule(rule).map_err(|e| from_rust_passed(py, e, &passed))
    }

    /// The rule as a dict of its five thresholds (``None``: not checked;
    /// ``avg_rt`` in seconds), the keywords ``set_rule`` takes.
    #[getter]
    fn rule<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rule = self.guard.rule();
        let dict = PyDict::new(py);
        dict.set_item("qps", rule.qps)?;
        dict.set_item("max_thread", rule.max_thread)?;
        dict.set_item("avg_rt", rule.avg_rt_micros.map(seconds_from_micros))?;
        dict.set_item("highest_system_load", rule.highest_system_load)?;
        dict.set_item("highest_cpu_usage", rule.highest_cpu_usage)?;
        Ok(dict)
    }

    /// The entry statistics now (Sentinel's entry node).
    fn stats(&self) -> PySystemStats {
        PySystemStats(self.guard.stats())
    }

    /// The ``ManualLoad`` or ``SystemLoad`` the guard reads, or ``None``
    /// for the process-wide sampler.
    #[getter]
    fn load(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.load.as_ref().map(|l| l.clone_ref(py))
    }

    /// The ``ManualClock`` the guard runs on, or ``None`` for real time.
    #[getter]
    fn clock(&self, py: Python<'_>) -> Option<Py<PyManualClock>> {
        self.clock.as_ref().map(|c| c.clone_ref(py))
    }

    /// Checks a ``count`` as ``_try_acquire`` would, taking nothing: for
    /// ``limited``, which fails when decorating rather than when called.
    #[staticmethod]
    fn _check_count(count: &Bound<'_, PyAny>) -> PyResult<()> {
        args::non_negative_int(count, "count").map(drop)
    }

    /// Admits a request of ``count`` unless a threshold refuses it: the
    /// decision, the permit's handle when admitted
    /// (``ratekeeper.SystemPermit`` wraps it), and the name of the
    /// threshold that refused it otherwise.
    #[pyo3(name = "_try_acquire")]
    fn try_acquire(
        slf: &Bound<'_, Self>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<(PyDecision, Option<PyLoadPermitHandle>, Option<&'static str>)> {
        let count = args::non_negative_int(count, "count")? as u64;
        Ok(match slf.get().guard.try_acquire(count) {
            (decision, Ok(permit)) => {
                (PyDecision(decision), Some(PyLoadPermitHandle::new(Held::Guard(slf.clone().unbind(), permit))), None)
            }
            (decision, Err(threshold)) => (PyDecision(decision), None, Some(threshold.name())),
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let this = slf.get();
        let rule = this.guard.rule();
        let mut parts = Vec::new();
        if let Some(qps) = rule.qps {
            parts.push(format!("qps={}", float_repr(py, qps)?));
        }
        if let Some(max_thread) = rule.max_thread {
            parts.push(format!("max_thread={max_thread}"));
        }
        if let Some(avg_rt) = rule.avg_rt_micros {
            parts.push(format!("avg_rt={}", float_repr(py, seconds_from_micros(avg_rt))?));
        }
        if let Some(load) = rule.highest_system_load {
            parts.push(format!("highest_system_load={}", float_repr(py, load)?));
        }
        if let Some(cpu) = rule.highest_cpu_usage {
            parts.push(format!("highest_cpu_usage={}", float_repr(py, cpu)?));
        }
        let rest = signal_repr(py, &this.load, &this.clock)?;
        let rest = if parts.is_empty() { rest.trim_start_matches(", ").to_owned() } else { rest };
        Ok(format!("{}({}{rest})", slf.get_type().name()?, parts.join(", ")))
    }
}

/// A ``SystemGuard``'s entry statistics over the last second (Sentinel's
/// entry node): ``pass_qps``, ``block_qps``, ``success_qps``,
/// ``in_flight``, ``avg_rt`` and ``min_rt`` (seconds, whole milliseconds)
/// and ``max_success_qps``.
#[pyclass(frozen, eq, module = "ratekeeper._ratekeeper", name = "SystemStats")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PySystemStats(SystemStats);

#[pymethods]
impl PySystemStats {
    /// Requests admitted over the last second.
    #[getter]
    fn pass_qps(&self) -> f64 {
        self.0.pass_qps
    }

    /// Requests refused over the last second.
    #[getter]
    fn block_qps(&self) -> f64 {
        self.0.block_qps
    }

    /// Requests completed over the last second.
    #[getter]
    fn success_qps(&self) -> f64 {
        self.0.success_qps
    }

    /// Requests in flight.
    #[getter]
    fn in_flight(&self) -> u64 {
        self.0.in_flight
    }

    /// The average round trip of the last second's completions, in
    /// seconds (0.0 when none).
    #[getter]
    fn avg_rt(&self) -> f64 {
        self.0.avg_rt_millis / 1000.0
    }

    /// The lowest round trip of the last second, in seconds (5.0 when
    /// none).
    #[getter]
    fn min_rt(&self) -> f64 {
        self.0.min_rt_millis as f64 / 1000.0
    }

    /// The most completions in one bucket, as a rate per second.
    #[getter]
    fn max_success_qps(&self) -> f64 {
        self.0.max_success_qps
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "SystemStats(pass_qps={}, block_qps={}, success_qps={}, in_flight={}, avg_rt={}, min_rt={}, \
             max_success_qps={})",
            float_repr(py, self.0.pass_qps)?,
            float_repr(py, self.0.block_qps)?,
            float_repr(py, self.0.success_qps)?,
            self.0.in_flight,
            float_repr(py, self.avg_rt())?,
            float_repr(py, self.min_rt())?,
            float_repr(py, self.0.max_success_qps)?
        ))
    }
}

/// Adds the classes of this module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyManualLoad>()?;
    module.add_class::<PySystemLoad>()?;
    module.add_class::<PyBbr>()?;
    module.add_class::<PyLoadPermitHandle>()?;
    module.add_class::<PyBbrStats>()?;
    module.add_class::<PySystemGuard>()?;
    module.add_class::<PySystemStats>()?;
    Ok(())
}
