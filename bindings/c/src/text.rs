//! Keys, names and URLs from C: byte strings given as a pointer and a
//! length (`key`, `key_len`), and NUL-terminated strings (`name`, `url`),
//! read as the std layer and the Redis crate take them.
//!
//! Keys are any bytes, for the keyed limiters and the Redis limiters alike
//! (escaped byte by byte into Redis key names): a Python or JavaScript
//! string is its UTF-8, so C shares a key with them by passing those bytes.
//! Names and URLs must be UTF-8 text.

use core::ffi::{c_char, CStr};

use crate::failure::Failure;

/// The `len` elements at `ptr`; `ptr` may be NULL only when `len` is 0.
///
/// # Safety
/// `ptr` is NULL or valid for reading `len` elements for `'a`.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize, argument: &'static str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::NullPointer { argument });
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The `len` bytes at `ptr`; `ptr` may be NULL only when `len` is 0 (an
/// empty key). Keys are `const char *` in C, as in most C key-value APIs,
/// so a string literal needs no cast; they are bytes all the same (NULs
/// included).
///
/// # Safety
/// `ptr` is NULL or valid for reading `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, len: usize, argument: &'static str) -> Result<&'a [u8], Failure> {
    // SAFETY: the caller's contract.
    unsafe { slice(ptr.cast::<u8>(), len, argument) }
}

/// A NUL-terminated string that must be UTF-8.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, argument: &'static str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::NullPointer { argument });
    }
    // SAFETY: the caller's contract.
    from_utf8(unsafe { CStr::from_ptr(ptr) }.to_bytes(), argument)
}

fn from_utf8<'a>(bytes: &'a [u8], argument: &'static str) -> Result<&'a str, Failure> {
    core::str::from_utf8(bytes).map_err(|e| Failure::Malformed {
        argument,
        problem: format!("must be UTF-8 (byte 0x{:02X} at offset {} is not)", bytes[e.valid_up_to()], e.valid_up_to()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_may_be_empty_and_null_only_then() {
        // SAFETY: NULL with a length of 0, and live slices.
        unsafe {
            assert_eq!(bytes(core::ptr::null(), 0, "key").unwrap(), b"");
            let failure = bytes(core::ptr::null(), 3, "key").unwrap_err();
            assert_eq!(failure.argument(), Some("key"));
            assert_eq!(bytes(b"a\xff\0b".as_ptr().cast(), 4, "key").unwrap(), b"a\xff\0b");
            assert_eq!(c_str(c"api".as_ptr(), "name").unwrap(), "api");
            let failure = c_str(c"ab\xff".as_ptr(), "name").unwrap_err();
            let mut message = String::new();
            failure.describe(&mut message).unwrap();
            assert_eq!(message, "invalid argument name: must be UTF-8 (byte 0xFF at offset 2 is not)");
            assert_eq!(c_str(core::ptr::null(), "name").unwrap_err().argument(), Some("name"));
        }
    }
}
