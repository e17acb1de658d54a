//! HTTP rate limiting: the parts every framework binding would otherwise
//! write twice.
//!
//! The middleware itself (a `tower::Layer`, ASGI/WSGI middleware, Express
//! and Fastify plugins) lives with each framework; what they share, and so
//! what must behave the same in Rust, Python, Node.js and C, lives here:
//!
//! * [`parse_limits`] — limits as text (`"10/minute"`, `"100/hour;
//!   1000/day"`), the forms of the Python `limits` library, with errors
//!   that name the byte at fault; [`RateItem::spec`] turns an item into any
//!   algorithm's [`LimiterSpec`](crate::LimiterSpec).
//! * [`response_fields`] — the `RateLimit`/`RateLimit-Policy` fields in the
//!   draft versions express-rate-limit sends ([`HeaderStyle`]), its legacy
//!   `X-RateLimit-*` fields, and `Retry-After`.
//! * [`limiter_from_text`] — the keyed limiter for limits text: one
//!   [`AnyKeyedLimiter`](crate::AnyKeyedLimiter) for one item, a
//!   [`KeyedCompositeLimiter`](crate::KeyedCompositeLimiter) for several.
//! * [`client_address`] — the client behind `Forwarded` ([RFC 7239]) and
//!   `X-Forwarded-For`, believing only [`TrustedProxies`]; [`ClientKey`]
//!   — the key of that address, an IPv6 client's by its block
//!   ([`Ipv6Prefix`], /56 by default).
//!
//! ```
//! use ratekeeper::http::{client_address, parse_limits, response_fields, HeaderStyle, Policy, TrustedProxies};
//! use ratekeeper::{Algorithm, AnyLimiter, ManualClock};
//! use std::sync::Arc;
//!
//! let item = parse_limits("2 per minute")?[0];
//! let limiter = AnyLimiter::with_clock(&item.spec(Algorithm::FixedWindow)?, Arc::new(ManualClock::new()))?;
//! let decision = limiter.check(1);
//! let name = item.policy_name();
//! let fields = response_fields(&decision, &[Policy { name: &name, decision }], HeaderStyle::Draft8, false, 0)?;
//! assert_eq!(fields[1], ("RateLimit", "\"2-in-1min\";r=1;t=60".to_string()));
//!
//! let proxies = TrustedProxies::parse(["10.0.0.0/8"])?;
//! let client = client_address("10.0.0.1".parse()?, None, Some("203.0.113.9"), &proxies);
//! assert_eq!(client.to_string(), "203.0.113.9");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [RFC 7239]: https://www.rfc-editor.org/rfc/rfc7239

mod client;
mod fields;
mod kept;
mod limiter;
mod limits;

pub use client::{
    client_address, client_key_address, ClientKey, Ipv6Prefix, Ipv6PrefixError, TrustedProxies, TrustedProxyError,
};
pub(crate) use fields::decimal;
pub use fields::{response_fields, HeaderStyle, Policy};
pub use kept::{KeptDraft8, ShortText};
pub use limiter::{limiter_from_text, HttpLimiter, KeyedTextLimiter, LimiterTextError};
pub use limits::{parse_limits, LimitsTextError, RateItem, TimeUnit};
