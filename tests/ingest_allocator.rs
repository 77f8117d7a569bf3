//! The library leaves the global allocator to whoever links it: this test binary sets its own
//! (one that counts), which would not link if the library set one too, and reading a file
//! allocates through it. The `benchlens` binary sets mimalloc in src/main.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use benchlens::ingest;

/// [`System`], counting the bytes asked for.
struct Counting;

static ALLOCATED_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; counting touches no memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn reading_allocates_through_the_allocator_of_the_program() {
    let mut csv = String::from("model,TTFT (ms)\n");
    for i in 0..10_000 {
        csv.push_str(&format!("m{},{}\n", i % 3, i));
    }
    let before = ALLOCATED_BYTES.load(Ordering::Relaxed);
    let got = ingest::read("t.csv", csv.as_bytes()).unwrap();
    let during = ALLOCATED_BYTES.load(Ordering::Relaxed) - before;
    assert_eq!(got.records.len(), 10_000);
    // At least the records themselves came from this allocator.
    let records_bytes = got.records.len() * std::mem::size_of_val(&got.records[0]);
    assert!(during >= records_bytes, "{during} < {records_bytes}");
}
