//! Per-request decisions, written as they are made: CSV (one row per
//! request per limiter) or JSON (`{"limiters": [...], "decisions": [...]}`
//! with the same fields), streamed so a long trace needs no extra memory.
//!
//! Fields: `request` (0-based), `time_us` (arrival), `cost`, `limiter`,
//! `allowed`, `wait_us` (admitted: how long after arrival it goes ahead),
//! `admitted_at_us` (arrival + wait; empty/null when refused), `remaining`
//! (units left; empty/null for Guava), `retry_after_us` (refused: when it
//! would be admitted; `never`/null when no wait can admit it).

use std::io::{self, Write};

use ratekeeper::NEVER;
use serde::Serialize;

use crate::limiters::Outcome;
use crate::simulation::DecisionSink;
use crate::trace::Arrival;

/// The formats of `--decisions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Comma-separated values, with a header.
    Csv,
    /// One JSON document.
    Json,
}

impl Format {
    /// The format a file name's extension implies (`.json`, else CSV).
    pub fn from_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Csv,
        }
    }
}

#[derive(Serialize)]
struct Row<'a> {
    request: usize,
    time_us: i64,
    cost: u64,
    limiter: &'a str,
    allowed: bool,
    wait_us: i64,
    admitted_at_us: Option<i64>,
    remaining: Option<u64>,
    retry_after_us: Option<i64>,
}

/// Writes decisions to `out` in CSV.
#[derive(Debug)]
pub struct CsvSink<W: Write> {
    out: W,
}

impl<W: Write> CsvSink<W> {
    /// Writes the header.
    pub fn new(mut out: W) -> io::Result<Self> {
        writeln!(out, "request,time_us,cost,limiter,allowed,wait_us,admitted_at_us,remaining,retry_after_us")?;
        Ok(CsvSink { out })
    }

    /// Flushes, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl<W: Write> DecisionSink for CsvSink<W> {
    fn record(&mut self, request: usize, arrival: &Arrival, lane: &str, o: &Outcome) -> io::Result<()> {
        let opt = |v: Option<String>| v.unwrap_or_default();
        writeln!(
            self.out,
            "{request},{},{},{},{},{},{},{},{}",
            arrival.at_micros,
            arrival.cost,
            csv_field(lane),
            o.allowed,
            o.wait_micros,
            opt(o.allowed.then(|| arrival.at_micros.saturating_add(o.wait_micros).to_string())),
            opt(o.remaining.map(|r| r.to_string())),
            opt(o.retry_after_micros.map(|r| if r == NEVER { "never".to_owned() } else { r.to_string() })),
        )
    }
}

/// Writes decisions to `out` as one JSON document.
#[derive(Debug)]
pub struct JsonSink<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> JsonSink<W> {
    /// Writes the opening, naming the limiters.
    pub fn new(mut out: W, limiters: &[&str]) -> io::Result<Self> {
        write!(out, "{{\"limiters\":{},\"decisions\":[", serde_json::to_string(limiters).map_err(io::Error::other)?)?;
        Ok(JsonSink { out, first: true })
    }

    /// Closes the document, flushes, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        writeln!(self.out, "]}}")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> DecisionSink for JsonSink<W> {
    fn record(&mut self, request: usize, arrival: &Arrival, lane: &str, o: &Outcome) -> io::Result<()> {
        let row = Row {
            request,
            time_us: arrival.at_micros,
            cost: arrival.cost,
            limiter: lane,
            allowed: o.allowed,
            wait_us: o.wait_micros,
            admitted_at_us: o.allowed.then(|| arrival.at_micros.saturating_add(o.wait_micros)),
            remaining: o.remaining,
            retry_after_us: o.retry_after_micros.filter(|&r| r != NEVER),
        };
        self.out.write_all(if self.first { b"\n" } else { b",\n" })?;
        self.first = false;
        serde_json::to_writer(&mut self.out, &row).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes() -> [(Arrival, Outcome); 2] {
        [
            (
                Arrival { at_micros: 10, cost: 2 },
                Outcome { allowed: true, wait_micros: 5, remaining: Some(3), retry_after_micros: None },
            ),
            (
                Arrival { at_micros: 20, cost: 1 },
                Outcome { allowed: false, wait_micros: 0, remaining: None, retry_after_micros: Some(NEVER) },
            ),
        ]
    }

    #[test]
    fn csv_rows() {
        let mut sink = CsvSink::new(Vec::new()).unwrap();
        for (i, (a, o)) in outcomes().iter().enumerate() {
            sink.record(i, a, "a, \"b\"", o).unwrap();
        }
        let text = String::from_utf8(sink.finish().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "0,10,2,\"a, \"\"b\"\"\",true,5,15,3,");
        assert_eq!(lines[2], "1,20,1,\"a, \"\"b\"\"\",false,0,,,never");
    }

    #[test]
    fn json_document() {
        let mut sink = JsonSink::new(Vec::new(), &["x"]).unwrap();
        for (i, (a, o)) in outcomes().iter().enumerate() {
            sink.record(i, a, "x", o).unwrap();
        }
        let v: serde_json::Value = serde_json::from_slice(&sink.finish().unwrap()).unwrap();
        assert_eq!(v["limiters"][0], "x");
        assert_eq!(v["decisions"][0]["admitted_at_us"], 15);
        assert_eq!(v["decisions"][1]["retry_after_us"], serde_json::Value::Null);
        assert_eq!(v["decisions"].as_array().unwrap().len(), 2);
        let empty: serde_json::Value =
            serde_json::from_slice(&JsonSink::new(Vec::new(), &[]).unwrap().finish().unwrap()).unwrap();
        assert_eq!(empty["decisions"].as_array().unwrap().len(), 0);
    }
}
