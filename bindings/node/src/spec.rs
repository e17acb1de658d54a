//! The admission-style algorithms' options, from JavaScript to a
//! [`LimiterSpec`]: the one place that knows each algorithm's name and
//! option names. The JavaScript classes take their option names from here
//! (`limiterKeys`), the composite reads its parts with them, and a keyed
//! limiter would describe its template the same way.
//!
//! Durations come in milliseconds (`windowMs`) or exact microseconds
//! (`windowMicros`), counts as integer numbers or bigints; the library
//! validates the spec, and its errors name the options as the caller wrote
//! them ([`blame`]).

use std::collections::HashMap;

use napi_derive::napi;
use ratekeeper::{Argument, LimiterSpec};

use crate::args;
use crate::error::{blame, Failure, Given};
use crate::js::{Js, Kind};

/// An admission-style algorithm as JavaScript names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    TokenBucket,
    Gcra,
    LeakyBucketMeter,
    LeakyBucketQueue,
    FixedWindow,
    SlidingWindow,
    SlidingLog,
    SlidingWindowCounter,
}

const ALL: [Algorithm; 8] = [
    Algorithm::TokenBucket,
    Algorithm::Gcra,
    Algorithm::LeakyBucketMeter,
    Algorithm::LeakyBucketQueue,
    Algorithm::FixedWindow,
    Algorithm::SlidingWindow,
    Algorithm::SlidingLog,
    Algorithm::SlidingWindowCounter,
];

/// What an unknown algorithm name must be.
const ALGORITHM_REQUIREMENT: &str = "must be \"tokenBucket\", \"gcra\", \"leakyBucketMeter\", \"leakyBucketQueue\", \
                                     \"fixedWindow\", \"slidingWindow\", \"slidingLog\" or \"slidingWindowCounter\"";

impl Algorithm {
    /// The name, camelCase (the library's `LimiterSpec::algorithm`, in
    /// JavaScript's spelling).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Algorithm::TokenBucket => "tokenBucket",
            Algorithm::Gcra => "gcra",
            Algorithm::LeakyBucketMeter => "leakyBucketMeter",
            Algorithm::LeakyBucketQueue => "leakyBucketQueue",
            Algorithm::FixedWindow => "fixedWindow",
            Algorithm::SlidingWindow => "slidingWindow",
            Algorithm::SlidingLog => "slidingLog",
            Algorithm::SlidingWindowCounter => "slidingWindowCounter",
        }
    }

    /// The option names, in the order [`spec`] takes their values.
    pub(crate) const fn keys(self) -> &'static [&'static str] {
        match self {
            Algorithm::TokenBucket => &["rate", "burst"],
            Algorithm::Gcra => &["maxBurst", "countPerPeriod", "periodMs", "periodMicros"],
            Algorithm::LeakyBucketMeter => &["capacity", "countPerPeriod", "periodMs", "periodMicros"],
            Algorithm::LeakyBucketQueue => &["capacity", "intervalMs", "intervalMicros"],
            Algorithm::FixedWindow | Algorithm::SlidingLog | Algorithm::SlidingWindowCounter => {
                &["limit", "windowMs", "windowMicros"]
            }
            Algorithm::SlidingWindow => &["limit", "windowMs", "windowMicros", "subWindows"],
        }
    }

    /// The algorithm `value` names (a string), or the error.
    pub(crate) fn from_js(value: Js, argument: &'static str) -> Result<Self, Failure> {
        let Some(name) = value.string() else {
            return Err(Failure::WrongType { argument, value, expected: "a string" });
        };
        ALL.into_iter().find(|a| a.name() == name).ok_or(Failure::OutOfRange {
            argument,
            value,
            requirement: ALGORITHM_REQUIREMENT,
        })
    }
}

/// The option names of every admission-style algorithm, by algorithm:
/// what the JavaScript classes read from their options, in the order the
/// native module takes them.
#[napi(ts_return_type = "Record<string, string[]>")]
pub fn limiter_keys() -> HashMap<String, Vec<String>> {
    ALL.into_iter().map(|a| (a.name().to_owned(), a.keys().iter().map(|k| (*k).to_owned()).collect())).collect()
}

/// A spec from option values in the order of [`Algorithm::keys`]
/// (`undefined` where absent), and the arguments as given, for [`blame`].
fn describe(algorithm: Algorithm, v: &[Js]) -> Result<(LimiterSpec, Vec<Given>), Failure> {
    let keys = algorithm.keys();
    let mut given = Vec::with_capacity(3);
    let mut count = |i: usize, argument| {
        given.push(Given { argument, name: keys[i], value: v[i] });
        args::count(v[i], argument, keys[i])
    };
    let (a, b) = match algorithm {
        Algorithm::TokenBucket => (None, count(1, Argument::Burst)?),
        Algorithm::Gcra => (Some(count(0, Argument::MaxBurst)?), count(1, Argument::CountPerPeriod)?),
        Algorithm::LeakyBucketMeter => (Some(count(0, Argument::Capacity)?), count(1, Argument::CountPerPeriod)?),
        Algorithm::SlidingWindow => (Some(count(0, Argument::Limit)?), count(3, Argument::SubWindows)?),
        Algorithm::LeakyBucketQueue => (None, count(0, Argument::Capacity)?),
        Algorithm::FixedWindow | Algorithm::SlidingLog | Algorithm::SlidingWindowCounter => {
            (None, count(0, Argument::Limit)?)
        }
    };
    // The duration, for the algorithms that have one: after its counts (the
    // order the errors come in when several arguments are wrong).
    let mut duration = |i: usize, argument| {
        let (micros, g) = args::required_duration(v[i], v[i + 1], (keys[i], keys[i + 1]), argument)?;
        given.push(g);
        Ok::<i64, Failure>(micros)
    };
    let spec = match algorithm {
        Algorithm::TokenBucket => {
            let rate = args::number(v[0], "rate")?;
            given.push(Given { argument: Argument::Rate, name: "rate", value: v[0] });
            LimiterSpec::TokenBucket { rate, burst: b }
        }
        Algorithm::Gcra => LimiterSpec::Gcra {
            max_burst: a.unwrap_or(0),
            count_per_period: b,
            period_micros: duration(2, Argument::Period)?,
        },
        Algorithm::LeakyBucketMeter => LimiterSpec::LeakyBucketMeter {
            capacity: a.unwrap_or(0),
            count_per_period: b,
            period_micros: duration(2, Argument::Period)?,
        },
        Algorithm::LeakyBucketQueue => {
            LimiterSpec::LeakyBucketQueue { capacity: b, interval_micros: duration(1, Argument::Interval)? }
        }
        Algorithm::FixedWindow => LimiterSpec::FixedWindow { limit: b, window_micros: duration(1, Argument::Window)? },
        Algorithm::SlidingLog => LimiterSpec::SlidingLog { limit: b, window_micros: duration(1, Argument::Window)? },
        Algorithm::SlidingWindowCounter => {
            LimiterSpec::SlidingWindowCounter { limit: b, window_micros: duration(1, Argument::Window)? }
        }
        Algorithm::SlidingWindow => {
            let window_micros = duration(1, Argument::Window)?;
            // Above `u32::MAX` is the library's error like any value above 16.
            let sub_windows = u32::try_from(b).map_err(|_| ratekeeper::Error::invalid_uint(Argument::SubWindows, b));
            let sub_windows = blame(sub_windows, &given)?;
            LimiterSpec::SlidingWindow { limit: a.unwrap_or(0), window_micros, sub_windows }
        }
    };
    Ok((spec, given))
}

/// The spec of `algorithm` from option values in the order of its
/// [`keys`](Algorithm::keys), checked by building it: `build` makes the
/// limiter (or the core), whose invalid-argument error is blamed on the
/// option given.
pub(crate) fn build<L>(
    algorithm: Algorithm,
    values: &[Js],
    build: impl FnOnce(&LimiterSpec) -> Result<L, ratekeeper::Error>,
) -> Result<(LimiterSpec, L), Failure> {
    if values.len() != algorithm.keys().len() {
        return Err(Failure::Internal(format!("{} takes {} option values", algorithm.name(), algorithm.keys().len())));
    }
    let (spec, given) = describe(algorithm, values)?;
    let built = blame(build(&spec), &given)?;
    Ok((spec, built))
}

/// A composite's part: an options object with `algorithm` and that
/// algorithm's options, nothing else.
pub(crate) fn part(value: Js) -> Result<(Algorithm, Vec<Js>), Failure> {
    if value.kind() != Kind::Object {
        return Err(Failure::WrongType { argument: "options", value, expected: "an object" });
    }
    let algorithm = Algorithm::from_js(value.property("algorithm")?, "algorithm")?;
    let mut known: Vec<String> = algorithm.keys().iter().map(|k| (*k).to_owned()).collect();
    known.push("algorithm".to_owned());
    args::check_options(value, &known)?;
    let values = algorithm.keys().iter().map(|k| value.property(k)).collect::<Result<Vec<_>, _>>()?;
    Ok((algorithm, values))
}
