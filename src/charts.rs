//! Chart specifications built with the plotly crate from canonical records.
//!
//! Pure and shared: a chart here is a `plotly::Plot` (serialisable to the JSON plotly.js takes),
//! so chart contents are tested natively and the browser only hands them to `Plotly.react`.
