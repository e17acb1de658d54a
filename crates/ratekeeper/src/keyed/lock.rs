//! [`ShardLock`]: the spin lock each shard's state is behind, and its
//! guard. A module of its own because it is the one part of the keyed
//! limiters built on raw atomics and an `UnsafeCell`: the loom models
//! (`crates/ratekeeper/src/loom_models.rs`) run it alone and inside the
//! limiter's own paths.

use std::mem::ManuallyDrop;

use crate::sync::{spin, yield_now, AtomicBool, CellAccess, Ordering, UnsafeCell};

/// How many times a waiter polls a shard's lock before it starts yielding
/// the CPU between polls: some tens of microseconds, far longer than a
/// decision holds it, so a waiter yields only to a holder that was
/// descheduled or is sweeping its shard.
const SHARD_POLLS: u32 = 1_000;

/// A spin lock: an uncontended lock is one compare-and-swap and its unlock
/// a plain store (std's `Mutex` unlocks with a second atomic swap, to wake
/// sleepers). A shard is held for tens of nanoseconds (in a table larger
/// than the caches, a cache miss more), except while its table grows or is
/// swept; waiters poll it, then yield the CPU.
pub(crate) struct ShardLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `value`, so it can
// be shared whenever `T` can be sent between threads (as for `Mutex`).
unsafe impl<T: Send> Sync for ShardLock<T> {}

impl<T> ShardLock<T> {
    pub(crate) fn new(value: T) -> Self {
        ShardLock { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    #[inline]
    pub(crate) fn lock(&self) -> ShardGuard<'_, T> {
        if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            self.lock_contended();
        }
        ShardGuard { lock: self, access: ManuallyDrop::new(self.value.access()) }
    }

    /// Waits for the lock by polling it, a pause apart, then yielding the
    /// CPU between polls once it has polled [`SHARD_POLLS`] times.
    ///
    /// Not the doubling backoff of `seq_cell::Backoff`: a shard is held for about
    /// one cache miss, a few hundred nanoseconds, and a waiter whose pauses
    /// double finds it free, on average, as long after its release as it had
    /// already waited, which showed in profiles of two threads on a million
    /// keys (BENCHMARKS.md, the `keyed` benchmark's *Earlier
    /// measurements*). A waiter's poll only reads the line.
    #[cold]
    fn lock_contended(&self) {
        let mut polls = 0;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if polls < SHARD_POLLS {
                    spin(1);
                    polls += 1;
                } else {
                    yield_now();
                }
            }
            if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return;
            }
        }
    }
}

/// Access to a [`ShardLock`]'s value; unlocks when dropped (also when
/// unwinding).
pub(crate) struct ShardGuard<'a, T> {
    lock: &'a ShardLock<T>,
    /// The access the lock grants, ended before the unlock (under loom, a
    /// tracked access: two guards at once would be reported).
    access: ManuallyDrop<CellAccess<T>>,
}

impl<T> std::ops::Deref for ShardGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock: no other access exists.
        unsafe { self.access.get() }
    }
}

impl<T> std::ops::DerefMut for ShardGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` is unique.
        unsafe { self.access.get_mut() }
    }
}

impl<T> Drop for ShardGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: dropped once, here, and not used after.
        unsafe { ManuallyDrop::drop(&mut self.access) };
        self.lock.locked.store(false, Ordering::Release);
    }
}
