//! The HTTP fields of decisions — `RateLimit`, `RateLimit-Policy`,
//! `Retry-After` — as the library writes them (`ratekeeper::headers`).
//!
//! A JavaScript `Decision` holds numbers; `node/lib/decision.js` hands
//! them back as exact 64-bit integers, a record per decision at the words
//! of `layout::RECORD`, and this formats them.

use std::ptr;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper::{headers, Decision};

use crate::error::{guarded, Failure};
use crate::js::{self, Js};
use crate::layout::{FIELD, RECORD};

/// The decisions in `records` (a `BigInt64Array` of records laid out as
/// `layout::RECORD`).
pub(crate) fn decisions(records: Js) -> Result<Vec<Decision>, Failure> {
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
    let size = RECORD.size as usize;
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::bigint64_array || len % size != 0 {
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
        .chunks_exact(size)
        .map(|record| {
            let word = |w: u32| record[w as usize];
            let r = RECORD;
            Decision {
                allowed: word(r.allowed) != 0,
                limit: word(r.limit) as u64,
                remaining: word(r.remaining) as u64,
                retry_after_micros: word(r.retry_after_micros),
                reset_after_micros: word(r.reset_after_micros),
                wait_micros: word(r.wait_micros),
                window_micros: word(r.window_micros),
            }
        })
        .collect())
}

/// An HTTP field's value for decisions: `field` (numbered as
/// `layout().field`) `RateLimit`, `RateLimit-Policy` (one item per name and
/// decision, in order), or `Retry-After` (of the first decision;
/// `undefined` when there should be none).
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
            f if f == FIELD.rate_limit => Some(headers::ratelimit(&items)?),
            f if f == FIELD.rate_limit_policy => Some(headers::ratelimit_policy(&items)?),
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
