//! [`RedisOption`]: the options only a shared limiter takes, each with its
//! name and its domain, checked here once for every language.
//!
//! A store's timeouts and retry interval, a membership's heartbeat TTL and
//! a shared Guava limiter's idle TTL are durations with bounds of their
//! own. The bindings convert what their callers give (seconds, a
//! `timedelta`, milliseconds, whole microseconds) and pass it through
//! [`RedisOption::from_micros`] or to the constructors, which call
//! [`RedisOption::check`]; a value outside the domain is
//! [`Error::InvalidOption`], which each binding reports as its other
//! invalid arguments, under its own spelling of [`RedisOption::name`] and
//! with [`RedisOption::requirement`] as the reason.
//!
//! The pattern is ratekeeper-core's `Argument` and `InvalidArgument`: a
//! fieldless enum whose variants know their name and requirement, and an
//! error holding one and the value refused. What a shared limiter shares
//! with a local one (a spec's parameters, `max_keys`, a key's length) and
//! leased mode's `batch` and `lease` stay the core's arguments, reported as
//! [`Error::Invalid`].

use std::fmt;
use std::time::Duration;

use ratekeeper::Value;

use crate::error::Error;

/// An hour, in microseconds: the longest timeout or retry interval a store
/// takes. Far beyond any use, and it keeps every deadline the client
/// computes (now + timeout) finite.
const HOUR: i64 = 3_600_000_000;
/// A day, in microseconds: the longest heartbeat TTL. A node that stops
/// heartbeating still counts as live for its TTL; a day is beyond any use.
const DAY: i64 = 86_400_000_000;
/// 3 ms, in microseconds: the shortest heartbeat TTL (a heartbeat every
/// third of it, every millisecond).
const MIN_TTL: i64 = 3_000;

/// 1 ms, in microseconds: the shortest lease TTL (Redis expires keys to the
/// millisecond).
const MIN_LEASE_TTL: i64 = 1_000;

/// Declares [`RedisOption`] and [`RedisOption::ALL`] from one list, as the
/// core declares its `Argument`s, so that no option is left out of `ALL`.
macro_rules! options {
    ($(#[$attr:meta])* pub enum RedisOption { $($(#[$doc:meta])* $variant:ident,)* }) => {
        $(#[$attr])*
        pub enum RedisOption {
            $($(#[$doc])* $variant,)*
        }

        impl RedisOption {
            /// Every option, in declaration order.
            pub const ALL: &'static [RedisOption] = &[$(RedisOption::$variant,)*];
        }
    };
}

options! {
    /// An option only a shared limiter takes: a duration, in whole
    /// microseconds, between the bounds its
    /// [`requirement`](RedisOption::requirement) states.
    ///
    /// Bindings map [`name`](RedisOption::name), the Rust name, to their
    /// own spelling (`timeoutMs` in JavaScript, `timeout_micros` in C).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum RedisOption {
        /// [`StoreOptions::timeout`](crate::StoreOptions::timeout): above 0,
        /// at most an hour.
        Timeout,
        /// [`StoreOptions::connect_timeout`](crate::StoreOptions::connect_timeout):
        /// above 0, at most an hour.
        ConnectTimeout,
        /// [`StoreOptions::retry_interval`](crate::StoreOptions::retry_interval):
        /// 0 (try again at once) to an hour.
        RetryInterval,
        /// [`Membership::join`](crate::Membership::join)'s `ttl`: 3 ms to a
        /// day.
        Ttl,
        /// [`RedisDividedLimiter::new`](crate::RedisDividedLimiter::new)'s
        /// `heartbeat_ttl`, its membership's TTL: 3 ms to a day.
        HeartbeatTtl,
        /// [`RedisRateLimiterBuilder::idle_ttl`](crate::RedisRateLimiterBuilder::idle_ttl):
        /// at least 1 µs, with no bound but the one of every duration
        /// (`i64::MAX` microseconds).
        IdleTtl,
        /// [`RedisConcurrencyLimiter::new`](crate::RedisConcurrencyLimiter::new)'s
        /// `lease_ttl`, how long a lease outlives its last renewal: 1 ms to
        /// a day.
        LeaseTtl,
    }
}

impl RedisOption {
    /// The Rust name, in `snake_case` (a field of `StoreOptions`, or a
    /// parameter).
    pub const fn name(self) -> &'static str {
        match self {
            RedisOption::Timeout => "timeout",
            RedisOption::ConnectTimeout => "connect_timeout",
            RedisOption::RetryInterval => "retry_interval",
            RedisOption::Ttl => "ttl",
            RedisOption::HeartbeatTtl => "heartbeat_ttl",
            RedisOption::IdleTtl => "idle_ttl",
            RedisOption::LeaseTtl => "lease_ttl",
        }
    }

    /// What a valid value is, as a phrase: "must be …", with the bounds in
    /// words and in microseconds, the unit every language can give.
    pub const fn requirement(self) -> &'static str {
        match self {
            RedisOption::Timeout | RedisOption::ConnectTimeout => {
                "must be above 0 and at most an hour (1 to 3600000000 microseconds)"
            }
            RedisOption::RetryInterval => "must be between 0 and an hour (0 to 3600000000 microseconds)",
            RedisOption::Ttl | RedisOption::HeartbeatTtl => {
                "must be between 3 milliseconds and a day (3000 to 86400000000 microseconds)"
            }
            RedisOption::IdleTtl => "must be between 1 and 9223372036854775807 microseconds (about 292,271 years)",
            RedisOption::LeaseTtl => "must be between 1 millisecond and a day (1000 to 86400000000 microseconds)",
        }
    }

    /// The shortest and the longest value, in whole microseconds.
    pub const fn bounds_micros(self) -> (i64, i64) {
        match self {
            RedisOption::Timeout | RedisOption::ConnectTimeout => (1, HOUR),
            RedisOption::RetryInterval => (0, HOUR),
            RedisOption::Ttl | RedisOption::HeartbeatTtl => (MIN_TTL, DAY),
            RedisOption::IdleTtl => (1, i64::MAX),
            RedisOption::LeaseTtl => (MIN_LEASE_TTL, DAY),
        }
    }

    /// `micros` whole microseconds as this option's duration, or the error
    /// naming it: for bindings whose callers give microseconds (C, and
    /// JavaScript's `…Micros` options), negative ones included, which no
    /// `Duration` holds.
    pub fn from_micros(self, micros: i64) -> Result<Duration, Error> {
        let (low, high) = self.bounds_micros();
        if (low..=high).contains(&micros) {
            Ok(Duration::from_micros(micros as u64))
        } else {
            Err(Error::InvalidOption(InvalidOption { option: self, value: Value::Int(micros) }))
        }
    }

    /// `duration` if it is within this option's domain, counted in whole
    /// microseconds (truncated, as every duration of the library), else
    /// the error naming it (its microseconds as the value).
    pub fn check(self, duration: Duration) -> Result<Duration, Error> {
        let micros = duration.as_micros();
        match i64::try_from(micros) {
            Ok(m) => self.from_micros(m).map(|_| duration),
            // Beyond every bound; shown as the nearest double, as the core
            // shows an unsigned value beyond `i64::MAX`.
            Err(_) => Err(Error::InvalidOption(InvalidOption { option: self, value: Value::Float(micros as f64) })),
        }
    }
}

/// A refused option and the value given, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvalidOption {
    option: RedisOption,
    value: Value,
}

impl InvalidOption {
    /// Which option.
    pub const fn option(&self) -> RedisOption {
        self.option
    }

    /// The option's name, e.g. `"timeout"`.
    pub const fn name(&self) -> &'static str {
        self.option.name()
    }

    /// What the value must be.
    pub const fn requirement(&self) -> &'static str {
        self.option.requirement()
    }

    /// The value given, in whole microseconds (a double only beyond
    /// `i64::MAX`).
    pub const fn value(&self) -> Value {
        self.value
    }
}

impl fmt::Display for InvalidOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid argument {} = {}: {}", self.name(), self.value, self.requirement())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(option: RedisOption, micros: i64) -> InvalidOption {
        match option.from_micros(micros) {
            Err(Error::InvalidOption(invalid)) => invalid,
            other => panic!("{option:?} = {micros}: {other:?}"),
        }
    }

    #[test]
    fn each_option_takes_its_bounds_and_refuses_beyond_them() {
        for &option in RedisOption::ALL {
            let (low, high) = option.bounds_micros();
            assert_eq!(option.from_micros(low).unwrap(), Duration::from_micros(low as u64), "{option:?}");
            assert_eq!(option.from_micros(high).unwrap(), Duration::from_micros(high as u64), "{option:?}");
            let below = refused(option, low - 1);
            assert_eq!((below.option(), below.value()), (option, Value::Int(low - 1)));
            if high < i64::MAX {
                assert_eq!(refused(option, high + 1).value(), Value::Int(high + 1), "{option:?}");
            }
            assert_eq!(refused(option, i64::MIN).value(), Value::Int(i64::MIN), "{option:?}");
            // The requirement states both bounds, as the value is shown.
            let text = option.requirement();
            assert!(text.starts_with("must be "), "{option:?}");
            assert!(text.contains(&format!("{low} ")) && text.contains(&format!("{high} ")), "{option:?}: {text}");
        }
    }

    #[test]
    fn the_caps_are_an_hour_for_a_store_and_a_day_for_a_heartbeat() {
        let hour = Duration::from_secs(3_600);
        let day = Duration::from_secs(86_400);
        for option in [RedisOption::Timeout, RedisOption::ConnectTimeout, RedisOption::RetryInterval] {
            assert_eq!(option.check(hour).unwrap(), hour);
            assert!(option.check(hour + Duration::from_micros(1)).is_err(), "{option:?}");
        }
        for option in [RedisOption::Ttl, RedisOption::HeartbeatTtl] {
            assert_eq!(option.check(day).unwrap(), day);
            assert!(option.check(day + Duration::from_micros(1)).is_err(), "{option:?}");
            assert!(option.check(Duration::from_micros(2_999)).is_err(), "{option:?}");
        }
        assert!(RedisOption::IdleTtl.check(Duration::from_secs(365 * 86_400)).is_ok());
        // Sub-microsecond parts are truncated, as every duration's.
        assert!(RedisOption::Timeout.check(Duration::from_nanos(999)).is_err());
        assert!(RedisOption::RetryInterval.check(Duration::ZERO).is_ok());
    }

    #[test]
    fn a_refusal_names_the_option_and_shows_the_value() {
        let e = RedisOption::HeartbeatTtl.check(Duration::from_millis(2)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid argument heartbeat_ttl = 2000: must be between 3 milliseconds and a day \
             (3000 to 86400000000 microseconds)"
        );
        let e = RedisOption::Timeout.check(Duration::MAX).unwrap_err();
        let Error::InvalidOption(invalid) = e else { panic!("{e:?}") };
        assert_eq!(invalid.value(), Value::Float(Duration::MAX.as_micros() as f64));
        assert_eq!(invalid.name(), "timeout");
        let names: Vec<&str> = RedisOption::ALL.iter().map(|o| o.name()).collect();
        assert_eq!(
            names,
            ["timeout", "connect_timeout", "retry_interval", "ttl", "heartbeat_ttl", "idle_ttl", "lease_ttl"]
        );
    }
}
