//! TLS: the store over `rediss://` and [`TlsOptions`], against the
//! TLS-only servers of `tests/redis/with-redis --tls` (see that script for
//! the certificates and the environment). Without that environment each
//! test says so and passes having checked nothing: `cargo test` alone runs
//! no TLS server; `scripts/test.sh`'s cargo-test-tls stage does.

#[path = "shared/every_limiter.rs"]
mod every_limiter;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratekeeper::LimiterSpec;
use ratekeeper_redis::{Error, Pem, RedisLimiter, RedisStore, ScriptPipe, StoreOptions, TlsOptions};

/// What `with-redis --tls` exported.
struct Env {
    url: String,
    mtls_url: String,
    other_name_url: String,
    expired_url: String,
    ca: PathBuf,
    wrong_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    acl_user: String,
    acl_password: String,
    noscript_user: String,
    noscript_password: String,
    /// The TLS cluster's nodes (`rediss://`).
    cluster: Vec<String>,
}

fn env(test: &str) -> Option<Env> {
    let var = |name: &str| std::env::var(format!("RATEKEEPER_REDIS_TLS_{name}")).ok();
    let Some(url) = var("URL") else {
        eprintln!("{test}: skipped, no TLS server (run under tests/redis/with-redis --tls)");
        return None;
    };
    let required = |name: &str| var(name).unwrap_or_else(|| panic!("RATEKEEPER_REDIS_TLS_{name} is not set"));
    Some(Env {
        url,
        mtls_url: required("MTLS_URL"),
        other_name_url: required("OTHER_NAME_URL"),
        expired_url: required("EXPIRED_URL"),
        ca: required("CA").into(),
        wrong_ca: required("WRONG_CA").into(),
        cert: required("CERT").into(),
        key: required("KEY").into(),
        acl_user: required("ACL_USER"),
        acl_password: required("ACL_PASSWORD"),
        noscript_user: required("NOSCRIPT_USER"),
        noscript_password: required("NOSCRIPT_PASSWORD"),
        cluster: required("CLUSTER").split(',').map(str::to_owned).collect(),
    })
}

/// Generous timeouts: a new TLS connection of a debug build takes tens of
/// milliseconds (redis-rs loads the system's roots for each, then the
/// handshake), near the default 100 ms on a loaded machine; TLS, not
/// timeouts, is under test.
fn with_tls(tls: TlsOptions) -> StoreOptions {
    StoreOptions {
        tls: Some(tls),
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        ..StoreOptions::default()
    }
}

fn trusting(ca: &Path) -> TlsOptions {
    TlsOptions { ca: Some(Pem::File(ca.to_path_buf())), ..TlsOptions::default() }
}

fn tls_error(result: Result<RedisStore, Error>) -> String {
    match result {
        Err(Error::Tls(why)) => why,
        other => panic!("expected Error::Tls, got {other:?}"),
    }
}

#[test]
fn the_test_ca_connects_and_every_limiter_decides_over_tls() {
    let Some(env) = env("the_test_ca_connects_and_every_limiter_decides_over_tls") else { return };
    let store = RedisStore::connect(&env.url, with_tls(trusting(&env.ca))).unwrap();
    every_limiter::every_limiter_decides(&store, "tls").unwrap();
    // The CA as PEM bytes, and a redis:// URL: the options ask for TLS.
    let pem = std::fs::read(&env.ca).unwrap();
    let plain_scheme = env.url.replacen("rediss://", "redis://", 1);
    let tls = TlsOptions { ca: Some(Pem::Bytes(pem.clone())), ..TlsOptions::default() };
    let store = RedisStore::connect(&plain_scheme, with_tls(tls)).unwrap();
    // A pipe for a TLS store hands its host what a TLS connection needs:
    // the CA given (read), the URL's host as the name, verification on.
    let pipe = ScriptPipe::<usize>::new(&store).expect("a TLS store's pipe");
    let settings = pipe.tls().expect("the pipe's TLS settings");
    assert_eq!(settings.ca.as_deref(), Some(&pem[..]));
    assert!(settings.client_cert.is_none() && settings.client_key.is_none());
    assert!(settings.verify);
    assert_eq!(settings.server_name, "127.0.0.1");
    let limiter = RedisLimiter::new(&store, "tls-bytes", every_limiter::EXACT[2].1).unwrap();
    assert!(limiter.check("k", 3).unwrap().allowed);
    assert!(!limiter.check("k", 1).unwrap().allowed);
}

#[test]
fn rediss_alone_trusts_the_system_roots_only() {
    let Some(env) = env("rediss_alone_trusts_the_system_roots_only") else { return };
    let options = StoreOptions { tls: None, ..with_tls(TlsOptions::default()) };
    let why = tls_error(RedisStore::connect(&env.url, options));
    assert!(why.contains("not signed by a trusted CA"), "{why}");
}

#[test]
fn mutual_tls_presents_the_client_certificate() {
    let Some(env) = env("mutual_tls_presents_the_client_certificate") else { return };
    let tls = TlsOptions {
        client_cert: Some(Pem::File(env.cert.clone())),
        client_key: Some(Pem::File(env.key.clone())),
        ..trusting(&env.ca)
    };
    let store = RedisStore::connect(&env.mtls_url, with_tls(tls.clone())).unwrap();
    let limiter = RedisLimiter::new(&store, "mtls", every_limiter::EXACT[0].1).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
    // Blocking and async, both connections present it.
    let async_limiter = limiter.clone();
    assert!(every_limiter::on_runtime(async move { async_limiter.check_async("k", 1).await }).unwrap().allowed);
    // Without it, the server refuses the handshake: a TLS error, which
    // names the cause.
    let why = tls_error(RedisStore::connect(&env.mtls_url, with_tls(trusting(&env.ca))));
    assert!(why.contains("requires a client certificate") || why.contains("refused the client certificate"), "{why}");
    // Half of a pair is refused before connecting.
    let half = TlsOptions { client_key: None, ..tls };
    let why = tls_error(RedisStore::connect(&env.mtls_url, with_tls(half)));
    assert!(why.contains("needs its client key"), "{why}");
}

#[test]
fn a_certificate_not_to_trust_is_a_tls_error_naming_why() {
    let Some(env) = env("a_certificate_not_to_trust_is_a_tls_error_naming_why") else { return };
    let cases = [
        (&env.url, &env.wrong_ca, "not signed by a trusted CA"),
        (&env.other_name_url, &env.ca, "for another name"),
        (&env.expired_url, &env.ca, "has expired"),
    ];
    for (url, ca, cause) in cases {
        let result = RedisStore::connect(url, with_tls(trusting(ca)));
        let error = result.as_ref().err().cloned();
        let why = tls_error(result);
        assert!(why.contains(cause), "{url}: {why}");
        assert!(!error.unwrap().is_unavailability(), "{url}: not an unavailability");
    }
    // A CA file that is not PEM, or not there: refused before connecting.
    let not_pem = std::env::temp_dir().join(format!("ratekeeper-not-pem-{}", std::process::id()));
    std::fs::write(&not_pem, b"not a certificate").unwrap();
    let why = tls_error(RedisStore::connect(&env.url, with_tls(trusting(&not_pem))));
    assert!(why.contains("holds no PEM certificate"), "{why}");
    std::fs::remove_file(&not_pem).unwrap();
    let why = tls_error(RedisStore::connect(&env.url, with_tls(trusting(&not_pem))));
    assert!(why.contains("cannot read the TLS CA file"), "{why}");
}

/// A TCP proxy on loopback that forwards each new connection to the port
/// `target` holds, and can cut every connection open.
struct SwitchProxy {
    port: u16,
    target: Arc<AtomicU16>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl SwitchProxy {
    fn start(target: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Arc::new(AtomicU16::new(target));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (to, kept) = (Arc::clone(&target), Arc::clone(&open));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", to.load(Ordering::SeqCst))) else { continue };
                kept.lock().unwrap().extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || copy(client, server));
                std::thread::spawn(move || copy(s2, c2));
            }
        });
        SwitchProxy { port, target, open }
    }

    /// New connections go to `port`; the open ones are cut.
    fn switch(&self, port: u16) {
        self.target.store(port, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn copy(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buffer) {
        if n == 0 || to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

fn port_of(url: &str) -> u16 {
    url.trim_end_matches('/').rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn a_refused_certificate_on_reconnection_never_marks_the_store_down() {
    let Some(env) = env("a_refused_certificate_on_reconnection_never_marks_the_store_down") else { return };
    // Through a proxy to the good server, then to the expired one: the
    // store reconnects to a certificate it must refuse.
    let proxy = SwitchProxy::start(port_of(&env.url));
    let options = StoreOptions { retry_interval: Duration::from_secs(60), ..with_tls(trusting(&env.ca)) };
    let store = RedisStore::connect(&format!("rediss://127.0.0.1:{}/", proxy.port), options).unwrap();
    let limiter = RedisLimiter::new(&store, "reconnect", every_limiter::EXACT[2].1).unwrap().remember_refusals(false);
    assert!(limiter.check("k", 1).unwrap().allowed);
    proxy.switch(port_of(&env.expired_url));
    for attempt in 0..3 {
        match limiter.check("k", 1) {
            Err(Error::Tls(why)) => assert!(why.contains("has expired"), "{why}"),
            other => panic!("attempt {attempt}: expected Error::Tls, got {other:?}"),
        }
        // Not down: the next call tries again (and fails the same way,
        // rather than with `Unavailable` for a minute).
        assert!(!store.is_down(), "attempt {attempt}: marked down");
    }
    // Back to the good server: decisions come back at once.
    proxy.switch(port_of(&env.url));
    assert!(limiter.check("k", 1).unwrap().allowed);
}

#[test]
fn insecure_skip_verify_connects_to_any_certificate() {
    let Some(env) = env("insecure_skip_verify_connects_to_any_certificate") else { return };
    for url in [&env.other_name_url, &env.expired_url] {
        let tls = TlsOptions { insecure_skip_verify: true, ..trusting(&env.wrong_ca) };
        let store = RedisStore::connect(url, with_tls(tls)).unwrap();
        let limiter = RedisLimiter::new(&store, "insecure", every_limiter::EXACT[0].1).unwrap();
        assert!(limiter.check("k", 1).unwrap().allowed, "{url}");
    }
}

#[test]
fn the_least_privilege_acl_user_runs_every_limiter_over_tls() {
    let Some(env) = env("the_least_privilege_acl_user_runs_every_limiter_over_tls") else { return };
    let options = StoreOptions {
        username: Some(env.acl_user.clone()),
        password: Some(env.acl_password.clone()),
        ..with_tls(trusting(&env.ca))
    };
    let store = RedisStore::connect(&env.url, options).unwrap();
    every_limiter::every_limiter_decides(&store, "tls-acl").unwrap();
    // The user without EVALSHA: NOPERM, an access error that names it.
    let options = StoreOptions {
        username: Some(env.noscript_user.clone()),
        password: Some(env.noscript_password.clone()),
        ..with_tls(trusting(&env.ca))
    };
    let store = RedisStore::connect(&env.url, options).unwrap();
    let limiter = RedisLimiter::new(&store, "tls-noscript", every_limiter::EXACT[0].1).unwrap();
    match limiter.check("k", 1) {
        Err(Error::Auth(why)) => assert!(why.contains("NOPERM"), "{why}"),
        other => panic!("expected Error::Auth, got {other:?}"),
    }
    assert!(!store.is_down());
    // A wrong password, in the URL this time.
    let url = env.url.replacen("rediss://", &format!("rediss://{}:wrong@", env.acl_user), 1);
    match RedisStore::connect(&url, with_tls(trusting(&env.ca))) {
        Err(Error::Auth(why)) => assert!(why.contains("WRONGPASS"), "{why}"),
        other => panic!("expected Error::Auth, got {other:?}"),
    }
}

#[test]
fn limits_hold_across_tls_stores() {
    let Some(env) = env("limits_hold_across_tls_stores") else { return };
    // Two stores (two processes' worth) over TLS share one limit.
    let stores: Vec<RedisStore> =
        (0..2).map(|_| RedisStore::connect(&env.url, with_tls(trusting(&env.ca))).unwrap()).collect();
    let spec = LimiterSpec::FixedWindow { limit: 10, window_micros: 60_000_000 };
    let limiters: Vec<RedisLimiter> =
        stores.iter().map(|s| RedisLimiter::new(s, "tls-shared", spec).unwrap().remember_refusals(false)).collect();
    let admitted = (0..20).filter(|i| limiters[i % 2].check("k", 1).unwrap().allowed).count();
    assert_eq!(admitted, 10);
}

fn named(ca: &Path, server_name: &str) -> TlsOptions {
    TlsOptions { server_name: Some(server_name.to_owned()), ..trusting(ca) }
}

#[test]
fn server_name_is_the_name_checked_while_the_url_says_where_to_connect() {
    let Some(env) = env("server_name_is_the_name_checked_while_the_url_says_where_to_connect") else { return };
    // 127.0.0.1, whose certificate is for elsewhere.invalid only.
    let store = RedisStore::connect(&env.other_name_url, with_tls(named(&env.ca, "elsewhere.invalid"))).unwrap();
    every_limiter::every_limiter_decides(&store, "server-name").unwrap();
    assert_eq!(store.sentinel_master(), None);
    // Node's pipe connects to the URL's host and checks the server name.
    let pipe = ScriptPipe::<usize>::new(&store).expect("a pipe");
    assert_eq!(pipe.address(), ("127.0.0.1", port_of(&env.other_name_url)));
    let tls = pipe.tls().expect("TLS");
    assert_eq!((tls.server_name.as_str(), tls.verify), ("elsewhere.invalid", true));
    assert!(tls.ca.is_some());
    // A DNS name for the server at 127.0.0.1 whose certificate carries it.
    let store = RedisStore::connect(&env.url, with_tls(named(&env.ca, "localhost"))).unwrap();
    let limiter = RedisLimiter::new(&store, "server-name-localhost", every_limiter::EXACT[0].1).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
    // A name the certificate does not carry: a TLS error, not an outage.
    for (url, name) in [(&env.other_name_url, "localhost"), (&env.url, "elsewhere.invalid")] {
        let result = RedisStore::connect(url, with_tls(named(&env.ca, name)));
        let error = result.as_ref().err().cloned();
        let why = tls_error(result);
        assert!(why.contains("for another name"), "{url} as {name}: {why}");
        assert!(!error.unwrap().is_unavailability(), "{url} as {name}: not an unavailability");
    }
    // Not a name at all: refused before connecting.
    let why = tls_error(RedisStore::connect(&env.url, with_tls(named(&env.ca, "not a name"))));
    assert!(why.contains("neither a DNS name nor an IP address"), "{why}");
}

#[test]
fn a_server_name_store_reconnects_and_a_refused_name_never_marks_it_down() {
    let Some(env) = env("a_server_name_store_reconnects_and_a_refused_name_never_marks_it_down") else { return };
    // Through a proxy to the elsewhere.invalid server, then to the main
    // one (not elsewhere.invalid), then back.
    let proxy = SwitchProxy::start(port_of(&env.other_name_url));
    let retry_interval = Duration::from_secs(1);
    let options = StoreOptions { retry_interval, ..with_tls(named(&env.ca, "elsewhere.invalid")) };
    let store = RedisStore::connect(&format!("rediss://127.0.0.1:{}/", proxy.port), options).unwrap();
    let limiter =
        RedisLimiter::new(&store, "server-name-reconnect", every_limiter::EXACT[2].1).unwrap().remember_refusals(false);
    assert!(limiter.check("k", 1).unwrap().allowed);
    proxy.switch(port_of(&env.url));
    // The cut connection fails the call that finds it cut (it may have
    // run: never sent again), as an outage, unless the new connection
    // was made first.
    match limiter.check("k", 1) {
        Err(e) if e.is_unavailability() => std::thread::sleep(retry_interval + Duration::from_millis(100)),
        Err(Error::Tls(_)) => {}
        other => panic!("expected an unavailability, or Error::Tls, got {other:?}"),
    }
    // A new connection, to a certificate for another name: a TLS error,
    // the store not down.
    match limiter.check("k", 1) {
        Err(Error::Tls(why)) => assert!(why.contains("for another name"), "{why}"),
        other => panic!("expected Error::Tls, got {other:?}"),
    }
    assert!(!store.is_down());
    // Nor is that refusal kept for the retry interval: back to the right
    // server, the next call connects and decides at once.
    proxy.switch(port_of(&env.other_name_url));
    assert!(limiter.check("k", 1).unwrap().allowed);
    assert_eq!(store.sentinel_master(), None);
}

#[test]
fn a_cluster_over_tls_takes_the_ca_and_the_client_certificate() {
    let Some(env) = env("a_cluster_over_tls_takes_the_ca_and_the_client_certificate") else { return };
    let nodes: Vec<&str> = env.cluster.iter().map(String::as_str).collect();
    let store = RedisStore::connect_cluster(&nodes, with_tls(trusting(&env.ca))).unwrap();
    every_limiter::every_limiter_decides(&store, "tls-cluster").unwrap();
    // redis:// nodes and the options: TLS all the same, here mutual.
    let plain: Vec<String> = env.cluster.iter().map(|node| node.replacen("rediss://", "redis://", 1)).collect();
    let nodes: Vec<&str> = plain.iter().map(String::as_str).collect();
    let tls = TlsOptions {
        client_cert: Some(Pem::File(env.cert.clone())),
        client_key: Some(Pem::File(env.key.clone())),
        ..trusting(&env.ca)
    };
    let store = RedisStore::connect_cluster(&nodes, with_tls(tls)).unwrap();
    // Enough names that they land on all three masters.
    for i in 0..12 {
        let limiter = RedisLimiter::new(&store, &format!("tls-cluster-{i}"), every_limiter::EXACT[0].1).unwrap();
        let allowed: Vec<bool> = (0..4).map(|_| limiter.check("k", 1).unwrap().allowed).collect();
        assert_eq!(allowed, [true, true, true, false], "tls-cluster-{i}");
    }
    // Any certificate, unverified.
    let tls = TlsOptions { insecure_skip_verify: true, ..trusting(&env.wrong_ca) };
    let store = RedisStore::connect_cluster(&nodes, with_tls(tls)).unwrap();
    let limiter = RedisLimiter::new(&store, "tls-cluster-insecure", every_limiter::EXACT[0].1).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
}

#[test]
fn a_cluster_refuses_a_certificate_not_to_trust_and_takes_no_server_name() {
    let Some(env) = env("a_cluster_refuses_a_certificate_not_to_trust_and_takes_no_server_name") else { return };
    let nodes: Vec<&str> = env.cluster.iter().map(String::as_str).collect();
    for (tls, cause) in
        [(Some(trusting(&env.wrong_ca)), "not signed by a trusted CA"), (None, "not signed by a trusted CA")]
    {
        let options = StoreOptions { tls, ..with_tls(TlsOptions::default()) };
        match RedisStore::connect_cluster(&nodes, options) {
            Err(Error::Tls(why)) => assert!(why.contains(cause), "{why}"),
            other => panic!("expected Error::Tls, got {other:?}"),
        }
    }
    // A server name: not for a cluster, refused before connecting.
    let options = with_tls(named(&env.ca, "localhost"));
    match RedisStore::connect_cluster(&nodes, options) {
        Err(Error::Unsupported(what)) => assert!(what.contains("server_name"), "{what}"),
        other => panic!("expected Error::Unsupported, got {other:?}"),
    }
    // Half a client pair, or a CA that is not PEM: as for one server.
    let half = TlsOptions { client_cert: Some(Pem::File(env.cert.clone())), ..trusting(&env.ca) };
    match RedisStore::connect_cluster(&nodes, with_tls(half)) {
        Err(Error::Tls(why)) => assert!(why.contains("needs its client key"), "{why}"),
        other => panic!("expected Error::Tls, got {other:?}"),
    }
}
