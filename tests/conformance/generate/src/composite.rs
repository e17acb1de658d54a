//! `composite` cases: several limits admitted all or nothing.

use serde_json::{json, Value};

use ratekeeper_core::{composite, Admission, Decision, FixedWindow, Gcra, SlidingWindowCounter, TokenBucket};

use crate::{case, create_error, decision, uint, Clock};

/// The parts of the composites below, as one type.
#[derive(Debug, Clone, Copy)]
enum Part {
    Bucket(TokenBucket),
    Fixed(FixedWindow),
    Gcra(Gcra),
    Counter(SlidingWindowCounter),
}

impl Admission for Part {
    fn check(&mut self, cost: u64, now: i64) -> Decision {
        match self {
            Part::Bucket(p) => p.check(cost, now),
            Part::Fixed(p) => p.check(cost, now),
            Part::Gcra(p) => p.check(cost, now),
            Part::Counter(p) => p.check(cost, now),
        }
    }
    fn peek(&self, cost: u64, now: i64) -> Decision {
        match self {
            Part::Bucket(p) => p.peek(cost, now),
            Part::Fixed(p) => p.peek(cost, now),
            Part::Gcra(p) => p.peek(cost, now),
            Part::Counter(p) => p.peek(cost, now),
        }
    }
    fn refund(&mut self, cost: u64, now: i64) {
        match self {
            Part::Bucket(p) => p.refund(cost, now),
            Part::Fixed(p) => p.refund(cost, now),
            Part::Gcra(p) => p.refund(cost, now),
            Part::Counter(p) => p.refund(cost, now),
        }
    }
}

struct Recorder {
    parts: Vec<Part>,
    clock: Clock,
    steps: Vec<Value>,
}

impl Recorder {
    fn sleep(&mut self, micros: i64) -> &mut Self {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
        self
    }

    fn check(&mut self, cost: u64) -> &mut Self {
        let mut each = vec![Value::Null; self.parts.len()];
        let d = composite::check_all_each(&mut self.parts, cost, self.clock.now, |i, d| each[i] = decision(d));
        self.steps.push(json!({"op": "check", "cost": uint(cost), "decision": decision(&d), "parts": each}));
        self
    }

    fn peek(&mut self, cost: u64) -> &mut Self {
        let d = composite::peek_all(&self.parts, cost, self.clock.now);
        self.steps.push(json!({"op": "peek", "cost": uint(cost), "decision": decision(&d)}));
        self
    }
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let mut add = |name: &str, parts: Vec<(Part, Value)>, script: &dyn Fn(&mut Recorder)| {
        let specs: Vec<Value> = parts.iter().map(|(_, spec)| spec.clone()).collect();
        let mut r =
            Recorder { parts: parts.into_iter().map(|(p, _)| p).collect(), clock: Clock::default(), steps: Vec::new() };
        script(&mut r);
        cases.push(case(format!("composite/{name}"), json!({"algorithm": "composite", "limits": specs}), r.steps));
    };
    let fixed = |limit: u64, window: i64| {
        (
            Part::Fixed(FixedWindow::new(limit, window).expect("valid")),
            json!({"algorithm": "fixed_window", "limit": limit, "window_micros": window}),
        )
    };
    let bucket = |rate: f64, burst: u64| {
        (
            Part::Bucket(TokenBucket::new(rate, burst).expect("valid")),
            json!({"algorithm": "token_bucket", "rate": rate, "burst": burst}),
        )
    };

    add("per-second-and-per-ten-seconds", vec![fixed(2, 1_000_000), fixed(3, 10_000_000)], &|r| {
        r.check(2).sleep(500_000).check(1).peek(1).sleep(500_000).check(1).sleep(500_000).check(1).peek(0);
    });
    add("refusal-consumes-nothing-anywhere", vec![bucket(1.0, 5), bucket(100.0, 2)], &|r| {
        r.check(2).check(1).peek(3).sleep(10_000).check(1).check(3).sleep(5_000_000).check(5);
    });
    add(
        "mixed-kinds",
        vec![
            bucket(10.0, 10),
            fixed(1_000, 3_600_000_000),
            (
                Part::Gcra(Gcra::new(4, 1, 1_000_000).expect("valid")),
                json!({"algorithm": "gcra", "max_burst": 4, "count_per_period": 1, "period_micros": 1_000_000}),
            ),
            (
                Part::Counter(SlidingWindowCounter::new(8, 2_000_000).expect("valid")),
                json!({"algorithm": "sliding_window_counter", "limit": 8, "window_micros": 2_000_000}),
            ),
        ],
        &|r| {
            for _ in 0..7 {
                r.check(1).sleep(300_000);
            }
            r.check(6).check(0).peek(1);
        },
    );
    cases.push(create_error("composite/create-empty", json!({"algorithm": "composite", "limits": []}), "limits"));
    cases.push(create_error(
        "composite/create-invalid-part",
        json!({"algorithm": "composite", "limits": [{"algorithm": "fixed_window", "limit": 1, "window_micros": 1}, {"algorithm": "fixed_window", "limit": 0, "window_micros": 1}]}),
        "limit",
    ));
    cases
}
