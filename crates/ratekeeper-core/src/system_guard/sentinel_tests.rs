//! Sentinel's system-rule tests, translated: `SystemRuleManagerTest` and
//! `SystemRuleTest` (alibaba/Sentinel, Java — the semantics this module
//! follows) and the checks of sentinel-golang's `core/system/slot_test.go`,
//! with their names in snake case and their expected values. Where the
//! expected value differs, the test says why.

use super::{SystemGuard, SystemRule, SystemThreshold};
use crate::error::{Argument, Error};
use crate::load::Load;

fn rule_error(rule: SystemRule) -> Argument {
    match SystemGuard::new(rule) {
        Err(Error::InvalidArgument(invalid)) => invalid.argument(),
        other => panic!("{other:?}"),
    }
}

/// Sentinel ignores a rule with a negative load or a CPU usage above 1
/// (`getRules()` is then empty); here such a rule is an error naming the
/// threshold, so that a typo never leaves a service unguarded silently.
#[test]
fn test_load_invalid_rules() {
    assert_eq!(
        rule_error(SystemRule { highest_system_load: Some(-0.9), ..SystemRule::default() }),
        Argument::HighestSystemLoad
    );
    assert_eq!(
        rule_error(SystemRule { highest_cpu_usage: Some(2.7), ..SystemRule::default() }),
        Argument::HighestCpuUsage
    );
}

#[test]
fn test_load_and_get_rules() {
    let rules = [
        SystemRule { highest_system_load: Some(1.2), ..SystemRule::default() },
        SystemRule { max_thread: Some(17), ..SystemRule::default() },
        SystemRule { highest_cpu_usage: Some(0.7), ..SystemRule::default() },
        SystemRule { qps: Some(1500.0), ..SystemRule::default() },
        SystemRule { avg_rt_micros: Some(50_000), ..SystemRule::default() },
    ];
    let rule = rules.into_iter().fold(SystemRule::default(), SystemRule::strictest);
    let guard = SystemGuard::new(rule).unwrap();
    assert_eq!(guard.rule().highest_system_load, Some(1.2));
    assert_eq!(guard.rule().max_thread, Some(17));
    assert_eq!(guard.rule().highest_cpu_usage, Some(0.7));
    assert_eq!(guard.rule().qps, Some(1500.0));
    assert_eq!(guard.rule().avg_rt_micros, Some(50_000));
}

#[test]
fn test_load_duplicate_type_of_rules() {
    let rules = [1.2, 2.3, 3.4].map(|load| SystemRule { highest_system_load: Some(load), ..SystemRule::default() });
    let rule = rules.into_iter().fold(SystemRule::default(), SystemRule::strictest);
    assert_eq!(rule.highest_system_load, Some(1.2));
    assert!(rule.is_set());
}

/// Sentinel waits for its JMX sampler to read a non-zero CPU usage; here
/// the reading is passed in.
#[test]
fn test_check_max_cpu_usage_not_bbr() {
    let mut guard = SystemGuard::new(SystemRule { highest_cpu_usage: Some(0.0), ..SystemRule::default() }).unwrap();
    let refusal = guard.try_acquire(0, 1, Load::new(0.05, 0.0)).unwrap_err();
    assert_eq!(refusal.threshold, SystemThreshold::Cpu);
    assert!(!refusal.decision.allowed);
}

/// `SystemRuleTest.testSystemRule_avgRt` sets `avgRt` to 4 ms and mocks the
/// nodes without asserting; the check it prepares: a second whose
/// completions average more than 4 ms refuses with "rt".
#[test]
fn test_system_rule_avg_rt() {
    let mut guard = SystemGuard::new(SystemRule { avg_rt_micros: Some(4_000), ..SystemRule::default() }).unwrap();
    let (permit, _) = guard.try_acquire(0, 1, Load::default()).unwrap();
    guard.release(permit, 4_000); // exactly 4 ms: not above
    let (permit, _) = guard.try_acquire(4_000, 1, Load::default()).unwrap();
    guard.release(permit, 10_000); // 6 ms: the average is 5 ms
    assert_eq!(guard.try_acquire(10_000, 1, Load::default()).unwrap_err().threshold, SystemThreshold::Rt);
    // A second later both completions have rolled off.
    assert!(guard.try_acquire(1_010_000, 1, Load::default()).is_ok());
}

/// sentinel-golang `TestDoCheckRuleConcurrency` (threshold 0.5, passing
/// below it): with Java's integer `maxThread` and its `>`, the threshold 0
/// gives the same answers — nothing in flight passes, one in flight blocks.
#[test]
fn test_do_check_rule_concurrency() {
    let mut guard = SystemGuard::new(SystemRule { max_thread: Some(0), ..SystemRule::default() }).unwrap();
    assert_eq!(guard.check(0, 1, Load::default()), None); // TrueConcurrency
    let (_permit, _) = guard.try_acquire(0, 1, Load::default()).unwrap();
    assert_eq!(guard.stats(0).in_flight, 1);
    assert_eq!(guard.check(0, 1, Load::default()), Some(SystemThreshold::Thread));
    // FalseConcurrency
}

/// sentinel-golang `TestDoCheckRuleLoad`: threshold 0.5; a load not read
/// yet passes, and a load of 1.0 passes too while the BBR check holds
/// (nothing in flight).
#[test]
fn test_do_check_rule_load() {
    let mut guard = SystemGuard::new(SystemRule { highest_system_load: Some(0.5), ..SystemRule::default() }).unwrap();
    assert_eq!(guard.check(0, 1, Load::default()), None); // TrueLoad
    assert_eq!(guard.check(0, 1, Load::new(0.0, 1.0)), None); // BBRTrueLoad
}

/// sentinel-golang `TestDoCheckRuleCpuUsage`: threshold 0.5; an unread CPU
/// passes. Its `BBRTrueCpuUsage` case (0.8 passes under the BBR strategy)
/// is sentinel-golang's own extension: Java's rule, followed here, applies
/// no BBR check to the CPU, so 0.8 refuses.
#[test]
fn test_do_check_rule_cpu_usage() {
    let mut guard = SystemGuard::new(SystemRule { highest_cpu_usage: Some(0.5), ..SystemRule::default() }).unwrap();
    assert_eq!(guard.check(0, 1, Load::default()), None); // TrueCpuUsage
    assert_eq!(guard.check(0, 1, Load::new(0.8, 0.0)), Some(SystemThreshold::Cpu));
}

/// sentinel-golang `TestCheckEmptyRule`: no threshold, nothing refused.
#[test]
fn test_check_empty_rule() {
    let mut guard = SystemGuard::new(SystemRule::default()).unwrap();
    assert!(!guard.rule().is_set());
    for i in 0..1000 {
        assert!(guard.try_acquire(i, 1, Load::new(1.0, 100.0)).is_ok());
    }
}

#[test]
fn qps_counts_the_last_second_in_two_buckets_and_this_count() {
    let mut guard = SystemGuard::new(SystemRule { qps: Some(10.0), ..SystemRule::default() }).unwrap();
    for _ in 0..6 {
        let _permit = guard.try_acquire(100_000, 1, Load::default()).unwrap(); // bucket 0
    }
    let (_, decision) = guard.try_acquire(600_000, 3, Load::default()).unwrap(); // bucket 1: 9 passed
    assert_eq!((decision.limit, decision.remaining), (10, 1));
    let refusal = guard.try_acquire(700_000, 2, Load::default()).unwrap_err(); // 9 + 2 > 10
    assert_eq!(refusal.threshold, SystemThreshold::Qps);
    // Bucket 0 rolls off at 1 s: the 6 passes of bucket 0 go, 3 stay.
    assert_eq!(refusal.decision.retry_after_micros, 300_000);
    assert!(guard.try_acquire(1_000_000, 2, Load::default()).is_ok());
    assert_eq!(guard.stats(1_000_000).pass_qps, 5.0);
    assert_eq!(guard.stats(1_000_000).block_qps, 2.0);
    // More than the threshold at once never passes.
    assert_eq!(
        guard.try_acquire(5_000_000, 11, Load::default()).unwrap_err().decision.retry_after_micros,
        crate::NEVER
    );
}

#[test]
fn the_load_refuses_only_when_the_bbr_check_fails() {
    let mut guard = SystemGuard::new(SystemRule { highest_system_load: Some(2.0), ..SystemRule::default() }).unwrap();
    let busy = Load::new(0.0, 3.0);
    // Ten requests of 100 ms complete in the first bucket: max success QPS
    // 20, min RT 100 ms, so capacity 20 × 100 / 1000 = 2 in flight.
    for _ in 0..10 {
        let (permit, _) = guard.try_acquire(0, 1, Load::default()).unwrap();
        guard.release(permit, 100_000);
    }
    let stats = guard.stats(100_000);
    assert_eq!((stats.max_success_qps, stats.min_rt_millis, stats.avg_rt_millis), (20.0, 100, 100.0));
    let _a = guard.try_acquire(100_000, 1, busy).unwrap(); // 0 in flight
    let _b = guard.try_acquire(100_000, 1, busy).unwrap(); // 1 in flight
    let _c = guard.try_acquire(100_000, 1, busy).unwrap(); // 2 in flight: not above 2
    assert_eq!(guard.try_acquire(100_000, 1, busy).unwrap_err().threshold, SystemThreshold::Load);
    // The same crowd under a low load passes.
    assert!(guard.try_acquire(100_000, 1, Load::new(0.0, 1.0)).is_ok());
}

#[test]
fn thresholds_are_checked_in_sentinels_order() {
    let rule = SystemRule { max_thread: Some(0), highest_cpu_usage: Some(0.1), ..SystemRule::default() };
    let mut guard = SystemGuard::new(rule).unwrap();
    let _held = guard.try_acquire(0, 1, Load::default()).unwrap();
    assert_eq!(guard.check(0, 1, Load::new(0.9, 0.0)), Some(SystemThreshold::Thread));
    assert_eq!(SystemThreshold::from_name("rt"), Some(SystemThreshold::Rt));
    assert_eq!(SystemThreshold::ALL.map(SystemThreshold::name), ["qps", "thread", "rt", "load", "cpu"]);
}

#[test]
fn bad_thresholds_name_themselves() {
    assert_eq!(rule_error(SystemRule { qps: Some(f64::NAN), ..SystemRule::default() }), Argument::Qps);
    assert_eq!(rule_error(SystemRule { qps: Some(-1.0), ..SystemRule::default() }), Argument::Qps);
    assert_eq!(rule_error(SystemRule { avg_rt_micros: Some(-1), ..SystemRule::default() }), Argument::AvgRt);
    assert_eq!(rule_error(SystemRule { max_thread: Some(u64::MAX), ..SystemRule::default() }), Argument::MaxThread);
    assert_eq!(
        rule_error(SystemRule { highest_system_load: Some(f64::INFINITY), ..SystemRule::default() }),
        Argument::HighestSystemLoad
    );
}
