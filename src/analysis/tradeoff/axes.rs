//! The trade-off's two axes: what a point's y is (a throughput, per GPU or not, or what a
//! token costs) and its x (a latency or interactivity), each read from a dataset's columns.

use super::economics::{self, Assumptions};
use crate::model::{Dataset, Dim, DimKey, LatencyMetric, MetricKey, Percentile, Record, Stat};

/// The y axis: a throughput, per GPU or not, or what a token costs in dollars or energy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThroughputAxis {
    /// `output_throughput` (tok/s).
    OutputTokensPerS,
    /// `total_token_throughput` (tok/s).
    TotalTokensPerS,
    /// `output_throughput` / GPUs (tok/s per GPU).
    OutputTokensPerSPerGpu,
    /// `total_token_throughput` / GPUs (tok/s per GPU).
    TotalTokensPerSPerGpu,
    /// $ per million output tokens at the GPU's price per hour (lower is better).
    UsdPerMillionOutputTokens,
    /// $ per million tokens in and out (lower is better).
    UsdPerMillionTotalTokens,
    /// Joules of GPU power per output token (lower is better).
    JoulesPerOutputToken,
}

impl ThroughputAxis {
    /// Every choice, for a selector.
    pub const ALL: [ThroughputAxis; 7] = [
        ThroughputAxis::OutputTokensPerS,
        ThroughputAxis::TotalTokensPerS,
        ThroughputAxis::OutputTokensPerSPerGpu,
        ThroughputAxis::TotalTokensPerSPerGpu,
        ThroughputAxis::UsdPerMillionOutputTokens,
        ThroughputAxis::UsdPerMillionTotalTokens,
        ThroughputAxis::JoulesPerOutputToken,
    ];

    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            ThroughputAxis::OutputTokensPerS => "Output token throughput (tok/s)",
            ThroughputAxis::TotalTokensPerS => "Total token throughput (tok/s)",
            ThroughputAxis::OutputTokensPerSPerGpu => "Output token throughput per GPU (tok/s/GPU)",
            ThroughputAxis::TotalTokensPerSPerGpu => "Total token throughput per GPU (tok/s/GPU)",
            ThroughputAxis::UsdPerMillionOutputTokens => "Cost per million output tokens ($)",
            ThroughputAxis::UsdPerMillionTotalTokens => {
                "Cost per million tokens, input and output ($)"
            }
            ThroughputAxis::JoulesPerOutputToken => "Energy per output token (J, GPU power)",
        }
    }

    /// Whether larger values are better on this axis (throughput yes, cost and energy no).
    pub fn higher_is_better(self) -> bool {
        !matches!(
            self,
            ThroughputAxis::UsdPerMillionOutputTokens
                | ThroughputAxis::UsdPerMillionTotalTokens
                | ThroughputAxis::JoulesPerOutputToken
        )
    }

    /// Whether the axis uses an assumed price or power per GPU (cost and energy).
    pub fn assumes(self) -> bool {
        matches!(
            self,
            ThroughputAxis::UsdPerMillionOutputTokens
                | ThroughputAxis::UsdPerMillionTotalTokens
                | ThroughputAxis::JoulesPerOutputToken
        )
    }

    /// The metric the axis reads.
    fn metric(self) -> MetricKey {
        match self {
            ThroughputAxis::OutputTokensPerS
            | ThroughputAxis::OutputTokensPerSPerGpu
            | ThroughputAxis::UsdPerMillionOutputTokens
            | ThroughputAxis::JoulesPerOutputToken => MetricKey::OutputThroughput,
            ThroughputAxis::TotalTokensPerS
            | ThroughputAxis::TotalTokensPerSPerGpu
            | ThroughputAxis::UsdPerMillionTotalTokens => MetricKey::TotalTokenThroughput,
        }
    }

    /// Whether the axis needs the GPU count.
    fn needs_gpus(self) -> bool {
        !matches!(
            self,
            ThroughputAxis::OutputTokensPerS | ThroughputAxis::TotalTokensPerS
        )
    }

    /// What the axis needs beyond the metric, for the note shown when nothing can be drawn.
    pub fn needs(self) -> &'static str {
        match self {
            ThroughputAxis::OutputTokensPerS | ThroughputAxis::TotalTokensPerS => "",
            ThroughputAxis::OutputTokensPerSPerGpu | ThroughputAxis::TotalTokensPerSPerGpu => {
                " and a GPU count (gpu_count, or tp × pp × dp)"
            }
            ThroughputAxis::UsdPerMillionOutputTokens
            | ThroughputAxis::UsdPerMillionTotalTokens => {
                " and a GPU count and a GPU with a price per hour"
            }
            ThroughputAxis::JoulesPerOutputToken => " and a GPU count and a GPU with a power",
        }
    }

    /// The axis value from the metric's value, the GPU count and the GPU's assumed price
    /// (`$`/GPU-hour) or power (kW), whichever the axis uses.
    fn of(
        self,
        metric: Option<f64>,
        gpus: Option<u64>,
        per_gpu_figure: Option<f64>,
    ) -> Option<f64> {
        let metric = metric.filter(|v| v.is_finite())?;
        let gpus = || gpus.filter(|&g| g > 0);
        let v = match self {
            ThroughputAxis::OutputTokensPerS | ThroughputAxis::TotalTokensPerS => Some(metric),
            ThroughputAxis::OutputTokensPerSPerGpu | ThroughputAxis::TotalTokensPerSPerGpu => {
                Some(metric / gpus()? as f64)
            }
            ThroughputAxis::UsdPerMillionOutputTokens
            | ThroughputAxis::UsdPerMillionTotalTokens => {
                economics::usd_per_million_tokens(metric, gpus()?, per_gpu_figure?)
            }
            ThroughputAxis::JoulesPerOutputToken => {
                economics::joules_per_token(metric, gpus()?, per_gpu_figure?)
            }
        };
        v.filter(|v| v.is_finite())
    }

    /// The price or power per GPU the axis uses for a GPU name, if any.
    fn figure(self, assumed: &Assumptions, gpu: &str) -> Option<f64> {
        match self {
            ThroughputAxis::UsdPerMillionOutputTokens
            | ThroughputAxis::UsdPerMillionTotalTokens => assumed.price(gpu).map(|a| a.value),
            ThroughputAxis::JoulesPerOutputToken => assumed.power(gpu).map(|a| a.value),
            _ => None,
        }
    }

    /// The value for a record.
    pub fn value(self, r: &Record, assumed: &Assumptions) -> Option<f64> {
        let gpus = economics::record_gpus(r).map(|(n, _)| n);
        let figure = r.gpu.as_deref().and_then(|g| self.figure(assumed, g));
        self.of(r.metric(&self.metric()), gpus, figure)
    }

    /// Each row's value ([`ThroughputAxis::value`] of its record), read from the dataset's
    /// index; the price or power is looked up once per distinct GPU name.
    pub(super) fn reader<'a>(
        self,
        ds: &'a Dataset,
        assumed: &Assumptions,
    ) -> impl Fn(usize) -> Option<f64> + 'a {
        let values = ds.metric_values(&self.metric());
        let needs_gpus = self.needs_gpus();
        let column = |d: Dim| needs_gpus.then(|| ds.column(&d.into())).flatten();
        let (count, tp, pp, gpu) = (
            column(Dim::GpuCount),
            column(Dim::Tp),
            column(Dim::Pp),
            column(Dim::Gpu),
        );
        // The data-parallel size from its tag, as each code of the tag's column reads.
        let dp = needs_gpus
            .then(|| {
                let key = ds
                    .dim_keys()
                    .find(|k| matches!(k, DimKey::Tag(t) if economics::is_dp_tag(t)))?;
                let c = ds.column(key)?;
                let sizes: Vec<Option<u64>> = std::iter::once(None)
                    .chain(c.dict.iter().map(economics::dp_size))
                    .collect();
                Some((c, sizes))
            })
            .flatten();
        // Code c (1-based; 0 is "no GPU") → the figure for dict[c - 1].
        let figures: Vec<Option<f64>> = gpu.map_or_else(Vec::new, |c| {
            std::iter::once(None)
                .chain(c.dict.iter().map(|v| self.figure(assumed, &v.to_string())))
                .collect()
        });
        move |row| {
            let metric = values.as_ref().and_then(|v| v.get(row));
            // GPU counts are whole numbers (the dimensions' kind).
            let whole = |c: Option<crate::model::ColumnRef<'_>>| {
                c.and_then(|c| c.value(row))
                    .and_then(|v| v.as_f64())
                    .map(|g| g as u64)
            };
            let gpus = if needs_gpus {
                let dp = dp
                    .as_ref()
                    .and_then(|(c, sizes)| sizes.get(c.codes.get(row) as usize).copied())
                    .flatten();
                economics::gpus_of(whole(count), whole(tp), whole(pp), dp).map(|(n, _)| n)
            } else {
                None
            };
            let figure = gpu
                .and_then(|c| figures.get(c.codes.get(row) as usize).copied())
                .flatten();
            self.of(metric, gpus, figure)
        }
    }
}

/// The latency axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyAxis {
    /// `p99_ttft_ms` (lower is better).
    P99TtftMs,
    /// `mean_tpot_ms` (lower is better).
    MeanTpotMs,
    /// 1000 / `mean_tpot_ms`: decode speed one user sees, tok/s (higher is better).
    TokensPerSPerUser,
    /// 1000 / `p90_tpot_ms`: the slow user's decode speed (interactivity's p10: nine users in
    /// ten see more), tok/s (higher is better).
    SlowUserTokensPerS,
}

impl LatencyAxis {
    /// Every choice, for a selector.
    pub const ALL: [LatencyAxis; 4] = [
        LatencyAxis::P99TtftMs,
        LatencyAxis::MeanTpotMs,
        LatencyAxis::TokensPerSPerUser,
        LatencyAxis::SlowUserTokensPerS,
    ];

    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            LatencyAxis::P99TtftMs => "P99 TTFT (ms)",
            LatencyAxis::MeanTpotMs => "Mean TPOT (ms)",
            LatencyAxis::TokensPerSPerUser => {
                "Tokens per second per user (tok/s, 1000 / mean TPOT)"
            }
            LatencyAxis::SlowUserTokensPerS => {
                "Tokens per second per user, p10: the slow user (tok/s, 1000 / p90 TPOT)"
            }
        }
    }

    /// Whether larger values are better on this axis.
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            LatencyAxis::TokensPerSPerUser | LatencyAxis::SlowUserTokensPerS
        )
    }

    /// The metric the axis reads (`None`: one that cannot be named).
    fn metric(self) -> Option<MetricKey> {
        match self {
            LatencyAxis::P99TtftMs => {
                let p99 = Percentile::new(99.0).map(Stat::P)?;
                Some(MetricKey::latency(LatencyMetric::Ttft, p99))
            }
            LatencyAxis::MeanTpotMs | LatencyAxis::TokensPerSPerUser => {
                Some(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean))
            }
            LatencyAxis::SlowUserTokensPerS => {
                let p90 = Percentile::new(90.0).map(Stat::P)?;
                Some(MetricKey::latency(LatencyMetric::Tpot, p90))
            }
        }
    }

    /// The axis value from the metric's value.
    fn of(self, metric: Option<f64>) -> Option<f64> {
        let v = match self {
            LatencyAxis::P99TtftMs | LatencyAxis::MeanTpotMs => metric,
            LatencyAxis::TokensPerSPerUser | LatencyAxis::SlowUserTokensPerS => {
                metric.and_then(economics::interactivity)
            }
        };
        v.filter(|v| v.is_finite())
    }

    /// The value for a record.
    pub fn value(self, r: &Record) -> Option<f64> {
        self.of(r.metric(&self.metric()?))
    }

    /// Each row's value ([`LatencyAxis::value`] of its record), read from the dataset's index.
    pub(super) fn reader(self, ds: &Dataset) -> impl Fn(usize) -> Option<f64> + '_ {
        let values = self.metric().and_then(|m| ds.metric_values(&m));
        move |row| self.of(values.as_ref().and_then(|v| v.get(row)))
    }
}
