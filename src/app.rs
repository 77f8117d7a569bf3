//! The explorer: a Leptos single-page app that loads result files, filters them and charts them.
//!
//! Browser only. Owns the reactive state ([`state`]), getting bytes into the page (files,
//! drag-and-drop, paste, URLs, bundled samples: [`load`], [`worker`]; folders and index files:
//! [`many`]), the bridge to plotly.js
//! ([`plotly`]) and the components: the page shell ([`page`]), file list ([`files`]), filters
//! ([`filters`]), chart panel ([`chart_panel`]) and the views in it. It holds no business
//! logic: parsing is [`crate::ingest`], filtering is [`crate::model::Dataset`], chart contents
//! and comparison tables are [`crate::charts`], the record table and filter rules are
//! [`crate::analysis::table`] and [`crate::views::filters`]. Must not import the native modules (`cli`,
//! `loadgen`). Files import each other one way: `state`, `browser`, `plotly` and `widgets` at
//! the bottom, `page` at the top.

pub mod analyze;
pub mod browser;
pub mod capacity;
pub mod chart_panel;
pub mod deflate;
pub mod exports;
pub mod files;
pub mod filters;
pub mod improve;
pub mod links;
pub mod load;
pub mod many;
pub mod page;
pub mod plotly;
pub mod record_table;
pub mod run_view;
pub mod state;
pub mod tradeoff;
pub mod trends;
pub mod widgets;
pub mod worker;

/// Mounts the explorer on the page's `<body>`.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(page::App);
    // The first dropped file should not wait for the parse worker to start.
    worker::prepare();
}
