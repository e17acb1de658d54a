//! `ScriptPipe`: checks over a connection the test drives itself (a plain
//! `TcpStream`, as Node's event loop drives its socket) decide exactly as
//! the limiter's own calls, survive a flushed script cache, set the
//! connection up (password, database), and fail what is waiting through the
//! policy when the server is silent or gone. The pipe's own failures (a
//! connection that does not open, a server with too many clients) keep
//! only the pipe closed for a while; refused credentials, for good.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratekeeper::{Clock, Decision, LimiterSpec, ManualClock};
use ratekeeper_redis::{Answered, Error, RedisLimiter, RedisStore, ScriptPipe, StoreOptions, WhenUnavailable};
use support::{RedisServer, SevenUsers};

const SPEC: LimiterSpec = LimiterSpec::Gcra { max_burst: 4, count_per_period: 3, period_micros: 1_000_000 };

/// Opens the pipe's connection, as a host would, and writes its set-up
/// and reads the answer.
fn open(pipe: &mut ScriptPipe<usize>) -> TcpStream {
    assert!(pipe.wants_connection());
    pipe.connecting();
    let (host, port) = pipe.address();
    let mut socket = TcpStream::connect((host, port)).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    pipe.opened();
    assert!(pipe.is_open());
    write_output(pipe, &mut socket);
    let mut buffer = [0u8; 64];
    while pipe.is_open() && pipe.deadline().is_some() {
        let n = socket.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        assert!(pipe.receive(&buffer[..n]).is_empty(), "no check waits");
    }
    socket
}

/// Writes what the pipe has to send, one write at a time.
fn write_output(pipe: &mut ScriptPipe<usize>, socket: &mut TcpStream) {
    loop {
        let bytes = pipe.take_output();
        if bytes.is_empty() {
            return;
        }
        socket.write_all(&bytes).unwrap();
    }
}

/// Sends `requests` (numbered, as their tokens) and reads until every one
/// is answered; the answers in the requests' order.
fn round_trip(
    pipe: &mut ScriptPipe<usize>,
    socket: &mut TcpStream,
    limiter: &RedisLimiter,
    requests: &[(Vec<u8>, u64)],
) -> Vec<Result<Decision, Error>> {
    let numbered = requests.iter().enumerate().map(|(i, (key, cost))| (key.clone(), *cost, i)).collect();
    let mut answered = pipe.check_many(limiter, numbered).unwrap_or_else(|_| panic!("the pipe is ready"));
    let mut buffer = [0u8; 512];
    while answered.len() < requests.len() {
        write_output(pipe, socket);
        let n = socket.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        // Small reads: replies arrive in pieces, as they may from a socket.
        for piece in buffer[..n].chunks(7) {
            answered.extend(pipe.receive(piece));
        }
    }
    in_order(answered)
}

fn in_order(mut answered: Answered<usize>) -> Vec<Result<Decision, Error>> {
    answered.sort_by_key(|(i, _)| *i);
    answered.into_iter().map(|(_, answer)| answer).collect()
}

#[test]
fn the_pipe_decides_as_the_same_checks_in_order_even_after_the_script_cache_is_flushed() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let clock = Arc::new(ManualClock::new());
    clock.advance_micros(1_700_000_000_000_000);
    let limiter =
        RedisLimiter::with_test_clock(&store, "piped", SPEC, Arc::clone(&clock)).unwrap().remember_refusals(false);
    let mut pipe = ScriptPipe::new(&store).expect("a plain TCP server");
    let mut socket = open(&mut pipe);
    let mut users = SevenUsers::new(&SPEC);
    for round in 0..4 {
        if round == 2 {
            // The next runs meet NOSCRIPT, and are sent again with the source.
            let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut server.connection()).unwrap();
        }
        let requests = SevenUsers::requests(round);
        let answers = round_trip(&mut pipe, &mut socket, &limiter, &requests);
        users.assert_answers(round, &requests, answers, clock.now_micros());
        clock.advance_micros(700_001);
    }
    assert!(users.admitted > 20, "the comparison saw admissions ({})", users.admitted);
    // Each round of 300 goes as four runs of 75 (pipelined), none sent
    // twice except as EVAL after NOSCRIPT (the first round's, on a new
    // server, and the third's).
    assert_eq!(server.evalsha_calls(), 16);
    assert!(pipe.is_open() && pipe.deadline().is_none());
}

#[test]
fn other_algorithms_go_one_script_run_per_check_and_refusals_are_remembered() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let spec = LimiterSpec::FixedWindow { limit: 3, window_micros: 60_000_000 };
    let piped = RedisLimiter::new(&store, "window-piped", spec).unwrap();
    let direct = RedisLimiter::new(&store, "window-direct", spec).unwrap();
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    let requests: Vec<(Vec<u8>, u64)> = (0..6).map(|i| ("k".into(), 1 + i % 2)).collect();
    let answers = round_trip(&mut pipe, &mut socket, &piped, &requests);
    for ((key, cost), answer) in requests.iter().zip(answers) {
        let expected = direct.check(key, *cost).unwrap();
        let answer = answer.unwrap();
        assert_eq!((answer.allowed, answer.remaining), (expected.allowed, expected.remaining));
    }
    // The refusals were remembered: the next is answered at once, locally.
    let answered = pipe.check_many(&piped, vec![("k".into(), 2, 0)]).unwrap();
    assert!(!answered[0].1.as_ref().unwrap().allowed);
    assert!(pipe.take_output().is_empty());
}

#[test]
fn a_gcra_batch_of_more_than_512_goes_as_full_runs_a_few_to_a_write() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let clock = Arc::new(ManualClock::new());
    clock.advance_micros(1_700_000_000_000_000);
    let limiter =
        RedisLimiter::with_test_clock(&store, "large", SPEC, Arc::clone(&clock)).unwrap().remember_refusals(false);
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    // The script loaded (a new server answers the first run NOSCRIPT).
    round_trip(&mut pipe, &mut socket, &limiter, &[(b"first".to_vec(), 1)]);
    let before = server.evalsha_calls();
    // 600 checks: runs of GCRA's 128 at most, so five runs, in at most
    // four writes — not four writes of 150 split into eight runs.
    let numbered = (0..600).map(|i| (format!("k{}", i % 7).into_bytes(), 1, i)).collect();
    let mut answered = pipe.check_many(&limiter, numbered).unwrap_or_else(|_| panic!("the pipe is ready"));
    let writes: Vec<Vec<u8>> = std::iter::from_fn(|| Some(pipe.take_output()).filter(|b| !b.is_empty())).collect();
    let runs: Vec<usize> = writes.iter().map(|w| w.windows(7).filter(|w| w == b"EVALSHA").count()).collect();
    assert_eq!(runs, [2, 2, 1]);
    for write in &writes {
        socket.write_all(write).unwrap();
    }
    let mut buffer = [0u8; 4096];
    while answered.len() < 600 {
        let n = socket.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        answered.extend(pipe.receive(&buffer[..n]));
    }
    assert!(in_order(answered).iter().all(Result::is_ok));
    assert_eq!(server.evalsha_calls() - before, 5);
}

#[test]
fn a_batch_of_one_check_scripts_goes_as_at_most_four_writes_each_answered_in_order() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let spec = LimiterSpec::SlidingWindowCounter { limit: 25, window_micros: 60_000_000 };
    // One clock for both, so that no window ends between them.
    let clock = Arc::new(ManualClock::new());
    clock.advance_micros(1_700_000_000_000_000);
    let limiter = |name| RedisLimiter::with_test_clock(&store, name, spec, Arc::clone(&clock)).unwrap();
    let piped = limiter("counter-piped").remember_refusals(false);
    let direct = limiter("counter-direct").remember_refusals(false);
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    // The script loaded (a new server answers the first run NOSCRIPT).
    round_trip(&mut pipe, &mut socket, &piped, &[(b"first".to_vec(), 1)]);
    let before = server.evalsha_calls();
    // 40 checks (8 or more per write): four writes of ten script runs.
    let requests: Vec<(Vec<u8>, u64)> = (0..40).map(|i| (format!("k{}", i % 3).into_bytes(), 1 + i % 2)).collect();
    let numbered = requests.iter().enumerate().map(|(i, (key, cost))| (key.clone(), *cost, i)).collect();
    let mut answered = pipe.check_many(&piped, numbered).unwrap_or_else(|_| panic!("the pipe is ready"));
    let writes: Vec<Vec<u8>> = std::iter::from_fn(|| Some(pipe.take_output()).filter(|b| !b.is_empty())).collect();
    assert_eq!(writes.len(), 4);
    for write in &writes {
        assert_eq!(write.windows(7).filter(|w| w == b"EVALSHA").count(), 10, "ten runs a write");
        socket.write_all(write).unwrap();
    }
    let mut buffer = [0u8; 512];
    while answered.len() < requests.len() {
        let n = socket.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        answered.extend(pipe.receive(&buffer[..n]));
    }
    assert!(pipe.take_output().is_empty(), "nothing sent again");
    // A script run per check, decided in the order sent.
    assert_eq!(server.evalsha_calls() - before, 40);
    for ((key, cost), answer) in requests.iter().zip(in_order(answered)) {
        let expected = direct.check(key, *cost).unwrap();
        let answer = answer.unwrap();
        assert_eq!((answer.allowed, answer.remaining), (expected.allowed, expected.remaining));
    }
    // Fewer than 16 checks: one write.
    let numbered = (0..5).map(|i| (b"one".to_vec(), 1, i)).collect();
    assert!(pipe.check_many(&piped, numbered).unwrap().is_empty());
    assert!(!pipe.take_output().is_empty());
    assert!(pipe.take_output().is_empty(), "one write");
}

#[test]
fn the_connection_is_set_up_with_the_urls_password_and_database() {
    let server = RedisServer::start();
    let _: () =
        redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("s3cret").query(&mut server.connection()).unwrap();
    let url = format!("redis://:s3cret@127.0.0.1:{}/3", server.port);
    let store = RedisStore::connect(&url, StoreOptions::default()).unwrap();
    let limiter = RedisLimiter::new(&store, "set-up", SPEC).unwrap();
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    let answers = round_trip(&mut pipe, &mut socket, &limiter, &[("a".into(), 1), ("b".into(), 1)]);
    assert!(answers.iter().all(|a| a.as_ref().unwrap().allowed));
    let mut db3 = redis::Client::open(url).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*set-up*").query(&mut db3).unwrap();
    assert_eq!(keys.len(), 2, "the state is in database 3: {keys:?}");
}

#[test]
fn a_silent_server_times_out_what_is_waiting_and_the_policy_decides() {
    let server = RedisServer::start();
    let timeout = Duration::from_millis(50);
    let options = StoreOptions { timeout, ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), options).unwrap();
    let limiter = RedisLimiter::new(&store, "silent", SPEC).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    round_trip(&mut pipe, &mut socket, &limiter, &[("warm-up".into(), 1)]);
    server.stall();
    let sent = Instant::now();
    let answered = pipe.check_many(&limiter, vec![("a".into(), 1, 0), ("b".into(), 2, 1)]).unwrap();
    assert!(answered.is_empty());
    write_output(&mut pipe, &mut socket);
    let deadline = pipe.deadline().expect("two checks wait");
    assert!(deadline >= sent + timeout && deadline <= Instant::now() + timeout);
    assert!(pipe.expire(deadline - Duration::from_millis(1)).is_empty(), "not yet");
    let answers = in_order(pipe.expire(deadline));
    assert_eq!(answers.len(), 2);
    for answer in answers {
        let decision = answer.unwrap();
        assert!(!decision.allowed, "fail closed");
        assert_eq!(decision.retry_after_micros, 200_000, "the store's retry interval");
    }
    // The reply is late: awaited a timeout more, while new checks go by
    // the store's own connection.
    assert!(pipe.is_open());
    assert_eq!(pipe.deadline(), Some(deadline + timeout));
    assert_eq!(pipe.check_many(&limiter, vec![("c".into(), 1, 2)]).unwrap_err().len(), 1);
    // Nothing came back since the checks were sent, and a probe of the
    // server goes unanswered: the store is down.
    let probed = Instant::now();
    while !store.is_down() {
        assert!(probed.elapsed() < Duration::from_secs(2), "the store was not marked down");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Still nothing a timeout later: the connection is silent, and closes.
    assert!(pipe.expire(deadline + timeout).is_empty(), "no check was left waiting");
    assert!(!pipe.is_open());
    server.resume();
    assert!(!pipe.wants_connection(), "not within the retry interval");
    let refused = pipe.check_many(&limiter, vec![("a".into(), 1, 0)]);
    assert_eq!(refused.unwrap_err().len(), 1, "given back for the limiter's own calls");
    std::thread::sleep(Duration::from_millis(250));
    assert!(pipe.wants_connection());
    let mut socket = open(&mut pipe);
    let answers = round_trip(&mut pipe, &mut socket, &limiter, &[("c".into(), 1)]);
    assert!(answers[0].as_ref().unwrap().allowed, "back on Redis");
}

#[test]
fn a_late_reply_fails_its_own_checks_only_and_the_runs_behind_it_are_answered() {
    let server = RedisServer::start();
    let timeout = Duration::from_millis(100);
    let options = StoreOptions { timeout, retry_interval: Duration::from_secs(5), ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), options).unwrap();
    let spec = LimiterSpec::FixedWindow { limit: 100, window_micros: 60_000_000 };
    let limiter = RedisLimiter::new(&store, "late", spec).unwrap();
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    round_trip(&mut pipe, &mut socket, &limiter, &[("k".into(), 1)]);
    // Two runs in flight, the second sent 60 ms after the first; the host
    // reads nothing until the first is past its deadline, as if its reply
    // were slow to come.
    assert!(pipe.check_many(&limiter, vec![("k".into(), 1, 0)]).unwrap().is_empty());
    let first = pipe.deadline().unwrap();
    write_output(&mut pipe, &mut socket);
    std::thread::sleep(Duration::from_millis(60));
    assert!(pipe.check_many(&limiter, vec![("k".into(), 1, 1)]).unwrap().is_empty());
    write_output(&mut pipe, &mut socket);
    std::thread::sleep(first.saturating_duration_since(Instant::now()));
    let timed_out = pipe.expire(Instant::now());
    assert_eq!(timed_out.len(), 1);
    assert_eq!(timed_out[0].0, 0);
    assert!(matches!(timed_out[0].1, Err(Error::Timeout)), "{:?}", timed_out[0].1);
    assert!(pipe.is_open(), "one late reply does not close the connection");
    // The replies come: the late one is dropped, the next one answers.
    let mut answered = Vec::new();
    let mut buffer = [0u8; 512];
    while answered.is_empty() {
        let n = socket.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        answered.extend(pipe.receive(&buffer[..n]));
    }
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].0, 1);
    assert_eq!(answered[0].1.as_ref().unwrap().remaining, 100 - 3, "three checks of k ran, the late one too");
    assert!(pipe.is_idle() && pipe.is_open());
    // The server answered: the store was never down, not even once the
    // probe a timeout with no answer starts is over.
    std::thread::sleep(timeout * 2);
    assert!(!store.is_down());
    let answers = round_trip(&mut pipe, &mut socket, &limiter, &[("after".into(), 1)]);
    assert!(answers[0].as_ref().unwrap().allowed, "the pipe takes checks again");
}

#[test]
fn a_lost_connection_fails_what_is_waiting_and_one_that_cannot_open_waits_the_retry_interval() {
    let mut server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let limiter = RedisLimiter::new(&store, "lost", SPEC).unwrap();
    let mut pipe = ScriptPipe::new(&store).unwrap();
    let mut socket = open(&mut pipe);
    server.kill();
    assert!(pipe.check_many(&limiter, vec![("a".into(), 1, 0)]).unwrap().is_empty());
    let _ = socket.write_all(&pipe.take_output());
    assert!(pipe.take_output().is_empty(), "one write");
    let mut buffer = [0u8; 64];
    assert!(matches!(socket.read(&mut buffer), Ok(0) | Err(_)), "closed");
    let answers = in_order(pipe.lost());
    assert!(answers[0].as_ref().unwrap_err().is_unavailability(), "{answers:?}");
    assert!(!pipe.is_open() && store.is_down());
    // Nothing listens now: a connection that cannot open keeps the pipe
    // closed for the retry interval, and leaves the store to its own
    // connection (which finds out for itself).
    std::thread::sleep(Duration::from_millis(250));
    assert!(!store.is_down() && pipe.wants_connection());
    pipe.connecting();
    assert!(!pipe.wants_connection(), "one connection at a time");
    assert!(TcpStream::connect(pipe.address()).is_err());
    assert!(pipe.lost().is_empty());
    assert!(!store.is_down() && !pipe.wants_connection());
    std::thread::sleep(Duration::from_millis(250));
    assert!(pipe.wants_connection());
}

/// Reads from `socket` until the server closes it, handing the pipe every
/// byte; what that answered.
fn read_to_end(pipe: &mut ScriptPipe<usize>, socket: &mut TcpStream) -> Answered<usize> {
    let mut answered = Vec::new();
    let mut buffer = [0u8; 512];
    while let Ok(n @ 1..) = socket.read(&mut buffer) {
        answered.extend(pipe.receive(&buffer[..n]));
    }
    answered
}

#[test]
fn a_server_with_too_many_clients_closes_only_the_pipe_for_a_while() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let limiter = RedisLimiter::new(&store, "crowded", SPEC).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    let mut admin = server.connection();
    // The store's connections (opened by a check) and this one: no room
    // for another.
    assert!(limiter.check("warm-up", 1).unwrap().allowed);
    let info: String = redis::cmd("INFO").arg("clients").query(&mut admin).unwrap();
    let clients = info.lines().find_map(|l| l.strip_prefix("connected_clients:")).unwrap().trim().to_owned();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxclients").arg(clients).query(&mut admin).unwrap();
    let mut pipe = pipe_of(&store);
    pipe.connecting();
    let mut socket = TcpStream::connect(pipe.address()).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    pipe.opened();
    assert!(pipe.check_many(&limiter, vec![("a".into(), 1, 0)]).unwrap().is_empty());
    loop {
        let bytes = pipe.take_output();
        if bytes.is_empty() || socket.write_all(&bytes).is_err() {
            break;
        }
    }
    // The server's "-ERR max number of clients reached" comes in place of
    // the set-up's reply: not a script's answer, and not Redis down.
    let answers = in_order(read_to_end(&mut pipe, &mut socket));
    assert_eq!(answers.len(), 1, "the check waiting was answered");
    let decision = answers[0].as_ref().unwrap();
    assert!(!decision.allowed, "through the policy (fail closed)");
    assert!(!pipe.is_open() && !store.is_down());
    assert!(!pipe.wants_connection(), "not within the retry interval");
    assert!(limiter.check("a", 1).unwrap().allowed, "the store's own connection serves meanwhile");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxclients").arg(100).query(&mut admin).unwrap();
    std::thread::sleep(Duration::from_millis(250));
    let mut socket = open(&mut pipe);
    let answers = round_trip(&mut pipe, &mut socket, &limiter, &[("b".into(), 1)]);
    assert!(answers[0].as_ref().unwrap().allowed, "the pipe is back");
}

#[test]
fn a_server_that_refuses_the_pipes_credentials_leaves_it_closed_for_good() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    // Set after the store connected: the pipe's connection has no password.
    let _: () =
        redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("s3cret").query(&mut server.connection()).unwrap();
    let mut pipe = pipe_of(&store);
    let _socket = open(&mut pipe);
    assert!(!pipe.is_open(), "the set-up was refused");
    std::thread::sleep(Duration::from_millis(250));
    assert!(!pipe.wants_connection(), "NOAUTH: trying again cannot help");
    let limiter = RedisLimiter::new(&store, "refused", SPEC).unwrap();
    let given_back = pipe.check_many(&limiter, vec![("a".into(), 1, 0)]);
    assert_eq!(given_back.unwrap_err().len(), 1, "for the store's own connection");
}

fn pipe_of(store: &RedisStore) -> ScriptPipe<usize> {
    ScriptPipe::new(store).expect("a plain TCP server")
}

#[test]
fn a_cluster_has_no_pipe() {
    let cluster = support::RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    assert!(ScriptPipe::<usize>::new(&store).is_none());
}
