//! The HTTP fields a decision is written as (`RateLimit`,
//! `RateLimit-Policy`, `Retry-After`): names refused unless printable
//! ASCII, and the buffer protocol every string the library writes keeps.

use core::ffi::c_char;
use core::ptr::{null, null_mut};
use std::ffi::CString;

use ratekeeper_c::decision::*;
use ratekeeper_c::status::rk_status;

use super::super::input::{BufLen, DecisionSource, MaybeNull};
use super::super::model::{out, World};
use super::UNWRITTEN;

impl World {
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
    pub(crate) fn write_field(
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

    pub(crate) fn write_fields(
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
}

/// A name as C passes it: the bytes up to the first NUL.
fn c_string(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end.min(64)]).expect("no NUL inside")
}
