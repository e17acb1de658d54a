//! Property tests: each algorithm's defining invariant, over random
//! sequences of requests and pauses (proptest).
//!
//! Each property is stated from the outside — what an observer counting the
//! admitted requests could check — not by re-running the algorithm, so a
//! wrong refill, a wrong boundary or a refusal that consumes would show.

use proptest::prelude::*;

use ratekeeper_core::sliding_log::LogStorage;
use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::{
    composite, Admission, Color, Decision, FixedWindow, Gcra, LeakyBucketMeter, LeakyBucketQueue, LogEntry, SlidingLog,
    SlidingWindow, SlidingWindowCounter, SrTcm, TrTcm, NEVER,
};

/// Log storage that resizes, as the std layer's does, counting its resizes.
#[derive(Debug, Clone, Default)]
struct Resizing {
    slots: Vec<LogEntry>,
    resizes: u32,
}

impl LogStorage for Resizing {
    fn slots(&self) -> &[LogEntry] {
        &self.slots
    }

    fn slots_mut(&mut self) -> &mut [LogEntry] {
        &mut self.slots
    }

    fn resize(&mut self, len: usize) -> bool {
        // Garbage in the new slots: the log must never read a slot it did
        // not write.
        self.slots.resize(len, LogEntry { at_micros: i64::MIN, units: u64::MAX });
        self.resizes += 1;
        true
    }

    fn resizes(&self) -> bool {
        true
    }
}

/// Whether `events` (time in some unit, cost), in any order, never put more
/// than `rate_per_unit × T + burst` units into a closed interval of length
/// T — the bound of a token bucket or GCRA of that rate and burst. `late`
/// is how much later than its recorded time an event may truly be due (an
/// algorithm that truncates its times acts up to one unit early); `slack`
/// absorbs floating-point rounding where the algorithm uses doubles.
fn within_rate_and_burst(
    events: &mut [(i128, u64)],
    rate_per_unit: f64,
    burst: f64,
    late: f64,
    slack: f64,
) -> Result<(), String> {
    events.sort_unstable();
    for i in 0..events.len() {
        let mut sum = 0u128;
        for j in i..events.len() {
            sum += u128::from(events[j].1);
            let span = (events[j].0 - events[i].0) as f64;
            let bound = rate_per_unit * (span + late) + burst;
            if sum as f64 > bound + slack * (1.0 + bound) {
                return Err(format!("{sum} units in [{}, {}]: bound {bound}", events[i].0, events[j].0));
            }
        }
    }
    Ok(())
}

/// A request: a pause before it (µs), its cost, and which call makes it.
fn requests(max_cost: u64) -> impl Strategy<Value = Vec<(i64, u64, u8)>> {
    prop::collection::vec((prop_oneof![Just(0i64), 0i64..2_000, 0i64..3_000_000], 0..=max_cost, 0u8..3), 1..80)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// x/time/rate: whatever mix of AllowN, ReserveN (acting at the
    /// reservation's time) and WaitN, the acted-on tokens in any interval of
    /// length T never exceed `rate × T + burst`.
    #[test]
    fn token_bucket_never_exceeds_rate_times_t_plus_burst(
        rate in prop_oneof![0.1f64..10.0, 10.0f64..10_000.0],
        burst in 0u64..50,
        reqs in requests(60),
    ) {
        let mut bucket = TokenBucket::new(rate, burst).unwrap();
        let mut now = 0i64;
        let mut acted = Vec::new(); // (nanoseconds, tokens)
        for (pause, cost, call) in reqs {
            now += pause;
            match call {
                0 => {
                    if bucket.check(cost, now).allowed {
                        acted.push((i128::from(now) * 1000, cost));
                    }
                }
                1 => {
                    let r = bucket.reserve_n(cost, now);
                    if r.ok() {
                        acted.push((i128::from(r.time_to_act_nanos()), cost));
                    }
                }
                _ => {
                    let r = bucket.wait_n(cost, now, now + 500_000);
                    if r.ok() {
                        prop_assert!(r.delay_micros(now) <= 500_000);
                        acted.push((i128::from(r.time_to_act_nanos()), cost));
                    }
                }
            }
        }
        // x/time/rate truncates a wait to whole nanoseconds (Go's
        // `time.Duration(f)`): a reservation acts up to 1 ns early.
        within_rate_and_burst(&mut acted, rate / 1e9, burst as f64, 1.0, 1e-9).map_err(TestCaseError::fail)?;
    }

    /// A refused request consumes nothing, and a peek never changes state.
    #[test]
    fn token_bucket_refusals_and_peeks_change_nothing(
        rate in 0.0f64..100.0, burst in 0u64..20, reqs in requests(30),
    ) {
        let mut bucket = TokenBucket::new(rate, burst).unwrap();
        let mut now = 0i64;
        for (pause, cost, _) in reqs {
            now += pause;
            let before = bucket;
            let peeked = bucket.peek(cost, now);
            prop_assert_eq!(bucket, before);
            let d = bucket.check(cost, now);
            prop_assert_eq!(d, peeked);
            if !d.allowed {
                prop_assert_eq!(bucket.tokens_at(now), before.tokens_at(now));
            }
        }
    }
}

/// Replays `reqs` through `limiter` with `check`, returning the admitted
/// requests as (time µs, cost, decision), and checking on the way that a
/// peek predicts the check and that a refusal changes nothing observable.
fn replay<A: Admission + Clone>(
    limiter: &mut A,
    reqs: &[(i64, u64, u8)],
) -> Result<Vec<(i64, u64, Decision)>, TestCaseError> {
    let mut now = 0i64;
    let mut admitted = Vec::new();
    for &(pause, cost, _) in reqs {
        now += pause;
        let peeked = limiter.peek(cost, now);
        let before = limiter.clone();
        let d = limiter.check(cost, now);
        prop_assert_eq!(d, peeked, "peek and check disagree at {}", now);
        if d.allowed {
            prop_assert!(d.retry_after_micros == 0);
            admitted.push((now, cost, d));
        } else {
            prop_assert!(cost > 0, "a cost of 0 is always admitted");
            // Nothing observable changed: the same request later gives the
            // same answer as it would have from the state before.
            prop_assert_eq!(limiter.peek(cost, now), before.peek(cost, now));
            prop_assert_eq!(limiter.peek(1, now + 1), before.peek(1, now + 1));
            if d.retry_after_micros != NEVER {
                // Waiting as told is enough.
                prop_assert!(
                    limiter.peek(cost, now + d.retry_after_micros).allowed,
                    "retry-after too short at {}",
                    now
                );
                if d.retry_after_micros > 0 {
                    prop_assert!(!limiter.peek(cost, now + d.retry_after_micros - 1).allowed, "retry-after too long");
                }
            }
        }
    }
    Ok(admitted)
}

/// A pause-cost-call list scaled to a period.
fn scaled(period: i64, max_cost: u64) -> impl Strategy<Value = Vec<(i64, u64, u8)>> {
    prop::collection::vec(
        (prop_oneof![Just(0i64), 0..period / 10 + 1, 0..period + 1, 0..4 * period + 1], 0..=max_cost, Just(0u8)),
        1..80,
    )
}

/// The windows' run-time limit, for the properties that change it.
trait SetLimit: Admission + Clone {
    fn set_limit(&mut self, limit: u64, now: i64);
}

impl SetLimit for FixedWindow {
    fn set_limit(&mut self, limit: u64, now: i64) {
        FixedWindow::set_limit(self, limit, now).unwrap();
    }
}

impl SetLimit for SlidingWindow {
    fn set_limit(&mut self, limit: u64, now: i64) {
        SlidingWindow::set_limit(self, limit, now).unwrap();
    }
}

impl<S: LogStorage + Clone> SetLimit for SlidingLog<S> {
    fn set_limit(&mut self, limit: u64, now: i64) {
        SlidingLog::set_limit(self, limit, now).unwrap();
    }
}

/// [`scaled`] whose third field, when not 0, is a new limit (1 to
/// `max_limit`) set just before that request.
fn with_limits(period: i64, max_cost: u64, max_limit: u8) -> impl Strategy<Value = Vec<(i64, u64, u8)>> {
    prop::collection::vec(
        (
            prop_oneof![Just(0i64), 0..period / 10 + 1, 0..period + 1, 0..4 * period + 1],
            0..=max_cost,
            prop_oneof![3 => Just(0u8), 1 => 1..=max_limit],
        ),
        1..80,
    )
}

/// [`replay`], with each request's new limit (if any) set at its time
/// first; the admitted requests are returned in order with their
/// decisions, whose `limit` is the limit they were admitted under.
fn replay_with_limits<A: SetLimit>(
    limiter: &mut A,
    reqs: &[(i64, u64, u8)],
) -> Result<Vec<(i64, u64, Decision)>, TestCaseError> {
    let mut now = 0i64;
    let mut admitted = Vec::new();
    for &(pause, cost, new_limit) in reqs {
        now += pause;
        if new_limit > 0 {
            limiter.set_limit(u64::from(new_limit), now);
        }
        // `replay` counts its pauses from time 0: one of `now`.
        admitted.extend(replay(limiter, &[(now, cost, 0)])?);
    }
    Ok(admitted)
}

/// The largest sum of costs of `events` (sorted by time) inside any
/// half-open window `(t − window, t]`.
fn max_in_any_window(events: &[(i64, u64, Decision)], window: i64) -> u64 {
    let mut best = 0;
    for (j, &(t, ..)) in events.iter().enumerate() {
        let sum: u64 = events[..=j].iter().filter(|e| e.0 > t - window).map(|e| e.1).sum();
        best = best.max(sum);
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// GCRA (redis-cell): at most `limit + rate × T` units in any interval
    /// of length T, exactly (the arithmetic is exact).
    #[test]
    fn gcra_never_exceeds_rate_times_t_plus_limit(
        max_burst in 0u64..20, count in 1u64..20, period in 1i64..2_000_000, reqs in scaled(1_000_000, 25),
    ) {
        let mut g = Gcra::new(max_burst, count, period).unwrap();
        let admitted = replay(&mut g, &reqs)?;
        let mut events: Vec<(i128, u64)> = admitted.iter().map(|&(t, c, _)| (i128::from(t), c)).collect();
        within_rate_and_burst(&mut events, count as f64 / period as f64, (max_burst + 1) as f64, 0.0, 1e-12)
            .map_err(TestCaseError::fail)?;
    }

    /// I.371: the continuous-state leaky bucket (the meter) and the
    /// virtual-scheduling GCRA make the same decisions.
    #[test]
    fn leaky_meter_decides_as_gcra(
        capacity in 1u64..20, count in 1u64..20, period in 1i64..2_000_000, reqs in scaled(1_000_000, 25),
    ) {
        let mut meter = LeakyBucketMeter::new(capacity, count, period).unwrap();
        let mut gcra = Gcra::new(capacity - 1, count, period).unwrap();
        let mut now = 0;
        for (pause, cost, _) in reqs {
            now += pause;
            let (m, g) = (meter.check(cost, now), gcra.check(cost, now));
            prop_assert_eq!(m.allowed, g.allowed, "at {}", now);
            prop_assert_eq!(m.remaining, g.remaining);
            prop_assert_eq!(m.retry_after_micros, g.retry_after_micros);
            prop_assert_eq!(m.reset_after_micros, g.reset_after_micros);
        }
    }

    /// The leaky bucket as a queue: the slots handed out are never closer
    /// than one interval per unit, and no request waits more than
    /// `capacity` units' worth. With slack a slot may be in the past, but
    /// never more than `slack` intervals before its request: so no more than
    /// `slack + 1 + T / interval` units' slots fall in any time T.
    #[test]
    fn leaky_queue_spacing_never_below_the_interval(
        capacity in 0u64..10, interval in 1i64..100_000, slack in prop_oneof![Just(0u64), 0u64..12],
        reqs in scaled(100_000, 4),
    ) {
        let mut q = LeakyBucketQueue::with_slack(capacity, interval, slack).unwrap();
        let admitted = replay(&mut q, &reqs)?;
        // Each admitted request's first slot: its time plus its wait, or
        // earlier by the saved slots it took (read from the queue's
        // next free slot, which the request moved to `slot + cost × interval`).
        let mut slots: Vec<(i64, u64)> = Vec::new();
        let mut replayed = LeakyBucketQueue::with_slack(capacity, interval, slack).unwrap();
        for &(t, c, d) in &admitted {
            let decision = replayed.check(c, t);
            prop_assert_eq!(decision, d);
            if c > 0 {
                let slot = replayed.next_free_micros() - c as i64 * interval;
                prop_assert_eq!(slot.max(t), t + d.wait_micros);
                prop_assert!(slot >= t - slack as i64 * interval, "slot {} more than the slack before {}", slot, t);
                // The last unit's slot is at most `capacity` intervals away.
                prop_assert!(slot - t + (c as i64 - 1) * interval <= capacity as i64 * interval, "at {}", t);
                slots.push((slot, c));
            }
        }
        for pair in slots.windows(2) {
            let ((s0, c0), (s1, _)) = (pair[0], pair[1]);
            prop_assert!(s1 >= s0 + c0 as i64 * interval, "slot {} after {} of cost {}", s1, s0, c0);
        }
    }

    /// The fixed window: at most `limit` per aligned window (and so up to
    /// twice that across a boundary, which the unit tests show).
    #[test]
    fn fixed_window_never_exceeds_the_limit_per_window(
        limit in 1u64..20, window in 1i64..1_000_000, reqs in scaled(1_000_000, 25),
    ) {
        let mut w = FixedWindow::new(limit, window).unwrap();
        let admitted = replay(&mut w, &reqs)?;
        let mut per_window = std::collections::BTreeMap::new();
        for (t, c, _) in admitted {
            *per_window.entry(t.div_euclid(window)).or_insert(0) += c;
        }
        prop_assert!(per_window.values().all(|&n| n <= limit), "{:?}", per_window);
    }

    /// The sliding window of n sub-windows: at most `limit` in any interval
    /// of length `(n − 1) / n × window` (any n consecutive sub-windows).
    #[test]
    fn sliding_window_never_exceeds_the_limit_in_n_sub_windows(
        limit in 1u64..20, sub in 1i64..100_000, n in 1u32..=16, reqs in scaled(500_000, 25),
    ) {
        let mut w = SlidingWindow::new(limit, sub * i64::from(n), n).unwrap();
        let admitted = replay(&mut w, &reqs)?;
        for (i, &(t, ..)) in admitted.iter().enumerate() {
            let first = t.div_euclid(sub) - i64::from(n) + 1;
            let sum: u64 = admitted[..=i].iter().filter(|e| e.0.div_euclid(sub) >= first).map(|e| e.1).sum();
            prop_assert!(sum <= limit, "{} units in the {} sub-windows up to {}", sum, n, t);
        }
    }

    /// The sliding log: never more than `limit` units in any window.
    #[test]
    fn sliding_log_never_exceeds_the_limit_in_any_window(
        limit in 1u64..20, window in 1i64..1_000_000, reqs in scaled(1_000_000, 25),
    ) {
        let mut log = SlidingLog::new(limit, window, vec![LogEntry::default(); limit as usize]).unwrap();
        let admitted = replay(&mut log, &reqs)?;
        prop_assert!(max_in_any_window(&admitted, window) <= limit);
        prop_assert!(log.entries().count() as u64 <= limit, "memory bounded by the limit");
    }

    /// A sliding log over storage that resizes decides exactly as one over
    /// fixed storage of `limit` slots, while its room follows its use: never
    /// more than the limit, never more than four times what it holds (or the
    /// smallest ring), and nothing before its first unit.
    #[test]
    fn a_resizing_log_decides_as_a_fixed_one_with_room_for_what_it_holds(
        limit in 1u64..200, window in 1i64..1_000_000, reqs in scaled(1_000_000, 40),
    ) {
        let mut fixed = SlidingLog::new(limit, window, vec![LogEntry::default(); limit as usize]).unwrap();
        let mut resizing = SlidingLog::new(limit, window, Resizing::default()).unwrap();
        prop_assert_eq!(resizing.capacity(), 0);
        let mut now = 0i64;
        for (pause, cost, _) in reqs {
            now += pause;
            prop_assert_eq!(resizing.peek(cost, now), fixed.peek(cost, now), "peek at {}", now);
            prop_assert_eq!(resizing.check(cost, now), fixed.check(cost, now), "check at {}", now);
            prop_assert!(resizing.entries().eq(fixed.entries()), "the same entries at {}", now);
            let (room, held) = (resizing.capacity(), resizing.entries().count());
            prop_assert!(room as u64 <= limit.max(4), "room {} past the limit {}", room, limit);
            prop_assert!(room <= (4 * held).max(4), "room {} for {} entries", room, held);
        }
    }

    /// The sliding window counter: never more than twice the limit in any
    /// window (its documented worst case).
    #[test]
    fn sliding_window_counter_never_exceeds_twice_the_limit(
        limit in 1u64..20, window in 1i64..1_000_000, reqs in scaled(1_000_000, 25),
    ) {
        let mut c = SlidingWindowCounter::new(limit, window).unwrap();
        let admitted = replay(&mut c, &reqs)?;
        prop_assert!(max_in_any_window(&admitted, window) <= 2 * limit);
    }

    /// A fixed window whose limit changes between requests: each admitted
    /// request leaves its window's count within the limit of that moment
    /// (units taken under a higher limit stay taken; a look of cost 0,
    /// taking nothing, is admitted over it).
    #[test]
    fn fixed_window_with_changing_limits_keeps_each_admission_within_its_limit(
        limit in 1u64..20, window in 1i64..1_000_000, reqs in with_limits(1_000_000, 25, 20),
    ) {
        let mut w = FixedWindow::new(limit, window).unwrap();
        let admitted = replay_with_limits(&mut w, &reqs)?;
        for (i, &(t, _, d)) in admitted.iter().enumerate().filter(|(_, e)| e.1 > 0) {
            let sum: u64 =
                admitted[..=i].iter().filter(|e| e.0.div_euclid(window) == t.div_euclid(window)).map(|e| e.1).sum();
            prop_assert!(sum <= d.limit, "{} units in the window of {} under a limit of {}", sum, t, d.limit);
        }
    }

    /// A sliding window whose limit changes: each admitted request leaves
    /// its `n` sub-windows within the limit of that moment.
    #[test]
    fn sliding_window_with_changing_limits_keeps_each_admission_within_its_limit(
        limit in 1u64..20, sub in 1i64..100_000, n in 1u32..=16, reqs in with_limits(500_000, 25, 20),
    ) {
        let mut w = SlidingWindow::new(limit, sub * i64::from(n), n).unwrap();
        let admitted = replay_with_limits(&mut w, &reqs)?;
        for (i, &(t, _, d)) in admitted.iter().enumerate().filter(|(_, e)| e.1 > 0) {
            let first = t.div_euclid(sub) - i64::from(n) + 1;
            let sum: u64 = admitted[..=i].iter().filter(|e| e.0.div_euclid(sub) >= first).map(|e| e.1).sum();
            prop_assert!(sum <= d.limit, "{} units in the sub-windows up to {} under {}", sum, t, d.limit);
        }
    }

    /// A sliding log whose limit changes: each admitted request leaves the
    /// window that ends with it within the limit of that moment; over
    /// storage that resizes it decides as over fixed storage.
    #[test]
    fn sliding_log_with_changing_limits_keeps_each_admission_within_its_limit(
        limit in 1u64..20, window in 1i64..1_000_000, reqs in with_limits(1_000_000, 25, 20),
    ) {
        let mut log = SlidingLog::new(limit, window, [LogEntry::default(); 20]).unwrap();
        let mut resizing = SlidingLog::new(limit, window, Resizing::default()).unwrap();
        let admitted = replay_with_limits(&mut log, &reqs)?;
        for (i, &(t, _, d)) in admitted.iter().enumerate().filter(|(_, e)| e.1 > 0) {
            let sum: u64 = admitted[..=i].iter().filter(|e| e.0 > t - window).map(|e| e.1).sum();
            prop_assert!(sum <= d.limit, "{} units in the window up to {} under {}", sum, t, d.limit);
        }
        let again = replay_with_limits(&mut resizing, &reqs)?;
        prop_assert_eq!(again, admitted);
    }

    /// A composite admits in all parts or in none.
    #[test]
    fn composite_is_all_or_nothing(a in 1u64..5, b in 1u64..10, reqs in scaled(1_000_000, 6)) {
        let mut windows = [FixedWindow::new(a, 1_000_000).unwrap(), FixedWindow::new(b, 10_000_000).unwrap()];
        let mut now = 0;
        for (pause, cost, _) in reqs {
            now += pause;
            let before = windows;
            let d = composite::check_all(&mut windows, cost, now);
            for (part, was) in windows.iter().zip(before.iter()) {
                let taken = was.peek(0, now).remaining - part.peek(0, now).remaining;
                prop_assert_eq!(taken, if d.allowed { cost } else { 0 }, "at {}", now);
            }
        }
    }
}

/// RFC 2697 §3 and §4, restated literally: the buckets are incremented one
/// token at a time, the k-th increment at the first microsecond at which
/// `k / CIR` seconds have passed, and a packet is marked by the section 4
/// rules.
#[derive(Debug)]
struct Rfc2697 {
    cir: u64,
    cbs: u64,
    ebs: u64,
    tc: u64,
    te: u64,
    increments: u64,
}

/// The microsecond of the `k`-th increment of a rate of `r` per second.
fn increment_time(k: u64, r: u64) -> i64 {
    ((u128::from(k) * 1_000_000).div_ceil(u128::from(r))) as i64
}

impl Rfc2697 {
    fn advance(&mut self, t: i64) {
        while increment_time(self.increments + 1, self.cir) <= t {
            self.increments += 1;
            if self.tc < self.cbs {
                self.tc += 1;
            } else if self.te < self.ebs {
                self.te += 1;
            }
        }
    }

    fn mark(&mut self, t: i64, b: u64, aware: Option<Color>) -> Color {
        self.advance(t);
        let pre = aware.unwrap_or(Color::Green);
        if pre == Color::Green && self.tc >= b {
            self.tc -= b;
            Color::Green
        } else if (pre == Color::Green || pre == Color::Yellow) && self.te >= b {
            self.te -= b;
            Color::Yellow
        } else {
            Color::Red
        }
    }
}

/// RFC 2698 §3, restated literally, the same way.
#[derive(Debug)]
struct Rfc2698 {
    pir: u64,
    pbs: u64,
    cir: u64,
    cbs: u64,
    tp: u64,
    tc: u64,
    peak_increments: u64,
    committed_increments: u64,
}

impl Rfc2698 {
    fn advance(&mut self, t: i64) {
        while increment_time(self.peak_increments + 1, self.pir) <= t {
            self.peak_increments += 1;
            if self.tp < self.pbs {
                self.tp += 1;
            }
        }
        while increment_time(self.committed_increments + 1, self.cir) <= t {
            self.committed_increments += 1;
            if self.tc < self.cbs {
                self.tc += 1;
            }
        }
    }

    fn mark(&mut self, t: i64, b: u64, aware: Option<Color>) -> Color {
        self.advance(t);
        match aware {
            // Colour-blind mode.
            None => {
                if self.tp < b {
                    Color::Red
                } else if self.tc < b {
                    self.tp -= b;
                    Color::Yellow
                } else {
                    self.tp -= b;
                    self.tc -= b;
                    Color::Green
                }
            }
            // Colour-aware mode.
            Some(pre) => {
                if pre == Color::Red || self.tp < b {
                    Color::Red
                } else if pre == Color::Yellow || self.tc < b {
                    self.tp -= b;
                    Color::Yellow
                } else {
                    self.tp -= b;
                    self.tc -= b;
                    Color::Green
                }
            }
        }
    }
}

/// Packets: a pause before each (µs), a size, and a pre-colour (or none for
/// colour-blind marking).
fn packets() -> impl Strategy<Value = Vec<(i64, u64, Option<Color>)>> {
    let color = prop_oneof![Just(None), Just(Some(Color::Green)), Just(Some(Color::Yellow)), Just(Some(Color::Red))];
    // Small sizes against small buckets make the boundary cases (a packet
    // exactly the size of the tokens left) common.
    let bytes = prop_oneof![0u64..12, 0u64..1_600];
    prop::collection::vec((prop_oneof![Just(0i64), 0i64..5_000, 0i64..300_000], bytes, color), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// srTCM marks every packet as RFC 2697's rules, applied one token at
    /// a time, do.
    #[test]
    fn srtcm_colours_match_rfc_2697(
        cir in prop_oneof![1u64..100, 1u64..20_000],
        cbs in prop_oneof![0u64..10, 0u64..3_000],
        ebs in prop_oneof![0u64..10, 0u64..3_000],
        packets in packets(),
    ) {
        prop_assume!(cbs > 0 || ebs > 0);
        let mut m = SrTcm::new(cir, cbs, ebs).unwrap();
        let mut rfc = Rfc2697 { cir, cbs, ebs, tc: cbs, te: ebs, increments: 0 };
        let mut t = 0;
        for (pause, bytes, aware) in packets {
            t += pause;
            let expected = rfc.mark(t, bytes, aware);
            let actual = match aware {
                None => m.mark(bytes, t),
                Some(pre) => m.mark_aware(bytes, pre, t),
            };
            prop_assert_eq!(actual, expected, "at {} µs, {} bytes, {:?}", t, bytes, aware);
            prop_assert_eq!(m.tokens_at(t), (rfc.tc, rfc.te));
        }
    }

    /// trTCM marks every packet as RFC 2698's rules, applied one token at
    /// a time, do.
    #[test]
    fn trtcm_colours_match_rfc_2698(
        cir in prop_oneof![1u64..100, 1u64..20_000],
        extra in prop_oneof![0u64..100, 0u64..20_000],
        pbs in prop_oneof![1u64..10, 1u64..3_000],
        cbs in prop_oneof![1u64..10, 1u64..3_000],
        packets in packets(),
    ) {
        let pir = cir + extra;
        let mut m = TrTcm::new(pir, pbs, cir, cbs).unwrap();
        let mut rfc =
            Rfc2698 { pir, pbs, cir, cbs, tp: pbs, tc: cbs, peak_increments: 0, committed_increments: 0 };
        let mut t = 0;
        for (pause, bytes, aware) in packets {
            t += pause;
            let expected = rfc.mark(t, bytes, aware);
            let actual = match aware {
                None => m.mark(bytes, t),
                Some(pre) => m.mark_aware(bytes, pre, t),
            };
            prop_assert_eq!(actual, expected, "at {} µs, {} bytes, {:?}", t, bytes, aware);
            prop_assert_eq!(m.tokens_at(t), (rfc.tp, rfc.tc));
        }
    }
}

/// Any words, any times, any costs: no state machine may panic, not even on
/// a state no constructor makes (the std layer may decide on a torn copy
/// before it discards it), nor on times that jump across the whole `i64`
/// range in either direction.
mod never_panics {
    use super::*;
    use ratekeeper_core::{ConcurrencyLimiter, Outcome, Packed, Permit};

    fn extreme_i64() -> impl Strategy<Value = i64> {
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0i64), Just(-1i64), any::<i64>()]
    }

    fn extreme_u64() -> impl Strategy<Value = u64> {
        prop_oneof![Just(0u64), Just(1u64), Just(u64::MAX), Just(i64::MAX as u64), any::<u64>()]
    }

    fn calls() -> impl Strategy<Value = Vec<(i64, u64)>> {
        prop::collection::vec((extreme_i64(), extreme_u64()), 1..12)
    }

    fn admit<A: Admission>(mut a: A, calls: &[(i64, u64)]) {
        for &(now, cost) in calls {
            let _ = a.peek(cost, now);
            let _ = a.check(cost, now);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn garbage_states(words in prop::array::uniform13(extreme_u64()), calls in calls()) {
            admit(TokenBucket::unpack(words[..5].try_into().unwrap()), &calls);
            admit(Gcra::unpack(words[..7].try_into().unwrap()), &calls);
            admit(LeakyBucketMeter::unpack(words[..6].try_into().unwrap()), &calls);
            admit(LeakyBucketQueue::unpack(words[..4].try_into().unwrap()), &calls);
            admit(FixedWindow::unpack(words[..4].try_into().unwrap()), &calls);
            admit(SlidingWindow::unpack(words[..11].try_into().unwrap()), &calls);
            admit(SlidingWindowCounter::unpack(words[..5].try_into().unwrap()), &calls);
            let (mut sr, mut tr) = (SrTcm::unpack(words[..6].try_into().unwrap()), TrTcm::unpack(words[..7].try_into().unwrap()));
            let mut conc = ConcurrencyLimiter::unpack(words);
            for &(now, cost) in &calls {
                let _ = (sr.mark(cost, now), sr.mark_aware(cost, Color::Yellow, now), sr.tokens_at(now));
                let _ = (tr.mark(cost, now), tr.mark_aware(cost, Color::Green, now), tr.tokens_at(now));
                let _ = conc.try_acquire(now);
                conc.release(Permit { start_micros: now, in_flight: cost }, Outcome::Success, now.wrapping_neg());
                conc.release(Permit { start_micros: now, in_flight: cost }, Outcome::Dropped, now);
                let _ = conc.sample(now, cost, cost % 2 == 0);
            }
        }

        #[test]
        fn valid_limiters_and_wild_times(
            a in 1u64..=i64::MAX as u64, b in 1u64..=i64::MAX as u64, period in 1i64..=i64::MAX, calls in calls(),
        ) {
            admit(TokenBucket::new(a as f64 / 3.0, b).unwrap(), &calls);
            admit(Gcra::new(a - 1, b, period).unwrap(), &calls);
            admit(LeakyBucketMeter::new(a, b, period).unwrap(), &calls);
            admit(LeakyBucketQueue::new(a, period).unwrap(), &calls);
            admit(LeakyBucketQueue::with_slack(a, period, b).unwrap(), &calls);
            admit(FixedWindow::new(a, period).unwrap(), &calls);
            admit(SlidingWindow::new(a.min(u64::from(u32::MAX)), period - period % 16, 16).unwrap_or_else(|_| SlidingWindow::new(1, 16, 16).unwrap()), &calls);
            admit(SlidingWindowCounter::new(a, period).unwrap(), &calls);
            admit(SlidingLog::new(8, period, [LogEntry::default(); 8]).unwrap(), &calls);
            let mut sr = SrTcm::new(a, b, a).unwrap();
            let mut tr = TrTcm::new(a.max(b), a, b.min(a), b).unwrap();
            for &(now, bytes) in &calls {
                let _ = (sr.mark(bytes, now), tr.mark(bytes, now));
            }
        }
    }
}

/// A log's room grows with a burst and shrinks when the burst slides out,
/// however many entries leave at once; and a log past its burst gives all of
/// its room back once empty.
#[test]
fn a_resizing_log_gives_back_room_when_a_burst_slides_out() {
    let mut log = SlidingLog::new(1_000, 1_000, Resizing::default()).unwrap();
    for t in 0..300 {
        assert!(log.check(1, t).allowed);
    }
    assert_eq!(log.capacity(), 512, "doubled from 4 up to room for 300");
    let resizes = log.entries_storage_resizes();
    // At 1,296 all but the units at 297..300 have slid out.
    assert!(log.check(0, 1_296).allowed);
    assert_eq!(log.entries().count(), 3);
    assert!(log.capacity() <= 12, "room {} for 3 entries", log.capacity());
    assert_eq!(log.entries_storage_resizes(), resizes + 1, "one resize, however many left");
    assert!(log.check(0, 5_000).allowed);
    assert_eq!(log.capacity(), 0, "an empty log holds nothing");
    for t in 6_000..6_010 {
        assert!(log.check(2, t).allowed);
    }
    assert_eq!(log.peek(0, 6_010).remaining, 1_000 - 20);
    assert!(log.entries().map(|e| e.at_micros).eq(6_000..6_010));
}

/// Growing a ring that wraps around keeps its entries in order.
#[test]
fn a_resizing_log_grows_a_wrapped_ring_in_order() {
    let mut log = SlidingLog::new(1_000, 100, Resizing::default()).unwrap();
    for t in [0, 1, 50, 51] {
        assert!(log.check(1, t).allowed);
    }
    assert_eq!(log.capacity(), 4);
    // At 101 the units at 0 and 1 slide out; 101 and 102 fill the ring's
    // first slots, before the live ones at its end.
    for t in [101, 102] {
        assert!(log.check(1, t).allowed);
    }
    assert_eq!(log.capacity(), 4, "still full, not grown yet");
    assert!(log.check(1, 103).allowed);
    assert_eq!(log.capacity(), 8);
    assert!(log.entries().map(|e| e.at_micros).eq([50, 51, 101, 102, 103]));
}

trait StorageResizes {
    fn entries_storage_resizes(&self) -> u32;
}

impl StorageResizes for SlidingLog<Resizing> {
    fn entries_storage_resizes(&self) -> u32 {
        self.storage().resizes
    }
}
