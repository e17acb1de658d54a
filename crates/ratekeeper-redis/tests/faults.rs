//! Redis going away, slowing down, and dropping connections: no crash, no
//! call longer than the timeout (plus scheduling slack), the policy holds
//! meanwhile, and decisions are back on Redis within a second of it
//! answering again.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};
use support::RedisServer;

/// A limit no test reaches: every decision Redis makes admits.
const GENEROUS: LimiterSpec = LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 60_000_000 };
/// The store's timeout, and what a call may take beyond it.
const TIMEOUT: Duration = Duration::from_millis(100);
const SLACK: Duration = Duration::from_millis(150);

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions { timeout: TIMEOUT, ..StoreOptions::default() }).unwrap()
}

/// One decision's outcome, when it ended and how long it took.
struct Sample {
    at: Instant,
    took: Duration,
    allowed: bool,
}

/// Calls `limiter.check` in a loop on another thread until `stop`.
fn hammer<'a>(
    scope: &'a std::thread::Scope<'a, '_>,
    limiter: &'a RedisLimiter,
    stop: &'a AtomicBool,
    samples: &'a Mutex<Vec<Sample>>,
) {
    scope.spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let start = Instant::now();
            let decision = limiter.check("k", 1).expect("the policy decides; no error reaches the caller");
            let took = start.elapsed();
            samples.lock().unwrap().push(Sample { at: Instant::now(), took, allowed: decision.allowed });
            std::thread::sleep(Duration::from_millis(2));
        }
    });
}

/// The longest call, and the first admission (a decision of Redis's)
/// after `since`.
fn summary(samples: &[Sample], since: Instant) -> (Duration, Option<Duration>) {
    let longest = samples.iter().map(|s| s.took).max().unwrap_or_default();
    let back = samples.iter().find(|s| s.at > since && s.allowed).map(|s| s.at - since);
    (longest, back)
}

#[test]
fn kill_9_and_restart() {
    let mut server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "kill", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let (stop, samples) = (AtomicBool::new(false), Mutex::new(Vec::new()));
    let back_since = std::thread::scope(|scope| {
        hammer(scope, &limiter, &stop, &samples);
        std::thread::sleep(Duration::from_millis(200));
        server.kill();
        let killed = Instant::now();
        std::thread::sleep(Duration::from_millis(700));
        // While Redis is away, every decision is the policy's: a refusal.
        let during: Vec<bool> =
            samples.lock().unwrap().iter().filter(|s| s.at > killed + SLACK).map(|s| s.allowed).collect();
        assert!(!during.is_empty() && during.iter().all(|a| !a), "fail-closed must refuse while Redis is down");
        server.restart();
        let restarted = Instant::now();
        std::thread::sleep(Duration::from_millis(1_500));
        stop.store(true, Ordering::Relaxed);
        restarted
    });
    let samples = samples.into_inner().unwrap();
    let (longest, back) = summary(&samples, back_since);
    assert!(longest <= TIMEOUT + SLACK, "a call took {longest:?}");
    let back = back.expect("decisions never came back to Redis");
    assert!(back <= Duration::from_secs(1), "back on Redis only after {back:?}");
}

#[test]
fn a_slow_server_times_out_and_the_policy_holds() {
    let server = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "slow", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailOpen);
    let (stop, samples) = (AtomicBool::new(false), Mutex::new(Vec::new()));
    let woke = std::thread::scope(|scope| {
        hammer(scope, &limiter, &stop, &samples);
        std::thread::sleep(Duration::from_millis(200));
        // Blocks the server for 800 ms.
        let mut conn = server.connection();
        let _: () = redis::cmd("DEBUG").arg("SLEEP").arg("0.8").query(&mut conn).unwrap();
        let woke = Instant::now();
        std::thread::sleep(Duration::from_millis(1_200));
        stop.store(true, Ordering::Relaxed);
        woke
    });
    let samples = samples.into_inner().unwrap();
    let (longest, _) = summary(&samples, woke);
    assert!(longest <= TIMEOUT + SLACK, "a call took {longest:?}");
    // Fail-open admits meanwhile: every sample is an admission.
    assert!(samples.iter().all(|s| s.allowed));
    // Back on Redis: the server counts the decisions again.
    let mut conn = server.connection();
    let before: Option<String> = redis::cmd("GET").arg("rk:{slow:k}:fixed_window").query(&mut conn).unwrap();
    limiter.check("k", 1).unwrap();
    let after: Option<String> = redis::cmd("GET").arg("rk:{slow:k}:fixed_window").query(&mut conn).unwrap();
    assert_ne!(before, after, "decisions did not come back to Redis");
}

#[test]
fn killed_connections_are_reopened() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "client-kill", GENEROUS).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let (stop, samples) = (AtomicBool::new(false), Mutex::new(Vec::new()));
    let killed = std::thread::scope(|scope| {
        hammer(scope, &limiter, &stop, &samples);
        std::thread::sleep(Duration::from_millis(200));
        let mut conn = server.connection();
        let n: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("normal")
            .arg("SKIPME")
            .arg("yes")
            .query(&mut conn)
            .unwrap();
        assert!(n >= 1, "no client connection was killed");
        let killed = Instant::now();
        std::thread::sleep(Duration::from_millis(1_500));
        stop.store(true, Ordering::Relaxed);
        killed
    });
    let samples = samples.into_inner().unwrap();
    let (longest, back) = summary(&samples, killed);
    assert!(longest <= TIMEOUT + SLACK, "a call took {longest:?}");
    let back = back.expect("decisions never came back to Redis");
    assert!(back <= Duration::from_secs(1), "back on Redis only after {back:?}");
}

#[test]
fn idle_blocking_connections_closed_by_the_server_cost_no_decision() {
    // Blocking calls keep their connections between calls. The server may
    // close one meanwhile — a restart, `CLIENT KILL`, its idle-client
    // `timeout` — and the next call must still get Redis's answer, not a
    // failure while Redis is up.
    let mut server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "idle", GENEROUS).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query(&mut server.connection())
        .unwrap();
    assert!(killed >= 1, "no client connection was killed");
    let d = limiter.check("k", 1).expect("a killed idle connection is replaced, not an error");
    assert_eq!(d.remaining, 1_000_000_000 - 2);

    server.kill();
    server.restart();
    let d = limiter.check("k", 1).expect("a connection to the old server is replaced, not an error");
    assert_eq!(d.remaining, 1_000_000_000 - 1, "the restarted server is empty");
    assert!(!s.is_down());
}
