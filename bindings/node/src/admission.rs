//! Every admission-style algorithm — `TokenBucket`, `Gcra`, both leaky
//! buckets, the four windows — through one code path: `admissionCreate`
//! builds a [`ratekeeper::AnyLimiter`] from a [`spec`] and
//! returns its bound functions (see `bound`), which the classes of
//! `node/lib/admission.js` wrap.
//!
//! Every limiter has the hot calls `check(cost)` (the decision goes to the
//! limiter's scratch words, `allowed` is returned) and `tryAcquire(cost)`
//! (`allowed` only), and `peek(cost)`; a few have extras of their own (the
//! token bucket's reservations and waits, the queue's `acquire`, the
//! windows' `limit`/`setLimit`). Waiting is
//! the JavaScript side's (a timer); on a `ManualClock` the calls that wait
//! advance the clock instead, as the library's own blocking calls do.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, AnyLimiter, Argument, Reservation, TokenBucket};

use crate::args;
use crate::bound::{millis, Args, Binder, Hot, Named, Returned, Scratch, DECISION_WORDS};
use crate::clock;
use crate::error::{blame, guarded, Boxed, Failure, Given};
use crate::js::Js;
use crate::spec::{self, Algorithm};

/// One JavaScript admission-style limiter.
pub(crate) struct Admit {
    limiter: AnyLimiter<AnyClock>,
    scratch: Scratch,
}

/// The object `admissionCreate` returns: functions bound to one limiter.
/// (Declarations only: the object is built by `bound::Binder`.)
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct AdmissionMethods {
    /// Admits `cost` units now if the limit allows, consuming them; writes
    /// the decision to `scratch` and returns whether it was allowed.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub check: (),
    /// `check(1)`, reading no argument: a hot path of its own.
    #[napi(ts_type = "() => boolean")]
    pub check_one: (),
    /// `check(cost).allowed`, writing no decision.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub try_acquire: (),
    /// `tryAcquire(1)`, reading no argument.
    #[napi(ts_type = "() => boolean")]
    pub try_acquire_one: (),
    /// The decision `check` would make, consuming nothing (to `scratch`).
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub peek: (),
    /// Gives back `cost` units admitted earlier that should not count
    /// (`Admission::refund`; the queue gives nothing back).
    #[napi(ts_type = "(cost?: number | bigint) => void")]
    pub refund: (),
    /// The decision record (see `bound::DECISION_WORDS`).
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
    /// Whether the limiter runs on a `ManualClock` (whose waits need no timer).
    #[napi(ts_type = "boolean")]
    pub manual_clock: (),
    /// Token bucket: reserves `cost` tokens (Go's `ReserveN`).
    #[napi(ts_type = "(cost?: number | bigint) => ReservationMethods")]
    pub reserve: (),
    /// Token bucket: Go's `WaitN` with a deadline, without the sleep (to
    /// `scratch`; its wait is the sleep). On a `ManualClock`, the clock has
    /// advanced by the wait.
    #[napi(ts_type = "(cost: number | bigint | undefined, timeoutMs: unknown, timeoutMicros: unknown) => boolean")]
    pub wait: (),
    /// Token bucket: Go's `Limit()`.
    #[napi(ts_type = "() => number")]
    pub rate: (),
    /// Token bucket: Go's `SetLimit`.
    #[napi(ts_type = "(rate: number) => void")]
    pub set_rate: (),
    /// Token bucket: Go's `Burst()`.
    #[napi(ts_type = "() => number")]
    pub burst: (),
    /// Token bucket: Go's `SetBurst`.
    #[napi(ts_type = "(burst: number | bigint) => void")]
    pub set_burst: (),
    /// Token bucket: Go's `Tokens()`.
    #[napi(ts_type = "() => number")]
    pub tokens: (),
    /// GCRA: redis-cell's limit, `maxBurst + 1`; a window: its limit.
    #[napi(ts_type = "() => number")]
    pub limit: (),
    /// A window: changes its limit, keeping what it has counted.
    #[napi(ts_type = "(limit: number | bigint) => void")]
    pub set_limit: (),
    /// Leaky bucket meter: the water level now.
    #[napi(ts_type = "() => number")]
    pub level: (),
    /// Leaky bucket queue: takes a slot (to `scratch`; its wait is the
    /// sleep). On a `ManualClock`, the clock has advanced by the wait.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub acquire: (),
}

impl Hot for Admit {
    type Arg = u64;

    #[inline]
    fn arg(value: Option<Js>) -> Result<u64, Failure> {
        args::cost_or_one(value)
    }

    /// 0: `check(cost)`, 1: `tryAcquire(cost)`.
    #[inline]
    fn hot<const W: u8>(&self, cost: u64) -> Result<bool, Boxed> {
        let decision = self.limiter.check(cost);
        if W == 0 {
            self.scratch.write_decision(0, &decision);
        }
        Ok(decision.allowed)
    }
}

fn cost(args: &Args, i: usize) -> Result<u64, Failure> {
    args::cost_or_one(args.passed(i))
}

fn peek(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let decision = a.limiter.peek(cost(args, 0)?);
    a.scratch.write_decision(0, &decision);
    Ok(Returned::Bool(decision.allowed))
}

fn refund(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    a.limiter.refund(cost(args, 0)?);
    Ok(Returned::Undefined)
}

fn token_bucket(a: &Admit) -> Result<&TokenBucket<AnyClock>, Failure> {
    match &a.limiter {
        AnyLimiter::TokenBucket(bucket) => Ok(bucket),
        _ => Err(Failure::Internal("a token bucket method on another algorithm".to_owned())),
    }
}

/// A reservation of a token bucket's tokens, held until cancelled.
struct Held {
    admit: Arc<Admit>,
    reservation: Mutex<Reservation>,
}

impl Held {
    fn get(&self) -> Reservation {
        // Nothing panics while the lock is held.
        *self.reservation.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The object `reserve` returns: functions bound to one reservation.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct ReservationMethods {
    /// Go's `OK()`.
    #[napi(ts_type = "boolean")]
    pub ok: (),
    /// Go's `Delay()` in milliseconds (`Infinity` when refused).
    #[napi(ts_type = "() => number")]
    pub delay: (),
    /// Go's `Delay()` in whole microseconds, rounded up (2^63 − 1 when refused).
    #[napi(ts_type = "() => bigint")]
    pub delay_micros: (),
    /// Go's `Cancel()`.
    #[napi(ts_type = "() => void")]
    pub cancel: (),
    /// The tokens the reservation holds (0 once cancelled).
    #[napi(ts_type = "() => number")]
    pub tokens: (),
}

fn delay_micros(h: &Held) -> Result<i64, Failure> {
    let delay = token_bucket(&h.admit)?.delay(&h.get());
    Ok(i64::try_from(delay.as_micros()).unwrap_or(i64::MAX))
}

const RESERVATION_METHODS: &[Named<Held>] = &[
    (c"delay", 0, |h, _| Ok(Returned::Number(millis(delay_micros(h)?)))),
    (c"delayMicros", 0, |h, _| Ok(Returned::BigInt(delay_micros(h)?))),
    (c"cancel", 0, |h, _| {
        let bucket = token_bucket(&h.admit)?;
        bucket.cancel(&mut h.reservation.lock().unwrap_or_else(PoisonError::into_inner));
        Ok(Returned::Undefined)
    }),
    (c"tokens", 0, |h, _| Ok(Returned::Number(h.get().tokens() as f64))),
];

fn reserve(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let reservation = token_bucket(a)?.reserve_n(cost(args, 0)?);
    let held = Arc::new(Held { admit: Arc::clone(a), reservation: Mutex::new(reservation) });
    let object = Binder::new(args.env, held)?.methods(RESERVATION_METHODS)?.flag(c"ok", reservation.ok())?.finish();
    Ok(Returned::Value(object))
}

/// A timeout as Go's `WaitN` deadline: absent waits as long as it takes.
fn wait_timeout(ms: Js, micros: Js) -> Result<Duration, Failure> {
    if ms.is_undefined() && micros.is_undefined() {
        return Ok(Duration::MAX);
    }
    Ok(Duration::from_micros(args::timeout_micros(ms, micros)? as u64))
}

fn wait(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let bucket = token_bucket(a)?;
    let cost = cost(args, 0)?;
    let timeout = wait_timeout(args.get(1), args.get(2))?;
    let decision = if bucket.clock().is_manual() {
        bucket.wait_n(cost, timeout) // sleeping on a manual clock advances it
    } else {
        bucket.reserve_within(cost, timeout)
    };
    a.scratch.write_decision(0, &decision);
    Ok(Returned::Bool(decision.allowed))
}

fn set_rate(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let value = args.get(0);
    let rate = args::number(value, "rate")?;
    blame(token_bucket(a)?.set_rate(rate), &[Given { argument: Argument::Rate, name: "rate", value }])?;
    Ok(Returned::Undefined)
}

fn set_burst(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let value = args.get(0);
    let burst = args::count(value, Argument::Burst, "burst")?;
    blame(token_bucket(a)?.set_burst(burst), &[Given { argument: Argument::Burst, name: "burst", value }])?;
    Ok(Returned::Undefined)
}

/// A window's limit (`limit()` of the four windows).
fn window_limit(a: &Arc<Admit>, _: &Args) -> Result<Returned, Boxed> {
    let limit = a.limiter.window_limit().ok_or_else(|| Failure::Internal("limit on another algorithm".to_owned()))?;
    Ok(Returned::Number(limit as f64))
}

/// A window's `set_limit`: the bound crossed is the window's own (a
/// sliding window's 2^32 − 1, a sliding log's 2^20), named `limit`.
fn set_limit(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let value = args.get(0);
    let limit = args::count(value, Argument::Limit, "limit")?;
    let changed = a
        .limiter
        .set_window_limit(limit)
        .ok_or_else(|| Failure::Internal("setLimit on another algorithm than a window".to_owned()))?;
    let given = |argument| Given { argument, name: "limit", value };
    blame(changed, &[given(Argument::Limit), given(Argument::SlidingWindowLimit), given(Argument::SlidingLogLimit)])?;
    Ok(Returned::Undefined)
}

fn acquire(a: &Arc<Admit>, args: &Args) -> Result<Returned, Boxed> {
    let AnyLimiter::LeakyBucketQueue(queue) = &a.limiter else {
        return Err(Failure::Internal("acquire on another algorithm than the queue".to_owned()).into());
    };
    let cost = cost(args, 0)?;
    let decision = if queue.clock().is_manual() {
        queue.acquire(cost) // sleeping on a manual clock advances it
    } else {
        queue.check(cost)
    };
    a.scratch.write_decision(0, &decision);
    Ok(Returned::Bool(decision.allowed))
}

const COMMON: &[Named<Admit>] = &[(c"peek", 1, peek), (c"refund", 1, refund)];

const TOKEN_BUCKET: &[Named<Admit>] = &[
    (c"reserve", 1, reserve),
    (c"wait", 3, wait),
    (c"rate", 0, |a, _| Ok(Returned::Number(token_bucket(a)?.rate()))),
    (c"setRate", 1, set_rate),
    (c"burst", 0, |a, _| Ok(Returned::Number(token_bucket(a)?.burst() as f64))),
    (c"setBurst", 1, set_burst),
    (c"tokens", 0, |a, _| Ok(Returned::Number(token_bucket(a)?.tokens()))),
];

const GCRA: &[Named<Admit>] = &[(c"limit", 0, |a, _| match &a.limiter {
    AnyLimiter::Gcra(gcra) => Ok(Returned::Number(gcra.limit() as f64)),
    _ => Err(Failure::Internal("limit on another algorithm than GCRA".to_owned()).into()),
})];

const METER: &[Named<Admit>] = &[(c"level", 0, |a, _| match &a.limiter {
    AnyLimiter::LeakyBucketMeter(meter) => Ok(Returned::Number(meter.level() as f64)),
    _ => Err(Failure::Internal("level on another algorithm than the meter".to_owned()).into()),
})];

const QUEUE: &[Named<Admit>] = &[(c"acquire", 1, acquire)];

const WINDOW: &[Named<Admit>] = &[(c"limit", 0, window_limit), (c"setLimit", 1, set_limit)];

fn extras(algorithm: Algorithm) -> &'static [Named<Admit>] {
    match algorithm {
        Algorithm::TokenBucket => TOKEN_BUCKET,
        Algorithm::Gcra => GCRA,
        Algorithm::LeakyBucketMeter => METER,
        Algorithm::LeakyBucketQueue => QUEUE,
        Algorithm::FixedWindow | Algorithm::SlidingWindow | Algorithm::SlidingLog | Algorithm::SlidingWindowCounter => {
            WINDOW
        }
    }
}

/// Creates an admission-style limiter and returns its bound functions.
/// `values` are its options in the order `limiterKeys()[algorithm]` gives
/// (`undefined` where absent).
#[napi(ts_args_type = "algorithm: string, values: unknown[], clock: unknown", ts_return_type = "AdmissionMethods")]
pub fn admission_create<'env>(
    env: &'env Env,
    algorithm: Unknown<'_>,
    values: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let algorithm = spec::algorithm_from_js(js(algorithm), "algorithm")?;
        let values = js(values).elements()?.ok_or_else(|| Failure::Internal("values is not an array".to_owned()))?;
        let clock = clock::from_option(js(clock))?;
        let manual = clock.is_manual();
        let (_, limiter) = spec::build(algorithm, &values, |spec| AnyLimiter::with_clock(spec, clock))?;
        let admit = Arc::new(Admit { limiter, scratch: Scratch::new(DECISION_WORDS) });
        let object = Binder::new(env.raw(), admit)?
            .methods(COMMON)?
            .methods(extras(algorithm))?
            .hot::<0>((c"check", c"checkOne"))?
            .hot::<1>((c"tryAcquire", c"tryAcquireOne"))?
            .scratch(c"scratch", |a| &a.scratch)?
            .flag(c"manualClock", manual)?
            .finish();
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
    })
}
