//! The words the native calls and the package's JavaScript share, laid out
//! once, here:
//!
//! * a decision record in a limiter's scratch words ([`DECISION`]), written
//!   by `bound::Scratch::write_decision` and read by `node/lib/decision.js`
//!   (a composite's parts follow its decision, a record apart);
//! * where a concurrency limiter's permit follows that record
//!   ([`PERMIT`]), read by `node/lib/concurrency.js`;
//! * the exact records of decisions that `node/lib/decision.js` hands to
//!   `formatField` ([`RECORD`]), and the HTTP field it asks for
//!   ([`FIELD`]), read by `headers`.
//!
//! JavaScript gets them from [`layout`] once, when its modules load, into
//! constants: reading a field's word then costs what a literal offset did.
//! No other place spells an offset out, so the two sides cannot disagree;
//! `node/test/decision.test.mjs` checks it end to end, every field written
//! here and read there ([`decision_record_for_tests`]).

use std::sync::Arc;

use napi::bindgen_prelude::{BigInt, Unknown};
use napi::Env;
use napi_derive::napi;
use ratekeeper::Decision;

use crate::bound::{scratch_array, Scratch, DECISION_WORDS};
use crate::error::{guarded, Failure};

/// Where each field of a decision is in a decision record, in words from
/// the record's first: as a double (`…Ms` in milliseconds, `Infinity` for
/// `NEVER`; counts as numbers) and as an exact 64-bit integer (`…Micros`,
/// `…Exact`), which JavaScript reads only when `inexact` says so.
#[napi(object, object_from_js = false)]
#[derive(Clone, Copy)]
pub struct DecisionWords {
    /// 1 when the request was admitted, else 0 (a double).
    pub allowed: u32,
    pub limit: u32,
    pub remaining: u32,
    pub retry_after_ms: u32,
    pub reset_after_ms: u32,
    pub wait_ms: u32,
    pub window_ms: u32,
    /// 1 when some double above does not give its exact value back (a
    /// count beyond 2^53, a duration beyond about 2^50 µs), else 0.
    pub inexact: u32,
    pub retry_after_micros: u32,
    pub reset_after_micros: u32,
    pub wait_micros: u32,
    pub window_micros: u32,
    pub limit_exact: u32,
    pub remaining_exact: u32,
    /// Words a record takes (some unused): where the next one starts.
    pub size: u32,
}

/// The decision record's layout.
pub(crate) const DECISION: DecisionWords = DecisionWords {
    limit: 0,
    remaining: 1,
    retry_after_ms: 2,
    reset_after_ms: 3,
    wait_ms: 4,
    window_ms: 5,
    inexact: 6,
    allowed: 7,
    retry_after_micros: 8,
    reset_after_micros: 9,
    wait_micros: 10,
    window_micros: 11,
    limit_exact: 12,
    remaining_exact: 13,
    size: 16,
};

/// Where a concurrency limiter's `tryAcquire` writes an admitted request's
/// permit in its scratch words: after the decision record, four words that
/// JavaScript hands back to `release` as they are.
pub(crate) const PERMIT: u32 = DECISION.size;

/// Where each field of a decision is in the exact records `formatField`
/// takes: a `BigInt64Array` of `size` words per decision, each field an
/// exact 64-bit integer (`allowed` 1 or 0).
#[napi(object, object_from_js = false)]
#[derive(Clone, Copy)]
pub struct RecordWords {
    pub allowed: u32,
    pub limit: u32,
    pub remaining: u32,
    pub retry_after_micros: u32,
    pub reset_after_micros: u32,
    pub wait_micros: u32,
    pub window_micros: u32,
    /// Words a record takes.
    pub size: u32,
}

/// The exact record's layout.
pub(crate) const RECORD: RecordWords = RecordWords {
    allowed: 0,
    limit: 1,
    remaining: 2,
    retry_after_micros: 3,
    reset_after_micros: 4,
    wait_micros: 5,
    window_micros: 6,
    size: 7,
};

/// The numbers by which `formatField` is asked for an HTTP field.
#[napi(object, object_from_js = false)]
#[derive(Clone, Copy)]
pub struct HeaderFields {
    /// `RateLimit`.
    pub rate_limit: u32,
    /// `RateLimit-Policy`.
    pub rate_limit_policy: u32,
    /// `Retry-After` (any other number asks for it too).
    pub retry_after: u32,
}

/// The HTTP fields' numbers.
pub(crate) const FIELD: HeaderFields = HeaderFields { rate_limit: 0, rate_limit_policy: 1, retry_after: 2 };

/// Every layout JavaScript shares with the native calls.
#[napi(object, object_from_js = false)]
pub struct Layout {
    /// A decision record in scratch words.
    pub decision: DecisionWords,
    /// The first word of a concurrency limiter's permit in its scratch words.
    pub permit: u32,
    /// An exact record of a decision, as `formatField` takes them.
    pub record: RecordWords,
    /// `formatField`'s fields.
    pub field: HeaderFields,
}

/// The layouts of the words JavaScript and the native calls share: read
/// once, when the package's modules load.
#[napi]
pub fn layout() -> Layout {
    Layout { decision: DECISION, permit: PERMIT, record: RECORD, field: FIELD }
}

/// One decision written as a decision record, as a limiter's calls write
/// theirs, in scratch words of its own: so that the tests can show that
/// JavaScript reads back every field as it was written.
#[allow(clippy::too_many_arguments)]
#[napi(ts_return_type = "Float64Array")]
pub fn decision_record_for_tests<'env>(
    env: &'env Env,
    allowed: bool,
    limit: BigInt,
    remaining: BigInt,
    retry_after_micros: BigInt,
    reset_after_micros: BigInt,
    wait_micros: BigInt,
    window_micros: BigInt,
) -> napi::Result<Unknown<'env>> {
    guarded(env, || {
        let count = |x: BigInt| x.get_u64().1;
        let micros = |x: BigInt| x.get_i64().0;
        let decision = Decision {
            allowed,
            limit: count(limit),
            remaining: count(remaining),
            retry_after_micros: micros(retry_after_micros),
            reset_after_micros: micros(reset_after_micros),
            wait_micros: micros(wait_micros),
            window_micros: micros(window_micros),
        };
        let scratch = Arc::new(Scratch::new(DECISION_WORDS));
        scratch.write_decision(0, &decision);
        let array = scratch_array(env.raw(), &scratch, |s| s)?;
        // SAFETY: a value just created in this call's environment.
        Ok::<_, Failure>(unsafe { Unknown::from_raw_unchecked(env.raw(), array) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each word once, inside its record.
    fn assert_distinct_within(words: &[u32], size: u32) {
        let mut sorted = words.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), words.len(), "a word holds two fields: {words:?}");
        assert!(words.iter().all(|&w| w < size), "a word beyond the record's {size}: {words:?}");
    }

    #[test]
    fn every_field_has_a_word_of_its_own() {
        let d = DECISION;
        let doubles = [d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms, d.wait_ms, d.window_ms];
        let exact = [d.retry_after_micros, d.reset_after_micros, d.wait_micros, d.window_micros];
        let words: Vec<u32> =
            doubles.into_iter().chain([d.inexact]).chain(exact).chain([d.limit_exact, d.remaining_exact]).collect();
        assert_distinct_within(&words, d.size);
        assert!(PERMIT >= d.size, "the permit overlaps the decision record");
        let r = RECORD;
        let fields = [
            r.allowed,
            r.limit,
            r.remaining,
            r.retry_after_micros,
            r.reset_after_micros,
            r.wait_micros,
            r.window_micros,
        ];
        assert_distinct_within(&fields, r.size);
        assert_eq!(r.size as usize, fields.len(), "an exact record has no unused word");
        let f = FIELD;
        assert_distinct_within(&[f.rate_limit, f.rate_limit_policy, f.retry_after], u32::MAX);
    }
}
