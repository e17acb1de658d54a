//! Private Redis servers for the tests: `redis-server` on a free loopback
//! port, with no persistence, killed when dropped; and a proxy in front of
//! one that holds back one caller's request.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub port: u16,
    dir: std::path::PathBuf,
    extra: Vec<String>,
    running: bool,
}

impl RedisServer {
    /// Starts a server and waits until it answers PING.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a server with extra `redis-server` arguments.
    pub fn start_with(extra: &[&str]) -> Self {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        for _ in 0..5 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!("ratekeeper-redis-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let child = spawn(port, &dir, &extra);
            let mut server = RedisServer { child, port, dir, extra: extra.clone(), running: true };
            if server.wait_ready(Duration::from_secs(10)) {
                return server;
            }
            // The port was taken between our probe and the server's bind: retry.
        }
        panic!("could not start redis-server");
    }

    /// Whether the server is running (not killed).
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// `kill -9`: the server dies at once, mid-request if need be.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.running = false;
    }

    /// Freezes the server (SIGSTOP): a network stall, connections open and
    /// silent.
    pub fn stall(&self) {
        let _ = Command::new("kill").args(["-STOP", &self.child.id().to_string()]).status();
    }

    /// Lets a stalled server go on (SIGCONT).
    pub fn resume(&self) {
        let _ = Command::new("kill").args(["-CONT", &self.child.id().to_string()]).status();
    }

    /// Starts the server again on the same port (empty: it kept nothing).
    pub fn restart(&mut self) {
        self.child = spawn(self.port, &self.dir, &self.extra);
        assert!(self.wait_ready(Duration::from_secs(10)), "redis-server did not restart");
        self.running = true;
    }

    fn wait_ready(&mut self, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(client) = redis::Client::open(self.url()) {
                if let Ok(mut conn) = client.get_connection() {
                    if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                        return true;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url()).unwrap().get_connection().unwrap()
    }

    /// How many `EVALSHA` calls the server has run: round trips of the
    /// scripts.
    pub fn evalsha_calls(&self) -> u64 {
        let info: String = redis::cmd("INFO").arg("commandstats").query(&mut self.connection()).unwrap();
        info.lines()
            .find(|l| l.starts_with("cmdstat_evalsha:"))
            .and_then(|l| l.split("calls=").nth(1))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP proxy on loopback in front of a server, which holds back by
/// `delay` every piece a client writes that contains `marker`: one
/// caller's request slow to reach the server (a large request on a slow
/// link), while the server goes on answering everyone else.
pub struct SlowProxy {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl SlowProxy {
    pub fn start(server_port: u16, marker: &'static [u8], delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else { continue };
                let (client_too, server_too) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || forward(client, server, Some((marker, delay))));
                std::thread::spawn(move || forward(server_too, client_too, None));
            }
        });
        SlowProxy { port, stop }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for SlowProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port)); // wakes the accepting thread
    }
}

/// Copies `from` to `to` until either closes, holding back a piece with
/// the marker.
fn forward(mut from: TcpStream, mut to: TcpStream, hold: Option<(&[u8], Duration)>) {
    let mut buffer = vec![0u8; 64 << 10];
    while let Ok(n @ 1..) = from.read(&mut buffer) {
        if let Some((marker, delay)) = hold {
            if buffer[..n].windows(marker.len()).any(|w| w == marker) {
                std::thread::sleep(delay);
            }
        }
        if to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// A three-master Redis Cluster on loopback (no replicas), stopped when
/// dropped.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    pub fn start() -> Self {
        Self::start_with_replicas(0)
    }

    /// Three masters, each with `replicas` replicas.
    pub fn start_with_replicas(replicas: usize) -> Self {
        let nodes: Vec<RedisServer> = (0..3 * (1 + replicas))
            .map(|_| {
                RedisServer::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "2000",
                    // Replicas sync at once rather than after diskless sync's
                    // default 5 s wait for more replicas.
                    "--repl-diskless-sync-delay",
                    "0",
                ])
            })
            .collect();
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli must be installed");
        assert!(status.success(), "redis-cli --cluster create failed");
        let cluster = RedisCluster { nodes };
        cluster.wait_ok(Duration::from_secs(20));
        cluster.wait_replicas_in_sync(Duration::from_secs(20));
        cluster
    }

    /// Waits until every replica has finished its first sync: a replica that
    /// never synced refuses to take over (its data is "too old" by Redis's
    /// replica validity rule), so a failover test must not start before.
    fn wait_replicas_in_sync(&self, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            let synced = self.nodes.iter().all(|n| {
                let info: String = redis::cmd("INFO").arg("replication").query(&mut n.connection()).unwrap_or_default();
                info.contains("role:master") || info.contains("master_link_status:up")
            });
            if synced {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the replicas did not sync");
    }

    /// Waits until node `master`'s replicas have acknowledged everything it
    /// has written (`WAIT` would not do: it waits only for the writes of
    /// the connection that calls it).
    pub fn wait_replicated(&self, master: usize, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            let info: String =
                redis::cmd("INFO").arg("replication").query(&mut self.nodes[master].connection()).unwrap_or_default();
            let field = |name: &str| -> Option<i64> {
                info.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok())
            };
            let written = field("master_repl_offset:");
            let acked: Vec<i64> = info
                .lines()
                .filter(|l| l.starts_with("slave"))
                .filter_map(|l| l.split(',').find_map(|f| f.strip_prefix("offset=")).and_then(|v| v.parse().ok()))
                .collect();
            if let Some(written) = written {
                if !acked.is_empty() && acked.iter().all(|&a| a >= written) {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("node {master}'s replicas did not catch up");
    }

    /// Waits until every node still running reports `cluster_state:ok`.
    pub fn wait_ok(&self, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            let all_ok = self.nodes.iter().filter(|n| n.is_running()).all(|n| {
                let mut conn = n.connection();
                redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query::<String>(&mut conn)
                    .is_ok_and(|i| i.contains("cluster_state:ok"))
            });
            if all_ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the cluster did not become ready");
    }

    /// The node serving `key`'s slot as master. Asked of every node still
    /// running, for up to 5 s: after a failover the nodes learn of the
    /// promotion by gossip, and the one asked first may not have yet (it
    /// still lists the dead master as failed and the replica as a replica)
    /// while the client already decides on the new master.
    pub fn master_of(&self, key: &str) -> usize {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut slot = None;
            for node in self.nodes.iter().filter(|n| n.is_running()) {
                let mut conn = node.connection();
                let key_slot: i64 = redis::cmd("CLUSTER").arg("KEYSLOT").arg(key).query(&mut conn).unwrap();
                slot = Some(key_slot);
                let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn).unwrap();
                if let Some(port) = master_port(&nodes, key_slot) {
                    return self.nodes.iter().position(|n| n.port == port).unwrap();
                }
            }
            if Instant::now() >= deadline {
                panic!("no master serves slot {slot:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }
}

fn spawn(port: u16, dir: &std::path::Path, extra: &[String]) -> Child {
    Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--dir", dir.to_str().expect("utf-8 temp dir")])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server must be installed (scripts/setup.sh installs it)")
}

/// A free port whose port + 10000 is free too (a cluster node listens on
/// both), both below the kernel's range of ephemeral ports: there, a port
/// free now could be taken at any moment by an outgoing connection's local
/// end (tests/redis/with-redis lost a cluster node that way in CI).
fn free_port() -> u16 {
    use std::hash::{BuildHasher, RandomState};
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(32_768);
    let (lowest, highest) = (10_000, ephemeral.min(65_536) - 10_000);
    let random = RandomState::new();
    (0u64..)
        .map(|i| (lowest + random.hash_one(i) % (highest - lowest)) as u16)
        .find(|&port| {
            TcpListener::bind(("127.0.0.1", port)).is_ok() && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok()
        })
        .expect("a free port")
}

/// Seven users, each with an in-process limiter: what a batch of their
/// checks, decided in order at one time, must answer.
pub struct SevenUsers {
    local: Vec<ratekeeper::AnyCore>,
    /// How many checks of a cost above 0 were admitted (a comparison that
    /// saw none proves little).
    pub admitted: u64,
}

impl SevenUsers {
    pub fn new(spec: &ratekeeper::LimiterSpec) -> Self {
        SevenUsers { local: (0..7).map(|_| ratekeeper::AnyCore::new(spec).unwrap()).collect(), admitted: 0 }
    }

    /// 300 requests over the seven users (`user-0` …), costs 0 to 6.
    pub fn requests(round: u64) -> Vec<(Vec<u8>, u64)> {
        (0..300u64).map(|i| (format!("user-{}", (i * 5 + round) % 7).into_bytes(), (i * 3 + round) % 7)).collect()
    }

    /// Asserts that `answers` are the in-process limiters' decisions at `now`.
    pub fn assert_answers(
        &mut self,
        round: u64,
        requests: &[(Vec<u8>, u64)],
        answers: Vec<Result<ratekeeper::Decision, ratekeeper_redis::Error>>,
        now: i64,
    ) {
        use ratekeeper::Admission;
        assert_eq!(answers.len(), requests.len());
        for ((key, cost), answer) in requests.iter().zip(answers) {
            let key = std::str::from_utf8(key).unwrap();
            let i: usize = key["user-".len()..].parse().unwrap();
            let expected = self.local[i].check(*cost, now);
            self.admitted += u64::from(expected.allowed && *cost > 0);
            assert_eq!(answer.unwrap(), expected, "round {round}, {key} cost {cost}");
        }
    }
}

/// The port of the master serving `slot` in a `CLUSTER NODES` reply, if
/// that node knows of one that is not failed.
fn master_port(nodes: &str, slot: i64) -> Option<u16> {
    nodes.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !fields[2].contains("master") || fields[2].contains("fail") {
            return None;
        }
        let serves = fields[8..].iter().any(|range| match range.split_once('-') {
            Some((a, b)) => (a.parse::<i64>().unwrap()..=b.parse().unwrap()).contains(&slot),
            None => range.parse::<i64>().ok() == Some(slot),
        });
        serves.then(|| fields[1].split(['@', ':']).nth(1).unwrap().parse().unwrap())
    })
}
