//! Draft-8's fields of an admitted request, written request after request
//! from what the first one wrote: the one rule ratekeeper-tower and the
//! Node.js middleware both follow on their fast path.
//!
//! A limiter of limits text has fixed policies (their names, limits and
//! windows), so its `RateLimit-Policy` value is the same for every
//! response, and each `RateLimit` item starts the same way (`"name";r=`):
//! only the numbers after it change. [`KeptDraft8`] keeps the policy value
//! and those starts from the first full [`response_fields`] of a limiter
//! — where the names were quoted and checked, once — and a later admitted
//! request writes only its numbers, on the stack ([`ShortText`]). Anything
//! else (another style, legacy fields, a refusal, policies whose limit or
//! window changed, a value too long for the stack) takes the general path.
//!
//! [`response_fields`]: super::response_fields

use ratekeeper_core::decision::{format_u64, U64_DIGITS};
use ratekeeper_core::Decision;

/// Draft-8's `RateLimit-Policy` value for a limiter's policies, and the
/// start of each policy's `RateLimit` item (`"name";r=`), as
/// [`Decision::write_ratelimit`] writes it.
#[derive(Debug, Clone)]
pub struct KeptDraft8 {
    /// The `(limit, window in seconds)` of each policy the value was
    /// written for.
    shape: Vec<(u64, Option<u64>)>,
    policy: String,
    item_starts: Vec<Box<str>>,
}

impl KeptDraft8 {
    /// Kept from the draft-8 `RateLimit-Policy` value written for
    /// `decisions` under `names` (one per decision, in order); `None` if a
    /// name cannot be written (not printable ASCII) or an item's start is
    /// not found — then every request takes the general path.
    pub fn new<'a>(policy: &str, decisions: &[Decision], names: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let item_starts = decisions
            .iter()
            .zip(names)
            .map(|(decision, name)| {
                let mut item = String::new();
                decision.write_ratelimit(name, &mut item).ok()?;
                // The last `;r=` is the parameter's: an escaped name may hold
                // one too, before it.
                let end = item.rfind(";r=")? + 3;
                Some(item[..end].into())
            })
            .collect::<Option<Vec<Box<str>>>>()?;
        if item_starts.len() != decisions.len() {
            return None;
        }
        Some(KeptDraft8 {
            shape: decisions.iter().map(|d| (d.limit, d.window_secs())).collect(),
            policy: policy.to_owned(),
            item_starts,
        })
    }

    /// The kept `RateLimit-Policy` value.
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// Whether `decisions` are of the policies the value was kept for (the
    /// same number, each's limit and window the same).
    #[inline]
    pub fn fits(&self, decisions: &[Decision]) -> bool {
        self.shape.len() == decisions.len()
            && self
                .shape
                .iter()
                .zip(decisions)
                .all(|(&(limit, window), d)| limit == d.limit && window == d.window_secs())
    }

    /// Appends the `RateLimit` value of admitted `decisions` (which
    /// [`fit`](Self::fits)) to `out`, as [`response_fields`] would write it;
    /// `None` if it does not fit there (then take the general path).
    ///
    /// [`response_fields`]: super::response_fields
    #[inline]
    pub fn write_ratelimit<const N: usize>(&self, decisions: &[Decision], out: &mut ShortText<N>) -> Option<()> {
        for (i, (decision, start)) in decisions.iter().zip(&self.item_starts).enumerate() {
            if i > 0 {
                out.push(b", ")?;
            }
            out.push(start.as_bytes())?;
            out.push_u64(decision.remaining)?;
            if let Some(t) = decision.reset_after_secs() {
                out.push(b";t=")?;
                out.push_u64(t)?;
            }
        }
        Some(())
    }
}

/// ASCII text of at most `N` bytes written on the stack: a header value of
/// the fast path, with no allocation.
#[derive(Debug, Clone)]
pub struct ShortText<const N: usize> {
    len: usize,
    bytes: [u8; N],
}

impl<const N: usize> Default for ShortText<N> {
    fn default() -> Self {
        ShortText { len: 0, bytes: [0; N] }
    }
}

impl<const N: usize> ShortText<N> {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text written so far. ASCII, when only [`KeptDraft8`] wrote it.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    #[inline]
    fn push(&mut self, text: &[u8]) -> Option<()> {
        let end = self.len + text.len();
        self.bytes.get_mut(self.len..end)?.copy_from_slice(text);
        self.len = end;
        Some(())
    }

    /// `n` in decimal, without `core::fmt`'s machinery.
    #[inline]
    fn push_u64(&mut self, n: u64) -> Option<()> {
        let mut digits = [0u8; U64_DIGITS];
        let start = format_u64(n, &mut digits);
        self.push(&digits[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{response_fields, HeaderStyle, Policy};

    fn decision(limit: u64, remaining: u64, window_micros: i64, reset_after_micros: i64) -> Decision {
        Decision::allowed(limit, remaining, reset_after_micros, window_micros)
    }

    /// The draft-8 fields `response_fields` writes for `decisions` under
    /// `names`: (`RateLimit-Policy`, `RateLimit`).
    fn full(decisions: &[Decision], names: &[&str]) -> (String, String) {
        let policies: Vec<Policy> =
            decisions.iter().zip(names).map(|(d, n)| Policy { name: n, decision: *d }).collect();
        let fields = response_fields(&decisions[0], &policies, HeaderStyle::Draft8, false, 0).unwrap();
        let get = |name: &str| fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).unwrap().1.clone();
        (get("RateLimit-Policy"), get("RateLimit"))
    }

    #[test]
    fn later_requests_write_what_response_fields_writes() {
        let names = ["10-in-1min", "a \"quoted\" ;r= name"];
        let first = [decision(10, 9, 60_000_000, 60_000_000), decision(1000, 999, 86_400_000_000, 86_400_000_000)];
        let (policy, _) = full(&first, &names);
        let kept = KeptDraft8::new(&policy, &first, names).unwrap();
        assert_eq!(kept.policy(), policy);
        for (remaining, reset) in [(0, 1), (7, 59_999_999), (u64::MAX, i64::MAX / 2), (3, 0)] {
            let later =
                [decision(10, remaining, 60_000_000, reset), decision(1000, remaining / 2, 86_400_000_000, reset)];
            assert!(kept.fits(&later));
            let mut text = ShortText::<256>::new();
            kept.write_ratelimit(&later, &mut text).unwrap();
            assert_eq!(std::str::from_utf8(text.as_bytes()).unwrap(), full(&later, &names).1);
        }
    }

    #[test]
    fn other_policies_do_not_fit_and_a_long_value_does_not_fit_the_stack() {
        let first = [decision(10, 9, 60_000_000, 60_000_000)];
        let (policy, _) = full(&first, &["p"]);
        let kept = KeptDraft8::new(&policy, &first, ["p"]).unwrap();
        assert!(!kept.fits(&[decision(11, 9, 60_000_000, 1)]), "another limit");
        assert!(!kept.fits(&[decision(10, 9, 61_000_000, 1)]), "another window");
        assert!(!kept.fits(&[first[0], first[0]]), "another number of policies");
        let mut small = ShortText::<8>::new();
        assert_eq!(kept.write_ratelimit(&first, &mut small), None);
    }

    #[test]
    fn a_name_that_cannot_be_written_keeps_nothing() {
        let first = [decision(10, 9, 60_000_000, 60_000_000)];
        assert!(KeptDraft8::new("x", &first, ["caf\u{e9}"]).is_none());
        assert!(KeptDraft8::new("x", &first, std::iter::empty()).is_none(), "a name per decision");
    }
}
