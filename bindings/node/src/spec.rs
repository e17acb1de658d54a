//! The admission-style algorithms' options, from JavaScript to a
//! [`LimiterSpec`]: the one place that knows each algorithm's name and
//! option names. The JavaScript classes take their option names from here
//! (`limiterKeys`); the composite reads its parts with them, and the keyed
//! and Redis limiters their limit (`part`).
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

    /// The option names, in the order [`build`] takes their values.
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
/// (`undefined` where absent), read in that order (the first bad one is
/// the error), and the arguments as given, for [`blame`].
fn describe(algorithm: Algorithm, v: &[Js]) -> Result<(LimiterSpec, Vec<Given>), Failure> {
    let keys = algorithm.keys();
    let mut given = Vec::with_capacity(3);
    let given = &mut given;
    let count = |i: usize, argument, given: &mut Vec<Given>| {
        given.push(Given { argument, name: keys[i], value: v[i] });
        args::count(v[i], argument, keys[i])
    };
    let spec = match algorithm {
        Algorithm::TokenBucket => {
            let rate = args::number(v[0], "rate")?;
            given.push(Given { argument: Argument::Rate, name: "rate", value: v[0] });
            LimiterSpec::TokenBucket { rate, burst: count(1, Argument::Burst, given)? }
        }
        Algorithm::Gcra => {
            let max_burst = count(0, Argument::MaxBurst, given)?;
            let count_per_period = count(1, Argument::CountPerPeriod, given)?;
            LimiterSpec::Gcra {
                max_burst,
                count_per_period,
                period_micros: duration(v, keys, 2, Argument::Period, given)?,
            }
        }
        Algorithm::LeakyBucketMeter => {
            let capacity = count(0, Argument::Capacity, given)?;
            let count_per_period = count(1, Argument::CountPerPeriod, given)?;
            let period_micros = duration(v, keys, 2, Argument::Period, given)?;
            LimiterSpec::LeakyBucketMeter { capacity, count_per_period, period_micros }
        }
        Algorithm::LeakyBucketQueue => {
            let capacity = count(0, Argument::QueueCapacity, given)?;
            LimiterSpec::LeakyBucketQueue {
                capacity,
                interval_micros: duration(v, keys, 1, Argument::Interval, given)?,
            }
        }
        Algorithm::FixedWindow | Algorithm::SlidingLog | Algorithm::SlidingWindowCounter => {
            // The sliding log's bound is its own (the library's variant
            // for it), so that a negative limit names it too.
            let limit_argument =
                if algorithm == Algorithm::SlidingLog { Argument::SlidingLogLimit } else { Argument::Limit };
            let limit = count(0, limit_argument, given)?;
            let window_micros = duration(v, keys, 1, Argument::Window, given)?;
            match algorithm {
                Algorithm::FixedWindow => LimiterSpec::FixedWindow { limit, window_micros },
                Algorithm::SlidingLog => LimiterSpec::SlidingLog { limit, window_micros },
                _ => LimiterSpec::SlidingWindowCounter { limit, window_micros },
            }
        }
        Algorithm::SlidingWindow => {
            let limit = count(0, Argument::SlidingWindowLimit, given)?;
            let window_micros = duration(v, keys, 1, Argument::Window, given)?;
            let sub_windows = args::count(v[3], Argument::SubWindows, keys[3])?;
            given.push(Given { argument: Argument::SubWindows, name: keys[3], value: v[3] });
            // Above `u32::MAX` is the library's error like any value above 16.
            let sub_windows = u32::try_from(sub_windows)
                .map_err(|_| ratekeeper::Error::invalid_uint(Argument::SubWindows, sub_windows));
            LimiterSpec::SlidingWindow { limit, window_micros, sub_windows: blame(sub_windows, given)? }
        }
    };
    Ok((spec, std::mem::take(given)))
}

/// The duration whose two options (milliseconds, microseconds) are at
/// `i` and `i + 1`, remembered in `given`.
fn duration(
    v: &[Js],
    keys: &[&'static str],
    i: usize,
    argument: Argument,
    given: &mut Vec<Given>,
) -> Result<i64, Failure> {
    let (micros, g) = args::required_duration(v[i], v[i + 1], (keys[i], keys[i + 1]), argument)?;
    given.push(g);
    Ok(micros)
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

/// A limit as one options object: `algorithm` and that algorithm's
/// options, nothing else (a composite's part, a keyed or Redis limiter's
/// limit). `argument` names it when it is not an object.
pub(crate) fn part(value: Js, argument: &'static str) -> Result<(Algorithm, Vec<Js>), Failure> {
    if value.kind() != Kind::Object {
        return Err(Failure::WrongType { argument, value, expected: "an object" });
    }
    let algorithm = Algorithm::from_js(value.property("algorithm")?, "algorithm")?;
    let mut known: Vec<String> = algorithm.keys().iter().map(|k| (*k).to_owned()).collect();
    known.push("algorithm".to_owned());
    args::check_options(value, &known)?;
    let values = algorithm.keys().iter().map(|k| value.property(k)).collect::<Result<Vec<_>, _>>()?;
    Ok((algorithm, values))
}
