//! Replays the Guava conformance vectors against a real Redis server, with
//! the scripts' clock driven by the test (feature `test-clock`): many
//! processes sharing a `RedisRateLimiter` get the waits of one Guava limiter.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ratekeeper::ManualClock;
use ratekeeper_conformance::{double_field, int_field};
use ratekeeper_redis::{Error, RedisRateLimiter, RedisStore, StoreOptions};
use serde_json::Value;
use support::RedisServer;

/// Cases whose results depend on a Java `long` beyond ±2^53, which Lua's
/// doubles cannot hold exactly (see the crate docs). Each is checked to
/// still fail, so that this list stays exact.
const BEYOND_DOUBLES: &[(&str, &str)] = &[
    (
        "bursty/testTimeWrapping-analogue",
        "the clock stands at 2^63 - 10^6 µs, where doubles are 1,024 apart: the 10^6 µs wait reads 1,000,448",
    ),
    (
        "bursty/saturating-next-free",
        "a wait of 2,147,483,647 × 10^6 µs (> 2^53), where doubles are 256 apart, reads 2,147,483,646,999,999,488",
    ),
];

fn replay(store: &RedisStore, index: usize, case: &Value) -> Result<(), String> {
    let spec = &case["limiter"];
    let clock = Arc::new(ManualClock::new());
    let rate = double_field(spec, "permits_per_second")?;
    let mut builder = RedisRateLimiter::builder(&format!("vector-{index}"), rate).test_clock(Arc::clone(&clock));
    builder = match spec["algorithm"].as_str() {
        Some("smooth_bursty") => builder.max_burst_seconds(double_field(spec, "max_burst_seconds")?),
        _ => {
            let warmup = int_field(spec, "warmup_micros")?;
            if warmup < 0 {
                // A Duration cannot be negative; the local check gives the error.
                return match case.get("create_error") {
                    Some(_) => Ok(()),
                    None => Err("negative warm-up accepted by the vector".into()),
                };
            }
            builder.warmup(Duration::from_micros(warmup as u64)).cold_factor(double_field(spec, "cold_factor")?)
        }
    };
    let limiter = match (builder.connect(store), case.get("create_error")) {
        (Err(Error::Invalid(_)), Some(_)) => return Ok(()),
        (Ok(_), Some(_)) => return Err("expected a creation error".into()),
        (Err(e), Some(_)) => return Err(format!("create: expected an invalid argument, got {e}")),
        (Err(e), None) => return Err(format!("create: {e}")),
        (Ok(l), None) => l,
    };
    for (i, step) in case["steps"].as_array().ok_or("no steps")?.iter().enumerate() {
        let expects_error = step.get("error").is_some();
        let fail = |what: String| Err(format!("step {i} {step}: {what}"));
        match step["op"].as_str() {
            Some("sleep") => clock.advance_micros(int_field(step, "micros")?),
            Some("acquire") => {
                let permits = ratekeeper::core::smooth::permits_from_i64(int_field(step, "permits")?);
                match (permits.map_err(Error::from).and_then(|p| limiter.acquire(p)), expects_error) {
                    (Err(Error::Invalid(_)), true) => {}
                    (Ok(wait), false) => {
                        let got = i64::try_from(wait.as_micros()).unwrap_or(i64::MAX);
                        let want = int_field(step, "wait_micros")?;
                        if got != want {
                            return fail(format!("wait {got}, expected {want}"));
                        }
                    }
                    (other, _) => return fail(format!("{other:?}")),
                }
            }
            Some("try_acquire") => {
                let permits = ratekeeper::core::smooth::permits_from_i64(int_field(step, "permits")?);
                let timeout = Duration::from_micros(int_field(step, "timeout_micros")?.max(0) as u64);
                match (permits.map_err(Error::from).and_then(|p| limiter.try_acquire(p, timeout)), expects_error) {
                    (Err(Error::Invalid(_)), true) => {}
                    (Ok(got), false) => {
                        let want = step["acquired"].as_bool().ok_or("no acquired")?;
                        if got != want {
                            return fail(format!("acquired {got}, expected {want}"));
                        }
                    }
                    (other, _) => return fail(format!("{other:?}")),
                }
            }
            Some("set_rate") => match (limiter.set_rate(double_field(step, "permits_per_second")?), expects_error) {
                (Err(Error::Invalid(_)), true) | (Ok(()), false) => {}
                (other, _) => return fail(format!("{other:?}")),
            },
            Some("get_rate") => {
                let got = limiter.rate().map_err(|e| e.to_string())?;
                let want = double_field(step, "permits_per_second")?;
                if !ratekeeper_conformance::same_double(got, want) {
                    return fail(format!("rate {got:?}, expected {want:?}"));
                }
            }
            other => return fail(format!("unknown op {other:?}")),
        }
    }
    Ok(())
}

#[test]
fn guava_vectors_replay_against_redis() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), StoreOptions::default()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/vectors/guava");
    let files = ratekeeper_conformance::collect_files(&[dir]).unwrap();
    let (mut passed, mut failures, mut index) = (0, Vec::new(), 0);
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            index += 1;
            let name = case["name"].as_str().unwrap().to_owned();
            match replay(&store, index, case) {
                Ok(()) => passed += 1,
                Err(e) => failures.push((name, e)),
            }
        }
    }
    for (name, e) in &failures {
        println!("FAIL {name}: {e}");
    }
    println!("{passed} passed, {} failed", failures.len());
    let failed: Vec<&str> = failures.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = BEYOND_DOUBLES.iter().map(|(n, _)| *n).collect();
    assert_eq!(failed, expected, "the failing cases must be exactly the documented ones");
}
