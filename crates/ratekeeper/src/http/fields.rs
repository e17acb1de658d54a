//! The header fields of a rate-limited response, in each version of
//! [draft-ietf-httpapi-ratelimit-headers] that express-rate-limit sends,
//! plus its legacy `X-RateLimit-*` fields and `Retry-After`.
//!
//! The field texts follow express-rate-limit (its `source/headers.ts` and
//! headers tests), so a client written against it reads ours alike:
//!
//! | style     | fields                                                              |
//! |-----------|---------------------------------------------------------------------|
//! | draft-6   | `RateLimit-Policy: 10;w=60`, `RateLimit-Limit: 10`, `RateLimit-Remaining: 9`, `RateLimit-Reset: 60` |
//! | draft-7   | `RateLimit-Policy: 10;w=60`, `RateLimit: limit=10, remaining=9, reset=60` |
//! | draft-8   | `RateLimit-Policy: "10-in-1min";q=10;w=60`, `RateLimit: "10-in-1min";r=9;t=60` |
//! | legacy    | `X-RateLimit-Limit: 10`, `X-RateLimit-Remaining: 9`, `X-RateLimit-Reset: <epoch seconds>` |
//!
//! * Draft-6 (§2–§4 of [-06]) and draft-7 (§3–§4 of [-07]) carry one
//!   limit/remaining/reset, the combined decision's, and list every policy
//!   in `RateLimit-Policy` as `LIMIT;w=WINDOW` items (the drafts' lists of
//!   quota policies).
//! * Draft-8 ([-08] §3–§4, unchanged in revision 10) names each policy and
//!   gives each its own remaining and reset; the texts come from
//!   [`crate::headers`] (one writer for that shape). Ours are the canonical
//!   Structured Fields serialization ([RFC 9651 §4.1]): no space after `;`,
//!   where express-rate-limit writes `"name"; r=9; t=60` — equal to any
//!   Structured Fields parser. express-rate-limit also adds a `pk` partition
//!   key (a SHA-256 of the client key); we leave it out (the draft makes it
//!   optional, and it would need a hash dependency for no client's benefit).
//! * Legacy `X-RateLimit-Reset` is the time the limiter is whole again as
//!   Unix seconds, as express-rate-limit sends it: the caller's clock
//!   (`unix_now_secs`) plus the reset rounded up.
//! * `Retry-After` ([RFC 9110 §10.2.3]) on every refusal a wait can admit,
//!   whatever the style (express-rate-limit sends it only when some
//!   rate-limit fields are on, and sends the window's reset; ours is the
//!   decision's exact wait, rounded up, which is never early).
//!
//! A time the limiter never reaches ([`NEVER`](crate::NEVER)) is left out of
//! every field rather than written as a huge number.
//!
//! [draft-ietf-httpapi-ratelimit-headers]: https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
//! [-06]: https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-06
//! [-07]: https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-07
//! [-08]: https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-08
//! [RFC 9651 §4.1]: https://www.rfc-editor.org/rfc/rfc9651#section-4.1
//! [RFC 9110 §10.2.3]: https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3

use ratekeeper_core::decision::{check_policy_name, format_u64, write_u64, U64_DIGITS};
use ratekeeper_core::{Argument, Decision, Error};

/// Which version of the rate-limit fields a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HeaderStyle {
    /// `RateLimit-Limit`, `-Remaining`, `-Reset` and `RateLimit-Policy`
    /// (draft-ietf-httpapi-ratelimit-headers-06).
    Draft6,
    /// `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`
    /// (draft-07).
    Draft7,
    /// Named policies in `RateLimit` and `RateLimit-Policy` (draft-08, the
    /// shape of the current revision): the default, the newest.
    #[default]
    Draft8,
    /// No `RateLimit` fields (`Retry-After` and the legacy fields still go
    /// out when asked for).
    None,
}

impl HeaderStyle {
    /// Every style, in the order of its names.
    pub const ALL: [HeaderStyle; 4] =
        [HeaderStyle::Draft6, HeaderStyle::Draft7, HeaderStyle::Draft8, HeaderStyle::None];

    /// The style named `"draft-6"`, `"draft-7"`, `"draft-8"` or `"none"`
    /// (express-rate-limit's `standardHeaders` values, and "none" for its
    /// `false`); exact, lower case.
    pub fn from_name(name: &str) -> Option<Self> {
        HeaderStyle::ALL.into_iter().find(|style| style.name() == name)
    }

    /// The style's name, as [`from_name`](Self::from_name) reads it.
    pub const fn name(self) -> &'static str {
        match self {
            HeaderStyle::Draft6 => "draft-6",
            HeaderStyle::Draft7 => "draft-7",
            HeaderStyle::Draft8 => "draft-8",
            HeaderStyle::None => "none",
        }
    }
}

/// One quota policy's decision and its name (the draft-8 fields show it;
/// [`RateItem::policy_name`](super::RateItem::policy_name) gives the
/// default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy<'a> {
    /// The policy's name: printable ASCII (a Structured Field String).
    pub name: &'a str,
    /// Its decision for this request.
    pub decision: Decision,
}

/// Every header field for one request: names in canonical case, in the
/// order to send them.
///
/// `combined` is the decision that admitted or refused the request (for a
/// composite, [`combine`](ratekeeper_core::decision::combine) of the
/// parts); `parts` has one [`Policy`] per limit, in order. Errors with
/// [`Argument::Limits`] when `parts` is empty and with
/// [`Argument::PolicyName`] when a name is not printable ASCII — whatever
/// the style, so that a bad configuration shows up on the first request.
///
/// ```
/// use ratekeeper::http::{response_fields, HeaderStyle, Policy};
/// use ratekeeper::Decision;
///
/// let d = Decision::refused(10, 0, 1_500_000, 30_000_000, 60_000_000);
/// let fields = response_fields(&d, &[Policy { name: "10-in-1min", decision: d }], HeaderStyle::Draft8, false, 0)?;
/// assert_eq!(fields, [
///     ("RateLimit-Policy", "\"10-in-1min\";q=10;w=60".to_string()),
///     ("RateLimit", "\"10-in-1min\";r=0;t=30".to_string()),
///     ("Retry-After", "2".to_string()),
/// ]);
/// # Ok::<(), ratekeeper::Error>(())
/// ```
pub fn response_fields(
    combined: &Decision,
    parts: &[Policy<'_>],
    style: HeaderStyle,
    legacy: bool,
    unix_now_secs: u64,
) -> Result<Vec<(&'static str, String)>, Error> {
    if parts.is_empty() {
        return Err(Error::invalid_int(Argument::Limits, 0));
    }
    for part in parts {
        check_policy_name(part.name)?;
    }
    let mut fields = Vec::with_capacity(6);
    match style {
        HeaderStyle::Draft6 => {
            fields.push(("RateLimit-Policy", unnamed_policies(parts)));
            fields.push(("RateLimit-Limit", decimal(combined.limit)));
            fields.push(("RateLimit-Remaining", decimal(combined.remaining)));
            if let Some(reset) = combined.reset_after_secs() {
                fields.push(("RateLimit-Reset", decimal(reset)));
            }
        }
        HeaderStyle::Draft7 => {
            fields.push(("RateLimit-Policy", unnamed_policies(parts)));
            let mut value = String::with_capacity(3 * U64_DIGITS + 28);
            value.push_str("limit=");
            let _ = write_u64(&mut value, combined.limit);
            value.push_str(", remaining=");
            let _ = write_u64(&mut value, combined.remaining);
            if let Some(reset) = combined.reset_after_secs() {
                value.push_str(", reset=");
                let _ = write_u64(&mut value, reset);
            }
            fields.push(("RateLimit", value));
        }
        HeaderStyle::Draft8 => {
            // The names were checked above: the writes cannot fail.
            let room: usize = parts.iter().map(|p| p.name.len() + 2 * U64_DIGITS + 10).sum();
            let mut policy = String::with_capacity(room);
            let mut state = String::with_capacity(room);
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    policy.push_str(", ");
                    state.push_str(", ");
                }
                let _ = part.decision.write_ratelimit_policy(part.name, &mut policy);
                let _ = part.decision.write_ratelimit(part.name, &mut state);
            }
            fields.push(("RateLimit-Policy", policy));
            fields.push(("RateLimit", state));
        }
        HeaderStyle::None => {}
    }
    if legacy {
        fields.push(("X-RateLimit-Limit", decimal(combined.limit)));
        fields.push(("X-RateLimit-Remaining", decimal(combined.remaining)));
        if let Some(reset) = combined.reset_after_secs() {
            fields.push(("X-RateLimit-Reset", decimal(unix_now_secs.saturating_add(reset))));
        }
    }
    if let Some(retry) = combined.retry_after_secs() {
        fields.push(("Retry-After", decimal(retry)));
    }
    Ok(fields)
}

/// `n` in decimal, in a string of its exact length.
pub(crate) fn decimal(n: u64) -> String {
    let mut buf = [0u8; U64_DIGITS];
    let start = format_u64(n, &mut buf);
    let mut out = String::with_capacity(U64_DIGITS - start);
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[start..]).unwrap_or_default());
    out
}

/// Draft-6/-7 `RateLimit-Policy`: `LIMIT;w=WINDOW` per policy, `", "`
/// between them (the window left out when there is none).
fn unnamed_policies(parts: &[Policy<'_>]) -> String {
    let mut out = String::with_capacity(parts.len() * (2 * U64_DIGITS + 5));
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write_u64(&mut out, part.decision.limit);
        if let Some(w) = part.decision.window_secs() {
            out.push_str(";w=");
            let _ = write_u64(&mut out, w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratekeeper_core::NEVER;

    fn fields(
        combined: Decision,
        parts: &[Policy<'_>],
        style: HeaderStyle,
        legacy: bool,
    ) -> Vec<(&'static str, String)> {
        response_fields(&combined, parts, style, legacy, 1_700_000_000).unwrap()
    }

    fn owned(list: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        list.iter().map(|(n, v)| (*n, v.to_string())).collect()
    }

    // One policy, admitted: express-rate-limit's headers tests (limit 5 per
    // minute, first request) give these texts.
    const ADMITTED: Decision = Decision::allowed(5, 4, 60_000_000, 60_000_000);

    #[test]
    fn one_policy_admitted_in_each_style() {
        let parts = [Policy { name: "5-in-1min", decision: ADMITTED }];
        assert_eq!(
            fields(ADMITTED, &parts, HeaderStyle::Draft6, false),
            owned(&[
                ("RateLimit-Policy", "5;w=60"),
                ("RateLimit-Limit", "5"),
                ("RateLimit-Remaining", "4"),
                ("RateLimit-Reset", "60"),
            ])
        );
        assert_eq!(
            fields(ADMITTED, &parts, HeaderStyle::Draft7, false),
            owned(&[("RateLimit-Policy", "5;w=60"), ("RateLimit", "limit=5, remaining=4, reset=60")])
        );
        assert_eq!(
            fields(ADMITTED, &parts, HeaderStyle::Draft8, false),
            owned(&[("RateLimit-Policy", "\"5-in-1min\";q=5;w=60"), ("RateLimit", "\"5-in-1min\";r=4;t=60")])
        );
        assert_eq!(fields(ADMITTED, &parts, HeaderStyle::None, false), owned(&[]));
        assert_eq!(
            fields(ADMITTED, &parts, HeaderStyle::None, true),
            owned(&[("X-RateLimit-Limit", "5"), ("X-RateLimit-Remaining", "4"), ("X-RateLimit-Reset", "1700000060"),])
        );
    }

    #[test]
    fn one_policy_refused_adds_retry_after_in_every_style() {
        let refused = Decision::refused(5, 0, 12_300_000, 59_000_001, 60_000_000);
        let parts = [Policy { name: "5-in-1min", decision: refused }];
        for style in HeaderStyle::ALL {
            let got = fields(refused, &parts, style, false);
            assert_eq!(got.last(), Some(&("Retry-After", "13".to_string())), "{style:?}");
        }
        assert_eq!(
            fields(refused, &parts, HeaderStyle::Draft7, true),
            owned(&[
                ("RateLimit-Policy", "5;w=60"),
                ("RateLimit", "limit=5, remaining=0, reset=60"),
                ("X-RateLimit-Limit", "5"),
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", "1700000060"),
                ("Retry-After", "13"),
            ])
        );
        // A refusal no wait can admit has no Retry-After (it cannot say
        // "never"), and a limiter that never refills no reset.
        let never = Decision::refused(5, 0, NEVER, NEVER, NEVER);
        let parts = [Policy { name: "p", decision: never }];
        assert_eq!(
            fields(never, &parts, HeaderStyle::Draft6, true),
            owned(&[
                ("RateLimit-Policy", "5"),
                ("RateLimit-Limit", "5"),
                ("RateLimit-Remaining", "0"),
                ("X-RateLimit-Limit", "5"),
                ("X-RateLimit-Remaining", "0"),
            ])
        );
        assert_eq!(
            fields(never, &parts, HeaderStyle::Draft7, false),
            owned(&[("RateLimit-Policy", "5"), ("RateLimit", "limit=5, remaining=0")])
        );
    }

    /// Two policies (10 per second and 1000 per hour): the drafts 6 and 7
    /// show the combined decision and list both policies; draft 8 names
    /// each with its own state.
    #[test]
    fn several_policies_admitted_and_refused() {
        let second = Decision::allowed(10, 7, 300_000, 1_000_000);
        let hour = Decision::allowed(1000, 3, 3_600_000_000, 3_600_000_000);
        let parts = [Policy { name: "10-in-1sec", decision: second }, Policy { name: "1000-in-1hr", decision: hour }];
        let combined = ratekeeper_core::decision::combine([second, hour]).unwrap();
        assert_eq!(
            fields(combined, &parts, HeaderStyle::Draft6, false),
            owned(&[
                ("RateLimit-Policy", "10;w=1, 1000;w=3600"),
                ("RateLimit-Limit", "1000"),
                ("RateLimit-Remaining", "3"),
                ("RateLimit-Reset", "3600"),
            ])
        );
        assert_eq!(
            fields(combined, &parts, HeaderStyle::Draft7, false),
            owned(&[("RateLimit-Policy", "10;w=1, 1000;w=3600"), ("RateLimit", "limit=1000, remaining=3, reset=3600")])
        );
        assert_eq!(
            fields(combined, &parts, HeaderStyle::Draft8, false),
            owned(&[
                ("RateLimit-Policy", "\"10-in-1sec\";q=10;w=1, \"1000-in-1hr\";q=1000;w=3600"),
                ("RateLimit", "\"10-in-1sec\";r=7;t=1, \"1000-in-1hr\";r=3;t=3600"),
            ])
        );

        let second = Decision::refused(10, 0, 400_000, 1_000_000, 1_000_000);
        let parts = [Policy { name: "10-in-1sec", decision: second }, Policy { name: "1000-in-1hr", decision: hour }];
        let combined = ratekeeper_core::decision::combine([second, hour]).unwrap();
        assert_eq!(
            fields(combined, &parts, HeaderStyle::Draft8, true),
            owned(&[
                ("RateLimit-Policy", "\"10-in-1sec\";q=10;w=1, \"1000-in-1hr\";q=1000;w=3600"),
                ("RateLimit", "\"10-in-1sec\";r=0;t=1, \"1000-in-1hr\";r=3;t=3600"),
                ("X-RateLimit-Limit", "10"),
                ("X-RateLimit-Remaining", "0"),
                ("X-RateLimit-Reset", "1700003600"),
                ("Retry-After", "1"),
            ])
        );
        assert_eq!(
            fields(combined, &parts, HeaderStyle::Draft6, false),
            owned(&[
                ("RateLimit-Policy", "10;w=1, 1000;w=3600"),
                ("RateLimit-Limit", "10"),
                ("RateLimit-Remaining", "0"),
                ("RateLimit-Reset", "3600"),
                ("Retry-After", "1"),
            ])
        );
    }

    #[test]
    fn bad_names_and_no_parts_are_errors_in_every_style() {
        for style in HeaderStyle::ALL {
            let bad = [Policy { name: "new\nline", decision: ADMITTED }];
            let Err(Error::InvalidArgument(e)) = response_fields(&ADMITTED, &bad, style, false, 0) else { panic!() };
            assert_eq!(e.argument(), Argument::PolicyName);
            let Err(Error::InvalidArgument(e)) = response_fields(&ADMITTED, &[], style, false, 0) else { panic!() };
            assert_eq!(e.argument(), Argument::Limits);
        }
    }

    #[test]
    fn style_names_round_trip() {
        for style in HeaderStyle::ALL {
            assert_eq!(HeaderStyle::from_name(style.name()), Some(style));
        }
        assert_eq!(HeaderStyle::from_name("draft-9"), None);
        assert_eq!(HeaderStyle::from_name("Draft-8"), None);
        assert_eq!(HeaderStyle::default(), HeaderStyle::Draft8);
    }
}
