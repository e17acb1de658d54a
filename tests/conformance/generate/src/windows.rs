//! `fixed_window`, `sliding_window`, `sliding_log` and
//! `sliding_window_counter` cases.

use serde_json::{json, Value};

use ratekeeper_core::sliding_log::LogStorage;
use ratekeeper_core::{
    Admission, Argument, Error, FixedWindow, LogEntry, SlidingLog, SlidingWindow, SlidingWindowCounter,
};

use crate::admission::{random_walk, Recorder};
use crate::{argument_name, create_error, create_error_naming, error_step, int, Rng};

/// The largest limit a sliding log has in every binding (the std layer's
/// `MAX_SLIDING_LOG_LIMIT`), at creation and at run time.
const MAX_LOG_LIMIT: u64 = 1 << 20;

/// What the four windows share beyond `check`: a limit that changes at run
/// time (each window's `set_limit`, with the bounds every binding has).
trait SetLimit: Admission {
    fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error>;
}

impl SetLimit for FixedWindow {
    fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        FixedWindow::set_limit(self, limit, now_micros)
    }
}

impl SetLimit for SlidingWindow {
    fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        SlidingWindow::set_limit(self, limit, now_micros)
    }
}

impl SetLimit for SlidingWindowCounter {
    fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        SlidingWindowCounter::set_limit(self, limit, now_micros)
    }
}

impl SetLimit for SlidingLog<Grown> {
    fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        if limit == 0 || limit > MAX_LOG_LIMIT {
            return Err(Error::invalid_uint(Argument::SlidingLogLimit, limit));
        }
        SlidingLog::set_limit(self, limit, now_micros)
    }
}

/// `set_limit {limit}`: the window's limit changes now (a negative limit is
/// the binding's conversion error, as a negative cost is).
fn set_limit<A: SetLimit>(r: &mut Recorder<A>, limit: i64) {
    let step = json!({"op": "set_limit", "limit": int(limit)});
    let result =
        ratekeeper_core::unsigned_from_i64(Argument::Limit, limit).and_then(|l| r.limiter.set_limit(l, r.clock.now));
    r.steps.push(match result {
        Ok(()) => step,
        Err(e) => error_step(step, argument_name(e)),
    });
}

/// A random walk of checks, peeks and sleeps (as
/// [`random_walk`]'s) with a `set_limit` to 1 to `2 × limit` about one step
/// in seven.
fn walk_with_limits<A: SetLimit>(limiter: A, seed: u64, period: i64, limit: u64) -> Recorder<A> {
    let mut rng = Rng::new(seed);
    let mut r = Recorder::new(limiter);
    for _ in 0..(20 + rng.below(20)) {
        match rng.below(7) {
            0 => set_limit(&mut r, 1 + rng.below(2 * limit) as i64),
            1 | 2 => {
                r.sleep(rng.below(period as u64 + 1) as i64);
            }
            3 => {
                r.peek(rng.below(limit + 1));
            }
            _ => {
                r.check(rng.below(limit / 2 + 2));
            }
        }
    }
    r
}

/// A sliding log's entries in a `Vec` it resizes, as the std layer's heap
/// storage: a run-time limit above the creation's must fit.
#[derive(Debug, Clone, Default)]
struct Grown(Vec<LogEntry>);

impl LogStorage for Grown {
    fn slots(&self) -> &[LogEntry] {
        &self.0
    }

    fn slots_mut(&mut self) -> &mut [LogEntry] {
        &mut self.0
    }

    fn resize(&mut self, len: usize) -> bool {
        self.0.resize(len, LogEntry::default());
        true
    }

    fn resizes(&self) -> bool {
        true
    }
}

fn window(algorithm: &str, limit: i64, window_micros: i64) -> Value {
    json!({"algorithm": algorithm, "limit": int(limit), "window_micros": int(window_micros)})
}

fn sliding(limit: i64, window_micros: i64, sub_windows: i64) -> Value {
    json!({"algorithm": "sliding_window", "limit": int(limit), "window_micros": int(window_micros), "sub_windows": int(sub_windows)})
}

/// A sliding log over storage that resizes, as the std layer builds it.
fn log(limit: u64, window_micros: i64) -> SlidingLog<Grown> {
    SlidingLog::new(limit, window_micros, Grown::default()).expect("valid")
}

fn record<A: Admission>(cases: &mut Vec<Value>, name: String, spec: Value, core: A, script: &dyn Fn(&mut Recorder<A>)) {
    let mut r = Recorder::new(core);
    script(&mut r);
    cases.push(r.done(name, spec));
}

pub fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let c = &mut cases;

    // The fixed window's worst case: 2 × limit across a boundary.
    let fixed = |l, w| FixedWindow::new(l, w).expect("valid");
    record(
        c,
        "fixed_window/twice-the-limit-across-a-boundary".into(),
        window("fixed_window", 3, 1_000_000),
        fixed(3, 1_000_000),
        &|r| {
            r.sleep(999_999).checks(1, 4).sleep(1).checks(1, 4);
        },
    );
    record(
        c,
        "fixed_window/counts-per-window".into(),
        window("fixed_window", 3, 1_000_000),
        fixed(3, 1_000_000),
        &|r| {
            r.sleep(250_000)
                .check(2)
                .check(1)
                .check(1)
                .peek(0)
                .sleep(750_000)
                .peek(0)
                .check(3)
                .check(4)
                .sleep(5_000_000)
                .peek(1);
        },
    );
    record(c, "fixed_window/negative-cost-is-an-error".into(), window("fixed_window", 1, 10), fixed(1, 10), &|r| {
        r.negative_cost().check(1);
    });

    let sw = |l, w, n| SlidingWindow::new(l, w, n).expect("valid");
    record(c, "sliding_window/quarters-slide-out".into(), sliding(4, 1_000_000, 4), sw(4, 1_000_000, 4), &|r| {
        r.sleep(100_000).check(3).sleep(500_000).check(1).sleep(300_000).check(1).sleep(100_000).check(3).check(5);
    });
    record(
        c,
        "sliding_window/burst-needs-most-of-a-window".into(),
        sliding(10, 1_000_000, 10),
        sw(10, 1_000_000, 10),
        &|r| {
            r.sleep(99_999).check(10).sleep(900_000).check(1).sleep(1).check(10);
        },
    );
    record(c, "sliding_window/one-sub-window-is-fixed".into(), sliding(3, 1_000_000, 1), sw(3, 1_000_000, 1), &|r| {
        r.sleep(999_999).checks(1, 4).sleep(1).checks(1, 4);
    });
    record(c, "sliding_window/sixteen-sub-windows".into(), sliding(32, 1_600, 16), sw(32, 1_600, 16), &|r| {
        for _ in 0..20 {
            r.check(3).sleep(70);
        }
        r.peek(0);
    });

    let counter = |l, w| SlidingWindowCounter::new(l, w).expect("valid");
    record(
        c,
        "sliding_window_counter/previous-weighs-in-proportion".into(),
        window("sliding_window_counter", 10, 1_000_000),
        counter(10, 1_000_000),
        &|r| {
            r.sleep(500_000)
                .check(10)
                .sleep(750_000)
                .check(2)
                .check(1)
                .sleep(49_999)
                .check(1)
                .sleep(1)
                .check(1)
                .check(11);
        },
    );
    record(
        c,
        "sliding_window_counter/retry-in-the-next-window".into(),
        window("sliding_window_counter", 4, 1_000),
        counter(4, 1_000),
        &|r| {
            r.sleep(100).check(4).sleep(100).check(2).sleep(1_299).check(2).sleep(1).check(2);
        },
    );
    record(
        c,
        "sliding_window_counter/worst-case".into(),
        window("sliding_window_counter", 5, 1_000),
        counter(5, 1_000),
        &|r| {
            r.sleep(999).check(5);
            for _ in 0..10 {
                r.sleep(100).check(1);
            }
        },
    );

    record(c, "sliding_log/exact-window".into(), window("sliding_log", 3, 1_000), log(3, 1_000), &|r| {
        r.sleep(100).check(1).sleep(500).check(2).sleep(499).check(1).sleep(1).check(1).check(2).check(4).peek(0);
    });
    record(
        c,
        "sliding_log/never-more-than-the-limit-in-any-window".into(),
        window("sliding_log", 3, 1_000_000),
        log(3, 1_000_000),
        &|r| {
            r.sleep(999_999).checks(1, 4).sleep(1).checks(1, 4).sleep(999_999).checks(1, 2).sleep(1).checks(1, 4);
        },
    );
    record(c, "sliding_log/same-instant-shares-an-entry".into(), window("sliding_log", 4, 10), log(4, 10), &|r| {
        r.checks(1, 5).sleep(9).check(1).sleep(1).checks(1, 5);
    });

    // Run-time limits: the counts stay; a lower limit refuses until the
    // count is under it, a higher one admits the difference at once; an
    // invalid one changes nothing.
    record(
        c,
        "fixed_window/set-limit-keeps-the-count".into(),
        window("fixed_window", 5, 1_000),
        fixed(5, 1_000),
        &|r| {
            r.sleep(100).check(4);
            set_limit(r, 2);
            r.sleep(100).check(1).peek(0).sleep(800).check(2).check(1);
            set_limit(r, 6);
            r.check(4).check(1);
            for bad in [0, -1] {
                set_limit(r, bad);
            }
            r.peek(0).sleep(1_000).check(6);
        },
    );
    record(
        c,
        "sliding_window/set-limit-keeps-the-sub-windows".into(),
        sliding(6, 1_000_000, 4),
        sw(6, 1_000_000, 4),
        &|r| {
            r.sleep(100_000).check(3).sleep(200_000).check(2);
            set_limit(r, 3);
            r.sleep(200_000).check(1).sleep(499_999).check(1).sleep(1).check(1);
            set_limit(r, 10);
            r.check(7).check(1);
            for bad in [0, -1, 4_294_967_296] {
                set_limit(r, bad);
            }
            r.peek(0);
        },
    );
    record(
        c,
        "sliding_window_counter/set-limit-keeps-the-counts".into(),
        window("sliding_window_counter", 10, 1_000),
        counter(10, 1_000),
        &|r| {
            r.sleep(500).check(8);
            set_limit(r, 4);
            r.sleep(200).check(1).sleep(924).check(1).sleep(1).check(1);
            set_limit(r, 12);
            r.check(8).check(1);
            for bad in [0, -1] {
                set_limit(r, bad);
            }
            r.peek(0);
        },
    );
    record(c, "sliding_log/set-limit-keeps-the-log".into(), window("sliding_log", 6, 1_000), log(6, 1_000), &|r| {
        r.sleep(100).check(2).sleep(300).check(3);
        set_limit(r, 2);
        r.sleep(200).check(1).peek(0).sleep(799).check(1).sleep(1).check(2);
        set_limit(r, 8);
        r.sleep(100).check(6).check(1);
        for bad in [0, -1, 1_048_577] {
            set_limit(r, bad);
        }
        r.peek(0);
    });

    for (algorithm, limit, w) in [
        ("fixed_window", 0, 1),
        ("fixed_window", -1, 1),
        ("fixed_window", 1, 0),
        ("sliding_log", 0, 1),
        ("sliding_log", 1, -1),
        ("sliding_log", 1_048_577, 1),
        ("sliding_window_counter", 0, 1),
        ("sliding_window_counter", 1, 0),
    ] {
        let name = format!("{algorithm}/create-invalid-{limit}-{w}");
        let spec = window(algorithm, limit, w);
        // Each names its real bound: a sliding log's own limit, every
        // window's longest duration.
        cases.push(if w == 0 {
            create_error_naming(name, spec, "window", "9223372036854775807 microseconds")
        } else if w < 0 {
            create_error(name, spec, "window")
        } else if algorithm == "sliding_log" {
            create_error_naming(name, spec, "limit", "between 1 and 1048576")
        } else {
            create_error_naming(name, spec, "limit", "between 1 and 9223372036854775807")
        });
    }
    for (i, (spec, argument, bound)) in [
        (sliding(1, 1_000, 0), "sub_windows", "between 1 and 16"),
        (sliding(1, 1_000, 17), "sub_windows", "between 1 and 16"),
        (sliding(1, 1_000, 3), "sub_windows", "divide the window"),
        (sliding(0, 1_000, 2), "limit", "between 1 and 4294967295"),
        (sliding(4_294_967_296, 16, 16), "limit", "between 1 and 4294967295"),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(create_error_naming(format!("sliding_window/create-invalid-{i}"), spec, argument, bound));
    }

    // Random walks whose limit changes now and then (from 1 to twice the
    // creation's), between the same checks, peeks and sleeps.
    for seed in 0..4u64 {
        let (l, w) = [(3u64, 1_000i64), (10, 1_000_000)][seed as usize % 2];
        let mut walk = walk_with_limits(fixed(l, w), 0xf1_1000 + seed, w, l);
        cases.push(walk.done(format!("fixed_window/random-limits-{seed}"), window("fixed_window", l as i64, w)));
        let n = [2u32, 4, 5, 16][seed as usize];
        let w16 = w - w % i64::from(n);
        let mut walk = walk_with_limits(sw(l, w16, n), 0x5a_1000 + seed, w16, l);
        cases.push(walk.done(format!("sliding_window/random-limits-{seed}"), sliding(l as i64, w16, i64::from(n))));
        let mut walk = walk_with_limits(log(l, w), 0x10_1000 + seed, w, l);
        cases.push(walk.done(format!("sliding_log/random-limits-{seed}"), window("sliding_log", l as i64, w)));
        let mut walk = walk_with_limits(counter(l, w), 0xc0_1000 + seed, w, l);
        cases.push(walk.done(
            format!("sliding_window_counter/random-limits-{seed}"),
            window("sliding_window_counter", l as i64, w),
        ));
    }

    for seed in 0..6u64 {
        let (l, w) = [(1u64, 1_000i64), (5, 1_000_000), (20, 60_000_000)][seed as usize % 3];
        let mut walk = random_walk(fixed(l, w), 0xf1_0000 + seed, w, l);
        cases.push(walk.done(format!("fixed_window/random-{seed}"), window("fixed_window", l as i64, w)));
        let n = [1u32, 2, 4, 5, 10, 16][seed as usize];
        let (l, w) = (5 + seed * 3, 1_600_000i64 - 1_600_000 % i64::from(n));
        let mut walk = random_walk(sw(l, w, n), 0x5a_0000 + seed, w, l);
        cases.push(walk.done(format!("sliding_window/random-{seed}"), sliding(l as i64, w, i64::from(n))));
        let (l, w) = [(1u64, 1_000i64), (7, 1_000_000), (50, 10_000_000)][seed as usize % 3];
        let mut walk = random_walk(log(l, w), 0x10_0000 + seed, w, l);
        cases.push(walk.done(format!("sliding_log/random-{seed}"), window("sliding_log", l as i64, w)));
        let mut walk = random_walk(counter(l, w), 0xc0_0000 + seed, w, l);
        cases.push(
            walk.done(format!("sliding_window_counter/random-{seed}"), window("sliding_window_counter", l as i64, w)),
        );
    }
    cases
}
