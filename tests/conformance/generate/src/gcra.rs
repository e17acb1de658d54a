//! `gcra` cases: redis-cell's `CL.THROTTLE` semantics.

use serde_json::{json, Value};

use ratekeeper_core::Gcra;

use crate::admission::{random_walk, Recorder};
use crate::{create_error, int, uint};

fn limiter(max_burst: i64, count_per_period: i64, period_micros: i64) -> Value {
    json!({"algorithm": "gcra", "max_burst": int(max_burst), "count_per_period": int(count_per_period), "period_micros": int(period_micros)})
}

fn recorder(max_burst: u64, count: u64, period: i64) -> Recorder<Gcra> {
    Recorder::new(Gcra::new(max_burst, count, period).expect("valid"))
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let mut add = |name: &str, (b, c, p): (u64, u64, i64), script: &dyn Fn(&mut Recorder<Gcra>)| {
        let mut r = recorder(b, c, p);
        script(&mut r);
        cases.push(r.done(format!("gcra/{name}"), limiter(b as i64, c as i64, p)));
    };

    // redis-cell's own walk (src/cell/mod.rs, it_rate_limits).
    add("redis-cell-walkthrough", (4, 1, 1_000_000), &|r| {
        r.check(6).checks(1, 6).sleep(3_000_000).check(1).sleep(100_000).check(1).sleep(900_000).check(1);
        r.sleep(4_000_000).check(1).sleep(1_500_000).check(1).check(0).check(2).check(5);
    });
    add("readme-example-15-30-60", (15, 30, 60_000_000), &|r| {
        r.check(1).checks(1, 16).sleep(2_000_000).check(1).check(1).peek(16);
    });
    add("exact-emission-interval", (2_999, 3, 1_000_000), &|r| {
        r.check(3_000).sleep(999_999_999).peek(3_000).peek(2_999).sleep(1).peek(3_000).check(3_000);
    });
    add("fractional-interval-rounds-up", (0, 3, 1_000_000), &|r| {
        r.check(1).check(1).sleep(333_333).check(1).sleep(1).check(1);
    });
    add("cost-above-limit-is-never", (2, 10, 1_000_000), &|r| {
        r.check(4).check(3).check(4).sleep(10_000_000).check(4).check(3);
    });
    add("zero-burst-one-at-a-time", (0, 1, 1_000), &|r| {
        r.check(1).check(1).sleep(999).check(1).sleep(1).check(1).check(0).peek(1);
    });
    add("long-idle-is-whole", (9, 1, 1_000_000), &|r| {
        r.check(10).sleep(1_000_000_000_000).peek(0).check(10).check(1);
    });
    add("negative-cost-is-an-error", (1, 1, 1_000_000), &|r| {
        r.check(1).negative_cost().peek(1);
    });

    for (i, ((b, c, p), argument)) in [
        ((-1, 1, 1), "max_burst"),
        ((i64::MAX, 1, 1), "max_burst"),
        ((0, 0, 1), "count_per_period"),
        ((0, -1, 1), "count_per_period"),
        ((0, 1, 0), "period"),
        ((0, 1, -1_000_000), "period"),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(create_error(format!("gcra/create-invalid-{i}"), limiter(b, c, p), argument));
    }

    for seed in 0..12 {
        let max_burst = [0u64, 1, 4, 9, 99][seed as usize % 5];
        let count = [1u64, 3, 10, 1000][seed as usize % 4];
        let period = [1_000_000i64, 60_000_000, 1_000][seed as usize % 3];
        let walk = random_walk(
            Gcra::new(max_burst, count, period).expect("valid"),
            0x9c_0000 + seed,
            period / count as i64,
            max_burst + 1,
        );
        let mut walk = walk;
        cases.push(walk.done(format!("gcra/random-{seed}"), json!({
            "algorithm": "gcra", "max_burst": uint(max_burst), "count_per_period": uint(count), "period_micros": int(period)
        })));
    }
    cases
}
