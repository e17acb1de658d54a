//! A limit shared through Redis holds across two axum servers: each has
//! its own store and limiter (as two processes would), both named alike,
//! and concurrent clients spread their requests over both. Runs under
//! tests/redis/with-redis (scripts/test.sh, the stage tower-redis), which
//! exports RATEKEEPER_REDIS_URL.

mod support;

use std::collections::BTreeMap;

use axum::routing::get;
use axum::Router;
use http::StatusCode;
use ratekeeper::{Algorithm, LimiterSpec};
use ratekeeper_redis::{RedisLimiter, RedisStore, StoreOptions};
use ratekeeper_tower::{redis_limiter_from_text, RateLimitLayer};
use support::{loopback, serve, Client, Reply};

fn redis_url() -> String {
    std::env::var("RATEKEEPER_REDIS_URL")
        .expect("RATEKEEPER_REDIS_URL: run under tests/redis/with-redis (scripts/test.sh tower-redis)")
}

/// One server's app: its own store and limiter, on the shared name.
async fn server(name: &str, spec: LimiterSpec) -> std::net::SocketAddr {
    let url = redis_url();
    let name = name.to_owned();
    let limiter = tokio::task::spawn_blocking(move || {
        let store = RedisStore::connect(&url, StoreOptions::default()).expect("connect to Redis");
        RedisLimiter::new(&store, &name, spec).unwrap()
    })
    .await
    .unwrap();
    serve(Router::new().route("/", get(|| async { "ok" })).layer(RateLimitLayer::new(limiter))).await
}

/// Three keys, four clients per key on each of two servers, five requests
/// per client: 40 requests per key for a limit of 15 an hour. Exactly 15
/// are admitted per key, over both servers together, and their
/// `RateLimit` fields count down from 14 to 0, each value once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_limit_holds_across_two_servers() {
    const LIMIT: u64 = 15;
    let name = format!("tower-test-{}", std::process::id());
    let spec = LimiterSpec::FixedWindow { limit: LIMIT, window_micros: 3_600_000_000 };
    let servers = [server(&name, spec).await, server(&name, spec).await];

    let mut tasks = Vec::new();
    for key in 0..3u8 {
        for server in servers {
            for _ in 0..4 {
                tasks.push(tokio::spawn(async move {
                    let mut client = Client::connect(server, loopback(60 + key)).await;
                    let mut replies = Vec::new();
                    for _ in 0..5 {
                        replies.push(client.get("/", &[]).await);
                    }
                    (key, replies)
                }));
            }
        }
    }
    let mut by_key: BTreeMap<u8, Vec<Reply>> = BTreeMap::new();
    for task in tasks {
        let (key, replies) = task.await.unwrap();
        by_key.entry(key).or_default().extend(replies);
    }
    for (key, replies) in by_key {
        assert_eq!(replies.len(), 40);
        let mut remaining: Vec<u64> = Vec::new();
        for reply in &replies {
            let field = reply.header("ratelimit").expect("RateLimit on every response");
            let r: u64 = field.split(";r=").nth(1).and_then(|s| s.split(';').next()).unwrap().parse().unwrap();
            match reply.status {
                StatusCode::OK => remaining.push(r),
                StatusCode::TOO_MANY_REQUESTS => {
                    assert_eq!(r, 0);
                    assert!(reply.header("retry-after").is_some());
                }
                other => panic!("key {key}: status {other}: {:?}", reply.body),
            }
        }
        remaining.sort_unstable();
        assert_eq!(remaining, (0..LIMIT).collect::<Vec<_>>(), "key {key}: exactly the limit, over both servers");
    }
}

/// Several limits through Redis are one composite: a request refused by
/// one limit takes nothing from the other. Two servers share "15 per hour;
/// 20 per day" (limits text) and 40 requests per key arrive: exactly 15 are
/// admitted, each response's fields name both policies, and the day's
/// limit has counted only the 15 admitted — a limit per `RedisLimiter`
/// checked in turn would have counted all 20 the day allows (the refused
/// requests too) and left it at 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_redis_limits_are_all_or_nothing_across_two_servers() {
    const TEXT: &str = "15/hour; 20/day";
    let name = format!("tower-composite-{}", std::process::id());
    let mut servers = Vec::new();
    let mut peek = None;
    for _ in 0..2 {
        let (url, name) = (redis_url(), name.clone());
        let limiter = tokio::task::spawn_blocking(move || {
            let store = RedisStore::connect(&url, StoreOptions::default()).expect("connect to Redis");
            redis_limiter_from_text(&store, &name, TEXT, Algorithm::FixedWindow).unwrap()
        })
        .await
        .unwrap();
        peek = Some(limiter.limiter().clone());
        servers.push(serve(Router::new().route("/", get(|| async { "ok" })).layer(RateLimitLayer::new(limiter))).await);
    }

    let mut tasks = Vec::new();
    for server in servers {
        for _ in 0..4 {
            tasks.push(tokio::spawn(async move {
                let mut client = Client::connect(server, loopback(90)).await;
                let mut replies = Vec::new();
                for _ in 0..5 {
                    replies.push(client.get("/", &[]).await);
                }
                replies
            }));
        }
    }
    let mut admitted = 0;
    for task in tasks {
        for reply in task.await.unwrap() {
            let field = reply.header("ratelimit").expect("RateLimit on every response");
            assert!(field.contains("\"15-in-1hr\";") && field.contains("\"20-in-1day\";"), "{field}");
            match reply.status {
                StatusCode::OK => admitted += 1,
                StatusCode::TOO_MANY_REQUESTS => assert!(reply.header("retry-after").is_some()),
                other => panic!("status {other}: {:?}", reply.body),
            }
        }
    }
    assert_eq!(admitted, 15, "exactly the hour's limit, over both servers");
    let composite = peek.unwrap();
    let key = loopback(90).to_string();
    let now = tokio::task::spawn_blocking(move || composite.peek(key, 0).unwrap()).await.unwrap();
    let remaining: Vec<u64> = now.parts.iter().map(|d| d.remaining).collect();
    assert_eq!(remaining, [0, 5], "the refusals took nothing from the day's limit");
}
