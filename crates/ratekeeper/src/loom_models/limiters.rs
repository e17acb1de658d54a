//! Loom models of the public limiters, through their public methods: two
//! callers racing on one limiter decide as if they had come one at a time
//! ([`linearizable`]), so no unit is spent twice and no update is lost.
//!
//! Which concurrent path each model runs:
//!
//! * the eight admission algorithms through [`AnyLimiter`] on an
//!   [`AnyClock`] — seven on the lock-free `Shared` (`SeqCell::decide`,
//!   `read` for `peek`), the sliding log behind its mutex;
//! * [`RateLimiter`]: `acquire` (`SeqCell::update`, then a sleep that moves
//!   the manual clock), `try_acquire` (its own copy/CAS loop, where a
//!   refusal must be made on a consistent copy), `set_rate` against a
//!   reservation (two `update`s);
//! * [`TokenBucket`]: `wait_n` (decide, then sleep) and `set_rate` against a
//!   `check` (an `update` against a hot `decide`);
//! * [`CompositeLimiter`] (all parts behind one mutex, all or nothing);
//! * [`ConcurrencyLimiter`]: permits, and releases racing acquires;
//! * [`SrTcm`] (a marker: three colours from one `decide`);
//! * [`ManualClock`]: concurrent advances and reads.

use std::sync::Arc as StdArc;
use std::time::Duration;

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::{check, linearizable};
use crate::{
    AnyClock, AnyLimiter, Clock, CompositeLimiter, ConcurrencyLimiter, ConcurrencyPolicy, LimiterSpec, ManualClock,
    Outcome, RateLimiter, SrTcm, TokenBucket,
};

fn manual() -> StdArc<ManualClock> {
    StdArc::new(ManualClock::new())
}

/// One algorithm, its last unit: two callers each `check(1)` a limiter
/// that has room for one; afterwards, `peek(1)`.
fn last_unit(name: &str, make: fn() -> AnyLimiter<AnyClock>) {
    linearizable(name, make, |l, _| l.check(1), |l| l.peek(1));
}

#[test]
fn token_bucket_last_unit() {
    last_unit("TokenBucket::check, last unit", || {
        AnyLimiter::with_clock(&LimiterSpec::TokenBucket { rate: 1.0, burst: 1 }, manual().into()).unwrap()
    });
}

#[test]
fn gcra_last_unit() {
    last_unit("Gcra::check, last unit", || {
        let spec = LimiterSpec::Gcra { max_burst: 0, count_per_period: 1, period_micros: 1_000_000 };
        AnyLimiter::with_clock(&spec, manual().into()).unwrap()
    });
}

#[test]
fn leaky_bucket_meter_last_unit() {
    last_unit("LeakyBucketMeter::check, last unit", || {
        let spec = LimiterSpec::LeakyBucketMeter { capacity: 1, count_per_period: 1, period_micros: 1_000_000 };
        AnyLimiter::with_clock(&spec, manual().into()).unwrap()
    });
}

/// The queue admits both, with different waits: the slots are handed out
/// one each, never the same slot twice.
#[test]
fn leaky_bucket_queue_hands_out_each_slot_once() {
    last_unit("LeakyBucketQueue::check, two slots", || {
        let spec = LimiterSpec::LeakyBucketQueue { capacity: 1, interval_micros: 1_000_000, slack: 0 };
        AnyLimiter::with_clock(&spec, manual().into()).unwrap()
    });
}

#[test]
fn fixed_window_last_unit() {
    last_unit("FixedWindow::check, last unit", || {
        AnyLimiter::with_clock(&LimiterSpec::FixedWindow { limit: 1, window_micros: 1_000_000 }, manual().into())
            .unwrap()
    });
}

#[test]
fn sliding_window_last_unit() {
    last_unit("SlidingWindow::check, last unit", || {
        let spec = LimiterSpec::SlidingWindow { limit: 1, window_micros: 1_000_000, sub_windows: 4 };
        AnyLimiter::with_clock(&spec, manual().into()).unwrap()
    });
}

#[test]
fn sliding_log_last_unit() {
    last_unit("SlidingLog::check (mutex), last unit", || {
        AnyLimiter::with_clock(&LimiterSpec::SlidingLog { limit: 1, window_micros: 1_000_000 }, manual().into())
            .unwrap()
    });
}

#[test]
fn sliding_window_counter_last_unit() {
    last_unit("SlidingWindowCounter::check, last unit", || {
        let spec = LimiterSpec::SlidingWindowCounter { limit: 1, window_micros: 1_000_000 };
        AnyLimiter::with_clock(&spec, manual().into()).unwrap()
    });
}

fn guava(rate: f64) -> RateLimiter<StdArc<ManualClock>> {
    RateLimiter::builder(rate).clock(manual()).build().unwrap()
}

/// Guava's `acquire` from two threads at 1 permit/s: one goes at once, the
/// other pays for it (waits 1 s, which moves the manual clock), and the
/// next permit is due as the serial run says. A lost update would let both
/// go at once.
#[test]
fn rate_limiter_acquire() {
    linearizable(
        "RateLimiter::acquire (update + sleep)",
        || guava(1.0),
        |l, _| l.acquire(1).unwrap(),
        |l| (l.time_until_available(1).unwrap(), l.clock().now()),
    );
}

/// `try_acquire` with no timeout against `acquire`: the hot path's refusal
/// (no write, so it must be made on a consistent copy) and its CAS.
#[test]
fn rate_limiter_try_acquire_against_acquire() {
    linearizable(
        "RateLimiter::try_acquire vs acquire",
        || guava(1.0),
        |l, caller| match caller {
            0 => format!("try_acquire: {}", l.try_acquire(1, Duration::ZERO).unwrap()),
            _ => format!("acquire: {:?}", l.acquire(1).unwrap()),
        },
        |l| (l.time_until_available(1).unwrap(), l.clock().now()),
    );
}

/// `set_rate` against a reservation, after one permit was taken: the
/// reservation pays for the last permit at the old rate either way, and
/// the next is due at 2 s (reserved first, at 1/s) or 1.5 s (the new rate
/// first). Neither the new rate nor the reservation is lost.
#[test]
fn rate_limiter_set_rate_against_reserve() {
    linearizable(
        "RateLimiter::set_rate vs reserve",
        || {
            let l = guava(1.0);
            l.reserve(1).unwrap();
            l
        },
        |l, caller| match caller {
            0 => format!("set_rate: {:?}", l.set_rate(2.0)),
            _ => format!("reserve: {:?}", l.reserve(1).unwrap()),
        },
        |l| (l.time_until_available(1).unwrap(), l.rate()),
    );
}

/// x/time/rate's `WaitN` from two threads on a bucket of 1 at 1/s: one
/// goes at once, the other sleeps (moving the manual clock) for the token
/// it reserved.
#[test]
fn token_bucket_wait_n() {
    linearizable(
        "TokenBucket::wait_n (decide + sleep)",
        || TokenBucket::with_clock(1.0, 1, manual()).unwrap(),
        |b, _| b.wait_n(1, Duration::from_secs(5)),
        |b| (b.peek(1), b.clock().now()),
    );
}

/// `set_rate` (any word: `update`) against `check` (hot words only:
/// `decide`) on an empty bucket: whichever publishes second keeps what the
/// first did.
#[test]
fn token_bucket_set_rate_against_check() {
    linearizable(
        "TokenBucket::set_rate vs check",
        || {
            let b = TokenBucket::with_clock(1.0, 2, manual()).unwrap();
            b.check(1);
            b
        },
        |b, caller| match caller {
            0 => format!("set_rate: {:?}", b.set_rate(1_000.0)),
            _ => format!("check: {:?}", b.check(1)),
        },
        |b| (b.rate(), b.tokens()),
    );
}

/// Two parts behind one mutex, a bucket of 1 and a window of 5: the
/// second caller is refused by the bucket and takes nothing from the
/// window (the window shows one unit used, not two).
#[test]
fn composite_all_or_nothing() {
    linearizable(
        "CompositeLimiter::check_each (mutex)",
        || {
            let specs = [
                LimiterSpec::TokenBucket { rate: 1.0, burst: 1 },
                LimiterSpec::FixedWindow { limit: 5, window_micros: 1_000_000 },
            ];
            CompositeLimiter::with_clock(&specs, manual()).unwrap()
        },
        |l, _| l.check_each(1),
        |l| l.check_each(1),
    );
}

/// A fixed concurrency limit of 1: one caller gets the permit.
#[test]
fn concurrency_limiter_one_permit() {
    linearizable(
        "ConcurrencyLimiter::try_acquire, last permit",
        || ConcurrencyLimiter::with_clock(ConcurrencyPolicy::fixed(1).unwrap(), manual()),
        |l, _| l.try_acquire().0,
        |l| l.in_flight(),
    );
}

/// Two threads each take the only permit, hold it, and release it: never
/// two holders at once (counted outside the limiter, in a loom atomic),
/// and nothing left in flight.
#[test]
fn concurrency_limiter_acquire_release() {
    check("ConcurrencyLimiter::try_acquire/release, 2 threads", || {
        let limiter = Arc::new(ConcurrencyLimiter::with_clock(ConcurrencyPolicy::fixed(1).unwrap(), manual()));
        let holders = Arc::new(AtomicU64::new(0));
        let work = |limiter: &ConcurrencyLimiter<StdArc<ManualClock>>, holders: &AtomicU64| {
            if let (_, Some(permit)) = limiter.try_acquire() {
                assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders of one permit");
                holders.fetch_sub(1, Ordering::SeqCst);
                limiter.release(permit, Outcome::Success);
                true
            } else {
                false
            }
        };
        let other = {
            let (limiter, holders) = (Arc::clone(&limiter), Arc::clone(&holders));
            thread::spawn(move || work(&limiter, &holders))
        };
        let mine = work(&limiter, &holders);
        let theirs = other.join().unwrap();
        assert!(mine || theirs, "the permit was free, yet nobody got it");
        assert_eq!(limiter.in_flight(), 0);
    });
}

/// RFC 2697's marker: 1,500 committed and 1,500 excess bytes; two packets
/// of 1,500 get one green and one yellow, never two greens.
#[test]
fn srtcm_colours() {
    linearizable(
        "SrTcm::mark",
        || SrTcm::with_clock(1_000, 1_500, 1_500, manual()).unwrap(),
        |m, _| m.mark(1_500),
        |m| m.tokens(),
    );
}

/// The manual clock: two advances (3 µs and 5 µs) are both kept, and a
/// reader between them sees time move forward only.
#[test]
fn manual_clock_advances_add_up() {
    check("ManualClock::advance_micros/now_micros, 2 threads", || {
        let clock = StdArc::new(ManualClock::new());
        let other = {
            let clock = StdArc::clone(&clock);
            thread::spawn(move || {
                clock.advance_micros(5);
                let a = clock.now_micros();
                let b = clock.now_micros();
                assert!(a >= 5 && b >= a, "read {a} then {b}");
            })
        };
        clock.advance_micros(3);
        let seen = clock.now_micros();
        assert!(seen == 3 || seen == 8, "read {seen}");
        other.join().unwrap();
        assert_eq!(clock.now_micros(), 8);
    });
}
