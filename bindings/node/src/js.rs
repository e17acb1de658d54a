//! Raw JavaScript values, for the argument conversions and error objects
//! that napi-rs's typed conversions do not do the way this binding needs:
//! its conversions throw their own errors (no `code`, Rust type names in the
//! message), and its hot paths cost several times a raw Node-API call (see
//! `fast_call`).
//!
//! Every function here takes a [`Js`] — a value's handle and the environment
//! of the native call that received it — and is only valid while that call
//! runs, which is how the binding uses them: values are read, converted and
//! dropped before the native function returns.

use std::ffi::{c_char, CStr};
use std::ptr;

use napi::sys;

use crate::error::Failure;

/// A JavaScript value inside one native call.
#[derive(Clone, Copy)]
pub(crate) struct Js {
    pub(crate) env: sys::napi_env,
    pub(crate) raw: sys::napi_value,
}

/// `typeof`, with `null` and arrays told apart (for messages and checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Undefined,
    Null,
    Boolean,
    Number,
    BigInt,
    String,
    Symbol,
    Function,
    Array,
    Object,
    External,
}

impl Kind {
    /// The noun used in messages: "received a string".
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Undefined => "undefined",
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Number => "a number",
            Kind::BigInt => "a bigint",
            Kind::String => "a string",
            Kind::Symbol => "a symbol",
            Kind::Function => "a function",
            Kind::Array => "an array",
            Kind::Object => "an object",
            Kind::External => "an external",
        }
    }
}

/// Turns a Node-API status into a [`Failure`]: a JavaScript exception that
/// is already pending (a throwing getter, say) propagates as it is.
pub(crate) fn check(env: sys::napi_env, status: sys::napi_status, what: &str) -> Result<(), Failure> {
    if status == sys::Status::napi_ok {
        return Ok(());
    }
    let mut pending = false;
    // SAFETY: `env` is the environment of the running native call.
    unsafe { sys::napi_is_exception_pending(env, &mut pending) };
    if pending {
        Err(Failure::Thrown)
    } else {
        Err(Failure::Internal(format!("Node-API call failed ({what}, status {status})")))
    }
}

impl Js {
    pub(crate) fn new(env: sys::napi_env, raw: sys::napi_value) -> Self {
        Js { env, raw }
    }

    pub(crate) fn kind(self) -> Kind {
        let mut t = 0;
        // SAFETY: a live value of the running call.
        if unsafe { sys::napi_typeof(self.env, self.raw, &mut t) } != sys::Status::napi_ok {
            return Kind::Undefined;
        }
        match t {
            sys::ValueType::napi_undefined => Kind::Undefined,
            sys::ValueType::napi_null => Kind::Null,
            sys::ValueType::napi_boolean => Kind::Boolean,
            sys::ValueType::napi_number => Kind::Number,
            sys::ValueType::napi_bigint => Kind::BigInt,
            sys::ValueType::napi_string => Kind::String,
            sys::ValueType::napi_symbol => Kind::Symbol,
            sys::ValueType::napi_function => Kind::Function,
            sys::ValueType::napi_external => Kind::External,
            _ => {
                let mut is_array = false;
                // SAFETY: as above.
                unsafe { sys::napi_is_array(self.env, self.raw, &mut is_array) };
                if is_array {
                    Kind::Array
                } else {
                    Kind::Object
                }
            }
        }
    }

    pub(crate) fn is_undefined(self) -> bool {
        self.kind() == Kind::Undefined
    }

    /// The value if it is a number (one Node-API call: the hot path).
    #[inline]
    pub(crate) fn number(self) -> Option<f64> {
        let mut x = 0.0;
        // SAFETY: a live value of the running call; fails without side
        // effects when the value is not a number.
        let status = unsafe { sys::napi_get_value_double(self.env, self.raw, &mut x) };
        (status == sys::Status::napi_ok).then_some(x)
    }

    /// The value if it is a bigint that fits in an `i64`: `Some(Err(()))`
    /// for a bigint that does not fit.
    pub(crate) fn bigint_i64(self) -> Option<Result<i64, ()>> {
        if self.kind() != Kind::BigInt {
            return None;
        }
        let (mut x, mut lossless) = (0i64, false);
        // SAFETY: a live bigint of the running call.
        let status = unsafe { sys::napi_get_value_bigint_int64(self.env, self.raw, &mut x, &mut lossless) };
        Some(if status == sys::Status::napi_ok && lossless { Ok(x) } else { Err(()) })
    }

    /// `String(value)` for a primitive whose conversion runs no user code
    /// (numbers, bigints, booleans); `None` otherwise.
    fn primitive_string(self) -> Option<String> {
        if !matches!(self.kind(), Kind::Number | Kind::BigInt | Kind::Boolean) {
            return None;
        }
        let mut s = ptr::null_mut();
        // SAFETY: coercing a primitive number/bigint/boolean calls no JavaScript.
        if unsafe { sys::napi_coerce_to_string(self.env, self.raw, &mut s) } != sys::Status::napi_ok {
            return None;
        }
        Js::new(self.env, s).string()
    }

    /// The value if it is a string.
    pub(crate) fn string(self) -> Option<String> {
        String::from_utf8(self.string_bytes()?).ok()
    }

    /// The value's UTF-16 code units if it is a string: what it holds
    /// exactly, lone surrogates included.
    pub(crate) fn string_utf16(self) -> Option<Vec<u16>> {
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length only.
        if unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, ptr::null_mut(), 0, &mut len) }
            != sys::Status::napi_ok
        {
            return None;
        }
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
        // SAFETY: `buf` has room for `len` code units and the terminating NUL.
        let status =
            unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, buf.as_mut_ptr(), buf.len(), &mut written) };
        if status != sys::Status::napi_ok {
            return None;
        }
        buf.truncate(written);
        Some(buf)
    }

    /// The value's UTF-8 if it is a string (a lone surrogate as U+FFFD).
    pub(crate) fn string_bytes(self) -> Option<Vec<u8>> {
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length only.
        if unsafe { sys::napi_get_value_string_utf8(self.env, self.raw, ptr::null_mut(), 0, &mut len) }
            != sys::Status::napi_ok
        {
            return None;
        }
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        // SAFETY: `buf` has room for `len` bytes and the terminating NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                self.raw,
                buf.as_mut_ptr().cast::<c_char>(),
                buf.len(),
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return None;
        }
        buf.truncate(written);
        Some(buf)
    }

    /// The value as a message shows it: numbers and bigints as JavaScript
    /// prints them (`-0` kept), strings quoted, anything else by its kind.
    pub(crate) fn describe(self) -> String {
        match self.kind() {
            Kind::Number if self.number().is_some_and(|x| x == 0.0 && x.is_sign_negative()) => "-0".to_owned(),
            Kind::Number | Kind::Boolean => self.primitive_string().unwrap_or_else(|| "?".to_owned()),
            Kind::BigInt => self.primitive_string().map_or_else(|| "?n".to_owned(), |s| s + "n"),
            Kind::String => {
                let s = self.string().unwrap_or_default();
                let mut shown: String = s.chars().take(40).collect();
                if shown.len() < s.len() {
                    shown.push('…');
                }
                format!("{shown:?}")
            }
            other => other.noun().to_owned(),
        }
    }

    /// The value if it is a boolean.
    pub(crate) fn boolean(self) -> Option<bool> {
        let mut b = false;
        // SAFETY: a live value of the running call; fails without side
        // effects when the value is not a boolean.
        let status = unsafe { sys::napi_get_value_bool(self.env, self.raw, &mut b) };
        (status == sys::Status::napi_ok).then_some(b)
    }

    /// `object[key]` (runs a getter if there is one).
    pub(crate) fn property(self, key: &str) -> Result<Js, Failure> {
        let key = std::ffi::CString::new(key).map_err(|_| Failure::Internal("a key with a NUL".to_owned()))?;
        let mut out = ptr::null_mut();
        // SAFETY: a live object of the running call; `key` is NUL-terminated.
        let status = unsafe { sys::napi_get_named_property(self.env, self.raw, key.as_ptr(), &mut out) };
        check(self.env, status, "get property")?;
        Ok(Js::new(self.env, out))
    }

    /// The elements of an array (`None` when the value is not one).
    pub(crate) fn elements(self) -> Result<Option<Vec<Js>>, Failure> {
        if self.kind() != Kind::Array {
            return Ok(None);
        }
        let mut len = 0u32;
        // SAFETY: a live array of the running call.
        check(self.env, unsafe { sys::napi_get_array_length(self.env, self.raw, &mut len) }, "array length")?;
        (0..len)
            .map(|i| {
                let mut element = ptr::null_mut();
                check(
                    self.env,
                    // SAFETY: as above, a live array of the running call; a
                    // hole reads as `undefined`.
                    unsafe { sys::napi_get_element(self.env, self.raw, i, &mut element) },
                    "array element",
                )?;
                Ok(Js::new(self.env, element))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The object's own enumerable string keys (`Object.keys`).
    pub(crate) fn own_keys(self) -> Result<Vec<String>, Failure> {
        let mut names = ptr::null_mut();
        // SAFETY: a live object of the running call.
        let status = unsafe {
            sys::napi_get_all_property_names(
                self.env,
                self.raw,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        };
        check(self.env, status, "list properties")?;
        let mut len = 0u32;
        // SAFETY: `names` is the array just returned.
        check(self.env, unsafe { sys::napi_get_array_length(self.env, names, &mut len) }, "array length")?;
        (0..len)
            .map(|i| {
                let mut key = ptr::null_mut();
                // SAFETY: `i` is within the array.
                check(self.env, unsafe { sys::napi_get_element(self.env, names, i, &mut key) }, "array element")?;
                Ok(Js::new(self.env, key).string().unwrap_or_default())
            })
            .collect()
    }
}

/// Creates a JavaScript string.
pub(crate) fn string(env: sys::napi_env, s: &str) -> Result<sys::napi_value, Failure> {
    let mut out = ptr::null_mut();
    // SAFETY: `s` is valid UTF-8 of the given length.
    let status = unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast::<c_char>(), s.len() as isize, &mut out) };
    check(env, status, "create string")?;
    Ok(out)
}

/// Creates a JavaScript string of ASCII text (no UTF-8 to decode: a
/// response field's). Text that is not ASCII is created as UTF-8.
pub(crate) fn latin1(env: sys::napi_env, s: &str) -> Result<sys::napi_value, Failure> {
    if !s.is_ascii() {
        return string(env, s);
    }
    let mut out = ptr::null_mut();
    // SAFETY: `s` is ASCII (hence Latin-1) of the given length.
    let status =
        unsafe { sys::napi_create_string_latin1(env, s.as_ptr().cast::<c_char>(), s.len() as isize, &mut out) };
    check(env, status, "create string")?;
    Ok(out)
}

/// Creates a JavaScript number.
pub(crate) fn number(env: sys::napi_env, x: f64) -> Result<sys::napi_value, Failure> {
    let mut out = ptr::null_mut();
    // SAFETY: plain value creation.
    check(env, unsafe { sys::napi_create_double(env, x, &mut out) }, "create number")?;
    Ok(out)
}

/// Creates a JavaScript bigint.
pub(crate) fn bigint(env: sys::napi_env, x: i64) -> Result<sys::napi_value, Failure> {
    let mut out = ptr::null_mut();
    // SAFETY: plain value creation.
    check(env, unsafe { sys::napi_create_bigint_int64(env, x, &mut out) }, "create bigint")?;
    Ok(out)
}

/// Sets `object[key] = value`.
pub(crate) fn set(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &CStr,
    value: sys::napi_value,
) -> Result<(), Failure> {
    // SAFETY: `key` is NUL-terminated; both values are live.
    check(env, unsafe { sys::napi_set_named_property(env, object, key.as_ptr(), value) }, "set property")
}
