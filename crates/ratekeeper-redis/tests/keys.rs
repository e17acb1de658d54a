//! User keys: byte strings (text is its UTF-8, other bytes are kept as
//! they are), at most `max_key_bytes` long — a longer one is refused with
//! the error naming `key` by every limiter and every way of calling it,
//! before anything is stored or sent.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{Argument, LimiterSpec};
use ratekeeper_redis::{
    Error, Membership, RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter, RedisStore, ScriptPipe, StoreOptions,
    WhenUnavailable,
};
use support::RedisServer;

const SPEC: LimiterSpec = LimiterSpec::Gcra { max_burst: 9, count_per_period: 1, period_micros: 60_000_000 };

fn store(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), StoreOptions::default()).unwrap()
}

/// Every key in the server.
fn redis_keys(server: &RedisServer) -> Vec<Vec<u8>> {
    redis::cmd("KEYS").arg("*").query(&mut server.connection()).unwrap()
}

/// Whether `result` is the error naming `key`, with `length` as its value.
fn is_key_error<T: std::fmt::Debug>(result: &Result<T, Error>, length: usize) -> bool {
    matches!(result, Err(Error::Invalid(e)) if *e == ratekeeper::Error::invalid_uint(Argument::Key, length as u64))
}

#[test]
fn a_key_past_the_bound_is_refused_by_every_call_and_nothing_is_sent() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "bounded", SPEC).unwrap().when_unavailable(WhenUnavailable::FailOpen);
    assert_eq!(limiter.key_bytes_bound(), MaxKeyBytes::DEFAULT);
    let long = vec![b'k'; 257];
    // Loads the script (its first EVALSHA fails with NOSCRIPT).
    limiter.check("warm-up", 0).unwrap();
    let before = server.evalsha_calls();

    assert!(is_key_error(&limiter.check(&long, 1), 257));
    assert!(is_key_error(&limiter.peek(&long, 1), 257));
    let (a, b) = (limiter.clone(), long.clone());
    assert!(is_key_error(&RedisStore::block_on(async move { a.check_async(&b, 1).await }), 257));
    let (a, b) = (limiter.clone(), long.clone());
    assert!(is_key_error(&RedisStore::block_on(async move { a.peek_async(&b, 1).await }), 257));
    let (tx, rx) = std::sync::mpsc::channel();
    limiter.check_with(long.clone(), 1, move |r| tx.send(r).unwrap());
    assert!(is_key_error(&rx.recv_timeout(Duration::from_secs(5)).unwrap(), 257));
    let (tx, rx) = std::sync::mpsc::channel();
    limiter.peek_with(long.clone(), 1, move |r| tx.send(r).unwrap());
    assert!(is_key_error(&rx.recv_timeout(Duration::from_secs(5)).unwrap(), 257));
    assert_eq!(limiter.remembered_refusal(&long, 1), None);
    // In a batch, the long key gets its error and the others their answers.
    let a = limiter.clone();
    let answers = RedisStore::block_on(async move {
        a.check_many_async(vec![(b"fine".to_vec(), 1), (vec![b'k'; 300], 1), (b"also".to_vec(), 1)]).await
    });
    assert!(answers[0].as_ref().is_ok_and(|d| d.allowed && d.remaining == 9));
    assert!(is_key_error(&answers[1], 300));
    assert!(answers[2].as_ref().is_ok_and(|d| d.allowed && d.remaining == 9));

    // One batch went out, for the two good keys (a GCRA batch is one run);
    // nothing of the long key reached Redis, under any policy.
    assert_eq!(server.evalsha_calls() - before, 1);
    let keys = redis_keys(&server);
    assert_eq!(keys.len(), 2, "fine and also (a check of 0 keeps no state): {keys:?}");
    assert!(keys.iter().all(|k| !k.windows(3).any(|w| w == b"kkk")));

    // The bound itself, up to 256, is fine.
    assert!(limiter.check(&long[..256], 1).unwrap().allowed);
}

#[test]
fn a_limiter_may_raise_the_bound_to_64_kib() {
    let server = RedisServer::start();
    let s = store(&server);
    let largest = MaxKeyBytes::new(MaxKeyBytes::LARGEST).unwrap();
    let limiter = RedisLimiter::new(&s, "roomy", SPEC).unwrap().max_key_bytes(largest);
    assert_eq!(limiter.key_bytes_bound(), largest);
    let key = vec![0xffu8; 60 << 10];
    assert_eq!(limiter.check(&key, 1).unwrap().remaining, 9);
    assert_eq!(limiter.check(&key, 1).unwrap().remaining, 8);
    assert!(is_key_error(&limiter.check(vec![b'x'; 65_537], 1), 65_537));
    // A bound is set for the limiter, and its clones, only.
    assert!(is_key_error(&RedisLimiter::new(&s, "roomy", SPEC).unwrap().check(&key, 1), 60 << 10));
    let tight = limiter.clone().max_key_bytes(MaxKeyBytes::new(4).unwrap());
    assert!(is_key_error(&limiter.check("12345", 1), 5));
    assert!(tight.check("1234", 1).unwrap().allowed);
}

#[test]
fn keys_are_bytes_text_is_its_utf8_and_no_two_byte_strings_share_a_key() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "bytes", SPEC).unwrap();
    assert_eq!(limiter.check("é", 1).unwrap().remaining, 9);
    assert_eq!(limiter.check(b"\xc3\xa9", 1).unwrap().remaining, 8, "\"é\" is its UTF-8 bytes");
    assert_eq!(limiter.check(String::from("é"), 1).unwrap().remaining, 7);
    // Not UTF-8: a key of its own, not the replacement character's.
    assert_eq!(limiter.check(b"\xff", 1).unwrap().remaining, 9);
    assert_eq!(limiter.check("\u{fffd}", 1).unwrap().remaining, 9);
    assert_eq!(limiter.check(b"\xfe", 1).unwrap().remaining, 9);
    assert_eq!(limiter.check(b"\xff", 1).unwrap().remaining, 8);
    assert_eq!(limiter.check(b"a\0b", 1).unwrap().remaining, 9);
    assert_eq!(limiter.check(b"a", 1).unwrap().remaining, 9);
}

#[test]
fn leased_and_divided_limiters_and_the_local_share_take_the_same_keys() {
    let server = RedisServer::start();
    let s = store(&server);
    let long = vec![b'k'; 257];

    let leased = RedisLeasedLimiter::new(&s, "leased", SPEC, 2, Duration::from_secs(60)).unwrap();
    assert!(is_key_error(&leased.check(&long, 1), 257));
    let (tx, rx) = std::sync::mpsc::channel();
    leased.check_with(long.clone(), 1, move |r| tx.send(r).unwrap());
    assert!(is_key_error(&rx.recv_timeout(Duration::from_secs(5)).unwrap(), 257));
    let leased = leased.max_key_bytes(MaxKeyBytes::new(300).unwrap());
    assert!(leased.check(&long, 1).unwrap().allowed);
    assert!(leased.check(b"\xff", 1).unwrap().allowed);

    let divided = RedisDividedLimiter::new(&s, "divided", SPEC, Duration::from_secs(10), 100).unwrap();
    assert!(is_key_error(&divided.check(&long, 1), 257));
    let divided = divided.max_key_bytes(MaxKeyBytes::new(300).unwrap());
    assert_eq!(divided.key_bytes_bound().get(), 300);
    assert!(divided.check(&long, 1).unwrap().allowed);
    assert!(is_key_error(&divided.check(vec![0; 301], 1), 301));

    // The local share an exact-mode limiter falls back to follows the
    // limiter's bound, set before or after.
    let membership = Arc::new(Membership::join(&s, "share", Duration::from_secs(10)).unwrap());
    let exact = RedisLimiter::new(&s, "share", SPEC)
        .unwrap()
        .max_key_bytes(MaxKeyBytes::new(300).unwrap())
        .fall_back_to_local(Arc::clone(&membership), 100)
        .unwrap();
    drop(server); // Redis away: the share decides.
    assert!(exact.check(&long, 1).unwrap().allowed, "a 257-byte key in a 300-byte share");
    assert!(is_key_error(&exact.check(vec![0; 301], 1), 301));
    let exact = exact.max_key_bytes(MaxKeyBytes::new(1_000).unwrap());
    assert!(exact.check(vec![0; 1_000], 1).unwrap().allowed);
}

#[test]
fn a_pipe_answers_a_long_key_with_its_error_and_sends_nothing_for_it() {
    let server = RedisServer::start();
    let s = store(&server);
    let limiter = RedisLimiter::new(&s, "piped", SPEC).unwrap();
    let mut pipe: ScriptPipe<usize> = ScriptPipe::new(&s).unwrap();
    pipe.connecting();
    pipe.opened();
    while !pipe.take_output().is_empty() {}
    let answered = pipe.check_many(&limiter, vec![(vec![b'k'; 257], 1, 7), (b"fine".to_vec(), 1, 8)]).unwrap();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].0, 7);
    assert!(is_key_error(&answered[0].1, 257));
    // What goes out is the good key's run only.
    let mut written = Vec::new();
    loop {
        let bytes = pipe.take_output();
        if bytes.is_empty() {
            break;
        }
        written.extend(bytes);
    }
    assert!(written.windows(4).any(|w| w == b"fine"));
    assert!(!written.windows(3).any(|w| w == b"kkk"));
}
