//! Asks Linux to back a large table with 2 MiB pages.
//!
//! A lookup at a random key of a table far larger than the caches misses
//! the cache once; with 4 KiB pages it usually misses the TLB as well, and
//! under a hypervisor the page walk that follows reads several more lines.
//! With transparent huge pages in their usual `madvise` mode, memory is
//! backed by 2 MiB pages only where a program asked for it.

/// Advises huge pages for the whole 2 MiB-aligned 2 MiB blocks within
/// `len` bytes from `ptr` (memory that nothing has touched yet, so the
/// kernel can back it with huge pages from the first touch on). Smaller
/// ranges, other systems, and a refusal by the kernel: nothing happens.
#[cfg(target_os = "linux")]
pub(crate) fn advise(ptr: *mut u8, len: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies within the caller's allocation, and
        // MADV_HUGEPAGE is only a hint about how to back it: it changes no
        // byte of it and no mapping that anything else uses. Failure (an
        // old kernel, THP disabled) is harmless and ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn advise(_ptr: *mut u8, _len: usize) {}
