//! The numbers behind what `ratekeeper simulate` prints and draws: the
//! boundary attack's double burst and cap, a seeded Poisson trace's stable
//! summary, and every generated pattern through every algorithm.

use ratekeeper_cli::limiters::LimiterConfig;
use ratekeeper_cli::patterns::{self, Pattern};
use ratekeeper_cli::plot::PlotData;
use ratekeeper_cli::simulation::{self, LaneResult, NoSink};
use ratekeeper_cli::summary::{max_in_window, Summary};
use ratekeeper_cli::trace::Arrival;

fn arrivals(patterns: &[&str]) -> Vec<Arrival> {
    patterns::merge(patterns.iter().map(|p| Pattern::parse(p).unwrap().generate()).collect())
}

fn simulate(arrivals: &[Arrival], limiters: &[&str]) -> Vec<LaneResult> {
    let configs: Vec<LimiterConfig> = limiters.iter().map(|l| LimiterConfig::parse(l).unwrap()).collect();
    simulation::run(arrivals, &configs, &mut NoSink, |_| {}).unwrap()
}

const ALL: &[&str] = &[
    "fixed_window:limit=100,window=1s",
    "sliding_window:limit=100,window=1s",
    "sliding_log:limit=100,window=1s",
    "sliding_window_counter:limit=100,window=1s",
    "token_bucket:rate=100,burst=100",
    "gcra:max_burst=99,count_per_period=100,period=1s",
    "leaky_bucket_meter:capacity=100,count_per_period=100,period=1s",
    "leaky_bucket_queue:capacity=100,interval=10ms",
    "guava:rate=100",
    "guava:rate=100,timeout=0",
    "guava:rate=100,warmup=2s",
    "cycle:limit_for_period=100,limit_refresh_period=1s",
    "cycle:limit_for_period=100,limit_refresh_period=1s,timeout_duration=0,label=cycle_no_wait",
    "flow:count=100",
    "flow:count=100,sample_count=1,label=flow_one_bucket",
    "flow:count=100,control_behavior=rate_limiter",
    "flow:count=100,control_behavior=warm_up",
    "flow:count=100,control_behavior=warm_up_rate_limiter",
];

#[test]
fn boundary_attack_fixed_window_doubles_sliding_windows_cap() {
    let a = arrivals(&["boundary:limit=100,window=1s"]);
    assert_eq!(a.len(), 200);
    let results = simulate(&a, ALL);
    let summary = Summary::new("boundary".into(), &a, &results, 1_000_000);
    let plot = PlotData::new("boundary".into(), &a, &results, 1_000_000);
    let by = |label: &str| {
        let s = summary.limiters.iter().find(|l| l.limiter == label).unwrap();
        // The plot's lane for the limiter: its curve's peak is the summary's number.
        let lane = plot.lanes.iter().find(|l| l.label == label).unwrap();
        assert_eq!(lane.in_window.iter().max().copied(), Some(s.max_in_window), "{label}");
        assert_eq!(lane.max_in_window, s.max_in_window, "{label}");
        assert_eq!(lane.admitted.iter().map(|&n| u64::from(n)).sum::<u64>(), s.admitted, "{label}");
        assert_eq!(lane.refused.iter().map(|&n| u64::from(n)).sum::<u64>(), s.refused, "{label}");
        s.clone()
    };
    // The offered lane: 200 arrivals within 20 ms.
    assert_eq!(plot.lanes[0].label, "offered");
    assert_eq!(plot.lanes[0].max_in_window, 200);

    // The fixed window admits its limit on each side of the edge: twice
    // its limit within one window-length.
    let fixed = by("fixed_window");
    assert_eq!((fixed.admitted, fixed.refused, fixed.max_in_window), (200, 0, 200));
    assert_eq!(fixed.nominal_in_window, Some(100.0));
    // The sliding windows never let more than the limit through.
    for label in ["sliding_log", "sliding_window", "sliding_window_counter"] {
        let s = by(label);
        assert!(s.max_in_window <= 100, "{label}: {}", s.max_in_window);
        assert_eq!(s.admitted, 100, "{label}");
    }
    // The buckets: the burst, and what refills during the 20 ms attack.
    for label in ["token_bucket", "gcra", "leaky_bucket_meter", "guava bursty tryAcquire"] {
        let s = by(label);
        assert!((100..=102).contains(&s.admitted), "{label}: {}", s.admitted);
        assert!(s.max_in_window <= 102, "{label}");
        assert_eq!(s.mean_wait_micros, None, "{label} polices: no waits");
    }
    // The queue shapes: at most one per 10 ms goes ahead, everyone else waits or is refused.
    let queue = by("leaky_bucket_queue");
    assert!(queue.max_in_window <= 100, "{}", queue.max_in_window);
    assert!(queue.p99_wait_micros.unwrap() >= 900_000);
    // Guava's acquire admits everyone, with waits: its 1 s burst and then its rate.
    let guava = by("guava bursty acquire");
    assert_eq!((guava.admitted, guava.refused), (200, 0));
    assert!(guava.max_in_window <= 200 && guava.max_in_window > 100);
    assert!(guava.mean_wait_micros.unwrap() > 0.0);
    // Cold, the warming-up limiter starts three times slower.
    let warm = by("guava warming up acquire");
    assert!(warm.p99_wait_micros.unwrap() > guava.p99_wait_micros.unwrap());
}

/// The boundary attack through Resilience4j's cycles and Sentinel's flow
/// controllers. Cycles are aligned to the limiter's creation, so an attack
/// on a cycle's edge gets two cycles' permits within 20 ms, as from the
/// fixed window; Sentinel's two half-second buckets cap it at the count,
/// one bucket does not; the rate limiter spaces what it admits.
#[test]
fn boundary_attack_through_cycles_and_flow_rules() {
    let a = arrivals(&["boundary:limit=100,window=1s"]);
    let limiters = [
        "cycle:limit_for_period=100,limit_refresh_period=1s",
        "cycle:limit_for_period=100,limit_refresh_period=1s,timeout_duration=0,label=cycle_no_wait",
        "flow:count=100",
        "flow:count=100,sample_count=1,label=flow_one_bucket",
        "flow:count=100,control_behavior=rate_limiter",
        "flow:count=100,control_behavior=warm_up",
    ];
    let results = simulate(&a, &limiters);
    let summary = Summary::new("boundary".into(), &a, &results, 1_000_000);
    let by = |label: &str| summary.limiters.iter().find(|l| l.limiter == label).unwrap().clone();

    // The edge at 1 s is a cycle's edge: each side is a cycle's 100, with
    // or without a timeout, and nobody waits.
    for label in ["cycle", "cycle_no_wait"] {
        let s = by(label);
        assert_eq!((s.admitted, s.refused, s.max_in_window), (200, 0, 200), "{label}");
        assert_eq!(s.nominal_in_window, Some(100.0));
    }
    assert_eq!(by("cycle").p99_wait_micros, Some(0));
    assert_eq!(by("cycle_no_wait").p99_wait_micros, None, "timeout 0: it never waits");
    // Sentinel's sliding statistics (two buckets of 500 ms) hold the count;
    // a single bucket is a fixed window.
    let flow = by("flow qps");
    assert_eq!((flow.admitted, flow.max_in_window), (100, 100));
    let one = by("flow_one_bucket");
    assert_eq!((one.admitted, one.max_in_window), (200, 200));
    // The rate limiter: one per 10 ms, queueing at most 500 ms.
    let queued = by("flow qps rate_limiter");
    assert!(queued.p99_wait_micros.unwrap() <= 500_000, "{:?}", queued.p99_wait_micros);
    assert!((50..=52).contains(&queued.admitted), "{}", queued.admitted);
    let admissions = &results.iter().find(|r| r.config.label == "flow qps rate_limiter").unwrap().admissions;
    // Sentinel reads the time in whole milliseconds, so turns are 10 ms
    // apart to within the 1 ms the arrival was past its millisecond.
    assert_eq!(max_in_window(admissions, 9_000), 1, "a turn per 10 ms");
    assert_eq!(max_in_window(admissions, 11_000), 2);
    // Cold, the warm-up controller admits about count / cold_factor.
    let warm = by("flow qps warm_up");
    assert!((30..=36).contains(&warm.admitted), "{}", warm.admitted);
}

/// Prioritized requests on the boundary attack: those the default
/// controller refuses after the edge occupy the next bucket (which begins
/// at 1.5 s, within Sentinel's 500 ms occupy timeout) and go ahead then.
/// Sentinel counts them in that bucket, so its own two-bucket view never
/// holds more than the count, but a trailing second does.
#[test]
fn boundary_attack_prioritized_flow_occupies_the_next_bucket() {
    let a = arrivals(&["boundary:limit=100,window=1s"]);
    let results = simulate(&a, &["flow:count=100", "flow:count=100,prioritized=true"]);
    let summary = Summary::new("boundary".into(), &a, &results, 1_000_000);
    let (plain, prioritized) = (&summary.limiters[0], &summary.limiters[1]);
    assert_eq!((plain.admitted, plain.mean_wait_micros), (100, None));
    assert!(prioritized.admitted > 150, "{}", prioritized.admitted);
    assert_eq!(prioritized.max_in_window, prioritized.admitted, "all within one trailing second");
    assert!(prioritized.p99_wait_micros.unwrap() <= 500_000, "{:?}", prioritized.p99_wait_micros);
    // Whole milliseconds: each goes ahead in the bucket's first millisecond.
    let occupied: Vec<i64> = results[1].admissions.iter().map(|&(t, _)| t).filter(|&t| t > 1_010_000).collect();
    assert_eq!(occupied.len() as u64, prioritized.admitted - 100);
    assert!(occupied.iter().all(|t| (1_500_000..1_501_000).contains(t)), "{occupied:?}");
}

/// The same attack off the cycle's edge (both halves within cycle 1): the
/// cycle limiter with a timeout reserves the next cycle's permits, and its
/// callers wait for it; without a timeout the excess is refused.
#[test]
fn boundary_attack_inside_a_cycle_waits_for_the_next() {
    let a = arrivals(&["boundary:limit=100,window=1s,edge=1500ms"]);
    let results = simulate(
        &a,
        &[
            "cycle:limit_for_period=100,limit_refresh_period=1s",
            "cycle:limit_for_period=100,limit_refresh_period=1s,timeout_duration=0,label=cycle_no_wait",
        ],
    );
    let summary = Summary::new("boundary".into(), &a, &results, 1_000_000);
    let (waiting, refusing) = (&summary.limiters[0], &summary.limiters[1]);
    assert_eq!((waiting.admitted, waiting.refused), (200, 0));
    // The second hundred go ahead at 2 s, the next cycle's start.
    assert!(results[0].admissions[100..].iter().all(|&(t, _)| t == 2_000_000), "{:?}", &results[0].admissions[100..]);
    assert!((490_000..=510_000).contains(&waiting.p99_wait_micros.unwrap()), "{:?}", waiting.p99_wait_micros);
    assert_eq!((refusing.admitted, refusing.refused, refusing.max_in_window), (100, 100, 100));
}

/// A flow rule of the thread grade runs against the simulated server and
/// never has more than its count in flight: on the overload of
/// [`OVERLOAD`] with 8 workers it keeps latency at the service time, as
/// the system rule's `max_thread` does.
#[test]
fn flow_thread_grade_holds_its_count_in_flight() {
    use ratekeeper_cli::server::ServerConfig;
    use ratekeeper_cli::simulation::Environment;
    let a = arrivals(OVERLOAD);
    let configs: Vec<LimiterConfig> = ["flow:count=8,grade=thread", "system_guard:max_thread=8", "none"]
        .iter()
        .map(|l| LimiterConfig::parse(l).unwrap())
        .collect();
    let environment = Environment { server: Some(ServerConfig::parse("workers=8,service=10ms").unwrap()), load: None };
    let results = simulation::run_with(&a, &configs, &environment, &mut NoSink, |_| {}).unwrap();
    let summary = Summary::new("overload".into(), &a, &results, 1_000_000);
    let (flow, system, none) = (&summary.limiters[0], &summary.limiters[1], &summary.limiters[2]);
    assert_eq!(flow.peak_in_flight, Some(8));
    assert_eq!(flow.max_latency_micros, Some(10_000));
    // All of the 400 per second, and the 800 per second the 8 workers
    // serve while overloaded: 2000 + 4000 + 2000.
    assert_eq!((flow.admitted, flow.refused), (8_000, 3_500));
    assert!(flow.admitted >= system.admitted);
    assert!(none.peak_in_flight.unwrap() > 3_000);
    // Without a server the lane cannot run.
    let err = simulation::run(&a[..1], &configs[..1], &mut NoSink, |_| {}).unwrap_err();
    assert!(err.to_string().contains("needs a simulated server"), "{err}");
}

#[test]
fn poisson_with_a_seed_gives_a_stable_summary() {
    let run = || {
        let a = arrivals(&["poisson:rate=150,duration=20s,seed=42"]);
        let results = simulate(&a, ALL);
        Summary::new("poisson".into(), &a, &results, 1_000_000)
    };
    let first = run();
    assert_eq!(first, run(), "the same seed, the same summary");
    // Pinned: SplitMix64 and the algorithms are fixed, so these are too. A
    // change here means seeded traces (or an algorithm) changed.
    let row = |label: &str| {
        let s = first.limiters.iter().find(|l| l.limiter == label).unwrap();
        (s.admitted, s.refused, s.max_in_window)
    };
    assert_eq!(first.requests, POISSON_REQUESTS);
    assert_eq!(row("fixed_window"), POISSON_FIXED_WINDOW);
    assert_eq!(row("sliding_log"), POISSON_SLIDING_LOG);
    assert_eq!(row("token_bucket"), POISSON_TOKEN_BUCKET);
    // And the invariants behind them.
    for s in &first.limiters {
        assert_eq!(s.admitted + s.refused, first.requests, "{}", s.limiter);
    }
    let other = {
        let a = arrivals(&["poisson:rate=150,duration=20s,seed=43"]);
        Summary::new("poisson".into(), &a, &simulate(&a, ALL), 1_000_000)
    };
    assert_ne!(first.requests, other.requests);
}

// (admitted, refused, max admitted in any 1 s) of
// `poisson:rate=150,duration=20s,seed=42`.
const POISSON_REQUESTS: u64 = 3033;
const POISSON_FIXED_WINDOW: (u64, u64, u64) = (2000, 1033, 121);
const POISSON_SLIDING_LOG: (u64, u64, u64) = (1972, 1061, 100);
const POISSON_TOKEN_BUCKET: (u64, u64, u64) = (2099, 934, 162);

#[test]
fn every_pattern_through_every_algorithm() {
    for pattern in [
        "steady:rate=300,duration=3s",
        "poisson:rate=300,duration=3s,seed=1",
        "bursts:size=150,every=700ms,duration=3s,spread=5ms",
        "boundary:limit=100,window=1s,edge=2s,spread=50ms",
        "ramp:from=10,to=400,duration=3s",
        "steady:rate=50,duration=3s,cost=3",
    ] {
        let a = arrivals(&[pattern]);
        let results = simulate(&a, ALL);
        let summary = Summary::new(pattern.into(), &a, &results, 1_000_000);
        for s in &summary.limiters {
            assert_eq!(s.admitted + s.refused, a.len() as u64, "{pattern} {}", s.limiter);
            // Each algorithm's documented worst case in a window: the
            // sliding log and the queue hold the limit; the fixed window and
            // the two approximate sliding windows up to twice it; the
            // buckets their burst plus a window's refill.
            // (A request of cost c is counted whole when it goes ahead,
            // though a queue's slot for it lasts c intervals: c − 1 more.)
            // The flow rate limiters space requests a cost apart, 10 ms
            // per unit at 100 per second (less often while warming up).
            let bound = match s.limiter.as_str() {
                "sliding_log" => 100,
                "flow qps rate_limiter" | "flow qps warm_up_rate_limiter" => 100 + a[0].cost,
                "leaky_bucket_queue" => 100 + a[0].cost - 1,
                _ => 200,
            };
            assert!(s.max_in_window <= bound, "{pattern} {}: {}", s.limiter, s.max_in_window);
        }
        // The sub-window counters hold the limit over (sub_windows − 1) of
        // their sub-windows: 900 ms for 10.
        let sliding = results.iter().find(|r| r.config.label == "sliding_window").unwrap();
        assert!(max_in_window(&sliding.admissions, 900_000) <= 100, "{pattern}");
        let plot = PlotData::new(pattern.into(), &a, &results, 1_000_000);
        assert_eq!(plot.lanes.len(), ALL.len() + 1);
    }
}

/// The end-to-end run of docs/simulate.md ("Overload: BBR and the system
/// rule"): 400/s, then 1500/s for 5 s, then 400/s again, into a server of 8
/// workers × 10 ms (800/s). Without a limiter the requests pile up and
/// latency grows for as long as the overload lasts; BBR keeps it near the
/// service time and sheds only while overloaded (and within its cool-down
/// after).
#[test]
fn overload_bbr_keeps_latency_bounded_and_sheds_only_while_overloaded() {
    overload_run("bbr");
}

/// The same checks fail without a limiter in BBR's place: the test can
/// tell an unprotected server from a protected one.
#[test]
#[should_panic(expected = "bbr max latency")]
fn overload_checks_fail_without_bbr() {
    overload_run("none");
}

const OVERLOAD: &[&str] =
    &["steady:rate=400,duration=5s", "steady:rate=1500,start=5s,duration=5s", "steady:rate=400,start=10s,duration=5s"];

/// Runs [`OVERLOAD`] through `none`, `limiter` (the lane under test) and
/// the system rule, and checks what the docs' picture claims.
fn overload_run(limiter: &str) {
    use ratekeeper_cli::server::ServerConfig;
    use ratekeeper_cli::simulation::Environment;
    let a = arrivals(OVERLOAD);
    let configs: Vec<LimiterConfig> = ["none", limiter, "system_guard:highest_cpu_usage=0.9"]
        .iter()
        .map(|l| LimiterConfig::parse(l).unwrap())
        .collect();
    let environment = Environment { server: Some(ServerConfig::parse("workers=8,service=10ms").unwrap()), load: None };
    let results = simulation::run_with(&a, &configs, &environment, &mut NoSink, |_| {}).unwrap();
    let summary = Summary::new("overload".into(), &a, &results, 1_000_000);
    let (none, bbr, system) = (&summary.limiters[0], &summary.limiters[1], &summary.limiters[2]);
    const SECOND: i64 = 1_000_000;
    let p99_between = |r: &LaneResult, from: i64, to: i64| {
        let l: Vec<i64> = r.latencies.iter().filter(|(t, _)| (from..to).contains(t)).map(|&(_, l)| l).collect();
        ratekeeper_cli::summary::percentile(&l, 99.0).unwrap()
    };

    // No limiter: everything admitted, and latency grows past a second
    // during the overload (4.3 s at p99 over the whole run).
    assert_eq!((none.admitted, none.refused), (a.len() as u64, 0));
    assert!(p99_between(&results[0], 5 * SECOND, 10 * SECOND) > SECOND);
    assert!(none.p99_latency_micros.unwrap() > 4 * SECOND, "{:?}", none.p99_latency_micros);
    assert!(none.peak_in_flight.unwrap() > 3000);

    // BBR: latency stays within twice the service time (11.25 ms at most
    // in the run), and requests are shed only from the overload's start
    // to its end plus the 1 s cool-down.
    assert!(bbr.max_latency_micros.unwrap() <= 20_000, "bbr max latency {:?}", bbr.max_latency_micros);
    assert!(bbr.p99_latency_micros.unwrap() <= 15_000, "bbr p99 latency {:?}", bbr.p99_latency_micros);
    assert!(p99_between(&results[1], 5 * SECOND, 10 * SECOND) <= 15_000);
    let shed = &results[1].refusals;
    assert!(shed.len() > 2_000, "bbr sheds the excess: {}", shed.len());
    assert!(
        shed.iter().all(|&t| (5 * SECOND..11 * SECOND).contains(&t)),
        "shed at {:?} .. {:?}",
        shed.first(),
        shed.last()
    );
    // and it keeps the server busy: about its 800/s while overloaded.
    assert!(bbr.max_in_window >= 750, "{}", bbr.max_in_window);

    // The system rule on CPU > 0.9 refuses only on that threshold, only
    // during the overload, and keeps latency at the service time.
    assert_eq!(system.refused_by, vec![("cpu".to_owned(), system.refused)]);
    assert!(results[2].refusals.iter().all(|&t| (5 * SECOND..10 * SECOND).contains(&t)));
    assert!(system.max_latency_micros.unwrap() <= 20_000);

    // The plot draws those latencies: its curves peak at the summary's
    // maxima, and its red ticks are the refusals.
    let plot = PlotData::new("overload".into(), &a, &results, 1_000_000);
    for (lane, s) in plot.lanes[1..].iter().zip(&summary.limiters) {
        assert_eq!(lane.latency.as_ref().and_then(|l| l.iter().max().copied()), s.max_latency_micros, "{}", s.limiter);
        assert_eq!(lane.latency_p99_max, s.p99_latency_micros.zip(s.max_latency_micros));
        assert_eq!(lane.refused.iter().map(|&n| u64::from(n)).sum::<u64>(), s.refused);
    }
}
