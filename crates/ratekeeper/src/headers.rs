//! The HTTP fields of [draft-ietf-httpapi-ratelimit-headers] (revision 10)
//! and `Retry-After`, as strings, from one or several named decisions.
//!
//! The formatting itself lives in the core ([`Decision::write_ratelimit`],
//! [`Decision::write_ratelimit_policy`]); these helpers join several
//! policies into one field value and turn a bad policy name into the
//! library's typed error — what every binding would otherwise write.
//!
//! [draft-ietf-httpapi-ratelimit-headers]: https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/

use ratekeeper_core::decision::check_policy_name;
use ratekeeper_core::{Decision, Error};

/// The `RateLimit` field's value for named decisions:
/// `"name";r=REMAINING;t=SECONDS, …`. Errors when a name is not printable
/// ASCII.
///
/// ```
/// use ratekeeper::{headers, Decision};
///
/// let d = Decision::allowed(100, 50, 29_500_000, 60_000_000);
/// assert_eq!(headers::ratelimit(&[("default", d)])?, "\"default\";r=50;t=30");
/// assert_eq!(headers::ratelimit_policy(&[("default", d)])?, "\"default\";q=100;w=60");
/// # Ok::<(), ratekeeper::Error>(())
/// ```
pub fn ratelimit(items: &[(&str, Decision)]) -> Result<String, Error> {
    join(items, Decision::write_ratelimit)
}

/// The `RateLimit-Policy` field's value for named decisions:
/// `"name";q=LIMIT;w=SECONDS, …`. Errors when a name is not printable ASCII.
pub fn ratelimit_policy(items: &[(&str, Decision)]) -> Result<String, Error> {
    join(items, Decision::write_ratelimit_policy)
}

/// The `Retry-After` field's value: whole seconds, rounded up, for a
/// refused request a wait can admit; `None` otherwise (send no field).
pub fn retry_after(decision: &Decision) -> Option<String> {
    decision.retry_after_secs().map(crate::http::decimal)
}

fn join(
    items: &[(&str, Decision)],
    write: fn(&Decision, &str, &mut String) -> std::fmt::Result,
) -> Result<String, Error> {
    let room: usize = items.iter().map(|(name, _)| name.len() + 2 * ratekeeper_core::decision::U64_DIGITS + 10).sum();
    let mut out = String::with_capacity(room);
    for (i, (name, decision)) in items.iter().enumerate() {
        check_policy_name(name)?;
        if i > 0 {
            out.push_str(", ");
        }
        // Writing to a String cannot fail once the name is valid.
        let _ = write(decision, name, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_policies_join_into_one_field() {
        let second = Decision::refused(10, 0, 400_000, 1_000_000, 1_000_000);
        let hour = Decision::allowed(1_000, 990, 3_000_000_000, 3_600_000_000);
        let items = [("per-second", second), ("per-hour", hour)];
        assert_eq!(ratelimit(&items).unwrap(), "\"per-second\";r=0;t=1, \"per-hour\";r=990;t=3000");
        assert_eq!(ratelimit_policy(&items).unwrap(), "\"per-second\";q=10;w=1, \"per-hour\";q=1000;w=3600");
        assert_eq!(retry_after(&second).as_deref(), Some("1"));
        assert_eq!(retry_after(&hour), None);
        assert!(ratelimit(&[("bad\nname", hour)]).is_err());
    }
}
