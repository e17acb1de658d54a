//! Replaying a trace through limiters on one [`ManualClock`]: the clock is
//! moved to each arrival, every limiter decides, and each decision is
//! handed to a [`DecisionSink`] and remembered for the summary and the
//! plot.
//!
//! Load-driven lanes (`bbr`, `system_guard`, `none`, a thread-grade `flow`)
//! each send their
//! admitted requests to a simulated server of their own
//! ([`crate::server`]); a request ends at its completion time, when the
//! lane's permit is released. Arrivals and completions are handled in time
//! order (a completion before an arrival at the same microsecond; between
//! lanes, in lane order), the shared clock moved to each, so the run is
//! deterministic. Moving the clock to a completion between two arrivals
//! changes nothing for the other lanes: they read it only at arrivals.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use ratekeeper::ManualClock;

use crate::durations::seconds_text;
use crate::limiters::{Held, LimiterConfig, Outcome};
use crate::server::{LoadTrace, Server, ServerConfig};
use crate::spec_syntax::SpecError;
use crate::trace::Arrival;

/// Where per-request decisions go as they are made (a CSV or JSON file).
pub trait DecisionSink {
    /// One limiter's decision about request number `request` (0-based).
    fn record(&mut self, request: usize, arrival: &Arrival, lane: &str, outcome: &Outcome) -> std::io::Result<()>;
}

/// Discards decisions.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSink;

impl DecisionSink for NoSink {
    fn record(&mut self, _: usize, _: &Arrival, _: &str, _: &Outcome) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one limiter did with the whole trace.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneResult {
    /// The limiter as configured.
    pub config: LimiterConfig,
    /// Requests seen.
    pub requests: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// Requests refused.
    pub refused: u64,
    /// Each admitted request's (time it goes ahead — arrival + wait — and
    /// cost), in time order.
    pub admissions: Vec<(i64, u64)>,
    /// Each refused request's arrival time, in order.
    pub refusals: Vec<i64>,
    /// Each admitted request's wait, for limiters that make callers wait
    /// (empty for the others).
    pub waits: Vec<i64>,
    /// Load-driven lanes: each admitted request's (arrival, latency — from
    /// arrival to completion on the simulated server), in arrival order.
    pub latencies: Vec<(i64, i64)>,
    /// Load-driven lanes: the most requests in flight on the server at once.
    pub peak_in_flight: Option<u64>,
    /// The system rule's refusals by threshold (`"cpu"`, `"thread"`…), in
    /// Sentinel's order of checking, only those that refused.
    pub refusals_by_threshold: Vec<(&'static str, u64)>,
}

/// What the load-driven lanes run against: the server each gets a copy of,
/// and optionally a recorded load replacing its readings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// `--server`; required when a lane is load-driven.
    pub server: Option<ServerConfig>,
    /// `--load`: the CPU and load average over time, instead of the
    /// server's.
    pub load: Option<LoadTrace>,
}

/// Why a simulation stopped.
#[derive(Debug)]
pub enum SimulationError {
    /// A limiter could not be built from its parameters.
    Limiter(SpecError),
    /// A limiter refused a request's arguments (Guava's permits are 1 to
    /// 2^31 − 1).
    Request {
        /// 0-based request number.
        request: usize,
        /// The request.
        arrival: Arrival,
        /// The limiter's label.
        lane: String,
        /// Its error.
        error: ratekeeper::Error,
    },
    /// Writing a decision failed.
    Write(std::io::Error),
    /// A load-driven lane without `--server`.
    NoServer(String),
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulationError::Limiter(e) => write!(f, "--limiter {e}"),
            SimulationError::Request { request, arrival, lane, error } => write!(
                f,
                "request {} (at {} s, cost {}): {lane}: {error}",
                request + 1,
                seconds_text(arrival.at_micros),
                arrival.cost
            ),
            SimulationError::Write(e) => write!(f, "writing the decisions: {e}"),
            SimulationError::NoServer(text) => {
                write!(f, "--limiter `{text}` needs a simulated server: --server workers=N,service=DURATION")
            }
        }
    }
}

impl std::error::Error for SimulationError {}

/// Replays `arrivals` (in time order) through a fresh limiter for each of
/// `configs`, all created at time 0 on one manual clock. `on_progress`
/// gets the number of requests done every 16 Ki requests.
pub fn run(
    arrivals: &[Arrival],
    configs: &[LimiterConfig],
    sink: &mut dyn DecisionSink,
    on_progress: impl FnMut(usize),
) -> Result<Vec<LaneResult>, SimulationError> {
    run_with(arrivals, configs, &Environment::default(), sink, on_progress)
}

/// [`run`], the load-driven lanes against `environment`'s server.
pub fn run_with(
    arrivals: &[Arrival],
    configs: &[LimiterConfig],
    environment: &Environment,
    sink: &mut dyn DecisionSink,
    mut on_progress: impl FnMut(usize),
) -> Result<Vec<LaneResult>, SimulationError> {
    let mut servers: Vec<Option<Server>> = Vec::with_capacity(configs.len());
    for c in configs {
        servers.push(match (c.load_driven(), environment.server) {
            (false, _) => None,
            (true, Some(server)) => Some(Server::new(server)),
            (true, None) => return Err(SimulationError::NoServer(c.text.clone())),
        });
    }
    // Requests in flight on the servers, by (completion time, lane, number).
    let mut completions: BTreeMap<(i64, usize, u64), Held> = BTreeMap::new();
    let mut started = 0u64;
    let clock = Arc::new(ManualClock::new());
    let lanes =
        configs.iter().map(|c| c.build(&clock)).collect::<Result<Vec<_>, _>>().map_err(SimulationError::Limiter)?;
    let mut results: Vec<LaneResult> = configs
        .iter()
        .map(|c| LaneResult {
            config: c.clone(),
            requests: 0,
            admitted: 0,
            refused: 0,
            admissions: Vec::new(),
            refusals: Vec::new(),
            waits: Vec::new(),
            latencies: Vec::new(),
            peak_in_flight: None,
            refusals_by_threshold: Vec::new(),
        })
        .collect();
    let mut now = 0i64;
    let mut by_threshold: Vec<BTreeMap<usize, u64>> = vec![BTreeMap::new(); configs.len()];
    // Ends every request due by `until`, each at its time.
    let complete = |until: i64,
                    now: &mut i64,
                    servers: &mut [Option<Server>],
                    completions: &mut BTreeMap<(i64, usize, u64), Held>| {
        while let Some(entry) = completions.first_entry() {
            let (at, lane, _) = *entry.key();
            if at > until {
                break;
            }
            let held = entry.remove();
            if at > *now {
                clock.advance_micros(at - *now);
                *now = at;
            }
            lanes[lane].release(held);
            if let Some(server) = servers[lane].as_mut() {
                server.finish();
            }
        }
    };
    for (i, arrival) in arrivals.iter().enumerate() {
        complete(arrival.at_micros, &mut now, &mut servers, &mut completions);
        // Arrivals are sorted (traces are checked, patterns sorted); a
        // time before `now` would simply not move the clock.
        if arrival.at_micros > now {
            clock.advance_micros(arrival.at_micros - now);
            now = arrival.at_micros;
        }
        for (index, (lane, result)) in lanes.iter().zip(results.iter_mut()).enumerate() {
            let failed = |error| SimulationError::Request {
                request: i,
                arrival: *arrival,
                lane: result.config.label.clone(),
                error,
            };
            let outcome = match servers[index].as_mut() {
                None => lane.decide(arrival.cost).map_err(failed)?,
                Some(server) => {
                    let load = match &environment.load {
                        Some(trace) => trace.at(arrival.at_micros),
                        None => server.reading(),
                    };
                    let decided = lane.acquire(arrival.cost, load).map_err(failed)?;
                    if let Some(held) = decided.held {
                        let took = server.start();
                        let end = arrival.at_micros.saturating_add(took);
                        completions.insert((end, index, started), held);
                        started += 1;
                        result.latencies.push((arrival.at_micros, took));
                    }
                    if let Some(threshold) = decided.threshold {
                        let order = ratekeeper::SystemThreshold::ALL.iter().position(|t| *t == threshold);
                        *by_threshold[index].entry(order.unwrap_or(0)).or_default() += 1;
                    }
                    decided.outcome
                }
            };
            sink.record(i, arrival, &result.config.label, &outcome).map_err(SimulationError::Write)?;
            result.requests += 1;
            if outcome.allowed {
                result.admitted += 1;
                result.admissions.push((arrival.at_micros.saturating_add(outcome.wait_micros), arrival.cost));
                if result.config.waits() {
                    result.waits.push(outcome.wait_micros);
                }
            } else {
                result.refused += 1;
                result.refusals.push(arrival.at_micros);
            }
        }
        if i % 16_384 == 16_383 {
            on_progress(i + 1);
        }
    }
    on_progress(arrivals.len());
    complete(i64::MAX, &mut now, &mut servers, &mut completions);
    for ((r, server), thresholds) in results.iter_mut().zip(&servers).zip(by_threshold) {
        r.peak_in_flight = server.as_ref().map(Server::peak_in_flight);
        r.refusals_by_threshold =
            thresholds.into_iter().map(|(k, n)| (ratekeeper::SystemThreshold::ALL[k].name(), n)).collect();
    }
    for r in &mut results {
        // Shapers hand out slots in order, but nothing requires a composite
        // or a future algorithm to: the window counts need time order.
        if !r.admissions.windows(2).all(|w| w[0].0 <= w[1].0) {
            r.admissions.sort_by_key(|a| a.0);
        }
    }
    Ok(results)
}
