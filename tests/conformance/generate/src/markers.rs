//! `srtcm` and `trtcm` cases: RFC 2697 and RFC 2698.

use serde_json::{json, Value};

use ratekeeper_core::{Color, SrTcm, TrTcm};

use crate::{case, create_error, create_error_naming, int, uint, Clock, Rng};

/// The two markers behind one interface, for recording.
trait Marker {
    fn mark(&mut self, bytes: u64, now: i64) -> Color;
    fn mark_aware(&mut self, bytes: u64, color: Color, now: i64) -> Color;
    /// The `tokens` step's fields.
    fn tokens(&self, now: i64) -> Value;
}

impl Marker for SrTcm {
    fn mark(&mut self, bytes: u64, now: i64) -> Color {
        SrTcm::mark(self, bytes, now)
    }
    fn mark_aware(&mut self, bytes: u64, color: Color, now: i64) -> Color {
        SrTcm::mark_aware(self, bytes, color, now)
    }
    fn tokens(&self, now: i64) -> Value {
        let (c, e) = self.tokens_at(now);
        json!({"op": "tokens", "committed": uint(c), "excess": uint(e)})
    }
}

impl Marker for TrTcm {
    fn mark(&mut self, bytes: u64, now: i64) -> Color {
        TrTcm::mark(self, bytes, now)
    }
    fn mark_aware(&mut self, bytes: u64, color: Color, now: i64) -> Color {
        TrTcm::mark_aware(self, bytes, color, now)
    }
    fn tokens(&self, now: i64) -> Value {
        let (p, c) = self.tokens_at(now);
        json!({"op": "tokens", "peak": uint(p), "committed": uint(c)})
    }
}

struct Recorder<M> {
    marker: M,
    clock: Clock,
    steps: Vec<Value>,
}

impl<M: Marker> Recorder<M> {
    fn new(marker: M) -> Self {
        Recorder { marker, clock: Clock::default(), steps: Vec::new() }
    }

    fn sleep(&mut self, micros: i64) -> &mut Self {
        let step = self.clock.sleep(micros);
        self.steps.push(step);
        self
    }

    fn mark(&mut self, bytes: u64) -> &mut Self {
        let color = self.marker.mark(bytes, self.clock.now);
        self.steps.push(json!({"op": "mark", "bytes": uint(bytes), "color": color.name()}));
        self
    }

    fn aware(&mut self, bytes: u64, pre: Color) -> &mut Self {
        let color = self.marker.mark_aware(bytes, pre, self.clock.now);
        self.steps
            .push(json!({"op": "mark_aware", "bytes": uint(bytes), "pre_color": pre.name(), "color": color.name()}));
        self
    }

    fn tokens(&mut self) -> &mut Self {
        let step = self.marker.tokens(self.clock.now);
        self.steps.push(step);
        self
    }

    fn random(&mut self, rng: &mut Rng, packet: u64, steps: u64) {
        for _ in 0..steps {
            match rng.below(6) {
                0 | 1 => {
                    self.sleep(rng.below(200_000) as i64);
                }
                2 => {
                    self.tokens();
                }
                3 => {
                    let pre = rng.pick(&[Color::Green, Color::Yellow, Color::Red]);
                    self.aware(rng.below(2 * packet + 1), pre);
                }
                _ => {
                    self.mark(rng.below(2 * packet + 1));
                }
            }
        }
        self.tokens();
    }
}

fn srtcm(cir: i64, cbs: i64, ebs: i64) -> Value {
    json!({"algorithm": "srtcm", "cir": int(cir), "cbs": int(cbs), "ebs": int(ebs)})
}

fn trtcm(pir: i64, pbs: i64, cir: i64, cbs: i64) -> Value {
    json!({"algorithm": "trtcm", "pir": int(pir), "pbs": int(pbs), "cir": int(cir), "cbs": int(cbs)})
}

pub fn cases() -> Vec<Value> {
    use Color::*;
    let mut cases = Vec::new();

    let mut sr = |name: &str, (cir, cbs, ebs): (u64, u64, u64), script: &dyn Fn(&mut Recorder<SrTcm>)| {
        let mut r = Recorder::new(SrTcm::new(cir, cbs, ebs).expect("valid"));
        script(&mut r);
        cases.push(case(format!("srtcm/{name}"), srtcm(cir as i64, cbs as i64, ebs as i64), r.steps));
    };
    sr("blind-green-yellow-red", (1_000, 1_500, 1_500), &|r| {
        r.mark(1_500).mark(1_500).mark(1_500).tokens().sleep(999).mark(1).sleep(99_001).mark(100).tokens();
    });
    sr("tokens-fill-c-then-e", (1_000, 1_000, 500), &|r| {
        r.mark(1_000)
            .mark(500)
            .tokens()
            .sleep(999_999)
            .tokens()
            .sleep(1)
            .tokens()
            .sleep(250_000)
            .tokens()
            .sleep(1_000_000)
            .tokens();
    });
    sr("aware-never-improves", (1_000, 1_000, 1_000), &|r| {
        r.aware(100, Red)
            .tokens()
            .aware(100, Yellow)
            .tokens()
            .aware(950, Green)
            .aware(100, Green)
            .aware(900, Green)
            .tokens();
    });
    sr("zero-bytes-and-empty-bucket", (1, 0, 10), &|r| {
        r.mark(0).mark(1).mark(10).sleep(1_000_000).tokens().mark(1);
    });
    sr("fractional-rate-on-the-grid", (3, 2, 0), &|r| {
        r.mark(2).sleep(333_333).tokens().sleep(1).tokens().mark(1).sleep(333_333).tokens();
    });
    sr("negative-bytes-is-an-error", (10, 10, 10), &|r| {
        r.steps.push(json!({"op": "mark", "bytes": -1, "error": "invalid_argument", "argument": "bytes"}));
        r.mark(10);
    });

    let mut tr = |name: &str, (pir, pbs, cir, cbs): (u64, u64, u64, u64), script: &dyn Fn(&mut Recorder<TrTcm>)| {
        let mut r = Recorder::new(TrTcm::new(pir, pbs, cir, cbs).expect("valid"));
        script(&mut r);
        cases.push(case(format!("trtcm/{name}"), trtcm(pir as i64, pbs as i64, cir as i64, cbs as i64), r.steps));
    };
    tr("blind-green-yellow-red", (2_000, 2_000, 1_000, 1_000), &|r| {
        r.mark(1_000).mark(500).tokens().mark(600).tokens().sleep(250_000).tokens().mark(250);
    });
    tr("aware-never-improves", (2_000, 2_000, 1_000, 1_000), &|r| {
        r.aware(100, Red).tokens().aware(100, Yellow).tokens().aware(100, Green).tokens().aware(1_900, Green);
    });
    tr("equal-rates", (500, 1_000, 500, 500), &|r| {
        r.mark(500).mark(500).mark(1).sleep(1_000_000).tokens().mark(600).mark(400);
    });
    tr("peak-refills-faster", (10_000, 100, 100, 100), &|r| {
        r.mark(100).mark(1).sleep(10_000).tokens().mark(100).mark(100).sleep(1_000_000).tokens();
    });

    for (i, (spec, argument, bound)) in [
        (srtcm(0, 1, 1), "cir", ""),
        (srtcm(-1, 1, 1), "cir", ""),
        // RFC 2697: cbs may be 0 unless ebs is too.
        (srtcm(1, 0, 0), "cbs", "above 0 when ebs is 0"),
        (srtcm(1, -1, 1), "cbs", ""),
        (srtcm(1, 1, -1), "ebs", ""),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("srtcm/create-invalid-{i}");
        cases.push(if bound.is_empty() {
            create_error(name, spec, argument)
        } else {
            create_error_naming(name, spec, argument, bound)
        });
    }
    for (i, (spec, argument)) in [
        (trtcm(1, 1, 2, 1), "pir"),
        (trtcm(1, 1, 0, 1), "cir"),
        (trtcm(1, 0, 1, 1), "pbs"),
        (trtcm(1, 1, 1, 0), "cbs"),
        (trtcm(-1, 1, 1, 1), "pir"),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(create_error(format!("trtcm/create-invalid-{i}"), spec, argument));
    }

    for seed in 0..8u64 {
        let mut rng = Rng::new(0x3c_0000 + seed);
        let (cir, cbs, ebs) =
            [(1_000u64, 1_500u64, 3_000u64), (125_000, 10_000, 0), (7, 20, 20), (1_000_000, 1_500, 1_500)]
                [seed as usize % 4];
        let mut r = Recorder::new(SrTcm::new(cir, cbs, ebs).expect("valid"));
        r.random(&mut rng, cbs.max(ebs).min(2_000), 30);
        cases.push(case(format!("srtcm/random-{seed}"), srtcm(cir as i64, cbs as i64, ebs as i64), r.steps));
        let (pir, pbs, cir, cbs) = [
            (2_000u64, 3_000u64, 1_000u64, 1_500u64),
            (1_000_000, 1_500, 125_000, 1_500),
            (7, 20, 3, 10),
            (100, 1_000, 100, 500),
        ][seed as usize % 4];
        let mut r = Recorder::new(TrTcm::new(pir, pbs, cir, cbs).expect("valid"));
        r.random(&mut rng, pbs.min(2_000), 30);
        cases.push(case(
            format!("trtcm/random-{seed}"),
            trtcm(pir as i64, pbs as i64, cir as i64, cbs as i64),
            r.steps,
        ));
    }
    cases
}
