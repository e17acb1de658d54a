//! Every constructor's bounds, as its errors state them: for each argument
//! of each algorithm, the smallest and largest values accepted are
//! accepted, the values just beyond are refused naming the argument, and
//! the message of the refusal names the bound it crossed — the real one for
//! that call (a sliding log's 1048576, not another algorithm's).

use std::time::Duration;

use ratekeeper::core::sliding_log::{LogEntry, SlidingLog as CoreLog};
use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{
    AimdConfig, AnyKeyedLimiter, Argument, BbrConfig, CompositeLimiter, ConcurrencyLimiter, Error, FixedWindow, Gcra,
    GradientConfig, KeyedOptions, LeakyBucketMeter, LeakyBucketQueue, LimiterSpec, RateLimiter, SlidingLog,
    SlidingWindow, SlidingWindowCounter, SrTcm, SystemRule, TokenBucket, TrTcm,
};

const MAX: u64 = i64::MAX as u64;
const MAX_MICROS: u64 = i64::MAX as u64;

fn us(micros: u64) -> Duration {
    Duration::from_micros(micros)
}

/// One argument of one constructor, called with a `u64` (counts, and
/// durations as microseconds): the lowest and highest values it accepts,
/// and the text each bound has in the message of the value beyond it.
struct Bound {
    what: &'static str,
    argument: Argument,
    call: fn(u64) -> Result<(), Error>,
    lowest: u64,
    highest: u64,
    below: &'static str,
    above: &'static str,
}

fn refused(b: &Bound, value: u64, bound_text: &str) {
    let err = (b.call)(value).expect_err(&format!("{}: {value} must be refused", b.what));
    let Error::InvalidArgument(invalid) = err else { panic!("{}: {err}", b.what) };
    assert_eq!(invalid.argument(), b.argument, "{}: {value}: {err}", b.what);
    assert_eq!(invalid.name(), b.argument.name());
    let message = err.to_string();
    assert!(message.contains(bound_text), "{}: {value}: {message:?} does not name {bound_text:?}", b.what);
}

fn ok<T>(result: Result<T, Error>) -> Result<(), Error> {
    result.map(drop)
}

fn gradient(f: impl FnOnce(&mut GradientConfig)) -> Result<(), Error> {
    let mut config =
        GradientConfig { min_limit: 2, initial_limit: 5, max_limit: 10, queue_size: 4, ..Default::default() };
    f(&mut config);
    ok(ConcurrencyLimiter::gradient(config))
}

fn aimd(f: impl FnOnce(&mut AimdConfig)) -> Result<(), Error> {
    let mut config = AimdConfig { min_limit: 2, initial_limit: 5, max_limit: 10, ..Default::default() };
    f(&mut config);
    ok(ConcurrencyLimiter::aimd(config))
}

fn keyed(options: impl FnOnce(KeyedOptions) -> Result<KeyedOptions, Error>) -> Result<(), Error> {
    let spec = LimiterSpec::FixedWindow { limit: 1, window_micros: 1 };
    let options = options(KeyedOptions::new(1 << 20))?;
    ok(AnyKeyedLimiter::new(&spec, options, ratekeeper::AnyClock::default()))
}

fn integer_bounds() -> Vec<Bound> {
    let b = |what, argument, call, (lowest, highest), (below, above)| Bound {
        what,
        argument,
        call,
        lowest,
        highest,
        below,
        above,
    };
    let max_text = "9223372036854775807";
    let micros_text = "9223372036854775807 microseconds";
    vec![
        b("TokenBucket burst", Argument::Burst, |v| ok(TokenBucket::new(1.0, v)), (0, MAX), ("", max_text)),
        b(
            "Gcra max_burst",
            Argument::MaxBurst,
            |v| ok(Gcra::new(v, 1, us(1))),
            (0, MAX - 1),
            ("", "9223372036854775806"),
        ),
        b(
            "Gcra count_per_period",
            Argument::CountPerPeriod,
            |v| ok(Gcra::new(0, v, us(1))),
            (1, MAX),
            ("between 1", max_text),
        ),
        b("Gcra period", Argument::Period, |v| ok(Gcra::new(0, 1, us(v))), (1, MAX_MICROS), ("between 1", micros_text)),
        b(
            "LeakyBucketMeter capacity",
            Argument::Capacity,
            |v| ok(LeakyBucketMeter::new(v, 1, us(1))),
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "LeakyBucketMeter count_per_period",
            Argument::CountPerPeriod,
            |v| ok(LeakyBucketMeter::new(1, v, us(1))),
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "LeakyBucketMeter period",
            Argument::Period,
            |v| ok(LeakyBucketMeter::new(1, 1, us(v))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "LeakyBucketQueue capacity",
            Argument::QueueCapacity,
            |v| ok(LeakyBucketQueue::new(v, us(1))),
            (0, MAX),
            ("", max_text),
        ),
        b(
            "LeakyBucketQueue interval",
            Argument::Interval,
            |v| ok(LeakyBucketQueue::new(0, us(v))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "LeakyBucketQueue slack",
            Argument::Slack,
            |v| ok(LeakyBucketQueue::with_slack(0, us(1), v)),
            (0, MAX),
            ("", max_text),
        ),
        b("FixedWindow limit", Argument::Limit, |v| ok(FixedWindow::new(v, us(1))), (1, MAX), ("between 1", max_text)),
        b(
            "FixedWindow window",
            Argument::Window,
            |v| ok(FixedWindow::new(1, us(v))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "SlidingWindow limit",
            Argument::SlidingWindowLimit,
            |v| ok(SlidingWindow::new(v, us(16), 16)),
            (1, u64::from(u32::MAX)),
            ("between 1", "4294967295"),
        ),
        b(
            "SlidingWindow window",
            Argument::Window,
            |v| ok(SlidingWindow::new(1, us(v), 1)),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "SlidingWindow sub_windows",
            Argument::SubWindows,
            |v| ok(SlidingWindow::new(1, us(16), v as u32)),
            (1, 16),
            ("between 1", "16"),
        ),
        b(
            "SlidingLog limit",
            Argument::SlidingLogLimit,
            |v| ok(SlidingLog::new(v, us(1))),
            (1, 1 << 20),
            ("between 1", "1048576"),
        ),
        b(
            "SlidingLog window",
            Argument::Window,
            |v| ok(SlidingLog::new(1, us(v))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "SlidingWindowCounter limit",
            Argument::Limit,
            |v| ok(SlidingWindowCounter::new(v, us(1))),
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "SlidingWindowCounter window",
            Argument::Window,
            |v| ok(SlidingWindowCounter::new(1, us(v))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "core SlidingLog limit, fixed storage",
            Argument::SlidingLogStorageLimit,
            |v| ok(CoreLog::new(v, 1, [LogEntry::default(); 8])),
            (1, 8),
            ("between 1", "fixed storage"),
        ),
        b(
            "core SlidingLog limit, storage that grows",
            Argument::Limit,
            |v| ok(CoreLog::new(v, 1, ratekeeper::HeapLogStorage::default())),
            (1, MAX),
            ("between 1", max_text),
        ),
        b("SrTcm cir", Argument::Cir, |v| ok(SrTcm::new(v, 1, 1)), (1, MAX), ("between 1", max_text)),
        b("SrTcm cbs", Argument::SrTcmCbs, |v| ok(SrTcm::new(1, v, 1)), (0, MAX), ("", max_text)),
        b(
            "SrTcm cbs when ebs is 0",
            Argument::SrTcmCbs,
            |v| ok(SrTcm::new(1, v, 0)),
            (1, MAX),
            ("above 0 when ebs is 0", max_text),
        ),
        b("SrTcm ebs", Argument::Ebs, |v| ok(SrTcm::new(1, 1, v)), (0, MAX), ("", max_text)),
        b("TrTcm pir", Argument::Pir, |v| ok(TrTcm::new(v, 1, 5, 1)), (5, MAX), ("between cir", max_text)),
        b("TrTcm pbs", Argument::Pbs, |v| ok(TrTcm::new(5, v, 5, 1)), (1, MAX), ("between 1", max_text)),
        b("TrTcm cir", Argument::Cir, |v| ok(TrTcm::new(MAX, 1, v, 1)), (1, MAX), ("between 1", max_text)),
        b("TrTcm cbs", Argument::Cbs, |v| ok(TrTcm::new(5, 1, 5, v)), (1, MAX), ("between 1", max_text)),
        b(
            "ConcurrencyLimiter fixed limit",
            Argument::Limit,
            |v| ok(ConcurrencyLimiter::fixed(v)),
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "gradient min_limit",
            Argument::MinLimit,
            |v| {
                gradient(|c| (c.min_limit, c.initial_limit, c.max_limit, c.queue_size) = (v, MAX.max(v), MAX.max(v), 0))
            },
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "gradient max_limit",
            Argument::MaxLimit,
            |v| gradient(|c| (c.max_limit, c.initial_limit, c.queue_size) = (v, 2, 0)),
            (2, MAX),
            ("between min_limit", max_text),
        ),
        b(
            "gradient initial_limit",
            Argument::InitialLimit,
            |v| gradient(|c| c.initial_limit = v),
            (2, 10),
            ("min_limit", "max_limit"),
        ),
        b("gradient queue_size", Argument::QueueSize, |v| gradient(|c| c.queue_size = v), (0, 10), ("", "max_limit")),
        b(
            "gradient probe_interval",
            Argument::ProbeInterval,
            |v| gradient(|c| c.probe_interval = v),
            (0, MAX),
            ("", max_text),
        ),
        b(
            "aimd min_limit",
            Argument::MinLimit,
            |v| aimd(|c| (c.min_limit, c.initial_limit, c.max_limit) = (v, MAX.max(v), MAX.max(v))),
            (1, MAX),
            ("between 1", max_text),
        ),
        b(
            "aimd max_limit",
            Argument::MaxLimit,
            |v| aimd(|c| (c.max_limit, c.initial_limit) = (v, 2)),
            (2, MAX),
            ("between min_limit", max_text),
        ),
        b(
            "aimd initial_limit",
            Argument::InitialLimit,
            |v| aimd(|c| c.initial_limit = v),
            (2, 10),
            ("min_limit", "max_limit"),
        ),
        b(
            "aimd rtt_timeout",
            Argument::RttTimeout,
            |v| aimd(|c| c.rtt_timeout_micros = v as i64),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "RateLimiter warmup",
            Argument::Warmup,
            |v| ok(RateLimiter::builder(1.0).warmup(us(v)).build()),
            (0, MAX_MICROS),
            ("", micros_text),
        ),
        b(
            "RateLimiter acquire permits",
            Argument::Permits,
            |v| ok(RateLimiter::create(1e9)?.try_acquire(v as u32, Duration::ZERO)),
            (1, i32::MAX as u64),
            ("between 1", "2147483647"),
        ),
        b(
            "ConcurrencyLimiter sample rtt",
            Argument::Rtt,
            |v| ok(ConcurrencyLimiter::fixed(1)?.sample(us(v), 0, false)),
            (0, MAX_MICROS),
            ("", micros_text),
        ),
        b(
            "KeyedOptions max_keys",
            Argument::MaxKeys,
            |v| keyed(|_| Ok(KeyedOptions::new(v as usize))),
            (1, 1 << 40),
            ("between 1", "1099511627776"),
        ),
        b(
            "KeyedOptions max_key_bytes",
            Argument::MaxKeyBytes,
            |v| keyed(|o| Ok(o.max_key_bytes(MaxKeyBytes::new(v as usize)?))),
            (1, 1 << 16),
            ("between 1", "65536"),
        ),
        b(
            "AnyKeyedLimiter key length",
            Argument::Key,
            |v| {
                let spec = LimiterSpec::FixedWindow { limit: 1, window_micros: 1 };
                let limiter = AnyKeyedLimiter::new(&spec, KeyedOptions::new(1), ratekeeper::AnyClock::default())?;
                ok(limiter.check(&vec![b'k'; v as usize], 0))
            },
            (0, 256),
            ("", "max_key_bytes bytes long (256"),
        ),
        b(
            "Bbr buckets",
            Argument::Buckets,
            |v| ok(ratekeeper::core::Bbr::new(BbrConfig { buckets: v as u32, ..BbrConfig::default() })),
            (1, 128),
            ("between 1", "128"),
        ),
        b(
            "Bbr cool_down",
            Argument::CoolDown,
            |v| ok(ratekeeper::core::Bbr::new(BbrConfig { cool_down_micros: v as i64, ..BbrConfig::default() })),
            (0, MAX_MICROS),
            ("", micros_text),
        ),
        b(
            "SystemGuard avg_rt",
            Argument::AvgRt,
            |v| {
                ok(ratekeeper::core::SystemGuard::new(SystemRule {
                    avg_rt_micros: Some(v as i64),
                    ..SystemRule::default()
                }))
            },
            (0, MAX_MICROS),
            ("", micros_text),
        ),
        b(
            "SystemGuard max_thread",
            Argument::MaxThread,
            |v| ok(ratekeeper::core::SystemGuard::new(SystemRule { max_thread: Some(v), ..SystemRule::default() })),
            (0, MAX),
            ("", "9223372036854775807"),
        ),
        b(
            "CompositeLimiter limits",
            Argument::Limits,
            |v| ok(CompositeLimiter::new(&vec![LimiterSpec::FixedWindow { limit: 1, window_micros: 1 }; v as usize])),
            (1, 4),
            ("at least one", ""),
        ),
        b(
            "cycle_config limit_for_period",
            Argument::LimitForPeriod,
            |v| ok(ratekeeper::cycle_config(v, us(1), us(0))),
            (1, i32::MAX as u64),
            ("between 1", "2147483647"),
        ),
        b(
            "cycle_config limit_refresh_period",
            Argument::LimitRefreshPeriod,
            |v| ok(ratekeeper::cycle_config(1, us(v), us(0))),
            (1, MAX_MICROS),
            ("between 1", micros_text),
        ),
        b(
            "cycle_config timeout_duration",
            Argument::TimeoutDuration,
            |v| ok(ratekeeper::cycle_config(1, us(1), us(v))),
            (0, MAX_MICROS),
            ("", micros_text),
        ),
    ]
}

#[test]
fn every_integer_bound_is_accepted_and_named_by_the_refusal_beyond_it() {
    for b in integer_bounds() {
        assert_eq!((b.call)(b.lowest), Ok(()), "{}: the lowest value {}", b.what, b.lowest);
        assert_eq!((b.call)(b.highest), Ok(()), "{}: the highest value {}", b.what, b.highest);
        if b.lowest > 0 {
            refused(&b, b.lowest - 1, b.below);
        }
        // `CompositeLimiter limits` has no upper bound; `u32` sub-windows
        // are passed truncated.
        if !b.above.is_empty() && b.highest < u64::MAX {
            refused(&b, b.highest + 1, b.above);
        }
    }
}

#[test]
fn shards_must_be_a_power_of_two_within_the_bound() {
    let shards = |n: usize| keyed(|_| Ok(KeyedOptions::new(1 << 20).shards(n)));
    for good in [1, 2, 1 << 16] {
        assert_eq!(shards(good), Ok(()), "{good}");
    }
    for bad in [0, 3, 1 << 17] {
        let err = shards(bad).unwrap_err();
        assert!(err.to_string().contains("power of two between 1 and 65536"), "{err}");
    }
    // At most max_keys, and few enough keys per shard for its table.
    let err = keyed(|_| Ok(KeyedOptions::new(2).shards(4))).unwrap_err();
    assert!(err.to_string().contains("at most max_keys"), "{err}");
    let err = keyed(|_| Ok(KeyedOptions::new(1 << 40).shards(1))).unwrap_err();
    assert!(err.to_string().contains("at least max_keys / 3221225471"), "{err}");
    assert_eq!(keyed(|_| Ok(KeyedOptions::new(3_221_225_471).shards(1))), Ok(()));
    assert!(keyed(|_| Ok(KeyedOptions::new(3_221_225_472).shards(1))).is_err());
}

/// One floating-point argument: values accepted and refused, and what the
/// refusal's message must name.
struct FloatBound {
    what: &'static str,
    argument: Argument,
    call: fn(f64) -> Result<(), Error>,
    accepted: &'static [f64],
    refused: &'static [f64],
    text: &'static str,
}

#[test]
fn every_float_bound_is_named_by_its_refusals() {
    let bursty = |v| ok(RateLimiter::builder(1.0).max_burst_seconds(v).build());
    let cases = [
        FloatBound {
            what: "RateLimiter permits_per_second",
            argument: Argument::PermitsPerSecond,
            call: |v| ok(RateLimiter::create(v)),
            accepted: &[5e-324, f64::INFINITY],
            refused: &[0.0, -0.0, -1.0, f64::NAN],
            text: "positive and not NaN",
        },
        FloatBound {
            what: "RateLimiter max_burst_seconds",
            argument: Argument::MaxBurstSeconds,
            call: bursty,
            accepted: &[0.0, 9_223_372_036_854.773],
            refused: &[-1e-9, 9_223_372_036_854.775, 1e300, f64::INFINITY, f64::NAN],
            text: "9223372036854.775807 seconds",
        },
        FloatBound {
            what: "RateLimiter cold_factor",
            argument: Argument::ColdFactor,
            call: |v| ok(RateLimiter::builder(1.0).warmup(Duration::from_secs(1)).cold_factor(v).build()),
            accepted: &[1.0, 1e300],
            refused: &[0.999, f64::INFINITY, f64::NAN],
            text: "at least 1.0",
        },
        FloatBound {
            what: "TokenBucket rate",
            argument: Argument::Rate,
            call: |v| ok(TokenBucket::new(v, 1)),
            accepted: &[0.0, f64::INFINITY],
            refused: &[-1e-300, f64::NAN],
            text: "negative or NaN",
        },
        FloatBound {
            what: "gradient smoothing",
            argument: Argument::Smoothing,
            call: |v| gradient(|c| c.smoothing = v),
            accepted: &[5e-324, 1.0],
            refused: &[0.0, 1.000_000_1, f64::NAN],
            text: "above 0.0 and at most 1.0",
        },
        FloatBound {
            what: "gradient rtt_tolerance",
            argument: Argument::RttTolerance,
            call: |v| gradient(|c| c.rtt_tolerance = v),
            accepted: &[1.0, 1e300],
            refused: &[0.999, f64::INFINITY, f64::NAN],
            text: "at least 1.0",
        },
        FloatBound {
            what: "gradient backoff_ratio",
            argument: Argument::GradientBackoffRatio,
            call: |v| gradient(|c| c.backoff_ratio = v),
            accepted: &[0.5, 1.0],
            refused: &[0.499, 1.000_000_1, f64::NAN],
            text: "between 0.5 and 1.0",
        },
        FloatBound {
            what: "aimd backoff_ratio",
            argument: Argument::BackoffRatio,
            call: |v| aimd(|c| c.backoff_ratio = v),
            accepted: &[0.5, 0.999_999],
            refused: &[0.499, 1.0, f64::NAN],
            text: "at least 0.5 and below 1.0",
        },
        FloatBound {
            what: "durations in seconds",
            argument: Argument::Window,
            call: |v| ok(ratekeeper::duration_micros_from_secs(Argument::Window, v)),
            accepted: &[0.0, 9_223_372_036_854.773],
            refused: &[-1e-9, 9_223_372_036_854.775, 1e300, f64::INFINITY, f64::NAN],
            text: "9223372036854775807 microseconds",
        },
        FloatBound {
            what: "durations in milliseconds",
            argument: Argument::Period,
            call: |v| ok(ratekeeper::duration_micros_from_millis(Argument::Period, v)),
            accepted: &[0.0, 9_223_372_036_854_773.0],
            refused: &[-1e-9, 9_223_372_036_854_776.0, 1e300, f64::INFINITY, f64::NAN],
            text: "9223372036854775807 microseconds",
        },
        FloatBound {
            what: "warm-ups in seconds",
            argument: Argument::WarmupSeconds,
            call: |v| ok(ratekeeper::warmup_micros_from_secs(v)),
            accepted: &[0.0, 9_223_372_036_854.773],
            refused: &[-1e-9, 1e300, f64::INFINITY, f64::NAN],
            text: "9223372036854775807 microseconds",
        },
        FloatBound {
            what: "clock advances in seconds",
            argument: Argument::AdvanceSeconds,
            call: |v| ok(ratekeeper::advance_micros_from_secs(v)),
            accepted: &[0.0, 9_223_372_036_854.773],
            refused: &[-1e-9, 1e300, f64::INFINITY, f64::NAN],
            text: "9223372036854775807 microseconds",
        },
        FloatBound {
            what: "timeouts in seconds",
            argument: Argument::Timeout,
            call: |v| ok(ratekeeper::timeout_micros_from_secs(v)),
            accepted: &[-1.0, f64::NEG_INFINITY, 1e300, f64::INFINITY],
            refused: &[f64::NAN],
            text: "no deadline",
        },
    ];
    for case in cases {
        for &v in case.accepted {
            assert_eq!((case.call)(v), Ok(()), "{}: {v} must be accepted", case.what);
        }
        for &v in case.refused {
            let err = (case.call)(v).expect_err(&format!("{}: {v} must be refused", case.what));
            let Error::InvalidArgument(invalid) = err else { panic!("{err}") };
            assert_eq!(invalid.argument(), case.argument, "{}: {v}", case.what);
            assert!(err.to_string().contains(case.text), "{}: {v}: {err}", case.what);
        }
    }
}

#[test]
fn every_requirement_reads_as_a_requirement_and_every_name_is_snake_case() {
    assert!(Argument::ALL.len() >= 50);
    for &argument in Argument::ALL {
        assert!(argument.requirement().starts_with("must "), "{argument:?}");
        let name = argument.name();
        assert!(!name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{argument:?}");
    }
}
