//! [`rk_keyed_limiter`]: one limiter per key, each made on first use from
//! an [`rk_limiter_spec`] template, in bounded memory — the std layer's
//! `AnyKeyedLimiter` keyed by byte strings.
//!
//! A key is any bytes (`key`, `key_len`: a user id, an IP address in
//! binary, `"user:42/post"`). The semantics are the std layer's
//! (`ratekeeper::keyed`): at most `max_keys` keys held, a key dropped only
//! when its state is whole again (so dropping it changes no decision), and
//! at the bound either new keys refused (`RK_WHEN_FULL_REFUSE_NEW_KEYS`)
//! or the key owed least forgotten (`RK_WHEN_FULL_EVICT_SOONEST_FULL`,
//! which over-admits). A refusal at the bound is a decision, not an error:
//! `rk_keyed_limiter_check()` says which refusals were the bound's through
//! its optional `out_at_capacity`.

use core::ffi::c_char;

use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{cost_from_i64, unsigned_from_i64, AnyKeyedLimiter, Argument, KeyedOptions, Value, WhenFull};

use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::rk_decision;
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::spec::{algorithm_of, rk_algorithm, rk_limiter_spec};
use crate::status::rk_status;
use crate::text;

/// What a keyed limiter does when a new key arrives and its share of
/// `max_keys` is held by keys none of which is whole again: one of the
/// `RK_WHEN_FULL_*` constants.
pub type rk_when_full = u32;

/// Refuse the new key's request (a refused decision, `*out_at_capacity`
/// true): never over-admits. The default (0).
pub const RK_WHEN_FULL_REFUSE_NEW_KEYS: rk_when_full = 0;
/// Forget the held key that would be whole again soonest (of a sample of
/// 16), and admit the new one. Over-admits: the forgotten key starts
/// afresh when it returns, so it may get up to one `limit` more, once per
/// such eviction (`rk_keyed_limiter_forced_evictions()` counts them).
pub const RK_WHEN_FULL_EVICT_SOONEST_FULL: rk_when_full = 1;

/// A keyed limiter's options, for `rk_keyed_limiter_new()`:
///
/// ```c
/// rk_keyed_options options = {.max_keys = 100000};   // new keys refused at the bound
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct rk_keyed_options {
    /// The most keys held at once: 1 to 2^40. Memory is allocated for
    /// them as keys arrive, and never grows past room for this many.
    pub max_keys: i64,
    /// What happens at the bound: an `RK_WHEN_FULL_*` (0 refuses new keys).
    pub when_full: rk_when_full,
    /// How many shards (each a lock and a table) the keys are spread over:
    /// a power of two from 1 to 65536, at most `max_keys`; 0 for the
    /// default (4 per available core, at most 1024, fewer for a small
    /// bound).
    pub shards: i64,
    /// The longest key taken, in bytes: 1 to 65536; 0 for the default,
    /// 256. A longer key is `RK_INVALID_ARGUMENT` (naming `key`) and is
    /// never stored, so the memory held stays within
    /// `rk_keyed_stats.max_bytes`.
    pub max_key_bytes: i64,
}

impl rk_keyed_options {
    pub(crate) fn to_options(self) -> Result<KeyedOptions, Failure> {
        let max_keys = unsigned_from_i64(Argument::MaxKeys, self.max_keys)?;
        let max_keys =
            usize::try_from(max_keys).map_err(|_| ratekeeper::Error::invalid_uint(Argument::MaxKeys, max_keys))?;
        let when_full = match self.when_full {
            RK_WHEN_FULL_REFUSE_NEW_KEYS => WhenFull::RefuseNewKeys,
            RK_WHEN_FULL_EVICT_SOONEST_FULL => WhenFull::EvictSoonestFull,
            other => {
                return Err(Failure::Invalid {
                    argument: "when_full",
                    value: Value::Int(i64::from(other)),
                    requirement: "must be one of the RK_WHEN_FULL_* constants",
                })
            }
        };
        let mut options = KeyedOptions::new(max_keys).when_full(when_full);
        if self.max_key_bytes != 0 {
            let bytes = unsigned_from_i64(Argument::MaxKeyBytes, self.max_key_bytes)?;
            options = options.max_key_bytes(MaxKeyBytes::new(usize::try_from(bytes).unwrap_or(usize::MAX))?);
        }
        Ok(match self.shards {
            0 => options,
            shards => {
                let shards = unsigned_from_i64(Argument::Shards, shards)?;
                options.shards(usize::try_from(shards).unwrap_or(usize::MAX))
            }
        })
    }
}

/// One limiter per key, all alike: `rk_keyed_limiter_check()` decides a
/// request for a key as that key's own limiter would (one made from the
/// template at its first request), with the same `rk_decision`.
///
/// Thread safety: every function taking a `const rk_keyed_limiter *` may
/// be called on the same handle from any number of threads at once (keys
/// are spread over shards, each behind its own short lock). Only
/// `rk_keyed_limiter_free()` must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_keyed_limiter {
    limiter: AnyKeyedLimiter,
    algorithm: rk_algorithm,
}

/// Creates a keyed limiter whose keys each get a limiter like the one
/// `*spec` describes (any `RK_ALGORITHM_*`), holding at most
/// `options->max_keys` keys, in `*out_limiter`. Free it with
/// `rk_keyed_limiter_free()`.
///
/// `clock`: a manual clock every key's limiter reads the time from, or
/// NULL for the system's monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT`, naming the field, for a spec
/// `rk_limiter_new()` refuses, a `max_keys` that is not between 1 and
/// 2^40, a `when_full` that is not an `RK_WHEN_FULL_*`, a `shards` that
/// is not 0 or a power of two up to 65536 and `max_keys`, or a
/// `max_key_bytes` that is not 0 or between 1 and 65536;
/// `RK_NULL_POINTER` when `spec`, `options` or `out_limiter` is NULL.
///
/// # Safety
/// `spec` and `options` are NULL or valid for reading; `clock` is NULL or
/// a live clock; `out_limiter` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_new(
    spec: *const rk_limiter_spec,
    options: *const rk_keyed_options,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_keyed_limiter,
) -> rk_status {
    guard("rk_keyed_limiter_new", || {
        // SAFETY: the caller's contract.
        let (spec, options, clock, out) = unsafe {
            (
                handle(spec, "spec")?,
                handle(options, "options")?,
                clock.as_ref(),
                Out::required(out_limiter, "out_limiter")?,
            )
        };
        let spec = spec.to_spec()?;
        let options = options.to_options()?;
        let limiter = AnyKeyedLimiter::new(&spec, options, rk_manual_clock::any_clock(clock))?;
        out.write(Box::into_raw(Box::new(rk_keyed_limiter { limiter, algorithm: algorithm_of(&spec) })));
        Ok(())
    })
}

/// Frees a keyed limiter, every key's state with it (and its reference to
/// its clock). `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a limiter from `rk_keyed_limiter_new()` that has
/// not been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_free(limiter: *mut rk_keyed_limiter) {
    // SAFETY: the caller's contract: NULL or a live box from rk_keyed_limiter_new that
    // no other call is using.
    unsafe { free_box("rk_keyed_limiter_free", limiter) }
}

/// Admits a request of `cost` units for the key of `key_len` bytes at
/// `key` if its limit allows it, consuming them, and stores the decision
/// in `*out_decision` — what the key's own limiter would decide; a new key
/// starts whole. A refusal consumes nothing, is not an error, and never
/// creates a key; nor does a cost of 0 (a free look).
///
/// A new key whose share of `max_keys` is held by keys none of which is
/// whole again is refused under `RK_WHEN_FULL_REFUSE_NEW_KEYS`, with
/// `remaining` 0 and a retry-after until one of those keys can be whole:
/// then `*out_at_capacity` is true (else false). `out_at_capacity` may be
/// NULL when that is of no interest.
///
/// `key` may be NULL when `key_len` is 0 (the empty key).
///
/// Returns `RK_INVALID_ARGUMENT`, consuming nothing, when `cost` is
/// negative or `key_len` is above the limiter's `max_key_bytes` (naming
/// `key`, its length the value); `RK_NULL_POINTER` when `limiter`,
/// `out_decision`, or `key` with a `key_len` above 0, is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_decision` and `out_at_capacity` are NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_check(
    limiter: *const rk_keyed_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_at_capacity: *mut bool,
) -> rk_status {
    guard("rk_keyed_limiter_check", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out, at_capacity) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
                Out::optional(out_at_capacity),
            )
        };
        let decided = limiter.limiter.try_check(key, cost_from_i64(cost)?)?;
        write_decided(decided.map_err(|full| full.decision()), out, at_capacity);
        Ok(())
    })
}

/// The decision `rk_keyed_limiter_check()` would make now for the key, in
/// `*out_decision` (and whether it would be a refusal at the bound, in
/// `*out_at_capacity` when not NULL); consumes nothing and creates no key.
///
/// Returns `RK_INVALID_ARGUMENT` when `cost` is negative or the key too
/// long, and `RK_NULL_POINTER`, as `rk_keyed_limiter_check()`.
///
/// # Safety
/// As `rk_keyed_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_peek(
    limiter: *const rk_keyed_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_at_capacity: *mut bool,
) -> rk_status {
    guard("rk_keyed_limiter_peek", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out, at_capacity) = unsafe {
            (
                handle(limiter, "limiter")?,
                text::bytes(key, key_len, "key")?,
                Out::required(out_decision, "out_decision")?,
                Out::optional(out_at_capacity),
            )
        };
        let decided = limiter.limiter.try_peek(key, cost_from_i64(cost)?)?;
        write_decided(decided.map_err(|full| full.decision()), out, at_capacity);
        Ok(())
    })
}

/// Stores a decision, `Err` being a refusal at the bound.
fn write_decided(
    decided: Result<ratekeeper::Decision, ratekeeper::Decision>,
    out: Out<rk_decision>,
    at_capacity: Option<Out<bool>>,
) {
    let (decision, full) = match decided {
        Ok(decision) => (decision, false),
        Err(decision) => (decision, true),
    };
    out.write(decision.into());
    if let Some(at_capacity) = at_capacity {
        at_capacity.write(full);
    }
}

/// Gives back `cost` units admitted for a key that should not count (a
/// request skipped or failed), now, as `rk_limiter_refund()` on the key's
/// own limiter would. Stores in `*out_held` (when not NULL) whether the
/// key was held: a key not held is whole, with nothing to give back, and a
/// refund creates no key.
///
/// Returns `RK_INVALID_ARGUMENT`, changing nothing, when `cost` is
/// negative or the key longer than the limiter's `max_key_bytes`;
/// `RK_NULL_POINTER` when `limiter`, or `key` with a `key_len` above 0, is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_held` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_refund(
    limiter: *const rk_keyed_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_held: *mut bool,
) -> rk_status {
    guard("rk_keyed_limiter_refund", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) =
            unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::optional(out_held)) };
        let held = limiter.limiter.refund(key, cost_from_i64(cost)?)?;
        if let Some(out) = out {
            out.write(held);
        }
        Ok(())
    })
}

/// Forgets a key: its next request starts whole, as a new key's. Stores in
/// `*out_removed` (when not NULL) whether the key was held.
///
/// Forgetting a key that is not whole again lets it through up to one
/// `limit` more than its limiter would have: for keys that are gone (a
/// deleted account), not to reset a limit.
///
/// Returns `RK_INVALID_ARGUMENT` when the key is longer than the
/// limiter's `max_key_bytes` (no such key is held); `RK_NULL_POINTER` when
/// `limiter`, or `key` with a `key_len` above 0, is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_removed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_remove(
    limiter: *const rk_keyed_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_keyed_limiter_remove", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) =
            unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::optional(out_removed)) };
        let removed = limiter.limiter.remove(key)?;
        if let Some(out) = out {
            out.write(removed);
        }
        Ok(())
    })
}

/// Drops every key whose state is whole again — which changes no decision
/// — and stores how many in `*out_evicted` (when not NULL). New keys make
/// room this way by themselves; this is for returning memory after a
/// flood, say.
///
/// Returns `RK_NULL_POINTER` when `limiter` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_evicted` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_evict_full(
    limiter: *const rk_keyed_limiter,
    out_evicted: *mut u64,
) -> rk_status {
    guard("rk_keyed_limiter_evict_full", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::optional(out_evicted)) };
        let evicted = limiter.limiter.evict_full();
        if let Some(out) = out {
            out.write(evicted as u64);
        }
        Ok(())
    })
}

/// A keyed limiter's counts, from `rk_keyed_limiter_stats()`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct rk_keyed_stats {
    /// Keys held now (never more than `max_keys`).
    pub len: u64,
    /// The bound, as created.
    pub max_keys: u64,
    /// The longest key taken, in bytes.
    pub max_key_bytes: u64,
    /// The most bytes the limiter can ever hold: `max_keys` keys of
    /// `max_key_bytes`, each state at its largest, and the tables (the
    /// allocator's own overhead aside).
    pub max_bytes: u64,
    /// Requests of new keys refused at the bound, since creation.
    pub refused_new_keys: u64,
    /// Keys forgotten before they were whole again
    /// (`RK_WHEN_FULL_EVICT_SOONEST_FULL`), since creation.
    pub forced_evictions: u64,
}

/// The limiter's counts, in `*out_stats`. Each is read on its own, so under
/// concurrent requests they are not one snapshot.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_stats` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_stats` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_stats(
    limiter: *const rk_keyed_limiter,
    out_stats: *mut rk_keyed_stats,
) -> rk_status {
    guard("rk_keyed_limiter_stats", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_stats, "out_stats")?) };
        let l = &limiter.limiter;
        out.write(rk_keyed_stats {
            len: l.len() as u64,
            max_keys: l.max_keys() as u64,
            max_key_bytes: l.max_key_bytes() as u64,
            max_bytes: l.max_bytes() as u64,
            refused_new_keys: l.refused_new_keys(),
            forced_evictions: l.forced_evictions(),
        });
        Ok(())
    })
}

/// The algorithm of every key's limiter, an `RK_ALGORITHM_*`, in
/// `*out_algorithm`.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_algorithm` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_algorithm` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_keyed_limiter_algorithm(
    limiter: *const rk_keyed_limiter,
    out_algorithm: *mut rk_algorithm,
) -> rk_status {
    guard("rk_keyed_limiter_algorithm", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_algorithm, "out_algorithm")?) };
        out.write(limiter.algorithm);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use crate::manual_clock::{rk_manual_clock_advance_micros, rk_manual_clock_free, rk_manual_clock_new};
    use crate::spec::RK_ALGORITHM_FIXED_WINDOW;
    use core::ptr::{null, null_mut};

    fn check(limiter: *const rk_keyed_limiter, key: &[u8]) -> (rk_decision, bool) {
        // SAFETY: an rk_decision is a bool and integers, for which all
        // zero bytes are a valid value (false and 0s).
        let mut d = unsafe { core::mem::zeroed() };
        let mut full = true;
        // SAFETY: live limiter, key and out-parameters.
        let status = unsafe { rk_keyed_limiter_check(limiter, key.as_ptr().cast(), key.len(), 1, &mut d, &mut full) };
        assert_eq!(status, rk_status::RK_OK);
        (d, full)
    }

    #[test]
    fn one_limiter_per_key_in_a_bounded_table() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut clock = null_mut();
            assert_eq!(rk_manual_clock_new(&mut clock), rk_status::RK_OK);
            let spec = rk_limiter_spec {
                algorithm: RK_ALGORITHM_FIXED_WINDOW,
                limit: 2,
                window_micros: 1_000,
                ..Default::default()
            };
            let options = rk_keyed_options { max_keys: 2, shards: 1, ..Default::default() };
            let mut limiter = null_mut();
            assert_eq!(rk_keyed_limiter_new(&spec, &options, clock, &mut limiter), rk_status::RK_OK);
            assert_eq!(check(limiter, b"a").0.remaining, 1);
            assert_eq!(check(limiter, b"a").0.remaining, 0);
            assert!(!check(limiter, b"a").0.allowed);
            assert!(check(limiter, b"\xff\x00").0.allowed, "any bytes");
            let (d, full) = check(limiter, b"c");
            assert!(!d.allowed && full, "a third key at a bound of 2");
            assert_eq!(d.retry_after_micros, 1_000);
            let mut stats = rk_keyed_stats::default();
            assert_eq!(rk_keyed_limiter_stats(limiter, &mut stats), rk_status::RK_OK);
            assert_eq!(
                (stats.len, stats.max_keys, stats.max_key_bytes, stats.refused_new_keys, stats.forced_evictions),
                (2, 2, 256, 1, 0)
            );
            assert!(stats.max_bytes > 2 * 256, "two keys of up to 256 bytes: {}", stats.max_bytes);
            assert_eq!(rk_manual_clock_advance_micros(clock, 1_000), rk_status::RK_OK);
            let (d, full) = check(limiter, b"c");
            assert!(d.allowed && !full, "whole keys made room");
            let mut evicted = 9;
            assert_eq!(rk_keyed_limiter_evict_full(limiter, &mut evicted), rk_status::RK_OK);
            assert_eq!(evicted, 0, "c is not whole");
            let mut removed = false;
            assert_eq!(rk_keyed_limiter_remove(limiter, b"c".as_ptr().cast(), 1, &mut removed), rk_status::RK_OK);
            assert!(removed);
            let mut d = core::mem::zeroed::<rk_decision>();
            assert_eq!(rk_keyed_limiter_check(limiter, null(), 0, 1, &mut d, null_mut()), rk_status::RK_OK);
            assert!(d.allowed, "the empty key is a key");
            rk_keyed_limiter_free(limiter);
            rk_manual_clock_free(clock);
        }
    }

    #[test]
    fn bad_options_name_their_field() {
        // SAFETY: as above.
        unsafe {
            let spec = rk_limiter_spec {
                algorithm: RK_ALGORITHM_FIXED_WINDOW,
                limit: 2,
                window_micros: 1_000,
                ..Default::default()
            };
            let mut limiter = null_mut();
            for (options, argument) in [
                (rk_keyed_options::default(), "max_keys"),
                (rk_keyed_options { max_keys: -1, ..Default::default() }, "max_keys"),
                (rk_keyed_options { max_keys: 1 << 41, ..Default::default() }, "max_keys"),
                (rk_keyed_options { max_keys: 8, when_full: 2, ..Default::default() }, "when_full"),
                (rk_keyed_options { max_keys: 8, shards: 3, ..Default::default() }, "shards"),
                (rk_keyed_options { max_keys: 8, shards: 16, ..Default::default() }, "shards"),
                (rk_keyed_options { max_keys: 8, shards: -2, ..Default::default() }, "shards"),
            ] {
                assert_eq!(rk_keyed_limiter_new(&spec, &options, null(), &mut limiter), rk_status::RK_INVALID_ARGUMENT);
                assert_eq!(last_argument().as_deref(), Some(argument), "{options:?}: {}", last_message());
                assert!(limiter.is_null());
            }
            let options = rk_keyed_options { max_keys: 8, ..Default::default() };
            assert_eq!(rk_keyed_limiter_new(&spec, null(), null(), &mut limiter), rk_status::RK_NULL_POINTER);
            assert_eq!(last_argument().as_deref(), Some("options"));
            assert_eq!(rk_keyed_limiter_new(&spec, &options, null(), &mut limiter), rk_status::RK_OK);
            let mut d = core::mem::zeroed::<rk_decision>();
            assert_eq!(rk_keyed_limiter_check(limiter, null(), 1, 1, &mut d, null_mut()), rk_status::RK_NULL_POINTER);
            assert_eq!(last_argument().as_deref(), Some("key"));
            assert_eq!(
                rk_keyed_limiter_check(limiter, b"k".as_ptr().cast(), 1, -1, &mut d, null_mut()),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("cost"));
            rk_keyed_limiter_free(limiter);
        }
    }
}
