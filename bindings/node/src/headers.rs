//! The HTTP fields of decisions — `RateLimit`, `RateLimit-Policy`,
//! `Retry-After` — as the library writes them (`ratekeeper::headers`).
//!
//! A JavaScript `Decision` holds numbers; `node/lib/decision.js` hands
//! them back as exact 64-bit integers, seven per decision in the order of
//! [`RECORD`], and this formats them.

use std::ptr;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::{headers, Decision};

use crate::error::{guarded, Failure};
use crate::js::{self, Js};

/// The fields of a decision as `formatField` takes them, one 64-bit
/// integer each.
pub const RECORD: [&str; 7] =
    ["allowed", "limit", "remaining", "retryAfterMicros", "resetAfterMicros", "waitMicros", "windowMicros"];

/// The decisions in `records` (a `BigInt64Array` of [`RECORD`]s).
fn decisions(records: Js) -> Result<Vec<Decision>, Failure> {
    let (mut kind, mut len, mut data) = (0, 0usize, ptr::null_mut());
    // SAFETY: a live value of the running call; fails without side effects
    // when it is not a typed array.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            records.env,
            records.raw,
            &mut kind,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::bigint64_array || len % RECORD.len() != 0 {
        return Err(Failure::Internal("decision records are not a BigInt64Array of whole records".to_owned()));
    }
    let words: &[i64] = if len == 0 {
        &[]
    } else {
        // SAFETY: a BigInt64Array of `len` elements, alive and not detached
        // (its data pointer is not null) for the rest of this call.
        unsafe { std::slice::from_raw_parts(data.cast::<i64>(), len) }
    };
    Ok(words
        .chunks_exact(RECORD.len())
        .map(|w| Decision {
            allowed: w[0] != 0,
            limit: w[1] as u64,
            remaining: w[2] as u64,
            retry_after_micros: w[3],
            reset_after_micros: w[4],
            wait_micros: w[5],
            window_micros: w[6],
        })
        .collect())
}

/// An HTTP field's value for decisions: `field` 0 is `RateLimit`, 1
/// `RateLimit-Policy` (one item per name and decision, in order), 2
/// `Retry-After` (of the first decision; `undefined` when there should be
/// none).
#[napi(ts_args_type = "field: number, names: unknown[], records: BigInt64Array", ts_return_type = "string | undefined")]
pub fn format_field<'env>(
    env: &'env Env,
    field: u32,
    names: Unknown<'_>,
    records: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    guarded(env, || {
        let decisions = decisions(Js::new(env.raw(), records.raw()))?;
        let names = Js::new(env.raw(), names.raw())
            .elements()?
            .ok_or_else(|| Failure::Internal("names is not an array".to_owned()))?
            .into_iter()
            .map(|value| value.string().ok_or(Failure::WrongType { argument: "name", value, expected: "a string" }))
            .collect::<Result<Vec<_>, _>>()?;
        let items: Vec<(&str, Decision)> = names.iter().map(String::as_str).zip(decisions.iter().copied()).collect();
        let text = match field {
            0 => Some(headers::ratelimit(&items)?),
            1 => Some(headers::ratelimit_policy(&items)?),
            _ => decisions.first().and_then(headers::retry_after),
        };
        let value = match text {
            Some(text) => js::string(env.raw(), &text)?,
            None => {
                let mut undefined = ptr::null_mut();
                // SAFETY: plain value creation.
                unsafe { sys::napi_get_undefined(env.raw(), &mut undefined) };
                undefined
            }
        };
        // SAFETY: a value of this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
    })
}
