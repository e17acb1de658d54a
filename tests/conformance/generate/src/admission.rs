//! Recording a scenario through any admission-style core algorithm: the
//! ops every such algorithm shares (`sleep`, `check`, `peek`).

use serde_json::{json, Value};

use ratekeeper_core::Admission;

use crate::{case, decision, uint, Clock, Rng};

/// A scenario being recorded on a core algorithm `A`.
pub struct Recorder<A> {
    pub limiter: A,
    pub clock: Clock,
    pub steps: Vec<Value>,
}

impl<A: Admission> Recorder<A> {
    pub fn new(limiter: A) -> Self {
        Recorder { limiter, clock: Clock::default(), steps: Vec::new() }
    }

    pub fn sleep(&mut self, micros: i64) -> &mut Self {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
        self
    }

    pub fn check(&mut self, cost: u64) -> &mut Self {
        let d = self.limiter.check(cost, self.clock.now);
        self.steps.push(json!({"op": "check", "cost": uint(cost), "decision": decision(&d)}));
        self
    }

    pub fn peek(&mut self, cost: u64) -> &mut Self {
        let d = self.limiter.peek(cost, self.clock.now);
        self.steps.push(json!({"op": "peek", "cost": uint(cost), "decision": decision(&d)}));
        self
    }

    /// A negative cost: the binding's conversion must refuse it.
    pub fn negative_cost(&mut self) -> &mut Self {
        self.steps.push(json!({"op": "check", "cost": -1, "error": "invalid_argument", "argument": "cost"}));
        self
    }

    /// Checks `cost` `times` times.
    pub fn checks(&mut self, cost: u64, times: usize) -> &mut Self {
        for _ in 0..times {
            self.check(cost);
        }
        self
    }

    pub fn done(&mut self, name: String, limiter: Value) -> Value {
        case(name, limiter, std::mem::take(&mut self.steps))
    }
}

/// A random walk of checks, peeks and sleeps scaled to `period` (the
/// algorithm's natural time scale) with costs up to about `limit`.
pub fn random_walk<A: Admission>(limiter: A, seed: u64, period: i64, limit: u64) -> Recorder<A> {
    let mut rng = Rng::new(seed);
    let mut r = Recorder::new(limiter);
    let steps = 10 + rng.below(30);
    for _ in 0..steps {
        match rng.below(8) {
            0 | 1 => {
                let pause = match rng.below(4) {
                    0 => rng.below(10) as i64,
                    1 => rng.below(period as u64 / 4 + 1) as i64,
                    2 => rng.below(period as u64 + 1) as i64,
                    _ => rng.below(3 * period as u64 + 1) as i64,
                };
                r.sleep(pause);
            }
            2 => {
                let cost = rng.below(limit + 2);
                r.peek(cost);
            }
            _ => {
                let cost = match rng.below(6) {
                    0 => 0,
                    1..=3 => 1,
                    4 => 1 + rng.below(limit.max(1)),
                    _ => rng.below(limit + 2),
                };
                r.check(cost);
            }
        }
    }
    r
}
