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
    /// Redis cannot decide: it is down, refused or dropped the connection,
    /// is loading, is a read-only replica, is out of memory (`OOM` under
    /// `maxmemory`), is a cluster that is down, or failed to answer moments
    /// ago and is not tried again until the store's retry interval has
    /// passed. The limiter's unavailability policy was
    /// `RK_WHEN_UNAVAILABLE_ERROR` (the others decide instead). Nothing was
    /// decided; try again later.
    RK_UNAVAILABLE = 7,
    /// Redis did not answer within the store's timeout (a slow or paused
    /// server). As `RK_UNAVAILABLE`, the policy was
    /// `RK_WHEN_UNAVAILABLE_ERROR`. The request may or may not have been
    /// counted by the server.
    RK_TIMEOUT = 8,
    /// Redis answered with an error (`NOAUTH`, a script's error, a
    /// cluster's `CROSSSLOT`, …); the message carries it. Not an
    /// unavailability, so no policy decides instead.
    RK_REDIS_ERROR = 9,
    /// A script's reply was not what this library expects: another
    /// version of ratekeeper's scripts under the same keys, or a key of the
    /// same name written by something else.
    RK_PROTOCOL_ERROR = 10,
    /// The operation cannot run as asked: an algorithm that does not run in
    /// Redis (a leaky bucket, a sliding window) or a mode that does not take
    /// it (leased mode runs on GCRA and the token bucket), or a blocking
    /// call made on the library's Redis thread (from an `_async`
    /// callback), which would wait for itself. Nothing changed.
    RK_UNSUPPORTED = 11,
    /// Redis refused access: a wrong password or an unknown user
    /// (`WRONGPASS`), no password where one is needed (`NOAUTH`), or an
    /// ACL user not allowed a command or key the limiter needs (`NOPERM`;
    /// see SECURITY.md for the least privilege). The message names the
    /// cause. Not an unavailability: no policy decides instead.
    RK_REDIS_AUTH_ERROR = 12,
    /// TLS failed on a certificate: the server's is not trusted (another
    /// CA), is for another name or has expired, or the server refused or
    /// required the client's; or the TLS settings are unusable (a file that
    /// cannot be read, or holds no PEM). The message names the cause. Not
    /// an unavailability: the store is not marked down.
    RK_REDIS_TLS_ERROR = 13,
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
            7 => c"redis unavailable",
            8 => c"redis timed out",
            9 => c"redis error",
            10 => c"unexpected reply from redis",
            11 => c"unsupported",
            12 => c"redis refused access",
            13 => c"redis TLS error",
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
            rk_status::RK_UNAVAILABLE,
            rk_status::RK_TIMEOUT,
            rk_status::RK_REDIS_ERROR,
            rk_status::RK_PROTOCOL_ERROR,
            rk_status::RK_UNSUPPORTED,
            rk_status::RK_REDIS_AUTH_ERROR,
            rk_status::RK_REDIS_TLS_ERROR,
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
                "buffer too small",
                "redis unavailable",
                "redis timed out",
                "redis error",
                "unexpected reply from redis",
                "unsupported",
                "redis refused access",
                "redis TLS error",
            ]
        );
        for (i, status) in all.iter().enumerate() {
            assert_eq!(*status as usize, i, "the statuses are numbered in order");
        }
        assert_eq!(message(14), "unknown status");
        assert_eq!(message(u32::MAX), "unknown status");
    }
}
