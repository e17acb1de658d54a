//! The C boundary: the panic guard every exported function runs its body
//! in, the checks of pointer arguments, and the thread's last error
//! ([`rk_last_error_message`], [`rk_last_error_argument`]).
//!
//! The last error lives in fixed-size thread-local buffers, `errno`-style:
//! recording one allocates nothing, needs no destructor, and a successful
//! call (the hot path) never touches it.

use core::ffi::c_char;
use core::fmt;
use core::ptr::NonNull;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::failure::Failure;
use crate::status::rk_status;

/// The latest failure on one thread, as NUL-terminated strings. (The sizes
/// are literals: cbindgen warns about private constants.)
struct LastError {
    /// A function name and an invalid argument's description fit with
    /// plenty to spare; longer messages (a panic's) are cut.
    message: [u8; 512],
    /// An argument's name.
    argument: [u8; 64],
    has_argument: bool,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = const {
        RefCell::new(LastError { message: [0; 512], argument: [0; 64], has_argument: false })
    };
}

/// Runs the body of an exported function: `Ok` is `RK_OK`; a failure, or a
/// panic, is recorded as the thread's last error and returned as its
/// status. `function` is the exported name, which starts the message.
#[inline(always)]
pub fn guard(function: &'static str, body: impl FnOnce() -> Result<(), Failure>) -> rk_status {
    let failure = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return rk_status::RK_OK,
        Ok(Err(failure)) => failure,
        Err(payload) => Failure::Panic(payload),
    };
    record(function, &failure)
}

/// The boundary of a function that returns nothing (the `_free`s): a panic
/// is recorded as the last error and goes no further.
pub fn guard_void(function: &'static str, body: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
        record(function, &Failure::Panic(payload));
    }
}

/// The body of every `_free` of a handle made by `Box::into_raw` (after
/// rustls-ffi's `free_box`): `NULL` does nothing; otherwise the box is
/// dropped inside the panic guard, since dropping a handle runs code that
/// could panic (a Redis membership leaves its group, a limiter's last
/// reference drops every key's state), and a panic must not unwind into C.
///
/// # Safety
/// `ptr` is NULL or came from `Box::into_raw` of a `Box<T>` that has not
/// been freed since, and no other call is using it.
pub(crate) unsafe fn free_box<T>(function: &'static str, ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    guard_void(function, || {
        // SAFETY: not NULL (checked above), and the caller's contract: a
        // live box that nothing else uses, so taking it back is sound.
        drop(unsafe { Box::from_raw(ptr) });
    });
}

/// As [`free_box`], for a handle that is one reference of an `Arc` (made
/// by `Arc::into_raw`; other references, such as a reservation's or a
/// permit's, keep the value alive).
///
/// # Safety
/// `ptr` is NULL or came from `Arc::into_raw` of an `Arc<T>` whose
/// reference has not been released since, and no other call is using it.
pub(crate) unsafe fn free_arc<T>(function: &'static str, ptr: *const T) {
    if ptr.is_null() {
        return;
    }
    guard_void(function, || {
        // SAFETY: not NULL (checked above), and the caller's contract: the
        // pointer owns one reference of a live Arc, which this releases.
        drop(unsafe { Arc::from_raw(ptr) });
    });
}

/// Stores `failure` as this thread's last error; returns its status. Kept
/// out of line: only failures come here. (Also how an `_async` call's
/// failure reaches its callback's thread.)
#[cold]
#[inline(never)]
pub(crate) fn record(function: &'static str, failure: &Failure) -> rk_status {
    let status = failure.status();
    // Formatting cannot panic here (the writer never fails, Display impls
    // are ours), and the thread-local is only unavailable while the thread
    // is being torn down; then the status alone is returned.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let _ = LAST_ERROR.try_with(|last| {
            let mut last = last.borrow_mut();
            let mut message = CString::new(&mut last.message);
            let _ = fmt::Write::write_fmt(&mut message, format_args!("{function}: "));
            let _ = failure.describe(&mut message);
            message.finish();
            match failure.argument() {
                Some(name) => {
                    let mut argument = CString::new(&mut last.argument);
                    let _ = fmt::Write::write_str(&mut argument, name);
                    argument.finish();
                    last.has_argument = true;
                }
                None => last.has_argument = false,
            }
        });
    }));
    status
}

/// Writes a NUL-terminated string into a fixed buffer, cutting it (at a
/// character boundary) when it does not fit.
struct CString<'a, const N: usize> {
    buf: &'a mut [u8; N],
    len: usize,
}

impl<'a, const N: usize> CString<'a, N> {
    fn new(buf: &'a mut [u8; N]) -> Self {
        CString { buf, len: 0 }
    }

    fn finish(self) {
        self.buf[self.len] = 0;
    }
}

impl<const N: usize> fmt::Write for CString<'_, N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = N - 1 - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// A required handle argument: `Err(RK_NULL_POINTER)` naming it when NULL.
///
/// # Safety
/// `ptr` is NULL or points to a live `T` for `'a`.
#[inline(always)]
pub unsafe fn handle<'a, T>(ptr: *const T, argument: &'static str) -> Result<&'a T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_ref() }.ok_or(Failure::NullPointer { argument })
}

/// An out-parameter: where a result goes, written only on success (so
/// that a failed call leaves the caller's variable as it was).
#[derive(Debug)]
pub struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// A required out-parameter: `Err(RK_NULL_POINTER)` naming it when NULL.
    ///
    /// # Safety
    /// `ptr` is NULL or valid for a write of a `T` (it may be
    /// uninitialized), until the exported function returns.
    #[inline(always)]
    pub unsafe fn required(ptr: *mut T, argument: &'static str) -> Result<Self, Failure> {
        NonNull::new(ptr).map(Out).ok_or(Failure::NullPointer { argument })
    }

    /// An optional out-parameter: `None` when NULL (the caller does not
    /// want that result).
    ///
    /// # Safety
    /// As [`required`](Self::required).
    #[inline(always)]
    pub unsafe fn optional(ptr: *mut T) -> Option<Self> {
        NonNull::new(ptr).map(Out)
    }

    /// Stores the result. Never reads the old value, which may be
    /// uninitialized.
    #[inline(always)]
    pub fn write(self, value: T) {
        // SAFETY: the constructors' contract: valid for a write of a `T`.
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// What the latest call on this thread that did not return `RK_OK` said
/// went wrong, as one line naming the function, the argument and its value:
/// `"rk_rate_limiter_acquire: invalid argument permits = 0: must be between
/// 1 and 2147483647"`. The empty string when no call on this thread has
/// failed yet.
///
/// Like `errno`, it is per thread and successful calls leave it alone, so
/// read it right after the call that failed. The string belongs to the
/// library: do not free it; it stays valid, and unchanged, until the next
/// failing `rk_` call on the same thread, and until the thread exits.
///
/// Never fails.
#[no_mangle]
pub extern "C" fn rk_last_error_message() -> *const c_char {
    catch_unwind(|| LAST_ERROR.try_with(|last| last.borrow().message.as_ptr().cast()).unwrap_or(c"".as_ptr()))
        .unwrap_or(c"".as_ptr())
}

/// The parameter the latest failing call on this thread was about, spelled
/// as in this header (`"permits"`, `"warmup_micros"`, `"out_limiter"`):
/// the argument that was invalid, the field of a struct argument that was
/// (`"window_micros"` of an `rk_limiter_spec`; the message says which
/// element of an array), the pointer that was `NULL`, the handle of the
/// wrong algorithm, or the length of a buffer too small. `NULL` when that
/// failure was not about one argument (`RK_PANIC`) or when no call on this
/// thread has failed yet.
///
/// Per thread, like `rk_last_error_message()`, and valid for as long.
///
/// Never fails.
#[no_mangle]
pub extern "C" fn rk_last_error_argument() -> *const c_char {
    catch_unwind(|| {
        LAST_ERROR
            .try_with(|last| {
                let last = last.borrow();
                if last.has_argument {
                    last.argument.as_ptr().cast()
                } else {
                    core::ptr::null()
                }
            })
            .unwrap_or(core::ptr::null())
    })
    .unwrap_or(core::ptr::null())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use core::ffi::CStr;

    pub(crate) fn last_message() -> String {
        // SAFETY: the buffer is NUL-terminated and lives as long as the thread.
        unsafe { CStr::from_ptr(rk_last_error_message()) }.to_str().unwrap().to_owned()
    }

    pub(crate) fn last_argument() -> Option<String> {
        let p = rk_last_error_argument();
        // SAFETY: as above.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned())
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard("rk_test", || panic!("deliberate {}", 42));
        assert_eq!(status, rk_status::RK_PANIC);
        assert_eq!(last_message(), "rk_test: panic (a bug in ratekeeper, please report it): deliberate 42");
        assert_eq!(last_argument(), None);
        guard_void("rk_test_free", || panic!("in free"));
        assert!(last_message().starts_with("rk_test_free: panic"), "{}", last_message());
    }

    #[test]
    fn freeing_ignores_null_and_guards_the_drop() {
        struct PanicsOnDrop;
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("deliberate, in drop");
            }
        }
        let _ = guard("rk_before", || Err(Failure::NullPointer { argument: "x" }));
        // SAFETY: NULL is always accepted.
        unsafe { free_box::<PanicsOnDrop>("rk_null_free", core::ptr::null_mut()) };
        // SAFETY: as above.
        unsafe { free_arc::<PanicsOnDrop>("rk_null_free", core::ptr::null()) };
        assert_eq!(last_message(), "rk_before: x is NULL", "freeing NULL touched nothing");

        // SAFETY: a box just made, used by nothing else.
        unsafe { free_box("rk_box_free", Box::into_raw(Box::new(PanicsOnDrop))) };
        assert_eq!(last_message(), "rk_box_free: panic (a bug in ratekeeper, please report it): deliberate, in drop");

        let shared = Arc::new(PanicsOnDrop);
        let handle = Arc::into_raw(Arc::clone(&shared));
        let _ = guard("rk_before", || Err(Failure::NullPointer { argument: "x" }));
        // SAFETY: one reference, from Arc::into_raw just above.
        unsafe { free_arc("rk_arc_free", handle) };
        assert_eq!(Arc::strong_count(&shared), 1, "the handle's reference was released");
        assert_eq!(last_message(), "rk_before: x is NULL", "releasing a reference did not drop the value");
        // SAFETY: the last reference, from Arc::into_raw.
        unsafe { free_arc("rk_arc_free", Arc::into_raw(shared)) };
        assert!(last_message().starts_with("rk_arc_free: panic"), "{}", last_message());
    }

    #[test]
    fn the_last_error_is_per_thread_and_survives_success() {
        let status = guard("rk_f", || Err(Failure::NullPointer { argument: "out_value" }));
        assert_eq!(status, rk_status::RK_NULL_POINTER);
        assert_eq!(guard("rk_g", || Ok(())), rk_status::RK_OK);
        assert_eq!(last_message(), "rk_f: out_value is NULL");
        assert_eq!(last_argument().as_deref(), Some("out_value"));
        std::thread::spawn(|| {
            assert_eq!(last_message(), "");
            assert_eq!(last_argument(), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(512);
        guard("rk_long", || panic!("{long}"));
        let message = last_message();
        // 511 bytes and the NUL, less the half of a two-byte 'é' that did not fit.
        assert_eq!(message.len(), 510);
        assert!(message.ends_with('é'));
    }
}
