//! `ManualClock` for JavaScript, and the clock option every limiter takes.
//!
//! A limiter runs on the library's monotonic clock unless its `clock` option is
//! a `ManualClock`; then it reads that clock, and its waits advance it
//! instead of sleeping (so `await limiter.acquire()` resolves at once with
//! the wait it would have slept), as Guava's fake stopwatch does in Guava's
//! own tests.

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{validate_type_tag, BigInt, TypeTag, Unknown};
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, Argument};

use crate::args;
use crate::error::{guarded, Failure};
use crate::js::{Js, Kind};

/// A clock that moves only when told to, for deterministic tests. Waiting
/// on it (a limiter's `acquire` or `tryAcquire` with a timeout) advances it
/// by the wait. It reads 0 when created and counts whole microseconds.
#[derive(Debug)]
#[napi]
pub struct ManualClock {
    clock: Arc<ratekeeper::ManualClock>,
}

#[napi]
impl ManualClock {
    /// A clock reading 0.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ManualClock { clock: Arc::new(ratekeeper::ManualClock::new()) }
    }

    /// Moves the clock forward by `ms` milliseconds (rounded to the nearest
    /// microsecond). `ms` is a duration like any other: finite, not
    /// negative (the clock never goes back) and under 2^63 microseconds.
    #[napi(ts_args_type = "ms: number")]
    pub fn advance(&self, env: &Env, ms: Unknown<'_>) -> napi::Result<()> {
        guarded(env, || {
            let value = Js::new(env.raw(), ms.raw());
            let x = args::number(value, "ms")?;
            self.clock.advance_micros(args::millis(Argument::AdvanceSeconds, "ms", value, x)?);
            Ok(())
        })
    }

    /// Moves the clock forward by exactly `micros` microseconds: an integer
    /// number or a bigint, not negative. The clock saturates at 2^63 − 1.
    #[napi(ts_args_type = "micros: number | bigint")]
    pub fn advance_micros(&self, env: &Env, micros: Unknown<'_>) -> napi::Result<()> {
        guarded(env, || {
            let value = Js::new(env.raw(), micros.raw());
            let m = args::micros(value, "micros")?;
            if m < 0 {
                return Err(Failure::OutOfRange { argument: "micros", value, requirement: "must not be negative" });
            }
            self.clock.advance_micros(m);
            Ok(())
        })
    }

    /// The time since the clock was created, in milliseconds.
    #[napi(getter)]
    pub fn now(&self) -> f64 {
        self.micros() as f64 / 1e3
    }

    /// The time since the clock was created, in whole microseconds (exact).
    #[napi(getter)]
    pub fn now_micros(&self) -> BigInt {
        BigInt::from(self.micros())
    }
}

impl ManualClock {
    fn micros(&self) -> i64 {
        i64::try_from(self.clock.now().as_micros()).unwrap_or(i64::MAX)
    }
}

/// The clock of a limiter: the monotonic one when `value` is `undefined`,
/// else it must be a `ManualClock`.
pub(crate) fn from_option(value: Js) -> Result<AnyClock, Failure> {
    if value.is_undefined() {
        return Ok(AnyClock::default());
    }
    manual_clock(value).map(|manual| AnyClock::from(Arc::clone(&manual.clock))).ok_or(Failure::WrongType {
        argument: "clock",
        value,
        expected: "a ManualClock",
    })
}

/// The `ManualClock` that `value` is, if it is one. (napi-rs's own
/// conversion to `&ManualClock` works only on a `#[napi]` function's
/// arguments; this does its checks — an object wrapping native data, with
/// `ManualClock`'s type tag — and keeps the reference no longer than the
/// caller's `Arc::clone`.)
fn manual_clock(value: Js) -> Option<&'static ManualClock> {
    if value.kind() != Kind::Object {
        return None;
    }
    let mut wrapped = ptr::null_mut();
    // SAFETY: a live object of the running call.
    if unsafe { sys::napi_unwrap(value.env, value.raw, &mut wrapped) } != sys::Status::napi_ok || wrapped.is_null() {
        return None;
    }
    // SAFETY: as above; the tag proves `wrapped` is a `ManualClock` that
    // napi-rs wrapped (and that lives as long as the object does).
    unsafe { validate_type_tag(value.env, value.raw, &<ManualClock as TypeTag>::type_tag(), "ManualClock") }.ok()?;
    // SAFETY: checked just above.
    Some(unsafe { &*wrapped.cast::<ManualClock>() })
}
