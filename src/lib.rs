//! benchlens: explore and produce LLM inference benchmark results.
//!
//! One crate, two faces:
//!
//! - **The explorer** (`wasm32`): a Leptos single-page app that loads result files of many
//!   shapes, filters them and charts throughput and latency comparisons with Plotly, entirely in
//!   the browser ([`app`]).
//! - **The command-line tool** (native): the `benchlens` binary that converts and inspects result
//!   files and drives inference servers ([`cli`]).
//!
//! # Dependency rules
//!
//! | module      | target | may use                                                  |
//! |-------------|--------|----------------------------------------------------------|
//! | [`model`]   | both   | serde, serde_json, csv, thiserror                        |
//! | [`ingest`]  | both   | [`model`] and the above                                  |
//! | [`charts`]  | both   | [`model`], serde_json                                    |
//! | [`analysis`]| both   | [`model`], [`charts`], csv, serde_json                   |
//! | [`views`]   | both   | [`model`], [`charts`], [`analysis`], [`share`]           |
//! | `app`       | wasm32 | the shared modules, leptos, web-sys, gloo                |
//! | `cli`       | native | the shared modules, clap, tokio                          |
//!
//! Shared modules never import tokio, leptos, web-sys or an HTTP client and never read the clock
//! (`Instant::now()` panics on wasm32). `app` and the native modules never import each other.

pub mod analysis;
pub mod charts;
pub mod ingest;
pub mod model;
pub mod share;
pub mod views;
pub mod wire;

/// This build's version (Cargo.toml's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit this build was made from: `git rev-parse --short HEAD` at build time, or the
/// `BENCHLENS_COMMIT` environment variable, or `unknown` (see build.rs).
pub const COMMIT: &str = env!("BENCHLENS_COMMIT");

/// What `benchlens --version` prints after the name: the version and the commit.
pub const VERSION_TEXT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("BENCHLENS_COMMIT"),
    ")"
);

#[cfg(target_arch = "wasm32")]
pub mod app;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

#[cfg(not(target_arch = "wasm32"))]
pub mod loadgen;

#[cfg(not(target_arch = "wasm32"))]
pub mod stdout;
