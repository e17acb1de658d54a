//! The one place where failures become JavaScript errors.
//!
//! Every error the library can return ([`ratekeeper::Error`], each
//! [`Argument`](ratekeeper::Argument)), every argument the binding itself rejects, and every Rust
//! panic (caught at the boundary of each native call: a panic must never
//! unwind into Node) is a [`Failure`], and [`throw`] turns it into the error
//! the JavaScript caller sees:
//!
//! | failure | class | `code` |
//! |---|---|---|
//! | a value outside its domain (`NaN` rate, 0 permits, 1.5 permits) | `RangeError` | `ERR_RATEKEEPER_INVALID_ARGUMENT` |
//! | a value of the wrong type (a string, a bigint, `null`) | `TypeError` | `ERR_RATEKEEPER_INVALID_ARG_TYPE` |
//! | an unknown option, or options that exclude each other | `TypeError` | `ERR_RATEKEEPER_INVALID_OPTION` |
//! | a Rust panic or a failing Node-API call: a bug | `Error` | `ERR_RATEKEEPER_INTERNAL` |
//! | a keyed limiter's new key refused at its bound (`tryCheck`) | `Error` | `ERR_RATEKEEPER_AT_CAPACITY` |
//! | a call on a closed Redis store, limiter or membership | `Error` | `ERR_RATEKEEPER_CLOSED` |
//! | Redis cannot be reached (down, refused, dropped, failed moments ago) | `Error` | `ERR_RATEKEEPER_REDIS_UNAVAILABLE` |
//! | Redis did not answer within the store's timeout | `Error` | `ERR_RATEKEEPER_REDIS_TIMEOUT` |
//! | Redis answered with an error (a script's, `NOAUTH`, `OOM`, …) | `Error` | `ERR_RATEKEEPER_REDIS_ERROR` |
//! | a reply this client does not understand | `Error` | `ERR_RATEKEEPER_REDIS_PROTOCOL` |
//! | an algorithm or mode that does not run in Redis | `Error` | `ERR_RATEKEEPER_REDIS_UNSUPPORTED` |
//! | Redis refused the credentials or an ACL user's command (`WRONGPASS`, `NOAUTH`, `NOPERM`) | `Error` | `ERR_RATEKEEPER_REDIS_AUTH` |
//! | TLS could not be set up (a certificate not trusted, for another name, expired, refused) | `Error` | `ERR_RATEKEEPER_REDIS_TLS` |
//!
//! Argument errors also carry `argument` (the JavaScript name, camelCase) and
//! `value` (the value given), and their message names both, as Node's own
//! errors do. The Redis errors are never argument errors: a bad argument to
//! a Redis limiter is the same `RangeError` or `TypeError` as for a local one.
//!
//! Not here: a wait aborted by its `signal` rejects with the platform's
//! `AbortError` (`code` `ABORT_ERR`, the signal's reason as `cause`), made
//! in node/lib/sleep.js as Node's own waits make it: it is not a
//! ratekeeper error, and it carries a JavaScript value (the reason) that
//! never crosses into Rust.
//!
//! A failure is thrown ([`throw`]) by a synchronous call, or becomes the
//! rejection of a Promise ([`value`]) — which is how the Redis limiters'
//! failures arrive, on the JavaScript thread, after the call has returned.
//!
//! | module | owns |
//! |---|---|
//! | [`failure`] | [`Failure`], why a call failed; the `code`s; each failure's class, code and message |
//! | [`names`] | arguments by their JavaScript names and requirements; [`blame`], which names the caller's argument |
//! | [`boundary`](mod@boundary) | the panic guard of every native call; failures thrown, or made a Promise's rejection value |
//!
//! The rest of the binding uses them through this module (`crate::error::…`).

mod boundary;
mod failure;
mod names;

pub(crate) use boundary::{boundary, guarded, throw, value};
pub(crate) use failure::{
    Boxed, Failure, AT_CAPACITY, CLOSED, INTERNAL, INVALID_ARGUMENT, INVALID_ARG_TYPE, INVALID_OPTION, REDIS_ERROR,
    REDIS_PROTOCOL, REDIS_TIMEOUT, REDIS_UNAVAILABLE, REDIS_UNSUPPORTED,
};
pub(crate) use failure::{REDIS_AUTH, REDIS_TLS};
pub(crate) use names::{
    blame, blame_later, blame_redis, camel_case, redis_option_names, requirement, Given, Kept, PERMITS_REQUIREMENT,
};
