//! The canonical data model: one [`Record`] per benchmark point, and the [`Dataset`] store that
//! filters and counts them.
//!
//! Every reader in `ingest` produces these records, every chart and analysis consumes them, and
//! the load generator writes them. The names used in canonical JSON and CSV are exactly those of
//! the project's format reference (snake_case, units in the name, vLLM's metric names where vLLM
//! has one): see [`Dim`] for the dimensions and [`MetricKey`] for the metrics, and
//! [`canonical`] for the file formats (with `schema/benchlens-records.schema.json`).
//!
//! This module is shared by both faces and pure: it must not import leptos, web-sys, tokio or any
//! I/O, and must not read the clock.

pub mod canonical;
pub mod civil;
pub mod columns;
mod dim;
pub mod flags;
mod gaps;
mod metric;
mod metrics;
pub mod order;
pub mod points;
pub mod provenance;
mod record;
pub mod spread;
mod store;

pub use dim::{
    format_number, natural_cmp, round_significant, Dim, DimKey, DimKind, DimValue, NO_VALUE,
};
pub use gaps::{BadExponent, Gaps, GapsIter, GapsParts};
pub use metric::{capitalized, Direction, LatencyMetric, MetricKey, Percentile, Stat};
pub use metrics::Metrics;
pub(crate) use record::parse_number;
pub use record::{BorrowedDim, Record, RequestDetail, SetDimError};
pub(crate) use store::Column as IndexColumn;
pub use store::{
    ColumnRef, Dataset, Facet, FacetValue, Filter, FilterPass, Index, IndexError, MetricValues,
};

/// Version of the canonical JSON layout written by [`canonical::to_json`].
pub const SCHEMA_VERSION: u32 = 1;
