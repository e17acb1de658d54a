//! Arguments from JavaScript: the checks and unit conversions every
//! JavaScript class of the binding shares.
//!
//! JavaScript has one number type, so the binding checks what Rust's types
//! would: permit counts are integers, durations are not `NaN`, exact
//! microseconds are integers (a number, or a bigint beyond 2^53). Domain
//! checks (a positive rate, at most 2^31 − 1 permits) stay in the library,
//! which reports them as [`ratekeeper::Error`].
//!
//! One rule for every count — permits, costs, limits, sizes: an integer,
//! given as a number or as a bigint, with the same range either way (`1n`
//! is `1`; `0n` permits is the same `RangeError` as `0`). Rates and
//! factors, which are not counts, are numbers only.
//!
//! Durations come in milliseconds (`…Ms`, JavaScript's unit: `setTimeout`,
//! `Date.now`) or as exact whole microseconds (`…Micros`, the library's
//! unit: a number or a bigint). Milliseconds become microseconds by the
//! library's one rule for durations (`ratekeeper::duration_micros_from_millis`):
//! rounded to the nearest microsecond, and `NaN`, an infinity, a negative
//! value or 2^63 µs or more is a `RangeError` naming the option, never
//! clamped; a timeout alone may be negative (do not wait) or infinite (no
//! deadline).

use ratekeeper::core::smooth::permits_from_i64;
use ratekeeper::keyed::MaxKeyBytes;
use ratekeeper::{unsigned_from_i64, Argument};

use napi::sys;

use crate::error::{blame, Failure, Given, PERMITS_REQUIREMENT};
use crate::js::{Js, Kind};

/// The largest integer a double holds exactly, and its neighbours.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// 2^63 as a double: integers at or beyond it do not fit an `i64`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// A permit count: an integer from 1 to 2^31 − 1 (Guava's `int`), a
/// number or a bigint. The hot path: one Node-API call when the value is a
/// fine number.
#[inline]
pub(crate) fn permits(value: Js) -> Result<u32, Failure> {
    let Some(x) = value.number() else {
        return permits_not_a_number(value);
    };
    if x >= 1.0 && x <= f64::from(i32::MAX) && x.fract() == 0.0 {
        return Ok(x as u32);
    }
    // The library's own check decides an integer; a fraction, NaN, an
    // infinity or an integer beyond 2^53 is refused before. Either way the
    // error shows the value as given (`-0`, not the library's `0`).
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER {
        if let Ok(p) = permits_from_i64(x as i64) {
            return Ok(p);
        }
    }
    Err(Failure::OutOfRange { argument: "permits", value, requirement: PERMITS_REQUIREMENT })
}

/// `permits` given as anything but a number: a bigint in range, or an
/// error naming `permits`.
#[cold]
fn permits_not_a_number(value: Js) -> Result<u32, Failure> {
    match value.bigint_i64() {
        Some(Ok(i)) => permits_from_i64(i).map_err(|_| Failure::OutOfRange {
            argument: "permits",
            value,
            requirement: PERMITS_REQUIREMENT,
        }),
        Some(Err(())) => Err(Failure::OutOfRange { argument: "permits", value, requirement: PERMITS_REQUIREMENT }),
        None => Err(Failure::WrongType { argument: "permits", value, expected: "an integer number or a bigint" }),
    }
}

/// `permits`, with `undefined` meaning 1 (JavaScript's default argument).
#[inline]
pub(crate) fn permits_or_one(value: Js) -> Result<u32, Failure> {
    match permits(value) {
        Err(Failure::WrongType { .. }) if value.is_undefined() => Ok(1),
        outcome => outcome,
    }
}

/// Room for a key read in one Node-API call, in UTF-16 code units: a
/// string shorter than `KEY_UNITS - 1` units is known to be whole (see
/// [`with_key`]); longer ones are read again into a buffer of their size.
const KEY_UNITS: usize = 256;

/// What a key must be.
const KEY_EXPECTED: &str = "a string or a Uint8Array (a Buffer)";

/// Calls `f` with the bytes of a keyed limiter's key: a string's UTF-8, or
/// the bytes of a `Uint8Array` (a `Buffer`) as they are — so the string
/// `"é"` and `Buffer.from("é")` are the same key. The hot path of
/// `KeyedLimiter.check(key, cost)`: one Node-API call for a string of up to
/// 254 code units, read into this stack frame; an ASCII one (the usual
/// key: an address, an id) is its bytes with no allocation.
///
/// The string is read as UTF-16 and encoded here: V8 copies a string's
/// code units far faster than it writes UTF-8 (its UTF-8 writer led a
/// `check`'s profile), and a lone surrogate (`'\ud800'`), which has no
/// UTF-8, is seen as it is — Node-API's UTF-8 would put U+FFFD in its place,
/// as `Buffer.from(string)` does, making distinct strings one key. A string
/// with one is refused with the invalid-argument error naming `key`, its
/// value the surrogate's index.
#[inline]
pub(crate) fn with_key<R>(value: Js, f: impl FnOnce(&[u8]) -> R) -> Result<R, Failure> {
    let mut units = [std::mem::MaybeUninit::<u16>::uninit(); KEY_UNITS];
    let mut written = 0usize;
    // SAFETY: `units` has room for `KEY_UNITS` code units (Node-API writes
    // at most `KEY_UNITS - 1` and a NUL); it fails without side effects
    // when the value is not a string.
    let status = unsafe {
        sys::napi_get_value_string_utf16(value.env, value.raw, units.as_mut_ptr().cast(), KEY_UNITS, &mut written)
    };
    if status == sys::Status::napi_ok {
        if written < KEY_UNITS - 1 {
            // SAFETY: Node-API initialised the first `written` units.
            let units = unsafe { std::slice::from_raw_parts(units.as_ptr().cast::<u16>(), written) };
            let mut bytes = [0u8; KEY_UNITS];
            for (byte, &unit) in bytes.iter_mut().zip(units) {
                if unit >= 0x80 {
                    return Ok(f(utf8(units)?.as_bytes()));
                }
                *byte = unit as u8;
            }
            return Ok(f(&bytes[..written]));
        }
        let long = value.string_utf16().ok_or(Failure::Internal("a string could not be read".to_owned()))?;
        return Ok(f(utf8(&long)?.as_bytes()));
    }
    let (mut kind, mut len, mut data) = (0, 0usize, std::ptr::null_mut());
    // SAFETY: fails without side effects when the value is not a typed array.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            value.env,
            value.raw,
            &mut kind,
            &mut len,
            &mut data,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if status == sys::Status::napi_ok && kind == sys::TypedarrayType::uint8_array {
        if data.is_null() || len == 0 {
            return Ok(f(&[])); // empty, or its buffer detached
        }
        // SAFETY: the array's `len` bytes, which no JavaScript can change
        // while this native call runs (`f` runs no JavaScript).
        return Ok(f(unsafe { std::slice::from_raw_parts(data.cast_const().cast::<u8>(), len) }));
    }
    Err(Failure::WrongType { argument: "key", value, expected: KEY_EXPECTED })
}

/// The UTF-8 of a key's UTF-16 `units`, or the invalid-argument error whose
/// value is the index of its first lone surrogate.
#[cold]
fn utf8(units: &[u16]) -> Result<String, Failure> {
    let mut text = String::with_capacity(units.len() * 3);
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) => text.push(c),
            Err(_) => {
                let at = text.chars().map(char::len_utf16).sum::<usize>();
                return Err(Failure::Library(ratekeeper::Error::invalid_uint(Argument::KeyText, at as u64)));
            }
        }
    }
    Ok(text)
}

/// `maxKeyBytes`, the longest key of a keyed or Redis limiter: an integer
/// number or a bigint from 1 to 65536 (`undefined`: 256).
pub(crate) fn max_key_bytes(value: Js) -> Result<MaxKeyBytes, Failure> {
    if value.is_undefined() {
        return Ok(MaxKeyBytes::DEFAULT);
    }
    let given = Given { argument: Argument::MaxKeyBytes, name: "maxKeyBytes", value };
    let bytes = count(value, Argument::MaxKeyBytes, "maxKeyBytes")?;
    blame(MaxKeyBytes::new(usize::try_from(bytes).unwrap_or(usize::MAX)), &[given])
}

/// Any number (the library checks the domain), or a `TypeError`.
pub(crate) fn number(value: Js, argument: &'static str) -> Result<f64, Failure> {
    value.number().ok_or(Failure::WrongType { argument, value, expected: "a number" })
}

/// A duration of `ms` milliseconds given as option `name` (its value
/// `value`), as whole microseconds by the library's rule for durations,
/// checked as `argument`: the error names the option and shows the value as
/// given.
pub(crate) fn millis(argument: Argument, name: &'static str, value: Js, ms: f64) -> Result<i64, Failure> {
    blame(ratekeeper::duration_micros_from_millis(argument, ms), &[Given { argument, name, value }])
}

/// An exact number of microseconds: an integer number or a bigint, within
/// the `i64` range.
pub(crate) fn micros(value: Js, argument: &'static str) -> Result<i64, Failure> {
    const REQUIREMENT: &str = "must be an integer between -(2^63) and 2^63 - 1";
    if let Some(big) = value.bigint_i64() {
        return big.map_err(|()| Failure::OutOfRange { argument, value, requirement: REQUIREMENT });
    }
    let Some(x) = value.number() else {
        return Err(Failure::WrongType { argument, value, expected: "an integer number or a bigint" });
    };
    if x.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&x) {
        Ok(x as i64)
    } else {
        Err(Failure::OutOfRange { argument, value, requirement: REQUIREMENT })
    }
}

/// An integer within the `i64` range: an integer number or a bigint
/// (`None` when it is neither, `Some(Err(()))` when it is out of range or
/// not an integer).
fn integer(value: Js) -> Option<Result<i64, ()>> {
    if let Some(big) = value.bigint_i64() {
        return Some(big);
    }
    let x = value.number()?;
    Some(if x.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&x) { Ok(x as i64) } else { Err(()) })
}

/// A count or size that the library takes as a `u64` (a cost, a burst, a
/// limit): an integer number or a bigint, not negative — the library's own
/// conversion ([`unsigned_from_i64`]) decides, and its error names `name`.
/// A fraction is refused here; a number beyond the `i64` range fails the
/// library's requirement for `argument`.
pub(crate) fn count(value: Js, argument: Argument, name: &'static str) -> Result<u64, Failure> {
    let given = Given { argument, name, value };
    match integer(value) {
        Some(Ok(i)) => blame(unsigned_from_i64(argument, i), &[given]),
        Some(Err(())) if value.number().is_some_and(|x| x.fract() != 0.0 || x.is_nan()) => {
            Err(Failure::OutOfRange { argument: name, value, requirement: "must be an integer" })
        }
        Some(Err(())) => {
            Err(Failure::OutOfRange { argument: name, value, requirement: crate::error::requirement(argument) })
        }
        None => Err(Failure::WrongType { argument: name, value, expected: "an integer number or a bigint" }),
    }
}

/// A request's cost, 1 when absent or `undefined`: the hot path of every
/// admission-style limiter (one Node-API call for a small integer).
#[inline]
pub(crate) fn cost_or_one(value: Option<Js>) -> Result<u64, Failure> {
    let Some(value) = value else { return Ok(1) };
    if let Some(x) = value.number() {
        if (0.0..=MAX_SAFE_INTEGER).contains(&x) && x.fract() == 0.0 {
            return Ok(x as u64);
        }
    } else if value.is_undefined() {
        return Ok(1);
    }
    count(value, Argument::Cost, "cost")
}

/// A duration given in milliseconds (`names.0`) or in exact microseconds
/// (`names.1`), one of the two, required: whole microseconds (milliseconds
/// by the library's rule, [`millis`]), and who to blame when the library
/// refuses them (`argument`).
pub(crate) fn required_duration(
    ms: Js,
    micros: Js,
    names: (&'static str, &'static str),
    argument: Argument,
) -> Result<(i64, Given), Failure> {
    match duration(ms, micros, names)? {
        Some(Duration::Millis(value, x)) => {
            Ok((millis(argument, names.0, value, x)?, Given { argument, name: names.0, value }))
        }
        Some(Duration::Micros(m)) => Ok((m, Given { argument, name: names.1, value: micros })),
        None => Err(Failure::WrongType { argument: names.0, value: ms, expected: "a number" }),
    }
}

/// Checks an options object: `undefined`, or an object whose own
/// enumerable keys are all `known`. (The JavaScript classes read the options
/// themselves and pass them on as arguments; they call this, through
/// `checkOptions`, only when their own quick look finds something amiss,
/// so that the error is made here like every other.)
pub(crate) fn check_options(value: Js, known: &[String]) -> Result<(), Failure> {
    match value.kind() {
        Kind::Undefined => return Ok(()),
        Kind::Object => {}
        _ => return Err(Failure::WrongType { argument: "options", value, expected: "an object" }),
    }
    for key in value.own_keys()? {
        if !known.contains(&key) {
            return Err(Failure::InvalidOption(format!(
                "unknown option {key:?} (known options: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// A duration option given in milliseconds or in exact microseconds.
pub(crate) enum Duration {
    /// Given in milliseconds: the value (for errors) and the number.
    Millis(Js, f64),
    /// Given in exact microseconds.
    Micros(i64),
}

/// A duration given by one of two options (`undefined` when absent), not
/// both: `names` are their JavaScript names, milliseconds first.
pub(crate) fn duration(ms: Js, micros: Js, names: (&'static str, &'static str)) -> Result<Option<Duration>, Failure> {
    match (ms.is_undefined(), micros.is_undefined()) {
        (true, true) => Ok(None),
        (false, true) => Ok(Some(Duration::Millis(ms, number(ms, names.0)?))),
        (true, false) => Ok(Some(Duration::Micros(self::micros(micros, names.1)?))),
        (false, false) => {
            Err(Failure::InvalidOption(format!("options {} and {} exclude each other: pass one", names.0, names.1)))
        }
    }
}

/// A timeout (`timeoutMs` or `timeoutMicros`) in microseconds, never
/// negative: absent means 0, negative means "do not wait" (Guava's
/// `tryAcquire`), `Infinity` means "no deadline", `NaN` is refused (the
/// library's rule for timeouts, `ratekeeper::timeout_micros_from_millis`).
pub(crate) fn timeout_micros(ms: Js, micros: Js) -> Result<i64, Failure> {
    Ok(match duration(ms, micros, ("timeoutMs", "timeoutMicros"))? {
        None => 0,
        Some(Duration::Micros(m)) => m.max(0),
        Some(Duration::Millis(value, x)) => blame(
            ratekeeper::timeout_micros_from_millis(x),
            &[Given { argument: Argument::Timeout, name: "timeoutMs", value }],
        )?,
    })
}
