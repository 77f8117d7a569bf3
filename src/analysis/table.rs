//! The record table's columns: which columns exist, how cells read (numbers with units), and sorting.
//!
//! Shared and pure, so the browser's table view and tests agree on order and formatting.

use std::cmp::Ordering;

use crate::charts::format_value;
use crate::model::{Dataset, Dim, DimKey, MetricKey, Record};

/// A table column: a dimension or a metric.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    /// A dimension.
    Dim(DimKey),
    /// A metric.
    Metric(MetricKey),
}

impl Column {
    /// The canonical field name (used in links and test selectors).
    pub fn name(&self) -> String {
        match self {
            Column::Dim(k) => k.name(),
            Column::Metric(m) => m.name(),
        }
    }

    /// The header text, with unit.
    pub fn header(&self) -> String {
        match self {
            Column::Dim(k) => k.label(),
            Column::Metric(m) => {
                let label = m.label();
                match m.unit() {
                    Some(u) if !label.contains('(') => format!("{label} ({u})"),
                    _ => label,
                }
            }
        }
    }

    /// Parses a canonical field name.
    pub fn from_name(name: &str) -> Option<Column> {
        DimKey::from_name(name)
            .map(Column::Dim)
            .or_else(|| MetricKey::from_name(name).map(Column::Metric))
    }

    /// Whether cells are numbers (right-aligned).
    pub fn is_numeric(&self) -> bool {
        match self {
            Column::Dim(DimKey::Known(d)) => d.kind() != crate::model::DimKind::Text,
            Column::Dim(DimKey::Tag(_)) => false,
            Column::Metric(_) => true,
        }
    }

    /// The cell text for a record (empty when missing).
    pub fn cell(&self, r: &Record) -> String {
        match self {
            Column::Dim(k) => r.dim(k).map(|v| v.to_string()).unwrap_or_default(),
            Column::Metric(m) => r.metric(m).map(format_value).unwrap_or_default(),
        }
    }
}

/// Every column the records at `indices` have a value for: dimensions in canonical order,
/// then metrics in canonical order.
pub fn available_columns(ds: &Dataset, indices: &[usize]) -> Vec<Column> {
    // From the index: a dimension with a value (code above 0) on some row, the rows' metrics.
    let dims: std::collections::BTreeSet<DimKey> = crate::model::order::set_of(
        ds.dim_keys()
            .filter(|k| {
                ds.column(k)
                    .is_some_and(|c| indices.iter().any(|&i| c.codes.get(i) != 0))
            })
            .cloned(),
    );
    dims.into_iter()
        .map(Column::Dim)
        .chain(ds.metrics_present(indices).into_iter().map(Column::Metric))
        .collect()
}

/// A sensible first choice of columns: the varying well-known dimensions and the headline
/// metrics present.
pub fn default_columns(available: &[Column]) -> Vec<Column> {
    let preferred_dims = [
        Dim::Model,
        Dim::Engine,
        Dim::EngineVersion,
        Dim::Gpu,
        Dim::GpuCount,
        Dim::BatchSize,
        Dim::MaxConcurrency,
        Dim::RequestRate,
        Dim::InputLen,
        Dim::OutputLen,
        Dim::NumPrompts,
    ];
    let mut cols: Vec<Column> = preferred_dims
        .iter()
        .map(|d| Column::Dim(DimKey::Known(*d)))
        .filter(|c| available.contains(c))
        .collect();
    let metrics: Vec<&Column> = available
        .iter()
        .filter(|c| matches!(c, Column::Metric(_)))
        .collect();
    cols.extend(metrics.into_iter().take(8).cloned());
    cols
}

/// Sorts record indices by a column; missing values always go last.
/// Read from the index: a dimension's codes (0, no value, is missing; code order is value
/// order) or a metric's column.
pub fn sort_indices(ds: &Dataset, indices: &mut [usize], column: &Column, descending: bool) {
    let order = |o: Ordering| if descending { o.reverse() } else { o };
    match column {
        Column::Dim(k) => {
            let Some(col) = ds.column(k) else {
                return; // every value missing: the order stays
            };
            let code = |i: usize| col.codes.get(i);
            crate::model::order::sort_by(indices, |&a, &b| match (code(a), code(b)) {
                (0, 0) => Ordering::Equal,
                (0, _) => Ordering::Greater,
                (_, 0) => Ordering::Less,
                (x, y) => order(x.cmp(&y)),
            });
        }
        Column::Metric(m) => {
            let Some(values) = ds.metric_values(m) else {
                return;
            };
            crate::model::order::sort_by(indices, |&a, &b| match (values.get(a), values.get(b)) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(x), Some(y)) => order(x.total_cmp(&y)),
            });
        }
    }
}

/// One page of the record table: the columns on offer and shown, and the first rows.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordPage {
    /// Every column the filtered records have (the column chooser).
    pub available: Vec<Column>,
    /// The columns shown, in order.
    pub columns: Vec<Column>,
    /// The first rows in sort order: the record's index in the dataset and its cells.
    pub rows: Vec<(usize, Vec<String>)>,
    /// How many records the filter and sort cover (more than `rows` when cut).
    pub total: usize,
}

/// The record table of the records at `indices`: the `chosen` columns that exist (the
/// [`default_columns`] until the user chooses), sorted by `sort` (column, descending), with at
/// most `limit` rows; sorting covers every record, not only the rows shown.
pub fn record_page(
    ds: &Dataset,
    indices: &[usize],
    chosen: Option<&[Column]>,
    sort: Option<&(Column, bool)>,
    limit: usize,
) -> RecordPage {
    let available = available_columns(ds, indices);
    let columns: Vec<Column> = match chosen {
        Some(c) => c
            .iter()
            .filter(|c| available.contains(c))
            .cloned()
            .collect(),
        None => default_columns(&available),
    };
    // Unsorted, the page is the first rows: no copy of a million indices per change.
    let indices: std::borrow::Cow<'_, [usize]> = match sort {
        Some((column, descending)) => {
            let mut sorted = indices.to_vec();
            sort_indices(ds, &mut sorted, column, *descending);
            sorted.into()
        }
        None => indices.into(),
    };
    let rows = indices
        .iter()
        .take(limit)
        .map(|&i| {
            (
                i,
                ds.record(i)
                    .map(|r| columns.iter().map(|c| c.cell(&r)).collect())
                    .unwrap_or_default(),
            )
        })
        .collect();
    RecordPage {
        available,
        columns,
        rows,
        total: indices.len(),
    }
}

/// The shown columns after the user ticks or unticks `column`: removed if shown, else added
/// at the end.
pub fn toggle_column(shown: &[Column], column: &Column) -> Vec<Column> {
    let mut next = shown.to_vec();
    match next.iter().position(|c| c == column) {
        Some(pos) => {
            next.remove(pos);
        }
        None => next.push(column.clone()),
    }
    next
}

/// The sort after a click on `column`'s header: the same column flips direction, another
/// column sorts ascending.
pub fn next_sort(current: Option<(Column, bool)>, column: Column) -> Option<(Column, bool)> {
    match current {
        Some((c, descending)) if c == column => Some((c, !descending)),
        _ => Some((column, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatencyMetric, Stat};

    fn rec(engine: &str, ttft: Option<f64>) -> Record {
        let mut r = Record {
            engine: Some(engine.into()),
            ..Record::default()
        };
        if let Some(t) = ttft {
            r.set_metric(MetricKey::latency(LatencyMetric::Ttft, Stat::Mean), t);
        }
        r
    }

    #[test]
    fn sorting_puts_missing_last_both_ways() {
        let ds = Dataset::new(vec![
            rec("b", Some(2.0)),
            rec("a", None),
            rec("c", Some(1.0)),
        ]);
        let col = Column::from_name("mean_ttft_ms").unwrap();
        let mut idx = vec![0, 1, 2];
        sort_indices(&ds, &mut idx, &col, false);
        assert_eq!(idx, [2, 0, 1]);
        sort_indices(&ds, &mut idx, &col, true);
        assert_eq!(idx, [0, 2, 1]);
        let engine = Column::from_name("engine").unwrap();
        sort_indices(&ds, &mut idx, &engine, false);
        assert_eq!(idx, [1, 0, 2]);
    }

    #[test]
    fn columns_headers_and_cells() {
        let ds = Dataset::new(vec![rec("vllm", Some(56.9012))]);
        let cols = available_columns(&ds, &[0]);
        assert_eq!(
            cols.iter().map(Column::name).collect::<Vec<_>>(),
            ["engine", "mean_ttft_ms"]
        );
        assert_eq!(cols[1].header(), "Mean TTFT (ms)");
        assert_eq!(cols[1].cell(&ds.record(0).unwrap()), "56.90");
        assert_eq!(default_columns(&cols), cols);
        assert_eq!(
            Column::Metric(MetricKey::OutputThroughput).header(),
            "Output token throughput (tok/s)"
        );
    }

    #[test]
    fn record_page_sorts_all_then_cuts_and_keeps_chosen_columns_that_exist() {
        let ds = Dataset::new(vec![
            rec("b", Some(2.0)),
            rec("a", None),
            rec("c", Some(3.0)),
            rec("d", Some(1.0)),
        ]);
        let ttft = Column::from_name("mean_ttft_ms").unwrap();
        let engine = Column::from_name("engine").unwrap();
        let page = record_page(&ds, &[0, 1, 2, 3], None, Some(&(ttft.clone(), true)), 2);
        assert_eq!(page.total, 4);
        assert_eq!(page.columns, [engine.clone(), ttft.clone()]);
        // Sorted over all four before the cut: 3.0 (c), then 2.0 (b).
        assert_eq!(
            page.rows,
            [
                (2, vec!["c".to_string(), "3.00".to_string()]),
                (0, vec!["b".to_string(), "2.00".to_string()])
            ]
        );
        // A chosen column the filtered records lack is left out, not shown empty.
        let gpu = Column::from_name("gpu").unwrap();
        let chosen = [ttft.clone(), gpu];
        let page = record_page(&ds, &[1, 3], Some(&chosen), None, 10);
        assert_eq!(page.columns, std::slice::from_ref(&ttft));
        assert_eq!(
            page.rows,
            [(1, vec![String::new()]), (3, vec!["1.00".to_string()])]
        );
    }

    #[test]
    fn toggling_columns_and_sort_clicks() {
        let ttft = Column::from_name("mean_ttft_ms").unwrap();
        let engine = Column::from_name("engine").unwrap();
        let shown = toggle_column(std::slice::from_ref(&engine), &ttft);
        assert_eq!(shown, [engine.clone(), ttft.clone()]);
        assert_eq!(toggle_column(&shown, &engine), std::slice::from_ref(&ttft));
        let first = next_sort(None, ttft.clone());
        assert_eq!(first, Some((ttft.clone(), false)));
        assert_eq!(
            next_sort(first.clone(), ttft.clone()),
            Some((ttft.clone(), true))
        );
        assert_eq!(next_sort(first, engine.clone()), Some((engine, false)));
    }
}
