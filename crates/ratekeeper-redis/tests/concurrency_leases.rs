//! The shared concurrency limiter: permits held as leases in Redis, at
//! most `limit` at once, released exactly once, renewed by their holders,
//! and reclaimed when they expire (on the scripts' manual clock here; with
//! real processes killed by `kill -9` in `concurrency_kill.rs`).

mod support;

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Argument, ManualClock, NEVER};
use ratekeeper_redis::{Error, RedisConcurrencyLimiter, RedisOption, RedisStore, StoreOptions, WhenUnavailable};
use support::RedisServer;

const SECOND: Duration = Duration::from_secs(1);

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

fn limiter(store: &RedisStore, name: &str, limit: u64, clock: &Arc<ManualClock>) -> RedisConcurrencyLimiter {
    RedisConcurrencyLimiter::with_test_clock(store, name, limit, SECOND, Arc::clone(clock)).unwrap()
}

#[test]
fn at_most_limit_permits_are_held_and_a_release_makes_room() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let a = limiter(&s, "pool", 3, &clock);
    // Another process's limiter: the same name shares the permits.
    let b = limiter(&s, "pool", 3, &clock);
    let mut leases = Vec::new();
    for remaining in [2, 1, 0] {
        let (decision, lease) = a.try_acquire(1).unwrap();
        assert!(decision.allowed);
        assert_eq!((decision.limit, decision.remaining, decision.retry_after_micros), (3, remaining, 0));
        assert_eq!(decision.reset_after_micros, 1_000_000, "the last lease expires in a second");
        leases.push(lease.unwrap());
    }
    clock.advance(Duration::from_millis(250));
    let (refused, none) = b.try_acquire(1).unwrap();
    assert!(!refused.allowed && none.is_none());
    assert_eq!(refused.remaining, 0);
    assert_eq!(refused.retry_after_micros, 750_000, "until the first lease expires");
    assert_eq!(b.held().unwrap(), 3);
    assert!(b.release(&leases.pop().unwrap()).unwrap(), "any process may release a lease it was given");
    let (admitted, lease) = b.try_acquire(1).unwrap();
    assert!(admitted.allowed);
    assert_eq!(admitted.reset_after_micros, 1_000_000, "the new lease expires last");
    assert!(lease.unwrap().is_recorded());
    assert_eq!(a.held().unwrap(), 3);
}

#[test]
fn a_lease_is_released_exactly_once() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "once", 2, &clock);
    let (_, lease) = l.try_acquire(1).unwrap();
    let lease = lease.unwrap();
    let (_, other) = l.try_acquire(1).unwrap();
    assert_eq!(l.held().unwrap(), 2);
    assert!(l.release(&lease).unwrap());
    assert!(!l.release(&lease).unwrap(), "a second release frees nothing");
    assert!(!l.release(&lease.clone()).unwrap(), "nor does a clone's");
    assert_eq!(l.held().unwrap(), 1, "the other lease still holds its permit");
    assert!(!l.renew(&lease).unwrap(), "a released lease cannot be renewed");
    assert!(l.release(&other.unwrap()).unwrap());
    assert_eq!(l.held().unwrap(), 0);
    let (leases, permits) = l.keys();
    let mut c = server.connection();
    let exists: i64 = redis::cmd("EXISTS").arg(leases).arg(permits).query(&mut c).unwrap();
    assert_eq!(exists, 0, "no key is left once no lease is");
}

#[test]
fn an_expired_lease_is_reclaimed_and_can_no_longer_be_released() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "reclaim", 1, &clock);
    let (_, dead) = l.try_acquire(1).unwrap();
    let dead = dead.unwrap();
    // Its holder never comes back. Until its expiry, the permit is held...
    clock.advance(Duration::from_micros(999_999));
    let (refused, _) = l.try_acquire(1).unwrap();
    assert!(!refused.allowed);
    assert_eq!(refused.retry_after_micros, 1);
    // ...and from then on it is free, with no one releasing it.
    clock.advance(Duration::from_micros(1));
    let (admitted, lease) = l.try_acquire(1).unwrap();
    assert!(admitted.allowed, "the expired lease was reclaimed by the acquire");
    assert!(!l.release(&dead).unwrap(), "an expired lease is gone");
    assert!(!l.renew(&dead).unwrap());
    assert_eq!(l.held().unwrap(), 1, "the late release freed nothing");
    assert!(l.release(&lease.unwrap()).unwrap());
}

#[test]
fn a_lease_cannot_be_released_after_its_expiry_even_if_nothing_reclaimed_it() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "late", 2, &clock);
    let (_, lease) = l.try_acquire(1).unwrap();
    // No script runs between the acquire and the release, at the expiry.
    clock.advance(SECOND);
    assert!(!l.release(&lease.unwrap()).unwrap());
    assert_eq!(l.held().unwrap(), 0);
}

#[test]
fn renewing_keeps_a_lease_past_its_first_expiry() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "renew", 1, &clock);
    let (_, lease) = l.try_acquire(1).unwrap();
    let lease = lease.unwrap();
    clock.advance(Duration::from_millis(600));
    assert!(l.renew(&lease).unwrap(), "now it expires at 1.6 s");
    clock.advance(Duration::from_millis(900));
    let (refused, _) = l.try_acquire(1).unwrap();
    assert!(!refused.allowed, "1.5 s: held past its first expiry");
    assert_eq!(refused.retry_after_micros, 100_000);
    assert!(l.renew(&lease).unwrap(), "renewed at 1.5 s: expires at 2.5 s");
    clock.advance(SECOND);
    assert!(!l.renew(&lease).unwrap(), "2.5 s: expired");
    assert!(l.try_acquire(1).unwrap().0.allowed);
}

#[test]
fn a_lease_holds_its_permits_and_a_refusal_waits_for_enough_of_them() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "weights", 5, &clock);
    let (_, two) = l.try_acquire(2).unwrap();
    clock.advance(Duration::from_millis(100));
    let (_, one) = l.try_acquire(1).unwrap();
    clock.advance(Duration::from_millis(100));
    let (d, _) = l.try_acquire(2).unwrap();
    assert!(d.allowed);
    assert_eq!(d.remaining, 0);
    // Three more need the 2-permit lease (0.8 s left) and the 1-permit one
    // (0.9 s left) to have expired.
    let (refused, _) = l.try_acquire(3).unwrap();
    assert!(!refused.allowed);
    assert_eq!((refused.retry_after_micros, refused.reset_after_micros), (900_000, 1_000_000));
    assert_eq!(l.try_acquire(2).unwrap().0.retry_after_micros, 800_000);
    let (never, _) = l.try_acquire(6).unwrap();
    assert_eq!((never.allowed, never.retry_after_micros), (false, NEVER), "more than the limit, ever");
    assert_eq!(two.as_ref().unwrap().permits(), 2);
    assert!(l.release(&two.unwrap()).unwrap());
    assert_eq!(l.held().unwrap(), 3);
    assert!(l.try_acquire(2).unwrap().0.allowed);
    assert!(!l.try_acquire(1).unwrap().0.allowed);
    assert!(l.release(&one.unwrap()).unwrap());
    assert!(l.try_acquire(1).unwrap().0.allowed);
}

#[test]
fn the_keys_share_a_slot_and_expire_with_the_last_lease() {
    let server = RedisServer::start();
    let s = store(&server);
    // The server's own clock: the keys' TTL follows the leases'.
    let l = RedisConcurrencyLimiter::new(&s, "a:b{c}", 4, Duration::from_millis(1_500)).unwrap();
    let (leases, permits) = l.keys();
    assert_eq!((leases, permits), ("rk:{a%3Ab%7Bc%7D}:leases", "rk:{a%3Ab%7Bc%7D}:lease-permits"));
    let (_, lease) = l.try_acquire(1).unwrap();
    let mut c = server.connection();
    for key in [leases, permits] {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut c).unwrap();
        assert!((1_000..=1_500).contains(&ttl), "{key}: {ttl} ms");
    }
    let score: f64 = redis::cmd("ZSCORE").arg(leases).arg(lease.as_ref().unwrap().id()).query(&mut c).unwrap();
    let time: Vec<i64> = redis::cmd("TIME").query(&mut c).unwrap();
    let expires_in = score as i64 - (time[0] * 1_000_000 + time[1]);
    assert!((1_000_000..=1_500_000).contains(&expires_in), "{expires_in} µs");
    assert!(l.release(&lease.unwrap()).unwrap());
}

#[test]
fn bad_arguments_are_typed_errors_and_nothing_is_sent() {
    let server = RedisServer::start();
    let s = store(&server);
    let invalid = |r: Result<RedisConcurrencyLimiter, Error>| match r {
        Err(Error::Invalid(ratekeeper::Error::InvalidArgument(a))) => a.argument(),
        other => panic!("{other:?}"),
    };
    assert_eq!(invalid(RedisConcurrencyLimiter::new(&s, "x", 0, SECOND)), Argument::Limit);
    assert_eq!(invalid(RedisConcurrencyLimiter::new(&s, "x", u64::MAX, SECOND)), Argument::Limit);
    for ttl in [Duration::from_micros(999), Duration::from_secs(86_401)] {
        match RedisConcurrencyLimiter::new(&s, "x", 1, ttl) {
            Err(Error::InvalidOption(o)) => assert_eq!(o.option(), RedisOption::LeaseTtl),
            other => panic!("{other:?}"),
        }
    }
    let l = RedisConcurrencyLimiter::new(&s, "x", 1, SECOND).unwrap();
    for permits in [0, 1 << 31] {
        match l.try_acquire(permits) {
            Err(Error::Invalid(ratekeeper::Error::InvalidArgument(a))) => assert_eq!(a.argument(), Argument::Permits),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(server.evalsha_calls(), 0);
    assert!(matches!(l.when_unavailable(WhenUnavailable::LocalShare), Err(Error::Unsupported(_))));
}

#[test]
fn when_redis_is_down_the_policy_decides_acquires() {
    let mut server = RedisServer::start();
    let s = store(&server);
    let l = RedisConcurrencyLimiter::new(&s, "down", 1, SECOND).unwrap();
    let (_, held) = l.try_acquire(1).unwrap();
    server.kill();
    assert!(l.try_acquire(1).unwrap_err().is_unavailability(), "the default returns the error");
    assert!(l.release(&held.unwrap()).unwrap_err().is_unavailability());
    let closed = l.clone().when_unavailable(WhenUnavailable::FailClosed).unwrap();
    let (refused, none) = closed.try_acquire(1).unwrap();
    assert!(!refused.allowed && none.is_none());
    assert_eq!(refused.retry_after_micros, 200_000, "the store's retry interval");
    let open = l.when_unavailable(WhenUnavailable::FailOpen).unwrap();
    let (admitted, lease) = open.try_acquire(1).unwrap();
    let lease = lease.unwrap();
    assert!(admitted.allowed && !lease.is_recorded());
    assert!(open.renew(&lease).unwrap());
    assert!(open.release(&lease).unwrap());
    assert!(!open.release(&lease).unwrap(), "released exactly once, here too");
    assert!(!open.renew(&lease).unwrap());
}

#[test]
fn async_and_callback_forms_answer_as_the_blocking_ones() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let l = limiter(&s, "forms", 1, &clock);
    let (tx, rx) = std::sync::mpsc::channel();
    l.try_acquire_with(1, move |r| tx.send(r).unwrap());
    let (decision, lease) = rx.recv().unwrap().unwrap();
    assert!(decision.allowed);
    let lease = lease.unwrap();
    let this = l.clone();
    let refused = RedisStore::block_on(async move { this.try_acquire_async(1).await }).unwrap();
    assert!(!refused.0.allowed);
    let (tx, rx) = std::sync::mpsc::channel();
    let tx2 = tx.clone();
    l.renew_with(&lease, move |r| tx.send(r).unwrap());
    assert!(rx.recv().unwrap().unwrap());
    l.release_with(&lease, move |r| tx2.send(r).unwrap());
    assert!(rx.recv().unwrap().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    l.try_acquire_with(0, move |r| tx.send(r.map(|(d, _)| d)).unwrap());
    assert!(matches!(rx.recv().unwrap(), Err(Error::Invalid(_))));
}

#[test]
fn on_a_cluster_each_limiter_keeps_its_two_keys_in_one_slot() {
    let cluster = support::RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let s = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    // Enough names to land on every master; a script touching two slots
    // would fail with CROSSSLOT.
    for i in 0..12 {
        let l = RedisConcurrencyLimiter::new(&s, &format!("pool-{i}"), 2, SECOND).unwrap();
        let (_, a) = l.try_acquire(1).unwrap();
        let (_, b) = l.try_acquire(1).unwrap();
        assert!(!l.try_acquire(1).unwrap().0.allowed, "pool-{i}");
        assert!(l.release(&a.unwrap()).unwrap());
        assert!(l.renew(b.as_ref().unwrap()).unwrap());
        assert_eq!(l.held().unwrap(), 1);
        let (leases, permits) = l.keys();
        assert_eq!(cluster.master_of(leases), cluster.master_of(permits));
        assert!(l.release(&b.unwrap()).unwrap());
    }
}

#[test]
fn an_acquire_that_timed_out_gives_its_lease_back_even_if_its_script_runs_late() {
    let server = RedisServer::start();
    // Every piece written with "acquire" in it reaches the server 500 ms
    // late: past the 100 ms timeout, and after the releases the timeout
    // sends at once and retries (at 100, 200, 400 and 800 ms). Landing
    // midway between two retries leaves the lease visibly held for ~300 ms;
    // a delay on a retry's moment (400 ms) could hold it for less than one
    // poll, and the test flaked in CI that way.
    let proxy = support::SlowProxy::start(server.port, b"acquire", Duration::from_millis(500));
    let slow = RedisStore::connect(
        &proxy.url(),
        StoreOptions { timeout: Duration::from_millis(100), ..StoreOptions::default() },
    )
    .unwrap();
    let l = RedisConcurrencyLimiter::new(&slow, "late", 1, Duration::from_secs(60)).unwrap();
    // Loads the script, so that no later call carries its source (which
    // names "acquire").
    let (_, lease) = RedisConcurrencyLimiter::new(&store(&server), "warm", 1, SECOND).unwrap().try_acquire(1).unwrap();
    drop(lease);
    assert!(matches!(l.try_acquire(1), Err(Error::Timeout)));
    // Seen straight from the server: the late script took the lease, and
    // the retried release gave it back, long before its 60 s expiry.
    let direct = RedisConcurrencyLimiter::new(&store(&server), "late", 1, Duration::from_secs(60)).unwrap();
    let started = std::time::Instant::now();
    let mut taken = false;
    loop {
        let held = direct.held().unwrap();
        taken |= held == 1;
        if taken && held == 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "held {held} after {:?}", started.elapsed());
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(direct.try_acquire(1).unwrap().0.allowed);
}
