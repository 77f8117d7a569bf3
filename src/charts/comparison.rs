//! The "fastest / faster by %" table under a comparison chart: per x value (and panel), each
//! series' value, the best series and its margin over the runner-up. Built from the same
//! [`Series`] as the chart, so the two always agree. Where the best and the runner-up know
//! their noise and their intervals overlap ([`crate::model::spread::distinguishable`]), the
//! row says "not distinguishable" instead of naming a winner the repeats do not support.

use std::collections::BTreeMap;

use super::series::{facets, series_names, Series};
use crate::model::spread::{distinguishable, Interval, Noisy, NOT_DISTINGUISHABLE};
use crate::model::{DimValue, Direction, MetricKey};

/// One row of the comparison table: one x value (of one panel).
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonRow {
    /// The panel's value, when the chart has panels.
    pub facet: Option<DimValue>,
    /// The x value.
    pub x: DimValue,
    /// Each series' value at x, in the order of [`ComparisonTable::series`].
    pub values: Vec<Option<f64>>,
    /// Each series' interval at x (see [`crate::charts::series::SeriesPoint::interval`]).
    pub intervals: Vec<Option<Interval>>,
    /// What to know about the records behind the row's points
    /// ([`crate::charts::series::SeriesPoint::notes`]), each prefixed with its series' name.
    pub notes: Vec<String>,
    /// The best series at x (lowest for latencies, highest otherwise), when two or more have
    /// a value.
    pub fastest: Option<String>,
    /// How much better the best is than the runner-up, in %: for lower-is-better metrics
    /// (runner-up − best) / runner-up × 100, otherwise (best − runner-up) / runner-up × 100.
    pub faster_by_pct: Option<f64>,
    /// The runner-up's position in [`ComparisonTable::series`].
    pub runner_up: Option<usize>,
    /// Whether the best and the runner-up can be told apart: `Some(false)` when their
    /// intervals overlap, `None` when neither has one.
    pub distinguishable: Option<bool>,
}

impl ComparisonRow {
    /// The "fastest" cell: the best series, or `not distinguishable (a, b)` when its interval
    /// overlaps the runner-up's.
    pub fn fastest_text(&self, names: &[String]) -> Option<String> {
        let best = self.fastest.clone()?;
        if self.distinguishable != Some(false) {
            return Some(best);
        }
        let runner_up = self
            .runner_up
            .and_then(|i| names.get(i))
            .map_or(String::new(), |n| format!(", {n}"));
        Some(format!("{NOT_DISTINGUISHABLE} ({best}{runner_up})"))
    }
}

/// How many rows of the table the page lists (its Markdown export has them all): a chart
/// along a measured or continuous x (200,000 distinct request rates) would otherwise make a
/// table of a million cells, and every later layout of the page takes seconds.
pub const MAX_LISTED_ROWS: usize = 200;

/// The table under a comparison chart.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonTable {
    /// Series names (columns), in legend order.
    pub series: Vec<String>,
    /// One row per panel and x value, sorted by panel, then x.
    pub rows: Vec<ComparisonRow>,
    /// Whether lower values are better for this metric.
    pub lower_is_better: bool,
}

/// Builds the per-x comparison of series: each value, the best, and by how much. Series are
/// only compared within their panel.
pub fn comparison_table(series: &[Series], metric: &MetricKey) -> ComparisonTable {
    let lower_is_better = metric.direction() != Direction::HigherIsBetter;
    let names = series_names(series);
    let panels = facets(series);
    // (panel position, x) -> values per series name.
    type Cells = (Vec<Option<f64>>, Vec<Option<Interval>>, Vec<String>);
    let mut xs: BTreeMap<(usize, DimValue), Cells> = BTreeMap::new();
    for s in series {
        let panel = panels.iter().position(|f| *f == s.facet).unwrap_or(0);
        let si = names.iter().position(|n| *n == s.name).unwrap_or(0);
        for p in &s.points {
            let cells = xs
                .entry((panel, p.x.clone()))
                .or_insert_with(|| (vec![None; names.len()], vec![None; names.len()], Vec::new()));
            cells.0[si] = Some(p.y);
            cells.1[si] = p.interval;
            cells
                .2
                .extend(p.notes().into_iter().map(|n| format!("{}: {n}", s.name)));
        }
    }
    let rows = xs
        .into_iter()
        .map(|((panel, x), (values, intervals, notes))| {
            let mut ranked: Vec<(usize, f64)> = values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.filter(|v| v.is_finite()).map(|v| (i, v)))
                .collect();
            crate::model::order::sort_by(&mut ranked, |a, b| {
                if lower_is_better {
                    a.1.total_cmp(&b.1)
                } else {
                    b.1.total_cmp(&a.1)
                }
            });
            let noisy = |i: usize, value: f64| Noisy {
                value,
                interval: intervals.get(i).copied().flatten(),
            };
            let (fastest, faster_by_pct, runner_up, apart) = match ranked.as_slice() {
                [(best_i, best), (runner_i, runner_up), ..] => {
                    let pct = if *runner_up == 0.0 {
                        None
                    } else if lower_is_better {
                        Some((runner_up - best) / runner_up * 100.0)
                    } else {
                        Some((best - runner_up) / runner_up * 100.0)
                    };
                    let apart =
                        distinguishable(&noisy(*best_i, *best), &noisy(*runner_i, *runner_up));
                    (Some(names[*best_i].clone()), pct, Some(*runner_i), apart)
                }
                _ => (None, None, None, None),
            };
            ComparisonRow {
                facet: panels.get(panel).cloned().flatten(),
                x,
                values,
                intervals,
                notes,
                fastest,
                faster_by_pct,
                runner_up,
                distinguishable: apart,
            }
        })
        .collect();
    ComparisonTable {
        series: names,
        rows,
        lower_is_better,
    }
}
