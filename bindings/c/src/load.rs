//! The load-driven limiters: [`rk_load`], where they read the system's
//! load (a manual signal for tests, or the process's sampler of `/proc`
//! and the cgroup files); [`rk_bbr`], Kratos' BBR, and
//! [`rk_system_guard`], Sentinel's system rule, through the std layer's
//! `Bbr<AnyClock>` and `SystemGuard<AnyClock>`; and their permits.
//!
//! One handle type, `rk_load`, stands for every kind of signal, so that a
//! limiter's constructor takes one parameter whatever its source; only the
//! setters are particular to a kind (`rk_manual_load_*`), and refuse a
//! system signal with `RK_INVALID_ARGUMENT` naming `load`. A limiter holds
//! its signal's reference, so a signal may be freed before its limiters.
//!
//! Permits are heap handles, as the concurrency limiter's: each holds a
//! reference to its limiter, is released exactly once
//! (`rk_bbr_permit_release()`, `rk_system_permit_release()`), and a
//! forgotten one is a leak the tools report.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::load::{LoadSignal, ManualLoad, SamplerOptions, SystemLoad};
use ratekeeper::{
    unsigned_from_i64, AnyClock, Argument, Bbr, BbrConfig, BbrPermit, BbrStats, Error, SystemGuard, SystemPermit,
    SystemRule, SystemStats, SystemThreshold, Value,
};

use crate::boundary::{free_arc, free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

/// Where a load-driven limiter reads the CPU usage and the load average:
/// a manual signal (`rk_manual_load_new()`, set by the caller, for tests),
/// a sampler of its own (`rk_system_load_new()`) or the process-wide one
/// (`rk_system_load_shared()`). Free it with `rk_load_free()`; limiters
/// made with it keep it alive.
///
/// Thread safety: as `rk_limiter`; only `rk_load_free()` must not race
/// with other calls on the handle.
#[derive(Debug)]
pub struct rk_load {
    signal: Arc<dyn LoadSignal>,
    /// The same signal when it is a manual one, which the setters need.
    manual: Option<Arc<ManualLoad>>,
}

impl rk_load {
    fn manual(&self) -> Result<&ManualLoad, Failure> {
        self.manual.as_deref().ok_or_else(|| Failure::Malformed {
            argument: "load",
            problem: String::from("must be a manual load signal (from rk_manual_load_new), not a sampler"),
        })
    }

    /// The signal a limiter made with `load` reads: that one, or the
    /// process-wide sampler when `load` is NULL.
    fn signal(load: Option<&rk_load>) -> Arc<dyn LoadSignal> {
        match load {
            Some(load) => Arc::clone(&load.signal),
            None => SystemLoad::shared(),
        }
    }
}

fn new_load(signal: Arc<dyn LoadSignal>, manual: Option<Arc<ManualLoad>>, out: Out<*mut rk_load>) {
    out.write(Box::into_raw(Box::new(rk_load { signal, manual })));
}

/// Creates a manual load signal, both readings unknown (a limiter reads
/// an unknown value as 0.0), in `*out_load`. Free it with `rk_load_free()`.
///
/// Returns `RK_NULL_POINTER` when `out_load` is NULL.
///
/// # Safety
/// `out_load` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_load_new(out_load: *mut *mut rk_load) -> rk_status {
    guard("rk_manual_load_new", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_load, "out_load") }?;
        let manual = Arc::new(ManualLoad::new());
        new_load(manual.clone(), Some(manual), out);
        Ok(())
    })
}

/// Creates a sampler of this process's CPU usage (its cgroup's quota, or
/// the host's CPUs) and of the load average, read from `/proc` and the
/// cgroup files every `interval_micros` on a thread of its own and
/// smoothed by `decay` as Kratos does, in `*out_load`. The thread stops
/// when the handle and the limiters made with it are freed.
///
/// `interval_micros`: at least 1000 (Kratos samples every 500 ms);
/// `decay`: the weight of the previous smoothed value, at least 0.0 and
/// below 1.0 (Kratos: 0.95).
///
/// Returns `RK_INVALID_ARGUMENT` when `interval_micros` or `decay` is out
/// of range; `RK_NULL_POINTER` when `out_load` is NULL.
///
/// # Safety
/// `out_load` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_system_load_new(
    interval_micros: i64,
    decay: f64,
    out_load: *mut *mut rk_load,
) -> rk_status {
    guard("rk_system_load_new", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_load, "out_load") }?;
        let interval = Duration::from_micros(unsigned(Argument::SampleInterval, interval_micros)?);
        let options = SamplerOptions { interval, decay, ..SamplerOptions::default() };
        let sampler = SystemLoad::with_options(options).map_err(Failure::from)?;
        new_load(Arc::new(sampler), None, out);
        Ok(())
    })
}

/// The process-wide sampler (started on first use, with the default
/// interval and decay, and never stopped), in `*out_load`: what a limiter
/// made with a NULL `load` reads. Free the handle with `rk_load_free()`;
/// the sampler runs on.
///
/// Returns `RK_NULL_POINTER` when `out_load` is NULL.
///
/// # Safety
/// `out_load` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_system_load_shared(out_load: *mut *mut rk_load) -> rk_status {
    guard("rk_system_load_shared", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_load, "out_load") }?;
        new_load(SystemLoad::shared(), None, out);
        Ok(())
    })
}

/// Releases the caller's handle of a load signal; limiters made with it
/// keep reading it. `NULL` does nothing.
///
/// # Safety
/// `load` is NULL or a signal from `rk_manual_load_new()`,
/// `rk_system_load_new()` or `rk_system_load_shared()` that has not been
/// freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_load_free(load: *mut rk_load) {
    // SAFETY: the caller's contract: NULL or a live box from new_load that
    // no other call is using.
    unsafe { free_box("rk_load_free", load) }
}

/// The signal's readings now: the CPU usage (0.0 to 1.0) in
/// `*out_cpu_usage` and the one-minute load average in
/// `*out_load_average`, each NaN while unknown.
///
/// Returns `RK_NULL_POINTER` when `load`, `out_cpu_usage` or
/// `out_load_average` is NULL.
///
/// # Safety
/// `load` is NULL or a live signal; the out-pointers are NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_load_read(
    load: *const rk_load,
    out_cpu_usage: *mut f64,
    out_load_average: *mut f64,
) -> rk_status {
    guard("rk_load_read", || {
        // SAFETY: the caller's contract.
        let (load, cpu, average) = unsafe {
            (
                handle(load, "load")?,
                Out::required(out_cpu_usage, "out_cpu_usage")?,
                Out::required(out_load_average, "out_load_average")?,
            )
        };
        cpu.write(load.signal.cpu_usage().unwrap_or(f64::NAN));
        average.write(load.signal.load_average().unwrap_or(f64::NAN));
        Ok(())
    })
}

/// Sets a manual signal's CPU usage, 0.0 to 1.0 of what the process may
/// use.
///
/// Returns `RK_INVALID_ARGUMENT` naming `cpu_usage` when it is out of
/// range, or naming `load` when it is not a manual signal;
/// `RK_NULL_POINTER` when `load` is NULL.
///
/// # Safety
/// `load` is NULL or a live signal.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_load_set_cpu_usage(load: *const rk_load, cpu_usage: f64) -> rk_status {
    guard("rk_manual_load_set_cpu_usage", || {
        // SAFETY: the caller's contract.
        let load = unsafe { handle(load, "load") }?;
        Ok(load.manual()?.set_cpu_usage(cpu_usage)?)
    })
}

/// Sets a manual signal's one-minute load average (finite, not negative).
///
/// Returns `RK_INVALID_ARGUMENT` naming `load_average` when it is out of
/// range, or naming `load` when it is not a manual signal;
/// `RK_NULL_POINTER` when `load` is NULL.
///
/// # Safety
/// `load` is NULL or a live signal.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_load_set_load_average(load: *const rk_load, load_average: f64) -> rk_status {
    guard("rk_manual_load_set_load_average", || {
        // SAFETY: the caller's contract.
        let load = unsafe { handle(load, "load") }?;
        Ok(load.manual()?.set_load_average(load_average)?)
    })
}

/// Makes both readings of a manual signal unknown again.
///
/// Returns `RK_INVALID_ARGUMENT` naming `load` when it is not a manual
/// signal; `RK_NULL_POINTER` when `load` is NULL.
///
/// # Safety
/// `load` is NULL or a live signal.
#[no_mangle]
pub unsafe extern "C" fn rk_manual_load_clear(load: *const rk_load) -> rk_status {
    guard("rk_manual_load_clear", || {
        // SAFETY: the caller's contract.
        let load = unsafe { handle(load, "load") }?;
        load.manual()?.clear();
        Ok(())
    })
}

/// A count or a duration from C, which must not be negative.
fn unsigned(argument: Argument, value: i64) -> Result<u64, Failure> {
    unsigned_from_i64(argument, value).map_err(Failure::from)
}

/// Kratos BBR's parameters, for `rk_bbr_new()`. Start from
/// `rk_bbr_options_default()` and change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_bbr_options {
    /// The statistics' window (Kratos' default 10 s), at least 1 µs.
    pub window_micros: i64,
    /// How many buckets the window is split into (default 100): 1 to 128,
    /// and at most one per microsecond of the window.
    pub buckets: i64,
    /// The CPU usage, 0.0 to 1.0, at or above which BBR sheds (default
    /// 0.8, Kratos' 800 permille).
    pub cpu_threshold: f64,
    /// How long after shedding began BBR keeps shedding although the CPU
    /// is below its threshold (Kratos: 1 s); not negative.
    pub cool_down_micros: i64,
}

impl rk_bbr_options {
    fn to_config(self) -> Result<BbrConfig, Failure> {
        let buckets = u32::try_from(self.buckets)
            .map_err(|_| Failure::from(Error::invalid_int(Argument::Buckets, self.buckets)))?;
        Ok(BbrConfig {
            window_micros: self.window_micros,
            buckets,
            cpu_threshold: self.cpu_threshold,
            cool_down_micros: self.cool_down_micros,
        })
    }
}

/// What BBR sees now, from `rk_bbr_stats()`: Kratos' `Stat` (whose name it
/// keeps, as `rk_bbr_stats` is the function's).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_bbr_stat {
    /// The CPU usage read now (0.0 to 1.0; 0.0 when unknown).
    pub cpu_usage: f64,
    /// Permits taken and not yet released.
    pub in_flight: u64,
    /// The most requests completed in one settled bucket (at least 1).
    pub max_pass: u64,
    /// The lowest average round trip of a settled bucket, in whole
    /// milliseconds (at least 1).
    pub min_rt_millis: u64,
    /// The capacity: `max_pass × min_rt × buckets per second / 1000`.
    pub max_in_flight: u64,
}

impl From<BbrStats> for rk_bbr_stat {
    fn from(s: BbrStats) -> Self {
        rk_bbr_stat {
            cpu_usage: s.cpu_usage,
            in_flight: s.in_flight,
            max_pass: s.max_pass,
            min_rt_millis: s.min_rt_millis,
            max_in_flight: s.max_in_flight,
        }
    }
}

/// Kratos' BBR limiter (go-kratos/aegis `ratelimit/bbr`): refuses a
/// request when more are in flight than the service completes (its
/// `max_pass × min_rt` over a rolling window), but only while the CPU is
/// at or above the threshold or within the cool-down after shedding
/// began. An admitted request holds an `rk_bbr_permit` until it ends.
///
/// Thread safety: as `rk_limiter`; only `rk_bbr_free()` must not race
/// with other calls on the handle.
#[derive(Debug)]
pub struct rk_bbr {
    bbr: Bbr<AnyClock>,
}

/// A request's permit from `rk_bbr_try_acquire()`: release it exactly once
/// with `rk_bbr_permit_release()`, which records its round trip and frees
/// it. It stays valid after `rk_bbr_free()`.
#[derive(Debug)]
pub struct rk_bbr_permit {
    bbr: Arc<rk_bbr>,
    permit: BbrPermit,
}

/// Kratos' defaults, in `*out_options`: a window of 10 s in 100 buckets,
/// CPU threshold 0.8, cool-down 1 s.
///
/// Returns `RK_NULL_POINTER` when `out_options` is NULL.
///
/// # Safety
/// `out_options` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_options_default(out_options: *mut rk_bbr_options) -> rk_status {
    guard("rk_bbr_options_default", || {
        // SAFETY: the caller's contract.
        let out = unsafe { Out::required(out_options, "out_options") }?;
        let d = BbrConfig::default();
        out.write(rk_bbr_options {
            window_micros: d.window_micros,
            buckets: i64::from(d.buckets),
            cpu_threshold: d.cpu_threshold,
            cool_down_micros: d.cool_down_micros,
        });
        Ok(())
    })
}

/// Creates a BBR limiter from `*options`, reading `load` (NULL: the
/// process-wide sampler, as `rk_system_load_shared()`) and `clock` (a
/// manual clock, or NULL for the monotonic clock), in `*out_bbr`. Free it
/// with `rk_bbr_free()`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when an option is out
/// of range (see `rk_bbr_options`); `RK_NULL_POINTER` when `options` or
/// `out_bbr` is NULL.
///
/// # Safety
/// `options` is NULL or valid for reading; `load` and `clock` are NULL or
/// live; `out_bbr` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_new(
    options: *const rk_bbr_options,
    load: *const rk_load,
    clock: *const rk_manual_clock,
    out_bbr: *mut *mut rk_bbr,
) -> rk_status {
    guard("rk_bbr_new", || {
        // SAFETY: the caller's contract.
        let (options, load, clock, out) =
            unsafe { (handle(options, "options")?, load.as_ref(), clock.as_ref(), Out::required(out_bbr, "out_bbr")?) };
        let config = options.to_config()?;
        let bbr =
            Bbr::with_clock(config, rk_load::signal(load), rk_manual_clock::any_clock(clock)).map_err(Failure::from)?;
        out.write(Arc::into_raw(Arc::new(rk_bbr { bbr })).cast_mut());
        Ok(())
    })
}

/// Frees the caller's handle of a BBR limiter. Permits still out keep it
/// alive until they are released. `NULL` does nothing.
///
/// # Safety
/// `bbr` is NULL or a limiter from `rk_bbr_new()` that has not been freed,
/// and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_free(bbr: *mut rk_bbr) {
    // SAFETY: the caller's contract: NULL or the caller's reference, from
    // Arc::into_raw in rk_bbr_new, that no other call is using.
    unsafe { free_arc("rk_bbr_free", bbr) }
}

/// A new reference to the `Arc` behind a live handle made by
/// `Arc::into_raw`, for a permit.
///
/// # Safety
/// `ptr` came from `Arc::into_raw` and its reference is live.
unsafe fn share<T>(ptr: *const T) -> Arc<T> {
    // SAFETY: the caller's contract.
    unsafe {
        Arc::increment_strong_count(ptr);
        Arc::from_raw(ptr)
    }
}

/// Admits a request unless BBR sheds it (Kratos' `Allow`). Stores a new
/// permit in `*out_permit` when admitted — release it with
/// `rk_bbr_permit_release()` when the request ends — and NULL when
/// refused. The decision goes to `*out_decision` unless it is NULL (a
/// refusal's `retry_after_micros` is 0).
///
/// Returns `RK_NULL_POINTER`, taking nothing, when `bbr` or `out_permit`
/// is NULL.
///
/// # Safety
/// `bbr` is NULL or a live limiter; `out_decision` is NULL or valid for a
/// write; `out_permit` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_try_acquire(
    bbr: *const rk_bbr,
    out_decision: *mut rk_decision,
    out_permit: *mut *mut rk_bbr_permit,
) -> rk_status {
    guard("rk_bbr_try_acquire", || {
        // SAFETY: the caller's contract.
        let (bbr_ref, out_decision, out_permit) =
            unsafe { (handle(bbr, "bbr")?, Out::optional(out_decision), Out::required(out_permit, "out_permit")?) };
        let (decision, permit) = bbr_ref.bbr.try_acquire();
        let permit = match permit {
            // SAFETY: `bbr` came from Arc::into_raw (rk_bbr_new) and is live.
            Some(permit) => Box::into_raw(Box::new(rk_bbr_permit { bbr: unsafe { share(bbr) }, permit })),
            None => core::ptr::null_mut(),
        };
        if let Some(out) = out_decision {
            out.write(decision.into());
        }
        out_permit.write(permit);
        Ok(())
    })
}

/// Releases a permit and frees it: its request has ended, and its round
/// trip (measured now) goes into BBR's statistics. Do not use the permit
/// again.
///
/// Returns `RK_NULL_POINTER` when `permit` is NULL.
///
/// # Safety
/// `permit` is NULL or a permit from `rk_bbr_try_acquire()` that has not
/// been released, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_permit_release(permit: *mut rk_bbr_permit) -> rk_status {
    guard("rk_bbr_permit_release", || {
        // SAFETY: the caller's contract.
        unsafe { handle(permit.cast_const(), "permit") }?;
        // SAFETY: the caller's contract: a live box from try_acquire, now
        // taken back (the permit is consumed even if what follows panics).
        let permit = unsafe { Box::from_raw(permit) };
        permit.bbr.bbr.release(permit.permit);
        Ok(())
    })
}

/// What BBR sees now, in `*out_stats`.
///
/// Returns `RK_NULL_POINTER` when `bbr` or `out_stats` is NULL.
///
/// # Safety
/// `bbr` is NULL or a live limiter; `out_stats` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_bbr_stats(bbr: *const rk_bbr, out_stats: *mut rk_bbr_stat) -> rk_status {
    guard("rk_bbr_stats", || {
        // SAFETY: the caller's contract.
        let (bbr, out) = unsafe { (handle(bbr, "bbr")?, Out::required(out_stats, "out_stats")?) };
        out.write(bbr.bbr.stats().into());
        Ok(())
    })
}

/// Which threshold of a system rule refused a request: one of the
/// `RK_SYSTEM_THRESHOLD_*` constants (Sentinel's limit types).
pub type rk_system_threshold = u32;

/// None: the request was admitted.
pub const RK_SYSTEM_THRESHOLD_NONE: rk_system_threshold = 0;
/// Entry QPS (`"qps"`).
pub const RK_SYSTEM_THRESHOLD_QPS: rk_system_threshold = 1;
/// Requests in flight (`"thread"`).
pub const RK_SYSTEM_THRESHOLD_THREAD: rk_system_threshold = 2;
/// Average round trip (`"rt"`).
pub const RK_SYSTEM_THRESHOLD_RT: rk_system_threshold = 3;
/// System load, with the BBR check (`"load"`).
pub const RK_SYSTEM_THRESHOLD_LOAD: rk_system_threshold = 4;
/// CPU usage (`"cpu"`).
pub const RK_SYSTEM_THRESHOLD_CPU: rk_system_threshold = 5;

fn threshold_to_c(threshold: SystemThreshold) -> rk_system_threshold {
    match threshold {
        SystemThreshold::Qps => RK_SYSTEM_THRESHOLD_QPS,
        SystemThreshold::Thread => RK_SYSTEM_THRESHOLD_THREAD,
        SystemThreshold::Rt => RK_SYSTEM_THRESHOLD_RT,
        SystemThreshold::Load => RK_SYSTEM_THRESHOLD_LOAD,
        SystemThreshold::Cpu => RK_SYSTEM_THRESHOLD_CPU,
    }
}

/// A threshold's name: `"qps"`, `"thread"`, `"rt"`, `"load"` or `"cpu"`
/// (Sentinel's, as the vectors and the other languages spell it), or NULL
/// for `RK_SYSTEM_THRESHOLD_NONE` and any value that is not an
/// `RK_SYSTEM_THRESHOLD_*`.
///
/// Never fails; the string is static and must not be freed.
#[no_mangle]
pub extern "C" fn rk_system_threshold_name(threshold: rk_system_threshold) -> *const core::ffi::c_char {
    std::panic::catch_unwind(|| match threshold {
        RK_SYSTEM_THRESHOLD_QPS => c"qps".as_ptr(),
        RK_SYSTEM_THRESHOLD_THREAD => c"thread".as_ptr(),
        RK_SYSTEM_THRESHOLD_RT => c"rt".as_ptr(),
        RK_SYSTEM_THRESHOLD_LOAD => c"load".as_ptr(),
        RK_SYSTEM_THRESHOLD_CPU => c"cpu".as_ptr(),
        _ => core::ptr::null(),
    })
    .unwrap_or(core::ptr::null())
}

/// Sentinel's system rule: five thresholds, each checked only when its
/// `has_` flag is set (so a zeroed struct, `rk_system_rule rule = {0};`,
/// sets none and admits everything).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct rk_system_rule {
    /// Whether `qps` is checked.
    pub has_qps: bool,
    /// Admitted requests per second: finite, not negative.
    pub qps: f64,
    /// Whether `max_thread` is checked.
    pub has_max_thread: bool,
    /// Requests in flight, not negative (Sentinel admits `max_thread + 1`
    /// at once: the count before the request is compared).
    pub max_thread: i64,
    /// Whether `avg_rt_micros` is checked.
    pub has_avg_rt_micros: bool,
    /// The average round trip of the last second's completions, in
    /// microseconds, not negative.
    pub avg_rt_micros: i64,
    /// Whether `highest_system_load` is checked.
    pub has_highest_system_load: bool,
    /// The one-minute load average, finite and not negative; refuses only
    /// when BBR's check fails too.
    pub highest_system_load: f64,
    /// Whether `highest_cpu_usage` is checked.
    pub has_highest_cpu_usage: bool,
    /// The CPU usage, 0.0 to 1.0.
    pub highest_cpu_usage: f64,
}

impl rk_system_rule {
    fn to_rule(self) -> Result<SystemRule, Failure> {
        Ok(SystemRule {
            qps: self.has_qps.then_some(self.qps),
            max_thread: if self.has_max_thread { Some(unsigned(Argument::MaxThread, self.max_thread)?) } else { None },
            avg_rt_micros: self.has_avg_rt_micros.then_some(self.avg_rt_micros),
            highest_system_load: self.has_highest_system_load.then_some(self.highest_system_load),
            highest_cpu_usage: self.has_highest_cpu_usage.then_some(self.highest_cpu_usage),
        })
    }

    fn from_rule(rule: SystemRule) -> Self {
        rk_system_rule {
            has_qps: rule.qps.is_some(),
            qps: rule.qps.unwrap_or(0.0),
            has_max_thread: rule.max_thread.is_some(),
            max_thread: rule.max_thread.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX)),
            has_avg_rt_micros: rule.avg_rt_micros.is_some(),
            avg_rt_micros: rule.avg_rt_micros.unwrap_or(0),
            has_highest_system_load: rule.highest_system_load.is_some(),
            highest_system_load: rule.highest_system_load.unwrap_or(0.0),
            has_highest_cpu_usage: rule.highest_cpu_usage.is_some(),
            highest_cpu_usage: rule.highest_cpu_usage.unwrap_or(0.0),
        }
    }
}

/// A system guard's entry statistics (Sentinel's entry node), from
/// `rk_system_guard_stats()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct rk_system_stats {
    /// Requests admitted over the last second.
    pub pass_qps: f64,
    /// Requests refused over the last second.
    pub block_qps: f64,
    /// Requests completed over the last second.
    pub success_qps: f64,
    /// Requests in flight.
    pub in_flight: u64,
    /// The average round trip of the last second's completions, in
    /// milliseconds; 0 when none.
    pub avg_rt_millis: f64,
    /// The lowest round trip of the last second, in whole milliseconds
    /// (5000 when none).
    pub min_rt_millis: u64,
    /// The most completions in one bucket, as a rate per second.
    pub max_success_qps: f64,
}

impl From<SystemStats> for rk_system_stats {
    fn from(s: SystemStats) -> Self {
        rk_system_stats {
            pass_qps: s.pass_qps,
            block_qps: s.block_qps,
            success_qps: s.success_qps,
            in_flight: s.in_flight,
            avg_rt_millis: s.avg_rt_millis,
            min_rt_millis: s.min_rt_millis,
            max_success_qps: s.max_success_qps,
        }
    }
}

/// Sentinel's system rule (`SystemRuleManager.checkSystem`) at the
/// entrance of a whole service: refuses new requests while the service
/// exceeds a threshold of its `rk_system_rule`, and says which.
///
/// Thread safety: as `rk_limiter`; only `rk_system_guard_free()` must not
/// race with other calls on the handle.
#[derive(Debug)]
pub struct rk_system_guard {
    guard: SystemGuard<AnyClock>,
}

/// A request's permit from `rk_system_guard_try_acquire()`: release it
/// exactly once with `rk_system_permit_release()`, which records its round
/// trip and frees it. It stays valid after `rk_system_guard_free()`.
#[derive(Debug)]
pub struct rk_system_permit {
    guard: Arc<rk_system_guard>,
    permit: SystemPermit,
}

/// Creates a system guard with `*rule`, reading `load` (NULL: the
/// process-wide sampler) and `clock` (NULL: the monotonic clock), in
/// `*out_guard`. Free it with `rk_system_guard_free()`.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, when a set threshold
/// is out of range (see `rk_system_rule`); `RK_NULL_POINTER` when `rule`
/// or `out_guard` is NULL.
///
/// # Safety
/// `rule` is NULL or valid for reading; `load` and `clock` are NULL or
/// live; `out_guard` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_new(
    rule: *const rk_system_rule,
    load: *const rk_load,
    clock: *const rk_manual_clock,
    out_guard: *mut *mut rk_system_guard,
) -> rk_status {
    guard("rk_system_guard_new", || {
        // SAFETY: the caller's contract.
        let (rule, load, clock, out) =
            unsafe { (handle(rule, "rule")?, load.as_ref(), clock.as_ref(), Out::required(out_guard, "out_guard")?) };
        let rule = rule.to_rule()?;
        let guard = SystemGuard::with_clock(rule, rk_load::signal(load), rk_manual_clock::any_clock(clock))
            .map_err(Failure::from)?;
        out.write(Arc::into_raw(Arc::new(rk_system_guard { guard })).cast_mut());
        Ok(())
    })
}

/// Frees the caller's handle of a system guard. Permits still out keep it
/// alive until they are released. `NULL` does nothing.
///
/// # Safety
/// `guard` is NULL or a guard from `rk_system_guard_new()` that has not
/// been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_free(guard: *mut rk_system_guard) {
    // SAFETY: the caller's contract: NULL or the caller's reference, from
    // Arc::into_raw in rk_system_guard_new, that no other call is using.
    unsafe { free_arc("rk_system_guard_free", guard) }
}

/// Admits a request of `count` (Sentinel's `acquireCount`, usually 1)
/// unless a threshold refuses it. Stores a new permit in `*out_permit`
/// when admitted — release it with `rk_system_permit_release()` — and
/// NULL when refused. The decision goes to `*out_decision`, and the
/// threshold that refused (`RK_SYSTEM_THRESHOLD_NONE` when admitted) to
/// `*out_threshold`, unless they are NULL.
///
/// Returns `RK_INVALID_ARGUMENT` when `count` is negative;
/// `RK_NULL_POINTER`, taking nothing, when `guard` or `out_permit` is
/// NULL.
///
/// # Safety
/// `guard` is NULL or a live guard; `out_decision` and `out_threshold`
/// are NULL or valid for a write; `out_permit` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_try_acquire(
    guard: *const rk_system_guard,
    count: i64,
    out_decision: *mut rk_decision,
    out_permit: *mut *mut rk_system_permit,
    out_threshold: *mut rk_system_threshold,
) -> rk_status {
    crate::boundary::guard("rk_system_guard_try_acquire", || {
        // SAFETY: the caller's contract.
        let (guard_ref, out_decision, out_permit, out_threshold) = unsafe {
            (
                handle(guard, "guard")?,
                Out::optional(out_decision),
                Out::required(out_permit, "out_permit")?,
                Out::optional(out_threshold),
            )
        };
        let count = unsigned(Argument::Cost, count).map_err(|_| Failure::Invalid {
            argument: "count",
            value: Value::Int(count),
            requirement: Argument::Cost.requirement(),
        })?;
        let (decision, answer) = guard_ref.guard.try_acquire(count);
        let (permit, threshold) = match answer {
            Ok(permit) => {
                // SAFETY: `guard` came from Arc::into_raw (rk_system_guard_new)
                // and is live.
                let guard = unsafe { share(guard) };
                (Box::into_raw(Box::new(rk_system_permit { guard, permit })), RK_SYSTEM_THRESHOLD_NONE)
            }
            Err(threshold) => (core::ptr::null_mut(), threshold_to_c(threshold)),
        };
        if let Some(out) = out_decision {
            out.write(decision.into());
        }
        if let Some(out) = out_threshold {
            out.write(threshold);
        }
        out_permit.write(permit);
        Ok(())
    })
}

/// Releases a permit and frees it: its request has ended, and its round
/// trip (measured now) goes into the guard's statistics. Do not use the
/// permit again.
///
/// Returns `RK_NULL_POINTER` when `permit` is NULL.
///
/// # Safety
/// `permit` is NULL or a permit from `rk_system_guard_try_acquire()` that
/// has not been released, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_system_permit_release(permit: *mut rk_system_permit) -> rk_status {
    guard("rk_system_permit_release", || {
        // SAFETY: the caller's contract.
        unsafe { handle(permit.cast_const(), "permit") }?;
        // SAFETY: the caller's contract: a live box from try_acquire, now
        // taken back (the permit is consumed even if what follows panics).
        let permit = unsafe { Box::from_raw(permit) };
        permit.guard.guard.release(permit.permit);
        Ok(())
    })
}

/// The guard's entry statistics now, in `*out_stats`.
///
/// Returns `RK_NULL_POINTER` when `guard` or `out_stats` is NULL.
///
/// # Safety
/// `guard` is NULL or a live guard; `out_stats` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_stats(
    guard: *const rk_system_guard,
    out_stats: *mut rk_system_stats,
) -> rk_status {
    crate::boundary::guard("rk_system_guard_stats", || {
        // SAFETY: the caller's contract.
        let (guard, out) = unsafe { (handle(guard, "guard")?, Out::required(out_stats, "out_stats")?) };
        out.write(guard.guard.stats().into());
        Ok(())
    })
}

/// Replaces the guard's rule with `*rule`; the statistics stay (Sentinel's
/// `loadRules`).
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field and keeping the old
/// rule, when a set threshold is out of range; `RK_NULL_POINTER` when
/// `guard` or `rule` is NULL.
///
/// # Safety
/// `guard` is NULL or a live guard; `rule` is NULL or valid for reading.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_set_rule(
    guard: *const rk_system_guard,
    rule: *const rk_system_rule,
) -> rk_status {
    crate::boundary::guard("rk_system_guard_set_rule", || {
        // SAFETY: the caller's contract.
        let (guard, rule) = unsafe { (handle(guard, "guard")?, handle(rule, "rule")?) };
        guard.guard.set_rule(rule.to_rule()?).map_err(Failure::from)
    })
}

/// The guard's rule, in `*out_rule` (the `has_` flags say which thresholds
/// are set; an unset one's value is 0).
///
/// Returns `RK_NULL_POINTER` when `guard` or `out_rule` is NULL.
///
/// # Safety
/// `guard` is NULL or a live guard; `out_rule` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_system_guard_rule(
    guard: *const rk_system_guard,
    out_rule: *mut rk_system_rule,
) -> rk_status {
    crate::boundary::guard("rk_system_guard_rule", || {
        // SAFETY: the caller's contract.
        let (guard, out) = unsafe { (handle(guard, "guard")?, Out::required(out_rule, "out_rule")?) };
        out.write(rk_system_rule::from_rule(guard.guard.rule()));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::last_argument;
    use core::ptr::{null, null_mut};

    #[test]
    fn thresholds_are_named_as_the_core_names_them() {
        for threshold in SystemThreshold::ALL {
            // SAFETY: a static NUL-terminated string.
            let name = unsafe { core::ffi::CStr::from_ptr(rk_system_threshold_name(threshold_to_c(threshold))) };
            assert_eq!(name.to_str().unwrap(), threshold.name());
        }
        assert!(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_NONE).is_null());
        assert!(rk_system_threshold_name(6).is_null());
    }

    #[test]
    fn options_and_rules_round_trip() {
        let mut o = core::mem::MaybeUninit::uninit();
        // SAFETY: a valid out-pointer, written on RK_OK.
        let o = unsafe {
            assert_eq!(rk_bbr_options_default(o.as_mut_ptr()), rk_status::RK_OK);
            o.assume_init()
        };
        assert_eq!(o.to_config().unwrap(), BbrConfig::default());
        let rule = SystemRule { max_thread: Some(3), highest_cpu_usage: Some(0.5), ..SystemRule::default() };
        assert_eq!(rk_system_rule::from_rule(rule).to_rule().unwrap(), rule);
        assert_eq!(rk_system_rule::default().to_rule().unwrap(), SystemRule::default());
    }

    #[test]
    fn a_permit_outlives_its_guard_handle() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut load = null_mut();
            assert_eq!(rk_manual_load_new(&mut load), rk_status::RK_OK);
            let rule = rk_system_rule { has_max_thread: true, max_thread: 0, ..rk_system_rule::default() };
            let mut guard = null_mut();
            assert_eq!(rk_system_guard_new(&rule, load, null(), &mut guard), rk_status::RK_OK);
            rk_load_free(load);
            let (mut permit, mut threshold) = (null_mut(), 9);
            assert_eq!(
                rk_system_guard_try_acquire(guard, 1, null_mut(), &mut permit, &mut threshold),
                rk_status::RK_OK
            );
            assert!(!permit.is_null());
            assert_eq!(threshold, RK_SYSTEM_THRESHOLD_NONE);
            let mut refused = null_mut();
            assert_eq!(
                rk_system_guard_try_acquire(guard, 1, null_mut(), &mut refused, &mut threshold),
                rk_status::RK_OK
            );
            assert!(refused.is_null());
            assert_eq!(threshold, RK_SYSTEM_THRESHOLD_THREAD);
            assert_eq!(
                rk_system_guard_try_acquire(guard, -1, null_mut(), &mut refused, null_mut()),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("count"));
            rk_system_guard_free(guard);
            assert_eq!(rk_system_permit_release(permit), rk_status::RK_OK);
        }
    }
}
