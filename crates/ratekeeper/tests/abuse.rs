//! Abuse of the std layer: enormous and degenerate costs, rates, bursts,
//! periods and times, through every limiter's public methods; and every
//! call that fails or is refused leaves the limiter as it was.
//!
//! Built as a test, so with overflow checks on: an arithmetic overflow
//! anywhere on these paths panics, and fails the test. Every limiter a
//! spec builds is driven beside a *twin* (same spec, its own clock moved
//! the same way) that skips every call the first one refused or rejected:
//! the two must keep answering alike, so a refusal or an error changed
//! nothing that any later decision can see. Where a limiter shows its state
//! (`snapshot`), the state is compared too, word for word (a NaN that
//! Guava's arithmetic put there compares equal to itself).
//!
//! Each test prints how many limiters it built and calls it made
//! (`--nocapture`).

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::keyed::{AnyKeyedLimiter, KeyedOptions, WhenFull};
use ratekeeper::{
    timeout_micros_from_secs, warmup_micros_from_secs, AimdConfig, AnyClock, AnyLimiter, Clock, CompositeLimiter,
    ConcurrencyLimiter, ConcurrencyPolicy, Decision, Error, GradientConfig, LimiterSpec, ManualClock, Outcome, Packed,
    RateLimiter, TokenBucket, NEVER,
};

const BIG: u64 = i64::MAX as u64;

/// Costs, counts, limits and bursts at and around every edge.
const COUNTS: [u64; 9] = [0, 1, 2, 1_000_000, BIG - 1, BIG, BIG + 1, u64::MAX - 1, u64::MAX];

/// Durations in microseconds, negative ones included.
const MICROS: [i64; 9] = [i64::MIN, -1, 0, 1, 2, 1_000_000, i64::MAX / 2, i64::MAX - 1, i64::MAX];

/// Rates: every kind of float.
const RATES: [f64; 14] = [
    f64::NAN,
    f64::NEG_INFINITY,
    -1.0,
    -0.0,
    0.0,
    f64::MIN_POSITIVE,
    1e-300,
    1e-9,
    1.0,
    1e9,
    1e300,
    f64::MAX,
    f64::INFINITY,
    -f64::MIN_POSITIVE,
];

/// How far the clock moves before each round of calls: not at all, by a
/// little, by a lot, and to the end of time (the manual clock saturates).
const STEPS: [i64; 6] = [0, 1, 999_999, i64::MAX / 4, i64::MAX / 2, i64::MAX];

/// Every spec the value tables give, valid or not.
fn every_spec() -> Vec<LimiterSpec> {
    let mut specs = Vec::new();
    for &burst in &COUNTS {
        for &rate in &RATES {
            specs.push(LimiterSpec::TokenBucket { rate, burst });
        }
    }
    for &a in &COUNTS {
        for &period in &MICROS {
            for &b in &[0, 1, 3, BIG, u64::MAX] {
                specs.push(LimiterSpec::Gcra { max_burst: a, count_per_period: b, period_micros: period });
                specs.push(LimiterSpec::LeakyBucketMeter { capacity: a, count_per_period: b, period_micros: period });
            }
            specs.push(LimiterSpec::LeakyBucketQueue { capacity: a, interval_micros: period, slack: 0 });
            specs.push(LimiterSpec::FixedWindow { limit: a, window_micros: period });
            specs.push(LimiterSpec::SlidingWindowCounter { limit: a, window_micros: period });
            for sub_windows in [0, 1, 2, 16, 17, u32::MAX] {
                specs.push(LimiterSpec::SlidingWindow { limit: a, window_micros: period, sub_windows });
            }
        }
    }
    // The sliding log holds `limit` entries: its limits stop at the largest
    // allowed (2^20) and the first refused.
    for limit in [0, 1, 2, 1_000, 1 << 20, (1 << 20) + 1, u64::MAX] {
        for &window in &MICROS {
            specs.push(LimiterSpec::SlidingLog { limit, window_micros: window });
        }
    }
    specs
}

/// How far `remaining` may exceed `limit`.
#[derive(Clone, Copy)]
enum Remaining {
    /// Never: `remaining <= limit`.
    WithinLimit,
    /// The token bucket counts tokens in an `f64`, as x/time/rate does: a
    /// burst above 2^53 is held as the nearest double (2^63 − 1 reads as
    /// 2^63), so `remaining` is within the limit as doubles compare.
    WithinLimitAsF64,
    /// After `set_burst` lowers the burst, x/time/rate keeps the tokens
    /// above it until the next refill: `remaining` may exceed the new limit.
    Unbounded,
}

/// What any decision must satisfy, whatever went in.
fn check_decision(d: &Decision, cost: u64, remaining: Remaining, context: &dyn Fn() -> String) {
    let remaining_ok = match remaining {
        Remaining::WithinLimit => d.remaining <= d.limit,
        Remaining::WithinLimitAsF64 => d.remaining as f64 <= d.limit as f64,
        Remaining::Unbounded => true,
    };
    let ok = remaining_ok
        && d.retry_after_micros >= 0
        && d.reset_after_micros >= 0
        && d.wait_micros >= 0
        && d.window_micros >= 0
        && if d.allowed { d.retry_after_micros == 0 } else { d.retry_after_micros > 0 && d.wait_micros == 0 };
    assert!(ok, "{}: cost {cost}: inconsistent {d:?}", context());
}

/// The `remaining` rule for a limiter built from `spec`.
fn remaining_rule(spec: &LimiterSpec) -> Remaining {
    match spec {
        LimiterSpec::TokenBucket { .. } => Remaining::WithinLimitAsF64,
        _ => Remaining::WithinLimit,
    }
}

/// Counts of what a test did, printed at its end.
#[derive(Default)]
struct Tally {
    built: u64,
    rejected: u64,
    calls: u64,
}

impl Tally {
    fn print(&self, what: &str) {
        println!(
            "abuse: {what}: {} built, {} rejected at construction, {} calls",
            self.built, self.rejected, self.calls
        );
    }
}

/// Runs `exercise` on one limiter; a panic (a failed check, an overflow)
/// is recorded, with its message, and the next limiter is tried: the test
/// then fails listing every limiter that broke.
fn try_one(findings: &mut Vec<String>, exercise: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(exercise)) {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        findings.push(message);
    }
}

/// Fails listing the findings, if any.
fn report(findings: &[String], what: &str) {
    assert!(
        findings.is_empty(),
        "{what}: {} limiters broke:\n{}",
        findings.len(),
        findings.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Every algorithm from every spec of the tables: construction errs or
/// succeeds (never panics); then, at every clock step, every cost — a
/// check and a peek — on the limiter and its twin. Decisions are
/// consistent; a refusal leaves the limiter as its twin (which never saw
/// it); an admission of more than the limit happens only where nothing
/// limits (an infinite rate).
#[test]
fn every_algorithm_survives_every_extreme() {
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    for spec in every_spec() {
        let (clock, twin_clock) = (Arc::new(ManualClock::new()), Arc::new(ManualClock::new()));
        let limiter = match AnyLimiter::with_clock(&spec, Arc::clone(&clock)) {
            Ok(limiter) => limiter,
            Err(e) => {
                assert!(matches!(e, Error::InvalidArgument(_)), "{spec:?}: {e:?}");
                tally.rejected += 1;
                continue;
            }
        };
        let twin = AnyLimiter::with_clock(&spec, Arc::clone(&twin_clock)).unwrap();
        tally.built += 1;
        // Go's `rate.Inf` is `math.MaxFloat64`: both mean no limit at all.
        let unlimited = matches!(spec, LimiterSpec::TokenBucket { rate, .. } if rate >= f64::MAX);
        try_one(&mut findings, || {
            for step in STEPS {
                clock.advance_micros(step);
                twin_clock.advance_micros(step);
                for cost in COUNTS {
                    let context = || format!("{spec:?} at {} µs", clock.now_micros());
                    let look = limiter.peek(cost);
                    check_decision(&look, cost, remaining_rule(&spec), &context);
                    assert_eq!(look, twin.peek(cost), "{}: peek", context());
                    let d = limiter.check(cost);
                    check_decision(&d, cost, remaining_rule(&spec), &context);
                    if d.allowed {
                        assert_eq!(twin.check(cost), d, "{}: cost {cost}", context());
                        assert!(cost <= d.limit || unlimited || cost == 0, "{}: admitted {cost}: {d:?}", context());
                    } else if cost > d.limit && !unlimited {
                        assert_eq!(d.retry_after_micros, NEVER, "{}: no wait admits {cost}", context());
                    }
                    assert_eq!(limiter.peek(1), twin.peek(1), "{}: after cost {cost} ({d:?})", context());
                    tally.calls += 4;
                }
            }
        });
    }
    tally.print("every algorithm");
    report(&findings, "every algorithm");
    assert!(tally.built > 300 && tally.rejected > 1_000, "the tables missed a side");
}

/// Guava's `RateLimiter` built from every rate, burst length, warm-up and
/// cold factor in the tables; then every permit count, timeout and new rate
/// at every clock step. Errors name `permits` (0 or above `i32::MAX`) or
/// leave the state bit for bit as it was; refusals likewise; waits are never
/// negative, whatever overflows.
#[test]
fn rate_limiter_survives_every_extreme() {
    let permits = [0, 1, 2, 1_000, i32::MAX as u32 - 1, i32::MAX as u32, i32::MAX as u32 + 1, u32::MAX];
    let timeouts = [Duration::ZERO, Duration::from_micros(1), Duration::from_secs(1), Duration::MAX];
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    let mut builders = Vec::new();
    for rate in RATES {
        for burst in [f64::NAN, -1.0, 0.0, 1e-9, 1.0, 1e300, f64::INFINITY] {
            builders.push((rate, Some(burst), None, None));
        }
        for warmup in [Duration::ZERO, Duration::from_micros(1), Duration::from_secs(1), Duration::MAX] {
            for cold in [f64::NAN, 0.0, 1.0, 3.0, 1e300, f64::INFINITY] {
                builders.push((rate, None, Some(warmup), Some(cold)));
            }
        }
    }
    for (rate, burst, warmup, cold) in builders {
        let build = |clock: Arc<ManualClock>| {
            let mut b = RateLimiter::builder(rate).clock(clock);
            if let Some(burst) = burst {
                b = b.max_burst_seconds(burst);
            }
            if let Some(warmup) = warmup {
                b = b.warmup(warmup);
            }
            if let Some(cold) = cold {
                b = b.cold_factor(cold);
            }
            b.build()
        };
        let clock = Arc::new(ManualClock::new());
        let Ok(limiter) = build(Arc::clone(&clock)) else {
            tally.rejected += 1;
            continue;
        };
        tally.built += 1;
        let what = format!("RateLimiter({rate}, burst {burst:?}, warmup {warmup:?}, cold {cold:?})");
        try_one(&mut findings, || {
            for step in STEPS {
                clock.advance_micros(step);
                for p in permits {
                    let valid = p != 0 && p <= i32::MAX as u32;
                    for timeout in timeouts {
                        let before = limiter.snapshot().pack();
                        let now = clock.now_micros();
                        match limiter.try_acquire(p, timeout) {
                            Ok(true) => {}
                            Ok(false) => {
                                assert_eq!(limiter.snapshot().pack(), before, "{what}: a refusal changed the state")
                            }
                            Err(Error::InvalidArgument(e)) => {
                                assert!(!valid && e.name() == "permits", "{what}: try_acquire({p}): {e}");
                                assert_eq!(limiter.snapshot().pack(), before, "{what}: an error changed the state");
                            }
                            Err(e) => panic!("{what}: try_acquire({p}): {e:?}"),
                        }
                        assert!(clock.now_micros() >= now, "{what}: time went back");
                        for result in [limiter.time_until_available(p), limiter.reserve(p)] {
                            assert_eq!(result.is_ok(), valid, "{what}: permits {p}: {result:?}");
                        }
                        assert_eq!(limiter.can_acquire(p, timeout).is_ok(), valid);
                        tally.calls += 4;
                    }
                    if valid {
                        // Sleeps on the manual clock: moves it by the wait.
                        let wait = limiter.acquire(p).unwrap();
                        assert!(wait <= Duration::from_micros(i64::MAX as u64), "{what}: waited {wait:?}");
                        tally.calls += 1;
                    }
                }
                for new_rate in RATES {
                    let (before, rate_before) = (limiter.snapshot().pack(), limiter.rate());
                    match limiter.set_rate(new_rate) {
                        Ok(()) => assert!(new_rate > 0.0, "{what}: set_rate({new_rate}) accepted"),
                        Err(_) => {
                            assert!(new_rate.is_nan() || new_rate <= 0.0, "{what}: set_rate({new_rate}) refused");
                            assert_eq!(
                                limiter.snapshot().pack(),
                                before,
                                "{what}: set_rate({new_rate}) changed the state"
                            );
                            assert_eq!(limiter.rate().to_bits(), rate_before.to_bits());
                        }
                    }
                    tally.calls += 1;
                }
                // Back to its own rate for the next step.
                limiter.set_rate(rate).unwrap();
            }
        });
    }
    tally.print("RateLimiter");
    report(&findings, "RateLimiter");
    assert!(tally.built > 50 && tally.rejected > 50, "the tables missed a side");
}

/// x/time/rate's token bucket from every rate and burst: checks,
/// reservations (with cancels), waits with every timeout, and every new
/// rate and burst — errors change nothing, tokens are never NaN.
#[test]
fn token_bucket_survives_every_extreme() {
    let timeouts = [Duration::ZERO, Duration::from_micros(1), Duration::from_secs(1), Duration::MAX];
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    for rate in RATES {
        for burst in COUNTS {
            let clock = Arc::new(ManualClock::new());
            let Ok(bucket) = TokenBucket::with_clock(rate, burst, Arc::clone(&clock)) else {
                tally.rejected += 1;
                continue;
            };
            tally.built += 1;
            let what = format!("TokenBucket({rate}, {burst})");
            try_one(&mut findings, || {
                for step in STEPS {
                    clock.advance_micros(step);
                    for n in COUNTS {
                        let context = || format!("{what} at {} µs", clock.now_micros());
                        let before = bucket.snapshot().pack();
                        let d = bucket.check(n);
                        check_decision(&d, n, Remaining::Unbounded, &context);
                        if !d.allowed {
                            assert_eq!(
                                bucket.snapshot().pack(),
                                before,
                                "{}: a refusal of {n} changed the state",
                                context()
                            );
                        }
                        let mut reservation = bucket.reserve_n(n);
                        let _ = bucket.delay(&reservation);
                        bucket.cancel(&mut reservation);
                        bucket.cancel(&mut reservation);
                        for timeout in timeouts {
                            let d = bucket.reserve_within(n, timeout);
                            check_decision(&d, n, Remaining::Unbounded, &context);
                            // The bucket counts nanoseconds, as Go does: 2^63 ns
                            // (292 years) after its creation its time stands
                            // still, and a reservation due then is due "never".
                            let end_of_time = clock.now_micros() >= i64::MAX / 1_000 && d.wait_micros == NEVER;
                            assert!(
                                d.wait_micros as u128 <= timeout.as_micros() || end_of_time,
                                "{}: {d:?}",
                                context()
                            );
                        }
                        assert!(!bucket.tokens().is_nan(), "{}: tokens NaN", context());
                        tally.calls += 5 + timeouts.len() as u64;
                    }
                    // Every new rate, and under each, every new burst: the
                    // errors change nothing. Then back to the bucket's own
                    // parameters for the next step.
                    for new_rate in RATES {
                        let before = bucket.snapshot().pack();
                        if bucket.set_rate(new_rate).is_err() {
                            assert!(new_rate.is_nan() || new_rate < 0.0, "{what}: set_rate({new_rate}) refused");
                            assert_eq!(
                                bucket.snapshot().pack(),
                                before,
                                "{what}: set_rate({new_rate}) changed the state"
                            );
                            continue;
                        }
                        for new_burst in COUNTS {
                            let before = bucket.snapshot().pack();
                            if bucket.set_burst(new_burst).is_err() {
                                assert!(new_burst > BIG, "{what}: set_burst({new_burst}) refused");
                                assert_eq!(
                                    bucket.snapshot().pack(),
                                    before,
                                    "{what}: set_burst({new_burst}) changed the state at rate {new_rate}"
                                );
                            }
                            tally.calls += 1;
                        }
                        tally.calls += 1;
                    }
                    bucket.set_rate(rate).unwrap();
                    bucket.set_burst(burst).unwrap();
                }
            });
        }
    }
    tally.print("TokenBucket");
    report(&findings, "TokenBucket");
}

/// Keyed limiters of every algorithm (a sample of the spec tables, room for
/// 4 keys): new keys with every cost at every step. A refused request
/// never creates a key, the key count never passes the bound, and a key's
/// decisions match a twin that never saw the refusals.
#[test]
fn keyed_limiters_survive_every_extreme() {
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    for (i, spec) in every_spec().into_iter().enumerate() {
        // One in 7 covers every algorithm and edge (a sliding log's storage
        // grows with use, so its big limits cost no more than small ones).
        if i % 7 != 0 {
            continue;
        }
        for policy in [WhenFull::RefuseNewKeys, WhenFull::EvictSoonestFull] {
            let (clock, twin_clock) = (Arc::new(ManualClock::new()), Arc::new(ManualClock::new()));
            let options = KeyedOptions::new(4).shards(1).when_full(policy);
            let limiter: AnyKeyedLimiter = match AnyKeyedLimiter::new(&spec, options, AnyClock::from(clock.clone())) {
                Ok(limiter) => limiter,
                Err(_) => {
                    tally.rejected += 1;
                    continue;
                }
            };
            let twin: AnyKeyedLimiter =
                AnyKeyedLimiter::new(&spec, options, AnyClock::from(twin_clock.clone())).unwrap();
            tally.built += 1;
            try_one(&mut findings, || {
                for (s, step) in STEPS.into_iter().enumerate() {
                    clock.advance_micros(step);
                    twin_clock.advance_micros(step);
                    for (c, cost) in COUNTS.into_iter().enumerate() {
                        let key = ((s * COUNTS.len() + c) as u64 % 6).to_le_bytes();
                        let context =
                            || format!("keyed {spec:?} ({policy:?}) at {} µs, key {key:?}", clock.now_micros());
                        let held = limiter.len();
                        match limiter.try_check(&key, cost).expect("an 8-byte key") {
                            Ok(d) => {
                                check_decision(&d, cost, remaining_rule(&spec), &context);
                                // Forced evictions pick their victims by the
                                // keys' history and over-admit by design: the
                                // twin holds under the default policy.
                                if d.allowed && cost > 0 && policy == WhenFull::RefuseNewKeys {
                                    assert_eq!(twin.try_check(&key, cost), Ok(Ok(d)), "{}: cost {cost}", context());
                                } else if !d.allowed {
                                    assert!(limiter.len() <= held, "{}: a refusal created a key", context());
                                }
                            }
                            Err(full) => {
                                assert_eq!(policy, WhenFull::RefuseNewKeys, "{}", context());
                                assert!(limiter.len() <= held, "{}: a refusal at the bound created a key", context());
                                check_decision(&full.decision(), cost, remaining_rule(&spec), &context);
                            }
                        }
                        assert!(limiter.len() <= 4, "{}: {} keys held", context(), limiter.len());
                        if policy == WhenFull::RefuseNewKeys {
                            assert_eq!(limiter.peek(&key, 1), twin.peek(&key, 1), "{}: after cost {cost}", context());
                        }
                        tally.calls += 3;
                    }
                }
            });
        }
    }
    tally.print("keyed");
    report(&findings, "keyed");
}

/// Composites of extreme parts: a refusal by any part leaves every part as
/// a twin that never saw it.
#[test]
fn composites_survive_every_extreme() {
    let specs: Vec<_> = every_spec().into_iter().filter(|s| AnyLimiter::new(s).is_ok()).step_by(41).collect();
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    for pair in specs.windows(2) {
        let (clock, twin_clock) = (Arc::new(ManualClock::new()), Arc::new(ManualClock::new()));
        let limiter = CompositeLimiter::with_clock(pair, Arc::clone(&clock)).unwrap();
        let twin = CompositeLimiter::with_clock(pair, Arc::clone(&twin_clock)).unwrap();
        tally.built += 1;
        try_one(&mut findings, || {
            for step in STEPS {
                clock.advance_micros(step);
                twin_clock.advance_micros(step);
                for cost in COUNTS {
                    let context = || format!("composite {pair:?} at {} µs", clock.now_micros());
                    let (d, parts) = limiter.check_each(cost);
                    check_decision(&d, cost, Remaining::WithinLimitAsF64, &context);
                    assert_eq!(d.allowed, parts.iter().all(|p| p.allowed), "{}: {d:?} of {parts:?}", context());
                    if d.allowed {
                        assert_eq!(twin.check_each(cost), (d, parts), "{}", context());
                    }
                    assert_eq!(limiter.peek(1), twin.peek(1), "{}: after cost {cost}", context());
                    tally.calls += 3;
                }
            }
        });
    }
    tally.print("composite");
    report(&findings, "composite");
}

/// Concurrency limiters of every kind with extreme limits, released
/// permits forged with extreme times and counts, released twice, and
/// extreme samples: the limit stays within its bounds, nothing underflows.
#[test]
fn concurrency_limiters_survive_every_extreme() {
    let (mut tally, mut findings) = (Tally::default(), Vec::new());
    let mut policies = Vec::new();
    for limit in COUNTS {
        policies.push(ConcurrencyPolicy::fixed(limit));
        policies.push(ConcurrencyPolicy::aimd(AimdConfig {
            initial_limit: limit,
            max_limit: limit.max(1),
            ..AimdConfig::default()
        }));
        policies.push(ConcurrencyPolicy::gradient(GradientConfig {
            initial_limit: limit,
            max_limit: limit.max(1),
            probe_interval: 0,
            ..GradientConfig::default()
        }));
    }
    for policy in policies {
        let Ok(policy) = policy else {
            tally.rejected += 1;
            continue;
        };
        tally.built += 1;
        let clock = Arc::new(ManualClock::new());
        let limiter = ConcurrencyLimiter::with_clock(policy, Arc::clone(&clock));
        try_one(&mut findings, || {
            for step in STEPS {
                clock.advance_micros(step);
                let (d, permit) = limiter.try_acquire();
                check_decision(&d, 1, Remaining::WithinLimit, &|| format!("{policy:?}"));
                if let Some(mut permit) = permit {
                    let before = limiter.in_flight();
                    limiter.release(permit, Outcome::Success);
                    assert_eq!(limiter.in_flight(), before - 1);
                    // Misuse: the same permit again, then forged ones.
                    limiter.release(permit, Outcome::Dropped);
                    for (start, in_flight) in [(i64::MIN, u64::MAX), (i64::MAX, 0), (0, u64::MAX)] {
                        permit.start_micros = start;
                        permit.in_flight = in_flight;
                        for outcome in [Outcome::Success, Outcome::Dropped, Outcome::Ignored] {
                            limiter.release(permit, outcome);
                        }
                    }
                    assert_eq!(limiter.in_flight(), 0, "{policy:?}: released more than taken");
                }
                for rtt in [Duration::ZERO, Duration::from_micros(1), Duration::from_secs(3_600), Duration::MAX] {
                    for in_flight in COUNTS {
                        for dropped in [false, true] {
                            match limiter.sample(rtt, in_flight, dropped) {
                                Ok(limit) => {
                                    assert!(limit >= 1 && limit == limiter.limit(), "{policy:?}: limit {limit}")
                                }
                                // Only an RTT too long for the core's
                                // microseconds is refused.
                                Err(e) => assert_eq!(rtt, Duration::MAX, "{policy:?}: {e}"),
                            }
                            tally.calls += 1;
                        }
                    }
                }
                tally.calls += 12;
            }
        });
    }
    tally.print("ConcurrencyLimiter");
    report(&findings, "ConcurrencyLimiter");
}

/// The bindings' conversions from seconds: NaN, infinities and negatives are
/// errors (a timeout's clamp, as it documents), never a wrapped or
/// negative wait.
#[test]
fn conversions_from_seconds_clamp_or_refuse() {
    for secs in RATES.iter().copied().chain([-1e300, 1e-7, 9.3e12, 9.3e15]) {
        if let Ok(micros) = timeout_micros_from_secs(secs) {
            assert!(micros >= 0, "timeout {secs} s: {micros} µs");
        }
        if let Ok(micros) = warmup_micros_from_secs(secs) {
            assert!(micros >= 0, "warm-up {secs} s: {micros} µs");
        }
    }
}
