//! What the fuzzer's bytes decode to: the arguments as C passes them
//! (counts, durations, rates, NULL or not), which live handle a call is
//! given, and the calls themselves ([`Op`]). Nothing here calls the
//! library; the order of the fields and variants is the corpus's format.

use arbitrary::{Arbitrary, Result, Unstructured};
use ratekeeper_c::spec::*;

use super::model::used_fields;
use crate::values::{wild_f64, wild_i64};

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
pub struct Pick(pub(super) Option<u8>);

impl<'a> Arbitrary<'a> for Pick {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Pick(if u.ratio(1u8, 10)? { None } else { Some(u8::arbitrary(u)?) }))
    }
}

/// A pointer argument that may be NULL: mostly valid.
#[derive(Debug, Clone, Copy)]
pub struct MaybeNull(pub(super) bool);

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
pub struct Spec(pub(super) rk_limiter_spec);

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
            slack: int("slack", u)?,
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
    pub(super) ops: Vec<Op>,
}
