//! The contract every admission-style algorithm keeps, checked on every
//! call a target makes (see `ratekeeper_core::Admission` and
//! `ratekeeper_core::Decision`).
//!
//! * `peek` predicts `check` exactly, and changes nothing;
//! * a decision's fields are in range: no negative duration, never more
//!   remaining than the limit, no retry-after when admitted, no wait when
//!   refused; a cost of 0 is always admitted; a cost above the limit is
//!   refused with a retry-after of `NEVER`;
//! * a refusal consumes nothing: every later answer is the one the state
//!   before the refusal would have given (and, for the fixed-size states,
//!   the state is bit for bit the same);
//! * when the caller waits as told (the call did not go back in time),
//!   the same request is then admitted — and, for the algorithms whose
//!   arithmetic is exact, not a microsecond earlier; and after
//!   `reset_after` the limiter is whole again.

use core::fmt::Debug;

use ratekeeper_core::{Admission, Decision, NEVER};

use crate::values::Timeline;

/// Which of the optional clauses an algorithm promises.
#[derive(Debug, Clone, Copy, Default)]
pub struct Promises {
    /// A retry-after is the shortest wait (not just a long enough one).
    pub exact_retry: bool,
    /// After `reset_after_micros` the limiter is whole (`remaining ==
    /// limit`).
    pub whole_after_reset: bool,
    /// A refusal leaves the state bit for bit as it was.
    pub refusal_is_identity: bool,
    /// A cost of 0 may be refused (the token bucket in debt, as Go's
    /// `AllowN(t, 0)`); the target checks when.
    pub zero_may_be_refused: bool,
    /// The latest time (µs) at which the algorithm's time still moves, if
    /// it stops before `i64::MAX`: the token bucket counts nanoseconds, so
    /// its time saturates after `i64::MAX / 1000` µs (292 years), and the
    /// retry-after and reset-after clauses hold only before then.
    pub horizon: Option<i64>,
}

/// Checks a decision's fields on their own.
pub fn check_fields(d: &Decision, cost: u64, promises: Promises) {
    assert!(d.retry_after_micros >= 0, "negative retry-after: {d:?}");
    assert!(d.reset_after_micros >= 0, "negative reset-after: {d:?}");
    assert!(d.wait_micros >= 0, "negative wait: {d:?}");
    assert!(d.window_micros >= 0, "negative window: {d:?}");
    assert!(d.remaining <= d.limit, "more remaining than the limit: {d:?}");
    if d.allowed {
        assert_eq!(d.retry_after_micros, 0, "an admitted request with a retry-after: {d:?}");
    } else {
        assert!(cost > 0 || promises.zero_may_be_refused, "a cost of 0 refused: {d:?}");
        assert_eq!(d.wait_micros, 0, "a refused request with a wait: {d:?}");
        if cost > d.limit {
            assert_eq!(d.retry_after_micros, NEVER, "cost {cost} above the limit, yet a finite retry-after: {d:?}");
        }
    }
}

/// `t + d`, if it is a time (no overflow).
fn later(t: i64, d: i64) -> Option<i64> {
    t.checked_add(d)
}

/// `t + d`, if it is a time before the algorithm's horizon.
fn within_horizon(t: i64, d: i64, promises: Promises) -> Option<i64> {
    later(t, d).filter(|&t| t <= promises.horizon.unwrap_or(i64::MAX))
}

/// One `check` of `cost` at `time.now`, with the contract checked around
/// it. Returns the decision.
pub fn admit<A: Admission + Clone + Debug>(
    limiter: &mut A,
    cost: u64,
    time: &Timeline,
    promises: Promises,
) -> Decision {
    let now = time.now;
    let peeked = limiter.peek(cost, now);
    let before = limiter.clone();
    let d = limiter.check(cost, now);
    assert_eq!(d, peeked, "peek and check disagree at {now} for cost {cost}; before: {before:?}");
    check_fields(&d, cost, promises);
    if !d.allowed {
        // Nothing observable changed: probe the answers the state before
        // would have given, at the latest time and after.
        let mut probes = vec![time.latest, time.latest.saturating_add(1)];
        if let Some(t) = later(time.latest, d.retry_after_micros) {
            probes.push(t);
        }
        for &t in &probes {
            for c in [cost, 1, d.limit] {
                assert_eq!(
                    limiter.peek(c, t),
                    before.peek(c, t),
                    "a refusal at {now} changed the answer for cost {c} at {t}: {before:?} -> {limiter:?}"
                );
            }
        }
    }
    if time.forward {
        check_waits(limiter, &before, &d, cost, now, promises);
    }
    d
}

/// [`admit`], and on a refusal the state must be bit for bit the same.
pub fn admit_strict<A: Admission + Clone + Debug + PartialEq>(
    limiter: &mut A,
    cost: u64,
    time: &Timeline,
    promises: Promises,
) -> Decision {
    let before = limiter.clone();
    let d = admit(limiter, cost, time, promises);
    if !d.allowed || promises.refusal_is_identity && cost == 0 {
        assert_eq!(*limiter, before, "a refusal (or a look of cost 0) changed the state at {}", time.now);
    }
    d
}

/// The retry-after and reset-after clauses, for a call that did not go
/// back in time.
fn check_waits<A: Admission + Debug>(after: &A, before: &A, d: &Decision, cost: u64, now: i64, promises: Promises) {
    if !d.allowed && d.retry_after_micros != NEVER {
        if let Some(t) = within_horizon(now, d.retry_after_micros, promises) {
            assert!(
                after.peek(cost, t).allowed,
                "refused at {now} with a retry-after of {} µs, still refused then: {after:?}",
                d.retry_after_micros
            );
            if promises.exact_retry && d.retry_after_micros > 0 {
                assert!(
                    !after.peek(cost, t - 1).allowed,
                    "refused at {now} with a retry-after of {} µs, admitted a microsecond earlier: {after:?}",
                    d.retry_after_micros
                );
            }
        }
    }
    if promises.whole_after_reset && d.reset_after_micros != NEVER {
        if let Some(t) = within_horizon(now, d.reset_after_micros, promises) {
            let whole = after.peek(0, t);
            assert_eq!(
                whole.remaining, whole.limit,
                "not whole {} µs after {now}, when the decision said it would be: {after:?} (before: {before:?})",
                d.reset_after_micros
            );
        }
    }
}
