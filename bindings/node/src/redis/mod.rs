//! The distributed limiters of `ratekeeper-redis` for JavaScript: the
//! store, exact mode, leased mode, divided mode, membership, Guava's
//! limiter shared through Redis, and the concurrency limit shared as
//! leases. Each `…Create`/`…Connect` function returns (or resolves to) an
//! object of bound functions (see `bound`), which the classes of
//! `node/lib/redis.js` wrap.
//!
//! Nothing here waits on the JavaScript thread: a call that needs Redis
//! returns a Promise and hands its [`Done`](crate::promise::Done) to the
//! crate's callback form (`check_with`, `reserve_with`, …), or — for the
//! crate's blocking-only calls (connecting, joining a group) — runs on
//! libuv's thread pool (see `promise`). Errors are the crate's, mapped in
//! `error` (stable codes `ERR_RATEKEEPER_REDIS_…`, distinct from the
//! argument errors every limiter shares). The options only these limiters
//! take (a store's timeouts, a heartbeat or idle TTL) are checked by the
//! crate ([`option_duration`]) and refused as any argument is.
//!
//! ## Closing
//!
//! Every object here can be closed (`close()`), which drops its hold on
//! the crate's object at once (later calls reject with
//! `ERR_RATEKEEPER_CLOSED`); otherwise it is dropped when JavaScript
//! collects it. Closing a store closes every limiter and membership made
//! from it, so that the connection itself closes (the crate keeps it while
//! any of them holds it). Nothing here keeps the event loop alive: the
//! connection is driven by the crate's own thread, and answers come back
//! through an unreferenced thread-safe function (see `promise`).
//!
//! | module | owns |
//! |---|---|
//! | `store` | `RedisStore`: connecting, options, closing |
//! | `exact` | exact mode (`RedisLimiter`), with its unavailability policy |
//! | `composite` | several limits of one key, all or nothing (`RedisCompositeLimiter`) |
//! | `leased` | leased mode (`RedisLeasedLimiter`) |
//! | `divided` | divided mode (`RedisDividedLimiter`) |
//! | `batch` | the exact-mode checks of one turn of the event loop, sent together |
//! | `pipe` | a store's own socket on the JavaScript thread, for those checks |
//! | `membership` | `Membership` |
//! | `smooth` | Guava's limiter shared through Redis (`RedisRateLimiter`) |
//! | `concurrency` | the concurrency limit shared as leases (`RedisConcurrencyLimiter`) |

mod batch;
mod composite;
mod concurrency;
mod divided;
mod exact;
mod leased;
mod membership;
mod pipe;
mod smooth;
mod store;

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use ratekeeper::{AnyCore, LimiterSpec};
use ratekeeper_redis::RedisOption;

use crate::args::{self, Duration as Given};
use crate::bound::{Args, Returned};
use crate::error::{redis_option_names, Boxed, Failure};
use crate::js::Js;
use crate::promise::{self, Done};
use crate::spec;

pub(crate) use store::Store;

/// What a store closes when it is closed: the limiters and memberships
/// made from it.
pub(crate) trait Close: Send + Sync {
    /// Drops the hold on the crate's object; later calls fail.
    fn close(&self);
}

/// The crate's object of one JavaScript object, until it is closed.
pub(crate) struct Held<T> {
    inner: Mutex<Option<T>>,
    /// "this RedisLimiter", for the error after closing.
    what: &'static str,
}

impl<T: Clone> Held<T> {
    pub(crate) fn new(inner: T, what: &'static str) -> Self {
        Held { inner: Mutex::new(Some(inner)), what }
    }

    /// A clone of the object (they are handles), or `Closed`.
    pub(crate) fn get(&self) -> Result<T, Failure> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).clone().ok_or(Failure::Closed(self.what))
    }

    /// Drops the object.
    pub(crate) fn take(&self) -> Option<T> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// Registers `child` with its store, so that closing the store closes it.
pub(crate) fn adopt<C: Close + 'static>(store: &Store, child: &Arc<C>) {
    let weak: Weak<dyn Close> = Arc::downgrade(child) as Weak<dyn Close>;
    store.adopt(weak);
}

/// The limit a constructor was given (an options object with
/// `algorithm`), checked as a local limiter's.
pub(super) fn limit(value: Js) -> Result<LimiterSpec, Failure> {
    let (algorithm, values) = spec::part(value, "limit")?;
    Ok(spec::build(algorithm, &values, AnyCore::new)?.0)
}

/// A limiter's or group's name: any string (the crate escapes it).
pub(super) fn name(value: Js, argument: &'static str) -> Result<String, Failure> {
    value.string().ok_or(Failure::WrongType { argument, value, expected: "a string" })
}

/// A Promise of the decision for the key and cost in `args`, which `check`
/// arranges through one of the crate's callback forms.
pub(super) fn decide<L: Clone>(
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

/// A Promise of whether a key held a state, for the key in `args`, which
/// `remove` deletes through one of the crate's callback forms.
pub(super) fn forget<L: Clone>(
    args: &Args,
    held: &Held<L>,
    remove: impl FnOnce(&L, Vec<u8>, Done),
) -> Result<Returned, Boxed> {
    let promise = promise::promise(args.env, |done| {
        let key = args::with_key(args.get(0), <[u8]>::to_vec)?;
        remove(&held.get()?, key, done);
        Ok(())
    })?;
    Ok(Returned::Value(promise))
}

/// An option only a Redis limiter takes (`option`: a store's timeout, a
/// heartbeat or idle TTL), given in milliseconds (`timeoutMs`) or in exact
/// microseconds (`timeoutMicros`: [`redis_option_names`] spells them), one
/// or neither (`None`): converted here — the
/// milliseconds by the library's rule for durations, rounded to the
/// nearest microsecond, `NaN`, an infinity or a negative value being none
/// — and checked by the crate, whose refusal is a `RangeError` naming the
/// option and showing the value as the caller gave them, with the crate's
/// requirement.
pub(super) fn option_duration(option: RedisOption, ms: Js, micros: Js) -> Result<Option<Duration>, Failure> {
    let names = redis_option_names(option);
    let (argument, value, whole) = match args::duration(ms, micros, names)? {
        None => return Ok(None),
        Some(Given::Millis(value, x)) => (names.0, value, ratekeeper::micros_from_millis(x).filter(|_| x >= 0.0)),
        Some(Given::Micros(m)) => (names.1, micros, Some(m)),
    };
    match whole.map(|m| option.from_micros(m)) {
        Some(Ok(duration)) => Ok(Some(duration)),
        Some(Err(_)) | None => Err(Failure::OutOfRange { argument, value, requirement: option.requirement() }),
    }
}

/// [`option_duration`] for an option the caller must give.
pub(super) fn required_option_duration(option: RedisOption, ms: Js, micros: Js) -> Result<Duration, Failure> {
    option_duration(option, ms, micros)?.ok_or(Failure::WrongType {
        argument: redis_option_names(option).0,
        value: ms,
        expected: "a number",
    })
}
