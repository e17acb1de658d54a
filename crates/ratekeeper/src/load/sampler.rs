//! [`SystemLoad`]: the machine's load, sampled on a background thread.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratekeeper_core::Error;

use super::cpu::{parse_load_average, read_into, CpuCounters, CpuReader, CpuSource};
use super::reading::AtomicReading;
use super::{invalid_decay, invalid_sample_interval, LoadSignal};

/// How a [`SystemLoad`] samples.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerOptions {
    /// Time between two samples: at least 1 ms. Default 500 ms, Kratos'
    /// CPU sampling interval.
    pub interval: Duration,
    /// How much of the smoothed CPU usage each sample keeps: from 0.0 (no
    /// smoothing) up to, not including, 1.0. Default 0.95, Kratos' BBR
    /// decay. See [`Smoother`].
    pub decay: f64,
    /// The directory the machine's files are read under: `/`, or a copy of
    /// a machine's `proc/` and `sys/fs/cgroup/` for a test.
    pub root: PathBuf,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions { interval: Duration::from_millis(500), decay: 0.95, root: PathBuf::from("/") }
    }
}

impl SamplerOptions {
    /// Checks the options, and returns the smoother they ask for.
    fn check(&self) -> Result<Smoother, Error> {
        let micros = u64::try_from(self.interval.as_micros()).unwrap_or(u64::MAX);
        if !(1000..=i64::MAX as u64).contains(&micros) {
            return Err(invalid_sample_interval(micros));
        }
        Smoother::new(self.decay)
    }
}

/// Kratos' exponential moving average of CPU usage, `smoothed = previous ×
/// decay + reading × (1 − decay)` (go-kratos/aegis `ratelimit/bbr`,
/// `cpuproc`), with one deliberate difference: it starts from the first
/// reading, not from 0.
///
/// Kratos' average starts at 0, so a fresh process under full load reads
/// `1 − 0.95ⁿ` after `n` samples of 500 ms: 0.40 after 5 s, 0.64 after
/// 10 s, 0.79 after 15 s, 0.88 after 20 s. A BBR limiter with Kratos'
/// default threshold of 80% does not see an overload for about 16 s after
/// a start (a restart under load, the usual moment of overload). Starting
/// from the first reading, the average is right from the first sample and
/// smooths from there on.
///
/// Kratos also keeps the average in whole thousandths (an `int64` of
/// per-mille, truncated at each step); here it is an `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Smoother {
    decay: f64,
}

impl Smoother {
    /// A smoother keeping `decay` of the average at each step: an error
    /// unless `0.0 <= decay < 1.0` (at 1.0 the average would never move).
    pub fn new(decay: f64) -> Result<Smoother, Error> {
        if (0.0..1.0).contains(&decay) {
            Ok(Smoother { decay })
        } else {
            Err(invalid_decay(decay))
        }
    }

    /// The decay.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    /// The next average after `reading`, from the `previous` one (`None`
    /// before the first reading, which then becomes the average).
    pub fn step(&self, previous: Option<f64>, reading: f64) -> f64 {
        match previous {
            None => reading,
            Some(previous) => previous * self.decay + reading * (1.0 - self.decay),
        }
    }
}

/// The machine's load, as the process sees it: CPU usage from its cgroup's
/// accounting (or the host's, see [`CpuReader::detect`]) and the 1-minute
/// load average, sampled every [`interval`](SamplerOptions::interval) on a
/// background thread named `ratekeeper-load`.
///
/// [`cpu_usage`](LoadSignal::cpu_usage) is the [`Smoother`]'s average of
/// the raw readings ([`raw_cpu_usage`](SystemLoad::raw_cpu_usage)); it is
/// `None` until the first interval has passed (a fraction needs two
/// readings), and again whenever a reading fails (it then starts over).
/// [`load_average`](LoadSignal::load_average) is known from the start.
///
/// Cloning shares the sampler; the thread ends when the last clone is
/// dropped, at once (the drop wakes it and waits for it, never a whole
/// interval).
///
/// ```no_run
/// use ratekeeper::{LoadSignal, SystemLoad};
///
/// let load = SystemLoad::start();
/// println!("CPU from {:?}", load.source());
/// std::thread::sleep(std::time::Duration::from_secs(1));
/// println!("cpu {:?}, load {:?}", load.cpu_usage(), load.load_average());
/// ```
#[derive(Debug, Clone)]
pub struct SystemLoad {
    handle: Arc<Handle>,
}

/// What every clone of a [`SystemLoad`] shares: its drop stops the thread.
#[derive(Debug)]
struct Handle {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the thread writes and the handles read.
#[derive(Debug)]
struct Shared {
    cpu: AtomicReading,
    raw_cpu: AtomicReading,
    load_average: AtomicReading,
    source: Option<CpuSource>,
    interval: Duration,
    /// Set when the last handle is dropped; `wake` tells the thread.
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl SystemLoad {
    /// Samples this machine with the default options (every 500 ms, a decay
    /// of 0.95).
    ///
    /// # Panics
    ///
    /// If the system cannot start a thread, as [`std::thread::spawn`].
    pub fn start() -> SystemLoad {
        match SystemLoad::with_options(SamplerOptions::default()) {
            Ok(load) => load,
            Err(_) => unreachable!("the default options are valid"),
        }
    }

    /// Samples as `options` say. An error when the interval is under 1 ms
    /// or over `i64::MAX` microseconds, or the decay is not in `0.0..1.0`.
    ///
    /// The CPU source is found, and the first reading and load average are
    /// taken, before this returns. Missing files are not an error: a
    /// reading that cannot be taken stays `None`.
    ///
    /// # Panics
    ///
    /// If the system cannot start a thread, as [`std::thread::spawn`].
    pub fn with_options(options: SamplerOptions) -> Result<SystemLoad, Error> {
        let smoother = options.check()?;
        let mut sampler = Sampler::new(&options.root, smoother);
        let shared = Arc::new(Shared {
            cpu: AtomicReading::none(),
            raw_cpu: AtomicReading::none(),
            load_average: AtomicReading::none(),
            source: sampler.source(),
            interval: options.interval,
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        sampler.tick(&shared, Instant::now());
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("ratekeeper-load".into())
            .spawn(move || run(&for_thread, sampler))
            .unwrap_or_else(|e| panic!("cannot start the ratekeeper-load thread: {e}"));
        Ok(SystemLoad { handle: Arc::new(Handle { shared, thread: Some(thread) }) })
    }

    /// Where the CPU time is read, or `None` when no source is readable
    /// (then [`cpu_usage`](LoadSignal::cpu_usage) stays `None`).
    pub fn source(&self) -> Option<CpuSource> {
        self.handle.shared.source
    }

    /// The last sample's CPU usage before smoothing.
    pub fn raw_cpu_usage(&self) -> Option<f64> {
        self.handle.shared.raw_cpu.load()
    }

    /// The time between samples.
    pub fn interval(&self) -> Duration {
        self.handle.shared.interval
    }
}

impl LoadSignal for SystemLoad {
    #[inline]
    fn cpu_usage(&self) -> Option<f64> {
        self.handle.shared.cpu.load()
    }

    #[inline]
    fn load_average(&self) -> Option<f64> {
        self.handle.shared.load_average.load()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        *self.shared.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            // The thread only reads files and stores numbers: it ends as
            // soon as it sees the flag, so this waits for one sample at most.
            let _ = thread.join();
        }
    }
}

impl Shared {
    /// Sleeps until `deadline` (forever when `None`): false when stopped.
    fn sleep_until(&self, deadline: Option<Instant>) -> bool {
        let mut stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if *stopped {
                return false;
            }
            let now = Instant::now();
            stopped = match deadline {
                Some(deadline) if now >= deadline => return true,
                Some(deadline) => {
                    self.wake.wait_timeout(stopped, deadline - now).unwrap_or_else(PoisonError::into_inner).0
                }
                None => self.wake.wait(stopped).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

/// The thread: a sample at each multiple of the interval from its start,
/// until stopped. A tick that comes late (a suspended machine) moves the
/// schedule on rather than firing the missed ones in a burst.
fn run(shared: &Shared, mut sampler: Sampler) {
    let mut next = Instant::now().checked_add(shared.interval);
    while shared.sleep_until(next) {
        let now = Instant::now();
        sampler.tick(shared, now);
        let following = next.and_then(|n| n.checked_add(shared.interval));
        next = following.and_then(|n| if n > now { Some(n) } else { now.checked_add(shared.interval) });
    }
}

/// The sampling itself, apart from the thread so that tests can tick it.
#[derive(Debug)]
struct Sampler {
    reader: Option<CpuReader>,
    /// The previous counters and when they were read.
    last: Option<(CpuCounters, Instant)>,
    smoother: Smoother,
    smoothed: Option<f64>,
    loadavg: PathBuf,
    buf: Vec<u8>,
}

impl Sampler {
    fn new(root: &Path, smoother: Smoother) -> Sampler {
        Sampler {
            reader: CpuReader::detect(root).ok(),
            last: None,
            smoother,
            smoothed: None,
            loadavg: root.join("proc/loadavg"),
            buf: Vec::new(),
        }
    }

    fn source(&self) -> Option<CpuSource> {
        self.reader.as_ref().map(CpuReader::source)
    }

    /// Takes one sample at `now` and publishes it.
    fn tick(&mut self, shared: &Shared, now: Instant) {
        if let Some(reader) = &mut self.reader {
            match reader.read() {
                Ok(counters) => {
                    let since =
                        self.last.and_then(|(before, at)| counters.usage_since(&before, now.duration_since(at)));
                    if let Some(raw) = since {
                        let smoothed = self.smoother.step(self.smoothed, raw);
                        self.smoothed = Some(smoothed);
                        shared.raw_cpu.store(Some(raw));
                        shared.cpu.store(Some(smoothed));
                    }
                    self.last = Some((counters, now));
                }
                Err(_) => {
                    self.last = None;
                    self.smoothed = None;
                    shared.raw_cpu.store(None);
                    shared.cpu.store(None);
                }
            }
        }
        let load = read_into(&self.loadavg, &mut self.buf).ok().and_then(|text| parse_load_average(text).ok());
        shared.load_average.store(load);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn shared(source: Option<CpuSource>) -> Shared {
        Shared {
            cpu: AtomicReading::none(),
            raw_cpu: AtomicReading::none(),
            load_average: AtomicReading::none(),
            source,
            interval: Duration::from_millis(500),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// A cgroup v2 machine of 2 CPUs (no mountinfo: the usual layout) in a
    /// fresh directory.
    fn machine(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("ratekeeper-load-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::create_dir_all(root.join("sys/fs/cgroup/app")).unwrap();
        fs::write(root.join("proc/self/cgroup"), "0::/app\n").unwrap();
        fs::write(root.join("sys/fs/cgroup/cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
        fs::write(root.join("sys/fs/cgroup/app/cpu.max"), "max 100000\n").unwrap();
        fs::write(root.join("sys/fs/cgroup/app/cpuset.cpus.effective"), "0-1\n").unwrap();
        fs::write(root.join("proc/loadavg"), "0.50 0.40 0.30 1/100 42\n").unwrap();
        root
    }

    fn set_usage(root: &Path, usec: u64) {
        fs::write(root.join("sys/fs/cgroup/app/cpu.stat"), format!("usage_usec {usec}\nuser_usec 0\n")).unwrap();
    }

    #[test]
    fn ticks_compute_raw_and_smoothed_usage_exactly() {
        let root = machine("ticks");
        set_usage(&root, 1_000_000);
        let mut sampler = Sampler::new(&root, Smoother::new(0.5).unwrap());
        assert_eq!(sampler.source(), Some(CpuSource::CgroupV2));
        let shared = shared(sampler.source());
        let t0 = Instant::now();
        sampler.tick(&shared, t0);
        assert_eq!((shared.cpu.load(), shared.raw_cpu.load()), (None, None));
        assert_eq!(shared.load_average.load(), Some(0.5));

        // 0.8 s of CPU in 0.5 s on 2 CPUs: 0.8; the first reading is the average.
        set_usage(&root, 1_800_000);
        sampler.tick(&shared, t0 + Duration::from_millis(500));
        assert_eq!((shared.raw_cpu.load(), shared.cpu.load()), (Some(0.8), Some(0.8)));
        // 0.2 s in 0.5 s: 0.2, averaged with a decay of 0.5: 0.5.
        set_usage(&root, 2_000_000);
        sampler.tick(&shared, t0 + Duration::from_millis(1000));
        assert_eq!((shared.raw_cpu.load(), shared.cpu.load()), (Some(0.2), Some(0.8 * 0.5 + 0.2 * 0.5)));

        // A failed reading forgets everything; the next two start over.
        fs::remove_file(root.join("sys/fs/cgroup/app/cpu.stat")).unwrap();
        fs::remove_file(root.join("proc/loadavg")).unwrap();
        sampler.tick(&shared, t0 + Duration::from_millis(1500));
        assert_eq!((shared.raw_cpu.load(), shared.cpu.load(), shared.load_average.load()), (None, None, None));
        set_usage(&root, 3_000_000);
        sampler.tick(&shared, t0 + Duration::from_millis(2000));
        assert_eq!(shared.cpu.load(), None);
        set_usage(&root, 3_100_000);
        sampler.tick(&shared, t0 + Duration::from_millis(2500));
        assert_eq!((shared.raw_cpu.load(), shared.cpu.load()), (Some(0.1), Some(0.1)));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn dropping_the_last_handle_ends_the_thread_at_once() {
        let root = machine("drop");
        set_usage(&root, 5);
        let options = SamplerOptions { interval: Duration::from_secs(3600), root: root.clone(), ..Default::default() };
        let load = SystemLoad::with_options(options).unwrap();
        let clone = load.clone();
        let shared = Arc::downgrade(&load.handle.shared);
        drop(load);
        assert!(shared.upgrade().is_some(), "a clone still holds the sampler");
        let started = Instant::now();
        drop(clone);
        // The thread held the other reference: it has ended by now.
        assert!(shared.upgrade().is_none());
        assert!(started.elapsed() < Duration::from_secs(10), "the drop waited {:?}", started.elapsed());
        fs::remove_dir_all(&root).unwrap();
    }
}
