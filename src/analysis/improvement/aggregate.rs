//! The aggregates of an improvement table that its figures draw: the mean improvement per value
//! of one match-key dimension (bars) and per cell of two (a heatmap).

use std::collections::{BTreeMap, BTreeSet};

use super::ImprovementTable;
use crate::analysis::{dim_names, AnalysisError};
use crate::model::{DimKey, DimValue};

/// The mean improvement of the rows sharing one value of a dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementGroup {
    /// The value (`None`: rows without one).
    pub value: Option<DimValue>,
    /// Mean of the rows' improvements, in %.
    pub mean_improvement_pct: f64,
    /// Rows averaged.
    pub rows: usize,
}

fn key_position(table: &ImprovementTable, dim: &DimKey) -> Result<usize, AnalysisError> {
    table
        .matching
        .key_dims
        .iter()
        .position(|d| d == dim)
        .ok_or_else(|| AnalysisError::NotInKey {
            dim: dim.name(),
            key: dim_names(&table.matching.key_dims),
        })
}

/// Mean improvement per value of `by` (a match-key dimension), sorted by value; for bars.
pub fn improvement_by(
    table: &ImprovementTable,
    by: &DimKey,
) -> Result<Vec<ImprovementGroup>, AnalysisError> {
    let pos = key_position(table, by)?;
    let mut groups: BTreeMap<Option<DimValue>, (f64, usize)> = BTreeMap::new();
    for r in &table.rows {
        if let Some(p) = r.improvement_pct {
            let e = groups.entry(r.key.get(pos).cloned().flatten()).or_default();
            e.0 += p;
            e.1 += 1;
        }
    }
    Ok(groups
        .into_iter()
        .map(|(value, (sum, n))| ImprovementGroup {
            value,
            mean_improvement_pct: sum / n as f64,
            rows: n,
        })
        .collect())
}

/// Mean improvement per cell of two match-key dimensions; for a heatmap.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementHeatmap {
    /// The dimension along x (columns).
    pub x_dim: DimKey,
    /// The dimension along y (rows).
    pub y_dim: DimKey,
    /// The x values, sorted.
    pub x: Vec<Option<DimValue>>,
    /// The y values, sorted.
    pub y: Vec<Option<DimValue>>,
    /// `mean_improvement_pct[yi][xi]`; `None` where no row falls in the cell.
    pub mean_improvement_pct: Vec<Vec<Option<f64>>>,
    /// Rows averaged per cell, same shape.
    pub rows: Vec<Vec<usize>>,
}

/// Mean improvement per (x, y) cell of two match-key dimensions (e.g. batch size × model).
pub fn improvement_heatmap(
    table: &ImprovementTable,
    x_dim: &DimKey,
    y_dim: &DimKey,
) -> Result<ImprovementHeatmap, AnalysisError> {
    let (xp, yp) = (key_position(table, x_dim)?, key_position(table, y_dim)?);
    let mut cells: BTreeMap<(Option<DimValue>, Option<DimValue>), (f64, usize)> = BTreeMap::new();
    let mut xs = BTreeSet::new();
    let mut ys = BTreeSet::new();
    for r in &table.rows {
        if let Some(p) = r.improvement_pct {
            let (x, y) = (
                r.key.get(xp).cloned().flatten(),
                r.key.get(yp).cloned().flatten(),
            );
            xs.insert(x.clone());
            ys.insert(y.clone());
            let e = cells.entry((x, y)).or_default();
            e.0 += p;
            e.1 += 1;
        }
    }
    let x: Vec<Option<DimValue>> = xs.into_iter().collect();
    let y: Vec<Option<DimValue>> = ys.into_iter().collect();
    let lookup = |xv: &Option<DimValue>, yv: &Option<DimValue>| {
        cells.get(&(xv.clone(), yv.clone())).copied()
    };
    let mean_improvement_pct = y
        .iter()
        .map(|yv| {
            x.iter()
                .map(|xv| lookup(xv, yv).map(|(s, n)| s / n as f64))
                .collect()
        })
        .collect();
    let rows = y
        .iter()
        .map(|yv| {
            x.iter()
                .map(|xv| lookup(xv, yv).map_or(0, |c| c.1))
                .collect()
        })
        .collect();
    Ok(ImprovementHeatmap {
        x_dim: x_dim.clone(),
        y_dim: y_dim.clone(),
        x,
        y,
        mean_improvement_pct,
        rows,
    })
}
