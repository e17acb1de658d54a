//! Composite limits: several limits on one key, admitted all or nothing.
//!
//! "10 per second *and* 1,000 per hour" is two limits that must both agree.
//! Checking them one after the other is wrong: when the second refuses, the
//! first has already consumed (rate-limiter-flexible#280 and gubernator#45
//! ask for exactly this). A composite first asks every part whether it would
//! admit the request ([`Admission::peek`]); only if all would does it admit
//! it in each ([`Admission::check`]) — on the same state at the same time,
//! so the answers cannot change in between. A refusal consumes nothing
//! anywhere, and is a [`Decision`] like any other.
//!
//! The combined decision is [`decision::combine`]'s
//! (the refusing part with the longest retry-after; when admitted, the part
//! with the fewest units left). The per-part decisions can be had too, one
//! `RateLimit` item per policy: each part's own decision when the request is
//! admitted; when it is refused, the refusing parts' refusals and, for the
//! parts that would have admitted it, their state untouched (a look of
//! cost 0) — nothing was taken from them.

use crate::admission::Admission;
use crate::decision::{self, Decision};
use crate::full::Full;

/// Admits `cost` at `now_micros` in every one of `parts`, or in none.
/// Returns the combined decision; an empty slice admits everything with a
/// limit of 0.
pub fn check_all<A: Admission>(parts: &mut [A], cost: u64, now_micros: i64) -> Decision {
    check_all_each(parts, cost, now_micros, |_, _| {})
}

/// [`check_all`], also handing each part's own decision (with its index) to
/// `each` — for one `RateLimit` field item per policy.
pub fn check_all_each<A: Admission>(
    parts: &mut [A],
    cost: u64,
    now_micros: i64,
    mut each: impl FnMut(usize, &Decision),
) -> Decision {
    if cost > 0 && parts.iter().all(|p| p.peek(cost, now_micros).allowed) {
        let decisions = parts.iter_mut().enumerate().map(|(i, p)| {
            let d = p.check(cost, now_micros);
            each(i, &d);
            d
        });
        return decision::combine(decisions).unwrap_or(Decision::allowed(0, 0, 0, 0));
    }
    peek_all_each(parts, cost, now_micros, each)
}

/// The decision [`check_all`] would make, consuming nothing.
pub fn peek_all<A: Admission>(parts: &[A], cost: u64, now_micros: i64) -> Decision {
    peek_all_each(parts, cost, now_micros, |_, _| {})
}

/// [`peek_all`], also handing each part's decision (with its index) to
/// `each`: in a refusal, the parts that would have admitted show their
/// state untouched, as [`check_all_each`] shows them.
pub fn peek_all_each<A: Admission>(
    parts: &[A],
    cost: u64,
    now_micros: i64,
    mut each: impl FnMut(usize, &Decision),
) -> Decision {
    let refused = parts.iter().any(|p| !p.peek(cost, now_micros).allowed);
    let decisions = parts.iter().enumerate().map(|(i, p)| {
        let d = p.peek(cost, now_micros);
        // In a refusal, a part that would have admitted shows its state as
        // it is: nothing was taken from it.
        let shown = if refused && d.allowed { p.peek(0, now_micros) } else { d };
        each(i, &shown);
        shown
    });
    decision::combine(decisions).unwrap_or(Decision::allowed(0, 0, 0, 0))
}

/// Gives `cost` units back to every one of `parts` at `now_micros`: what
/// [`check_all`] admitted, it admitted in all of them.
pub fn refund_all<A: Admission>(parts: &mut [A], cost: u64, now_micros: i64) {
    for part in parts {
        part.refund(cost, now_micros);
    }
}

/// `K` limits of one kind as one, all or nothing: an [`Admission`] itself,
/// with no allocation. (The std layer's `CompositeLimiter` holds any mix of
/// algorithms.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Composite<A, const K: usize> {
    parts: [A; K],
}

impl<A: Admission, const K: usize> Composite<A, K> {
    /// The composite of `parts`.
    pub fn new(parts: [A; K]) -> Self {
        Composite { parts }
    }

    /// The parts, with their state.
    pub fn parts(&self) -> &[A; K] {
        &self.parts
    }
}

impl<A: Admission, const K: usize> Admission for Composite<A, K> {
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        check_all(&mut self.parts, cost, now_micros)
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        peek_all(&self.parts, cost, now_micros)
    }

    /// [`refund_all`]: every part gives back what it can.
    #[inline]
    fn refund(&mut self, cost: u64, now_micros: i64) {
        refund_all(&mut self.parts, cost, now_micros);
    }
}

/// Full when every part is: a composite decides from its parts' decisions
/// alone.
impl<A: Admission + Full, const K: usize> Full for Composite<A, K> {
    fn fresh(&self) -> Self {
        Composite { parts: self.parts.each_ref().map(Full::fresh) }
    }

    fn is_full_at(&self, now_micros: i64) -> bool {
        self.parts.iter().all(|p| p.is_full_at(now_micros))
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        // (`now_micros` itself for no parts: an empty composite never changes.)
        self.parts.iter().map(|p| p.full_at_micros(now_micros)).fold(now_micros, i64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FixedWindow, TokenBucket};

    #[test]
    fn all_or_nothing() {
        // 2 per second and 3 per 10 seconds.
        let mut c = Composite::new([FixedWindow::new(2, 1_000_000).unwrap(), FixedWindow::new(3, 10_000_000).unwrap()]);
        assert!(c.check(2, 0).allowed);
        let refused = c.check(1, 500_000);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_micros, 500_000);
        // The refusal took nothing from the 10-second window.
        assert_eq!(c.parts()[1].peek(0, 500_000).remaining, 1);
        let d = c.check(1, 1_000_000);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 3, 0));
        // Now the 10-second window refuses while the 1-second one would
        // admit: nothing is taken from the 1-second window either.
        let refused = c.check(1, 1_500_000);
        assert_eq!((refused.allowed, refused.retry_after_micros), (false, 8_500_000));
        assert_eq!(c.parts()[0].peek(0, 1_500_000).remaining, 1);
    }

    #[test]
    fn mixed_kinds_through_slices() {
        let mut parts = [TokenBucket::new(1.0, 5).unwrap(), TokenBucket::new(100.0, 2).unwrap()];
        let mut seen = [None; 2];
        let d = check_all_each(&mut parts, 2, 0, |i, d| seen[i] = Some(d.remaining));
        assert!(d.allowed);
        assert_eq!(seen, [Some(3), Some(0)]);
        assert_eq!(d.remaining, 0);
        let refused = check_all(&mut parts, 1, 0);
        assert!(!refused.allowed);
        assert_eq!(parts[0].tokens_at(0), 3.0);
        assert!(check_all::<TokenBucket>(&mut [], 1, 0).allowed);
    }
}
