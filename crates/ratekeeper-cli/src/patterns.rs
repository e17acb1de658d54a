//! Generated traffic: the patterns `--pattern` names, each a deterministic
//! function of its parameters (Poisson's of its seed too), so that a
//! simulation can be repeated and its summary compared.
//!
//! * `steady:rate=R,duration=D` — one request every 1/R s.
//! * `poisson:rate=R,duration=D,seed=N` — exponential gaps of mean 1/R.
//! * `bursts:size=N,every=P,duration=D[,spread=S]` — N requests at once
//!   (or spread evenly over S) every P.
//! * `boundary:limit=N,window=W[,spread=S,edge=E]` — the boundary
//!   attack (docs/simulate.md): N requests in the last S before a window edge (at E, default
//!   W) and N in the first S after it (S defaults to W/100). A fixed
//!   window admits all 2N within 2S; a sliding window admits N.
//! * `ramp:from=R0,to=R1,duration=D` — the rate rising (or falling)
//!   linearly from R0 to R1 requests per second.
//!
//! Every pattern also takes `start` (when it begins; default 0) and `cost`
//! (units per request; default 1). Several `--pattern`s are merged.

use crate::spec_syntax::{SpecError, SpecText};
use crate::trace::{Arrival, MAX_ARRIVALS};

/// The patterns `--pattern` accepts, with their parameters (for help).
pub const PATTERNS: &[(&str, &str)] = &[
    ("steady", "rate (per second), duration"),
    ("poisson", "rate (per second), duration, seed (default 0)"),
    ("bursts", "size, every, duration, spread (default 0)"),
    ("boundary", "limit, window, spread (default window/100), edge (default window)"),
    ("ramp", "from, to (per second), duration"),
];

/// A parsed `--pattern`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// The argument as given.
    pub text: String,
    kind: Kind,
    start_micros: i64,
    cost: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Steady { rate: f64, duration: i64 },
    Poisson { rate: f64, duration: i64, seed: u64 },
    Bursts { size: u64, every: i64, duration: i64, spread: i64 },
    Boundary { limit: u64, window: i64, spread: i64, edge: i64 },
    Ramp { from: f64, to: f64, duration: i64 },
}

fn positive_rate(spec: &SpecText, key: &str) -> Result<f64, SpecError> {
    let r = spec.required_number(key)?;
    if r > 0.0 && r.is_finite() {
        Ok(r)
    } else {
        Err(spec.invalid(format!("{key} = {r}: must be a positive, finite number of requests per second")))
    }
}

fn positive_duration(spec: &SpecText, key: &str) -> Result<i64, SpecError> {
    let d = spec.required_duration(key)?;
    if d > 0 {
        Ok(d)
    } else {
        Err(spec.invalid(format!("{key} must be longer than 0")))
    }
}

fn too_many(spec: &SpecText, expected: f64) -> Result<(), SpecError> {
    if expected > MAX_ARRIVALS as f64 {
        Err(spec.invalid(format!("makes about {expected:.0} requests; the most is {MAX_ARRIVALS}")))
    } else {
        Ok(())
    }
}

impl Pattern {
    /// Parses one `--pattern` argument.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let spec = SpecText::parse(text)?;
        let keys = |known: &[&str]| {
            let mut all = known.to_vec();
            all.extend(["start", "cost"]);
            spec.only_keys(&all)
        };
        let kind = match spec.name.as_str() {
            "steady" => {
                keys(&["rate", "duration"])?;
                let (rate, duration) = (positive_rate(&spec, "rate")?, positive_duration(&spec, "duration")?);
                too_many(&spec, rate * duration as f64 / 1e6)?;
                Kind::Steady { rate, duration }
            }
            "poisson" => {
                keys(&["rate", "duration", "seed"])?;
                let (rate, duration) = (positive_rate(&spec, "rate")?, positive_duration(&spec, "duration")?);
                too_many(&spec, rate * duration as f64 / 1e6)?;
                Kind::Poisson { rate, duration, seed: spec.count("seed")?.unwrap_or(0) }
            }
            "bursts" => {
                keys(&["size", "every", "duration", "spread"])?;
                let size = spec.required_count("size")?;
                let every = positive_duration(&spec, "every")?;
                let duration = positive_duration(&spec, "duration")?;
                let spread = spec.duration("spread")?.unwrap_or(0);
                if size == 0 {
                    return Err(spec.invalid("size must be at least 1"));
                }
                too_many(&spec, size as f64 * (duration as f64 / every as f64).ceil())?;
                Kind::Bursts { size, every, duration, spread }
            }
            "boundary" => {
                keys(&["limit", "window", "spread", "edge"])?;
                let limit = spec.required_count("limit")?;
                let window = positive_duration(&spec, "window")?;
                let spread = spec.duration("spread")?.unwrap_or((window / 100).max(1));
                let edge = spec.duration("edge")?.unwrap_or(window);
                if limit == 0 {
                    return Err(spec.invalid("limit must be at least 1"));
                }
                if spread == 0 || spread > edge {
                    return Err(spec.invalid("spread must be longer than 0 and at most the edge's time"));
                }
                too_many(&spec, 2.0 * limit as f64)?;
                Kind::Boundary { limit, window, spread, edge }
            }
            "ramp" => {
                keys(&["from", "to", "duration"])?;
                let from = spec.required_number("from")?;
                let to = spec.required_number("to")?;
                let duration = positive_duration(&spec, "duration")?;
                if !(from >= 0.0 && to >= 0.0 && from.is_finite() && to.is_finite() && from + to > 0.0) {
                    return Err(spec.invalid("from and to must be finite rates ≥ 0, not both 0"));
                }
                too_many(&spec, (from + to) / 2.0 * duration as f64 / 1e6)?;
                Kind::Ramp { from, to, duration }
            }
            other => {
                let names: Vec<&str> = PATTERNS.iter().map(|(n, _)| *n).collect();
                return Err(spec.invalid(format!("unknown pattern `{other}` (known: {})", names.join(", "))));
            }
        };
        let cost = spec.count("cost")?.unwrap_or(1);
        if cost == 0 {
            return Err(spec.invalid("cost must be at least 1"));
        }
        Ok(Pattern { text: text.to_owned(), kind, start_micros: spec.duration("start")?.unwrap_or(0), cost })
    }

    /// The window this pattern is about (the boundary attack's), if any: the
    /// summary's default window.
    pub fn window_micros(&self) -> Option<i64> {
        match self.kind {
            Kind::Boundary { window, .. } => Some(window),
            _ => None,
        }
    }

    /// The arrivals, sorted by time.
    pub fn generate(&self) -> Vec<Arrival> {
        let start = self.start_micros;
        let at = |offset: i64| start.saturating_add(offset);
        let mut times: Vec<i64> = Vec::new();
        match self.kind {
            Kind::Steady { rate, duration } => {
                for i in 0u64.. {
                    let t = (i as f64 * 1e6 / rate) as i64;
                    if t >= duration {
                        break;
                    }
                    times.push(at(t));
                }
            }
            Kind::Poisson { rate, duration, seed } => {
                let mut rng = SplitMix64(seed);
                let mut seconds = 0.0f64;
                loop {
                    let t = (seconds * 1e6) as i64;
                    if t >= duration {
                        break;
                    }
                    times.push(at(t));
                    seconds += -rng.next_open01().ln() / rate;
                }
            }
            Kind::Bursts { size, every, duration, spread } => {
                let mut burst = 0i64;
                while burst < duration {
                    for j in 0..size {
                        times.push(at(burst.saturating_add(spread_offset(j, size, spread))));
                    }
                    burst = burst.saturating_add(every);
                }
            }
            Kind::Boundary { limit, spread, edge, .. } => {
                for j in 0..limit {
                    times.push(at(edge - spread + spread_offset(j, limit, spread)));
                }
                for j in 0..limit {
                    times.push(at(edge + spread_offset(j, limit, spread)));
                }
            }
            Kind::Ramp { from, to, duration } => {
                // Arrival i is where the expected count, from·t + (to −
                // from)·t²/(2D), reaches i.
                let d = duration as f64 / 1e6;
                let a = (to - from) / (2.0 * d);
                for i in 0u64.. {
                    let n = i as f64;
                    let seconds = if a.abs() < 1e-12 {
                        n / from
                    } else {
                        let disc = from * from + 4.0 * a * n;
                        if disc < 0.0 {
                            break; // a falling ramp that never reaches n
                        }
                        (-from + disc.sqrt()) / (2.0 * a)
                    };
                    let t = (seconds * 1e6) as i64;
                    if !(seconds.is_finite()) || t >= duration {
                        break;
                    }
                    times.push(at(t));
                }
            }
        }
        times.sort_unstable();
        times.into_iter().map(|at_micros| Arrival { at_micros, cost: self.cost }).collect()
    }
}

/// Offset of the `j`th of `n` requests spread evenly over `spread`.
fn spread_offset(j: u64, n: u64, spread: i64) -> i64 {
    (i128::from(j) * i128::from(spread) / i128::from(n.max(1))) as i64
}

/// Steele, Lea and Flood's SplitMix64 ("Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a generator whose every output is fixed by
/// its seed, here and on every platform, so a seeded Poisson trace is the
/// same trace forever (library generators reserve the right to change).
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    fn next_open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Merges the arrivals of several patterns, in time order (stable: equal
/// times keep the order of the patterns).
pub fn merge(parts: Vec<Vec<Arrival>>) -> Vec<Arrival> {
    let mut all: Vec<Arrival> = parts.into_iter().flatten().collect();
    all.sort_by_key(|a| a.at_micros);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(text: &str) -> Vec<i64> {
        Pattern::parse(text).unwrap().generate().iter().map(|a| a.at_micros).collect()
    }

    #[test]
    fn steady_and_bursts() {
        assert_eq!(times("steady:rate=4,duration=1s"), [0, 250_000, 500_000, 750_000]);
        assert_eq!(times("steady:rate=4,duration=1s,start=2s").first(), Some(&2_000_000));
        assert_eq!(times("bursts:size=2,every=1s,duration=2s"), [0, 0, 1_000_000, 1_000_000]);
        assert_eq!(times("bursts:size=2,every=1s,duration=1s,spread=10ms"), [0, 5_000]);
    }

    #[test]
    fn boundary_attack_straddles_the_edge() {
        let t = times("boundary:limit=4,window=1s");
        assert_eq!(t, [990_000, 992_500, 995_000, 997_500, 1_000_000, 1_002_500, 1_005_000, 1_007_500]);
        assert_eq!(Pattern::parse("boundary:limit=4,window=1s").unwrap().window_micros(), Some(1_000_000));
    }

    #[test]
    fn poisson_is_fixed_by_its_seed() {
        let a = times("poisson:rate=100,duration=10s,seed=7");
        assert_eq!(a, times("poisson:rate=100,duration=10s,seed=7"));
        assert_ne!(a, times("poisson:rate=100,duration=10s,seed=8"));
        // About 1,000 requests (the mean), sorted, within the duration.
        assert!((900..1100).contains(&a.len()), "{}", a.len());
        assert!(a.windows(2).all(|w| w[0] <= w[1]) && *a.last().unwrap() < 10_000_000);
        // SplitMix64's first output for seed 0 (the published reference value).
        assert_eq!(SplitMix64(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn ramp_rises() {
        let t = times("ramp:from=0,to=100,duration=10s");
        // (0 + 100) / 2 × 10 s = 500 requests, denser at the end.
        assert!((499..=501).contains(&t.len()), "{}", t.len());
        let first_half = t.iter().filter(|&&x| x < 5_000_000).count();
        assert!((120..=130).contains(&first_half), "{first_half}"); // a quarter
        assert_eq!(times("ramp:from=2,to=2,duration=2s"), [0, 500_000, 1_000_000, 1_500_000]);
        let falling = times("ramp:from=100,to=0,duration=1s");
        assert!((49..=51).contains(&falling.len()), "{}", falling.len());
    }

    #[test]
    fn bad_patterns_are_errors() {
        for (text, needle) in [
            ("steady:rate=0,duration=1s", "positive"),
            ("steady:rate=10", "needs `duration=`"),
            ("steady:rate=1e9,duration=1h", "the most is"),
            ("wave:rate=1", "unknown pattern `wave`"),
            ("bursts:size=0,every=1s,duration=1s", "size"),
            ("boundary:limit=10,window=1s,spread=2s", "spread"),
            ("ramp:from=0,to=0,duration=1s", "not both 0"),
            ("steady:rate=1,duration=1s,cost=0", "cost"),
            ("steady:rate=1,duration=1s,seed=3", "unknown parameter `seed`"),
        ] {
            let e = Pattern::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn merged_in_time_order() {
        let a = Pattern::parse("steady:rate=1,duration=2s").unwrap().generate();
        let b = Pattern::parse("steady:rate=1,duration=2s,start=500ms,cost=5").unwrap().generate();
        let m = merge(vec![a, b]);
        assert_eq!(
            m.iter().map(|x| (x.at_micros, x.cost)).collect::<Vec<_>>(),
            [(0, 1), (500_000, 5), (1_000_000, 1), (1_500_000, 5)]
        );
    }
}
