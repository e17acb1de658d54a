//! The C ABI (`bindings/c`), called as a C program would call it: any
//! sequence of `rk_` calls on a pool of live handles, with NULL for any
//! pointer, negative and extreme counts, NaN and infinite rates, unknown
//! enum values, buffers of every size, and the freeing patterns the header
//! allows (freeing NULL, freeing a manual clock while limiters use it, a
//! limiter while its reservations live on, a concurrency limiter while
//! permits are out, releasing a permit with a bad outcome and then again).
//!
//! The functions are the very ones `libratekeeper` exports (the fuzz
//! crate compiles `bindings/c/src` as an rlib, `c-abi/Cargo.toml`), so
//! AddressSanitizer sees every pointer they follow and LeakSanitizer every
//! handle they fail to free. After every call the header's conventions
//! are checked:
//!
//! * the status is one of the documented ones and never `RK_PANIC` (a panic
//!   aborts the fuzzer even before the boundary could catch it) or
//!   `RK_OTHER_ERROR` (ratekeeper has no error that is not about an
//!   argument);
//! * a NULL required pointer is `RK_NULL_POINTER` naming that pointer
//!   (where the header says it is checked first);
//! * a failure's message starts with the function's name and names the
//!   argument `rk_last_error_argument()` gives; a success leaves both
//!   alone;
//! * out-parameters are written only on `RK_OK`, and a failed call changes
//!   nothing observable in the handle (on a manual clock, every answer
//!   before and after it is the same);
//! * what each call returns keeps the header's promises: decisions in
//!   range (the contract of [`crate::contract::check_fields`]), `peek`
//!   predicting `check`, blocking calls advancing a manual clock by exactly
//!   the wait they report, permits counted in flight until released,
//!   colours never improved, strings within the documented sizes, and the
//!   buffer protocol (length query, too small gets nothing, NUL-terminated
//!   otherwise).
//!
//! Handles on the system's monotonic clock (a NULL `clock`) are made too,
//! but the calls that would block the thread are never made on them.

use core::ffi::{c_char, CStr};
use core::ptr::{null, null_mut};
use std::ffi::CString;

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper_c::composite::*;
use ratekeeper_c::concurrency::*;
use ratekeeper_c::decision::*;
use ratekeeper_c::limiter::*;
use ratekeeper_c::manual_clock::*;
use ratekeeper_c::markers::*;
use ratekeeper_c::rate_limiter::*;
use ratekeeper_c::spec::*;
use ratekeeper_c::status::{rk_status, rk_status_message};
use ratekeeper_c::token_bucket::*;
use ratekeeper_c::{rk_last_error_argument, rk_last_error_message, rk_version};
use ratekeeper_core::Decision;

use crate::contract::{check_fields, Promises};
use crate::values::{wild_f64, wild_i64};

/// The most handles of one kind alive at once: enough for every sharing
/// pattern, few enough that a sliding log of a million entries each stays
/// within the fuzzer's memory.
const MAX_LIVE: usize = 6;

/// A count or cost as C passes it: mostly small, sometimes negative or
/// extreme.
#[derive(Debug, Clone, Copy)]
pub struct Signed(pub i64);

impl<'a> Arbitrary<'a> for Signed {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Signed(match u.int_in_range(0u8..=9)? {
            0 => wild_i64(u)?,
            1 => -u.int_in_range(1i64..=1_000)?,
            2 => u.int_in_range(0i64..=1_000)?,
            _ => u.int_in_range(0i64..=40)?,
        }))
    }
}

/// A duration in microseconds as C passes it: mostly up to a few seconds.
#[derive(Debug, Clone, Copy)]
pub struct Micros(pub i64);

impl<'a> Arbitrary<'a> for Micros {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Micros(match u.int_in_range(0u8..=7)? {
            0 => wild_i64(u)?,
            1 => u.int_in_range(-1_000i64..=0)?,
            2 => u.int_in_range(0i64..=1_000)?,
            _ => u.int_in_range(1i64..=3_000_000)?,
        }))
    }
}

/// A rate as C passes it: mostly a plain one, sometimes NaN, infinite,
/// negative or subnormal.
#[derive(Debug, Clone, Copy)]
pub struct Rate(pub f64);

impl<'a> Arbitrary<'a> for Rate {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Rate(if u.ratio(1u8, 3)? { wild_f64(u)? } else { f64::from(u.int_in_range(1u32..=2_000)?) / 4.0 }))
    }
}

/// Which handle of a kind a call is given: NULL now and then, else one of
/// the live ones (NULL when there is none).
#[derive(Debug, Clone, Copy)]
pub struct Pick(Option<u8>);

impl<'a> Arbitrary<'a> for Pick {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Pick(if u.ratio(1u8, 10)? { None } else { Some(u8::arbitrary(u)?) }))
    }
}

/// A pointer argument that may be NULL: mostly valid.
#[derive(Debug, Clone, Copy)]
pub struct MaybeNull(bool);

impl<'a> Arbitrary<'a> for MaybeNull {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(MaybeNull(u.ratio(1u8, 12)?))
    }
}

/// The clock a new handle reads: one of the manual clocks (made if there
/// is none), or the system's (a NULL `clock`).
#[derive(Debug, Clone, Copy)]
pub enum ClockChoice {
    /// A manual clock.
    Manual(u8),
    /// NULL: the monotonic clock.
    Monotonic,
}

impl<'a> Arbitrary<'a> for ClockChoice {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(if u.ratio(1u8, 8)? { ClockChoice::Monotonic } else { ClockChoice::Manual(u8::arbitrary(u)?) })
    }
}

/// An `rk_limiter_spec`: an algorithm (mostly a real one) and its fields;
/// the fields it does not use are mostly 0.
#[derive(Debug, Clone, Copy)]
pub struct Spec(rk_limiter_spec);

impl<'a> Arbitrary<'a> for Spec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let algorithm = if u.ratio(1u8, 16)? { u32::arbitrary(u)? } else { u.int_in_range(1u32..=8)? };
        let used = used_fields(algorithm);
        let int = |name: &str, u: &mut Unstructured<'a>| -> Result<i64> {
            if used.contains(&name) {
                Ok(match name {
                    "period_micros" | "interval_micros" | "window_micros" => Micros::arbitrary(u)?.0,
                    "sub_windows" => {
                        if u.ratio(3u8, 4)? {
                            u.int_in_range(1i64..=16)?
                        } else {
                            wild_i64(u)?
                        }
                    }
                    _ => Signed::arbitrary(u)?.0,
                })
            } else if u.ratio(1u8, 20)? {
                wild_i64(u)
            } else {
                Ok(0)
            }
        };
        let mut spec = rk_limiter_spec {
            algorithm,
            rate: 0.0,
            burst: int("burst", u)?,
            max_burst: int("max_burst", u)?,
            count_per_period: int("count_per_period", u)?,
            period_micros: int("period_micros", u)?,
            capacity: int("capacity", u)?,
            interval_micros: int("interval_micros", u)?,
            limit: int("limit", u)?,
            window_micros: int("window_micros", u)?,
            sub_windows: int("sub_windows", u)?,
        };
        // A sliding window's length must divide by its sub-windows: mostly
        // made so, to get past the constructor.
        if algorithm == RK_ALGORITHM_SLIDING_WINDOW && spec.sub_windows > 0 && u.ratio(3u8, 4)? {
            spec.window_micros = spec.window_micros.clamp(1, 1 << 40).saturating_mul(spec.sub_windows);
        }
        if used.contains(&"rate") || u.ratio(1u8, 20)? {
            spec.rate = Rate::arbitrary(u)?.0;
        }
        Ok(Spec(spec))
    }
}

/// The fields of `rk_limiter_spec` an algorithm reads (the header's list).
fn used_fields(algorithm: u32) -> &'static [&'static str] {
    match algorithm {
        RK_ALGORITHM_TOKEN_BUCKET => &["rate", "burst"],
        RK_ALGORITHM_GCRA => &["max_burst", "count_per_period", "period_micros"],
        RK_ALGORITHM_LEAKY_BUCKET_METER => &["capacity", "count_per_period", "period_micros"],
        RK_ALGORITHM_LEAKY_BUCKET_QUEUE => &["capacity", "interval_micros"],
        RK_ALGORITHM_SLIDING_WINDOW => &["limit", "window_micros", "sub_windows"],
        RK_ALGORITHM_FIXED_WINDOW | RK_ALGORITHM_SLIDING_LOG | RK_ALGORITHM_SLIDING_WINDOW_COUNTER => {
            &["limit", "window_micros"]
        }
        _ => &[],
    }
}

/// Every field of `rk_limiter_spec`, as `rk_last_error_argument()` names
/// them.
const SPEC_FIELDS: [&str; 11] = [
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
];

/// The fields of a spec that are set although its algorithm has no use
/// for them.
fn stray_fields(s: &rk_limiter_spec) -> Vec<&'static str> {
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
    ];
    set.iter().filter(|(name, set)| *set && !used.contains(name)).map(|(name, _)| *name).collect()
}

/// How a new admission-style limiter is made: from a spec, or by the
/// typed constructor of its algorithm (with the spec's fields).
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum LimiterCtor {
    /// `rk_limiter_new`, the spec passed by pointer (or NULL).
    FromSpec(Spec, MaybeNull),
    /// `rk_limiter_new_<algorithm>`.
    Typed(Spec),
}

/// A concurrency limiter's policy.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Policy {
    /// `rk_concurrency_limiter_new_fixed`.
    Fixed(Signed),
    /// `rk_concurrency_limiter_new_gradient`, from the defaults with some
    /// fields changed (or a NULL config).
    Gradient { edits: [Option<Signed>; 5], floats: [Option<Rate>; 3], null_config: MaybeNull },
    /// `rk_concurrency_limiter_new_aimd`, likewise.
    Aimd { edits: [Option<Signed>; 3], backoff: Option<Rate>, timeout: Option<Micros>, null_config: MaybeNull },
}

/// A Guava limiter's operation.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum RateOp {
    /// `rk_rate_limiter_acquire` (seconds) or `_acquire_micros`.
    Acquire { permits: Signed, micros: bool, null_out: bool },
    /// `rk_rate_limiter_try_acquire`.
    TryAcquire { permits: Signed, timeout: Micros, null_out: MaybeNull },
    /// `rk_rate_limiter_reserve`.
    Reserve { permits: Signed, null_out: MaybeNull },
    /// `rk_rate_limiter_set_rate`.
    SetRate(Rate),
    /// `rk_rate_limiter_get_rate`.
    GetRate(MaybeNull),
    /// `rk_rate_limiter_time_until_available`.
    TimeUntilAvailable { permits: Signed, null_out: MaybeNull },
    /// `rk_rate_limiter_can_acquire`.
    CanAcquire { permits: Signed, timeout: Micros, null_out: MaybeNull },
}

/// An operation on an admission-style limiter.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum LimiterOp {
    /// `rk_limiter_peek`, then `rk_limiter_check` (or only the peek).
    Check { cost: Signed, peek_only: bool, null_out: MaybeNull },
    /// `rk_limiter_algorithm`.
    Algorithm(MaybeNull),
    /// `rk_gcra_limit`.
    GcraLimit(MaybeNull),
    /// `rk_leaky_bucket_meter_level`.
    MeterLevel(MaybeNull),
    /// `rk_leaky_bucket_queue_acquire`.
    QueueAcquire { cost: Signed, null_out: MaybeNull },
    /// `rk_token_bucket_reserve`.
    Reserve { cost: Signed, null_out: MaybeNull },
    /// `rk_token_bucket_wait` or `rk_token_bucket_reserve_within`.
    Wait { cost: Signed, timeout: Micros, within: bool, null_out: MaybeNull },
    /// `rk_token_bucket_set_rate`.
    SetRate(Rate),
    /// `rk_token_bucket_set_burst`.
    SetBurst(Signed),
    /// `rk_token_bucket_rate`, `_burst` and `_tokens`.
    Read { which: u8, null_out: MaybeNull },
}

/// An operation on a reservation.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum ReservationOp {
    /// `rk_reservation_ok`, `_tokens` and `_delay_micros`.
    Read { which: u8, null_out: MaybeNull },
    /// `rk_reservation_cancel`.
    Cancel,
}

/// Where an HTTP field's decision comes from.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum DecisionSource {
    /// The latest decision a limiter gave.
    Latest,
    /// Any seven values at all.
    Any { allowed: bool, limit: u64, remaining: u64, retry: Micros, reset: Micros, wait: Micros, window: Micros },
}

/// A buffer's length relative to the text it must hold.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum BufLen {
    /// Exactly the text and its NUL.
    Exact,
    /// Room to spare.
    Larger(u8),
    /// `n` bytes short of holding the text and its NUL (at least 1).
    Short(u8),
    /// A positive length with a NULL buffer.
    NullBuffer,
}

/// One `rk_` call (or, for the handles, the call that makes or frees one).
#[derive(Debug, Clone, Arbitrary)]
pub enum Op {
    NewClock(MaybeNull),
    FreeClock(u8),
    AdvanceClock(Pick, Micros),
    ReadClock(Pick, MaybeNull),
    NewLimiter(LimiterCtor, ClockChoice, MaybeNull),
    FreeLimiter(u8),
    Limiter(Pick, LimiterOp),
    Reservation(Pick, ReservationOp),
    FreeReservation(u8),
    NewRateLimiter {
        warming: bool,
        rate: Rate,
        burst_seconds: Rate,
        warmup: Micros,
        cold: Rate,
        clock: ClockChoice,
        null_out: MaybeNull,
    },
    FreeRateLimiter(u8),
    RateLimiter(Pick, RateOp),
    NewComposite {
        specs: Vec<Spec>,
        null_specs: bool,
        clock: ClockChoice,
        null_out: MaybeNull,
    },
    FreeComposite(u8),
    Composite {
        which: Pick,
        cost: Signed,
        how: u8,
        parts_len: i8,
        null_out: MaybeNull,
        null_parts: MaybeNull,
    },
    NewConcurrency(Policy, ClockChoice, MaybeNull),
    FreeConcurrency(u8),
    TryAcquire {
        which: Pick,
        null_decision: bool,
        null_permit: MaybeNull,
    },
    Release {
        which: Pick,
        outcome: u8,
        null_out: bool,
    },
    Sample {
        which: Pick,
        rtt: Micros,
        in_flight: Signed,
        dropped: bool,
        null_out: bool,
    },
    ConcurrencyRead {
        which: Pick,
        in_flight: bool,
        null_out: MaybeNull,
    },
    NewMarker {
        two_rate: bool,
        rates: [Signed; 4],
        clock: ClockChoice,
        null_out: MaybeNull,
    },
    FreeMarker(bool, u8),
    Mark {
        two_rate: bool,
        which: Pick,
        bytes: Signed,
        pre_color: Option<u8>,
        null_out: MaybeNull,
    },
    MarkerTokens {
        two_rate: bool,
        which: Pick,
        null_first: MaybeNull,
        null_second: MaybeNull,
    },
    WriteField {
        kind: u8,
        decision: DecisionSource,
        null_decision: MaybeNull,
        name: Vec<u8>,
        null_name: MaybeNull,
        buf_len: BufLen,
        null_out_len: MaybeNull,
    },
    WriteFields {
        policy: bool,
        items: Vec<(DecisionSource, Vec<u8>, bool)>,
        null_arrays: u8,
        buf_len: BufLen,
        null_out_len: MaybeNull,
    },
    Statics {
        status: u32,
        algorithm: u32,
        color: u32,
    },
    FreeNulls,
}

/// A run: a sequence of calls, then every handle freed in the order the
/// header allows and that is most likely to go wrong (clocks and limiters
/// before what still holds them).
#[derive(Debug, Arbitrary)]
pub struct Input {
    ops: Vec<Op>,
}

/// A handle and the clock it reads.
#[derive(Debug)]
struct Held<T> {
    ptr: *mut T,
    /// The manual clock's id, or `None` for the monotonic clock.
    clock: Option<u64>,
    /// An id of its own (what permits and reservations point back to).
    id: u64,
    /// What the checks need to know about it.
    facts: Facts,
}

/// What the target remembers of a handle.
#[derive(Debug, Clone, Copy, Default)]
struct Facts {
    algorithm: u32,
    /// A composite's number of limits; a marker's two bursts.
    len: usize,
    bursts: (u64, u64),
}

#[derive(Debug)]
struct Clock {
    ptr: *mut rk_manual_clock,
    id: u64,
}

#[derive(Debug)]
struct PermitHeld {
    ptr: *mut rk_permit,
    limiter: u64,
}

/// Every live handle, and what the checks remember.
#[derive(Debug, Default)]
struct World {
    clocks: Vec<Clock>,
    limiters: Vec<Held<rk_limiter>>,
    reservations: Vec<*mut rk_reservation>,
    rate_limiters: Vec<Held<rk_rate_limiter>>,
    composites: Vec<Held<rk_composite_limiter>>,
    concurrency: Vec<Held<rk_concurrency_limiter>>,
    permits: Vec<PermitHeld>,
    srtcms: Vec<Held<rk_srtcm>>,
    trtcms: Vec<Held<rk_trtcm>>,
    next_id: u64,
    /// The latest decision any limiter gave.
    latest: Option<rk_decision>,
    /// This thread's last error as the target last saw it: a successful
    /// call must leave it alone.
    last_error: (String, Option<String>),
}

fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the library returns NULL or a NUL-terminated string that
    // stays valid until the next failing call on this thread.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn pick<T>(list: &[T], p: Pick) -> Option<&T> {
    let i = usize::from(p.0?);
    (!list.is_empty()).then(|| &list[i % list.len()])
}

fn ptr_of<T>(h: Option<&Held<T>>) -> *mut T {
    h.map_or(null_mut(), |h| h.ptr)
}

/// A pointer to `value`, or NULL.
fn out<T>(value: &mut T, null: MaybeNull) -> *mut T {
    if null.0 {
        null_mut()
    } else {
        value
    }
}

/// A decision no call would write: what an out-parameter holds before the
/// call, to see whether a failed call wrote it.
const UNWRITTEN: rk_decision = rk_decision {
    allowed: true,
    limit: 0xDEAD,
    remaining: 0xBEEF,
    retry_after_micros: -7,
    reset_after_micros: -7,
    wait_micros: -7,
    window_micros: -7,
};

impl World {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The checks every call's status gets. `required` lists the pointers
    /// the header requires and whether each was NULL; `null_first` says
    /// that the function checks them before anything else. Returns whether
    /// the call succeeded.
    fn status(&mut self, function: &str, status: rk_status, required: &[(&str, bool)], null_first: bool) -> bool {
        assert_ne!(status, rk_status::RK_PANIC, "{function} panicked: {}", c_str(rk_last_error_message()).unwrap());
        assert_ne!(status, rk_status::RK_OTHER_ERROR, "{function}: an error about no argument");
        let nulls: Vec<&str> = required.iter().filter(|(_, null)| *null).map(|(name, _)| *name).collect();
        if null_first && !nulls.is_empty() {
            assert_eq!(status, rk_status::RK_NULL_POINTER, "{function} with {nulls:?} NULL");
        }
        let message = c_str(rk_last_error_message()).expect("rk_last_error_message() is never NULL");
        let argument = c_str(rk_last_error_argument());
        if status == rk_status::RK_OK {
            assert_eq!(
                (&message, &argument),
                (&self.last_error.0, &self.last_error.1),
                "{function} succeeded and changed the last error"
            );
            return true;
        }
        assert!(message.starts_with(&format!("{function}: ")), "{function} failed with the message {message:?}");
        let argument = argument.unwrap_or_else(|| panic!("{function} failed ({status:?}) naming no argument"));
        assert!(message.contains(&argument), "{function}: the message {message:?} does not name {argument:?}");
        if status == rk_status::RK_NULL_POINTER {
            assert!(nulls.contains(&argument.as_str()), "{function}: {argument} named NULL, but {nulls:?} were");
        }
        self.last_error = (message, Some(argument));
        false
    }

    /// The argument the last failure named.
    fn argument(&self) -> &str {
        self.last_error.1.as_deref().unwrap_or("")
    }

    fn clock_ptr(&self, id: Option<u64>) -> Option<*mut rk_manual_clock> {
        let id = id?;
        self.clocks.iter().find(|c| c.id == id).map(|c| c.ptr)
    }

    /// The time of a live manual clock.
    fn now(&self, clock: Option<u64>) -> Option<i64> {
        let ptr = self.clock_ptr(clock)?;
        let mut now = 0;
        // SAFETY: a live clock and a local.
        assert_eq!(unsafe { rk_manual_clock_now_micros(ptr, &mut now) }, rk_status::RK_OK);
        Some(now)
    }

    /// The clock a new handle gets: its pointer and id.
    fn choose_clock(&mut self, choice: ClockChoice) -> (*const rk_manual_clock, Option<u64>) {
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

    fn new_clock(&mut self, null_out: MaybeNull) {
        if self.clocks.len() >= MAX_LIVE {
            return;
        }
        let mut ptr = null_mut();
        // SAFETY: a local or NULL.
        let s = unsafe { rk_manual_clock_new(out(&mut ptr, null_out)) };
        if self.status("rk_manual_clock_new", s, &[("out_clock", null_out.0)], true) {
            assert!(!ptr.is_null());
            let id = self.id();
            self.clocks.push(Clock { ptr, id });
            assert_eq!(self.now(Some(id)), Some(0), "a new clock reads 0");
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::NewClock(null_out) => self.new_clock(null_out),
            Op::FreeClock(i) => {
                if !self.clocks.is_empty() {
                    let c = self.clocks.remove(usize::from(i) % self.clocks.len());
                    // SAFETY: live; limiters using it hold their own references.
                    unsafe { rk_manual_clock_free(c.ptr) };
                }
            }
            Op::AdvanceClock(p, micros) => {
                let c = pick(&self.clocks, p).map(|c| (c.ptr, c.id));
                let before = c.and_then(|(_, id)| self.now(Some(id)));
                // SAFETY: a live clock or NULL.
                let s = unsafe { rk_manual_clock_advance_micros(c.map_or(null(), |c| c.0), micros.0) };
                if self.status("rk_manual_clock_advance_micros", s, &[("clock", c.is_none())], true) {
                    let (before, after) = (before.unwrap(), self.now(c.map(|c| c.1)).unwrap());
                    assert!(micros.0 >= 0, "a clock moved back by {}", micros.0);
                    assert_eq!(after, before.saturating_add(micros.0), "advance by {}", micros.0);
                } else if c.is_some() {
                    // A negative move is refused, moving nothing.
                    assert_eq!((s, micros.0 < 0, self.argument()), (rk_status::RK_INVALID_ARGUMENT, true, "micros"));
                    assert_eq!(self.now(c.map(|c| c.1)), before);
                }
            }
            Op::ReadClock(p, null_out) => {
                let c = pick(&self.clocks, p).map(|c| c.ptr);
                let mut now = -7;
                // SAFETY: a live clock or NULL; a local or NULL.
                let s = unsafe { rk_manual_clock_now_micros(c.unwrap_or(null_mut()), out(&mut now, null_out)) };
                if self.status(
                    "rk_manual_clock_now_micros",
                    s,
                    &[("clock", c.is_none()), ("out_micros", null_out.0)],
                    true,
                ) {
                    assert!(now >= 0);
                } else {
                    assert_eq!(now, -7, "a failed call wrote its out-parameter");
                }
            }
            Op::NewLimiter(ctor, clock, null_out) => self.new_limiter(ctor, clock, null_out),
            Op::FreeLimiter(i) => {
                if !self.limiters.is_empty() {
                    let l = self.limiters.remove(usize::from(i) % self.limiters.len());
                    // SAFETY: live; its reservations hold references of their own.
                    unsafe { rk_limiter_free(l.ptr) };
                }
            }
            Op::Limiter(p, op) => self.limiter_op(p, op),
            Op::Reservation(p, op) => self.reservation_op(p, op),
            Op::FreeReservation(i) => {
                if !self.reservations.is_empty() {
                    let r = self.reservations.remove(usize::from(i) % self.reservations.len());
                    // SAFETY: live.
                    unsafe { rk_reservation_free(r) };
                }
            }
            Op::NewRateLimiter { warming, rate, burst_seconds, warmup, cold, clock, null_out } => {
                self.new_rate_limiter(warming, rate.0, burst_seconds.0, warmup.0, cold.0, clock, null_out)
            }
            Op::FreeRateLimiter(i) => {
                if !self.rate_limiters.is_empty() {
                    let l = self.rate_limiters.remove(usize::from(i) % self.rate_limiters.len());
                    // SAFETY: live.
                    unsafe { rk_rate_limiter_free(l.ptr) };
                }
            }
            Op::RateLimiter(p, op) => self.rate_op(p, op),
            Op::NewComposite { specs, null_specs, clock, null_out } => {
                self.new_composite(&specs, null_specs, clock, null_out)
            }
            Op::FreeComposite(i) => {
                if !self.composites.is_empty() {
                    let l = self.composites.remove(usize::from(i) % self.composites.len());
                    // SAFETY: live.
                    unsafe { rk_composite_limiter_free(l.ptr) };
                }
            }
            Op::Composite { which, cost, how, parts_len, null_out, null_parts } => {
                self.composite_op(which, cost.0, how, parts_len, null_out, null_parts)
            }
            Op::NewConcurrency(policy, clock, null_out) => self.new_concurrency(policy, clock, null_out),
            Op::FreeConcurrency(i) => {
                if !self.concurrency.is_empty() {
                    let l = self.concurrency.remove(usize::from(i) % self.concurrency.len());
                    // SAFETY: live; its permits hold references of their own.
                    unsafe { rk_concurrency_limiter_free(l.ptr) };
                }
            }
            Op::TryAcquire { which, null_decision, null_permit } => self.try_acquire(which, null_decision, null_permit),
            Op::Release { which, outcome, null_out } => self.release(which, outcome, null_out),
            Op::Sample { which, rtt, in_flight, dropped, null_out } => {
                let h = pick(&self.concurrency, which);
                let ptr = ptr_of(h);
                let mut limit = 0xDEAD;
                let out_limit = if null_out { null_mut() } else { &mut limit };
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_concurrency_limiter_sample(ptr, rtt.0, in_flight.0, dropped, out_limit) };
                if self.status("rk_concurrency_limiter_sample", s, &[("limiter", ptr.is_null())], true) {
                    assert!(rtt.0 >= 0 && in_flight.0 >= 0, "a negative rtt or in_flight accepted");
                    assert!(null_out || limit >= 1, "a limit of {limit}");
                } else {
                    assert_eq!(limit, 0xDEAD, "a failed call wrote its out-parameter");
                    if s == rk_status::RK_INVALID_ARGUMENT {
                        let expected = if rtt.0 < 0 { "rtt_micros" } else { "in_flight" };
                        assert_eq!(self.argument(), expected);
                    }
                }
            }
            Op::ConcurrencyRead { which, in_flight, null_out } => {
                let h = pick(&self.concurrency, which);
                let (ptr, id) = (ptr_of(h), h.map(|h| h.id));
                let mut value = 0xDEAD;
                let (function, s) = if in_flight {
                    // SAFETY: a live limiter or NULL; a local or NULL.
                    ("rk_concurrency_limiter_in_flight", unsafe {
                        rk_concurrency_limiter_in_flight(ptr, out(&mut value, null_out))
                    })
                } else {
                    // SAFETY: as above.
                    ("rk_concurrency_limiter_limit", unsafe {
                        rk_concurrency_limiter_limit(ptr, out(&mut value, null_out))
                    })
                };
                let arg = if in_flight { "out_in_flight" } else { "out_limit" };
                if self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true) {
                    if in_flight {
                        let held = self.permits.iter().filter(|p| Some(p.limiter) == id).count() as u64;
                        assert_eq!(value, held, "in flight: {value}, permits out: {held}");
                    } else {
                        assert!(value >= 1, "a limit of {value}");
                    }
                } else {
                    assert_eq!(value, 0xDEAD, "a failed call wrote its out-parameter");
                }
            }
            Op::NewMarker { two_rate, rates, clock, null_out } => self.new_marker(two_rate, rates, clock, null_out),
            Op::FreeMarker(two_rate, i) => {
                if two_rate && !self.trtcms.is_empty() {
                    let m = self.trtcms.remove(usize::from(i) % self.trtcms.len());
                    // SAFETY: live.
                    unsafe { rk_trtcm_free(m.ptr) };
                } else if !two_rate && !self.srtcms.is_empty() {
                    let m = self.srtcms.remove(usize::from(i) % self.srtcms.len());
                    // SAFETY: live.
                    unsafe { rk_srtcm_free(m.ptr) };
                }
            }
            Op::Mark { two_rate, which, bytes, pre_color, null_out } => {
                self.mark(two_rate, which, bytes.0, pre_color, null_out)
            }
            Op::MarkerTokens { two_rate, which, null_first, null_second } => {
                self.marker_tokens(two_rate, which, null_first, null_second)
            }
            Op::WriteField { kind, decision, null_decision, name, null_name, buf_len, null_out_len } => {
                self.write_field(kind, decision, null_decision, &name, null_name, buf_len, null_out_len)
            }
            Op::WriteFields { policy, items, null_arrays, buf_len, null_out_len } => {
                self.write_fields(policy, &items, null_arrays, buf_len, null_out_len)
            }
            Op::Statics { status, algorithm, color } => {
                let m = c_str(rk_status_message(status)).expect("rk_status_message is never NULL");
                assert_eq!(
                    m == "unknown status",
                    status > ratekeeper_c::status::rk_status::RK_UNSUPPORTED as u32,
                    "rk_status_message({status}) = {m:?}"
                );
                let name = c_str(rk_algorithm_name(algorithm));
                assert_eq!(name.is_some(), (1..=8).contains(&algorithm), "rk_algorithm_name({algorithm})");
                let name = c_str(rk_color_name(color));
                assert_eq!(name.is_some(), color <= 2, "rk_color_name({color})");
                assert!(!c_str(rk_version()).unwrap().is_empty());
            }
            Op::FreeNulls => {
                // SAFETY: freeing NULL does nothing, as the header says.
                unsafe {
                    rk_manual_clock_free(null_mut());
                    rk_limiter_free(null_mut());
                    rk_reservation_free(null_mut());
                    rk_rate_limiter_free(null_mut());
                    rk_composite_limiter_free(null_mut());
                    rk_concurrency_limiter_free(null_mut());
                    rk_srtcm_free(null_mut());
                    rk_trtcm_free(null_mut());
                }
            }
        }
    }

    fn new_limiter(&mut self, ctor: LimiterCtor, clock: ClockChoice, null_out: MaybeNull) {
        if self.limiters.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        let out_ptr = out(&mut ptr, null_out);
        let (function, spec, null_spec, s) = match ctor {
            LimiterCtor::FromSpec(Spec(spec), null_spec) => {
                let spec_ptr: *const rk_limiter_spec = if null_spec.0 { null() } else { &spec };
                // SAFETY: a local or NULL; a live clock or NULL.
                ("rk_limiter_new", spec, null_spec.0, unsafe { rk_limiter_new(spec_ptr, clock_ptr, out_ptr) })
            }
            LimiterCtor::Typed(Spec(spec)) => {
                let spec = rk_limiter_spec { algorithm: spec.algorithm.clamp(1, 8), ..spec };
                // The typed constructors take only their own fields.
                let only = |mut s: rk_limiter_spec| {
                    let stray = stray_fields(&s);
                    for f in stray {
                        match f {
                            "rate" => s.rate = 0.0,
                            "burst" => s.burst = 0,
                            "max_burst" => s.max_burst = 0,
                            "count_per_period" => s.count_per_period = 0,
                            "period_micros" => s.period_micros = 0,
                            "capacity" => s.capacity = 0,
                            "interval_micros" => s.interval_micros = 0,
                            "limit" => s.limit = 0,
                            "window_micros" => s.window_micros = 0,
                            _ => s.sub_windows = 0,
                        }
                    }
                    s
                };
                let s = only(spec);
                // SAFETY: a live clock or NULL; a local or NULL.
                let (function, status) = unsafe {
                    match s.algorithm {
                        RK_ALGORITHM_TOKEN_BUCKET => (
                            "rk_limiter_new_token_bucket",
                            rk_limiter_new_token_bucket(s.rate, s.burst, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_GCRA => (
                            "rk_limiter_new_gcra",
                            rk_limiter_new_gcra(s.max_burst, s.count_per_period, s.period_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_LEAKY_BUCKET_METER => (
                            "rk_limiter_new_leaky_bucket_meter",
                            rk_limiter_new_leaky_bucket_meter(
                                s.capacity,
                                s.count_per_period,
                                s.period_micros,
                                clock_ptr,
                                out_ptr,
                            ),
                        ),
                        RK_ALGORITHM_LEAKY_BUCKET_QUEUE => (
                            "rk_limiter_new_leaky_bucket_queue",
                            rk_limiter_new_leaky_bucket_queue(s.capacity, s.interval_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_FIXED_WINDOW => (
                            "rk_limiter_new_fixed_window",
                            rk_limiter_new_fixed_window(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_SLIDING_WINDOW => (
                            "rk_limiter_new_sliding_window",
                            rk_limiter_new_sliding_window(s.limit, s.window_micros, s.sub_windows, clock_ptr, out_ptr),
                        ),
                        RK_ALGORITHM_SLIDING_LOG => (
                            "rk_limiter_new_sliding_log",
                            rk_limiter_new_sliding_log(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                        _ => (
                            "rk_limiter_new_sliding_window_counter",
                            rk_limiter_new_sliding_window_counter(s.limit, s.window_micros, clock_ptr, out_ptr),
                        ),
                    }
                };
                (function, s, false, status)
            }
        };
        let required = [("out_limiter", null_out.0), ("spec", null_spec)];
        if self.status(function, s, &required, true) {
            assert!((1..=8).contains(&spec.algorithm), "{function} accepted algorithm {}", spec.algorithm);
            assert!(stray_fields(&spec).is_empty(), "{function} ignored fields {:?}", stray_fields(&spec));
            let id = self.id();
            let held =
                Held { ptr, clock: clock_id, id, facts: Facts { algorithm: spec.algorithm, ..Facts::default() } };
            let mut algorithm = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_limiter_algorithm(ptr, &mut algorithm) }, rk_status::RK_OK);
            assert_eq!(algorithm, spec.algorithm, "{function} made a limiter of another algorithm");
            // A new limiter is whole (the token bucket counts its tokens in
            // a double, as Go does: a burst beyond 2^53 is whole to the
            // nearest double).
            if clock_id.is_some() {
                let d = peek(ptr, 0);
                let whole = if spec.algorithm == RK_ALGORITHM_TOKEN_BUCKET {
                    d.remaining as f64 == d.limit as f64
                } else {
                    d.remaining == d.limit
                };
                assert!(whole, "{function}: a new limiter that is not whole: {d:?}");
            }
            self.limiters.push(held);
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT {
                assert!(SPEC_FIELDS.contains(&self.argument()), "{function} named {}", self.argument());
            }
            if !(1..=8).contains(&spec.algorithm) && !null_out.0 && !null_spec {
                assert_eq!(s, rk_status::RK_INVALID_ARGUMENT);
                assert_eq!(self.argument(), "algorithm");
            }
        }
        if !null_spec && !null_out.0 && !stray_fields(&spec).is_empty() {
            assert_eq!(s, rk_status::RK_INVALID_ARGUMENT, "{function}: fields {:?} set", stray_fields(&spec));
        }
    }

    /// Checks that a failed call on a limiter changed nothing: on a manual
    /// clock, which stands still through it, every look gives the same.
    fn unchanged(&self, clock: Option<u64>, before: Option<Vec<String>>, after: impl Fn() -> Vec<String>) {
        if let (Some(before), Some(_)) = (before, self.clock_ptr(clock)) {
            assert_eq!(before, after(), "a failed call changed the handle");
        }
    }

    fn limiter_op(&mut self, p: Pick, op: LimiterOp) {
        let h = pick(&self.limiters, p);
        let (ptr, clock, algorithm) = (ptr_of(h), h.and_then(|h| h.clock), h.map_or(0, |h| h.facts.algorithm));
        let manual = h.is_some() && clock.is_some();
        let monotonic = h.is_some() && clock.is_none();
        let looks = || limiter_looks(ptr, algorithm);
        let before = (!ptr.is_null() && self.clock_ptr(clock).is_some()).then(looks);
        let is = |a: u32| ptr.is_null() || algorithm == a;
        let ok = match op {
            LimiterOp::Check { cost, peek_only, null_out } => {
                let mut predicted = UNWRITTEN;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_limiter_peek(ptr, cost.0, out(&mut predicted, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
                let peeked = self.status("rk_limiter_peek", s, &required, true);
                self.cost_status(s, cost.0, peeked);
                if peeked {
                    self.decision(&predicted, cost.0, algorithm);
                } else {
                    assert_eq!(predicted, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                if peek_only {
                    peeked
                } else {
                    let mut d = UNWRITTEN;
                    // SAFETY: as above.
                    let s = unsafe { rk_limiter_check(ptr, cost.0, out(&mut d, null_out)) };
                    let checked = self.status("rk_limiter_check", s, &required, true);
                    assert_eq!(peeked, checked, "peek and check disagree on the arguments");
                    if checked {
                        self.decision(&d, cost.0, algorithm);
                        if manual {
                            assert_eq!(d, predicted, "peek did not predict check (cost {})", cost.0);
                        }
                    } else {
                        assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                    }
                    checked
                }
            }
            LimiterOp::Algorithm(null_out) => {
                let mut a = 0xDEAD;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_limiter_algorithm(ptr, out(&mut a, null_out)) };
                let ok = self.status(
                    "rk_limiter_algorithm",
                    s,
                    &[("limiter", ptr.is_null()), ("out_algorithm", null_out.0)],
                    true,
                );
                assert_eq!(a, if ok { algorithm } else { 0xDEAD });
                ok
            }
            LimiterOp::GcraLimit(null_out) | LimiterOp::MeterLevel(null_out) => {
                let gcra = matches!(op, LimiterOp::GcraLimit(_));
                let mut v = 0xDEAD;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, arg, s) = unsafe {
                    if gcra {
                        ("rk_gcra_limit", "out_limit", rk_gcra_limit(ptr, out(&mut v, null_out)))
                    } else {
                        (
                            "rk_leaky_bucket_meter_level",
                            "out_level",
                            rk_leaky_bucket_meter_level(ptr, out(&mut v, null_out)),
                        )
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true);
                self.algorithm_status(
                    s,
                    is(if gcra { RK_ALGORITHM_GCRA } else { RK_ALGORITHM_LEAKY_BUCKET_METER }),
                    null_out.0,
                );
                if ok && manual {
                    let limit = peek(ptr, 0).limit;
                    if gcra {
                        assert_eq!(v, limit, "rk_gcra_limit and the decisions' limit differ");
                    } else {
                        assert!(v <= limit, "a meter's level {v} above its capacity {limit}");
                    }
                }
                if !ok {
                    assert_eq!(v, 0xDEAD, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::QueueAcquire { cost, null_out } => {
                if monotonic {
                    return; // It would sleep.
                }
                let now = self.now(clock);
                let mut d = UNWRITTEN;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_leaky_bucket_queue_acquire(ptr, cost.0, out(&mut d, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
                let ok = self.status("rk_leaky_bucket_queue_acquire", s, &required, true);
                self.algorithm_status(s, is(RK_ALGORITHM_LEAKY_BUCKET_QUEUE), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    self.decision(&d, cost.0, algorithm);
                    self.waited(clock, now, if d.allowed { d.wait_micros } else { 0 }, "rk_leaky_bucket_queue_acquire");
                } else {
                    assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::Reserve { cost, null_out } => {
                let mut r = null_mut();
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_token_bucket_reserve(ptr, cost.0, out(&mut r, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_reservation", null_out.0)];
                let ok = self.status("rk_token_bucket_reserve", s, &required, true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    assert!(!r.is_null());
                    let (granted, tokens, delay) = reservation_facts(r);
                    assert!(tokens <= cost.0 as u64, "a reservation of {} holds {tokens}", cost.0);
                    if !granted {
                        assert_eq!((tokens, delay), (0, RK_NEVER), "a refused reservation");
                    } else {
                        assert!(delay >= 0);
                    }
                    if self.reservations.len() >= MAX_LIVE {
                        // SAFETY: just made.
                        unsafe { rk_reservation_free(r) };
                    } else {
                        self.reservations.push(r);
                    }
                } else {
                    assert!(r.is_null(), "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::Wait { cost, timeout, within, null_out } => {
                // On the monotonic clock only what does not sleep.
                let timeout = if monotonic && !within { timeout.0.min(0) } else { timeout.0 };
                let now = self.now(clock);
                let mut d = UNWRITTEN;
                let function = if within { "rk_token_bucket_reserve_within" } else { "rk_token_bucket_wait" };
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe {
                    if within {
                        rk_token_bucket_reserve_within(ptr, cost.0, timeout, out(&mut d, null_out))
                    } else {
                        rk_token_bucket_wait(ptr, cost.0, timeout, out(&mut d, null_out))
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), ("out_decision", null_out.0)], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if s != rk_status::RK_WRONG_ALGORITHM {
                    self.cost_status(s, cost.0, ok);
                }
                if ok {
                    self.decision(&d, cost.0, algorithm);
                    if d.allowed {
                        assert!(
                            d.wait_micros <= timeout.max(0),
                            "{function} waits {} beyond its timeout {timeout}",
                            d.wait_micros
                        );
                    }
                    let slept = if within || !d.allowed { 0 } else { d.wait_micros };
                    self.waited(clock, now, slept, function);
                } else {
                    assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
                }
                ok
            }
            LimiterOp::SetRate(rate) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_token_bucket_set_rate(ptr, rate.0) };
                let ok = self.status("rk_token_bucket_set_rate", s, &[("limiter", ptr.is_null())], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), false);
                if s != rk_status::RK_WRONG_ALGORITHM && !ptr.is_null() {
                    assert_eq!(ok, rate.0 >= 0.0, "rk_token_bucket_set_rate({})", rate.0);
                    if ok {
                        // f64::MAX and +Infinity are both Go's rate.Inf.
                        let read = token_bucket_rate(ptr);
                        let inf = |r: f64| r == f64::MAX || r == f64::INFINITY;
                        assert!(read == rate.0 || inf(read) && inf(rate.0), "set the rate {}, read {read}", rate.0);
                    }
                }
                ok
            }
            LimiterOp::SetBurst(burst) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_token_bucket_set_burst(ptr, burst.0) };
                let ok = self.status("rk_token_bucket_set_burst", s, &[("limiter", ptr.is_null())], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), false);
                if s != rk_status::RK_WRONG_ALGORITHM && !ptr.is_null() {
                    assert_eq!(ok, burst.0 >= 0, "rk_token_bucket_set_burst({})", burst.0);
                    if ok {
                        let mut b = 0;
                        // SAFETY: live; a local.
                        assert_eq!(unsafe { rk_token_bucket_burst(ptr, &mut b) }, rk_status::RK_OK);
                        assert_eq!(b, burst.0 as u64, "the burst set is not the burst read");
                    }
                }
                ok
            }
            LimiterOp::Read { which, null_out } => {
                let mut f = f64::from_bits(0xDEAD);
                let mut n = 0xDEAD_u64;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, arg, s) = unsafe {
                    match which % 3 {
                        0 => ("rk_token_bucket_rate", "out_rate", rk_token_bucket_rate(ptr, out(&mut f, null_out))),
                        1 => ("rk_token_bucket_burst", "out_burst", rk_token_bucket_burst(ptr, out(&mut n, null_out))),
                        _ => {
                            ("rk_token_bucket_tokens", "out_tokens", rk_token_bucket_tokens(ptr, out(&mut f, null_out)))
                        }
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null()), (arg, null_out.0)], true);
                self.algorithm_status(s, is(RK_ALGORITHM_TOKEN_BUCKET), null_out.0);
                if ok && which % 3 != 1 {
                    assert!(!f.is_nan(), "{function} is NaN");
                }
                if ok && which % 3 == 0 {
                    assert!(f >= 0.0, "a rate of {f}");
                }
                if !ok {
                    assert_eq!((f.to_bits(), n), (0xDEAD, 0xDEAD), "a failed call wrote its out-parameter");
                }
                ok
            }
        };
        if !ok {
            self.unchanged(clock, before, looks);
        }
    }

    /// A token bucket operation's status on another algorithm's limiter.
    fn algorithm_status(&self, s: rk_status, right_algorithm: bool, null_out: bool) {
        if !right_algorithm && !null_out {
            assert_eq!(s, rk_status::RK_WRONG_ALGORITHM, "an algorithm's own function on another's limiter");
            assert_eq!(self.argument(), "limiter");
        }
        if right_algorithm {
            assert_ne!(s, rk_status::RK_WRONG_ALGORITHM);
        }
    }

    /// A cost's status: a negative one is invalid, any other accepted.
    fn cost_status(&self, s: rk_status, cost: i64, ok: bool) {
        if s == rk_status::RK_NULL_POINTER {
            return;
        }
        assert_eq!(ok, cost >= 0, "cost {cost}: {s:?}");
        if !ok {
            assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "cost"));
        }
    }

    /// A decision's fields (the token bucket's cost of 0 may be refused,
    /// as Go's `AllowN(t, 0)` in debt).
    fn decision(&mut self, d: &rk_decision, cost: i64, algorithm: u32) {
        let promises = Promises { zero_may_be_refused: algorithm == RK_ALGORITHM_TOKEN_BUCKET, ..Promises::default() };
        check_fields(&Decision::from(d), cost as u64, promises);
        self.latest = Some(*d);
    }

    /// A blocking call on a manual clock moved it by exactly what it says
    /// it waited.
    fn waited(&self, clock: Option<u64>, before: Option<i64>, wait: i64, function: &str) {
        if let (Some(before), Some(after)) = (before, self.now(clock)) {
            if after < i64::MAX {
                assert_eq!(
                    after - before,
                    wait,
                    "{function} moved the manual clock by {} and says {wait}",
                    after - before
                );
            }
        }
    }

    fn reservation_op(&mut self, p: Pick, op: ReservationOp) {
        let r = pick(&self.reservations, p).copied().unwrap_or(null_mut());
        match op {
            ReservationOp::Read { which, null_out } => {
                let mut b = false;
                let mut n = 0xDEAD_u64;
                let mut m = -7_i64;
                // SAFETY: a live reservation or NULL; locals or NULL.
                let (function, arg, s) = unsafe {
                    match which % 3 {
                        0 => ("rk_reservation_ok", "out_ok", rk_reservation_ok(r, out(&mut b, null_out))),
                        1 => ("rk_reservation_tokens", "out_tokens", rk_reservation_tokens(r, out(&mut n, null_out))),
                        _ => (
                            "rk_reservation_delay_micros",
                            "out_micros",
                            rk_reservation_delay_micros(r, out(&mut m, null_out)),
                        ),
                    }
                };
                if self.status(function, s, &[("reservation", r.is_null()), (arg, null_out.0)], true) {
                    assert!(m == -7 || m >= 0, "a negative delay");
                } else {
                    assert_eq!((b, n, m), (false, 0xDEAD, -7), "a failed call wrote its out-parameter");
                }
            }
            ReservationOp::Cancel => {
                // SAFETY: a live reservation or NULL.
                let s = unsafe { rk_reservation_cancel(r) };
                if self.status("rk_reservation_cancel", s, &[("reservation", r.is_null())], true) {
                    // The tokens went back, or the time to act had come.
                    let (_, tokens, delay) = reservation_facts(r);
                    assert!(tokens == 0 || delay == 0, "cancelled, yet {tokens} held for {delay} µs more");
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_rate_limiter(
        &mut self,
        warming: bool,
        rate: f64,
        burst_seconds: f64,
        warmup: i64,
        cold: f64,
        clock: ClockChoice,
        null_out: MaybeNull,
    ) {
        if self.rate_limiters.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        // SAFETY: a live clock or NULL; a local or NULL.
        let (function, s, valid, args): (_, _, _, &[&str]) = unsafe {
            if warming {
                let valid = rate > 0.0 && warmup >= 0 && cold >= 1.0 && cold.is_finite();
                (
                    "rk_rate_limiter_new_warming_up",
                    rk_rate_limiter_new_warming_up(rate, warmup, cold, clock_ptr, out(&mut ptr, null_out)),
                    valid,
                    &["permits_per_second", "warmup_micros", "cold_factor"],
                )
            } else {
                // Every duration in seconds must fit an i64 of microseconds
                // (below 2^63 µs), the burst's too.
                let valid = rate > 0.0 && burst_seconds >= 0.0 && burst_seconds * 1e6 < 9_223_372_036_854_775_808.0;
                (
                    "rk_rate_limiter_new_bursty",
                    rk_rate_limiter_new_bursty(rate, burst_seconds, clock_ptr, out(&mut ptr, null_out)),
                    valid,
                    &["permits_per_second", "max_burst_seconds"],
                )
            }
        };
        if self.status(function, s, &[("out_limiter", null_out.0)], true) {
            assert!(valid, "{function} accepted invalid arguments");
            let id = self.id();
            self.rate_limiters.push(Held { ptr, clock: clock_id, id, facts: Facts::default() });
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if !null_out.0 {
                assert!(!valid, "{function} refused valid arguments: {}", self.last_error.0);
                assert!(args.contains(&self.argument()), "{function} named {}", self.argument());
            }
        }
    }

    fn rate_op(&mut self, p: Pick, op: RateOp) {
        let h = pick(&self.rate_limiters, p);
        let (ptr, clock) = (ptr_of(h), h.and_then(|h| h.clock));
        let monotonic = h.is_some() && clock.is_none();
        let looks = || rate_limiter_looks(ptr);
        let before = (!ptr.is_null() && self.clock_ptr(clock).is_some()).then(looks);
        let valid_permits = |n: i64| (1..=i64::from(i32::MAX)).contains(&n);
        let now = self.now(clock);
        let ok = match op {
            RateOp::Acquire { permits, micros, null_out } => {
                if monotonic {
                    return; // It would sleep.
                }
                let (mut secs, mut us) = (-7.0, -7);
                // SAFETY: a live limiter or NULL; locals or NULL.
                let (function, s) = unsafe {
                    if micros {
                        let o = if null_out { null_mut() } else { &mut us };
                        ("rk_rate_limiter_acquire_micros", rk_rate_limiter_acquire_micros(ptr, permits.0, o))
                    } else {
                        let o = if null_out { null_mut() } else { &mut secs };
                        ("rk_rate_limiter_acquire", rk_rate_limiter_acquire(ptr, permits.0, o))
                    }
                };
                let ok = self.status(function, s, &[("limiter", ptr.is_null())], true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok && !null_out {
                    if let (Some(before), Some(after)) = (now, self.now(clock)) {
                        if after < i64::MAX {
                            let moved = after - before;
                            if micros {
                                assert_eq!(us, moved, "{function} waited {moved} µs and says {us}");
                            } else {
                                assert_eq!(secs, moved as f64 / 1e6, "{function} waited {moved} µs and says {secs} s");
                            }
                        }
                    }
                }
                if !ok {
                    assert_eq!((secs, us), (-7.0, -7), "a failed call wrote its out-parameter");
                }
                ok
            }
            RateOp::TryAcquire { permits, timeout, null_out } => {
                let timeout = if monotonic { timeout.0.min(0) } else { timeout.0 };
                let mut got = false;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_try_acquire(ptr, permits.0, timeout, out(&mut got, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_acquired", null_out.0)];
                let ok = self.status("rk_rate_limiter_try_acquire", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok {
                    if let (Some(before), Some(after)) = (now, self.now(clock)) {
                        let moved = after - before;
                        if got {
                            assert!(
                                moved <= timeout.max(0),
                                "try_acquire waited {moved} µs beyond its timeout {timeout}"
                            );
                        } else {
                            assert_eq!(moved, 0, "a failed try_acquire waited");
                        }
                    }
                }
                ok
            }
            RateOp::Reserve { permits, null_out } => {
                let mut w = -7;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_reserve(ptr, permits.0, out(&mut w, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_wait_micros", null_out.0)];
                let ok = self.status("rk_rate_limiter_reserve", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                assert!(if ok { w >= 0 } else { w == -7 }, "reserve: {w}");
                ok
            }
            RateOp::SetRate(rate) => {
                // SAFETY: a live limiter or NULL.
                let s = unsafe { rk_rate_limiter_set_rate(ptr, rate.0) };
                let ok = self.status("rk_rate_limiter_set_rate", s, &[("limiter", ptr.is_null())], true);
                if !ptr.is_null() {
                    assert_eq!(ok, rate.0 > 0.0, "set_rate({})", rate.0);
                    if !ok {
                        assert_eq!(self.argument(), "permits_per_second");
                    }
                }
                ok
            }
            RateOp::GetRate(null_out) => {
                let mut r = -7.0;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_get_rate(ptr, out(&mut r, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_permits_per_second", null_out.0)];
                let ok = self.status("rk_rate_limiter_get_rate", s, &required, true);
                // Guava's 1e6 / stableIntervalMicros: 0 for a rate so small
                // that the interval is infinite.
                assert!(if ok { r >= 0.0 } else { r == -7.0 }, "get_rate: {r}");
                ok
            }
            RateOp::TimeUntilAvailable { permits, null_out } => {
                let mut w = -7;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_time_until_available(ptr, permits.0, out(&mut w, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_micros", null_out.0)];
                let ok = self.status("rk_rate_limiter_time_until_available", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                assert!(if ok { w >= 0 } else { w == -7 }, "time_until_available: {w}");
                ok
            }
            RateOp::CanAcquire { permits, timeout, null_out } => {
                let mut can = false;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let s = unsafe { rk_rate_limiter_can_acquire(ptr, permits.0, timeout.0, out(&mut can, null_out)) };
                let required = [("limiter", ptr.is_null()), ("out_can_acquire", null_out.0)];
                let ok = self.status("rk_rate_limiter_can_acquire", s, &required, true);
                self.permits_status(s, permits.0, valid_permits(permits.0));
                if ok && self.clock_ptr(clock).is_some() {
                    // Guava's canAcquire: the wait of a request now against
                    // the timeout (a negative one is 0).
                    let mut wait = 0;
                    // SAFETY: live; a local.
                    let s = unsafe { rk_rate_limiter_time_until_available(ptr, permits.0, &mut wait) };
                    assert_eq!(s, rk_status::RK_OK);
                    // A ticket that Guava's wrapping sum left far in the
                    // past waits 0, yet canAcquire's wrapping subtraction
                    // refuses it (bit for bit Guava): only a wait that is
                    // due ahead says what canAcquire must answer.
                    let within = wait <= timeout.0.max(0);
                    assert!(!can || within, "can_acquire says yes, the wait is {wait} µs, the timeout {}", timeout.0);
                    assert!(can || !within || wait == 0, "can_acquire says no, the wait is {wait} µs");
                }
                ok
            }
        };
        if !ok {
            self.unchanged(clock, before, looks);
        }
    }

    fn permits_status(&self, s: rk_status, permits: i64, valid: bool) {
        if s == rk_status::RK_NULL_POINTER {
            return;
        }
        assert_eq!(s == rk_status::RK_OK, valid, "permits {permits}: {s:?}");
        if !valid {
            assert_eq!(self.argument(), "permits");
        }
    }

    fn new_composite(&mut self, specs: &[Spec], null_specs: bool, clock: ClockChoice, null_out: MaybeNull) {
        if self.composites.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let specs: Vec<rk_limiter_spec> = specs.iter().take(4).map(|s| s.0).collect();
        // A NULL array with a length: it must not be read.
        let (limits, len) = if null_specs { (null(), specs.len() + 1) } else { (specs.as_ptr(), specs.len()) };
        let mut ptr = null_mut();
        // SAFETY: `len` specs or NULL; a live clock or NULL; a local or NULL.
        let s = unsafe { rk_composite_limiter_new(limits, len, clock_ptr, out(&mut ptr, null_out)) };
        if self.status("rk_composite_limiter_new", s, &[("out_limiter", null_out.0), ("limits", null_specs)], false) {
            assert!(!null_specs && !specs.is_empty());
            let mut n = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_composite_limiter_len(ptr, &mut n) }, rk_status::RK_OK);
            assert_eq!(n, specs.len());
            let id = self.id();
            self.composites.push(Held { ptr, clock: clock_id, id, facts: Facts { len: n, ..Facts::default() } });
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            if null_out.0 {
                assert_eq!(s, rk_status::RK_NULL_POINTER);
            } else if specs.is_empty() && !null_specs {
                assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "limits_len"));
            } else if null_specs {
                assert_eq!((s, self.argument()), (rk_status::RK_NULL_POINTER, "limits"));
            } else {
                assert!(self.last_error.0.starts_with("rk_composite_limiter_new: limits["), "{}", self.last_error.0);
            }
        }
    }

    fn composite_op(&mut self, p: Pick, cost: i64, how: u8, parts_len: i8, null_out: MaybeNull, null_parts: MaybeNull) {
        let h = pick(&self.composites, p);
        let (ptr, clock, len) = (ptr_of(h), h.and_then(|h| h.clock), h.map_or(0, |h| h.facts.len));
        let manual = h.is_some() && self.clock_ptr(clock).is_some();
        let looks = || composite_looks(ptr);
        let before = (!ptr.is_null() && manual).then(looks);
        let predicted = (!ptr.is_null() && manual && cost >= 0).then(|| composite_peek(ptr, cost));
        let mut d = UNWRITTEN;
        let required = [("limiter", ptr.is_null()), ("out_decision", null_out.0)];
        let ok = match how % 3 {
            0 | 1 => {
                let peek_only = how % 3 == 1;
                // SAFETY: a live limiter or NULL; a local or NULL.
                let (function, s) = unsafe {
                    if peek_only {
                        ("rk_composite_limiter_peek", rk_composite_limiter_peek(ptr, cost, out(&mut d, null_out)))
                    } else {
                        ("rk_composite_limiter_check", rk_composite_limiter_check(ptr, cost, out(&mut d, null_out)))
                    }
                };
                let ok = self.status(function, s, &required, true);
                self.cost_status(s, cost, ok);
                ok
            }
            _ => {
                let parts_len = (len as isize + isize::from(parts_len % 3)).max(0) as usize;
                let mut parts = vec![UNWRITTEN; parts_len];
                let parts_ptr = if null_parts.0 { null_mut() } else { parts.as_mut_ptr() };
                // SAFETY: a live limiter or NULL; locals or NULL; `parts_len` decisions.
                let s =
                    unsafe { rk_composite_limiter_check_each(ptr, cost, out(&mut d, null_out), parts_ptr, parts_len) };
                let required = [required[0], required[1], ("out_parts", null_parts.0)];
                let ok = self.status("rk_composite_limiter_check_each", s, &required, true);
                if s != rk_status::RK_NULL_POINTER && parts_len < len {
                    assert_eq!((s, self.argument()), (rk_status::RK_BUFFER_TOO_SMALL, "parts_len"));
                } else {
                    self.cost_status(s, cost, ok);
                }
                if ok {
                    for part in &parts[..len] {
                        check_fields(
                            &Decision::from(part),
                            cost as u64,
                            Promises { zero_may_be_refused: true, ..Promises::default() },
                        );
                    }
                    assert_eq!(
                        d.allowed,
                        parts[..len].iter().all(|p| p.allowed),
                        "a composite's decision and its parts'"
                    );
                    assert!(parts[len..].iter().all(|p| *p == UNWRITTEN), "written beyond the parts");
                } else {
                    assert!(parts.iter().all(|p| *p == UNWRITTEN), "a failed call wrote its out-parameter");
                }
                ok
            }
        };
        if ok {
            check_fields(
                &Decision::from(&d),
                cost as u64,
                Promises { zero_may_be_refused: true, ..Promises::default() },
            );
            if let Some(predicted) = predicted {
                assert_eq!(d, predicted, "the composite's peek did not predict its decision");
            }
            self.latest = Some(d);
        } else {
            assert_eq!(d, UNWRITTEN, "a failed call wrote its out-parameter");
            self.unchanged(clock, before, looks);
        }
    }

    fn new_concurrency(&mut self, policy: Policy, clock: ClockChoice, null_out: MaybeNull) {
        if self.concurrency.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let mut ptr = null_mut();
        let out_ptr = out(&mut ptr, null_out);
        // SAFETY: locals or NULL; a live clock or NULL.
        let (function, s, null_config) = unsafe {
            match policy {
                Policy::Fixed(limit) => (
                    "rk_concurrency_limiter_new_fixed",
                    rk_concurrency_limiter_new_fixed(limit.0, clock_ptr, out_ptr),
                    false,
                ),
                Policy::Gradient { edits, floats, null_config } => {
                    let mut c = core::mem::zeroed();
                    assert_eq!(rk_gradient_config_default(&mut c), rk_status::RK_OK);
                    let ints = [
                        &mut c.initial_limit,
                        &mut c.min_limit,
                        &mut c.max_limit,
                        &mut c.queue_size,
                        &mut c.probe_interval,
                    ];
                    for (field, edit) in ints.into_iter().zip(edits) {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    for (field, edit) in
                        [&mut c.smoothing, &mut c.rtt_tolerance, &mut c.backoff_ratio].into_iter().zip(floats)
                    {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    let config: *const rk_gradient_config = if null_config.0 { null() } else { &c };
                    (
                        "rk_concurrency_limiter_new_gradient",
                        rk_concurrency_limiter_new_gradient(config, clock_ptr, out_ptr),
                        null_config.0,
                    )
                }
                Policy::Aimd { edits, backoff, timeout, null_config } => {
                    let mut c = core::mem::zeroed();
                    assert_eq!(rk_aimd_config_default(&mut c), rk_status::RK_OK);
                    for (field, edit) in
                        [&mut c.initial_limit, &mut c.min_limit, &mut c.max_limit].into_iter().zip(edits)
                    {
                        if let Some(v) = edit {
                            *field = v.0;
                        }
                    }
                    if let Some(b) = backoff {
                        c.backoff_ratio = b.0;
                    }
                    if let Some(t) = timeout {
                        c.rtt_timeout_micros = t.0;
                    }
                    let config: *const rk_aimd_config = if null_config.0 { null() } else { &c };
                    (
                        "rk_concurrency_limiter_new_aimd",
                        rk_concurrency_limiter_new_aimd(config, clock_ptr, out_ptr),
                        null_config.0,
                    )
                }
            }
        };
        if self.status(function, s, &[("out_limiter", null_out.0), ("config", null_config)], true) {
            let id = self.id();
            self.concurrency.push(Held { ptr, clock: clock_id, id, facts: Facts::default() });
            let mut limit = 0;
            // SAFETY: live; a local.
            assert_eq!(unsafe { rk_concurrency_limiter_limit(ptr, &mut limit) }, rk_status::RK_OK);
            assert!(limit >= 1, "{function}: a limit of {limit}");
        } else {
            assert!(ptr.is_null(), "a failed call wrote its out-parameter");
        }
    }

    fn try_acquire(&mut self, p: Pick, null_decision: bool, null_permit: MaybeNull) {
        let h = pick(&self.concurrency, p);
        let (ptr, id) = (ptr_of(h), h.map_or(0, |h| h.id));
        let (limit, in_flight) = if ptr.is_null() { (0, 0) } else { concurrency_looks(ptr) };
        let mut d = UNWRITTEN;
        let mut permit = null_mut::<rk_permit>();
        let out_decision = if null_decision { null_mut() } else { &mut d };
        // SAFETY: a live limiter or NULL; locals or NULL.
        let s = unsafe { rk_concurrency_limiter_try_acquire(ptr, out_decision, out(&mut permit, null_permit)) };
        let required = [("limiter", ptr.is_null()), ("out_permit", null_permit.0)];
        if self.status("rk_concurrency_limiter_try_acquire", s, &required, true) {
            assert_eq!(!permit.is_null(), in_flight < limit, "{in_flight} in flight of {limit}: permit {permit:?}");
            if !null_decision {
                check_fields(&Decision::from(&d), 1, Promises::default());
                assert_eq!(d.allowed, !permit.is_null());
                self.latest = Some(d);
            }
            if !permit.is_null() {
                self.permits.push(PermitHeld { ptr: permit, limiter: id });
            }
        } else {
            assert_eq!((d, permit), (UNWRITTEN, null_mut()), "a failed call wrote its out-parameter");
            if !ptr.is_null() {
                assert_eq!(concurrency_looks(ptr), (limit, in_flight), "a failed call changed the limiter");
            }
        }
    }

    fn release(&mut self, p: Pick, outcome: u8, null_out: bool) {
        let i = p.0.filter(|_| !self.permits.is_empty()).map(|i| usize::from(i) % self.permits.len());
        let permit = i.map_or(null_mut(), |i| self.permits[i].ptr);
        // Mostly a real outcome.
        let outcome = if outcome < 240 { u32::from(outcome % 3) } else { u32::from(outcome) };
        let mut limit = 0xDEAD;
        let out_limit = if null_out { null_mut() } else { &mut limit };
        // SAFETY: a permit not yet released, or NULL; a local or NULL.
        let s = unsafe { rk_permit_release(permit, outcome, out_limit) };
        if self.status("rk_permit_release", s, &[("permit", permit.is_null())], true) {
            assert!(outcome <= 2, "outcome {outcome} accepted");
            assert!(null_out || limit >= 1, "a limit of {limit}");
            self.permits.remove(i.unwrap());
        } else {
            assert_eq!(limit, 0xDEAD, "a failed call wrote its out-parameter");
            if !permit.is_null() {
                // The permit is still ours: it is released later.
                assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, "outcome"));
            }
        }
    }

    fn new_marker(&mut self, two_rate: bool, rates: [Signed; 4], clock: ClockChoice, null_out: MaybeNull) {
        if self.srtcms.len() + self.trtcms.len() >= MAX_LIVE {
            return;
        }
        let (clock_ptr, clock_id) = self.choose_clock(clock);
        let [a, b, c, d] = rates.map(|r| r.0);
        let id = self.id();
        let args: &[&str];
        let ok = if two_rate {
            let mut ptr = null_mut();
            args = &["pir", "pbs", "cir", "cbs"];
            // SAFETY: a live clock or NULL; a local or NULL.
            let s = unsafe { rk_trtcm_new(a, b, c, d, clock_ptr, out(&mut ptr, null_out)) };
            let ok = self.status("rk_trtcm_new", s, &[("out_marker", null_out.0)], true);
            if ok {
                assert!(a > 0 && b > 0 && c > 0 && d > 0 && a >= c, "rk_trtcm_new({a}, {b}, {c}, {d}) accepted");
                let facts = Facts { bursts: (b as u64, d as u64), ..Facts::default() };
                self.trtcms.push(Held { ptr, clock: clock_id, id, facts });
            } else {
                assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            }
            ok
        } else {
            let mut ptr = null_mut();
            args = &["cir", "cbs", "ebs"];
            // SAFETY: as above.
            let s = unsafe { rk_srtcm_new(a, b, c, clock_ptr, out(&mut ptr, null_out)) };
            let ok = self.status("rk_srtcm_new", s, &[("out_marker", null_out.0)], true);
            if ok {
                assert!(a > 0 && b >= 0 && c >= 0 && (b > 0 || c > 0), "rk_srtcm_new({a}, {b}, {c}) accepted");
                let facts = Facts { bursts: (b as u64, c as u64), ..Facts::default() };
                self.srtcms.push(Held { ptr, clock: clock_id, id, facts });
            } else {
                assert!(ptr.is_null(), "a failed call wrote its out-parameter");
            }
            ok
        };
        if !ok && !null_out.0 {
            assert!(args.contains(&self.argument()), "a marker's constructor named {}", self.argument());
        }
    }

    fn mark(&mut self, two_rate: bool, p: Pick, bytes: i64, pre_color: Option<u8>, null_out: MaybeNull) {
        let (ptr_sr, ptr_tr, clock) = if two_rate {
            let h = pick(&self.trtcms, p);
            (null_mut(), ptr_of(h), h.and_then(|h| h.clock))
        } else {
            let h = pick(&self.srtcms, p);
            (ptr_of(h), null_mut(), h.and_then(|h| h.clock))
        };
        let null_handle = ptr_sr.is_null() && ptr_tr.is_null();
        let looks = || marker_looks(ptr_sr, ptr_tr);
        let before = (!null_handle && self.clock_ptr(clock).is_some()).then(looks);
        // Mostly a real colour.
        let pre = pre_color.map(|c| if c < 240 { u32::from(c % 3) } else { u32::from(c) });
        let mut color = 0xDEAD;
        let o = out(&mut color, null_out);
        // SAFETY: a live marker or NULL; a local or NULL.
        let (function, s) = unsafe {
            match (two_rate, pre) {
                (false, None) => ("rk_srtcm_mark", rk_srtcm_mark(ptr_sr, bytes, o)),
                (false, Some(pre)) => ("rk_srtcm_mark_aware", rk_srtcm_mark_aware(ptr_sr, bytes, pre, o)),
                (true, None) => ("rk_trtcm_mark", rk_trtcm_mark(ptr_tr, bytes, o)),
                (true, Some(pre)) => ("rk_trtcm_mark_aware", rk_trtcm_mark_aware(ptr_tr, bytes, pre, o)),
            }
        };
        if self.status(function, s, &[("marker", null_handle), ("out_color", null_out.0)], true) {
            assert!(bytes >= 0 && pre.is_none_or(|c| c <= 2), "{function}({bytes}, {pre:?}) accepted");
            assert!(color <= 2, "{function}: colour {color}");
            assert!(color >= pre.unwrap_or(0), "{function} improved colour {pre:?} to {color}");
        } else {
            assert_eq!(color, 0xDEAD, "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT {
                assert_eq!(self.argument(), if bytes < 0 { "bytes" } else { "pre_color" });
            }
            self.unchanged(clock, before, looks);
        }
    }

    fn marker_tokens(&mut self, two_rate: bool, p: Pick, null_first: MaybeNull, null_second: MaybeNull) {
        let (mut first, mut second) = (0xDEAD_u64, 0xDEAD_u64);
        let (a, b) = (out(&mut first, null_first), out(&mut second, null_second));
        let (function, s, bursts, names, null_handle) = if two_rate {
            let h = pick(&self.trtcms, p);
            // SAFETY: a live marker or NULL; locals or NULL.
            let s = unsafe { rk_trtcm_tokens(ptr_of(h), a, b) };
            ("rk_trtcm_tokens", s, h.map(|h| h.facts.bursts), ["out_peak", "out_committed"], h.is_none())
        } else {
            let h = pick(&self.srtcms, p);
            // SAFETY: as above.
            let s = unsafe { rk_srtcm_tokens(ptr_of(h), a, b) };
            ("rk_srtcm_tokens", s, h.map(|h| h.facts.bursts), ["out_committed", "out_excess"], h.is_none())
        };
        let required = [("marker", null_handle), (names[0], null_first.0), (names[1], null_second.0)];
        if self.status(function, s, &required, true) {
            let (x, y) = bursts.unwrap();
            assert!(first <= x && second <= y, "{function}: ({first}, {second}) beyond the bursts ({x}, {y})");
        } else {
            assert_eq!((first, second), (0xDEAD, 0xDEAD), "a failed call wrote its out-parameter");
        }
    }

    fn source(&self, source: DecisionSource) -> rk_decision {
        match source {
            DecisionSource::Latest => self.latest.unwrap_or(UNWRITTEN),
            DecisionSource::Any { allowed, limit, remaining, retry, reset, wait, window } => rk_decision {
                allowed,
                limit,
                remaining,
                retry_after_micros: retry.0,
                reset_after_micros: reset.0,
                wait_micros: wait.0,
                window_micros: window.0,
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write_field(
        &mut self,
        kind: u8,
        source: DecisionSource,
        null_decision: MaybeNull,
        name: &[u8],
        null_name: MaybeNull,
        buf_len: BufLen,
        null_out_len: MaybeNull,
    ) {
        let decision = self.source(source);
        let decision_ptr: *const rk_decision = if null_decision.0 { null() } else { &decision };
        let name = c_string(name);
        let name_ptr = if null_name.0 { null() } else { name.as_ptr() };
        let kind = kind % 3;
        let function =
            ["rk_decision_write_ratelimit", "rk_decision_write_ratelimit_policy", "rk_decision_write_retry_after"]
                [usize::from(kind)];
        let call = |buf: *mut c_char, len: usize, out_len: *mut usize| {
            // SAFETY: a local decision or NULL, a NUL-terminated name or
            // NULL, a buffer of `len` bytes or NULL, a local or NULL.
            unsafe {
                match kind {
                    0 => rk_decision_write_ratelimit(decision_ptr, name_ptr, buf, len, out_len),
                    1 => rk_decision_write_ratelimit_policy(decision_ptr, name_ptr, buf, len, out_len),
                    _ => rk_decision_write_retry_after(decision_ptr, buf, len, out_len),
                }
            }
        };
        let uses_name = kind < 2;
        let bad_name = uses_name && !null_name.0 && name.as_bytes().iter().any(|b| !(0x20..=0x7e).contains(b));
        let most = if uses_name { 2 * name.as_bytes().len() + 64 } else { 21 };
        let required = [("out_len", null_out_len.0), ("decision", null_decision.0), ("name", uses_name && null_name.0)];
        self.buffer_protocol(function, call, &required, bad_name, "name", most, buf_len, null_out_len);
    }

    fn write_fields(
        &mut self,
        policy: bool,
        items: &[(DecisionSource, Vec<u8>, bool)],
        null_arrays: u8,
        buf_len: BufLen,
        null_out_len: MaybeNull,
    ) {
        let items = &items[..items.len().min(8)];
        let decisions: Vec<rk_decision> = items.iter().map(|(s, _, _)| self.source(*s)).collect();
        let names: Vec<CString> = items.iter().map(|(_, n, _)| c_string(n)).collect();
        // A NULL name now and then.
        let name_ptrs: Vec<*const c_char> =
            items.iter().zip(&names).map(|((_, _, is_null), n)| if *is_null { null() } else { n.as_ptr() }).collect();
        let (null_decisions, null_names) = (null_arrays % 16 == 1, null_arrays % 16 == 2);
        let decisions_ptr = if null_decisions { null() } else { decisions.as_ptr() };
        let names_ptr = if null_names { null() } else { name_ptrs.as_ptr() };
        let count = items.len();
        let function = if policy { "rk_decisions_write_ratelimit_policy" } else { "rk_decisions_write_ratelimit" };
        let call = |buf: *mut c_char, len: usize, out_len: *mut usize| {
            // SAFETY: `count` decisions and names (each NUL-terminated or
            // NULL) or NULL, a buffer of `len` bytes or NULL, a local or NULL.
            unsafe {
                if policy {
                    rk_decisions_write_ratelimit_policy(decisions_ptr, names_ptr, count, buf, len, out_len)
                } else {
                    rk_decisions_write_ratelimit(decisions_ptr, names_ptr, count, buf, len, out_len)
                }
            }
        };
        let arrays_null = count > 0 && (null_decisions || null_names);
        let a_null_name = !arrays_null && items.iter().any(|(_, _, null)| *null);
        let bad_name = !arrays_null && names.iter().any(|n| n.as_bytes().iter().any(|b| !(0x20..=0x7e).contains(b)));
        let most = 1 + names.iter().map(|n| 2 * n.as_bytes().len() + 64 + 2).sum::<usize>();
        let required = [
            ("out_len", null_out_len.0),
            ("decisions", count > 0 && null_decisions),
            ("names", count > 0 && null_names),
        ];
        if a_null_name && !null_out_len.0 {
            let mut len = 0;
            let s = call(null_mut(), 0, &mut len);
            self.status(function, s, &[("names", true)], false);
            assert!(
                matches!(s, rk_status::RK_NULL_POINTER | rk_status::RK_INVALID_ARGUMENT),
                "{function}: a NULL name"
            );
            return;
        }
        self.buffer_protocol(function, call, &required, bad_name, "name", most, buf_len, null_out_len);
    }

    /// The buffer protocol of every string the library writes: `buf_len`
    /// 0 asks for the length; a buffer too small gets nothing; otherwise
    /// the text, NUL-terminated, all printable ASCII, within `most` bytes.
    #[allow(clippy::too_many_arguments)]
    fn buffer_protocol(
        &mut self,
        function: &str,
        call: impl Fn(*mut c_char, usize, *mut usize) -> rk_status,
        required: &[(&str, bool)],
        bad_name: bool,
        name_argument: &str,
        most: usize,
        buf_len: BufLen,
        null_out_len: MaybeNull,
    ) {
        let mut len = usize::MAX;
        let s = call(null_mut(), 0, out(&mut len, null_out_len));
        if !self.status(function, s, required, true) {
            assert_eq!(len, usize::MAX, "a failed call wrote its out-parameter");
            if s == rk_status::RK_INVALID_ARGUMENT || !required.iter().any(|(_, null)| *null) {
                assert!(bad_name, "{function} refused a good name: {}", self.last_error.0);
                assert_eq!((s, self.argument()), (rk_status::RK_INVALID_ARGUMENT, name_argument));
            }
            return;
        }
        assert!(!bad_name, "{function} accepted a name that is not printable ASCII");
        assert!(len < most, "{function}: {len} bytes, more than the {most} documented as always enough");
        let size = match buf_len {
            BufLen::Exact => len + 1,
            BufLen::Larger(n) => len + 1 + usize::from(n),
            BufLen::Short(n) => (len + 1).saturating_sub(usize::from(n).max(1)),
            BufLen::NullBuffer => {
                let mut again = usize::MAX;
                let s = call(null_mut(), 1 + len, &mut again);
                self.status(function, s, &[("buf", true)], true);
                assert_eq!(again, usize::MAX, "a failed call wrote its out-parameter");
                return;
            }
        };
        let mut buf = vec![0x55u8; size.max(1)];
        let mut written = usize::MAX;
        let s = call(buf.as_mut_ptr().cast(), size, &mut written);
        if size == 0 {
            // A length query again: the same length.
            assert!(self.status(function, s, &[], true));
            assert_eq!(written, len);
        } else if size <= len {
            assert_eq!(s, rk_status::RK_BUFFER_TOO_SMALL, "{function}: {len} bytes into a buffer of {size}");
            self.status(function, s, &[], true);
            assert_eq!(self.argument(), "buf_len");
            assert!(buf.iter().all(|&b| b == 0x55), "{function} wrote into a buffer too small");
            assert_eq!(written, usize::MAX, "a failed call wrote its out-parameter");
        } else {
            assert!(self.status(function, s, &[], true), "{function}: {len} bytes into a buffer of {size}");
            assert_eq!(written, len, "{function}: the length asked and the length written differ");
            assert_eq!(buf[len], 0, "{function}: not NUL-terminated");
            assert!(buf[..len].iter().all(|b| (0x20..=0x7e).contains(b)), "{function}: not printable ASCII");
            assert!(buf[len + 1..].iter().all(|&b| b == 0x55), "{function} wrote beyond its NUL");
        }
    }

    /// Frees everything, in the order the header allows and that would
    /// first show a dangling reference: the clocks, then the limiters, then
    /// what still holds them (reservations; permits, released).
    fn finish(mut self) {
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

/// A name as C passes it: the bytes up to the first NUL.
fn c_string(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end.min(64)]).expect("no NUL inside")
}

fn peek(ptr: *const rk_limiter, cost: i64) -> rk_decision {
    let mut d = UNWRITTEN;
    // SAFETY: a live limiter; a local.
    assert_eq!(unsafe { rk_limiter_peek(ptr, cost, &mut d) }, rk_status::RK_OK);
    d
}

fn composite_peek(ptr: *const rk_composite_limiter, cost: i64) -> rk_decision {
    let mut d = UNWRITTEN;
    // SAFETY: a live limiter; a local.
    assert_eq!(unsafe { rk_composite_limiter_peek(ptr, cost, &mut d) }, rk_status::RK_OK);
    d
}

/// Everything observable of a limiter, without changing it.
fn limiter_looks(ptr: *const rk_limiter, algorithm: u32) -> Vec<String> {
    let mut looks: Vec<String> = [0, 1, 7, i64::MAX].iter().map(|&c| format!("{:?}", peek(ptr, c))).collect();
    if algorithm == RK_ALGORITHM_TOKEN_BUCKET {
        let mut tokens = 0.0;
        // SAFETY: a live limiter; a local.
        assert_eq!(unsafe { rk_token_bucket_tokens(ptr, &mut tokens) }, rk_status::RK_OK);
        looks.push(format!("{tokens:?} {:?}", token_bucket_rate(ptr)));
    }
    looks
}

fn token_bucket_rate(ptr: *const rk_limiter) -> f64 {
    let mut rate = 0.0;
    // SAFETY: a live token bucket; a local.
    assert_eq!(unsafe { rk_token_bucket_rate(ptr, &mut rate) }, rk_status::RK_OK);
    rate
}

fn rate_limiter_looks(ptr: *const rk_rate_limiter) -> Vec<String> {
    let (mut wait, mut rate, mut can) = (0, 0.0, false);
    // SAFETY: a live limiter; locals.
    unsafe {
        assert_eq!(rk_rate_limiter_time_until_available(ptr, 1, &mut wait), rk_status::RK_OK);
        assert_eq!(rk_rate_limiter_get_rate(ptr, &mut rate), rk_status::RK_OK);
        assert_eq!(rk_rate_limiter_can_acquire(ptr, 1, 0, &mut can), rk_status::RK_OK);
    }
    vec![format!("{wait} {rate:?} {can}")]
}

fn composite_looks(ptr: *const rk_composite_limiter) -> Vec<String> {
    [0, 1, 7, i64::MAX].iter().map(|&c| format!("{:?}", composite_peek(ptr, c))).collect()
}

fn concurrency_looks(ptr: *const rk_concurrency_limiter) -> (u64, u64) {
    let (mut limit, mut in_flight) = (0, 0);
    // SAFETY: a live limiter; locals.
    unsafe {
        assert_eq!(rk_concurrency_limiter_limit(ptr, &mut limit), rk_status::RK_OK);
        assert_eq!(rk_concurrency_limiter_in_flight(ptr, &mut in_flight), rk_status::RK_OK);
    }
    (limit, in_flight)
}

fn marker_looks(sr: *const rk_srtcm, tr: *const rk_trtcm) -> Vec<String> {
    let (mut a, mut b) = (0, 0);
    // SAFETY: one live marker, the other NULL; locals.
    let s = unsafe {
        if sr.is_null() {
            rk_trtcm_tokens(tr, &mut a, &mut b)
        } else {
            rk_srtcm_tokens(sr, &mut a, &mut b)
        }
    };
    assert_eq!(s, rk_status::RK_OK);
    vec![format!("{a} {b}")]
}

/// A reservation's `ok`, `tokens` and `delay`.
fn reservation_facts(r: *const rk_reservation) -> (bool, u64, i64) {
    let (mut ok, mut tokens, mut delay) = (false, 0, 0);
    // SAFETY: a live reservation; locals.
    unsafe {
        assert_eq!(rk_reservation_ok(r, &mut ok), rk_status::RK_OK);
        assert_eq!(rk_reservation_tokens(r, &mut tokens), rk_status::RK_OK);
        assert_eq!(rk_reservation_delay_micros(r, &mut delay), rk_status::RK_OK);
    }
    (ok, tokens, delay)
}

/// Runs the calls, then frees every handle.
pub fn run(input: Input) {
    let mut world = World {
        last_error: (c_str(rk_last_error_message()).unwrap(), c_str(rk_last_error_argument())),
        ..World::default()
    };
    for op in input.ops.into_iter().take(200) {
        world.apply(op);
    }
    world.finish();
}
