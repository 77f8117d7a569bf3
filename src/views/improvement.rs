//! The improvement view's logic, shared and pure so it is tested natively: the user's choices
//! ([`ImproveChoice`], with their link form) and what the view shows under them
//! ([`improvement_contents`]): the menus, the sides, metric and grouping in force, and the
//! comparison from [`crate::analysis::improvement`].

use std::collections::BTreeSet;

use crate::analysis::defaults::{
    default_compare_dim, default_compare_metric, default_improvement_groups, default_sides,
};
use crate::analysis::improvement::{
    self as analysis, ImprovementSort, ImprovementSpec, ImprovementTable,
};
use crate::analysis::quality::{improvement_notes, TableNotes};
use crate::model::{Dataset, DimKey, DimValue, MetricKey};
use crate::share::ViewState;

/// The user's improvement choices; `None` follows the data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImproveChoice {
    /// The compared dimension.
    pub dim: Option<DimKey>,
    /// Baseline value (as shown).
    pub baseline: Option<String>,
    /// Candidate value (as shown).
    pub candidate: Option<String>,
    /// The metric.
    pub metric: Option<MetricKey>,
    /// Dimension the bars group by.
    pub bars_by: Option<DimKey>,
    /// Heatmap axes (x, y).
    pub heat: Option<(DimKey, DimKey)>,
    /// Dimensions left out of the match key.
    pub ignore: BTreeSet<DimKey>,
    /// Table sort: the column and whether descending.
    pub sort: Option<(ImprovementSort, bool)>,
}

impl ImproveChoice {
    /// Adds these choices to a link (the metric travels as the link's `metric`).
    pub fn write_link(&self, link: &mut ViewState) {
        link.compare = self.dim.as_ref().map(DimKey::name);
        link.baseline = self.baseline.clone();
        link.candidate = self.candidate.clone();
        link.ignore = self.ignore.iter().map(DimKey::name).collect();
        link.metric = self.metric.as_ref().map(MetricKey::name);
    }

    /// Choices from a link.
    pub fn from_link(link: &ViewState) -> ImproveChoice {
        ImproveChoice {
            dim: link.compare.as_deref().and_then(DimKey::from_name),
            baseline: link.baseline.clone(),
            candidate: link.candidate.clone(),
            metric: link.metric.as_deref().and_then(MetricKey::from_name),
            ignore: crate::model::order::set_of(
                link.ignore.iter().filter_map(|n| DimKey::from_name(n)),
            ),
            ..ImproveChoice::default()
        }
    }

    /// The sort after a click on `column`'s header: the same column flips direction; another
    /// starts descending for the improvement (largest first), ascending otherwise.
    pub fn next_sort(&self, column: ImprovementSort) -> Option<(ImprovementSort, bool)> {
        match self.sort {
            Some((s, descending)) if s == column => Some((s, !descending)),
            _ => Some((column, column == ImprovementSort::Improvement)),
        }
    }
}

/// Everything the improvement view shows: the menus, the sides and metric in force, the
/// comparison (or why there is none), its notes and how its charts group.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementContents {
    /// Dimensions with two values or more, each with its values as shown (the menus).
    pub dims: Vec<(DimKey, Vec<String>)>,
    /// Metrics present in the filtered records.
    pub metrics: Vec<MetricKey>,
    /// The compared dimension in force.
    pub dim: DimKey,
    /// The baseline value in force, as shown.
    pub baseline: String,
    /// The candidate value in force, as shown.
    pub candidate: String,
    /// The metric in force.
    pub metric: MetricKey,
    /// The comparison, or why there is none.
    pub outcome: Result<ImprovementTable, String>,
    /// Data-quality notes (failed requests, inferred values, length mismatch): those of every
    /// row once, the rest per row.
    pub notes: TableNotes,
    /// What the bars group by.
    pub bars_by: Option<DimKey>,
    /// The heatmap's axes (x, y).
    pub heat: Option<(DimKey, DimKey)>,
}

/// The value of `key` shown as `shown`.
fn value_of(ds: &Dataset, key: &DimKey, shown: &str) -> Option<DimValue> {
    ds.column(key)?
        .dict
        .iter()
        .find(|v| v.to_string() == shown)
        .cloned()
}

/// What the improvement view shows for the records at `indices` under the user's `choice`:
/// each choice that still fits the data is kept, the rest follow the data
/// ([`crate::analysis::defaults`]). `None` when no dimension has two values or no metric fits.
pub fn improvement_contents(
    ds: &Dataset,
    indices: &[usize],
    c: &ImproveChoice,
) -> Option<ImprovementContents> {
    let dims: Vec<(DimKey, Vec<String>)> = ds
        .dim_keys()
        .filter_map(|k| {
            let col = ds.column(k)?;
            (col.dict.len() >= 2)
                .then(|| (k.clone(), col.dict.iter().map(|v| v.to_string()).collect()))
        })
        .collect();
    let dim = c
        .dim
        .clone()
        .filter(|d| dims.iter().any(|(k, _)| k == d))
        .or_else(|| default_compare_dim(ds))
        .or_else(|| dims.first().map(|(k, _)| k.clone()))?;
    let values = &dims.iter().find(|(k, _)| *k == dim)?.1;
    let metrics = ds.metrics_present(indices);
    let metric = c
        .metric
        .clone()
        .filter(|m| metrics.contains(m))
        .or_else(|| default_compare_metric(&metrics))?;
    // Sides the user has not chosen: the first and last value, the candidate being the one that
    // is better in more matched pairs than it is worse; with nothing matched, first and last.
    let (default_base, default_cand) = default_sides(ds, indices, &dim, &metric)
        .map(|(b, c)| (b.to_string(), c.to_string()))
        .unwrap_or_else(|| (values[0].clone(), values[values.len() - 1].clone()));
    let pick = |chosen: &Option<String>, fallback: &String| {
        chosen
            .clone()
            .filter(|v| values.contains(v))
            .unwrap_or_else(|| fallback.clone())
    };
    let baseline = pick(&c.baseline, &default_base);
    let candidate = pick(&c.candidate, &default_cand);
    let mut spec = ImprovementSpec::new(
        dim.clone(),
        value_of(ds, &dim, &baseline)?,
        value_of(ds, &dim, &candidate)?,
        metric.clone(),
    );
    for d in &c.ignore {
        spec = spec.ignoring(d.clone());
    }
    let outcome = analysis::improvement(ds, indices, &spec).map(|mut t| {
        if let Some((by, descending)) = c.sort {
            t.sort(by, descending);
        }
        t
    });
    let (bars_by, heat) = match &outcome {
        Ok(t) => {
            let (bars_default, heat_default) = default_improvement_groups(t);
            let bars_by = c
                .bars_by
                .clone()
                .filter(|k| t.matching.key_dims.contains(k))
                .or(bars_default);
            let heat = c
                .heat
                .clone()
                .filter(|(x, y)| t.matching.key_dims.contains(x) && t.matching.key_dims.contains(y))
                .or(heat_default);
            (bars_by, heat)
        }
        Err(_) => (None, None),
    };
    let notes = match &outcome {
        Ok(t) => improvement_notes(ds, &t.rows),
        Err(_) => TableNotes::default(),
    };
    Some(ImprovementContents {
        notes,
        dims,
        metrics,
        dim,
        baseline,
        candidate,
        metric,
        outcome: outcome.map_err(|e| e.to_string()),
        bars_by,
        heat,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Record;

    /// Two models on two GPUs; A100 has the higher output throughput on both.
    fn gpus() -> Dataset {
        let rec = |model: &str, gpu: &str, tok_s: f64| {
            let mut r = Record {
                model: Some(model.into()),
                gpu: Some(gpu.into()),
                ..Record::default()
            };
            r.set_metric(MetricKey::OutputThroughput, tok_s);
            r
        };
        Dataset::new(vec![
            rec("m1", "Tesla", 100.0),
            rec("m1", "A100", 150.0),
            rec("m2", "Tesla", 200.0),
            rec("m2", "A100", 500.0),
        ])
    }

    #[test]
    fn unchosen_sides_follow_the_data_and_unfit_choices_are_dropped() {
        let ds = gpus();
        let all = [0, 1, 2, 3];
        let shown = improvement_contents(&ds, &all, &ImproveChoice::default()).unwrap();
        assert_eq!(shown.dim, DimKey::Known(crate::model::Dim::Gpu));
        // The better GPU is the candidate.
        assert_eq!(
            (shown.baseline.as_str(), shown.candidate.as_str()),
            ("Tesla", "A100")
        );
        assert_eq!(shown.metric, MetricKey::OutputThroughput);
        let table = shown.outcome.unwrap();
        let pcts: Vec<f64> = table
            .rows
            .iter()
            .filter_map(|r| r.improvement_pct)
            .collect();
        assert_eq!(pcts, [50.0, 150.0]);
        // A value the dimension does not have, and a metric no record has, follow the data.
        let odd = ImproveChoice {
            baseline: Some("H100".into()),
            candidate: Some("Tesla".into()),
            metric: Some(MetricKey::RequestThroughput),
            ..ImproveChoice::default()
        };
        let shown = improvement_contents(&ds, &all, &odd).unwrap();
        assert_eq!(
            (shown.baseline.as_str(), shown.candidate.as_str()),
            ("Tesla", "Tesla")
        );
        assert_eq!(shown.metric, MetricKey::OutputThroughput);
    }

    #[test]
    fn sort_clicks_and_the_sorted_table() {
        let ds = gpus();
        let mut choice = ImproveChoice::default();
        choice.sort = choice.next_sort(ImprovementSort::Improvement);
        assert_eq!(choice.sort, Some((ImprovementSort::Improvement, true)));
        let table = improvement_contents(&ds, &[0, 1, 2, 3], &choice)
            .unwrap()
            .outcome
            .unwrap();
        let pcts: Vec<f64> = table
            .rows
            .iter()
            .filter_map(|r| r.improvement_pct)
            .collect();
        assert_eq!(pcts, [150.0, 50.0]);
        choice.sort = choice.next_sort(ImprovementSort::Improvement);
        assert_eq!(choice.sort, Some((ImprovementSort::Improvement, false)));
        assert_eq!(
            choice.next_sort(ImprovementSort::Key(0)),
            Some((ImprovementSort::Key(0), false))
        );
    }

    #[test]
    fn choices_survive_a_link() {
        let choice = ImproveChoice {
            dim: Some(DimKey::Known(crate::model::Dim::Gpu)),
            baseline: Some("Tesla".into()),
            candidate: Some("A100".into()),
            metric: Some(MetricKey::OutputThroughput),
            ignore: [DimKey::Known(crate::model::Dim::Model)]
                .into_iter()
                .collect(),
            ..ImproveChoice::default()
        };
        let mut link = ViewState::default();
        choice.write_link(&mut link);
        let back = ViewState::from_query(&link.to_query());
        assert_eq!(ImproveChoice::from_link(&back), choice);
    }
}
