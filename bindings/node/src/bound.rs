//! Native functions bound to one limiter: how JavaScript reaches a limiter.
//!
//! Creating a limiter returns a plain object of functions (`tryAcquire`,
//! `acquire`, `rate`, …), each a raw Node-API function whose *callback
//! data* is that limiter. Measured on this project's machine (one limiter,
//! release build, a JavaScript loop of a million calls):
//!
//! | call path | ns per call |
//! |---|---|
//! | a napi-rs class method (`#[napi] impl`) | ≈ 347 |
//! | a napi-rs function taking an `External` handle | ≈ 191 |
//! | a napi-rs function doing nothing (its per-call machinery) | ≈ 110–125 |
//! | a raw Node-API function taking an external, checked against a registry | ≈ 43 |
//! | a raw Node-API function bound to one limiter, through the method table | ≈ 33–38 |
//! | **the same with a callback of its own (`tryAcquire`, see [`TryNow`])** | **≈ 26–30** |
//!
//! (Of these, ≈ 10 ns is the library reading the clock. Many limiters at one
//! call site cost more — ≈ 55–65 ns at 100 — since each has its own function
//! objects; still below any JavaScript peer measured. `benches/node` runs
//! the peers.)
//!
//! It is also safe by construction: the only pointer a call dereferences is
//! the one this module attached when it created the function, never a value
//! from JavaScript, so nothing a caller passes can make it read the wrong
//! memory; there is no handle to forge or to validate. A limiter lives until
//! the last of its functions has been collected.

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::Arc;

use napi::sys;

use crate::args;
use crate::error::{boundary, throw, Boxed, Failure};
use crate::js::{self, Js};

/// The most arguments a bound method reads.
const MAX_ARGS: usize = 3;

/// The arguments of one call; missing ones read as `undefined`.
pub(crate) struct Args {
    env: sys::napi_env,
    /// How many arguments were read (the method's arity).
    read: usize,
    /// How many the caller passed.
    argc: usize,
    argv: [sys::napi_value; MAX_ARGS],
}

impl Args {
    /// Argument `i` (`undefined` when the caller passed fewer).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Js {
        if i < self.read {
            return Js::new(self.env, self.argv[i]);
        }
        // Beyond the method's declared arity: not read, so `undefined`.
        let mut undefined = ptr::null_mut();
        // SAFETY: plain value creation.
        unsafe { sys::napi_get_undefined(self.env, &mut undefined) };
        Js::new(self.env, undefined)
    }

    /// Argument `i` as a permit count, 1 when absent or `undefined`. (An
    /// absent one costs no Node-API call: `tryAcquire()` is the hot path.)
    #[inline]
    pub(crate) fn permits(&self, i: usize) -> Result<u32, Failure> {
        if i >= self.argc.min(self.read) {
            Ok(1)
        } else {
            args::permits_or_one(self.get(i))
        }
    }
}

/// What a method returns to JavaScript.
pub(crate) enum Returned {
    Bool(bool),
    Number(f64),
    Undefined,
}

/// A method of `T`: reads its arguments, calls the library, returns a value.
pub(crate) type Method<T> = fn(&T, &Args) -> Result<Returned, Boxed>;

/// A limiter with a synchronous "take `permits` now, or refuse without
/// waiting": `tryAcquire(permits)`, the call the hot path makes.
pub(crate) trait TryNow: Send + Sync + 'static {
    /// `permits` is already checked to be an integer from 1 to 2^31 − 1.
    fn try_now(&self, permits: u32) -> Result<bool, Boxed>;
}

/// A method as `bind` takes it: its JavaScript name, how many arguments it
/// reads (at most 3: asking Node-API for fewer makes the call cheaper) and
/// the function.
pub(crate) type Named<T> = (&'static CStr, usize, Method<T>);

/// A Node-API function callback.
type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// What each function's callback data points to.
struct Bound<T> {
    target: Arc<T>,
    method: Method<T>,
}

/// A plain object with one function per method, each bound to `target`;
/// its [`TryNow`] (the hot path) under two names, `try_now` taking the
/// permits and `try_one` taking none (1); and the given boolean properties.
pub(crate) fn bind<T: TryNow>(
    env: sys::napi_env,
    target: Arc<T>,
    methods: &[Named<T>],
    (try_now, try_one): (&'static CStr, &'static CStr),
    flags: &[(&'static CStr, bool)],
) -> Result<sys::napi_value, Failure> {
    let mut object = ptr::null_mut();
    // SAFETY: plain value creation in the running call's environment.
    js::check(env, unsafe { sys::napi_create_object(env, &mut object) }, "create object")?;
    for &(name, arity, method) in methods {
        let callback: Callback = match arity {
            0 => call::<T, 0>,
            1 => call::<T, 1>,
            2 => call::<T, 2>,
            _ => call::<T, MAX_ARGS>,
        };
        let function = bind_one(env, name, callback, Bound { target: Arc::clone(&target), method })?;
        js::set(env, object, name, function)?;
    }
    for (name, callback) in [(try_now, call_try_now::<T, 1> as Callback), (try_one, call_try_now::<T, 0>)] {
        // The hot callback calls `TryNow`, not `method`.
        let hot = Bound { target: Arc::clone(&target), method: |_, _| Ok(Returned::Undefined) };
        js::set(env, object, name, bind_one(env, name, callback, hot)?)?;
    }
    for &(name, value) in flags {
        let mut boolean = ptr::null_mut();
        // SAFETY: plain value creation.
        js::check(env, unsafe { sys::napi_get_boolean(env, value, &mut boolean) }, "get boolean")?;
        js::set(env, object, name, boolean)?;
    }
    Ok(object)
}

fn bind_one<T: Send + Sync + 'static>(
    env: sys::napi_env,
    name: &CStr,
    callback: Callback,
    bound: Bound<T>,
) -> Result<sys::napi_value, Failure> {
    let data = Box::into_raw(Box::new(bound)).cast::<c_void>();
    let mut function = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated; `callback` (a `call::<T, _>`)
    // reads `data` as the `Bound<T>` it is, and `release::<T>` frees it once.
    let status = unsafe {
        sys::napi_create_function(env, name.as_ptr(), name.count_bytes() as isize, Some(callback), data, &mut function)
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

/// Frees what a bound function held.
unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `bind_one::<T>`, and each
    // function's finalizer runs once.
    drop(unsafe { Box::from_raw(data.cast::<Bound<T>>()) });
}

/// Every bound function's callback, for methods reading `N` arguments.
unsafe extern "C" fn call<T, const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut args = Args { env, read: N, argc: N, argv: [ptr::null_mut(); MAX_ARGS] };
    let mut data = ptr::null_mut();
    // SAFETY: `info` is this call's; `argv` has room for `N <= MAX_ARGS`
    // values (missing ones read as `undefined`); `argc` becomes the number
    // the caller passed.
    // A method of no arguments asks for none: Node-API then skips copying
    // them (the cheapest call there is: `tryAcquire()` with no permits).
    let argv = if N == 0 { ptr::null_mut() } else { args.argv.as_mut_ptr() };
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut args.argc, argv, ptr::null_mut(), &mut data) };
    let outcome = boundary(|| {
        js::check(env, status, "read arguments")?;
        // SAFETY: only `bind_one::<T>` creates functions with this callback,
        // with a `Bound<T>` as data that lives as long as the function.
        let bound = unsafe { &*data.cast_const().cast::<Bound<T>>() };
        (bound.method)(&bound.target, &args)
    })
    .and_then(|result| result.map_err(|boxed| *boxed.0));
    let mut result = ptr::null_mut();
    // SAFETY: plain value creation in this call's environment.
    unsafe {
        match outcome {
            Ok(Returned::Bool(b)) => sys::napi_get_boolean(env, b, &mut result),
            Ok(Returned::Number(x)) => sys::napi_create_double(env, x, &mut result),
            Ok(Returned::Undefined) => sys::napi_get_undefined(env, &mut result),
            Err(failure) => {
                throw(env, failure);
                return ptr::null_mut();
            }
        };
    }
    result
}

/// The hot path's callback: `tryAcquire(permits)` (`N` = 1) or
/// `tryAcquire()` (`N` = 0). A callback of its own — no function pointer to
/// call, a result in two registers, and for `N` = 0 no argument to read —
/// costs ≈ 26–30 ns a call against ≈ 38 for a method of the table
/// (measured as in the module docs).
unsafe extern "C" fn call_try_now<T: TryNow, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); 1];
    let mut data = ptr::null_mut();
    let argv_ptr = if N == 0 { ptr::null_mut() } else { argv.as_mut_ptr() };
    // SAFETY: `info` is this call's; `argv` has room for `N <= 1` values.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv_ptr, ptr::null_mut(), &mut data) };
    let outcome = boundary(|| {
        js::check(env, status, "read arguments")?;
        // SAFETY: only `bind` creates functions with this callback, with a
        // `Bound<T>` as data that lives as long as the function.
        let bound = unsafe { &*data.cast_const().cast::<Bound<T>>() };
        let permits = if N == 0 || argc == 0 { 1 } else { args::permits_or_one(Js::new(env, argv[0]))? };
        bound.target.try_now(permits)
    })
    .and_then(|result| result.map_err(|boxed| *boxed.0));
    let mut result = ptr::null_mut();
    match outcome {
        // SAFETY: plain value creation in this call's environment.
        Ok(taken) => unsafe { sys::napi_get_boolean(env, taken, &mut result) },
        Err(failure) => {
            throw(env, failure);
            return ptr::null_mut();
        }
    };
    result
}
