//! The admission-style algorithms' options, from JavaScript to a
//! [`LimiterSpec`]: the registry's names ([`Algorithm`]) in JavaScript's
//! spelling — `tokenBucket`, `countPerPeriod`, and a duration as two
//! options, `periodMs` or `periodMicros` — and the reading of their values.
//! The JavaScript classes take their option names from here
//! (`limiterKeys`); the composite reads its parts with them, and the keyed
//! and Redis limiters their limit (`part`).
//!
//! Durations come in milliseconds (`windowMs`) or exact microseconds
//! (`windowMicros`), counts as integer numbers or bigints; the library
//! validates the spec, and its errors name the options as the caller wrote
//! them ([`blame`]).

use std::collections::HashMap;
use std::sync::LazyLock;

use napi_derive::napi;
use ratekeeper::{LimiterSpec, Parameter, ParameterKind, ParameterSource};

use crate::args;
use crate::error::{blame, camel_case, Failure, Given};
use crate::js::{Js, Kind};

pub(crate) use ratekeeper::Algorithm;

/// An algorithm's names in JavaScript.
struct JsNames {
    /// The registry's wire name, camelCase (`tokenBucket`).
    name: String,
    /// Its option names, in the order [`build`] takes their values: each
    /// parameter's name camelCase, a duration's twice (`periodMs`,
    /// `periodMicros`).
    keys: Vec<String>,
}

/// The names of every algorithm, in the order of [`Algorithm::ALL`], made
/// once from the registry.
static NAMES: LazyLock<Vec<JsNames>> = LazyLock::new(|| {
    Algorithm::ALL
        .iter()
        .map(|a| JsNames {
            name: camel_case(a.wire_name()),
            keys: a
                .parameters()
                .iter()
                .flat_map(|p| {
                    let name = camel_case(p.name());
                    match p.kind() {
                        ParameterKind::Duration => vec![format!("{name}Ms"), format!("{name}Micros")],
                        ParameterKind::Rate | ParameterKind::Count => vec![name],
                    }
                })
                .collect(),
        })
        .collect()
});

/// What an unknown algorithm name must be: `must be "tokenBucket", …, or
/// "slidingWindowCounter"`.
static ALGORITHM_REQUIREMENT: LazyLock<String> = LazyLock::new(|| {
    let quoted: Vec<String> = NAMES.iter().map(|n| format!("\"{}\"", n.name)).collect();
    match quoted.split_last() {
        Some((last, [])) => format!("must be {last}"),
        Some((last, rest)) => format!("must be {} or {last}", rest.join(", ")),
        None => "must be an algorithm".to_owned(),
    }
});

fn names_of(algorithm: Algorithm) -> &'static JsNames {
    let i = Algorithm::ALL.iter().position(|a| *a == algorithm).unwrap_or_default();
    &NAMES[i]
}

/// The name, camelCase (the registry's wire name in JavaScript's spelling).
pub(crate) fn name(algorithm: Algorithm) -> &'static str {
    &names_of(algorithm).name
}

/// The option names, in the order [`build`] takes their values.
pub(crate) fn keys(algorithm: Algorithm) -> &'static [String] {
    &names_of(algorithm).keys
}

/// The algorithm `value` names (a string), or the error.
pub(crate) fn algorithm_from_js(value: Js, argument: &'static str) -> Result<Algorithm, Failure> {
    let Some(given) = value.string() else {
        return Err(Failure::WrongType { argument, value, expected: "a string" });
    };
    Algorithm::ALL.iter().copied().find(|a| name(*a) == given).ok_or_else(|| Failure::OutOfRange {
        argument,
        value,
        requirement: ALGORITHM_REQUIREMENT.as_str(),
    })
}

/// The option names of every admission-style algorithm, by algorithm:
/// what the JavaScript classes read from their options, in the order the
/// native module takes them.
#[napi(ts_return_type = "Record<string, string[]>")]
pub fn limiter_keys() -> HashMap<String, Vec<String>> {
    NAMES.iter().map(|n| (n.name.clone(), n.keys.clone())).collect()
}

/// Option values in the order of [`keys`] (`undefined` where absent), read
/// in that order as [`LimiterSpec::read`] asks for them (the first bad one
/// is the error), with the arguments as given, for [`blame`].
struct Options<'a> {
    keys: &'static [String],
    values: &'a [Js],
    next: usize,
    given: Vec<Given>,
}

impl Options<'_> {
    /// The next option's name and value.
    fn take(&mut self) -> Result<(&'static str, Js), Failure> {
        let i = self.next;
        self.next += 1;
        match (self.keys.get(i), self.values.get(i)) {
            (Some(key), Some(value)) => Ok((key.as_str(), *value)),
            _ => Err(Failure::Internal(format!("no option value {i}"))),
        }
    }
}

impl ParameterSource for Options<'_> {
    type Error = Failure;

    fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, Failure> {
        let (name, value) = self.take()?;
        let rate = args::number(value, name)?;
        self.given.push(Given { argument: parameter.argument(), name, value });
        Ok(rate)
    }

    /// A count left `undefined` takes the registry's default, if it has one.
    fn count(&mut self, parameter: &'static Parameter) -> Result<u64, Failure> {
        let (name, value) = self.take()?;
        if let (Some(default), Kind::Undefined) = (parameter.default(), value.kind()) {
            return Ok(default);
        }
        self.given.push(Given { argument: parameter.argument(), name, value });
        args::count(value, parameter.argument(), name)
    }

    fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, Failure> {
        let (ms_name, ms) = self.take()?;
        let (micros_name, micros) = self.take()?;
        let (micros, given) = args::required_duration(ms, micros, (ms_name, micros_name), parameter.argument())?;
        self.given.push(given);
        Ok(micros)
    }

    fn out_of_range(&mut self, _: &'static Parameter, error: ratekeeper::Error) -> Failure {
        blame(Err::<(), _>(error), &self.given).err().unwrap_or(Failure::Library(error))
    }
}

/// The spec of `algorithm` from option values in the order of its
/// [`keys`], checked by building it: `build` makes the
/// limiter (or the core), whose invalid-argument error is blamed on the
/// option given.
pub(crate) fn build<L>(
    algorithm: Algorithm,
    values: &[Js],
    build: impl FnOnce(&LimiterSpec) -> Result<L, ratekeeper::Error>,
) -> Result<(LimiterSpec, L), Failure> {
    let keys = keys(algorithm);
    if values.len() != keys.len() {
        return Err(Failure::Internal(format!("{} takes {} option values", name(algorithm), keys.len())));
    }
    let mut options = Options { keys, values, next: 0, given: Vec::with_capacity(3) };
    let spec = LimiterSpec::read(algorithm, &mut options)?;
    let built = blame(build(&spec), &options.given)?;
    Ok((spec, built))
}

/// A limit as one options object: `algorithm` and that algorithm's
/// options, nothing else (a composite's part, a keyed or Redis limiter's
/// limit). `argument` names it when it is not an object.
pub(crate) fn part(value: Js, argument: &'static str) -> Result<(Algorithm, Vec<Js>), Failure> {
    if value.kind() != Kind::Object {
        return Err(Failure::WrongType { argument, value, expected: "an object" });
    }
    let algorithm = algorithm_from_js(value.property("algorithm")?, "algorithm")?;
    let mut known = keys(algorithm).to_vec();
    known.push("algorithm".to_owned());
    args::check_options(value, &known)?;
    let values = keys(algorithm).iter().map(|k| value.property(k)).collect::<Result<Vec<_>, _>>()?;
    Ok((algorithm, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names JavaScript has always had, now spelled from the registry.
    #[test]
    fn javascript_names_are_the_registrys_in_camel_case() {
        let expected: [(Algorithm, &str, &[&str]); 8] = [
            (Algorithm::TokenBucket, "tokenBucket", &["rate", "burst"]),
            (Algorithm::Gcra, "gcra", &["maxBurst", "countPerPeriod", "periodMs", "periodMicros"]),
            (
                Algorithm::LeakyBucketMeter,
                "leakyBucketMeter",
                &["capacity", "countPerPeriod", "periodMs", "periodMicros"],
            ),
            (Algorithm::LeakyBucketQueue, "leakyBucketQueue", &["capacity", "intervalMs", "intervalMicros", "slack"]),
            (Algorithm::FixedWindow, "fixedWindow", &["limit", "windowMs", "windowMicros"]),
            (Algorithm::SlidingWindow, "slidingWindow", &["limit", "windowMs", "windowMicros", "subWindows"]),
            (Algorithm::SlidingLog, "slidingLog", &["limit", "windowMs", "windowMicros"]),
            (Algorithm::SlidingWindowCounter, "slidingWindowCounter", &["limit", "windowMs", "windowMicros"]),
        ];
        for (algorithm, js_name, js_keys) in expected {
            assert_eq!(name(algorithm), js_name);
            assert_eq!(keys(algorithm), js_keys);
        }
        let last = name(*Algorithm::ALL.last().unwrap());
        assert!(ALGORITHM_REQUIREMENT.starts_with(
            "must be \"tokenBucket\", \"gcra\", \"leakyBucketMeter\", \"leakyBucketQueue\", \"fixedWindow\", \
             \"slidingWindow\", \"slidingLog\""
        ));
        assert!(ALGORITHM_REQUIREMENT.ends_with(&format!(" or \"{last}\"")), "{}", *ALGORITHM_REQUIREMENT);
        assert_eq!(ALGORITHM_REQUIREMENT.matches(", ").count(), Algorithm::ALL.len() - 2);
    }
}
