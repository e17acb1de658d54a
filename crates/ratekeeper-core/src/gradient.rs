//! The gradient rule: a concurrency limit that follows the round-trip time.
//!
//! When a service is not overloaded its round-trip time (RTT) sits near
//! the *no-load* RTT; as requests queue up, the RTT grows. The gradient
//! `rtt_noload / rtt` measures that, and the limit follows it:
//!
//! ```text
//! new_limit = limit × gradient + queue_size
//! ```
//!
//! growing by `queue_size` while the RTT stays near the no-load RTT and
//! shrinking as it rises. This is Netflix concurrency-limits'
//! `GradientLimit` (`concurrency-limits-core/.../limit/GradientLimit.java`),
//! rule for rule:
//!
//! * the no-load RTT is the smallest RTT seen since the last probe;
//! * `gradient = max(0.5, min(1.0, rtt_tolerance × rtt_noload / rtt))` — an
//!   RTT within `rtt_tolerance` of the no-load RTT counts as no queueing,
//!   and one sample never more than halves the limit;
//! * a dropped request multiplies the limit by `backoff_ratio` instead;
//! * while fewer than half the limit are in flight the limit does not grow
//!   (the caller, not the service, is the bottleneck);
//! * a decrease is smoothed: `limit × (1 − smoothing) + new × smoothing`,
//!   never below `min_limit`;
//! * the result is kept within `[queue_size, max_limit]`;
//! * every `probe_interval` samples the limit drops to `max(min_limit,
//!   queue_size)` and the no-load RTT is forgotten, so that a service that
//!   got permanently slower is re-measured.
//!
//! Two differences: Netflix adds a random jitter of up to one interval to
//! each probe countdown (to spread probes across instances); here the
//! countdown is exactly `probe_interval` so that the limit is a function of
//! its samples (vary the interval per instance to spread probes). And
//! Netflix's `queueSize` defaults to a function of the limit (`max(4,
//! √limit)`); here it is a fixed number (Netflix's `queueSize(int)`).
//! RTTs are whole microseconds; an RTT of 0 counts as 1.

use crate::error::{Argument, Error};

/// The state and parameters of the gradient rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gradient {
    /// Netflix's `estimatedLimit`.
    pub(crate) estimated_limit: f64,
    /// The smallest RTT since the last probe, µs; 0 = none yet.
    pub(crate) rtt_noload: i64,
    /// Samples left before the next probe.
    pub(crate) probe_countdown: u64,
    pub(crate) config: GradientConfig,
}

/// The gradient rule's parameters (Netflix's builder, with its defaults in
/// [`GradientConfig::default`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientConfig {
    /// The limit to start from.
    pub initial_limit: u64,
    /// The smallest limit a decrease may reach.
    pub min_limit: u64,
    /// The largest limit (Netflix's `maxConcurrency`), at most `i64::MAX`.
    pub max_limit: u64,
    /// How much of a decrease to apply at once, in `(0, 1]`.
    pub smoothing: f64,
    /// How much slower than the no-load RTT still counts as no queueing,
    /// at least 1.
    pub rtt_tolerance: f64,
    /// The headroom added to the limit, at most `max_limit`.
    pub queue_size: u64,
    /// The factor applied on a drop, in `[0.5, 1]`.
    pub backoff_ratio: f64,
    /// Samples between probes for a new no-load RTT; 0 disables probing.
    pub probe_interval: u64,
}

impl Default for GradientConfig {
    /// Netflix's defaults: initial 50, minimum 1, maximum 1000, smoothing
    /// 0.2, tolerance 2.0, queue size 4, backoff 0.9, probe every 1000
    /// samples.
    fn default() -> Self {
        GradientConfig {
            initial_limit: 50,
            min_limit: 1,
            max_limit: 1_000,
            smoothing: 0.2,
            rtt_tolerance: 2.0,
            queue_size: 4,
            backoff_ratio: 0.9,
            probe_interval: 1_000,
        }
    }
}

impl GradientConfig {
    /// Checks every parameter; the first invalid one is the error.
    pub fn validate(&self) -> Result<(), Error> {
        let int = |argument, v: u64| Err(Error::invalid_uint(argument, v));
        if self.min_limit == 0 || self.min_limit > i64::MAX as u64 {
            return int(Argument::MinLimit, self.min_limit);
        }
        if self.max_limit < self.min_limit || self.max_limit > i64::MAX as u64 {
            return int(Argument::MaxLimit, self.max_limit);
        }
        if !(self.min_limit..=self.max_limit).contains(&self.initial_limit) {
            return int(Argument::InitialLimit, self.initial_limit);
        }
        if !(self.smoothing > 0.0 && self.smoothing <= 1.0) {
            return Err(Error::invalid_float(Argument::Smoothing, self.smoothing));
        }
        if !(self.rtt_tolerance >= 1.0 && self.rtt_tolerance.is_finite()) {
            return Err(Error::invalid_float(Argument::RttTolerance, self.rtt_tolerance));
        }
        if self.queue_size > self.max_limit {
            return int(Argument::QueueSize, self.queue_size);
        }
        if !(0.5..=1.0).contains(&self.backoff_ratio) {
            return Err(Error::invalid_float(Argument::GradientBackoffRatio, self.backoff_ratio));
        }
        if self.probe_interval > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::ProbeInterval, self.probe_interval));
        }
        Ok(())
    }
}

impl Gradient {
    /// The gradient rule with `config`; errors on an invalid parameter.
    pub fn new(config: GradientConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(Gradient {
            estimated_limit: config.initial_limit as f64,
            rtt_noload: 0,
            probe_countdown: config.probe_interval,
            config,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &GradientConfig {
        &self.config
    }

    /// The current limit: the estimate, truncated (Netflix's `(int)`), and
    /// kept within `[min_limit, max_limit]`, where the rule keeps the
    /// estimate but a double cannot always say so: a `max_limit` of
    /// `i64::MAX` is 2^63 as a double, and limits beyond 2^53 round.
    #[inline]
    pub fn limit(&self) -> u64 {
        let c = &self.config;
        (self.estimated_limit as u64).clamp(c.min_limit, c.max_limit.max(c.min_limit))
    }

    /// The no-load RTT in microseconds (0 before the first sample after a
    /// probe).
    pub fn rtt_noload_micros(&self) -> i64 {
        self.rtt_noload
    }

    /// Netflix's `_update(startTime, rtt, inflight, didDrop)`: one request
    /// completed in `rtt_micros` (or was dropped) while `in_flight` requests
    /// were in flight; returns the new limit.
    #[inline]
    pub fn on_sample(&mut self, rtt_micros: i64, in_flight: u64, dropped: bool) -> u64 {
        let c = self.config;
        let queue_size = c.queue_size as f64;
        if c.probe_interval != 0 {
            if self.probe_countdown == 0 {
                self.probe_countdown = c.probe_interval;
                self.estimated_limit = (c.min_limit as f64).max(queue_size);
                self.rtt_noload = 0;
                return self.limit();
            }
            self.probe_countdown -= 1;
        }
        let rtt = rtt_micros.max(1);
        if self.rtt_noload == 0 || rtt < self.rtt_noload {
            self.rtt_noload = rtt;
        }
        let gradient = (c.rtt_tolerance * self.rtt_noload as f64 / rtt as f64).clamp(0.5, 1.0);
        let mut new_limit = if dropped {
            self.estimated_limit * c.backoff_ratio
        } else if (in_flight as f64) < self.estimated_limit / 2.0 {
            return self.limit();
        } else {
            self.estimated_limit * gradient + queue_size
        };
        if new_limit < self.estimated_limit {
            new_limit = (c.min_limit as f64).max(self.estimated_limit * (1.0 - c.smoothing) + c.smoothing * new_limit);
        }
        self.estimated_limit = queue_size.max((c.max_limit as f64).min(new_limit));
        self.limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(initial: u64, probe_interval: u64) -> Gradient {
        Gradient::new(GradientConfig { initial_limit: initial, probe_interval, ..GradientConfig::default() }).unwrap()
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/concurrency.rs): with a
    /// `max_limit` of `i64::MAX` the estimate, a double, is 2^63, and the
    /// limit read one above the maximum (and above what a signed 64-bit
    /// binding can hold).
    #[test]
    fn the_limit_never_leaves_its_bounds_by_rounding() {
        let max = i64::MAX as u64;
        let config = GradientConfig {
            initial_limit: max,
            min_limit: max,
            max_limit: max,
            queue_size: max,
            backoff_ratio: 1.0,
            probe_interval: 1,
            ..GradientConfig::default()
        };
        let mut g = Gradient::new(config).unwrap();
        assert_eq!(g.limit(), max);
        for _ in 0..3 {
            assert_eq!(g.on_sample(10, max, false), max);
        }
        let odd = (1 << 53) + 1;
        let config = GradientConfig { initial_limit: odd, min_limit: odd, max_limit: odd, queue_size: 4, ..config };
        assert_eq!(Gradient::new(config).unwrap().limit(), odd, "2^53 + 1 rounds to 2^53 as a double");
    }

    #[test]
    fn grows_by_the_queue_size_while_rtt_stays_flat() {
        let mut g = gradient(10, 0);
        assert_eq!(g.on_sample(1_000, 10, false), 14);
        assert_eq!(g.on_sample(1_000, 14, false), 18);
        assert_eq!(g.rtt_noload_micros(), 1_000);
    }

    #[test]
    fn shrinks_smoothly_as_rtt_rises() {
        let mut g = gradient(100, 0);
        g.on_sample(1_000, 100, false); // 104
                                        // RTT 4× the no-load with tolerance 2: gradient 0.5, new = 56;
                                        // smoothed: 104 × 0.8 + 56 × 0.2 = 94.4.
        assert_eq!(g.on_sample(4_000, 100, false), 94);
        // A drop: × 0.9 then smoothed: 94.4 × 0.8 + 84.96 × 0.2 = 92.512.
        assert_eq!(g.on_sample(1_000, 100, true), 92);
    }

    #[test]
    fn does_not_grow_when_the_caller_is_the_bottleneck() {
        let mut g = gradient(100, 0);
        assert_eq!(g.on_sample(1_000, 49, false), 100);
        assert_eq!(g.on_sample(1_000, 50, false), 104);
    }

    #[test]
    fn stays_within_bounds() {
        let config =
            GradientConfig { initial_limit: 10, min_limit: 5, max_limit: 12, probe_interval: 0, ..Default::default() };
        let mut g = Gradient::new(config).unwrap();
        assert_eq!(g.on_sample(10, 10, false), 12);
        assert_eq!(g.on_sample(10, 12, false), 12);
        for _ in 0..100 {
            g.on_sample(10, 12, true);
        }
        assert_eq!(g.limit(), 5);
    }

    #[test]
    fn probes_reset_the_limit_and_the_noload_rtt() {
        let mut g = gradient(20, 2);
        g.on_sample(500, 20, false);
        g.on_sample(800, 24, false);
        // The third sample is the probe: limit max(1, 4) = 4, RTT forgotten.
        assert_eq!(g.on_sample(100, 28, false), 4);
        assert_eq!(g.rtt_noload_micros(), 0);
        g.on_sample(900, 4, false);
        assert_eq!(g.rtt_noload_micros(), 900);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let ok = GradientConfig::default();
        let bad = [
            (GradientConfig { min_limit: 0, ..ok }, Argument::MinLimit),
            (GradientConfig { max_limit: 0, ..ok }, Argument::MaxLimit),
            (GradientConfig { initial_limit: 1_001, ..ok }, Argument::InitialLimit),
            (GradientConfig { smoothing: 0.0, ..ok }, Argument::Smoothing),
            (GradientConfig { smoothing: f64::NAN, ..ok }, Argument::Smoothing),
            (GradientConfig { rtt_tolerance: 0.9, ..ok }, Argument::RttTolerance),
            (GradientConfig { rtt_tolerance: f64::INFINITY, ..ok }, Argument::RttTolerance),
            (GradientConfig { queue_size: 1_001, ..ok }, Argument::QueueSize),
            (GradientConfig { backoff_ratio: 0.4, ..ok }, Argument::GradientBackoffRatio),
            (GradientConfig { probe_interval: u64::MAX, ..ok }, Argument::ProbeInterval),
        ];
        for (config, argument) in bad {
            let Err(Error::InvalidArgument(e)) = Gradient::new(config) else { panic!("{config:?}") };
            assert_eq!(e.argument(), argument);
        }
    }

    #[test]
    fn extreme_samples_never_panic() {
        let mut g = gradient(50, 3);
        for rtt in [i64::MIN, -1, 0, 1, i64::MAX] {
            for in_flight in [0, u64::MAX] {
                for dropped in [false, true] {
                    let limit = g.on_sample(rtt, in_flight, dropped);
                    assert!(limit <= 1_000);
                }
            }
        }
    }
}
