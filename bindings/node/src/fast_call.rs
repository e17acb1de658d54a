//! The hot path: a synchronous `tryAcquire()` as one plain Node-API call.
//!
//! Measured on this project's machine (one limiter, release build, a
//! JavaScript loop of a million calls), the ways to reach the limiter cost:
//!
//! | call path | ns per call |
//! |---|---|
//! | a napi-rs class method (`#[napi] impl`) | ≈ 347 |
//! | a napi-rs function taking an `External` handle | ≈ 191 |
//! | a raw Node-API function taking an external, checked against a registry | ≈ 43 |
//! | **a raw Node-API function bound to one limiter (this module)** | **≈ 30–35** |
//!
//! napi-rs's conversions take a global lock to validate an `External` and
//! track borrows around every call; a raw function whose *callback data* is
//! the limiter skips both. It is also safe by construction: the only
//! pointer it dereferences is the one this module attached when it created
//! the function, never one that came from JavaScript, so no value a caller
//! passes can make it read the wrong memory. Each limiter gets its own
//! function object, and the limiter lives until that function and its
//! `External` handle have both been collected.

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::Arc;

use napi::sys;

use crate::args;
use crate::error::{boundary, throw, Failure};
use crate::js::{self, Js};

/// A limiter with a synchronous "take now, or refuse without waiting".
pub(crate) trait TryNow: Send + Sync + 'static {
    /// Takes `permits` (already checked: 1 to 2^31 − 1) if they are
    /// available now, without waiting; `false` takes nothing.
    fn try_now(&self, permits: u32) -> Result<bool, Failure>;
}

/// A JavaScript function `(permits?: number) => boolean` bound to `target`.
pub(crate) fn bind_try_now<T: TryNow>(
    env: sys::napi_env,
    name: &CStr,
    target: Arc<T>,
) -> Result<sys::napi_value, Failure> {
    let data = Arc::into_raw(target).cast_mut().cast::<c_void>();
    let mut function = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated; `call::<T>` reads `data` as the
    // `Arc<T>` it is, and `release::<T>` frees it once.
    let status = unsafe {
        sys::napi_create_function(env, name.as_ptr(), name.count_bytes() as isize, Some(call::<T>), data, &mut function)
    };
    if let Err(failure) = js::check(env, status, "create function") {
        // SAFETY: nothing else holds `data`.
        unsafe { release::<T>(env, data, ptr::null_mut()) };
        return Err(failure);
    }
    // SAFETY: `function` is the live function just created; the finalizer
    // runs once, when it is collected (or when the environment ends).
    let status =
        unsafe { sys::napi_add_finalizer(env, function, data, Some(release::<T>), ptr::null_mut(), ptr::null_mut()) };
    // On failure the function may still be called until it is collected:
    // `data` stays alive (leaked) rather than freed under it.
    js::check(env, status, "add finalizer")?;
    Ok(function)
}

/// Drops the `Arc<T>` a bound function held.
unsafe extern "C" fn release<T: TryNow>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Arc::into_raw` in `bind_try_now::<T>`, and
    // each function's finalizer runs once.
    drop(unsafe { Arc::from_raw(data.cast_const().cast::<T>()) });
}

/// The bound function's callback.
unsafe extern "C" fn call<T: TryNow>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 1usize;
    let mut argv = [ptr::null_mut(); 1];
    let mut data = ptr::null_mut();
    // SAFETY: `info` is this call's; `argv` has room for `argc` values.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    let outcome = boundary(|| {
        js::check(env, status, "read arguments")?;
        // SAFETY: only `bind_try_now::<T>` creates functions with this
        // callback, with an `Arc<T>` as data that the function keeps alive.
        let target = unsafe { &*data.cast_const().cast::<T>() };
        let permits = if argc == 0 { 1 } else { args::permits_or_one(Js::new(env, argv[0]))? };
        target.try_now(permits)
    });
    match outcome {
        Ok(taken) => {
            let mut result = ptr::null_mut();
            // SAFETY: plain value creation.
            unsafe { sys::napi_get_boolean(env, taken, &mut result) };
            result
        }
        Err(failure) => {
            throw(env, failure);
            ptr::null_mut()
        }
    }
}
