//! Several limits of one key through Redis (`RedisCompositeLimiter`):
//! admitted all or nothing in one script run, as the in-process composite
//! admits them. Parts are given as `CompositeLimiter`'s are (an array of
//! limiter options); an error in a part names it (`limits[1]: …`).
//!
//! A decision is a Promise of `[combined, ...parts]`, each a `Decision`,
//! which `node/lib/redis.js` turns into `{ decision, parts }`.

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::AnyCore;
use ratekeeper_redis::{CompositeDecision, RedisCompositeLimiter, WhenUnavailable};

use super::store::store_of;
use super::{adopt, forget, name, Close, Held, Store};
use crate::args;
use crate::bound::{Args, Binder, Named, Returned};
use crate::error::{guarded, Boxed, Failure};
use crate::js::{self, Js};
use crate::promise::{self, Cx};
use crate::spec;

/// One JavaScript `RedisCompositeLimiter`.
struct Composite {
    limiter: Held<RedisCompositeLimiter>,
}

impl Close for Composite {
    fn close(&self) {
        self.limiter.take();
    }
}

/// The object `redisCompositeCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisCompositeMethods {
    /// A Promise of `[combined, ...parts]` for `cost` units of `key`.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown[]>")]
    pub check: (),
    /// A Promise of what `check` would decide, consuming nothing.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown[]>")]
    pub peek: (),
    /// A Promise settled when `cost` units went back to every part of `key`.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<void>")]
    pub refund: (),
    /// A Promise of whether `key` held a state, which it deletes.
    #[napi(ts_type = "(key: string | Uint8Array) => Promise<boolean>")]
    pub remove: (),
    /// Drops the limiter; later calls reject.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// The strictest part's quota.
    #[napi(ts_type = "number")]
    pub limit: (),
    /// How many parts.
    #[napi(ts_type = "number")]
    pub parts: (),
    /// The longest key taken, in bytes.
    #[napi(ts_type = "number")]
    pub max_key_bytes: (),
}

/// `[combined, ...parts]` as JavaScript `Decision`s.
fn decisions(cx: &Cx, d: &CompositeDecision) -> Result<sys::napi_value, Failure> {
    let mut array = ptr::null_mut();
    // SAFETY: plain array creation in the answering call's environment.
    let status = unsafe { sys::napi_create_array_with_length(cx.env, d.parts.len() + 1, &mut array) };
    js::check(cx.env, status, "create array")?;
    for (i, decision) in std::iter::once(&d.combined).chain(&d.parts).enumerate() {
        let value = cx.decision(decision)?;
        // SAFETY: an array and a value of this call.
        let status = unsafe { sys::napi_set_element(cx.env, array, i as u32, value) };
        js::check(cx.env, status, "set element")?;
    }
    Ok(array)
}

/// A Promise of the composite decision on the key and cost in `args`.
fn decide(args: &Args, c: &Composite, peek: bool) -> Result<Returned, Boxed> {
    let promise = promise::promise(args.env, |done| {
        let key = args::with_key(args.get(0), <[u8]>::to_vec)?;
        let cost = args::cost_or_one(args.passed(1))?;
        let answer = move |r: Result<CompositeDecision, ratekeeper_redis::Error>| {
            done.answer(move |cx| decisions(cx, &r?));
        };
        let limiter = c.limiter.get()?;
        if peek {
            limiter.peek_with(key, cost, answer);
        } else {
            limiter.check_with(key, cost, answer);
        }
        Ok(())
    })?;
    Ok(Returned::Value(promise))
}

/// A Promise settled when the refund is done (rejected when Redis could not
/// take it).
fn refund(c: &Arc<Composite>, args: &Args) -> Result<Returned, Boxed> {
    let promise = promise::promise(args.env, |done| {
        let key = args::with_key(args.get(0), <[u8]>::to_vec)?;
        let cost = args::cost_or_one(args.passed(1))?;
        c.limiter.get()?.refund_with(key, cost, move |r| {
            done.answer(move |cx| {
                r?;
                cx.undefined()
            })
        });
        Ok(())
    })?;
    Ok(Returned::Value(promise))
}

const METHODS: &[Named<Composite>] = &[
    (c"check", 2, |c, args| decide(args, c, false)),
    (c"peek", 2, |c, args| decide(args, c, true)),
    (c"refund", 2, refund),
    (c"remove", 1, |c, args| {
        forget(args, &c.limiter, |l, key, done| l.remove_with(key, move |r| done.answer(move |cx| cx.boolean(r?))))
    }),
    (c"close", 0, |c, _| {
        c.close();
        Ok(Returned::Undefined)
    }),
];

/// The unavailability policy named by `value` (`undefined`: `"error"`); a
/// composite has no local share.
fn policy(value: Js) -> Result<WhenUnavailable, Failure> {
    if value.is_undefined() {
        return Ok(WhenUnavailable::Error);
    }
    let Some(name) = value.string() else {
        return Err(Failure::WrongType { argument: "whenUnavailable", value, expected: "a string" });
    };
    match name.as_str() {
        "error" => Ok(WhenUnavailable::Error),
        "failClosed" => Ok(WhenUnavailable::FailClosed),
        "failOpen" => Ok(WhenUnavailable::FailOpen),
        _ => Err(Failure::OutOfRange {
            argument: "whenUnavailable",
            value,
            requirement: "must be \"error\", \"failClosed\" or \"failOpen\"",
        }),
    }
}

/// Creates a composite named `name` in `store` of `limits` (an array of
/// limiter options, in order) and returns its bound functions.
#[napi(
    ts_args_type = "store: unknown, name: unknown, limits: unknown, whenUnavailable: unknown, maxKeyBytes: unknown",
    ts_return_type = "RedisCompositeMethods"
)]
pub fn redis_composite_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    limits: Unknown<'_>,
    when_unavailable: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store: Arc<Store> = store_of(js(store))?;
        let name = self::name(js(name), "name")?;
        let value = js(limits);
        let Some(parts) = value.elements()? else {
            return Err(Failure::WrongType { argument: "limits", value, expected: "an array of limiter options" });
        };
        // Each part is built alone first, so that an error names its part.
        let mut specs = Vec::with_capacity(parts.len());
        for (index, part) in parts.into_iter().enumerate() {
            let in_part = |inner| Failure::InPart { index, inner: Box::new(inner) };
            let (algorithm, values) = spec::part(part, "options").map_err(in_part)?;
            let (spec, _) = spec::build(algorithm, &values, AnyCore::new).map_err(in_part)?;
            specs.push(spec);
        }
        let policy = policy(js(when_unavailable))?;
        let bound = args::max_key_bytes(js(max_key_bytes))?;
        let limiter =
            RedisCompositeLimiter::new(&store.get()?, &name, &specs)?.when_unavailable(policy).max_key_bytes(bound);
        let (quota, count) = (limiter.limit(), specs.len());
        let target = Arc::new(Composite { limiter: Held::new(limiter, "this RedisCompositeLimiter") });
        adopt(&store, &target);
        let binder = &mut Binder::new(env.raw(), target)?;
        binder
            .methods(METHODS)?
            .number(c"limit", quota as f64)?
            .number(c"parts", count as f64)?
            .number(c"maxKeyBytes", bound.get() as f64)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
