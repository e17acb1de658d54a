//! The promises about how much a limiter admits over time, checked from
//! the outside: a [`Ledger`] records what was admitted when, and its
//! checks say whether any interval held more than the algorithm allows.
//!
//! Each check holds for every prefix of the run if it holds for the whole
//! run (a subset of events never holds more), so checking once at the end
//! of a run is the same as checking after every step.

/// Units admitted, each at a time (in whatever unit the algorithm counts:
/// microseconds, nanoseconds, window indices).
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    events: Vec<(i128, u128)>,
}

impl Ledger {
    /// Records `units` admitted at `at`. A cost of 0 takes nothing and is
    /// not recorded.
    pub fn push(&mut self, at: i128, units: u64) {
        if units > 0 {
            self.events.push((at, u128::from(units)));
        }
    }

    /// The events, in the order they were recorded.
    pub fn events(&self) -> &[(i128, u128)] {
        &self.events
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events, sorted by time.
    fn sorted(&self) -> Vec<(i128, u128)> {
        let mut events = self.events.clone();
        events.sort_unstable();
        events
    }

    /// Exactly `units ≤ burst + count × span / period` for every closed
    /// interval of length `span`: the bound of GCRA and the leaky bucket as
    /// a meter (`count` units per `period`, `burst` at once), in exact
    /// integers (both sides multiplied by `period`).
    pub fn check_rate_exact(&self, count: u128, period: u128, burst: u128) -> Result<(), String> {
        let events = self.sorted();
        for i in 0..events.len() {
            let mut sum = 0u128;
            for &(t, units) in &events[i..] {
                sum = sum.saturating_add(units);
                let span = (t - events[i].0) as u128;
                let allowed = burst.saturating_mul(period).saturating_add(count.saturating_mul(span));
                if sum.saturating_mul(period) > allowed {
                    return Err(format!(
                        "{sum} units in [{}, {t}]: more than {burst} + {count} × {span} / {period}",
                        events[i].0
                    ));
                }
            }
        }
        Ok(())
    }

    /// `units ≤ burst + rate × (span + late)` for every closed interval,
    /// up to a relative `slack` (for algorithms that count in `f64`).
    pub fn check_rate_float(&self, rate: f64, burst: f64, late: f64, slack: f64) -> Result<(), String> {
        let events = self.sorted();
        for i in 0..events.len() {
            let mut sum = 0u128;
            for &(t, units) in &events[i..] {
                sum = sum.saturating_add(units);
                let span = (t - events[i].0) as f64;
                let bound = burst + rate * (span + late);
                if sum as f64 > bound + slack * (1.0 + bound) {
                    return Err(format!(
                        "{sum} units in [{}, {t}]: more than {burst} + {rate} × ({span} + {late})",
                        events[i].0
                    ));
                }
            }
        }
        Ok(())
    }

    /// The most units in any half-open window `(t − length, t]`.
    pub fn max_in_window(&self, length: i128) -> u128 {
        let events = self.sorted();
        let (mut best, mut sum, mut first) = (0u128, 0u128, 0usize);
        for j in 0..events.len() {
            sum += events[j].1;
            while events[first].0 <= events[j].0 - length {
                sum -= events[first].1;
                first += 1;
            }
            best = best.max(sum);
        }
        best
    }

    /// The most units at any one time (the events grouped by time): for
    /// windows counted by index, the most in any one window.
    pub fn max_at_once(&self) -> u128 {
        self.max_in_window(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_rates() {
        let mut l = Ledger::default();
        for (t, u) in [(0, 2), (5, 1), (10, 3), (10, 1), (30, 2), (31, 0)] {
            l.push(t, u);
        }
        assert_eq!(l.max_at_once(), 4);
        assert_eq!(l.max_in_window(10), 5); // (0, 10]: at 5 and 10
        assert_eq!(l.max_in_window(11), 7);
        assert_eq!(l.max_in_window(100), 9);
        // 4 units at 10: a burst of 4 at 1 per 2 µs allows it (and 7 in
        // [0, 10]); a burst of 3 does not.
        assert!(l.check_rate_exact(1, 2, 4).is_ok());
        assert!(l.check_rate_exact(1, 2, 3).is_err());
        assert!(l.check_rate_float(0.5, 4.0, 0.0, 0.0).is_ok());
        assert!(l.check_rate_float(0.5, 3.9, 0.0, 0.0).is_err());
    }
}
