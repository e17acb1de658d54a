//! Exact mode (`RedisLimiter`): every decision one script run, with the
//! unavailability policy. Limits are given as a composite's parts are
//! (`spec::part`); the crate checks them exactly as the local limiters do.
//!
//! A decision is a Promise of a `Decision`, settled at once when no round
//! trip is needed (a remembered refusal), otherwise from the crate's
//! runtime thread: a check goes with the other checks of its turn of the
//! event loop (`batch`).
//!
//! Keys are a keyed limiter's (`args::with_key`: a string's UTF-8, or a
//! `Uint8Array`'s bytes), of at most `maxKeyBytes` bytes (256 unless
//! given); the crate refuses a longer one before anything is sent.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper_redis::{RedisLimiter, WhenUnavailable};

use super::batch;
use super::membership::membership_of;
use super::store::store_of;
use super::{adopt, decide, forget, limit, name, Close, Held, Store};
use crate::args;
use crate::bound::{Binder, Named, Returned};
use crate::error::{blame_redis, guarded, Failure};
use crate::js::{Js, Kind};
use crate::keyed;

/// One JavaScript `RedisLimiter`.
struct Exact {
    limiter: Held<RedisLimiter>,
    /// Its store, whose pipe its checks take when they can (`batch`).
    store: Arc<Store>,
}

impl Close for Exact {
    fn close(&self) {
        self.limiter.take();
    }
}

/// The object `redisLimiterCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisLimiterMethods {
    /// A Promise of the decision on `cost` units for `key`.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown>")]
    pub check: (),
    /// A Promise of the decision `check` would make, consuming nothing.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown>")]
    pub peek: (),
    /// A Promise settled when `cost` units went back to `key`.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<void>")]
    pub refund: (),
    /// A Promise of whether `key` held a state, which it deletes.
    #[napi(ts_type = "(key: string | Uint8Array) => Promise<boolean>")]
    pub remove: (),
    /// Drops the limiter; later calls reject.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// The quota: the most units admitted at once.
    #[napi(ts_type = "number")]
    pub limit: (),
    /// The longest key taken, in bytes.
    #[napi(ts_type = "number")]
    pub max_key_bytes: (),
}

const EXACT: &[Named<Exact>] = &[
    // Queued for the turn's batch (see `batch`).
    (c"check", 2, |e, args| decide(args, &e.limiter, |l, key, cost, done| batch::check(l, &e.store, key, cost, done))),
    (c"peek", 2, |e, args| {
        decide(args, &e.limiter, |l, key, cost, done| l.peek_with(key, cost, move |r| done.decision(r)))
    }),
    (c"refund", 2, |e, args| {
        decide(args, &e.limiter, |l, key, cost, done| {
            l.refund_with(key, cost, move |r| {
                done.answer(move |cx| {
                    r?;
                    cx.undefined()
                })
            })
        })
    }),
    (c"remove", 1, |e, args| {
        forget(args, &e.limiter, |l, key, done| l.remove_with(key, move |r| done.answer(move |cx| cx.boolean(r?))))
    }),
    (c"close", 0, |e, _| {
        e.close();
        Ok(Returned::Undefined)
    }),
];

/// The unavailability policy named by `value` (`undefined`: `"error"`).
fn policy(value: Js) -> Result<&'static str, Failure> {
    const NAMES: [&str; 4] = ["error", "failClosed", "failOpen", "localShare"];
    if value.is_undefined() {
        return Ok("error");
    }
    let Some(name) = value.string() else {
        return Err(Failure::WrongType { argument: "whenUnavailable", value, expected: "a string" });
    };
    NAMES.into_iter().find(|n| *n == name).ok_or(Failure::OutOfRange {
        argument: "whenUnavailable",
        value,
        requirement: "must be \"error\", \"failClosed\", \"failOpen\" or \"localShare\"",
    })
}

/// Creates an exact-mode limiter named `name` in `store` and returns its
/// bound functions. `whenUnavailable` is the policy's name; `membership`
/// and `maxKeys` go with `"localShare"` only.
#[napi(
    ts_args_type = "store: unknown, name: unknown, limit: unknown, rememberRefusals: unknown, whenUnavailable: unknown, membership: unknown, maxKeys: unknown, maxKeyBytes: unknown",
    ts_return_type = "RedisLimiterMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn redis_limiter_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    limit: Unknown<'_>,
    remember_refusals: Unknown<'_>,
    when_unavailable: Unknown<'_>,
    membership: Unknown<'_>,
    max_keys: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let name = self::name(js(name), "name")?;
        let spec = self::limit(js(limit))?;
        let bound = args::max_key_bytes(js(max_key_bytes))?;
        let remember = js(remember_refusals);
        let remember = match remember.kind() {
            Kind::Undefined => true,
            _ => remember.boolean().ok_or(Failure::WrongType {
                argument: "rememberRefusals",
                value: remember,
                expected: "a boolean",
            })?,
        };
        let policy = policy(js(when_unavailable))?;
        let (membership, max_keys) = (js(membership), js(max_keys));
        let local_share = policy == "localShare";
        if local_share && (membership.is_undefined() || max_keys.is_undefined()) {
            return Err(Failure::InvalidOption(
                "whenUnavailable \"localShare\" needs the options membership and maxKeys".to_owned(),
            ));
        }
        let share_options = !membership.is_undefined() || !max_keys.is_undefined();
        if !local_share && share_options {
            return Err(Failure::InvalidOption(
                "options membership and maxKeys go with whenUnavailable \"localShare\" only".to_owned(),
            ));
        }
        let mut limiter =
            RedisLimiter::new(&store.get()?, &name, spec)?.remember_refusals(remember).max_key_bytes(bound);
        limiter = match policy {
            "failClosed" => limiter.when_unavailable(WhenUnavailable::FailClosed),
            "failOpen" => limiter.when_unavailable(WhenUnavailable::FailOpen),
            "localShare" => {
                let membership = membership_of(membership)?;
                let (max_keys, given) = keyed::max_keys(max_keys)?;
                blame_redis(limiter.fall_back_to_local(membership, max_keys), &[given])?
            }
            _ => limiter.when_unavailable(WhenUnavailable::Error),
        };
        let quota = limiter.limit();
        let target = Arc::new(Exact { limiter: Held::new(limiter, "this RedisLimiter"), store: Arc::clone(&store) });
        adopt(&store, &target);
        let binder = &mut Binder::new(env.raw(), target)?;
        binder.methods(EXACT)?.number(c"limit", quota as f64)?.number(c"maxKeyBytes", bound.get() as f64)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
