//! What the target knows of the library's state: every live handle with
//! the clock it reads and the facts its checks need, the permits out and
//! whom they belong to, the latest decision and the thread's last error
//! as last seen; the fields the header says each algorithm's spec reads;
//! and the order in which a run frees what is left.

use core::ffi::{c_char, CStr};
use core::ptr::{null, null_mut};

use ratekeeper_c::composite::*;
use ratekeeper_c::concurrency::*;
use ratekeeper_c::decision::*;
use ratekeeper_c::limiter::*;
use ratekeeper_c::manual_clock::*;
use ratekeeper_c::markers::*;
use ratekeeper_c::rate_limiter::*;
use ratekeeper_c::spec::*;
use ratekeeper_c::status::rk_status;
use ratekeeper_c::token_bucket::*;

use super::input::{ClockChoice, MaybeNull, Pick};

/// The most handles of one kind alive at once: enough for every sharing
/// pattern, few enough that a sliding log of a million entries each stays
/// within the fuzzer's memory.
pub(super) const MAX_LIVE: usize = 6;

/// The fields of `rk_limiter_spec` an algorithm reads (the header's list).
pub(super) fn used_fields(algorithm: u32) -> &'static [&'static str] {
    match algorithm {
        RK_ALGORITHM_TOKEN_BUCKET => &["rate", "burst"],
        RK_ALGORITHM_GCRA => &["max_burst", "count_per_period", "period_micros"],
        RK_ALGORITHM_LEAKY_BUCKET_METER => &["capacity", "count_per_period", "period_micros"],
        RK_ALGORITHM_LEAKY_BUCKET_QUEUE => &["capacity", "interval_micros", "slack"],
        RK_ALGORITHM_SLIDING_WINDOW => &["limit", "window_micros", "sub_windows"],
        RK_ALGORITHM_FIXED_WINDOW | RK_ALGORITHM_SLIDING_LOG | RK_ALGORITHM_SLIDING_WINDOW_COUNTER => {
            &["limit", "window_micros"]
        }
        _ => &[],
    }
}

/// Every field of `rk_limiter_spec`, as `rk_last_error_argument()` names
/// them.
pub(super) const SPEC_FIELDS: [&str; 12] = [
    "algorithm",
    "rate",
    "burst",
    "max_burst",
    "count_per_period",
    "period_micros",
    "capacity",
    "interval_micros",
    "limit",
    "window_micros",
    "sub_windows",
    "slack",
];

/// The fields of a spec that are set although its algorithm has no use
/// for them.
pub(super) fn stray_fields(s: &rk_limiter_spec) -> Vec<&'static str> {
    let used = used_fields(s.algorithm);
    let set = [
        ("rate", s.rate != 0.0),
        ("burst", s.burst != 0),
        ("max_burst", s.max_burst != 0),
        ("count_per_period", s.count_per_period != 0),
        ("period_micros", s.period_micros != 0),
        ("capacity", s.capacity != 0),
        ("interval_micros", s.interval_micros != 0),
        ("limit", s.limit != 0),
        ("window_micros", s.window_micros != 0),
        ("sub_windows", s.sub_windows != 0),
        ("slack", s.slack != 0),
    ];
    set.iter().filter(|(name, set)| *set && !used.contains(name)).map(|(name, _)| *name).collect()
}

/// A handle and the clock it reads.
#[derive(Debug)]
pub(super) struct Held<T> {
    pub(super) ptr: *mut T,
    /// The manual clock's id, or `None` for the monotonic clock.
    pub(super) clock: Option<u64>,
    /// An id of its own (what permits and reservations point back to).
    pub(super) id: u64,
    /// What the checks need to know about it.
    pub(super) facts: Facts,
}

/// What the target remembers of a handle.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Facts {
    pub(super) algorithm: u32,
    /// A composite's number of limits; a marker's two bursts.
    pub(super) len: usize,
    pub(super) bursts: (u64, u64),
}

#[derive(Debug)]
pub(super) struct Clock {
    pub(super) ptr: *mut rk_manual_clock,
    pub(super) id: u64,
}

#[derive(Debug)]
pub(super) struct PermitHeld {
    pub(super) ptr: *mut rk_permit,
    pub(super) limiter: u64,
}

/// Every live handle, and what the checks remember.
#[derive(Debug, Default)]
pub(super) struct World {
    pub(super) clocks: Vec<Clock>,
    pub(super) limiters: Vec<Held<rk_limiter>>,
    pub(super) reservations: Vec<*mut rk_reservation>,
    pub(super) rate_limiters: Vec<Held<rk_rate_limiter>>,
    pub(super) composites: Vec<Held<rk_composite_limiter>>,
    pub(super) concurrency: Vec<Held<rk_concurrency_limiter>>,
    pub(super) permits: Vec<PermitHeld>,
    pub(super) srtcms: Vec<Held<rk_srtcm>>,
    pub(super) trtcms: Vec<Held<rk_trtcm>>,
    pub(super) next_id: u64,
    /// The latest decision any limiter gave.
    pub(super) latest: Option<rk_decision>,
    /// This thread's last error as the target last saw it: a successful
    /// call must leave it alone.
    pub(super) last_error: (String, Option<String>),
}

pub(super) fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the library returns NULL or a NUL-terminated string that
    // stays valid until the next failing call on this thread.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

pub(super) fn pick<T>(list: &[T], p: Pick) -> Option<&T> {
    let i = usize::from(p.0?);
    (!list.is_empty()).then(|| &list[i % list.len()])
}

pub(super) fn ptr_of<T>(h: Option<&Held<T>>) -> *mut T {
    h.map_or(null_mut(), |h| h.ptr)
}

/// A pointer to `value`, or NULL.
pub(super) fn out<T>(value: &mut T, null: MaybeNull) -> *mut T {
    if null.0 {
        null_mut()
    } else {
        value
    }
}

impl World {
    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn clock_ptr(&self, id: Option<u64>) -> Option<*mut rk_manual_clock> {
        let id = id?;
        self.clocks.iter().find(|c| c.id == id).map(|c| c.ptr)
    }

    /// The time of a live manual clock.
    pub(super) fn now(&self, clock: Option<u64>) -> Option<i64> {
        let ptr = self.clock_ptr(clock)?;
        let mut now = 0;
        // SAFETY: a live clock and a local.
        assert_eq!(unsafe { rk_manual_clock_now_micros(ptr, &mut now) }, rk_status::RK_OK);
        Some(now)
    }

    /// The clock a new handle gets: its pointer and id.
    pub(super) fn choose_clock(&mut self, choice: ClockChoice) -> (*const rk_manual_clock, Option<u64>) {
        match choice {
            ClockChoice::Monotonic => (null(), None),
            ClockChoice::Manual(i) => {
                if self.clocks.is_empty() {
                    self.new_clock(MaybeNull(false));
                }
                let c = &self.clocks[usize::from(i) % self.clocks.len()];
                (c.ptr, Some(c.id))
            }
        }
    }

    /// Frees everything, in the order the header allows and that would
    /// first show a dangling reference: the clocks, then the limiters, then
    /// what still holds them (reservations; permits, released).
    pub(super) fn finish(mut self) {
        // SAFETY: every pointer is live and freed once.
        unsafe {
            for c in self.clocks.drain(..) {
                rk_manual_clock_free(c.ptr);
            }
            for l in self.limiters.drain(..) {
                rk_limiter_free(l.ptr);
            }
            for l in self.concurrency.drain(..) {
                rk_concurrency_limiter_free(l.ptr);
            }
            for r in self.reservations.drain(..) {
                // Still usable after its bucket is freed.
                let mut tokens = 0;
                assert_eq!(rk_reservation_tokens(r, &mut tokens), rk_status::RK_OK);
                rk_reservation_free(r);
            }
            for p in self.permits.drain(..) {
                assert_eq!(rk_permit_release(p.ptr, RK_OUTCOME_IGNORED, null_mut()), rk_status::RK_OK);
            }
            for l in self.rate_limiters.drain(..) {
                rk_rate_limiter_free(l.ptr);
            }
            for l in self.composites.drain(..) {
                rk_composite_limiter_free(l.ptr);
            }
            for m in self.srtcms.drain(..) {
                rk_srtcm_free(m.ptr);
            }
            for m in self.trtcms.drain(..) {
                rk_trtcm_free(m.ptr);
            }
        }
    }
}
