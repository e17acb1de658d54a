//! The summary of a simulation: per limiter, what it admitted and refused,
//! the most it let through in any window of the chosen length (the number
//! the boundary attack is about), and, for limiters that make callers wait,
//! the mean and 99th-percentile wait. For the load-driven lanes (`bbr`,
//! `system_guard`, `none`, a thread-grade `flow`, against the simulated
//! server), also the latency
//! of the admitted requests (p50, p99, max), the most in flight at once and
//! the system rule's refusals by threshold: columns (and JSON fields) that
//! appear only when such a lane is present.

use serde::Serialize;

use crate::durations::{format_micros, seconds_text};
use crate::simulation::LaneResult;

/// One limiter's line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaneSummary {
    /// The limiter's label.
    pub limiter: String,
    /// The `--limiter` argument.
    pub spec: String,
    /// Requests seen.
    pub requests: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// Requests refused.
    pub refused: u64,
    /// The most units admitted (counted when they go ahead: arrival +
    /// wait) in any window `(t − W, t]` of the summary's length.
    pub max_in_window: u64,
    /// What the limiter is meant to let through in such a window (its rate
    /// or limit scaled to it), when it has one.
    pub nominal_in_window: Option<f64>,
    /// Mean wait of the admitted requests, for limiters that make callers
    /// wait (microseconds).
    pub mean_wait_micros: Option<f64>,
    /// 99th-percentile wait (nearest rank), likewise.
    pub p99_wait_micros: Option<i64>,
    /// Load-driven lanes: the admitted requests' median latency (arrival
    /// to completion on the simulated server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_latency_micros: Option<i64>,
    /// Their 99th-percentile latency (nearest rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_latency_micros: Option<i64>,
    /// Their longest latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_latency_micros: Option<i64>,
    /// The most requests in flight on the lane's server at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u64>,
    /// The system rule's refusals by threshold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_by: Vec<(String, u64)>,
}

/// The whole summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Where the traffic came from (a file, or the patterns).
    pub trace: String,
    /// Requests in the trace.
    pub requests: u64,
    /// The first arrival (microseconds), if any.
    pub first_micros: Option<i64>,
    /// The last arrival, if any.
    pub last_micros: Option<i64>,
    /// The window of `max_in_window` (microseconds).
    pub window_micros: i64,
    /// One line per limiter, in the order given.
    pub limiters: Vec<LaneSummary>,
}

/// The most units in any window `(t − W, t]` over `admissions` (sorted by
/// time).
pub fn max_in_window(admissions: &[(i64, u64)], window_micros: i64) -> u64 {
    let mut best = 0u64;
    let mut sum = 0u64;
    let mut left = 0usize;
    for &(t, cost) in admissions {
        sum = sum.saturating_add(cost);
        let start = t.saturating_sub(window_micros);
        while let Some(&(tl, cl)) = admissions.get(left) {
            if tl > start {
                break;
            }
            sum -= cl;
            left += 1;
        }
        best = best.max(sum);
    }
    best
}

/// The nearest-rank percentile `p` (0 < p ≤ 100) of `values`.
pub fn percentile(values: &[i64], p: f64) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

impl Summary {
    /// Summarises `results` of a simulation of `requests` arrivals between
    /// `first` and `last`.
    pub fn new(trace: String, arrivals: &[crate::trace::Arrival], results: &[LaneResult], window_micros: i64) -> Self {
        let limiters = results
            .iter()
            .map(|r| {
                let waits = r.config.waits();
                let latencies: Vec<i64> = r.latencies.iter().map(|&(_, l)| l).collect();
                let mean = (waits && !r.waits.is_empty())
                    .then(|| r.waits.iter().map(|&w| w as f64).sum::<f64>() / r.waits.len() as f64);
                LaneSummary {
                    limiter: r.config.label.clone(),
                    spec: r.config.text.clone(),
                    requests: r.requests,
                    admitted: r.admitted,
                    refused: r.refused,
                    max_in_window: max_in_window(&r.admissions, window_micros),
                    nominal_in_window: r.config.nominal_per(window_micros),
                    mean_wait_micros: mean,
                    p99_wait_micros: if waits { percentile(&r.waits, 99.0) } else { None },
                    p50_latency_micros: percentile(&latencies, 50.0),
                    p99_latency_micros: percentile(&latencies, 99.0),
                    max_latency_micros: latencies.iter().max().copied(),
                    peak_in_flight: r.peak_in_flight,
                    refused_by: r.refusals_by_threshold.iter().map(|&(t, n)| (t.to_owned(), n)).collect(),
                }
            })
            .collect();
        Summary {
            trace,
            requests: arrivals.len() as u64,
            first_micros: arrivals.first().map(|a| a.at_micros),
            last_micros: arrivals.last().map(|a| a.at_micros),
            window_micros,
            limiters,
        }
    }

    fn header_line(&self) -> String {
        match (self.first_micros, self.last_micros) {
            (Some(a), Some(b)) => format!(
                "{}: {} requests from {} s to {} s",
                self.trace,
                self.requests,
                seconds_text(a),
                seconds_text(b)
            ),
            _ => format!("{}: no requests", self.trace),
        }
    }

    fn rows(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let w = format_micros(self.window_micros);
        let header = vec![
            "limiter".to_owned(),
            "requests".to_owned(),
            "admitted".to_owned(),
            "refused".to_owned(),
            format!("max admitted in any {w}"),
            format!("nominal per {w}"),
            "mean wait".to_owned(),
            "p99 wait".to_owned(),
        ];
        let load_driven = self.limiters.iter().any(|l| l.peak_in_flight.is_some());
        let mut header = header;
        if load_driven {
            header.extend(
                ["p50 latency", "p99 latency", "max latency", "peak in flight", "refused by"].map(str::to_owned),
            );
        }
        let rows = self
            .limiters
            .iter()
            .map(|l| {
                let mut row = vec![
                    l.limiter.clone(),
                    l.requests.to_string(),
                    l.admitted.to_string(),
                    l.refused.to_string(),
                    l.max_in_window.to_string(),
                    l.nominal_in_window.map_or("-".to_owned(), format_count),
                    l.mean_wait_micros.map_or("-".to_owned(), |m| format_micros(m.round() as i64)),
                    l.p99_wait_micros.map_or("-".to_owned(), format_micros),
                ];
                if load_driven {
                    let by: Vec<String> = l.refused_by.iter().map(|(t, n)| format!("{t} {n}")).collect();
                    row.extend([
                        l.p50_latency_micros.map_or("-".to_owned(), format_micros),
                        l.p99_latency_micros.map_or("-".to_owned(), format_micros),
                        l.max_latency_micros.map_or("-".to_owned(), format_micros),
                        l.peak_in_flight.map_or("-".to_owned(), |p| p.to_string()),
                        if by.is_empty() { "-".to_owned() } else { by.join(", ") },
                    ]);
                }
                row
            })
            .collect();
        (header, rows)
    }

    /// An aligned plain-text table, with a line naming the trace first.
    pub fn to_text(&self) -> String {
        let (header, rows) = self.rows();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                let pad = w - cell.chars().count();
                if i == 0 {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
            s.trim_end().to_owned()
        };
        let mut out = self.header_line();
        out.push('\n');
        out.push_str(&line(&header));
        out.push('\n');
        for row in &rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// A Markdown table, with a line naming the trace first.
    pub fn to_markdown(&self) -> String {
        let (header, rows) = self.rows();
        let mut out =
            format!("{}\n\n| {} |\n|{}\n", self.header_line(), header.join(" | "), "---|".repeat(header.len()));
        for row in rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// A count or a nominal quota: whole when whole, else one decimal.
fn format_count(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_half_open_on_the_left() {
        let a = [(0, 1), (500_000, 1), (1_000_000, 1), (1_000_001, 1)];
        // (0, 1 s] holds 500 ms and 1 s; (1 µs, 1.000001 s] holds three.
        assert_eq!(max_in_window(&a, 1_000_000), 3);
        assert_eq!(max_in_window(&a, 1), 1);
        assert_eq!(max_in_window(&[(5, 3), (5, 4)], 1), 7);
        assert_eq!(max_in_window(&[], 10), 0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 99.0), None);
    }
}
