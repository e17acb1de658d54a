//! The readers and the sampler on this machine's own files (Linux only:
//! they read `/proc` and `/sys/fs/cgroup`).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::{Duration, Instant};

use ratekeeper::load::{read_load_average, CpuReader, CpuSource};
use ratekeeper::{LoadSignal, SamplerOptions, SystemLoad};

/// Polls `f` every 10 ms until it returns `Some`, for at most `limit`.
fn eventually<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn this_machine_has_a_load_average_and_a_cpu_source() {
    let load = read_load_average("/").unwrap();
    assert!(load.is_finite() && load >= 0.0, "{load}");

    let mut reader = CpuReader::detect("/").unwrap();
    let cpus = reader.allowed_cpus().unwrap();
    let host_cpus = std::thread::available_parallelism().unwrap().get() as f64;
    println!(
        "CPU source: {} ({}), {cpus} CPUs allowed; std's available parallelism {host_cpus}; load average {load}",
        reader.source(),
        reader.usage_path().display(),
    );
    // std counts the same limits (affinity, cgroup quota), but rounds a
    // quota up to whole CPUs.
    assert!(cpus > 0.0 && cpus <= host_cpus.max(cpus.ceil()), "{cpus} vs {host_cpus}");
    if reader.source() != CpuSource::Host {
        assert!(reader.usage_path().starts_with("/sys/fs/cgroup"), "{:?}", reader.usage_path());
    }

    // Two readings 200 ms apart: a fraction, and both readers agree on
    // its kind.
    let t0 = reader.read().unwrap();
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(200));
    let t1 = reader.read().unwrap();
    let usage = t1.usage_since(&t0, start.elapsed()).unwrap();
    assert!((0.0..=1.0).contains(&usage), "{usage}");
    println!("usage over 200 ms: {usage:.3}");
    let mut host = CpuReader::host("/").unwrap();
    let h0 = host.read().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let host_usage = host.read().unwrap().usage_since(&h0, Duration::from_millis(200)).unwrap();
    assert!((0.0..=1.0).contains(&host_usage), "{host_usage}");
}

#[test]
fn system_load_samples_this_machine() {
    let options = SamplerOptions { interval: Duration::from_millis(20), ..SamplerOptions::default() };
    let load = SystemLoad::with_options(options).unwrap();
    assert_eq!(load.source(), Some(CpuReader::detect("/").unwrap().source()));
    // The load average is read before with_options returns; CPU takes an
    // interval (two readings).
    assert!(load.load_average().is_some());
    let cpu = eventually(Duration::from_secs(5), || load.cpu_usage()).expect("no CPU reading in 5 s");
    let raw = load.raw_cpu_usage().unwrap();
    assert!((0.0..=1.0).contains(&cpu) && (0.0..=1.0).contains(&raw), "{cpu} {raw}");
    println!("SystemLoad: {:?} cpu {cpu:.3} (raw {raw:.3}), load {:?}", load.source(), load.load_average());
    // The signal is usable as a shared trait object.
    let shared: std::sync::Arc<dyn LoadSignal> = std::sync::Arc::new(load.clone());
    assert!(shared.cpu_usage().is_some());
}

#[test]
fn a_root_without_files_reads_nothing_but_still_runs() {
    let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_system_empty");
    std::fs::create_dir_all(&empty).unwrap();
    let options = SamplerOptions { interval: Duration::from_millis(5), root: empty, ..SamplerOptions::default() };
    let load = SystemLoad::with_options(options).unwrap();
    assert_eq!(load.source(), None);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!((load.cpu_usage(), load.raw_cpu_usage(), load.load_average()), (None, None, None));
}

#[test]
fn a_fixture_machine_is_sampled_from_its_root() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cgroup/v1/t0");
    let options = SamplerOptions { interval: Duration::from_millis(5), root, ..SamplerOptions::default() };
    let load = SystemLoad::with_options(options).unwrap();
    assert_eq!(load.source(), Some(CpuSource::CgroupV1));
    assert_eq!(load.load_average(), Some(0.73));
    // Counters that never move: an idle group.
    assert_eq!(eventually(Duration::from_secs(5), || load.cpu_usage()), Some(0.0));
}
