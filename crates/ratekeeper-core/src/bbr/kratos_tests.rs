//! Kratos' own BBR tests (go-kratos/aegis `ratelimit/bbr/bbr_test.go`),
//! translated: same names (in snake case), same steps, same expected values.
//! Kratos sleeps between steps on the wall clock; here time is passed in, so
//! each sleep is an exact step and the tests cannot flake.
//!
//! Kratos sets its counters and in-flight count directly; these tests, in
//! the module, do the same through `record_passes`, `record_rt` and the
//! `in_flight` field. After them come this port's own tests (the memo,
//! the errors, the decision's effect on the caches).

use super::{Bbr, BbrConfig};
use crate::load::Load;

/// `optsForTest`: a one-second window of 10 buckets, CPU threshold 800‰.
fn opts_for_test() -> BbrConfig {
    BbrConfig { window_micros: 1_000_000, buckets: 10, cpu_threshold: 0.8, ..BbrConfig::default() }
}

const BUCKET: i64 = 100_000;

fn cpu(usage: f64) -> Load {
    Load { cpu_usage: usage, load_average: 0.0 }
}

#[test]
fn test_bbr_max_pass() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let mut now = 0;
    for i in 1..=10 {
        bbr.record_passes(now, i * 100);
        now += BUCKET;
    }
    assert_eq!(bbr.max_pass(now), 1000);

    // The default max pass is 1.
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    assert_eq!(bbr.max_pass(0), 1);
}

#[test]
fn test_bbr_max_pass_with_cache() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    // With the cache, the latest bucket is not counted at once; after one
    // bucket length it is.
    let mut now = 0;
    bbr.record_passes(now, 50);
    now += BUCKET / 2;
    assert_eq!(bbr.max_pass(now), 1);

    bbr.record_passes(now, 50);
    now += BUCKET / 2;
    assert_eq!(bbr.max_pass(now), 1);

    bbr.record_passes(now, 1);
    now += BUCKET;
    assert_eq!(bbr.max_pass(now), 100);
}

#[test]
fn test_bbr_min_rt() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let mut now = 0;
    for i in 0..10 {
        for j in i * 10 + 1..=i * 10 + 10 {
            bbr.record_rt(now, j);
        }
        if i != 9 {
            now += BUCKET;
        }
    }
    assert_eq!(bbr.min_rt_millis(now), 6);

    // With no RT recorded the min RT is 1.
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    assert_eq!(bbr.min_rt_millis(0), 1);
}

#[test]
fn test_bbr_min_rt_with_cache() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let mut now = 0;
    for i in 0..10 {
        for j in i * 10 + 1..=i * 10 + 5 {
            bbr.record_rt(now, j);
        }
        if i != 9 {
            now += BUCKET / 2;
        }
        let _ = bbr.min_rt_millis(now);
        for j in i * 10 + 6..=i * 10 + 10 {
            bbr.record_rt(now, j);
        }
        if i != 9 {
            now += BUCKET / 2;
        }
    }
    assert_eq!(bbr.min_rt_millis(now), 6);
}

#[test]
fn test_bbr_max_qps() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let mut now = 0;
    for i in 0..10 {
        bbr.record_passes(now, (i + 2) * 100);
        for j in i * 10 + 1..=i * 10 + 10 {
            bbr.record_rt(now, j);
        }
        if i != 9 {
            now += BUCKET;
        }
    }
    assert_eq!(bbr.max_in_flight(now), 60);
}

#[test]
fn test_bbr_should_drop() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let mut now = 0;
    for i in 0..10 {
        bbr.record_passes(now, (i + 1) * 100);
        for j in i * 10 + 1..=i * 10 + 10 {
            bbr.record_rt(now, j);
        }
        if i != 9 {
            now += BUCKET;
        }
    }
    // cpu >= 800, in flight < max in flight
    bbr.in_flight = 50;
    assert!(!bbr.should_drop(now, cpu(0.8)));

    // cpu >= 800, in flight > max in flight
    bbr.in_flight = 80;
    assert!(bbr.should_drop(now, cpu(0.8)));

    // cpu < 800, in flight > max in flight, within the cool-down
    bbr.in_flight = 80;
    assert!(bbr.should_drop(now, cpu(0.7)));

    // cpu < 800, in flight > max in flight, two seconds later
    now += 2_000_000;
    bbr.in_flight = 80;
    assert!(!bbr.should_drop(now, cpu(0.7)));
}

/// `TestBBR` runs 100 goroutines of 300 requests with random service times
/// under a CPU threshold of 100‰ and only logs the drops. Here the same
/// workload runs on simulated time (a fixed-seed generator, the real CPU
/// replaced by a constant above the threshold), and what the log could only
/// show is asserted: every request shed arrived while more than one, and
/// more than the capacity, were in flight; and some were shed.
#[test]
fn test_bbr() {
    let config = BbrConfig { window_micros: 5_000_000, buckets: 50, cpu_threshold: 0.1, ..BbrConfig::default() };
    let mut bbr = Bbr::new(config).unwrap();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random_millis = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 100) as i64
    };
    // Each worker's next arrival time and requests left; the permits out.
    let mut workers: [(i64, u32); 100] = [(0, 300); 100];
    let mut out: [Option<(super::BbrPermit, i64)>; 100] = [None; 100];
    let (mut dropped, mut admitted) = (0u32, 0u32);
    loop {
        // The next event: a release (end of a service time) or an arrival.
        let next = (0..100)
            .filter(|&w| out[w].is_some() || workers[w].1 > 0)
            .min_by_key(|&w| out[w].map_or(workers[w].0, |(_, end)| end));
        let Some(w) = next else { break };
        if let Some((permit, end)) = out[w].take() {
            bbr.release(permit, end);
            workers[w].0 = end;
            continue;
        }
        let now = workers[w].0;
        workers[w].1 -= 1;
        let in_flight = bbr.in_flight();
        let capacity = bbr.peek_max_in_flight(now);
        match bbr.try_acquire(now, cpu(0.5)) {
            Ok((permit, _)) => {
                admitted += 1;
                out[w] = Some((permit, now + random_millis() * 1000));
            }
            Err(_) => {
                assert!(in_flight > 1 && in_flight > capacity, "shed with {in_flight} in flight, capacity {capacity}");
                dropped += 1;
            }
        }
    }
    assert_eq!(admitted + dropped, 30_000);
    assert!(dropped > 0, "nothing was shed");
    assert_eq!(bbr.in_flight(), 0);
}

#[test]
fn nothing_is_shed_below_the_threshold_without_a_cool_down() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    bbr.in_flight = 1_000;
    assert!(!bbr.should_drop(0, cpu(0.79)));
    assert_eq!(bbr.shedding_since(), None);
}

#[test]
fn a_release_records_its_rt_rounded_up_and_one_pass() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    let (permit, decision) = bbr.try_acquire(0, cpu(0.0)).unwrap();
    assert!(decision.allowed);
    assert_eq!(bbr.in_flight(), 1);
    bbr.release(permit, 2_001); // 2.001 ms: 3 ms
    let (instant, _) = bbr.try_acquire(2_001, cpu(0.0)).unwrap();
    bbr.release(instant, 2_001); // 0 ms: no RT sample, still a pass
    assert_eq!(bbr.in_flight(), 0);
    let later = BUCKET;
    assert_eq!(bbr.max_pass(later), 2);
    assert_eq!(bbr.min_rt_millis(later), 3);
}

#[test]
fn a_decision_leaves_the_caches_as_kratos_would() {
    let mut bbr = Bbr::new(opts_for_test()).unwrap();
    bbr.record_passes(0, 500);
    // In flight ≤ 1: Kratos never computes the capacity, so no cache.
    let (_permit, _) = bbr.try_acquire(BUCKET, cpu(0.9)).unwrap();
    assert_eq!(bbr.max_pass_cache, None);
    assert_eq!(bbr.min_rt_cache, None);
}

#[test]
fn bad_parameters_name_themselves() {
    use crate::error::{Argument, Error};
    let bad = |config: BbrConfig| match Bbr::new(config) {
        Err(Error::InvalidArgument(invalid)) => invalid.argument(),
        other => panic!("{other:?}"),
    };
    let good = BbrConfig::default();
    assert_eq!(bad(BbrConfig { window_micros: 0, ..good }), Argument::Window);
    assert_eq!(bad(BbrConfig { buckets: 0, ..good }), Argument::Buckets);
    assert_eq!(bad(BbrConfig { buckets: 129, ..good }), Argument::Buckets);
    assert_eq!(bad(BbrConfig { window_micros: 5, buckets: 6, ..good }), Argument::Buckets);
    assert_eq!(bad(BbrConfig { cpu_threshold: f64::NAN, ..good }), Argument::CpuThreshold);
    assert_eq!(bad(BbrConfig { cpu_threshold: 1.5, ..good }), Argument::CpuThreshold);
    assert_eq!(bad(BbrConfig { cool_down_micros: -1, ..good }), Argument::CoolDown);
}

/// The memo of settled estimates answers exactly what a scan of the
/// buckets answers, whatever the order of adds and reads (times forward,
/// within a bucket, and backwards).
#[test]
fn the_memo_always_equals_a_scan() {
    let mut bbr = Bbr::new(BbrConfig { window_micros: 1_000_000, buckets: 10, ..BbrConfig::default() }).unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut now: i64 = 0;
    for _ in 0..20_000 {
        now = match next(20) {
            0 => now - next(300_000) as i64,
            1..=4 => now + next(150_000) as i64,
            _ => now + next(2_000) as i64,
        };
        match next(3) {
            0 => bbr.record_passes(now, next(5)),
            1 => bbr.record_rt(now, 1 + next(50)),
            _ => {
                let bucket = bbr.bucket(now);
                let expected = (bbr.scan_max_pass(bucket), bbr.scan_min_rt(bucket));
                assert_eq!(bbr.settled(now), expected, "at {now}");
            }
        }
    }
}
