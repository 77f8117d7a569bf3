//! Distributions of per-request values ([`RequestDetail`]: TTFT, inter-token gaps, E2E
//! latency, output and input lengths) per series: the values, their percentiles (numpy's
//! linear method, [`super::stats`]), an empirical CDF figure and a histogram figure with bin
//! edges shared by every series so bars compare.
//!
//! Failed requests (those with an `error`) are left out: their timings describe the failure,
//! not the service.

use std::collections::BTreeMap;

use crate::charts::plotly::common::{HoverInfo, Line, LineShape, Marker, Mode, Title};
use crate::charts::plotly::layout::{BarMode, Legend};
use crate::charts::plotly::{Bar, Plot, Scatter};

use super::export::{Cell, TextColumn, TextTable};
use super::series_name;
use super::stats::{
    ecdf_thinned, histogram_range, mean, percentile_sorted, sort_finite_in_place, HistogramBin,
};
use crate::charts::style::base_layout;
use crate::charts::style::{escape_html, format_value, series_title, Theme, PALETTE};
use crate::model::{Dataset, Dim, DimKey, RequestDetail};

/// A per-request quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestQuantity {
    /// Time to first token, ms.
    TtftMs,
    /// Every gap between consecutive output chunks after the first, ms.
    ItlMs,
    /// End-to-end latency, ms.
    E2elMs,
    /// Generated tokens.
    OutputLenTokens,
    /// Prompt tokens.
    InputLenTokens,
}

impl RequestQuantity {
    /// Every quantity, for a selector.
    pub const ALL: [RequestQuantity; 5] = [
        RequestQuantity::TtftMs,
        RequestQuantity::ItlMs,
        RequestQuantity::E2elMs,
        RequestQuantity::OutputLenTokens,
        RequestQuantity::InputLenTokens,
    ];

    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            RequestQuantity::TtftMs => "TTFT (ms)",
            RequestQuantity::ItlMs => "Inter-token latency (ms)",
            RequestQuantity::E2elMs => "E2E latency (ms)",
            RequestQuantity::OutputLenTokens => "Output length (tokens)",
            RequestQuantity::InputLenTokens => "Input length (tokens)",
        }
    }

    /// The canonical-style name (`ttft_ms`).
    pub fn name(self) -> &'static str {
        match self {
            RequestQuantity::TtftMs => "ttft_ms",
            RequestQuantity::ItlMs => "itl_ms",
            RequestQuantity::E2elMs => "e2el_ms",
            RequestQuantity::OutputLenTokens => "output_len",
            RequestQuantity::InputLenTokens => "input_len",
        }
    }

    /// How many values one request contributes (several for ITL, none when unknown or when
    /// the request failed).
    pub fn count(self, req: &RequestDetail) -> usize {
        if req.error.is_some() {
            return 0;
        }
        match self {
            RequestQuantity::ItlMs => req.itl_ms.len(),
            _ => usize::from(self.single(req).is_some()),
        }
    }

    /// Appends the values one successful request contributes to `out` (see
    /// [`count`](Self::count)).
    pub fn extend(self, req: &RequestDetail, out: &mut Vec<f64>) {
        if req.error.is_some() {
            return;
        }
        match self {
            RequestQuantity::ItlMs => out.extend(req.itl_ms.iter()),
            _ => out.extend(self.single(req)),
        }
    }

    /// The one value of a quantity a request has at most (all but ITL).
    fn single(self, req: &RequestDetail) -> Option<f64> {
        match self {
            RequestQuantity::TtftMs => req.ttft_ms,
            RequestQuantity::ItlMs => None,
            RequestQuantity::E2elMs => req.e2el_ms,
            RequestQuantity::OutputLenTokens => req.output_len.map(|v| v as f64),
            RequestQuantity::InputLenTokens => req.input_len.map(|v| v as f64),
        }
    }
}

/// The values of one series.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    /// Series name.
    pub series: String,
    /// Records contributing (indices into the dataset).
    pub records: Vec<usize>,
    /// Finite values, ascending.
    pub sorted: Vec<f64>,
}

impl Distribution {
    /// The `p`-th percentile (numpy linear).
    pub fn percentile(&self, p: f64) -> Option<f64> {
        percentile_sorted(&self.sorted, p)
    }

    /// The mean.
    pub fn mean(&self) -> Option<f64> {
        mean(&self.sorted)
    }
}

/// Collects `quantity` from the per-request detail of the records at `indices`, one
/// distribution per series; series without any value are left out. Each series' values are
/// gathered into one vector sized for them and sorted in place: the 20 million gaps of a
/// large run take their 160 MB once (growing by doubling, and sorting into a new vector, took
/// four times that at the peak, which the page's wasm memory then keeps).
pub fn distributions(
    ds: &Dataset,
    indices: &[usize],
    quantity: RequestQuantity,
    series_by: &[DimKey],
) -> Vec<Distribution> {
    let mut groups: BTreeMap<String, (Vec<usize>, Vec<f64>)> = BTreeMap::new();
    for &i in indices {
        // Only rows kept as records can carry per-request detail (a table kept as columns
        // carries dimensions and metrics alone), so no record is rebuilt here.
        let Some(r) = ds.kept_record(i) else {
            continue;
        };
        let n: usize = r.requests.iter().map(|q| quantity.count(q)).sum();
        if n == 0 {
            continue;
        }
        let g = groups.entry(series_name(r, series_by)).or_default();
        g.0.push(i);
        g.1.reserve(n);
        for q in &r.requests {
            quantity.extend(q, &mut g.1);
        }
    }
    super::in_value_order(groups)
        .into_iter()
        .map(|(series, (records, mut values))| Distribution {
            series,
            records,
            sorted: {
                sort_finite_in_place(&mut values);
                values
            },
        })
        .filter(|d| !d.sorted.is_empty())
        .collect()
}

/// The dimensions a distribution view splits its curves by: `series_by`, then every other
/// setting (a known dimension that is not where or when a run was made, as
/// [`crate::model::spread::is_repeat_dim`] says) whose value differs among the records carrying
/// `quantity`, in the dataset's order. So two runs of one series at different request rates or
/// lengths are two curves, never one pooled "all" curve, while repeats of a run (files, dates,
/// labels) stay one curve; a run tag is not a setting and does not split.
pub fn split_by(
    ds: &Dataset,
    indices: &[usize],
    quantity: RequestQuantity,
    series_by: &[DimKey],
) -> Vec<DimKey> {
    let runs: Vec<usize> = indices
        .iter()
        .copied()
        .filter(|&i| {
            ds.kept_record(i)
                .is_some_and(|r| r.requests.iter().any(|q| quantity.count(q) > 0))
        })
        .collect();
    let mut by = series_by.to_vec();
    for key in ds.dim_keys() {
        // Settings only: not where or when a run was made, not a tag.
        let DimKey::Known(d) = key else { continue };
        if matches!(d, Dim::Source | Dim::Format | Dim::Date | Dim::Label) || by.contains(key) {
            continue;
        }
        // The index's codes: one per distinct value of the dimension.
        let Some(column) = ds.column(key) else {
            continue;
        };
        let mut codes = runs.iter().map(|&i| column.codes.get(i));
        if let Some(first) = codes.next() {
            if codes.any(|c| c != first) {
                by.push(key.clone());
            }
        }
    }
    by
}

/// Count, mean and the given percentiles per series, as an exportable table.
pub fn percentile_text_table(
    dists: &[Distribution],
    quantity: RequestQuantity,
    percentiles: &[f64],
) -> TextTable {
    let mut columns = vec![
        TextColumn::new("series", "Series", false),
        TextColumn::new("count", "Values", true),
        TextColumn::new(
            format!("mean_{}", quantity.name()),
            format!("Mean {}", quantity.label()),
            true,
        ),
    ];
    for p in percentiles {
        columns.push(TextColumn::new(
            format!(
                "p{}_{}",
                format_value(*p).trim_end_matches('0').trim_end_matches('.'),
                quantity.name()
            ),
            format!(
                "P{} {}",
                format_value(*p).trim_end_matches('0').trim_end_matches('.'),
                quantity.label()
            ),
            true,
        ));
    }
    let num = |v: Option<f64>| v.map_or(Cell::Empty, |v| Cell::number(v, format_value(v)));
    let rows = dists
        .iter()
        .map(|d| {
            let mut cells = vec![
                Cell::Text(d.series.clone()),
                Cell::number(d.sorted.len() as f64, d.sorted.len().to_string()),
                num(d.mean()),
            ];
            cells.extend(percentiles.iter().map(|&p| num(d.percentile(p))));
            cells
        })
        .collect();
    TextTable { columns, rows }
}

fn legend(series_by: &[DimKey]) -> Legend {
    Legend::new().title(Title::with_text(escape_html(&series_title(series_by))))
}

/// The most steps a CDF trace has: a million requests draw as this many points (each exact),
/// within 1 / 2000 of the whole CDF (see [`ecdf_thinned`]).
pub const CDF_MAX_POINTS: usize = 2000;

/// The empirical CDF per series (a step line: fraction of values ≤ x).
pub fn cdf_plot(
    dists: &[Distribution],
    quantity: RequestQuantity,
    series_by: &[DimKey],
    theme: Theme,
) -> Plot {
    let mut plot = Plot::new();
    for (si, d) in dists.iter().enumerate() {
        let points = ecdf_thinned(&d.sorted, CDF_MAX_POINTS);
        let hover: Vec<String> = points
            .iter()
            .map(|(v, f)| {
                format!(
                    "<b>{}</b><br>{}: {}<br>{} % of values ≤ this",
                    escape_html(&d.series),
                    escape_html(quantity.label()),
                    format_value(*v),
                    format_value(f * 100.0)
                )
            })
            .collect();
        plot.add_trace(
            Scatter::new(
                points.iter().map(|p| p.0).collect(),
                points.iter().map(|p| p.1).collect(),
            )
            .name(escape_html(&d.series))
            .mode(Mode::Lines)
            .line(
                Line::new()
                    .shape(LineShape::Hv)
                    .color(PALETTE[si % PALETTE.len()]),
            )
            .hover_text_array(hover)
            .hover_info(HoverInfo::Text),
        );
    }
    let title = format!("CDF of {}", quantity.label());
    plot.set_layout(
        base_layout(&title, quantity.label(), "Fraction of values ≤ x", theme)
            .legend(legend(series_by)),
    );
    plot
}

/// Histograms per series over shared bin edges (grouped bars at each bin centre).
pub fn histogram_plot(
    dists: &[Distribution],
    quantity: RequestQuantity,
    bins: usize,
    series_by: &[DimKey],
    theme: Theme,
) -> Plot {
    let lo = dists
        .iter()
        .filter_map(|d| d.sorted.first())
        .copied()
        .fold(f64::INFINITY, f64::min);
    let hi = dists
        .iter()
        .filter_map(|d| d.sorted.last())
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let mut plot = Plot::new();
    for (si, d) in dists.iter().enumerate() {
        let h: Vec<HistogramBin> = histogram_range(&d.sorted, lo, hi, bins);
        let hover: Vec<String> = h
            .iter()
            .map(|b| {
                format!(
                    "<b>{}</b><br>{}: {} – {}<br>{} values",
                    escape_html(&d.series),
                    escape_html(quantity.label()),
                    format_value(b.lo_value),
                    format_value(b.hi_value),
                    b.count
                )
            })
            .collect();
        plot.add_trace(
            Bar::new(
                h.iter().map(|b| (b.lo_value + b.hi_value) / 2.0).collect(),
                h.iter().map(|b| b.count as f64).collect(),
            )
            .name(escape_html(&d.series))
            .hover_text_array(hover)
            .hover_info(HoverInfo::Text)
            .marker(Marker::new().color(PALETTE[si % PALETTE.len()])),
        );
    }
    let title = format!("Distribution of {}", quantity.label());
    plot.set_layout(
        base_layout(&title, quantity.label(), "Count", theme)
            .bar_mode(BarMode::Group)
            .legend(legend(series_by)),
    );
    plot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Record};

    fn rec(engine: &str, ttfts: &[f64]) -> Record {
        Record {
            engine: Some(engine.into()),
            requests: ttfts
                .iter()
                .map(|&t| RequestDetail {
                    ttft_ms: Some(t),
                    itl_ms: vec![t / 10.0, t / 5.0].into(),
                    ..RequestDetail::default()
                })
                .chain(std::iter::once(RequestDetail {
                    ttft_ms: Some(1e9),
                    error: Some("timeout".into()),
                    ..RequestDetail::default()
                }))
                .collect(),
            ..Record::default()
        }
    }

    #[test]
    fn runs_at_different_rates_are_two_curves_and_repeats_one() {
        let at = |rate: f64, source: &str, ttft: f64| Record {
            request_rate: Some(rate),
            source: Some(source.into()),
            ..rec("vllm", &[ttft, ttft + 1.0])
        };
        // Rate 1 and rate inf, each run twice (two files): the pooled "all" curve.
        let ds = Dataset::new(vec![
            at(1.0, "a.json", 10.0),
            at(f64::INFINITY, "a.json", 50.0),
            at(1.0, "b.json", 12.0),
            at(f64::INFINITY, "b.json", 55.0),
        ]);
        let all: Vec<usize> = (0..ds.len()).collect();
        let by = split_by(&ds, &all, RequestQuantity::TtftMs, &[]);
        assert_eq!(by, [DimKey::Known(Dim::RequestRate)]);
        let d = distributions(&ds, &all, RequestQuantity::TtftMs, &by);
        let names: Vec<&str> = d.iter().map(|d| d.series.as_str()).collect();
        assert_eq!(names, ["1", "inf"]);
        // The repeats of a run are one curve: two files' requests together.
        assert_eq!(d[0].sorted, [10.0, 11.0, 12.0, 13.0]);
        // The chosen series come first; one rate alone splits nothing more.
        let engine = [DimKey::Known(Dim::Engine)];
        assert_eq!(
            split_by(&ds, &[0, 2], RequestQuantity::TtftMs, &engine),
            engine
        );
        // Records without the quantity do not make a setting differ.
        let mut none = at(4.0, "c.json", 1.0);
        none.requests.clear();
        let ds = Dataset::new(vec![at(1.0, "a.json", 10.0), none]);
        assert!(split_by(&ds, &[0, 1], RequestQuantity::TtftMs, &[]).is_empty());
    }

    #[test]
    fn a_million_values_draw_a_bounded_cdf_and_histogram() {
        // 100,000 requests of ten inter-token gaps each: 10^6 values, 0.0 to 999.9 ms.
        // (7919 is prime to 10,000, so each of 0.0, 0.1, ... 999.9 comes 100 times.)
        let requests: Vec<RequestDetail> = (0..100_000u64)
            .map(|i| RequestDetail {
                itl_ms: (0..10u64)
                    .map(|k| ((i * 10 + k) * 7919 % 10_000) as f64 / 10.0)
                    .collect(),
                ..RequestDetail::default()
            })
            .collect();
        let ds = Dataset::new(vec![Record {
            requests,
            ..Record::default()
        }]);
        let d = distributions(&ds, &[0], RequestQuantity::ItlMs, &[]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].sorted.len(), 1_000_000);
        // Gathered into one vector of their own size (not grown by doubling), sorted there.
        assert_eq!(d[0].sorted.capacity(), 1_000_000);
        assert!(d[0].sorted.is_sorted());
        let cdf: serde_json::Value = serde_json::from_str(
            &cdf_plot(&d, RequestQuantity::ItlMs, &[], Theme::Light).to_json(),
        )
        .unwrap();
        let xs = cdf["data"][0]["x"].as_array().unwrap();
        // 10,000 distinct values, each 100 times: a step every 5 of them, plus the first.
        assert_eq!(xs.len(), CDF_MAX_POINTS + 1);
        assert_eq!(
            cdf["data"][0]["hovertext"].as_array().unwrap().len(),
            xs.len()
        );
        assert_eq!(xs[0], 0.0);
        assert_eq!(xs[CDF_MAX_POINTS], 999.9);
        assert_eq!(cdf["data"][0]["y"][1], 0.0005);
        assert_eq!(cdf["data"][0]["y"][CDF_MAX_POINTS], 1.0);
        let hist: serde_json::Value = serde_json::from_str(
            &histogram_plot(&d, RequestQuantity::ItlMs, 50, &[], Theme::Light).to_json(),
        )
        .unwrap();
        let counts: Vec<f64> = hist["data"][0]["y"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_f64())
            .collect();
        // 50 bins of 19.998 ms: 200 distinct values (20,000 values) each.
        assert_eq!(counts, vec![20_000.0; 50]);
    }

    #[test]
    fn distributions_percentiles_and_figures() {
        let ds = Dataset::new(vec![
            rec("a", &[10.0, 20.0, 30.0, 40.0]),
            rec("b", &[5.0]),
            Record::default(),
        ]);
        let by = [DimKey::Known(Dim::Engine)];
        let d = distributions(&ds, &[0, 1, 2], RequestQuantity::TtftMs, &by);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].sorted, [10.0, 20.0, 30.0, 40.0]);
        assert_eq!(d[0].percentile(50.0), Some(25.0));
        assert!((d[0].percentile(99.0).unwrap() - 39.7).abs() < 1e-9);
        let itl = distributions(&ds, &[0], RequestQuantity::ItlMs, &by);
        assert_eq!(itl[0].sorted.len(), 8);
        let md =
            percentile_text_table(&d, RequestQuantity::TtftMs, &[50.0, 99.0, 99.9]).to_markdown();
        assert!(md.contains("| P99.9 TTFT (ms) |"), "{md}");
        assert!(md.contains("| a | 4 | 25.00 | 25.00 | 39.70 |"), "{md}");
        let cdf: serde_json::Value = serde_json::from_str(
            &cdf_plot(&d, RequestQuantity::TtftMs, &by, Theme::Light).to_json(),
        )
        .unwrap();
        assert_eq!(
            cdf["data"][0]["y"],
            serde_json::json!([0.25, 0.5, 0.75, 1.0])
        );
        assert_eq!(cdf["data"][0]["line"]["shape"], "hv");
        let hist: serde_json::Value = serde_json::from_str(
            &histogram_plot(&d, RequestQuantity::TtftMs, 7, &by, Theme::Dark).to_json(),
        )
        .unwrap();
        let counts: f64 = hist["data"][0]["y"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_f64())
            .sum();
        assert_eq!(counts, 4.0);
        assert_eq!(hist["data"][1]["x"], hist["data"][0]["x"]);
    }
}
