//! `leaky_bucket_meter` and `leaky_bucket_queue` cases.

use serde_json::{json, Value};

use ratekeeper_core::{LeakyBucketMeter, LeakyBucketQueue};

use crate::admission::{random_walk, Recorder};
use crate::{create_error, create_error_naming, int};

fn meter(capacity: i64, count: i64, period: i64) -> Value {
    json!({"algorithm": "leaky_bucket_meter", "capacity": int(capacity), "count_per_period": int(count), "period_micros": int(period)})
}

/// A queue without slack leaves `slack` out: the runners fill in the
/// registry's default (0).
fn queue(capacity: i64, interval: i64) -> Value {
    json!({"algorithm": "leaky_bucket_queue", "capacity": int(capacity), "interval_micros": int(interval)})
}

fn queue_with_slack(capacity: i64, interval: i64, slack: i64) -> Value {
    let mut spec = queue(capacity, interval);
    spec["slack"] = int(slack);
    spec
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();

    let mut add_meter = |name: &str, (c, n, p): (u64, u64, i64), script: &dyn Fn(&mut Recorder<LeakyBucketMeter>)| {
        let mut r = Recorder::new(LeakyBucketMeter::new(c, n, p).expect("valid"));
        script(&mut r);
        cases.push(r.done(format!("leaky_bucket_meter/{name}"), meter(c as i64, n as i64, p)));
    };
    add_meter("fill-drain-overflow", (3, 1, 100_000), &|r| {
        r.check(2).check(1).check(1).sleep(150_000).check(1).check(1).sleep(50_000).check(1).check(4);
    });
    add_meter("exact-leak-rate", (3, 3, 1_000_000), &|r| {
        r.check(3).peek(1).sleep(333_333).peek(1).sleep(1).check(1).sleep(666_666).peek(3).sleep(1).check(3);
    });
    add_meter("same-as-gcra-walk", (5, 1, 1_000_000), &|r| {
        // redis-cell's walk with capacity = max_burst + 1: same decisions.
        r.check(6).checks(1, 6).sleep(3_000_000).check(1).sleep(100_000).check(1).sleep(900_000).check(1);
        r.sleep(4_000_000).check(1).sleep(1_500_000).check(1).check(0).check(2).check(5);
    });
    add_meter("refusal-pours-nothing", (2, 1, 1_000), &|r| {
        r.check(2).check(1).check(1).peek(0).sleep(1_000).check(1).check(1);
    });
    add_meter("negative-cost-is-an-error", (2, 1, 1_000), &|r| {
        r.negative_cost().check(1);
    });

    let mut add_queue = |name: &str, (c, i): (u64, i64), script: &dyn Fn(&mut Recorder<LeakyBucketQueue>)| {
        let mut r = Recorder::new(LeakyBucketQueue::new(c, i).expect("valid"));
        script(&mut r);
        cases.push(r.done(format!("leaky_bucket_queue/{name}"), queue(c as i64, i)));
    };
    add_queue("slots-are-spaced", (2, 100_000), &|r| {
        r.checks(1, 4).sleep(100_000).check(1).check(1).sleep(250_000).check(1).peek(1);
    });
    add_queue("costs-take-several-slots", (3, 1_000), &|r| {
        r.check(2).check(2).check(1).check(5).sleep(10_000).check(4).check(1);
    });
    add_queue("capacity-zero-only-free-slots", (0, 1_000), &|r| {
        r.check(1).sleep(500).check(1).sleep(500).check(1).check(2).check(0);
    });
    add_queue("idle-queue-resets", (1, 50_000), &|r| {
        r.checks(1, 3).sleep(10_000_000).peek(0).checks(1, 3);
    });

    // Uber's slack: unused slots saved while idle, none before the first.
    let mut add_slack = |name: &str, (c, i, s): (u64, i64, u64), script: &dyn Fn(&mut Recorder<LeakyBucketQueue>)| {
        let mut r = Recorder::new(LeakyBucketQueue::with_slack(c, i, s).expect("valid"));
        script(&mut r);
        cases.push(r.done(format!("leaky_bucket_queue/{name}"), queue_with_slack(c as i64, i, s as i64)));
    };
    add_slack("slack-none-saved-before-the-first", (100, 100_000, 10), &|r| {
        r.sleep(5_000_000).checks(1, 3).peek(1);
    });
    add_slack("slack-saved-while-idle-is-capped", (100, 100_000, 10), &|r| {
        r.check(1).sleep(10_000_000).checks(1, 12).sleep(350_000).checks(1, 3).peek(0);
    });
    add_slack("slack-of-one-like-uber-max-slack", (1_000, 1_000_000, 1), &|r| {
        r.sleep(1).check(1).sleep(2_000_000).check(1).sleep(1).check(1).sleep(1).check(1).sleep(1).check(1);
    });
    add_slack("slack-serves-requests-within-the-limit", (0, 1_000, 3), &|r| {
        r.peek(2).check(1).peek(1).sleep(10_000).checks(1, 5).check(2).sleep(5_000).checks(1, 4).peek(1);
    });
    add_slack("slack-zero-is-no-slack", (2, 100_000, 0), &|r| {
        r.check(1).sleep(1_000_000).checks(1, 4);
    });

    for (i, (spec, argument)) in [
        (meter(0, 1, 1), "capacity"),
        (meter(-1, 1, 1), "capacity"),
        (meter(1, 0, 1), "count_per_period"),
        (meter(1, 1, 0), "period"),
        (meter(1, 1, -5), "period"),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(create_error(format!("leaky_bucket_meter/create-invalid-{i}"), spec, argument));
    }
    // A queue's capacity may be 0, unlike a meter's: each names its own bound.
    cases.push(create_error_naming("leaky_bucket_queue/create-invalid-0", queue(-1, 1), "capacity", "between 0 and"));
    cases.push(create_error("leaky_bucket_queue/create-invalid-1", queue(0, 0), "interval"));
    cases.push(create_error("leaky_bucket_queue/create-invalid-2", queue(1, -1), "interval"));
    cases.push(create_error_naming(
        "leaky_bucket_queue/create-invalid-3",
        queue_with_slack(1, 1_000, -1),
        "slack",
        "between 0 and",
    ));

    for seed in 0..8u64 {
        let (c, n, p) = [(1u64, 1u64, 1_000_000i64), (5, 2, 1_000_000), (10, 3, 500_000), (100, 1000, 1_000_000)]
            [seed as usize % 4];
        let mut walk = random_walk(LeakyBucketMeter::new(c, n, p).expect("valid"), 0x1e_0000 + seed, p / n as i64, c);
        cases.push(walk.done(format!("leaky_bucket_meter/random-{seed}"), meter(c as i64, n as i64, p)));
        let (c, i) = [(0u64, 1_000i64), (2, 100_000), (5, 10_000), (50, 1_000)][seed as usize % 4];
        let mut walk = random_walk(LeakyBucketQueue::new(c, i).expect("valid"), 0x1f_0000 + seed, i, c + 1);
        cases.push(walk.done(format!("leaky_bucket_queue/random-{seed}"), queue(c as i64, i)));
        let s = [1u64, 10, 3, 100][seed as usize % 4];
        let mut walk =
            random_walk(LeakyBucketQueue::with_slack(c, i, s).expect("valid"), 0x20_0000 + seed, i, c + s + 1);
        cases.push(
            walk.done(format!("leaky_bucket_queue/random-slack-{seed}"), queue_with_slack(c as i64, i, s as i64)),
        );
    }
    cases
}
