//! Guava's `RateLimiter` (`SmoothBursty`, `SmoothWarmingUp`) for
//! JavaScript: plain functions on a handle, which the `RateLimiter` class of
//! `node/lib/rate-limiter.js` wraps.
//!
//! Nothing here decides anything: each function converts its arguments,
//! calls [`ratekeeper::RateLimiter`] and converts the result. Waiting is the
//! JavaScript side's (a timer, never a blocked thread); on a `ManualClock`
//! the functions that reserve a wait advance the clock by it instead, as the
//! library's own blocking calls do.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{External, FromNapiValue, Unknown};
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::core::smooth::{DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use ratekeeper::{wait_as_seconds, AnyClock, RateLimiter, SmoothRateLimiter};

use crate::args::{self, Duration as GivenDuration, DurationKeys, Options};
use crate::clock;
use crate::error::{guarded, Failure};
use crate::fast_call::{self, TryNow};
use crate::js::Js;

/// One JavaScript `RateLimiter`.
pub struct Smooth {
    limiter: RateLimiter<AnyClock>,
}

impl TryNow for Smooth {
    #[inline]
    fn try_now(&self, permits: u32) -> Result<bool, Failure> {
        Ok(self.limiter.try_acquire(permits, Duration::ZERO)?)
    }
}

/// The handle JavaScript holds.
type Handle = External<Arc<Smooth>>;

fn smooth<'a>(env: &Env, handle: Unknown<'a>) -> Result<&'a Arc<Smooth>, Failure> {
    // SAFETY: a live value of the running call; napi-rs checks that it is
    // an `External` this module made for this type.
    match unsafe { <&Handle as FromNapiValue>::from_napi_value(env.raw(), handle.raw()) } {
        Ok(external) => Ok(external),
        Err(_) => Err(Failure::WrongType {
            argument: "handle",
            value: Js::new(env.raw(), handle.raw()),
            expected: "a RateLimiter handle",
        }),
    }
}

fn js(env: &Env, value: Unknown<'_>) -> Js {
    Js::new(env.raw(), value.raw())
}

const CREATE_OPTIONS: &[&str] = &["warmupMs", "warmupMicros", "coldFactor", "maxBurstSeconds", "clock"];
const WARMUP: DurationKeys = DurationKeys { ms: (c"warmupMs", "warmupMs"), micros: (c"warmupMicros", "warmupMicros") };
const TIMEOUT_OPTIONS: &[&str] = &["timeoutMs", "timeoutMicros"];

fn create(env: &Env, permits_per_second: Unknown<'_>, options: Unknown<'_>) -> Result<Smooth, Failure> {
    let rate = args::number(js(env, permits_per_second), "permitsPerSecond")?;
    let options = Options::read(js(env, options), CREATE_OPTIONS)?;
    let warmup_micros = match options.duration(&WARMUP)? {
        None => None,
        Some(GivenDuration::Micros(m)) => Some(m), // a negative one is the library's error
        Some(GivenDuration::Millis(value, ms)) => {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(Failure::OutOfRange {
                    argument: "warmupMs",
                    value,
                    requirement: "must be finite and not negative",
                });
            }
            Some(args::micros_from_millis(ms))
        }
    };
    let cold_factor = options.get(c"coldFactor")?.map(|v| args::number(v, "coldFactor")).transpose()?;
    let max_burst = options.get(c"maxBurstSeconds")?.map(|v| args::number(v, "maxBurstSeconds")).transpose()?;
    let core = match warmup_micros {
        // Guava's SmoothWarmingUp.
        Some(warmup) => {
            if max_burst.is_some() {
                return Err(Failure::InvalidOption(
                    "option maxBurstSeconds applies to a bursty limiter, not to a warming-up one (warmupMs/warmupMicros)"
                        .to_owned(),
                ));
            }
            SmoothRateLimiter::warming_up(rate, warmup, cold_factor.unwrap_or(DEFAULT_COLD_FACTOR))?
        }
        // Guava's SmoothBursty.
        None => {
            if cold_factor.is_some() {
                return Err(Failure::InvalidOption(
                    "option coldFactor applies to a warming-up limiter: pass warmupMs or warmupMicros too".to_owned(),
                ));
            }
            SmoothRateLimiter::bursty(rate, max_burst.unwrap_or(DEFAULT_MAX_BURST_SECONDS))?
        }
    };
    // The clock is read last: the limiter starts at the clock's "now".
    let clock = clock::from_options(&options)?;
    Ok(Smooth { limiter: RateLimiter::from_core(core, clock) })
}

/// Creates a limiter: Guava's `RateLimiter.create(permitsPerSecond)`, or
/// with `warmupMs`/`warmupMicros` the warming-up one.
#[napi(
    ts_args_type = "permitsPerSecond: number, options?: object",
    ts_return_type = "ExternalObject<'ratekeeper.RateLimiter'>"
)]
pub fn smooth_create(env: &Env, permits_per_second: Unknown<'_>, options: Unknown<'_>) -> napi::Result<Handle> {
    guarded(env, || Ok(External::new(Arc::new(create(env, permits_per_second, options)?))))
}

/// The limiter's synchronous `tryAcquire(permits = 1)` as a function of its
/// own: the hot path (see `fast_call`).
#[napi(
    ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>",
    ts_return_type = "(permits?: number) => boolean"
)]
pub fn smooth_try_now_function<'env>(env: &'env Env, handle: Unknown<'_>) -> napi::Result<Unknown<'env>> {
    guarded(env, || {
        let function = fast_call::bind_try_now(env.raw(), c"tryAcquire", Arc::clone(smooth(env, handle)?))?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), function) })
    })
}

/// Whether the limiter runs on a `ManualClock` (whose waits need no timer).
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>")]
pub fn smooth_is_manual(env: &Env, handle: Unknown<'_>) -> napi::Result<bool> {
    guarded(env, || Ok(smooth(env, handle)?.limiter.clock().is_manual()))
}

/// Takes `permits` now and returns the seconds the caller must wait (Guava's
/// `acquire` value). On a `ManualClock` the clock has advanced by the wait.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>, permits: number")]
pub fn smooth_acquire(env: &Env, handle: Unknown<'_>, permits: Unknown<'_>) -> napi::Result<f64> {
    guarded(env, || {
        let limiter = &smooth(env, handle)?.limiter;
        let permits = args::permits_or_one(js(env, permits))?;
        let wait = if limiter.clock().is_manual() {
            limiter.acquire(permits)? // sleeping on a manual clock advances it
        } else {
            limiter.reserve(permits)?
        };
        Ok(wait_as_seconds(wait))
    })
}

/// Guava's `tryAcquire(permits, timeout)` without the sleep: the seconds to
/// wait when the permits were taken, or -1 when they cannot be had within
/// the timeout (nothing taken). On a `ManualClock` the clock has advanced.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>, permits: number, options: object")]
pub fn smooth_try_acquire_within(
    env: &Env,
    handle: Unknown<'_>,
    permits: Unknown<'_>,
    options: Unknown<'_>,
) -> napi::Result<f64> {
    guarded(env, || {
        let limiter = &smooth(env, handle)?.limiter;
        let permits = args::permits_or_one(js(env, permits))?;
        let timeout =
            Duration::from_micros(args::timeout_micros(&Options::read(js(env, options), TIMEOUT_OPTIONS)?)? as u64);
        if limiter.clock().is_manual() {
            Ok(if limiter.try_acquire(permits, timeout)? { 0.0 } else { -1.0 })
        } else {
            Ok(limiter.try_reserve(permits, timeout)?.map_or(-1.0, wait_as_seconds))
        }
    })
}

/// Guava's `getRate()`.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>")]
pub fn smooth_rate(env: &Env, handle: Unknown<'_>) -> napi::Result<f64> {
    guarded(env, || Ok(smooth(env, handle)?.limiter.rate()))
}

/// Guava's `setRate(permitsPerSecond)`.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>, permitsPerSecond: number")]
pub fn smooth_set_rate(env: &Env, handle: Unknown<'_>, permits_per_second: Unknown<'_>) -> napi::Result<()> {
    guarded(env, || {
        let limiter = &smooth(env, handle)?.limiter;
        let rate = args::number(js(env, permits_per_second), "permitsPerSecond")?;
        Ok(limiter.set_rate(rate)?)
    })
}

/// Milliseconds until a request for `permits` would be granted, taking
/// nothing.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>, permits: number")]
pub fn smooth_time_until_available(env: &Env, handle: Unknown<'_>, permits: Unknown<'_>) -> napi::Result<f64> {
    guarded(env, || {
        let limiter = &smooth(env, handle)?.limiter;
        let wait = limiter.time_until_available(args::permits_or_one(js(env, permits))?)?;
        Ok(wait.as_micros() as f64 / 1e3)
    })
}

/// Whether `tryAcquire(permits, options)` would succeed now, taking nothing.
#[napi(ts_args_type = "handle: ExternalObject<'ratekeeper.RateLimiter'>, permits: number, options?: object")]
pub fn smooth_can_acquire(
    env: &Env,
    handle: Unknown<'_>,
    permits: Unknown<'_>,
    options: Unknown<'_>,
) -> napi::Result<bool> {
    guarded(env, || {
        let limiter = &smooth(env, handle)?.limiter;
        let permits = args::permits_or_one(js(env, permits))?;
        let timeout =
            Duration::from_micros(args::timeout_micros(&Options::read(js(env, options), TIMEOUT_OPTIONS)?)? as u64);
        Ok(limiter.can_acquire(permits, timeout)?)
    })
}
