//! The one error type of the core.
//!
//! A refusal to admit a request is never an error: it is a value the
//! algorithm returns. Errors are only for arguments no limiter can be built
//! or asked with. Every such case leaves the limiter's state untouched, so a
//! caller may keep using a limiter after an error.
//!
//! [`Error`] is 16 bytes, so a `Result<bool, Error>` comes back in two
//! registers: a rate limiter's hot path returns one on every call.

use core::fmt;

/// What went wrong. `#[non_exhaustive]`: later algorithms may add variants.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is outside the domain the operation accepts.
    InvalidArgument(InvalidArgument),
}

/// Declares [`Argument`] and [`Argument::ALL`] from one list, so that a
/// variant cannot be added without being in `ALL` (the conformance suite
/// checks that its table of bad inputs covers every one).
macro_rules! arguments {
    ($(#[$attr:meta])* pub enum Argument { $($(#[$doc:meta])* $variant:ident,)* }) => {
        $(#[$attr])*
        pub enum Argument {
            $($(#[$doc])* $variant,)*
        }

        impl Argument {
            /// Every argument, in declaration order.
            pub const ALL: &'static [Argument] = &[$(Argument::$variant,)*];
        }
    };
}

arguments! {
    /// Every argument the library checks, each with its requirement.
    ///
    /// Bindings map these to their own spelling (`permitsPerSecond` in
    /// JavaScript) from [`name`](Argument::name), the Rust parameter name.
    /// An argument whose valid range depends on the algorithm (a sliding
    /// log's `limit` is at most 1,048,576, a sliding window's 4,294,967,295)
    /// has a variant per range, all with the same name, so that every
    /// [`requirement`](Argument::requirement) states the real bound of the
    /// call that rejected the value.
    ///
    /// Durations follow one rule (see [`Argument::Period`]): whole
    /// microseconds from the argument's own lower bound up to `i64::MAX`
    /// (9,223,372,036,854,775,807 µs, about 292,271 years). A duration
    /// that is NaN, infinite or longer is an error naming it, never clamped.
    /// Timeouts are the one exception ([`Argument::Timeout`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum Argument {
        /// A rate in permits per second, as Guava checks it: `> 0`, not NaN
        /// (`+Infinity` allowed).
        PermitsPerSecond,
        /// A number of permits for Guava's algorithms: a positive Java `int`.
        Permits,
        /// A warm-up period in microseconds: a duration of at least 0.
        Warmup,
        /// A warm-up cold factor: finite and at least 1.
        ColdFactor,
        /// A bursty limiter's saved-up seconds: finite, not negative, and at
        /// most `i64::MAX` microseconds' worth, like every duration.
        MaxBurstSeconds,
        /// A timeout in seconds (bindings): not NaN. Negative means "do not
        /// wait"; `+Infinity`, or any timeout of `i64::MAX` microseconds or
        /// more, means "no deadline". The one duration that may be
        /// infinite: a bound on waiting has a natural "forever".
        Timeout,
        /// A warm-up period in seconds (bindings): a duration of at least 0.
        WarmupSeconds,
        /// Seconds to move a manual clock forward (bindings): a duration of
        /// at least 0, because a clock never goes back.
        AdvanceSeconds,
        /// A token bucket's refill rate in tokens per second (x/time/rate's
        /// `Limit`): not negative, not NaN; `+Infinity` means "no limit".
        Rate,
        /// A token bucket's burst (x/time/rate's `burst`): at most `i64::MAX`.
        Burst,
        /// How many units a request costs: not negative, at most `i64::MAX`.
        Cost,
        /// GCRA's `max_burst` (redis-cell): `max_burst + 1` must fit in 63 bits.
        MaxBurst,
        /// How many units a rate allows per period: at least 1.
        CountPerPeriod,
        /// A rate's period in microseconds: a duration of at least 1 µs.
        /// Every duration is whole microseconds up to `i64::MAX`.
        Period,
        /// A leaky bucket meter's capacity in units: at least 1.
        Capacity,
        /// A leaky bucket queue's capacity (units that may wait): may be 0.
        QueueCapacity,
        /// The spacing between a shaper's slots: a duration of at least 1 µs.
        Interval,
        /// How many units a window admits (a fixed window, a sliding window
        /// counter, a core sliding log on storage that grows) or how many
        /// requests a fixed concurrency limit lets in at once: at least 1,
        /// at most `i64::MAX`.
        Limit,
        /// A sliding window's limit: its counters are 32 bits.
        SlidingWindowLimit,
        /// A sliding log's limit in the std layer and the bindings: at most
        /// `MAX_SLIDING_LOG_LIMIT` (2^20), which bounds its memory.
        SlidingLogLimit,
        /// A core sliding log's limit on fixed storage: at most the number
        /// of entries the storage holds.
        SlidingLogStorageLimit,
        /// A window's length: a duration of at least 1 µs.
        Window,
        /// How many sub-windows a sliding window has.
        SubWindows,
        /// A committed information rate in bytes per second (RFC 2697, RFC 2698).
        Cir,
        /// A trTCM's committed burst size in bytes (RFC 2698): at least 1.
        Cbs,
        /// An srTCM's committed burst size in bytes (RFC 2697): may be 0 when
        /// `ebs` is not.
        SrTcmCbs,
        /// An excess burst size in bytes (RFC 2697).
        Ebs,
        /// A peak information rate in bytes per second (RFC 2698).
        Pir,
        /// A peak burst size in bytes (RFC 2698).
        Pbs,
        /// An adaptive limiter's initial concurrency limit.
        InitialLimit,
        /// An adaptive limiter's smallest concurrency limit.
        MinLimit,
        /// An adaptive limiter's largest concurrency limit.
        MaxLimit,
        /// The weight of a new gradient limit against the old one.
        Smoothing,
        /// How much slower than the no-load RTT a sample may be before the
        /// gradient limit shrinks.
        RttTolerance,
        /// The headroom the gradient rule adds to the limit.
        QueueSize,
        /// The factor AIMD multiplies its limit by after a drop: below 1.
        BackoffRatio,
        /// The factor the gradient rule multiplies its limit by after a
        /// drop: 1.0 allowed (no backing off).
        GradientBackoffRatio,
        /// How many samples pass between probes for a new no-load RTT.
        ProbeInterval,
        /// The RTT above which AIMD treats a sample as a drop: a duration of
        /// at least 1 µs.
        RttTimeout,
        /// A measured round-trip time: a duration of at least 0.
        Rtt,
        /// A number of requests in flight: not negative.
        InFlight,
        /// An HTTP policy name: printable ASCII (a Structured Field String).
        PolicyName,
        /// The limits of a composite: at least one.
        Limits,
        /// A packet's size in bytes (the markers): not negative.
        Bytes,
        /// How many units a leased limiter takes per round trip (Redis).
        Batch,
        /// How long a leased limiter may spend a lease (Redis): a duration
        /// of at least 1 µs.
        Lease,
        /// How long a node of a Redis membership stays a member without a
        /// heartbeat (it beats every third of it): a duration of at least
        /// 3 ms.
        Ttl,
        /// How many keys a keyed limiter may hold: at least 1.
        MaxKeys,
        /// How many shards a keyed limiter splits its keys into: a power of two.
        Shards,
        /// A key of a byte-keyed or Redis limiter, too long: the value is its
        /// length in bytes.
        Key,
        /// A key given as text that has no UTF-8 form (a lone UTF-16
        /// surrogate): the value is the lone surrogate's position in the text.
        KeyText,
        /// The longest key a byte-keyed or Redis limiter takes, in bytes.
        MaxKeyBytes,
        /// How many buckets a BBR window has: at most `bbr::MAX_BUCKETS`
        /// and one per microsecond of the window.
        Buckets,
        /// The CPU usage at or above which BBR sheds: a fraction.
        CpuThreshold,
        /// How long BBR keeps checking after shedding began: a duration of
        /// at least 0.
        CoolDown,
        /// A system rule's entry QPS threshold (Sentinel's `qps`).
        Qps,
        /// A system rule's in-flight threshold (Sentinel's `maxThread`).
        MaxThread,
        /// A system rule's average RT threshold (Sentinel's `avgRt`): a
        /// duration of at least 0.
        AvgRt,
        /// A system rule's load average threshold (Sentinel's
        /// `highestSystemLoad`).
        HighestSystemLoad,
        /// A system rule's CPU usage threshold (Sentinel's
        /// `highestCpuUsage`): a fraction.
        HighestCpuUsage,
        /// A CPU usage reading given to a manual load signal: a fraction.
        CpuUsage,
        /// A load average reading given to a manual load signal.
        LoadAverage,
        /// How often a load sampler reads the CPU: at least 1 ms.
        SampleInterval,
        /// The weight a load sampler gives the previous smoothed CPU usage.
        Decay,
        /// Permits a cycle limiter's cycle brings (Resilience4j's
        /// `limitForPeriod`): a positive Java `int`.
        LimitForPeriod,
        /// A cycle limiter's cycle (Resilience4j's `limitRefreshPeriod`): a
        /// duration of at least 1 µs.
        LimitRefreshPeriod,
        /// The longest wait a cycle limiter gives (Resilience4j's
        /// `timeoutDuration`): a duration of at least 0.
        TimeoutDuration,
        /// A flow rule's threshold (Sentinel's `count`): per second or in
        /// flight, finite and not negative.
        Count,
        /// A flow rule's warm-up period in whole seconds (Sentinel's
        /// `warmUpPeriodSec`).
        WarmUpPeriodSec,
        /// A flow rule's cold factor: Sentinel's is an integer above 1.
        FlowColdFactor,
        /// A flow rule's queueing bound in whole milliseconds (Sentinel's
        /// `maxQueueingTimeMs`).
        MaxQueueingTimeMs,
        /// How many buckets Sentinel's statistics split their interval into.
        SampleCount,
        /// The interval of Sentinel's statistics in whole milliseconds.
        IntervalMs,
        /// How many permits a flow check asks for (Sentinel's
        /// `acquireCount`, a Java `int`): 0 allowed.
        AcquireCount,
        /// A warm-up flow rule's threshold: its tokens (`count ×
        /// warm_up_period_sec`) must fit Sentinel's `int`, beyond which
        /// Sentinel's own casts saturate and its sums wrap.
        WarmUpCount,
        /// How many unused slots a leaky bucket queue saves while idle
        /// (Uber's `WithSlack`): at most `i64::MAX`.
        Slack,
    }
}

/// "must be between LOW and 9223372036854775807 microseconds (…)": the
/// requirement of every duration, whatever its lower bound.
macro_rules! duration_requirement {
    ($low:literal) => {
        concat!("must be between ", $low, " and 9223372036854775807 microseconds (about 292,271 years)")
    };
}

impl Argument {
    /// The Rust parameter's name, in `snake_case`.
    pub const fn name(self) -> &'static str {
        match self {
            Argument::PermitsPerSecond => "permits_per_second",
            Argument::Permits => "permits",
            Argument::Warmup => "warmup",
            Argument::ColdFactor => "cold_factor",
            Argument::MaxBurstSeconds => "max_burst_seconds",
            Argument::Timeout => "timeout",
            Argument::WarmupSeconds => "warmup",
            Argument::AdvanceSeconds => "seconds",
            Argument::Rate => "rate",
            Argument::Burst => "burst",
            Argument::Cost => "cost",
            Argument::MaxBurst => "max_burst",
            Argument::CountPerPeriod => "count_per_period",
            Argument::Period => "period",
            Argument::Capacity | Argument::QueueCapacity => "capacity",
            Argument::Interval => "interval",
            Argument::Limit
            | Argument::SlidingWindowLimit
            | Argument::SlidingLogLimit
            | Argument::SlidingLogStorageLimit => "limit",
            Argument::Window => "window",
            Argument::SubWindows => "sub_windows",
            Argument::Cir => "cir",
            Argument::Cbs | Argument::SrTcmCbs => "cbs",
            Argument::Ebs => "ebs",
            Argument::Pir => "pir",
            Argument::Pbs => "pbs",
            Argument::InitialLimit => "initial_limit",
            Argument::MinLimit => "min_limit",
            Argument::MaxLimit => "max_limit",
            Argument::Smoothing => "smoothing",
            Argument::RttTolerance => "rtt_tolerance",
            Argument::QueueSize => "queue_size",
            Argument::BackoffRatio | Argument::GradientBackoffRatio => "backoff_ratio",
            Argument::ProbeInterval => "probe_interval",
            Argument::RttTimeout => "rtt_timeout",
            Argument::Rtt => "rtt",
            Argument::InFlight => "in_flight",
            Argument::PolicyName => "policy_name",
            Argument::Limits => "limits",
            Argument::Bytes => "bytes",
            Argument::Batch => "batch",
            Argument::Lease => "lease",
            Argument::Ttl => "ttl",
            Argument::MaxKeys => "max_keys",
            Argument::Shards => "shards",
            Argument::Key | Argument::KeyText => "key",
            Argument::MaxKeyBytes => "max_key_bytes",
            Argument::Buckets => "buckets",
            Argument::CpuThreshold => "cpu_threshold",
            Argument::CoolDown => "cool_down",
            Argument::Qps => "qps",
            Argument::MaxThread => "max_thread",
            Argument::AvgRt => "avg_rt",
            Argument::HighestSystemLoad => "highest_system_load",
            Argument::HighestCpuUsage => "highest_cpu_usage",
            Argument::CpuUsage => "cpu_usage",
            Argument::LoadAverage => "load_average",
            Argument::SampleInterval => "interval",
            Argument::Decay => "decay",
            Argument::LimitForPeriod => "limit_for_period",
            Argument::LimitRefreshPeriod => "limit_refresh_period",
            Argument::TimeoutDuration => "timeout_duration",
            Argument::Count => "count",
            Argument::WarmUpPeriodSec => "warm_up_period_sec",
            Argument::FlowColdFactor => "cold_factor",
            Argument::MaxQueueingTimeMs => "max_queueing_time_ms",
            Argument::SampleCount => "sample_count",
            Argument::IntervalMs => "interval_ms",
            Argument::AcquireCount => "acquire_count",
            Argument::WarmUpCount => "count",
            Argument::Slack => "slack",
        }
    }

    /// What a valid value is, as a phrase: "must be …", naming the real
    /// bounds of the call that checks it (a test in the std layer checks
    /// each constructor's bound against its message).
    pub const fn requirement(self) -> &'static str {
        match self {
            Argument::PermitsPerSecond => "must be positive and not NaN",
            Argument::Permits => "must be between 1 and 2147483647",
            Argument::Warmup | Argument::WarmupSeconds | Argument::Rtt => duration_requirement!("0"),
            Argument::ColdFactor => "must be finite and at least 1.0",
            Argument::MaxBurstSeconds => {
                "must be between 0.0 and 9223372036854.775807 seconds (9223372036854775807 microseconds, about 292,271 years)"
            }
            Argument::Timeout => {
                "must not be NaN (a negative timeout does not wait; an infinite one, or one of 9223372036854775807 microseconds or more, has no deadline)"
            }
            Argument::AdvanceSeconds => concat!(duration_requirement!("0"), ": a clock never goes back"),
            Argument::Rate => "must not be negative or NaN",
            Argument::Burst => "must be between 0 and 9223372036854775807",
            Argument::Cost => "must be between 0 and 9223372036854775807",
            Argument::MaxBurst => "must be between 0 and 9223372036854775806",
            Argument::CountPerPeriod => "must be between 1 and 9223372036854775807",
            Argument::Period | Argument::Interval | Argument::Window | Argument::RttTimeout | Argument::Lease => {
                duration_requirement!("1")
            }
            Argument::Capacity => "must be between 1 and 9223372036854775807",
            Argument::QueueCapacity => "must be between 0 and 9223372036854775807",
            Argument::Limit => "must be between 1 and 9223372036854775807",
            Argument::SlidingWindowLimit => "must be between 1 and 4294967295",
            Argument::SlidingLogLimit => "must be between 1 and 1048576",
            Argument::SlidingLogStorageLimit => {
                "must be between 1 and the number of entries the sliding log's fixed storage holds"
            }
            Argument::SubWindows => "must be between 1 and 16 and divide the window",
            Argument::Cir => "must be between 1 and 9223372036854775807 bytes per second",
            Argument::Cbs => "must be between 1 and 9223372036854775807 bytes",
            Argument::SrTcmCbs => "must be between 0 and 9223372036854775807 bytes, and above 0 when ebs is 0",
            Argument::Ebs => "must be between 0 and 9223372036854775807 bytes",
            Argument::Pir => "must be between cir and 9223372036854775807 bytes per second",
            Argument::Pbs => "must be between 1 and 9223372036854775807 bytes",
            Argument::InitialLimit => "must be between min_limit and max_limit",
            Argument::MinLimit => "must be between 1 and 9223372036854775807",
            Argument::MaxLimit => "must be between min_limit and 9223372036854775807",
            Argument::Smoothing => "must be above 0.0 and at most 1.0",
            Argument::RttTolerance => "must be finite and at least 1.0",
            Argument::QueueSize => "must be between 0 and max_limit",
            Argument::BackoffRatio => "must be at least 0.5 and below 1.0",
            Argument::GradientBackoffRatio => "must be between 0.5 and 1.0",
            Argument::ProbeInterval => "must be between 0 (no probing) and 9223372036854775807",
            Argument::InFlight => "must be between 0 and 9223372036854775807",
            Argument::PolicyName => "must be printable ASCII (the value is the first byte that is not)",
            Argument::Limits => "must hold at least one limit (the value is how many)",
            Argument::Bytes => "must be between 0 and 9223372036854775807",
            Argument::Batch => "must be between 1 and the limit",
            Argument::Ttl => duration_requirement!("3000"),
            Argument::MaxKeys => "must be between 1 and 1099511627776 (2^40)",
            Argument::Shards => {
                "must be a power of two between 1 and 65536, at most max_keys, and at least max_keys / 3221225471"
            }
            Argument::Key => {
                "must be at most max_key_bytes bytes long (256 unless the limiter sets it; the value is the key's length in bytes)"
            }
            Argument::KeyText => {
                "must be valid Unicode text, with no lone surrogate (the value is the first one's position)"
            }
            Argument::MaxKeyBytes => "must be between 1 and 65536",
            Argument::Buckets => "must be between 1 and 128, and at most the window in microseconds",
            Argument::CpuThreshold | Argument::HighestCpuUsage | Argument::CpuUsage => {
                "must be between 0.0 and 1.0"
            }
            Argument::CoolDown | Argument::AvgRt => duration_requirement!("0"),
            Argument::Qps | Argument::HighestSystemLoad | Argument::LoadAverage => "must be finite and not negative",
            Argument::MaxThread => "must be between 0 and 9223372036854775807",
            Argument::SampleInterval => duration_requirement!("1000"),
            Argument::Decay => "must be at least 0.0 and below 1.0",
            Argument::LimitForPeriod => "must be between 1 and 2147483647",
            Argument::LimitRefreshPeriod => duration_requirement!("1"),
            Argument::TimeoutDuration => duration_requirement!("0"),
            Argument::Count => "must be finite and not negative",
            Argument::WarmUpPeriodSec => "must be between 1 and 2147483647 seconds",
            Argument::FlowColdFactor => "must be a whole number between 2 and 2147483647",
            Argument::MaxQueueingTimeMs | Argument::IntervalMs => "must be between 1 and 2147483647 milliseconds",
            Argument::SampleCount => "must be between 1 and 64 and divide interval_ms",
            Argument::AcquireCount => "must be between 0 and 2147483647",
            Argument::WarmUpCount => "must be finite and not negative, and at most 2147483647 / warm_up_period_sec in a warm-up rule",
            Argument::Slack => "must be between 0 and 9223372036854775807",
        }
    }

    /// Whether the argument is a floating-point number (else an integer).
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Argument::PermitsPerSecond
                | Argument::ColdFactor
                | Argument::MaxBurstSeconds
                | Argument::Timeout
                | Argument::WarmupSeconds
                | Argument::AdvanceSeconds
                | Argument::Rate
                | Argument::Smoothing
                | Argument::RttTolerance
                | Argument::BackoffRatio
                | Argument::GradientBackoffRatio
                | Argument::CpuThreshold
                | Argument::Qps
                | Argument::HighestSystemLoad
                | Argument::HighestCpuUsage
                | Argument::CpuUsage
                | Argument::LoadAverage
                | Argument::Decay
                | Argument::Count
                | Argument::WarmUpCount
        )
    }
}

/// A rejected argument and the value that was passed.
#[derive(Clone, Copy, PartialEq)]
pub struct InvalidArgument {
    argument: Argument,
    /// Whether `bits` are an `f64`'s (else an `i64`'s).
    float: bool,
    /// The value's bits.
    bits: u64,
}

/// The value of a rejected argument, kept in its own type so that messages
/// print it exactly (`NaN`, `-0.0`, `9223372036854775807`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A floating-point argument such as a rate.
    Float(f64),
    /// An integer argument such as a permit count or a number of microseconds.
    Int(i64),
}

impl InvalidArgument {
    /// Which argument.
    pub const fn argument(&self) -> Argument {
        self.argument
    }

    /// The parameter's name, e.g. `"permits_per_second"`.
    pub const fn name(&self) -> &'static str {
        self.argument.name()
    }

    /// What the value must be, e.g. `"must be positive and not NaN"`.
    pub const fn requirement(&self) -> &'static str {
        self.argument.requirement()
    }

    /// The value that was passed.
    pub const fn value(&self) -> Value {
        if self.float {
            Value::Float(f64::from_bits(self.bits))
        } else {
            Value::Int(self.bits as i64)
        }
    }
}

impl fmt::Debug for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvalidArgument").field("argument", &self.argument).field("value", &self.value()).finish()
    }
}

impl Error {
    /// An [`Error::InvalidArgument`] for a floating-point argument.
    pub const fn invalid_float(argument: Argument, value: f64) -> Self {
        Error::InvalidArgument(InvalidArgument { argument, float: true, bits: value.to_bits() })
    }

    /// An [`Error::InvalidArgument`] for an integer argument.
    pub const fn invalid_int(argument: Argument, value: i64) -> Self {
        Error::InvalidArgument(InvalidArgument { argument, float: false, bits: value as u64 })
    }

    /// An [`Error::InvalidArgument`] for an unsigned integer argument. A
    /// value beyond `i64::MAX` (which no binding can pass) is reported as the
    /// nearest [`Value::Float`], so that the message never shows a wrapped
    /// negative number.
    pub const fn invalid_uint(argument: Argument, value: u64) -> Self {
        if value <= i64::MAX as u64 {
            Self::invalid_int(argument, value as i64)
        } else {
            Error::InvalidArgument(InvalidArgument { argument, float: true, bits: (value as f64).to_bits() })
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Int(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid argument {} = {}: {}", self.name(), self.value(), self.requirement())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(arg) => arg.fmt(f),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn messages_name_the_argument_and_value() {
        let e = Error::invalid_float(Argument::PermitsPerSecond, f64::NAN);
        assert_eq!(e.to_string(), "invalid argument permits_per_second = NaN: must be positive and not NaN");
        let e = Error::invalid_float(Argument::PermitsPerSecond, -0.0);
        assert_eq!(e.to_string(), "invalid argument permits_per_second = -0.0: must be positive and not NaN");
        let e = Error::invalid_int(Argument::Permits, i64::MIN);
        assert_eq!(e.to_string(), "invalid argument permits = -9223372036854775808: must be between 1 and 2147483647");
        let Error::InvalidArgument(arg) = e;
        assert_eq!(arg.value(), Value::Int(i64::MIN));
        assert_eq!(arg.argument(), Argument::Permits);
    }

    #[test]
    fn huge_unsigned_values_are_never_shown_negative() {
        let e = Error::invalid_uint(Argument::Burst, u64::MAX);
        assert_eq!(
            e.to_string(),
            "invalid argument burst = 1.8446744073709552e19: must be between 0 and 9223372036854775807"
        );
        assert_eq!(Error::invalid_uint(Argument::Burst, 5), Error::invalid_int(Argument::Burst, 5));
    }

    #[test]
    fn results_fit_in_two_registers() {
        assert!(core::mem::size_of::<Error>() <= 16);
        assert!(core::mem::size_of::<Result<bool, Error>>() <= 16);
    }
}
