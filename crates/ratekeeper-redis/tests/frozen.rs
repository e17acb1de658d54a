//! A frozen server (SIGSTOP: connections open, nothing answered) costs
//! every call at most the store's timeout — "the longest one decision may
//! take, reconnection included" — whether blocking, async or with a
//! callback, and on the first call as on every one after, which must open
//! a new connection to the frozen server.

mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratekeeper::{Decision, LimiterSpec};
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions};
use support::RedisServer;

const GENEROUS: LimiterSpec = LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 1_000_000_000_000 };
/// Large enough that a loaded two-core machine's scheduling stays well
/// within the 20% allowed.
const TIMEOUT: Duration = Duration::from_millis(200);
const RETRY_INTERVAL: Duration = Duration::from_millis(20);
/// The most a call may take.
const BOUND: Duration = Duration::from_millis(240);
const CALLS: usize = 5;

/// Resumes the server however the test ends.
struct Frozen<'a>(&'a RedisServer);

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        self.0.resume();
    }
}

type Call<'a> = Box<dyn Fn() -> Result<Decision, Error> + 'a>;

#[test]
fn with_the_server_frozen_every_call_returns_within_its_timeout() {
    let server = RedisServer::start();
    let options = StoreOptions { timeout: TIMEOUT, retry_interval: RETRY_INTERVAL, ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), options).unwrap();
    let limiter = RedisLimiter::new(&store, "frozen", GENEROUS).unwrap();
    // An async runtime of the caller's: its calls take the store's
    // multiplexed connection, as Python's and C's async calls do.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let callback = |key: &'static str| {
        let (tx, rx) = mpsc::channel();
        limiter.check_with(key, 1, move |answer| tx.send(answer).unwrap());
        rx.recv_timeout(Duration::from_secs(10)).expect("the callback was called")
    };
    let calls: Vec<(&str, Call<'_>)> = vec![
        ("blocking check", Box::new(|| limiter.check("blocking", 1))),
        ("blocking peek", Box::new(|| limiter.peek("peek", 1))),
        ("check_async", Box::new(|| runtime.block_on(limiter.check_async("async", 1)))),
        ("check_with", Box::new(|| callback("callback"))),
    ];
    // Each kind has its connection open and its script loaded.
    for (kind, call) in &calls {
        assert!(call().unwrap().allowed, "{kind}");
    }

    server.stall();
    let _resume = Frozen(&server);
    let mut timed_out = vec![0; calls.len()];
    for round in 0..CALLS {
        for ((kind, call), timed_out) in calls.iter().zip(&mut timed_out) {
            let start = Instant::now();
            let answer = call();
            let took = start.elapsed();
            assert!(took <= BOUND, "{kind}, call {round}: {took:?} with a timeout of {TIMEOUT:?} ({answer:?})");
            match answer {
                Err(Error::Timeout) if took >= TIMEOUT * 9 / 10 => *timed_out += 1,
                // The store marked down after a timeout: no wait at all.
                Err(Error::Unavailable) => {}
                other => panic!("{kind}, call {round}: {other:?} from a frozen server"),
            }
            // Past the retry interval (and anything that may lead to it).
            std::thread::sleep(TIMEOUT + RETRY_INTERVAL + Duration::from_millis(100));
        }
    }
    // The bound held on calls that did wait for the frozen server, first
    // and later (reconnecting) ones.
    for ((kind, _), timed_out) in calls.iter().zip(timed_out) {
        assert!(timed_out >= 3, "{kind}: only {timed_out} of {CALLS} calls waited for the server");
    }
}
