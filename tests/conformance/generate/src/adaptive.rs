//! `gradient`, `aimd` and `concurrency` cases: Netflix concurrency-limits'
//! rules, alone and driving a concurrency limiter.

use serde_json::{json, Value};

use ratekeeper_core::{
    Aimd, AimdConfig, ConcurrencyLimiter, ConcurrencyPolicy, Gradient, GradientConfig, Outcome, Permit,
};

use crate::{case, create_error, create_error_naming, decision, double, int, uint, Clock, Rng};

fn gradient_spec(c: &GradientConfig) -> Value {
    json!({
        "algorithm": "gradient",
        "initial_limit": uint(c.initial_limit),
        "min_limit": uint(c.min_limit),
        "max_limit": uint(c.max_limit),
        "smoothing": double(c.smoothing),
        "rtt_tolerance": double(c.rtt_tolerance),
        "queue_size": uint(c.queue_size),
        "backoff_ratio": double(c.backoff_ratio),
        "probe_interval": uint(c.probe_interval),
    })
}

fn aimd_spec(c: &AimdConfig) -> Value {
    json!({
        "algorithm": "aimd",
        "initial_limit": uint(c.initial_limit),
        "min_limit": uint(c.min_limit),
        "max_limit": uint(c.max_limit),
        "backoff_ratio": double(c.backoff_ratio),
        "rtt_timeout_micros": int(c.rtt_timeout_micros),
    })
}

/// Samples fed straight to a policy.
fn samples(policy: &mut ConcurrencyPolicy, list: &[(i64, u64, bool)]) -> Vec<Value> {
    list.iter()
        .map(|&(rtt, in_flight, dropped)| {
            let limit = policy.on_sample(rtt, in_flight, dropped);
            json!({"op": "sample", "rtt_micros": int(rtt), "in_flight": uint(in_flight), "dropped": dropped, "limit": uint(limit)})
        })
        .collect()
}

fn random_samples(rng: &mut Rng, count: usize, base_rtt: i64) -> Vec<(i64, u64, bool)> {
    (0..count)
        .map(|_| {
            let rtt = base_rtt + rng.below(4 * base_rtt as u64) as i64;
            (rtt, rng.below(60), rng.below(10) == 0)
        })
        .collect()
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();

    let g = GradientConfig::default();
    let flat = GradientConfig { initial_limit: 10, probe_interval: 0, ..g };
    let mut add_gradient = |name: &str, config: GradientConfig, list: &[(i64, u64, bool)]| {
        let mut policy = ConcurrencyPolicy::Gradient(Gradient::new(config).expect("valid"));
        cases.push(case(format!("gradient/{name}"), gradient_spec(&config), samples(&mut policy, list)));
    };
    add_gradient("grows-while-rtt-is-flat", flat, &[(1_000, 10, false), (1_000, 14, false), (1_000, 18, false)]);
    add_gradient(
        "shrinks-smoothly-as-rtt-rises",
        GradientConfig { initial_limit: 100, ..flat },
        &[(1_000, 100, false), (4_000, 100, false), (8_000, 100, false), (1_000, 100, true)],
    );
    add_gradient(
        "no-growth-when-app-limited",
        GradientConfig { initial_limit: 100, ..flat },
        &[(1_000, 49, false), (1_000, 50, false)],
    );
    add_gradient(
        "bounded",
        GradientConfig { initial_limit: 10, min_limit: 5, max_limit: 12, ..flat },
        &[
            (10, 10, false),
            (10, 12, false),
            (10, 12, true),
            (10, 12, true),
            (10, 12, true),
            (10, 12, true),
            (10, 12, true),
        ],
    );
    add_gradient(
        "probes-forget-the-noload-rtt",
        GradientConfig { initial_limit: 20, probe_interval: 2, ..g },
        &[(500, 20, false), (800, 24, false), (100, 28, false), (900, 4, false), (900, 4, false)],
    );
    add_gradient("zero-rtt-counts-as-one", flat, &[(0, 10, false), (1, 14, false), (2, 18, false)]);
    let mut rng = Rng::new(0x6a_0000);
    for seed in 0..4 {
        let config = GradientConfig { initial_limit: 20, probe_interval: 7 + seed, ..g };
        add_gradient(&format!("random-{seed}"), config, &random_samples(&mut rng, 40, 1_000));
    }

    let a = AimdConfig::default();
    let mut add_aimd = |name: &str, config: AimdConfig, list: &[(i64, u64, bool)]| {
        let mut policy = ConcurrencyPolicy::Aimd(Aimd::new(config).expect("valid"));
        cases.push(case(format!("aimd/{name}"), aimd_spec(&config), samples(&mut policy, list)));
    };
    let small = AimdConfig { initial_limit: 10, min_limit: 1, max_limit: 100, ..a };
    add_aimd("increase-when-half-used", small, &[(1_000, 4, false), (1_000, 5, false), (1_000, 11, false)]);
    add_aimd(
        "decrease-on-drop-or-timeout",
        AimdConfig { initial_limit: 100, max_limit: 200, ..small },
        &[(1_000, 100, true), (5_000_001, 100, false), (5_000_000, 100, false)],
    );
    add_aimd(
        "bounded",
        AimdConfig { initial_limit: 3, min_limit: 2, max_limit: 4, ..a },
        &[(1, 3, false), (1, 3, false), (1, 3, true), (1, 3, true), (1, 3, true)],
    );
    add_aimd("netflix-defaults", a, &random_samples(&mut rng, 30, 2_000_000));

    for (i, (config, argument, bound)) in [
        (GradientConfig { min_limit: 0, initial_limit: 1, ..g }, "min_limit", "between 1 and"),
        (GradientConfig { max_limit: 0, ..g }, "max_limit", "between min_limit and"),
        (GradientConfig { initial_limit: 2_000, ..g }, "initial_limit", "max_limit"),
        (GradientConfig { smoothing: 0.0, ..g }, "smoothing", "above 0.0"),
        (GradientConfig { rtt_tolerance: 0.5, ..g }, "rtt_tolerance", "at least 1.0"),
        (GradientConfig { queue_size: 5_000, ..g }, "queue_size", "max_limit"),
        // The gradient rule's own range: 1.0 (never backing off) allowed.
        (GradientConfig { backoff_ratio: 1.5, ..g }, "backoff_ratio", "between 0.5 and 1.0"),
    ]
    .iter()
    .enumerate()
    {
        cases.push(create_error_naming(format!("gradient/create-invalid-{i}"), gradient_spec(config), argument, bound));
    }
    for (i, (config, argument, bound)) in [
        (AimdConfig { min_limit: 0, initial_limit: 0, ..a }, "min_limit", "between 1 and"),
        (AimdConfig { max_limit: 1, ..a }, "max_limit", "between min_limit and"),
        (AimdConfig { backoff_ratio: 1.0, ..a }, "backoff_ratio", "below 1.0"),
        (AimdConfig { rtt_timeout_micros: 0, ..a }, "rtt_timeout", "between 1 and 9223372036854775807 microseconds"),
    ]
    .iter()
    .enumerate()
    {
        cases.push(create_error_naming(format!("aimd/create-invalid-{i}"), aimd_spec(config), argument, bound));
    }

    // The concurrency limiter, with each policy.
    let policies: [(&str, ConcurrencyPolicy, Value); 3] = [
        ("fixed", ConcurrencyPolicy::fixed(3).expect("valid"), json!({"algorithm": "fixed", "limit": 3})),
        (
            "gradient",
            ConcurrencyPolicy::gradient(GradientConfig { initial_limit: 4, probe_interval: 0, ..g }).expect("valid"),
            gradient_spec(&GradientConfig { initial_limit: 4, probe_interval: 0, ..g }),
        ),
        (
            "aimd",
            ConcurrencyPolicy::aimd(AimdConfig { initial_limit: 2, min_limit: 1, max_limit: 10, ..a }).expect("valid"),
            aimd_spec(&AimdConfig { initial_limit: 2, min_limit: 1, max_limit: 10, ..a }),
        ),
    ];
    for (name, policy, spec) in policies {
        for seed in 0..3u64 {
            cases.push(concurrency_walk(&format!("concurrency/{name}-{seed}"), policy, spec.clone(), seed));
        }
    }
    // A concurrency limit's own bound, not a window's.
    cases.push(create_error_naming(
        "concurrency/create-fixed-zero",
        json!({"algorithm": "concurrency", "policy": {"algorithm": "fixed", "limit": 0}}),
        "limit",
        "between 1 and 9223372036854775807",
    ));
    cases.push(create_error(
        "concurrency/create-fixed-negative",
        json!({"algorithm": "concurrency", "policy": {"algorithm": "fixed", "limit": -3}}),
        "limit",
    ));
    cases
}

/// Requests start and end at random; the limiter decides, the policy learns.
fn concurrency_walk(name: &str, policy: ConcurrencyPolicy, spec: Value, seed: u64) -> Value {
    let mut rng = Rng::new(0xcc_0000 + seed);
    let mut limiter = ConcurrencyLimiter::new(policy);
    let mut clock = Clock::default();
    let mut permits: Vec<Permit> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut steps = Vec::new();
    for _ in 0..40 {
        match rng.below(10) {
            0..=2 => steps.push(clock.sleep(rng.below(20_000) as i64)),
            3..=5 => match limiter.try_acquire(clock.now) {
                Ok((permit, d)) => {
                    open.push(permits.len());
                    permits.push(permit);
                    steps.push(json!({"op": "acquire", "decision": decision(&d)}));
                }
                Err(d) => steps.push(json!({"op": "acquire", "decision": decision(&d)})),
            },
            6..=8 if !open.is_empty() => {
                let index = open.swap_remove(rng.below(open.len() as u64) as usize);
                let outcome = rng.pick(&[Outcome::Success, Outcome::Success, Outcome::Dropped, Outcome::Ignored]);
                let limit = limiter.release(permits[index], outcome, clock.now);
                steps.push(json!({"op": "release", "permit": index, "outcome": outcome.name(), "limit": uint(limit)}));
            }
            _ => steps
                .push(json!({"op": "state", "limit": uint(limiter.limit()), "in_flight": uint(limiter.in_flight())})),
        }
    }
    case(name, json!({"algorithm": "concurrency", "policy": spec}), steps)
}
