//! The shared Guava limiter on the server's own clock: processes (here,
//! separate stores) share one limiter, and joining keeps its parameters.

mod support;

use std::time::{Duration, Instant};

use ratekeeper_redis::{Error, RedisRateLimiter, RedisStore, StoreOptions};
use support::RedisServer;

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

#[test]
fn two_processes_share_one_schedule() {
    let server = RedisServer::start();
    let (a, b) = (store(&server), store(&server));
    let first = RedisRateLimiter::builder("shared", 10.0).max_burst_seconds(0.0).connect(&a).unwrap();
    // The second joins with other parameters: the existing limiter's win.
    let second = RedisRateLimiter::builder("shared", 1.0).connect(&b).unwrap();
    assert_eq!(second.rate().unwrap(), 10.0);
    assert_eq!(first.reserve(1).unwrap(), Duration::ZERO);
    // Pre-consumption: the second process pays for the first one's permit.
    let wait = second.reserve(1).unwrap();
    assert!(wait > Duration::from_millis(95) && wait <= Duration::from_millis(100), "{wait:?}");
    assert!(!first.try_acquire(1, Duration::from_millis(50)).unwrap());
    assert!(first.time_until_available().unwrap() > Duration::from_millis(100));
}

#[test]
fn threads_in_many_processes_follow_the_rate() {
    let server = RedisServer::start();
    let stores: Vec<RedisStore> = (0..4).map(|_| store(&server)).collect();
    let limiters: Vec<RedisRateLimiter> = stores
        .iter()
        .map(|s| RedisRateLimiter::builder("paced", 200.0).max_burst_seconds(0.0).connect(s).unwrap())
        .collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for limiter in &limiters {
            for _ in 0..2 {
                scope.spawn(move || {
                    for _ in 0..25 {
                        limiter.acquire(1).unwrap();
                    }
                });
            }
        }
    });
    // 200 permits at 200/s, the first free: at least 995 ms of schedule.
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(990), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1_500), "{elapsed:?}");
}

#[test]
fn bad_arguments_are_refused_before_any_round_trip() {
    let server = RedisServer::start();
    let s = store(&server);
    assert!(matches!(RedisRateLimiter::builder("x", f64::NAN).connect(&s), Err(Error::Invalid(_))));
    let limiter = RedisRateLimiter::builder("x", 1.0).connect(&s).unwrap();
    assert!(matches!(limiter.reserve(0), Err(Error::Invalid(_))));
    assert!(matches!(limiter.set_rate(-1.0), Err(Error::Invalid(_))));
    assert_eq!(limiter.rate().unwrap(), 1.0);
}

#[test]
fn async_calls_share_the_same_state() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisRateLimiter::builder("async", 5.0).connect(&s).unwrap();
    let waits = RedisStore::block_on(async move {
        let mut waits = Vec::new();
        for _ in 0..3 {
            waits.push(limiter.reserve_async(1).await.unwrap());
        }
        waits
    });
    assert_eq!(waits[0], Duration::ZERO);
    assert!(waits[2] > Duration::from_millis(390), "{waits:?}");
}

#[test]
fn an_unreachable_server_times_out_instead_of_hanging() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisRateLimiter::builder("gone", 5.0).connect(&s).unwrap();
    drop(server);
    let start = Instant::now();
    let result = limiter.reserve(1);
    assert!(result.is_err(), "{result:?}");
    assert!(start.elapsed() < Duration::from_millis(600), "{:?}", start.elapsed());
}
