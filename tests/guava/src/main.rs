//! The Guava differential test.
//!
//! ```text
//! ratekeeper-guava-diff [--scenarios N] [--seed S] [--write FILE]
//! ```
//!
//! Generates N random scenarios (default 2,000; a fresh seed each run unless
//! one is given), runs them through the real Guava `RateLimiter` (Debian's
//! `libguava-java`, through the small Java oracle in `java/`), turns Guava's
//! answers into conformance vectors, and replays those against ratekeeper.
//! On the first difference it prints the case as a vector, ready to be added
//! to `tests/conformance/vectors/`, and exits 1.
//!
//! Environment: `GUAVA_JAR` (default `/usr/share/java/guava.jar`), `JAVA`
//! and `JAVAC` (default `java`, `javac` on the PATH).

mod scenario;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use scenario::{LimiterSpec, Op, Scenario};
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
            eprintln!("error: {e}\nusage: ratekeeper-guava-diff [--scenarios N] [--seed S] [--write FILE]");
            return ExitCode::from(2);
        }
    };
    println!("guava-diff: {} scenarios, seed {}", options.scenarios, options.seed);
    let scenarios: Vec<Scenario> = (0..options.scenarios).map(|i| scenario::generate(options.seed, i)).collect();
    let answers = match ask_guava(&scenarios) {
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
                eprintln!("error: {}: Guava's answer was not understood: {e}", scenario.name);
                return ExitCode::from(2);
            }
        }
    }
    let doc = json!({
        "format": ratekeeper_conformance::FORMAT,
        "source": format!("guava 31.1 (libguava-java), random scenarios, seed {}", options.seed),
        "cases": cases,
    });
    if let Some(path) = &options.write {
        if let Err(e) = write_vectors(path, &doc) {
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
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Compiles the oracle and runs every scenario through it; returns Guava's
/// reply lines per scenario (one per command, the `end` line dropped).
fn ask_guava(scenarios: &[Scenario]) -> Result<Vec<Vec<String>>, String> {
    let jar = std::env::var("GUAVA_JAR").unwrap_or_else(|_| "/usr/share/java/guava.jar".into());
    if !Path::new(&jar).is_file() {
        return Err(format!("{jar} not found: install Debian's libguava-java (scripts/setup does)"));
    }
    let classes = std::env::temp_dir().join(format!("ratekeeper-guava-oracle-{}", std::process::id()));
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("java/com/google/common/util/concurrent/RatekeeperOracle.java");
    let javac = std::env::var("JAVAC").unwrap_or_else(|_| "javac".into());
    let status = Command::new(&javac)
        .args(["-nowarn", "-cp", &jar, "-d"])
        .arg(&classes)
        .arg(&source)
        .status()
        .map_err(|e| format!("{javac}: {e}"))?;
    if !status.success() {
        return Err(format!("{javac} failed on {}", source.display()));
    }
    let result = run_oracle(&jar, &classes, scenarios);
    let _ = std::fs::remove_dir_all(&classes);
    result
}

fn run_oracle(jar: &str, classes: &Path, scenarios: &[Scenario]) -> Result<Vec<Vec<String>>, String> {
    let java = std::env::var("JAVA").unwrap_or_else(|_| "java".into());
    let classpath = format!("{jar}:{}", classes.display());
    let mut child = Command::new(&java)
        .args(["-cp", &classpath, "com.google.common.util.concurrent.RatekeeperOracle"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{java}: {e}"))?;
    let mut input = String::new();
    for s in scenarios {
        input.push_str(&commands(s));
    }
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

fn bits(x: f64) -> String {
    format!("{:x}", x.to_bits())
}

/// The oracle's input for one scenario. After a refused creation there is
/// nothing to drive, so no steps are sent.
fn commands(s: &Scenario) -> String {
    let mut out = format!("case {}\n", s.name);
    match s.limiter {
        LimiterSpec::Bursty { rate, max_burst_seconds } => {
            out += &format!("bursty {} {}\n", bits(rate), bits(max_burst_seconds));
        }
        LimiterSpec::WarmingUp { rate, warmup_micros, cold_factor } => {
            out += &format!("warming {} {} {}\n", bits(rate), warmup_micros, bits(cold_factor));
        }
    }
    if creation_is_valid(&s.limiter) {
        for op in &s.ops {
            out += &match *op {
                Op::Sleep(m) => format!("sleep {m}\n"),
                Op::Acquire(p) => format!("acquire {p}\n"),
                Op::TryAcquire(p, t) => format!("try {p} {t}\n"),
                Op::SetRate(r) => format!("set_rate {}\n", bits(r)),
                Op::GetRate => "get_rate\n".to_owned(),
            };
        }
    }
    out + "end\n"
}

/// Guava's rule, used only to decide whether to send steps; the expected
/// outcome of the creation itself is always Guava's.
fn creation_is_valid(spec: &LimiterSpec) -> bool {
    match *spec {
        LimiterSpec::Bursty { rate, .. } => rate > 0.0,
        LimiterSpec::WarmingUp { rate, warmup_micros, .. } => rate > 0.0 && warmup_micros >= 0,
    }
}

/// The argument a creation Guava refused is about, as ratekeeper names it
/// (FORMAT.md): Guava checks `warmupPeriod must not be negative` before
/// the rate.
fn creation_argument(spec: &LimiterSpec) -> &'static str {
    match *spec {
        LimiterSpec::WarmingUp { warmup_micros, .. } if warmup_micros < 0 => "warmup",
        _ => "permits_per_second",
    }
}

/// A 64-bit integer as FORMAT.md writes it: a string beyond ±(2^53 − 1).
fn int(v: i64) -> Value {
    if v.unsigned_abs() > (1u64 << 53) - 1 {
        Value::String(v.to_string())
    } else {
        json!(v)
    }
}

/// A double as FORMAT.md writes it: NaN and infinities as strings.
fn double(x: f64) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

fn to_vector(s: &Scenario, answer: &[String]) -> Result<Value, String> {
    let limiter = match s.limiter {
        LimiterSpec::Bursty { rate, max_burst_seconds } => json!({
            "algorithm": "smooth_bursty", "permits_per_second": double(rate), "max_burst_seconds": double(max_burst_seconds)
        }),
        LimiterSpec::WarmingUp { rate, warmup_micros, cold_factor } => json!({
            "algorithm": "smooth_warming_up", "permits_per_second": double(rate),
            "warmup_micros": int(warmup_micros), "cold_factor": double(cold_factor)
        }),
    };
    let mut replies = answer.iter().skip(1); // the `case` line's "ok"
    let created = replies.next().ok_or("no reply to the creation")?;
    match created.as_str() {
        "invalid_argument" => {
            let argument = creation_argument(&s.limiter);
            return Ok(
                json!({"name": s.name, "limiter": limiter, "create_error": "invalid_argument", "argument": argument}),
            );
        }
        "ok" => {}
        other => return Err(format!("creation: {other}")),
    }
    let mut steps = Vec::with_capacity(s.ops.len());
    for op in &s.ops {
        let reply = replies.next().ok_or("missing reply")?;
        if reply.starts_with("exception") {
            return Err(reply.clone());
        }
        let error = reply == "invalid_argument";
        let mut step = match *op {
            Op::Sleep(m) => json!({"op": "sleep", "micros": int(m)}),
            Op::Acquire(p) => json!({"op": "acquire", "permits": int(p)}),
            Op::TryAcquire(p, t) => json!({"op": "try_acquire", "permits": int(p), "timeout_micros": int(t)}),
            Op::SetRate(r) => json!({"op": "set_rate", "permits_per_second": double(r)}),
            Op::GetRate => json!({"op": "get_rate"}),
        };
        let fields = step.as_object_mut().ok_or("not an object")?;
        if error {
            fields.insert("error".into(), json!("invalid_argument"));
            // The argument Guava's exception is about, as ratekeeper names it.
            let argument = match *op {
                Op::SetRate(_) => "permits_per_second",
                _ => "permits",
            };
            fields.insert("argument".into(), json!(argument));
        } else {
            match *op {
                Op::Acquire(_) => {
                    fields.insert("wait_micros".into(), int(reply.parse().map_err(|_| reply.clone())?));
                }
                Op::TryAcquire(..) => {
                    fields.insert("acquired".into(), json!(reply == "true"));
                }
                Op::GetRate => {
                    let rate = f64::from_bits(u64::from_str_radix(reply, 16).map_err(|_| reply.clone())?);
                    fields.insert("permits_per_second".into(), double(rate));
                }
                Op::Sleep(_) | Op::SetRate(_) => {}
            }
        }
        steps.push(step);
    }
    Ok(json!({"name": s.name, "limiter": limiter, "steps": steps}))
}

/// One case per line, like the vectors in the repository.
fn write_vectors(path: &Path, doc: &Value) -> std::io::Result<()> {
    let mut out = String::new();
    out += &format!("{{\n  \"format\": {},\n  \"source\": {},\n  \"cases\": [\n", doc["format"], doc["source"]);
    let cases = doc["cases"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (i, case) in cases.iter().enumerate() {
        out += "    ";
        out += &serde_json::to_string(case).map_err(std::io::Error::other)?;
        out += if i + 1 < cases.len() { ",\n" } else { "\n" };
    }
    out += "  ]\n}\n";
    std::fs::write(path, out)
}
