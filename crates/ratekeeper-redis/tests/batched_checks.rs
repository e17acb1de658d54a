//! `check_many_async`: many checks in one script run (GCRA on one server)
//! decide exactly as the same checks one at a time — in order, the same key
//! more than once, costs of 0 and above the limit — and Redis Cluster and
//! an absent Redis give the answers of single checks.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Clock, Decision, LimiterSpec, ManualClock};
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};
use support::{RedisCluster, RedisServer, SevenUsers};

const SPEC: LimiterSpec = LimiterSpec::Gcra { max_burst: 4, count_per_period: 3, period_micros: 1_000_000 };

/// 300 requests over 7 keys, costs 0 to 6 (the limit is 5).
fn requests(round: u64) -> Vec<(Vec<u8>, u64)> {
    SevenUsers::requests(round)
}

fn check_many(limiter: &RedisLimiter, requests: Vec<(Vec<u8>, u64)>) -> Vec<Result<Decision, Error>> {
    let limiter = limiter.clone();
    RedisStore::block_on(async move { limiter.check_many_async(requests).await })
}

#[test]
fn a_batch_decides_as_the_same_checks_in_order() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let clock = Arc::new(ManualClock::new());
    clock.advance_micros(1_700_000_000_000_000);
    let limiter =
        RedisLimiter::with_test_clock(&store, "batched", SPEC, Arc::clone(&clock)).unwrap().remember_refusals(false);
    // The same checks, one at a time, on in-process limiters.
    let mut users = SevenUsers::new(&SPEC);
    // Loads the script (its first EVALSHA fails with NOSCRIPT).
    limiter.check("warm-up", 0).unwrap();
    for round in 0..4 {
        let requests = requests(round);
        let before = server.evalsha_calls();
        let answers = check_many(&limiter, requests.clone());
        // 300 requests: three runs of at most 128.
        assert_eq!(server.evalsha_calls() - before, 3);
        users.assert_answers(round, &requests, answers, clock.now_micros());
        clock.advance_micros(700_001);
    }
    assert!(users.admitted > 20, "the comparison saw admissions ({})", users.admitted);
}

#[test]
fn refusals_from_a_batch_are_remembered() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let limiter = RedisLimiter::new(&store, "remembered", SPEC).unwrap();
    let answers = check_many(&limiter, vec![("k".into(), 5), ("k".into(), 1), ("j".into(), 1)]);
    let answers: Vec<Decision> = answers.into_iter().map(Result::unwrap).collect();
    assert!(answers[0].allowed && !answers[1].allowed && answers[2].allowed);
    assert!(limiter.remembered_refusal("k", 1).is_some());
    assert!(limiter.remembered_refusal("j", 1).is_none());
    // A batch answers a remembered refusal without Redis.
    let before = server.evalsha_calls();
    let again = check_many(&limiter, vec![("k".into(), 1), ("k".into(), 2)]);
    assert!(again.iter().all(|a| !a.as_ref().unwrap().allowed));
    assert_eq!(server.evalsha_calls(), before);
}

#[test]
fn without_redis_every_request_gets_the_policy() {
    let mut server = RedisServer::start();
    let options = StoreOptions { timeout: Duration::from_millis(200), ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), options).unwrap();
    let errors = RedisLimiter::new(&store, "errors", SPEC).unwrap();
    let closed = RedisLimiter::new(&store, "closed", SPEC).unwrap().when_unavailable(WhenUnavailable::FailClosed);
    assert!(check_many(&errors, requests(0)).iter().all(|a| a.is_ok()));
    server.kill();
    let answers = check_many(&errors, requests(1));
    assert_eq!(answers.len(), 300);
    assert!(answers.iter().all(|a| a.as_ref().is_err_and(Error::is_unavailability)), "{:?}", answers[0]);
    let answers = check_many(&closed, requests(2));
    assert!(answers.iter().all(|a| a.as_ref().is_ok_and(|d| !d.allowed)));
}

#[test]
fn on_a_cluster_a_batch_decides_as_single_checks() {
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    // One unit an hour: nothing refills while the test runs, so both see the
    // same sequence of admissions and refusals.
    let spec = LimiterSpec::Gcra { max_burst: 4, count_per_period: 1, period_micros: 3_600_000_000 };
    let batched = RedisLimiter::new(&store, "cluster-batched", spec).unwrap().remember_refusals(false);
    let single = RedisLimiter::new(&store, "cluster-single", spec).unwrap().remember_refusals(false);
    let requests = requests(0);
    let answers = check_many(&batched, requests.clone());
    for ((key, cost), answer) in requests.iter().zip(answers) {
        let expected = single.check(key, *cost).unwrap();
        let answer = answer.unwrap();
        assert_eq!((answer.allowed, answer.limit), (expected.allowed, expected.limit), "{key:?} cost {cost}");
    }
}
