//! HTTP rate limiting for the middleware of `node/lib/http/`: the Rust
//! library's [`ratekeeper::http`] — limits text, the response fields of
//! each header style, the client's address behind trusted proxies, and a
//! keyed limiter made from limits text — converted to and from JavaScript.
//! The framework code (Express, Fastify, express-rate-limit's store) is
//! JavaScript; everything two languages would both write is in the library.
//!
//! A request through the middleware with a local limit is one native call,
//! `respond` of the responder (`responder(style, legacy)`, made once per
//! middleware) of a limiter made by `httpLimiterCreate`: it decides and
//! returns the response fields as one string (see `FieldText`), with the
//! decisions in the limiter's scratch words for the `Decision` JavaScript
//! makes of them.

use std::borrow::Cow;
use std::ffi::CString;
use std::net::IpAddr;
use std::ptr;
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::http::{
    self as core, HeaderStyle, KeyedTextLimiter, LimiterTextError, Policy, RateItem, TrustedProxies,
};
use ratekeeper::{AnyClock, Argument, Decision, KeyedOptions, ParameterValue};

use crate::args;
use crate::bound::{Args, Binder, HotKeyed, Named, Returned, Scratch, DECISION_WORDS};
use crate::clock;
use crate::error::{blame, camel_case, guarded, Boxed, Failure};
use crate::headers;
use crate::js::{self, Js};
use crate::keyed;
use crate::spec::{self, Algorithm};

/// The keys an `HttpLimiter` holds when `maxKeys` is not given: a bound
/// that a server's clients rarely reach, at a few megabytes.
const DEFAULT_MAX_KEYS: usize = 100_000;

/// The algorithm of limits text when none is named: the `limits` library's
/// moving window as its users expect it, in constant memory per key.
const DEFAULT_ALGORITHM: Algorithm = Algorithm::SlidingWindowCounter;

/// The library's verdict on limits text, as the invalid-argument error
/// naming `argument` with the byte `position`.
fn limits_text(value: Js, argument: &'static str) -> Result<Vec<RateItem>, Failure> {
    let Some(text) = value.string() else {
        return Err(Failure::WrongType { argument, value, expected: "a string" });
    };
    core::parse_limits(&text).map_err(|error| Failure::BadText {
        argument: Cow::Borrowed(argument),
        value,
        message: error.to_string(),
        position: Some(error.position),
    })
}

/// An algorithm option: its name, or the default when `undefined`.
fn algorithm(value: Js) -> Result<Algorithm, Failure> {
    if value.is_undefined() {
        Ok(DEFAULT_ALGORITHM)
    } else {
        spec::algorithm_from_js(value, "algorithm")
    }
}

/// One item of limits text, as JavaScript's `RateItem` is made from.
#[napi(object, object_from_js = false)]
pub struct RateItemRecord {
    /// Units per window.
    pub amount: f64,
    /// Units of time per window.
    pub multiples: f64,
    /// `'second'`, `'minute'`, `'hour'`, `'day'`, `'month'` or `'year'`.
    pub unit: String,
    /// The window in milliseconds.
    pub window_ms: f64,
    /// The draft-8 policy name: `'10-in-1min'`.
    pub policy_name: String,
    /// The item as canonical text: `'10 per 1 minute'`.
    pub text: String,
}

/// The items of limits `text`, in order; bad text throws the `RangeError`
/// whose `position` is the byte where it went wrong.
#[napi(ts_args_type = "text: unknown")]
pub fn http_parse_limits(env: &Env, text: Unknown<'_>) -> napi::Result<Vec<RateItemRecord>> {
    guarded(env, || {
        Ok(limits_text(Js::new(env.raw(), text.raw()), "text")?
            .into_iter()
            .map(|item| RateItemRecord {
                amount: item.amount as f64,
                multiples: item.multiples as f64,
                unit: item.unit.name().to_owned(),
                window_ms: crate::bound::millis(item.window_micros()),
                policy_name: item.policy_name(),
                text: item.to_string(),
            })
            .collect())
    })
}

/// The limiter options (`{ algorithm, limit, windowMicros }`, …) that
/// enforce the one item of `text` with `algorithm`: the library's choice of
/// parameters ([`RateItem::spec`]) written out by name, durations as
/// bigint microseconds, for a `KeyedLimiter` or a `RedisLimiter`.
#[napi(ts_args_type = "text: string, algorithm: unknown", ts_return_type = "Record<string, unknown>")]
pub fn http_limit_options<'env>(
    env: &'env Env,
    text: Unknown<'_>,
    algorithm: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    guarded(env, || {
        let items = limits_text(Js::new(raw, text.raw()), "text")?;
        let [item] = items.as_slice() else {
            return Err(Failure::Internal("limitOptions of several items".to_owned()));
        };
        let algorithm = self::algorithm(Js::new(raw, algorithm.raw()))?;
        let spec = item.spec(algorithm)?;
        let mut object = ptr::null_mut();
        // SAFETY: plain object creation in this call's environment.
        js::check(raw, unsafe { sys::napi_create_object(raw, &mut object) }, "create object")?;
        js::set(raw, object, c"algorithm", js::string(raw, spec::name(algorithm))?)?;
        for (parameter, value) in spec.values() {
            let name = camel_case(parameter.name());
            let (key, value) = match value {
                ParameterValue::Rate(x) => (name, js::number(raw, x)?),
                ParameterValue::Count(n) if n < 1 << 53 => (name, js::number(raw, n as f64)?),
                ParameterValue::Count(n) => (name, js::bigint(raw, n as i64)?),
                ParameterValue::Micros(m) => (format!("{name}Micros"), js::bigint(raw, m)?),
            };
            let key = CString::new(key).map_err(|_| Failure::Internal("a parameter name with NUL".to_owned()))?;
            js::set(raw, object, &key, value)?;
        }
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, object) })
    })
}

/// A header style's name as the library reads it, `undefined` meaning the
/// default (`draft-8`): its number, which the other functions take.
#[napi(ts_args_type = "style: unknown, argument: 'style' | 'standardHeaders'")]
pub fn http_header_style(env: &Env, style: Unknown<'_>, argument: String) -> napi::Result<u32> {
    guarded(env, || {
        let value = Js::new(env.raw(), style.raw());
        if value.is_undefined() {
            return Ok(style_code(HeaderStyle::default()));
        }
        let argument = if argument == "standardHeaders" { "standardHeaders" } else { "style" };
        let Some(name) = value.string() else {
            return Err(Failure::WrongType { argument, value, expected: "a string" });
        };
        HeaderStyle::from_name(&name).map(style_code).ok_or(Failure::OutOfRange {
            argument,
            value,
            requirement: "must be \"draft-6\", \"draft-7\", \"draft-8\" or \"none\"",
        })
    })
}

fn style_code(style: HeaderStyle) -> u32 {
    HeaderStyle::ALL.iter().position(|s| *s == style).unwrap_or_default() as u32
}

fn style_of(value: Js) -> Result<HeaderStyle, Failure> {
    let code = value.number().ok_or(Failure::Internal("a header style code is not a number".to_owned()))?;
    HeaderStyle::ALL.get(code as usize).copied().ok_or(Failure::Internal("an unknown header style code".to_owned()))
}

/// The Unix time in whole seconds that JavaScript passed.
fn unix_secs(value: Js) -> u64 {
    value.number().filter(|x| x.is_finite() && *x > 0.0).map_or(0, |x| x as u64)
}

/// Every field name [`core::response_fields`] writes, each coded in the
/// fields' text by its index here (see [`FieldText`]); JavaScript has the
/// list from `httpFieldNames`.
const FIELD_NAMES: [&str; 9] = [
    "RateLimit-Policy",
    "RateLimit",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
];

/// `RateLimit-Policy`'s code in [`FIELD_NAMES`].
const RATELIMIT_POLICY: usize = 0;

/// The separator of the fields in their text: a byte no field value has
/// (HTTP forbids control characters in them; policy names are checked
/// printable ASCII).
const FIELD_SEPARATOR: char = '\n';

/// Response fields as JavaScript takes them: one string, each field its
/// name's code (`'0'` + its index in [`FIELD_NAMES`]) then its value,
/// fields separated by `\n`. One string costs a fraction of an array of
/// strings to hand over (an element set through Node-API is a generic
/// property store), and the names JavaScript sets are then its own
/// strings, the same each request, which the frameworks' header maps
/// store fastest (`node/lib/http/engine.js`, `fieldList`).
///
/// A responder's `respond` has a shorter form for the usual answer, an
/// admitted request in draft-8 whose `RateLimit-Policy` value is the one
/// the limiter kept (see [`core::KeptDraft8`]): the `RateLimit` value alone,
/// which starts with `"` (a policy name, quoted), never a code; the
/// responder's `keptPolicy()` is the other field's value. JavaScript then
/// sets both fields without cutting the text.
struct FieldText(String);

impl FieldText {
    fn with_capacity(bytes: usize) -> Self {
        FieldText(String::with_capacity(bytes))
    }

    /// Starts the field `name` (one of [`FIELD_NAMES`]); its value follows.
    fn field(&mut self, name: &str) -> Result<&mut String, Failure> {
        let code = FIELD_NAMES
            .iter()
            .position(|known| *known == name)
            .ok_or_else(|| Failure::Internal(format!("a response field ratekeeper-node does not know: {name}")))?;
        if !self.0.is_empty() {
            self.0.push(FIELD_SEPARATOR);
        }
        self.0.push(char::from(b'0' + code as u8));
        Ok(&mut self.0)
    }

    /// The fields the library returned.
    fn of(fields: &[(&'static str, String)]) -> Result<Self, Failure> {
        let mut text = FieldText::with_capacity(fields.iter().map(|(_, value)| value.len() + 2).sum());
        for (name, value) in fields {
            text.field(name)?.push_str(value);
        }
        Ok(text)
    }

    /// As a JavaScript string.
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value, Failure> {
        js::latin1(env, &self.0)
    }
}

/// The names of the response fields, by their codes in the fields' text.
#[napi]
pub fn http_field_names() -> Vec<&'static str> {
    FIELD_NAMES.to_vec()
}

/// Every response field for decisions (`records`: the combined one, then
/// one per policy of `names`), in `style` (a code of `httpHeaderStyle`),
/// with the legacy fields if `legacy`, as one string: each field its
/// name's code (an index into `httpFieldNames()`, as the digit `'0' + i`)
/// and its value, fields separated by `'\n'`.
#[napi(
    ts_args_type = "style: number, legacy: boolean, unixNowSecs: number, names: unknown[], records: BigInt64Array",
    ts_return_type = "string"
)]
pub fn http_response_fields<'env>(
    env: &'env Env,
    style: Unknown<'_>,
    legacy: bool,
    unix_now_secs: Unknown<'_>,
    names: Unknown<'_>,
    records: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    guarded(env, || {
        let style = style_of(Js::new(raw, style.raw()))?;
        let decisions = headers::decisions(Js::new(raw, records.raw()))?;
        let names = Js::new(raw, names.raw())
            .elements()?
            .ok_or_else(|| Failure::Internal("names is not an array".to_owned()))?
            .into_iter()
            .map(|value| value.string().ok_or(Failure::WrongType { argument: "name", value, expected: "a string" }))
            .collect::<Result<Vec<_>, _>>()?;
        let Some((combined, parts)) = decisions.split_first() else {
            return Err(Failure::Internal("no decision record".to_owned()));
        };
        let policies: Vec<Policy<'_>> =
            names.iter().zip(parts).map(|(name, decision)| Policy { name, decision: *decision }).collect();
        let fields =
            core::response_fields(combined, &policies, style, legacy, unix_secs(Js::new(raw, unix_now_secs.raw())))?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, FieldText::of(&fields)?.to_js(raw)?) })
    })
}

/// An IP address given as text: Node.js's `remoteAddress` (an IPv6 zone,
/// `%eth0`, is dropped: it names an interface, not a host).
fn ip(value: Js, argument: &'static str) -> Result<IpAddr, Failure> {
    let Some(text) = value.string() else {
        return Err(Failure::WrongType { argument, value, expected: "a string (an IP address)" });
    };
    let host = text.split_once('%').map_or(text.as_str(), |(host, _zone)| host);
    host.parse().map_err(|_| Failure::OutOfRange { argument, value, requirement: "must be an IPv4 or IPv6 address" })
}

/// An optional header value: a string, or `undefined`.
fn header(value: Js, argument: &'static str) -> Result<Option<String>, Failure> {
    if value.is_undefined() {
        return Ok(None);
    }
    value.string().map(Some).ok_or(Failure::WrongType { argument, value, expected: "a string or undefined" })
}

/// One JavaScript `TrustedProxies`.
struct Proxies {
    trusted: TrustedProxies,
}

/// The object `httpTrustedProxiesCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct TrustedProxiesMethods {
    /// Whether an address is trusted.
    #[napi(ts_type = "(address: string) => boolean")]
    pub contains: (),
    /// The client's address: peer, `Forwarded`, `X-Forwarded-For`.
    #[napi(ts_type = "(peer: string, forwarded: string | undefined, xForwardedFor: string | undefined) => string")]
    pub client_address: (),
    /// The client's key: its address, an IPv6 one by its block.
    #[napi(
        ts_type = "(peer: string, forwarded: string | undefined, xForwardedFor: string | undefined, ipv6Prefix: number | undefined) => string"
    )]
    pub client_key: (),
}

fn contains(p: &Arc<Proxies>, args: &Args) -> Result<Returned, Boxed> {
    Ok(Returned::Bool(p.trusted.contains(ip(args.get(0), "address")?)))
}

fn client_address(p: &Arc<Proxies>, args: &Args) -> Result<Returned, Boxed> {
    let peer = ip(args.get(0), "peer")?;
    let forwarded = header(args.get(1), "forwarded")?;
    let x_forwarded_for = header(args.get(2), "xForwardedFor")?;
    let client = core::client_address(peer, forwarded.as_deref(), x_forwarded_for.as_deref(), &p.trusted);
    Ok(Returned::Value(js::string(args.env, &client.to_string())?))
}

/// The key of `client_address`'s client: an IPv6 client's block of
/// `ipv6Prefix` bits (56 when `undefined`), as every language's middleware
/// writes it.
fn client_key(p: &Arc<Proxies>, args: &Args) -> Result<Returned, Boxed> {
    let prefix = ipv6_prefix(args.get(3))?;
    let peer = ip(args.get(0), "peer")?;
    let forwarded = header(args.get(1), "forwarded")?;
    let x_forwarded_for = header(args.get(2), "xForwardedFor")?;
    let client = core::client_address(peer, forwarded.as_deref(), x_forwarded_for.as_deref(), &p.trusted);
    Ok(Returned::Value(js::string(args.env, &core::ClientKey::new(client, prefix).to_string())?))
}

/// An IPv6 key prefix in bits, its range checked by the library.
fn ipv6_prefix(value: Js) -> Result<core::Ipv6Prefix, Failure> {
    const ARGUMENT: &str = "ipv6Prefix";
    if value.is_undefined() {
        return Ok(core::Ipv6Prefix::DEFAULT);
    }
    let bits = args::number(value, ARGUMENT)?;
    if bits.fract() != 0.0 || !bits.is_finite() {
        return Err(Failure::OutOfRange { argument: ARGUMENT, value, requirement: "must be a whole number of bits" });
    }
    // Saturating: 1e300 is out of range as surely as 129.
    core::Ipv6Prefix::new(bits as i64).map_err(|error| Failure::BadText {
        argument: Cow::Borrowed(ARGUMENT),
        value,
        message: error.to_string(),
        position: None,
    })
}

const PROXY_METHODS: &[Named<Proxies>] =
    &[(c"contains", 1, contains), (c"clientAddress", 3, client_address), (c"clientKey", 4, client_key)];

/// The trusted proxies of `entries` (an array of strings); an entry the
/// library refuses throws the `RangeError` naming it (`entries[1]`).
#[napi(ts_args_type = "entries: unknown", ts_return_type = "TrustedProxiesMethods")]
pub fn http_trusted_proxies_create<'env>(env: &'env Env, entries: Unknown<'_>) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    guarded(env, || {
        let value = Js::new(raw, entries.raw());
        let Some(elements) = value.elements()? else {
            return Err(Failure::WrongType { argument: "entries", value, expected: "an array of strings" });
        };
        let mut texts = Vec::with_capacity(elements.len());
        for (i, element) in elements.iter().enumerate() {
            let Some(text) = element.string() else {
                return Err(Failure::WrongTypeNamed {
                    argument: format!("entries[{i}]"),
                    value: *element,
                    expected: "a string".to_owned(),
                });
            };
            texts.push(text);
        }
        let trusted = TrustedProxies::parse(texts.iter().map(String::as_str)).map_err(|error| Failure::BadText {
            argument: Cow::Owned(format!("entries[{}]", error.index)),
            value: elements[error.index],
            message: error.to_string(),
            position: None,
        })?;
        let binder = &mut Binder::new(raw, Arc::new(Proxies { trusted }))?;
        binder.methods(PROXY_METHODS)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, binder.finish()) })
    })
}

/// One JavaScript `HttpLimiter`: the library's limiter of limits text,
/// and scratch words for the combined decision then one per item.
struct Limiter {
    limiter: core::HttpLimiter,
    scratch: Scratch,
    /// The draft-8 `RateLimit-Policy` value the first admitted request got:
    /// it changes only with the items' limits and windows, the same request
    /// after request, so later ones write only `RateLimit` (as
    /// ratekeeper-tower keeps it).
    policy: OnceLock<core::KeptDraft8>,
}

/// Text written on the stack: the fields' text of the fast path (a longer
/// one, of many policies or long names, takes the general path).
type StackText = core::ShortText<256>;

/// A [`StackText`] as a JavaScript string (Latin-1: the text is ASCII).
fn stack_text_to_js(text: &StackText, env: sys::napi_env) -> Result<sys::napi_value, Failure> {
    let bytes = text.as_bytes();
    let mut out = ptr::null_mut();
    // SAFETY: `bytes` is initialised ASCII (hence Latin-1): the kept starts
    // were written by the library's checked writers, the rest are digits
    // and separators.
    let status = unsafe { sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out) };
    js::check(env, status, "create string")?;
    Ok(out)
}

impl Limiter {
    /// Decides (or, `peek`, looks) and writes the decisions to `scratch`:
    /// `check` and `peek`.
    #[inline]
    fn decide(&self, key: &[u8], cost: u64, peek: bool) -> Result<bool, Boxed> {
        match self.limiter.keyed() {
            KeyedTextLimiter::One(one) => {
                let decision = if peek { one.peek(key, cost)? } else { one.check(key, cost)? };
                self.scratch.write_decision(0, &decision);
                self.scratch.write_decision(DECISION_WORDS, &decision);
                Ok(decision.allowed)
            }
            KeyedTextLimiter::Several(several) => {
                let (combined, parts) = if peek { several.peek(key, cost)? } else { several.check(key, cost)? };
                self.write_decisions(&combined, &parts);
                Ok(combined.allowed)
            }
        }
    }

    fn write_decisions(&self, combined: &Decision, parts: &[Decision]) {
        self.scratch.write_decision(0, combined);
        for (i, part) in parts.iter().enumerate() {
            self.scratch.write_decision(DECISION_WORDS * (i + 1), part);
        }
    }

    /// Decides, writes the decisions to `scratch`, and returns the response
    /// fields in `style` as `respond` hands them to JavaScript. Of one
    /// item's records, only the combined one is written: the middleware
    /// reads only that, and skips a tenth of the call's time. One limit
    /// admitted in draft-8 (the usual case) allocates nothing.
    #[inline]
    fn respond(
        &self,
        env: sys::napi_env,
        key: &[u8],
        cost: u64,
        style: (HeaderStyle, bool, u64),
    ) -> Result<sys::napi_value, Boxed> {
        match self.limiter.keyed() {
            KeyedTextLimiter::One(one) => {
                let decision = one.check(key, cost)?;
                self.scratch.write_decision(0, &decision);
                self.fields(env, &decision, std::slice::from_ref(&decision), style)
            }
            KeyedTextLimiter::Several(several) => {
                let (combined, parts) = several.check(key, cost)?;
                self.write_decisions(&combined, &parts);
                self.fields(env, &combined, &parts, style)
            }
        }
    }

    /// The response fields of a decision (see [`FieldText`]) as a
    /// JavaScript string: the kept `RateLimit-Policy` value and
    /// `RateLimit` alone, on the stack, for an admitted request in draft-8
    /// without legacy fields; the library's [`core::response_fields`]
    /// otherwise.
    fn fields(
        &self,
        env: sys::napi_env,
        combined: &Decision,
        parts: &[Decision],
        (style, legacy, now): (HeaderStyle, bool, u64),
    ) -> Result<sys::napi_value, Boxed> {
        let draft8_only = style == HeaderStyle::Draft8 && !legacy && combined.allowed;
        if draft8_only {
            if let Some(kept) = self.policy.get().filter(|kept| kept.fits(parts)) {
                // The short form (see `FieldText`).
                let mut text = StackText::new();
                if kept.write_ratelimit(parts, &mut text).is_some() {
                    return Ok(stack_text_to_js(&text, env)?);
                }
            }
        }
        let fields = self.limiter.fields(combined, parts, style, legacy, now)?;
        if draft8_only && self.policy.get().is_none() {
            if let Some((_, value)) = fields.iter().find(|(name, _)| *name == FIELD_NAMES[RATELIMIT_POLICY]) {
                let names = self.limiter.policy_names().iter().map(String::as_str);
                if let Some(kept) = core::KeptDraft8::new(value, parts, names) {
                    let _ = self.policy.set(kept);
                }
            }
        }
        Ok(FieldText::of(&fields)?.to_js(env)?)
    }
}

/// A limiter's `respond` with a header style fixed (`responder`'s).
struct Responder {
    limiter: Arc<Limiter>,
    style: HeaderStyle,
    legacy: bool,
}

/// The object `httpLimiterCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct HttpLimiterMethods {
    /// Admits `cost` for `key` in every item or none; the decisions to
    /// `scratch`, `allowed` returned.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub check: (),
    /// The decisions `check` would make, consuming nothing (to `scratch`).
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub peek: (),
    /// The `respond` function of a style of `httpHeaderStyle`, with the
    /// legacy fields if `legacy`: `check`, returning the response fields as
    /// one string (as `httpResponseFields`, or its short form: see
    /// `keptPolicy`; `''` for none). Of one item's records, only the
    /// combined one is written. `unixNowSecs` is read only with the legacy
    /// fields.
    #[napi(
        ts_type = "(style: number, legacy: boolean) => { respond: (key: string | Uint8Array, cost?: unknown, unixNowSecs?: number) => string, keptPolicy: () => string | undefined }"
    )]
    pub responder: (),
    /// Gives back `cost` units admitted for `key` that should not count;
    /// whether the key was held.
    #[napi(ts_type = "(key: string | Uint8Array, cost?: number | bigint) => boolean")]
    pub refund: (),
    /// Forgets `key`; whether it was held.
    #[napi(ts_type = "(key: string | Uint8Array) => boolean")]
    pub remove: (),
    /// How many keys are held.
    #[napi(ts_type = "() => number")]
    pub len: (),
    /// How many items (limits) the text has.
    #[napi(ts_type = "number")]
    pub parts: (),
    /// The bound.
    #[napi(ts_type = "number")]
    pub max_keys: (),
    /// The algorithm, camelCase.
    #[napi(ts_type = "string")]
    pub algorithm: (),
    /// Decision records: the combined one, then one per item.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

impl HotKeyed for Limiter {
    /// 0: `check(key, cost)`.
    #[inline]
    fn hot<const W: u8>(&self, key: &[u8], cost: u64) -> Result<bool, Boxed> {
        self.decide(key, cost, false)
    }
}

/// `responder(style, legacy)`: the style read once, for every request.
fn responder(l: &Arc<Limiter>, args: &Args) -> Result<Returned, Boxed> {
    let style = style_of(args.get(0))?;
    let legacy = args.get(1).boolean().unwrap_or(false);
    let binder = &mut Binder::new(args.env, Arc::new(Responder { limiter: Arc::clone(l), style, legacy }))?;
    binder.methods(RESPONDER_METHODS)?;
    Ok(Returned::Value(binder.finish()))
}

/// `respond(key, cost, unixNowSecs)`.
fn respond(r: &Arc<Responder>, args: &Args) -> Result<Returned, Boxed> {
    let cost = args::cost_or_one(args.passed(1))?;
    let now = if r.legacy { unix_secs(args.get(2)) } else { 0 };
    let style = (r.style, r.legacy, now);
    let fields = args::with_key(args.get(0), |key| r.limiter.respond(args.env, key, cost, style))??;
    Ok(Returned::Value(fields))
}

/// `keptPolicy()`: the `RateLimit-Policy` value of `respond`'s short form
/// (see [`FieldText`]), `undefined` before the limiter kept one; once kept
/// it never changes.
fn kept_policy(r: &Arc<Responder>, args: &Args) -> Result<Returned, Boxed> {
    Ok(match r.limiter.policy.get() {
        Some(kept) => Returned::Value(js::latin1(args.env, kept.policy())?),
        None => Returned::Undefined,
    })
}

const RESPONDER_METHODS: &[Named<Responder>] = &[(c"respond", 3, respond), (c"keptPolicy", 0, kept_policy)];

fn peek(l: &Arc<Limiter>, args: &Args) -> Result<Returned, Boxed> {
    let cost = args::cost_or_one(args.passed(1))?;
    Ok(Returned::Bool(args::with_key(args.get(0), |key| l.decide(key, cost, true))??))
}

/// `refund(key, cost)`: every item gives the units back.
fn refund(l: &Arc<Limiter>, args: &Args) -> Result<Returned, Boxed> {
    let cost = args::cost_or_one(args.passed(1))?;
    let refunded = args::with_key(args.get(0), |key| match l.limiter.keyed() {
        KeyedTextLimiter::One(one) => one.refund(key, cost),
        KeyedTextLimiter::Several(several) => several.refund(key, cost),
    })??;
    Ok(Returned::Bool(refunded))
}

const LIMITER_METHODS: &[Named<Limiter>] = &[
    (c"responder", 2, responder),
    (c"peek", 2, peek),
    (c"refund", 2, refund),
    (c"remove", 1, |l, args| Ok(Returned::Bool(args::with_key(args.get(0), |key| l.limiter.remove(key))??))),
    (c"len", 0, |l, _| Ok(Returned::Number(l.limiter.len() as f64))),
];

/// Creates the keyed limiter of limits `text` with `algorithm` (default
/// `slidingWindowCounter`) and a keyed limiter's options (`maxKeys`
/// default 100,000): one item is a keyed limiter, several a keyed
/// composite, all or nothing per key. Returns its bound functions.
#[napi(
    ts_args_type = "text: unknown, algorithm: unknown, maxKeys: unknown, whenFull: unknown, maxKeyBytes: unknown, clock: unknown",
    ts_return_type = "HttpLimiterMethods"
)]
pub fn http_limiter_create<'env>(
    env: &'env Env,
    text: Unknown<'_>,
    algorithm: Unknown<'_>,
    max_keys: Unknown<'_>,
    when_full: Unknown<'_>,
    max_key_bytes: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    let js = |value: Unknown<'_>| Js::new(raw, value.raw());
    guarded(env, || {
        let text_value = js(text);
        let Some(limits) = text_value.string() else {
            return Err(Failure::WrongType { argument: "limits", value: text_value, expected: "a string" });
        };
        let algorithm = self::algorithm(js(algorithm))?;
        let (max_keys, given) = if js(max_keys).is_undefined() {
            (DEFAULT_MAX_KEYS, Vec::new())
        } else {
            let (n, given) = keyed::max_keys(js(max_keys))?;
            (n, vec![given])
        };
        let options = KeyedOptions::new(max_keys)
            .when_full(keyed::when_full(js(when_full))?)
            .max_key_bytes(args::max_key_bytes(js(max_key_bytes))?);
        let clock: AnyClock = clock::from_option(js(clock))?;
        let limiter = core::limiter_from_text(&limits, algorithm, options, clock).map_err(|error| match error {
            LimiterTextError::Text(error) => Failure::BadText {
                argument: Cow::Borrowed("limits"),
                value: text_value,
                message: error.to_string(),
                position: Some(error.position),
            },
            LimiterTextError::Invalid(error) => {
                blame(Err::<(), _>(error), &given).err().unwrap_or(Failure::Library(error))
            }
        })?;
        let parts = limiter.items().len();
        let bound = match limiter.keyed() {
            KeyedTextLimiter::One(one) => one.max_keys(),
            KeyedTextLimiter::Several(several) => several.max_keys(),
        };
        let algorithm_name = js::string(raw, spec::name(algorithm))?;
        let scratch = Scratch::new(DECISION_WORDS * (parts + 1));
        let binder = &mut Binder::new(raw, Arc::new(Limiter { limiter, scratch, policy: OnceLock::new() }))?;
        binder
            .methods(LIMITER_METHODS)?
            .hot_keyed::<0>(c"check")?
            .scratch(c"scratch", |l| &l.scratch)?
            .number(c"parts", parts as f64)?
            .number(c"maxKeys", bound as f64)?
            .value(c"algorithm", algorithm_name)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(raw, binder.finish()) })
    })
}

/// Throws the `TypeError` (`ERR_RATEKEEPER_INVALID_OPTION`) with `message`:
/// for the middleware's options that exclude each other, or a store used
/// before it was set up, found by the package's JavaScript.
#[napi(ts_return_type = "never")]
pub fn http_invalid_option(env: &Env, message: String) -> napi::Result<()> {
    guarded(env, || Err(Failure::InvalidOption(message)))
}

/// express-rate-limit's `limit` and `windowMs` as limits text: `limit`
/// units per `windowMs / 1000` seconds (an integer `limit` of at least 1, a
/// window of whole seconds).
#[napi(ts_args_type = "limit: unknown, windowMs: unknown")]
pub fn http_limits_of_window(env: &Env, limit: Unknown<'_>, window_ms: Unknown<'_>) -> napi::Result<String> {
    let raw = env.raw();
    guarded(env, || {
        let limit_value = Js::new(raw, limit.raw());
        if limit_value.kind() == crate::js::Kind::Function {
            return Err(Failure::WrongType {
                argument: "limit",
                value: limit_value,
                expected: "a number (for a limit per request, give the store its own limit)",
            });
        }
        let amount = args::count(limit_value, Argument::Limit, "limit")?;
        if amount == 0 {
            return Err(Failure::OutOfRange {
                argument: "limit",
                value: limit_value,
                requirement: "must be at least 1",
            });
        }
        let window = Js::new(raw, window_ms.raw());
        let ms = args::count(window, Argument::Window, "windowMs")?;
        if ms == 0 || ms % 1000 != 0 {
            return Err(Failure::OutOfRange {
                argument: "windowMs",
                value: window,
                requirement: "must be whole seconds (a multiple of 1000) for a RatekeeperStore without its own limit",
            });
        }
        Ok(format!("{amount} per {} seconds", ms / 1000))
    })
}
