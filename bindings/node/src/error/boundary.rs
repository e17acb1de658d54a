//! The edge between a native call and JavaScript: the panic guard every
//! call runs its body in ([`boundary`], [`guarded`]: a panic must never
//! unwind into Node), and the two ways a [`Failure`] leaves — thrown as an
//! exception ([`throw`]) or made the value a Promise is rejected with
//! ([`value`]) — as an error object built through Node-API.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::{sys, Env};

use super::failure::{describe, fallback, Class, Described, Failure};
use crate::js;

/// Throws `failure` as a JavaScript exception in `env` (nothing when one is
/// already pending). Never fails: if the error object cannot be built, a
/// plain `Error` with the same code and message is thrown instead.
pub(crate) fn throw(env: sys::napi_env, failure: Failure) {
    let described = match describe(env, failure) {
        Ok(Some(d)) => d,
        Ok(None) | Err(Failure::Thrown) => return,
        Err(_) => fallback(),
    };
    match build(env, &described) {
        // SAFETY: throwing a freshly built error object of the running call.
        Ok(error) => unsafe {
            sys::napi_throw(env, error);
        },
        Err(Failure::Thrown) => {}
        Err(_) => {
            let code = std::ffi::CString::new(described.code).unwrap_or_default();
            let message = std::ffi::CString::new(described.message().replace('\0', " ")).unwrap_or_default();
            // SAFETY: NUL-terminated strings.
            unsafe { sys::napi_throw_error(env, code.as_ptr(), message.as_ptr()) };
        }
    }
}

/// The error object for `failure`, to reject a Promise with: the one
/// [`throw`] would throw. A pending exception (a getter that threw) is
/// taken and returned as it is. Never fails: `None` only if not even a
/// plain `Error` can be made.
pub(crate) fn value(env: sys::napi_env, failure: Failure) -> Option<sys::napi_value> {
    let described = match describe(env, failure) {
        Ok(Some(d)) => d,
        Ok(None) | Err(Failure::Thrown) => return take_pending(env),
        Err(_) => fallback(),
    };
    match build(env, &described) {
        Ok(error) => Some(error),
        Err(Failure::Thrown) => take_pending(env),
        Err(_) => build(env, &fallback()).ok(),
    }
}

/// Takes the pending JavaScript exception, if there is one.
fn take_pending(env: sys::napi_env) -> Option<sys::napi_value> {
    let mut error = ptr::null_mut();
    // SAFETY: clears and returns the pending exception (or `undefined`).
    let status = unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
    (status == sys::Status::napi_ok && !error.is_null()).then_some(error)
}

fn build(env: sys::napi_env, d: &Described) -> Result<sys::napi_value, Failure> {
    let code = js::string(env, d.code)?;
    let message = js::string(env, &d.message())?;
    let mut error = ptr::null_mut();
    // SAFETY: `code` and `message` are strings of the running call; the
    // `code` argument sets the error's `code` property.
    let status = unsafe {
        match d.class {
            Class::Range => sys::napi_create_range_error(env, code, message, &mut error),
            Class::Type => sys::napi_create_type_error(env, code, message, &mut error),
            Class::Plain => sys::napi_create_error(env, code, message, &mut error),
        }
    };
    js::check(env, status, "create error")?;
    if let Some(argument) = &d.argument {
        js::set(env, error, c"argument", js::string(env, argument)?)?;
    }
    if let Some(value) = d.value {
        js::set(env, error, c"value", value)?;
    }
    if let Some(position) = d.position() {
        js::set(env, error, c"position", js::number(env, position as f64)?)?;
    }
    Ok(error)
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_owned()
    }
}

/// Runs the body of a native call so that no panic leaves it: a panic
/// becomes [`Failure::Internal`]. (Keep `R` small — a [`Boxed`](super::Boxed) error, not a
/// [`Failure`]: the result crosses the unwinding boundary through memory.)
#[inline]
pub(crate) fn boundary<R>(body: impl FnOnce() -> R) -> Result<R, Failure> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => Ok(result),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            // Dropping a payload can itself panic; leak it instead.
            std::mem::forget(payload);
            Err(Failure::Internal(message))
        }
    }
}

/// [`boundary`] for a napi-rs `#[napi]` function: the failure is thrown
/// here, and napi-rs is told that an exception is pending, so it throws
/// nothing of its own.
pub(crate) fn guarded<T>(env: &Env, body: impl FnOnce() -> Result<T, Failure>) -> napi::Result<T> {
    boundary(body).and_then(|result| result).map_err(|failure| {
        throw(env.raw(), failure);
        napi::Error::new(napi::Status::PendingException, "")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_failure() {
        let outcome = boundary::<()>(|| panic!("boom"));
        assert!(matches!(outcome, Err(Failure::Internal(m)) if m == "panic: boom"));
        assert!(matches!(boundary(|| 7), Ok(7)));
    }
}
