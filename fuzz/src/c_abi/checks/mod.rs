//! The header's conventions, checked after every call: the status and
//! the last error ([`World::status`]), out-parameters written only on
//! success ([`UNWRITTEN`]), a failed call changing nothing
//! ([`World::unchanged`]), decisions within their contract, and blocking
//! calls moving a manual clock by the wait they report. One submodule per
//! kind of handle, as `bindings/c/src` has, makes each call and checks
//! what it answered.

use ratekeeper_c::decision::*;
use ratekeeper_c::limiter::rk_algorithm_name;
use ratekeeper_c::markers::rk_color_name;
use ratekeeper_c::spec::*;
use ratekeeper_c::status::{rk_status, rk_status_message};
use ratekeeper_c::{rk_last_error_argument, rk_last_error_message, rk_version};
use ratekeeper_core::Decision;

use super::model::{c_str, World};
use crate::contract::{check_fields, Promises};

mod clock;
mod composite;
mod concurrency;
mod decision;
mod limiter;
mod markers;
mod rate_limiter;

/// A decision no call would write: what an out-parameter holds before the
/// call, to see whether a failed call wrote it.
const UNWRITTEN: rk_decision = rk_decision {
    allowed: true,
    limit: 0xDEAD,
    remaining: 0xBEEF,
    retry_after_micros: -7,
    reset_after_micros: -7,
    wait_micros: -7,
    window_micros: -7,
};

impl World {
    /// The checks every call's status gets. `required` lists the pointers
    /// the header requires and whether each was NULL; `null_first` says
    /// that the function checks them before anything else. Returns whether
    /// the call succeeded.
    fn status(&mut self, function: &str, status: rk_status, required: &[(&str, bool)], null_first: bool) -> bool {
        assert_ne!(status, rk_status::RK_PANIC, "{function} panicked: {}", c_str(rk_last_error_message()).unwrap());
        assert_ne!(status, rk_status::RK_OTHER_ERROR, "{function}: an error about no argument");
        let nulls: Vec<&str> = required.iter().filter(|(_, null)| *null).map(|(name, _)| *name).collect();
        if null_first && !nulls.is_empty() {
            assert_eq!(status, rk_status::RK_NULL_POINTER, "{function} with {nulls:?} NULL");
        }
        let message = c_str(rk_last_error_message()).expect("rk_last_error_message() is never NULL");
        let argument = c_str(rk_last_error_argument());
        if status == rk_status::RK_OK {
            assert_eq!(
                (&message, &argument),
                (&self.last_error.0, &self.last_error.1),
                "{function} succeeded and changed the last error"
            );
            return true;
        }
        assert!(message.starts_with(&format!("{function}: ")), "{function} failed with the message {message:?}");
        let argument = argument.unwrap_or_else(|| panic!("{function} failed ({status:?}) naming no argument"));
        assert!(message.contains(&argument), "{function}: the message {message:?} does not name {argument:?}");
        if status == rk_status::RK_NULL_POINTER {
            assert!(nulls.contains(&argument.as_str()), "{function}: {argument} named NULL, but {nulls:?} were");
        }
        self.last_error = (message, Some(argument));
        false
    }

    /// The argument the last failure named.
    fn argument(&self) -> &str {
        self.last_error.1.as_deref().unwrap_or("")
    }

    /// Checks that a failed call on a limiter changed nothing: on a manual
    /// clock, which stands still through it, every look gives the same.
    fn unchanged(&self, clock: Option<u64>, before: Option<Vec<String>>, after: impl Fn() -> Vec<String>) {
        if let (Some(before), Some(_)) = (before, self.clock_ptr(clock)) {
            assert_eq!(before, after(), "a failed call changed the handle");
        }
    }

    /// A cost's status: a negative one is invalid, any other accepted.
    fn cost_status(&self, s: rk_status, cost: i64, ok: bool) {
        if s == rk_status::RK_NULL_POINTER {
            return;
        }
        assert_eq!(ok, cost >= 0, "cost {cost}: {s:?}");
        if !ok {
            assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "cost"));
        }
    }

    /// A decision's fields (the token bucket's cost of 0 may be refused,
    /// as Go's `AllowN(t, 0)` in debt).
    fn decision(&mut self, d: &rk_decision, cost: i64, algorithm: u32) {
        let promises = Promises { zero_may_be_refused: algorithm == RK_ALGORITHM_TOKEN_BUCKET, ..Promises::default() };
        check_fields(&Decision::from(d), cost as u64, promises);
        self.latest = Some(*d);
    }

    /// A blocking call on a manual clock moved it by exactly what it says
    /// it waited.
    fn waited(&self, clock: Option<u64>, before: Option<i64>, wait: i64, function: &str) {
        if let (Some(before), Some(after)) = (before, self.now(clock)) {
            if after < i64::MAX {
                assert_eq!(
                    after - before,
                    wait,
                    "{function} moved the manual clock by {} and says {wait}",
                    after - before
                );
            }
        }
    }
}

/// The static strings: every status has a message, and only the known
/// algorithms and colours have names.
pub(crate) fn statics(status: u32, algorithm: u32, color: u32) {
    let m = c_str(rk_status_message(status)).expect("rk_status_message is never NULL");
    assert_eq!(
        m == "unknown status",
        status > ratekeeper_c::status::rk_status::RK_REDIS_TLS_ERROR as u32,
        "rk_status_message({status}) = {m:?}"
    );
    let name = c_str(rk_algorithm_name(algorithm));
    assert_eq!(name.is_some(), (1..=8).contains(&algorithm), "rk_algorithm_name({algorithm})");
    let name = c_str(rk_color_name(color));
    assert_eq!(name.is_some(), color <= 2, "rk_color_name({color})");
    assert!(!c_str(rk_version()).unwrap().is_empty());
}
