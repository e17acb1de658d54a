//! The admission-style limiters in Redis: exact mode (`RedisLimiter`, every
//! decision one script run, with the unavailability policy), leased mode
//! (`RedisLeasedLimiter`) and divided mode (`RedisDividedLimiter`). Limits
//! are given as a composite's parts are (`spec::part`); the crate checks
//! them exactly as the local limiters do.
//!
//! Exact and leased decisions are Promises of a `Decision`, settled at once
//! when no round trip is needed (a remembered refusal, a lease), otherwise
//! from the crate's runtime thread: an exact-mode check goes with the other
//! checks of its turn of the event loop (`batch`), a leased one through
//! the crate's `check_with`. A divided-mode decision never
//! waits for Redis, so it is synchronous, like a local limiter's.
//!
//! Keys are a keyed limiter's (`args::with_key`: a string's UTF-8, or a
//! `Uint8Array`'s bytes), of at most `maxKeyBytes` bytes (256 unless
//! given); the crate refuses a longer one before anything is sent.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyCore, Argument, LimiterSpec};
use ratekeeper_redis::{RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter, WhenUnavailable};

use super::batch;
use super::membership::membership_of;
use super::store::store_of;
use super::{adopt, Close, Held, Store};
use crate::args;
use crate::bound::{Args, Binder, Named, Returned, Scratch, DECISION_WORDS};
use crate::error::{blame_later, blame_redis, guarded, Boxed, Failure, Given, Kept};
use crate::js::{self, Js, Kind};
use crate::keyed;
use crate::promise::{self, Answer, Done};
use crate::spec;

/// The limit a constructor was given (an options object with
/// `algorithm`), checked as a local limiter's.
fn limit(value: Js) -> Result<LimiterSpec, Failure> {
    let (algorithm, values) = spec::part(value, "limit")?;
    Ok(spec::build(algorithm, &values, AnyCore::new)?.0)
}

/// A limiter's or group's name: any string (the crate escapes it).
fn name(value: Js, argument: &'static str) -> Result<String, Failure> {
    value.string().ok_or(Failure::WrongType { argument, value, expected: "a string" })
}

/// A Promise of the decision for the key and cost in `args`, which `check`
/// arranges through one of the crate's callback forms.
fn decide<L: Clone>(
    args: &Args,
    held: &Held<L>,
    check: impl FnOnce(&L, Vec<u8>, u64, Done),
) -> Result<Returned, Boxed> {
    let promise = promise::promise(args.env, |done| {
        let key = args::with_key(args.get(0), <[u8]>::to_vec)?;
        let cost = args::cost_or_one(args.passed(1))?;
        check(&held.get()?, key, cost, done);
        Ok(())
    })?;
    Ok(Returned::Value(promise))
}

// ---------------------------------------------------------------------------
// Exact mode

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

// ---------------------------------------------------------------------------
// Leased mode

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

// ---------------------------------------------------------------------------
// Divided mode

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
        let (ttl, ttl_given) = args::required_duration(
            js(heartbeat_ttl_ms),
            js(heartbeat_ttl_micros),
            ("heartbeatTtlMs", "heartbeatTtlMicros"),
            Argument::Ttl,
        )?;
        let (max_keys, keys_given) = keyed::max_keys(js(max_keys))?;
        let bound = args::max_key_bytes(js(max_key_bytes))?;
        let kept: Vec<Kept> = [Kept::keep(ttl_given), Kept::keep(keys_given)].into_iter().flatten().collect();
        let ttl = Duration::from_micros(u64::try_from(ttl).unwrap_or(0));
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
