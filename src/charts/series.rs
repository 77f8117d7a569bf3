//! Grouping records into the series (and panels) a chart draws: what to draw
//! ([`ChartSpec`]), one point per (series, panel, x) with the records it stands for, series in
//! value order.
//!
//! Every way of building the points (from the rows, [`build_series_with_records`]; through a
//! [`PointIndex`], [`build_series_indexed`] and [`build_series_selected`]) gathers a point's
//! values in one accumulator, [`Moments`] (count, sum, squared deviations), so each point
//! also knows its noise: a point of repeats (records of one configuration differing only in
//! file, date, label or a repeat tag) carries the 95 % confidence interval of its mean, a
//! single record whose file gives its standard deviation carries mean ± that deviation, and
//! a point averaging different configurations carries none ([`crate::model::spread`] says why).

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::style::{Theme, NO_VALUE};
use crate::model::flags::{FlagCounts, RowFlags};
use crate::model::points::{Combos, MergeFinder, PointMerge};
use crate::model::spread::{is_repeat_dim, point_interval, spread_companions, Interval, Moments};
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
    /// The mean of the metric over the point's records (`merge.records` of them).
    pub y: f64,
    /// Index (into the dataset) of the first record averaged into this point, in the order
    /// the records were given.
    pub first_record: usize,
    /// How many records the point averages, and what it stands for when they differ in a
    /// dimension (see [`crate::model::points`]); no dimensions for one configuration.
    pub merge: PointMerge,
    /// How far the mean may be from a rerun's: the 95 % interval of repeats, or the file's
    /// standard deviation of a single record ([`crate::model::spread`]); `None` for a single
    /// record without one or a mean of different configurations.
    pub interval: Option<Interval>,
    /// How many of its records are flagged ([`crate::model::flags`]: failed requests, fewer
    /// prompts completed than asked); its hover text and the exported table say so.
    pub flags: FlagCounts,
}

impl SeriesPoint {
    /// What a reader should know about the records behind the point: its flagged records, and
    /// that it is the mean of several records of one configuration (a duplicated configuration).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.flags.texts(self.merge.records);
        if self.merge.records > 1 && !self.merge.is_merged() {
            notes.push(format!(
                "mean of {} records of one configuration",
                self.merge.records
            ));
        }
        notes
    }
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

/// A point gathered from the rows: the metric's moments over its records (how many, their
/// sum and spread), its first row (which holds its panel, series and x codes) and how to find
/// what it merges.
struct Gathered<'p> {
    moments: Moments,
    flags: FlagCounts,
    first: usize,
    merge: MergeOf<'p>,
}

/// A series with, per point, the rows it was gathered from ([`MergeOf::rows`]).
type SeriesRecords = (Series, Vec<Vec<usize>>);

/// Rows that stand for every configuration of a point (all its rows, or one row of each
/// configuration; see [`MergeFinder::merge_of`]), with, where what the point merges may be
/// kept, the place to keep it.
struct MergeOf<'p> {
    rows: Vec<usize>,
    kept: Option<&'p OnceLock<PointMerge>>,
}

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
    build_series_with_records(ds, indices, spec)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
}

/// [`build_series`] with, per series, each point's records (dataset indices, in the order
/// given), for what reads the records behind the points (a table's data-quality notes).
pub fn build_series_with_records(
    ds: &Dataset,
    indices: &[usize],
    spec: &ChartSpec,
) -> Vec<SeriesRecords> {
    let Some(x_col) = ds.column(&spec.x) else {
        return Vec::new();
    };
    // Each (facet, series, x) combination is a point: its sum and its records.
    let mut combos = point_combos(ds, spec, x_col);
    let mut points: Vec<(Moments, FlagCounts, Vec<usize>)> = Vec::new();
    let flagger = RowFlags::new(ds);
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
            points.push((Moments::default(), FlagCounts::default(), Vec::new()));
        }
        let point = &mut points[p];
        point.0.add(y);
        if let Some(f) = &flagger {
            f.count(i, &mut point.1);
        }
        point.2.push(i);
    }
    let points = points
        .into_iter()
        .map(|(moments, flags, rows)| Gathered {
            moments,
            flags,
            first: rows.first().copied().unwrap_or(0),
            merge: MergeOf { rows, kept: None },
        })
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

/// The series of `points` in value order, each point with what it merges.
fn series_of_points(
    ds: &Dataset,
    spec: &ChartSpec,
    x_col: ColumnRef<'_>,
    points: Vec<Gathered<'_>>,
) -> Vec<SeriesRecords> {
    let by_cols: Vec<Option<ColumnRef<'_>>> = spec.series_by.iter().map(|k| ds.column(k)).collect();
    let facet_col = spec.facet_by.as_ref().and_then(|k| ds.column(k));
    // (facet code, series codes) -> x code -> (sum, records).
    let code = |c: Option<ColumnRef<'_>>, i: usize| c.map_or(0, |c| c.codes.get(i));
    let mut groups: HashMap<(u32, Vec<u32>), BTreeMap<u32, Gathered<'_>>> = HashMap::new();
    for point in points {
        let i = point.first;
        let key: Vec<u32> = by_cols.iter().map(|c| code(*c, i)).collect();
        groups
            .entry((code(facet_col, i), key))
            .or_default()
            .insert(x_col.codes.get(i), point);
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
    // The file's standard deviation of the metric, where it gives one.
    let file_sd = spread_companions(&spec.metric)
        .into_iter()
        .find_map(|k| ds.metric_values(&k));
    let mut keyed: Vec<((u32, Vec<u32>), SeriesRecords)> = groups
        .into_iter()
        .map(|((facet, codes), points)| {
            let (points, rows): (Vec<SeriesPoint>, Vec<Vec<usize>>) = points
                .into_iter()
                .map(|(x, p)| {
                    let merge = || finder.merge_of(&p.merge.rows, p.moments.n);
                    let merge = match p.merge.kept {
                        Some(k) => k.get_or_init(merge).clone(),
                        None => merge(),
                    };
                    let y = p.moments.mean();
                    // Repeats only: a mean of configurations is not noise.
                    let interval = point_interval(
                        &p.moments,
                        merge.dims.iter().all(|d| is_repeat_dim(&d.dim)),
                        file_sd.as_ref().and_then(|v| v.get(p.first)),
                    );
                    let point = SeriesPoint {
                        x: x_col.dict[x as usize - 1].clone(),
                        y,
                        first_record: p.first,
                        merge,
                        interval,
                        flags: p.flags,
                    };
                    (point, p.merge.rows)
                })
                .unzip();
            let series = Series {
                name: name_of(&codes),
                facet: facet_col
                    .and_then(|c| c.dict.get((facet as usize).wrapping_sub(1)).cloned()),
                points,
            };
            ((facet, codes), (series, rows))
        })
        .collect();
    crate::model::order::sort_by(&mut keyed, |((fa, a), _), ((fb, b), _)| {
        code_rank(*fa).cmp(&code_rank(*fb)).then_with(|| {
            a.iter()
                .map(|&c| code_rank(c))
                .cmp(b.iter().map(|&c| code_rank(c)))
        })
    });
    keyed.into_iter().map(|(_, s)| s).collect()
}

/// Which point of a chart each configuration of a dataset ([`Dataset::configurations`]: rows
/// with the same value in every dimension and the same metrics) falls on, worked out once
/// for a dataset and a chart ([`PointIndex::new`]), so that each filter then only sums its
/// rows ([`build_series_indexed`]). Rows of one configuration share their x, series and panel
/// values, hence their point: the index is a few numbers per configuration, not one per row.
#[derive(Clone, Debug, PartialEq)]
pub struct PointIndex {
    /// The rows of the dataset it was made for.
    rows_of_dataset: usize,
    /// Per configuration: its point, numbered in order of first appearance, or
    /// [`PointIndex::NOT_DRAWN`] for one without the x value or the metric.
    point: Vec<u32>,
    /// Per point: a row of it (which holds its panel, series and x codes).
    first_row: Vec<usize>,
    /// Per point: the moments of all its drawn values, added in row order (as
    /// [`build_series_indexed`] adds them), and its first drawn row.
    whole: Vec<(Moments, usize)>,
    /// Per point: its flagged rows, counted with `whole`.
    flags: Vec<FlagCounts>,
    /// Per configuration: whether a row of it is drawn (on its point, with a value).
    drawn: Vec<bool>,
    /// Per point: how many configurations have a row drawn on it.
    drawn_configurations: Vec<usize>,
    /// Per point: what it merges when all its rows are drawn (as an unfiltered chart, or one
    /// filtered on what it draws, draws them), worked out the first time.
    merges: Vec<OnceLock<PointMerge>>,
}

impl PointIndex {
    /// A configuration on no point.
    const NOT_DRAWN: u32 = u32::MAX;

    /// The points of every configuration of `ds` under `spec` (one pass over the
    /// configurations, one over the rows to count what each point draws).
    pub fn new(ds: &Dataset, spec: &ChartSpec) -> PointIndex {
        let configurations = ds.configurations();
        let mut index = PointIndex {
            rows_of_dataset: ds.len(),
            point: vec![Self::NOT_DRAWN; configurations.len()],
            first_row: Vec::new(),
            whole: Vec::new(),
            flags: Vec::new(),
            drawn: vec![false; configurations.len()],
            drawn_configurations: Vec::new(),
            merges: Vec::new(),
        };
        let (Some(x_col), Some(values)) = (ds.column(&spec.x), ds.metric_values(&spec.metric))
        else {
            return index;
        };
        let mut combos = point_combos(ds, spec, x_col);
        for (slot, &row) in index.point.iter_mut().zip(configurations.iter()) {
            // The metric is in a row's metric set, which its configuration includes.
            if x_col.codes.get(row) == 0 || values.get(row).is_none() {
                continue;
            }
            let p = combos.id(row);
            if p as usize == index.first_row.len() {
                index.first_row.push(row);
            }
            *slot = p;
        }
        index.whole = vec![(Moments::default(), 0); index.first_row.len()];
        index.flags = vec![FlagCounts::default(); index.first_row.len()];
        let flagger = RowFlags::new(ds);
        let column = values.column();
        ds.each_configuration(None, |row, c| {
            let p = index
                .point
                .get(c as usize)
                .copied()
                .unwrap_or(Self::NOT_DRAWN);
            let (Some(whole), Some(&y)) = (index.whole.get_mut(p as usize), column.get(row)) else {
                return;
            };
            if y.is_nan() {
                return;
            }
            if whole.0.n == 0 {
                whole.1 = row;
            }
            whole.0.add(y);
            if let (Some(f), Some(counts)) = (&flagger, index.flags.get_mut(p as usize)) {
                f.count(row, counts);
            }
            if let Some(d) = index.drawn.get_mut(c as usize) {
                *d = true;
            }
        });
        index.drawn_configurations = vec![0; index.first_row.len()];
        for (&d, &p) in index.drawn.iter().zip(&index.point) {
            if let (true, Some(n)) = (d, index.drawn_configurations.get_mut(p as usize)) {
                *n += 1;
            }
        }
        index.merges = index.whole.iter().map(|_| OnceLock::new()).collect();
        index
    }

    /// Whether this index is for `ds` (its row and configuration counts).
    pub fn fits(&self, ds: &Dataset) -> bool {
        self.rows_of_dataset == ds.len() && self.point.len() == ds.configurations().len()
    }
}

/// [`build_series`] with the points looked up in `points` ([`PointIndex::new`] of the same
/// dataset and spec) rather than worked out: the same series, with each point's sum taken in
/// the same order. One pass over `indices` reading each row's configuration and value; what
/// a point merges is worked out from one row of each configuration it drew.
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
    // Per point: moments and first row.
    let mut sums: Vec<(Moments, usize, FlagCounts)> =
        vec![(Moments::default(), 0, FlagCounts::default()); points.first_row.len()];
    let flagger = RowFlags::new(ds);
    // Per configuration: whether a row of it was drawn.
    let mut drew = vec![false; points.point.len()];
    ds.each_configuration(Some(indices), |row, c| {
        let p = points
            .point
            .get(c as usize)
            .copied()
            .unwrap_or(PointIndex::NOT_DRAWN);
        let (Some(sum), Some(&y)) = (sums.get_mut(p as usize), column.get(row)) else {
            return;
        };
        if y.is_nan() {
            return;
        }
        if sum.0.n == 0 {
            sum.1 = row;
        }
        sum.0.add(y);
        if let Some(f) = &flagger {
            f.count(row, &mut sum.2);
        }
        if let Some(d) = drew.get_mut(c as usize) {
            *d = true;
        }
    });
    // One row of each configuration drawn, per point.
    let mut standing: Vec<Vec<usize>> = vec![Vec::new(); sums.len()];
    let configurations = ds.configurations();
    for ((&d, &p), &row) in drew.iter().zip(&points.point).zip(configurations.iter()) {
        if let (true, Some(rows)) = (d, standing.get_mut(p as usize)) {
            rows.push(row);
        }
    }
    let drawn = sums
        .into_iter()
        .zip(standing)
        .enumerate()
        .filter(|(_, ((m, _, _), _))| m.n > 0)
        .map(|(p, ((moments, first, flags), rows))| {
            // A point with all its rows merges what it merges unfiltered: worked out once.
            let kept = points
                .merges
                .get(p)
                .filter(|_| points.whole.get(p).map(|w| w.0.n) == Some(moments.n));
            Gathered {
                moments,
                flags,
                first,
                merge: MergeOf { rows, kept },
            }
        })
        .collect();
    series_of_points(ds, spec, x_col, drawn)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
}

/// [`build_series_indexed`] for the rows of whole configurations: `selected` says, per
/// configuration of `ds` ([`Dataset::configurations`]), whether all its rows are in `indices`
/// (as [`crate::model::FilterPass`] gives them), and `indices` are those rows. A point every
/// configuration of which is selected is taken whole from `points`, its sum added in row order
/// when the index was made, as [`build_series_indexed`] would add it now: a filter that leaves
/// each point whole or empty (one on any dimension the chart draws apart) sums no rows. A
/// filter that splits a point is summed over `indices` ([`build_series_indexed`]).
pub fn build_series_selected(
    ds: &Dataset,
    indices: &[usize],
    selected: &[bool],
    spec: &ChartSpec,
    points: &PointIndex,
) -> Vec<Series> {
    let (Some(x_col), Some(_)) = (ds.column(&spec.x), ds.metric_values(&spec.metric)) else {
        return Vec::new();
    };
    if selected.len() != points.drawn.len() {
        return build_series_indexed(ds, indices, spec, points);
    }
    // Per point: its selected configurations with a row drawn, and one row of each.
    let mut chosen = vec![0usize; points.first_row.len()];
    let mut standing: Vec<Vec<usize>> = vec![Vec::new(); points.first_row.len()];
    let configurations = ds.configurations();
    for (((&s, &d), &p), &row) in selected
        .iter()
        .zip(&points.drawn)
        .zip(&points.point)
        .zip(configurations.iter())
    {
        if let (true, true, Some(n), Some(rows)) = (
            s,
            d,
            chosen.get_mut(p as usize),
            standing.get_mut(p as usize),
        ) {
            *n += 1;
            rows.push(row);
        }
    }
    let split = chosen
        .iter()
        .zip(&points.drawn_configurations)
        .any(|(&n, &all)| n != 0 && n != all);
    if split {
        return build_series_indexed(ds, indices, spec, points);
    }
    let drawn = chosen
        .iter()
        .zip(standing)
        .zip(points.whole.iter().zip(&points.flags))
        .zip(&points.merges)
        .filter(|(((&n, _), _), _)| n > 0)
        .map(
            |(((_, rows), (&(moments, first), &flags)), kept)| Gathered {
                moments,
                flags,
                first,
                merge: MergeOf {
                    rows,
                    kept: Some(kept),
                },
            },
        )
        .collect();
    series_of_points(ds, spec, x_col, drawn)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
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
