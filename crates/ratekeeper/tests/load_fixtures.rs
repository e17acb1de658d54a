//! The CPU and load-average readers on copies of machines' files
//! (`tests/fixtures/cgroup/README.md` describes each layout): what each
//! source reads, how many CPUs it allows, and the usage between two
//! snapshots, all exact.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ratekeeper::load::{read_load_average, CpuCounters, CpuReader, CpuSource, LoadError};

/// The snapshots are 500 ms apart.
const APART: Duration = Duration::from_millis(500);

fn fixture(layout: &str, snapshot: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cgroup").join(layout).join(snapshot)
}

/// A copy of a fixture to change, fresh for each test.
fn copy_of(layout: &str, snapshot: &str, test: &str) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let to = Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_fixtures").join(test);
    let _ = fs::remove_dir_all(&to);
    copy(&fixture(layout, snapshot), &to);
    to
}

fn reader(root: impl AsRef<Path>) -> CpuReader {
    CpuReader::detect(root).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn cgroup_v2_reads_the_service_within_its_slice_quota() {
    let mut at_t0 = reader(fixture("v2", "t0"));
    assert_eq!(at_t0.source(), CpuSource::CgroupV2);
    assert!(at_t0.usage_path().ends_with("sys/fs/cgroup/app.slice/api.service/cpu.stat"), "{:?}", at_t0.usage_path());
    // cpuset 0-3 (4 CPUs), the service "max", the slice 150000/100000.
    assert_eq!(at_t0.allowed_cpus().unwrap(), 1.5);
    let t0 = at_t0.read().unwrap();
    assert_eq!(t0, CpuCounters::Cgroup { usage_ns: 834_562_331_000, cpus: 1.5 });
    let t1 = reader(fixture("v2", "t1")).read().unwrap();
    assert_eq!(t1, CpuCounters::Cgroup { usage_ns: 835_162_331_000, cpus: 1.5 });
    // 0.6 s of CPU in 0.5 s on 1.5 CPUs.
    assert_eq!(t1.usage_since(&t0, APART), Some(0.8));
    // Over a whole second, the same CPU time is half as much.
    assert_eq!(t1.usage_since(&t0, 2 * APART), Some(0.4));
    assert_eq!(t0.usage_since(&t1, APART), None, "a counter that goes back is no reading");
    assert_eq!(read_load_average(fixture("v2", "t0")).unwrap(), 1.52);
}

#[test]
fn cgroup_v1_reads_a_docker_container_mounted_at_the_top() {
    let mut at_t0 = reader(fixture("v1", "t0"));
    assert_eq!(at_t0.source(), CpuSource::CgroupV1);
    assert!(at_t0.usage_path().ends_with("sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"), "{:?}", at_t0.usage_path());
    assert_eq!(at_t0.allowed_cpus().unwrap(), 1.5);
    let t0 = at_t0.read().unwrap();
    assert_eq!(t0, CpuCounters::Cgroup { usage_ns: 48_213_376_541_230, cpus: 1.5 });
    let t1 = reader(fixture("v1", "t1")).read().unwrap();
    // 0.3 s of CPU in 0.5 s on 1.5 CPUs.
    assert_eq!(t1.usage_since(&t0, APART), Some(0.4));
    assert_eq!(read_load_average(fixture("v1", "t0")).unwrap(), 0.73);
}

#[test]
fn host_counts_steal_and_not_guest_twice() {
    let mut at_t0 = reader(fixture("host", "t0"));
    assert_eq!(at_t0.source(), CpuSource::Host);
    assert_eq!(at_t0.allowed_cpus().unwrap(), 4.0);
    let t0 = at_t0.read().unwrap();
    // user nice system idle iowait irq softirq steal: 1023456 1200 345678 9876543 23456 0 12345 6789
    let total = 1_023_456 + 1_200 + 345_678 + 9_876_543 + 23_456 + 12_345 + 6_789;
    assert_eq!(t0, CpuCounters::Host { busy: total - 9_876_543 - 23_456, total });
    let t1 = reader(fixture("host", "t1")).read().unwrap();
    // busy 1500 of 2000 ticks, whatever the time between the readings.
    assert_eq!(t1.usage_since(&t0, APART), Some(0.75));
    assert_eq!(t1.usage_since(&t0, Duration::from_secs(7)), Some(0.75));
    assert_eq!(read_load_average(fixture("host", "t0")).unwrap(), 2.07);
    // The host reader reads the same from a cgroup machine's /proc/stat.
    let host = CpuReader::host(fixture("v2", "t0")).unwrap();
    assert_eq!((host.source(), host.usage_path().ends_with("proc/stat")), (CpuSource::Host, true));
}

#[test]
fn the_smallest_limit_wins() {
    let root = copy_of("v2", "t0", "smallest_limit");
    let service = root.join("sys/fs/cgroup/app.slice/api.service");
    let set = |file: &str, text: &str| fs::write(service.join(file), text).unwrap();
    // The service's own quota, below its slice's.
    set("cpu.max", "50000 100000\n");
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 0.5);
    // No quota anywhere: the cpuset.
    set("cpu.max", "max 100000\n");
    fs::write(root.join("sys/fs/cgroup/app.slice/cpu.max"), "max 100000\n").unwrap();
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 4.0);
    // A cpuset smaller than the quota.
    set("cpu.max", "300000 100000\n");
    set("cpuset.cpus.effective", "2\n");
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 1.0);
    // No cpuset controller for the service: its slice's CPUs (0-3), then
    // the root's (0-7), then, with none anywhere, the host's (the 8 cpuN
    // lines of its /proc/stat).
    set("cpu.max", "max 100000\n");
    fs::remove_file(service.join("cpuset.cpus.effective")).unwrap();
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 4.0);
    fs::remove_file(root.join("sys/fs/cgroup/app.slice/cpuset.cpus.effective")).unwrap();
    fs::write(root.join("sys/fs/cgroup/cpuset.cpus.effective"), "0-5\n").unwrap();
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 6.0);
    fs::remove_file(root.join("sys/fs/cgroup/cpuset.cpus.effective")).unwrap();
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 8.0);

    let root = copy_of("v1", "t0", "v1_no_quota");
    fs::write(root.join("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"), "-1\n").unwrap();
    assert_eq!(reader(&root).allowed_cpus().unwrap(), 4.0);
}

#[test]
fn without_mountinfo_the_usual_layout_is_read() {
    let root = copy_of("v2", "t0", "v2_no_mountinfo");
    fs::remove_file(root.join("proc/self/mountinfo")).unwrap();
    let mut r = reader(&root);
    assert_eq!(r.source(), CpuSource::CgroupV2);
    assert_eq!(r.read().unwrap(), CpuCounters::Cgroup { usage_ns: 834_562_331_000, cpus: 1.5 });

    // Docker's per-controller links; /docker/<id> is not below them, so
    // the top of each is the container's group.
    let root = copy_of("v1", "t0", "v1_no_mountinfo");
    fs::remove_file(root.join("proc/self/mountinfo")).unwrap();
    for link in ["cpu", "cpuacct"] {
        std::os::unix::fs::symlink("cpu,cpuacct", root.join("sys/fs/cgroup").join(link)).unwrap();
    }
    let mut r = reader(&root);
    assert_eq!(r.source(), CpuSource::CgroupV1);
    assert_eq!(r.read().unwrap(), CpuCounters::Cgroup { usage_ns: 48_213_376_541_230, cpus: 1.5 });
}

#[test]
fn no_cgroup_accounting_falls_back_to_the_host() {
    let root = copy_of("v2", "t0", "v2_no_cpu_stat");
    for dir in ["", "app.slice", "app.slice/api.service"] {
        fs::remove_file(root.join("sys/fs/cgroup").join(dir).join("cpu.stat")).unwrap();
    }
    let mut r = reader(&root);
    assert_eq!(r.source(), CpuSource::Host);
    assert!(matches!(r.read().unwrap(), CpuCounters::Host { .. }));

    let root = copy_of("v1", "t0", "v1_no_cpuacct");
    fs::remove_file(root.join("sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")).unwrap();
    assert_eq!(reader(&root).source(), CpuSource::Host);
}

#[test]
fn unparseable_files_are_typed_errors() {
    let parse_error = |root: &Path, file: &str| match CpuReader::detect(root) {
        Err(e @ LoadError::Parse { .. }) => {
            let LoadError::Parse { path, .. } = &e else { unreachable!() };
            assert!(path.ends_with(file), "{path:?}");
            e.to_string()
        }
        other => panic!("{file}: {other:?}"),
    };
    let root = copy_of("v2", "t0", "bad_cpu_max");
    fs::write(root.join("sys/fs/cgroup/app.slice/cpu.max"), "lots\n").unwrap();
    let message = parse_error(&root, "app.slice/cpu.max");
    assert!(message.starts_with("cannot parse ") && message.ends_with(r#"not "max PERIOD" or "QUOTA PERIOD""#));

    let root = copy_of("v2", "t0", "bad_cpuset");
    fs::write(root.join("sys/fs/cgroup/app.slice/api.service/cpuset.cpus.effective"), "3-1\n").unwrap();
    parse_error(&root, "cpuset.cpus.effective");

    let root = copy_of("v1", "t0", "bad_usage");
    fs::write(root.join("sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"), "12x\n").unwrap();
    parse_error(&root, "cpuacct.usage");

    let root = copy_of("v1", "t0", "bad_period");
    fs::write(root.join("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us"), "0\n").unwrap();
    parse_error(&root, "cpu.cfs_period_us");

    let root = copy_of("host", "t0", "bad_stat");
    fs::write(root.join("proc/stat"), "cpu 1 2\n").unwrap();
    parse_error(&root, "proc/stat");
    fs::write(root.join("proc/loadavg"), "\n").unwrap();
    assert!(matches!(read_load_average(&root), Err(LoadError::Parse { .. })));

    // Nothing at all: the host's /proc/stat cannot be read.
    let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_fixtures/empty");
    fs::create_dir_all(&empty).unwrap();
    let e = CpuReader::detect(&empty).unwrap_err();
    assert!(matches!(&e, LoadError::Io { path, .. } if path.ends_with("proc/stat")), "{e:?}");
    assert!(e.to_string().starts_with("cannot read "), "{e}");
    assert!(std::error::Error::source(&e).is_some());
    assert!(matches!(read_load_average(&empty), Err(LoadError::Io { .. })));
}
