//! The native global allocator: the system's, with transparent huge pages asked for on
//! large blocks (Linux).
//!
//! Reading a 100,000-row table fills tens of megabytes of records that the allocator maps
//! fresh from the kernel; faulting that memory in 4 KiB pages costs more than parsing the
//! file. Blocks of at least [`HUGE`] are advised `MADV_HUGEPAGE`, so on kernels where
//! transparent huge pages are enabled for advised memory (the common `madvise` setting) they
//! fault in 2 MiB at a time. Everything else is the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks this large are advised huge pages.
const HUGE: usize = 4 << 20;

/// [`System`], advising huge pages for large blocks.
pub struct Allocator;

fn advise(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < HUGE {
        return;
    }
    // madvise wants a page-aligned start; the block's first partial page is left as it is.
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + size) & !(PAGE - 1);
    if end > start {
        // SAFETY: the range lies inside a block this allocator just handed out; advice only
        // changes how the kernel backs it, never its contents or validity. A failure (no
        // transparent huge pages) leaves ordinary pages.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

// SAFETY: every call is forwarded to `System` with the same arguments; `advise` does not touch
// the memory.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size >= HUGE && layout.size() < HUGE {
            advise(p, new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn large_blocks_keep_their_contents_through_growth() {
        // Below the threshold, grown across it, and grown again: every byte survives.
        let mut v: Vec<u32> = (0..300_000).collect();
        v.reserve(3_000_000);
        v.extend(300_000..3_000_000);
        v.shrink_to_fit();
        v.extend(3_000_000..5_000_000);
        assert!(v.iter().enumerate().all(|(i, x)| *x as usize == i));
        let zeroed = vec![0u64; 2_000_000];
        assert!(zeroed.iter().all(|x| *x == 0));
    }
}
