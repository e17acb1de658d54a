//! `flow` cases: Sentinel's flow rule (`ratekeeper_core::FlowController`),
//! each of its controllers and both grades, on its sliding statistics.

use serde_json::{json, Value};

use ratekeeper_core::flow::{ControlBehavior, FlowController, FlowGrade, FlowPermit, FlowRule};

use crate::{case, create_error_naming, decision, double, error_step, uint, Clock, Rng};

pub fn cases() -> Vec<Value> {
    let mut cases = vec![issue_example(), occupy_next_window(), nanosecond_spacing()];
    let warm_up = ControlBehavior::WarmUp { warm_up_period_sec: 5, cold_factor: 3 };
    let limiter = ControlBehavior::RateLimiter { max_queueing_time_ms: 400 };
    let both = ControlBehavior::WarmUpRateLimiter { warm_up_period_sec: 3, cold_factor: 4, max_queueing_time_ms: 300 };
    let walks = [
        ("default-qps-2x1000", FlowRule::qps(8.0), 2, 1000),
        ("default-qps-10x1000", FlowRule::qps(12.5), 10, 1000),
        ("default-qps-4x2000", FlowRule::qps(5.0), 4, 2000),
        ("thread", FlowRule::thread(3.0), 2, 1000),
        ("warm-up", FlowRule::qps(20.0).with_behavior(warm_up), 2, 1000),
        ("rate-limiter", FlowRule::qps(10.0).with_behavior(limiter), 2, 1000),
        ("rate-limiter-7", FlowRule::qps(7.0).with_behavior(limiter), 2, 1000),
        ("warm-up-rate-limiter", FlowRule::qps(20.0).with_behavior(both), 2, 1000),
    ];
    for (name, rule, sample_count, interval_ms) in walks {
        for seed in 0..2u64 {
            cases.push(walk(&format!("flow/{name}-{seed}"), rule, sample_count, interval_ms, seed));
        }
    }
    cases.extend(errors());
    cases
}

fn grade_name(grade: FlowGrade) -> &'static str {
    match grade {
        FlowGrade::Qps => "qps",
        FlowGrade::Thread => "thread",
    }
}

/// A rule's fields, as a `limiter` and a `set_rule` step carry them.
fn rule_fields(rule: &FlowRule, into: &mut Value) {
    into["grade"] = json!(grade_name(rule.grade));
    into["count"] = double(rule.count);
    match rule.control_behavior {
        ControlBehavior::Default => into["control_behavior"] = json!("default"),
        ControlBehavior::WarmUp { warm_up_period_sec, cold_factor } => {
            into["control_behavior"] = json!("warm_up");
            into["warm_up_period_sec"] = json!(warm_up_period_sec);
            into["cold_factor"] = json!(cold_factor);
        }
        ControlBehavior::RateLimiter { max_queueing_time_ms } => {
            into["control_behavior"] = json!("rate_limiter");
            into["max_queueing_time_ms"] = json!(max_queueing_time_ms);
        }
        ControlBehavior::WarmUpRateLimiter { warm_up_period_sec, cold_factor, max_queueing_time_ms } => {
            into["control_behavior"] = json!("warm_up_rate_limiter");
            into["warm_up_period_sec"] = json!(warm_up_period_sec);
            into["cold_factor"] = json!(cold_factor);
            into["max_queueing_time_ms"] = json!(max_queueing_time_ms);
        }
    }
}

fn spec(rule: &FlowRule, sample_count: u32, interval_ms: u32) -> Value {
    let mut spec = json!({"algorithm": "flow"});
    rule_fields(rule, &mut spec);
    spec["sample_count"] = json!(sample_count);
    spec["interval_ms"] = json!(interval_ms);
    spec
}

/// Replays steps on the core and writes them with their results.
struct Walk {
    flow: FlowController,
    clock: Clock,
    permits: Vec<FlowPermit>,
    open: Vec<usize>,
    steps: Vec<Value>,
}

impl Walk {
    fn new(rule: FlowRule, sample_count: u32, interval_ms: u32) -> Self {
        Walk {
            flow: FlowController::new(rule, sample_count, interval_ms).expect("valid rule"),
            clock: Clock::default(),
            permits: Vec::new(),
            open: Vec::new(),
            steps: Vec::new(),
        }
    }

    fn sleep(&mut self, micros: i64) {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
    }

    fn check(&mut self, acquire_count: u32, prioritized: bool) -> i64 {
        let (d, permit) = self.flow.check(acquire_count, prioritized, self.clock.now).expect("valid count");
        if let Some(permit) = permit {
            self.open.push(self.permits.len());
            self.permits.push(permit);
        }
        self.steps.push(json!({
            "op": "check", "acquire_count": acquire_count, "prioritized": prioritized, "decision": decision(&d),
        }));
        if d.allowed {
            d.wait_micros
        } else {
            -1
        }
    }

    fn release(&mut self, index: usize) {
        self.flow.release(self.permits[index], self.clock.now);
        self.steps.push(json!({"op": "release", "permit": index}));
    }

    fn add_pass(&mut self, count: u64) {
        self.flow.add_pass(count, self.clock.now);
        self.steps.push(json!({"op": "add_pass", "count": uint(count)}));
    }

    fn set_rule(&mut self, rule: FlowRule) {
        self.flow.set_rule(rule).expect("valid rule");
        let mut step = json!({"op": "set_rule"});
        rule_fields(&rule, &mut step);
        self.steps.push(step);
    }

    fn stats(&mut self) {
        let s = self.flow.stats(self.clock.now);
        self.steps.push(json!({
            "op": "stats",
            "pass_qps": double(s.pass_qps),
            "block_qps": double(s.block_qps),
            "success_qps": double(s.success_qps),
            "previous_pass_qps": double(s.previous_pass_qps),
            "occupied_pass": uint(s.occupied_pass),
            "waiting": uint(s.waiting),
            "in_flight": uint(s.in_flight),
            "avg_rt_millis": double(s.avg_rt_millis),
        }));
    }

    fn into_case(self, name: &str, spec: Value) -> Value {
        case(name, spec, self.steps)
    }
}

/// The issue's example: the rate limiter at 10 per second charges 5
/// permits before them, so 5 then 1 wait 0 and 100 ms.
fn issue_example() -> Value {
    let rule = FlowRule::qps(10.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 500 });
    let mut w = Walk::new(rule, 2, 1000);
    assert_eq!(w.check(5, false), 0);
    assert_eq!(w.check(1, false), 100_000);
    w.check(5, false); // would wait 600 ms: refused
    w.check(4, false);
    w.stats();
    w.into_case("flow/rate-limiter-5-then-1", spec(&rule, 2, 1000))
}

/// A prioritized request occupies the window that drops the oldest
/// passes, waiting for it; one 500 ms away or more is refused.
fn occupy_next_window() -> Value {
    let rule = FlowRule::qps(10.0);
    let mut w = Walk::new(rule, 2, 1000);
    for _ in 0..10 {
        w.check(1, false);
    }
    w.check(1, true); // the next window that drops them is 1 s away
    w.sleep(600_000);
    w.check(1, false);
    assert_eq!(w.check(1, true), 400_000);
    w.check(9, true);
    w.check(1, true);
    w.stats();
    w.sleep(400_000);
    w.stats();
    w.check(1, false);
    w.into_case("flow/default-occupy-next-window", spec(&rule, 2, 1000))
}

/// 3 per second do not divide the second: Sentinel spaces them in
/// nanoseconds, and a wait is rounded up to whole microseconds.
fn nanosecond_spacing() -> Value {
    let rule = FlowRule::qps(3.0).with_behavior(ControlBehavior::RateLimiter { max_queueing_time_ms: 1000 });
    let mut w = Walk::new(rule, 2, 1000);
    for _ in 0..5 {
        w.check(1, false);
    }
    w.sleep(1_000_001);
    w.check(2, false);
    w.check(1, false);
    w.into_case("flow/rate-limiter-nanoseconds", spec(&rule, 2, 1000))
}

/// Requests of random counts, some prioritized, arrive and end at random;
/// an admitted caller sometimes sleeps its wait; usage is added and the
/// rule changes now and then.
fn walk(name: &str, rule: FlowRule, sample_count: u32, interval_ms: u32, seed: u64) -> Value {
    let mut rng = Rng::new(0xf1_0000 + seed * 7919 + u64::from(sample_count) * 31 + rule.count as u64);
    let mut w = Walk::new(rule, sample_count, interval_ms);
    let mut current = rule;
    for _ in 0..150 {
        match rng.below(24) {
            0..=4 => w.sleep(rng.pick(&[0, 1, 999, 1_000, 40_000, 99_999, 100_000, 250_000, 500_000]) as i64),
            5..=13 => {
                let count = rng.pick(&[1u32, 1, 1, 2, 3]);
                let wait = w.check(count, rng.below(4) == 0);
                if wait > 0 && rng.below(2) == 0 {
                    w.sleep(wait);
                }
            }
            14..=18 if !w.open.is_empty() => {
                let index = w.open.swap_remove(rng.below(w.open.len() as u64) as usize);
                w.release(index);
            }
            19 => w.add_pass(rng.pick(&[1u64, 2, 5])),
            20 if rng.below(3) == 0 => {
                // Another count, then back: the statistics stay, the
                // controller starts afresh.
                let changed = FlowRule { count: current.count * rng.pick(&[0.5, 1.5, 2.0]), ..current };
                current = if current == rule { changed } else { rule };
                w.set_rule(current);
            }
            _ => w.stats(),
        }
    }
    w.into_case(name, spec(&rule, sample_count, interval_ms))
}

fn errors() -> Vec<Value> {
    let default = spec(&FlowRule::qps(10.0), 2, 1000);
    let with = |field: &str, value: Value, extra: &[(&str, Value)]| {
        let mut spec = default.clone();
        for (k, v) in extra {
            spec[*k] = v.clone();
        }
        spec[field] = value;
        spec
    };
    let warm = [("control_behavior", json!("warm_up")), ("warm_up_period_sec", json!(10)), ("cold_factor", json!(3))];
    let queue = [("control_behavior", json!("rate_limiter")), ("max_queueing_time_ms", json!(500))];
    let mut bad_check = Walk::new(FlowRule::qps(10.0), 2, 1000);
    bad_check.steps.push(error_step(
        json!({"op": "check", "acquire_count": 2_147_483_648u64, "prioritized": false}),
        "acquire_count",
    ));
    bad_check.check(0, false);
    let mut bad_rule = json!({"op": "set_rule"});
    rule_fields(&FlowRule::qps(f64::NAN), &mut bad_rule);
    bad_check.steps.push(error_step(bad_rule, "count"));
    bad_check.check(10, false);
    vec![
        create_error_naming("flow/create-negative-count", with("count", json!(-1.0), &[]), "count", "not negative"),
        create_error_naming("flow/create-infinite-count", with("count", json!("Infinity"), &[]), "count", "finite"),
        create_error_naming(
            "flow/create-warm-up-tokens-beyond-int",
            with("count", json!(1e300), &warm),
            "count",
            "2147483647 / warm_up_period_sec",
        ),
        create_error_naming(
            "flow/create-zero-warm-up-period",
            with("warm_up_period_sec", json!(0), &warm),
            "warm_up_period_sec",
            "between 1 and 2147483647",
        ),
        create_error_naming(
            "flow/create-cold-factor-1",
            with("cold_factor", json!(1), &warm),
            "cold_factor",
            "between 2 and 2147483647",
        ),
        create_error_naming(
            "flow/create-zero-max-queueing-time",
            with("max_queueing_time_ms", json!(0), &queue),
            "max_queueing_time_ms",
            "between 1 and 2147483647",
        ),
        create_error_naming(
            "flow/create-sample-count-not-dividing",
            with("sample_count", json!(3), &[]),
            "sample_count",
            "divide interval_ms",
        ),
        create_error_naming(
            "flow/create-65-samples",
            with("sample_count", json!(65), &[("interval_ms", json!(1300))]),
            "sample_count",
            "between 1 and 64",
        ),
        create_error_naming(
            "flow/create-zero-interval",
            with("interval_ms", json!(0), &[]),
            "interval_ms",
            "between 1",
        ),
        bad_check.into_case("flow/bad-acquire-count-and-rule", default.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_refuse_wait_and_occupy() {
        let cases = cases();
        let checks: Vec<&Value> = cases
            .iter()
            .flat_map(|c| c["steps"].as_array().map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default())
            .filter(|s| s["op"] == "check" && s.get("decision").is_some())
            .collect();
        assert!(checks.iter().any(|s| s["decision"]["allowed"] == false));
        assert!(checks.iter().any(|s| s["prioritized"] == true && s["decision"]["wait_micros"].as_i64() > Some(0)));
        assert!(checks.iter().any(|s| s["prioritized"] == false && s["decision"]["wait_micros"].as_i64() > Some(0)));
        assert!(cases.iter().all(|c| c.get("skip").is_none()));
    }
}
