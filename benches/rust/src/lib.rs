//! Benchmarks only (see `benches/`): the contenders every Rust benchmark
//! compares, built for two workloads:
//! "admit" (a rate so high every call is granted, so every call writes the
//! state) and "refuse" (a limiter exhausted for the whole run).

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock as GovernorClock, DefaultClock, MonotonicClock as GovernorMonotonic};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::Quota;
use ratekeeper::core::SmoothRateLimiter;
use ratekeeper::RateLimiter;

/// One contender's `try_acquire(1)`-equivalent; `true` when admitted.
pub type Call<'a> = Box<dyn Fn() -> bool + Sync + 'a>;

/// Guava's own design: the state machine behind a mutex, the clock read
/// inside it (`synchronized` + `Stopwatch`).
#[derive(Debug)]
pub struct GuavaInAMutex {
    state: Mutex<SmoothRateLimiter>,
    origin: Instant,
}

impl GuavaInAMutex {
    fn new(rate: f64) -> Self {
        GuavaInAMutex { state: Mutex::new(SmoothRateLimiter::bursty(rate, 1.0).unwrap()), origin: Instant::now() }
    }

    fn try_acquire(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        let now = self.origin.elapsed().as_micros() as i64;
        state.try_reserve(1, 0, now).unwrap().is_some()
    }
}

type GovernorDirect<C> =
    governor::RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<<C as GovernorClock>::Instant>>;

#[derive(Debug)]
pub struct Contenders {
    ratekeeper: RateLimiter,
    governor_tsc: GovernorDirect<DefaultClock>,
    governor_instant: GovernorDirect<GovernorMonotonic>,
    guava_mutex: GuavaInAMutex,
}

impl Contenders {
    /// Every call admitted: 1e9 permits per second.
    pub fn admitting() -> Self {
        let quota = Quota::per_second(NonZeroU32::new(1_000_000_000).unwrap());
        Contenders {
            ratekeeper: RateLimiter::create(1e9).unwrap(),
            governor_tsc: governor::RateLimiter::direct(quota),
            governor_instant: governor::RateLimiter::direct_with_clock(quota, GovernorMonotonic),
            guava_mutex: GuavaInAMutex::new(1e9),
        }
    }

    /// Every call refused: one permit per 1000 s, already taken.
    pub fn refusing() -> Self {
        let quota = Quota::with_period(Duration::from_secs(1000)).unwrap();
        let c = Contenders {
            ratekeeper: RateLimiter::create(1e-3).unwrap(),
            governor_tsc: governor::RateLimiter::direct(quota),
            governor_instant: governor::RateLimiter::direct_with_clock(quota, GovernorMonotonic),
            guava_mutex: GuavaInAMutex::new(1e-3),
        };
        assert!(c.ratekeeper.try_acquire(1, Duration::ZERO).unwrap());
        assert!(c.governor_tsc.check().is_ok());
        assert!(c.governor_instant.check().is_ok());
        assert!(c.guava_mutex.try_acquire());
        c
    }

    pub fn calls(&self) -> Vec<(&'static str, Call<'_>)> {
        vec![
            ("ratekeeper", Box::new(|| self.ratekeeper.try_acquire(1, Duration::ZERO).unwrap())),
            ("governor-tsc", Box::new(|| self.governor_tsc.check().is_ok())),
            ("governor-instant", Box::new(|| self.governor_instant.check().is_ok())),
            ("guava-in-mutex", Box::new(|| self.guava_mutex.try_acquire())),
        ]
    }
}
