//! Child processes that burn CPU move the readings: the detected source
//! (this process's cgroup, or the host), the host's `/proc/stat`, and a
//! running `SystemLoad`.
//!
//! The children are enough spinning shells to fill every CPU the process
//! may use, in its own cgroup (children inherit it). The test must hold on
//! a quiet machine and on one that other work already saturates, so:
//!
//! * While they spin, a reading must rise by at least 0.2 over the idle
//!   one, or, when the idle reading left less room than that, reach 0.9:
//!   every allowed CPU is busy, and the reading has to say so.
//! * Each reading over the burning window must be at least 90% of the
//!   children's own share of it (their CPU time from
//!   `/proc/<pid>/schedstat` over the window times the CPUs), however
//!   little the scheduler gave them: the reading counts their work, in the
//!   right unit, over the right number of CPUs. So must the group's raw
//!   CPU time, which also may not exceed what the allowed CPUs hold.
#![cfg(target_os = "linux")]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ratekeeper::load::{CpuCounters, CpuReader};
use ratekeeper::{LoadSignal, SamplerOptions, SystemLoad};

const WINDOW: Duration = Duration::from_millis(1500);

/// Busy-looping shells, killed however the test ends.
struct Spinners(Vec<Child>);

impl Spinners {
    fn start(n: usize) -> Spinners {
        let mut spinners = Spinners(Vec::new());
        for _ in 0..n {
            let child = Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .expect("spawn sh");
            spinners.0.push(child);
        }
        spinners
    }

    /// The CPU time the children have had, in nanoseconds: the first
    /// figure of `/proc/<pid>/schedstat`.
    fn cpu_ns(&self) -> u64 {
        self.0
            .iter()
            .map(|c| {
                let text = std::fs::read_to_string(format!("/proc/{}/schedstat", c.id())).unwrap();
                text.split_whitespace().next().unwrap().parse::<u64>().unwrap()
            })
            .sum()
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What one window measured.
#[derive(Debug)]
struct Window {
    detected: f64,
    host: f64,
    /// The detected group's CPU time over the window, when it is a cgroup.
    group_ns: Option<u64>,
    cpus: f64,
    host_cpus: f64,
    children_ns: u64,
    elapsed: Duration,
}

fn measure(detected: &mut CpuReader, host: &mut CpuReader, spinners: Option<&Spinners>) -> Window {
    let children = || spinners.map_or(0, Spinners::cpu_ns);
    let (c0, d0, h0, t0) = (children(), detected.read().unwrap(), host.read().unwrap(), Instant::now());
    std::thread::sleep(WINDOW);
    let (d1, h1, elapsed, c1) = (detected.read().unwrap(), host.read().unwrap(), t0.elapsed(), children());
    let (group_ns, cpus) = match (d0, d1) {
        (CpuCounters::Cgroup { usage_ns: u0, .. }, CpuCounters::Cgroup { usage_ns: u1, cpus }) => (Some(u1 - u0), cpus),
        _ => (None, detected.allowed_cpus().unwrap()),
    };
    Window {
        detected: d1.usage_since(&d0, elapsed).unwrap(),
        host: h1.usage_since(&h0, elapsed).unwrap(),
        group_ns,
        cpus,
        host_cpus: host.allowed_cpus().unwrap(),
        children_ns: c1 - c0,
        elapsed,
    }
}

/// At least 0.2 above `idle`, or 0.9 when `idle` left less room than that.
fn rose(idle: f64, burning: f64) -> bool {
    burning >= (idle + 0.2).min(0.9)
}

#[test]
fn burning_children_move_the_reading() {
    let mut detected = CpuReader::detect("/").unwrap();
    let mut host = CpuReader::host("/").unwrap();
    let cpus = detected.allowed_cpus().unwrap();
    let n = (cpus.ceil() as usize).clamp(1, 16);
    let options = SamplerOptions { interval: Duration::from_millis(100), decay: 0.5, ..SamplerOptions::default() };
    let sampler = SystemLoad::with_options(options).unwrap();

    let idle = measure(&mut detected, &mut host, None);
    let sampled_idle = sampler.cpu_usage().expect("the sampler has read for 1.5 s");
    let spinners = Spinners::start(n);
    std::thread::sleep(Duration::from_millis(200));
    let burning = measure(&mut detected, &mut host, Some(&spinners));
    let sampled_burning = sampler.cpu_usage().unwrap();
    drop(spinners);

    println!(
        "source {} ({cpus} CPUs), {n} spinners\n\
         idle:    detected {:.3}, host {:.3}, SystemLoad {sampled_idle:.3}\n\
         burning: detected {:.3}, host {:.3}, SystemLoad {sampled_burning:.3}\n\
         burning window {:?}: group CPU {:?} ns, children's CPU {} ns",
        detected.source(),
        idle.detected,
        idle.host,
        burning.detected,
        burning.host,
        burning.elapsed,
        burning.group_ns,
        burning.children_ns,
    );
    assert!(rose(idle.detected, burning.detected), "{} source: {idle:?} -> {burning:?}", detected.source());
    assert!(rose(idle.host, burning.host), "host: {idle:?} -> {burning:?}");
    assert!(rose(sampled_idle, sampled_burning), "SystemLoad: {sampled_idle} -> {sampled_burning}");
    // The children ran (the scheduler gives a spinning task some time),
    // and each reading holds their share.
    let elapsed_ns = burning.elapsed.as_nanos() as f64;
    assert!(burning.children_ns as f64 >= 0.05 * elapsed_ns, "{burning:?}");
    let share = |cpus: f64| (burning.children_ns as f64 / (elapsed_ns * cpus)).min(1.0);
    assert!(burning.detected >= 0.9 * share(burning.cpus), "{} misses the children: {burning:?}", detected.source());
    assert!(burning.host >= 0.9 * share(burning.host_cpus), "host misses the children: {burning:?}");
    if let Some(group_ns) = burning.group_ns {
        assert!(group_ns as f64 >= 0.9 * burning.children_ns as f64, "the group missed the children: {burning:?}");
        let unclamped = group_ns as f64 / (burning.elapsed.as_nanos() as f64 * burning.cpus);
        assert!(unclamped <= 1.1, "more CPU time than {} CPUs hold: {unclamped}", burning.cpus);
    }
}
