//! Every Redis limiter run once on a store, each deciding as it should:
//! what TLS and ACL tests run over the connection they set up, so that no
//! limiter's commands or keys are left out of what they check.

use std::time::Duration;

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{
    Error, RedisCompositeLimiter, RedisConcurrencyLimiter, RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter,
    RedisRateLimiter, RedisStore,
};

/// Each exact algorithm with a limit of 3 a minute: three admitted, the
/// fourth refused.
pub const EXACT: [(&str, LimiterSpec); 5] = [
    ("gcra", LimiterSpec::Gcra { max_burst: 2, count_per_period: 3, period_micros: 60_000_000 }),
    ("token_bucket", LimiterSpec::TokenBucket { rate: 0.05, burst: 3 }),
    ("fixed_window", LimiterSpec::FixedWindow { limit: 3, window_micros: 60_000_000 }),
    ("sliding_window_counter", LimiterSpec::SlidingWindowCounter { limit: 3, window_micros: 60_000_000 }),
    ("sliding_log", LimiterSpec::SlidingLog { limit: 3, window_micros: 60_000_000 }),
];

/// Runs `call` on the store's runtime thread (so that a single server's
/// call goes out on the multiplexed connection, not a blocking one) and
/// waits for its answer.
pub fn on_runtime<T: Send + 'static>(call: impl std::future::Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    RedisStore::spawn_with(call, move |answer| {
        let _ = tx.send(answer);
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("no answer within 10 s")
}

/// Every limiter under names starting with `prefix`, blocking calls and
/// async ones: each admits what its limit allows and refuses the next.
pub fn every_limiter_decides(store: &RedisStore, prefix: &str) -> Result<(), Error> {
    for (algorithm, spec) in EXACT {
        let name = format!("{prefix}-{algorithm}");
        let limiter = RedisLimiter::new(store, &name, spec)?.remember_refusals(false);
        // Blocking, on this thread's own connection.
        let blocking: Vec<bool> =
            (0..4).map(|_| limiter.check("blocking", 1).map(|d| d.allowed)).collect::<Result<_, _>>()?;
        assert_eq!(blocking, [true, true, true, false], "{name}, blocking");
        // A peek: what a check would answer, taking nothing.
        assert!(!limiter.peek("blocking", 1)?.allowed, "{name}, peek");
        // Async, on the multiplexed connection.
        let asynchronous = on_runtime(async move {
            let mut allowed = Vec::new();
            for _ in 0..4 {
                allowed.push(limiter.check_async("async", 1).await?.allowed);
            }
            Ok::<_, Error>(allowed)
        })?;
        assert_eq!(asynchronous, [true, true, true, false], "{name}, async");
        // A refund gives one back (its commands are the script's own).
        let limiter = RedisLimiter::new(store, &name, spec)?.remember_refusals(false);
        limiter.refund("blocking", 1)?;
        assert!(limiter.check("blocking", 1)?.allowed, "{name}, after a refund");
    }

    // Every algorithm as one composite: one script run for all of them.
    let specs: Vec<LimiterSpec> = EXACT.iter().map(|(_, spec)| *spec).collect();
    let composite = RedisCompositeLimiter::new(store, &format!("{prefix}-composite"), &specs)?;
    let allowed: Vec<bool> =
        (0..4).map(|_| composite.check("k", 1).map(|d| d.combined.allowed)).collect::<Result<_, _>>()?;
    assert_eq!(allowed, [true, true, true, false], "composite");
    composite.refund("k", 1)?;
    assert!(composite.peek("k", 1)?.combined.allowed, "composite, after a refund");
    assert!(composite.remove("k")?, "composite, removed");

    let gcra = EXACT[0].1;
    let leased = RedisLeasedLimiter::new(store, &format!("{prefix}-leased"), gcra, 2, Duration::from_secs(60))?;
    let allowed: Vec<bool> = (0..4).map(|_| leased.check("k", 1).map(|d| d.allowed)).collect::<Result<_, _>>()?;
    assert_eq!(allowed, [true, true, true, false], "leased");

    let divided = RedisDividedLimiter::new(store, &format!("{prefix}-divided"), gcra, Duration::from_secs(5), 100)?;
    divided.membership().refresh()?;
    assert_eq!(divided.nodes(), 1);
    let allowed: Vec<bool> = (0..4).map(|_| divided.check("k", 1).map(|d| d.allowed)).collect::<Result<_, _>>()?;
    assert_eq!(allowed, [true, true, true, false], "divided");

    let guava = RedisRateLimiter::builder(&format!("{prefix}-guava"), 0.5).max_burst_seconds(0.0).connect(store)?;
    assert!(guava.try_acquire(1, Duration::ZERO)?, "Guava shared: the first permit");
    assert!(!guava.try_acquire(1, Duration::ZERO)?, "Guava shared: the next is 2 s away");

    let concurrency =
        RedisConcurrencyLimiter::new(store, &format!("{prefix}-concurrency"), 1, Duration::from_secs(10))?;
    let (first, lease) = concurrency.try_acquire(1)?;
    assert!(first.allowed, "concurrency: the one permit");
    assert!(!concurrency.try_acquire(1)?.0.allowed, "concurrency: none left");
    assert!(concurrency.release(&lease.expect("a lease"))?, "concurrency: released");
    Ok(())
}
