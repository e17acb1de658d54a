//! Native functions bound to one limiter: how JavaScript reaches a limiter.
//!
//! Creating a limiter returns a plain object of functions (`tryAcquire`,
//! `check`, `rate`, …), each a raw Node-API function whose *callback
//! data* is that limiter. Of the ways to call Rust from JavaScript that were
//! measured, from slowest to fastest: a napi-rs class method, a napi-rs
//! function taking an `External` handle, a raw Node-API function taking an
//! external checked against a registry, a raw function bound to one
//! limiter through the method table, and that with a callback of its own
//! (`tryAcquire`, `check`: see [`Hot`]) — the last under a tenth of the
//! first, since it does no argument unwrapping, no handle lookup and no
//! dispatch. Many limiters at one call site cost more, since each has its
//! own function objects. The figures are in BENCHMARKS.md, Node.js section
//! (its earlier measurements, kept in `benches/earlier/node.md`);
//! `benches/node` runs the peers.
//!
//! Results bigger than a boolean or a number — a `Decision`'s seven fields,
//! a permit — do not become JavaScript objects here: building an object
//! through Node-API costs a call per property. The limiter writes them into
//! its [`Scratch`] instead, a few words of its own memory that JavaScript
//! sees as a `Float64Array` ([`Binder::scratch`]), at the words `layout`
//! gives each field, and the package's JavaScript reads them right after
//! the call (`node/lib/decision.js`, at the same words, from `layout`):
//! what `check()` costs more than `tryAcquire()` is the price of the
//! `Decision` object (BENCHMARKS.md, Node.js section).
//!
//! It is also safe by construction: the only pointer a call dereferences is
//! the one this module attached when it created the function, never a value
//! from JavaScript, so nothing a caller passes can make it read the wrong
//! memory; there is no handle to forge or to validate. A limiter lives until
//! the last of its functions, and its scratch array, have been collected.

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use napi::sys;
use ratekeeper::{Decision, NEVER};

use crate::error::{boundary, throw, Boxed, Failure};
use crate::js::{self, Js};
use crate::layout::DECISION;

/// The most arguments a bound method reads.
const MAX_ARGS: usize = 5;

/// The arguments of one call; missing ones read as `undefined`.
pub(crate) struct Args {
    pub(crate) env: sys::napi_env,
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

    /// Argument `i` if the caller passed it (it may still be `undefined`).
    #[inline]
    pub(crate) fn passed(&self, i: usize) -> Option<Js> {
        (i < self.argc.min(self.read)).then(|| Js::new(self.env, self.argv[i]))
    }
}

/// What a method returns to JavaScript.
pub(crate) enum Returned {
    Bool(bool),
    Number(f64),
    /// An exact integer (microseconds).
    BigInt(i64),
    /// A value the method created (an object of bound functions).
    Value(sys::napi_value),
    Undefined,
}

/// A method of `T`: reads its arguments, calls the library, returns a value.
pub(crate) type Method<T> = fn(&Arc<T>, &Args) -> Result<Returned, Boxed>;

/// A target with hot calls: synchronous decisions of one optional argument
/// and a boolean result (`tryAcquire(permits)`, `check(cost)`), each bound
/// with a callback of its own — no function pointer to call, a result in
/// two registers, and for the form without argument nothing to read. `W`
/// tells the calls of one target apart (`bound` compiles one callback per
/// `W`).
pub(crate) trait Hot: Send + Sync + 'static {
    /// The argument, converted.
    type Arg: Copy;
    /// Converts the argument: `None` when the caller passed none.
    fn arg(value: Option<Js>) -> Result<Self::Arg, Failure>;
    /// Hot call number `W`.
    fn hot<const W: u8>(&self, arg: Self::Arg) -> Result<bool, Boxed>;
}

/// A target with hot keyed calls: synchronous decisions on a key and an
/// optional cost, with a boolean result (`KeyedLimiter.check(key, cost)`,
/// `tryAcquire(key, cost)`), each bound with a callback of its own that
/// reads the key into its stack frame (`args::with_key`). `W` tells the
/// calls of one target apart.
pub(crate) trait HotKeyed: Send + Sync + 'static {
    /// Hot keyed call number `W`.
    fn hot<const W: u8>(&self, key: &[u8], cost: u64) -> Result<bool, Boxed>;
}

/// A type tag per kind of target, so that an object of bound functions
/// passed back from JavaScript (a store given to a limiter's constructor)
/// can be recognised and its target found ([`Binder::tagged`],
/// [`target_of`]).
pub(crate) trait Tagged: Send + Sync + 'static {
    /// Unique to the type (random bits).
    const TAG: sys::napi_type_tag;
}

/// A method as [`Binder::methods`] takes it: its JavaScript name, how many
/// arguments it reads (at most [`MAX_ARGS`]: asking Node-API for fewer makes
/// the call cheaper) and the function.
pub(crate) type Named<T> = (&'static CStr, usize, Method<T>);

/// A Node-API function callback.
type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// What each function's callback data points to.
struct Bound<T> {
    target: Arc<T>,
    method: Method<T>,
}

/// A few words of a limiter's own memory through which it hands results to
/// JavaScript, seen there as a `Float64Array` (see the module docs).
/// Atomics only so that the limiter stays `Sync`: every access is on the
/// JavaScript thread of the limiter's environment, relaxed stores compile
/// to plain ones.
pub(crate) struct Scratch(Box<[AtomicU64]>);

/// Words per decision record in a [`Scratch`]: each field's words are
/// `layout::DECISION`'s.
pub(crate) const DECISION_WORDS: usize = DECISION.size as usize;

impl Scratch {
    /// `words` zeroed words.
    pub(crate) fn new(words: usize) -> Self {
        Scratch((0..words).map(|_| AtomicU64::new(0)).collect())
    }

    #[inline]
    pub(crate) fn set_f64(&self, i: usize, x: f64) {
        self.0[i].store(x.to_bits(), Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn set_i64(&self, i: usize, x: i64) {
        self.0[i].store(x as u64, Ordering::Relaxed);
    }

    /// Writes `d` as the decision record at word `at` (`layout::DECISION`).
    #[inline]
    pub(crate) fn write_decision(&self, at: usize, d: &Decision) {
        let word = |w: u32| at + w as usize;
        let w = DECISION;
        let counts = [(w.limit, w.limit_exact, d.limit), (w.remaining, w.remaining_exact, d.remaining)];
        let durations = [
            (w.retry_after_ms, w.retry_after_micros, d.retry_after_micros),
            (w.reset_after_ms, w.reset_after_micros, d.reset_after_micros),
            (w.wait_ms, w.wait_micros, d.wait_micros),
            (w.window_ms, w.window_micros, d.window_micros),
        ];
        let mut inexact = false;
        for (double, exact, count) in counts {
            inexact |= count > MAX_EXACT_COUNT;
            self.set_f64(word(double), count as f64);
            self.set_i64(word(exact), count as i64);
        }
        for (double, exact, micros) in durations {
            let ms = millis(micros);
            inexact |= !round_trips(micros, ms);
            self.set_f64(word(double), ms);
            self.set_i64(word(exact), micros);
        }
        self.set_f64(word(w.inexact), if inexact { 1.0 } else { 0.0 });
        self.set_f64(word(w.allowed), if d.allowed { 1.0 } else { 0.0 });
    }

    fn words(&self) -> &[AtomicU64] {
        &self.0
    }
}

/// The largest count a double holds exactly (2^53 − 1).
const MAX_EXACT_COUNT: u64 = (1 << 53) - 1;

/// A duration in microseconds as milliseconds: `NEVER` is `Infinity`.
#[inline]
pub(crate) fn millis(micros: i64) -> f64 {
    if micros == NEVER {
        f64::INFINITY
    } else {
        micros as f64 / 1e3
    }
}

/// Whether JavaScript gets `micros` back exactly from `ms` as
/// `Math.round(ms * 1000)` (or `NEVER` from `Infinity`) — true below about
/// 2^50 µs (35 years); the exact words are read only when it is not.
#[inline]
fn round_trips(micros: i64, ms: f64) -> bool {
    micros == NEVER || (micros >= 0 && (ms * 1e3).round() as i64 == micros)
}

/// Builds the plain object of functions bound to one target.
pub(crate) struct Binder<T> {
    env: sys::napi_env,
    object: sys::napi_value,
    target: Arc<T>,
}

impl<T: Send + Sync + 'static> Binder<T> {
    pub(crate) fn new(env: sys::napi_env, target: Arc<T>) -> Result<Self, Failure> {
        let mut object = ptr::null_mut();
        // SAFETY: plain value creation in the running call's environment.
        js::check(env, unsafe { sys::napi_create_object(env, &mut object) }, "create object")?;
        Ok(Binder { env, object, target })
    }

    /// One function per method, each through the method table.
    pub(crate) fn methods(&mut self, methods: &[Named<T>]) -> Result<&mut Self, Failure> {
        for &(name, arity, method) in methods {
            let callback: Callback = match arity {
                0 => call::<T, 0>,
                1 => call::<T, 1>,
                2 => call::<T, 2>,
                3 => call::<T, 3>,
                _ => call::<T, MAX_ARGS>,
            };
            let function = bind_one(self.env, name, callback, Bound { target: Arc::clone(&self.target), method })?;
            js::set(self.env, self.object, name, function)?;
        }
        Ok(self)
    }

    /// A boolean property.
    pub(crate) fn flag(&mut self, name: &CStr, value: bool) -> Result<&mut Self, Failure> {
        let mut boolean = ptr::null_mut();
        // SAFETY: plain value creation.
        js::check(self.env, unsafe { sys::napi_get_boolean(self.env, value, &mut boolean) }, "get boolean")?;
        js::set(self.env, self.object, name, boolean)?;
        Ok(self)
    }

    /// A number property.
    pub(crate) fn number(&mut self, name: &CStr, value: f64) -> Result<&mut Self, Failure> {
        js::set(self.env, self.object, name, js::number(self.env, value)?)?;
        Ok(self)
    }

    /// A property of any value made in this call.
    pub(crate) fn value(&mut self, name: &CStr, value: sys::napi_value) -> Result<&mut Self, Failure> {
        js::set(self.env, self.object, name, value)?;
        Ok(self)
    }

    /// A `Float64Array` over the target's scratch words (see [`Scratch`]).
    /// The array's memory is the target's: the array keeps the target alive
    /// (its finalizer holds a reference), so it can never outlive it.
    pub(crate) fn scratch(&mut self, name: &CStr, scratch: fn(&T) -> &Scratch) -> Result<&mut Self, Failure> {
        let array = scratch_array(self.env, &self.target, scratch)?;
        js::set(self.env, self.object, name, array)?;
        Ok(self)
    }

    /// Tags the object as `T`'s and keeps a reference to the target in it,
    /// so that [`target_of`] finds the target when JavaScript passes the
    /// object back.
    pub(crate) fn tagged(&mut self) -> Result<&mut Self, Failure>
    where
        T: Tagged,
    {
        // SAFETY: the object of the running call; the tag is a constant.
        let status = unsafe { sys::napi_type_tag_object(self.env, self.object, &T::TAG) };
        js::check(self.env, status, "type tag")?;
        let data = Box::into_raw(Box::new(Arc::clone(&self.target))).cast::<c_void>();
        // SAFETY: `release_wrapped::<T>` frees `data` once, when the object
        // is collected.
        let status = unsafe {
            sys::napi_wrap(self.env, self.object, data, Some(release_wrapped::<T>), ptr::null_mut(), ptr::null_mut())
        };
        if status != sys::Status::napi_ok {
            // SAFETY: not wrapped: nothing else holds `data`.
            unsafe { release_wrapped::<T>(self.env, data, ptr::null_mut()) };
        }
        js::check(self.env, status, "wrap")?;
        Ok(self)
    }

    /// The object.
    pub(crate) fn finish(&self) -> sys::napi_value {
        self.object
    }
}

impl<T: Hot> Binder<T> {
    /// Hot call `W` under two names: `with_arg` reading its argument,
    /// `without` reading none (the argument's default).
    pub(crate) fn hot<const W: u8>(
        &mut self,
        (with_arg, without): (&'static CStr, &'static CStr),
    ) -> Result<&mut Self, Failure> {
        for (name, callback) in [(with_arg, call_hot::<T, W, 1> as Callback), (without, call_hot::<T, W, 0>)] {
            // The hot callback calls `Hot::hot`, not `method`.
            let bound = Bound { target: Arc::clone(&self.target), method: |_, _| Ok(Returned::Undefined) };
            js::set(self.env, self.object, name, bind_one(self.env, name, callback, bound)?)?;
        }
        Ok(self)
    }
}

impl<T: HotKeyed> Binder<T> {
    /// Hot keyed call `W` as `name`, reading a key and a cost.
    pub(crate) fn hot_keyed<const W: u8>(&mut self, name: &'static CStr) -> Result<&mut Self, Failure> {
        // The hot callback calls `HotKeyed::hot`, not `method`.
        let bound = Bound { target: Arc::clone(&self.target), method: |_, _| Ok(Returned::Undefined) };
        js::set(self.env, self.object, name, bind_one(self.env, name, call_keyed::<T, W>, bound)?)?;
        Ok(self)
    }
}

/// A `Float64Array` over `target`'s scratch words (see [`Scratch`]). The
/// array's memory is the target's: the array keeps the target alive (its
/// finalizer holds a reference), so it can never outlive it.
pub(crate) fn scratch_array<T: Send + Sync + 'static>(
    env: sys::napi_env,
    target: &Arc<T>,
    scratch: fn(&T) -> &Scratch,
) -> Result<sys::napi_value, Failure> {
    let words = scratch(target).words();
    let data = words.as_ptr().cast_mut().cast::<c_void>();
    let keep = Arc::into_raw(Arc::clone(target)).cast_mut().cast::<c_void>();
    let mut buffer = ptr::null_mut();
    // SAFETY: `data` is `size_of_val(words)` bytes inside the target,
    // which lives until the finalizer (`release_target::<T>`, run once
    // when the buffer is collected) drops the reference `keep` holds.
    let status = unsafe {
        sys::napi_create_external_arraybuffer(
            env,
            data,
            std::mem::size_of_val(words),
            Some(release_target::<T>),
            keep,
            &mut buffer,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: the buffer was not created; nothing else holds `keep`.
        unsafe { release_target::<T>(env, ptr::null_mut(), keep) };
        if status == sys::Status::napi_no_external_buffers_allowed {
            return Err(Failure::Internal(
                "this Node.js runtime forbids external ArrayBuffers (a V8 sandbox build): ratekeeper needs them"
                    .to_owned(),
            ));
        }
        js::check(env, status, "create external arraybuffer")?;
    }
    let mut array = ptr::null_mut();
    // SAFETY: a view of the whole buffer just created.
    let status = unsafe {
        sys::napi_create_typedarray(env, sys::TypedarrayType::float64_array, words.len(), buffer, 0, &mut array)
    };
    js::check(env, status, "create Float64Array")?;
    Ok(array)
}

/// The target of an object of bound functions that [`Binder::tagged`]
/// tagged as `T`'s; `None` for any other value.
pub(crate) fn target_of<T: Tagged>(value: Js) -> Option<Arc<T>> {
    if value.kind() != crate::js::Kind::Object {
        return None;
    }
    let mut is = false;
    // SAFETY: a live object of the running call.
    let status = unsafe { sys::napi_check_object_type_tag(value.env, value.raw, &T::TAG, &mut is) };
    if status != sys::Status::napi_ok || !is {
        return None;
    }
    let mut data = ptr::null_mut();
    // SAFETY: as above.
    let status = unsafe { sys::napi_unwrap(value.env, value.raw, &mut data) };
    if status != sys::Status::napi_ok || data.is_null() {
        return None;
    }
    // SAFETY: the tag proves `Binder::tagged::<T>` wrapped an `Arc<T>`
    // here, which lives as long as the object (alive during this call).
    Some(Arc::clone(unsafe { &*data.cast_const().cast::<Arc<T>>() }))
}

/// Frees the reference a tagged object held on its target.
unsafe extern "C" fn release_wrapped<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `Binder::tagged::<T>`, and
    // the finalizer runs once.
    drop(unsafe { Box::from_raw(data.cast::<Arc<T>>()) });
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

/// Drops the reference a scratch array held on its target.
unsafe extern "C" fn release_target<T>(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` came from `Arc::into_raw` in `Binder::scratch`, and the
    // finalizer runs once.
    drop(unsafe { Arc::from_raw(hint.cast_const().cast::<T>()) });
}

/// Every bound function's callback, for methods reading `N` arguments.
unsafe extern "C" fn call<T, const N: usize>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut args = Args { env, read: N, argc: N, argv: [ptr::null_mut(); MAX_ARGS] };
    let mut data = ptr::null_mut();
    // A method of no arguments asks for none: Node-API then skips copying
    // them.
    let argv = if N == 0 { ptr::null_mut() } else { args.argv.as_mut_ptr() };
    // SAFETY: `info` is this call's; `argv` has room for `N <= MAX_ARGS`
    // values (missing ones read as `undefined`); `argc` becomes the number
    // the caller passed.
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
            Ok(Returned::BigInt(x)) => sys::napi_create_bigint_int64(env, x, &mut result),
            Ok(Returned::Value(value)) => {
                result = value;
                sys::Status::napi_ok
            }
            Ok(Returned::Undefined) => sys::napi_get_undefined(env, &mut result),
            Err(failure) => {
                throw(env, failure);
                return ptr::null_mut();
            }
        };
    }
    result
}

/// The hot path's callback: hot call `W` reading its argument (`N` = 1) or
/// none (`N` = 0). A callback of its own saves the method table's dispatch
/// on the calls that matter most (figures: BENCHMARKS.md, Node.js).
unsafe extern "C" fn call_hot<T: Hot, const W: u8, const N: usize>(
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
        // SAFETY: only `Binder::hot` creates functions with this callback,
        // with a `Bound<T>` as data that lives as long as the function.
        let bound = unsafe { &*data.cast_const().cast::<Bound<T>>() };
        let arg = T::arg((N == 1 && argc > 0).then(|| Js::new(env, argv[0])))?;
        bound.target.hot::<W>(arg)
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

/// The hot keyed callback: hot keyed call `W`, reading a key (a string or
/// a `Uint8Array`, into this frame) and an optional cost.
unsafe extern "C" fn call_keyed<T: HotKeyed, const W: u8>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = 2;
    let mut argv = [ptr::null_mut(); 2];
    let mut data = ptr::null_mut();
    // SAFETY: `info` is this call's; `argv` has room for 2 values.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
    let outcome = boundary(|| {
        js::check(env, status, "read arguments")?;
        // SAFETY: only `Binder::hot_keyed` creates functions with this
        // callback, with a `Bound<T>` as data that lives as long as the
        // function.
        let bound = unsafe { &*data.cast_const().cast::<Bound<T>>() };
        // Missing arguments read as `undefined` (Node-API fills them in).
        let cost = crate::args::cost_or_one((argc > 1).then(|| Js::new(env, argv[1])))?;
        crate::args::with_key(Js::new(env, argv[0]), |key| bound.target.hot::<W>(key, cost))?
    })
    .and_then(|result| result.map_err(|boxed| *boxed.0));
    let mut result = ptr::null_mut();
    match outcome {
        // SAFETY: plain value creation in this call's environment.
        Ok(allowed) => unsafe { sys::napi_get_boolean(env, allowed, &mut result) },
        Err(failure) => {
            throw(env, failure);
            return ptr::null_mut();
        }
    };
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_trip_through_milliseconds_or_say_so() {
        for micros in [0, 1, 999, 1_001, 123_456_789, (1 << 50) - 1, NEVER] {
            assert!(round_trips(micros, millis(micros)), "{micros}");
        }
        // Beyond ≈ 2^50 µs some do not: the exact words are read then.
        let lossy = (50..63).flat_map(|b| [(1_i64 << b) + 1, (1 << b) + 7]).filter(|&m| !round_trips(m, millis(m)));
        assert!(lossy.count() > 0);
        assert!(!round_trips(-1, millis(-1)));
        assert_eq!(millis(NEVER), f64::INFINITY);
    }

    #[test]
    fn a_decision_record_holds_every_field() {
        let d = Decision {
            allowed: true,
            limit: 10,
            remaining: 3,
            retry_after_micros: 0,
            reset_after_micros: 1_500,
            wait_micros: (1 << 60) + 1,
            window_micros: NEVER,
        };
        // At word 16, as a composite's first part: every word relative.
        let at = DECISION_WORDS;
        let scratch = Scratch::new(2 * DECISION_WORDS);
        scratch.write_decision(at, &d);
        let f = |w: u32| f64::from_bits(scratch.words()[at + w as usize].load(Ordering::Relaxed));
        let i = |w: u32| scratch.words()[at + w as usize].load(Ordering::Relaxed) as i64;
        let w = DECISION;
        assert_eq!(
            [f(w.limit), f(w.remaining), f(w.retry_after_ms), f(w.reset_after_ms), f(w.window_ms), f(w.allowed)],
            [10.0, 3.0, 0.0, 1.5, f64::INFINITY, 1.0]
        );
        assert_eq!(f(w.wait_ms), ((1_i64 << 60) + 1) as f64 / 1e3);
        assert_eq!(f(w.inexact), 1.0, "the wait does not survive milliseconds");
        assert_eq!(
            [i(w.retry_after_micros), i(w.reset_after_micros), i(w.wait_micros), i(w.window_micros)],
            [0, 1_500, (1 << 60) + 1, NEVER]
        );
        assert_eq!([i(w.limit_exact), i(w.remaining_exact)], [10, 3]);
        scratch.write_decision(at, &Decision { wait_micros: 0, allowed: false, ..d });
        assert_eq!((f(w.inexact), f(w.allowed)), (0.0, 0.0));
        assert!(scratch.words()[..at].iter().all(|x| x.load(Ordering::Relaxed) == 0), "wrote outside its record");
    }
}
