//! The "fastest / faster by %" table under a comparison chart: per x value (and panel), each
//! series' value, the best series and its margin over the runner-up. Built from the same
//! [`Series`] as the chart, so the two always agree.

use std::collections::BTreeMap;

use super::series::{facets, series_names, Series};
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
    /// The best series at x (lowest for latencies, highest otherwise), when two or more have
    /// a value.
    pub fastest: Option<String>,
    /// How much better the best is than the runner-up, in %: for lower-is-better metrics
    /// (runner-up − best) / runner-up × 100, otherwise (best − runner-up) / runner-up × 100.
    pub faster_by_pct: Option<f64>,
}

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
    let mut xs: BTreeMap<(usize, DimValue), Vec<Option<f64>>> = BTreeMap::new();
    for s in series {
        let panel = panels.iter().position(|f| *f == s.facet).unwrap_or(0);
        let si = names.iter().position(|n| *n == s.name).unwrap_or(0);
        for p in &s.points {
            xs.entry((panel, p.x.clone()))
                .or_insert_with(|| vec![None; names.len()])[si] = Some(p.y);
        }
    }
    let rows = xs
        .into_iter()
        .map(|((panel, x), values)| {
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
            let (fastest, faster_by_pct) = match ranked.as_slice() {
                [(best_i, best), (_, runner_up), ..] => {
                    let pct = if *runner_up == 0.0 {
                        None
                    } else if lower_is_better {
                        Some((runner_up - best) / runner_up * 100.0)
                    } else {
                        Some((best - runner_up) / runner_up * 100.0)
                    };
                    (Some(names[*best_i].clone()), pct)
                }
                _ => (None, None),
            };
            ComparisonRow {
                facet: panels.get(panel).cloned().flatten(),
                x,
                values,
                fastest,
                faster_by_pct,
            }
        })
        .collect();
    ComparisonTable {
        series: names,
        rows,
        lower_is_better,
    }
}
