//! Replays the algorithm conformance vectors against a real Redis server,
//! with the scripts' clock driven by the test: GCRA, the token bucket, the
//! fixed window, the sliding window counter and the sliding log decide in
//! Redis exactly as the in-process limiters do — every field of every
//! `Decision`.

mod support;

use std::path::Path;
use std::sync::Arc;

use ratekeeper::ManualClock;
use ratekeeper_conformance::{admission::limiter_spec, decision_field, int_field};
use ratekeeper_redis::{Error, RedisLimiter, RedisStore, StoreOptions};
use serde_json::Value;
use support::RedisServer;

/// The algorithms that run in Redis.
const IN_REDIS: &[&str] = &["gcra", "token_bucket", "fixed_window", "sliding_window_counter", "sliding_log"];
/// The operations Redis mode offers (the token bucket's reservations,
/// cancellations and reconfiguration stay in-process).
const OPS: &[&str] = &["sleep", "check", "peek"];

fn replay(store: &RedisStore, index: usize, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let spec = limiter_spec(&case["limiter"])?;
    let created = spec
        .map_err(Error::from)
        .and_then(|s| RedisLimiter::with_test_clock(store, &format!("case-{index}"), s, Arc::clone(&clock)));
    let limiter = match (created, case.get("create_error")) {
        (Err(Error::Invalid(_)), Some(_)) => return Ok(()),
        (Ok(_), Some(_)) => return Err("expected a creation error".into()),
        (Err(e), _) => return Err(format!("create: {e}")),
        (Ok(l), None) => l.remember_refusals(false),
    };
    for (i, step) in case["steps"].as_array().ok_or("no steps")?.iter().enumerate() {
        let op = step["op"].as_str().unwrap_or("?");
        if op == "sleep" {
            clock.advance_micros(int_field(step, "micros")?);
            continue;
        }
        let cost = ratekeeper::cost_from_i64(int_field(step, "cost")?);
        let result = cost.map_err(Error::from).and_then(|c| match op {
            "check" => limiter.check("k", c),
            _ => limiter.peek("k", c),
        });
        match (result, step.get("error")) {
            (Err(Error::Invalid(_)), Some(_)) => {}
            (Ok(actual), None) => {
                let expected = decision_field(step, "decision")?;
                if actual != expected {
                    return Err(format!("step {i} {step}: got {actual:?}"));
                }
            }
            (other, _) => return Err(format!("step {i} {step}: got {other:?}")),
        }
    }
    Ok(())
}

#[test]
fn algorithm_vectors_replay_against_redis() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/vectors/algorithms");
    let (mut passed, mut failures, mut index) = (0, Vec::new(), 0);
    for file in ratekeeper_conformance::collect_files(&[dir]).unwrap() {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let algorithm = case["limiter"]["algorithm"].as_str().unwrap_or("");
            let ops_in_redis = case["steps"]
                .as_array()
                .is_none_or(|steps| steps.iter().all(|s| OPS.contains(&s["op"].as_str().unwrap_or(""))));
            if !IN_REDIS.contains(&algorithm) || !ops_in_redis {
                continue;
            }
            index += 1;
            match replay(&store, index, case) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{}: {e}", case["name"].as_str().unwrap_or("?"))),
            }
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!("{passed} passed, {} failed", failures.len());
    assert!(failures.is_empty());
    assert!(passed >= 60, "only {passed} cases replayed");
}
