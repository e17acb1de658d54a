//! Resilience4j's own tests of `AtomicRateLimiter` (resilience4j-ratelimiter:
//! `AtomicRateLimiterTest`, `RateLimitersImplementationTest` run on the
//! atomic limiter, and `RateLimiterConfigTest`), translated: same names (in
//! snake case), same steps, same expected values.
//!
//! Resilience4j mocks `currentNanoTime()`; here the time is passed in. Its
//! times are nanoseconds and ours microseconds: a cycle of 250,000,000 ns
//! is 250,000 µs here, and the small offsets (10 ns, 1 ns, `i + 1` ns) are
//! the same numbers of microseconds. The tests on a real clock (`notSpyRaw…`,
//! `metricsTest`, `RateLimitersImplementationTest`) spin or poll until a
//! cycle passes; here that is a step of the time to the cycle the spin would
//! end in, so they cannot flake.
//!
//! A caller thread that parks in `acquirePermission` is, here, the admitted
//! decision with its `wait_micros` (the core does not wait); the same tests
//! with real threads, counting the waiting threads, are in the std crate
//! (`crates/ratekeeper/tests/cycle.rs`). Not translated:
//!
//! * `waitingThreadIsInterrupted`: a Rust thread cannot be interrupted (its
//!   state checks are those of `reserveAndRefresh`);
//! * `namePropagation`, the events of `acquireAndRefreshWithEventPublishing`
//!   and `drainCycleWhichAlreadyHashNoPremitsLeftTest` (the drained count is
//!   checked instead), `firstIterationAtomicRateLimitNanoTime`'s comparison
//!   of two limiters' start times: the core has no names, events or
//!   absolute start time;
//! * `RateLimiterConfigTest`'s `builderTimeoutIsNull` and
//!   `builderRefreshPeriodIsNull` (Rust has no null); its "too large"
//!   durations are std tests, where a `Duration` can exceed `i64::MAX` µs;
//! * the module's other tests: `RateLimiterTest`,
//!   `RateLimiterWithConditionalDrainTest` and its integration test check
//!   the decorators (`decorateSupplier`, `drainPermissionsOnResult`) over a
//!   mocked limiter, `RateLimiterEventPublisherTest` the events,
//!   `RateLimiterRegistryTest` and `InMemoryRateLimiterRegistryTest` the
//!   registry of limiters by name, `SemaphoreBasedRateLimiter*Test` the other
//!   implementation, `RequestNotPermittedExceptionTest` the exception: none
//!   of these is part of the algorithm, and ratekeeper has none of them.
//!
//! After them come this port's own tests: the decision's retry-after and
//! reset-after against a replay, the worst case, and the deliberate
//! differences of the module documentation.

use super::{CycleConfig, CycleLimiter, CycleMetrics};
use crate::decision::NEVER;
use crate::error::{Argument, Error};
use crate::Admission;

const CYCLE: i64 = 250_000;
const PERMISSIONS_RER_CYCLE: u64 = 1;

fn setup_with(cycle: i64, timeout: i64, permissions_per_cycle: u64) -> CycleLimiter {
    CycleLimiter::new(CycleConfig {
        limit_for_period: permissions_per_cycle,
        limit_refresh_period_micros: cycle,
        timeout_micros: timeout,
    })
    .unwrap()
}

fn setup(timeout: i64) -> CycleLimiter {
    setup_with(CYCLE, timeout, PERMISSIONS_RER_CYCLE)
}

fn acquire(limiter: &mut CycleLimiter, now: i64) -> bool {
    limiter.acquire_permission(1, now).allowed
}

/// `reservePermission()`'s long: the wait, or −1.
fn reserve(limiter: &mut CycleLimiter, permits: u64, now: i64) -> i64 {
    limiter.reserve_permission(permits, now).unwrap_or(-1)
}

/// (`getAvailablePermissions`, `getNanosToWait`) at `now`.
fn metrics(limiter: &CycleLimiter, now: i64) -> (i64, i64) {
    let CycleMetrics { available_permissions, micros_to_wait, .. } = limiter.metrics(now);
    (available_permissions, micros_to_wait)
}

/// `notSpyRawTest`: the spins become steps of the time.
#[test]
fn not_spy_raw_test() {
    let mut raw = setup(0);
    // waitForCurrentCycleToPass: the first cycle ends.
    let first_cycle = raw.metrics(0).cycle;
    let mut now = CYCLE;

    assert!(acquire(&mut raw, now));
    // waitForPermissionRenewal: spin for getNanosToWait.
    now += raw.metrics(now).micros_to_wait;
    assert!(acquire(&mut raw, now));
    assert!(!acquire(&mut raw, now));
    let second_cycle = raw.metrics(now).cycle;

    raw.change_limit_for_period(PERMISSIONS_RER_CYCLE * 2).unwrap();
    now += raw.metrics(now).micros_to_wait;
    assert!(acquire(&mut raw, now));
    assert!(acquire(&mut raw, now));
    assert!(!acquire(&mut raw, now));
    let third_cycle = raw.metrics(now).cycle;

    assert_eq!(second_cycle - first_cycle, 2);
    assert_eq!(third_cycle - second_cycle, 1);
}

/// `firstIterationAtomicRateLimitNanoTime`: two limiters made at once each
/// refuse their third request. (Their distinct start times are not
/// translated: the core counts time from its creation.)
#[test]
fn first_iteration_atomic_rate_limit_nano_time() {
    let mut raw = setup(0);
    acquire(&mut raw, 0);
    acquire(&mut raw, 0);
    assert!(!acquire(&mut raw, 0));

    let mut raw_two = setup(0);
    acquire(&mut raw_two, 0);
    acquire(&mut raw_two, 0);
    assert!(!acquire(&mut raw_two, 0));
}

/// `notSpyRawNonBlockingTest`.
#[test]
fn not_spy_raw_non_blocking_test() {
    let mut raw = setup(0);
    let first_cycle = raw.metrics(0).cycle;
    let mut now = CYCLE;

    let first_permission = reserve(&mut raw, 1, now);
    now += raw.metrics(now).micros_to_wait;
    let second_permission = reserve(&mut raw, 1, now);
    let first_no_permission = reserve(&mut raw, 1, now);
    let second_cycle = raw.metrics(now).cycle;

    raw.change_limit_for_period(PERMISSIONS_RER_CYCLE * 2).unwrap();
    now += raw.metrics(now).micros_to_wait;
    let third_permission = reserve(&mut raw, 1, now);
    let fourth_permission = reserve(&mut raw, 1, now);
    let second_no_permission = reserve(&mut raw, 1, now);
    let third_cycle = raw.metrics(now).cycle;

    assert_eq!(second_cycle - first_cycle, 2);
    assert_eq!(third_cycle - second_cycle, 1);
    assert_eq!(first_permission, 0);
    assert_eq!(second_permission, 0);
    assert_eq!(third_permission, 0);
    assert_eq!(fourth_permission, 0);
    assert!(first_no_permission < 0);
    assert!(second_no_permission < 0);
}

/// `permissionsInFirstCycle`.
#[test]
fn permissions_in_first_cycle() {
    let limiter = setup(0);
    assert_eq!(limiter.metrics(CYCLE - 10).available_permissions, PERMISSIONS_RER_CYCLE as i64);
}

/// `acquireAndRefreshWithEventPublishing` (without the events).
#[test]
fn acquire_and_refresh_with_event_publishing() {
    let mut limiter = setup(0);
    assert!(acquire(&mut limiter, CYCLE));
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));
    assert!(!acquire(&mut limiter, CYCLE));
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    assert!(acquire(&mut limiter, CYCLE * 2));
    assert_eq!(metrics(&limiter, CYCLE * 2), (0, CYCLE));
    assert!(!acquire(&mut limiter, CYCLE * 2));
    assert_eq!(metrics(&limiter, CYCLE * 2), (0, CYCLE));
}

/// `reserveAndRefresh`: the caller thread's `acquirePermission` is admitted
/// with a wait of one cycle (the std test has the thread).
#[test]
fn reserve_and_refresh() {
    let mut limiter = setup(CYCLE);
    assert!(acquire(&mut limiter, CYCLE));
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    let caller = limiter.acquire_permission(1, CYCLE);
    assert!(caller.allowed);
    assert_eq!(caller.wait_micros, CYCLE);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE + CYCLE));

    assert_eq!(metrics(&limiter, CYCLE * 2 + 10), (0, CYCLE - 10));
}

/// `reserveFewThenSkipCyclesBeforeRefreshNonBlocking`.
#[test]
fn reserve_few_then_skip_cycles_before_refresh_non_blocking() {
    let mut limiter = setup(CYCLE);
    assert_eq!(reserve(&mut limiter, 1, CYCLE), 0);
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    let reservation = reserve(&mut limiter, 1, CYCLE);
    assert!(reservation > 0);
    assert!(reservation <= CYCLE);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE * 2));

    let additional_reservation = reserve(&mut limiter, 1, CYCLE);
    assert_eq!(additional_reservation, -1);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE * 2));

    assert_eq!(metrics(&limiter, CYCLE * 6 + 10), (1, 0));
}

/// `reserveFewThenSkipCyclesBeforeRefresh`: the first caller is admitted
/// with a wait, the second refused (Resilience4j parks it for the timeout
/// first: the std test has the threads).
#[test]
fn reserve_few_then_skip_cycles_before_refresh() {
    let mut limiter = setup(CYCLE);
    assert!(acquire(&mut limiter, CYCLE));
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    let first_caller = limiter.acquire_permission(1, CYCLE);
    assert!(first_caller.allowed);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE * 2));

    let second_caller = limiter.acquire_permission(1, CYCLE);
    assert!(!second_caller.allowed);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE * 2));

    assert_eq!(metrics(&limiter, CYCLE * 6 + 10), (1, 0));
}

/// `reserveManyCyclesIfWegithgreaterThenLimitPerPeriod` (its misspelt
/// name kept): 3 permits at 1 per cycle wait more than a cycle — exactly
/// two, to the start of cycle 3.
#[test]
fn reserve_many_cycles_if_wegithgreater_then_limit_per_period() {
    let mut limiter = setup(CYCLE * 5);
    let wait = reserve(&mut limiter, PERMISSIONS_RER_CYCLE * 3, CYCLE);
    assert!(wait > CYCLE);
    assert_eq!(wait, CYCLE * 2);
}

/// `rejectedByTimeoutNonBlocking`.
#[test]
fn rejected_by_timeout_non_blocking() {
    let mut limiter = setup(0);
    assert_eq!(reserve(&mut limiter, 1, CYCLE), 0);
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    assert!(reserve(&mut limiter, 1, CYCLE) < 0);
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    assert_eq!(metrics(&limiter, CYCLE * 2 - 1), (0, 1));
}

/// `changePermissionsLimitBetweenCycles`: the reservation made before the
/// change stands; the wait for one more permit shrinks at once, since the
/// next cycle brings two.
#[test]
fn change_permissions_limit_between_cycles() {
    let mut limiter = setup(CYCLE);
    assert!(acquire(&mut limiter, CYCLE));
    assert_eq!(metrics(&limiter, CYCLE), (0, CYCLE));

    assert!(limiter.acquire_permission(1, CYCLE).allowed);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE + CYCLE));

    limiter.change_limit_for_period(PERMISSIONS_RER_CYCLE * 2).unwrap();
    assert_eq!(limiter.config().limit_for_period, PERMISSIONS_RER_CYCLE * 2);
    assert_eq!(metrics(&limiter, CYCLE), (-1, CYCLE));

    assert_eq!(metrics(&limiter, CYCLE * 2 + 10), (1, 0));
}

/// `reservePermissionsUpfront`: 3 per 10 ms, a 12 ms timeout, nine
/// requests 1 µs apart: three now, three at the next cycle, three refused.
#[test]
fn reserve_permissions_upfront() {
    let limit_for_period = 3;
    let tasks_num = 9;
    let cycle = 10_000;
    let mut limiter = setup_with(cycle, 12_000, limit_for_period);

    let times_to_wait: [i64; 9] = core::array::from_fn(|i| reserve(&mut limiter, 1, cycle + i as i64 + 1));
    assert_eq!(times_to_wait.len(), tasks_num);
    assert_eq!(times_to_wait, [0, 0, 0, cycle - 4, cycle - 5, cycle - 6, -1, -1, -1]);
}

/// `changeDefaultTimeoutDuration`.
#[test]
fn change_default_timeout_duration() {
    let mut limiter = setup(0);
    let config = *limiter.config();
    assert_eq!(config.timeout_micros, 0);
    assert_eq!(config.limit_for_period, PERMISSIONS_RER_CYCLE);
    assert_eq!(config.limit_refresh_period_micros, CYCLE);

    limiter.change_timeout_duration(1_000_000).unwrap();
    assert_ne!(config, *limiter.config());
    let config = *limiter.config();
    assert_eq!(config.timeout_micros, 1_000_000);
    assert_eq!(config.limit_for_period, PERMISSIONS_RER_CYCLE);
    assert_eq!(config.limit_refresh_period_micros, CYCLE);
}

/// `changeLimitForPeriod`.
#[test]
fn change_limit_for_period() {
    let mut limiter = setup(0);
    let config = *limiter.config();
    assert_eq!(config.timeout_micros, 0);
    assert_eq!(config.limit_for_period, PERMISSIONS_RER_CYCLE);
    assert_eq!(config.limit_refresh_period_micros, CYCLE);

    limiter.change_limit_for_period(35).unwrap();
    assert_ne!(config, *limiter.config());
    let config = *limiter.config();
    assert_eq!(config.timeout_micros, 0);
    assert_eq!(config.limit_for_period, 35);
    assert_eq!(config.limit_refresh_period_micros, CYCLE);
}

/// `metricsTest` (the waiting threads are the std layer's).
#[test]
fn metrics_test() {
    let mut raw = setup(0);
    assert_eq!(raw.metrics(0).available_permissions, 1);
    assert_eq!(metrics(&raw, 0), (1, 0));
    acquire(&mut raw, 0);
    let now = raw.metrics(0).micros_to_wait;

    acquire(&mut raw, now);
    assert!(!acquire(&mut raw, now));
    assert!(raw.metrics(now).cycle > 0);
}

/// `RateLimitersImplementationTest.acquireBigNumberOfPermitsAtStartOfCycleTest`.
#[test]
fn acquire_big_number_of_permits_at_start_of_cycle_test() {
    let period = 500_000;
    let mut limiter = setup_with(period, 0, 10);
    // waitForRefresh: polls until all 10 permits are there.
    let now = period;
    assert_eq!(limiter.metrics(now).available_permissions, 10);

    assert!(limiter.acquire_permission(5, now).allowed);
    assert!(limiter.acquire_permission(5, now).allowed);
    assert!(!limiter.acquire_permission(1, now).allowed);

    let now = 2 * period;
    assert_eq!(limiter.metrics(now).available_permissions, 10);
    assert!(limiter.acquire_permission(1, now).allowed);
}

/// `RateLimitersImplementationTest.tryToAcquireBigNumberOfPermitsAtEndOfCycleTest`,
/// at the last microsecond of a cycle.
#[test]
fn try_to_acquire_big_number_of_permits_at_end_of_cycle_test() {
    let period = 250_000;
    let mut limiter = setup_with(period, 0, 10);
    let now = 2 * period - 1;
    assert_eq!(limiter.metrics(now).available_permissions, 10);

    assert!(limiter.acquire_permission(1, now).allowed);
    assert!(limiter.acquire_permission(5, now).allowed);
    assert!(!limiter.acquire_permission(5, now).allowed);

    let now = 2 * period;
    assert_eq!(limiter.metrics(now).available_permissions, 10);
    assert!(limiter.acquire_permission(5, now).allowed);
}

/// `RateLimitersImplementationTest.tryToAcquirePermitsAfterDrainBeforeCycleEndsTest`.
#[test]
fn try_to_acquire_permits_after_drain_before_cycle_ends_test() {
    let period = 250_000;
    let mut limiter = setup_with(period, 0, 10);
    let now = period + 1_000;
    assert_eq!(limiter.metrics(now).available_permissions, 10);

    limiter.drain_permissions(now);
    assert!(!acquire(&mut limiter, now));

    // ensureNextCycleStarted: until permits are there again.
    let now = 2 * period;
    assert!(limiter.metrics(now).available_permissions > 0);
    assert!(acquire(&mut limiter, now));
}

/// `RateLimitersImplementationTest.drainCycleWhichAlreadyHashNoPremitsLeftTest`:
/// the second drain finds nothing (Resilience4j: its event's count is 0).
#[test]
fn drain_cycle_which_already_hash_no_premits_left_test() {
    let period = 250_000;
    let mut limiter = setup_with(period, 0, 10);
    let now = period;
    assert_eq!(limiter.metrics(now).available_permissions, 10);

    assert_eq!(limiter.drain_permissions(now), 10);
    assert!(!limiter.acquire_permission(10, now).allowed);

    assert_eq!(limiter.drain_permissions(now), 0);
}

/// `RateLimiterConfigTest.builderPositive` (its 500 ns period as 500 µs).
#[test]
fn builder_positive() {
    let config = CycleConfig { limit_for_period: 50, limit_refresh_period_micros: 500, timeout_micros: 5_000_000 };
    let limiter = CycleLimiter::new(config).unwrap();
    assert_eq!(limiter.config().limit_for_period, 50);
    assert_eq!(limiter.config().limit_refresh_period_micros, 500);
    assert_eq!(limiter.config().timeout_micros, 5_000_000);
}

fn refused(config: CycleConfig) -> (Argument, crate::Value) {
    let Err(Error::InvalidArgument(invalid)) = CycleLimiter::new(config) else { panic!("{config:?} accepted") };
    (invalid.argument(), invalid.value())
}

const GOOD: CycleConfig =
    CycleConfig { limit_for_period: 50, limit_refresh_period_micros: 500, timeout_micros: 5_000_000 };

/// `RateLimiterConfigTest.builderTimeoutIsNegative`.
#[test]
fn builder_timeout_is_negative() {
    let config = CycleConfig { timeout_micros: -1, ..GOOD };
    assert_eq!(refused(config), (Argument::TimeoutDuration, crate::Value::Int(-1)));
}

/// `RateLimiterConfigTest.builderRefreshPeriodTooShort`.
#[test]
fn builder_refresh_period_too_short() {
    let config = CycleConfig { limit_refresh_period_micros: 0, ..GOOD };
    assert_eq!(refused(config), (Argument::LimitRefreshPeriod, crate::Value::Int(0)));
}

/// `RateLimiterConfigTest.builderRefreshPeriodNegative`.
#[test]
fn builder_refresh_period_negative() {
    let config = CycleConfig { limit_refresh_period_micros: -1, ..GOOD };
    assert_eq!(refused(config), (Argument::LimitRefreshPeriod, crate::Value::Int(-1)));
}

/// `RateLimiterConfigTest.builderLimitIsLessThanOne`.
#[test]
fn builder_limit_is_less_than_one() {
    let config = CycleConfig { limit_for_period: 0, ..GOOD };
    assert_eq!(refused(config), (Argument::LimitForPeriod, crate::Value::Int(0)));
}

// ---- This port's own tests. ----

/// The limit is a Java `int`; the run-time changes check what the
/// constructor checks and change nothing when refused.
#[test]
fn limits_beyond_a_java_int_and_bad_changes_are_refused() {
    let config = CycleConfig { limit_for_period: 1 << 31, ..GOOD };
    assert_eq!(refused(config), (Argument::LimitForPeriod, crate::Value::Int(1 << 31)));
    assert!(CycleLimiter::new(CycleConfig { limit_for_period: (1 << 31) - 1, ..GOOD }).is_ok());
    let mut limiter = CycleLimiter::new(GOOD).unwrap();
    assert_eq!(limiter.change_limit_for_period(0), Err(Error::invalid_int(Argument::LimitForPeriod, 0)));
    assert_eq!(limiter.change_timeout_duration(-5), Err(Error::invalid_int(Argument::TimeoutDuration, -5)));
    assert_eq!(*limiter.config(), GOOD);
}

/// A tiny deterministic generator (no dependency, same sequence everywhere).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A limiter with a random config and history, and a random time after it.
fn random_limiter(rng: &mut Lcg) -> (CycleLimiter, i64) {
    let limit = 1 + rng.below(4);
    let period = 1 + rng.below(7) as i64;
    let timeout = rng.below(4 * period as u64) as i64;
    let mut limiter = setup_with(period, timeout, limit);
    let mut now = 0;
    for _ in 0..rng.below(6) {
        now += rng.below(2 * period as u64) as i64;
        limiter.acquire_permission(rng.below(2 * limit + 2), now);
    }
    (limiter, now + rng.below(period as u64) as i64)
}

/// A refused request's retry-after is exact: the same request is still
/// refused a microsecond earlier and admitted then (nothing else
/// happening); a `NEVER` one is refused for many cycles.
#[test]
fn a_refusal_says_when_the_same_request_is_admitted() {
    let mut rng = Lcg(24);
    let (mut checked, mut never) = (0, 0);
    for _ in 0..20_000 {
        let (limiter, now) = random_limiter(&mut rng);
        let permits = rng.below(3 * limiter.config().limit_for_period + 2);
        let decision = limiter.peek(permits, now);
        if decision.allowed {
            continue;
        }
        let retry = decision.retry_after_micros;
        if retry == NEVER {
            never += 1;
            let period = limiter.config().limit_refresh_period_micros;
            for k in 0..40 {
                assert!(!limiter.peek(permits, now + k * period / 3).allowed, "{limiter:?} {permits} {now}");
            }
            continue;
        }
        checked += 1;
        assert!(retry > 0, "{limiter:?} {permits} at {now}");
        assert!(limiter.peek(permits, now + retry).allowed, "{limiter:?} {permits} at {now} + {retry}");
        assert!(!limiter.peek(permits, now + retry - 1).allowed, "{limiter:?} {permits} at {now} + {retry} - 1");
    }
    assert!(checked > 2_000 && never > 200, "{checked} {never}");
}

/// A decision's reset-after is the first moment the count is back to the
/// limit, nothing else happening.
#[test]
fn reset_after_is_when_all_permits_are_back() {
    let mut rng = Lcg(7);
    for _ in 0..5_000 {
        let (mut limiter, now) = random_limiter(&mut rng);
        let permits = rng.below(3);
        let decision = limiter.acquire_permission(permits, now);
        let limit = limiter.config().limit_for_period as i64;
        let reset = decision.reset_after_micros;
        assert_eq!(limiter.metrics(now + reset).available_permissions, limit, "{limiter:?} {now} {reset}");
        if reset > 0 {
            assert!(limiter.metrics(now + reset - 1).available_permissions < limit);
        }
        assert_eq!(decision.window_micros, limiter.config().limit_refresh_period_micros);
    }
}

/// The worst case of the module documentation: the permits whose waits
/// end within k consecutive cycles total at most (k + 1) × L plus the
/// excess of larger requests; and the bound is reached.
#[test]
fn no_k_cycles_see_more_than_k_plus_one_limits() {
    let mut rng = Lcg(2026);
    let mut reached = false;
    for _ in 0..300 {
        let limit = 1 + rng.below(5);
        let period = 1 + rng.below(9) as i64;
        let timeout = rng.below(5 * period as u64) as i64;
        let mut limiter = setup_with(period, timeout, limit);
        // Permits (and the excess over L) by the cycle their wait ends in.
        let mut acting = [(0u64, 0u64); 64];
        let mut now = 0;
        while now < 40 * period {
            let permits = rng.below(2 * limit + 1);
            if let Some(wait) = limiter.reserve_permission(permits, now) {
                let cycle = ((now + wait) / period) as usize;
                acting[cycle].0 += permits;
                acting[cycle].1 += permits.saturating_sub(limit);
            }
            now += rng.below(period as u64 + 1) as i64;
        }
        for start in 0..acting.len() {
            for k in 1..=acting.len() - start {
                let (total, excess) = acting[start..start + k].iter().fold((0, 0), |(t, e), &(p, x)| (t + p, e + x));
                assert!(total <= (k as u64 + 1) * limit + excess, "{k} cycles from {start}: {total}");
                reached |= k == 1 && excess == 0 && total > limit;
            }
        }
    }
    assert!(reached, "no cycle ever saw more than L permits: the +1 is not needed");
}

/// The drain takes what the current cycle has, whatever cycle the last
/// call was in. Resilience4j's code would take only the 3 permits the last
/// call left (cycle 0) and leave 7 of cycle 5.
#[test]
fn a_drain_in_a_later_cycle_takes_all_of_it() {
    let mut limiter = setup_with(CYCLE, 0, 10);
    assert!(limiter.acquire_permission(7, 0).allowed);
    assert_eq!(limiter.drain_permissions(5 * CYCLE), 10);
    assert_eq!(metrics(&limiter, 5 * CYCLE), (0, CYCLE));
    assert!(!acquire(&mut limiter, 5 * CYCLE));
}

/// A drain leaves permits reserved ahead reserved (Resilience4j's code
/// would ask for −1 permits and give the reserved one back).
#[test]
fn a_drain_keeps_reservations() {
    let mut limiter = setup(CYCLE);
    assert!(acquire(&mut limiter, 0));
    assert_eq!(limiter.acquire_permission(1, 0).wait_micros, CYCLE);
    assert_eq!(limiter.drain_permissions(0), 0);
    assert_eq!(metrics(&limiter, 0), (-1, 2 * CYCLE));
}

/// A refused request still saves the cycle refresh, as Resilience4j's
/// compare-and-set does: a limit lowered afterwards leaves the refreshed
/// count of the current cycle alone.
#[test]
fn a_refused_request_saves_the_refresh() {
    let mut limiter = setup_with(CYCLE, 0, 10);
    assert!(limiter.acquire_permission(7, 0).allowed);
    assert!(!limiter.acquire_permission(11, 5 * CYCLE).allowed);
    limiter.change_limit_for_period(2).unwrap();
    assert_eq!(metrics(&limiter, 5 * CYCLE), (10, 0));
    assert_eq!(metrics(&limiter, 6 * CYCLE), (2, 0));

    let mut untouched = setup_with(CYCLE, 0, 10);
    assert!(untouched.acquire_permission(7, 0).allowed);
    untouched.change_limit_for_period(2).unwrap();
    assert_eq!(metrics(&untouched, 5 * CYCLE), (2, 0));
}

/// A request larger than the limit waits over several cycles, and one that
/// no timeout can cover is refused for ever; permits beyond a Java `int`
/// do not wrap.
#[test]
fn requests_larger_than_a_cycle() {
    let mut limiter = setup_with(CYCLE, 3 * CYCLE, 2);
    let decision = limiter.acquire_permission(7, 0);
    assert!(decision.allowed);
    assert_eq!(decision.wait_micros, 3 * CYCLE);
    assert_eq!(decision.remaining, 0);
    assert_eq!(limiter.metrics(0).available_permissions, -5);

    let mut limiter = setup_with(CYCLE, 3 * CYCLE, 2);
    let decision = limiter.acquire_permission(9, 0);
    assert!(!decision.allowed);
    assert_eq!(decision.retry_after_micros, NEVER);
    assert_eq!(decision.remaining, 2);

    let mut limiter = setup_with(1, i64::MAX, 1);
    assert_eq!(limiter.reserve_permission(u64::MAX, 0), None);
    assert_eq!(limiter.reserve_permission(1 << 40, 0), Some((1 << 40) - 1));
    assert_eq!(limiter.metrics(0).available_permissions, 1 - (1 << 40));
}

/// A time before the last call's counts as the last call's.
#[test]
fn time_never_goes_back() {
    let mut limiter = setup(0);
    assert!(acquire(&mut limiter, 3 * CYCLE));
    assert!(!acquire(&mut limiter, 0));
    assert_eq!(limiter.metrics(0).cycle, 3);
}

/// A try takes only what the current cycle has, with no wait, whatever the
/// timeout; its refusal's retry-after is for a try too.
#[test]
fn a_try_never_reserves_ahead() {
    let mut limiter = setup(CYCLE);
    assert!(limiter.try_acquire_permission(1, 10).allowed);
    let refused = limiter.try_acquire_permission(1, 10);
    assert!(!refused.allowed);
    assert_eq!(refused.retry_after_micros, CYCLE - 10);
    assert_eq!(metrics(&limiter, 10), (0, CYCLE - 10));
    assert_eq!(limiter.acquire_permission(1, 10).wait_micros, CYCLE - 10);
    assert_eq!(limiter.try_acquire_permission(2, 10).retry_after_micros, NEVER);
}

/// A cost of 0 waits for the next cycle while the count is negative, as
/// Resilience4j's `acquirePermission(0)`; `peek` changes nothing.
#[test]
fn zero_permits_in_debt_wait_for_the_next_cycle() {
    let mut limiter = setup(CYCLE);
    assert_eq!(limiter.acquire_permission(0, 10).wait_micros, 0);
    assert!(acquire(&mut limiter, 10));
    assert_eq!(limiter.acquire_permission(1, 10).wait_micros, CYCLE - 10);
    let before = limiter;
    let zero = limiter.peek(0, 20);
    assert_eq!((zero.allowed, zero.wait_micros), (true, CYCLE - 20));
    assert_eq!(limiter, before);
    assert!(!limiter.try_acquire_permission(0, 20).allowed);
    assert_eq!(limiter.check(0, 20).wait_micros, CYCLE - 20);
}
