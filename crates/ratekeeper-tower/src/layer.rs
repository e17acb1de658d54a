//! [`RateLimitLayer`]: the layer, its settings and their builder.

use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use http::{Method, Request, Response, StatusCode};
use ratekeeper::http::{response_fields, HeaderStyle, KeptDraft8, Policy, ShortText};
use ratekeeper::Decision;
use tower_layer::Layer;

use crate::key::ClientAddress;
use crate::limiter::{BoxError, KeyedCheck, Verdict};
use crate::service::RateLimit;

/// How many units a request costs: a fixed number (`u64`, 1 by default)
/// or any closure `Fn(&Request<B>) -> u64` (by route, by body size…).
pub trait RequestCost<B>: Clone + Send + Sync + 'static {
    /// The request's cost.
    fn cost(&self, request: &Request<B>) -> u64;
}

impl<B> RequestCost<B> for u64 {
    #[inline]
    fn cost(&self, _request: &Request<B>) -> u64 {
        *self
    }
}

impl<B, F> RequestCost<B> for F
where
    F: Fn(&Request<B>) -> u64 + Clone + Send + Sync + 'static,
{
    fn cost(&self, request: &Request<B>) -> u64 {
        self(request)
    }
}

/// What the layer does with a request that has no key (the extractor
/// answered `None`: no client address found, no such header).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NoKey {
    /// Pass it to the inner service unchecked, with no rate-limit fields.
    /// The default.
    #[default]
    Admit,
    /// Check it under this one key, which every request without a key
    /// shares (say `b"anonymous"`: a limit for all unauthenticated traffic
    /// together).
    Shared(Vec<u8>),
}

/// Builds the response to a refused request from its verdict.
pub type RefusalFn = dyn Fn(&Verdict) -> Response<Bytes> + Send + Sync;

/// Decides what to do when the limiter fails (a key too long for it, Redis
/// unavailable with `WhenUnavailable::Error`): `Some(response)` answers
/// the request with it, `None` passes the request on unchecked.
pub type LimiterErrorFn = dyn Fn(&BoxError) -> Option<Response<Bytes>> + Send + Sync;

/// The settings every request reads: shared by the layer's services.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) style: HeaderStyle,
    pub(crate) legacy: bool,
    pub(crate) exempt_paths: Vec<String>,
    pub(crate) exempt_methods: Vec<Method>,
    pub(crate) no_key: NoKey,
    pub(crate) refusal: Arc<RefusalFn>,
    pub(crate) limiter_error: Arc<LimiterErrorFn>,
    /// The draft-8 `RateLimit-Policy` value the first admitted request got:
    /// it changes only with the policies' limits and windows, which are the
    /// same request after request (emptied whenever a setting changes).
    pub(crate) policy_field: OnceLock<PolicyField>,
}

/// The draft-8 `RateLimit-Policy` value kept for the layer's policies (see
/// [`KeptDraft8`]), and the same as a header value, cloned per response.
#[derive(Clone)]
pub(crate) struct PolicyField {
    kept: KeptDraft8,
    value: HeaderValue,
}

/// The header fields a response gets, with their names parsed once: none,
/// draft-8's two (the default: their names implied), or any. The
/// response's future holds them boxed (`service::State`), not inline.
pub(crate) enum Fields {
    None,
    Draft8 { policy: HeaderValue, state: HeaderValue },
    Any(Vec<(HeaderName, HeaderValue)>),
}

const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

impl Settings {
    /// The rate-limit fields of `verdict` (and `Retry-After` for a refusal
    /// a wait can admit), in the configured style, the policies named by
    /// `limiter`.
    pub(crate) fn fields<L: KeyedCheck>(&self, limiter: &L, verdict: &Verdict) -> Result<Fields, BoxError> {
        let settings = self;
        if settings.style == HeaderStyle::None && !settings.legacy && verdict.allowed() {
            // Nothing to send (an admitted request has no Retry-After).
            return Ok(Fields::None);
        }
        let draft8_only = settings.style == HeaderStyle::Draft8 && !settings.legacy && verdict.allowed();
        if draft8_only {
            if let Some(fields) = self.draft8_fields(verdict.policies()) {
                return Ok(fields);
            }
        }
        let decisions = verdict.policies();
        // Only the legacy X-RateLimit-Reset is a time of day.
        let now = if settings.legacy { unix_now_secs() } else { 0 };
        let text = if let [decision] = decisions {
            let policies = [Policy { name: limiter.policy_name(0), decision: *decision }];
            response_fields(&verdict.combined, &policies, settings.style, settings.legacy, now)?
        } else {
            let policies: Vec<Policy<'_>> = decisions
                .iter()
                .enumerate()
                .map(|(i, decision)| Policy { name: limiter.policy_name(i), decision: *decision })
                .collect();
            response_fields(&verdict.combined, &policies, settings.style, settings.legacy, now)?
        };
        let fields = text
            .into_iter()
            .map(|(name, value)| Ok((header_name(name)?, HeaderValue::from_maybe_shared(Bytes::from(value))?)))
            .collect::<Result<Vec<_>, BoxError>>()?;
        if draft8_only {
            // The names passed response_fields' check: later requests of
            // the same policies reuse this value and write only `RateLimit`.
            if let Some((_, value)) = fields.iter().find(|(name, _)| *name == RATELIMIT_POLICY) {
                let names = (0..decisions.len()).map(|i| limiter.policy_name(i));
                if let Some(kept) = value.to_str().ok().and_then(|text| KeptDraft8::new(text, decisions, names)) {
                    let _ = self.policy_field.set(PolicyField { kept, value: value.clone() });
                }
            }
        }
        Ok(Fields::Any(fields))
    }

    /// Draft-8's two fields for an admitted request, when the policies are
    /// those of the kept `RateLimit-Policy` value: it is reused, and only
    /// `RateLimit` is written — each item's kept start, then its numbers
    /// (on the stack, then copied once). `None` sends the request down the
    /// general path.
    fn draft8_fields(&self, decisions: &[Decision]) -> Option<Fields> {
        let policy = self.policy_field.get().filter(|field| field.kept.fits(decisions))?;
        let mut text = ShortText::<192>::new();
        policy.kept.write_ratelimit(decisions, &mut text)?;
        let bytes = Bytes::copy_from_slice(text.as_bytes());
        // SAFETY: the text is UTF-8 — pieces of strings Decision::write_ratelimit
        // wrote (its names printable ASCII), ASCII digits and separators —
        // and no header field value holds anything else (no CR, no LF).
        let state = unsafe { HeaderValue::from_maybe_shared_unchecked(bytes) };
        Some(Fields::Draft8 { policy: policy.value.clone(), state })
    }

    /// The response to a refused request: the refusal hook's, with the
    /// fields set over whatever it set.
    pub(crate) fn refused<L: KeyedCheck>(&self, limiter: &L, verdict: &Verdict) -> Result<Response<Bytes>, BoxError> {
        let fields = self.fields(limiter, verdict)?;
        let mut response = (self.refusal)(verdict);
        insert_fields(response.headers_mut(), fields);
        Ok(response)
    }
}

pub(crate) fn insert_fields(headers: &mut http::HeaderMap, fields: Fields) {
    match fields {
        Fields::None => {}
        Fields::Draft8 { policy, state } => {
            headers.reserve(2);
            headers.insert(RATELIMIT_POLICY, policy);
            headers.insert(RATELIMIT, state);
        }
        Fields::Any(any) => {
            headers.reserve(any.len());
            for (name, value) in any {
                headers.insert(name, value);
            }
        }
    }
}

/// Seconds since the Unix epoch, for the legacy `X-RateLimit-Reset`
/// (express-rate-limit sends a time there, not a duration).
fn unix_now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The field names `response_fields` writes, parsed once: `HeaderName`
/// holds names in lower case (HTTP/2 requires it; HTTP/1.1 names are
/// case-insensitive), so the canonical spelling is parsed, not copied.
fn header_name(name: &'static str) -> Result<HeaderName, BoxError> {
    macro_rules! known {
        ($($canonical:literal => $lower:literal,)*) => {
            match name {
                "Retry-After" => return Ok(RETRY_AFTER),
                "RateLimit" => return Ok(RATELIMIT),
                "RateLimit-Policy" => return Ok(RATELIMIT_POLICY),
                $($canonical => return Ok(HeaderName::from_static($lower)),)*
                _ => {}
            }
        };
    }
    known! {
        "RateLimit-Limit" => "ratelimit-limit",
        "RateLimit-Remaining" => "ratelimit-remaining",
        "RateLimit-Reset" => "ratelimit-reset",
        "X-RateLimit-Limit" => "x-ratelimit-limit",
        "X-RateLimit-Remaining" => "x-ratelimit-remaining",
        "X-RateLimit-Reset" => "x-ratelimit-reset",
    }
    Ok(HeaderName::from_bytes(name.as_bytes())?)
}

/// The default refusal: 429 Too Many Requests, a line of text.
fn too_many_requests(_verdict: &Verdict) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(b"Too Many Requests\n"));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// The default on a limiter's error: 503 Service Unavailable — nothing is
/// admitted that the limit did not admit (fail closed). Redis limiters
/// have their own policies for an outage (`WhenUnavailable`: fail open,
/// a local share), which decide before any error reaches the layer.
fn service_unavailable(_error: &BoxError) -> Option<Response<Bytes>> {
    let mut response = Response::new(Bytes::from_static(b"Rate limiter unavailable\n"));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    Some(response)
}

/// A [`tower_layer::Layer`] that rate-limits HTTP requests with a keyed
/// limiter: see the [crate docs](crate) for what it does and an example.
///
/// `L` is the limiter ([`KeyedCheck`]), `E` the key extractor
/// ([`KeyExtractor`](crate::KeyExtractor): the client's address unless
/// told otherwise), `C` the cost per request (1 unless told otherwise).
/// The builder methods consume and return the layer; cloning it shares the
/// limiter, so every clone limits together.
pub struct RateLimitLayer<L, E = ClientAddress, C = u64> {
    pub(crate) limiter: Arc<L>,
    pub(crate) settings: Arc<Settings>,
    pub(crate) key: E,
    pub(crate) cost: C,
}

impl<L: KeyedCheck> RateLimitLayer<L> {
    /// Limits by client address (the TCP peer: no trusted proxies; see
    /// [`key`](Self::key) and [`ClientAddress::trusting`]), one unit per
    /// request, with draft-8 `RateLimit`/`RateLimit-Policy` fields on
    /// every checked response and 429 with `Retry-After` on a refusal.
    pub fn new(limiter: L) -> Self {
        RateLimitLayer {
            limiter: Arc::new(limiter),
            settings: Arc::new(Settings {
                style: HeaderStyle::Draft8,
                legacy: false,
                exempt_paths: Vec::new(),
                exempt_methods: Vec::new(),
                no_key: NoKey::Admit,
                refusal: Arc::new(too_many_requests),
                limiter_error: Arc::new(service_unavailable),
                policy_field: OnceLock::new(),
            }),
            key: ClientAddress::peer_only(),
            cost: 1,
        }
    }
}

impl<L: KeyedCheck, E, C> RateLimitLayer<L, E, C> {
    /// Changes a setting (of this layer only: a clone's settings are
    /// copied first, while the limiter stays shared).
    fn setting(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        let settings = Arc::make_mut(&mut self.settings);
        change(settings);
        // The kept value may be of another style or limiter.
        settings.policy_field = OnceLock::new();
        self
    }

    /// Keys requests with `key` instead: a closure
    /// `Fn(&Request<B>) -> Option<K>`, a [`HeaderKey`](crate::HeaderKey),
    /// or a [`ClientAddress`] with trusted proxies.
    pub fn key<E2>(self, key: E2) -> RateLimitLayer<L, E2, C> {
        RateLimitLayer { limiter: self.limiter, settings: self.settings, key, cost: self.cost }
    }

    /// Each request costs `cost` units: a number, or a closure
    /// `Fn(&Request<B>) -> u64`.
    pub fn cost<C2>(self, cost: C2) -> RateLimitLayer<L, E, C2> {
        RateLimitLayer { limiter: self.limiter, settings: self.settings, key: self.key, cost }
    }

    /// The `RateLimit` fields' version: [`HeaderStyle::Draft8`] by default
    /// (`RateLimit` and `RateLimit-Policy` as structured lists),
    /// `Draft7`, `Draft6` (separate `RateLimit-Limit`/`-Remaining`/`-Reset`),
    /// or `None` (no such fields: `Retry-After` only, and the legacy ones if
    /// asked). As express-rate-limit's `standardHeaders`.
    pub fn header_style(self, style: HeaderStyle) -> Self {
        self.setting(|s| s.style = style)
    }

    /// Also send `X-RateLimit-Limit`, `-Remaining` and `-Reset` (off by
    /// default), as express-rate-limit's `legacyHeaders`.
    pub fn legacy_headers(self, on: bool) -> Self {
        self.setting(|s| s.legacy = on)
    }

    /// Requests under `prefix` pass unchecked: the path itself and those
    /// below it, segment by segment (`"/health"` exempts `/health` and
    /// `/health/db`, not `/healthz`). For anything finer, apply the layer
    /// to only the routes it limits (axum's `route_layer`, a nested
    /// router): the router knows the routes better than a prefix does.
    pub fn exempt_path(self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        let prefix = prefix.strip_suffix('/').map(str::to_owned).unwrap_or(prefix);
        self.setting(|s| s.exempt_paths.push(prefix))
    }

    /// Requests of `method` pass unchecked (say `OPTIONS`, a CORS
    /// preflight).
    pub fn exempt_method(self, method: Method) -> Self {
        self.setting(|s| s.exempt_methods.push(method))
    }

    /// What a request without a key gets: [`NoKey::Admit`] by default.
    pub fn when_no_key(self, no_key: NoKey) -> Self {
        self.setting(|s| s.no_key = no_key)
    }

    /// Builds the response to a refused request (default: 429 with a line
    /// of text). The rate-limit fields and `Retry-After` are set on what it
    /// returns, over any of the same names; its status is kept (a 503
    /// instead of a 429, if that is what your clients expect).
    pub fn refusal(self, build: impl Fn(&Verdict) -> Response<Bytes> + Send + Sync + 'static) -> Self {
        self.setting(|s| s.refusal = Arc::new(build))
    }

    /// What to do when the limiter fails (default: answer 503, checking
    /// nothing through): return `Some(response)` to answer with it, `None`
    /// to pass the request on unchecked. Also the place to log the error.
    pub fn on_limiter_error(
        self,
        decide: impl Fn(&BoxError) -> Option<Response<Bytes>> + Send + Sync + 'static,
    ) -> Self {
        self.setting(|s| s.limiter_error = Arc::new(decide))
    }

    /// The limiter.
    pub fn limiter(&self) -> &L {
        &self.limiter
    }
}

impl<L, E: Clone, C: Clone> Clone for RateLimitLayer<L, E, C> {
    fn clone(&self) -> Self {
        RateLimitLayer {
            limiter: Arc::clone(&self.limiter),
            settings: Arc::clone(&self.settings),
            key: self.key.clone(),
            cost: self.cost.clone(),
        }
    }
}

impl<L, E: fmt::Debug, C: fmt::Debug> fmt::Debug for RateLimitLayer<L, E, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer").field("key", &self.key).field("cost", &self.cost).finish_non_exhaustive()
    }
}

impl<S, L, E: Clone, C: Clone> Layer<S> for RateLimitLayer<L, E, C> {
    type Service = RateLimit<S, L, E, C>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimit::new(
            inner,
            Arc::clone(&self.limiter),
            Arc::clone(&self.settings),
            self.key.clone(),
            self.cost.clone(),
        )
    }
}

impl Settings {
    /// Whether an admitted response gets no fields at all (no `RateLimit`
    /// style, no legacy ones): then the limiter is asked only whether it
    /// admits ([`KeyedCheck::admit`]).
    #[inline]
    pub(crate) fn admitted_bare(&self) -> bool {
        self.style == HeaderStyle::None && !self.legacy
    }

    /// Whether the request passes unchecked (an exempt method or path).
    #[inline]
    pub(crate) fn exempt<B>(&self, request: &Request<B>) -> bool {
        if self.exempt_methods.contains(request.method()) {
            return true;
        }
        if self.exempt_paths.is_empty() {
            return false;
        }
        let path = request.uri().path();
        self.exempt_paths.iter().any(|prefix| match path.strip_prefix(prefix.as_str()) {
            Some(rest) => rest.is_empty() || rest.starts_with('/') || prefix.is_empty(),
            None => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{Checking, Named};
    use ratekeeper::{AnyClock, AnyKeyedLimiter, KeyedOptions, LimiterSpec};

    /// The fields as text, in order, whichever path wrote them.
    fn texts(fields: Fields) -> Vec<(String, String)> {
        let list = match fields {
            Fields::None => Vec::new(),
            Fields::Draft8 { policy, state } => vec![(RATELIMIT_POLICY, policy), (RATELIMIT, state)],
            Fields::Any(any) => any,
        };
        list.into_iter().map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned())).collect()
    }

    fn expected(verdict: &Verdict, name: &str) -> Vec<(String, String)> {
        let policies = [Policy { name, decision: verdict.combined }];
        let fields = response_fields(&verdict.combined, &policies, HeaderStyle::Draft8, false, 0).unwrap();
        fields.into_iter().map(|(n, v)| (n.to_ascii_lowercase(), v)).collect()
    }

    /// The kept `RateLimit-Policy` value serves only decisions of the same
    /// limits and windows: another policy's decision gets its own text.
    #[test]
    fn the_kept_policy_value_serves_only_the_same_policies() {
        let spec = LimiterSpec::FixedWindow { limit: 10, window_micros: 60_000_000 };
        let limiter =
            Named::new(AnyKeyedLimiter::new(&spec, KeyedOptions::new(10), AnyClock::default()).unwrap(), ["p"]);
        let layer = RateLimitLayer::new(limiter);
        let settings = &*layer.settings;
        let verdict = |d| Verdict::single(d);
        let Checking::Ready(Ok(first)) = layer.limiter.check(b"k", 1) else { panic!() };
        assert_eq!(texts(settings.fields(&*layer.limiter, &first).unwrap()), expected(&first, "p"));
        assert!(settings.policy_field.get().is_some(), "the first request keeps the value");
        let second = verdict(Decision::allowed(10, 3, 5_000_000, 60_000_000));
        let fields = settings.fields(&*layer.limiter, &second).unwrap();
        assert!(matches!(fields, Fields::Draft8 { .. }), "the same policy reuses it");
        assert_eq!(texts(fields), expected(&second, "p"));
        for other in [Decision::allowed(20, 3, 5_000_000, 60_000_000), Decision::allowed(10, 3, 5_000_000, 1_000_000)] {
            assert_eq!(
                texts(settings.fields(&*layer.limiter, &verdict(other)).unwrap()),
                expected(&verdict(other), "p")
            );
        }
    }
}
