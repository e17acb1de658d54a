//! [`CycleLimiter`]: Resilience4j's `AtomicRateLimiter`, the rate limiter
//! that hands out `limit_for_period` permits per `limit_refresh_period`
//! cycle and lets a caller reserve permits of future cycles.
//!
//! Time is cut into cycles of `limit_refresh_period` counted from the
//! limiter's creation (cycle = now ÷ period). Each cycle brings
//! `limit_for_period` permits; permits a cycle leaves unused carry over, but
//! the count never climbs above `limit_for_period`. A request that the
//! permits available now cannot serve waits for the start of the first
//! cycle by which enough will have come — a request for more than
//! `limit_for_period` permits spreads over several cycles — and is
//! *reserved* (its permits taken, the available count going negative if
//! need be) only when that wait is at most the timeout. Otherwise it is
//! refused and takes nothing.
//!
//! Every step is `AtomicRateLimiter`'s (`calculateNextState`,
//! `nanosToWaitForPermission`, `reservePermissions`,
//! `changeLimitForPeriod`, `changeTimeoutDuration`), including two that
//! surprise: every call saves the cycle refresh it computed, even a refused
//! one, so a later [`change_limit_for_period`](CycleLimiter::change_limit_for_period)
//! caps the carried-over permits at the limit of the cycle they were
//! counted in; and a changed limit leaves the current cycle's count as it
//! is (a lower limit takes effect at the next cycle). Resilience4j's own
//! tests are translated in `resilience4j_tests.rs`.
//!
//! The differences, all deliberate:
//!
//! * time is whole microseconds passed in (Resilience4j reads
//!   `System.nanoTime()` in nanoseconds), so the shortest cycle is 1 µs
//!   where Resilience4j's is 1 ns (its default, 500 ns, has no equivalent:
//!   [`CycleConfig`] has no default);
//! * a time earlier than the last call's counts as the last call's (the
//!   core never mints permits from a clock going back);
//! * the permit counts are 128-bit and the waits saturate at
//!   [`NEVER`]: Resilience4j's `int` count wraps after about two billion
//!   permits reserved ahead, and its wait overflows for cycles of
//!   centuries; here permits are any `u64` (Resilience4j's are a Java
//!   `int`), 0 included, which asks without taking;
//! * [`drain_permissions`](CycleLimiter::drain_permissions) does what
//!   Resilience4j documents ("drains all the permits left in the current
//!   period"): the count of the current cycle drops to 0 unless it is
//!   already below. Resilience4j's code asks for as many permits as the
//!   count *saved by the last call* holds, so a drain in a later cycle than
//!   the last call leaves the permits that cycle brought, and a drain while
//!   permits are reserved ahead (a negative count) gives them back;
//! * the waiting threads of `getNumberOfWaitingThreads` are counted by the
//!   std layer, which is the one that waits.
//!
//! # Worst case
//!
//! With a fixed `limit_for_period` L, the permits whose waits end (the
//! moment their caller may act) within any k consecutive cycles total at
//! most (k + 1) × L, plus the part above L of requests larger than L: the
//! count starts a cycle at L at most, and a reservation ending in a cycle
//! was counted against the permits that cycle and the ones before it
//! bring. The extra L is a reservation made in the cycle before, waiting
//! for the first permits of the first of the k cycles, meeting permits
//! taken at once later in it: L = 3, one permit taken in cycle 0, a
//! request for 3 reserved in cycle 0 waits for cycle 1, which then admits
//! 2 more at once: 5 in cycle 1.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};

/// The largest `limit_for_period`: Resilience4j's is a Java `int`.
pub const MAX_LIMIT_FOR_PERIOD: u64 = i32::MAX as u64;

/// A [`CycleLimiter`]'s parameters, as Resilience4j's `RateLimiterConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CycleConfig {
    /// Permits each cycle brings (`limitForPeriod`): 1 to
    /// [`MAX_LIMIT_FOR_PERIOD`].
    pub limit_for_period: u64,
    /// A cycle's length in microseconds (`limitRefreshPeriod`): at least 1.
    pub limit_refresh_period_micros: i64,
    /// The longest wait a request may be given (`timeoutDuration`), in
    /// microseconds: at least 0; 0 refuses whatever the current cycle cannot
    /// serve.
    pub timeout_micros: i64,
}

impl CycleConfig {
    /// Checks every parameter, as `RateLimiterConfig.Builder` does; the
    /// first bad one is the error.
    pub fn validate(&self) -> Result<(), Error> {
        check_limit_for_period(self.limit_for_period)?;
        if self.limit_refresh_period_micros < 1 {
            return Err(Error::invalid_int(Argument::LimitRefreshPeriod, self.limit_refresh_period_micros));
        }
        check_timeout(self.timeout_micros)
    }
}

fn check_limit_for_period(limit: u64) -> Result<(), Error> {
    if (1..=MAX_LIMIT_FOR_PERIOD).contains(&limit) {
        Ok(())
    } else {
        Err(Error::invalid_uint(Argument::LimitForPeriod, limit))
    }
}

fn check_timeout(timeout_micros: i64) -> Result<(), Error> {
    if timeout_micros < 0 {
        Err(Error::invalid_int(Argument::TimeoutDuration, timeout_micros))
    } else {
        Ok(())
    }
}

/// What the limiter would answer a request for one permit now, without
/// taking it (Resilience4j's `AtomicRateLimiterMetrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CycleMetrics {
    /// Permits available in the current cycle; negative when permits of
    /// later cycles are reserved (`getAvailablePermissions`).
    pub available_permissions: i64,
    /// How long a request for one permit would wait (`getNanosToWait`, in
    /// microseconds), whatever the timeout.
    pub micros_to_wait: i64,
    /// The current cycle's number, counted from the limiter's creation
    /// (`getCycle`).
    pub cycle: i64,
}

/// The state after a cycle refresh and one request's arithmetic
/// (Resilience4j's `State`).
#[derive(Debug, Clone, Copy)]
struct Next {
    cycle: i64,
    /// Permits after the request (reserved or not).
    permissions: i128,
    /// Permits available before the request.
    available: i128,
    /// The request's wait in microseconds, unbounded.
    wait: i128,
    reserved: bool,
}

/// Resilience4j's `AtomicRateLimiter` as a state machine; see the
/// [module documentation](self).
///
/// ```
/// use ratekeeper_core::cycle::{CycleConfig, CycleLimiter};
///
/// // 3 permits per 10 ms; a caller may wait up to 12 ms.
/// let config = CycleConfig { limit_for_period: 3, limit_refresh_period_micros: 10_000, timeout_micros: 12_000 };
/// let mut limiter = CycleLimiter::new(config).unwrap();
/// for _ in 0..3 {
///     assert_eq!(limiter.reserve_permission(1, 1_000), Some(0));
/// }
/// // The next three wait for the next cycle, at 10 ms.
/// assert_eq!(limiter.reserve_permission(1, 1_000), Some(9_000));
/// assert_eq!(limiter.acquire_permission(2, 1_000).wait_micros, 9_000);
/// // The one after would wait for the cycle at 20 ms: longer than 12 ms.
/// assert_eq!(limiter.reserve_permission(1, 1_000), None);
/// assert_eq!(limiter.metrics(1_000).available_permissions, -3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CycleLimiter {
    config: CycleConfig,
    /// The cycle of the last refresh (`activeCycle`).
    active_cycle: i64,
    /// Permits left after the last call (`activePermissions`); negative
    /// when permits of later cycles are reserved.
    active_permissions: i128,
    /// The latest time seen: an earlier one counts as this one.
    latest_micros: i64,
}

impl CycleLimiter {
    /// A limiter in cycle 0 with `limit_for_period` permits available.
    pub fn new(config: CycleConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(CycleLimiter {
            config,
            active_cycle: 0,
            active_permissions: i128::from(config.limit_for_period),
            latest_micros: 0,
        })
    }

    /// The parameters in force (Resilience4j's `getRateLimiterConfig`).
    pub fn config(&self) -> &CycleConfig {
        &self.config
    }

    /// Sets the permits each cycle brings from the next calculation on
    /// (`changeLimitForPeriod`). The current cycle keeps its count: permits
    /// already counted (or reserved) stay, and a lower limit caps the
    /// count from the next cycle on. On an invalid value nothing changes.
    pub fn change_limit_for_period(&mut self, limit_for_period: u64) -> Result<(), Error> {
        check_limit_for_period(limit_for_period)?;
        self.config.limit_for_period = limit_for_period;
        Ok(())
    }

    /// Sets the longest wait from the next request on
    /// (`changeTimeoutDuration`); reservations already made stand.
    pub fn change_timeout_duration(&mut self, timeout_micros: i64) -> Result<(), Error> {
        check_timeout(timeout_micros)?;
        self.config.timeout_micros = timeout_micros;
        Ok(())
    }

    fn time(&self, now_micros: i64) -> i64 {
        now_micros.max(self.latest_micros)
    }

    fn period(&self) -> i128 {
        i128::from(self.config.limit_refresh_period_micros)
    }

    fn limit(&self) -> i128 {
        i128::from(self.config.limit_for_period)
    }

    /// `calculateNextState`: the cycle refresh, the wait for `permits`, and
    /// the reservation when the wait is at most `timeout` (`None`: never,
    /// as the metrics' `-1`).
    fn next(&self, permits: u64, timeout: Option<i64>, now: i64) -> Next {
        let limit = self.limit();
        let cycle = now / self.config.limit_refresh_period_micros;
        let mut available = self.active_permissions;
        if cycle != self.active_cycle {
            // Time never goes back here (`time`), so the cycle only moves on.
            let elapsed = i128::from(cycle) - i128::from(self.active_cycle);
            available = (available + elapsed * limit).min(limit);
        }
        let permits = i128::from(permits);
        let wait = self.wait_for(permits, available, cycle, now);
        let reserved = timeout.is_some_and(|t| i128::from(t) >= wait);
        let permissions = if reserved { available - permits } else { available };
        Next { cycle, permissions, available, wait, reserved }
    }

    /// `nanosToWaitForPermission`: 0 when `available` covers `permits`,
    /// else the time to the start of the first cycle by which enough
    /// permits will have come (counting a full `limit_for_period` per
    /// cycle, as Resilience4j does).
    fn wait_for(&self, permits: i128, available: i128, cycle: i64, now: i64) -> i128 {
        if available >= permits {
            return 0;
        }
        let (period, limit) = (self.period(), self.limit());
        let to_next_cycle = (i128::from(cycle) + 1) * period - i128::from(now);
        let at_next_cycle = available + limit;
        // Resilience4j's divCeil: (x + y − 1) / y, truncating; x ≥ 1 − y here.
        let full_cycles = (permits - at_next_cycle + limit - 1) / limit;
        full_cycles * period + to_next_cycle
    }

    fn save(&mut self, next: &Next, now: i64) {
        self.active_cycle = next.cycle;
        self.active_permissions = next.permissions;
        self.latest_micros = now;
    }

    /// Asks for `permits` at `now_micros` with the configured timeout
    /// (Resilience4j's `acquirePermission(permits)` without the waiting,
    /// which is the caller's): admitted with `wait_micros` when the permits
    /// are (or will be, within the timeout) there — they are then taken —
    /// or refused, taking nothing, with the `retry_after` after which the
    /// same request would be admitted ([`NEVER`] when it never would: more
    /// permits than the timeout lets the cycles bring).
    pub fn acquire_permission(&mut self, permits: u64, now_micros: i64) -> Decision {
        self.acquire_within(permits, self.config.timeout_micros, now_micros)
    }

    /// [`acquire_permission`](Self::acquire_permission) with a timeout of 0
    /// for this one request, whatever the configured one: admitted only
    /// when the current cycle has the permits, never with a wait. Not a
    /// Resilience4j method (its callers would build a second limiter with a
    /// zero timeout); the state change is the same `calculateNextState`.
    pub fn try_acquire_permission(&mut self, permits: u64, now_micros: i64) -> Decision {
        self.acquire_within(permits, 0, now_micros)
    }

    fn acquire_within(&mut self, permits: u64, timeout_micros: i64, now_micros: i64) -> Decision {
        let now = self.time(now_micros);
        let next = self.next(permits, Some(timeout_micros), now);
        self.save(&next, now);
        self.decision(permits, timeout_micros, &next, now)
    }

    /// Resilience4j's `reservePermission(permits)`: the same state change
    /// as [`acquire_permission`](Self::acquire_permission), answered as the
    /// wait in microseconds (`Some(0)`: go ahead now) or `None` when the
    /// wait would exceed the timeout (Resilience4j's `-1`).
    pub fn reserve_permission(&mut self, permits: u64, now_micros: i64) -> Option<i64> {
        let now = self.time(now_micros);
        let next = self.next(permits, Some(self.config.timeout_micros), now);
        self.save(&next, now);
        next.reserved.then(|| saturate(next.wait))
    }

    /// Takes every permit left in the current cycle at `now_micros`, at
    /// once (Resilience4j's `drainPermissions`, as documented: see the
    /// module documentation). Returns how many it took; permits reserved
    /// ahead (a negative count) stay reserved.
    pub fn drain_permissions(&mut self, now_micros: i64) -> u64 {
        let now = self.time(now_micros);
        let next = self.next(0, None, now);
        let drained = next.available.max(0);
        self.save(&Next { permissions: next.available - drained, ..next }, now);
        u64::try_from(drained).unwrap_or(u64::MAX)
    }

    /// What a request for one permit would get now, changing nothing
    /// (Resilience4j's metrics: `calculateNextState(1, -1, state)`).
    pub fn metrics(&self, now_micros: i64) -> CycleMetrics {
        let now = self.time(now_micros);
        let next = self.next(1, None, now);
        CycleMetrics {
            available_permissions: saturate(next.available),
            micros_to_wait: saturate(next.wait),
            cycle: next.cycle,
        }
    }

    /// The answer to a request of `permits` whose arithmetic gave `next`.
    fn decision(&self, permits: u64, timeout_micros: i64, next: &Next, now: i64) -> Decision {
        let limit = self.config.limit_for_period;
        let window = self.config.limit_refresh_period_micros;
        let remaining = u64::try_from(next.permissions.max(0)).unwrap_or(u64::MAX);
        let reset_after = self.reset_after(next.cycle, next.permissions, now);
        if next.reserved {
            let mut decision = Decision::allowed(limit, remaining, reset_after, window);
            decision.wait_micros = saturate(next.wait);
            decision
        } else {
            let retry_after = self.retry_after(i128::from(permits), timeout_micros, next, now);
            Decision::refused(limit, remaining, retry_after, reset_after, window)
        }
    }

    /// How long until `permissions` in `cycle` have become a full
    /// `limit_for_period` again if nothing is taken: the start of the first
    /// cycle that brings the count back to the limit.
    fn reset_after(&self, cycle: i64, permissions: i128, now: i64) -> i64 {
        let limit = self.limit();
        if permissions >= limit {
            return 0;
        }
        let cycles = (limit - permissions + limit - 1) / limit;
        saturate((i128::from(cycle) + cycles) * self.period() - i128::from(now))
    }

    /// For a refused request: how long until the same request, with nothing
    /// else happening, would get a wait within the timeout.
    ///
    /// Within the current cycle the wait shrinks as time passes, so it
    /// comes within the timeout `wait − timeout` later if that is still in
    /// this cycle. Later cycles each start from the count their refresh
    /// gives (capped at the limit), and within each the wait again shrinks
    /// to its least at the cycle's last microsecond: the answer is in the
    /// first later cycle whose count makes that least wait fit.
    fn retry_after(&self, permits: i128, timeout_micros: i64, next: &Next, now: i64) -> i64 {
        let (period, limit) = (self.period(), self.limit());
        let timeout = i128::from(timeout_micros);
        let now = i128::from(now);
        let cycle = i128::from(next.cycle);
        let in_this_cycle = next.wait - timeout;
        if now + in_this_cycle < (cycle + 1) * period {
            return saturate(in_this_cycle);
        }
        // In a later cycle with `count` permits, the least wait is
        // `1 + full_cycles(count) × period` (0 if count ≥ permits), which
        // fits the timeout when full_cycles ≤ most_full_cycles, that is
        // when count ≥ permits − (most_full_cycles + 1) × limit.
        let most_full_cycles = if timeout == 0 { -1 } else { (timeout - 1) / period };
        let needed = permits - (most_full_cycles + 1) * limit;
        if needed > limit {
            return NEVER;
        }
        let cycles_on = ((needed - next.available + limit - 1) / limit).max(1);
        let target = cycle + cycles_on;
        let count = (next.available + cycles_on * limit).min(limit);
        let at = if count >= permits {
            target * period
        } else {
            let full_cycles = (permits - count - 1) / limit;
            (target * period).max((target + 1 + full_cycles) * period - timeout)
        };
        saturate(at - now)
    }
}

/// An `i128` count or duration as an `i64`, saturating ([`NEVER`] for a
/// duration too long to say).
fn saturate(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { NEVER })
}

/// A cost is a number of permits; a decision is
/// [`acquire_permission`](CycleLimiter::acquire_permission)'s, so an
/// admitted request may come with a wait. Like the token bucket in debt, a
/// cost of 0 is not always admitted: while permits are reserved ahead (a
/// negative count) it waits for the next cycle, as Resilience4j's
/// `acquirePermission(0)` does, and is refused when the timeout is shorter.
impl Admission for CycleLimiter {
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        self.acquire_permission(cost, now_micros)
    }

    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        let mut copy = *self;
        copy.acquire_permission(cost, now_micros)
    }

    /// Gives nothing back (a documented no-op), as Resilience4j's
    /// `RateLimiter` has no refund: its permits may be reserved in cycles
    /// ahead, and a refund cannot tell which cycle's permits it returns, so
    /// adding them to the count could let a later request into a cycle
    /// already full. Keeping the state never over-admits.
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let _ = (cost, now_micros);
    }
}

#[cfg(test)]
mod resilience4j_tests;
