//! An `Option<f64>` in one atomic word, so that a signal is read with a
//! single load and written without a lock.

// std's atomics, not `crate::sync`'s: each reading is one independent word
// (no invariant spans two of them), so there is nothing for the loom models
// to check, and the sampler thread must run in every build.
use std::sync::atomic::{AtomicU64, Ordering};

/// The bits that mean "no reading": a NaN, which no reading ever is (every
/// value stored is checked or computed finite first).
const NONE: u64 = u64::MAX;

/// A reading that may be absent.
pub(crate) struct AtomicReading(AtomicU64);

impl AtomicReading {
    /// No reading yet.
    pub(crate) const fn none() -> Self {
        AtomicReading(AtomicU64::new(NONE))
    }

    /// The latest reading.
    #[inline]
    pub(crate) fn load(&self) -> Option<f64> {
        let bits = self.0.load(Ordering::Acquire);
        (bits != NONE).then(|| f64::from_bits(bits))
    }

    /// Replaces the reading; a NaN is stored as `None`.
    #[inline]
    pub(crate) fn store(&self, value: Option<f64>) {
        let bits = match value {
            Some(v) if !v.is_nan() => v.to_bits(),
            _ => NONE,
        };
        self.0.store(bits, Ordering::Release);
    }
}

impl std::fmt::Debug for AtomicReading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.load().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_value_and_none() {
        let r = AtomicReading::none();
        assert_eq!(r.load(), None);
        for v in [0.0, 1.0, 0.25, 1e300, f64::MIN_POSITIVE] {
            r.store(Some(v));
            assert_eq!(r.load(), Some(v));
        }
        r.store(Some(f64::NAN));
        assert_eq!(r.load(), None);
        r.store(Some(0.5));
        r.store(None);
        assert_eq!(r.load(), None);
    }
}
