//! Grouping records into the series (and panels) a chart draws: what to draw
//! ([`ChartSpec`]), one point per (series, panel, x) with the records it stands for, series in
//! value order.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::style::{Theme, NO_VALUE};
use crate::analysis::points::{Combos, MergeFinder, PointMerge};
use crate::model::{ColumnRef, Dataset, DimKey, DimValue, MetricKey};

/// How the chart draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// One line per series over a numeric x axis (the scaling view).
    Lines,
    /// Grouped bars, one bar per series at each x value (the comparison views).
    Bars,
}

/// What to draw: which metric against which dimension, split into series by which dimensions.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSpec {
    /// Lines or grouped bars.
    pub kind: ChartKind,
    /// The dimension on the x axis (request rate, concurrency, batch size, input length, ...).
    pub x: DimKey,
    /// The metric on the y axis.
    pub metric: MetricKey,
    /// Dimensions whose combined values name a series (engine, gpu, ...). Empty: one series.
    pub series_by: Vec<DimKey>,
    /// One panel per value of this dimension (small multiples), when set.
    pub facet_by: Option<DimKey>,
    /// Log-2 x axis (lines only; ignored when x has non-numeric or infinite values).
    pub log2_x: bool,
    /// Logarithmic y axis (latencies spanning orders of magnitude).
    pub log_y: bool,
    /// Page theme.
    pub theme: Theme,
    /// Chart title; a default is derived when `None`.
    pub title: Option<String>,
}

impl ChartSpec {
    /// The dimensions every record of a point shares by construction: x, series and panel.
    pub fn drawn(&self) -> Vec<DimKey> {
        let mut d = vec![self.x.clone()];
        d.extend(self.series_by.iter().cloned());
        d.extend(self.facet_by.iter().cloned());
        d
    }
}

/// One point of a series: the mean of every record sharing the series, panel and x value.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesPoint {
    /// The x value.
    pub x: DimValue,
    /// The mean of the metric over `records`.
    pub y: f64,
    /// Indices (into the dataset) of the records averaged into this point.
    pub records: Vec<usize>,
    /// What the point stands for when its records differ in a dimension (see
    /// [`crate::analysis::points`]); empty for one configuration.
    pub merge: PointMerge,
}

/// A named series of points sorted by x, in one panel.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The series name: the values of the `series_by` dimensions joined by " · ".
    pub name: String,
    /// The panel's value of the `facet_by` dimension (`None`: no panels, or no value).
    pub facet: Option<DimValue>,
    /// Points sorted by x.
    pub points: Vec<SeriesPoint>,
}

/// A point being accumulated: the sum of the metric and the records summed.
type PointSum = (f64, Vec<usize>);

/// Dictionary codes sort like values, but "no value" (code 0) goes last.
fn code_rank(c: u32) -> u32 {
    c.wrapping_sub(1)
}

/// Groups the records at `indices` into series (and panels, with `spec.facet_by`). Records
/// lacking the x value or the metric are left out; several records at one (series, panel, x)
/// are averaged, and the point says which dimensions differ among them. Series come in value
/// order (numbers numerically, `inf` last), not name order. Works on the dataset's dictionary
/// codes, so its cost per record is a few integer operations.
pub fn build_series(ds: &Dataset, indices: &[usize], spec: &ChartSpec) -> Vec<Series> {
    let Some(x_col) = ds.column(&spec.x) else {
        return Vec::new();
    };
    // Each (facet, series, x) combination is a point: its sum and its records.
    let mut combos = point_combos(ds, spec, x_col);
    let mut points: Vec<PointSum> = Vec::new();
    let mut first_rows: Vec<usize> = Vec::new();
    // The metric's column in the index: no record is read.
    let Some(values) = ds.metric_values(&spec.metric) else {
        return Vec::new();
    };
    for &i in indices {
        let x = x_col.codes.get(i);
        if x == 0 {
            continue;
        }
        let Some(y) = values.get(i) else {
            continue;
        };
        if y.is_nan() {
            continue;
        }
        let p = combos.id(i) as usize;
        if p == points.len() {
            points.push((0.0, Vec::new()));
            first_rows.push(i);
        }
        let point = &mut points[p];
        point.0 += y;
        point.1.push(i);
    }
    let points = points
        .into_iter()
        .zip(first_rows)
        .map(|(sum, first)| (sum, first, None))
        .collect();
    series_of_points(ds, spec, x_col, points)
}

/// The chart's points as combinations of codes: (facet, series dimensions..., x), numbered by
/// [`Combos::id`] in order of first appearance.
fn point_combos<'a>(ds: &'a Dataset, spec: &ChartSpec, x_col: ColumnRef<'a>) -> Combos<'a> {
    let by_cols = spec.series_by.iter().map(|k| ds.column(k));
    let facet_col = spec.facet_by.as_ref().and_then(|k| ds.column(k));
    Combos::new(
        std::iter::once(facet_col)
            .chain(by_cols)
            .chain(std::iter::once(Some(x_col)))
            .map(|c| c.map(|c| (c.codes, c.dict.len()))),
    )
}

/// A point's sum and records, its first row (which holds its panel, series and x codes) and,
/// where what it merges may be kept, the place to keep it.
type Gathered<'p> = (PointSum, usize, Option<&'p OnceLock<PointMerge>>);

/// The series of `points` in value order, each point with what it merges.
fn series_of_points(
    ds: &Dataset,
    spec: &ChartSpec,
    x_col: ColumnRef<'_>,
    points: Vec<Gathered<'_>>,
) -> Vec<Series> {
    let by_cols: Vec<Option<ColumnRef<'_>>> = spec.series_by.iter().map(|k| ds.column(k)).collect();
    let facet_col = spec.facet_by.as_ref().and_then(|k| ds.column(k));
    // (facet code, series codes) -> x code -> (sum, records).
    let code = |c: Option<ColumnRef<'_>>, i: usize| c.map_or(0, |c| c.codes.get(i));
    type Kept<'p> = (PointSum, Option<&'p OnceLock<PointMerge>>);
    let mut groups: HashMap<(u32, Vec<u32>), BTreeMap<u32, Kept<'_>>> = HashMap::new();
    for (point, i, kept) in points {
        let key: Vec<u32> = by_cols.iter().map(|c| code(*c, i)).collect();
        groups
            .entry((code(facet_col, i), key))
            .or_default()
            .insert(x_col.codes.get(i), (point, kept));
    }
    let name_of = |codes: &[u32]| -> String {
        if by_cols.is_empty() {
            return "all".to_string();
        }
        codes
            .iter()
            .zip(&by_cols)
            .map(|(&c, col)| match (c, col) {
                (0, _) | (_, None) => NO_VALUE.to_string(),
                (c, Some(col)) => col.dict[c as usize - 1].to_string(),
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let drawn = spec.drawn();
    let finder = MergeFinder::new(ds, &drawn);
    let mut keyed: Vec<((u32, Vec<u32>), Series)> = groups
        .into_iter()
        .map(|((facet, codes), points)| {
            let series = Series {
                name: name_of(&codes),
                facet: facet_col
                    .and_then(|c| c.dict.get((facet as usize).wrapping_sub(1)).cloned()),
                points: points
                    .into_iter()
                    .map(|(x, ((sum, recs), kept))| SeriesPoint {
                        x: x_col.dict[x as usize - 1].clone(),
                        y: sum / recs.len() as f64,
                        merge: match kept {
                            Some(k) => k.get_or_init(|| finder.merge(&recs)).clone(),
                            None => finder.merge(&recs),
                        },
                        records: recs,
                    })
                    .collect(),
            };
            ((facet, codes), series)
        })
        .collect();
    keyed.sort_by(|((fa, a), _), ((fb, b), _)| {
        code_rank(*fa).cmp(&code_rank(*fb)).then_with(|| {
            a.iter()
                .map(|&c| code_rank(c))
                .cmp(b.iter().map(|&c| code_rank(c)))
        })
    });
    keyed.into_iter().map(|(_, s)| s).collect()
}

/// Which point of a chart each row of a dataset falls on, worked out once for a dataset and a
/// chart ([`PointIndex::new`]) so that each filter then only sums its rows
/// ([`build_series_indexed`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PointIndex {
    /// Per row: its point, numbered in order of first appearance; [`PointIndex::NOT_DRAWN`]
    /// for a row without the x value or the metric, or whose value is NaN.
    point: Vec<u32>,
    /// Per point: its first row (which holds its panel, series and x codes).
    first_row: Vec<usize>,
    /// Per point: how many rows fall on it.
    rows: Vec<usize>,
    /// Per point: what it merges when all its rows are drawn (as an unfiltered chart, or one
    /// filtered on what it draws, draws them), worked out the first time.
    merges: Vec<OnceLock<PointMerge>>,
}

impl PointIndex {
    /// A row on no point.
    const NOT_DRAWN: u32 = u32::MAX;

    /// The points of every row of `ds` under `spec` (one pass over the rows).
    pub fn new(ds: &Dataset, spec: &ChartSpec) -> PointIndex {
        let mut index = PointIndex {
            point: vec![Self::NOT_DRAWN; ds.len()],
            first_row: Vec::new(),
            rows: Vec::new(),
            merges: Vec::new(),
        };
        let (Some(x_col), Some(values)) = (ds.column(&spec.x), ds.metric_values(&spec.metric))
        else {
            return index;
        };
        let mut combos = point_combos(ds, spec, x_col);
        for (i, slot) in index.point.iter_mut().enumerate() {
            if x_col.codes.get(i) == 0 {
                continue;
            }
            if values.get(i).is_none_or(f64::is_nan) {
                continue;
            }
            let p = combos.id(i);
            if p as usize == index.first_row.len() {
                index.first_row.push(i);
                index.rows.push(0);
            }
            if let Some(n) = index.rows.get_mut(p as usize) {
                *n += 1;
            }
            *slot = p;
        }
        index.merges = index.rows.iter().map(|_| OnceLock::new()).collect();
        index
    }

    /// Whether this index is for `ds` (its row count).
    pub fn fits(&self, ds: &Dataset) -> bool {
        self.point.len() == ds.len()
    }
}

/// [`build_series`] with the rows' points looked up in `points` ([`PointIndex::new`] of the same
/// dataset and spec) rather than worked out: the same series, the same sums in the same order.
pub fn build_series_indexed(
    ds: &Dataset,
    indices: &[usize],
    spec: &ChartSpec,
    points: &PointIndex,
) -> Vec<Series> {
    let (Some(x_col), Some(values)) = (ds.column(&spec.x), ds.metric_values(&spec.metric)) else {
        return Vec::new();
    };
    let column = values.column();
    let mut sums: Vec<PointSum> = vec![(0.0, Vec::new()); points.first_row.len()];
    for &i in indices {
        let p = points
            .point
            .get(i)
            .copied()
            .unwrap_or(PointIndex::NOT_DRAWN) as usize;
        if let (Some(sum), Some(&y)) = (sums.get_mut(p), column.get(i)) {
            if sum.1.is_empty() {
                // Room for every row of the point at once.
                sum.1
                    .reserve_exact(points.rows.get(p).copied().unwrap_or(0));
            }
            sum.0 += y;
            sum.1.push(i);
        }
    }
    let drawn = sums
        .into_iter()
        .enumerate()
        .filter(|(_, sum)| !sum.1.is_empty())
        .map(|(p, sum)| {
            // A point with all its rows merges what it merges unfiltered: worked out once.
            let merge = points
                .merges
                .get(p)
                .filter(|_| points.rows.get(p) == Some(&sum.1.len()));
            (sum, points.first_row.get(p).copied().unwrap_or(0), merge)
        })
        .collect();
    series_of_points(ds, spec, x_col, drawn)
}

/// Series names in legend order (first appearance over the panels), each once.
pub fn series_names(series: &[Series]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in series {
        if !names.contains(&s.name) {
            names.push(s.name.clone());
        }
    }
    names
}

/// The panels of `series` in value order (`[None]` when there are no panels).
pub fn facets(series: &[Series]) -> Vec<Option<DimValue>> {
    let mut out: Vec<Option<DimValue>> = Vec::new();
    for s in series {
        if !out.contains(&s.facet) {
            out.push(s.facet.clone());
        }
    }
    out
}
