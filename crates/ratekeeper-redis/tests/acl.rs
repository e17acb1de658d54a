//! ACL users: the least privilege the limiters need
//! (`tests/redis/acl-least-privilege`, the line SECURITY.md gives), every
//! grant in it needed, and the refusals (`NOPERM`, `WRONGPASS`, `NOAUTH`)
//! as [`Error::Auth`] naming the cause — on a private plain-TCP server
//! (TLS changes nothing here; `tls.rs` runs the same user over TLS).

#[path = "shared/every_limiter.rs"]
mod every_limiter;
mod support;

use std::time::Duration;

use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions};
use support::RedisServer;

/// The rules every ratekeeper user needs, as tests/redis/with-redis and
/// SECURITY.md give them.
const LEAST_PRIVILEGE: &str = include_str!("../../../tests/redis/acl-least-privilege");

/// Grants not exercised by [`every_limiter::every_limiter_decides`], and
/// why they stay: `PING` is the probe after a timeout (see "When Redis
/// counts as down" in store.rs), `EVAL` what the Node binding's pipe sends
/// after `NOSCRIPT`.
const NOT_EXERCISED: [&str; 2] = ["+ping", "+eval"];

fn rules() -> Vec<&'static str> {
    LEAST_PRIVILEGE.split_whitespace().collect()
}

fn set_user(server: &RedisServer, name: &str, password: &str, rules: &[&str]) {
    let mut command = redis::cmd("ACL");
    command.arg("SETUSER").arg(name).arg("reset").arg("on").arg(format!(">{password}")).arg(rules);
    command.query::<()>(&mut server.connection()).unwrap();
}

fn options(user: &str, password: &str) -> StoreOptions {
    StoreOptions {
        username: Some(user.into()),
        password: Some(password.into()),
        timeout: Duration::from_secs(2),
        ..StoreOptions::default()
    }
}

fn access_error<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
    match result {
        Err(Error::Auth(why)) => why,
        other => panic!("expected Error::Auth, got {other:?}"),
    }
}

#[test]
fn the_least_privilege_user_runs_every_limiter() {
    let server = RedisServer::start();
    set_user(&server, "ratekeeper", "secret", &rules());
    let store = RedisStore::connect(&server.url(), options("ratekeeper", "secret")).unwrap();
    every_limiter::every_limiter_decides(&store, "acl").unwrap();
    // The same user from the URL.
    let url = server.url().replacen("redis://", "redis://ratekeeper:secret@", 1);
    let store =
        RedisStore::connect(&url, StoreOptions { timeout: Duration::from_secs(2), ..StoreOptions::default() }).unwrap();
    let limiter = RedisLimiter::new(&store, "acl-url", every_limiter::EXACT[0].1).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
}

#[test]
fn security_md_gives_the_tested_line() {
    let security = include_str!("../../../SECURITY.md");
    let line = format!("ACL SETUSER ratekeeper on >PASSWORD {}", LEAST_PRIVILEGE.trim());
    assert!(security.contains(&line), "SECURITY.md should give: {line}");
}

#[test]
fn every_grant_of_the_least_privilege_is_needed() {
    let server = RedisServer::start();
    let rules = rules();
    for (i, rule) in rules.iter().enumerate() {
        if NOT_EXERCISED.contains(rule) || !(rule.starts_with('+') || rule.starts_with('~')) {
            continue;
        }
        let mut fewer = rules.clone();
        fewer.remove(i);
        let user = format!("without-{i}");
        set_user(&server, &user, "secret", &fewer);
        let store = RedisStore::connect(&server.url(), options(&user, "secret")).unwrap();
        let result = every_limiter::every_limiter_decides(&store, &format!("grant-{i}"));
        let why = match result {
            Err(Error::Auth(why)) => why,
            other => panic!("without {rule}: expected Error::Auth, got {other:?}"),
        };
        assert!(why.contains("NOPERM"), "without {rule}: {why}");
        assert!(!store.is_down(), "without {rule}: a refusal is an answer");
    }
}

#[test]
fn a_user_without_evalsha_gets_noperm() {
    let server = RedisServer::start();
    let mut rules = rules();
    rules.extend(["-evalsha", "-eval"]);
    set_user(&server, "noscript", "secret", &rules);
    let store = RedisStore::connect(&server.url(), options("noscript", "secret")).unwrap();
    let limiter = RedisLimiter::new(&store, "noscript", every_limiter::EXACT[0].1).unwrap();
    for attempt in 0..2 {
        let error = limiter.check("k", 1).unwrap_err();
        assert!(!error.is_unavailability(), "{error:?}");
        let why = access_error(Err::<(), _>(error));
        assert!(why.contains("NOPERM") && why.contains("evalsha"), "{why}");
        // Blocking and async alike, and the store is not down: no policy
        // decides instead of Redis.
        let async_limiter = limiter.clone();
        let why = access_error(every_limiter::on_runtime(async move { async_limiter.check_async("k", 1).await }));
        assert!(why.contains("NOPERM"), "attempt {attempt}: {why}");
        assert!(!store.is_down());
    }
    // A key outside rk:* is refused too (the user's keys, not its commands).
    let mut conn = redis::Client::open(server.url().replacen("redis://", "redis://noscript:secret@", 1))
        .unwrap()
        .get_connection()
        .unwrap();
    let refused = redis::cmd("GET").arg("elsewhere").query::<Option<String>>(&mut conn).unwrap_err();
    assert_eq!(refused.code(), Some("NOPERM"));
}

#[test]
fn a_wrong_password_or_an_unknown_user_is_an_access_error() {
    let server = RedisServer::start();
    set_user(&server, "ratekeeper", "secret", &rules());
    for (user, password) in [("ratekeeper", "wrong"), ("nobody", "secret")] {
        let why = access_error(RedisStore::connect(&server.url(), options(user, password)));
        assert!(why.contains("WRONGPASS"), "{user}: {why}");
    }
    // The options override the URL's credentials.
    let url = server.url().replacen("redis://", "redis://ratekeeper:wrong@", 1);
    assert!(RedisStore::connect(&url, options("ratekeeper", "secret")).is_ok());
}

#[test]
fn no_password_for_a_server_that_requires_one_is_noauth() {
    let server = RedisServer::start();
    // Set after the start: the support's readiness check sends no password.
    redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("secret").query::<()>(&mut server.connection()).unwrap();
    let options = StoreOptions { timeout: Duration::from_secs(2), ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), options.clone());
    // redis-rs connects without a command to refuse; the first one is.
    let store = match store {
        Ok(store) => store,
        Err(e) => panic!("{e:?}"),
    };
    let limiter = RedisLimiter::new(&store, "noauth", every_limiter::EXACT[0].1).unwrap();
    let why = access_error(limiter.check("k", 1));
    assert!(why.contains("NOAUTH"), "{why}");
    assert!(!store.is_down());
    let store =
        RedisStore::connect(&server.url(), StoreOptions { password: Some("secret".into()), ..options }).unwrap();
    let limiter = RedisLimiter::new(&store, "noauth", every_limiter::EXACT[0].1).unwrap();
    assert!(limiter.check("k", 1).unwrap().allowed);
}

/// What a Redis Cluster asks of the user beyond a single server's line:
/// the client learns which master holds which slot (`CLUSTER SLOTS`), and
/// follows a slot that is moving (`ASKING` before the command it resends;
/// not reached here — no slot moves — so granted, not tested, as `PING`).
const CLUSTER_EXTRA: [&str; 2] = ["+cluster|slots", "+asking"];

#[test]
fn on_a_cluster_the_least_privilege_needs_cluster_slots() {
    let cluster = support::RedisCluster::start();
    let urls = cluster.urls();
    let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
    // ACL users are per node: every node gets both users.
    let mut with_cluster = rules();
    with_cluster.extend(CLUSTER_EXTRA);
    for node in &cluster.nodes {
        let mut conn = node.connection();
        for (name, rules) in [("ratekeeper", &with_cluster), ("single-server", &rules())] {
            let mut command = redis::cmd("ACL");
            command.arg("SETUSER").arg(name).arg("reset").arg("on").arg(">secret").arg(rules.as_slice());
            command.query::<()>(&mut conn).unwrap();
        }
    }
    let store = RedisStore::connect_cluster(&nodes, options("ratekeeper", "secret")).unwrap();
    every_limiter::every_limiter_decides(&store, "acl-cluster").unwrap();
    // The single server's line alone cannot even learn the slots.
    let why = match RedisStore::connect_cluster(&nodes, options("single-server", "secret")) {
        Ok(store) => {
            let limiter = RedisLimiter::new(&store, "acl-cluster", every_limiter::EXACT[0].1).unwrap();
            access_error(limiter.check("k", 1))
        }
        Err(e) => access_error(Err::<(), _>(e)),
    };
    assert!(why.contains("NOPERM") || why.contains("cluster"), "{why}");
}

#[test]
fn security_md_gives_the_cluster_grants() {
    let security = include_str!("../../../SECURITY.md");
    let grants = CLUSTER_EXTRA.join(" ");
    assert!(security.contains(&grants), "SECURITY.md should give the cluster's extra grants: {grants}");
}
