//! [`rk_status`], what every fallible function returns, and
//! [`rk_status_message`].

use core::ffi::{c_char, CStr};

/// What a call did. `RK_OK` is 0 and every error is non-zero, so
/// `if (rk_…(…) != RK_OK)` tests for failure. More statuses may be added;
/// treat an unknown one as a failure.
///
/// After any status but `RK_OK`, `rk_last_error_message()` says what went
/// wrong in words and `rk_last_error_argument()` names the argument.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum rk_status {
    /// Success: the out-parameters hold the results.
    RK_OK = 0,
    /// An argument is outside what the operation accepts (a rate that is not
    /// positive, zero permits, a negative warm-up, …). Nothing changed.
    RK_INVALID_ARGUMENT = 1,
    /// A pointer argument that must not be `NULL` was `NULL`. Nothing
    /// changed.
    RK_NULL_POINTER = 2,
    /// A bug in ratekeeper: a Rust panic, stopped at the C boundary. The
    /// handle's state is still consistent (state is published atomically),
    /// but please report it with the message.
    RK_PANIC = 3,
    /// An error this version of the C API has no specific status for
    /// (raised by a newer algorithm than the status list); the message says
    /// what it is. Nothing changed.
    RK_OTHER_ERROR = 4,
    /// The handle is a limiter of another algorithm than the function
    /// needs (`rk_token_bucket_reserve()` on a GCRA, say).
    /// `rk_last_error_argument()` names the handle. Nothing changed.
    RK_WRONG_ALGORITHM = 5,
    /// The caller's buffer cannot hold the result and its terminating NUL.
    /// Nothing was written: ask for the size first (pass `buf_len` 0), or
    /// see the message, which says how many bytes are needed.
    RK_BUFFER_TOO_SMALL = 6,
}

/// A short, static, English description of a status (`"invalid argument"`),
/// or `"unknown status"` for a value that is not an `rk_status`. For the
/// details of the latest failure use `rk_last_error_message()`.
///
/// Never fails; the string is static and must not be freed.
#[no_mangle]
pub extern "C" fn rk_status_message(status: u32) -> *const c_char {
    // Takes a plain integer rather than an `rk_status`: a C caller may pass
    // any value, and a Rust enum with an undeclared value would be undefined
    // behaviour. Nothing here can panic; the boundary is there all the same,
    // as around every exported body.
    std::panic::catch_unwind(|| {
        let message: &'static CStr = match status {
            0 => c"ok",
            1 => c"invalid argument",
            2 => c"null pointer",
            3 => c"internal error (a panic in ratekeeper)",
            4 => c"error",
            5 => c"wrong algorithm for this function",
            6 => c"buffer too small",
            _ => c"unknown status",
        };
        message.as_ptr()
    })
    .unwrap_or(c"".as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(status: u32) -> &'static str {
        // SAFETY: rk_status_message returns static NUL-terminated strings.
        unsafe { CStr::from_ptr(rk_status_message(status)) }.to_str().unwrap()
    }

    #[test]
    fn every_status_has_its_own_message() {
        let all = [
            rk_status::RK_OK,
            rk_status::RK_INVALID_ARGUMENT,
            rk_status::RK_NULL_POINTER,
            rk_status::RK_PANIC,
            rk_status::RK_OTHER_ERROR,
            rk_status::RK_WRONG_ALGORITHM,
            rk_status::RK_BUFFER_TOO_SMALL,
        ];
        let messages: Vec<_> = all.iter().map(|&s| message(s as u32)).collect();
        assert_eq!(
            messages,
            [
                "ok",
                "invalid argument",
                "null pointer",
                "internal error (a panic in ratekeeper)",
                "error",
                "wrong algorithm for this function",
                "buffer too small"
            ]
        );
        assert_eq!(message(7), "unknown status");
        assert_eq!(message(u32::MAX), "unknown status");
    }
}
