//! Refunds and composites in Redis: `RedisLimiter::refund` gives back what
//! the in-process `Admission::refund` gives back, and `RedisCompositeLimiter`
//! decides as the in-process `KeyedCompositeLimiter` does — the same
//! decisions, every field of every part, on the same history (the scripts'
//! clock driven by the test, as `algorithm_vectors.rs` drives it) — all or
//! nothing, writing nothing when it refuses or peeks, under one hash tag on a
//! Redis Cluster.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use ratekeeper::keyed::{KeyedCompositeLimiter, KeyedOptions};
use ratekeeper::{Admission, AnyCore, Clock, Decision, LimiterSpec, ManualClock};
use ratekeeper_redis::{Error, RedisCompositeLimiter, RedisLimiter, RedisStore, StoreOptions, WhenUnavailable};
use support::{RedisCluster, RedisServer};

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

/// One spec of every algorithm that runs in Redis, with small limits so that
/// a short history reaches refusals, window rolls and refills.
const SPECS: [LimiterSpec; 5] = [
    LimiterSpec::Gcra { max_burst: 2, count_per_period: 3, period_micros: 1_000_000 },
    LimiterSpec::TokenBucket { rate: 2.5, burst: 4 },
    LimiterSpec::FixedWindow { limit: 5, window_micros: 1_000_000 },
    LimiterSpec::SlidingWindowCounter { limit: 4, window_micros: 700_000 },
    LimiterSpec::SlidingLog { limit: 3, window_micros: 900_000 },
];

/// A small deterministic generator (xorshift), so a failure replays.
struct Steps(u64);

impl Steps {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// A refund in Redis leaves every later decision as the in-process refund
/// does: for each algorithm, a history of checks, peeks, refunds (some of
/// more than was taken) and sleeps, decided by a `RedisLimiter` on the test
/// clock and by the core limiter at the same times, compared field by field.
#[test]
fn refunds_decide_as_the_in_process_refund() {
    let server = RedisServer::start();
    let s = store(&server);
    for (n, spec) in SPECS.iter().enumerate() {
        let clock = Arc::new(ManualClock::new());
        let redis = RedisLimiter::with_test_clock(&s, &format!("refund-{n}"), *spec, Arc::clone(&clock))
            .unwrap()
            .remember_refusals(false);
        let mut local = AnyCore::new(spec).unwrap();
        let mut steps = Steps(0x9e37_79b9_7f4a_7c15 + n as u64);
        for i in 0..400 {
            let now = clock.now_micros();
            let cost = steps.next(4);
            match steps.next(6) {
                0 | 1 => {
                    let expected = local.check(cost, now);
                    assert_eq!(redis.check("k", cost).unwrap(), expected, "{spec:?} step {i}: check {cost}");
                }
                2 => {
                    let expected = local.peek(cost, now);
                    assert_eq!(redis.peek("k", cost).unwrap(), expected, "{spec:?} step {i}: peek {cost}");
                }
                3 => {
                    let cost = if steps.next(10) == 0 { u64::MAX } else { steps.next(8) };
                    local.refund(cost, now);
                    redis.refund("k", cost).unwrap();
                    for c in 0..3 {
                        assert_eq!(
                            redis.peek("k", c).unwrap(),
                            local.peek(c, now),
                            "{spec:?} step {i}: after refund {cost}"
                        );
                    }
                }
                _ => clock.advance_micros(steps.next(400_000) as i64),
            }
        }
    }
}

/// A composite in Redis decides as the in-process keyed composite on the
/// same history: checks, peeks, refunds and sleeps over two user keys, for
/// mixes of every algorithm (two parts of one algorithm included), every
/// field of the combined decision and of each part's compared.
#[test]
fn a_composite_decides_as_the_in_process_composite() {
    let server = RedisServer::start();
    let s = store(&server);
    let mixes: Vec<Vec<LimiterSpec>> = vec![
        SPECS.to_vec(),
        vec![SPECS[3], SPECS[2]],
        vec![SPECS[0], SPECS[4]],
        vec![SPECS[1], LimiterSpec::TokenBucket { rate: 0.5, burst: 6 }],
        vec![SPECS[2], LimiterSpec::FixedWindow { limit: 9, window_micros: 3_000_000 }, SPECS[0]],
        // Only sliding logs: no part is checked without a peek first.
        vec![SPECS[4], LimiterSpec::SlidingLog { limit: 5, window_micros: 2_000_000 }],
    ];
    let mut refusals = 0;
    for (n, specs) in mixes.iter().enumerate() {
        let clock = Arc::new(ManualClock::new());
        let redis = RedisCompositeLimiter::with_test_clock(&s, &format!("mix-{n}"), specs, Arc::clone(&clock)).unwrap();
        assert_eq!(redis.parts(), specs.as_slice());
        let local = KeyedCompositeLimiter::new(specs, KeyedOptions::new(100), Arc::clone(&clock)).unwrap();
        let mut steps = Steps(0x2545_f491_4f6c_dd1d + n as u64);
        for i in 0..400 {
            let key: &[u8] = if steps.next(3) == 0 { b"b" } else { b"a" };
            // Now and then a cost no limit admits, beyond a double's 2^53.
            let cost = if steps.next(40) == 0 { u64::MAX } else { steps.next(4) };
            let what = match steps.next(7) {
                0..=2 => {
                    let (combined, parts) = local.check(key, cost).unwrap();
                    refusals += usize::from(!combined.allowed);
                    (redis.check(key, cost).unwrap(), combined, parts, "check")
                }
                3 => {
                    let (combined, parts) = local.peek(key, cost).unwrap();
                    (redis.peek(key, cost).unwrap(), combined, parts, "peek")
                }
                4 => {
                    let cost = if steps.next(10) == 0 { u64::MAX } else { steps.next(6) };
                    local.refund(key, cost).unwrap();
                    redis.refund(key, cost).unwrap();
                    let (combined, parts) = local.peek(key, 1).unwrap();
                    (redis.peek(key, 1).unwrap(), combined, parts, "peek after refund")
                }
                _ => {
                    clock.advance_micros(steps.next(500_000) as i64);
                    continue;
                }
            };
            let (got, combined, parts, op) = what;
            assert_eq!(got.combined, combined, "{specs:?} step {i}: {op} {cost}");
            assert_eq!(got.parts, parts, "{specs:?} step {i}: {op} {cost}");
        }
    }
    assert!(refusals > 100, "the histories should reach refusals: {refusals}");
}

/// Every key on the server with its value and expiry: any write changes it.
fn snapshot(server: &RedisServer) -> BTreeMap<String, (Vec<u8>, i64)> {
    let mut conn = server.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    keys.into_iter()
        .map(|k| {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(&mut conn).unwrap();
            let pttl: i64 = redis::cmd("PTTL").arg(&k).query(&mut conn).unwrap();
            (k, (dump, pttl))
        })
        .collect()
}

fn assert_unchanged(before: &BTreeMap<String, (Vec<u8>, i64)>, after: &BTreeMap<String, (Vec<u8>, i64)>, what: &str) {
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>(), "{what}: keys changed");
    for (key, (dump, pttl)) in before {
        let (dump_after, pttl_after) = &after[key];
        assert_eq!(dump, dump_after, "{what}: {key} was written");
        assert!(pttl_after <= pttl, "{what}: {key}'s expiry was pushed from {pttl} to {pttl_after} ms");
    }
}

/// A refused composite takes nothing from any part, and a peek writes
/// nothing, admitted or not: the keyspace is the same before and after.
#[test]
fn a_refusal_and_a_peek_write_nothing() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    let limiter = RedisCompositeLimiter::with_test_clock(&s, "strict", &SPECS, Arc::clone(&clock)).unwrap();
    // Every part holds a state (the sliding log two keys).
    let first = limiter.check("k", 1).unwrap();
    assert!(first.combined.allowed);
    assert_eq!(snapshot(&server).len(), 6);
    // GCRA and the sliding log (3 each) refuse 3 more; the others would
    // admit them.
    let before = snapshot(&server);
    let refused = limiter.check("k", 3).unwrap();
    assert!(!refused.combined.allowed);
    let admitting: Vec<bool> = refused.parts.iter().map(|d| d.allowed).collect();
    assert_eq!(admitting, [false, true, true, true, false]);
    assert_unchanged(&before, &snapshot(&server), "a refused check");
    // Those that would have admitted show their state as it is.
    for (part, spec) in refused.parts.iter().zip(&SPECS).filter(|(part, _)| part.allowed) {
        let mut fresh = AnyCore::new(spec).unwrap();
        fresh.check(1, 0);
        assert_eq!(*part, fresh.peek(0, 0), "{spec:?}");
    }
    for cost in [0, 1, 2, 3, 100] {
        let peeked = limiter.peek("k", cost).unwrap();
        assert_unchanged(&before, &snapshot(&server), &format!("a peek of {cost}"));
        assert_eq!(peeked.combined.allowed, cost <= 2);
    }
    // A peek of a key never seen creates none.
    assert!(limiter.peek("new", 1).unwrap().combined.allowed);
    assert_unchanged(&before, &snapshot(&server), "a peek of a new key");
    // A cost above the strictest part's quota is refused for ever.
    assert_eq!(limiter.limit(), 3);
    assert_eq!(limiter.check("k", 4).unwrap().combined.retry_after_micros, ratekeeper::NEVER);
    assert_unchanged(&before, &snapshot(&server), "a refusal for ever");
}

/// However much is refunded, and however often, no part holds more than a
/// fresh one: after a huge refund every limiter and composite admits its
/// quota and not one unit more.
#[test]
fn a_refund_never_gives_more_than_the_limit() {
    let server = RedisServer::start();
    let s = store(&server);
    let clock = Arc::new(ManualClock::new());
    for (n, spec) in SPECS.iter().enumerate() {
        let limiter = RedisLimiter::with_test_clock(&s, &format!("cap-{n}"), *spec, Arc::clone(&clock))
            .unwrap()
            .remember_refusals(false);
        let limit = limiter.limit();
        assert!(limiter.check("k", 2).unwrap().allowed);
        limiter.refund("k", u64::MAX).unwrap();
        limiter.refund("k", 1_000).unwrap();
        // A refund of a key never seen is fine, and gives nothing extra.
        limiter.refund("never", 5).unwrap();
        for key in ["k", "never"] {
            let whole = limiter.check(key, limit).unwrap();
            assert!(whole.allowed, "{spec:?} {key}");
            assert_eq!(whole.remaining, 0, "{spec:?} {key}");
            assert!(!limiter.check(key, 1).unwrap().allowed, "{spec:?} {key}: more than the limit");
        }
    }
    let composite = RedisCompositeLimiter::with_test_clock(&s, "cap", &SPECS, Arc::clone(&clock)).unwrap();
    assert!(composite.check("k", 3).unwrap().combined.allowed);
    composite.refund("k", u64::MAX).unwrap();
    composite.refund("k", 7).unwrap();
    let whole = composite.check("k", 3).unwrap();
    assert!(whole.combined.allowed);
    let fresh: Vec<u64> = SPECS.iter().map(|spec| AnyCore::new(spec).unwrap().check(3, 0).remaining).collect();
    assert_eq!(whole.parts.iter().map(|d| d.remaining).collect::<Vec<_>>(), fresh);
    assert!(!composite.check("k", 1).unwrap().combined.allowed, "the sliding log holds 3 at most");
}

/// `remove` forgets every part's keys at once; bad input is a typed error
/// before anything is sent; a part that does not run in Redis is refused.
#[test]
fn removal_and_bad_input() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisCompositeLimiter::new(&s, "rm", &SPECS).unwrap();
    assert!(!limiter.remove("k").unwrap(), "nothing held yet");
    assert!(limiter.check("k", 3).unwrap().combined.allowed);
    assert!(!limiter.check("k", 1).unwrap().combined.allowed);
    assert!(limiter.remove("k").unwrap());
    assert!(snapshot(&server).is_empty());
    assert!(limiter.check("k", 3).unwrap().combined.allowed);

    let long = vec![b'x'; 257];
    assert!(matches!(limiter.check(&long, 1), Err(Error::Invalid(_))));
    assert!(matches!(limiter.refund(&long, 1), Err(Error::Invalid(_))));
    let (tx, rx) = std::sync::mpsc::channel();
    limiter.check_with(long.clone(), 1, move |r| tx.send(r.map(|d| d.combined)).unwrap());
    assert!(matches!(rx.recv().unwrap(), Err(Error::Invalid(_))));

    assert!(matches!(RedisCompositeLimiter::new(&s, "none", &[]), Err(Error::Invalid(_))));
    let queue = LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: 1, slack: 0 };
    assert!(matches!(RedisCompositeLimiter::new(&s, "q", &[SPECS[0], queue]), Err(Error::Unsupported(_))));
    let bad = LimiterSpec::FixedWindow { limit: 0, window_micros: 1 };
    assert!(matches!(RedisCompositeLimiter::new(&s, "w", &[bad]), Err(Error::Invalid(_))));
}

/// The callback forms answer as the blocking ones.
#[test]
fn callbacks_answer_as_the_blocking_calls() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisCompositeLimiter::new(&s, "cb", &SPECS[2..]).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let t = tx.clone();
    limiter.check_with("k", 3, move |r| t.send(format!("check {}", r.unwrap().combined.allowed)).unwrap());
    assert_eq!(rx.recv().unwrap(), "check true");
    let t = tx.clone();
    limiter.peek_with("k", 1, move |r| t.send(format!("peek {}", r.unwrap().combined.allowed)).unwrap());
    assert_eq!(rx.recv().unwrap(), "peek false");
    let t = tx.clone();
    limiter.refund_with("k", 1, move |r| t.send(format!("refund {:?}", r.unwrap())).unwrap());
    assert_eq!(rx.recv().unwrap(), "refund ()");
    assert!(limiter.peek("k", 1).unwrap().combined.allowed, "the refund gave one back");
    let t = tx.clone();
    limiter.remove_with("k", move |r| t.send(format!("remove {}", r.unwrap())).unwrap());
    assert_eq!(rx.recv().unwrap(), "remove true");
    let single = RedisLimiter::new(&s, "cb1", SPECS[2]).unwrap();
    assert!(single.check("k", 5).unwrap().allowed);
    single.refund_with("k", 2, move |r| tx.send(format!("refund {:?}", r.unwrap())).unwrap());
    assert_eq!(rx.recv().unwrap(), "refund ()");
    assert_eq!(single.peek("k", 0).unwrap().remaining, 2);
}

/// When Redis cannot answer: the error by default, every part admitting or
/// refusing under the policies; a refund is the error whatever the policy.
#[test]
fn unavailability_policies() {
    let mut server = RedisServer::start();
    let s = store(&server);
    let specs = [SPECS[2], SPECS[4]];
    let strict = RedisCompositeLimiter::new(&s, "u", &specs).unwrap();
    let open = strict.clone().when_unavailable(WhenUnavailable::FailOpen);
    assert!(open.check("k", 1).unwrap().combined.allowed);
    server.kill();
    let opened = open.check("k", 1).unwrap();
    assert!(opened.combined.allowed);
    assert_eq!(opened.parts.iter().map(|d| (d.limit, d.remaining)).collect::<Vec<_>>(), [(5, 4), (3, 2)]);
    assert!(open.refund("k", 1).is_err());
    let closed = open.when_unavailable(WhenUnavailable::FailClosed).check("k", 1).unwrap();
    assert!(!closed.combined.allowed && closed.parts.iter().all(|d: &Decision| !d.allowed));
    assert!(closed.combined.retry_after_micros > 0);
    let error = strict.when_unavailable(WhenUnavailable::Error).check("k", 1).unwrap_err();
    assert!(error.is_unavailability(), "{error:?}");
}

/// On a Redis Cluster, every part of one user key lives in one slot (one
/// hash tag: a script may only touch one slot there), and user keys spread
/// over the masters.
#[test]
fn on_a_cluster_one_user_keys_parts_share_a_slot() {
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, StoreOptions::default()).unwrap();
    let limiter = RedisCompositeLimiter::new(&store, "api", &SPECS).unwrap();
    for user in 0..20 {
        let key = format!("user-{user}");
        assert!(limiter.check(&key, 3).unwrap().combined.allowed);
        assert!(!limiter.check(&key, 1).unwrap().combined.allowed);
        limiter.refund(&key, 1).unwrap();
        assert!(limiter.check(&key, 1).unwrap().combined.allowed, "{key}: the refund gave one back");
    }
    let (mut masters_used, mut users) = (0, 0);
    for node in &cluster.nodes {
        let mut conn = node.connection();
        let keys: Vec<String> = redis::cmd("KEYS").arg("rk:{api:*").query(&mut conn).unwrap();
        masters_used += usize::from(!keys.is_empty());
        let mut by_user: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for key in keys {
            let slot: i64 = redis::cmd("CLUSTER").arg("KEYSLOT").arg(&key).query(&mut conn).unwrap();
            let user = key.split('}').next().unwrap().to_owned();
            by_user.entry(user).or_default().push(slot);
        }
        // (Some parts' keys may have expired already, at their window's
        // end on the server's clock: GCRA's, kept a second, has not.)
        for (user, slots) in by_user {
            assert!(slots.iter().all(|s| *s == slots[0]), "{user}: {slots:?}");
            users += 1;
        }
    }
    assert_eq!(users, 20, "each user key's parts on one node");
    assert_eq!(masters_used, 3, "user keys should spread over every master");
    assert!(limiter.remove("user-0").unwrap());
}
