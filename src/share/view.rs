//! The explorer's view state in a page address: which view, chart choices, filters,
//! comparison and data addresses, written to and read from the query string, so a shared link
//! reopens the same view.

use std::collections::{BTreeMap, BTreeSet};

use super::address::{build_query, parse_query};
use crate::model::canonical::parse_number_text;
use crate::model::{DimKey, DimKind, DimValue, Filter};

/// What a shared link carries: the view, chart choices, filters and the data addresses.
///
/// In the page address: `view=latency&x=request_rate&metric=mean_ttft_ms&series=engine&log2=1`
/// `&f.engine=vllm&f.engine=sgl&f.gpu=(none)&data=https://...` (`data` and `f.*` repeat).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewState {
    /// Active view id (`latency`, `throughput`, `scaling`, ...).
    pub view: Option<String>,
    /// X dimension name.
    pub x: Option<String>,
    /// Metric name of the active view.
    pub metric: Option<String>,
    /// Series dimension names; `Some(empty)` means one series.
    pub series: Option<Vec<String>>,
    /// Log-2 x axis.
    pub log2: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Improvement view: the compared dimension's name.
    pub compare: Option<String>,
    /// Improvement view: the baseline value.
    pub baseline: Option<String>,
    /// Improvement view: the candidate value.
    pub candidate: Option<String>,
    /// Improvement view: dimensions left out of the match key.
    pub ignore: Vec<String>,
    /// View-specific settings (trade-off axes, SLO limits, ...), as `v.<name>=<value>`.
    pub params: BTreeMap<String, String>,
    /// Selected values per dimension name; `(none)` selects records without a value.
    pub filters: BTreeMap<String, Vec<String>>,
    /// Data file addresses to fetch.
    pub data: Vec<String>,
    /// Bundled samples to load, by file name (`sample=001_b815cef7710eda19.txt`).
    pub samples: Vec<String>,
    /// Local files the view was made from whose data did not fit in the link: the receiver
    /// is asked to drop them (`need=run.json`).
    pub needs: Vec<String>,
}

pub use crate::model::NO_VALUE;

impl ViewState {
    /// The query string (without `?`) for this state.
    pub fn to_query(&self) -> String {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut push = |k: &str, v: &str| pairs.push((k.to_string(), v.to_string()));
        if let Some(v) = &self.view {
            push("view", v);
        }
        if let Some(v) = &self.x {
            push("x", v);
        }
        if let Some(v) = &self.metric {
            push("metric", v);
        }
        if let Some(series) = &self.series {
            push("series", &series.join(","));
        }
        if self.log2 {
            push("log2", "1");
        }
        if self.log_y {
            push("logy", "1");
        }
        for (k, v) in [
            ("cmp", &self.compare),
            ("base", &self.baseline),
            ("cand", &self.candidate),
        ] {
            if let Some(v) = v {
                push(k, v);
            }
        }
        for d in &self.ignore {
            push("ignore", d);
        }
        for (k, v) in &self.params {
            push(&format!("v.{k}"), v);
        }
        for (dim, values) in &self.filters {
            for v in values {
                push(&format!("f.{dim}"), v);
            }
        }
        for d in &self.data {
            push("data", d);
        }
        for d in &self.samples {
            push("sample", d);
        }
        for d in &self.needs {
            push("need", d);
        }
        build_query(&pairs)
    }

    /// Reads a query string; unknown keys are ignored.
    pub fn from_query(query: &str) -> ViewState {
        let mut state = ViewState::default();
        for (k, v) in parse_query(query) {
            match k.as_str() {
                "view" => state.view = Some(v),
                "x" => state.x = Some(v),
                "metric" => state.metric = Some(v),
                "series" => {
                    state.series = Some(
                        v.split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect(),
                    )
                }
                "log2" => state.log2 = v == "1" || v == "true",
                "logy" => state.log_y = v == "1" || v == "true",
                "data" if !v.trim().is_empty() => state.data.push(v),
                "sample" if !v.trim().is_empty() => state.samples.push(v),
                "need" if !v.trim().is_empty() => state.needs.push(v),
                "cmp" => state.compare = Some(v),
                "base" => state.baseline = Some(v),
                "cand" => state.candidate = Some(v),
                "ignore" => state.ignore.push(v),
                _ => {
                    if let Some(name) = k.strip_prefix("v.") {
                        state.params.insert(name.to_string(), v);
                    } else if let Some(dim) = k.strip_prefix("f.") {
                        state.filters.entry(dim.to_string()).or_default().push(v);
                    }
                }
            }
        }
        state
    }

    /// The filter these selections describe. Names that are not dimensions are skipped.
    pub fn filter(&self) -> Filter {
        let mut filter = Filter::default();
        for (name, values) in &self.filters {
            let Some(key) = DimKey::from_name(name) else {
                continue;
            };
            let numeric = matches!(&key, DimKey::Known(d) if d.kind() != DimKind::Text);
            let set: BTreeSet<Option<DimValue>> =
                crate::model::order::set_of(values.iter().map(|v| {
                    if v == NO_VALUE {
                        None
                    } else if numeric {
                        Some(
                            parse_number_text(v)
                                .map_or_else(|| DimValue::from(v.as_str()), DimValue::Num),
                        )
                    } else {
                        Some(DimValue::from(v.as_str()))
                    }
                }));
            filter.selected.insert(key, set);
        }
        filter
    }

    /// Records a filter's selections.
    pub fn set_filter(&mut self, filter: &Filter) {
        self.filters = crate::model::order::map_of(
            filter
                .selected
                .iter()
                .filter(|(_, set)| !set.is_empty())
                .map(|(k, set)| {
                    (
                        k.name(),
                        set.iter()
                            .map(|v| v.as_ref().map_or(NO_VALUE.to_string(), ToString::to_string))
                            .collect(),
                    )
                }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_state_round_trips_through_a_query() {
        let filter = Filter::default()
            .select(crate::model::Dim::Engine, Some("vllm".into()))
            .select(crate::model::Dim::Engine, Some("s g&l".into()))
            .select(crate::model::Dim::RequestRate, Some(f64::INFINITY.into()))
            .select(crate::model::Dim::RequestRate, Some(10.0.into()))
            .select(crate::model::Dim::Gpu, None);
        let mut state = ViewState {
            view: Some("throughput".into()),
            x: Some("max_concurrency".into()),
            metric: Some("p99.9_ttft_ms".into()),
            series: Some(vec!["engine".into(), "gpu".into()]),
            log2: true,
            log_y: true,
            compare: Some("gpu".into()),
            baseline: Some("Tesla".into()),
            candidate: Some("A100 80G".into()),
            ignore: vec!["engine_version".into(), "tag.status".into()],
            params: [(
                "slo".to_string(),
                "p99_ttft_ms<=500, mean_tpot_ms<=50".to_string(),
            )]
            .into(),
            data: vec!["https://h/x.json?a=1&b=2".into(), "https://h/y.csv".into()],
            ..ViewState::default()
        };
        state.set_filter(&filter);
        let q = state.to_query();
        let back = ViewState::from_query(&format!("?{q}"));
        assert_eq!(back, state);
        assert_eq!(back.filter(), filter);
        assert_eq!(ViewState::from_query("series=").series, Some(vec![]));
    }
}
