//! Each series' frontier read at a target on the x axis ("at 50 tok/s per user", "at a p99
//! TTFT of 500 ms") or, inversely, the best x within a cap on the y axis ("under $2 per
//! million tokens"), with [`economics::read_at`]'s rules: interpolated between frontier
//! points, never extrapolated, clamped readings marked. And which prices and powers a cost or
//! energy axis used, with their sources, so the chart and its exports say so.

use super::{TradeoffSeries, TradeoffSpec};
use crate::analysis::economics::{self, Reading, Source, Unreached};
use crate::analysis::export::{Cell, TextColumn, TextTable};
use crate::charts::style::format_value;
use crate::model::{Dataset, Dim};

/// One series read at the target.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetRow {
    /// The series.
    pub series: String,
    /// The y value at the target x (`Ok(None)`: the series has no frontier).
    pub at: Result<Option<Reading>, Unreached>,
    /// The best x within the y cap, when a cap was given (`None` inside: no point is within).
    pub within_cap: Option<Option<Reading>>,
}

/// Every series' frontier read at x = `target`, and at the y cap `cap` when given.
pub fn at_target(
    series: &[TradeoffSeries],
    spec: &TradeoffSpec,
    target: f64,
    cap: Option<f64>,
) -> Vec<TargetRow> {
    let x_hib = spec.latency.higher_is_better();
    let y_hib = spec.throughput.higher_is_better();
    series
        .iter()
        .map(|s| {
            let front = s.frontier_xy();
            TargetRow {
                series: s.name.clone(),
                at: economics::read_at(&front, x_hib, y_hib, target),
                within_cap: cap.map(|c| economics::best_x_within(&front, x_hib, y_hib, c)),
            }
        })
        .collect()
}

/// The rows as a table: the y at the target (with a note when clamped or unreached) and,
/// when a cap was given, the best x within it.
pub fn target_text_table(
    rows: &[TargetRow],
    spec: &TradeoffSpec,
    target: f64,
    cap: Option<f64>,
) -> TextTable {
    let x = spec.latency.label();
    let y = spec.throughput.label();
    let mut columns = vec![
        TextColumn::new("series", "Series", false),
        TextColumn::new(
            "at_target",
            format!("{y} at {x} = {}", format_value(target)),
            true,
        ),
        TextColumn::new("note", "Note", false),
    ];
    if let Some(c) = cap {
        columns.push(TextColumn::new(
            "best_within_cap",
            format!("Best {x} with {y} within {}", format_value(c)),
            true,
        ));
    }
    let rows = rows
        .iter()
        .map(|r| {
            let (value, note) = match &r.at {
                Ok(Some(Reading { value, clamped })) => (
                    Cell::number(*value, format_value(*value)),
                    clamped.map_or(String::new(), |at| {
                        format!(
                            "every frontier point does better than asked: read at {}",
                            format_value(at)
                        )
                    }),
                ),
                Ok(None) => (Cell::Empty, "no frontier".to_string()),
                Err(Unreached { best }) => (
                    Cell::Text("not reached".into()),
                    format!("best measured: {}", format_value(*best)),
                ),
            };
            let mut row = vec![Cell::Text(r.series.clone()), value, Cell::Text(note)];
            if let Some(within) = &r.within_cap {
                row.push(match within {
                    Some(Reading { value, clamped }) => Cell::number(
                        *value,
                        if clamped.is_some() {
                            format!("{} (every point within)", format_value(*value))
                        } else {
                            format_value(*value)
                        },
                    ),
                    None => Cell::Text("none within".into()),
                });
            }
            row
        })
        .collect();
    TextTable { columns, rows }
}

/// What a cost or energy axis assumed for one GPU name.
#[derive(Clone, Debug, PartialEq)]
pub struct AssumedFor {
    /// The GPU name as the records write it.
    pub gpu: String,
    /// `$2.95/GPU-hour` or `0.70 kW per GPU`; `None` when there is none.
    pub figure: Option<String>,
    /// `yours` or the default's source.
    pub source: String,
}

impl AssumedFor {
    /// `H100: $2.95/GPU-hour (source)`, or that it has none (its points are left out).
    pub fn text(&self) -> String {
        match &self.figure {
            Some(f) => format!("{}: {f} ({})", self.gpu, self.source),
            None => format!("{}: {}", self.gpu, self.source),
        }
    }

    /// `H100 $2.95/GPU-hour`, for the chart's subtitle (sources are under the chart).
    pub fn short(&self) -> String {
        match &self.figure {
            Some(f) => format!("{} {f}", self.gpu),
            None => format!("{} none", self.gpu),
        }
    }
}

/// What a cost or energy axis assumed for the GPUs of the records at `indices`, one per GPU
/// name in the data's order. Empty for the other axes; one line with no GPU when no record
/// names its GPU.
pub fn assumptions_used(ds: &Dataset, indices: &[usize], spec: &TradeoffSpec) -> Vec<AssumedFor> {
    use super::ThroughputAxis as T;
    let cost = matches!(
        spec.throughput,
        T::UsdPerMillionOutputTokens | T::UsdPerMillionTotalTokens
    );
    if !spec.throughput.assumes() {
        return Vec::new();
    }
    let what = if cost { "price" } else { "power" };
    let Some(gpu) = ds.column(&Dim::Gpu.into()) else {
        return vec![AssumedFor {
            gpu: "every record".into(),
            figure: None,
            source: format!("no GPU named, so no {what}"),
        }];
    };
    // The GPU names the records have, in dictionary order.
    let mut used = vec![false; gpu.dict.len() + 1];
    for &i in indices {
        if let Some(u) = used.get_mut(gpu.codes.get(i) as usize) {
            *u = true;
        }
    }
    gpu.dict
        .iter()
        .enumerate()
        .filter(|(i, _)| used[i + 1])
        .map(|(_, name)| {
            let name = name.to_string();
            let assumed = if cost {
                spec.assumptions.price(&name)
            } else {
                spec.assumptions.power(&name)
            };
            match assumed {
                Some(a) => AssumedFor {
                    figure: Some(if cost {
                        format!("${}/GPU-hour", format_value(a.value))
                    } else {
                        format!("{} kW per GPU", format_value(a.value))
                    }),
                    source: match a.source {
                        Source::User => "yours".to_string(),
                        Source::Default(s) => s.to_string(),
                    },
                    gpu: name,
                },
                None => AssumedFor {
                    gpu: name,
                    figure: None,
                    source: format!("no {what} (give one to include its points)"),
                },
            }
        })
        .collect()
}
