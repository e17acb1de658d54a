//! Whatever the input — random bytes as a trace, random text as an
//! argument, random parameters — the tool answers with a value or an
//! error, never a panic.

use proptest::prelude::*;
use ratekeeper_cli::limiters::LimiterConfig;
use ratekeeper_cli::patterns::Pattern;
use ratekeeper_cli::plot::PlotData;
use ratekeeper_cli::simulation::{self, NoSink};
use ratekeeper_cli::summary::Summary;
use ratekeeper_cli::trace::{self, Arrival};

fn csv_like() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b",".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"time,cost\n".to_vec()),
        Just(b"time_us".to_vec()),
        Just(b".".to_vec()),
        Just(b"#".to_vec()),
        Just(b"-".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        "[0-9]{1,8}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 1..4),
    ];
    proptest::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn traces_never_panic(bytes in csv_like()) {
        if let Ok(arrivals) = trace::read_csv(&bytes[..], |_| {}) {
            prop_assert!(arrivals.windows(2).all(|w| w[0].at_micros <= w[1].at_micros));
            prop_assert!(arrivals.iter().all(|a| a.cost >= 1 && a.at_micros >= 0));
        }
    }

    #[test]
    fn arguments_never_panic(text in "[a-z_:=,+.0-9]{0,60}", name in prop::sample::select(vec![
        "fixed_window", "sliding_window", "sliding_log", "sliding_window_counter", "token_bucket", "gcra",
        "leaky_bucket_meter", "leaky_bucket_queue", "guava", "steady", "poisson", "bursts", "boundary", "ramp",
        "cycle", "flow", "bbr", "system_guard", "none",
    ])) {
        let _ = LimiterConfig::parse(&text);
        let _ = Pattern::parse(&text);
        let _ = LimiterConfig::parse(&format!("{name}:{text}"));
        let _ = Pattern::parse(&format!("{name}:{text}"));
    }

    #[test]
    fn any_parameters_simulate_or_fail_cleanly(
        algorithm in 0usize..14,
        limit in prop_oneof![Just(0u64), Just(1), 1u64..1_000, Just(u64::MAX)],
        window in prop_oneof![Just("0s".to_owned()), Just("1us".to_owned()), (1u64..5_000).prop_map(|m| format!("{m}ms"))],
        rate in prop_oneof![Just("0".to_owned()), Just("inf".to_owned()), Just("1e300".to_owned()), (1u32..10_000).prop_map(|r| r.to_string())],
        times in proptest::collection::vec((0i64..3_000_000, 1u64..5), 0..200),
    ) {
        let text = match algorithm {
            0 => format!("fixed_window:limit={limit},window={window}"),
            1 => format!("sliding_window:limit={limit},window={window},sub_windows=4"),
            2 => format!("sliding_log:limit={limit},window={window}"),
            3 => format!("sliding_window_counter:limit={limit},window={window}"),
            4 => format!("token_bucket:rate={rate},burst={limit}"),
            5 => format!("gcra:max_burst={limit},count_per_period={limit},period={window}"),
            6 => format!("leaky_bucket_meter:capacity={limit},count_per_period={limit},period={window}"),
            7 => format!("leaky_bucket_queue:capacity={limit},interval={window}"),
            8 => format!("guava:rate={rate},timeout={window}"),
            9 => format!("cycle:limit_for_period={limit},limit_refresh_period={window},timeout_duration={window}"),
            10 => format!("flow:count={rate},sample_count={limit},interval_ms={limit},prioritized=true"),
            11 => format!("flow:count={rate},control_behavior=warm_up,warm_up_period_sec={limit},cold_factor={limit}"),
            12 => format!("flow:count={rate},control_behavior=rate_limiter,max_queueing_time_ms={limit}"),
            _ => format!(
                "flow:count={rate},control_behavior=warm_up_rate_limiter,cold_factor=2,max_queueing_time_ms={limit}"
            ),
        };
        let mut times = times;
        times.sort_unstable();
        let arrivals: Vec<Arrival> = times.into_iter().map(|(at_micros, cost)| Arrival { at_micros, cost }).collect();
        let Ok(config) = LimiterConfig::parse(&text) else { return Ok(()) };
        if let Ok(results) = simulation::run(&arrivals, &[config], &mut NoSink, |_| {}) {
            let summary = Summary::new("p".into(), &arrivals, &results, 1_000_000);
            prop_assert_eq!(summary.limiters[0].admitted + summary.limiters[0].refused, arrivals.len() as u64);
            let plot = PlotData::new("p".into(), &arrivals, &results, 1_000_000);
            prop_assert_eq!(plot.lanes.len(), 2);
        }
    }
}
