//! Analysis: the questions people bring to benchmark results, answered as pure functions over
//! canonical records.
//!
//! Owns matching records across a compared dimension ([`improvement`]: "how much faster is A100
//! than Tesla, configuration by configuration?"), regression checks between two runs of the same
//! configurations ([`regression`]), throughput/latency trade-offs with Pareto frontiers
//! ([`tradeoff`]), what a deployment costs per token and joule and what its frontier gives at a
//! target interactivity ([`economics`]), SLO capacity ([`slo`]), the pure parts of `benchlens sweep`'s capacity
//! search ([`capacity`]: objectives, steady window, bracket then bisect) and the curve of its
//! result files ([`capacity_curve`], drawn by [`capacity_figure`]), per-request
//! distributions and percentiles ([`distribution`], [`stats`]), data-quality flags
//! ([`quality`]), the defaults every view and `benchlens compare` start from
//! ([`defaults`]), exporting any of these tables as GitHub-flavoured Markdown, CSV or JSON
//! ([`export`]), many runs over time with their change points ([`trend`]), and one stage as
//! it unfolded: its request timeline and time series ([`timeline`], drawn by
//! [`timeline_plot`]), and the record table's columns ([`table`]). The trade-off,
//! distribution and improvement figures are built here with [`crate::charts`]' palette and
//! base layout.
//!
//! Shared by both faces and pure: it must not import leptos, web-sys, tokio or an HTTP client,
//! touch the filesystem or read the clock. Record indices in results always refer to the
//! slice or [`Dataset`](crate::model::Dataset) the caller passed in.

pub mod capacity;
pub mod capacity_curve;
pub mod capacity_figure;
pub mod defaults;
pub mod distribution;
pub mod economics;
pub mod export;
pub mod improvement;
mod matching;
pub mod quality;
pub mod regression;
pub mod slo;
pub mod stats;
pub mod table;
pub mod timeline;
pub mod timeline_plot;
pub mod tradeoff;
pub mod trend;
pub mod trend_plot;

pub use matching::{default_ignored, DuplicateKey, MatchKey, MatchSummary};

use crate::model::DimKey;

/// Why an analysis could not be computed. Messages are lowercase and name what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    /// No record has the requested value of a dimension.
    #[error("no records have {dim} = {value}; values present: {present}")]
    NoSuchValue {
        /// The dimension's canonical name.
        dim: String,
        /// The value asked for.
        value: String,
        /// The values that are present, comma-separated (or `none`).
        present: String,
    },
    /// Baseline and candidate are the same value.
    #[error("baseline and candidate are both {dim} = {value}; pick two different values")]
    SameValue {
        /// The dimension's canonical name.
        dim: String,
        /// The value given twice.
        value: String,
    },
    /// No compared record carries the metric.
    #[error("no {side} records have the metric {metric}; metrics present: {present}")]
    NoMetric {
        /// `baseline`, `candidate`, `old` or `new`.
        side: String,
        /// The metric's canonical name.
        metric: String,
        /// The metrics that are present, comma-separated (or `none`).
        present: String,
    },
    /// A grouping dimension is not part of the match key, so rows carry no value for it.
    #[error("{dim} is not part of the match key (key: {key})")]
    NotInKey {
        /// The dimension asked for.
        dim: String,
        /// The match key's dimensions, comma-separated.
        key: String,
    },
    /// There is nothing to analyse.
    #[error("no records to {what}")]
    Empty {
        /// What was attempted (`compare`).
        what: String,
    },
}

/// A record's series name: its values of the `by` dimensions joined by " · " (a missing value
/// shows as [`crate::charts::style::NO_VALUE`]); "all" when nothing splits series.
pub(crate) fn series_name(r: &crate::model::Record, by: &[DimKey]) -> String {
    if by.is_empty() {
        return "all".to_string();
    }
    by.iter()
        .map(|k| {
            r.dim(k)
                .map_or(crate::charts::style::NO_VALUE.to_string(), |v| {
                    v.to_string()
                })
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Rows sorted into series by their `by` dimensions, read from the dataset's index: each
/// combination of dictionary codes is named once ([`series_name`] of its values), and the
/// combinations with one name share a series, so grouping a million rows builds a handful of
/// names rather than a string (and a record) a row.
pub(crate) struct SeriesSlots<'a> {
    by: &'a [DimKey],
    columns: Vec<Option<crate::model::ColumnRef<'a>>>,
    combos: crate::model::points::Combos<'a>,
    /// Per combination id: its series' slot.
    slot_of: Vec<usize>,
    /// Per slot: the series' name.
    names: Vec<String>,
    slot_named: std::collections::HashMap<String, usize>,
}

impl<'a> SeriesSlots<'a> {
    /// Series of `ds`'s rows split by `by`.
    pub(crate) fn new(ds: &'a crate::model::Dataset, by: &'a [DimKey]) -> SeriesSlots<'a> {
        let columns: Vec<_> = by.iter().map(|k| ds.column(k)).collect();
        let combos = crate::model::points::Combos::new(
            columns.iter().map(|c| c.map(|c| (c.codes, c.dict.len()))),
        );
        SeriesSlots {
            by,
            columns,
            combos,
            slot_of: Vec::new(),
            names: Vec::new(),
            slot_named: std::collections::HashMap::new(),
        }
    }

    /// The slot of `row`'s series: 0 for the first series seen, then 1, ...
    fn slot(&mut self, row: usize) -> usize {
        let id = self.combos.id(row) as usize;
        if let Some(&slot) = self.slot_of.get(id) {
            return slot;
        }
        // A new combination (ids come in order: this one is `slot_of.len()`).
        let name = self.name(row);
        let fresh = self.names.len();
        let slot = *self.slot_named.entry(name.clone()).or_insert(fresh);
        if slot == fresh {
            self.names.push(name);
        }
        self.slot_of.push(slot);
        slot
    }

    fn name(&self, row: usize) -> String {
        if self.by.is_empty() {
            return "all".to_string();
        }
        self.columns
            .iter()
            .map(|c| {
                c.and_then(|c| c.value(row))
                    .map_or(crate::charts::style::NO_VALUE.to_string(), |v| {
                        v.to_string()
                    })
            })
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// `row`'s group among `groups` (one a slot, added as series appear).
    pub(crate) fn group<'g, T: Default>(
        &mut self,
        groups: &'g mut Vec<T>,
        row: usize,
    ) -> &'g mut T {
        let slot = self.slot(row);
        if groups.len() <= slot {
            groups.resize_with(slot + 1, T::default);
        }
        &mut groups[slot]
    }

    /// The groups (one a slot, as [`SeriesSlots::group`] made them) keyed by their series'
    /// names: what [`in_value_order`] sorts.
    pub(crate) fn named<T>(self, groups: Vec<T>) -> std::collections::BTreeMap<String, T> {
        crate::model::order::map_of(self.names.into_iter().zip(groups))
    }
}

/// Series keyed by [`series_name`], in the order of their values (80 before 10000, `inf`
/// last) rather than as text.
pub(crate) fn in_value_order<T>(groups: std::collections::BTreeMap<String, T>) -> Vec<(String, T)> {
    let mut v: Vec<(String, T)> = groups.into_iter().collect();
    crate::model::order::sort_by(&mut v, |a, b| crate::model::natural_cmp(&a.0, &b.0));
    v
}

/// Joins names for error messages, `none` when empty.
pub(crate) fn join_or_none<I: IntoIterator<Item = String>>(items: I) -> String {
    let v: Vec<String> = items.into_iter().collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// Names of dimension keys joined with ", ".
pub(crate) fn dim_names(dims: &[DimKey]) -> String {
    join_or_none(dims.iter().map(DimKey::name))
}
