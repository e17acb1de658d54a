//! `bbr` and `system_guard` cases: Kratos' BBR and Sentinel's system rule,
//! driven by a manual load signal the runner sets with `load` steps.

use serde_json::{json, Value};

use ratekeeper_core::{Bbr, BbrConfig, BbrPermit, Load, SystemGuard, SystemPermit, SystemRule};

use crate::{case, create_error_naming, decision, double, int, uint, Clock, Rng};

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let configs = [
        ("second-of-10", BbrConfig { window_micros: 1_000_000, buckets: 10, ..BbrConfig::default() }),
        (
            "half-second-of-5-low-threshold",
            BbrConfig { window_micros: 500_000, buckets: 5, cpu_threshold: 0.5, cool_down_micros: 300_000 },
        ),
    ];
    for (name, config) in configs {
        for seed in 0..3u64 {
            cases.push(bbr_walk(&format!("bbr/{name}-{seed}"), config, seed));
        }
    }
    let rules = [
        ("qps", SystemRule { qps: Some(6.0), ..SystemRule::default() }),
        ("thread", SystemRule { max_thread: Some(3), ..SystemRule::default() }),
        ("rt", SystemRule { avg_rt_micros: Some(25_000), ..SystemRule::default() }),
        ("load", SystemRule { highest_system_load: Some(2.0), ..SystemRule::default() }),
        ("cpu", SystemRule { highest_cpu_usage: Some(0.8), ..SystemRule::default() }),
        (
            "all",
            SystemRule {
                qps: Some(12.5),
                max_thread: Some(4),
                avg_rt_micros: Some(40_000),
                highest_system_load: Some(1.5),
                highest_cpu_usage: Some(0.9),
            },
        ),
    ];
    for (name, rule) in rules {
        for seed in 0..2u64 {
            cases.push(guard_walk(&format!("system_guard/{name}-{seed}"), rule, seed));
        }
    }
    cases.extend(errors());
    cases
}

fn bbr_spec(c: &BbrConfig) -> Value {
    json!({
        "algorithm": "bbr",
        "window_micros": int(c.window_micros),
        "buckets": c.buckets,
        "cpu_threshold": double(c.cpu_threshold),
        "cool_down_micros": int(c.cool_down_micros),
    })
}

fn guard_spec(r: &SystemRule) -> Value {
    let mut spec = json!({"algorithm": "system_guard"});
    if let Some(qps) = r.qps {
        spec["qps"] = double(qps);
    }
    if let Some(max_thread) = r.max_thread {
        spec["max_thread"] = uint(max_thread);
    }
    if let Some(avg_rt) = r.avg_rt_micros {
        spec["avg_rt_micros"] = int(avg_rt);
    }
    if let Some(load) = r.highest_system_load {
        spec["highest_system_load"] = double(load);
    }
    if let Some(cpu) = r.highest_cpu_usage {
        spec["highest_cpu_usage"] = double(cpu);
    }
    spec
}

/// A `load` step, applied to `load`.
fn set_load(rng: &mut Rng, load: &mut Load) -> Value {
    let mut step = json!({"op": "load"});
    if rng.below(3) != 0 {
        load.cpu_usage = rng.pick(&[0.1, 0.45, 0.5, 0.79, 0.8, 0.85, 0.95, 1.0]);
        step["cpu_usage"] = double(load.cpu_usage);
    }
    if rng.below(2) == 0 {
        load.load_average = rng.pick(&[0.5, 1.5, 2.0, 2.5, 4.0]);
        step["load_average"] = double(load.load_average);
    }
    step
}

/// Requests arrive and end at random while the CPU moves: the statistics
/// fill, and BBR sheds when the CPU is high and too many are in flight.
fn bbr_walk(name: &str, config: BbrConfig, seed: u64) -> Value {
    let mut rng = Rng::new(0xbb_0000 + seed);
    let mut bbr = Bbr::new(config).expect("valid config");
    let mut clock = Clock::default();
    let mut load = Load::default();
    let mut permits: Vec<BbrPermit> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut steps = Vec::new();
    for _ in 0..120 {
        match rng.below(20) {
            0..=3 => steps.push(clock.sleep(rng.below(40_000) as i64)),
            4 => steps.push(set_load(&mut rng, &mut load)),
            5..=11 => match bbr.try_acquire(clock.now, load) {
                Ok((permit, d)) => {
                    open.push(permits.len());
                    permits.push(permit);
                    steps.push(json!({"op": "acquire", "decision": decision(&d)}));
                }
                Err(d) => steps.push(json!({"op": "acquire", "decision": decision(&d)})),
            },
            12..=17 if !open.is_empty() => {
                let index = open.swap_remove(rng.below(open.len() as u64) as usize);
                bbr.release(permits[index], clock.now);
                steps.push(json!({"op": "release", "permit": index}));
            }
            _ => {
                let s = bbr.stats(clock.now, load);
                steps.push(json!({
                    "op": "stats",
                    "in_flight": uint(s.in_flight),
                    "max_pass": uint(s.max_pass),
                    "min_rt_millis": uint(s.min_rt_millis),
                    "max_in_flight": uint(s.max_in_flight),
                }));
            }
        }
    }
    case(name, bbr_spec(&config), steps)
}

/// Requests of random counts arrive and end at random under a moving load;
/// every refusal names its threshold.
fn guard_walk(name: &str, rule: SystemRule, seed: u64) -> Value {
    let mut rng = Rng::new(0x5a_0000 + seed);
    let mut guard = SystemGuard::new(rule).expect("valid rule");
    let mut clock = Clock::default();
    let mut load = Load::default();
    let mut permits: Vec<SystemPermit> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut steps = Vec::new();
    for _ in 0..120 {
        match rng.below(20) {
            0..=3 => steps.push(clock.sleep(rng.below(120_000) as i64)),
            4 => steps.push(set_load(&mut rng, &mut load)),
            5..=11 => {
                let count = rng.pick(&[1u64, 1, 1, 2, 3]);
                let (d, threshold) = match guard.try_acquire(clock.now, count, load) {
                    Ok((permit, d)) => {
                        open.push(permits.len());
                        permits.push(permit);
                        (d, Value::Null)
                    }
                    Err(refusal) => (refusal.decision, json!(refusal.threshold.name())),
                };
                steps.push(json!({"op": "acquire", "count": count, "decision": decision(&d), "threshold": threshold}));
            }
            12..=17 if !open.is_empty() => {
                let index = open.swap_remove(rng.below(open.len() as u64) as usize);
                guard.release(permits[index], clock.now);
                steps.push(json!({"op": "release", "permit": index}));
            }
            _ => {
                let s = guard.stats(clock.now);
                steps.push(json!({
                    "op": "stats",
                    "pass_qps": double(s.pass_qps),
                    "block_qps": double(s.block_qps),
                    "success_qps": double(s.success_qps),
                    "in_flight": uint(s.in_flight),
                    "avg_rt_millis": double(s.avg_rt_millis),
                    "min_rt_millis": uint(s.min_rt_millis),
                    "max_success_qps": double(s.max_success_qps),
                }));
            }
        }
    }
    case(name, guard_spec(&rule), steps)
}

fn errors() -> Vec<Value> {
    let bbr = |field: &str, value: Value| {
        let mut spec = bbr_spec(&BbrConfig::default());
        spec[field] = value;
        spec
    };
    let guard = |field: &str, value: Value| {
        let mut spec = json!({"algorithm": "system_guard"});
        spec[field] = value;
        spec
    };
    let bad_load = |name: &str, field: &str, value: f64, argument: &str, bound: &str| {
        let mut step =
            json!({"op": "load", "error": "invalid_argument", "argument": argument, "message_contains": bound});
        step[field] = double(value);
        case(name, bbr_spec(&BbrConfig::default()), vec![step])
    };
    vec![
        create_error_naming("bbr/create-zero-window", bbr("window_micros", json!(0)), "window", "between 1"),
        create_error_naming("bbr/create-zero-buckets", bbr("buckets", json!(0)), "buckets", "between 1 and 128"),
        create_error_naming("bbr/create-129-buckets", bbr("buckets", json!(129)), "buckets", "between 1 and 128"),
        create_error_naming(
            "bbr/create-cpu-threshold-above-1",
            bbr("cpu_threshold", json!(1.5)),
            "cpu_threshold",
            "1.0",
        ),
        create_error_naming(
            "bbr/create-negative-cool-down",
            bbr("cool_down_micros", json!(-1)),
            "cool_down",
            "between 0",
        ),
        create_error_naming("system_guard/create-negative-qps", guard("qps", json!(-1.0)), "qps", "not negative"),
        create_error_naming(
            "system_guard/create-negative-max-thread",
            guard("max_thread", json!(-1)),
            "max_thread",
            "between 0",
        ),
        create_error_naming(
            "system_guard/create-negative-avg-rt",
            guard("avg_rt_micros", json!(-1)),
            "avg_rt",
            "between 0",
        ),
        create_error_naming(
            "system_guard/create-negative-load",
            guard("highest_system_load", json!(-0.9)),
            "highest_system_load",
            "not negative",
        ),
        create_error_naming(
            "system_guard/create-cpu-above-1",
            guard("highest_cpu_usage", json!(2.7)),
            "highest_cpu_usage",
            "between 0.0 and 1.0",
        ),
        bad_load("bbr/load-cpu-above-1", "cpu_usage", 1.5, "cpu_usage", "between 0.0 and 1.0"),
        bad_load("bbr/load-negative-load-average", "load_average", -1.0, "load_average", "not negative"),
    ]
}

/// What the thresholds of the generated cases refuse, for the test below.
#[cfg(test)]
fn thresholds_refused(cases: &[Value]) -> Vec<String> {
    let mut seen: Vec<String> = cases
        .iter()
        .flat_map(|c| c["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["threshold"].as_str().map(str::to_owned))
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratekeeper_core::SystemThreshold;

    #[test]
    fn every_threshold_refuses_and_bbr_sheds_somewhere() {
        let cases = cases();
        let mut names: Vec<String> = SystemThreshold::ALL.iter().map(|t| t.name().to_owned()).collect();
        names.sort();
        assert_eq!(thresholds_refused(&cases), names);
        let shed = cases
            .iter()
            .filter(|c| c["limiter"]["algorithm"] == "bbr")
            .flat_map(|c| c["steps"].as_array().cloned().unwrap_or_default())
            .filter(|s| s["op"] == "acquire" && s["decision"]["allowed"] == false)
            .count();
        assert!(shed > 0, "no bbr case sheds");
    }
}
