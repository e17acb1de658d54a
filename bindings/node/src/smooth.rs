//! Guava's `RateLimiter` (`SmoothBursty`, `SmoothWarmingUp`) for
//! JavaScript: `smoothCreate` returns an object of functions bound to one
//! limiter (see `bound`), which the `RateLimiter` class of
//! `node/lib/rate-limiter.js` wraps.
//!
//! Nothing here decides anything: each method converts its arguments, calls
//! [`ratekeeper::RateLimiter`] and converts the result. Waiting is the
//! JavaScript side's (a timer, never a blocked thread); on a `ManualClock`
//! the methods that reserve a wait advance the clock by it instead, as the
//! library's own blocking calls do.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::core::smooth::{DEFAULT_COLD_FACTOR, DEFAULT_MAX_BURST_SECONDS};
use ratekeeper::{wait_as_seconds, AnyClock, Argument, RateLimiter, SmoothRateLimiter};

use crate::args::{self, Duration as GivenDuration};
use crate::bound::{Args, Binder, Hot, Named, Returned};
use crate::clock;
use crate::error::{guarded, Boxed, Failure};
use crate::js::Js;

/// One JavaScript `RateLimiter`.
struct Smooth {
    limiter: RateLimiter<AnyClock>,
}

/// The object `smoothCreate` returns: functions bound to one limiter.
/// (Declarations only: napi-rs writes this interface into
/// `lib/binding.d.ts`; the object itself is built by `bound::bind`.)
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct SmoothMethods {
    /// Takes `permits` if they are available now; never waits.
    #[napi(ts_type = "(permits?: number | bigint) => boolean")]
    pub try_acquire: (),
    /// `tryAcquire(1)`, reading no argument: the hot path, a callback of its
    /// own (see `bound`).
    #[napi(ts_type = "() => boolean")]
    pub try_acquire_one: (),
    /// Takes `permits` now: the seconds to wait (Guava's `acquire` value).
    /// On a `ManualClock`, the clock has advanced by them.
    #[napi(ts_type = "(permits: number | bigint) => number")]
    pub acquire: (),
    /// Guava's `tryAcquire(permits, timeout)` without the sleep: the seconds
    /// to wait when taken, -1 when refused (nothing taken). On a
    /// `ManualClock`, the clock has advanced by the wait.
    #[napi(ts_type = "(permits: number | bigint, timeoutMs: unknown, timeoutMicros: unknown) => number")]
    pub try_acquire_within: (),
    /// Whether `tryAcquireWithin` would take the permits now; takes nothing.
    #[napi(ts_type = "(permits: number | bigint, timeoutMs: unknown, timeoutMicros: unknown) => boolean")]
    pub can_acquire: (),
    /// Milliseconds until a request for `permits` would be granted.
    #[napi(ts_type = "(permits: number | bigint) => number")]
    pub time_until_available: (),
    /// Guava's `getRate()`.
    #[napi(ts_type = "() => number")]
    pub rate: (),
    /// Guava's `setRate(permitsPerSecond)`.
    #[napi(ts_type = "(permitsPerSecond: number) => void")]
    pub set_rate: (),
    /// Whether the limiter runs on a `ManualClock` (whose waits need no timer).
    #[napi(ts_type = "boolean")]
    pub manual_clock: (),
}

impl Hot for Smooth {
    type Arg = u32;

    #[inline]
    fn arg(value: Option<Js>) -> Result<u32, Failure> {
        value.map_or(Ok(1), args::permits_or_one)
    }

    /// `tryAcquire(permits)`: take them now or refuse.
    #[inline]
    fn hot<const W: u8>(&self, permits: u32) -> Result<bool, Boxed> {
        Ok(self.limiter.try_acquire(permits, Duration::ZERO)?)
    }
}

/// Argument `i` as a permit count, 1 when absent or `undefined`.
fn permits(args: &Args, i: usize) -> Result<u32, Failure> {
    args.passed(i).map_or(Ok(1), args::permits_or_one)
}

fn acquire(s: &Arc<Smooth>, args: &Args) -> Result<Returned, Boxed> {
    let permits = permits(args, 0)?;
    let wait = if s.limiter.clock().is_manual() {
        s.limiter.acquire(permits)? // sleeping on a manual clock advances it
    } else {
        s.limiter.reserve(permits)?
    };
    Ok(Returned::Number(wait_as_seconds(wait)))
}

fn timeout(args: &Args) -> Result<Duration, Failure> {
    Ok(Duration::from_micros(args::timeout_micros(args.get(1), args.get(2))? as u64))
}

fn try_acquire_within(s: &Arc<Smooth>, args: &Args) -> Result<Returned, Boxed> {
    let permits = permits(args, 0)?;
    let timeout = timeout(args)?;
    Ok(Returned::Number(if s.limiter.clock().is_manual() {
        if s.limiter.try_acquire(permits, timeout)? {
            0.0
        } else {
            -1.0
        }
    } else {
        s.limiter.try_reserve(permits, timeout)?.map_or(-1.0, wait_as_seconds)
    }))
}

fn can_acquire(s: &Arc<Smooth>, args: &Args) -> Result<Returned, Boxed> {
    let permits = permits(args, 0)?;
    Ok(Returned::Bool(s.limiter.can_acquire(permits, timeout(args)?)?))
}

fn time_until_available(s: &Arc<Smooth>, args: &Args) -> Result<Returned, Boxed> {
    let wait = s.limiter.time_until_available(permits(args, 0)?)?;
    Ok(Returned::Number(wait.as_micros() as f64 / 1e3))
}

fn rate(s: &Arc<Smooth>, _args: &Args) -> Result<Returned, Boxed> {
    Ok(Returned::Number(s.limiter.rate()))
}

fn set_rate(s: &Arc<Smooth>, args: &Args) -> Result<Returned, Boxed> {
    s.limiter.set_rate(args::number(args.get(0), "permitsPerSecond")?)?;
    Ok(Returned::Undefined)
}

const METHODS: &[Named<Smooth>] = &[
    (c"acquire", 1, acquire),
    (c"tryAcquireWithin", 3, try_acquire_within),
    (c"canAcquire", 3, can_acquire),
    (c"timeUntilAvailable", 1, time_until_available),
    (c"rate", 0, rate),
    (c"setRate", 1, set_rate),
];

/// The arguments of `smoothCreate`, as JavaScript values.
pub(crate) struct CreateArgs {
    pub(crate) permits_per_second: Js,
    pub(crate) warmup_ms: Js,
    pub(crate) warmup_micros: Js,
    pub(crate) cold_factor: Js,
    pub(crate) max_burst_seconds: Js,
}

/// Guava's limiter described by `a`, checked by the library: the rate
/// given, and the core (its kind and parameters), starting at time 0.
/// (Also how the Redis-shared limiter reads and checks the same options.)
pub(crate) fn core(a: &CreateArgs) -> Result<(f64, SmoothRateLimiter), Failure> {
    let rate = args::number(a.permits_per_second, "permitsPerSecond")?;
    let warmup_micros = match args::duration(a.warmup_ms, a.warmup_micros, ("warmupMs", "warmupMicros"))? {
        None => None,
        Some(GivenDuration::Micros(m)) => Some(m), // a negative one is the library's error
        Some(GivenDuration::Millis(value, ms)) => Some(args::millis(Argument::WarmupSeconds, "warmupMs", value, ms)?),
    };
    let optional = |value: Js, name| (!value.is_undefined()).then(|| args::number(value, name)).transpose();
    let cold_factor = optional(a.cold_factor, "coldFactor")?;
    let max_burst = optional(a.max_burst_seconds, "maxBurstSeconds")?;
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
    Ok((rate, core))
}

fn create(a: &CreateArgs, clock: Js) -> Result<Smooth, Failure> {
    let (_, core) = self::core(a)?;
    // The clock is read last: the limiter starts at the clock's "now".
    let clock = clock::from_option(clock)?;
    Ok(Smooth { limiter: RateLimiter::from_core(core, clock) })
}

/// Creates a limiter — Guava's `RateLimiter.create(permitsPerSecond)`, or
/// with a warm-up its `SmoothWarmingUp` — and returns its bound functions.
/// The options arrive one by one (`undefined` when absent).
#[napi(
    ts_args_type = "permitsPerSecond: number, warmupMs: unknown, warmupMicros: unknown, coldFactor: unknown, maxBurstSeconds: unknown, clock: unknown",
    ts_return_type = "SmoothMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn smooth_create<'env>(
    env: &'env Env,
    permits_per_second: Unknown<'_>,
    warmup_ms: Unknown<'_>,
    warmup_micros: Unknown<'_>,
    cold_factor: Unknown<'_>,
    max_burst_seconds: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let smooth = create(
            &CreateArgs {
                permits_per_second: js(permits_per_second),
                warmup_ms: js(warmup_ms),
                warmup_micros: js(warmup_micros),
                cold_factor: js(cold_factor),
                max_burst_seconds: js(max_burst_seconds),
            },
            js(clock),
        )?;
        let manual = smooth.limiter.clock().is_manual();
        let object = Binder::new(env.raw(), Arc::new(smooth))?
            .methods(METHODS)?
            .hot::<0>((c"tryAcquire", c"tryAcquireOne"))?
            .flag(c"manualClock", manual)?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}
