//! AIMD: additive increase, multiplicative decrease of a concurrency limit.
//!
//! TCP's congestion rule applied to concurrency: every successful request
//! that found the limit at least half used raises the limit by one; a
//! dropped request, or one slower than `rtt_timeout`, multiplies it by
//! `backoff_ratio`. This is Netflix concurrency-limits' `AIMDLimit`
//! (`concurrency-limits-core/.../limit/AIMDLimit.java`):
//!
//! ```text
//! if dropped or rtt > timeout:   limit = ⌊limit × backoff_ratio⌋
//! else if in_flight × 2 ≥ limit: limit = limit + 1
//! limit = min(max_limit, max(min_limit, limit))
//! ```
//!
//! with its defaults (minimum 20, initial 20, maximum 200, backoff 0.9,
//! timeout 5 s) in [`AimdConfig::default`]. RTTs are whole microseconds.

use crate::error::{Argument, Error};

/// The state and parameters of AIMD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aimd {
    pub(crate) limit: u64,
    pub(crate) config: AimdConfig,
}

/// AIMD's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdConfig {
    /// The limit to start from.
    pub initial_limit: u64,
    /// The smallest limit.
    pub min_limit: u64,
    /// The largest limit, at most `i64::MAX`.
    pub max_limit: u64,
    /// The factor applied on a drop or a timeout, in `[0.5, 1)`.
    pub backoff_ratio: f64,
    /// An RTT above this (microseconds, at least 1) counts as a drop.
    pub rtt_timeout_micros: i64,
}

impl Default for AimdConfig {
    /// Netflix's defaults: minimum 20, initial 20, maximum 200, backoff
    /// 0.9, timeout 5 s.
    fn default() -> Self {
        AimdConfig {
            initial_limit: 20,
            min_limit: 20,
            max_limit: 200,
            backoff_ratio: 0.9,
            rtt_timeout_micros: 5_000_000,
        }
    }
}

impl AimdConfig {
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
        if !(self.backoff_ratio >= 0.5 && self.backoff_ratio < 1.0) {
            return Err(Error::invalid_float(Argument::BackoffRatio, self.backoff_ratio));
        }
        if self.rtt_timeout_micros <= 0 {
            return Err(Error::invalid_int(Argument::RttTimeout, self.rtt_timeout_micros));
        }
        Ok(())
    }
}

impl Aimd {
    /// AIMD with `config`; errors on an invalid parameter.
    pub fn new(config: AimdConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(Aimd { limit: config.initial_limit, config })
    }

    /// The parameters.
    pub fn config(&self) -> &AimdConfig {
        &self.config
    }

    /// The current limit.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Netflix's `_update(startTime, rtt, inflight, didDrop)`: one request
    /// completed in `rtt_micros` (or was dropped) while `in_flight` requests
    /// were in flight; returns the new limit.
    #[inline]
    pub fn on_sample(&mut self, rtt_micros: i64, in_flight: u64, dropped: bool) -> u64 {
        let c = self.config;
        let mut limit = self.limit;
        if dropped || rtt_micros > c.rtt_timeout_micros {
            limit = (limit as f64 * c.backoff_ratio) as u64;
        } else if u128::from(in_flight) * 2 >= u128::from(limit) {
            limit = limit.saturating_add(1);
        }
        self.limit = limit.clamp(c.min_limit, c.max_limit.max(c.min_limit));
        self.limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aimd(initial: u64, min: u64, max: u64) -> Aimd {
        Aimd::new(AimdConfig { initial_limit: initial, min_limit: min, max_limit: max, ..AimdConfig::default() })
            .unwrap()
    }

    #[test]
    fn increases_by_one_when_half_used() {
        let mut a = aimd(10, 1, 100);
        assert_eq!(a.on_sample(1_000, 4, false), 10, "less than half in flight");
        assert_eq!(a.on_sample(1_000, 5, false), 11);
        assert_eq!(a.on_sample(1_000, 11, false), 12);
    }

    #[test]
    fn backs_off_on_drop_or_timeout() {
        let mut a = aimd(100, 1, 200);
        assert_eq!(a.on_sample(1_000, 100, true), 90);
        assert_eq!(a.on_sample(5_000_001, 100, false), 81);
        assert_eq!(a.on_sample(5_000_000, 100, false), 82, "at the timeout is not over it");
    }

    #[test]
    fn stays_within_bounds() {
        let mut a = aimd(3, 2, 4);
        assert_eq!(a.on_sample(1, 3, false), 4);
        assert_eq!(a.on_sample(1, 3, false), 4);
        assert_eq!(a.on_sample(1, 3, true), 3);
        assert_eq!(a.on_sample(1, 3, true), 2);
        assert_eq!(a.on_sample(1, 3, true), 2);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let ok = AimdConfig::default();
        assert!(Aimd::new(ok).is_ok());
        for (config, argument) in [
            (AimdConfig { min_limit: 0, initial_limit: 0, ..ok }, Argument::MinLimit),
            (AimdConfig { max_limit: 10, ..ok }, Argument::MaxLimit),
            (AimdConfig { initial_limit: 10, ..ok }, Argument::InitialLimit),
            (AimdConfig { backoff_ratio: 1.0, ..ok }, Argument::BackoffRatio),
            (AimdConfig { backoff_ratio: f64::NAN, ..ok }, Argument::BackoffRatio),
            (AimdConfig { rtt_timeout_micros: 0, ..ok }, Argument::RttTimeout),
        ] {
            let Err(Error::InvalidArgument(e)) = Aimd::new(config) else { panic!("{config:?}") };
            assert_eq!(e.argument(), argument);
        }
    }

    #[test]
    fn extreme_samples_never_panic() {
        let mut a = Aimd::new(AimdConfig { max_limit: i64::MAX as u64, ..AimdConfig::default() }).unwrap();
        for rtt in [i64::MIN, 0, i64::MAX] {
            for in_flight in [0, u64::MAX] {
                for dropped in [false, true] {
                    a.on_sample(rtt, in_flight, dropped);
                }
            }
        }
    }
}
