//! The `benchlens` binary: the explorer app on wasm32, the command-line tool natively.

/// The native binary's allocator. Set here and not in the library, so tests, benches and crates
/// that depend on the library keep their own choice. Against the system allocator with
/// huge-page advice it replaced, `benchlens inspect` of a 1,000,000-row CSV took the same wall
/// time (1.00 of it, 0.63–1.55 over nine alternating runs) and 1.04 of its CPU time
/// (docs/design-notes.md).
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(target_arch = "wasm32")]
fn main() {
    benchlens::app::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    benchlens::cli::main()
}
