//! Replaying a trace through limiters on one [`ManualClock`]: the clock is
//! moved to each arrival, every limiter decides, and each decision is
//! handed to a [`DecisionSink`] and remembered for the summary and the
//! plot.

use std::fmt;
use std::sync::Arc;

use ratekeeper::ManualClock;

use crate::durations::seconds_text;
use crate::limiters::{LimiterConfig, Outcome};
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
    mut on_progress: impl FnMut(usize),
) -> Result<Vec<LaneResult>, SimulationError> {
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
        })
        .collect();
    let mut now = 0i64;
    for (i, arrival) in arrivals.iter().enumerate() {
        // Arrivals are sorted (traces are checked, patterns sorted); a
        // time before `now` would simply not move the clock.
        if arrival.at_micros > now {
            clock.advance_micros(arrival.at_micros - now);
            now = arrival.at_micros;
        }
        for (lane, result) in lanes.iter().zip(results.iter_mut()) {
            let outcome = lane.decide(arrival.cost).map_err(|error| SimulationError::Request {
                request: i,
                arrival: *arrival,
                lane: result.config.label.clone(),
                error,
            })?;
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
    for r in &mut results {
        // Shapers hand out slots in order, but nothing requires a composite
        // or a future algorithm to: the window counts need time order.
        if !r.admissions.windows(2).all(|w| w[0].0 <= w[1].0) {
            r.admissions.sort_by_key(|a| a.0);
        }
    }
    Ok(results)
}
