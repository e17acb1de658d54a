//! [`SlotArray`]: a table's slots in memory aligned for the hardware — to a
//! cache line always, and to a 2 MiB page (with transparent huge pages
//! asked for, on Linux) when the array is that large.
//!
//! Why: a lookup in a table far larger than the caches costs a miss, and
//! the layout decides how many. `Vec` gives the allocator's alignment
//! (glibc: 16 bytes past a page boundary for large blocks), so half of all
//! 32-byte slots straddle two cache lines — two misses — and the array's
//! first and last partial 2 MiB are not eligible for huge pages. With 4 KiB
//! pages a random lookup also misses the TLB, and under a hypervisor the
//! page walk that follows reads several more lines. Transparent huge pages
//! in their usual `madvise` mode back memory with 2 MiB pages only where a
//! program asked.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

const CACHE_LINE: usize = 64;
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-length, heap-allocated array of `T`, aligned as the module docs
/// say. Like `Box<[T]>` otherwise.
pub(crate) struct SlotArray<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a SlotArray owns its elements as a Box<[T]> does.
unsafe impl<T: Send> Send for SlotArray<T> {}
// SAFETY: as above; shared access gives only `&[T]`.
unsafe impl<T: Sync> Sync for SlotArray<T> {}

impl<T> SlotArray<T> {
    /// An empty array (no allocation).
    pub(crate) const fn new() -> Self {
        SlotArray { ptr: NonNull::dangling(), len: 0 }
    }

    /// The layout of `len` elements: `None` for no allocation (zero bytes).
    fn layout(len: usize) -> Option<Layout> {
        let size = std::mem::size_of::<T>().checked_mul(len)?;
        if size == 0 {
            return None;
        }
        let align = if size >= HUGE_PAGE { HUGE_PAGE } else { CACHE_LINE };
        let layout = Layout::from_size_align(size, align.max(std::mem::align_of::<T>())).ok();
        // (A length no allocation could hold is refused like Vec's.)
        Some(layout.unwrap_or_else(|| panic!("capacity overflow: {len} slots")))
    }

    /// `len` elements made by `fill`.
    pub(crate) fn from_fn(len: usize, mut fill: impl FnMut() -> T) -> Self {
        let ptr = match Self::layout(len) {
            // Zero bytes: no allocation, a dangling (well-aligned) pointer.
            None => NonNull::dangling(),
            Some(layout) => {
                // SAFETY: `layout` has a non-zero size.
                let raw = unsafe { alloc::alloc(layout) };
                let Some(ptr) = NonNull::new(raw.cast::<T>()) else { alloc::handle_alloc_error(layout) };
                if layout.align() == HUGE_PAGE {
                    advise_huge_pages(raw, layout.size());
                }
                ptr
            }
        };
        for i in 0..len {
            // SAFETY: `i < len`: within the allocation (or a zero-sized
            // write), properly aligned, and not yet initialised. (If `fill` panics, the elements written so
            // far and the memory leak: no unsoundness.)
            unsafe { ptr.as_ptr().add(i).write(fill()) };
        }
        SlotArray { ptr, len }
    }
}

impl<T> Deref for SlotArray<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised elements (or is dangling,
        // well-aligned and `len` is 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for SlotArray<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for SlotArray<T> {
    fn drop(&mut self) {
        // SAFETY: the elements are initialised and dropped once; then the
        // memory (if any) is freed with the layout it was allocated with.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            if let Some(layout) = Self::layout(self.len) {
                alloc::dealloc(self.ptr.as_ptr().cast(), layout);
            }
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for SlotArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Asks for huge pages over the whole 2 MiB blocks of `len` bytes from
/// `ptr` (memory not touched yet, so it is backed by huge pages from the
/// first touch). Other systems, or a kernel that says no: nothing happens.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies within the caller's allocation, and
        // MADV_HUGEPAGE is only a hint about how to back it: it changes no
        // byte and no mapping anything else uses. Failure is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn aligned_filled_and_dropped() {
        let counter = Rc::new(());
        let small = SlotArray::from_fn(10, || Rc::clone(&counter));
        assert_eq!(small.len(), 10);
        assert_eq!(small.as_ptr() as usize % CACHE_LINE, 0);
        assert_eq!(Rc::strong_count(&counter), 11);
        drop(small);
        assert_eq!(Rc::strong_count(&counter), 1, "every element dropped");
        let big = SlotArray::from_fn((3 << 20) / 8, || 7u64);
        assert_eq!(big.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(big.iter().all(|&x| x == 7));
        let mut empty = SlotArray::<u64>::from_fn(0, || 1);
        assert!(empty.is_empty());
        assert!(empty.iter_mut().next().is_none());
        let zst = SlotArray::from_fn(5, || ());
        assert_eq!(zst.len(), 5);
    }
}
