//! [`rk_decision`], the one answer of every admission-style limiter, and
//! the HTTP fields it becomes (`RateLimit`, `RateLimit-Policy`,
//! `Retry-After`), written into the caller's buffers.
//!
//! The formatting is the std layer's (`ratekeeper::headers`, after
//! draft-ietf-httpapi-ratelimit-headers); this module converts the
//! arguments and owns the buffer protocol ([`write_text`]).

use core::ffi::{c_char, CStr};

use ratekeeper::core::decision::check_policy_name;
use ratekeeper::{headers, Argument, Decision, Error};

use crate::boundary::{guard, Out};
use crate::failure::Failure;
use crate::status::rk_status;

/// A duration that never ends, in microseconds (`INT64_MAX`): the
/// `retry_after_micros` of a request no wait can admit (it costs more than
/// the limiter can ever hold), the `reset_after_micros` of a limiter that
/// never refills.
pub const RK_NEVER: i64 = 9_223_372_036_854_775_807;

/// What an admission-style limiter answered to one request: the same facts
/// whatever the algorithm (redis-cell's `CL.THROTTLE` reply, and what the
/// HTTP `RateLimit` fields carry). A refusal is a decision, not an error:
/// the call returns `RK_OK` with `allowed` false, and consumed nothing.
///
/// Durations are whole microseconds from the moment of the decision;
/// `RK_NEVER` means never.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rk_decision {
    /// Whether the request was admitted (and its cost consumed).
    pub allowed: bool,
    /// The quota: the most units the limiter admits at once when whole (a
    /// token bucket's burst, a GCRA's `max_burst + 1`, a window's limit).
    /// The `q` of `RateLimit-Policy`.
    pub limit: u64,
    /// Units that could still be admitted now, after this decision. The
    /// `r` of `RateLimit`.
    pub remaining: u64,
    /// Refused: how long until the same request would be admitted
    /// (`RK_NEVER` when it costs more than `limit`). 0 when admitted.
    pub retry_after_micros: i64,
    /// How long until the limiter is whole again if nothing else is
    /// admitted (`RK_NEVER` when it never refills). The `t` of `RateLimit`.
    pub reset_after_micros: i64,
    /// Admitted: how long the caller must wait before acting (the slot a
    /// leaky bucket queue or a token bucket reservation gave it). 0 for the
    /// algorithms that admit now or refuse.
    pub wait_micros: i64,
    /// The time over which `limit` is granted (a window's length, a
    /// bucket's time to refill from empty; `RK_NEVER` if it never does).
    /// The `w` of `RateLimit-Policy`.
    pub window_micros: i64,
}

impl From<Decision> for rk_decision {
    #[inline]
    fn from(d: Decision) -> Self {
        rk_decision {
            allowed: d.allowed,
            limit: d.limit,
            remaining: d.remaining,
            retry_after_micros: d.retry_after_micros,
            reset_after_micros: d.reset_after_micros,
            wait_micros: d.wait_micros,
            window_micros: d.window_micros,
        }
    }
}

impl From<&rk_decision> for Decision {
    fn from(d: &rk_decision) -> Self {
        Decision {
            allowed: d.allowed,
            limit: d.limit,
            remaining: d.remaining,
            retry_after_micros: d.retry_after_micros,
            reset_after_micros: d.reset_after_micros,
            wait_micros: d.wait_micros,
            window_micros: d.window_micros,
        }
    }
}

/// Writes `text` into the caller's buffer, the protocol of every function
/// that returns a string: `buf_len` 0 asks for the size (`buf` may then be
/// NULL) and stores the length in `*out_len`; otherwise `buf` must hold the
/// text and its NUL, or nothing is written and the status is
/// `RK_BUFFER_TOO_SMALL`. `*out_len` never counts the NUL.
///
/// # Safety
/// `buf` is NULL or valid for writing `buf_len` bytes.
pub unsafe fn write_text(text: &str, buf: *mut c_char, buf_len: usize, out_len: Out<usize>) -> Result<(), Failure> {
    if buf_len > 0 {
        if buf.is_null() {
            return Err(Failure::NullPointer { argument: "buf" });
        }
        if buf_len <= text.len() {
            return Err(Failure::BufferTooSmall {
                argument: "buf_len",
                needed: text.len() + 1,
                given: buf_len,
                unit: "bytes (the NUL included)",
            });
        }
        // SAFETY: the caller's contract; `text.len() + 1 <= buf_len`.
        unsafe {
            core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
            buf.add(text.len()).write(0);
        }
    }
    out_len.write(text.len());
    Ok(())
}

/// A policy name from C: a NUL-terminated string of printable ASCII (what
/// an HTTP Structured Field String holds). Anything else is the std
/// layer's `PolicyName` error, naming the first byte that is not.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string that outlives `'a`.
unsafe fn policy_name<'a>(name: *const c_char, argument: &'static str) -> Result<&'a str, Failure> {
    if name.is_null() {
        return Err(Failure::NullPointer { argument });
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
    match core::str::from_utf8(bytes) {
        Ok(text) => {
            check_policy_name(text)?;
            Ok(text)
        }
        Err(e) => {
            // The valid part may already hold a byte that is not printable;
            // else the first byte of the invalid sequence is the culprit.
            let valid = &bytes[..e.valid_up_to()];
            check_policy_name(core::str::from_utf8(valid).unwrap_or_default())?;
            Err(Error::invalid_int(Argument::PolicyName, i64::from(bytes[e.valid_up_to()])).into())
        }
    }
}

/// `count` decisions and their names from C, as the std layer takes them.
///
/// # Safety
/// `decisions` and `names` are NULL or valid for reading `count` elements,
/// each name NULL or a NUL-terminated string.
pub(crate) unsafe fn named<'a>(
    decisions: *const rk_decision,
    names: *const *const c_char,
    count: usize,
) -> Result<Vec<(&'a str, Decision)>, Failure> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if decisions.is_null() {
        return Err(Failure::NullPointer { argument: "decisions" });
    }
    if names.is_null() {
        return Err(Failure::NullPointer { argument: "names" });
    }
    // SAFETY: the caller's contract.
    let (decisions, names) =
        unsafe { (core::slice::from_raw_parts(decisions, count), core::slice::from_raw_parts(names, count)) };
    decisions
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, (d, &name))| {
            // SAFETY: the caller's contract.
            let name = unsafe { policy_name(name, "names") }.map_err(|f| Failure::in_element("names", i, f))?;
            Ok((name, Decision::from(d)))
        })
        .collect()
}

/// Writes the value of the HTTP `RateLimit` field for one decision under
/// the policy name `name`: `"name";r=REMAINING;t=SECONDS` (seconds rounded
/// up; no `t` when the limiter never refills), after
/// draft-ietf-httpapi-ratelimit-headers, into `buf`, NUL-terminated, and its
/// length (without the NUL) in `*out_len`.
///
/// The buffer protocol of every string this library writes: pass `buf_len`
/// 0 (and `buf` NULL) to get the length only, then a buffer of at least
/// `*out_len + 1` bytes. A buffer that is too small gets nothing and the
/// call returns `RK_BUFFER_TOO_SMALL`. `2 * strlen(name) + 64` bytes are
/// always enough.
///
/// Returns `RK_INVALID_ARGUMENT` when `name` holds a byte that is not
/// printable ASCII (0x20 to 0x7E; the message names the first one);
/// `RK_NULL_POINTER` when `decision`, `name` or `out_len` is NULL, or `buf`
/// is NULL with a `buf_len` above 0.
///
/// # Safety
/// `decision` is NULL or valid for reading; `name` is NULL or a
/// NUL-terminated string; `buf` is NULL or valid for writing `buf_len`
/// bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_decision_write_ratelimit(
    decision: *const rk_decision,
    name: *const c_char,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_decision_write_ratelimit", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let decision = Decision::from(crate::boundary::handle(decision, "decision")?);
            let name = policy_name(name, "name")?;
            write_text(&headers::ratelimit(&[(name, decision)])?, buf, buf_len, out)
        }
    })
}

/// Writes the value of the HTTP `RateLimit-Policy` field for one decision
/// under the policy name `name`: `"name";q=LIMIT;w=SECONDS` (the window
/// rounded up to whole seconds, at least 1; no `w` when it is `RK_NEVER`).
/// As `rk_decision_write_ratelimit()` otherwise.
///
/// # Safety
/// As `rk_decision_write_ratelimit()`.
#[no_mangle]
pub unsafe extern "C" fn rk_decision_write_ratelimit_policy(
    decision: *const rk_decision,
    name: *const c_char,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_decision_write_ratelimit_policy", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let decision = Decision::from(crate::boundary::handle(decision, "decision")?);
            let name = policy_name(name, "name")?;
            write_text(&headers::ratelimit_policy(&[(name, decision)])?, buf, buf_len, out)
        }
    })
}

/// Writes the value of the HTTP `Retry-After` field for a decision: the
/// whole seconds, rounded up, after which a refused request may be retried
/// (`"2"`). Writes the empty string (length 0) when no `Retry-After` should
/// be sent: the request was admitted, or no wait can admit it
/// (`retry_after_micros` is `RK_NEVER`). 21 bytes are always enough; the
/// buffer protocol is `rk_decision_write_ratelimit()`'s.
///
/// Returns `RK_NULL_POINTER` when `decision` or `out_len` is NULL, or `buf`
/// is NULL with a `buf_len` above 0.
///
/// # Safety
/// `decision` is NULL or valid for reading; `buf` is NULL or valid for
/// writing `buf_len` bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_decision_write_retry_after(
    decision: *const rk_decision,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_decision_write_retry_after", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let decision = Decision::from(crate::boundary::handle(decision, "decision")?);
            write_text(headers::retry_after(&decision).as_deref().unwrap_or(""), buf, buf_len, out)
        }
    })
}

/// Writes the value of one HTTP `RateLimit` field for several policies:
/// `decisions[i]` under `names[i]`, joined by `", "` (a composite
/// limiter's parts, say). `count` 0 writes the empty string, and then
/// `decisions` and `names` may be NULL. As `rk_decision_write_ratelimit()`
/// otherwise; a bad name is reported with its index in the message.
///
/// # Safety
/// `decisions` and `names` are NULL or valid for reading `count` elements,
/// each name NULL or a NUL-terminated string; `buf` is NULL or valid for
/// writing `buf_len` bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_decisions_write_ratelimit(
    decisions: *const rk_decision,
    names: *const *const c_char,
    count: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_decisions_write_ratelimit", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let items = named(decisions, names, count)?;
            write_text(&headers::ratelimit(&items)?, buf, buf_len, out)
        }
    })
}

/// Writes the value of one HTTP `RateLimit-Policy` field for several
/// policies, as `rk_decisions_write_ratelimit()` does for `RateLimit`.
///
/// # Safety
/// As `rk_decisions_write_ratelimit()`.
#[no_mangle]
pub unsafe extern "C" fn rk_decisions_write_ratelimit_policy(
    decisions: *const rk_decision,
    names: *const *const c_char,
    count: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_decisions_write_ratelimit_policy", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let items = named(decisions, names, count)?;
            write_text(&headers::ratelimit_policy(&items)?, buf, buf_len, out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use core::ptr::{null, null_mut};

    fn refused() -> rk_decision {
        Decision::refused(10, 0, 1_500_000, 2_000_000, 1_000_000).into()
    }

    #[test]
    fn the_header_constant_is_the_cores() {
        assert_eq!(RK_NEVER, ratekeeper::NEVER);
    }

    #[test]
    fn size_query_then_write_and_too_small_writes_nothing() {
        let d = refused();
        let mut len = usize::MAX;
        // SAFETY: valid pointers, lengths as documented.
        unsafe {
            assert_eq!(rk_decision_write_ratelimit(&d, c"api".as_ptr(), null_mut(), 0, &mut len), rk_status::RK_OK);
            assert_eq!(len, "\"api\";r=0;t=2".len());
            let mut buf = [b'x' as c_char; 14];
            let mut short_len = 99;
            let status = rk_decision_write_ratelimit(&d, c"api".as_ptr(), buf.as_mut_ptr(), 13, &mut short_len);
            assert_eq!(status, rk_status::RK_BUFFER_TOO_SMALL);
            assert_eq!((short_len, buf[0]), (99, b'x' as c_char));
            assert_eq!(last_argument().as_deref(), Some("buf_len"));
            assert_eq!(
                last_message(),
                "rk_decision_write_ratelimit: buf_len = 13: the buffer must hold 14 bytes (the NUL included)"
            );
            assert_eq!(
                rk_decision_write_ratelimit(&d, c"api".as_ptr(), buf.as_mut_ptr(), 14, &mut len),
                rk_status::RK_OK
            );
            assert_eq!(CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), "\"api\";r=0;t=2");
            assert_eq!(rk_decision_write_retry_after(&d, buf.as_mut_ptr(), 14, &mut len), rk_status::RK_OK);
            assert_eq!((CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), len), ("2", 1));
            assert_eq!(
                rk_decision_write_ratelimit(&d, c"api".as_ptr(), null_mut(), 5, &mut len),
                rk_status::RK_NULL_POINTER
            );
            assert_eq!(last_argument().as_deref(), Some("buf"));
        }
    }

    #[test]
    fn names_must_be_printable_ascii_even_when_not_utf8() {
        let d = refused();
        let mut len = 0;
        for (name, byte) in [(&b"ok\xff\0"[..], 255), (b"a\nb\xff\0", 10), (b"caf\xc3\xa9\0", 0xc3)] {
            let name = CStr::from_bytes_with_nul(name).unwrap();
            // SAFETY: as above.
            let status = unsafe { rk_decision_write_ratelimit_policy(&d, name.as_ptr(), null_mut(), 0, &mut len) };
            assert_eq!(status, rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("name"));
            assert!(last_message().contains(&format!("invalid argument name = {byte}:")), "{}", last_message());
        }
    }

    #[test]
    fn several_policies_join_and_a_bad_name_is_located() {
        let parts = [refused(), Decision::allowed(1000, 990, 3_000_000_000, 3_600_000_000).into()];
        let names = [c"per-second".as_ptr(), c"per-hour".as_ptr()];
        let mut buf = [0 as c_char; 128];
        let mut len = 0;
        // SAFETY: as above.
        unsafe {
            let s =
                rk_decisions_write_ratelimit_policy(parts.as_ptr(), names.as_ptr(), 2, buf.as_mut_ptr(), 128, &mut len);
            assert_eq!(s, rk_status::RK_OK);
            assert_eq!(
                CStr::from_ptr(buf.as_ptr()).to_str().unwrap(),
                "\"per-second\";q=10;w=1, \"per-hour\";q=1000;w=3600"
            );
            assert_eq!(
                rk_decisions_write_ratelimit(null(), null(), 0, buf.as_mut_ptr(), 128, &mut len),
                rk_status::RK_OK
            );
            assert_eq!((len, buf[0]), (0, 0));
            let bad = [c"fine".as_ptr(), c"tab\there".as_ptr()];
            let s = rk_decisions_write_ratelimit(parts.as_ptr(), bad.as_ptr(), 2, buf.as_mut_ptr(), 128, &mut len);
            assert_eq!(s, rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("name"));
            assert!(last_message().starts_with("rk_decisions_write_ratelimit: names[1]: invalid argument name = 9:"));
            let with_null = [c"fine".as_ptr(), null()];
            let s =
                rk_decisions_write_ratelimit(parts.as_ptr(), with_null.as_ptr(), 2, buf.as_mut_ptr(), 128, &mut len);
            assert_eq!(s, rk_status::RK_NULL_POINTER);
            assert_eq!(last_message(), "rk_decisions_write_ratelimit: names[1]: names is NULL");
        }
    }
}
