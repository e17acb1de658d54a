//! Load signals: how busy the machine is, for the limiters that follow the
//! system's load (issue 23: Kratos' BBR, Sentinel's system rule).
//!
//! The core's load-driven state machines take a load *value* on every call
//! and never read a file; this module owns where those values come from:
//!
//! * [`LoadSignal`], the trait a limiter reads: the CPU usage of the
//!   process's share of the machine and the 1-minute load average, each
//!   `None` while unknown. Implement it to feed your own figures.
//! * [`ManualLoad`], the manual signal beside [`ManualClock`](crate::ManualClock):
//!   it says what it is told, so every test of a load-driven limiter is
//!   deterministic.
//! * [`SystemLoad`], the real signal: a background thread that samples the
//!   CPU counters every [`interval`](SamplerOptions::interval) and smooths
//!   them as Kratos does, and reads `/proc/loadavg`.
//! * [`CpuReader`] and [`CpuCounters`], the file readings underneath, with
//!   a root path so that tests can point them at a copy of a machine's
//!   files (`tests/fixtures/cgroup/`).
//!
//! # Sources of semantics
//!
//! * What each file holds: the Linux kernel's documentation —
//!   `Documentation/admin-guide/cgroup-v2.rst` (`cpu.stat`'s `usage_usec`,
//!   `cpu.max`, `cpuset.cpus.effective`), `cgroup-v1/cpuacct.rst`
//!   (`cpuacct.usage`), `cgroup-v1/cpusets.rst` (`cpuset.cpus`),
//!   `scheduler/sched-bwc.rst` (`cpu.cfs_quota_us`, `cpu.cfs_period_us`:
//!   quota over period is the number of CPUs a group may use) — and the
//!   manual pages proc(5) (`/proc/stat`, `/proc/loadavg`,
//!   `/proc/self/mountinfo`) and cgroups(7) (`/proc/self/cgroup`).
//! * How a limiter samples and smooths CPU: go-kratos/aegis,
//!   `internal/cpu` (a 500 ms sampling interval; the cgroup's CPU time
//!   over the CPUs it may use, the smaller of its cpuset and its quota) and
//!   `ratelimit/bbr` (an exponential moving average with a decay of 0.95).
//!   Where this module differs from Kratos it says so: [`CpuCounters::usage_since`]
//!   (what the CPU time is divided by) and [`Smoother`] (where the average
//!   starts).
//!
//! Readings are plain numbers behind one atomic word each: reading a
//! signal on a limiter's hot path is a load, never a lock or a file read.

mod cgroup;
mod cpu;
mod manual;
mod reading;
mod sampler;

use std::sync::Arc;

use ratekeeper_core::{Argument, Error};

pub use cpu::{read_load_average, CpuCounters, CpuReader, CpuSource, LoadError};
pub use manual::ManualLoad;
pub use sampler::{SamplerOptions, Smoother, SystemLoad};

/// Where a load-driven limiter learns how busy the machine is.
///
/// Both readings may be `None`: a sampler that has not finished its first
/// interval, or a machine without the files, knows nothing yet. A limiter
/// decides what an unknown reading means (the core's `Load` treats it as
/// 0.0: no load, so nothing is shed on a guess).
///
/// Implementations are read on every decision: make both methods cheap (an
/// atomic load), and do any measuring elsewhere, as [`SystemLoad`] does on
/// its own thread.
pub trait LoadSignal: Send + Sync + std::fmt::Debug {
    /// The fraction, from 0.0 to 1.0, of the CPU the process may use that is
    /// in use: of its cgroup's quota when it has one, else of all the
    /// host's CPUs. `None` while not known.
    fn cpu_usage(&self) -> Option<f64>;

    /// The system's 1-minute load average (the first figure of
    /// `/proc/loadavg`: runnable and uninterruptible tasks, averaged).
    /// `None` while not known.
    fn load_average(&self) -> Option<f64>;
}

/// One signal shared by several limiters (and the test that moves it).
impl<T: LoadSignal + ?Sized> LoadSignal for Arc<T> {
    #[inline]
    fn cpu_usage(&self) -> Option<f64> {
        (**self).cpu_usage()
    }

    #[inline]
    fn load_average(&self) -> Option<f64> {
        (**self).load_average()
    }
}

/// Checks a CPU usage: a fraction from 0.0 to 1.0 (`-0.0` becomes `0.0`, so
/// that no reader sees a negative zero).
pub(crate) fn check_cpu_usage(value: f64) -> Result<f64, Error> {
    if (0.0..=1.0).contains(&value) {
        Ok(value + 0.0)
    } else {
        Err(invalid_cpu_usage(value))
    }
}

/// Checks a load average: finite and not negative.
pub(crate) fn check_load_average(value: f64) -> Result<f64, Error> {
    if value.is_finite() && value >= 0.0 {
        Ok(value + 0.0)
    } else {
        Err(invalid_load_average(value))
    }
}

/// The error for a CPU usage outside 0.0..=1.0.
fn invalid_cpu_usage(value: f64) -> Error {
    Error::invalid_float(Argument::CpuUsage, value)
}

/// The error for a load average that is negative, NaN or infinite.
fn invalid_load_average(value: f64) -> Error {
    Error::invalid_float(Argument::LoadAverage, value)
}

/// The error for a sampling interval under 1 ms or over `i64::MAX` µs
/// (`micros` is the interval in whole microseconds, saturated).
pub(crate) fn invalid_sample_interval(micros: u64) -> Error {
    Error::invalid_uint(Argument::SampleInterval, micros)
}

/// The error for a smoothing decay outside 0.0..1.0.
pub(crate) fn invalid_decay(value: f64) -> Error {
    Error::invalid_float(Argument::Decay, value)
}
