//! The atomics, cell, lock and spin-wait hints the std layer's concurrent
//! code is made of: std's in every normal build, [loom]'s when the crate is
//! built with `RUSTFLAGS="--cfg loom"` for the concurrency models
//! (`scripts/loom.sh`, `src/loom_models.rs`).
//!
//! Why one module: loom checks a concurrent algorithm by running it under
//! the interleavings of its threads (and the values a relaxed load may
//! return) that the C++/Rust memory model allows, which it can do only if
//! each atomic access,
//! lock and `UnsafeCell` access goes through its own types. Routing them all
//! through here lets the `cfg(loom)` build swap those types in without a
//! line of limiter logic changing. In the normal build everything here is
//! std's own item or a `#[inline]` wrapper that compiles to it.
//!
//! [loom]: https://docs.rs/loom

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;

/// Busy-waits for `pauses` spin-loop hints (a waiter backing off).
#[cfg(not(loom))]
#[inline]
pub(crate) fn spin(pauses: u32) {
    for _ in 0..pauses {
        std::hint::spin_loop();
    }
}

/// Under loom a busy-wait must hand the (simulated) CPU to another thread,
/// once: loom would otherwise explore every count of spins as a separate
/// execution.
#[cfg(loom)]
#[inline]
pub(crate) fn spin(_pauses: u32) {
    loom::thread::yield_now();
}

/// Gives up the CPU (a waiter that has spun long enough).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// An `UnsafeCell` whose accesses loom can track: a lock hands out one
/// [`CellAccess`] at a time, and loom reports two that overlap.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    value: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    value: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    #[cfg(not(loom))]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell { value: std::cell::UnsafeCell::new(value) }
    }

    #[cfg(loom)]
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell { value: loom::cell::UnsafeCell::new(value) }
    }

    /// Starts an exclusive access, which lasts until the handle is dropped.
    /// Making one is safe; using it is not (see [`CellAccess`]).
    #[inline]
    pub(crate) fn access(&self) -> CellAccess<T> {
        #[cfg(not(loom))]
        return CellAccess { ptr: self.value.get() };
        #[cfg(loom)]
        return CellAccess { ptr: self.value.get_mut() };
    }
}

/// An exclusive access to an [`UnsafeCell`]'s value (a raw pointer in the
/// normal build; under loom, a tracked one).
pub(crate) struct CellAccess<T> {
    #[cfg(not(loom))]
    ptr: *mut T,
    #[cfg(loom)]
    ptr: loom::cell::MutPtr<T>,
}

impl<T> CellAccess<T> {
    /// The value.
    ///
    /// # Safety
    /// No other access to the cell's value may exist while this handle does
    /// (the caller holds the lock that guards it).
    #[inline]
    pub(crate) unsafe fn get(&self) -> &T {
        // SAFETY: the caller's contract.
        #[cfg(not(loom))]
        return unsafe { &*self.ptr };
        // SAFETY: the caller's contract.
        #[cfg(loom)]
        return unsafe { &*self.ptr.deref() };
    }

    /// The value, mutably.
    ///
    /// # Safety
    /// As for [`get`](Self::get).
    #[inline]
    pub(crate) unsafe fn get_mut(&mut self) -> &mut T {
        // SAFETY: the caller's contract.
        #[cfg(not(loom))]
        return unsafe { &mut *self.ptr };
        // SAFETY: the caller's contract.
        #[cfg(loom)]
        return unsafe { self.ptr.deref() };
    }
}
