//! A keyed limiter from limits text: what a middleware builds from
//! `"100/hour; 1000/day"`, an algorithm and [`KeyedOptions`].

use std::fmt;

use ratekeeper_core::{Algorithm, Decision, Error, LimiterSpec};

use super::fields::{response_fields, HeaderStyle, Policy};
use super::limits::{parse_limits, LimitsTextError, RateItem};
use crate::clock::{AnyClock, Clock};
use crate::keyed::{AnyKeyedLimiter, KeyedCompositeLimiter, KeyedOptions};

/// Why [`limiter_from_text`] failed: the text (with its byte position), or
/// a limit the algorithm cannot take (its own typed error, e.g. a sliding
/// log's limit above 2^20) or bad options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimiterTextError {
    /// The text does not parse.
    Text(LimitsTextError),
    /// The text parses, but the limiter refuses an item or the options.
    Invalid(Error),
}

impl fmt::Display for LimiterTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimiterTextError::Text(e) => e.fmt(f),
            LimiterTextError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LimiterTextError {}

impl From<LimitsTextError> for LimiterTextError {
    fn from(e: LimitsTextError) -> Self {
        LimiterTextError::Text(e)
    }
}

impl From<Error> for LimiterTextError {
    fn from(e: Error) -> Self {
        LimiterTextError::Invalid(e)
    }
}

/// The keyed limiter behind an [`HttpLimiter`]: an enum rather than a
/// trait object so that the one-limit case — most configurations — keeps
/// [`AnyKeyedLimiter`]'s compact per-key state (8 to 24 bytes per key for
/// most algorithms, where a composite's key holds every part's whole state
/// on the heap).
#[derive(Debug)]
pub enum KeyedTextLimiter<C: Clock = AnyClock> {
    /// One limit.
    One(AnyKeyedLimiter<C>),
    /// Several limits, all or nothing per key.
    Several(KeyedCompositeLimiter<C>),
}

/// A keyed limiter built from limits text, with the items and their
/// policy names: one request's `check` gives everything the response
/// fields need.
#[derive(Debug)]
pub struct HttpLimiter<C: Clock = AnyClock> {
    items: Vec<RateItem>,
    names: Vec<String>,
    keyed: KeyedTextLimiter<C>,
}

/// The keyed limiter for `text` with `algorithm` (the default of the
/// framework middleware is [`Algorithm::SlidingWindowCounter`]): an
/// [`AnyKeyedLimiter`] for one item, a [`KeyedCompositeLimiter`] for
/// several, each item mapped by [`RateItem::spec`] and named by
/// [`RateItem::policy_name`].
///
/// ```
/// use std::sync::Arc;
/// use ratekeeper::http::{limiter_from_text, HeaderStyle};
/// use ratekeeper::{Algorithm, AnyClock, KeyedOptions, ManualClock};
///
/// let clock = AnyClock::from(Arc::new(ManualClock::new()));
/// let limiter = limiter_from_text("1/second; 100/hour", Algorithm::FixedWindow, KeyedOptions::new(10_000), clock)?;
/// assert_eq!(limiter.policy_names(), ["1-in-1sec", "100-in-1hr"]);
/// let (combined, parts) = limiter.check(b"203.0.113.9", 1)?;
/// assert!(combined.allowed);
/// let fields = limiter.fields(&combined, &parts, HeaderStyle::Draft8, false, 0)?;
/// assert_eq!(fields[1].1, "\"1-in-1sec\";r=0;t=1, \"100-in-1hr\";r=99;t=3600");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn limiter_from_text<C: Clock>(
    text: &str,
    algorithm: Algorithm,
    options: KeyedOptions,
    clock: C,
) -> Result<HttpLimiter<C>, LimiterTextError> {
    let items = parse_limits(text)?;
    let specs = items.iter().map(|item| item.spec(algorithm)).collect::<Result<Vec<LimiterSpec>, _>>()?;
    let keyed = match specs.as_slice() {
        [one] => KeyedTextLimiter::One(AnyKeyedLimiter::new(one, options, clock)?),
        several => KeyedTextLimiter::Several(KeyedCompositeLimiter::new(several, options, clock)?),
    };
    let names = items.iter().map(RateItem::policy_name).collect();
    Ok(HttpLimiter { items, names, keyed })
}

impl<C: Clock> HttpLimiter<C> {
    /// Admits `cost` units for `key` in every limit, or in none: the
    /// combined decision and one per item, in the text's order. A key
    /// longer than the options allow is an error.
    pub fn check(&self, key: &[u8], cost: u64) -> Result<(Decision, Vec<Decision>), Error> {
        match &self.keyed {
            KeyedTextLimiter::One(l) => l.check(key, cost).map(|d| (d, vec![d])),
            KeyedTextLimiter::Several(l) => l.check(key, cost),
        }
    }

    /// [`check`](Self::check) into the caller's `parts` (cleared, then one
    /// decision per item): a server deciding request after request on one
    /// thread reuses one vector rather than allocating one per request.
    pub fn check_into(&self, key: &[u8], cost: u64, parts: &mut Vec<Decision>) -> Result<Decision, Error> {
        match &self.keyed {
            KeyedTextLimiter::One(l) => {
                let d = l.check(key, cost)?;
                parts.clear();
                parts.push(d);
                Ok(d)
            }
            KeyedTextLimiter::Several(l) => l.check_into(key, cost, parts),
        }
    }

    /// The decisions [`check`](Self::check) would make now, consuming
    /// nothing.
    pub fn peek(&self, key: &[u8], cost: u64) -> Result<(Decision, Vec<Decision>), Error> {
        match &self.keyed {
            KeyedTextLimiter::One(l) => l.peek(key, cost).map(|d| (d, vec![d])),
            KeyedTextLimiter::Several(l) => l.peek(key, cost),
        }
    }

    /// Forgets `key`; whether it was held.
    pub fn remove(&self, key: &[u8]) -> Result<bool, Error> {
        match &self.keyed {
            KeyedTextLimiter::One(l) => l.remove(key),
            KeyedTextLimiter::Several(l) => l.remove(key),
        }
    }

    /// How many keys are held.
    pub fn len(&self) -> usize {
        match &self.keyed {
            KeyedTextLimiter::One(l) => l.len(),
            KeyedTextLimiter::Several(l) => l.len(),
        }
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items of the text, in order.
    pub fn items(&self) -> &[RateItem] {
        &self.items
    }

    /// Each item's policy name ([`RateItem::policy_name`]), in order.
    pub fn policy_names(&self) -> &[String] {
        &self.names
    }

    /// The keyed limiter itself.
    pub fn keyed(&self) -> &KeyedTextLimiter<C> {
        &self.keyed
    }

    /// [`response_fields`] for a decision of this limiter, each part named
    /// by its policy name. Errors when `parts` is not one per item.
    pub fn fields(
        &self,
        combined: &Decision,
        parts: &[Decision],
        style: HeaderStyle,
        legacy: bool,
        unix_now_secs: u64,
    ) -> Result<Vec<(&'static str, String)>, Error> {
        if parts.len() != self.names.len() {
            return Err(Error::invalid_uint(ratekeeper_core::Argument::Limits, parts.len() as u64));
        }
        let policies: Vec<Policy<'_>> =
            self.names.iter().zip(parts).map(|(name, &decision)| Policy { name, decision }).collect();
        response_fields(combined, &policies, style, legacy, unix_now_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;
    use ratekeeper_core::Argument;
    use std::sync::Arc;

    fn clock() -> Arc<ManualClock> {
        Arc::new(ManualClock::new())
    }

    #[test]
    fn one_item_is_a_plain_keyed_limiter() {
        let l = limiter_from_text("2/minute", Algorithm::SlidingWindowCounter, KeyedOptions::new(10), clock()).unwrap();
        assert!(matches!(l.keyed(), KeyedTextLimiter::One(k) if k.algorithm() == "sliding_window_counter"));
        assert_eq!(l.policy_names(), ["2-in-1min"]);
        assert!(l.check(b"a", 1).unwrap().0.allowed);
        let (d, parts) = l.check(b"a", 1).unwrap();
        assert_eq!((d.allowed, d.remaining, parts), (true, 0, vec![d]));
        let mut reused = vec![d; 3];
        let refused = l.check_into(b"a", 1, &mut reused).unwrap();
        assert_eq!((refused.allowed, reused), (false, vec![refused]));
        assert!(l.peek(b"b", 1).unwrap().0.allowed);
        assert_eq!(l.len(), 1);
        assert!(l.remove(b"a").unwrap());
        assert!(l.is_empty());
    }

    #[test]
    fn several_items_are_all_or_nothing() {
        let l = limiter_from_text("3 per second, 4/hour", Algorithm::Gcra, KeyedOptions::new(10), clock()).unwrap();
        assert!(matches!(l.keyed(), KeyedTextLimiter::Several(k) if k.specs().len() == 2));
        assert_eq!(l.items()[1].to_string(), "4 per 1 hour");
        assert!(l.check(b"a", 3).unwrap().0.allowed);
        let mut parts = Vec::new();
        let refused = l.check_into(b"a", 1, &mut parts).unwrap();
        assert!(!refused.allowed);
        assert_eq!(parts[1].remaining, 1, "the hour gave nothing to the refused request");
        let fields = l.fields(&refused, &parts, HeaderStyle::Draft6, false, 0).unwrap();
        assert_eq!(fields[0], ("RateLimit-Policy", "3;w=1, 4;w=3600".to_string()));
        let Err(Error::InvalidArgument(e)) = l.fields(&refused, &parts[..1], HeaderStyle::Draft8, false, 0) else {
            panic!()
        };
        assert_eq!(e.argument(), Argument::Limits);
    }

    #[test]
    fn errors_are_typed() {
        let e =
            limiter_from_text("3 per fortnight", Algorithm::FixedWindow, KeyedOptions::new(1), clock()).unwrap_err();
        assert!(matches!(e, LimiterTextError::Text(LimitsTextError { position: 6, .. })), "{e:?}");
        // A sliding log holds at most 2^20 entries.
        let e = limiter_from_text("2000000/second", Algorithm::SlidingLog, KeyedOptions::new(1), clock()).unwrap_err();
        let LimiterTextError::Invalid(Error::InvalidArgument(e)) = e else { panic!() };
        assert_eq!(e.argument(), Argument::SlidingLogLimit);
        assert!(limiter_from_text("1/second", Algorithm::FixedWindow, KeyedOptions::new(0), clock()).is_err());
    }
}
