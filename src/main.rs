//! The `benchlens` binary: the explorer app on wasm32, the command-line tool natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    benchlens::app::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    benchlens::cli::main()
}
