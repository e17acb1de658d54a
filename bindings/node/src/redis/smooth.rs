//! Guava's `RateLimiter` shared through Redis (`ratekeeper_redis::
//! RedisRateLimiter`): every process using the same name gets the waits
//! one Guava limiter would give. `redisSmoothCreate` reads and checks the
//! options exactly as `RateLimiter.create` does (`smooth::core`), then
//! connects (creating the shared state unless another process has) on
//! libuv's thread pool.
//!
//! Every call is a round trip, so every method returns a Promise: `reserve`
//! and `tryReserve` through the crate's callback forms, the others through
//! their `async` forms run on the crate's runtime (`RedisStore::
//! spawn_with`). Waiting out a granted wait is the JavaScript side's (a
//! timer), as for the local `RateLimiter`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::core::SmoothKind;
use ratekeeper::wait_as_seconds;
use ratekeeper_redis::{RedisOption, RedisRateLimiter, RedisStore};

use super::store::store_of;
use super::{adopt, option_duration, Close, Held};
use crate::args;
use crate::bound::{Args, Binder, Named, Returned};
use crate::error::{guarded, Boxed, Failure};
use crate::js::{self, Js};
use crate::promise::{self, Answer, Cx, Done};
use crate::smooth::{core, CreateArgs};

/// One JavaScript `RedisRateLimiter`.
struct Shared {
    limiter: Held<RedisRateLimiter>,
}

impl Close for Shared {
    fn close(&self) {
        self.limiter.take();
    }
}

/// The object `redisSmoothCreate` resolves to.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisSmoothMethods {
    /// Guava's `reserve`: takes `permits`; a Promise of the seconds to wait.
    #[napi(ts_type = "(permits?: number | bigint) => Promise<number>")]
    pub reserve: (),
    /// Guava's `tryAcquire(permits, timeout)` without the wait: a Promise of
    /// the seconds to wait when taken, -1 when refused (nothing taken).
    #[napi(
        ts_type = "(permits: number | bigint | undefined, timeoutMs: unknown, timeoutMicros: unknown) => Promise<number>"
    )]
    pub try_reserve: (),
    /// Whether `tryReserve` with this timeout would take permits now; takes nothing.
    #[napi(ts_type = "(timeoutMs: unknown, timeoutMicros: unknown) => Promise<boolean>")]
    pub can_acquire: (),
    /// Milliseconds until a request made now would be granted.
    #[napi(ts_type = "() => Promise<number>")]
    pub time_until_available: (),
    /// A Promise of the shared state: rate, stored permits, max permits,
    /// milliseconds until the next permit is free; writes nothing.
    #[napi(ts_type = "() => Promise<[number, number, number, number]>")]
    pub inspect: (),
    /// A Promise of whether there was a state, which it deletes.
    #[napi(ts_type = "() => Promise<boolean>")]
    pub reset: (),
    /// Guava's `getRate()`.
    #[napi(ts_type = "() => Promise<number>")]
    pub rate: (),
    /// Guava's `setRate(permitsPerSecond)`, for every process.
    #[napi(ts_type = "(permitsPerSecond: number) => Promise<void>")]
    pub set_rate: (),
    /// Drops the limiter; later calls reject.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// The Redis key holding the state.
    #[napi(ts_type = "string")]
    pub key: (),
}

/// A Promise of what `run` answers with the limiter (or its failure to start).
fn promised(
    s: &Shared,
    args: &Args,
    run: impl FnOnce(RedisRateLimiter, Done) -> Result<(), Failure>,
) -> Result<Returned, Boxed> {
    let promise = promise::promise(args.env, |done| run(s.limiter.get()?, done))?;
    Ok(Returned::Value(promise))
}

/// Runs one of the crate's `async` forms on its runtime and answers the
/// Promise with `answer` of its output.
fn spawn<T: Send + 'static>(
    done: Done,
    future: impl Future<Output = Result<T, ratekeeper_redis::Error>> + Send + 'static,
    answer: fn(&Cx, T) -> Result<napi::sys::napi_value, Failure>,
) {
    RedisStore::spawn_with(future, move |result| done.answer(move |cx| answer(cx, result?)));
}

/// An array of numbers (`inspect`'s answer: the package names them).
fn numbers(cx: &Cx, values: &[f64]) -> Result<napi::sys::napi_value, Failure> {
    let mut array = std::ptr::null_mut();
    // SAFETY: plain value creation in the answer's environment, on its thread.
    let status = unsafe { napi::sys::napi_create_array_with_length(cx.env, values.len(), &mut array) };
    js::check(cx.env, status, "create array")?;
    for (i, &x) in values.iter().enumerate() {
        let value = cx.number(x)?;
        // SAFETY: both values are live in this environment.
        let status = unsafe { napi::sys::napi_set_element(cx.env, array, i as u32, value) };
        js::check(cx.env, status, "set element")?;
    }
    Ok(array)
}

fn timeout(ms: Js, micros: Js) -> Result<Duration, Failure> {
    Ok(Duration::from_micros(args::timeout_micros(ms, micros)? as u64))
}

fn permits(args: &Args) -> Result<u32, Failure> {
    args.passed(0).map_or(Ok(1), args::permits_or_one)
}

const METHODS: &[Named<Shared>] = &[
    (c"reserve", 1, |s, args| {
        promised(s, args, |limiter, done| {
            let permits = permits(args)?;
            limiter.reserve_with(permits, move |r| done.answer(move |cx| cx.number(wait_as_seconds(r?))));
            Ok(())
        })
    }),
    (c"tryReserve", 3, |s, args| {
        promised(s, args, |limiter, done| {
            let permits = permits(args)?;
            let timeout = timeout(args.get(1), args.get(2))?;
            limiter.try_reserve_with(permits, timeout, move |r| {
                done.answer(move |cx| cx.number(r?.map_or(-1.0, wait_as_seconds)))
            });
            Ok(())
        })
    }),
    (c"canAcquire", 2, |s, args| {
        promised(s, args, |limiter, done| {
            let timeout = timeout(args.get(0), args.get(1))?;
            spawn(done, async move { limiter.can_acquire_async(timeout).await }, |cx, b| cx.boolean(b));
            Ok(())
        })
    }),
    (c"timeUntilAvailable", 0, |s, args| {
        promised(s, args, |limiter, done| {
            spawn(done, async move { limiter.time_until_available_async().await }, |cx, wait| {
                cx.number(wait.as_micros() as f64 / 1e3)
            });
            Ok(())
        })
    }),
    (c"inspect", 0, |s, args| {
        promised(s, args, |limiter, done| {
            spawn(done, async move { limiter.inspect_async().await }, |cx, state| {
                let wait_ms = state.time_until_available.as_micros() as f64 / 1e3;
                numbers(cx, &[state.rate, state.stored_permits, state.max_permits, wait_ms])
            });
            Ok(())
        })
    }),
    (c"reset", 0, |s, args| {
        promised(s, args, |limiter, done| {
            spawn(done, async move { limiter.reset_async().await }, |cx, had| cx.boolean(had));
            Ok(())
        })
    }),
    (c"rate", 0, |s, args| {
        promised(s, args, |limiter, done| {
            spawn(done, async move { limiter.rate_async().await }, |cx, rate| cx.number(rate));
            Ok(())
        })
    }),
    (c"setRate", 1, |s, args| {
        promised(s, args, |limiter, done| {
            let rate = args::number(args.get(0), "permitsPerSecond")?;
            spawn(done, async move { limiter.set_rate_async(rate).await }, |cx, ()| cx.undefined());
            Ok(())
        })
    }),
    (c"close", 0, |s, _| {
        s.close();
        Ok(Returned::Undefined)
    }),
];

/// Connects to (creating if need be) Guava's limiter named `name` in
/// `store`, with the options of `RateLimiter.create` and `idleTtl` (how
/// long the shared state outlives its last use; absent: for ever), and
/// resolves to its bound functions.
#[napi(
    ts_args_type = "store: unknown, name: unknown, permitsPerSecond: number, warmupMs: unknown, warmupMicros: unknown, coldFactor: unknown, maxBurstSeconds: unknown, idleTtlMs: unknown, idleTtlMicros: unknown",
    ts_return_type = "Promise<RedisSmoothMethods>"
)]
#[allow(clippy::too_many_arguments)]
pub fn redis_smooth_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    permits_per_second: Unknown<'_>,
    warmup_ms: Unknown<'_>,
    warmup_micros: Unknown<'_>,
    cold_factor: Unknown<'_>,
    max_burst_seconds: Unknown<'_>,
    idle_ttl_ms: Unknown<'_>,
    idle_ttl_micros: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let redis = store.get()?;
        let name_value = js(name);
        let name = name_value.string().ok_or(Failure::WrongType {
            argument: "name",
            value: name_value,
            expected: "a string",
        })?;
        // The local limiter's checks, and its errors.
        let (rate, local) = core(&CreateArgs {
            permits_per_second: js(permits_per_second),
            warmup_ms: js(warmup_ms),
            warmup_micros: js(warmup_micros),
            cold_factor: js(cold_factor),
            max_burst_seconds: js(max_burst_seconds),
        })?;
        let mut builder = RedisRateLimiter::builder(&name, rate);
        builder = match local.kind() {
            SmoothKind::Bursty { max_burst_seconds } => builder.max_burst_seconds(max_burst_seconds),
            SmoothKind::WarmingUp { warmup_micros, cold_factor } => builder
                .warmup(Duration::from_micros(u64::try_from(warmup_micros).unwrap_or(0)))
                .cold_factor(cold_factor),
        };
        if let Some(ttl) = option_duration(RedisOption::IdleTtl, js(idle_ttl_ms), js(idle_ttl_micros))? {
            builder = builder.idle_ttl(ttl);
        }
        let promise = promise::blocking(env.raw(), move || -> Answer {
            let connected = builder.connect(&redis);
            Box::new(move |cx| {
                let limiter = connected?;
                let key = js::string(cx.env, limiter.key())?;
                let target = Arc::new(Shared { limiter: Held::new(limiter, "this RedisRateLimiter") });
                adopt(&store, &target);
                let binder = &mut Binder::new(cx.env, target)?;
                binder.methods(METHODS)?.value(c"key", key)?;
                Ok(binder.finish())
            })
        })?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    })
}
