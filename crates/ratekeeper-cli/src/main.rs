//! `ratekeeper`: the command-line tool. See `ratekeeper simulate --help`.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use ratekeeper_cli::decisions::{self, CsvSink, JsonSink};
use ratekeeper_cli::limiters::{LimiterConfig, ALGORITHMS};
use ratekeeper_cli::patterns::{self, Pattern, PATTERNS};
use ratekeeper_cli::plot::{self, PlotData};
use ratekeeper_cli::progress::{self, Progress};
use ratekeeper_cli::server::{LoadTrace, ServerConfig};
use ratekeeper_cli::simulation::{self, DecisionSink, Environment, LaneResult, NoSink, SimulationError};
use ratekeeper_cli::summary::Summary;
use ratekeeper_cli::trace::{self, Arrival};

#[derive(Debug, Parser)]
#[command(
    name = "ratekeeper",
    version,
    about = "ratekeeper's command-line tool: see what the rate-limiting algorithms do."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay traffic through limiters on a manual clock; summarise, write
    /// every decision, plot.
    #[command(after_long_help = after_help())]
    Simulate(Box<Simulate>),
}

fn after_help() -> String {
    let mut s = String::from(
        "Limiters (--limiter NAME:key=value,...; join with + for a composite; label=... names the lane):\n",
    );
    for (name, params) in ALGORITHMS.iter() {
        s.push_str(&format!("  {name:<24} {params}\n"));
    }
    s.push_str("\nPatterns (--pattern NAME:key=value,...; all take start= and cost=; several are merged):\n");
    for (name, params) in PATTERNS {
        s.push_str(&format!("  {name:<24} {params}\n"));
    }
    s.push_str(
        "\nServer (--server workers=N,service=DURATION; for bbr, system_guard, none and flow:grade=thread):\n\
         a request admitted while k are in flight takes service × max(1, k/N); the CPU reading is min(1, in flight/N).\n\
         Load trace (--load FILE.csv): time (seconds),cpu_usage[,load_average], a step function replacing the server's readings.\n\
         \nDurations: 1s, 1.5s, 250ms, 100us, 2m, 1h (a bare number is seconds).\n\
         Trace CSV: a header naming `time` (seconds) or `time_us`, and optionally `cost`; or no header and time,cost.\n\n\
         Example, the boundary attack:\n  ratekeeper simulate --pattern boundary:limit=100,window=1s \\\n    \
         --limiter fixed_window:limit=100,window=1s --limiter sliding_log:limit=100,window=1s \\\n    \
         --limiter token_bucket:rate=100,burst=100 --limiter guava:rate=100 --plot boundary.svg\n",
    );
    s
}

/// How the summary is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SummaryFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("input").required(true).multiple(false))]
struct Simulate {
    /// A CSV trace of arrivals (`-` for standard input).
    #[arg(long, value_name = "FILE", group = "input")]
    trace: Option<PathBuf>,

    /// Generated traffic, such as `poisson:rate=100,duration=10s,seed=1`
    /// (repeatable: the patterns are merged).
    #[arg(long, value_name = "SPEC", value_parser = parse_pattern, group = "input")]
    pattern: Vec<Pattern>,

    /// A limiter, such as `fixed_window:limit=100,window=1s` (repeatable:
    /// one lane each).
    #[arg(short, long = "limiter", value_name = "SPEC", required = true, value_parser = parse_limiter)]
    limiters: Vec<LimiterConfig>,

    /// The simulated server the load-driven lanes (bbr, system_guard,
    /// none, flow of the thread grade) send their requests to, each its own: `workers=8,service=10ms`.
    #[arg(long, value_name = "SPEC", value_parser = parse_server)]
    server: Option<ServerConfig>,

    /// A recorded load (`time,cpu_usage[,load_average]` CSV, time in
    /// seconds) replacing the server's CPU and load readings.
    #[arg(long = "load", value_name = "FILE.csv")]
    load_trace: Option<PathBuf>,

    /// The window of "max admitted in any window" and of the plot's curves
    /// [default: the first window limiter's window, else the boundary
    /// pattern's, else 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    window: Option<i64>,

    /// Write every decision here (`.json` or CSV; `-`: standard output, the
    /// summary then going to standard error).
    #[arg(short, long, value_name = "FILE")]
    decisions: Option<PathBuf>,

    /// The format of --decisions [default: by its extension, else csv].
    #[arg(long, value_name = "FORMAT")]
    decisions_format: Option<decisions::Format>,

    /// Draw the simulation here: SVG, or PNG if the name ends in `.png`.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,

    /// Also write the summary here (`.json`, `.md`, else text).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,

    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    format: SummaryFormat,

    /// Write the arrivals (generated or read) as a CSV trace here.
    #[arg(long, value_name = "FILE")]
    save_trace: Option<PathBuf>,

    /// Progress on standard error for long traces.
    #[arg(long, value_enum, default_value_t = progress::When::Auto)]
    progress: progress::When,

    /// Print no summary (files are still written).
    #[arg(short, long)]
    quiet: bool,
}

fn parse_pattern(s: &str) -> Result<Pattern, String> {
    Pattern::parse(s).map_err(|e| e.message)
}

fn parse_limiter(s: &str) -> Result<LimiterConfig, String> {
    LimiterConfig::parse(s).map_err(|e| e.message)
}

fn parse_server(s: &str) -> Result<ServerConfig, String> {
    ServerConfig::parse(s).map_err(|e| e.message)
}

fn parse_duration(s: &str) -> Result<i64, String> {
    let d = ratekeeper_cli::durations::parse_duration_micros(s)?;
    if d > 0 {
        Ok(d)
    } else {
        Err("must be longer than 0".into())
    }
}

/// A failure the user can act on: printed as `ratekeeper: error: …`.
struct Failure(String);

impl From<SimulationError> for Failure {
    fn from(e: SimulationError) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate(*args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            let _ = writeln!(io::stderr(), "ratekeeper: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn create(path: &Path) -> Result<BufWriter<Box<dyn Write>>, Failure> {
    let out: Box<dyn Write> = if path.as_os_str() == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(File::create(path).map_err(|e| Failure(format!("cannot create {}: {e}", path.display())))?)
    };
    Ok(BufWriter::with_capacity(1 << 16, out))
}

fn load(args: &Simulate, progress: &mut Progress) -> Result<(String, Vec<Arrival>), Failure> {
    match &args.trace {
        Some(path) => {
            progress.start();
            let (input, total): (Box<dyn io::BufRead>, u64) = if path.as_os_str() == "-" {
                (Box::new(io::stdin().lock()), 0)
            } else {
                let file = File::open(path).map_err(|e| Failure(format!("cannot open {}: {e}", path.display())))?;
                let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                (Box::new(BufReader::with_capacity(1 << 16, file)), len)
            };
            let arrivals = trace::read_csv(input, |bytes| progress.update("reading the trace (bytes)", bytes, total))
                .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
            progress.finish();
            Ok((path.display().to_string(), arrivals))
        }
        None => {
            let title = args.pattern.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join(" + ");
            Ok((title, patterns::merge(args.pattern.iter().map(Pattern::generate).collect())))
        }
    }
}

fn environment(args: &Simulate) -> Result<Environment, Failure> {
    let load = match &args.load_trace {
        None => None,
        Some(path) => {
            let file = File::open(path).map_err(|e| Failure(format!("cannot open {}: {e}", path.display())))?;
            Some(LoadTrace::read_csv(BufReader::new(file)).map_err(|e| Failure(format!("{}: {e}", path.display())))?)
        }
    };
    Ok(Environment { server: args.server, load })
}

fn run_with_sink(args: &Simulate, arrivals: &[Arrival], progress: &mut Progress) -> Result<Vec<LaneResult>, Failure> {
    let environment = environment(args)?;
    let env = &environment;
    let total = arrivals.len() as u64;
    progress.start();
    let mut report = |done: usize| progress.update("simulating (requests)", done as u64, total);
    let results = match &args.decisions {
        None => simulation::run_with(arrivals, &args.limiters, env, &mut NoSink, &mut report)?,
        Some(path) => {
            let out = create(path)?;
            let format = args.decisions_format.unwrap_or_else(|| decisions::Format::from_path(path));
            let werr = |e: io::Error| Failure(format!("writing {}: {e}", path.display()));
            match format {
                decisions::Format::Csv => {
                    let mut sink = CsvSink::new(out).map_err(werr)?;
                    let r = simulation::run_with(
                        arrivals,
                        &args.limiters,
                        env,
                        &mut sink as &mut dyn DecisionSink,
                        &mut report,
                    )?;
                    sink.finish().map_err(werr)?;
                    r
                }
                decisions::Format::Json => {
                    let labels: Vec<&str> = args.limiters.iter().map(|l| l.label.as_str()).collect();
                    let mut sink = JsonSink::new(out, &labels).map_err(werr)?;
                    let r = simulation::run_with(
                        arrivals,
                        &args.limiters,
                        env,
                        &mut sink as &mut dyn DecisionSink,
                        &mut report,
                    )?;
                    sink.finish().map_err(werr)?;
                    r
                }
            }
        }
    };
    progress.finish();
    Ok(results)
}

fn simulate(args: Simulate) -> Result<(), Failure> {
    let mut progress = Progress::new(args.progress);
    let (title, arrivals) = load(&args, &mut progress)?;
    if let Some(path) = &args.save_trace {
        let mut out = create(path)?;
        trace::write_csv(&arrivals, &mut out)
            .and_then(|()| out.flush())
            .map_err(|e| Failure(format!("writing {}: {e}", path.display())))?;
    }
    let window = args
        .window
        .or_else(|| args.limiters.iter().find_map(LimiterConfig::window_micros))
        .or_else(|| args.pattern.iter().find_map(Pattern::window_micros))
        .unwrap_or(1_000_000);
    let results = run_with_sink(&args, &arrivals, &mut progress)?;
    let summary = Summary::new(title.clone(), &arrivals, &results, window);
    let text = match args.format {
        SummaryFormat::Text => summary.to_text(),
        SummaryFormat::Markdown => summary.to_markdown(),
        SummaryFormat::Json => summary.to_json(),
    };
    if !args.quiet {
        let decisions_on_stdout = args.decisions.as_ref().is_some_and(|p| p.as_os_str() == "-");
        let written = if decisions_on_stdout {
            io::stderr().lock().write_all(text.as_bytes())
        } else {
            io::stdout().lock().write_all(text.as_bytes())
        };
        match written {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(Failure(format!("writing the summary: {e}")))
            }
            _ => {}
        }
    }
    if let Some(path) = &args.summary {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        let body = match ext.as_str() {
            "json" => summary.to_json(),
            "md" | "markdown" => summary.to_markdown(),
            _ => summary.to_text(),
        };
        std::fs::write(path, body).map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.plot {
        let data = PlotData::new(title, &arrivals, &results, window);
        plot::write(&data, path).map_err(Failure)?;
        if !args.quiet {
            let _ = writeln!(io::stderr(), "plot: {}", path.display());
        }
    }
    Ok(())
}
