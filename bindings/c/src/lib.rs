//! # ratekeeper's C ABI
//!
//! This crate is `libratekeeper.so` and `libratekeeper.a`; its exported
//! `rk_*` functions are declared in `include/ratekeeper.h`, which cbindgen
//! generates from these sources (`bindings/c/cbindgen.toml`; the header is
//! committed and CI fails when regenerating it changes it). It owns the
//! conventions of the C API and nothing else: every operation converts its
//! arguments, calls the std crate (`ratekeeper`) and maps its errors.
//!
//! ## Conventions (after rustls-ffi)
//!
//! * One prefix, `rk_`. Handles are opaque structs behind pointers, made by
//!   `rk_<type>_new[_<variant>]` and released by `rk_<type>_free` (freeing
//!   `NULL` does nothing); operations are `rk_<type>_<operation>`.
//! * Every admission-style algorithm is one handle, [`rk_limiter`] (the std
//!   layer's `AnyLimiter`), made from an [`rk_limiter_spec`] or by a typed
//!   constructor, answering with an [`rk_decision`]; the few operations only
//!   one algorithm has are named after it (`rk_token_bucket_reserve`) and
//!   return `RK_WRONG_ALGORITHM` on another's handle. A keyed limiter (one
//!   limiter per key from a template) fits the same scheme: a handle made
//!   from an `rk_limiter_spec`, checked with a key and a cost.
//! * Handles that stand for something held — a concurrency limiter's
//!   permit, a token bucket's reservation — are heap handles holding a
//!   reference to their limiter, so forgetting one is a leak the tools
//!   report, and they stay valid after the limiter's handle is freed.
//! * Every function that can fail returns an [`rk_status`]; results go to
//!   out-parameters, last in the argument list, written only on `RK_OK`.
//!   `NULL` where a pointer is required is `RK_NULL_POINTER`, checked before
//!   anything happens.
//! * Every body runs inside a panic boundary ([`boundary::guard`]): a panic
//!   becomes `RK_PANIC`, never an unwind into C.
//! * Which argument was wrong, and why: [`rk_last_error_argument`] and
//!   [`rk_last_error_message`], per thread, like `errno` — kept in
//!   fixed-size thread-local buffers, so reporting an error allocates
//!   nothing and leaves nothing to free.
//! * Handles are safe to use from many threads at once; only `_free` must
//!   not race with other calls on the same handle.
//! * Keys are byte strings (`key`, `key_len`); the Redis limiters' must be
//!   UTF-8, as every language's strings, so that C shares a key with them.
//! * The distributed limiters (`rk_redis_*`, module [`redis`]) block for
//!   at most their store's timeout, have `_async` forms that call a C
//!   callback for event loops, and fail with statuses of their own
//!   (`RK_UNAVAILABLE`, `RK_TIMEOUT`, …), never with an argument's.
#![allow(non_camel_case_types)] // The C names: `rk_status`, `rk_rate_limiter`.

// In this order in the header (cbindgen follows the modules as declared;
// the blank lines keep rustfmt from sorting them).
pub mod version;

pub mod status;

pub mod boundary;
pub mod failure;

pub mod decision;
pub mod spec;

pub mod manual_clock;
pub mod rate_limiter;

pub mod limiter;
pub mod token_bucket;

pub mod keyed;

pub mod composite;
pub mod concurrency;
pub mod markers;

pub mod load;

pub mod cycle;

pub mod flow;

pub mod http;

pub mod redis;

mod text;

pub use boundary::{rk_last_error_argument, rk_last_error_message};
pub use composite::rk_composite_limiter;
pub use concurrency::{rk_concurrency_limiter, rk_permit};
pub use cycle::{rk_cycle_config, rk_cycle_limiter, rk_cycle_metrics};
pub use decision::rk_decision;
pub use flow::{rk_flow_controller, rk_flow_permit, rk_flow_rule, rk_flow_stats};
pub use keyed::{rk_keyed_limiter, rk_keyed_options, rk_keyed_stats};
pub use limiter::rk_limiter;
pub use load::{rk_bbr, rk_bbr_permit, rk_load, rk_system_guard, rk_system_permit};
pub use manual_clock::rk_manual_clock;
pub use markers::{rk_srtcm, rk_trtcm};
pub use rate_limiter::rk_rate_limiter;
pub use redis::composite::rk_redis_composite_limiter;
pub use redis::concurrency::{rk_redis_concurrency_lease, rk_redis_concurrency_limiter};
pub use redis::divided::rk_redis_divided_limiter;
pub use redis::exact::rk_redis_limiter;
pub use redis::leased::rk_redis_leased_limiter;
pub use redis::membership::rk_redis_membership;
pub use redis::smooth::rk_redis_rate_limiter;
pub use redis::store::{rk_redis_store, rk_redis_store_options};
pub use spec::rk_limiter_spec;
pub use status::rk_status;
pub use token_bucket::rk_reservation;
pub use version::rk_version;
