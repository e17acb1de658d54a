//! `token_bucket` cases: x/time/rate's semantics (allow, reserve, cancel,
//! wait with a deadline, set_rate/set_burst, tokens).

use serde_json::{json, Value};

use ratekeeper_core::token_bucket::{Reservation, TokenBucket};
use ratekeeper_core::{Admission, Argument};

use crate::{argument_name, case, create_error, decision, double, error_step, int, uint, Clock, Rng};

/// A scenario being recorded: the core bucket, the clock, the reservations
/// made so far (steps refer to them by index) and the steps.
struct Recorder {
    bucket: TokenBucket,
    clock: Clock,
    reservations: Vec<Reservation>,
    steps: Vec<Value>,
}

impl Recorder {
    fn new(rate: f64, burst: u64) -> Self {
        Recorder {
            bucket: TokenBucket::new(rate, burst).expect("valid"),
            clock: Clock::default(),
            reservations: Vec::new(),
            steps: Vec::new(),
        }
    }

    fn sleep(&mut self, micros: i64) -> &mut Self {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
        self
    }

    fn check(&mut self, cost: u64) -> &mut Self {
        let d = self.bucket.check(cost, self.clock.now);
        self.steps.push(json!({"op": "check", "cost": uint(cost), "decision": decision(&d)}));
        self
    }

    fn peek(&mut self, cost: u64) -> &mut Self {
        let d = self.bucket.peek(cost, self.clock.now);
        self.steps.push(json!({"op": "peek", "cost": uint(cost), "decision": decision(&d)}));
        self
    }

    fn allow(&mut self, n: u64) -> &mut Self {
        let allowed = self.bucket.allow_n(n, self.clock.now);
        self.steps.push(json!({"op": "allow", "n": uint(n), "allowed": allowed}));
        self
    }

    fn reserve(&mut self, n: u64) -> &mut Self {
        let r = self.bucket.reserve_n(n, self.clock.now);
        self.reservations.push(r);
        let mut step = json!({"op": "reserve", "n": uint(n), "ok": r.ok()});
        if r.ok() {
            step["delay_micros"] = int(r.delay_micros(self.clock.now));
        }
        self.steps.push(step);
        self
    }

    fn cancel(&mut self, index: usize) -> &mut Self {
        let mut r = self.reservations[index];
        self.bucket.cancel_at(&mut r, self.clock.now);
        self.reservations[index] = r;
        self.steps.push(json!({"op": "cancel", "reservation": index}));
        self
    }

    /// WaitN with a deadline `timeout` from now; sleeps the delay when
    /// granted, as WaitN does.
    fn wait(&mut self, n: u64, timeout: i64) -> &mut Self {
        let deadline = if timeout == i64::MAX { i64::MAX } else { self.clock.now.saturating_add(timeout) };
        let r = self.bucket.wait_n(n, self.clock.now, deadline);
        let mut step = json!({"op": "wait", "n": uint(n), "timeout_micros": int(timeout), "ok": r.ok()});
        if r.ok() {
            let delay = r.delay_micros(self.clock.now);
            step["delay_micros"] = int(delay);
            self.clock.now = self.clock.now.saturating_add(delay);
        }
        self.steps.push(step);
        self
    }

    fn set_rate(&mut self, rate: f64) -> &mut Self {
        let step = json!({"op": "set_rate", "rate": double(rate)});
        self.steps.push(match self.bucket.set_rate(rate, self.clock.now) {
            Ok(()) => step,
            Err(e) => error_step(step, argument_name(e)),
        });
        self
    }

    fn set_burst(&mut self, burst: i64) -> &mut Self {
        let step = json!({"op": "set_burst", "burst": int(burst)});
        let result = ratekeeper_core::unsigned_from_i64(Argument::Burst, burst)
            .and_then(|b| self.bucket.set_burst(b, self.clock.now));
        self.steps.push(match result {
            Ok(()) => step,
            Err(e) => error_step(step, argument_name(e)),
        });
        self
    }

    fn tokens(&mut self) -> &mut Self {
        let tokens = self.bucket.tokens_at(self.clock.now);
        self.steps.push(json!({"op": "tokens", "tokens": double(tokens)}));
        self
    }

    fn config(&mut self) -> &mut Self {
        self.steps.push(json!({"op": "rate", "rate": double(self.bucket.rate())}));
        self.steps.push(json!({"op": "burst", "burst": uint(self.bucket.burst())}));
        self
    }

    fn done(&mut self, name: &str, rate: f64, burst: u64) -> Value {
        case(format!("token_bucket/{name}"), limiter(rate, burst as i64), std::mem::take(&mut self.steps))
    }
}

fn limiter(rate: f64, burst: i64) -> Value {
    json!({"algorithm": "token_bucket", "rate": double(rate), "burst": int(burst)})
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let mut add = |name: &str, rate: f64, burst: u64, script: &dyn Fn(&mut Recorder)| {
        let mut r = Recorder::new(rate, burst);
        script(&mut r);
        cases.push(r.done(name, rate, burst));
    };

    add("burst-then-refill", 10.0, 2, &|r| {
        r.check(1).check(1).check(1).sleep(99_999).check(1).sleep(1).check(1).check(1).sleep(250_000).tokens();
    });
    add("allow-like-go", 10.0, 2, &|r| {
        r.allow(1).allow(1).allow(1).sleep(100_000).allow(1).allow(0).allow(3).tokens();
    });
    add("cost-zero-is-a-free-look", 1.0, 1, &|r| {
        r.check(1).check(0).peek(0).peek(1).tokens();
    });
    add("peek-takes-nothing", 2.0, 4, &|r| {
        r.peek(3).peek(3).check(3).peek(2).sleep(500_000).peek(2).check(2).tokens();
    });
    add("fractional-rate-rounds-waits-up", 3.0, 1, &|r| {
        // One token every 333,333,333.3 ns: reported as 333,334 µs.
        r.check(1).check(1).reserve(1).reserve(1).tokens().sleep(333_333).tokens().sleep(1).tokens();
    });
    add("reserve-chain-and-cancel", 10.0, 1, &|r| {
        // The middle reservation cannot give its token back: the last
        // depends on it. The last one can.
        r.reserve(1).reserve(1).reserve(1).sleep(10_000).cancel(1).tokens().cancel(2).tokens().cancel(2).tokens();
    });
    add("cancel-after-acting-restores-nothing", 10.0, 1, &|r| {
        r.check(1).reserve(1).sleep(150_000).cancel(0).tokens();
    });
    add("cancel-refused-reservation", 1.0, 2, &|r| {
        r.reserve(3).cancel(0).tokens().reserve(2).reserve(2).cancel(2).tokens();
    });
    add("wait-with-deadline", 4.0, 1, &|r| {
        r.wait(1, 0).wait(1, 249_999).wait(1, 250_000).wait(1, 0).wait(1, 1_000_000).tokens();
    });
    add("wait-no-deadline", 2.0, 3, &|r| {
        r.wait(3, i64::MAX).wait(2, i64::MAX).wait(1, i64::MAX).tokens();
    });
    add("above-the-burst-is-never", 5.0, 3, &|r| {
        r.check(4).reserve(4).wait(4, i64::MAX).allow(4).tokens().check(3).check(4);
    });
    add("infinite-rate-zero-burst", f64::INFINITY, 0, &|r| {
        r.check(1).check(1_000_000).reserve(5).cancel(0).wait(7, 0).allow(9).tokens().config();
    });
    add("zero-rate-one-off-quota", 0.0, 3, &|r| {
        r.check(2).check(1).check(1).sleep(1_000_000_000).check(1).reserve(1).tokens().config();
    });
    add("zero-burst-refuses", 10.0, 0, &|r| {
        r.check(1).reserve(1).wait(1, i64::MAX).check(0).tokens();
    });
    add("set-rate-keeps-tokens", 1.0, 10, &|r| {
        r.check(10).sleep(1_000_000).set_rate(2.0).tokens().sleep(1_000_000).tokens().check(3).check(1).config();
    });
    add("set-rate-to-and-from-infinity", 1.0, 2, &|r| {
        r.check(2).set_rate(f64::INFINITY).check(100).sleep(1).set_rate(1.0).tokens().check(2).check(1).config();
    });
    add("set-rate-zero-pauses", 10.0, 2, &|r| {
        r.check(2).set_rate(0.0).sleep(5_000_000).check(1).set_rate(10.0).sleep(100_000).check(1).config();
    });
    add("set-burst-keeps-tokens-until-refill", 1.0, 10, &|r| {
        r.check(2).set_burst(3).tokens().check(5).sleep(1).tokens().check(3).set_burst(20).sleep(10_000_000).tokens();
    });
    add("invalid-reconfiguration-changes-nothing", 5.0, 5, &|r| {
        r.check(3)
            .set_rate(f64::NAN)
            .set_rate(-1.0)
            .set_rate(f64::NEG_INFINITY)
            .set_burst(-1)
            .set_burst(i64::MIN)
            .config()
            .tokens();
    });
    add("reserve-with-rate-change-then-cancel", 10.0, 1, &|r| {
        // The reservation remembers the rate it was made at.
        r.check(1).reserve(1).set_rate(1.0).cancel(0).tokens();
    });
    add("large-n-and-burst", 1e6, 1_000_000_000, &|r| {
        r.check(999_999_999).check(2).reserve(1_000_000).tokens().sleep(1_000_000).tokens();
    });
    add("tiny-rate", 1e-3, 1, &|r| {
        r.check(1).reserve(1).sleep(999_999_999).tokens().sleep(1).tokens().check(1);
    });

    for (i, rate) in [f64::NAN, -1.0, f64::NEG_INFINITY, -1e-300].into_iter().enumerate() {
        cases.push(create_error(format!("token_bucket/create-invalid-rate-{i}"), limiter(rate, 1), "rate"));
    }
    cases.push(create_error("token_bucket/create-negative-burst", limiter(1.0, -1), "burst"));
    cases.push(create_error("token_bucket/create-min-burst", limiter(1.0, i64::MIN), "burst"));

    for seed in 0..24 {
        cases.push(random_walk(seed));
    }
    cases
}

fn random_walk(seed: u64) -> Value {
    let mut rng = Rng::new(0x7b_0000 + seed);
    let rate = rng.pick(&[0.5, 1.0, 1.0 / 3.0, 3.0, 7.5, 10.0, 100.0, 1000.0, 1e6, 0.0, f64::INFINITY]);
    let burst = rng.pick(&[0u64, 1, 2, 5, 10, 100]);
    let mut r = Recorder::new(rate, burst);
    for _ in 0..(10 + rng.below(30)) {
        let n = rng.pick(&[0u64, 1, 1, 1, 2, 3, 5, 10, 101]);
        match rng.below(11) {
            0 | 1 => r.sleep(rng.pick(&[0, 1, 999, 100_000, 333_333, 1_000_000, 7_000_000])),
            2 | 3 => r.check(n),
            4 => r.peek(n),
            5 => r.allow(n),
            6 => r.reserve(n),
            7 if !r.reservations.is_empty() => r.cancel(rng.below(r.reservations.len() as u64) as usize),
            // A wait with no deadline under a zero rate would sleep forever.
            8 => {
                let unbounded = if r.bucket.rate() > 0.0 { i64::MAX } else { 0 };
                r.wait(n, rng.pick(&[0, 50_000, 1_000_000, unbounded]))
            }
            9 => r.set_rate(rng.pick(&[0.5, 2.0, 10.0, 1000.0, rate])),
            10 => r.set_burst(rng.pick(&[0, 1, 3, 10, 100])),
            _ => r.tokens(),
        };
    }
    r.tokens();
    r.done(&format!("random-{seed}"), rate, burst)
}
