//! `tower-bench-server MODE`: serves `GET /` ("ok") with axum on
//! 127.0.0.1, a port the OS picks (printed on stdout's first line), on one
//! Tokio worker thread, until killed. MODE is the middleware in front:
//!
//! * `none` — no limiter;
//! * `ratekeeper` — ratekeeper-tower as configured by default: the client
//!   address as key, draft-8 `RateLimit`/`RateLimit-Policy` on every
//!   response; the limiter from `"1000000000/second"` (sliding window
//!   counter, the default of the middleware);
//! * `ratekeeper-bare` — the same without header fields
//!   (`HeaderStyle::None`), as tower-governor sends none by default;
//! * `governor` — tower-governor as configured by default (peer IP key, no
//!   header fields), a quota of a cell per nanosecond and a burst of
//!   2^32 - 1;
//! * `governor-headers` — the same with `use_headers()` (its
//!   `x-ratelimit-*` fields).
//!
//! Every limit is out of reach: each request does the limiter's whole
//! work and is admitted. wrk's one connection address is one key, in every
//! mode.

use std::net::SocketAddr;

use axum::routing::get;
use axum::Router;
use ratekeeper::http::{limiter_from_text, HeaderStyle};
use ratekeeper::{Algorithm, AnyClock, KeyedOptions};
use ratekeeper_tower::RateLimitLayer;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::GovernorLayer;

fn app(mode: &str) -> Router {
    let app = Router::new().route("/", get(|| async { "ok" }));
    let limiter = || {
        limiter_from_text(
            "1000000000/second",
            Algorithm::SlidingWindowCounter,
            KeyedOptions::new(10_000),
            AnyClock::default(),
        )
        .expect("the limiter")
    };
    match mode {
        "none" => app,
        "ratekeeper" => app.layer(RateLimitLayer::new(limiter())),
        "ratekeeper-bare" => app.layer(RateLimitLayer::new(limiter()).header_style(HeaderStyle::None)),
        "governor" => {
            let config = GovernorConfigBuilder::default().per_nanosecond(1).burst_size(u32::MAX).finish().unwrap();
            app.layer(GovernorLayer::new(config))
        }
        "governor-headers" => {
            let config =
                GovernorConfigBuilder::default().per_nanosecond(1).burst_size(u32::MAX).use_headers().finish().unwrap();
            app.layer(GovernorLayer::new(config))
        }
        other => {
            eprintln!("tower-bench-server: unknown mode {other} (none, ratekeeper, ratekeeper-bare, governor, governor-headers)");
            std::process::exit(2);
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "none".to_owned());
    let app = app(&mode);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_io().build().expect("the runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        println!("{}", listener.local_addr().unwrap().port());
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.expect("serve");
    });
}
