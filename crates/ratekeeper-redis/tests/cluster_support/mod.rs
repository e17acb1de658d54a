//! What the resharding and failover tests (`cluster_reshard.rs`,
//! `cluster_failover.rs`) share: the cluster that
//! `tests/redis/with-redis --cluster-replicas` started (three masters with
//! a replica each), its slots, moving a slot while clients run, killing a
//! master, and the child processes that put the load on it.
//!
//! Each test binary is also its own child process (run with
//! `RK_CLUSTER_CHILD` set): its own `main` (`harness = false`), as
//! `concurrency_kill.rs` does, so no stand-in test runs in the suite.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The cluster the test runs against, from the environment
/// `tests/redis/with-redis --cluster-replicas` exports.
pub struct Cluster {
    /// `redis://127.0.0.1:PORT` of every node.
    pub urls: Vec<String>,
    /// Each node's `redis-server` process, by port.
    pub pids: HashMap<u16, u32>,
}

/// A master as `CLUSTER NODES` describes it.
#[derive(Debug, Clone)]
pub struct Master {
    pub id: String,
    pub port: u16,
    pub slots: Vec<(u16, u16)>,
}

impl Cluster {
    /// The cluster, or `None` (and a line saying how to run the test) when
    /// the test does not run under `with-redis --cluster-replicas`.
    pub fn from_env(test: &str) -> Option<Cluster> {
        let (Ok(nodes), Ok(pids)) =
            (std::env::var("RATEKEEPER_REDIS_CLUSTER"), std::env::var("RATEKEEPER_REDIS_CLUSTER_PIDS"))
        else {
            println!(
                "{test}: skipped, no cluster with replicas: run it under \
                 `tests/redis/with-redis --cluster-replicas` (scripts/test.sh's cluster-failover stage does)"
            );
            return None;
        };
        let pids = pids
            .split(',')
            .map(|pair| {
                let (port, pid) = pair.split_once('=').expect("port=pid");
                (port.parse().unwrap(), pid.parse().unwrap())
            })
            .collect();
        Some(Cluster { urls: nodes.split(',').map(str::to_owned).collect(), pids })
    }

    pub fn node_urls(&self) -> Vec<&str> {
        self.urls.iter().map(String::as_str).collect()
    }

    /// Whether the node on `port` is still running.
    pub fn is_alive(&self, port: u16) -> bool {
        // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
        let exists = unsafe { libc::kill(self.pids[&port] as libc::pid_t, 0) == 0 };
        // A killed node stays a zombie until with-redis waits for it.
        exists
            && std::fs::read_to_string(format!("/proc/{}/stat", self.pids[&port]))
                .map(|stat| !stat.contains(") Z "))
                .unwrap_or(false)
    }

    /// A connection to the node on `port`.
    pub fn connection(&self, port: u16) -> redis::Connection {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        client.get_connection_with_timeout(Duration::from_secs(2)).unwrap()
    }

    /// Every node's port.
    pub fn ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.pids.keys().copied().collect();
        ports.sort_unstable();
        ports
    }

    /// The masters that are not failed, from a live node's `CLUSTER NODES`.
    pub fn masters(&self) -> Vec<Master> {
        let port = self.ports().into_iter().find(|&p| self.is_alive(p)).expect("a live node");
        let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut self.connection(port)).unwrap();
        nodes
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if !fields[2].contains("master") || fields[2].contains("fail") {
                    return None;
                }
                let port = fields[1].split(['@', ':']).nth(1)?.parse().ok()?;
                let slots = fields[8..]
                    .iter()
                    .filter(|range| !range.starts_with('['))
                    .map(|range| match range.split_once('-') {
                        Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                        None => (range.parse().unwrap(), range.parse().unwrap()),
                    })
                    .collect();
                Some(Master { id: fields[0].to_owned(), port, slots })
            })
            .collect()
    }

    /// The master serving `slot`.
    pub fn owner(&self, slot: u16) -> Master {
        self.masters()
            .into_iter()
            .find(|m| m.slots.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            .unwrap_or_else(|| panic!("no master serves slot {slot}"))
    }

    /// The port of `master`'s replica, if it has one.
    pub fn replica_of(&self, master: &Master) -> Option<u16> {
        let info: String = redis::cmd("INFO").arg("replication").query(&mut self.connection(master.port)).unwrap();
        info.lines()
            .find(|l| l.starts_with("slave0:"))
            .and_then(|l| l.split(',').find_map(|f| f.strip_prefix("port=")))
            .and_then(|p| p.parse().ok())
    }

    /// `kill -9` of the node on `port`.
    pub fn kill(&self, port: u16) {
        // SAFETY: a signal to a process this test's harness started.
        let killed = unsafe { libc::kill(self.pids[&port] as libc::pid_t, libc::SIGKILL) };
        assert_eq!(killed, 0, "could not kill the node on {port}");
    }

    /// Moves `slot` from its master to `to` while clients use it, the way
    /// `redis-cli --cluster reshard` does, but slowly and one key at a time
    /// — `first` first, then the others, then `last` — with `pause` between
    /// steps, so that clients meet every state of a migration: `ASK` for a
    /// key already moved, `TRYAGAIN` for a script whose keys are split
    /// between the two nodes, `MOVED` once it is over.
    pub fn migrate_slot(&self, slot: u16, to: &Master, first: &[String], last: &[String], pause: Duration) {
        let from = self.owner(slot);
        assert_ne!(from.port, to.port);
        let mut source = self.connection(from.port);
        let mut target = self.connection(to.port);
        let setslot = |c: &mut redis::Connection, state: &str, id: &str| {
            let _: () = redis::cmd("CLUSTER").arg("SETSLOT").arg(slot).arg(state).arg(id).query(c).unwrap();
        };
        setslot(&mut target, "IMPORTING", &from.id);
        setslot(&mut source, "MIGRATING", &to.id);
        std::thread::sleep(pause);
        let migrate = |source: &mut redis::Connection, key: &str| {
            let _: redis::Value = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(to.port)
                .arg(key)
                .arg(0)
                .arg(5000)
                .query(source)
                .unwrap_or_else(|e| panic!("MIGRATE {key}: {e}"));
        };
        for key in first {
            migrate(&mut source, key);
            std::thread::sleep(pause);
        }
        loop {
            let keys: Vec<String> =
                redis::cmd("CLUSTER").arg("GETKEYSINSLOT").arg(slot).arg(100).query(&mut source).unwrap();
            let rest: Vec<&String> = keys.iter().filter(|k| !last.contains(k)).collect();
            if rest.is_empty() {
                break;
            }
            for key in rest {
                migrate(&mut source, key);
                std::thread::sleep(pause);
            }
        }
        for key in last {
            migrate(&mut source, key);
            std::thread::sleep(pause);
        }
        let left: Vec<String> =
            redis::cmd("CLUSTER").arg("GETKEYSINSLOT").arg(slot).arg(100).query(&mut source).unwrap();
        assert!(left.is_empty(), "keys left behind: {left:?}");
        // The target first, then the source, then the rest, as redis-cli
        // does: the source would otherwise send clients to a target that
        // still only takes them with ASKING.
        setslot(&mut target, "NODE", &to.id);
        setslot(&mut source, "NODE", &to.id);
        for master in self.masters() {
            if master.port != from.port && master.port != to.port {
                setslot(&mut self.connection(master.port), "NODE", &to.id);
            }
        }
    }

    /// Zeroes every live node's command and error statistics.
    pub fn reset_stats(&self) {
        for port in self.ports().into_iter().filter(|&p| self.is_alive(p)) {
            let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut self.connection(port)).unwrap();
        }
    }

    /// The sum over the live nodes of an `INFO` counter: `section`'s line
    /// `prefix…` and its `field=` value (e.g. `commandstats`,
    /// `cmdstat_asking:`, `calls`; `errorstats`, `errorstat_TRYAGAIN:`, `count`).
    pub fn stat(&self, section: &str, prefix: &str, field: &str) -> u64 {
        let field = format!("{field}=");
        self.ports()
            .into_iter()
            .filter(|&p| self.is_alive(p))
            .map(|port| {
                let info: String = redis::cmd("INFO").arg(section).query(&mut self.connection(port)).unwrap();
                info.lines()
                    .find_map(|l| l.strip_prefix(prefix))
                    .and_then(|rest| rest.split(',').find_map(|f| f.strip_prefix(field.as_str())))
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(0)
            })
            .sum()
    }
}

/// Redis Cluster's hash slot of a hash tag's contents (CRC16/XMODEM mod
/// 16384): to choose user keys whose state lands in one slot.
pub fn slot(tag: &str) -> u16 {
    let mut crc: u16 = 0;
    for &byte in tag.as_bytes() {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc % 16384
}

/// A user key of limiter `name` whose state is in `slot` (the limiters'
/// keys hash `name:key`: see `keys.rs`; plain names need no escaping).
pub fn key_in_slot(name: &str, slot: u16) -> String {
    (0u64..).map(|i| format!("u{i}")).find(|key| self::slot(&format!("{name}:{key}")) == slot).unwrap()
}

/// Runs the test binary again as `count` child processes, each with
/// `RK_CLUSTER_CHILD` set to its number and `env` set; each writes its
/// results to `dir/child-N`.
pub fn spawn_children(count: usize, dir: &Path, env: &[(&str, String)]) -> Vec<Child> {
    (0..count)
        .map(|n| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command.env("RK_CLUSTER_CHILD", n.to_string()).env("RK_CLUSTER_DIR", dir);
            for (name, value) in env {
                command.env(name, value);
            }
            command.stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().unwrap()
        })
        .collect()
}

/// Waits for the children and reads each one's result file: its lines.
pub fn results(children: Vec<Child>, dir: &Path) -> Vec<Vec<String>> {
    children
        .into_iter()
        .enumerate()
        .map(|(n, mut child)| {
            let status = child.wait().unwrap();
            assert!(status.success(), "child {n} failed: {status}");
            std::fs::read_to_string(dir.join(format!("child-{n}"))).unwrap().lines().map(str::to_owned).collect()
        })
        .collect()
}

/// A directory of the test's own, for its children's files.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ratekeeper-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until `path` exists (the parent's signal to its children).
pub fn exists_within(path: &Path, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// `cargo test NAME`: whether this binary's test runs (no filter, or one
/// matching its name).
pub fn selected(test: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    filters.is_empty() || filters.iter().any(|f| test.contains(f.as_str()))
}
