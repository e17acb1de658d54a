//! The simulated service behind the load-driven lanes (`bbr`,
//! `system_guard` and the `none` baseline): requests that end, and the CPU
//! reading those limiters act on.
//!
//! An admission limiter only needs to know when requests arrive; BBR and
//! Sentinel's system rule judge how the service *copes*, from how long
//! requests take and how busy the CPU is. So each such lane gets a server
//! of its own (`--server workers=N,service=D`), an HTTP-like service with
//! `N` workers whose requests take `D` when it is not overloaded:
//!
//! * a request admitted while `k` requests are in flight (itself included)
//!   takes `D × max(1, k / N)`: up to `N` run side by side at full speed,
//!   beyond that they share the workers (processor sharing), so each takes
//!   proportionally longer. The time is fixed when the request starts —
//!   requests already running are not slowed by later ones — which keeps
//!   the model simple and still makes latency grow without bound while
//!   more arrives than `N / D` per second;
//! * its CPU usage, read at each arrival before the limiter decides, is
//!   `min(1, in flight / N)`: every worker busy is 100 %;
//! * its load average (Sentinel's `highest_system_load`) is the number of
//!   requests in flight: each is a runnable task, as the kernel counts them
//!   (instantaneous, where the kernel's is a one-minute average).
//!
//! `--load FILE.csv` replaces both readings by a recorded trace
//! ([`LoadTrace`]: `time,cpu_usage[,load_average]`, a step function), the
//! service times staying the server's.

use std::io::BufRead;

use ratekeeper::core::Load;

use crate::spec_syntax::{SpecError, SpecText};

/// `--server`: the simulated service's workers and service time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// Requests served side by side at full speed.
    pub workers: u64,
    /// How long a request takes while at most `workers` are in flight
    /// (microseconds).
    pub service_micros: i64,
}

impl ServerConfig {
    /// Parses `workers=N,service=D` (both required; `D` a duration such as
    /// `10ms`).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let err = |e: SpecError| SpecError { text: text.to_owned(), message: e.message };
        let spec = SpecText::parse(&format!("server:{text}")).map_err(err)?;
        spec.only_keys(&["workers", "service"]).map_err(err)?;
        let workers = spec.required_count("workers").map_err(err)?;
        let service_micros = spec.required_duration("service").map_err(err)?;
        if workers == 0 {
            return Err(SpecError { text: text.to_owned(), message: "workers must be at least 1".into() });
        }
        if service_micros <= 0 {
            return Err(SpecError { text: text.to_owned(), message: "service must be longer than 0".into() });
        }
        Ok(ServerConfig { workers, service_micros })
    }

    /// Requests per second the server completes at full speed:
    /// `workers / service`.
    pub fn capacity_per_second(&self) -> f64 {
        self.workers as f64 * 1e6 / self.service_micros as f64
    }
}

/// One lane's server: what is in flight now, and the most ever.
#[derive(Debug, Clone)]
pub struct Server {
    config: ServerConfig,
    in_flight: u64,
    peak_in_flight: u64,
}

impl Server {
    /// An idle server.
    pub fn new(config: ServerConfig) -> Self {
        Server { config, in_flight: 0, peak_in_flight: 0 }
    }

    /// What the server reports now: CPU `min(1, in flight / workers)`,
    /// load average the number in flight.
    pub fn reading(&self) -> Load {
        let cpu = (self.in_flight as f64 / self.config.workers as f64).min(1.0);
        Load { cpu_usage: cpu, load_average: self.in_flight as f64 }
    }

    /// Starts a request: returns how long it takes, `service × max(1, k /
    /// workers)` with `k` the requests in flight counting this one.
    pub fn start(&mut self) -> i64 {
        self.in_flight += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight);
        let share = (self.in_flight as f64 / self.config.workers as f64).max(1.0);
        (self.config.service_micros as f64 * share).round() as i64
    }

    /// A request ended.
    pub fn finish(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The most requests ever in flight at once.
    pub fn peak_in_flight(&self) -> u64 {
        self.peak_in_flight
    }
}

/// A recorded load (`--load FILE.csv`): rows `time,cpu_usage[,load_average]`
/// (time in seconds, CPU a fraction 0 to 1, load ≥ 0), in time order, an
/// optional header naming those columns. Each row holds from its time until
/// the next; before the first row both readings are unknown (0.0, as
/// [`Load`] counts unknown), and so is a load average the file does not
/// give.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadTrace {
    /// `(time in microseconds, reading)`, sorted by time.
    pub steps: Vec<(i64, Load)>,
}

impl LoadTrace {
    /// Reads a load trace; an error names the line (1-based) and what is
    /// wrong with it.
    pub fn read_csv(input: impl BufRead) -> Result<Self, String> {
        let mut steps: Vec<(i64, Load)> = Vec::new();
        for (index, line) in input.lines().enumerate() {
            let n = index + 1;
            let line = line.map_err(|e| format!("line {n}: {e}"))?;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if steps.is_empty() && fields[0].parse::<f64>().is_err() {
                let known = ["time", "cpu_usage", "load_average"];
                if fields.len() < 2 || fields.len() > 3 || fields.iter().zip(known).any(|(f, k)| *f != k) {
                    return Err(format!(
                        "line {n}: the header must be `time,cpu_usage` or `time,cpu_usage,load_average`"
                    ));
                }
                continue;
            }
            if fields.len() < 2 || fields.len() > 3 {
                return Err(format!("line {n}: expected time,cpu_usage[,load_average], got {} fields", fields.len()));
            }
            let number =
                |i: usize, what: &str| -> Result<f64, String> {
                    fields[i].parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| {
                        format!("line {n}, column {}: {what} `{}` is not a number ≥ 0", i + 1, fields[i])
                    })
                };
            let time = number(0, "time")?;
            let cpu_usage = number(1, "cpu_usage")?;
            if cpu_usage > 1.0 {
                return Err(format!("line {n}, column 2: cpu_usage {cpu_usage} is above 1 (a fraction of the CPU)"));
            }
            let load_average = if fields.len() == 3 { number(2, "load_average")? } else { 0.0 };
            let at = (time * 1e6).round() as i64;
            if steps.last().is_some_and(|&(t, _)| at < t) {
                return Err(format!("line {n}: time {time} is before the previous row's"));
            }
            steps.push((at, Load { cpu_usage, load_average }));
        }
        Ok(LoadTrace { steps })
    }

    /// The reading at `now_micros`: the last row at or before it.
    pub fn at(&self, now_micros: i64) -> Load {
        let i = self.steps.partition_point(|&(t, _)| t <= now_micros);
        match i.checked_sub(1) {
            Some(i) => self.steps[i].1,
            None => Load { cpu_usage: 0.0, load_average: 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_time_grows_once_the_workers_are_busy() {
        let mut s = Server::new(ServerConfig::parse("workers=2,service=10ms").unwrap());
        assert_eq!(s.reading().cpu_usage, 0.0);
        assert_eq!(s.start(), 10_000);
        assert_eq!(s.reading().cpu_usage, 0.5);
        assert_eq!(s.start(), 10_000);
        assert_eq!(s.start(), 15_000, "three on two workers: 1.5 × the service time");
        assert_eq!((s.reading().cpu_usage, s.reading().load_average), (1.0, 3.0));
        s.finish();
        assert_eq!((s.in_flight(), s.peak_in_flight()), (2, 3));
    }

    #[test]
    fn server_errors() {
        let msg = |t: &str| ServerConfig::parse(t).unwrap_err().to_string();
        assert!(msg("workers=0,service=1ms").contains("at least 1"), "{}", msg("workers=0,service=1ms"));
        assert!(msg("workers=1").contains("needs `service=`"));
        assert!(msg("workers=1,service=0s").contains("longer than 0"));
        assert!(msg("workers=1,service=1ms,cpu=3").contains("unknown parameter `cpu`"));
        assert_eq!(ServerConfig::parse("workers=8,service=10ms").unwrap().capacity_per_second(), 800.0);
    }

    #[test]
    fn load_trace_is_a_step_function() {
        let t = LoadTrace::read_csv("time,cpu_usage,load_average\n1,0.5,2\n2.5,0.9,4\n".as_bytes()).unwrap();
        assert_eq!(t.at(0), Load { cpu_usage: 0.0, load_average: 0.0 });
        assert_eq!(t.at(1_000_000).cpu_usage, 0.5);
        assert_eq!(t.at(2_499_999).load_average, 2.0);
        assert_eq!(t.at(9_000_000).cpu_usage, 0.9);
        let bare = LoadTrace::read_csv("0,0.3\n".as_bytes()).unwrap();
        assert_eq!(bare.at(5), Load { cpu_usage: 0.3, load_average: 0.0 });
        let err = |s: &str| LoadTrace::read_csv(s.as_bytes()).unwrap_err();
        assert!(err("time,cpu\n").contains("line 1: the header"));
        assert!(err("0,1.5\n").contains("line 1, column 2: cpu_usage 1.5 is above 1"));
        assert!(err("1,0.5\n0,0.5\n").contains("line 2: time 0 is before"));
        assert!(err("0,x\n").contains("line 1, column 2"));
        assert!(err("0\n").contains("line 1: expected"));
    }
}
