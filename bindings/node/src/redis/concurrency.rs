//! The concurrency limit shared through Redis (`ratekeeper_redis::
//! RedisConcurrencyLimiter`): permits held as leases that expire on the
//! server's clock. Every rule is the crate's; this module reads arguments
//! and settles Promises through the crate's callback forms.
//!
//! `tryAcquire` resolves to the refusal's `Decision`, or to a lease: an
//! object of functions bound to the crate's lease and to this limiter
//! (`release`, `renew`, each a Promise of a boolean) with its `id`,
//! `permits`, `recorded` and the admitting `decision`. A lease of a closed
//! limiter rejects as the limiter does.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::Argument;
use ratekeeper_redis::{ConcurrencyLease, RedisConcurrencyLimiter, RedisOption, RedisStore, WhenUnavailable};

use super::store::store_of;
use super::{adopt, name, required_option_duration, Close, Held};
use crate::args;
use crate::bound::{Args, Binder, Named, Returned};
use crate::error::{blame_redis, guarded, Boxed, Failure, Given};
use crate::js::{self, Js};
use crate::promise::{self, Done};

/// One JavaScript `RedisConcurrencyLimiter`.
struct Concurrency {
    /// Shared with its leases, which reject once it is closed.
    limiter: Arc<Held<RedisConcurrencyLimiter>>,
}

impl Close for Concurrency {
    fn close(&self) {
        self.limiter.take();
    }
}

/// One lease, and the limiter it came from.
struct Lease {
    of: Arc<Held<RedisConcurrencyLimiter>>,
    lease: ConcurrencyLease,
}

/// The object `redisConcurrencyCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisConcurrencyMethods {
    /// A Promise of the refusal's decision, or of a lease on `permits`.
    #[napi(ts_type = "(permits?: number | bigint) => Promise<unknown>")]
    pub try_acquire: (),
    /// A Promise of the decision `tryAcquire(permits)` would make, taking
    /// nothing.
    #[napi(ts_type = "(permits?: number | bigint) => Promise<unknown>")]
    pub peek: (),
    /// A Promise of whether any lease was held; deletes them all.
    #[napi(ts_type = "() => Promise<boolean>")]
    pub reset: (),
    /// A Promise of the permits the live leases hold.
    #[napi(ts_type = "() => Promise<number>")]
    pub held: (),
    /// Drops the limiter; later calls reject.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// The most permits held at once.
    #[napi(ts_type = "number")]
    pub limit: (),
    /// How long a lease lasts after it was acquired or renewed, in ms.
    #[napi(ts_type = "number")]
    pub lease_ttl_ms: (),
}

/// The object a lease is (see the module docs).
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisLeaseMethods {
    /// A Promise of `true` if this released the lease, `false` if it was
    /// released before or had expired.
    #[napi(ts_type = "() => Promise<boolean>")]
    pub release: (),
    /// A Promise of `true` if the lease now lasts the TTL from now, `false`
    /// if it was released or had expired.
    #[napi(ts_type = "() => Promise<boolean>")]
    pub renew: (),
    /// Its id in Redis.
    #[napi(ts_type = "string")]
    pub id: (),
    /// The permits it holds.
    #[napi(ts_type = "number")]
    pub permits: (),
    /// Whether Redis holds it (not a lease of `"failOpen"`).
    #[napi(ts_type = "boolean")]
    pub recorded: (),
    /// The admitting decision.
    #[napi(ts_type = "unknown")]
    pub decision: (),
}

fn promised(args: &Args, start: impl FnOnce(Done) -> Result<(), Failure>) -> Result<Returned, Boxed> {
    Ok(Returned::Value(promise::promise(args.env, start)?))
}

const METHODS: &[Named<Concurrency>] = &[
    (c"tryAcquire", 1, |c, args| {
        let of = Arc::clone(&c.limiter);
        promised(args, move |done| {
            let permits = args.passed(0).map_or(Ok(1), args::permits_or_one)?;
            let limiter = of.get()?;
            limiter.try_acquire_with(u64::from(permits), move |r| {
                done.answer(move |cx| match r? {
                    (decision, None) => cx.decision(&decision),
                    (decision, Some(lease)) => {
                        let id = js::string(cx.env, lease.id())?;
                        let (permits, recorded) = (lease.permits() as f64, lease.is_recorded());
                        let decision = cx.decision(&decision)?;
                        let binder = &mut Binder::new(cx.env, Arc::new(Lease { of, lease }))?;
                        binder
                            .methods(LEASE)?
                            .value(c"id", id)?
                            .number(c"permits", permits)?
                            .flag(c"recorded", recorded)?
                            .value(c"decision", decision)?;
                        Ok(binder.finish())
                    }
                })
            });
            Ok(())
        })
    }),
    (c"peek", 1, |c, args| {
        promised(args, |done| {
            let permits = args.passed(0).map_or(Ok(1), args::permits_or_one)?;
            c.limiter.get()?.peek_with(u64::from(permits), move |r| done.decision(r));
            Ok(())
        })
    }),
    (c"reset", 0, |c, args| {
        promised(args, |done| {
            c.limiter.get()?.reset_with(move |r| done.answer(move |cx| cx.boolean(r?)));
            Ok(())
        })
    }),
    (c"held", 0, |c, args| {
        promised(args, |done| {
            let limiter = c.limiter.get()?;
            RedisStore::spawn_with(async move { limiter.held_async().await }, move |r| {
                done.answer(move |cx| cx.number(r? as f64))
            });
            Ok(())
        })
    }),
    (c"close", 0, |c, _| {
        c.close();
        Ok(Returned::Undefined)
    }),
];

const LEASE: &[Named<Lease>] = &[
    (c"release", 0, |l, args| {
        promised(args, |done| {
            l.of.get()?.release_with(&l.lease, move |r| done.answer(move |cx| cx.boolean(r?)));
            Ok(())
        })
    }),
    (c"renew", 0, |l, args| {
        promised(args, |done| {
            l.of.get()?.renew_with(&l.lease, move |r| done.answer(move |cx| cx.boolean(r?)));
            Ok(())
        })
    }),
];

/// The unavailability policy named by `value` (`undefined`: `"error"`).
fn policy(value: Js) -> Result<WhenUnavailable, Failure> {
    const REQUIREMENT: &str = "must be \"error\", \"failClosed\" or \"failOpen\"";
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
        _ => Err(Failure::OutOfRange { argument: "whenUnavailable", value, requirement: REQUIREMENT }),
    }
}

/// Creates the shared concurrency limit `name` in `store`, of `limit`
/// permits held at once, each lease lasting the TTL (in milliseconds or
/// microseconds) after it was acquired or renewed, and returns its bound
/// functions.
#[napi(
    ts_args_type = "store: unknown, name: unknown, limit: unknown, leaseTtlMs: unknown, leaseTtlMicros: unknown, whenUnavailable: unknown",
    ts_return_type = "RedisConcurrencyMethods"
)]
pub fn redis_concurrency_create<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    name: Unknown<'_>,
    limit: Unknown<'_>,
    lease_ttl_ms: Unknown<'_>,
    lease_ttl_micros: Unknown<'_>,
    when_unavailable: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let name = self::name(js(name), "name")?;
        let limit_value = js(limit);
        let limit = args::count(limit_value, Argument::Limit, "limit")?;
        let ttl = required_option_duration(RedisOption::LeaseTtl, js(lease_ttl_ms), js(lease_ttl_micros))?;
        let policy = policy(js(when_unavailable))?;
        let limiter = blame_redis(
            RedisConcurrencyLimiter::new(&store.get()?, &name, limit, ttl),
            &[Given { argument: Argument::Limit, name: "limit", value: limit_value }],
        )?
        .when_unavailable(policy)
        .map_err(Failure::from)?;
        let target = Arc::new(Concurrency { limiter: Arc::new(Held::new(limiter, "this RedisConcurrencyLimiter")) });
        adopt(&store, &target);
        let binder = &mut Binder::new(env.raw(), target)?;
        binder.methods(METHODS)?.number(c"limit", limit as f64)?.number(c"leaseTtlMs", ttl.as_secs_f64() * 1e3)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
