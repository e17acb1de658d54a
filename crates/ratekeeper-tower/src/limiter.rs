//! What the layer asks: the [`KeyedCheck`] trait, and its implementations
//! for ratekeeper's keyed limiters — in-process ones answer in place,
//! Redis ones (feature `redis`) after their round trip.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ratekeeper::http::{HttpLimiter, KeyedTextLimiter};
use ratekeeper::{AnyKeyedLimiter, Clock, Decision, KeyedCompositeLimiter};

/// An error of a limiter, boxed (a key too long, Redis unavailable).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A boxed future of a verdict, for limiters that must wait (Redis).
pub type BoxCheck = Pin<Box<dyn Future<Output = Result<Verdict, BoxError>> + Send>>;

/// A limiter's answer for one request: the decision that admitted or
/// refused it, and one decision per policy when there are several (a
/// composite: `"100/hour; 1000/day"`).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The decision that admitted or refused the request.
    pub combined: Decision,
    /// One decision per policy, in the limiter's order; empty when the
    /// limiter has one policy (whose decision is `combined`).
    pub parts: Vec<Decision>,
}

impl Verdict {
    /// The verdict of a limiter of one policy.
    pub fn single(decision: Decision) -> Self {
        Verdict { combined: decision, parts: Vec::new() }
    }

    /// Whether the request was admitted.
    pub fn allowed(&self) -> bool {
        self.combined.allowed
    }

    /// The decision of each policy, in order (`combined` alone for one).
    pub fn policies(&self) -> &[Decision] {
        if self.parts.is_empty() {
            std::slice::from_ref(&self.combined)
        } else {
            &self.parts
        }
    }
}

/// A check's outcome: decided at once (an in-process limiter: no future,
/// no allocation, the inner service called in the same `call`), or later.
#[derive(Debug)]
pub enum Checking<F> {
    /// Decided now.
    Ready(Result<Verdict, BoxError>),
    /// Decided when the future completes (a round trip to Redis).
    Pending(F),
}

/// A keyed limiter the layer can ask: check `cost` units for `key`.
///
/// Implemented for the in-process keyed limiters, which answer
/// [`Checking::Ready`]: [`HttpLimiter`] (from limits text,
/// [`ratekeeper::http::limiter_from_text`], its policies named by their
/// items: `"10-in-1min"`), [`AnyKeyedLimiter`] and
/// [`KeyedCompositeLimiter`]; for `Arc<L>` of any implementation (to keep a handle on the limiter:
/// to [`remove`](AnyKeyedLimiter::remove) a key, say), for [`Named`]
/// (policy names), and with the `redis` feature for ratekeeper-redis's
/// `RedisLimiter` and `RedisLeasedLimiter` (their `check_async`),
/// `RedisCompositeLimiter` (several limits, all or nothing, in one round
/// trip) and `RedisDividedLimiter` (which decides locally).
pub trait KeyedCheck: Send + Sync + 'static {
    /// The future of a check that cannot answer at once.
    type Future: Future<Output = Result<Verdict, BoxError>> + Send + 'static;

    /// Whether the limiter's keys stay in this process (an in-process
    /// limiter): then the layer asks the extractor for its
    /// [`extract_local`](crate::KeyExtractor::extract_local) key, which
    /// may be cheaper to make ([`ClientAddress`](crate::ClientAddress)'s:
    /// the address's bytes rather than its text). `false` by default: a
    /// limiter shared with other processes (Redis) gets the key every
    /// language's middleware gives the same client.
    const LOCAL_KEYS: bool = false;

    /// Admits `cost` units for `key` if the limit allows (consuming them),
    /// or refuses.
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future>;

    /// Admits `cost` units for `key` at once if the limit allows,
    /// consuming exactly what [`check`](Self::check) would, without the
    /// rest of its verdict — for a layer that sends no fields on admitted
    /// responses (an algorithm may then skip computing them, and nothing is
    /// moved but a `bool`). `false` decides nothing: a refusal consumed
    /// nothing, so the layer then asks [`check`](Self::check), whose
    /// verdict the refusal needs (as it does for a limiter that cannot tell
    /// at once: the default answers `false`).
    #[inline]
    fn admit(&self, key: &[u8], cost: u64) -> bool {
        let _ = (key, cost);
        false
    }

    /// The name of policy `index` (an index into
    /// [`Verdict::policies`]), as the `RateLimit` and `RateLimit-Policy`
    /// fields name it.
    fn policy_name(&self, index: usize) -> &str;
}

/// The future of a limiter that always answers at once: it cannot be
/// made, so a request's future holds no room for a check in flight.
#[derive(Debug)]
pub enum Never {}

impl Future for Never {
    type Output = Result<Verdict, BoxError>;

    fn poll(self: Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        match *self {}
    }
}

/// The policy name of a limiter nobody named: `"default"`, as the
/// `RateLimit` draft's own examples name theirs.
pub const DEFAULT_POLICY_NAME: &str = "default";

impl<C: Clock + Send + Sync + 'static> KeyedCheck for AnyKeyedLimiter<C> {
    type Future = Never;
    const LOCAL_KEYS: bool = true;

    #[inline]
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
        Checking::Ready(AnyKeyedLimiter::check(self, key, cost).map(Verdict::single).map_err(BoxError::from))
    }

    #[inline]
    fn admit(&self, key: &[u8], cost: u64) -> bool {
        // A key too long is check's to report.
        self.allow(key, cost).unwrap_or(false)
    }

    fn policy_name(&self, _index: usize) -> &str {
        DEFAULT_POLICY_NAME
    }
}

impl<C: Clock + Send + Sync + 'static> KeyedCheck for HttpLimiter<C> {
    type Future = Never;
    const LOCAL_KEYS: bool = true;

    #[inline]
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
        // One limit: its decision alone, no vector of one part.
        let verdict = match self.keyed() {
            KeyedTextLimiter::One(limiter) => limiter.check(key, cost).map(Verdict::single),
            KeyedTextLimiter::Several(limiter) => {
                limiter.check(key, cost).map(|(combined, parts)| Verdict { combined, parts })
            }
        };
        Checking::Ready(verdict.map_err(BoxError::from))
    }

    #[inline]
    fn admit(&self, key: &[u8], cost: u64) -> bool {
        match self.keyed() {
            KeyedTextLimiter::One(limiter) => limiter.allow(key, cost).unwrap_or(false),
            KeyedTextLimiter::Several(_) => false,
        }
    }

    fn policy_name(&self, index: usize) -> &str {
        self.policy_names().get(index).map_or(DEFAULT_POLICY_NAME, String::as_str)
    }
}

/// A composite's policies unnamed: `"policy-1"`, `"policy-2"`… in the
/// order of its specs (wrap it in [`Named`] to name them).
impl<C: Clock + Send + Sync + 'static> KeyedCheck for KeyedCompositeLimiter<C> {
    type Future = Never;
    const LOCAL_KEYS: bool = true;

    #[inline]
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
        let verdict =
            KeyedCompositeLimiter::check(self, key, cost).map(|(combined, parts)| Verdict { combined, parts });
        Checking::Ready(verdict.map_err(BoxError::from))
    }

    fn policy_name(&self, index: usize) -> &str {
        numbered_policy_name(index)
    }
}

/// `"policy-{index + 1}"` for the first 32 policies, `"policy"` after (a
/// composite of more than 32 limits is best named with [`Named`]).
fn numbered_policy_name(index: usize) -> &'static str {
    macro_rules! numbered {
        ($($n:literal)*) => { [$(concat!("policy-", $n),)*] };
    }
    const NAMES: [&str; 32] =
        numbered!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
    NAMES.get(index).copied().unwrap_or("policy")
}

impl<L: KeyedCheck + ?Sized> KeyedCheck for Arc<L> {
    type Future = L::Future;
    const LOCAL_KEYS: bool = L::LOCAL_KEYS;

    #[inline]
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
        (**self).check(key, cost)
    }

    #[inline]
    fn admit(&self, key: &[u8], cost: u64) -> bool {
        (**self).admit(key, cost)
    }

    fn policy_name(&self, index: usize) -> &str {
        (**self).policy_name(index)
    }
}

/// A limiter with its policies' names (one per policy, in order; names
/// are printable ASCII, as the header fields need: a bad one is refused
/// when the first response's fields are built, with the error policy's
/// response).
#[derive(Debug)]
pub struct Named<L> {
    limiter: L,
    names: Vec<String>,
}

impl<L: KeyedCheck> Named<L> {
    /// `limiter`, its policies named `names`.
    pub fn new(limiter: L, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Named { limiter, names: names.into_iter().map(Into::into).collect() }
    }

    /// The limiter.
    pub fn limiter(&self) -> &L {
        &self.limiter
    }
}

impl<L: KeyedCheck> KeyedCheck for Named<L> {
    type Future = L::Future;
    const LOCAL_KEYS: bool = L::LOCAL_KEYS;

    #[inline]
    fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
        self.limiter.check(key, cost)
    }

    #[inline]
    fn admit(&self, key: &[u8], cost: u64) -> bool {
        self.limiter.admit(key, cost)
    }

    fn policy_name(&self, index: usize) -> &str {
        self.names.get(index).map_or(DEFAULT_POLICY_NAME, String::as_str)
    }
}

#[cfg(feature = "redis")]
pub(crate) mod redis {
    use super::*;
    use ratekeeper_redis::{RedisCompositeLimiter, RedisDividedLimiter, RedisLeasedLimiter, RedisLimiter};

    /// Round trips are boxed futures: a Redis round trip costs far more
    /// than the allocation.
    macro_rules! async_check {
        ($limiter:ty) => {
            impl KeyedCheck for $limiter {
                type Future = BoxCheck;

                fn check(&self, key: &[u8], cost: u64) -> Checking<BoxCheck> {
                    let limiter = self.clone();
                    let key = key.to_vec();
                    Checking::Pending(Box::pin(async move {
                        limiter.check_async(key, cost).await.map(Verdict::single).map_err(BoxError::from)
                    }))
                }

                fn policy_name(&self, _index: usize) -> &str {
                    DEFAULT_POLICY_NAME
                }
            }
        };
    }

    async_check!(RedisLimiter);
    async_check!(RedisLeasedLimiter);

    /// Several limits through Redis ("10 per second and 1,000 per hour"):
    /// one script run decides them all or nothing, so a request refused by
    /// one limit takes nothing from the others — checking one
    /// `RedisLimiter` per limit in turn would have taken it from those
    /// before the refusing one, and let other servers' requests in between.
    /// Policies unnamed: `"policy-1"`, `"policy-2"`… (wrap it in [`Named`]).
    impl KeyedCheck for RedisCompositeLimiter {
        type Future = BoxCheck;

        fn check(&self, key: &[u8], cost: u64) -> Checking<BoxCheck> {
            let limiter = self.clone();
            let key = key.to_vec();
            Checking::Pending(Box::pin(async move {
                let decision = limiter.check_async(key, cost).await.map_err(BoxError::from)?;
                Ok(Verdict { combined: decision.combined, parts: decision.parts })
            }))
        }

        fn policy_name(&self, index: usize) -> &str {
            numbered_policy_name(index)
        }
    }

    /// The Redis limiter for limits text (`"10/second; 1000/hour"`, as
    /// [`ratekeeper::http::limiter_from_text`] reads it): a composite of
    /// its items, each mapped by [`RateItem::spec`](ratekeeper::http::RateItem::spec)
    /// with `algorithm` (it must run in Redis), named by their policy names
    /// (`"10-in-1sec"`), under `name` in `store`. Several items are decided
    /// all or nothing in one round trip; one item is a composite of one —
    /// the same decisions as a `RedisLimiter`, with no remembered refusals.
    pub fn redis_limiter_from_text(
        store: &ratekeeper_redis::RedisStore,
        name: &str,
        text: &str,
        algorithm: ratekeeper::Algorithm,
    ) -> Result<Named<RedisCompositeLimiter>, BoxError> {
        let items = ratekeeper::http::parse_limits(text)?;
        let specs = items.iter().map(|item| item.spec(algorithm)).collect::<Result<Vec<_>, _>>()?;
        let limiter = RedisCompositeLimiter::new(store, name, &specs)?;
        Ok(Named::new(limiter, items.iter().map(ratekeeper::http::RateItem::policy_name)))
    }

    /// Divided mode decides with this node's share, locally: no round trip.
    impl KeyedCheck for RedisDividedLimiter {
        type Future = Never;

        fn check(&self, key: &[u8], cost: u64) -> Checking<Self::Future> {
            Checking::Ready(RedisDividedLimiter::check(self, key, cost).map(Verdict::single).map_err(BoxError::from))
        }

        fn policy_name(&self, _index: usize) -> &str {
            DEFAULT_POLICY_NAME
        }
    }
}
