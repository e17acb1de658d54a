//! [`rk_limiter_spec`]: any admission-style algorithm described by plain
//! numbers, as C code writes it (a designated initializer), and its
//! conversion to the std layer's `LimiterSpec` — the one place where the C
//! API's counts and fields become an algorithm's parameters, shared by
//! `rk_limiter_new()`, the typed constructors and the composite limiter.

use std::ffi::CStr;

use ratekeeper::{unsigned_from_i64, Algorithm, LimiterSpec, Parameter, ParameterSource, Value};

use crate::failure::Failure;

/// Which admission-style algorithm an `rk_limiter_spec` describes, or an
/// `rk_limiter` is: one of the `RK_ALGORITHM_*` constants. 0 is none, so a
/// zeroed spec is an error rather than some limiter.
pub type rk_algorithm = u32;

/// Go's `golang.org/x/time/rate` token bucket: `rate`, `burst`.
pub const RK_ALGORITHM_TOKEN_BUCKET: rk_algorithm = 1;
/// GCRA with redis-cell's reply: `max_burst`, `count_per_period`,
/// `period_micros`.
pub const RK_ALGORITHM_GCRA: rk_algorithm = 2;
/// The leaky bucket as a meter (overflow refused): `capacity`,
/// `count_per_period`, `period_micros`.
pub const RK_ALGORITHM_LEAKY_BUCKET_METER: rk_algorithm = 3;
/// The leaky bucket as a queue (each request gets a slot and a wait):
/// `capacity`, `interval_micros`, and `slack` (0 unless set).
pub const RK_ALGORITHM_LEAKY_BUCKET_QUEUE: rk_algorithm = 4;
/// `limit` units per aligned window: `limit`, `window_micros`.
pub const RK_ALGORITHM_FIXED_WINDOW: rk_algorithm = 5;
/// `limit` units in the last `sub_windows` sub-windows: `limit`,
/// `window_micros`, `sub_windows`.
pub const RK_ALGORITHM_SLIDING_WINDOW: rk_algorithm = 6;
/// Exactly `limit` units in any window (a log of them): `limit`,
/// `window_micros`.
pub const RK_ALGORITHM_SLIDING_LOG: rk_algorithm = 7;
/// About `limit` units per sliding window (two counters, weighted):
/// `limit`, `window_micros`.
pub const RK_ALGORITHM_SLIDING_WINDOW_COUNTER: rk_algorithm = 8;

/// An admission-style limiter's algorithm and parameters, for
/// `rk_limiter_new()` and `rk_composite_limiter_new()`. Set `algorithm` and
/// the fields it lists (`RK_ALGORITHM_*`); every other field must be 0 (a
/// designated initializer zeroes them), so that a field meant for another
/// algorithm is an error, never silently ignored:
///
/// ```c
/// rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 100, .window_micros = 60000000};
/// ```
///
/// Counts are `int64_t` and must not be negative; durations are whole
/// microseconds. A parameter whose default is 0 (`slack`) may be left 0. Each algorithm checks its own ranges when the limiter is
/// created (`RK_INVALID_ARGUMENT` naming the field).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct rk_limiter_spec {
    /// One of the `RK_ALGORITHM_*` constants.
    pub algorithm: rk_algorithm,
    /// Token bucket: tokens per second; 0 never refills, `INFINITY` admits
    /// everything; not negative or NaN.
    pub rate: f64,
    /// Token bucket: the bucket's size (it starts full).
    pub burst: i64,
    /// GCRA: redis-cell's `max_burst`; the limit is `max_burst + 1`.
    pub max_burst: i64,
    /// GCRA, leaky bucket meter: units per period (at least 1).
    pub count_per_period: i64,
    /// GCRA, leaky bucket meter: the period (at least 1 µs).
    /// Durations are whole microseconds from 1 to `INT64_MAX` (about 292,271
    /// years), the range every language's durations share.
    pub period_micros: i64,
    /// Leaky bucket meter: the bucket's size in units (1 to `INT64_MAX`);
    /// leaky bucket queue: how many units may wait (0 admits only when idle).
    pub capacity: i64,
    /// Leaky bucket queue: the spacing of slots (at least 1 µs).
    pub interval_micros: i64,
    /// Windows: units per window (at least 1; a sliding log's at most
    /// 1048576, a sliding window's at most `UINT32_MAX`).
    pub limit: i64,
    /// Windows: the window's length (at least 1 µs).
    pub window_micros: i64,
    /// Sliding window: sub-windows per window, 1 to 16, dividing
    /// `window_micros`.
    pub sub_windows: i64,
    /// Leaky bucket queue: how many slots left unused while idle may be
    /// handed out late (uber-go/ratelimit's `WithSlack`; 0 to `INT64_MAX`,
    /// 0 saves none).
    pub slack: i64,
}

/// The `RK_ALGORITHM_*` of each of the registry's algorithms.
pub(crate) const fn code(algorithm: Algorithm) -> rk_algorithm {
    match algorithm {
        Algorithm::TokenBucket => RK_ALGORITHM_TOKEN_BUCKET,
        Algorithm::Gcra => RK_ALGORITHM_GCRA,
        Algorithm::LeakyBucketMeter => RK_ALGORITHM_LEAKY_BUCKET_METER,
        Algorithm::LeakyBucketQueue => RK_ALGORITHM_LEAKY_BUCKET_QUEUE,
        Algorithm::FixedWindow => RK_ALGORITHM_FIXED_WINDOW,
        Algorithm::SlidingWindow => RK_ALGORITHM_SLIDING_WINDOW,
        Algorithm::SlidingLog => RK_ALGORITHM_SLIDING_LOG,
        Algorithm::SlidingWindowCounter => RK_ALGORITHM_SLIDING_WINDOW_COUNTER,
    }
}

/// The algorithm an `RK_ALGORITHM_*` names, if any.
pub(crate) fn algorithm_of_code(value: rk_algorithm) -> Option<Algorithm> {
    Algorithm::ALL.iter().copied().find(|a| code(*a) == value)
}

/// An algorithm's name as the conformance vectors, the other languages
/// and `rk_algorithm_name()` spell it (the registry's wire name, with its
/// NUL: static, never allocated); `None` for a value that is not an
/// `RK_ALGORITHM_*`.
pub(crate) fn algorithm_name(algorithm: rk_algorithm) -> Option<&'static CStr> {
    algorithm_of_code(algorithm).map(Algorithm::wire_name_cstr)
}

/// The `RK_ALGORITHM_*` of a limiter built from `spec`.
pub(crate) fn algorithm_of(spec: &LimiterSpec) -> rk_algorithm {
    code(spec.kind())
}

impl rk_limiter_spec {
    /// The std layer's description of the same limiter. Errors on an
    /// unknown algorithm, a negative count, or a field the algorithm does
    /// not use that is not 0; the algorithm's own ranges are checked when
    /// the limiter is built.
    pub(crate) fn to_spec(self) -> Result<LimiterSpec, Failure> {
        let Some(algorithm) = algorithm_of_code(self.algorithm) else {
            return Err(Failure::Invalid {
                argument: "algorithm",
                value: Value::Int(i64::from(self.algorithm)),
                requirement: "must be one of the RK_ALGORITHM_* constants",
            });
        };
        let spec = LimiterSpec::read(algorithm, &mut Fields(&self))?;
        self.check_unused(&spec)?;
        Ok(spec)
    }

    /// Every field but `algorithm`, by name (the registry's wire name of
    /// the parameter it holds), with its value.
    fn fields(&self) -> [(&'static str, Value); 11] {
        [
            ("rate", Value::Float(self.rate)),
            ("burst", Value::Int(self.burst)),
            ("max_burst", Value::Int(self.max_burst)),
            ("count_per_period", Value::Int(self.count_per_period)),
            ("period_micros", Value::Int(self.period_micros)),
            ("capacity", Value::Int(self.capacity)),
            ("interval_micros", Value::Int(self.interval_micros)),
            ("limit", Value::Int(self.limit)),
            ("window_micros", Value::Int(self.window_micros)),
            ("sub_windows", Value::Int(self.sub_windows)),
            ("slack", Value::Int(self.slack)),
        ]
    }

    /// Every field `spec`'s algorithm does not use must be 0.
    fn check_unused(&self, spec: &LimiterSpec) -> Result<(), Failure> {
        let parameters = spec.kind().parameters();
        for (field, value) in self.fields() {
            let set = match value {
                Value::Float(v) => v != 0.0,
                Value::Int(v) => v != 0,
            };
            if set && !parameters.iter().any(|p| p.wire_name() == field) {
                return Err(Failure::Invalid {
                    argument: field,
                    value,
                    requirement: "must be 0: the algorithm has no such parameter",
                });
            }
        }
        Ok(())
    }
}

/// An `rk_limiter_spec`'s fields as the parameters of its algorithm: each
/// read from the field of its wire name, counts checked not negative.
struct Fields<'a>(&'a rk_limiter_spec);

impl Fields<'_> {
    fn field(&self, parameter: &'static Parameter) -> Result<Value, Failure> {
        let name = parameter.wire_name();
        self.0.fields().into_iter().find(|(field, _)| *field == name).map(|(_, value)| value).ok_or(
            // A parameter without a field: the tests below keep this from happening.
            Failure::Invalid {
                argument: name,
                value: Value::Int(0),
                requirement: "must be a field of rk_limiter_spec",
            },
        )
    }

    fn int(&self, parameter: &'static Parameter) -> Result<i64, Failure> {
        match self.field(parameter)? {
            Value::Int(v) => Ok(v),
            Value::Float(v) => Ok(v as i64),
        }
    }
}

impl ParameterSource for Fields<'_> {
    type Error = Failure;

    fn rate(&mut self, parameter: &'static Parameter) -> Result<f64, Failure> {
        match self.field(parameter)? {
            Value::Float(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
        }
    }

    fn count(&mut self, parameter: &'static Parameter) -> Result<u64, Failure> {
        Ok(unsigned_from_i64(parameter.argument(), self.int(parameter)?)?)
    }

    fn micros(&mut self, parameter: &'static Parameter) -> Result<i64, Failure> {
        self.int(parameter)
    }

    fn out_of_range(&mut self, _: &'static Parameter, error: ratekeeper::Error) -> Failure {
        Failure::Library(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_registrys() {
        let mut codes = Vec::new();
        for algorithm in Algorithm::ALL {
            let name = algorithm_name(code(*algorithm)).unwrap();
            assert_eq!(name.to_str().unwrap(), algorithm.wire_name());
            assert_eq!(algorithm_of_code(code(*algorithm)), Some(*algorithm));
            codes.push(code(*algorithm));
        }
        codes.sort_unstable();
        assert_eq!(codes, (1..=Algorithm::ALL.len() as rk_algorithm).collect::<Vec<_>>(), "1, 2, … with no gap");
        assert_eq!(algorithm_name(0), None);
        assert_eq!(algorithm_name(Algorithm::ALL.len() as rk_algorithm + 1), None);
    }

    /// Each parameter of every algorithm has its field, of its kind: an
    /// algorithm with a new parameter needs a field in `rk_limiter_spec`.
    #[test]
    fn every_parameter_has_a_field() {
        let spec = rk_limiter_spec::default();
        for algorithm in Algorithm::ALL {
            for parameter in algorithm.parameters() {
                let value = Fields(&spec).field(parameter).unwrap_or_else(|_| panic!("{}", parameter.wire_name()));
                let float = matches!(value, Value::Float(_));
                assert_eq!(float, parameter.kind() == ratekeeper::ParameterKind::Rate, "{}", parameter.wire_name());
            }
        }
    }

    /// The header (generated from this crate, and checked for drift by CI)
    /// against the registry: each algorithm's `RK_ALGORITHM_*`, its name in
    /// `rk_algorithm_name()`'s documentation, and its typed constructor
    /// `rk_limiter_new_<wire name>` taking its parameters in order, by their
    /// wire names — but for those whose default is 0, which a zeroed field
    /// gives: for each of them `rk_limiter_new_<wire name>_with_<name>`
    /// takes every parameter.
    #[test]
    fn the_header_declares_every_algorithm() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/ratekeeper.h");
        let header = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        for algorithm in Algorithm::ALL {
            let wire = algorithm.wire_name();
            let define = format!("#define RK_ALGORITHM_{} {}\n", wire.to_uppercase(), code(*algorithm));
            assert!(header.contains(&define), "no {define:?}");
            assert!(header.contains(&format!("`\"{wire}\"`")), "rk_algorithm_name() does not name {wire}");
            let declared = |start: &str| {
                let at = header.find(start).unwrap_or_else(|| panic!("no {start}"));
                let arguments = &header[at + start.len()..];
                words(&arguments[..arguments.find(')').unwrap()])
            };
            let expected = |all: bool| {
                let mut expected: Vec<String> = algorithm
                    .parameters()
                    .iter()
                    .filter(|p| all || p.default() != Some(0))
                    .map(|p| match p.kind() {
                        ratekeeper::ParameterKind::Rate => format!("double {}", p.wire_name()),
                        _ => format!("int64_t {}", p.wire_name()),
                    })
                    .collect();
                expected.extend(["const rk_manual_clock *clock".to_owned(), "rk_limiter **out_limiter".to_owned()]);
                expected.join(", ")
            };
            let start = format!("rk_status rk_limiter_new_{wire}(");
            assert_eq!(declared(&start), expected(false), "{start}");
            for optional in algorithm.parameters().iter().filter(|p| p.default() == Some(0)) {
                let start = format!("rk_status rk_limiter_new_{wire}_with_{}(", optional.name());
                assert_eq!(declared(&start), expected(true), "{start}");
            }
        }
    }

    #[test]
    fn a_spec_converts_and_refuses_what_its_algorithm_does_not_use() {
        let spec =
            rk_limiter_spec { algorithm: RK_ALGORITHM_FIXED_WINDOW, limit: 5, window_micros: 10, ..Default::default() };
        assert_eq!(spec.to_spec().unwrap(), LimiterSpec::FixedWindow { limit: 5, window_micros: 10 });
        let stray = rk_limiter_spec { burst: 3, ..spec };
        let failure = stray.to_spec().unwrap_err();
        assert_eq!(failure.argument(), Some("burst"));
        let negative = rk_limiter_spec { limit: -1, ..spec };
        assert_eq!(negative.to_spec().unwrap_err().argument(), Some("limit"));
        let unknown = rk_limiter_spec { algorithm: 0, ..spec };
        assert_eq!(unknown.to_spec().unwrap_err().argument(), Some("algorithm"));
        let sub = rk_limiter_spec { algorithm: RK_ALGORITHM_SLIDING_WINDOW, sub_windows: 1 << 40, ..spec };
        assert_eq!(sub.to_spec().unwrap_err().argument(), Some("sub_windows"));
        let queue = rk_limiter_spec {
            algorithm: RK_ALGORITHM_LEAKY_BUCKET_QUEUE,
            capacity: 2,
            interval_micros: 10,
            ..Default::default()
        };
        assert_eq!(
            queue.to_spec().unwrap(),
            LimiterSpec::LeakyBucketQueue { capacity: 2, interval_micros: 10, slack: 0 }
        );
        let slack = rk_limiter_spec { slack: 7, ..queue };
        assert_eq!(
            slack.to_spec().unwrap(),
            LimiterSpec::LeakyBucketQueue { capacity: 2, interval_micros: 10, slack: 7 }
        );
        assert_eq!(rk_limiter_spec { slack: -1, ..queue }.to_spec().unwrap_err().argument(), Some("slack"));
        assert_eq!(rk_limiter_spec { slack: 7, ..spec }.to_spec().unwrap_err().argument(), Some("slack"));
        let tb = rk_limiter_spec { algorithm: RK_ALGORITHM_TOKEN_BUCKET, rate: -0.0, burst: 0, ..Default::default() };
        assert_eq!(tb.to_spec().unwrap(), LimiterSpec::TokenBucket { rate: -0.0, burst: 0 });
    }
}
