//! The x/time/rate differential test.
//!
//! ```text
//! ratekeeper-xtime-diff [--scenarios N] [--seed S] [--write FILE]
//! ```
//!
//! Generates N random token-bucket scenarios (default 2,000; a fresh seed
//! each run unless one is given), runs them through Go's real
//! `golang.org/x/time/rate` (Debian's `golang-golang-x-time-dev`, through the
//! small Go oracle in `go/`), turns Go's answers into `token_bucket`
//! conformance vectors, and replays those through ratekeeper's std
//! `TokenBucket` on a manual clock. On the first difference it prints the
//! case as a vector and exits 1.
//!
//! What is compared: every `AllowN` answer, every `ReserveN`'s OK and delay,
//! every `WaitN`'s outcome and delay (Go's own `wait`, deadline included),
//! `CancelAt`, `SetLimitAt`, `SetBurstAt`, and `TokensAt` as the same
//! `float64` bit for bit. Go reports delays in nanoseconds, ratekeeper in
//! microseconds rounded up; the vectors carry Go's delay rounded up, and a
//! `wait` moves both clocks by that many microseconds.
//!
//! Debian 12 ships x/time v0.3.0. ratekeeper follows the current upstream
//! source, which since v0.3.0 fixed two things: a zero rate (772484e: v0.3.0
//! spends the *burst* itself) and waits beyond 2^63 ns (2c6c5a2: v0.3.0
//! overflows to a negative wait). The scenarios stay clear of both — rates
//! are `rate.Inf` or at least 0.5/s, costs at most 100 — so any difference
//! is a difference in the arithmetic both versions share.
//!
//! Environment: `GO` (default `go` on the PATH), `XTIME_SRC` (default
//! `/usr/share/gocode`, the GOPATH that holds `golang.org/x/time/rate`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde_json::{json, Value};

struct Options {
    scenarios: usize,
    seed: u64,
    write: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options { scenarios: 2_000, seed: fresh_seed(), write: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--scenarios" => options.scenarios = value()?.parse().map_err(|e| format!("--scenarios: {e}"))?,
            "--seed" => options.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--write" => options.write = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    (nanos as u64) ^ u64::from(std::process::id()).rotate_left(32)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}\nusage: ratekeeper-xtime-diff [--scenarios N] [--seed S] [--write FILE]");
            return ExitCode::from(2);
        }
    };
    println!("xtime-diff: {} scenarios, seed {}", options.scenarios, options.seed);
    let scenarios: Vec<Scenario> = (0..options.scenarios).map(|i| generate(options.seed, i)).collect();
    let answers = match ask_go(&scenarios) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cases = Vec::with_capacity(scenarios.len());
    for (scenario, answer) in scenarios.iter().zip(&answers) {
        match to_vector(scenario, answer) {
            Ok(case) => cases.push(case),
            Err(e) => {
                eprintln!("error: {}: Go's answer was not understood: {e}", scenario.name);
                return ExitCode::from(2);
            }
        }
    }
    if let Some(path) = &options.write {
        let doc = json!({
            "format": ratekeeper_conformance::FORMAT,
            "source": format!("golang.org/x/time/rate (golang-golang-x-time-dev), random scenarios, seed {}", options.seed),
            "cases": cases,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    let (mut passed, mut failed) = (0, 0);
    for case in &cases {
        match ratekeeper_conformance::run_case(case) {
            Ok(()) => passed += 1,
            Err(failure) => {
                failed += 1;
                if failed == 1 {
                    println!("FAIL {}: {failure}", case["name"].as_str().unwrap_or("?"));
                    println!("the case, as a conformance vector:\n{}", serde_json::to_string(case).unwrap_or_default());
                }
            }
        }
    }
    let steps: usize = scenarios.iter().map(|s| s.ops.len()).sum();
    println!("{passed} passed, {failed} failed ({steps} steps)");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One step of a scenario, without its outcome.
#[derive(Debug, Clone, Copy)]
enum Op {
    Sleep(i64),
    Allow(u64),
    Reserve(u64),
    /// Cancels the reservation made by the `i`-th `Reserve` of the scenario.
    Cancel(usize),
    /// WaitN with a deadline this many microseconds away, or none.
    Wait(u64, Option<i64>),
    SetRate(f64),
    SetBurst(u64),
    Tokens,
}

#[derive(Debug, Clone)]
struct Scenario {
    name: String,
    rate: f64,
    burst: u64,
    ops: Vec<Op>,
}

/// SplitMix64: the same sequence on every platform.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A rate both x/time/rate versions treat alike: `rate.Inf`, or at least
/// 0.5/s (no zero rate), with the awkward doubles people write.
fn rate(rng: &mut Rng) -> f64 {
    match rng.below(10) {
        0 => f64::INFINITY,
        1 => rng.pick(&[0.5, 1.0 / 3.0 + 0.5, 3.0, 7.5, 10.0, 0.7, 1e9, 123.456]),
        2..=5 => (0.5f64.ln() + rng.unit() * (1e6f64.ln() - 0.5f64.ln())).exp(),
        _ => (1 + rng.below(1000)) as f64,
    }
}

fn burst(rng: &mut Rng) -> u64 {
    match rng.below(10) {
        0 => 0,
        1..=3 => 1 + rng.below(3),
        4..=7 => rng.below(100),
        _ => rng.below(1001),
    }
}

fn n(rng: &mut Rng, burst: u64) -> u64 {
    match rng.below(10) {
        0 => 0,
        1..=4 => 1,
        5..=7 => 1 + rng.below(burst.clamp(1, 100)),
        _ => rng.below(101),
    }
}

fn sleep(rng: &mut Rng) -> i64 {
    match rng.below(10) {
        0 => 0,
        1..=3 => rng.below(1_000) as i64,
        4..=7 => rng.below(2_000_000) as i64,
        _ => rng.below(100_000_000) as i64,
    }
}

fn generate(seed: u64, index: usize) -> Scenario {
    let mut rng = Rng(seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    let rate = rate(&mut rng);
    let mut current_burst = burst(&mut rng);
    let burst = current_burst;
    // Reservations not cancelled yet: Go's second `CancelAt` of the same
    // reservation gives its tokens back again, which ratekeeper refuses to
    // do (a documented difference), so each is cancelled at most once.
    let mut open: Vec<usize> = Vec::new();
    let mut reserves = 0;
    let count = 1 + rng.below(40) as usize;
    let mut ops = Vec::with_capacity(count);
    for _ in 0..count {
        let op = match rng.below(20) {
            0..=4 => Op::Sleep(sleep(&mut rng)),
            5..=7 => Op::Allow(n(&mut rng, current_burst)),
            8..=10 => {
                open.push(reserves);
                reserves += 1;
                Op::Reserve(n(&mut rng, current_burst))
            }
            11 | 12 if !open.is_empty() => Op::Cancel(open.swap_remove(rng.below(open.len() as u64) as usize)),
            11..=14 => {
                let deadline = match rng.below(4) {
                    0 => None,
                    1 => Some(0),
                    _ => Some(rng.below(3_000_000) as i64),
                };
                Op::Wait(n(&mut rng, current_burst), deadline)
            }
            15 => Op::SetRate(self::rate(&mut rng)),
            16 => {
                current_burst = self::burst(&mut rng);
                Op::SetBurst(current_burst)
            }
            _ => Op::Tokens,
        };
        ops.push(op);
    }
    ops.push(Op::Tokens);
    Scenario { name: format!("xtime-diff/{seed}/{index}"), rate, burst, ops }
}

fn bits(x: f64) -> String {
    format!("{:x}", x.to_bits())
}

/// The oracle's input for one scenario.
fn commands(s: &Scenario) -> String {
    let mut out = format!("case {}\nnew {} {}\n", s.name, bits(s.rate), s.burst);
    for op in &s.ops {
        out += &match *op {
            Op::Sleep(m) => format!("sleep {m}\n"),
            Op::Allow(n) => format!("allow {n}\n"),
            Op::Reserve(n) => format!("reserve {n}\n"),
            Op::Cancel(i) => format!("cancel {i}\n"),
            Op::Wait(n, Some(t)) => format!("wait {n} {t}\n"),
            Op::Wait(n, None) => format!("wait_forever {n}\n"),
            Op::SetRate(r) => format!("set_rate {}\n", bits(r)),
            Op::SetBurst(b) => format!("set_burst {b}\n"),
            Op::Tokens => "tokens\n".to_owned(),
        };
    }
    out + "end\n"
}

/// Builds the oracle (Go's x/time/rate plus our hook, overlaid into its
/// package) and runs every scenario through it; returns the reply lines of
/// each scenario (the `end` line dropped).
fn ask_go(scenarios: &[Scenario]) -> Result<Vec<Vec<String>>, String> {
    let gopath = std::env::var("XTIME_SRC").unwrap_or_else(|_| "/usr/share/gocode".into());
    let package = Path::new(&gopath).join("src/golang.org/x/time/rate");
    if !package.join("rate.go").is_file() {
        return Err(format!(
            "{} not found: install Debian's golang-go and golang-golang-x-time-dev (scripts/setup.sh does)",
            package.display()
        ));
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("go");
    let work = std::env::temp_dir().join(format!("ratekeeper-xtime-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let result = build_and_run(&gopath, &package, &here, &work, scenarios);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn build_and_run(
    gopath: &str,
    package: &Path,
    here: &Path,
    work: &Path,
    scenarios: &[Scenario],
) -> Result<Vec<Vec<String>>, String> {
    let overlay = json!({"Replace": {
        package.join("ratekeeper_hook.go").to_string_lossy(): here.join("ratekeeper_hook.go").to_string_lossy()
    }});
    let overlay_path = work.join("overlay.json");
    std::fs::write(&overlay_path, overlay.to_string()).map_err(|e| e.to_string())?;
    let binary = work.join("oracle");
    let go = std::env::var("GO").unwrap_or_else(|_| "go".into());
    let status = Command::new(&go)
        .arg("build")
        .arg("-overlay")
        .arg(&overlay_path)
        .arg("-o")
        .arg(&binary)
        .arg(here.join("oracle.go"))
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOFLAGS", "")
        .env("GOCACHE", work.join("cache"))
        .status()
        .map_err(|e| format!("{go}: {e}"))?;
    if !status.success() {
        return Err(format!("{go} build failed"));
    }
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let input: String = scenarios.iter().map(commands).collect();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // Write from another thread so that neither pipe can fill up and block.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut answers = Vec::with_capacity(scenarios.len());
    let mut current = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("reading the oracle: {e}"))?;
        if line == "end" {
            answers.push(std::mem::take(&mut current));
        } else {
            current.push(line);
        }
    }
    writer.join().map_err(|_| "writer thread panicked")?.map_err(|e| format!("writing to the oracle: {e}"))?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() || answers.len() != scenarios.len() {
        return Err(format!(
            "the oracle exited with {status} after {} of {} scenarios",
            answers.len(),
            scenarios.len()
        ));
    }
    Ok(answers)
}

/// A 64-bit integer as FORMAT.md writes it: a string beyond ±(2^53 − 1).
fn int(v: i64) -> Value {
    if v.unsigned_abs() > (1u64 << 53) - 1 {
        Value::String(v.to_string())
    } else {
        json!(v)
    }
}

fn double(x: f64) -> Value {
    if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

/// Go's delay in nanoseconds as the vectors carry it: whole microseconds,
/// rounded up (ratekeeper's reporting rule); `InfDuration` stays `i64::MAX`.
fn delay_micros(nanos: &str) -> Result<i64, String> {
    let nanos: i64 = nanos.parse().map_err(|_| format!("bad delay {nanos:?}"))?;
    Ok(if nanos == i64::MAX { i64::MAX } else { nanos.div_euclid(1_000) + i64::from(nanos.rem_euclid(1_000) != 0) })
}

/// Turns Go's replies into a `token_bucket` vector.
fn to_vector(s: &Scenario, answer: &[String]) -> Result<Value, String> {
    let mut replies = answer.iter();
    for expected in ["case", "new"] {
        match replies.next().map(String::as_str) {
            Some("ok") => {}
            other => return Err(format!("{expected}: {other:?}")),
        }
    }
    let mut steps = Vec::with_capacity(s.ops.len());
    for op in &s.ops {
        let reply = replies.next().ok_or("missing reply")?;
        let granted = |step: Value| -> Result<Value, String> {
            let mut step = step;
            match reply.strip_prefix("ok ") {
                Some(nanos) => {
                    step["ok"] = json!(true);
                    step["delay_micros"] = int(delay_micros(nanos)?);
                }
                None if reply == "no" => step["ok"] = json!(false),
                None => return Err(format!("reply {reply:?}")),
            }
            Ok(step)
        };
        steps.push(match *op {
            Op::Sleep(m) => json!({"op": "sleep", "micros": int(m)}),
            Op::Allow(n) => json!({"op": "allow", "n": n, "allowed": reply == "true"}),
            Op::Reserve(n) => granted(json!({"op": "reserve", "n": n}))?,
            Op::Cancel(i) => json!({"op": "cancel", "reservation": i}),
            Op::Wait(n, t) => granted(json!({"op": "wait", "n": n, "timeout_micros": int(t.unwrap_or(i64::MAX))}))?,
            Op::SetRate(r) => json!({"op": "set_rate", "rate": double(r)}),
            Op::SetBurst(b) => json!({"op": "set_burst", "burst": b}),
            Op::Tokens => {
                let tokens = f64::from_bits(u64::from_str_radix(reply, 16).map_err(|_| reply.clone())?);
                json!({"op": "tokens", "tokens": double(tokens)})
            }
        });
    }
    Ok(json!({
        "name": s.name,
        "limiter": {"algorithm": "token_bucket", "rate": double(s.rate), "burst": s.burst},
        "steps": steps,
    }))
}
