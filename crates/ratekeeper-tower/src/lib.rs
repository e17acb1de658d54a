//! # ratekeeper-tower
//!
//! ratekeeper's keyed limiters as a [`tower`](https://docs.rs/tower)
//! layer for HTTP services — axum, hyper, tonic: anything that is a
//! `Service<http::Request<B>>`.
//!
//! [`RateLimitLayer`] checks each request with a keyed limiter
//! ([`KeyedCheck`]: ratekeeper's in-process ones — built from limits text
//! such as `"100/minute; 1000/day"` by
//! [`limiter_from_text`](ratekeeper::http::limiter_from_text), or an
//! [`AnyKeyedLimiter`](ratekeeper::AnyKeyedLimiter) — or with
//! the `redis` feature a limiter shared through Redis — several limits as
//! one `RedisCompositeLimiter`, all or nothing in one round trip,
//! `redis_limiter_from_text`) under the key an
//! extractor gives ([`KeyExtractor`]: the client's address by default,
//! [`ClientAddress`]; a header, [`HeaderKey`]; or any closure
//! `Fn(&Request<B>) -> Option<K>`), and
//!
//! * refuses with **429 Too Many Requests** and `Retry-After` (whole
//!   seconds, rounded up) — the body built by a hook if you give one
//!   ([`RateLimitLayer::refusal`]);
//! * sends the **rate-limit fields** on admitted responses too: the IETF
//!   draft's `RateLimit` and `RateLimit-Policy` in the version chosen
//!   ([`HeaderStyle`]: draft-8 by default, draft-7, draft-6, none) and the
//!   legacy `X-RateLimit-*` on request — written by
//!   [`ratekeeper::http::response_fields`], as the Python and Node
//!   middleware write them;
//! * charges a cost per request (a number, or a closure);
//! * lets exempt methods and path prefixes through unchecked — though the
//!   router is the better place to choose routes: apply the layer with
//!   axum's `route_layer` or to a nested router, and the routes outside it
//!   are never checked at all.
//!
//! An in-process limiter answers within `call`: the inner service is called
//! at once, and no future is boxed. A Redis limiter's check is a round
//! trip: the request waits for it without blocking a thread, and the inner
//! service is called when it admits.
//!
//! ```
//! use std::net::SocketAddr;
//! use axum::{routing::get, Router};
//! use ratekeeper::http::{limiter_from_text, TrustedProxies};
//! use ratekeeper::{Algorithm, AnyClock, KeyedOptions};
//! use ratekeeper_tower::{ClientAddress, RateLimitLayer};
//!
//! // 100 requests a minute and 1000 a day per client (both fields sent),
//! // for up to 100 000 clients at once.
//! let limiter = limiter_from_text("100/minute; 1000/day", Algorithm::SlidingWindowCounter,
//!     KeyedOptions::new(100_000), AnyClock::default())?;
//! // Behind a reverse proxy on this host: its X-Forwarded-For names the client.
//! let key = ClientAddress::trusting(TrustedProxies::parse(["loopback"])?);
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "hello" }))
//!     .layer(RateLimitLayer::new(limiter).key(key));
//! // The peer's address is what ClientAddress starts from:
//! let service = app.into_make_service_with_connect_info::<SocketAddr>();
//! # let _ = service;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Keys
//!
//! A key is bytes: text is its UTF-8, so the same client has the same key
//! here as in the Python and Node middleware (which matters when they
//! share a Redis limiter). [`ClientAddress`] takes the TCP peer, and the
//! forwarding headers only from the proxies you trust: a client that sends
//! `X-Forwarded-For` itself changes nothing; an IPv6 client is keyed by its
//! /56 block ([`ClientAddress::ipv6_prefix`]), and an in-process limiter
//! gets the address's bytes rather than its text
//! ([`KeyedCheck::LOCAL_KEYS`]). A request with no key (no
//! peer recorded, no such header) passes unchecked unless
//! [`RateLimitLayer::when_no_key`] says otherwise.
//!
//! ## When the limiter fails
//!
//! A limiter's error (a key longer than it takes; Redis unavailable with
//! `WhenUnavailable::Error`) is answered with 503 by default, or as
//! [`RateLimitLayer::on_limiter_error`] decides. ratekeeper-redis's own
//! policies (fail open, fail closed, a local share of the limit) decide
//! before an error ever reaches the layer.
#![warn(missing_docs)]

mod body;
mod key;
mod layer;
mod limiter;
mod service;

pub use body::ResponseBody;
pub use key::{AddressKey, ClientAddress, HeaderKey, KeyExtractor, PeerFn};
pub use layer::{LimiterErrorFn, NoKey, RateLimitLayer, RefusalFn, RequestCost};
#[cfg(feature = "redis")]
pub use limiter::redis::redis_limiter_from_text;
pub use limiter::{BoxCheck, BoxError, Checking, KeyedCheck, Named, Never, Verdict, DEFAULT_POLICY_NAME};
pub use ratekeeper::http::HeaderStyle;
pub use service::{RateLimit, ResponseFuture};

/// The crate's README, whose Rust block runs as a doctest too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
