//! Property tests: each algorithm's defining invariant, over random
//! sequences of requests and pauses (proptest).
//!
//! Each property is stated from the outside — what an observer counting the
//! admitted requests could check — not by re-running the algorithm, so a
//! wrong refill, a wrong boundary or a refusal that consumes would show.

use proptest::prelude::*;

use ratekeeper_core::token_bucket::TokenBucket;
use ratekeeper_core::Admission;

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
