//! The leaky bucket as a meter and as a queue
//! (`ratekeeper_core::{LeakyBucketMeter, LeakyBucketQueue}`), and their
//! std wrappers on a manual clock.
//!
//! Meter: the admission contract with an exact retry-after, whole after
//! `reset_after`, refusals that change nothing; the level never above the
//! capacity; at most `capacity + count × T / period` units in any interval
//! T, exactly (at the times the meter works at: a time earlier than the
//! latest counts as the latest); and the same decisions as GCRA with
//! `max_burst = capacity − 1` (ITU-T I.371) while time only moves forward.
//!
//! Queue: the admission contract; slots handed out in order, each request's
//! first slot at least `cost × interval` after the previous request's and
//! never more than `slack` intervals before its request (the first ever not
//! before it); the wait is the slot's distance, when ahead; no request's
//! last unit more than `capacity` units' worth away; and `acquire` on the
//! std queue sleeps exactly the wait it reports.

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper::Clock;
use ratekeeper_core::{Admission, Argument, Error, Gcra, LeakyBucketMeter, LeakyBucketQueue, Packed};

use crate::bounds::Ledger;
use crate::contract::{admit_strict, check_fields, Promises};
use crate::mirror::{clock_at, Advance, Mirror, MirrorOp};
use crate::values::{wild_i64, wild_u64, Count, Step, Timeline};

/// A meter's parameters.
#[derive(Debug, Clone, Copy)]
pub struct MeterParams {
    capacity: u64,
    count_per_period: u64,
    period_micros: i64,
}

impl<'a> Arbitrary<'a> for MeterParams {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(3u8, 4)? {
            Ok(MeterParams {
                capacity: u.int_in_range(1..=20)?,
                count_per_period: u.int_in_range(1..=20)?,
                period_micros: u.int_in_range(1..=2_000_000)?,
            })
        } else {
            Ok(MeterParams { capacity: wild_u64(u)?, count_per_period: wild_u64(u)?, period_micros: wild_i64(u)? })
        }
    }
}

/// One operation on the meter.
#[derive(Debug, Arbitrary)]
pub enum MeterOp {
    /// `check(cost)` after moving the time.
    Check(Step, Count),
    /// `level_at` after moving the time.
    Level(Step),
    /// An operation on the std meter.
    Std(MirrorOp),
    /// The std meter's `level`.
    StdLevel,
}

/// A run of the meter.
#[derive(Debug, Arbitrary)]
pub struct MeterInput {
    params: MeterParams,
    origin: Advance,
    ops: Vec<MeterOp>,
}

fn meter_error(p: &MeterParams) -> Option<Argument> {
    let max = i64::MAX as u64;
    if p.capacity == 0 || p.capacity > max {
        Some(Argument::Capacity)
    } else if p.count_per_period == 0 || p.count_per_period > max {
        Some(Argument::CountPerPeriod)
    } else if p.period_micros <= 0 {
        Some(Argument::Period)
    } else {
        None
    }
}

/// Runs one meter input.
pub fn run_meter(input: MeterInput) {
    let p = input.params;
    let made = LeakyBucketMeter::new(p.capacity, p.count_per_period, p.period_micros);
    let clock = clock_at(input.origin);
    let period = Duration::from_micros(p.period_micros.max(0) as u64);
    let std = ratekeeper::LeakyBucketMeter::with_clock(p.capacity, p.count_per_period, period, clock.clone());
    let mut meter = match (made, meter_error(&p)) {
        (Ok(m), None) => m,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            assert!(std.is_err());
            return;
        }
        (made, expected) => panic!("LeakyBucketMeter::new{p:?} = {made:?}, expected an error about {expected:?}"),
    };
    let mut mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), meter);
    // I.371: the same decisions as GCRA, while time only moves forward.
    let mut gcra = Some(Gcra::new(p.capacity - 1, p.count_per_period, p.period_micros).expect("GCRA of the meter"));
    let promises =
        Promises { exact_retry: true, whole_after_reset: true, refusal_is_identity: true, ..Promises::default() };
    let mut time = Timeline::default();
    let mut ledger = Ledger::default();
    for op in input.ops {
        match op {
            MeterOp::Check(step, cost) => {
                time.step(step);
                if !time.forward {
                    gcra = None;
                }
                let d = admit_strict(&mut meter, cost.0, &time, promises);
                assert_eq!(d.limit, p.capacity);
                if d.allowed {
                    // The meter works at its latest time.
                    ledger.push(i128::from(meter.pack()[2] as i64), cost.0);
                }
                // (Where ticks come near i128's range both saturate, each
                // its own way: only ordinary magnitudes are compared.)
                let ticks = time.now.unsigned_abs() as u128 * u128::from(p.count_per_period);
                let full = u128::from(p.capacity + 1) * p.period_micros as u128;
                if ticks >= 1 << 120 || full >= 1 << 120 || cost.0 >= 1 << 56 {
                    gcra = None;
                }
                if let Some(g) = gcra.as_mut() {
                    let e = g.check(cost.0, time.now);
                    let fields = |d: &ratekeeper_core::Decision| {
                        (d.allowed, d.remaining, d.retry_after_micros, d.reset_after_micros)
                    };
                    assert_eq!(fields(&d), fields(&e), "the meter and GCRA disagree at {}: {d:?} {e:?}", time.now);
                }
            }
            MeterOp::Level(step) => {
                let now = time.step(step);
                let level = meter.level_at(now);
                assert!(level <= p.capacity, "level {level} above the capacity: {meter:?}");
                // The level is rounded down, what remains too: between them
                // they miss at most the unit partly drained.
                let remaining = meter.peek(0, now).remaining;
                assert!(
                    (p.capacity - 1..=p.capacity).contains(&(remaining + level)),
                    "{level} + {remaining}: {meter:?}"
                );
            }
            MeterOp::Std(op) => mirror.apply(op),
            MeterOp::StdLevel => {
                let now = mirror.now();
                assert_eq!(mirror.limiter.level(), mirror.core.level_at(now));
            }
        }
    }
    let (count, period) = (u128::from(p.count_per_period), p.period_micros as u128);
    if let Err(e) = ledger.check_rate_exact(count, period, u128::from(p.capacity)) {
        panic!("the leaky bucket meter admitted too much: {e}");
    }
}

/// A queue's parameters.
#[derive(Debug, Clone, Copy)]
pub struct QueueParams {
    capacity: u64,
    interval_micros: i64,
    slack: u64,
}

impl<'a> Arbitrary<'a> for QueueParams {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(3u8, 4)? {
            let (capacity, interval_micros) = (u.int_in_range(0..=10)?, u.int_in_range(1..=100_000)?);
            let slack = if u.ratio(1u8, 2)? { 0 } else { u.int_in_range(1..=12)? };
            Ok(QueueParams { capacity, interval_micros, slack })
        } else {
            Ok(QueueParams { capacity: wild_u64(u)?, interval_micros: wild_i64(u)?, slack: wild_u64(u)? })
        }
    }
}

/// One operation on the queue.
#[derive(Debug, Arbitrary)]
pub enum QueueOp {
    /// `check(cost)` after moving the time.
    Check(Step, Count),
    /// An operation on the std queue.
    Std(MirrorOp),
    /// The std queue's `acquire(cost)`, which sleeps on the manual clock.
    StdAcquire(Count),
}

/// A run of the queue.
#[derive(Debug, Arbitrary)]
pub struct QueueInput {
    params: QueueParams,
    origin: Advance,
    ops: Vec<QueueOp>,
}

/// Runs one queue input.
pub fn run_queue(input: QueueInput) {
    let p = input.params;
    let made = LeakyBucketQueue::with_slack(p.capacity, p.interval_micros, p.slack);
    let clock = clock_at(input.origin);
    let interval = Duration::from_micros(p.interval_micros.max(0) as u64);
    let std = ratekeeper::LeakyBucketQueue::with_slack_and_clock(p.capacity, interval, p.slack, clock.clone());
    let expected = if p.capacity > i64::MAX as u64 {
        Some(Argument::QueueCapacity)
    } else if p.interval_micros <= 0 {
        Some(Argument::Interval)
    } else {
        (p.slack > i64::MAX as u64).then_some(Argument::Slack)
    };
    let mut queue = match (made, expected) {
        (Ok(q), None) => q,
        (Err(Error::InvalidArgument(e)), Some(argument)) => {
            assert_eq!(e.argument(), argument, "{p:?}");
            assert!(std.is_err());
            return;
        }
        (made, expected) => {
            panic!("LeakyBucketQueue::with_slack{p:?} = {made:?}, expected an error about {expected:?}")
        }
    };
    let mut mirror = Mirror::new(clock, std.expect("the std layer refused what the core accepted"), queue);
    let promises =
        Promises { exact_retry: true, whole_after_reset: true, refusal_is_identity: true, ..Promises::default() };
    let mut time = Timeline::default();
    let interval = i128::from(p.interval_micros);
    // The end of the last slot handed out (where the next may start).
    let mut free: Option<i128> = None;
    for op in input.ops {
        match op {
            QueueOp::Check(step, cost) => {
                let now = time.step(step);
                // Slots are saved only once one was handed out.
                let used = queue.next_free_micros() != 0;
                let d = admit_strict(&mut queue, cost.0, &time, promises);
                assert_eq!(d.limit, p.capacity.saturating_add(1));
                // (A wait of NEVER: the time went back so far, more than
                // 2^63 µs before the queue's next slot, that the wait does
                // not fit in the decision; nothing to check.)
                if d.allowed && cost.0 > 0 && d.wait_micros != ratekeeper_core::NEVER {
                    // The request's first slot (in the past when it took a
                    // saved one), and the end of its last.
                    let end = i128::from(queue.next_free_micros());
                    let start = end - interval * i128::from(cost.0);
                    let now = i128::from(now);
                    assert_eq!(i128::from(d.wait_micros), (start - now).max(0), "{queue:?}");
                    let saved = if used { i128::from(p.slack) } else { 0 };
                    assert!(start >= now - interval * saved, "slot at {start}, more than the slack before {now}");
                    if let Some(free) = free {
                        assert!(start >= free, "slot at {start} before the last one ended at {free}: {queue:?}");
                    }
                    let last_wait = start - now + interval * (i128::from(cost.0) - 1);
                    assert!(last_wait <= interval * i128::from(p.capacity), "waits {last_wait} µs: {queue:?}");
                    free = Some(end);
                }
            }
            QueueOp::Std(op) => mirror.apply(op),
            QueueOp::StdAcquire(cost) => {
                let (now, reading) = (mirror.now(), mirror.clock.now_micros());
                let d = mirror.limiter.acquire(cost.0);
                assert_eq!(d, mirror.core.check(cost.0, now));
                check_fields(&d, cost.0, promises);
                let slept = if d.allowed { d.wait_micros } else { 0 };
                assert_eq!(mirror.clock.now_micros(), reading.saturating_add(slept), "acquire slept otherwise");
                mirror.assert_same();
            }
        }
    }
}
