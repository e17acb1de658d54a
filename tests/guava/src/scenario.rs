//! Random scenarios for the Guava differential test, from a seed.
//!
//! The mix leans on the places where an imitation of Guava goes wrong: rates
//! from 1e-3 to 1e9 and the odd doubles (subnormals, `f64::MAX`, infinities,
//! NaN, signed zeros), warm-ups of 0 and 1 µs, rate changes mid-stream,
//! timeouts from `i64::MIN` to `i64::MAX`, permits up to `i32::MAX`, and
//! invalid arguments. Every parameter stays inside what both Guava and
//! ratekeeper accept as a configuration (cold factor ≥ 1, finite burst ≥ 0),
//! so that any difference is a difference in arithmetic.

/// SplitMix64: small, fast, and the same sequence on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// Log-uniform in `[lo, hi)`.
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// The limiter a scenario creates.
#[derive(Debug, Clone, Copy)]
pub enum LimiterSpec {
    Bursty { rate: f64, max_burst_seconds: f64 },
    WarmingUp { rate: f64, warmup_micros: i64, cold_factor: f64 },
}

/// One step of a scenario, without its expected outcome.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Sleep(i64),
    Acquire(i64),
    TryAcquire(i64, i64),
    SetRate(f64),
    GetRate,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub limiter: LimiterSpec,
    pub ops: Vec<Op>,
}

fn rate(rng: &mut Rng) -> f64 {
    match rng.below(20) {
        0 => rng.pick(&[
            f64::from_bits(1), // 5e-324
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::INFINITY,
            1e-300,
            1e300,
            0.1,
            1.0 / 3.0,
            2e6,
            1e9,
            1e-3,
            7.0,
            3.0,
        ]),
        1 => rng.pick(&[0.0, -0.0, -1.0, f64::NAN, f64::NEG_INFINITY, -f64::from_bits(1), -1e9]),
        2..=9 => rng.log_uniform(1e-3, 1e9),
        _ => {
            // Round to three significant digits, as people write rates.
            let r = rng.log_uniform(1e-3, 1e9);
            let scale = 10f64.powi(2 - r.log10().floor() as i32);
            (r * scale).round() / scale
        }
    }
}

fn limiter(rng: &mut Rng) -> LimiterSpec {
    let rate = rate(rng);
    if rng.below(5) < 3 {
        let max_burst_seconds = match rng.below(10) {
            0..=4 => 1.0,
            5 => rng.pick(&[0.5, 2.0, 3.0, 10.0]),
            6 => 0.0,
            _ => rng.unit() * 100.0,
        };
        LimiterSpec::Bursty { rate, max_burst_seconds }
    } else {
        let warmup_micros = match rng.below(20) {
            0 | 1 => 0,
            2 => 1,
            3 => rng.pick(&[-1, -1_000_000, i64::MIN]),
            4 => rng.pick(&[i64::MAX, 1 << 53, 1_000_000_000_000]),
            5..=14 => rng.below(10_000_000) as i64,
            _ => rng.below(1_000_000_000_000) as i64,
        };
        let cold_factor = match rng.below(8) {
            0..=3 => 3.0,
            4 => 1.0,
            5 => 2.0,
            6 => 10.0,
            _ => 1.0 + rng.unit() * 19.0,
        };
        LimiterSpec::WarmingUp { rate, warmup_micros, cold_factor }
    }
}

fn permits(rng: &mut Rng) -> i64 {
    match rng.below(40) {
        0 => rng.pick(&[0, -1, i64::from(i32::MIN)]),
        1 => i64::from(i32::MAX),
        2..=17 => 1,
        18..=33 => 1 + rng.below(100) as i64,
        _ => 1 + rng.below(1_000_000) as i64,
    }
}

fn timeout(rng: &mut Rng) -> i64 {
    match rng.below(12) {
        0 => {
            let small = -(rng.below(1_000_000) as i64);
            rng.pick(&[i64::MIN, -1, small])
        }
        1 => i64::MAX,
        2..=5 => 0,
        6..=9 => rng.below(2_000_000) as i64,
        _ => rng.below(1 << 40) as i64,
    }
}

fn sleep(rng: &mut Rng) -> i64 {
    match rng.below(30) {
        0 => rng.pick(&[i64::MAX, 1 << 53, 1_000_000_000_000_000_000]),
        1..=4 => 0,
        5..=19 => rng.below(2_000_000) as i64,
        20..=27 => rng.below(100_000_000) as i64,
        _ => rng.below(1_000_000_000_000) as i64,
    }
}

pub fn generate(seed: u64, index: usize) -> Scenario {
    // Each scenario from its own stream, so one can be regenerated alone.
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    let limiter = limiter(&mut rng);
    let n = 1 + rng.below(40) as usize;
    let ops = (0..n)
        .map(|_| match rng.below(20) {
            0..=5 => Op::Sleep(sleep(&mut rng)),
            6..=10 => Op::Acquire(permits(&mut rng)),
            11..=15 => Op::TryAcquire(permits(&mut rng), timeout(&mut rng)),
            16 | 17 => Op::SetRate(rate(&mut rng)),
            _ => Op::GetRate,
        })
        .collect();
    Scenario { name: format!("guava-diff/{seed}/{index}"), limiter, ops }
}
