//! `KeyedLimiter`: one admission-style limiter per key, in bounded memory
//! — [`ratekeeper::AnyKeyedLimiter`] keyed by bytes. `keyedCreate` builds
//! one from a limit (an options object with `algorithm`, as a composite's
//! part) and its options, and returns its bound functions, which
//! `node/lib/keyed.js` wraps.
//!
//! Keys are strings (their UTF-8) or `Uint8Array`s (`Buffer`s; their
//! bytes), read straight into the native call's frame (`args::with_key`):
//! `check(key, cost)` and `tryAcquire(key, cost)` are hot calls with a
//! callback of their own (`bound::HotKeyed`), no allocation for a key of
//! up to 251 bytes, and the decision goes to the scratch words as for every
//! other limiter.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, AnyCore, AnyKeyedLimiter, Argument, KeyedOptions, WhenFull};

use crate::args;
use crate::bound::{Args, Binder, HotKeyed, Named, Returned, Scratch, DECISION_WORDS};
use crate::clock;
use crate::error::{blame, camel_case, guarded, Boxed, Failure, Given};
use crate::js::Js;
use crate::spec;

/// One JavaScript keyed limiter.
struct Keyed {
    limiter: AnyKeyedLimiter,
    scratch: Scratch,
}

/// The object `keyedCreate` returns: functions bound to one keyed limiter.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct KeyedMethods {
    /// Admits `cost` units for `key` if its limiter allows; the decision to
    /// `scratch`, `allowed` returned.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub check: (),
    /// `check(key, cost).allowed`, writing no decision.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub try_acquire: (),
    /// `check`, throwing `ERR_RATEKEEPER_AT_CAPACITY` (the refusal in
    /// `scratch`) when a new key is refused at the bound.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub try_check: (),
    /// The decision `check` would make, consuming nothing (to `scratch`).
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub peek: (),
    /// `peek`, throwing `ERR_RATEKEEPER_AT_CAPACITY` as `tryCheck` does.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub try_peek: (),
    /// Gives back `cost` units admitted for `key` that should not count;
    /// whether the key was held (`AnyKeyedLimiter::refund`).
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub refund: (),
    /// Forgets `key`; whether it was held.
    #[napi(ts_type = "(key: string | Uint8Array) => boolean")]
    pub remove: (),
    /// Drops every key whose state is full; how many.
    #[napi(ts_type = "() => number")]
    pub evict_full: (),
    /// How many keys are held.
    #[napi(ts_type = "() => number")]
    pub len: (),
    /// New keys refused at the bound so far.
    #[napi(ts_type = "() => number")]
    pub refused_new_keys: (),
    /// Keys forgotten to make room (`evictSoonestFull`) so far.
    #[napi(ts_type = "() => number")]
    pub forced_evictions: (),
    /// The bound.
    #[napi(ts_type = "number")]
    pub max_keys: (),
    /// The longest key taken, in bytes.
    #[napi(ts_type = "number")]
    pub max_key_bytes: (),
    /// The most bytes the limiter can hold.
    #[napi(ts_type = "number")]
    pub max_bytes: (),
    /// The policy at the bound, camelCase.
    #[napi(ts_type = "'refuseNewKeys' | 'evictSoonestFull'")]
    pub when_full: (),
    /// The algorithm, camelCase.
    #[napi(ts_type = "string")]
    pub algorithm: (),
    /// The decision record (see `bound::DECISION_WORDS`).
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

impl HotKeyed for Keyed {
    /// 0: `check(key, cost)`, 1: `tryAcquire(key, cost)`.
    #[inline]
    fn hot<const W: u8>(&self, key: &[u8], cost: u64) -> Result<bool, Boxed> {
        let decision = self.limiter.check(key, cost)?;
        if W == 0 {
            self.scratch.write_decision(0, &decision);
        }
        Ok(decision.allowed)
    }
}

/// Runs `f` on the key and cost of `args` (a key, then an optional cost).
fn keyed<R>(args: &Args, f: impl FnOnce(&[u8], u64) -> R) -> Result<R, Failure> {
    let cost = args::cost_or_one(args.passed(1))?;
    args::with_key(args.get(0), |key| f(key, cost))
}

/// A decision or a refusal at the bound: written to `scratch` either way.
fn written(k: &Keyed, outcome: Result<ratekeeper::Decision, ratekeeper::AtCapacity>) -> Result<Returned, Boxed> {
    match outcome {
        Ok(decision) => {
            k.scratch.write_decision(0, &decision);
            Ok(Returned::Bool(decision.allowed))
        }
        Err(full) => {
            k.scratch.write_decision(0, &full.decision());
            Err(Failure::AtCapacity(full).into())
        }
    }
}

const METHODS: &[Named<Keyed>] = &[
    (c"tryCheck", 2, |k, args| written(k, keyed(args, |key, cost| k.limiter.try_check(key, cost))??)),
    (c"peek", 2, |k, args| written(k, Ok(keyed(args, |key, cost| k.limiter.peek(key, cost))??))),
    (c"tryPeek", 2, |k, args| written(k, keyed(args, |key, cost| k.limiter.try_peek(key, cost))??)),
    (c"refund", 2, |k, args| Ok(Returned::Bool(keyed(args, |key, cost| k.limiter.refund(key, cost))??))),
    (c"remove", 1, |k, args| Ok(Returned::Bool(args::with_key(args.get(0), |key| k.limiter.remove(key))??))),
    (c"evictFull", 0, |k, _| Ok(Returned::Number(k.limiter.evict_full() as f64))),
    (c"len", 0, |k, _| Ok(Returned::Number(k.limiter.len() as f64))),
    (c"refusedNewKeys", 0, |k, _| Ok(Returned::Number(k.limiter.refused_new_keys() as f64))),
    (c"forcedEvictions", 0, |k, _| Ok(Returned::Number(k.limiter.forced_evictions() as f64))),
];

/// Every policy at the bound.
const POLICIES: [WhenFull; 2] = [WhenFull::RefuseNewKeys, WhenFull::EvictSoonestFull];

/// The policy named by `value` (the library's name, camelCase), `undefined`
/// meaning the default.
pub(crate) fn when_full(value: Js) -> Result<WhenFull, Failure> {
    if value.is_undefined() {
        return Ok(WhenFull::default());
    }
    let Some(name) = value.string() else {
        return Err(Failure::WrongType { argument: "whenFull", value, expected: "a string" });
    };
    POLICIES.into_iter().find(|p| camel_case(p.name()) == name).ok_or(Failure::OutOfRange {
        argument: "whenFull",
        value,
        requirement: "must be \"refuseNewKeys\" or \"evictSoonestFull\"",
    })
}

/// `maxKeys`: an integer number or a bigint, checked by the library.
pub(crate) fn max_keys(value: Js) -> Result<(usize, Given), Failure> {
    let given = Given { argument: Argument::MaxKeys, name: "maxKeys", value };
    let count = args::count(value, Argument::MaxKeys, "maxKeys")?;
    // Beyond `usize` is beyond the library's bound too.
    let max_keys = usize::try_from(count).unwrap_or(usize::MAX);
    Ok((max_keys, given))
}

/// Creates a keyed limiter of `limit` (an options object with `algorithm`)
/// and returns its bound functions.
#[napi(
    ts_args_type = "limit: unknown, maxKeys: unknown, whenFull: unknown, maxKeyBytes: unknown, clock: unknown",
    ts_return_type = "KeyedMethods"
)]
pub fn keyed_create<'env>(
    env: &'env Env,
    limit: Unknown<'_>,
    max_keys: Unknown<'_>,
    when_full: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let (algorithm, values) = spec::part(js(limit), "limit")?;
        let (spec, _) = spec::build(algorithm, &values, AnyCore::new)?;
        let (max_keys, given) = self::max_keys(js(max_keys))?;
        let policy = self::when_full(js(when_full))?;
        let clock: AnyClock = clock::from_option(js(clock))?;
        let options =
            KeyedOptions::new(max_keys).when_full(policy).max_key_bytes(args::max_key_bytes(js(max_key_bytes))?);
        let limiter = blame(AnyKeyedLimiter::new(&spec, options, clock), &[given])?;
        let bound = limiter.max_keys();
        let (key_bytes, max_bytes) = (limiter.max_key_bytes(), limiter.max_bytes());
        let keyed = Arc::new(Keyed { limiter, scratch: Scratch::new(DECISION_WORDS) });
        let policy_name = crate::js::string(env.raw(), &camel_case(policy.name()))?;
        let algorithm_name = crate::js::string(env.raw(), spec::name(algorithm))?;
        let binder = &mut Binder::new(env.raw(), keyed)?;
        binder
            .methods(METHODS)?
            .hot_keyed::<0>(c"check")?
            .hot_keyed::<1>(c"tryAcquire")?
            .scratch(c"scratch", |k| &k.scratch)?
            .number(c"maxKeys", bound as f64)?
            .number(c"maxKeyBytes", key_bytes as f64)?
            .number(c"maxBytes", max_bytes as f64)?
            .value(c"whenFull", policy_name)?
            .value(c"algorithm", algorithm_name)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
