//! Chart specifications built from canonical records, as plotly.js figures.
//!
//! Pure and shared: a chart here is a [`plotly::Plot`] (the JSON plotly.js takes),
//! so chart contents are tested natively and the browser only hands them to `Plotly.react`.
//! Grouping records into series ([`build_series`]) and the "fastest / faster by" comparison
//! table ([`comparison_table`]) live here too, because the chart and the table under it must
//! agree. Must not import leptos, web-sys or anything native-only.
//!
//! One file per job: [`style`] (theme, palette, base layout, labels), [`series`] (records into
//! series and panels), [`comparison`] (the table under a comparison chart), [`figure`] (the main
//! chart) and [`fit`] (layout fitted to the
//! data just before drawing), and [`plotly`] (the figure builders: the part of plotly.js's
//! schema the charts use). Everything public is re-exported here.

pub(crate) mod comparison;
pub(crate) mod figure;
pub mod fit;
pub mod plotly;
pub(crate) mod series;
pub(crate) mod style;

pub use comparison::{comparison_table, ComparisonRow, ComparisonTable, MAX_LISTED_ROWS};
pub use figure::{plot, MAX_PANELS, MAX_RICH_POINTS};
pub use series::{
    build_series, build_series_indexed, build_series_selected, build_series_with_records, facets,
    series_names, ChartKind, ChartSpec, PointIndex, Series, SeriesPoint,
};
pub use style::{
    base_layout, escape_html, format_value, series_title, Theme, ThemeColors, NO_VALUE, PALETTE,
};

#[cfg(test)]
mod tests;
