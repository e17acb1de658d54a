//! Divided mode (`RedisDividedLimiter`): this process joins a group and
//! enforces its share of the limit locally. A decision never waits for
//! Redis, so it is synchronous, like a local limiter's. Keys are as exact
//! mode's.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper_redis::{RedisDividedLimiter, RedisOption};

use super::store::store_of;
use super::{adopt, limit, name, required_option_duration, Close, Held};
use crate::args;
use crate::bound::{Binder, Named, Returned, Scratch, DECISION_WORDS};
use crate::error::{blame_later, guarded, Failure, Kept};
use crate::js::{self, Js};
use crate::keyed;
use crate::promise::{self, Answer};

/// One JavaScript `RedisDividedLimiter`.
struct Divided {
    limiter: Held<RedisDividedLimiter>,
    scratch: Scratch,
}

impl Close for Divided {
    fn close(&self) {
        self.limiter.take();
    }
}

/// The object `redisDividedCreate` resolves to.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisDividedMethods {
    /// Decides `cost` units for `key` with this node's share (no round
    /// trip): the decision to `scratch`, `allowed` returned.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub check: (),
    /// The decision `check` would make, taking nothing: to `scratch`,
    /// `allowed` returned.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub peek: (),
    /// Forgets `key` in this node's share: whether it held it.
    #[napi(ts_type = "(key: string | Uint8Array) => boolean")]
    pub remove: (),
    /// The live nodes as last read.
    #[napi(ts_type = "() => number")]
    pub nodes: (),
    /// Leaves the group and drops the limiter; later calls throw.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// This node's id in the group.
    #[napi(ts_type = "string")]
    pub node_id: (),
    /// The decision record.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
    /// The longest key taken, in bytes.
    #[napi(ts_type = "number")]
    pub max_key_bytes: (),
}

const DIVIDED: &[Named<Divided>] = &[
    (c"check", 2, |d, args| {
        let cost = args::cost_or_one(args.passed(1))?;
        let limiter = d.limiter.get()?;
        let decision = args::with_key(args.get(0), |key| limiter.check(key, cost))?.map_err(Failure::from)?;
        d.scratch.write_decision(0, &decision);
        Ok(Returned::Bool(decision.allowed))
    }),
    (c"peek", 2, |d, args| {
        let cost = args::cost_or_one(args.passed(1))?;
        let limiter = d.limiter.get()?;
        let decision = args::with_key(args.get(0), |key| limiter.peek(key, cost))?.map_err(Failure::from)?;
        d.scratch.write_decision(0, &decision);
        Ok(Returned::Bool(decision.allowed))
    }),
    (c"remove", 1, |d, args| {
        let limiter = d.limiter.get()?;
        Ok(Returned::Bool(args::with_key(args.get(0), |key| limiter.remove(key))?.map_err(Failure::from)?))
    }),
    (c"nodes", 0, |d, _| Ok(Returned::Number(d.limiter.get()?.nodes() as f64))),
    (c"close", 0, |d, _| {
        d.close();
        Ok(Returned::Undefined)
    }),
];

/// Joins group `name` in `store` (heartbeating every third of the TTL) and
/// resolves to the bound functions of a limiter enforcing this node's share
/// of `limit` for at most `maxKeys` keys of at most `maxKeyBytes` bytes.
#[napi(
    ts_args_type = "store: unknown, name: unknown, limit: unknown, heartbeatTtlMs: unknown, heartbeatTtlMicros: unknown, maxKeys: unknown, maxKeyBytes: unknown",
    ts_return_type = "Promise<RedisDividedMethods>"
)]
#[allow(clippy::too_many_arguments)]
pub fn redis_divided_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    limit: Unknown<'_>,
    heartbeat_ttl_ms: Unknown<'_>,
    heartbeat_ttl_micros: Unknown<'_>,
    max_keys: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let redis = store.get()?;
        let name = self::name(js(name), "name")?;
        let spec = self::limit(js(limit))?;
        let ttl = required_option_duration(RedisOption::HeartbeatTtl, js(heartbeat_ttl_ms), js(heartbeat_ttl_micros))?;
        let (max_keys, keys_given) = keyed::max_keys(js(max_keys))?;
        let bound = args::max_key_bytes(js(max_key_bytes))?;
        let kept: Vec<Kept> = Kept::keep(keys_given).into_iter().collect();
        let promise = promise::blocking(env.raw(), move || -> Answer {
            let joined = RedisDividedLimiter::new(&redis, &name, spec, ttl, max_keys).map(|l| l.max_key_bytes(bound));
            Box::new(move |cx| {
                let limiter = blame_later(joined, &kept)?;
                let node_id = js::string(cx.env, limiter.membership().node_id())?;
                let target = Arc::new(Divided {
                    limiter: Held::new(limiter, "this RedisDividedLimiter"),
                    scratch: Scratch::new(DECISION_WORDS),
                });
                adopt(&store, &target);
                let binder = &mut Binder::new(cx.env, target)?;
                binder
                    .methods(DIVIDED)?
                    .scratch(c"scratch", |d| &d.scratch)?
                    .value(c"nodeId", node_id)?
                    .number(c"maxKeyBytes", bound.get() as f64)?;
                Ok(binder.finish())
            })
        })?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    })
}
