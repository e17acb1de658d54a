//! `ratekeeper simulate` as a user runs it: the files it writes, and its
//! errors for malformed traces and arguments (a message naming the line and
//! column or the argument, a non-zero exit, never a panic).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ratekeeper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ratekeeper")).args(args).output().expect("run ratekeeper")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_no_panic(o: &Output) {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{e}");
    assert_ne!(o.status.code(), Some(101), "{e}");
}

#[test]
fn boundary_attack_writes_summary_decisions_and_plots() {
    let svg = scratch("boundary.svg");
    let png = scratch("boundary.png");
    let json = scratch("decisions.json");
    let summary = scratch("summary.json");
    for plot in [&svg, &png] {
        let o = ratekeeper(&[
            "simulate",
            "--pattern",
            "boundary:limit=100,window=1s",
            "--limiter",
            "fixed_window:limit=100,window=1s",
            "--limiter",
            "sliding_log:limit=100,window=1s",
            "--limiter",
            "guava:rate=100",
            "--decisions",
            json.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let table = String::from_utf8(o.stdout).unwrap();
        assert!(table.contains("max admitted in any 1 s"), "{table}");
        let fixed = table.lines().find(|l| l.starts_with("fixed_window")).unwrap();
        assert_eq!(fixed.split_whitespace().take(5).collect::<Vec<_>>(), ["fixed_window", "200", "200", "0", "200"]);
    }
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg") && svg_text.contains("fixed_window — at most 200 in any 1 s"));
    assert!(svg_text.contains("sliding_log — at most 100 in any 1 s"));
    let png_bytes = std::fs::read(&png).unwrap();
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png_bytes.len() > 20_000, "a picture with text and curves, not a blank: {} bytes", png_bytes.len());

    let decisions: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = decisions["decisions"].as_array().unwrap();
    assert_eq!(rows.len(), 600, "200 requests × 3 limiters");
    let admitted = |lane: &str| rows.iter().filter(|r| r["limiter"] == lane && r["allowed"] == true).count();
    assert_eq!((admitted("fixed_window"), admitted("sliding_log"), admitted("guava bursty acquire")), (200, 100, 200));
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(s["limiters"][1]["max_in_window"], 100);
    assert_eq!(s["window_micros"], 1_000_000);
}

#[test]
fn csv_traces_round_trip_and_decisions_go_to_stdout() {
    let trace = scratch("saved.csv");
    let o = ratekeeper(&[
        "simulate",
        "--pattern",
        "steady:rate=10,duration=1s",
        "--pattern",
        "bursts:size=3,every=1s,duration=1s,start=500ms,cost=2",
        "-l",
        "token_bucket:rate=5,burst=5",
        "--save-trace",
        trace.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "--quiet prints nothing");
    let o =
        ratekeeper(&["simulate", "--trace", trace.to_str().unwrap(), "-l", "token_bucket:rate=5,burst=5", "-d", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = String::from_utf8(o.stdout.clone()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "request,time_us,cost,limiter,allowed,wait_us,admitted_at_us,remaining,retry_after_us");
    assert_eq!(lines.len(), 14, "13 requests and the header");
    // At 500 ms the steady request (the first pattern's) comes first and
    // takes the last token; the burst of cost 2 finds one.
    assert!(lines.contains(&"5,500000,1,token_bucket,true,0,500000,1,"), "{csv}");
    assert!(lines.contains(&"6,500000,2,token_bucket,false,0,,1,100000"), "{csv}");
    // The summary went to stderr, out of the way of the decisions.
    assert!(stderr(&o).contains("13 requests"), "{}", stderr(&o));
}

#[test]
fn malformed_traces_name_line_and_column() {
    for (content, expected) in [
        ("time,cost\n0.1,1\n0.2,x\n", "line 3, column 5: cost `x` is not a whole number ≥ 1"),
        ("0.5\n0.4\n", "line 2, column 1: time 0.400000 s is before the previous request's"),
        ("time,cost\n1.0000001,1\n", "line 2, column 1: time `1.0000001`"),
        ("when,cost\n1,1\n", "line 1, column 1: the first line is neither a request"),
        ("time_us,cost\n5,1\n,1\n", "line 3, column 1: time_us `` is not a whole number"),
        ("0.1\n\u{0}\n", "line 2, column 1: time `\u{0}`"),
    ] {
        let path = scratch("bad.csv");
        std::fs::write(&path, content).unwrap();
        let o = ratekeeper(&["simulate", "--trace", path.to_str().unwrap(), "-l", "fixed_window:limit=1,window=1s"]);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{content:?}");
        let e = stderr(&o);
        assert!(e.starts_with("ratekeeper: error: "), "{e}");
        assert!(e.contains(&format!("bad.csv: {expected}")), "{content:?}: {e}");
    }
    let o = ratekeeper(&["simulate", "--trace", "/nonexistent/trace.csv", "-l", "fixed_window:limit=1,window=1s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot open /nonexistent/trace.csv"), "{}", stderr(&o));
}

#[test]
fn bad_arguments_are_usage_errors() {
    for (args, expected) in [
        (&["simulate", "--pattern", "steady:rate=1,duration=1s"][..], "--limiter"),
        (&["simulate", "-l", "fixed_window:limit=1,window=1s"][..], "<--trace <FILE>|--pattern <SPEC>>"),
        (&["simulate", "--pattern", "steady:rate=1", "-l", "fixed_window:limit=1,window=1s"][..], "needs `duration=`"),
        (
            &["simulate", "--pattern", "steady:rate=1,duration=1s", "-l", "fixed:limit=1"][..],
            "unknown algorithm `fixed`",
        ),
        (
            &["simulate", "--pattern", "steady:rate=1,duration=1s", "-l", "fixed_window:limit=x,window=1s"][..],
            "limit = `x`",
        ),
        (
            &["simulate", "--pattern", "steady:rate=1,duration=1s", "-l", "guava:rate=1", "--window", "0s"][..],
            "longer than 0",
        ),
    ] {
        let o = ratekeeper(args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn invalid_parameters_and_requests_are_errors() {
    for (args, expected) in [
        (&["simulate", "--pattern", "steady:rate=1,duration=1s", "-l", "fixed_window:limit=0,window=1s"][..], "limit"),
        (
            &[
                "simulate",
                "--pattern",
                "steady:rate=1,duration=1s",
                "-l",
                "sliding_window:limit=5,window=1s,sub_windows=3",
            ][..],
            "sub_windows",
        ),
        (
            &["simulate", "--pattern", "steady:rate=1,duration=1s,cost=3000000000", "-l", "guava:rate=1"][..],
            "request 1 (at 0.000000 s, cost 3000000000): guava bursty acquire: invalid argument permits",
        ),
        (
            &[
                "simulate",
                "--pattern",
                "steady:rate=1,duration=1s",
                "-l",
                "guava:rate=1",
                "--plot",
                "/nonexistent/dir/p.svg",
            ][..],
            "cannot write /nonexistent/dir/p.svg",
        ),
        (
            &["simulate", "--pattern", "steady:rate=1,duration=1s", "-l", "guava:rate=1", "-d", "/nonexistent/d.csv"][..],
            "cannot create /nonexistent/d.csv",
        ),
    ] {
        let o = ratekeeper(args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn progress_when_asked() {
    let o = ratekeeper(&[
        "simulate",
        "--pattern",
        "steady:rate=40000,duration=1s",
        "-l",
        "sliding_log:limit=1000,window=1s",
        "-l",
        "token_bucket:rate=1000,burst=1000",
        "-d",
        scratch("long.csv").to_str().unwrap(),
        "--progress",
        "always",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    // Asked for, the first report comes at once, and the last at the end.
    assert!(e.contains("simulating (requests): 16384 of 40000 (41%)\n"), "{e}");
    assert!(e.ends_with("simulating (requests): 40000 of 40000 (100%)\n"), "{e}");
    let quiet = ratekeeper(&["simulate", "--pattern", "steady:rate=10,duration=1s", "-l", "guava:rate=1", "-q"]);
    assert!(quiet.stderr.is_empty(), "no progress when stderr is not a terminal: {}", stderr(&quiet));
}

/// The load-driven lanes: a server is required; a recorded load replaces
/// the server's CPU reading (the system rule refuses only while the trace
/// reads above its threshold); a malformed load trace names its line.
#[test]
fn load_driven_lanes_need_a_server_and_read_a_load_trace() {
    let pattern = ["simulate", "--pattern", "steady:rate=100,duration=2s"];
    let o = ratekeeper(&[&pattern[..], &["-l", "bbr"]].concat());
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--limiter `bbr` needs a simulated server"), "{}", stderr(&o));

    let load = scratch("load.csv");
    std::fs::write(&load, "time,cpu_usage\n0,0.2\n1,0.95\n1.5,0.2\n").unwrap();
    let decisions = scratch("load-decisions.csv");
    let o = ratekeeper(
        &[
            &pattern[..],
            &["--server", "workers=8,service=10ms", "-l", "system_guard:highest_cpu_usage=0.9", "-l", "none"],
            &["--load", load.to_str().unwrap(), "-d", decisions.to_str().unwrap(), "--format", "json"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let guard = &summary["limiters"][0];
    // 1 s to 1.5 s at 100/s: 50 refused, all on cpu.
    assert_eq!((guard["admitted"].as_u64(), guard["refused"].as_u64()), (Some(150), Some(50)));
    assert_eq!(guard["refused_by"], serde_json::json!([["cpu", 50]]));
    assert_eq!(guard["p99_latency_micros"], 10_000);
    assert_eq!(summary["limiters"][1]["refused"], 0);
    let csv = std::fs::read_to_string(&decisions).unwrap();
    let refused: Vec<i64> =
        csv.lines().filter(|l| l.contains(",false,")).map(|l| l.split(',').nth(1).unwrap().parse().unwrap()).collect();
    assert!(refused.iter().all(|&t| (1_000_000..1_500_000).contains(&t)), "{refused:?}");

    std::fs::write(&load, "time,cpu_usage\n0,2\n").unwrap();
    let o = ratekeeper(
        &[&pattern[..], &["--server", "workers=1,service=1ms", "-l", "none", "--load", load.to_str().unwrap()]]
            .concat(),
    );
    assert_no_panic(&o);
    assert!(stderr(&o).contains("line 2, column 2: cpu_usage 2 is above 1"), "{}", stderr(&o));
    let o = ratekeeper(&[&pattern[..], &["--server", "workers=0,service=1ms", "-l", "none"]].concat());
    assert_no_panic(&o);
    assert!(stderr(&o).contains("workers must be at least 1"), "{}", stderr(&o));
}

/// The cycle and flow lanes from the command line: listed in the help, run
/// with their summary lines and plot, their bad parameters usage errors
/// naming the parameter, an invalid rule the core's error, a request above
/// Sentinel's acquire count an error naming it, and a thread-grade flow
/// lane a load-driven one that needs `--server`.
#[test]
fn cycle_and_flow_lanes() {
    let help = ratekeeper(&["simulate", "--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("  cycle ") && help.contains("limit_for_period, limit_refresh_period"), "{help}");
    assert!(help.contains("  flow ") && help.contains("max_queueing_time_ms (default 500)"), "{help}");

    let svg = scratch("cycle-flow.svg");
    let o = ratekeeper(&[
        "simulate",
        "--pattern",
        "boundary:limit=100,window=1s",
        "-l",
        "cycle:limit_for_period=100,limit_refresh_period=1s,timeout_duration=0",
        "-l",
        "flow:count=100",
        "-l",
        "flow:count=100,control_behavior=rate_limiter",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    let row = |label: &str| {
        let line = table.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("{label}: {table}"));
        line[label.len()..].split_whitespace().take(4).map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(row("cycle "), ["200", "200", "0", "200"]);
    assert_eq!(row("flow qps "), ["200", "100", "100", "100"]);
    assert_eq!(row("flow qps rate_limiter")[..2], ["200", "52"]);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("cycle — at most 200 in any 1 s"), "the cycle's lane in the plot");
    assert!(svg_text.contains("flow qps — at most 100 in any 1 s"), "the flow rule's lane in the plot");

    let pattern = ["simulate", "--pattern", "steady:rate=10,duration=1s"];
    for (limiter, code, expected) in [
        ("cycle:limit_for_period=1", 2, "cycle needs `limit_refresh_period=`"),
        ("flow:count=1,grade=rt", 2, "grade = `rt` is not qps or thread"),
        ("flow:count=1,cold_factor=2", 2, "cold_factor is for control_behavior=warm_up"),
        ("cycle:limit_for_period=0,limit_refresh_period=1s", 1, "limit_for_period"),
        ("flow:count=10,sample_count=3", 1, "interval_ms"),
        ("flow:count=8,grade=thread", 1, "--limiter `flow:count=8,grade=thread` needs a simulated server"),
    ] {
        let o = ratekeeper(&[&pattern[..], &["-l", limiter]].concat());
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(code), "{limiter}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{limiter}: {}", stderr(&o));
    }
    let o = ratekeeper(&["simulate", "--pattern", "steady:rate=1,duration=1s,cost=3000000000", "-l", "flow:count=1"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("flow qps: invalid argument acquire_count"), "{}", stderr(&o));
    let o =
        ratekeeper(&[&pattern[..], &["-l", "flow:count=2,grade=thread", "--server", "workers=1,service=1s"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(table.contains("peak in flight"), "{table}");
}
