//! A token bucket with the semantics of Go's `golang.org/x/time/rate`.
//!
//! A bucket of `burst` tokens starts full and refills at `rate` tokens per
//! second; a request for `n` tokens takes them. This module owns
//! x/time/rate's `Limiter` (as of its September 2025 source) as a state
//! machine, function by function:
//!
//! | x/time/rate | here |
//! |---|---|
//! | `NewLimiter(r, b)` | [`TokenBucket::new`] |
//! | `AllowN(t, n)` | [`allow_n`](TokenBucket::allow_n), or [`check`](Admission::check) for a [`Decision`] |
//! | `ReserveN(t, n)` | [`reserve_n`](TokenBucket::reserve_n) → [`Reservation`] |
//! | `Reservation.CancelAt(t)` | [`cancel_at`](TokenBucket::cancel_at) |
//! | `WaitN(ctx, n)` without the sleep | [`wait_n`](TokenBucket::wait_n): `reserveN(t, n, deadline − t)` |
//! | `SetLimitAt`, `SetBurstAt` | [`set_rate`](TokenBucket::set_rate), [`set_burst`](TokenBucket::set_burst) |
//! | `TokensAt(t)` | [`tokens_at`](TokenBucket::tokens_at) |
//!
//! and with it x/time/rate's corner cases:
//!
//! * `rate` `+Infinity` (Go's `rate.Inf`) admits everything, even with a
//!   burst of 0, and changes no state;
//! * a rate of 0 never refills: the bucket is a one-off quota of `burst`
//!   tokens (upstream fix 772484e, after Go's v0.3.0);
//! * a request for more than `burst` tokens is refused, with no state
//!   change (its retry-after is [`NEVER`]); a burst of 0 refuses every
//!   request of 1 token or more unless the rate is infinite;
//! * waits beyond `math.MaxInt64` nanoseconds are `InfDuration` (upstream
//!   fix 2c6c5a2);
//! * cancelling gives back the reserved tokens *minus* those that later
//!   reservations depend on, exactly as `CancelAt` computes it.
//!
//! ## Time: nanoseconds inside, microseconds outside
//!
//! Times come in as whole microseconds, like everywhere in ratekeeper, but
//! the state is kept in **nanoseconds** (`now_micros × 1000`) with Go's
//! `time.Duration` arithmetic (the private `go` module). So for the same calls at
//! the same (microsecond) times the token count is the same `float64` as
//! x/time/rate's, bit for bit, and reservations act at the same nanosecond.
//! Only where a duration is *reported* is it rounded: up, to the next whole
//! microsecond (a wait of 333,333,334 ns is reported as 333,334 µs), so a
//! caller that waits as told is never early. Times past about 292 years
//! after creation saturate.
//!
//! Three deliberate differences from Go, each where Go gives back or
//! mints tokens it should not: x/time/rate accepts times in any order and
//! lets its `last` move back (the same interval is then refilled twice);
//! here a time earlier than the latest seen counts as the latest, so time
//! going backwards never mints tokens. Cancelling a [`Reservation`] twice
//! restores tokens once (Go's second `CancelAt` gives them back again).
//! And a cancel never gives back more tokens than the reservation holds:
//! Go's `CancelAt` subtracts the tokens reserved after it as the time from
//! it to the latest reservation's, which is negative once a cancel has let
//! later reservations act earlier than it, and then gave back more than
//! it held (found by the fuzz target: 968 tokens acted on in 2 s against a
//! bound of 947).

use crate::admission::Admission;
use crate::decision::{micros_from_nanos_ceil, Decision, NEVER};
use crate::error::{Argument, Error};
use crate::full::{later_than, Full};
use crate::go;
use crate::packed::Packed;

/// x/time/rate's `Inf`: `Limit(math.MaxFloat64)`.
const INF: f64 = f64::MAX;

/// A token bucket with x/time/rate's semantics. Created full at time 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    /// Go's `tokens`: tokens available at `last` (negative while reservations
    /// are outstanding).
    tokens: f64,
    /// Go's `last`: when `tokens` was last updated, in nanoseconds.
    last: i64,
    /// Go's `lastEvent`: when the latest reservation acts, in nanoseconds.
    last_event: i64,
    /// Go's `limit` in tokens per second; [`INF`] for no limit.
    limit: f64,
    /// Go's `burst`, at most `i64::MAX` (Go's `int`).
    burst: u64,
}

/// A promise of tokens from [`TokenBucket::reserve_n`] or
/// [`TokenBucket::wait_n`]: x/time/rate's `Reservation`, as plain data.
///
/// It does not point back at its bucket; give it back to the same bucket
/// to cancel it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    ok: bool,
    /// Tokens reserved; 0 once cancelled (and for a refused reservation).
    tokens: u64,
    /// When the holder may act, in nanoseconds.
    time_to_act: i64,
    /// The bucket's rate when the reservation was made (0 under an
    /// infinite rate, as in Go, where the field is then left unset).
    limit: f64,
}

impl Reservation {
    /// Go's `OK()`: whether the tokens were granted (within the maximum
    /// wait). A refused reservation took nothing and cannot be cancelled.
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// How many tokens this reservation holds (0 when refused or cancelled).
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Go's `DelayFrom(t)`, in microseconds rounded up: how long from
    /// `now_micros` the holder must wait before acting (0 when it may act
    /// now); [`NEVER`] when the reservation was refused (Go's
    /// `InfDuration`).
    pub fn delay_micros(&self, now_micros: i64) -> i64 {
        let delay = self.delay_nanos(nanos(now_micros));
        if delay == go::INF_DURATION {
            NEVER
        } else {
            micros_from_nanos_ceil(delay)
        }
    }

    /// Go's `DelayFrom(t)` in nanoseconds, exactly. A reservation that acts
    /// at the end of time (a zero rate's `ReserveN`: Go's `t + InfDuration`)
    /// is `InfDuration` from any `t`, as in Go.
    pub fn delay_nanos(&self, now_nanos: i64) -> i64 {
        if !self.ok || self.time_to_act == i64::MAX {
            return go::INF_DURATION;
        }
        go::sub(self.time_to_act, now_nanos).max(0)
    }

    /// When the holder may act, in nanoseconds since the bucket was created.
    pub fn time_to_act_nanos(&self) -> i64 {
        self.time_to_act
    }
}

/// A time in microseconds as Go's nanoseconds (saturating).
#[inline]
fn nanos(micros: i64) -> i64 {
    micros.saturating_mul(1_000)
}

/// x/time/rate's `Limit.durationFromTokens`, with its overflow guard.
#[inline]
fn duration_from_tokens(limit: f64, tokens: f64) -> i64 {
    if limit <= 0.0 {
        return go::INF_DURATION;
    }
    let duration = (tokens / limit) * go::SECOND as f64;
    // `float64(math.MaxInt64)` is 2^63; Go converts exactly 2^63 in a
    // platform-defined way, so it counts as overflow here.
    if duration >= i64::MAX as f64 {
        return go::INF_DURATION;
    }
    go::duration_from_float(duration)
}

/// x/time/rate's `Limit.tokensFromDuration`.
#[inline]
fn tokens_from_duration(limit: f64, d: i64) -> f64 {
    if limit <= 0.0 {
        return 0.0;
    }
    go::seconds(d) * limit
}

/// A duration in nanoseconds as reported microseconds: rounded up, with
/// `InfDuration` as [`NEVER`].
#[inline]
fn report(d: i64) -> i64 {
    if d == go::INF_DURATION {
        NEVER
    } else {
        micros_from_nanos_ceil(d)
    }
}

fn check_rate(rate: f64) -> Result<f64, Error> {
    if rate.is_nan() || rate < 0.0 {
        return Err(Error::invalid_float(Argument::Rate, rate));
    }
    // +Infinity and f64::MAX are both Go's `rate.Inf`; -0.0 is 0.
    Ok(if rate == f64::INFINITY { INF } else { rate + 0.0 })
}

fn check_burst(burst: u64) -> Result<u64, Error> {
    if burst > i64::MAX as u64 {
        return Err(Error::invalid_uint(Argument::Burst, burst));
    }
    Ok(burst)
}

impl TokenBucket {
    /// Go's `NewLimiter(r, b)`: a full bucket of `burst` tokens refilled at
    /// `rate` tokens per second.
    ///
    /// `rate` may be 0 (never refills) or `f64::INFINITY` (Go's `rate.Inf`:
    /// no limit at all). Errors when `rate` is negative or NaN, or `burst`
    /// is above `i64::MAX` (Go's `int`).
    pub fn new(rate: f64, burst: u64) -> Result<Self, Error> {
        let limit = check_rate(rate)?;
        let burst = check_burst(burst)?;
        Ok(TokenBucket { tokens: burst as f64, last: 0, last_event: 0, limit, burst })
    }

    /// Go's `Limit()` in tokens per second, with `rate.Inf` as
    /// `f64::INFINITY`.
    pub fn rate(&self) -> f64 {
        if self.limit == INF {
            f64::INFINITY
        } else {
            self.limit
        }
    }

    /// Go's `Burst()`.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// Go's `TokensAt(t)`: tokens available at `now_micros` (negative while
    /// reservations are outstanding). Takes nothing.
    #[inline]
    pub fn tokens_at(&self, now_micros: i64) -> f64 {
        self.advance(self.clamp(nanos(now_micros)))
    }

    /// Go's `AllowN(t, n)`: takes `n` tokens if they are available now.
    #[inline]
    pub fn allow_n(&mut self, n: u64, now_micros: i64) -> bool {
        let t = self.clamp(nanos(now_micros));
        self.reserve(t, n, 0).ok
    }

    /// Go's `ReserveN(t, n)`: takes `n` tokens now, possibly from the
    /// future, and says when the holder may act. Refused (taking nothing)
    /// only when `n` exceeds the burst and the rate is finite. Under a rate
    /// of 0 a reservation the bucket cannot cover is granted, as in Go, with
    /// a delay of [`NEVER`].
    #[inline]
    pub fn reserve_n(&mut self, n: u64, now_micros: i64) -> Reservation {
        let t = self.clamp(nanos(now_micros));
        self.reserve(t, n, go::INF_DURATION)
    }

    /// The decision of Go's `WaitN` before it sleeps: reserves `n` tokens if
    /// the holder could act by `deadline_micros` (`reserveN(t, n, deadline −
    /// t)`), else refuses, taking nothing. Go's `WaitN` also refuses `n`
    /// above the burst up front; the reservation refuses it all the same.
    /// And a deadline already past is refused, whatever the rate: Go's
    /// `WaitN` returns the context's error before it reserves anything
    /// (without this, an unlimited rate, whose reservations ignore the
    /// longest wait, would admit it).
    ///
    /// Pass `i64::MAX` for no deadline.
    #[inline]
    pub fn wait_n(&mut self, n: u64, now_micros: i64, deadline_micros: i64) -> Reservation {
        let t = self.clamp(nanos(now_micros));
        // A finite deadline is never "no deadline", even past the 292 years
        // that nanoseconds can count (where it saturates).
        let max_wait = if deadline_micros == i64::MAX {
            go::INF_DURATION
        } else {
            go::sub(nanos(deadline_micros), t).min(go::INF_DURATION - 1)
        };
        if max_wait < 0 {
            return Reservation { ok: false, tokens: 0, time_to_act: 0, limit: self.limit };
        }
        self.reserve(t, n, max_wait)
    }

    /// [`wait_n`](Self::wait_n) with a relative timeout, answered as a
    /// [`Decision`] whose `wait_micros` is the reservation's delay (rounded
    /// up). A timeout of 0 is [`check`](Admission::check); `i64::MAX` waits
    /// as long as it takes.
    #[inline]
    pub fn check_within(&mut self, n: u64, now_micros: i64, timeout_micros: i64) -> Decision {
        let t = self.clamp(nanos(now_micros));
        // A finite timeout is never "no timeout", even past the 292 years
        // that nanoseconds can count (where it saturates).
        let max_wait = if timeout_micros == i64::MAX {
            go::INF_DURATION
        } else {
            nanos(timeout_micros.max(0)).min(go::INF_DURATION - 1)
        };
        let (r, tokens, wait) = self.reserve_and_count(t, n, max_wait);
        let mut d = self.decision(n, r.ok, tokens);
        // The wait the reservation was granted with (at most the timeout),
        // which is its delay from `t` — unless `t + wait` saturated at the
        // end of time, where the delay would read as Go's `InfDuration`.
        d.wait_micros = if r.ok { report(wait) } else { 0 };
        d
    }

    /// Go's `Reservation.CancelAt(t)`: gives back as many of the reserved
    /// tokens as later reservations allow, if the holder has not acted yet.
    /// Marks the reservation cancelled, so cancelling it again does nothing.
    ///
    /// The reservation must come from this bucket.
    #[inline]
    pub fn cancel_at(&mut self, reservation: &mut Reservation, now_micros: i64) {
        let t = self.clamp(nanos(now_micros));
        let r = *reservation;
        reservation.tokens = 0;
        if !r.ok || self.limit == INF || r.tokens == 0 || r.time_to_act < t {
            return;
        }
        // Tokens reserved after `r` (between its time and the latest event)
        // must stay taken. When the latest event comes before `r` (a cancel
        // let later reservations act earlier), none are: Go's negative
        // duration here would give back more than `r` holds.
        let after = go::sub(self.last_event, r.time_to_act).max(0);
        let restore = r.tokens as f64 - tokens_from_duration(r.limit, after);
        if restore <= 0.0 {
            return;
        }
        let mut tokens = self.advance(t) + restore;
        let burst = self.burst as f64;
        if tokens > burst {
            tokens = burst;
        }
        self.last = t;
        self.tokens = tokens;
        if r.time_to_act == self.last_event {
            let prev_event = go::add(r.time_to_act, duration_from_tokens(r.limit, -(r.tokens as f64)));
            if prev_event >= t {
                self.last_event = prev_event;
            }
        }
    }

    /// Go's `SetLimitAt(t, newLimit)`: refills up to `now_micros` at the old
    /// rate, then changes it. Reservations already made keep their times.
    ///
    /// Errors, changing nothing, on a negative or NaN rate.
    pub fn set_rate(&mut self, rate: f64, now_micros: i64) -> Result<(), Error> {
        let limit = check_rate(rate)?;
        let t = self.clamp(nanos(now_micros));
        self.tokens = self.advance(t);
        self.last = t;
        self.limit = limit;
        Ok(())
    }

    /// Go's `SetBurstAt(t, newBurst)`: refills up to `now_micros` (capped at
    /// the old burst), then changes the burst. Tokens above a smaller new
    /// burst are kept until the next refill caps them, as in Go.
    ///
    /// Errors, changing nothing, when `burst` is above `i64::MAX`.
    pub fn set_burst(&mut self, burst: u64, now_micros: i64) -> Result<(), Error> {
        let burst = check_burst(burst)?;
        let t = self.clamp(nanos(now_micros));
        self.tokens = self.advance(t);
        self.last = t;
        self.burst = burst;
        Ok(())
    }

    /// The time a call at `t` runs at: never earlier than the latest update,
    /// so that time going backwards cannot refill anything twice.
    #[inline]
    fn clamp(&self, t: i64) -> i64 {
        t.max(self.last)
    }

    /// Go's `reserveN(t, n, maxFutureReserve)`.
    #[inline]
    fn reserve(&mut self, t: i64, n: u64, max_future_reserve: i64) -> Reservation {
        self.reserve_and_count(t, n, max_future_reserve).0
    }

    /// Go's `reserveN`, also returning the tokens at `t` after it (for the
    /// decision, without a second `advance`) and the wait it granted.
    #[inline]
    fn reserve_and_count(&mut self, t: i64, n: u64, max_future_reserve: i64) -> (Reservation, f64, i64) {
        if self.limit == INF {
            return (Reservation { ok: true, tokens: n, time_to_act: t, limit: 0.0 }, self.burst as f64, 0);
        }
        let available = self.advance(t);
        let tokens = available - n as f64;
        let wait = if tokens < 0.0 { duration_from_tokens(self.limit, -tokens) } else { 0 };
        let ok = n <= self.burst && wait <= max_future_reserve;
        if !ok {
            return (Reservation { ok: false, tokens: 0, time_to_act: 0, limit: self.limit }, available, 0);
        }
        let time_to_act = go::add(t, wait);
        self.last = t;
        self.tokens = tokens;
        self.last_event = time_to_act;
        (Reservation { ok, tokens: n, time_to_act, limit: self.limit }, tokens, wait)
    }

    /// Go's `advance(t)`: the tokens at `t`, refilled since `last` and capped
    /// at the burst. Changes nothing.
    #[inline]
    fn advance(&self, t: i64) -> f64 {
        let last = if t < self.last { t } else { self.last };
        let elapsed = go::sub(t, last);
        let tokens = self.tokens + tokens_from_duration(self.limit, elapsed);
        let burst = self.burst as f64;
        if tokens > burst {
            burst
        } else {
            tokens
        }
    }

    /// The decision for a request of `n` tokens that left `tokens` (at the
    /// time of the decision).
    #[inline]
    fn decision(&self, n: u64, allowed: bool, tokens: f64) -> Decision {
        if self.limit == INF {
            // Nothing is ever refused or owed: the bucket is always whole.
            return Decision::allowed(self.burst, self.burst, 0, 0);
        }
        let burst = self.burst as f64;
        let window = report(duration_from_tokens(self.limit, burst));
        // `as` saturates: a negative balance (reservations outstanding) is 0.
        // Capped at the burst: a burst above 2^53 is not exact as a double
        // (`i64::MAX` tokens read back as 2^63), and nothing can remain
        // beyond the quota.
        let remaining = (tokens as u64).min(self.burst);
        let reset_after = if tokens >= burst { 0 } else { report(duration_from_tokens(self.limit, burst - tokens)) };
        if allowed {
            return Decision::allowed(self.burst, remaining, reset_after, window);
        }
        let retry_after =
            if n > self.burst { NEVER } else { report(duration_from_tokens(self.limit, n as f64 - tokens)) };
        Decision::refused(self.burst, remaining, retry_after, reset_after, window)
    }
}

impl Admission for TokenBucket {
    /// Go's `AllowN(t, n)`, answered as a [`Decision`]: `limit` is the
    /// burst, `remaining` the whole tokens left, `window_micros` the time to
    /// refill from empty.
    ///
    /// A cost of 0 is refused while reservations hold the bucket in debt,
    /// as Go's `AllowN(t, 0)` is (with the retry-after that pays the debt);
    /// it is the one exception to "a cost of 0 is always admitted".
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let t = self.clamp(nanos(now_micros));
        let (r, tokens, _) = self.reserve_and_count(t, cost, 0);
        self.decision(cost, r.ok, tokens)
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        let mut copy = *self;
        copy.check(cost, now_micros)
    }

    /// Puts `cost` tokens back at `now_micros`, capped at the burst: what
    /// `Reservation.CancelAt` restores for a reservation that has already
    /// acted (an [`allow_n`](TokenBucket::allow_n) or a `check`), reckoned
    /// the way it reckons it. x/time/rate keeps the tokens that reservations
    /// made after it depend on; an anonymous refund cannot tell which
    /// reservation it gives back, so it takes every outstanding one as
    /// made after it: while reservations hold the bucket in debt, only what
    /// exceeds the debt comes back (never more than Go would restore).
    /// Under an infinite rate there is nothing to give back.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        if self.limit == INF || cost == 0 {
            return;
        }
        let t = self.clamp(nanos(now_micros));
        let available = self.advance(t);
        let debt = if available < 0.0 { -available } else { 0.0 };
        let restore = cost as f64 - debt;
        if restore <= 0.0 {
            return;
        }
        let burst = self.burst as f64;
        let tokens = available + restore;
        self.tokens = if tokens > burst { burst } else { tokens };
        self.last = t;
    }
}

/// Full when the bucket has refilled to its burst (Go's `advance` caps the
/// tokens there, so nothing of the past shows any more), at a time no
/// earlier than its last update; or, under an infinite rate, always (no
/// decision reads the state then).
///
/// (`last_event` is read only by [`TokenBucket::cancel_at`], for a
/// reservation this state handed out; a fresh state has none, so a keyed
/// limiter that drops states must not cancel reservations across a drop.)
impl Full for TokenBucket {
    fn fresh(&self) -> Self {
        TokenBucket { tokens: self.burst as f64, last: 0, last_event: 0, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        if now_micros < 0 {
            return false;
        }
        if self.limit == INF {
            return true;
        }
        let t = nanos(now_micros);
        t >= self.last && self.advance(t) >= self.burst as f64
    }

    /// A lower bound: the refill time is computed in doubles, as Go's
    /// `durationFromTokens` does, then moved earlier by a part in 10⁹ and
    /// 2 µs, far more than the rounding of either that computation or
    /// `advance`'s.
    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        if self.limit <= 0.0 || self.limit.is_nan() {
            return NEVER;
        }
        let deficit = self.burst as f64 - self.tokens;
        let nanos_needed = (deficit / self.limit) * go::SECOND as f64 * (1.0 - 1e-9) - 2_000.0;
        // `as` saturates (and sends NaN to 0): a lower bound either way.
        let at_nanos = self.last.saturating_add(nanos_needed.max(0.0) as i64);
        later_than(now_micros, at_nanos.div_euclid(1_000).max(0))
    }
}

/// Words: the three a decision changes (tokens, last, last event), then the
/// configuration.
impl Packed<5> for TokenBucket {
    /// `allow_n`, `reserve_n`, `wait_n` and `cancel_at` change only the
    /// tokens and the two times; `set_rate` and `set_burst` change the rest.
    const HOT: usize = 3;

    #[inline]
    fn pack(&self) -> [u64; 5] {
        [self.tokens.to_bits(), self.last as u64, self.last_event as u64, self.limit.to_bits(), self.burst]
    }

    #[inline]
    fn unpack(w: [u64; 5]) -> Self {
        TokenBucket {
            tokens: f64::from_bits(w[0]),
            last: w[1] as i64,
            last_event: w[2] as i64,
            limit: f64::from_bits(w[3]),
            burst: w[4],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000;

    #[test]
    fn starts_full_and_refills_at_the_rate() {
        // x/time/rate's TestLimiterBurst1-style walk: 10/s, burst 2.
        let mut b = TokenBucket::new(10.0, 2).unwrap();
        assert!(b.allow_n(1, 0));
        assert!(b.allow_n(1, 0));
        assert!(!b.allow_n(1, 0));
        assert!(!b.allow_n(1, 99 * MS));
        assert!(b.allow_n(1, 100 * MS));
        assert!(b.allow_n(1, 300 * MS));
        assert!(b.allow_n(1, 300 * MS));
        assert!(!b.allow_n(1, 300 * MS));
        assert_eq!(b.tokens_at(350 * MS), 0.5);
    }

    /// Found by the fuzz target (`token_bucket`): after a cancel let two
    /// later reservations act before a third made earlier, cancelling the
    /// third gave back 205 tokens for the 77 it held (Go's `CancelAt`
    /// reckons the tokens reserved after it from a negative duration).
    #[test]
    fn a_cancel_never_gives_back_more_than_it_held() {
        let mut b = TokenBucket::new(344.76, 256).unwrap();
        for n in [34, 8, 34, 18, 229] {
            assert!(b.reserve_n(n, 0).ok());
        }
        let mut a = b.reserve_n(229, 0);
        let mut c = b.reserve_n(77, 0);
        b.cancel_at(&mut a, 0);
        assert!(b.reserve_n(6, 0).ok());
        assert!(b.reserve_n(18, 0).ok());
        assert!(c.time_to_act_nanos() > b.pack()[2] as i64, "the latest event now comes before c");
        let before = b.tokens_at(0);
        b.cancel_at(&mut c, 0);
        let given_back = b.tokens_at(0) - before;
        assert!(given_back <= 77.0, "gave back {given_back} tokens for 77");
        assert_eq!(given_back, 77.0);
    }

    #[test]
    fn reservations_wait_and_cancel_gives_tokens_back() {
        let mut b = TokenBucket::new(10.0, 1).unwrap();
        let first = b.reserve_n(1, 0);
        assert!(first.ok());
        assert_eq!(first.delay_micros(0), 0);
        let mut second = b.reserve_n(1, 0);
        assert_eq!(second.delay_micros(0), 100 * MS);
        let third = b.reserve_n(1, 0);
        assert_eq!(third.delay_micros(0), 200 * MS);
        // Cancelling the second gives back nothing: the third depends on it.
        b.cancel_at(&mut second, 10 * MS);
        assert_eq!(b.tokens_at(10 * MS), -1.9);
        assert_eq!(second.tokens(), 0);
        // Cancelling the last one gives its token back.
        let mut b = TokenBucket::new(10.0, 1).unwrap();
        b.reserve_n(1, 0);
        let mut r = b.reserve_n(1, 0);
        b.cancel_at(&mut r, 0);
        assert_eq!(b.tokens_at(0), 0.0);
        // And a second cancel changes nothing.
        let before = b;
        b.cancel_at(&mut r, 0);
        assert_eq!(b, before);
    }

    #[test]
    fn requests_above_the_burst_are_never_admitted() {
        let mut b = TokenBucket::new(1.0, 3).unwrap();
        let before = b;
        assert!(!b.reserve_n(4, 0).ok());
        assert_eq!(b.reserve_n(4, 0).delay_micros(0), NEVER);
        let d = b.check(4, 0);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_micros, NEVER);
        assert_eq!(b, before);
    }

    #[test]
    fn infinite_rate_admits_everything_even_with_no_burst() {
        let mut b = TokenBucket::new(f64::INFINITY, 0).unwrap();
        assert_eq!(b.rate(), f64::INFINITY);
        assert!(b.allow_n(1_000_000, 0));
        assert!(b.check(u64::MAX, 5).allowed);
        let before = b;
        assert_eq!(b.reserve_n(7, 9).delay_micros(9), 0);
        assert_eq!(b, before, "Inf changes no state");
        // f64::MAX is Go's rate.Inf itself.
        assert_eq!(TokenBucket::new(f64::MAX, 0).unwrap(), TokenBucket::new(f64::INFINITY, 0).unwrap());
    }

    #[test]
    fn zero_burst_refuses_and_zero_rate_never_refills() {
        let mut b = TokenBucket::new(100.0, 0).unwrap();
        assert!(!b.allow_n(1, 0));
        assert!(b.allow_n(0, 0));
        let mut b = TokenBucket::new(0.0, 2).unwrap();
        assert!(b.allow_n(2, 0));
        let d = b.check(1, 1_000_000_000);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_micros, NEVER);
        assert_eq!(d.reset_after_micros, NEVER);
        // Go's ReserveN (no maximum wait) grants it, InfDuration from now.
        let r = b.reserve_n(1, 0);
        assert!(r.ok());
        assert_eq!(r.delay_micros(0), NEVER);
        assert_eq!(r.delay_micros(5), NEVER);
    }

    #[test]
    fn wait_n_refuses_what_the_deadline_cannot_cover() {
        let mut b = TokenBucket::new(10.0, 1).unwrap();
        assert!(b.allow_n(1, 0));
        let before = b;
        assert!(!b.wait_n(1, 0, 99_999).ok());
        assert_eq!(b, before);
        let r = b.wait_n(1, 0, 100_000);
        assert!(r.ok());
        assert_eq!(r.delay_micros(0), 100_000);
        let d = b.check_within(1, 0, 200_000);
        assert!(d.allowed);
        assert_eq!(d.wait_micros, 200_000);
        assert_eq!(b.check_within(1, 0, 0).retry_after_micros, 300_000);
    }

    #[test]
    fn set_rate_and_set_burst_keep_the_tokens() {
        let mut b = TokenBucket::new(1.0, 10).unwrap();
        assert!(b.allow_n(10, 0));
        b.set_rate(2.0, 1_000_000).unwrap(); // 1 token at the old rate
        assert_eq!(b.tokens_at(1_000_000), 1.0);
        assert_eq!(b.tokens_at(2_000_000), 3.0);
        b.set_burst(2, 2_000_000).unwrap(); // keeps 3 until the next refill caps it
        assert_eq!(b.tokens, 3.0);
        assert_eq!(b.tokens_at(2_500_000), 2.0);
        let before = b;
        assert!(b.set_rate(f64::NAN, 3_000_000).is_err());
        assert!(b.set_rate(-1.0, 3_000_000).is_err());
        assert!(b.set_burst(u64::MAX, 3_000_000).is_err());
        assert_eq!(b, before);
    }

    #[test]
    fn decisions_report_remaining_reset_and_window() {
        let mut b = TokenBucket::new(3.0, 3).unwrap();
        let d = b.check(1, 0);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 3, 2));
        // One token at 3/s is 333,333,333.33 ns: reported rounded up.
        assert_eq!(d.reset_after_micros, 333_334);
        assert_eq!(d.window_micros, 1_000_000);
        b.check(2, 0);
        let d = b.check(2, 0);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_micros, 666_667);
        assert_eq!(d.reset_after_micros, 1_000_000);
        assert_eq!(b.peek(2, 1_000_000).remaining, 1);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        for rate in [f64::NAN, -1.0, f64::NEG_INFINITY, -f64::MIN_POSITIVE] {
            assert_eq!(TokenBucket::new(rate, 1), Err(Error::invalid_float(Argument::Rate, rate)), "{rate}");
        }
        assert!(TokenBucket::new(1.0, i64::MAX as u64 + 1).is_err());
        assert!(TokenBucket::new(-0.0, 1).is_ok());
    }

    #[test]
    fn time_going_backwards_mints_nothing() {
        let mut b = TokenBucket::new(10.0, 5).unwrap();
        assert!(b.allow_n(5, 1_000_000));
        assert!(!b.allow_n(1, 0));
        assert!(!b.allow_n(1, i64::MIN));
        assert_eq!(b.tokens_at(1_000_000), 0.0);
        assert_eq!(b.tokens_at(i64::MIN), 0.0);
        assert!(b.allow_n(1, 1_100_000));
        assert!(!b.allow_n(1, 1_100_000));
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/token_bucket.rs): a finite
    /// timeout (or deadline) beyond 2^63 nanoseconds saturated to Go's
    /// `InfDuration`, so a zero rate granted a reservation that never comes
    /// to a caller who would wait only that long.
    #[test]
    fn a_finite_timeout_is_never_infinite() {
        let mut b = TokenBucket::new(0.0, 37).unwrap();
        assert!(b.reserve_n(33, 0).ok());
        let before = b;
        let d = b.check_within(33, 0, 1_572_918_596_036_491_263);
        assert!(!d.allowed, "{d:?}");
        assert_eq!(b, before);
        assert!(!b.wait_n(33, 0, i64::MAX - 1).ok());
        assert_eq!(b, before);
        // No timeout (i64::MAX) still waits as long as it takes.
        let d = b.check_within(33, 0, i64::MAX);
        assert!(d.allowed && d.wait_micros == NEVER, "{d:?}");
    }

    /// What the fuzzer (fuzz/fuzz_targets/token_bucket.rs) found: a look
    /// of cost 0 is refused while reservations hold the bucket in debt,
    /// because Go's `AllowN(t, 0)` is (the `Admission` docs said every
    /// algorithm admits a cost of 0; they now name this exception). It
    /// takes nothing, and says when the debt is paid.
    #[test]
    fn a_look_of_cost_zero_in_debt_is_refused_as_in_go() {
        let mut b = TokenBucket::new(1.0, 1).unwrap();
        assert!(b.reserve_n(1, 0).ok() && b.reserve_n(1, 0).ok());
        let before = b;
        let d = b.check(0, 0);
        assert!(!d.allowed && d.remaining == 0, "{d:?}");
        assert_eq!((d.retry_after_micros, d.reset_after_micros), (1_000_000, 2_000_000));
        assert_eq!(b, before, "a refused look takes nothing");
        assert!(!b.allow_n(0, 0) && !b.check_within(0, 0, 999_999).allowed);
        assert!(b.check(0, 1_000_000).allowed, "debt paid: admitted");
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/token_bucket.rs): at a time
    /// that saturates the nanosecond clock (about 292 years in), an
    /// admission within a timeout of 0 reported a wait of `NEVER`, because
    /// its time to act read as the end of time.
    #[test]
    fn check_within_never_waits_beyond_its_timeout() {
        let mut b = TokenBucket::new(0.0, 38).unwrap();
        let d = b.check_within(0, 7_492_623_237_875_497_730, 0);
        assert!(d.allowed);
        assert_eq!(d.wait_micros, 0);
        let d = b.check_within(1, i64::MAX, 5);
        assert!(d.allowed && d.wait_micros == 0, "{d:?}");
        // A zero rate still grants what it cannot cover with no timeout,
        // and says it never comes.
        let mut b = TokenBucket::new(0.0, 2).unwrap();
        assert!(b.check_within(2, 0, 0).allowed);
        let d = b.check_within(1, 0, i64::MAX);
        assert!(d.allowed && d.wait_micros == NEVER, "{d:?}");
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/token_bucket.rs): under an
    /// unlimited rate, `wait_n` with a deadline already past was granted
    /// (a finite rate refuses it, and so does Go's `WaitN`).
    #[test]
    fn wait_n_refuses_a_deadline_already_past_at_any_rate() {
        for rate in [f64::INFINITY, 1e9, 0.0] {
            let mut b = TokenBucket::new(rate, 5).unwrap();
            let before = b;
            let r = b.wait_n(1, 10, 9);
            assert!(!r.ok(), "rate {rate}: {r:?}");
            assert_eq!(b, before);
            assert!(b.wait_n(1, 10, 10).ok(), "rate {rate}: a deadline of now can be met");
        }
    }

    /// Found by the fuzzer (fuzz/fuzz_targets/token_bucket.rs): a burst of
    /// `i64::MAX` tokens is 2^63 as a double, and the decision said one
    /// more unit remained than the limit.
    #[test]
    fn remaining_never_exceeds_the_burst() {
        let mut b = TokenBucket::new(0.0, i64::MAX as u64).unwrap();
        let d = b.check(0, 0);
        assert_eq!((d.limit, d.remaining), (i64::MAX as u64, i64::MAX as u64));
        let d = b.check(1 << 20, 0);
        assert!(d.allowed && d.remaining <= d.limit, "{d:?}");
        let mut b = TokenBucket::new(1.0, (1 << 53) + 1).unwrap();
        let d = b.check(0, 0);
        assert!(d.remaining <= d.limit, "{d:?}");
    }

    #[test]
    fn extreme_inputs_never_panic() {
        for rate in [0.0, 1e-300, 1e-9, 1.0, 1e300, f64::MAX, f64::INFINITY] {
            for burst in [0, 1, i64::MAX as u64] {
                let mut b = TokenBucket::new(rate, burst).unwrap();
                for now in [i64::MIN, -1, 0, 1, i64::MAX / 1000, i64::MAX] {
                    for n in [0, 1, u64::MAX] {
                        let _ = b.check(n, now);
                        let mut r = b.reserve_n(n, now);
                        let _ = r.delay_micros(now);
                        let _ = b.wait_n(n, now, i64::MIN);
                        let _ = b.check_within(n, now, i64::MAX);
                        b.cancel_at(&mut r, now);
                        let _ = b.tokens_at(now);
                    }
                }
                b.set_rate(rate, i64::MAX).unwrap();
                b.set_burst(burst, 0).unwrap();
            }
        }
    }

    #[test]
    fn packing_round_trips_and_decisions_touch_only_hot_words() {
        let mut b = TokenBucket::new(7.5, 4).unwrap();
        let before = b.pack();
        b.check(3, 10);
        let mut r = b.reserve_n(2, 20);
        b.cancel_at(&mut r, 30);
        b.wait_n(1, 40, 1_000_000);
        assert_eq!(before[TokenBucket::HOT..], b.pack()[TokenBucket::HOT..]);
        assert_eq!(TokenBucket::unpack(b.pack()), b);
    }
}
