//! One caller's slow call is its own: it times out alone, the server goes
//! on answering every other caller, and the store is not marked down —
//! which would send every limiter on it to its unavailability policy (a
//! fail-open one admitting everyone) for the retry interval.
//!
//! The slow call is a large request held back on its way to the server (a
//! proxy delays the piece that carries its key), as one caller's 60 KiB key
//! on a slow link would be: the server itself answers at once throughout.

mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::LimiterSpec;
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions};
use support::{RedisServer, SlowProxy};

const GENEROUS: LimiterSpec = LimiterSpec::FixedWindow { limit: 1_000_000_000, window_micros: 1_000_000_000_000 };
const TIMEOUT: Duration = Duration::from_millis(150);
/// Long: a store marked down shows in every call made after it.
const RETRY_INTERVAL: Duration = Duration::from_secs(5);
/// How long the proxy holds back the slow request.
const DELAY: Duration = Duration::from_millis(400);
/// How long a timed-out call may take at most: its timeout plus room for
/// a loaded machine's scheduling (a CI run saw 234 ms for 150). Still
/// short of the two failures it tells apart: waiting for the held-back
/// answer (`DELAY`), and a timeout given whole to each read and write
/// (twice `TIMEOUT`).
const TOOK_AT_MOST: Duration = Duration::from_millis(290);

fn slow_key() -> Vec<u8> {
    let mut key = b"slow-".to_vec();
    key.resize(60 << 10, b'x');
    key
}

/// A store through `proxy`, and a limiter taking keys of up to 64 KiB.
fn setup(proxy: &SlowProxy) -> (RedisStore, RedisLimiter) {
    let options = StoreOptions { timeout: TIMEOUT, retry_interval: RETRY_INTERVAL, ..StoreOptions::default() };
    let store = RedisStore::connect(&proxy.url(), options).unwrap();
    let limiter = RedisLimiter::new(&store, "held-back", GENEROUS)
        .unwrap()
        .max_key_bytes(MaxKeyBytes::new(MaxKeyBytes::LARGEST).unwrap());
    assert!(limiter.check("warm-up", 1).unwrap().allowed);
    (store, limiter)
}

/// Checks `other` every 10 ms for `during` on this thread (blocking
/// calls: connections of their own); their outcomes.
fn others(limiter: &RedisLimiter, during: Duration) -> Vec<Result<bool, Error>> {
    let until = Instant::now() + during;
    let mut outcomes = Vec::new();
    while Instant::now() < until {
        outcomes.push(limiter.check("other", 1).map(|d| d.allowed));
        std::thread::sleep(Duration::from_millis(10));
    }
    outcomes
}

#[test]
fn a_slow_blocking_call_times_out_alone_and_the_store_stays_up() {
    let server = RedisServer::start();
    let proxy = SlowProxy::start(server.port, b"slow-", DELAY);
    let (store, limiter) = setup(&proxy);
    let key = slow_key();
    let ((answer, took), outcomes) = std::thread::scope(|scope| {
        let slow = scope.spawn(|| {
            let start = Instant::now();
            (limiter.check(&key, 1), start.elapsed())
        });
        // During the slow call, past its timeout, and past the probe that
        // a timeout with no answer since starts.
        let outcomes = others(&limiter, TIMEOUT * 3 + Duration::from_millis(200));
        (slow.join().unwrap(), outcomes)
    });
    assert!(matches!(answer, Err(Error::Timeout)), "{answer:?}");
    assert!(took <= TOOK_AT_MOST, "{took:?}");
    assert!(outcomes.len() > 10, "{} checks", outcomes.len());
    assert!(outcomes.iter().all(|o| matches!(o, Ok(true))), "every other check answered by Redis: {outcomes:?}");
    assert!(!store.is_down());
}

#[test]
fn a_slow_async_call_times_out_alone_and_the_store_stays_up() {
    let server = RedisServer::start();
    let proxy = SlowProxy::start(server.port, b"slow-", DELAY);
    let (store, limiter) = setup(&proxy);
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    limiter.check_with(slow_key(), 1, move |answer| tx.send((answer, start.elapsed())).unwrap());
    let outcomes = others(&limiter, TIMEOUT * 3 + Duration::from_millis(200));
    let (answer, took) = rx.recv().unwrap();
    assert!(matches!(answer, Err(Error::Timeout)), "{answer:?}");
    assert!(took <= TOOK_AT_MOST, "{took:?}");
    assert!(outcomes.iter().all(|o| matches!(o, Ok(true))), "every other check answered by Redis: {outcomes:?}");
    assert!(!store.is_down());
    // The async path's own connection answers again once the held-back
    // request has gone through.
    let (tx, rx) = mpsc::channel();
    limiter.check_with("after", 1, move |answer| tx.send(answer).unwrap());
    assert!(rx.recv().unwrap().unwrap().allowed);
}
