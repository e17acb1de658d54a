//! `token_bucket` (x/time/rate's semantics), replayed through
//! [`ratekeeper::TokenBucket`] on a manual clock. Reservations are kept in
//! the order the `reserve` steps made them, for `cancel` to refer to.

use std::sync::Arc;
use std::time::Duration;

use ratekeeper::{Argument, ManualClock, Reservation, TokenBucket};
use serde_json::Value;

use crate::{
    bool_field, count_field, double_field, expect_decision, expect_double, expect_eq, expect_outcome, int_field,
    run_steps, str_field,
};

struct Replay {
    bucket: TokenBucket<Arc<ManualClock>>,
    clock: Arc<ManualClock>,
    reservations: Vec<Reservation>,
}

pub(crate) fn run(spec: &Value, case: &Value) -> Result<(), String> {
    let clock = Arc::new(ManualClock::new());
    let rate = double_field(spec, "rate")?;
    let created = count_field(spec, "burst", Argument::Burst)?
        .and_then(|burst| TokenBucket::with_clock(rate, burst, Arc::clone(&clock)))
        .map(|bucket| Replay { bucket, clock, reservations: Vec::new() });
    run_steps(case, created, step)
}

fn step(r: &mut Replay, step: &Value) -> Result<(), String> {
    match str_field(step, "op")? {
        "sleep" => {
            r.clock.advance_micros(int_field(step, "micros")?);
            Ok(())
        }
        "check" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| r.bucket.check(c)), |d| expect_decision(step, &d))
        }
        "peek" => {
            let cost = count_field(step, "cost", Argument::Cost)?;
            expect_outcome(step, cost.map(|c| r.bucket.peek(c)), |d| expect_decision(step, &d))
        }
        "allow" => {
            let n = count_field(step, "n", Argument::Cost)?;
            expect_outcome(step, n.map(|n| r.bucket.check(n).allowed), |allowed| {
                expect_eq("allowed", bool_field(step, "allowed")?, allowed)
            })
        }
        "reserve" => {
            let n = count_field(step, "n", Argument::Cost)?;
            expect_outcome(step, n.map(|n| r.bucket.reserve_n(n)), |reservation| {
                r.reservations.push(reservation);
                let ok = bool_field(step, "ok")?;
                expect_eq("ok", ok, reservation.ok())?;
                if ok {
                    let delay = micros(r.bucket.delay(&reservation));
                    expect_eq("delay_micros", int_field(step, "delay_micros")?, delay)?;
                }
                Ok(())
            })
        }
        "cancel" => {
            let index = int_field(step, "reservation")?;
            let reservation = usize::try_from(index)
                .ok()
                .and_then(|i| r.reservations.get_mut(i))
                .ok_or_else(|| format!("no reservation #{index}"))?;
            r.bucket.cancel(reservation);
            Ok(())
        }
        "wait" => {
            let n = count_field(step, "n", Argument::Cost)?;
            let timeout = Duration::from_micros(int_field(step, "timeout_micros")?.max(0) as u64);
            // `wait_n` sleeps on the manual clock, which moves it by the wait.
            expect_outcome(step, n.map(|n| r.bucket.wait_n(n, timeout)), |d| {
                let ok = bool_field(step, "ok")?;
                expect_eq("ok", ok, d.allowed)?;
                if ok {
                    expect_eq("delay_micros", int_field(step, "delay_micros")?, d.wait_micros)?;
                }
                Ok(())
            })
        }
        "set_rate" => expect_outcome(step, r.bucket.set_rate(double_field(step, "rate")?), |()| Ok(())),
        "set_burst" => {
            let burst = count_field(step, "burst", Argument::Burst)?;
            expect_outcome(step, burst.and_then(|b| r.bucket.set_burst(b)), |()| Ok(()))
        }
        "tokens" => expect_double("tokens", double_field(step, "tokens")?, r.bucket.tokens()),
        "rate" => expect_double("rate", double_field(step, "rate")?, r.bucket.rate()),
        "burst" => expect_eq("burst", int_field(step, "burst")?, r.bucket.burst() as i64),
        other => Err(format!("unknown op {other:?}")),
    }
}

/// A delay in whole microseconds (the std API's `Duration` came from them).
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}
