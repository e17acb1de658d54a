//! Reading CPU time from cgroup v2, cgroup v1 or the host's `/proc/stat`,
//! and the load average from `/proc/loadavg`.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cgroup::{group_dirs, parse_cgroup_mounts, parse_memberships, under, CgroupMount, Membership};

/// Where a [`CpuReader`] reads the CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuSource {
    /// The process's cgroup on the v2 (unified) hierarchy: `cpu.stat`'s
    /// `usage_usec`, limited by `cpu.max` and `cpuset.cpus.effective`.
    CgroupV2,
    /// The process's cgroups on v1 hierarchies: `cpuacct.usage`, limited by
    /// `cpu.cfs_quota_us` / `cpu.cfs_period_us` and the cpuset.
    CgroupV1,
    /// The whole host, from `/proc/stat`, when no cgroup accounting is
    /// readable.
    Host,
}

impl fmt::Display for CpuSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuSource::CgroupV2 => "cgroup v2",
            CpuSource::CgroupV1 => "cgroup v1",
            CpuSource::Host => "host (/proc/stat)",
        })
    }
}

/// Why a load file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file was read but does not hold what the kernel writes there.
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: &'static str,
    },
}

impl LoadError {
    fn parse(path: &Path, reason: &'static str) -> Self {
        LoadError::Parse { path: path.to_owned(), reason }
    }

    fn is_io(&self) -> bool {
        matches!(self, LoadError::Io { .. })
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            LoadError::Parse { path, reason } => write!(f, "cannot parse {}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Io { source, .. } => Some(source),
            LoadError::Parse { .. } => None,
        }
    }
}

/// One reading of a [`CpuReader`]'s counters. Two readings give a usage
/// fraction: [`usage_since`](CpuCounters::usage_since).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuCounters {
    /// A cgroup's counters (v1 or v2).
    Cgroup {
        /// CPU time used by every task of the group since it was created,
        /// in nanoseconds.
        usage_ns: u64,
        /// How many CPUs the group may use at the time of the reading: the
        /// smaller of its cpuset's size and its quota over its period (the
        /// smallest over its ancestors), e.g. 1.5.
        cpus: f64,
    },
    /// The host's counters from `/proc/stat`'s `cpu` line, in clock ticks.
    Host {
        /// Ticks spent doing work: user, nice, system, irq, softirq and
        /// steal (`guest` and `guest_nice` are already part of user and
        /// nice, so are not added again).
        busy: u64,
        /// All ticks: busy, plus idle and iowait (a CPU waiting for I/O
        /// with nothing else to run is idle, as `top` counts it).
        total: u64,
    },
}

impl CpuCounters {
    /// The fraction, from 0.0 to 1.0, of the allowed CPU used between
    /// `earlier` and this reading, `elapsed` apart on a monotonic clock.
    ///
    /// * A cgroup: Δ(CPU time) / (`elapsed` × the CPUs it may use, as of
    ///   this reading). A group using its whole quota of 1.5 CPUs reads 1.0.
    /// * The host: Δbusy / Δtotal, both in ticks from the same file, so the
    ///   clock tick's length and `elapsed` do not enter.
    ///
    /// The result is clamped to at most 1.0: a reading taken a little late
    /// can count a little more CPU time than the interval held. `None` when
    /// the readings are of different kinds, no time passed, or a counter
    /// went back (the group was re-created).
    ///
    /// Kratos (`internal/cpu/cgroup_cpu.go`) divides the cgroup's CPU time
    /// by Δ(`/proc/stat` total ticks) / host cores × quota instead, which is
    /// wall time measured in 10 ms ticks of its first seven fields: it
    /// leaves out steal, so on a virtual machine losing time to its
    /// hypervisor the divisor is short and the reading high, and it rounds
    /// to whole ticks. The monotonic clock here is exact and the same on
    /// any machine. Kratos also keeps its previous value when a reading
    /// is exactly 0 (`u != 0`); here an idle group reads 0.0.
    pub fn usage_since(&self, earlier: &CpuCounters, elapsed: Duration) -> Option<f64> {
        match (*earlier, *self) {
            (CpuCounters::Cgroup { usage_ns: before, .. }, CpuCounters::Cgroup { usage_ns: after, cpus }) => {
                let used = after.checked_sub(before)?;
                let capacity = elapsed.as_nanos() as f64 * cpus;
                (capacity > 0.0).then(|| (used as f64 / capacity).min(1.0))
            }
            (CpuCounters::Host { busy: b0, total: t0 }, CpuCounters::Host { busy: b1, total: t1 }) => {
                let total = t1.checked_sub(t0).filter(|&t| t > 0)?;
                // iowait may step back a little on tickless kernels
                // (proc(5)), which makes busy step forward: never below 0.
                Some((b1.saturating_sub(b0) as f64 / total as f64).min(1.0))
            }
            _ => None,
        }
    }
}

/// A file of limits on a cgroup's CPUs, one per group from the process's
/// own up to the hierarchy's top: a parent's quota bounds its children.
#[derive(Debug)]
enum Quota {
    /// cgroup v2 `cpu.max`.
    Max(PathBuf),
    /// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`.
    Cfs { quota: PathBuf, period: PathBuf },
}

/// Reads a process's CPU counters from the files of its cgroup (or the
/// host's), found once by [`detect`](CpuReader::detect).
///
/// Every path is taken under a root directory, `/` on a real machine, so
/// that tests can read a copy of a machine's files. Each [`read`](CpuReader::read)
/// reads a few small files into one reused buffer.
#[derive(Debug)]
pub struct CpuReader {
    source: CpuSource,
    /// `cpu.stat`, `cpuacct.usage` or `proc/stat`.
    usage: PathBuf,
    quotas: Vec<Quota>,
    /// `cpuset.cpus.effective`, `cpuset.effective_cpus` or `cpuset.cpus`.
    cpuset: Option<PathBuf>,
    /// The host's CPUs (`cpuN` lines of `/proc/stat`), when the group has
    /// no readable cpuset.
    host_cpus: f64,
    buf: Vec<u8>,
}

impl CpuReader {
    /// Finds the process's CPU accounting under `root`: its cgroup v1
    /// `cpuacct` group when it has one (the CPU controllers of a hybrid
    /// machine are on v1), else its cgroup v2 group, else the host's
    /// `/proc/stat`.
    ///
    /// A source is taken only if its first reading succeeds; files that
    /// are missing or unreadable move on to the next source. A file that is
    /// there but does not parse is an error: better no reading than one
    /// from a format this reader does not know.
    pub fn detect(root: impl AsRef<Path>) -> Result<CpuReader, LoadError> {
        let root = root.as_ref();
        let host_cpus = host_cpus(root);
        let memberships = match read_text(&under(root, "/proc/self/cgroup")) {
            Ok(text) => parse_memberships(&text).map_err(|r| LoadError::parse(&under(root, "/proc/self/cgroup"), r))?,
            Err(_) => Vec::new(),
        };
        let mounts = if memberships.is_empty() {
            Vec::new()
        } else {
            let path = under(root, "/proc/self/mountinfo");
            match read_text(&path) {
                Ok(text) => parse_cgroup_mounts(&text).map_err(|r| LoadError::parse(&path, r))?,
                Err(_) => Vec::new(),
            }
        };
        let cgroups =
            [v1_reader(root, &memberships, &mounts, host_cpus), v2_reader(root, &memberships, &mounts, host_cpus)];
        for mut reader in cgroups.into_iter().flatten() {
            match reader.read() {
                Ok(_) => return Ok(reader),
                Err(e) if e.is_io() => {}
                Err(e) => return Err(e),
            }
        }
        let mut reader = CpuReader::host_with(root, host_cpus);
        reader.read()?;
        Ok(reader)
    }

    /// A reader of the host's `/proc/stat` under `root`, whatever cgroup
    /// the process is in. An error when the file cannot be read or parsed.
    pub fn host(root: impl AsRef<Path>) -> Result<CpuReader, LoadError> {
        let root = root.as_ref();
        let mut reader = CpuReader::host_with(root, host_cpus(root));
        reader.read()?;
        Ok(reader)
    }

    fn host_with(root: &Path, host_cpus: f64) -> CpuReader {
        CpuReader {
            source: CpuSource::Host,
            usage: under(root, "/proc/stat"),
            quotas: Vec::new(),
            cpuset: None,
            host_cpus,
            buf: Vec::new(),
        }
    }

    /// Where this reader reads.
    pub fn source(&self) -> CpuSource {
        self.source
    }

    /// The file the CPU time comes from.
    pub fn usage_path(&self) -> &Path {
        &self.usage
    }

    /// Reads the counters now.
    pub fn read(&mut self) -> Result<CpuCounters, LoadError> {
        let mut buf = std::mem::take(&mut self.buf);
        let result = self.read_with(&mut buf);
        self.buf = buf;
        result
    }

    fn read_with(&self, buf: &mut Vec<u8>) -> Result<CpuCounters, LoadError> {
        let text = read_into(&self.usage, buf)?;
        let parsed = match self.source {
            CpuSource::CgroupV2 => parse_usage_usec(text).map(|us| us.saturating_mul(1000)),
            CpuSource::CgroupV1 => parse_u64(text),
            CpuSource::Host => {
                let (busy, total) = parse_proc_stat(text).map_err(|r| LoadError::parse(&self.usage, r))?;
                return Ok(CpuCounters::Host { busy, total });
            }
        };
        let usage_ns = parsed.map_err(|r| LoadError::parse(&self.usage, r))?;
        Ok(CpuCounters::Cgroup { usage_ns, cpus: self.allowed_cpus_with(buf)? })
    }

    /// How many CPUs the process may use now: for a cgroup, the smaller of
    /// its cpuset's size and the smallest quota over period of it and its
    /// ancestors; for the host, its CPUs.
    pub fn allowed_cpus(&mut self) -> Result<f64, LoadError> {
        let mut buf = std::mem::take(&mut self.buf);
        let result = self.allowed_cpus_with(&mut buf);
        self.buf = buf;
        result
    }

    fn allowed_cpus_with(&self, buf: &mut Vec<u8>) -> Result<f64, LoadError> {
        let mut cpus = match &self.cpuset {
            Some(path) => count_cpu_list(read_into(path, buf)?).map_err(|r| LoadError::parse(path, r))? as f64,
            None => self.host_cpus,
        };
        for quota in &self.quotas {
            let limit = match quota {
                Quota::Max(path) => parse_cpu_max(read_into(path, buf)?).map_err(|r| LoadError::parse(path, r))?,
                Quota::Cfs { quota, period } => {
                    let q = parse_i64(read_into(quota, buf)?).map_err(|r| LoadError::parse(quota, r))?;
                    let p = parse_u64(read_into(period, buf)?)
                        .and_then(|p| if p == 0 { Err("the period is 0") } else { Ok(p) })
                        .map_err(|r| LoadError::parse(period, r))?;
                    cfs_limit(q, p)
                }
            };
            if let Some(limit) = limit {
                cpus = cpus.min(limit);
            }
        }
        Ok(cpus)
    }
}

/// The cgroup v1 reader, if the process is in a `cpuacct` group.
fn v1_reader(root: &Path, memberships: &[Membership], mounts: &[CgroupMount], host_cpus: f64) -> Option<CpuReader> {
    let dirs = |controller: &str| -> Option<Vec<PathBuf>> {
        let member = memberships.iter().find(|m| m.has_controller(controller))?;
        Some(match mounts.iter().find(|m| m.has_controller(controller)) {
            Some(mount) => group_dirs(root, &mount.root, &mount.mount_point, &member.path),
            // No mountinfo: the usual layout, one directory per controller.
            None => group_dirs(root, "/", &format!("/sys/fs/cgroup/{controller}"), &member.path),
        })
    };
    let usage = first_with(&dirs("cpuacct")?, "cpuacct.usage")?;
    let quotas = dirs("cpu")
        .unwrap_or_default()
        .iter()
        .map(|d| Quota::Cfs { quota: d.join("cpu.cfs_quota_us"), period: d.join("cpu.cfs_period_us") })
        .filter(|q| matches!(q, Quota::Cfs { quota, period } if quota.is_file() && period.is_file()))
        .collect();
    let cpuset = dirs("cpuset")
        .and_then(|dirs| first_with(&dirs, "cpuset.effective_cpus").or_else(|| first_with(&dirs, "cpuset.cpus")));
    Some(CpuReader { source: CpuSource::CgroupV1, usage, quotas, cpuset, host_cpus, buf: Vec::new() })
}

/// The cgroup v2 reader, if the process is in a v2 group.
fn v2_reader(root: &Path, memberships: &[Membership], mounts: &[CgroupMount], host_cpus: f64) -> Option<CpuReader> {
    let member = memberships.iter().find(|m| m.is_v2())?;
    let dirs = match mounts.iter().find(|m| m.v2) {
        Some(mount) => group_dirs(root, &mount.root, &mount.mount_point, &member.path),
        // No mountinfo: the usual layouts, unified or hybrid.
        None => {
            let unified = if under(root, "/sys/fs/cgroup/cgroup.controllers").is_file() {
                "/sys/fs/cgroup"
            } else {
                "/sys/fs/cgroup/unified"
            };
            group_dirs(root, "/", unified, &member.path)
        }
    };
    let from = dirs.iter().position(|d| d.join("cpu.stat").is_file())?;
    let dirs = &dirs[from..];
    let quotas = dirs.iter().map(|d| d.join("cpu.max")).filter(|p| p.is_file()).map(Quota::Max).collect();
    // A group whose parent does not enable the cpuset controller has no
    // cpuset files and runs on its nearest ancestor's effective CPUs.
    let cpuset = first_with(dirs, "cpuset.cpus.effective");
    Some(CpuReader {
        source: CpuSource::CgroupV2,
        usage: dirs[0].join("cpu.stat"),
        quotas,
        cpuset,
        host_cpus,
        buf: Vec::new(),
    })
}

/// `name` in the first of `dirs` (the group's own, then its ancestors')
/// that has it.
fn first_with(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The host's CPUs: the `cpuN` lines of `/proc/stat` (those online), else
/// what std says the process may use, else 1.
fn host_cpus(root: &Path) -> f64 {
    let counted = read_text(&under(root, "/proc/stat"))
        .map(|text| {
            text.lines()
                .filter(|l| l.strip_prefix("cpu").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
                .count()
        })
        .unwrap_or(0);
    if counted > 0 {
        counted as f64
    } else {
        std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
    }
}

/// Reads the 1-minute load average, the first figure of `/proc/loadavg`
/// under `root`.
pub fn read_load_average(root: impl AsRef<Path>) -> Result<f64, LoadError> {
    let path = under(root.as_ref(), "/proc/loadavg");
    let text = read_text(&path)?;
    parse_load_average(&text).map_err(|r| LoadError::parse(&path, r))
}

/// Reads `path` into `buf` (emptied first), as text.
pub(crate) fn read_into<'b>(path: &Path, buf: &'b mut Vec<u8>) -> Result<&'b str, LoadError> {
    buf.clear();
    let io = |source| LoadError::Io { path: path.to_owned(), source };
    File::open(path).and_then(|mut f| f.read_to_end(buf)).map_err(io)?;
    std::str::from_utf8(buf).map_err(|_| LoadError::parse(path, "not UTF-8 text"))
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    let mut buf = Vec::new();
    read_into(path, &mut buf).map(str::to_owned)
}

fn parse_u64(text: &str) -> Result<u64, &'static str> {
    text.trim().parse().map_err(|_| "not a whole number")
}

fn parse_i64(text: &str) -> Result<i64, &'static str> {
    text.trim().parse().map_err(|_| "not a whole number")
}

/// `usage_usec` of a cgroup v2 `cpu.stat` (`key value` lines).
pub(crate) fn parse_usage_usec(text: &str) -> Result<u64, &'static str> {
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        if fields.next() == Some("usage_usec") {
            return fields.next().and_then(|v| v.parse().ok()).ok_or("usage_usec is not a whole number");
        }
    }
    Err("no usage_usec line")
}

/// The CPUs a cgroup v2 `cpu.max` allows: `$MAX $PERIOD`, where `max`
/// means no limit.
pub(crate) fn parse_cpu_max(text: &str) -> Result<Option<f64>, &'static str> {
    const FORMAT: &str = "not \"max PERIOD\" or \"QUOTA PERIOD\"";
    let mut fields = text.split_ascii_whitespace();
    let (quota, period) = (fields.next().ok_or(FORMAT)?, fields.next());
    if fields.next().is_some() {
        return Err(FORMAT);
    }
    let period: Option<u64> = period.map(|p| p.parse().map_err(|_| FORMAT)).transpose()?;
    if period == Some(0) {
        return Err("the period is 0");
    }
    if quota == "max" {
        return Ok(None);
    }
    let quota: u64 = quota.parse().map_err(|_| FORMAT)?;
    Ok(Some(quota as f64 / period.ok_or(FORMAT)? as f64))
}

/// The CPUs a cgroup v1 CFS quota allows: `quota / period` (a period
/// above 0), or none when the quota is -1 (sched-bwc.rst).
pub(crate) fn cfs_limit(quota_us: i64, period_us: u64) -> Option<f64> {
    (quota_us >= 0).then(|| quota_us as f64 / period_us as f64)
}

/// How many CPUs a cpuset list (`0-3`, `0,2-5,8`) names. The kernel prints
/// these lists sorted and merged, so ranges are counted as they are.
pub(crate) fn count_cpu_list(text: &str) -> Result<u32, &'static str> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the cpu list is empty");
    }
    let mut count = 0u32;
    for range in text.split(',') {
        let (low, high) = range.split_once('-').unwrap_or((range, range));
        let (low, high): (u32, u32) = match (low.parse(), high.parse()) {
            (Ok(l), Ok(h)) if l <= h => (l, h),
            _ => return Err("not a cpu list such as 0-3,6"),
        };
        count = count.saturating_add(high - low + 1);
    }
    Ok(count)
}

/// Busy and total ticks from `/proc/stat`'s `cpu` line: `user nice system
/// idle iowait irq softirq steal guest guest_nice` (older kernels print
/// fewer; at least the first four are required).
pub(crate) fn parse_proc_stat(text: &str) -> Result<(u64, u64), &'static str> {
    let line = text.lines().find(|l| l.starts_with("cpu ")).ok_or("no cpu line")?;
    let mut ticks = [0u64; 8];
    let mut fields = 0;
    for (slot, field) in ticks.iter_mut().zip(line.split_ascii_whitespace().skip(1)) {
        *slot = field.parse().map_err(|_| "a cpu field is not a whole number")?;
        fields += 1;
    }
    if fields < 4 {
        return Err("the cpu line has fewer than 4 fields");
    }
    // guest and guest_nice (fields 9 and 10) are inside user and nice.
    let total = ticks.iter().fold(0u64, |sum, t| sum.saturating_add(*t));
    let [_, _, _, idle, iowait, ..] = ticks;
    Ok((total.saturating_sub(idle).saturating_sub(iowait), total))
}

/// The first figure of `/proc/loadavg`.
pub(crate) fn parse_load_average(text: &str) -> Result<f64, &'static str> {
    let first = text.split_ascii_whitespace().next().ok_or("the file is empty")?;
    match first.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err("the first field is not a load average"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_max() {
        assert_eq!(parse_cpu_max("max 100000\n"), Ok(None));
        assert_eq!(parse_cpu_max("max"), Ok(None));
        assert_eq!(parse_cpu_max("150000 100000\n"), Ok(Some(1.5)));
        for bad in ["", "150000", "x 100000", "150000 0", "1 2 3", "-5 100000"] {
            assert!(parse_cpu_max(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cfs() {
        assert_eq!(cfs_limit(-1, 100_000), None);
        assert_eq!(cfs_limit(50_000, 100_000), Some(0.5));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0-3\n"), Ok(4));
        assert_eq!(count_cpu_list("0,2-5,8"), Ok(6));
        assert_eq!(count_cpu_list("7"), Ok(1));
        for bad in ["", "\n", "3-1", "a", "0-", "1,,2"] {
            assert!(count_cpu_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn proc_stat_counts_steal_but_not_guest() {
        let text = "cpu  10 20 30 40 50 60 70 80 90 100\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(parse_proc_stat(text), Ok((10 + 20 + 30 + 60 + 70 + 80, 360)));
        assert_eq!(parse_proc_stat("cpu 1 2 3 4\n"), Ok((6, 10)));
        assert!(parse_proc_stat("cpu 1 2 3\n").is_err());
        assert!(parse_proc_stat("cpu0 1 2 3 4\n").is_err());
        assert!(parse_proc_stat("cpu 1 2 x 4\n").is_err());
    }

    #[test]
    fn usage_usec() {
        assert_eq!(parse_usage_usec("usage_usec 12\nuser_usec 10\n"), Ok(12));
        assert!(parse_usage_usec("user_usec 10\n").is_err());
        assert!(parse_usage_usec("usage_usec -1\n").is_err());
    }

    #[test]
    fn load_average() {
        assert_eq!(parse_load_average("0.04 0.59 1.16 1/77 14952\n"), Ok(0.04));
        assert!(parse_load_average("").is_err());
        assert!(parse_load_average("nan 1 1").is_err());
    }

    #[test]
    fn usage_fractions() {
        let at = |usage_ns, cpus| CpuCounters::Cgroup { usage_ns, cpus };
        let half = Duration::from_millis(500);
        assert_eq!(at(1_600_000_000, 1.5).usage_since(&at(1_000_000_000, 1.5), half), Some(0.8));
        // More CPU time than the interval held: clamped.
        assert_eq!(at(3_000_000_000, 1.5).usage_since(&at(1_000_000_000, 1.5), half), Some(1.0));
        assert_eq!(at(1, 1.5).usage_since(&at(2, 1.5), half), None);
        assert_eq!(at(2, 1.5).usage_since(&at(1, 1.5), Duration::ZERO), None);
        let host = |busy, total| CpuCounters::Host { busy, total };
        assert_eq!(host(250, 1000).usage_since(&host(100, 800), half), Some(0.75));
        assert_eq!(host(90, 1000).usage_since(&host(100, 800), half), Some(0.0));
        assert_eq!(host(100, 800).usage_since(&host(100, 800), half), None);
        assert_eq!(host(100, 800).usage_since(&at(1, 1.0), half), None);
    }
}
