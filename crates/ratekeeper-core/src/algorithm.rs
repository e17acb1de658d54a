//! [`Algorithm`]: the one registry of the admission-style algorithms — each
//! one's name on the wire, its type's name, and its parameters.
//!
//! Every other place that lists the algorithms derives from this one or is
//! checked against it: [`LimiterSpec`](crate::LimiterSpec) reads and writes
//! its parameters in the order given here; the std layer, the Redis crate,
//! the bindings and the command-line tool build their name tables, their
//! error texts and their parameter parsing from it; and the tests of the
//! places written in other languages (the Python stubs, the TypeScript
//! declarations, the conformance format) compare them with
//! `tests/conformance/algorithms.json`, which the vector generator writes
//! from this registry.
//!
//! ## Adding an algorithm
//!
//! It starts here: a variant, its wire name and its parameters. Then:
//!
//! * the core: its module (with [`Admission`](crate::Admission), and
//!   [`Packed`](crate::Packed) and [`Full`](crate::Full) for a fixed-size
//!   state), and its arms in [`LimiterSpec`](crate::LimiterSpec)
//!   (`kind`, `read`, `values`, `divided`), which the compiler asks for;
//! * the std layer: its thread-safe limiter, its line in the lists of
//!   `any_limiter.rs` and `keyed/any.rs` and its arm in `AnyCore::new`
//!   (and a line in `keyed/algorithm.rs` for a packed state);
//! * the command line: its sustained rate in `nominal_per` (the plot's
//!   reference line), which the compiler asks for;
//! * Redis: its script under `lua/`, named in `scripts.rs` (or not, if it
//!   does not run there);
//! * its vectors: a module of `tests/conformance/generate`, then
//!   `cargo run -p ratekeeper-vectors`, which also rewrites
//!   `tests/conformance/algorithms.json`; a row in FORMAT.md;
//! * each language's class and constructor: the C API's `RK_ALGORITHM_*`
//!   (its arm in `code`, which the compiler asks for) and
//!   `rk_limiter_new_<name>` (and a field of `rk_limiter_spec` for a new
//!   parameter name), the C conformance runner's branch; the Node.js class
//!   and its options type (with its exports and `LimitOptions`); the
//!   Python class, its stub and its export. The tests of each language fail
//!   until they match this registry.
//!
//! Derived from the registry, and left alone: the bindings' parameter
//! reading and name tables (`rk_limiter_spec`, `limiterKeys()`, Python's
//! `repr`), the command line's `--limiter`, the Rust, Python and Node.js
//! conformance runners, and the Redis limiter's script arguments and keys.

use core::ffi::CStr;
use core::fmt;
use core::str::FromStr;

use crate::error::Argument;

/// What kind of number a parameter is: how a binding reads it and how the
/// conformance vectors write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParameterKind {
    /// Units per second, an `f64` (`rate`): `+Infinity` allowed where the
    /// algorithm says so.
    Rate,
    /// A whole number of units, a `u64` that a binding reads from a signed
    /// 64-bit integer (a negative one is an error naming the parameter).
    Count,
    /// A duration, in whole microseconds (an `i64`). The vectors and the C
    /// API spell it with the unit (`period_micros`); Python takes seconds
    /// under the bare name (`period`), JavaScript milliseconds or
    /// microseconds (`periodMs`, `periodMicros`).
    Duration,
}

impl ParameterKind {
    /// The kind's name in `tests/conformance/algorithms.json`: `"rate"`,
    /// `"count"` or `"duration"`.
    pub const fn name(self) -> &'static str {
        match self {
            ParameterKind::Rate => "rate",
            ParameterKind::Count => "count",
            ParameterKind::Duration => "duration",
        }
    }
}

/// One parameter of an algorithm: its name, its kind, and the
/// [`Argument`] a bad value of it is reported as (whose requirement states
/// this algorithm's bound: a sliding log's `limit` is
/// [`Argument::SlidingLogLimit`], a fixed window's [`Argument::Limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parameter {
    argument: Argument,
    kind: ParameterKind,
    wire_name: &'static str,
    default: Option<u64>,
}

impl Parameter {
    /// A rate, named as its argument is.
    const fn rate(argument: Argument) -> Self {
        Parameter { argument, kind: ParameterKind::Rate, wire_name: argument.name(), default: None }
    }

    /// A count, named as its argument is.
    const fn count(argument: Argument) -> Self {
        Parameter { argument, kind: ParameterKind::Count, wire_name: argument.name(), default: None }
    }

    /// A duration: `wire_name` is the argument's name and `_micros` (a test
    /// checks it).
    const fn duration(argument: Argument, wire_name: &'static str) -> Self {
        Parameter { argument, kind: ParameterKind::Duration, wire_name, default: None }
    }

    /// The same parameter, which a caller may leave out for `value`.
    const fn or(self, value: u64) -> Self {
        Parameter { default: Some(value), ..self }
    }

    /// The name without a unit, in `snake_case` (`"rate"`, `"max_burst"`,
    /// `"period"`): the Python keyword, the command line's key, and
    /// [`Argument::name`] of its argument.
    pub const fn name(&self) -> &'static str {
        self.argument.name()
    }

    /// The name in the conformance vectors and the C API's
    /// `rk_limiter_spec`: [`name`](Self::name), and `_micros` for a
    /// duration (`"period_micros"`).
    pub const fn wire_name(&self) -> &'static str {
        self.wire_name
    }

    /// How the value is read and written.
    pub const fn kind(&self) -> ParameterKind {
        self.kind
    }

    /// The argument a bad value is reported as.
    pub const fn argument(&self) -> Argument {
        self.argument
    }

    /// The value a caller may leave the parameter out for, if any: the
    /// command line's `--limiter`, the bindings' constructors (a Python
    /// keyword's default, an optional Node.js option, a zero field of C's
    /// `rk_limiter_spec` when the default is 0) and the vectors' runners fill
    /// it in. [`LimiterSpec`](crate::LimiterSpec) holds every parameter.
    pub const fn default(&self) -> Option<u64> {
        self.default
    }
}

/// Declares [`Algorithm`] and its tables from one list, so that a variant
/// cannot be added without its wire name and parameters, nor left out of
/// [`Algorithm::ALL`]. The display name is the variant's own.
macro_rules! algorithms {
    ($(#[$attr:meta])* pub enum Algorithm {
        $($(#[$doc:meta])* $variant:ident = $wire:literal [$($parameter:expr),* $(,)?],)*
    }) => {
        $(#[$attr])*
        pub enum Algorithm {
            $($(#[$doc])* $variant,)*
        }

        impl Algorithm {
            /// Every algorithm, in declaration order (the order of every
            /// list of them: error texts, help, tables).
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant,)*];

            /// The name in the conformance vectors, the C API's
            /// `rk_algorithm_name()`, the command line and the Redis keys:
            /// `snake_case`, as [`LimiterSpec::algorithm`] spells it.
            ///
            /// [`LimiterSpec::algorithm`]: crate::LimiterSpec::algorithm
            pub const fn wire_name(self) -> &'static str {
                match self {
                    $(Algorithm::$variant => $wire,)*
                }
            }

            /// [`wire_name`](Self::wire_name) with a NUL: what a C API hands
            /// out (`rk_algorithm_name()`) without allocating.
            pub const fn wire_name_cstr(self) -> &'static CStr {
                match self {
                    $(Algorithm::$variant => {
                        const NAME: &CStr = match CStr::from_bytes_with_nul(concat!($wire, "\0").as_bytes()) {
                            Ok(name) => name,
                            Err(_) => panic!("a wire name holds no NUL"),
                        };
                        NAME
                    })*
                }
            }

            /// The name of its limiter type in Rust, Python and
            /// JavaScript: `"TokenBucket"`, `"Gcra"`, …
            pub const fn display_name(self) -> &'static str {
                match self {
                    $(Algorithm::$variant => stringify!($variant),)*
                }
            }

            /// Its parameters, in the order every binding takes them (and
            /// [`LimiterSpec::read`](crate::LimiterSpec::read) reads them).
            pub const fn parameters(self) -> &'static [Parameter] {
                match self {
                    $(Algorithm::$variant => {
                        const PARAMETERS: &[Parameter] = &[$($parameter),*];
                        PARAMETERS
                    })*
                }
            }
        }
    };
}

use Argument::*;

algorithms! {
    /// An admission-style algorithm: one a [`LimiterSpec`](crate::LimiterSpec)
    /// describes and an [`Admission`](crate::Admission) decides with.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Algorithm {
        /// [`TokenBucket`](crate::TokenBucket): Go's `golang.org/x/time/rate`.
        TokenBucket = "token_bucket" [Parameter::rate(Rate), Parameter::count(Burst)],
        /// [`Gcra`](crate::Gcra), with redis-cell's `CL.THROTTLE` reply.
        Gcra = "gcra" [
            Parameter::count(MaxBurst),
            Parameter::count(CountPerPeriod),
            Parameter::duration(Period, "period_micros"),
        ],
        /// [`LeakyBucketMeter`](crate::LeakyBucketMeter): overflow refused.
        LeakyBucketMeter = "leaky_bucket_meter" [
            Parameter::count(Capacity),
            Parameter::count(CountPerPeriod),
            Parameter::duration(Period, "period_micros"),
        ],
        /// [`LeakyBucketQueue`](crate::LeakyBucketQueue): each request
        /// waits for its slot; up to `slack` unused slots saved (none
        /// unless told, unlike Uber's default of 10).
        LeakyBucketQueue = "leaky_bucket_queue" [
            Parameter::count(QueueCapacity),
            Parameter::duration(Interval, "interval_micros"),
            Parameter::count(Slack).or(0),
        ],
        /// [`FixedWindow`](crate::FixedWindow).
        FixedWindow = "fixed_window" [Parameter::count(Limit), Parameter::duration(Window, "window_micros")],
        /// [`SlidingWindow`](crate::SlidingWindow): a ring of sub-window
        /// counters (10 when the command line is not told).
        SlidingWindow = "sliding_window" [
            Parameter::count(SlidingWindowLimit),
            Parameter::duration(Window, "window_micros"),
            Parameter::count(SubWindows).or(10),
        ],
        /// [`SlidingLog`](crate::SlidingLog): exact, a log of the units.
        SlidingLog = "sliding_log" [Parameter::count(SlidingLogLimit), Parameter::duration(Window, "window_micros")],
        /// [`SlidingWindowCounter`](crate::SlidingWindowCounter): the
        /// weighted two-window approximation.
        SlidingWindowCounter = "sliding_window_counter" [
            Parameter::count(Limit),
            Parameter::duration(Window, "window_micros"),
        ],
    }
}

impl Algorithm {
    /// The algorithm whose [`wire_name`](Self::wire_name) is `name`
    /// (exactly: no other case or spelling).
    pub fn from_wire_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.iter().copied().find(|a| a.wire_name() == name)
    }
}

/// Writes the [`wire_name`](Algorithm::wire_name).
impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

/// A name that is no algorithm's [`wire_name`](Algorithm::wire_name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownAlgorithm;

/// "not an admission-style algorithm (token_bucket, gcra, …)".
impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an admission-style algorithm (")?;
        for (i, algorithm) in Algorithm::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(algorithm.wire_name())?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for UnknownAlgorithm {}

/// [`Algorithm::from_wire_name`].
impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Algorithm::from_wire_name(name).ok_or(UnknownAlgorithm)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::ToString;

    #[test]
    fn names_round_trip_and_are_unique() {
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(Algorithm::from_wire_name(a.wire_name()), Some(*a));
            assert_eq!(a.wire_name().parse::<Algorithm>(), Ok(*a));
            assert_eq!(a.to_string(), a.wire_name());
            assert_eq!(a.wire_name_cstr().to_str(), Ok(a.wire_name()));
            for b in &Algorithm::ALL[i + 1..] {
                assert_ne!(a.wire_name(), b.wire_name());
                assert_ne!(a.display_name(), b.display_name());
            }
        }
        assert_eq!(Algorithm::from_wire_name("TokenBucket"), None);
        assert_eq!("fixed".parse::<Algorithm>(), Err(UnknownAlgorithm));
    }

    /// The wire name is the display name in `snake_case`, so that a
    /// binding can spell either from the other.
    #[test]
    fn wire_names_are_display_names_in_snake_case() {
        for a in Algorithm::ALL {
            let mut snake = std::string::String::new();
            for (i, c) in a.display_name().chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(snake, a.wire_name());
        }
    }

    #[test]
    fn parameter_names_follow_their_kind() {
        for a in Algorithm::ALL {
            assert!(!a.parameters().is_empty(), "{a}");
            for (i, p) in a.parameters().iter().enumerate() {
                match p.kind() {
                    ParameterKind::Duration => assert_eq!(p.wire_name(), format!("{}_micros", p.name())),
                    ParameterKind::Rate => {
                        assert_eq!(p.wire_name(), p.name());
                        assert!(p.argument().is_float(), "{a}: {}", p.name());
                    }
                    ParameterKind::Count => {
                        assert_eq!(p.wire_name(), p.name());
                        assert!(!p.argument().is_float(), "{a}: {}", p.name());
                    }
                }
                if p.default().is_some() {
                    assert_eq!(p.kind(), ParameterKind::Count, "{a}: only a count has a default");
                }
                for q in &a.parameters()[i + 1..] {
                    assert_ne!(p.name(), q.name(), "{a}");
                }
            }
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let names: std::vec::Vec<&str> = Algorithm::ALL.iter().map(|a| a.wire_name()).collect();
        assert_eq!(UnknownAlgorithm.to_string(), format!("not an admission-style algorithm ({})", names.join(", ")));
        assert!(UnknownAlgorithm.to_string().starts_with("not an admission-style algorithm (token_bucket, gcra, "));
    }
}
