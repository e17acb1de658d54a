//! Private Redis servers for the tests: `redis-server` on a free loopback
//! port, with no persistence, killed when dropped.

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub port: u16,
    dir: std::path::PathBuf,
    extra: Vec<String>,
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
            let mut server = RedisServer { child, port, dir, extra: extra.clone() };
            if server.wait_ready(Duration::from_secs(10)) {
                return server;
            }
            // The port was taken between our probe and the server's bind: retry.
        }
        panic!("could not start redis-server");
    }

    /// `kill -9`: the server dies at once, mid-request if need be.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port (empty: it kept nothing).
    pub fn restart(&mut self) {
        self.child = spawn(self.port, &self.dir, &self.extra);
        assert!(self.wait_ready(Duration::from_secs(10)), "redis-server did not restart");
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
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A three-master Redis Cluster on loopback (no replicas), stopped when
/// dropped.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    pub fn start() -> Self {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| RedisServer::start_with(&["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]))
            .collect();
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli must be installed");
        assert!(status.success(), "redis-cli --cluster create failed");
        let cluster = RedisCluster { nodes };
        cluster.wait_ok(Duration::from_secs(20));
        cluster
    }

    /// Waits until every node reports `cluster_state:ok`.
    fn wait_ok(&self, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            let all_ok = self.nodes.iter().all(|n| {
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

/// A free port below 55536: a cluster node also listens on its port + 10000.
fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if port <= 55_535 {
            return port;
        }
    }
}
