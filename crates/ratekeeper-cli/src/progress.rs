//! Progress on stderr for long traces: redrawn in place on a terminal, a
//! line every few seconds when asked for elsewhere (`--progress` into a
//! log: the first report at once, then one every five seconds, then the
//! last), nothing otherwise. On a terminal a short run prints nothing: the
//! first report waits for half a second of work.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// When to show progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// When stderr is a terminal.
    Auto,
    /// Always (one line per report when stderr is not a terminal).
    Always,
    /// Never.
    Never,
}

/// Reports progress of one stage at a time.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    terminal: bool,
    delay: Duration,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    /// A reporter following `when`.
    pub fn new(when: When) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let enabled = match when {
            When::Auto => terminal,
            When::Always => true,
            When::Never => false,
        };
        let delay = if when == When::Always { Duration::ZERO } else { Duration::from_millis(500) };
        Progress { enabled, terminal, delay, started: Instant::now(), last: None, drawn: false }
    }

    /// Starts timing a new stage.
    pub fn start(&mut self) {
        self.started = Instant::now();
        self.last = None;
    }

    /// Reports `done` of `total` `what` (`total` 0: unknown).
    pub fn update(&mut self, what: &str, done: u64, total: u64) {
        if !self.enabled || self.started.elapsed() < self.delay {
            return;
        }
        let every = if self.terminal { Duration::from_millis(100) } else { Duration::from_secs(5) };
        // In a log, the last report is always written.
        let logged_last = !self.terminal && total > 0 && done >= total;
        if !logged_last && self.last.is_some_and(|l| l.elapsed() < every) {
            return;
        }
        self.last = Some(Instant::now());
        let text = if total > 0 {
            format!("{what}: {done} of {total} ({:.0}%)", done as f64 * 100.0 / total as f64)
        } else {
            format!("{what}: {done}")
        };
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{text}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    /// Clears the line drawn on a terminal.
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}
