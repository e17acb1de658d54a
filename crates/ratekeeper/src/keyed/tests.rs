use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ratekeeper_core::fixed_window::FixedWindow;
use ratekeeper_core::gcra::Gcra;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{Argument, Error, LimiterSpec, Value, NEVER};

use super::*;
use crate::clock::Clock;
use crate::{AnyClock, ManualClock};

const SEC: i64 = 1_000_000;

fn manual() -> Arc<ManualClock> {
    Arc::new(ManualClock::new())
}

/// 2 per second, bursts of 2 (GCRA: max_burst 1).
fn gcra() -> Gcra {
    Gcra::new(1, 2, SEC).unwrap()
}

#[test]
fn each_key_has_its_own_limiter() {
    let clock = manual();
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(100), Arc::clone(&clock)).unwrap();
    assert!(users.check(&1, 1).allowed);
    assert!(users.check(&1, 1).allowed);
    let refused = users.check(&1, 1);
    assert_eq!((refused.allowed, refused.retry_after_micros), (false, 500_000));
    assert!(users.check(&2, 2).allowed);
    assert_eq!(users.len(), 2);
    assert_eq!(users.peek(&1, 1), refused, "a look sees the same");
    clock.advance(Duration::from_millis(500));
    assert!(users.check(&1, 1).allowed);
    assert_eq!(users.algorithm(), "gcra");
}

#[test]
fn refusals_and_looks_create_no_key() {
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(100), manual()).unwrap();
    assert!(users.peek(&1, 1).allowed);
    assert!(users.check(&1, 0).allowed);
    let never = users.check(&1, 3);
    assert!(never.is_never(), "more than the limit: {never:?}");
    assert!(users.is_empty());
    // An unlimited token bucket consumes nothing: nothing to remember.
    let free = KeyedLimiter::<u64, _, _>::with_clock(
        TokenBucket::new(f64::INFINITY, 0).unwrap(),
        KeyedOptions::new(5),
        manual(),
    )
    .unwrap();
    assert!(free.check(&1, 10).allowed);
    assert!(free.is_empty());
}

#[test]
fn full_keys_are_dropped_without_changing_anything() {
    let clock = manual();
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(100), Arc::clone(&clock)).unwrap();
    for key in 0..10 {
        assert!(users.check(&key, 1).allowed);
    }
    assert_eq!(users.evict_full(), 0, "nothing is full yet");
    clock.advance(Duration::from_millis(499));
    assert_eq!(users.evict_full(), 0);
    clock.advance(Duration::from_millis(1));
    assert_eq!(users.evict_full(), 10);
    assert!(users.is_empty());
    // Back as new keys, decided as the fresh ones they are.
    assert_eq!(users.check(&3, 2).remaining, 0);
}

#[test]
fn at_the_bound_new_keys_are_refused_until_a_key_is_full() {
    let clock = manual();
    let options = KeyedOptions::new(4).shards(1);
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), options, Arc::clone(&clock)).unwrap();
    for key in 0..4 {
        assert!(users.check(&key, 2).allowed); // each full again in 1 s
        clock.advance(Duration::from_millis(100));
    }
    let Err(full) = users.try_check(&99, 1) else { panic!("admitted past the bound") };
    let d = full.decision();
    assert_eq!((d.allowed, d.remaining, d.limit), (false, 0, 2));
    // Key 0 is full 1 s after its admission, at 1.0 s; now is 0.4 s.
    assert_eq!(d.retry_after_micros, 600_000);
    assert_eq!(users.check(&99, 1), d);
    assert_eq!(users.try_peek(&99, 1), Err(full));
    assert_eq!(users.refused_new_keys(), 2, "{}", full);
    assert!(full.to_string().contains("600000 µs"), "{full}");
    // Keys already held are decided as always.
    assert!(!users.check(&0, 1).allowed);
    assert_eq!(users.len(), 4);
    clock.advance(Duration::from_millis(600));
    assert!(users.check(&99, 1).allowed, "key 0 was full: dropped for the new key");
    assert_eq!(users.len(), 4);
    assert_eq!(users.forced_evictions(), 0);
}

/// A refund gives back to the key's own limiter; a key not held has
/// nothing to give back.
#[test]
fn refunds_give_back_to_the_key_held() {
    let clock = manual();
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(100), Arc::clone(&clock)).unwrap();
    assert!(!users.refund(&1, 1), "not held");
    assert!(users.is_empty(), "a refund creates no key");
    assert!(users.check(&1, 2).allowed);
    assert!(users.check(&2, 2).allowed);
    assert!(!users.check(&1, 1).allowed);
    assert!(users.refund(&1, 1));
    assert!(users.check(&1, 1).allowed, "the refunded unit");
    assert!(!users.check(&1, 1).allowed);
    assert!(!users.check(&2, 1).allowed, "another key's limiter is untouched");
    // More than was taken: the key is full again, and dropped when room
    // is needed.
    assert!(users.refund(&2, 100));
    assert_eq!(users.peek(&2, 0).remaining, 2);
    assert_eq!(users.evict_full(), 1);
    assert!(!users.refund(&2, 1));
}

/// A refund can make a key full sooner than the shard's sweep expected;
/// at the bound, the next new key must find it (else it would be refused
/// while a key could be dropped without changing anything).
#[test]
fn at_the_bound_a_key_refunded_to_full_makes_room() {
    let clock = manual();
    let options = KeyedOptions::new(4).shards(1);
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), options, Arc::clone(&clock)).unwrap();
    for key in 0..4 {
        assert!(users.check(&key, 2).allowed); // each full again in 1 s
    }
    // Refused: the sweep remembers when each key will be full (1 s).
    assert!(users.try_check(&99, 1).is_err());
    clock.advance(Duration::from_millis(100));
    assert!(users.refund(&3, 2));
    assert!(users.try_check(&99, 1).is_ok(), "key 3 is full: dropped for the new key");
    assert_eq!(users.len(), 4);
    assert_eq!(users.forced_evictions(), 0);
}

#[test]
fn keys_that_never_refill_are_never_dropped() {
    // A token bucket with rate 0 is a one-off quota: forgetting a used one
    // would hand it out again.
    let clock = manual();
    let quota = TokenBucket::new(0.0, 1).unwrap();
    let users =
        KeyedLimiter::<u64, _, _>::with_clock(quota, KeyedOptions::new(2).shards(1), Arc::clone(&clock)).unwrap();
    assert!(users.check(&1, 1).allowed);
    assert!(users.check(&2, 1).allowed);
    clock.advance(Duration::from_secs(1_000_000));
    assert_eq!(users.try_check(&3, 1).unwrap_err().decision().retry_after_micros, NEVER);
    assert!(!users.check(&1, 1).allowed);
    assert_eq!(users.evict_full(), 0);
}

#[test]
fn eviction_when_asked_forgets_the_key_owed_least() {
    let clock = manual();
    let options = KeyedOptions::new(3).shards(1).when_full(WhenFull::EvictSoonestFull);
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), options, Arc::clone(&clock)).unwrap();
    assert!(users.check(&1, 2).allowed); // full at 1.0 s
    assert!(users.check(&2, 1).allowed); // full at 0.5 s: owed least
    assert!(users.check(&3, 2).allowed); // full at 1.0 s
    assert!(users.check(&4, 1).allowed, "room made by eviction");
    assert_eq!((users.len(), users.forced_evictions(), users.refused_new_keys()), (3, 1, 0));
    assert!(users.peek(&1, 1).retry_after_micros > 0, "key 1 kept");
    assert!(users.peek(&3, 1).retry_after_micros > 0, "key 3 kept");
    // Key 2 was forgotten: it comes back fresh — the over-admission the
    // policy states.
    assert_eq!(users.peek(&2, 2).remaining, 0);
    assert!(users.peek(&2, 2).allowed);
}

#[test]
fn the_bound_holds_across_shards() {
    let clock = manual();
    let users = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(1_000), Arc::clone(&clock)).unwrap();
    assert!(users.shard_count() <= 4, "at least 256 keys per shard: {}", users.shard_count());
    let admitted = (0..10_000u64).filter(|k| users.check(k, 1).allowed).count();
    assert_eq!(users.len(), admitted);
    assert!(admitted <= 1_000);
    assert!(admitted >= 900, "shards fill about evenly: {admitted}");
    assert_eq!(users.refused_new_keys(), 10_000 - admitted as u64);
    // The shares add up to max_keys exactly.
    let odd = KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(1_003).shards(4), manual()).unwrap();
    let shares: usize = odd.shards.iter().map(|s| s.lock().table.bound()).sum();
    assert_eq!(shares, 1_003);
}

#[test]
fn keys_are_looked_up_by_borrowed_forms() {
    let clock = manual();
    let by_str: KeyedLimiter<Box<str>, _, _> =
        KeyedLimiter::with_clock(gcra(), KeyedOptions::new(10), Arc::clone(&clock)).unwrap();
    assert!(by_str.check("alice", 2).allowed);
    assert!(!by_str.check(&String::from("alice")[..], 1).allowed);
    assert!(by_str.remove("alice"));
    assert!(!by_str.remove("alice"));
    assert!(by_str.check("alice", 2).allowed, "removed: a reset");
    let by_bytes: KeyedLimiter<Box<[u8]>, _, _> =
        KeyedLimiter::with_clock(gcra(), KeyedOptions::new(10), Arc::clone(&clock)).unwrap();
    assert!(by_bytes.check(b"\x00\xff".as_slice(), 2).allowed);
    assert!(!by_bytes.check(vec![0u8, 255].as_slice(), 1).allowed);
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    enum Action {
        Post,
        Like,
    }
    let by_pair: KeyedLimiter<(u64, Action), _, _> =
        KeyedLimiter::with_clock(gcra(), KeyedOptions::new(10), clock).unwrap();
    assert!(by_pair.check(&(7, Action::Post), 2).allowed);
    assert!(by_pair.check(&(7, Action::Like), 2).allowed);
    assert!(!by_pair.check(&(7, Action::Post), 1).allowed);
}

#[test]
fn options_are_checked() {
    let argument = |options: KeyedOptions| match KeyedLimiter::<u64, _, _>::with_clock(gcra(), options, manual()) {
        Err(Error::InvalidArgument(e)) => (e.name(), e.value()),
        other => panic!("{options:?}: {other:?}"),
    };
    assert_eq!(argument(KeyedOptions::new(0)), ("max_keys", Value::Int(0)));
    assert_eq!(argument(KeyedOptions::new(MAX_KEYS + 1)), ("max_keys", Value::Int(MAX_KEYS as i64 + 1)));
    assert_eq!(argument(KeyedOptions::new(100).shards(3)), ("shards", Value::Int(3)));
    assert_eq!(argument(KeyedOptions::new(100).shards(0)), ("shards", Value::Int(0)));
    assert_eq!(argument(KeyedOptions::new(4).shards(8)), ("shards", Value::Int(8)));
    assert_eq!(argument(KeyedOptions::new(MAX_KEYS).shards(1)), ("shards", Value::Int(1)));
    assert!(KeyedLimiter::<u64, _, _>::with_clock(gcra(), KeyedOptions::new(MAX_KEYS), manual()).is_ok());
    assert_eq!(WhenFull::from_name(WhenFull::EvictSoonestFull.name()), Some(WhenFull::EvictSoonestFull));
    assert_eq!(WhenFull::from_name(WhenFull::RefuseNewKeys.name()), Some(WhenFull::RefuseNewKeys));
    assert_eq!(WhenFull::from_name("lru"), None);
}

/// A clock that a test sets, backwards too.
#[derive(Debug, Default)]
struct SetClock(AtomicI64);

impl Clock for SetClock {
    fn now_micros(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    fn sleep_micros(&self, _: i64) {}
}

#[test]
fn a_clock_going_backwards_mints_nothing_even_across_a_drop() {
    let clock = Arc::new(SetClock::default());
    let window = FixedWindow::new(1, SEC).unwrap();
    let users =
        KeyedLimiter::<u64, _, _>::with_clock(window, KeyedOptions::new(10).shards(1), Arc::clone(&clock)).unwrap();
    clock.0.store(5 * SEC, Ordering::SeqCst);
    assert!(users.check(&1, 1).allowed);
    clock.0.store(6 * SEC, Ordering::SeqCst);
    assert_eq!(users.evict_full(), 1, "a new window: full");
    // Back to window 5: were key 1 recreated at 5 s, it would be admitted
    // again in a window where it already had its one.
    clock.0.store(5 * SEC, Ordering::SeqCst);
    assert!(users.check(&1, 1).allowed, "decided at 6 s, the latest time the shard used");
    assert!(!users.check(&1, 1).allowed);
}

#[test]
fn any_keyed_limiter_builds_every_algorithm() {
    let specs = [
        LimiterSpec::TokenBucket { rate: 1.0, burst: 2 },
        LimiterSpec::Gcra { max_burst: 1, count_per_period: 1, period_micros: SEC },
        LimiterSpec::LeakyBucketMeter { capacity: 2, count_per_period: 1, period_micros: SEC },
        LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: SEC, slack: 0 },
        LimiterSpec::FixedWindow { limit: 2, window_micros: SEC },
        LimiterSpec::SlidingWindow { limit: 2, window_micros: SEC, sub_windows: 4 },
        LimiterSpec::SlidingLog { limit: 2, window_micros: SEC },
        LimiterSpec::SlidingWindowCounter { limit: 2, window_micros: SEC },
    ];
    for spec in specs {
        let clock = manual();
        let limiter: AnyKeyedLimiter =
            AnyKeyedLimiter::new(&spec, KeyedOptions::new(2).shards(1), AnyClock::from(Arc::clone(&clock))).unwrap();
        assert_eq!(limiter.algorithm(), spec.algorithm());
        for key in [b"a".as_slice(), b"b"] {
            assert!(limiter.check(key, 1).unwrap().allowed, "{spec:?}");
            assert!(limiter.check(key, 1).unwrap().allowed, "{spec:?}");
            assert!(!limiter.check(key, 1).unwrap().allowed, "{spec:?}");
        }
        assert_eq!(limiter.len(), 2);
        assert!(limiter.try_check(b"c", 1).unwrap().is_err(), "{spec:?}: at the bound");
        assert_eq!(limiter.refused_new_keys(), 1);
        clock.advance(Duration::from_secs(10));
        assert!(limiter.check(b"c", 1).unwrap().allowed, "{spec:?}: the full keys made room");
        assert_eq!(limiter.evict_full(), 0, "{spec:?}: c is not full");
        assert!(limiter.remove(b"c").unwrap());
        assert!(limiter.is_empty(), "{spec:?}");
        assert_eq!((limiter.max_keys(), limiter.when_full()), (2, WhenFull::RefuseNewKeys));
    }
    let bad = LimiterSpec::Gcra { max_burst: 1, count_per_period: 0, period_micros: SEC };
    assert!(AnyKeyedLimiter::new(&bad, KeyedOptions::new(1), AnyClock::default()).is_err());
    let good = LimiterSpec::FixedWindow { limit: 1, window_micros: SEC };
    assert!(AnyKeyedLimiter::new(&good, KeyedOptions::new(0), AnyClock::default()).is_err());
}

/// A key longer than `max_key_bytes` is an error naming `key` from every
/// method, and nothing is stored; a key of exactly the bound is taken.
#[test]
fn any_keyed_limiter_refuses_keys_past_max_key_bytes_and_stores_nothing() {
    let spec = LimiterSpec::SlidingLog { limit: 3, window_micros: SEC };
    for (bound, options) in [
        (256, KeyedOptions::new(8)),
        (5, KeyedOptions::new(8).max_key_bytes(MaxKeyBytes::new(5).unwrap())),
        (65_536, KeyedOptions::new(8).max_key_bytes(MaxKeyBytes::new(65_536).unwrap())),
    ] {
        let limiter: AnyKeyedLimiter = AnyKeyedLimiter::new(&spec, options, AnyClock::from(manual())).unwrap();
        assert_eq!(limiter.max_key_bytes(), bound);
        let longest = vec![b'k'; bound];
        let too_long = vec![b'k'; bound + 1];
        let refused: Result<bool, Error> = Err(Error::invalid_uint(Argument::Key, bound as u64 + 1));
        assert_eq!(limiter.check(&too_long, 1).map(|d| d.allowed), refused);
        assert_eq!(limiter.allow(&too_long, 1), refused);
        assert_eq!(limiter.try_check(&too_long, 1).map(|r| r.is_ok()), refused);
        assert_eq!(limiter.peek(&too_long, 1).map(|d| d.allowed), refused);
        assert_eq!(limiter.try_peek(&too_long, 1).map(|r| r.is_ok()), refused);
        assert_eq!(limiter.remove(&too_long), refused);
        assert!(limiter.is_empty(), "nothing stored for a refused key");
        assert!(limiter.check(&longest, 1).unwrap().allowed);
        assert_eq!(limiter.len(), 1);
        assert_eq!(limiter.peek(&longest, 0).unwrap().remaining, 2);
    }
}

/// The keyed GCRA against the unkeyed core `Gcra`, decision for decision:
/// one core limiter per key that forgets nothing, at the time the shard
/// uses (the latest it has seen). The keyed side keeps each TAT modulo 2⁶³
/// ([`GcraKeyState`]), drops full keys to make room (a bound of 3 for 6
/// keys), ages its shard, and is asked across jumps of more than 2⁶⁴ ticks
/// and with a clock that goes backwards.
mod gcra_against_the_core {
    use std::collections::HashMap;

    use proptest::prelude::*;
    use ratekeeper_core::{Admission, Full};

    use super::*;

    #[derive(Debug, Clone, Copy)]
    enum Op {
        Check(u64, u64),
        Allow(u64, u64),
        Peek(u64, u64),
        Remove(u64),
        Refund(u64, u64),
        EvictFull,
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0..6u64;
        let cost = prop_oneof![4 => 0..4u64, 1 => 0..1_000_000u64, 1 => Just(u64::MAX)];
        prop_oneof![
            6 => (key.clone(), cost.clone()).prop_map(|(k, c)| Op::Check(k, c)),
            3 => (key.clone(), cost.clone()).prop_map(|(k, c)| Op::Allow(k, c)),
            2 => (key.clone(), cost).prop_map(|(k, c)| Op::Peek(k, c)),
            1 => key.clone().prop_map(Op::Remove),
            2 => (key, prop_oneof![3 => 0..4u64, 1 => Just(u64::MAX)]).prop_map(|(k, c)| Op::Refund(k, c)),
            1 => Just(Op::EvictFull),
        ]
    }

    /// A clock step in microseconds: none, small, a tolerance or so, huge
    /// (2³⁶ µs is more than 2⁶⁴ ticks at 10⁹ per period), or backwards.
    fn step() -> impl Strategy<Value = i64> {
        prop_oneof![
            3 => Just(0i64),
            4 => 0..3_000i64,
            2 => 0..(1i64 << 24),
            1 => 0..(1i64 << 36),
            1 => 0..(1i64 << 56),
            1 => -(1i64 << 40)..0,
        ]
    }

    /// Templates: compact ones (small and large tolerances, up to the 2⁶⁰
    /// ticks and 2⁴⁰ ticks per µs the compact form holds) and wide ones
    /// just past either limit.
    fn template() -> impl Strategy<Value = Gcra> {
        let burst = prop_oneof![0..4u64, Just((1 << 19) - 1), Just((1 << 20) - 1), Just(1 << 20)];
        let count =
            prop_oneof![Just(1u64), Just(3), Just(1_000), Just(1_000_000_000), Just(1 << 40), Just((1 << 40) + 1)];
        let period = prop_oneof![Just(1i64), Just(7), Just(1_000), Just(1_000_000), Just(1 << 40)];
        (burst, count, period).prop_map(|(b, c, p)| Gcra::new(b, c, p).unwrap())
    }

    fn run(template: Gcra, start: i64, ops: &[(Op, i64)]) {
        let clock = Arc::new(SetClock(AtomicI64::new(start)));
        let options = KeyedOptions::new(3).shards(1);
        let keyed = KeyedLimiter::<u64, _, _>::with_clock(template, options, Arc::clone(&clock)).unwrap();
        let mut core: HashMap<u64, Gcra> = HashMap::new();
        // The shard's time: the clock since creation, never going back.
        let (mut t, mut latest) = (start, 0i64);
        for (n, &(op, step)) in ops.iter().enumerate() {
            t = t.saturating_add(step).clamp(start, i64::MAX);
            clock.0.store(t, Ordering::SeqCst);
            let now = (t - start).max(latest);
            let at = format!("op {n} {op:?} at {now} µs ({template:?})");
            match op {
                Op::Check(key, cost) => {
                    latest = now;
                    let mut whole = core.get(&key).copied().unwrap_or_else(|| template.fresh());
                    let expected = whole.check(cost, now);
                    match keyed.try_check(&key, cost) {
                        Ok(got) => {
                            assert_eq!(got, expected, "{at}");
                            core.insert(key, whole);
                        }
                        Err(full) => {
                            // Refused at the bound: only a key the limiter
                            // does not hold (a full one), and only a request
                            // a fresh key would have had admitted.
                            let held = core.get(&key).is_some_and(|g| !g.is_full_at(now));
                            assert!(!held && expected.allowed, "{at}: {full:?}");
                        }
                    }
                }
                Op::Allow(key, cost) => {
                    latest = now;
                    let mut whole = core.get(&key).copied().unwrap_or_else(|| template.fresh());
                    let expected = whole.check(cost, now).allowed;
                    let got = keyed.allow(&key, cost);
                    if got == expected {
                        core.insert(key, whole);
                    } else {
                        // Only a refusal at the bound, as for a check.
                        let held = core.get(&key).is_some_and(|g| !g.is_full_at(now));
                        assert!(!got && !held, "{at}: allowed {got}, the core {expected}");
                    }
                }
                Op::Peek(key, cost) => {
                    latest = now;
                    let whole = core.get(&key).copied().unwrap_or_else(|| template.fresh());
                    let expected = whole.peek(cost, now);
                    match keyed.try_peek(&key, cost) {
                        Ok(got) => assert_eq!(got, expected, "{at}"),
                        // As for a check: a check would be refused at the bound.
                        Err(full) => assert!(whole.is_full_at(now) && expected.allowed, "{at}: {full:?}"),
                    }
                }
                Op::Remove(key) => {
                    let held = keyed.remove(&key);
                    let was = core.remove(&key);
                    if held {
                        assert!(was.is_some(), "{at}");
                    }
                }
                Op::Refund(key, cost) => {
                    latest = now;
                    let held = keyed.refund(&key, cost);
                    if let Some(whole) = core.get_mut(&key) {
                        // A key not held was dropped when full: nothing to
                        // give back either way.
                        assert!(held || whole.is_full_at(now), "{at}: a key owing something not held");
                        whole.refund(cost, now);
                    } else {
                        assert!(!held, "{at}: held a key the core never admitted");
                    }
                }
                Op::EvictFull => {
                    latest = now;
                    keyed.evict_full();
                    let owing = core.values().filter(|g| !g.is_full_at(now)).count();
                    assert_eq!(keyed.len(), owing, "{at}: every key left owes something");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn decides_as_the_core(
            template in template(),
            start in prop_oneof![Just(0i64), 0..(1i64 << 40)],
            ops in proptest::collection::vec((op(), step()), 1..120),
        ) {
            run(template, start, &ops);
        }
    }

    /// A key idle for 2⁶³ ticks less a little: its TAT modulo 2⁶³ reads as
    /// `now + 808` — were the shard not aged, a fresh key's request would be
    /// refused.
    #[test]
    fn a_wrapped_tat_is_never_read() {
        // 1,000 ticks per µs, an interval of 1,000 ticks, limit 2.
        let template = Gcra::new(1, 1_000, 1_000).unwrap();
        let clock = Arc::new(SetClock::default());
        let keyed = KeyedLimiter::<u64, _, _>::with_clock(template, KeyedOptions::new(4), Arc::clone(&clock)).unwrap();
        assert!(keyed.check(&1, 2).allowed, "TAT 2,000 ticks");
        // 2,000 + 2⁶³ − 808 ticks: a multiple of 1,000.
        let later = (2_000 + (1u128 << 63) - 808) / 1_000;
        clock.0.store(later as i64, Ordering::SeqCst);
        let fresh = template.fresh().check(2, later as i64);
        assert_eq!(keyed.check(&1, 2), fresh);
        assert!(fresh.allowed);
    }

    /// A shard kept busy across many sweep periods (by one key, which
    /// never goes full) sweeps instead of emptying: its other keys are
    /// decided as the core does all along.
    #[test]
    fn a_busy_shard_is_swept_on_time() {
        // Tolerance 2⁵⁹ ticks, 1,000 ticks per µs: a sweep every 2⁶²/1,000 µs.
        let template = Gcra::new((1 << 19) - 1, 1_000, 1 << 40).unwrap();
        let every = template.aging().unwrap().sweep_every_micros;
        let clock = Arc::new(SetClock::default());
        let options = KeyedOptions::new(8).shards(1);
        let keyed = KeyedLimiter::<u64, _, _>::with_clock(template, options, Arc::clone(&clock)).unwrap();
        let mut core: HashMap<u64, Gcra> = HashMap::new();
        let mut t = 0i64;
        for i in 0..200u64 {
            let key = i % 3;
            let cost = if key == 0 { 1 << 18 } else { i % 5 };
            let expected = core.entry(key).or_insert_with(|| template.fresh()).check(cost, t);
            assert_eq!(keyed.check(&key, cost), expected, "request {i} at {t}");
            t += every / 7;
            clock.0.store(t, Ordering::SeqCst);
        }
    }
}

/// The README's bytes-per-key table is what `max_bytes()` says for a
/// million keys, row by row (rounded up to the byte; a sliding log's row
/// beside its 16 bytes per unit of limit).
#[test]
fn the_readme_states_max_bytes_per_key() {
    const README: &str = include_str!("../../../../README.md");
    let table = README.split("<!-- max-bytes-per-key:").nth(1).expect("the README's table");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(3)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(|cell| cell.trim().trim_matches('`')).collect())
        .collect();
    let specs = [
        LimiterSpec::TokenBucket { rate: 1.0, burst: 4 },
        LimiterSpec::Gcra { max_burst: 3, count_per_period: 1, period_micros: SEC },
        LimiterSpec::LeakyBucketMeter { capacity: 4, count_per_period: 1, period_micros: SEC },
        LimiterSpec::LeakyBucketQueue { capacity: 4, interval_micros: SEC, slack: 10 },
        LimiterSpec::FixedWindow { limit: 4, window_micros: SEC },
        LimiterSpec::SlidingWindow { limit: 4, window_micros: SEC, sub_windows: 16 },
        LimiterSpec::SlidingLog { limit: 1_000, window_micros: SEC },
        LimiterSpec::SlidingWindowCounter { limit: 4, window_micros: SEC },
    ];
    assert_eq!(rows.len(), specs.len(), "a row per algorithm: {rows:?}");
    let keys = 1_000_000;
    for spec in specs {
        let row = rows.iter().find(|row| row[0] == spec.algorithm()).unwrap_or_else(|| panic!("{spec:?}"));
        for (column, key_bytes) in [(1, 16), (2, 256)] {
            let options = KeyedOptions::new(keys).max_key_bytes(MaxKeyBytes::new(key_bytes).unwrap());
            let limiter = AnyKeyedLimiter::new(&spec, options, AnyClock::default()).unwrap();
            let per_unit = if let LimiterSpec::SlidingLog { limit, .. } = spec { 16 * limit as usize } else { 0 };
            let per_key = (limiter.max_bytes() - keys * per_unit).div_ceil(keys);
            let stated = if per_unit > 0 { format!("{per_key} + 16 × limit") } else { per_key.to_string() };
            assert_eq!(row[column], stated, "{} with {key_bytes}-byte keys", spec.algorithm());
        }
    }
}
