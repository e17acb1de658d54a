//! Leased mode (`RedisLeasedLimiter`): one round trip takes a batch of a
//! key's shared units, which this process then admits locally. A decision
//! is a Promise of a `Decision`, settled at once when the lease decides,
//! otherwise through the crate's `check_with`. Keys are as exact mode's.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::Argument;
use ratekeeper_redis::RedisLeasedLimiter;

use super::store::store_of;
use super::{adopt, decide, forget, limit, name, Close, Held};
use crate::args;
use crate::bound::{Binder, Named, Returned};
use crate::error::{blame_redis, guarded, Given};
use crate::js::Js;

/// One JavaScript `RedisLeasedLimiter`.
struct Leased {
    limiter: Held<RedisLeasedLimiter>,
}

impl Close for Leased {
    fn close(&self) {
        self.limiter.take();
    }
}

/// The object `redisLeasedCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisLeasedMethods {
    /// A Promise of the decision on `cost` units for `key`: from this
    /// node's lease, or one round trip for a new lease.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown>")]
    pub check: (),
    /// A Promise of the decision `check` would make on this node, taking
    /// nothing: from its lease, or one round trip that takes nothing.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => Promise<unknown>")]
    pub peek: (),
    /// A Promise of whether `key` held a shared state, which it deletes
    /// (and this node's lease on it).
    #[napi(ts_type = "(key: string | Uint8Array) => Promise<boolean>")]
    pub remove: (),
    /// Drops the limiter; later calls reject.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// The longest key taken, in bytes.
    #[napi(ts_type = "number")]
    pub max_key_bytes: (),
}

const LEASED: &[Named<Leased>] = &[
    (c"check", 2, |l, args| {
        decide(args, &l.limiter, |l, key, cost, done| l.check_with(key, cost, move |r| done.decision(r)))
    }),
    (c"peek", 2, |l, args| {
        decide(args, &l.limiter, |l, key, cost, done| l.peek_with(key, cost, move |r| done.decision(r)))
    }),
    (c"remove", 1, |l, args| {
        forget(args, &l.limiter, |l, key, done| l.remove_with(key, move |r| done.answer(move |cx| cx.boolean(r?))))
    }),
    (c"close", 0, |l, _| {
        l.close();
        Ok(Returned::Undefined)
    }),
];

/// Creates a leased-mode limiter named `name` in `store`, taking up to
/// `batch` units per round trip and spending them within the lease (given
/// in milliseconds or microseconds), and returns its bound functions.
#[napi(
    ts_args_type = "store: unknown, name: unknown, limit: unknown, batch: unknown, leaseMs: unknown, leaseMicros: unknown, maxKeyBytes: unknown",
    ts_return_type = "RedisLeasedMethods"
)]
#[allow(clippy::too_many_arguments)]
pub fn redis_leased_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    limit: Unknown<'_>,
    batch: Unknown<'_>,
    lease_ms: Unknown<'_>,
    lease_micros: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let name = self::name(js(name), "name")?;
        let spec = self::limit(js(limit))?;
        let batch_value = js(batch);
        let batch = args::count(batch_value, Argument::Batch, "batch")?;
        let batch_given = Given { argument: Argument::Batch, name: "batch", value: batch_value };
        let (lease, lease_given) =
            args::required_duration(js(lease_ms), js(lease_micros), ("leaseMs", "leaseMicros"), Argument::Lease)?;
        // A negative lease is refused by the library as a zero one, blamed
        // on the value given.
        let lease = Duration::from_micros(u64::try_from(lease).unwrap_or(0));
        let bound = args::max_key_bytes(js(max_key_bytes))?;
        let limiter = blame_redis(
            RedisLeasedLimiter::new(&store.get()?, &name, spec, batch, lease),
            &[batch_given, lease_given],
        )?
        .max_key_bytes(bound);
        let target = Arc::new(Leased { limiter: Held::new(limiter, "this RedisLeasedLimiter") });
        adopt(&store, &target);
        let binder = &mut Binder::new(env.raw(), target)?;
        binder.methods(LEASED)?.number(c"maxKeyBytes", bound.get() as f64)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
