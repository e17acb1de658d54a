//! `cycle` cases: Resilience4j's `AtomicRateLimiter` ([`CycleLimiter`]):
//! permits per cycle, reservations into later cycles within the timeout,
//! run-time changes, the drain and the metrics.
//!
//! Every runner replays them, except the two cases with a duration beyond
//! `i64` microseconds, which C skips.

use serde_json::{json, Value};

use ratekeeper_core::cycle::{CycleConfig, CycleLimiter};

use crate::{argument_name, case, create_error_naming, decision, error_step, int, uint, Clock, Rng};

pub fn cases() -> Vec<Value> {
    let mut cases = vec![
        // Resilience4j's reservePermissionsUpfront: 3 per 10 ms, 12 ms
        // timeout, nine requests 1 µs apart.
        scripted("cycle/reserve-upfront", config(3, 10_000, 12_000), |s| {
            s.sleep(10_000);
            for _ in 0..9 {
                s.sleep(1);
                s.reserve(1);
            }
            s.metrics();
        }),
        // The case: with a timeout, the requests beyond the cycle's
        // permits all wait for the next cycle (10 ms), and one larger than
        // the limit spreads over cycles.
        scripted("cycle/next-cycle-and-larger-than-a-cycle", config(3, 10_000, 30_000), |s| {
            for _ in 0..6 {
                s.acquire(1);
            }
            s.acquire(1);
            s.sleep(20_000);
            s.metrics();
            s.acquire(7);
            s.metrics();
            s.acquire(10);
            s.sleep(10_000);
            s.acquire(1);
        }),
        // A timeout of 0 is a fixed window: refusals until the next cycle,
        // whose start the retry-after names.
        scripted("cycle/timeout-zero-is-a-window", config(5, 1_000_000, 0), |s| {
            s.sleep(250_000);
            s.acquire(3);
            s.acquire(3);
            s.acquire(2);
            s.acquire(1);
            s.try_acquire(1);
            s.sleep(750_000);
            s.acquire(5);
            s.acquire(6);
            s.sleep(5_000_000);
            s.metrics();
        }),
        // changePermissionsLimitBetweenCycles, then a lower limit that leaves
        // the current cycle's count alone, and a changed timeout.
        scripted("cycle/change-limit-and-timeout", config(1, 250_000, 250_000), |s| {
            s.sleep(250_000);
            s.acquire(1);
            s.acquire(1);
            s.metrics();
            s.change_limit(2);
            s.metrics();
            s.sleep(250_010);
            s.metrics();
            s.change_limit(10);
            s.sleep(500_000);
            s.metrics();
            s.change_limit(1);
            s.metrics();
            s.acquire(4);
            s.sleep(250_000);
            s.metrics();
            s.change_timeout(0);
            s.acquire(1);
            s.acquire(1);
            s.change_timeout(1_000_000);
            s.acquire(3);
            s.metrics();
        }),
        // The drain takes what the current cycle has, keeps reservations,
        // and finds nothing the second time.
        scripted("cycle/drain", config(10, 250_000, 500_000), |s| {
            s.acquire(7);
            s.sleep(5 * 250_000);
            s.drain();
            s.metrics();
            s.drain();
            s.acquire(4);
            s.drain();
            s.metrics();
            s.sleep(250_000);
            s.metrics();
            s.try_acquire(5);
        }),
        // A refused request saves the cycle refresh (Resilience4j's
        // compare-and-set): the limit lowered afterwards leaves this cycle
        // at the count refreshed with the old limit.
        scripted("cycle/refused-request-saves-the-refresh", config(10, 250_000, 0), |s| {
            s.acquire(7);
            s.sleep(5 * 250_000);
            s.acquire(11);
            s.change_limit(2);
            s.metrics();
            s.sleep(250_000);
            s.metrics();
        }),
    ];
    let configs = [
        ("1-per-250ms-wait-1", config(1, 250_000, 250_000)),
        ("3-per-10ms-wait-12ms", config(3, 10_000, 12_000)),
        ("5-per-1ms-no-wait", config(5, 1_000, 0)),
        ("4-per-7us-wait-30us", config(4, 7, 30)),
    ];
    for (name, config) in configs {
        for seed in 0..3u64 {
            cases.push(walk(&format!("cycle/walk-{name}-{seed}"), config, seed));
        }
    }
    cases.extend(errors());
    cases
}

fn config(limit_for_period: u64, period: i64, timeout: i64) -> CycleConfig {
    CycleConfig { limit_for_period, limit_refresh_period_micros: period, timeout_micros: timeout }
}

fn spec(c: &CycleConfig) -> Value {
    json!({
        "algorithm": "cycle",
        "limit_for_period": uint(c.limit_for_period),
        "limit_refresh_period_micros": int(c.limit_refresh_period_micros),
        "timeout_duration_micros": int(c.timeout_micros),
    })
}

/// A case with a duration beyond `i64` microseconds, which C's `int64_t`
/// parameters cannot carry (FORMAT.md).
fn skip_c(mut case: Value) -> Value {
    case["skip"] = json!({"c": "an int64_t cannot hold 2^63"});
    case
}

/// A limiter, its clock and the steps written so far.
struct Script {
    limiter: CycleLimiter,
    clock: Clock,
    steps: Vec<Value>,
}

impl Script {
    fn sleep(&mut self, micros: i64) {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
    }

    fn acquire(&mut self, permits: u64) {
        let d = self.limiter.acquire_permission(permits, self.clock.now);
        self.steps.push(json!({"op": "acquire", "permits": uint(permits), "decision": decision(&d)}));
    }

    fn try_acquire(&mut self, permits: u64) {
        let d = self.limiter.try_acquire_permission(permits, self.clock.now);
        self.steps.push(json!({"op": "try_acquire", "permits": uint(permits), "decision": decision(&d)}));
    }

    fn reserve(&mut self, permits: u64) {
        let wait = self.limiter.reserve_permission(permits, self.clock.now);
        self.steps.push(json!({"op": "reserve", "permits": uint(permits), "wait_micros": wait.map(int)}));
    }

    fn change_limit(&mut self, limit: u64) {
        let step = json!({"op": "change_limit", "limit_for_period": uint(limit)});
        self.steps.push(match self.limiter.change_limit_for_period(limit) {
            Ok(()) => step,
            Err(e) => error_step(step, argument_name(e)),
        });
    }

    fn change_timeout(&mut self, micros: i64) {
        let step = json!({"op": "change_timeout", "timeout_duration_micros": int(micros)});
        self.steps.push(match self.limiter.change_timeout_duration(micros) {
            Ok(()) => step,
            Err(e) => error_step(step, argument_name(e)),
        });
    }

    fn drain(&mut self) {
        let drained = self.limiter.drain_permissions(self.clock.now);
        self.steps.push(json!({"op": "drain", "drained": uint(drained)}));
    }

    fn metrics(&mut self) {
        let m = self.limiter.metrics(self.clock.now);
        self.steps.push(json!({
            "op": "metrics",
            "available_permissions": int(m.available_permissions),
            "micros_to_wait": int(m.micros_to_wait),
            "cycle": int(m.cycle),
        }));
    }
}

fn scripted(name: &str, config: CycleConfig, script: impl FnOnce(&mut Script)) -> Value {
    let mut s = Script {
        limiter: CycleLimiter::new(config).expect("valid config"),
        clock: Clock::default(),
        steps: Vec::new(),
    };
    script(&mut s);
    case(name, spec(&config), s.steps)
}

/// Requests of up to three cycles' permits at random moments, with the
/// other ops now and then: reservations pile up ahead and are paid back.
fn walk(name: &str, config: CycleConfig, seed: u64) -> Value {
    let mut rng = Rng::new(0xc7_0000 + seed);
    let limit = config.limit_for_period;
    let period = config.limit_refresh_period_micros as u64;
    scripted(name, config, |s| {
        for _ in 0..100 {
            match rng.below(24) {
                0..=5 => s.sleep(rng.below(period * 3 / 2) as i64),
                6..=12 => s.acquire(rng.pick(&[0, 1, 1, 1, 2, limit, limit + 1, 3 * limit])),
                13..=15 => s.reserve(rng.pick(&[1, 1, 2, limit + 1])),
                16 => s.try_acquire(rng.pick(&[1, 2, limit])),
                17 => s.change_limit(rng.pick(&[limit, limit + 2, (limit / 2).max(1)])),
                18 => s.change_timeout(rng.pick(&[0, config.timeout_micros, period as i64 * 2])),
                19 => s.drain(),
                _ => s.metrics(),
            }
        }
    })
}

fn errors() -> Vec<Value> {
    let with = |field: &str, value: Value| {
        let mut spec = spec(&config(10, 1_000, 0));
        spec[field] = value;
        spec
    };
    let mut bad_changes = Script {
        limiter: CycleLimiter::new(config(10, 1_000, 500)).expect("valid config"),
        clock: Clock::default(),
        steps: Vec::new(),
    };
    bad_changes.change_limit(0);
    bad_changes.change_limit(1 << 31);
    bad_changes.metrics();
    bad_changes.acquire(11);
    let bound = |mut step: Value, text: &str| {
        step["message_contains"] = json!(text);
        step
    };
    let steps = bad_changes
        .steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| match i {
            0 => bound(step, "between 1 and 2147483647"),
            1 => bound(step, "2147483647"),
            _ => step,
        })
        .collect::<Vec<_>>();
    // A timeout no `i64` of microseconds holds (a Rust `Duration`, a Python
    // `timedelta`, a JavaScript bigint), refused before the core sees it; C
    // cannot write it, so it has a case of its own, which C skips.
    let too_long = error_step(
        json!({"op": "change_timeout", "timeout_duration_micros": "9223372036854775808"}),
        "timeout_duration",
    );
    let mut too_long_changes = Script {
        limiter: CycleLimiter::new(config(10, 1_000, 500)).expect("valid config"),
        clock: Clock::default(),
        steps: vec![bound(too_long, "9223372036854775807 microseconds")],
    };
    too_long_changes.acquire(11);
    vec![
        create_error_naming(
            "cycle/create-zero-limit",
            with("limit_for_period", json!(0)),
            "limit_for_period",
            "between 1 and 2147483647",
        ),
        create_error_naming(
            "cycle/create-limit-beyond-a-java-int",
            with("limit_for_period", json!(1u64 << 31)),
            "limit_for_period",
            "2147483647",
        ),
        create_error_naming(
            "cycle/create-zero-period",
            with("limit_refresh_period_micros", json!(0)),
            "limit_refresh_period",
            "between 1 and 9223372036854775807 microseconds",
        ),
        skip_c(create_error_naming(
            "cycle/create-period-beyond-i64",
            with("limit_refresh_period_micros", json!("9223372036854775808")),
            "limit_refresh_period",
            "9223372036854775807 microseconds",
        )),
        create_error_naming(
            "cycle/create-negative-timeout",
            with("timeout_duration_micros", json!(-1)),
            "timeout_duration",
            "between 0 and 9223372036854775807 microseconds",
        ),
        case("cycle/bad-changes-change-nothing", spec(&config(10, 1_000, 500)), steps),
        skip_c(case("cycle/change-timeout-beyond-i64", spec(&config(10, 1_000, 500)), too_long_changes.steps)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walks reach what the hand-written cases show: waits, refusals
    /// that no wait helps, negative counts, drains that take something.
    #[test]
    fn the_walks_reserve_ahead_refuse_for_ever_and_drain() {
        let cases = cases();
        let steps: Vec<Value> = cases
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("cycle/walk-"))
            .flat_map(|c| c["steps"].as_array().cloned().unwrap_or_default())
            .collect();
        let waits = steps.iter().filter(|s| s["op"] == "acquire" && s["decision"]["wait_micros"] != 0).count();
        let never =
            steps.iter().filter(|s| s["decision"]["retry_after_micros"] == json!("9223372036854775807")).count();
        let negative = steps.iter().filter(|s| s["available_permissions"].as_i64().is_some_and(|n| n < 0)).count();
        let drained = steps.iter().filter(|s| s["op"] == "drain" && s["drained"] != 0).count();
        assert!(waits > 10 && never > 5 && negative > 5 && drained > 3, "{waits} {never} {negative} {drained}");
    }
}
