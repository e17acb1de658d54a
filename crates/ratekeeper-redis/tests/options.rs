//! The options only a shared limiter takes (`RedisOption`): each refused
//! outside its domain, under its own name, before anything reaches Redis —
//! the one check every binding passes its callers' values through.

mod support;

use std::time::Duration;

use ratekeeper::{LimiterSpec, Value};
use ratekeeper_redis::{
    Error, Membership, RedisDividedLimiter, RedisOption, RedisRateLimiter, RedisStore, StoreOptions,
};
use support::RedisServer;

const HOUR: Duration = Duration::from_secs(3_600);
const DAY: Duration = Duration::from_secs(86_400);
const MICRO: Duration = Duration::from_micros(1);

/// The option and value an error refused, or a panic naming the result.
fn refused<T: std::fmt::Debug>(result: Result<T, Error>) -> (RedisOption, Value) {
    match result {
        Err(Error::InvalidOption(invalid)) => (invalid.option(), invalid.value()),
        other => panic!("not an invalid option: {other:?}"),
    }
}

fn micros(d: Duration) -> Value {
    Value::Int(d.as_micros() as i64)
}

/// Whether the server holds no key: nothing was written.
fn untouched(server: &RedisServer) -> bool {
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut server.connection()).unwrap();
    keys.is_empty()
}

#[test]
fn store_options_beyond_an_hour_are_refused_before_connecting() {
    let server = RedisServer::start();
    let base = StoreOptions { timeout: Duration::from_secs(2), ..StoreOptions::default() };
    let cases = [
        (StoreOptions { timeout: HOUR + MICRO, ..base.clone() }, RedisOption::Timeout, HOUR + MICRO),
        (StoreOptions { timeout: Duration::ZERO, ..base.clone() }, RedisOption::Timeout, Duration::ZERO),
        (StoreOptions { connect_timeout: HOUR + MICRO, ..base.clone() }, RedisOption::ConnectTimeout, HOUR + MICRO),
        (StoreOptions { retry_interval: HOUR + MICRO, ..base.clone() }, RedisOption::RetryInterval, HOUR + MICRO),
    ];
    for (options, option, value) in cases {
        assert_eq!(refused(RedisStore::connect(&server.url(), options.clone())), (option, micros(value)));
        // Refused before connecting: a port where nothing listens would
        // otherwise be unavailable.
        assert_eq!(refused(RedisStore::connect("redis://127.0.0.1:1/", options.clone())), (option, micros(value)));
        let nodes = ["redis://127.0.0.1:1/"];
        assert_eq!(refused(RedisStore::connect_cluster(&nodes, options)), (option, micros(value)));
    }
    // The bounds themselves are taken.
    let widest = StoreOptions { timeout: HOUR, connect_timeout: HOUR, retry_interval: HOUR, ..StoreOptions::default() };
    let store = RedisStore::connect(&server.url(), widest).unwrap();
    assert_eq!((store.timeout(), store.retry_interval()), (HOUR, HOUR));
    let tightest = StoreOptions {
        timeout: MICRO,
        connect_timeout: Duration::from_secs(2),
        retry_interval: Duration::ZERO,
        ..StoreOptions::default()
    };
    assert_eq!(RedisStore::connect(&server.url(), tightest).unwrap().retry_interval(), Duration::ZERO);
}

#[test]
fn heartbeat_ttls_from_3_ms_to_a_day_each_under_its_own_name() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let spec = LimiterSpec::FixedWindow { limit: 10, window_micros: 1_000_000 };
    let short = Duration::from_micros(2_999);
    for ttl in [short, DAY + MICRO] {
        assert_eq!(refused(Membership::join(&store, "g", ttl)), (RedisOption::Ttl, micros(ttl)));
        // A divided limiter's is its own `heartbeat_ttl`, not the
        // membership's `ttl` it becomes.
        let divided = RedisDividedLimiter::new(&store, "d", spec, ttl, 10);
        assert_eq!(refused(divided), (RedisOption::HeartbeatTtl, micros(ttl)));
    }
    assert!(untouched(&server), "a refused TTL joined a group");
    assert_eq!(Membership::join(&store, "g", DAY).unwrap().nodes(), 1);
    assert_eq!(RedisDividedLimiter::new(&store, "d", spec, Duration::from_millis(3), 10).unwrap().nodes(), 1);
}

#[test]
fn an_idle_ttl_is_at_least_a_microsecond() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let zero = RedisRateLimiter::builder("r", 1.0).idle_ttl(Duration::ZERO).connect(&store);
    assert_eq!(refused(zero), (RedisOption::IdleTtl, Value::Int(0)));
    assert!(untouched(&server), "a refused idle TTL created the limiter's state");
    assert!(RedisRateLimiter::builder("r", 1.0).idle_ttl(MICRO).connect(&store).is_ok());
}

#[test]
fn a_refused_option_is_reported_with_its_name_and_domain() {
    let server = RedisServer::start();
    let options = StoreOptions { timeout: Duration::from_secs(7_200), ..StoreOptions::default() };
    let error = RedisStore::connect(&server.url(), options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid argument timeout = 7200000000: must be above 0 and at most an hour (1 to 3600000000 microseconds)"
    );
    assert!(!error.is_unavailability());
}
