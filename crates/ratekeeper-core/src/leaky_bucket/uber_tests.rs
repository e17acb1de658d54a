//! uber-go/ratelimit's tests (`ratelimit_test.go`, Go), translated: the
//! leaky bucket queue with slack is Uber's `Take()` (the atomic int64
//! limiter's arithmetic), and `NewUnlimited()` is a token bucket of
//! infinite rate. Test names are Uber's in snake case, expected values are
//! Uber's.
//!
//! Uber's tests run goroutines that loop on `Take()` against a mock clock
//! that the test moves forward. Here that is a deterministic event
//! simulation ([`Run`]): a caller's next `Take` happens at the moment its
//! previous one returned (a `Take` returns at its slot, or at once when the
//! slot is not in the future); `assertCountAt(d, n)` checks that `n`
//! iterations had returned before `d` (one returning exactly at `d` has not
//! yet: Uber's assertion timer is registered first, so it fires first).
//! Callers acting at the same moment act in the order they were started.
//!
//! Differences kept on purpose:
//! - Time is microseconds since the limiter's creation, where Uber's is
//!   nanoseconds since 1970 (its mock clock is set to the wall clock
//!   because 0 means "no request yet" there; here 0 is the creation, and
//!   the queue tells "no request yet" apart by its own state). So
//!   `TestMaxSlack`'s offsets of 1, 2, 3 and 4 ns are 1, 2, 3 and 4 µs, and
//!   `Per(time.Minute)` with a rate of 7 spaces slots 8,571,428 µs apart
//!   (Uber: 8,571,428,571 ns), which changes no expected count.
//! - Uber's queue is unbounded; here every limiter has a capacity, so the
//!   tests use one no caller reaches (`i64::MAX` units) and check that every
//!   `Take` is admitted.
//! - Uber runs each test against three implementations (mutex, atomic,
//!   atomic int64); there is one here. Its arithmetic is the atomic int64
//!   limiter's (`limiter_atomic_int64.go`), which `ratelimit.New` returns.
//! - `TestUnlimited` measures that 1,000 `Take`s took under a millisecond
//!   of real time; here the 1,000 decisions are made at one instant and
//!   each must ask for no wait, which is what "no artificial delay" means.

extern crate std;

use std::vec::Vec;

use super::LeakyBucketQueue;
use crate::admission::Admission;
use crate::token_bucket::TokenBucket;

const MS: i64 = 1_000;
const SECOND: i64 = 1_000_000;

/// Uber's default slack (`buildConfig`).
const DEFAULT_SLACK: u64 = 10;

/// Uber's options: `WithoutSlack`, `WithSlack(n)`, `Per(d)`.
#[derive(Clone, Copy)]
struct Options {
    slack: u64,
    per_micros: i64,
}

const DEFAULTS: Options = Options { slack: DEFAULT_SLACK, per_micros: SECOND };

/// `ratelimit.New(rate, opts...)`: a slot every `per / rate` (integer
/// division, as Go's `time.Duration`), saving up to `slack` slots.
fn limiter(rate: i64, options: Options) -> LeakyBucketQueue {
    LeakyBucketQueue::with_slack(i64::MAX as u64, options.per_micros / rate, options.slack).unwrap()
}

/// A goroutine of Uber's runner: `startTaking(limiters…)` loops taking
/// each in turn and counts one per round; `takeOnceAfter` takes once.
struct Caller {
    limiters: Vec<usize>,
    /// Which of `limiters` it takes next.
    position: usize,
    /// When it takes next; `None` once a single take is done.
    next: Option<i64>,
    looping: bool,
}

/// Uber's `runnerImpl` as an event simulation.
struct Run {
    limiters: Vec<LeakyBucketQueue>,
    callers: Vec<Caller>,
    /// When each counted round (or single take) returned.
    counted: Vec<i64>,
    now: i64,
}

impl Run {
    fn new(limiters: Vec<LeakyBucketQueue>) -> Self {
        Run { limiters, callers: Vec::new(), counted: Vec::new(), now: 0 }
    }

    /// `startTaking(limiters…)` at the current time.
    fn start_taking(&mut self, limiters: &[usize]) {
        let at = self.now;
        self.callers.push(Caller { limiters: limiters.to_vec(), position: 0, next: Some(at), looping: true });
    }

    /// `takeOnceAfter(d, limiter)`.
    fn take_once_after(&mut self, at: i64, limiter: usize) {
        self.callers.push(Caller { limiters: std::vec![limiter], position: 0, next: Some(at), looping: false });
    }

    /// `Take()` on limiter `index` at `now`: when it returns.
    fn take(&mut self, index: usize, now: i64) -> i64 {
        let decision = self.limiters[index].check(1, now);
        assert!(decision.allowed, "limiter {index} refused a Take at {now}: {decision:?}");
        now + decision.wait_micros
    }

    /// Runs every take that happens before `until` (a take at `until`
    /// itself waits), earliest first, then sets the time to `until`.
    fn run_until(&mut self, until: i64) {
        loop {
            let due = (0..self.callers.len())
                .filter_map(|i| self.callers[i].next.map(|at| (at, i)))
                .filter(|&(at, _)| at < until)
                .min();
            let Some((at, i)) = due else { break };
            let limiter = self.callers[i].limiters[self.callers[i].position];
            let returned = self.take(limiter, at);
            let caller = &mut self.callers[i];
            caller.position += 1;
            if caller.position == caller.limiters.len() {
                caller.position = 0;
                self.counted.push(returned);
                if !caller.looping {
                    caller.next = None;
                    continue;
                }
            }
            caller.next = Some(returned);
        }
        self.now = until;
    }

    /// Rounds that returned before `at`, once every take before it ran.
    fn count_at(&mut self, at: i64) -> usize {
        self.run_until(at);
        self.counted.iter().filter(|&&t| t < at).count()
    }

    /// `assertCountAt(d, count)`.
    fn assert_count_at(&mut self, at: i64, count: usize) {
        assert_eq!(self.count_at(at), count, "count not as expected at {at} µs");
    }
}

/// `TestUnlimited`: `NewUnlimited()` never delays a `Take`.
#[test]
fn test_unlimited() {
    let mut unlimited = TokenBucket::new(f64::INFINITY, 0).unwrap();
    for _ in 0..1000 {
        let decision = unlimited.check(1, 0);
        assert!(decision.allowed && decision.wait_micros == 0, "{decision:?}");
    }
}

/// `TestRateLimiter`: four goroutines on 100 per second, without slack.
#[test]
fn test_rate_limiter() {
    let mut r = Run::new(std::vec![limiter(100, Options { slack: 0, ..DEFAULTS })]);
    for _ in 0..4 {
        r.start_taking(&[0]);
    }
    r.assert_count_at(SECOND, 100);
    r.assert_count_at(2 * SECOND, 200);
    r.assert_count_at(3 * SECOND, 300);
}

/// `TestDelayedRateLimiter`: a goroutine held back by a slow limiter, then
/// four more on the fast one from 20 s.
#[test]
fn test_delayed_rate_limiter() {
    let without_slack = Options { slack: 0, ..DEFAULTS };
    let (slow, fast) = (0, 1);
    let mut r = Run::new(std::vec![limiter(10, without_slack), limiter(100, without_slack)]);
    r.start_taking(&[slow, fast]);
    r.run_until(20 * SECOND);
    for _ in 0..4 {
        r.start_taking(&[fast]);
    }
    r.assert_count_at(30 * SECOND, 1200);
}

/// `TestPer`: 7 per minute.
#[test]
fn test_per() {
    let mut r = Run::new(std::vec![limiter(7, Options { slack: 0, per_micros: 60 * SECOND })]);
    r.start_taking(&[0]);
    r.start_taking(&[0]);
    r.assert_count_at(SECOND, 1);
    r.assert_count_at(60 * SECOND, 8);
    r.assert_count_at(120 * SECOND, 15);
}

/// `TestInitial`, both subtests: three `Take`s at once are spaced 0,
/// 100 ms, 100 ms apart, with slack or without (nothing is saved before
/// the first).
#[test]
fn test_initial() {
    for (msg, options) in [("With Slack", DEFAULTS), ("Without Slack", Options { slack: 0, ..DEFAULTS })] {
        let mut rl = limiter(10, options);
        let mut prev = 0;
        let have: Vec<i64> = (0..3)
            .map(|_| {
                let decision = rl.check(1, 0);
                assert!(decision.allowed);
                let ts = decision.wait_micros;
                let gap = ts - prev;
                prev = ts;
                gap
            })
            .collect();
        assert_eq!(have, [0, 100 * MS, 100 * MS], "{msg}: bad timestamps for initial takes");
    }
}

/// `TestMaxSlack`: one per second with a slack of 1; after a long pause
/// only one slot is saved (Uber's 1 ns offsets are 1 µs here).
#[test]
fn test_max_slack() {
    let mut r = Run::new(std::vec![limiter(1, Options { slack: 1, ..DEFAULTS })]);
    r.take_once_after(1, 0);
    r.take_once_after(2 * SECOND + 1, 0);
    r.take_once_after(2 * SECOND + 2, 0);
    r.take_once_after(2 * SECOND + 3, 0);
    r.take_once_after(2 * SECOND + 4, 0);
    r.assert_count_at(3 * SECOND, 3);
    r.assert_count_at(10 * SECOND, 5);
}

/// `TestSlack`, all eight cases: a fast limiter held back by a slow one
/// saves slack, which two more goroutines spend from 2 s.
#[test]
fn test_slack() {
    let half_second = 500 * MS;
    let cases: [(&str, Options, usize); 8] = [
        ("no option, defaults to 10", DEFAULTS, 130),
        ("slack of 10, like default", Options { slack: 10, ..DEFAULTS }, 130),
        ("slack of 20", Options { slack: 20, ..DEFAULTS }, 140),
        ("slack of 150", Options { slack: 150, ..DEFAULTS }, 270),
        ("no option, defaults to 10, with per", Options { per_micros: half_second, ..DEFAULTS }, 230),
        ("slack of 10, like default, with per", Options { slack: 10, per_micros: half_second }, 230),
        ("slack of 20, with per", Options { slack: 20, per_micros: half_second }, 240),
        ("slack of 150, with per", Options { slack: 150, per_micros: half_second }, 370),
    ];
    for (msg, options, want) in cases {
        let (slow, fast) = (0, 1);
        let mut r = Run::new(std::vec![limiter(10, Options { slack: 0, ..DEFAULTS }), limiter(100, options)]);
        r.start_taking(&[slow, fast]);
        // The 10 Hz limiter dominates here: always 10 a second.
        assert_eq!(r.count_at(SECOND), 10, "{msg}");
        r.run_until(2 * SECOND);
        r.start_taking(&[fast]);
        r.start_taking(&[fast]);
        assert_eq!(r.count_at(3 * SECOND), want, "{msg}");
    }
}
