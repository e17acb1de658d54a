//! [`Decision`]: the one answer every admission-style algorithm gives, and
//! the HTTP fields it becomes.
//!
//! Whatever the algorithm — token bucket, GCRA, leaky bucket, a window — a
//! request is answered with the same five facts that redis-cell's
//! `CL.THROTTLE` replies with and that the HTTP `RateLimit` fields carry:
//! whether it was allowed, the quota, what is left of it, when to retry, and
//! when the quota is whole again. A refusal is such a value, never an error.
//!
//! The module also owns the formatting of those facts as the fields of
//! [draft-ietf-httpapi-ratelimit-headers] (revision 10, September 2025) and
//! as `Retry-After` ([RFC 9110 §10.2.3]), written through
//! [`core::fmt::Write`] so that it needs no allocation:
//!
//! ```text
//! RateLimit-Policy: "per-second";q=10;w=1
//! RateLimit: "per-second";r=3;t=1
//! Retry-After: 2
//! ```
//!
//! Seconds in these fields are whole numbers ("delay-seconds"); every
//! duration is rounded *up* to the next second, so a client that waits as
//! told is never early.
//!
//! [draft-ietf-httpapi-ratelimit-headers]: https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
//! [RFC 9110 §10.2.3]: https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3

use core::fmt;

/// A duration (in microseconds) that never ends: the `retry_after_micros` of
/// a request no wait can admit (it costs more than the limiter can ever
/// hold), or the `reset_after_micros` of a limiter that never refills.
pub const NEVER: i64 = i64::MAX;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// The answer to one request, from any admission-style algorithm.
///
/// Every field is a plain number so that the language bindings can hand it
/// over as it is. Durations are whole microseconds from the moment of the
/// decision; [`NEVER`] (`i64::MAX`) means "never".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decision {
    /// Whether the request was admitted (and its cost consumed). A refused
    /// request consumed nothing.
    pub allowed: bool,
    /// The quota: the most units the limiter can admit at once when it is
    /// whole (a token bucket's burst, redis-cell's `max_burst + 1`, a
    /// window's limit). The `q` of `RateLimit-Policy`.
    pub limit: u64,
    /// Units that could still be admitted right now, after this decision.
    /// The `r` of `RateLimit`.
    pub remaining: u64,
    /// For a refused request, how long until the same request would be
    /// admitted ([`NEVER`] when no wait can help because the request costs
    /// more than `limit`); 0 for an admitted one.
    pub retry_after_micros: i64,
    /// How long until the limiter is whole again (`remaining == limit`) if
    /// nothing else is admitted meanwhile; [`NEVER`] when it does not refill.
    /// The `t` of `RateLimit`, and redis-cell's `reset_after`.
    pub reset_after_micros: i64,
    /// For an admitted request, how long the caller must wait before acting
    /// on it: the slot a shaper (the leaky bucket as a queue) or a
    /// reservation gave it. 0 for policing algorithms, which admit now or
    /// refuse.
    pub wait_micros: i64,
    /// The time over which `limit` is granted: a window's length, or the time
    /// a bucket takes to refill from empty ([`NEVER`] if it never does). The
    /// `w` of `RateLimit-Policy`.
    pub window_micros: i64,
}

impl Decision {
    /// An admitted request's decision with no wait.
    pub const fn allowed(limit: u64, remaining: u64, reset_after_micros: i64, window_micros: i64) -> Self {
        Decision {
            allowed: true,
            limit,
            remaining,
            retry_after_micros: 0,
            reset_after_micros,
            wait_micros: 0,
            window_micros,
        }
    }

    /// A refused request's decision.
    pub const fn refused(
        limit: u64,
        remaining: u64,
        retry_after_micros: i64,
        reset_after_micros: i64,
        window_micros: i64,
    ) -> Self {
        Decision {
            allowed: false,
            limit,
            remaining,
            retry_after_micros,
            reset_after_micros,
            wait_micros: 0,
            window_micros,
        }
    }

    /// Whether no wait can ever admit this request.
    pub const fn is_never(&self) -> bool {
        !self.allowed && self.retry_after_micros == NEVER
    }

    /// The `Retry-After` field's value: whole seconds, rounded up, for a
    /// refused request that a wait can admit. `None` for an admitted request
    /// and for one that no wait can admit (send no `Retry-After` then: the
    /// field cannot say "never").
    pub const fn retry_after_secs(&self) -> Option<u64> {
        if self.allowed || self.retry_after_micros == NEVER {
            None
        } else {
            Some(ceil_secs(self.retry_after_micros))
        }
    }

    /// The `t` of `RateLimit` (and every draft's reset): whole seconds until
    /// the limiter is whole again, rounded up; `None` when it never refills.
    pub const fn reset_after_secs(&self) -> Option<u64> {
        if self.reset_after_micros == NEVER {
            None
        } else {
            Some(ceil_secs(self.reset_after_micros))
        }
    }

    /// The `w` of `RateLimit-Policy` (every draft's window): whole seconds,
    /// rounded up and at least 1 as the draft requires; `None` when the
    /// window is [`NEVER`] or empty.
    pub const fn window_secs(&self) -> Option<u64> {
        if self.window_micros == NEVER || self.window_micros <= 0 {
            None
        } else {
            let secs = ceil_secs(self.window_micros);
            Some(if secs == 0 { 1 } else { secs })
        }
    }

    /// Writes this decision as one Service Limit Item of the `RateLimit`
    /// field: `"name";r=REMAINING;t=SECONDS`, `t` rounded up and left out
    /// when the limiter never refills.
    ///
    /// Several policies go in one field separated by `", "`. Errors (writing
    /// nothing) when `name` is not printable ASCII, which a Structured Field
    /// String cannot carry; check it first with [`check_policy_name`].
    pub fn write_ratelimit<W: fmt::Write>(&self, name: &str, out: &mut W) -> fmt::Result {
        check_policy_name(name).map_err(|_| fmt::Error)?;
        write_sf_string(out, name)?;
        out.write_str(";r=")?;
        write_u64(out, self.remaining)?;
        if let Some(t) = self.reset_after_secs() {
            out.write_str(";t=")?;
            write_u64(out, t)?;
        }
        Ok(())
    }

    /// Writes the policy behind this decision as one Quota Policy Item of
    /// the `RateLimit-Policy` field: `"name";q=LIMIT;w=SECONDS`, the window
    /// rounded up to a whole second (at least 1, as the draft requires) and
    /// left out when it is [`NEVER`].
    ///
    /// Errors (writing nothing) when `name` is not printable ASCII.
    pub fn write_ratelimit_policy<W: fmt::Write>(&self, name: &str, out: &mut W) -> fmt::Result {
        check_policy_name(name).map_err(|_| fmt::Error)?;
        write_sf_string(out, name)?;
        out.write_str(";q=")?;
        write_u64(out, self.limit)?;
        if let Some(w) = self.window_secs() {
            out.write_str(";w=")?;
            write_u64(out, w)?;
        }
        Ok(())
    }
}

/// Whole seconds in `micros`, rounded up; negative durations count as 0.
const fn ceil_secs(micros: i64) -> u64 {
    if micros <= 0 {
        0
    } else {
        // No overflow: `micros / 1e6 + 1` is far below `u64::MAX`.
        let whole = (micros / MICROS_PER_SECOND) as u64;
        if micros % MICROS_PER_SECOND == 0 {
            whole
        } else {
            whole + 1
        }
    }
}

/// Checks that `name` can be a policy name: a Structured Field String
/// ([RFC 9651 §3.3.3]) holds printable ASCII only (0x20 to 0x7E).
///
/// [RFC 9651 §3.3.3]: https://www.rfc-editor.org/rfc/rfc9651#section-3.3.3
pub fn check_policy_name(name: &str) -> Result<(), crate::Error> {
    match name.bytes().find(|b| !(0x20..=0x7e).contains(b)) {
        None => Ok(()),
        Some(b) => Err(crate::Error::invalid_int(crate::Argument::PolicyName, i64::from(b))),
    }
}

/// An SF String: quoted, with `"` and `\` escaped by a backslash. The
/// runs between escapes go out whole (most names have none: one write).
fn write_sf_string<W: fmt::Write>(out: &mut W, s: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut rest = s;
    while let Some(at) = rest.find(['"', '\\']) {
        out.write_str(&rest[..at])?;
        out.write_char('\\')?;
        // The escaped character is ASCII: one byte.
        out.write_str(&rest[at..=at])?;
        rest = &rest[at + 1..];
    }
    out.write_str(rest)?;
    out.write_char('"')
}

/// The longest `u64` in decimal: 18446744073709551615.
pub const U64_DIGITS: usize = 20;

/// `n` in decimal into the end of `buf`; the digits written are
/// `buf[start..]`, `start` returned. Without `core::fmt`'s general
/// machinery (padding, flags, a `dyn Write`): the header fields write a few
/// integers per request, and that machinery cost more than the rest of the
/// text together.
pub fn format_u64(n: u64, buf: &mut [u8; U64_DIGITS]) -> usize {
    let mut n = n;
    let mut start = U64_DIGITS;
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return start;
        }
    }
}

/// Writes `n` in decimal, as `write!(out, "{n}")` does, through
/// [`format_u64`].
pub fn write_u64<W: fmt::Write>(out: &mut W, n: u64) -> fmt::Result {
    let mut buf = [0u8; U64_DIGITS];
    let start = format_u64(n, &mut buf);
    // Only ASCII digits were written.
    out.write_str(core::str::from_utf8(&buf[start..]).map_err(|_| fmt::Error)?)
}

/// Combines the decisions of several limits that must *all* admit a request
/// (a composite such as "10 per second and 1,000 per hour").
///
/// Allowed when every part is. Then the limit, remaining and window are
/// those of the part with the fewest units left (what a client most needs
/// to see), and the reset-after and wait are the longest. Refused when any
/// part is: then they are the refusing part's with the longest
/// retry-after — the one the client is waiting for — and the retry-after is
/// that longest one (a request can be admitted only when its slowest limit
/// admits it, and a limit that admits it now still will then: waiting only
/// restores quota). Ties go to the first part.
///
/// Returns `None` for no parts.
pub fn combine(parts: impl IntoIterator<Item = Decision>) -> Option<Decision> {
    let mut parts = parts.into_iter();
    let mut out = parts.next()?;
    for d in parts {
        let wins = match (out.allowed, d.allowed) {
            (true, true) => d.remaining < out.remaining,
            (true, false) => true,
            (false, true) => false,
            (false, false) => d.retry_after_micros > out.retry_after_micros,
        };
        let reset_after = out.reset_after_micros.max(d.reset_after_micros);
        let wait = out.wait_micros.max(d.wait_micros);
        if wins {
            out = d;
        }
        out.reset_after_micros = reset_after;
        out.wait_micros = if out.allowed { wait } else { 0 };
    }
    Some(out)
}

/// Whole microseconds, rounded up, in `nanos` nanoseconds (negative → 0).
pub(crate) const fn micros_from_nanos_ceil(nanos: i64) -> i64 {
    if nanos <= 0 {
        0
    } else {
        let whole = nanos / 1_000;
        if nanos % 1_000 == 0 {
            whole
        } else {
            whole + 1
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::String;

    fn refused(retry: i64) -> Decision {
        Decision::refused(10, 0, retry, 5_000_000, 1_000_000)
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(refused(1).retry_after_secs(), Some(1));
        assert_eq!(refused(1_000_000).retry_after_secs(), Some(1));
        assert_eq!(refused(1_000_001).retry_after_secs(), Some(2));
        assert_eq!(refused(0).retry_after_secs(), Some(0));
        assert_eq!(refused(NEVER).retry_after_secs(), None);
        assert!(refused(NEVER).is_never());
        assert_eq!(Decision::allowed(10, 9, 100_000, 1_000_000).retry_after_secs(), None);
    }

    #[test]
    fn fields_follow_the_draft_syntax() {
        let d = Decision::allowed(100, 50, 29_500_000, 60_000_000);
        let mut s = String::new();
        d.write_ratelimit_policy("default", &mut s).unwrap();
        s.push_str(", ");
        d.write_ratelimit("default", &mut s).unwrap();
        assert_eq!(s, "\"default\";q=100;w=60, \"default\";r=50;t=30");

        let mut s = String::new();
        let never = Decision::refused(5, 0, NEVER, NEVER, NEVER);
        never.write_ratelimit("a \"quoted\" \\ name", &mut s).unwrap();
        assert_eq!(s, "\"a \\\"quoted\\\" \\\\ name\";r=0");
        let mut s = String::new();
        never.write_ratelimit_policy("p", &mut s).unwrap();
        assert_eq!(s, "\"p\";q=5");
        // A sub-second window still advertises w=1 (the draft wants >= 1).
        let mut s = String::new();
        Decision::allowed(1, 1, 0, 10).write_ratelimit_policy("p", &mut s).unwrap();
        assert_eq!(s, "\"p\";q=1;w=1");
    }

    #[test]
    fn integers_are_written_as_display_writes_them() {
        use std::string::ToString;
        for n in [0, 1, 9, 10, 99, 100, 1_000_000_007, u64::from(u32::MAX) + 1, u64::MAX - 1, u64::MAX] {
            let mut s = String::new();
            write_u64(&mut s, n).unwrap();
            assert_eq!(s, n.to_string());
        }
        let mut s = String::new();
        write_sf_string(&mut s, "\\\"ab\\").unwrap();
        assert_eq!(s, "\"\\\\\\\"ab\\\\\"");
    }

    #[test]
    fn names_outside_printable_ascii_are_refused() {
        let d = Decision::allowed(1, 1, 0, 1);
        let mut s = String::new();
        assert!(d.write_ratelimit("tab\there", &mut s).is_err());
        assert!(d.write_ratelimit_policy("é", &mut s).is_err());
        assert!(s.is_empty());
        let Err(crate::Error::InvalidArgument(e)) = check_policy_name("x\ny") else { panic!() };
        assert_eq!(e.argument(), crate::Argument::PolicyName);
        assert_eq!(e.value(), crate::Value::Int(10));
    }

    #[test]
    fn combine_takes_the_strictest_part() {
        let a = Decision::allowed(10, 7, 300_000, 1_000_000);
        let b = Decision::allowed(1000, 3, 3_600_000_000, 3_600_000_000);
        let both = combine([a, b]).unwrap();
        assert!(both.allowed);
        assert_eq!((both.limit, both.remaining, both.window_micros), (1000, 3, 3_600_000_000));
        assert_eq!(both.reset_after_micros, 3_600_000_000);
        let c = Decision::refused(10, 0, 100_000, 1_000_000, 1_000_000);
        let refused = combine([a, c, b]).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_micros, 100_000);
        // The refusing part is the one shown, even with more units left
        // than an admitting part.
        let d = Decision::refused(50, 5, 900_000, 2_000_000, 1_000_000);
        let refused = combine([b, d, c]).unwrap();
        assert_eq!((refused.limit, refused.remaining, refused.retry_after_micros), (50, 5, 900_000));
        assert_eq!(refused.reset_after_micros, 3_600_000_000);
        assert_eq!(combine([a, refused_never()]).unwrap().retry_after_micros, NEVER);
        assert_eq!(combine(core::iter::empty()), None);
    }

    fn refused_never() -> Decision {
        Decision::refused(1, 0, NEVER, 0, 1)
    }

    #[test]
    fn rounding_helpers() {
        assert_eq!(micros_from_nanos_ceil(-5), 0);
        assert_eq!(micros_from_nanos_ceil(1), 1);
        assert_eq!(micros_from_nanos_ceil(1_000), 1);
        assert_eq!(micros_from_nanos_ceil(1_001), 2);
        assert_eq!(micros_from_nanos_ceil(i64::MAX), i64::MAX / 1000 + 1);
    }
}
