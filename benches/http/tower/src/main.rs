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
//!
//! `tower-bench-server --in-process ROUNDS N [MODE...]`: no server, no
//! wrk — each mode's app (or only those named, `none` among them for the
//! baseline) called N times in a row as a `tower::Service` (the request
//! carrying the peer's `ConnectInfo`, as `axum::serve` inserts it), on one
//! thread, ROUNDS times taking turns; the fastest round of each mode, in
//! the thread's CPU time, is its time per request. What the middleware adds without the HTTP
//! connection's work, and far steadier than wrk on a busy machine.

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

const MODES: [&str; 5] = ["none", "ratekeeper", "ratekeeper-bare", "governor", "governor-headers"];

/// This thread's CPU time: what a round cost, whatever else the machine
/// ran meanwhile (the benchmark shares its cores).
fn thread_cpu_nanos() -> i128 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given, nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    i128::from(now.tv_sec) * 1_000_000_000 + i128::from(now.tv_nsec)
}

/// The fastest of `rounds` rounds of `n` calls of each mode's app, in ns
/// per request.
fn in_process(rounds: usize, n: usize, only: &[String]) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("the runtime");
    let peer = axum::extract::ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000)));
    // As `axum::serve` does once per connection: the handlers made routes,
    // the layers applied, once.
    let mut apps: Vec<Router> = MODES.iter().map(|mode| app(mode).with_state(())).collect();
    let mut best = [f64::INFINITY; MODES.len()];
    runtime.block_on(async {
        for _ in 0..rounds {
            for (i, app) in apps.iter_mut().enumerate() {
                if !only.is_empty() && !only.iter().any(|mode| mode == MODES[i]) {
                    continue;
                }
                let start = thread_cpu_nanos();
                for _ in 0..n {
                    let mut request = axum::http::Request::new(axum::body::Body::empty());
                    request.extensions_mut().insert(peer);
                    std::future::poll_fn(|cx| tower_service::Service::<axum::extract::Request>::poll_ready(app, cx))
                        .await
                        .unwrap();
                    let response = tower_service::Service::call(app, request).await.unwrap();
                    assert!(response.status().is_success(), "{}: refused", MODES[i]);
                }
                best[i] = best[i].min((thread_cpu_nanos() - start) as f64 / n as f64);
            }
        }
    });
    println!("in process: the fastest of {rounds} rounds of {n} calls per mode, one thread's CPU time");
    println!("{:<18}{:>12}{:>12}", "mode", "ns/request", "added ns");
    // Modes left out (`only`) have no time: neither a row nor a ratio.
    for (mode, ns) in MODES.iter().zip(best).filter(|(_, ns)| ns.is_finite()) {
        println!("{mode:<18}{ns:>12.0}{:>12.0}", ns - best[0]);
    }
    let ratio = |ours: usize, peer: usize| match (best[ours] - best[0]) / (best[peer] - best[0]) {
        r if r.is_finite() => format!("{r:.2}x"),
        _ => "n/a".to_owned(),
    };
    println!(
        "added cost, ratekeeper-tower / tower-governor: with header fields {}, without {}",
        ratio(1, 4),
        ratio(2, 3)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, rounds, n, only @ ..] = args.as_slice() {
        if flag == "--in-process" {
            return in_process(rounds.parse().expect("ROUNDS"), n.parse().expect("N"), only);
        }
    }
    let mode = args.first().cloned().unwrap_or_else(|| "none".to_owned());
    let app = app(&mode);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_io().build().expect("the runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        println!("{}", listener.local_addr().unwrap().port());
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.expect("serve");
    });
}
