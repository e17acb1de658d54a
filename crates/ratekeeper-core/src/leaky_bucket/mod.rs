//! The leaky bucket, in both of its classic readings.
//!
//! * [`LeakyBucketMeter`] — *the leaky bucket as a meter*: a bucket of
//!   `capacity` units that leaks at a fixed rate; a request pours its cost
//!   in, and is refused (pouring nothing) if the bucket would overflow. This
//!   is the "continuous-state leaky bucket algorithm" of ITU-T I.371 (the
//!   ATM Forum's GCRA, second form): the level is kept with the time it was
//!   last measured, and drained on the next request. It polices: a request
//!   is admitted now or refused.
//! * [`LeakyBucketQueue`] — *the leaky bucket as a queue* (a shaper, Jonathan
//!   Turner's original 1986 picture and what nginx's `limit_req` does): each
//!   admitted request takes the next free slot, `interval` after the last
//!   one, and is told how long to wait for it; a request whose slot would be
//!   further away than `capacity` waiting units is refused. Requests leave
//!   evenly spaced, whatever their arrival — the way to protect a service
//!   you call. With slack it is uber-go/ratelimit's `Take()`: slots left
//!   unused while idle may be handed out late (`uber_tests.rs` translates
//!   Uber's own tests).
//!
//! Both count time in whole microseconds; the meter works in ticks of
//! `1 / count_per_period` µs so its leak rate is exact. A time earlier than
//! the latest seen counts as the latest: time going backwards neither
//! drains the meter nor frees a slot.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::full::{later_than, micros_ceil_signed, Full};
use crate::packed::Packed;
use crate::ticks;

/// The leaky bucket as a meter: `capacity` units, leaking `count_per_period`
/// units every `period_micros`. Created empty at time 0.
///
/// Worst case: the bucket admits `capacity` units at once, then the leak
/// rate: at most `capacity + rate × T` units in any interval of length T.
/// It makes the same decisions as [`Gcra`](crate::Gcra) with
/// `max_burst = capacity − 1` (I.371 proves the two algorithms equivalent;
/// a property test checks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakyBucketMeter {
    /// The water level at `last`, as the time it takes to drain, in ticks
    /// of `1 / count_per_period` µs (one unit is `period_micros` ticks).
    level: i128,
    /// When `level` was measured, in microseconds.
    last: i64,
    capacity: u64,
    count_per_period: u64,
    period_micros: i64,
}

impl LeakyBucketMeter {
    /// A meter of `capacity` units that leaks `count_per_period` units
    /// every `period_micros` microseconds.
    ///
    /// Errors when `capacity` is 0 or above `i64::MAX`, `count_per_period`
    /// is 0 or above `i64::MAX`, or `period_micros` is not positive.
    pub fn new(capacity: u64, count_per_period: u64, period_micros: i64) -> Result<Self, Error> {
        if capacity == 0 || capacity > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::Capacity, capacity));
        }
        if count_per_period == 0 || count_per_period > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::CountPerPeriod, count_per_period));
        }
        if period_micros <= 0 {
            return Err(Error::invalid_int(Argument::Period, period_micros));
        }
        Ok(LeakyBucketMeter { level: 0, last: 0, capacity, count_per_period, period_micros })
    }

    /// The bucket's size in units.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The water level at `now_micros`, in units (rounded down).
    pub fn level_at(&self, now_micros: i64) -> u64 {
        let (level, _) = self.drained(now_micros);
        ticks::units(level, i128::from(self.period_micros))
    }

    /// The level drained up to `now_micros` (clamped to the latest time
    /// seen), and that time.
    #[inline]
    fn drained(&self, now_micros: i64) -> (i128, i64) {
        // (Saturating here and below: valid parameters stay far from
        // `i128`'s range, but the std layer may decide on a torn copy of
        // the state, and the core never panics.)
        let now = now_micros.max(self.last);
        let elapsed = i128::from(now) - i128::from(self.last);
        let leaked = elapsed.saturating_mul(i128::from(self.count_per_period));
        (self.level.saturating_sub(leaked).max(0), now)
    }

    /// Ticks as whole microseconds, rounded up.
    #[inline]
    fn micros_ceil(&self, ticks: i128) -> i64 {
        ticks::micros_ceil(ticks, self.count_per_period)
    }

    #[inline]
    fn decide(&self, cost: u64, now_micros: i64) -> (Decision, Option<(i128, i64)>) {
        let unit = i128::from(self.period_micros.max(1));
        let full = unit.saturating_mul(i128::from(self.capacity));
        let (level, now) = self.drained(now_micros);
        let poured = unit.saturating_mul(i128::from(cost));
        let new_level = level.saturating_add(poured);
        let window = self.micros_ceil(full);
        if new_level <= full {
            let remaining = ticks::units(full.saturating_sub(new_level), unit);
            let decision = Decision::allowed(self.capacity, remaining, self.micros_ceil(new_level), window);
            return (decision, (cost > 0).then_some((new_level, now)));
        }
        let retry_after = if cost > self.capacity { NEVER } else { self.micros_ceil(new_level.saturating_sub(full)) };
        let remaining = ticks::units(full.saturating_sub(level), unit);
        (Decision::refused(self.capacity, remaining, retry_after, self.micros_ceil(level), window), None)
    }
}

impl Admission for LeakyBucketMeter {
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let (decision, update) = self.decide(cost, now_micros);
        if let Some((level, last)) = update {
            self.level = level;
            self.last = last;
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(cost, now_micros).0
    }

    /// Takes `cost` units of water out at `now_micros` (the level as
    /// drained by then), floored at empty.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        if cost == 0 {
            return;
        }
        let unit = i128::from(self.period_micros.max(1));
        let (level, now) = self.drained(now_micros);
        self.level = level.saturating_sub(unit.saturating_mul(i128::from(cost))).max(0);
        self.last = now;
    }
}

/// Full when the water has drained away by now, measured no earlier than
/// the level's own time: a fresh meter is empty.
impl Full for LeakyBucketMeter {
    fn fresh(&self) -> Self {
        LeakyBucketMeter { level: 0, last: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        now_micros >= 0 && self.last <= now_micros && self.drained(now_micros).0 == 0
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        let drain = micros_ceil_signed(self.level.max(0), self.count_per_period);
        later_than(now_micros, self.last.max(0).saturating_add(drain))
    }
}

/// Words: the level (two words, low first) and its time, then the
/// configuration.
impl Packed<6> for LeakyBucketMeter {
    /// A decision changes the level and its time.
    const HOT: usize = 3;

    #[inline]
    fn pack(&self) -> [u64; 6] {
        let level = self.level as u128;
        [
            level as u64,
            (level >> 64) as u64,
            self.last as u64,
            self.capacity,
            self.count_per_period,
            self.period_micros as u64,
        ]
    }

    #[inline]
    fn unpack(w: [u64; 6]) -> Self {
        LeakyBucketMeter {
            level: (u128::from(w[0]) | (u128::from(w[1]) << 64)) as i128,
            last: w[2] as i64,
            capacity: w[3],
            count_per_period: w[4],
            period_micros: w[5] as i64,
        }
    }
}

/// The leaky bucket as a queue (a shaper): one unit leaves every
/// `interval_micros`; each admitted request is given the next free slot and
/// told to wait for it; at most `capacity` units wait at once. Created empty
/// at time 0.
///
/// With `slack` (Uber's `ratelimit.WithSlack`), up to `slack` slots left
/// unused while the queue was idle are saved and handed out late: a request
/// takes the slot `max(next free slot, now − slack × interval)`, so after a
/// pause up to `slack + 1` units go at once (their slots are in the past)
/// before the queue spaces requests again. Nothing is saved before the first
/// admitted request, which takes its slot now, as a new Uber limiter does.
/// Slack 0 (Uber's `WithoutSlack`, and [`new`](Self::new)) saves nothing.
///
/// Guarantee: the slots of admitted requests are at least `interval × cost`
/// apart (a request of cost `c` takes `c` consecutive slots), and no slot is
/// more than `slack × interval` before the moment it was handed out, so in
/// any interval of length T the queue lets at most `slack + 1 + T / interval`
/// units act (`1 + T / interval` without slack). A request waits at most
/// `capacity × interval`.
///
/// The decision's `limit` and `remaining` count the queue only (`capacity +
/// 1`, one unit served now and `capacity` waiting): saved slack is a bonus
/// the headers do not promise, so `remaining` never exceeds `limit`. Saved
/// slots serve requests one by one, never one request of more than `limit`
/// units (refused with a retry-after of never, slack or not, as every
/// algorithm refuses a cost above its limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakyBucketQueue {
    /// When the queue is empty again: the first free slot, in microseconds.
    /// 0 until a request is admitted, and at least `interval` after (so 0
    /// also says "never used": nothing saved yet).
    next_free: i64,
    /// How many units may wait at once.
    capacity: u64,
    interval_micros: i64,
    /// How many unused slots may be saved.
    slack: u64,
}

impl LeakyBucketQueue {
    /// A queue that lets one unit go every `interval_micros` and holds at
    /// most `capacity` waiting units (0: a request is admitted only if its
    /// slot is now), saving no slack.
    ///
    /// Errors when `capacity` is above `i64::MAX` or `interval_micros` is
    /// not positive.
    pub fn new(capacity: u64, interval_micros: i64) -> Result<Self, Error> {
        Self::with_slack(capacity, interval_micros, 0)
    }

    /// [`new`](Self::new), saving up to `slack` unused slots while idle
    /// (Uber's `WithSlack(slack)`; Uber's default is 10).
    ///
    /// Errors when `capacity` or `slack` is above `i64::MAX` or
    /// `interval_micros` is not positive. (`slack × interval` may be any
    /// size: it only moves the earliest slot back, and saturates at the
    /// start of time.)
    pub fn with_slack(capacity: u64, interval_micros: i64, slack: u64) -> Result<Self, Error> {
        if capacity > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::QueueCapacity, capacity));
        }
        if interval_micros <= 0 {
            return Err(Error::invalid_int(Argument::Interval, interval_micros));
        }
        if slack > i64::MAX as u64 {
            return Err(Error::invalid_uint(Argument::Slack, slack));
        }
        Ok(LeakyBucketQueue { next_free: 0, capacity, interval_micros, slack })
    }

    /// How many units may wait at once.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The spacing between slots, in microseconds.
    pub fn interval_micros(&self) -> i64 {
        self.interval_micros
    }

    /// How many unused slots the queue may save while idle.
    pub fn slack(&self) -> u64 {
        self.slack
    }

    /// The first free slot (microseconds since creation): when the queue
    /// is empty again.
    pub fn next_free_micros(&self) -> i64 {
        self.next_free
    }

    #[inline]
    fn decide(&self, cost: u64, now_micros: i64) -> (Decision, Option<i64>) {
        let now = i128::from(now_micros);
        let interval = i128::from(self.interval_micros.max(1));
        let next_free = i128::from(self.next_free);
        let limit = self.capacity.saturating_add(1);
        let window = i64::try_from(interval.saturating_mul(i128::from(limit))).unwrap_or(NEVER);
        // Slots that may still be handed out late: none before the first
        // request (Uber's first `Take` takes now), then `slack` of them.
        // (Saturating: valid factors are below 2^63 and their product fits,
        // but a torn copy of the state may hold any slack.)
        let saved = if self.next_free == 0 { 0 } else { i128::from(self.slack) };
        let start = next_free.max(now.saturating_sub(interval.saturating_mul(saved)));
        // Units ahead in the queue, counting a partly elapsed slot as whole.
        let remaining_after = |free: i128| -> u64 {
            let queued = (free - now).max(0);
            let queued_units = (queued + interval - 1) / interval;
            (i128::from(limit) - queued_units).max(0) as u64
        };
        let reset = |free: i128| i64::try_from((free - now).max(0)).unwrap_or(NEVER);
        if cost == 0 {
            return (Decision::allowed(limit, remaining_after(next_free), reset(next_free), window), None);
        }
        // The last of the request's units waits this long for its slot
        // (negative when even it takes a saved slot).
        let last_wait = (start - now).saturating_add(interval.saturating_mul(i128::from(cost) - 1));
        // Where the queue would be free again: a time, so at most
        // `i64::MAX` (slots past the end of time are never handed out;
        // saturating there would let every later request share them).
        let new_free = start.saturating_add(interval.saturating_mul(i128::from(cost)));
        let representable = new_free <= i128::from(i64::MAX);
        if cost <= limit && last_wait <= interval.saturating_mul(i128::from(self.capacity)) && representable {
            let mut decision = Decision::allowed(limit, remaining_after(new_free), reset(new_free), window);
            decision.wait_micros = reset(start);
            return (decision, Some(new_free as i64));
        }
        // (Slots past the end of time only move further out: never.)
        let retry_after = if cost > limit || !representable {
            NEVER
        } else {
            // Admitted once `max(next_free, t − saved × interval) − t +
            // (cost − 1) × interval ≤ capacity × interval`: as `cost ≤
            // capacity + 1`, from `t = next_free + (cost − 1 − capacity) ×
            // interval` (saved slots only ever make `t − saved × interval`
            // smaller than that bound needs).
            let excess = i128::from(cost) - 1 - i128::from(self.capacity);
            reset(next_free.saturating_add(interval.saturating_mul(excess)))
        };
        (Decision::refused(limit, remaining_after(next_free), retry_after, reset(next_free), window), None)
    }
}

impl Admission for LeakyBucketQueue {
    /// Admits `cost` units if the last of them can have a slot within
    /// `capacity` intervals; the decision's `wait_micros` is how long until
    /// the first slot (act then). `limit` is `capacity + 1`: one unit
    /// served now and `capacity` waiting.
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let (decision, next_free) = self.decide(cost, now_micros);
        if let Some(next_free) = next_free {
            self.next_free = next_free;
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        self.decide(cost, now_micros).0
    }

    /// Gives nothing back (a documented no-op): the queue hands out slots,
    /// and a refund cannot tell whose. Moving the first free slot back by
    /// `cost` intervals is right only for the request that took the last
    /// slots; for any other, the next request would get a slot overlapping
    /// those already handed out after it, and requests would no longer
    /// leave evenly spaced — what a shaper promises. Keeping the state
    /// never over-admits.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        let _ = (cost, now_micros);
    }
}

/// Full when the first free slot is not after now: nobody is queued, and a
/// decision reads the slot only as `max(slot, now − saved slots)`.
///
/// With slack, a full queue has saved slots that a fresh one has not (a new
/// Uber limiter saves nothing before its first request): dropping it
/// forgets them, and the recreated queue hands the next request its slot
/// now where the kept one would have handed an earlier one: its next slot is
/// never earlier than the kept queue's next slot, and the worst case (`slack + 1 +
/// T / interval` units in any T) holds across the drop. Without slack the
/// two are the same, as [`Full`] promises.
impl Full for LeakyBucketQueue {
    fn fresh(&self) -> Self {
        LeakyBucketQueue { next_free: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        now_micros >= 0 && self.next_free <= now_micros
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        later_than(now_micros, self.next_free.max(0))
    }
}

/// Words: the first free slot, then the configuration.
impl Packed<4> for LeakyBucketQueue {
    /// A decision changes only the first free slot.
    const HOT: usize = 1;

    #[inline]
    fn pack(&self) -> [u64; 4] {
        [self.next_free as u64, self.capacity, self.interval_micros as u64, self.slack]
    }

    #[inline]
    fn unpack(w: [u64; 4]) -> Self {
        LeakyBucketQueue { next_free: w[0] as i64, capacity: w[1], interval_micros: w[2] as i64, slack: w[3] }
    }
}

#[cfg(test)]
mod uber_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_fills_drains_and_refuses_overflow() {
        // 3 units, leaking 1 per 100 ms.
        let mut m = LeakyBucketMeter::new(3, 1, 100_000).unwrap();
        let d = m.check(2, 0);
        assert_eq!((d.allowed, d.limit, d.remaining, d.reset_after_micros), (true, 3, 1, 200_000));
        assert_eq!(d.window_micros, 300_000);
        assert!(m.check(1, 0).allowed);
        let refused = m.check(1, 0);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_micros, 100_000);
        assert_eq!(m.level_at(0), 3);
        assert_eq!(m.level_at(150_000), 1);
        // 1.5 units in the bucket: one more fits, a second would spill.
        assert!(m.check(1, 150_000).allowed);
        assert_eq!(m.check(1, 150_000).retry_after_micros, 50_000);
        assert_eq!(m.check(4, 10_000_000).retry_after_micros, NEVER);
        assert!(m.check(3, 10_000_000).allowed);
    }

    #[test]
    fn meter_rate_is_exact() {
        // 3 per second: a full bucket of 3 drains in exactly 1 s.
        let mut m = LeakyBucketMeter::new(3, 3, 1_000_000).unwrap();
        assert!(m.check(3, 0).allowed);
        assert!(!m.peek(3, 999_999).allowed);
        assert!(m.peek(3, 1_000_000).allowed);
        assert_eq!(m.peek(1, 0).retry_after_micros, 333_334);
    }

    #[test]
    fn meter_refusal_consumes_nothing_and_backwards_time_drains_nothing() {
        let mut m = LeakyBucketMeter::new(2, 1, 1_000).unwrap();
        assert!(m.check(2, 5_000).allowed);
        let before = m;
        assert!(!m.check(1, 5_000).allowed);
        assert!(!m.check(1, 0).allowed);
        assert!(!m.check(1, i64::MIN).allowed);
        assert_eq!(m, before);
        // A time in the past counts as the latest time seen.
        assert_eq!(m.peek(1, 4_000).retry_after_micros, 1_000);
        assert!(m.check(1, 6_000).allowed);
    }

    #[test]
    fn queue_spaces_requests_and_bounds_the_queue() {
        // One every 100 ms, at most 2 waiting.
        let mut q = LeakyBucketQueue::new(2, 100_000).unwrap();
        let waits: [i64; 3] = core::array::from_fn(|_| {
            let d = q.check(1, 0);
            assert!(d.allowed);
            d.wait_micros
        });
        assert_eq!(waits, [0, 100_000, 200_000]);
        let refused = q.check(1, 0);
        assert!(!refused.allowed);
        assert_eq!((refused.limit, refused.remaining), (3, 0));
        assert_eq!(refused.retry_after_micros, 100_000);
        assert_eq!(refused.reset_after_micros, 300_000);
        let d = q.check(1, 100_000);
        assert_eq!((d.allowed, d.wait_micros), (true, 200_000));
        // A request of 2 takes two slots; 4 can never fit.
        let mut q = LeakyBucketQueue::new(2, 100_000).unwrap();
        assert_eq!(q.check(2, 0).wait_micros, 0);
        assert_eq!(q.check(1, 0).wait_micros, 200_000);
        assert_eq!(q.check(4, 0).retry_after_micros, NEVER);
        assert_eq!(q.next_free_micros(), 300_000);
    }

    #[test]
    fn queue_of_capacity_zero_admits_only_free_slots() {
        let mut q = LeakyBucketQueue::new(0, 1_000).unwrap();
        assert!(q.check(1, 0).allowed);
        let refused = q.check(1, 500);
        assert_eq!((refused.allowed, refused.retry_after_micros), (false, 500));
        assert!(q.check(1, 1_000).allowed);
        assert_eq!(q.check(2, 5_000).retry_after_micros, NEVER);
    }

    /// Uber's first `Take` takes its slot now, however long after the
    /// limiter's creation: nothing is saved before it. After it, up to
    /// `slack` unused slots are.
    #[test]
    fn queue_saves_slack_only_after_the_first_request() {
        let mut q = LeakyBucketQueue::with_slack(100, 100_000, 10).unwrap();
        let waits: [i64; 3] = core::array::from_fn(|_| q.check(1, 5_000_000).wait_micros);
        assert_eq!(waits, [0, 100_000, 200_000]);
        // Idle from the slot at 5.2 s to 10 s: ten slots saved, not 48.
        assert_eq!(q.next_free_micros(), 5_300_000);
        let waits: [i64; 12] = core::array::from_fn(|_| q.check(1, 10_000_000).wait_micros);
        assert_eq!(waits, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100_000]);
        assert_eq!(q.slack(), 10);
    }

    /// Saved slots serve requests one by one beyond the queue's capacity,
    /// but never one request of more than the limit (`capacity + 1`): that
    /// is refused with "never", as by every algorithm.
    #[test]
    fn queue_with_slack_serves_requests_within_the_limit_from_saved_slots() {
        // No waiting allowed, one slot per ms, three saved at most.
        let mut q = LeakyBucketQueue::with_slack(0, 1_000, 3).unwrap();
        assert!(q.check(1, 0).allowed);
        let d = q.peek(1, 500);
        assert_eq!((d.allowed, d.retry_after_micros, d.remaining), (false, 500, 0));
        assert!(q.peek(2, 50_000).is_never(), "above the limit of 1, saved slots or not");
        // At 10 ms: three saved slots and the current one, one unit each.
        let waits: [(bool, i64); 5] = core::array::from_fn(|_| {
            let d = q.check(1, 10_000);
            (d.allowed, d.wait_micros)
        });
        assert_eq!(waits, [(true, 0), (true, 0), (true, 0), (true, 0), (false, 0)]);
        assert_eq!(q.next_free_micros(), 11_000);
        let d = q.check(1, 10_000);
        assert_eq!((d.limit, d.remaining, d.retry_after_micros, d.reset_after_micros), (1, 0, 1_000, 1_000));
        // Slack 0 is the queue without slack.
        assert_eq!(LeakyBucketQueue::with_slack(2, 7, 0), LeakyBucketQueue::new(2, 7));
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert_eq!(LeakyBucketMeter::new(0, 1, 1), Err(Error::invalid_int(Argument::Capacity, 0)));
        assert!(LeakyBucketMeter::new(1, 0, 1).is_err());
        assert!(LeakyBucketMeter::new(1, 1, 0).is_err());
        assert!(LeakyBucketMeter::new(u64::MAX, 1, 1).is_err());
        assert_eq!(LeakyBucketQueue::new(0, 0), Err(Error::invalid_int(Argument::Interval, 0)));
        assert!(LeakyBucketQueue::new(u64::MAX, 1).is_err());
        assert!(LeakyBucketQueue::new(0, 1).is_ok());
        let too_much = i64::MAX as u64 + 1;
        assert_eq!(LeakyBucketQueue::with_slack(0, 1, too_much), Err(Error::invalid_uint(Argument::Slack, too_much)));
        assert!(LeakyBucketQueue::with_slack(i64::MAX as u64, i64::MAX, i64::MAX as u64).is_ok());
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/leaky_bucket_queue.rs): a
    /// request whose slots ended past `i64::MAX` µs was admitted, the first
    /// free slot saturated at `i64::MAX`, and every later request was
    /// admitted to the same slot.
    #[test]
    fn queue_never_hands_out_slots_past_the_end_of_time() {
        let mut q = LeakyBucketQueue::new(i64::MAX as u64 - 1, i64::MAX).unwrap();
        let d = q.check(23, 1_513_239);
        assert!(!d.allowed && d.retry_after_micros == NEVER, "{d:?}");
        assert_eq!(q.next_free_micros(), 0);
        assert!(!q.check(1, 1_513_239).allowed, "one slot of i64::MAX µs ends past i64::MAX");
        assert!(q.check(1, 0).allowed, "one slot of i64::MAX µs from 0 fits");
        assert_eq!(q.next_free_micros(), i64::MAX);
        let d = q.check(1, 0);
        assert!(!d.allowed && d.retry_after_micros == NEVER, "{d:?}");
        // Near the end of time, the last slots that fit are still given.
        let mut q = LeakyBucketQueue::new(10, 1_000).unwrap();
        assert!(q.check(2, i64::MAX - 2_000).allowed);
        assert_eq!(q.next_free_micros(), i64::MAX);
        assert!(q.check(1, i64::MAX - 2_000).retry_after_micros == NEVER);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let mut m = LeakyBucketMeter::new(i64::MAX as u64, i64::MAX as u64, i64::MAX).unwrap();
        let mut q = LeakyBucketQueue::new(i64::MAX as u64, i64::MAX).unwrap();
        let mut small = LeakyBucketQueue::new(0, 1).unwrap();
        let mut slack = LeakyBucketQueue::with_slack(i64::MAX as u64, i64::MAX, i64::MAX as u64).unwrap();
        let mut small_slack = LeakyBucketQueue::with_slack(0, 1, i64::MAX as u64).unwrap();
        for now in [i64::MIN, -1, 0, 1, i64::MAX, 0, i64::MIN] {
            for cost in [0, 1, u64::MAX] {
                let _ = (m.check(cost, now), m.peek(cost, now), m.level_at(now));
                let _ = (q.check(cost, now), q.peek(cost, now));
                let _ = (small.check(cost, now), small.peek(cost, now));
                let _ = (slack.check(cost, now), slack.peek(cost, now));
                let _ = (small_slack.check(cost, now), small_slack.peek(cost, now));
            }
        }
    }

    #[test]
    fn packing_round_trips() {
        let mut m = LeakyBucketMeter::new(5, 2, 1_000).unwrap();
        let before = m.pack();
        m.check(3, 10);
        assert_eq!(before[LeakyBucketMeter::HOT..], m.pack()[LeakyBucketMeter::HOT..]);
        assert_eq!(LeakyBucketMeter::unpack(m.pack()), m);
        let mut q = LeakyBucketQueue::with_slack(5, 1_000, 7).unwrap();
        let before = q.pack();
        q.check(3, 10);
        assert_eq!(before[LeakyBucketQueue::HOT..], q.pack()[LeakyBucketQueue::HOT..]);
        assert_eq!(LeakyBucketQueue::unpack(q.pack()), q);
    }
}
