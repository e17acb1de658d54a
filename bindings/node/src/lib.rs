//! # ratekeeper-node
//!
//! The native half of the npm package `ratekeeper` (`node/` at the root of
//! the repository), built with napi-rs. Creating a limiter returns an object
//! of native functions bound to it (`bound`); the package's JavaScript
//! classes (`node/lib/`) wrap them in JavaScript's idiom — camelCase,
//! options objects, Promises for anything that waits, timers instead of
//! blocked threads.
//!
//! Like every binding of the project it is thin: it converts arguments
//! (`args`), calls the `ratekeeper` crate and maps errors (`error`, the
//! one place where failures become JavaScript errors). It holds no
//! algorithm.
//!
//! | module | owns |
//! |---|---|
//! | `args` | argument checks and unit conversions shared by every class |
//! | `error` | failures → `RangeError`/`TypeError`/`Error` with a stable `code` (`failure`); arguments' JavaScript names (`names`); the panic boundary (`boundary`) |
//! | `bound` | native functions bound to one limiter: the call path, measured; the scratch words results come back in |
//! | `clock` | `ManualClock` and the `clock` option |
//! | `smooth` | Guava's `RateLimiter` |
//! | `spec` | the admission-style algorithms' names and options → `LimiterSpec` |
//! | `admission` | every admission-style algorithm (`AnyLimiter`) and the token bucket's reservations |
//! | `markers` | RFC 2697 and RFC 2698's three-colour markers |
//! | `concurrency` | the concurrency limiter (fixed, gradient, AIMD) |
//! | `cycle` | Resilience4j's cycle limiter (`AtomicRateLimiter`) |
//! | `load` | the load-driven limiters (BBR, Sentinel's system rule) and their load signals |
//! | `flow` | Sentinel's flow rule (`FlowController`) |
//! | `composite` | several limits, all or nothing |
//! | `keyed` | a limiter per key (strings or bytes), in bounded memory |
//! | `promise` | Promises settled from other threads (the Redis calls), without blocking or holding the event loop |
//! | `redis` | the distributed limiters of `ratekeeper-redis`: store, exact, leased and divided modes, membership, Guava shared |
//! | `headers` | the HTTP fields of decisions |
//! | `http` | HTTP middleware's core (`node/lib/http/`): limits text, each header style's fields, the client behind trusted proxies, the keyed limiter of limits text |
//! | `layout` | the words results and records are shared in with `node/lib`, laid out once and exported to it |
//! | `js` | raw JavaScript values for the above |
//!
//! A new algorithm is a module like `smooth` — a `#[napi]` create function,
//! its table of `bound::Method`s and, for a hot synchronous call, its
//! `bound::Hot` — plus a class in `node/lib/` like `rate-limiter.js`;
//! errors, options, clocks and waiting are shared. A new admission-style
//! algorithm (or a limiter built from one, such as a keyed limiter) needs
//! only its names in `spec`.

// napi-derive registers the exports only outside `cfg(test)`: in the unit
// tests everything they reach looks unused.
#![cfg_attr(test, allow(dead_code))]

mod admission;
mod args;
mod bound;
mod clock;
mod composite;
mod concurrency;
mod cycle;
mod error;
mod flow;
mod headers;
mod http;
mod js;
mod keyed;
mod layout;
mod load;
mod markers;
mod promise;
mod redis;
mod smooth;
mod spec;

/// mimalloc rather than glibc's malloc for the module's Rust allocations.
/// The local limiters' hot paths allocate nothing; the Redis path allocates
/// on one thread and frees on another (a check's key and task made here,
/// dropped on the crate's runtime thread) and allocates per request on that
/// thread (commands, replies, timers): there glibc's arenas cost about 20%
/// of the runtime thread's CPU under load, and mimalloc cut its time per
/// decision from about 9.2 to 7.5 µs (benches/redis/node, 32 in flight).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;

/// Stable `code` values of the errors ratekeeper throws, for JavaScript.
#[derive(Debug)]
#[napi(object, object_from_js = false)]
pub struct ErrorCodes {
    /// A `RangeError`: a value outside what the operation accepts.
    #[napi(ts_type = "'ERR_RATEKEEPER_INVALID_ARGUMENT'")]
    pub invalid_argument: String,
    /// A `TypeError`: a value of the wrong type.
    #[napi(ts_type = "'ERR_RATEKEEPER_INVALID_ARG_TYPE'")]
    pub invalid_arg_type: String,
    /// A `TypeError`: an unknown option, or options that exclude each other.
    #[napi(ts_type = "'ERR_RATEKEEPER_INVALID_OPTION'")]
    pub invalid_option: String,
    /// An `Error`: a bug in ratekeeper (a caught panic).
    #[napi(ts_type = "'ERR_RATEKEEPER_INTERNAL'")]
    pub internal: String,
    /// An `Error`: a keyed limiter's new key refused at its bound (`tryCheck`).
    #[napi(ts_type = "'ERR_RATEKEEPER_AT_CAPACITY'")]
    pub at_capacity: String,
    /// An `Error`: a call on a closed Redis store, limiter or membership.
    #[napi(ts_type = "'ERR_RATEKEEPER_CLOSED'")]
    pub closed: String,
    /// An `Error`: Redis cannot be reached (down, refused, dropped), or
    /// failed moments ago and is not tried again until the retry interval.
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_UNAVAILABLE'")]
    pub redis_unavailable: String,
    /// An `Error`: Redis did not answer within the store's timeout.
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_TIMEOUT'")]
    pub redis_timeout: String,
    /// An `Error`: Redis answered with an error.
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_ERROR'")]
    pub redis_error: String,
    /// An `Error`: a reply this client does not understand.
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_PROTOCOL'")]
    pub redis_protocol: String,
    /// An `Error`: an algorithm or mode that does not run in Redis.
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_UNSUPPORTED'")]
    pub redis_unsupported: String,
    /// An `Error`: Redis refused the credentials (`WRONGPASS`, `NOAUTH`) or
    /// an ACL user's command (`NOPERM`).
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_AUTH'")]
    pub redis_auth: String,
    /// An `Error`: TLS could not be set up (a certificate not trusted, for
    /// another name, expired, or refused).
    #[napi(ts_type = "'ERR_RATEKEEPER_REDIS_TLS'")]
    pub redis_tls: String,
}

/// The `code` of each kind of error (see `error`).
#[napi]
pub fn error_codes() -> ErrorCodes {
    ErrorCodes {
        invalid_argument: error::INVALID_ARGUMENT.to_owned(),
        invalid_arg_type: error::INVALID_ARG_TYPE.to_owned(),
        invalid_option: error::INVALID_OPTION.to_owned(),
        internal: error::INTERNAL.to_owned(),
        at_capacity: error::AT_CAPACITY.to_owned(),
        closed: error::CLOSED.to_owned(),
        redis_unavailable: error::REDIS_UNAVAILABLE.to_owned(),
        redis_timeout: error::REDIS_TIMEOUT.to_owned(),
        redis_error: error::REDIS_ERROR.to_owned(),
        redis_protocol: error::REDIS_PROTOCOL.to_owned(),
        redis_unsupported: error::REDIS_UNSUPPORTED.to_owned(),
        redis_auth: error::REDIS_AUTH.to_owned(),
        redis_tls: error::REDIS_TLS.to_owned(),
    }
}

/// The version this module was built from: the workspace's, which the npm
/// package and its platform packages carry too. The package's `version()`
/// returns it: the native module is a separate package, so this is the
/// version of the code that runs, and a mismatch with
/// `ratekeeper/package.json` is a broken install.
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Panics inside the panic boundary, so that the tests can show that a Rust
/// panic reaches JavaScript as an `Error` with code
/// `ERR_RATEKEEPER_INTERNAL`, never as a crash.
#[napi]
pub fn panic_for_tests(env: &Env) -> napi::Result<()> {
    error::guarded(env, || -> Result<(), error::Failure> { panic!("deliberate panic for the tests") })
}

/// Throws the error for a bad options object — not an object, or an
/// unknown key — and returns when there is none. The JavaScript classes read
/// their options themselves and call this only when their quick look finds
/// something amiss, so that the error is made in `error` like every other.
#[napi(ts_args_type = "options: unknown, known: string[]")]
pub fn check_options(env: &Env, options: Unknown<'_>, known: Vec<String>) -> napi::Result<()> {
    error::guarded(env, || args::check_options(js::Js::new(env.raw(), options.raw()), &known))
}

/// Throws the `TypeError` for a value of the wrong type that the package's
/// JavaScript found (an item that is not a `Decision`, say): `argument`
/// is its name, `expected` completes "must be …". So that this error too
/// is made in `error`.
#[napi(ts_args_type = "argument: string, value: unknown, expected: string", ts_return_type = "never")]
pub fn throw_wrong_type(env: &Env, argument: String, value: Unknown<'_>, expected: String) -> napi::Result<()> {
    let value = js::Js::new(env.raw(), value.raw());
    error::guarded(env, || Err(error::Failure::WrongTypeNamed { argument, value, expected }))
}

/// The largest `limit` of a `SlidingLog` (its log is allocated up front).
#[napi]
pub const MAX_SLIDING_LOG_LIMIT: u32 = ratekeeper::MAX_SLIDING_LOG_LIMIT as u32;
