//! `StateLock`: the lock every shared limiter puts its core state machine in.
//!
//! A decision mutates a few words of state in a few nanoseconds, far less
//! than parking a thread would cost, so the lock is a sequence counter taken
//! by compare-and-swap (a seqlock used as a spin lock): even means free, odd
//! means held. Uncontended, taking it is one CAS and releasing it one store —
//! what a lock-free CAS loop over the state would cost, but for any amount of
//! state, so the core can stay plain `f64`/`i64` fields and Guava-exact.
//!
//! Callers that only need one word of the state (such as "when is the next
//! permit free?") keep a copy of that word in an atomic beside the lock,
//! written while holding it, and read it without locking: a refusal then
//! costs no write at all, and threads being refused do not contend.
//!
//! The version a caller saw before reading the clock can be passed to
//! [`StateLock::lock_at`], which succeeds only if nobody has written since:
//! that keeps the times fed to the state machine in order across threads.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

/// Spins this many times on a held lock before yielding the CPU, so a thread
/// preempted while holding the lock does not starve the others.
const SPINS_BEFORE_YIELD: u32 = 64;

/// A value guarded by a sequence-counter spin lock.
pub(crate) struct StateLock<T> {
    seq: AtomicU64,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a `StateGuard`, and a guard exists
// only while `seq` is odd, which one thread at a time can make it (by CAS).
unsafe impl<T: Send> Sync for StateLock<T> {}
unsafe impl<T: Send> Send for StateLock<T> {}

impl<T> StateLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        StateLock { seq: AtomicU64::new(0), value: UnsafeCell::new(value) }
    }

    /// The current version: even when free, odd while held.
    #[inline]
    pub(crate) fn version(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Takes the lock if its version is still `version` (which must be
    /// even), i.e. if nobody has taken it since that version was read.
    #[inline]
    pub(crate) fn lock_at(&self, version: u64) -> Option<StateGuard<'_, T>> {
        if version & 1 != 0 {
            return None;
        }
        self.seq
            .compare_exchange_weak(version, version + 1, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| StateGuard { lock: self, version: version + 1 })
    }

    /// Takes the lock, spinning (then yielding) while another thread holds it.
    pub(crate) fn lock(&self) -> StateGuard<'_, T> {
        let mut spins = 0;
        loop {
            if let Some(guard) = self.lock_at(self.version()) {
                return guard;
            }
            Self::back_off(&mut spins);
        }
    }

    /// Waits a little before another attempt at the lock.
    #[inline]
    pub(crate) fn back_off(spins: &mut u32) {
        if *spins < SPINS_BEFORE_YIELD {
            *spins += 1;
            std::hint::spin_loop();
        } else {
            *spins = 0;
            std::thread::yield_now();
        }
    }

    /// The value, through exclusive access (no locking needed).
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: fmt::Debug> fmt::Debug for StateLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let guard = self.lock();
        f.debug_struct("StateLock").field("value", &*guard).finish()
    }
}

/// Exclusive access to a [`StateLock`]'s value; releases the lock on drop.
pub(crate) struct StateGuard<'a, T> {
    lock: &'a StateLock<T>,
    /// The odd version this guard set.
    version: u64,
}

impl<T> Deref for StateGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (see `StateLock`'s Sync impl).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for StateGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes this the
        // only reference through it.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for StateGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Release: everything written under the lock is visible to the next
        // thread that takes it (its CAS is an Acquire).
        self.lock.seq.store(self.version + 1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn lock_at_fails_once_the_version_moved() {
        let lock = StateLock::new(0u64);
        let v = lock.version();
        {
            let mut g = lock.lock();
            *g += 1;
        }
        assert!(lock.lock_at(v).is_none());
        let v2 = lock.version();
        assert_eq!(v2, v + 2);
        assert!(lock.lock_at(v2).is_some());
    }

    #[test]
    fn no_increment_is_lost_under_contention() {
        // Two-word state updated non-atomically under the lock: any lost
        // exclusion shows up as a mismatch or a lost count.
        let lock = Arc::new(StateLock::new((0u64, 0u64)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        let mut g = lock.lock();
                        let (a, b) = *g;
                        assert_eq!(a, b);
                        *g = (a + 1, b + 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), (400_000, 400_000));
    }
}
