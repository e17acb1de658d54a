//! The layer in an axum app on a real loopback server, asked by real HTTP
//! clients (tests/support): the limit per key under concurrent clients,
//! each response's fields against the decision, the client's address and
//! forwarding headers, and the settings (cost, exemptions, hooks).

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http::{HeaderName, Method, Request, Response, StatusCode};
use ratekeeper::http::{limiter_from_text, response_fields, HeaderStyle, Ipv6Prefix, Policy, TrustedProxies};
use ratekeeper::{Algorithm, AnyClock, AnyKeyedLimiter, Decision, KeyedOptions, LimiterSpec, ManualClock};
use ratekeeper_tower::{ClientAddress, HeaderKey, Named, NoKey, RateLimitLayer};
use support::{expected_fields, loopback, serve, Client, Reply};

const HOUR_MICROS: i64 = 3_600_000_000;

fn limiter(spec: &LimiterSpec, clock: &Arc<ManualClock>) -> AnyKeyedLimiter {
    AnyKeyedLimiter::new(spec, KeyedOptions::new(10_000), AnyClock::from(Arc::clone(clock))).unwrap()
}

fn app() -> Router {
    Router::new()
        .route("/", get(|| async { "ok" }).options(|| async { "options" }))
        .route("/expensive", get(|| async { "expensive" }))
        .route("/health", get(|| async { "healthy" }))
        .route("/health/db", get(|| async { "healthy" }))
        .route("/healthz", get(|| async { "healthy" }))
}

/// The fields `response_fields` gives for `decision`, one policy named
/// `name`, as a reply lists them.
fn fields_of(decision: &Decision, name: &str, style: HeaderStyle, legacy: bool, now: u64) -> Vec<(String, String)> {
    let policies = [Policy { name, decision: *decision }];
    expected_fields(response_fields(decision, &policies, style, legacy, now).unwrap())
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// Four keys (four source addresses), four concurrent clients each on its
/// own connection, six requests per client: 24 requests per key for a
/// limit of 10 in an hour that never passes (a manual clock). Exactly 10
/// are admitted per key, and the responses' fields are, as a multiset,
/// those of the 24 decisions the same limiter gives one key in a row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_the_limit_is_admitted_per_key_under_concurrent_clients() {
    const LIMIT: u64 = 10;
    const KEYS: u8 = 4;
    const CLIENTS: usize = 4;
    const REQUESTS: usize = 6;
    let clock = Arc::new(ManualClock::new());
    let spec = LimiterSpec::FixedWindow { limit: LIMIT, window_micros: HOUR_MICROS };
    let server = serve(app().layer(RateLimitLayer::new(limiter(&spec, &clock)))).await;

    let mut tasks = Vec::new();
    for key in 0..KEYS {
        for _ in 0..CLIENTS {
            tasks.push(tokio::spawn(async move {
                let mut client = Client::connect(server, loopback(20 + key)).await;
                let mut replies = Vec::new();
                for _ in 0..REQUESTS {
                    replies.push(client.get("/", &[]).await);
                }
                (key, replies)
            }));
        }
    }
    let mut by_key: BTreeMap<u8, Vec<Reply>> = BTreeMap::new();
    for task in tasks {
        let (key, replies) = task.await.unwrap();
        by_key.entry(key).or_default().extend(replies);
    }

    // What one key's requests in a row get from the same limiter.
    let shadow = limiter(&spec, &Arc::new(ManualClock::new()));
    let mut expected: Vec<Vec<(String, String)>> = (0..CLIENTS * REQUESTS)
        .map(|_| fields_of(&shadow.check(b"k", 1).unwrap(), "default", HeaderStyle::Draft8, false, 0))
        .collect();
    expected.sort();

    assert_eq!(by_key.len(), usize::from(KEYS));
    for (key, replies) in by_key {
        let admitted = replies.iter().filter(|r| r.status == StatusCode::OK).count();
        assert_eq!(admitted as u64, LIMIT, "key {key}: admitted");
        for reply in &replies {
            match reply.status {
                StatusCode::OK => assert_eq!(reply.body, "ok"),
                StatusCode::TOO_MANY_REQUESTS => {
                    assert_eq!(reply.header("retry-after"), Some("3600"));
                    assert_eq!(reply.body, "Too Many Requests\n");
                }
                other => panic!("key {key}: status {other}"),
            }
        }
        let mut fields: Vec<_> = replies.iter().map(Reply::limit_fields).collect();
        fields.sort();
        assert_eq!(fields, expected, "key {key}: the fields are the decisions'");
    }
}

/// One client, requests 1.5 s apart on a manual clock through a sliding
/// window counter (5 per 10 s): each response's fields are exactly
/// `response_fields` of the decision a twin limiter on the same clock
/// gives, in every style, with the legacy fields, and under the name given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_responses_fields_are_its_decisions_in_every_style() {
    let spec = LimiterSpec::SlidingWindowCounter { limit: 5, window_micros: 10_000_000 };
    for (style, legacy) in [
        (HeaderStyle::Draft8, false),
        (HeaderStyle::Draft7, false),
        (HeaderStyle::Draft6, false),
        (HeaderStyle::Draft6, true),
        (HeaderStyle::None, true),
        (HeaderStyle::None, false),
    ] {
        let clock = Arc::new(ManualClock::new());
        let layer = RateLimitLayer::new(Named::new(limiter(&spec, &clock), ["per-10s"]))
            .header_style(style)
            .legacy_headers(legacy);
        let server = serve(app().layer(layer)).await;
        let twin = limiter(&spec, &clock);
        let mut client = Client::connect(server, loopback(30)).await;
        let mut refused = 0;
        for i in 0..16 {
            let before = unix_now();
            let reply = client.get("/", &[]).await;
            let after = unix_now();
            let decision = twin.check(loopback(30).to_string().as_bytes(), 1).unwrap();
            assert_eq!(reply.status == StatusCode::OK, decision.allowed, "{style:?}: request {i}");
            let fields = reply.limit_fields();
            assert!(
                fields == fields_of(&decision, "per-10s", style, legacy, before)
                    || fields == fields_of(&decision, "per-10s", style, legacy, after),
                "{style:?} legacy {legacy}, request {i}: {fields:?} for {decision:?}"
            );
            if !decision.allowed {
                refused += 1;
                assert!(reply.header("retry-after").is_some());
            }
            if style != HeaderStyle::None || legacy {
                assert!(fields.len() > usize::from(!decision.allowed), "{style:?}: fields sent");
            }
            clock.advance(Duration::from_millis(1_500));
        }
        assert!(refused > 0, "the sequence reaches the limit");
    }
}

/// Behind no trusted proxy, a client's own `X-Forwarded-For` and
/// `Forwarded` change nothing: all its requests share its peer's key.
/// Through a trusted proxy (127.0.0.9), each forwarded client has its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarding_headers_count_only_from_trusted_proxies() {
    let clock = Arc::new(ManualClock::new());
    let spec = LimiterSpec::FixedWindow { limit: 3, window_micros: HOUR_MICROS };
    let trusted = TrustedProxies::parse(["127.0.0.9/32"]).unwrap();
    let layer = RateLimitLayer::new(limiter(&spec, &clock)).key(ClientAddress::trusting(trusted));
    let server = serve(app().layer(layer)).await;

    let mut spoofer = Client::connect(server, loopback(5)).await;
    let mut admitted = 0;
    for i in 0..8 {
        let forwarded_for = format!("198.51.100.{i}");
        let forwarded = format!("for=198.51.100.{i}");
        let headers: &[(&str, &str)] = if i % 2 == 0 {
            &[("x-forwarded-for", &forwarded_for)]
        } else {
            &[("forwarded", &forwarded), ("x-forwarded-for", &forwarded_for)]
        };
        admitted += usize::from(spoofer.get("/", headers).await.status == StatusCode::OK);
    }
    assert_eq!(admitted, 3, "an untrusted peer is one key whatever it sends");

    let mut proxy = Client::connect(server, loopback(9)).await;
    for client in 1..=4 {
        let forwarded_for = format!("203.0.113.{client}");
        let reply = proxy.get("/", &[("x-forwarded-for", &forwarded_for)]).await;
        assert_eq!(reply.status, StatusCode::OK, "client {client} through the trusted proxy");
    }
    let statuses: Vec<StatusCode> = {
        let mut statuses = Vec::new();
        for _ in 0..3 {
            statuses.push(proxy.get("/", &[("x-forwarded-for", "198.51.100.7, 203.0.113.1")]).await.status);
        }
        statuses
    };
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS], "203.0.113.1's own limit");
    // The proxy's own requests (no header) are its own key, still whole.
    assert_eq!(proxy.get("/", &[]).await.status, StatusCode::OK);
}

/// IPv6 clients forwarded by a trusted proxy: by default every address of
/// one /56 shares a key (a subscriber's block, whose addresses it can
/// rotate through), the next /56 has its own; with a prefix of 128 each
/// address is its own key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_clients_are_keyed_by_their_block() {
    let spec = LimiterSpec::FixedWindow { limit: 2, window_micros: HOUR_MICROS };
    let trusted = || TrustedProxies::parse(["127.0.0.9/32"]).unwrap();
    let same_block = ["2001:db8:0:100::1", "2001:db8:0:1ff:ffff::2", "2001:db8:0:180::3"];
    for (prefix, admitted_in_block) in [(Ipv6Prefix::DEFAULT, 2), (Ipv6Prefix::FULL, 3)] {
        let clock = Arc::new(ManualClock::new());
        let key = ClientAddress::trusting(trusted()).ipv6_prefix(prefix);
        let server = serve(app().layer(RateLimitLayer::new(limiter(&spec, &clock)).key(key))).await;
        let mut proxy = Client::connect(server, loopback(9)).await;
        let mut admitted = 0;
        for client in same_block {
            admitted += usize::from(proxy.get("/", &[("x-forwarded-for", client)]).await.status == StatusCode::OK);
        }
        assert_eq!(admitted, admitted_in_block, "/{}", prefix.bits());
        let next_block = proxy.get("/", &[("x-forwarded-for", "2001:db8:0:200::1")]).await;
        assert_eq!(next_block.status, StatusCode::OK, "/{}: the next block is another key", prefix.bits());
    }
}

/// The cost per request, exempt paths (segment by segment) and methods,
/// and the refusal hook, whose status and body are kept and whose
/// response still gets the fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_exemptions_and_the_refusal_hook() {
    let clock = Arc::new(ManualClock::new());
    let spec = LimiterSpec::FixedWindow { limit: 10, window_micros: HOUR_MICROS };
    let layer = RateLimitLayer::new(limiter(&spec, &clock))
        .cost(|request: &Request<axum::body::Body>| if request.uri().path() == "/expensive" { 4 } else { 1 })
        .exempt_path("/health/")
        .exempt_method(Method::OPTIONS)
        .refusal(|verdict| {
            let body = format!("{{\"retry_after_micros\":{}}}", verdict.combined.retry_after_micros);
            let mut response = Response::new(Bytes::from(body));
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            response.headers_mut().insert("content-type", "application/json".parse().unwrap());
            response
        });
    let server = serve(app().layer(layer)).await;
    let mut client = Client::connect(server, loopback(40)).await;

    for path in ["/health", "/health/db"] {
        for _ in 0..12 {
            let reply = client.get(path, &[]).await;
            assert_eq!(reply.status, StatusCode::OK, "{path} is exempt");
            assert!(reply.limit_fields().is_empty(), "{path}: unchecked, no fields");
        }
    }
    for _ in 0..12 {
        assert!(client.send(Method::OPTIONS, "/", &[]).await.limit_fields().is_empty(), "OPTIONS is exempt");
    }
    let first = client.get("/healthz", &[]).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.header("ratelimit"), Some("\"default\";r=9;t=3600"), "/healthz is not /health");

    assert_eq!(client.get("/expensive", &[]).await.header("ratelimit"), Some("\"default\";r=5;t=3600"));
    assert_eq!(client.get("/expensive", &[]).await.header("ratelimit"), Some("\"default\";r=1;t=3600"));
    let refused = client.get("/expensive", &[]).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.header("content-type"), Some("application/json"));
    assert_eq!(refused.body, format!("{{\"retry_after_micros\":{HOUR_MICROS}}}"));
    assert_eq!(refused.header("retry-after"), Some("3600"));
    assert_eq!(refused.header("ratelimit"), Some("\"default\";r=1;t=3600"));
    assert_eq!(client.get("/", &[]).await.status, StatusCode::OK, "one unit is left");
    assert_eq!(client.get("/", &[]).await.status, StatusCode::SERVICE_UNAVAILABLE);
}

/// A key from a header: a request without it passes unchecked by default,
/// or shares one key; a key longer than the limiter takes is its error,
/// answered 503 by default or passed on as the hook decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_key_and_limiter_errors() {
    let clock = Arc::new(ManualClock::new());
    let spec = LimiterSpec::FixedWindow { limit: 2, window_micros: HOUR_MICROS };
    let api_key = HeaderName::from_static("x-api-key");
    let admit = RateLimitLayer::new(limiter(&spec, &clock)).key(HeaderKey::new(api_key.clone()));
    let shared = RateLimitLayer::new(limiter(&spec, &clock))
        .key(HeaderKey::new(api_key.clone()))
        .when_no_key(NoKey::Shared(b"anonymous".to_vec()))
        .on_limiter_error(|_| None);
    let admitting = serve(app().layer(admit)).await;
    let sharing = serve(app().layer(shared)).await;

    let mut client = Client::connect(admitting, loopback(50)).await;
    for _ in 0..5 {
        let reply = client.get("/", &[]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert!(reply.limit_fields().is_empty(), "no key: unchecked");
    }
    let statuses = [
        client.get("/", &[("x-api-key", "a")]).await.status,
        client.get("/", &[("x-api-key", "a")]).await.status,
        client.get("/", &[("x-api-key", "a")]).await.status,
        client.get("/", &[("x-api-key", "b")]).await.status,
    ];
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS, StatusCode::OK]);
    let too_long = "k".repeat(300);
    let error = client.get("/", &[("x-api-key", &too_long)]).await;
    assert_eq!((error.status, &error.body[..]), (StatusCode::SERVICE_UNAVAILABLE, &b"Rate limiter unavailable\n"[..]));

    let mut client = Client::connect(sharing, loopback(51)).await;
    let statuses =
        [client.get("/", &[]).await.status, client.get("/", &[]).await.status, client.get("/", &[]).await.status];
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS], "keyless requests share");
    let passed = client.get("/", &[("x-api-key", &too_long)]).await;
    assert_eq!(passed.status, StatusCode::OK, "the hook passed the request on");
    assert!(passed.limit_fields().is_empty());
}

/// A limiter from limits text with two items: each response carries both
/// policies under their items' names, exactly as the twin limiter's
/// `fields` gives them, and the day's limit refuses while the hour's has
/// room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limiter_from_text_sends_every_policy() {
    let clock = Arc::new(ManualClock::new());
    let text_limiter = || {
        limiter_from_text(
            "2 per hour; 5/day",
            Algorithm::FixedWindow,
            KeyedOptions::new(100),
            AnyClock::from(Arc::clone(&clock)),
        )
        .unwrap()
    };
    let server = serve(app().layer(RateLimitLayer::new(text_limiter()))).await;
    let twin = text_limiter();
    let mut client = Client::connect(server, loopback(70)).await;
    let mut refused_by_the_day = 0;
    for i in 0..10 {
        let reply = client.get("/", &[]).await;
        let (combined, parts) = twin.check(b"127.0.0.70", 1).unwrap();
        assert_eq!(reply.status == StatusCode::OK, combined.allowed, "request {i}");
        let expected = expected_fields(twin.fields(&combined, &parts, HeaderStyle::Draft8, false, 0).unwrap());
        assert_eq!(reply.limit_fields(), expected, "request {i}");
        assert!(reply.header("ratelimit-policy").unwrap().starts_with("\"2-in-1hr\";q=2;w=3600, \"5-in-1day\";q=5;"));
        if !combined.allowed && parts[0].remaining > 0 {
            refused_by_the_day += 1;
        }
        clock.advance(Duration::from_secs(1_800));
    }
    assert!(refused_by_the_day > 0);
}
