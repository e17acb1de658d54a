//! Properties of the load-driven limiters over arbitrary inputs: any times
//! (backwards, at the ends of `i64`), any loads (NaN, infinities), any
//! order of acquires and releases — no panic, the in-flight count is what
//! was admitted and not released, and BBR never sheds below its threshold
//! (or on a NaN reading) outside a cool-down.

use proptest::prelude::*;

use ratekeeper_core::{Bbr, BbrConfig, Load, SystemGuard, SystemRule};

fn time() -> impl Strategy<Value = i64> {
    prop_oneof![0i64..5_000_000, any::<i64>(), Just(i64::MAX), Just(i64::MIN)]
}

fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![0.0f64..=1.0, any::<f64>(), Just(f64::NAN), Just(f64::INFINITY)]
}

/// An operation: acquire (with a load) or release the n-th permit out.
fn ops() -> impl Strategy<Value = Vec<(bool, i64, f64, f64, usize)>> {
    prop::collection::vec((any::<bool>(), time(), fraction(), fraction(), 0usize..8), 1..120)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bbr_counts_what_it_admits_and_never_panics(
        window in 1i64..20_000_000,
        buckets in 1u32..=128,
        threshold in 0.0f64..=1.0,
        cool_down in 0i64..3_000_000,
        ops in ops(),
    ) {
        let config = BbrConfig { window_micros: window.max(i64::from(buckets)), buckets, cpu_threshold: threshold, cool_down_micros: cool_down };
        let mut bbr = Bbr::new(config).unwrap();
        let mut out = Vec::new();
        for (acquire, now, cpu, load, pick) in ops {
            let load = Load::new(cpu, load);
            if acquire || out.is_empty() {
                let cooling = bbr.shedding_since().is_some();
                match bbr.try_acquire(now, load) {
                    Ok((permit, decision)) => {
                        prop_assert!(decision.allowed);
                        out.push(permit);
                    }
                    Err(decision) => {
                        prop_assert!(!decision.allowed);
                        // Below the threshold (or NaN), only a cool-down sheds.
                        prop_assert!(cpu >= threshold || cooling, "shed at cpu {cpu} < {threshold}");
                    }
                }
            } else {
                let permit = out.swap_remove(pick % out.len());
                bbr.release(permit, now);
            }
            prop_assert_eq!(bbr.in_flight(), out.len() as u64);
            let _ = bbr.stats(now, load);
        }
    }

    #[test]
    fn the_system_guard_counts_what_it_admits_and_never_panics(
        qps in prop::option::of(0.0f64..50.0),
        max_thread in prop::option::of(0u64..6),
        avg_rt in prop::option::of(0i64..100_000),
        highest_load in prop::option::of(0.0f64..4.0),
        highest_cpu in prop::option::of(0.0f64..=1.0),
        counts in prop::collection::vec(0u64..4, 120),
        ops in ops(),
    ) {
        let rule = SystemRule { qps, max_thread, avg_rt_micros: avg_rt, highest_system_load: highest_load, highest_cpu_usage: highest_cpu };
        let mut guard = SystemGuard::new(rule).unwrap();
        let mut out = Vec::new();
        for ((acquire, now, cpu, load, pick), count) in ops.into_iter().zip(counts) {
            if acquire || out.is_empty() {
                match guard.try_acquire(now, count, Load::new(cpu, load)) {
                    Ok((permit, decision)) => {
                        prop_assert!(decision.allowed);
                        out.push(permit);
                    }
                    Err(refusal) => {
                        prop_assert!(!refusal.decision.allowed);
                        prop_assert!(refusal.decision.retry_after_micros >= 0);
                    }
                }
            } else {
                let permit = out.swap_remove(pick % out.len());
                guard.release(permit, now);
            }
            prop_assert_eq!(guard.in_flight(), out.len() as u64);
            let stats = guard.stats(now);
            prop_assert!(stats.min_rt_millis >= 1 && stats.max_success_qps >= 2.0);
        }
    }
}
