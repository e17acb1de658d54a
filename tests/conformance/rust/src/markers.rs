//! `srtcm` and `trtcm` (RFC 2697, RFC 2698), replayed through
//! [`ratekeeper::SrTcm`] and [`ratekeeper::TrTcm`] on a manual clock.

use std::sync::Arc;

use ratekeeper::{Argument, Color, Error, ManualClock, SrTcm, TrTcm};
use serde_json::Value;

use crate::{count_field, expect_eq, expect_outcome, int_field, run_steps, str_field};

type Clock = Arc<ManualClock>;

/// The two markers behind one interface, for replaying.
trait Marker {
    fn mark(&self, bytes: u64) -> Color;
    fn mark_aware(&self, bytes: u64, color: Color) -> Color;
    /// Checks a `tokens` step.
    fn check_tokens(&self, step: &Value) -> Result<(), String>;
}

impl Marker for SrTcm<Clock> {
    fn mark(&self, bytes: u64) -> Color {
        SrTcm::mark(self, bytes)
    }
    fn mark_aware(&self, bytes: u64, color: Color) -> Color {
        SrTcm::mark_aware(self, bytes, color)
    }
    fn check_tokens(&self, step: &Value) -> Result<(), String> {
        let (committed, excess) = self.tokens();
        expect_eq("committed", int_field(step, "committed")?, committed as i64)?;
        expect_eq("excess", int_field(step, "excess")?, excess as i64)
    }
}

impl Marker for TrTcm<Clock> {
    fn mark(&self, bytes: u64) -> Color {
        TrTcm::mark(self, bytes)
    }
    fn mark_aware(&self, bytes: u64, color: Color) -> Color {
        TrTcm::mark_aware(self, bytes, color)
    }
    fn check_tokens(&self, step: &Value) -> Result<(), String> {
        let (peak, committed) = self.tokens();
        expect_eq("peak", int_field(step, "peak")?, peak as i64)?;
        expect_eq("committed", int_field(step, "committed")?, committed as i64)
    }
}

pub(crate) fn run(algorithm: &str, spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let count = |key: &str, argument| count_field(spec, key, argument);
    match algorithm {
        "srtcm" => {
            let (cir, cbs, ebs) =
                (count("cir", Argument::Cir)?, count("cbs", Argument::SrTcmCbs)?, count("ebs", Argument::Ebs)?);
            let created = cir.and_then(|cir| SrTcm::with_clock(cir, cbs?, ebs?, Arc::clone(&clock)));
            replay(case, created, &clock)
        }
        _ => {
            let (pir, pbs) = (count("pir", Argument::Pir)?, count("pbs", Argument::Pbs)?);
            let (cir, cbs) = (count("cir", Argument::Cir)?, count("cbs", Argument::Cbs)?);
            let created = pir.and_then(|pir| TrTcm::with_clock(pir, pbs?, cir?, cbs?, Arc::clone(&clock)));
            replay(case, created, &clock)
        }
    }
}

fn replay<M: Marker>(case: &Value, created: Result<M, Error>, clock: &ManualClock) -> Result<(), String> {
    run_steps(case, created, |marker, step| {
        let color = |key: &str| {
            let name = str_field(step, key)?;
            Color::from_name(name).ok_or_else(|| format!("{key} {name:?} is not a colour"))
        };
        match str_field(step, "op")? {
            "sleep" => {
                clock.advance_micros(int_field(step, "micros")?);
                Ok(())
            }
            "mark" => {
                let bytes = count_field(step, "bytes", Argument::Bytes)?;
                expect_outcome(step, bytes.map(|b| marker.mark(b)), |c| expect_eq("color", color("color")?, c))
            }
            "mark_aware" => {
                let bytes = count_field(step, "bytes", Argument::Bytes)?;
                let pre = color("pre_color")?;
                expect_outcome(step, bytes.map(|b| marker.mark_aware(b, pre)), |c| {
                    expect_eq("color", color("color")?, c)
                })
            }
            "tokens" => marker.check_tokens(step),
            other => Err(format!("unknown op {other:?}")),
        }
    })
}
