//! Loom models of [`KeyedLimiter`]: two callers on one keyed limiter (a
//! shard lock each call takes, the shard's counters read without it)
//! decide as if they had come one at a time — for one key, for new keys at
//! the bound, and while keys are dropped, evicted or removed.
//!
//! Every model uses one shard, or two where a call visits every shard, and
//! a fixed hasher (std's `DefaultHasher` with its fixed keys), so that
//! loom's replays of an execution place each key in the same slot.

use std::hash::{BuildHasherDefault, DefaultHasher};
use std::sync::Arc as StdArc;

use ratekeeper_core::Gcra;

use super::linearizable;
use crate::keyed::{KeyedLimiter, KeyedOptions, WhenFull};
use crate::ManualClock;

type Keyed = KeyedLimiter<u64, Gcra, StdArc<ManualClock>, BuildHasherDefault<DefaultHasher>>;

/// A keyed GCRA limiter: `limit` units at once, one more each `period`
/// µs, room for `max_keys` in `shards` shards.
fn keyed(limit: u64, period: i64, options: KeyedOptions) -> Keyed {
    let template = Gcra::new(limit - 1, 1, period).unwrap();
    KeyedLimiter::with_clock_and_hasher(template, options, StdArc::new(ManualClock::new()), Default::default()).unwrap()
}

/// One key, its last unit: one caller gets it.
#[test]
fn one_key_last_unit() {
    linearizable(
        "KeyedLimiter::try_check, one key, last unit",
        || keyed(1, 1_000_000, KeyedOptions::new(16).shards(1)),
        |l, _| l.try_check(&7, 1),
        |l| (l.peek(&7, 1), l.len()),
    );
}

/// A look (`try_peek`, under the lock too) against the check it predicts.
#[test]
fn peek_against_check() {
    linearizable(
        "KeyedLimiter::peek vs check",
        || keyed(1, 1_000_000, KeyedOptions::new(16).shards(1)),
        |l, caller| if caller == 0 { l.peek(&7, 1) } else { l.check(&7, 1) },
        |l| l.len(),
    );
}

/// Room for one key, two new keys an hour from full: one is admitted, the
/// other refused at the bound (and counted); never two keys held.
#[test]
fn new_keys_at_the_bound() {
    linearizable(
        "KeyedLimiter::try_check, two new keys, room for one",
        || keyed(1, 3_600_000_000, KeyedOptions::new(1).shards(1)),
        |l, caller| l.try_check(&(10 + caller as u64), 1),
        |l| (l.len(), l.refused_new_keys(), l.peek(&10, 1), l.peek(&11, 1)),
    );
}

/// Room for one key, held by key 1, which is full again: a new key 2 drops
/// it to get in while key 1 comes back. Whoever is first is admitted (key 1
/// as held or as new: the same decision), the other refused at the bound.
#[test]
fn a_full_key_dropped_as_it_returns() {
    linearizable(
        "KeyedLimiter::try_check, a full key dropped for a new one",
        || {
            let l = keyed(1, 10, KeyedOptions::new(1).shards(1));
            assert!(l.check(&1, 1).allowed);
            l.clock().advance_micros(10);
            l
        },
        |l, caller| l.try_check(&(2 - caller as u64), 1),
        |l| (l.len(), l.refused_new_keys(), l.peek(&1, 1), l.peek(&2, 1)),
    );
}

/// `evict_full` (both shards, one after the other) while a key that is
/// full again is checked: the check's decision is the same in both orders
/// (dropping a full key changes nothing); only the count dropped differs.
#[test]
fn evict_full_against_a_check() {
    linearizable(
        "KeyedLimiter::evict_full vs check, 2 shards",
        || {
            let l = keyed(1, 10, KeyedOptions::new(4).shards(2));
            assert!(l.check(&1, 1).allowed && l.check(&2, 1).allowed);
            l.clock().advance_micros(10);
            l
        },
        |l, caller| match caller {
            0 => format!("evicted {}", l.evict_full()),
            _ => format!("{:?}", l.check(&1, 1)),
        },
        |l| (l.len(), l.peek(&1, 1), l.peek(&2, 1)),
    );
}

/// `remove` (a reset) against a check of the same key.
#[test]
fn remove_against_a_check() {
    linearizable(
        "KeyedLimiter::remove vs check",
        || {
            let l = keyed(1, 3_600_000_000, KeyedOptions::new(4).shards(1));
            assert!(l.check(&1, 1).allowed);
            l
        },
        |l, caller| match caller {
            0 => format!("removed {}", l.remove(&1)),
            _ => format!("{:?}", l.check(&1, 1)),
        },
        |l| (l.len(), l.peek(&1, 1)),
    );
}

/// The opt-in forced eviction: room for one key, held by key 1 (limit 2,
/// one unit left) when key 2 arrives and key 1 comes back. Each order
/// evicts as the serial run does, and counts it; never two keys held.
#[test]
fn forced_eviction_against_the_victim() {
    linearizable(
        "KeyedLimiter::try_check, EvictSoonestFull",
        || {
            let options = KeyedOptions::new(1).shards(1).when_full(WhenFull::EvictSoonestFull);
            let l = keyed(2, 1_000_000, options);
            assert!(l.check(&1, 1).allowed);
            l
        },
        |l, caller| l.try_check(&(2 - caller as u64), 1),
        |l| (l.len(), l.forced_evictions(), l.peek(&1, 1), l.peek(&2, 1)),
    );
}
