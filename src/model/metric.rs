//! Metrics: what was measured at a benchmark point, named as vLLM names them.

use std::fmt;

/// A latency family, each reported in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LatencyMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token, excluding the first.
    Tpot,
    /// Inter-token latency.
    Itl,
    /// End-to-end request latency.
    E2el,
}

impl LatencyMetric {
    /// Every latency family, in canonical order.
    pub const ALL: [LatencyMetric; 4] = [
        LatencyMetric::Ttft,
        LatencyMetric::Tpot,
        LatencyMetric::Itl,
        LatencyMetric::E2el,
    ];

    /// The name used inside metric names (`ttft`).
    pub fn name(self) -> &'static str {
        match self {
            LatencyMetric::Ttft => "ttft",
            LatencyMetric::Tpot => "tpot",
            LatencyMetric::Itl => "itl",
            LatencyMetric::E2el => "e2el",
        }
    }

    /// The short human name (`TTFT`).
    pub fn short_label(self) -> &'static str {
        match self {
            LatencyMetric::Ttft => "TTFT",
            LatencyMetric::Tpot => "TPOT",
            LatencyMetric::Itl => "ITL",
            LatencyMetric::E2el => "E2E latency",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        LatencyMetric::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// A percentile, stored exactly in thousandths so that `p99.9` keeps its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Percentile(u32);

impl Percentile {
    /// The percentile `p` (0 ≤ p ≤ 100, at most three decimals), or `None` when out of range.
    pub fn new(p: f64) -> Option<Percentile> {
        if !(0.0..=100.0).contains(&p) {
            return None;
        }
        let milli = (p * 1000.0).round();
        if (milli / 1000.0 - p).abs() > 1e-9 {
            return None;
        }
        Some(Percentile(milli as u32))
    }

    /// The percentile as a number (99.9).
    pub fn value(self) -> f64 {
        f64::from(self.0) / 1000.0
    }

    /// Parses the text after `p` in a name: `99`, `99.9`, `50`.
    pub fn parse(text: &str) -> Option<Percentile> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        Percentile::new(text.parse().ok()?)
    }
}

impl fmt::Display for Percentile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / 1000;
        let frac = self.0 % 1000;
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let digits = format!("{frac:03}");
            write!(f, "{whole}.{}", digits.trim_end_matches('0'))
        }
    }
}

/// A summary statistic of a latency family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// Arithmetic mean.
    Mean,
    /// Median (p50 as vLLM computes it).
    Median,
    /// Standard deviation.
    Std,
    /// Any percentile.
    P(Percentile),
}

impl Stat {
    /// The prefix used in metric names (`mean`, `p99`).
    pub fn name(self) -> String {
        match self {
            Stat::Mean => "mean".into(),
            Stat::Median => "median".into(),
            Stat::Std => "std".into(),
            Stat::P(p) => format!("p{p}"),
        }
    }

    fn parse(s: &str) -> Option<Stat> {
        match s {
            "mean" => Some(Stat::Mean),
            "median" => Some(Stat::Median),
            "std" => Some(Stat::Std),
            _ => Percentile::parse(s.strip_prefix('p')?).map(Stat::P),
        }
    }
}

/// Whether larger values of a metric are better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Throughputs, completed requests.
    HigherIsBetter,
    /// Latencies, durations, failures.
    LowerIsBetter,
    /// Not known (most `extra.*` metrics).
    Unknown,
}

/// A metric. Its [`name`](MetricKey::name) is the canonical JSON/CSV field name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKey {
    /// `completed`: successful requests.
    Completed,
    /// `failed`: failed requests.
    Failed,
    /// `duration_s`: benchmark duration in seconds.
    DurationS,
    /// `request_throughput` (req/s).
    RequestThroughput,
    /// `request_goodput` (req/s).
    RequestGoodput,
    /// `input_throughput` (tok/s).
    InputThroughput,
    /// `output_throughput` (tok/s).
    OutputThroughput,
    /// `total_token_throughput` (tok/s).
    TotalTokenThroughput,
    /// `{stat}_{latency}_ms`, e.g. `mean_ttft_ms`, `p99.9_itl_ms`.
    Latency(LatencyMetric, Stat),
    /// `extra.<name>`: a source metric with no canonical name, kept as-is.
    Extra(String),
}

const FIXED: [(MetricKey, &str, &str); 8] = [
    (MetricKey::Completed, "completed", "Completed requests"),
    (MetricKey::Failed, "failed", "Failed requests"),
    (MetricKey::DurationS, "duration_s", "Duration (s)"),
    (
        MetricKey::RequestThroughput,
        "request_throughput",
        "Request throughput (req/s)",
    ),
    (
        MetricKey::RequestGoodput,
        "request_goodput",
        "Request goodput (req/s)",
    ),
    (
        MetricKey::InputThroughput,
        "input_throughput",
        "Input token throughput (tok/s)",
    ),
    (
        MetricKey::OutputThroughput,
        "output_throughput",
        "Output token throughput (tok/s)",
    ),
    (
        MetricKey::TotalTokenThroughput,
        "total_token_throughput",
        "Total token throughput (tok/s)",
    ),
];

impl MetricKey {
    /// `extra.reported_improvement_pct`: an improvement % printed in the source file itself
    /// (seed 000's `Improvement` column). Kept as data so the improvement view can show the
    /// file's figure beside the one recomputed from the file's (rounded) values.
    pub fn reported_improvement() -> MetricKey {
        MetricKey::Extra("reported_improvement_pct".into())
    }

    /// Shorthand for a latency metric.
    pub fn latency(metric: LatencyMetric, stat: Stat) -> MetricKey {
        MetricKey::Latency(metric, stat)
    }

    /// The canonical field name (`mean_ttft_ms`, `extra.throughput`).
    pub fn name(&self) -> String {
        match self {
            MetricKey::Latency(m, s) => format!("{}_{}_ms", s.name(), m.name()),
            MetricKey::Extra(n) => format!("extra.{n}"),
            fixed => FIXED
                .iter()
                .find(|(k, _, _)| k == fixed)
                .map(|(_, n, _)| (*n).to_string())
                .unwrap_or_default(),
        }
    }

    /// A human label with unit (`Mean TTFT (ms)`).
    pub fn label(&self) -> String {
        match self {
            MetricKey::Latency(m, s) => {
                let stat = match s {
                    Stat::Mean => "Mean".to_string(),
                    Stat::Median => "Median".to_string(),
                    Stat::Std => "Std".to_string(),
                    Stat::P(p) => format!("P{p}"),
                };
                format!("{stat} {} (ms)", m.short_label())
            }
            MetricKey::Extra(n) => extra_label(n),
            fixed => FIXED
                .iter()
                .find(|(k, _, _)| k == fixed)
                .map(|(_, _, l)| (*l).to_string())
                .unwrap_or_default(),
        }
    }

    /// The unit, for axis labels (`ms`, `tok/s`), when known.
    pub fn unit(&self) -> Option<&'static str> {
        match self {
            MetricKey::Latency(..) => Some("ms"),
            MetricKey::DurationS => Some("s"),
            MetricKey::RequestThroughput | MetricKey::RequestGoodput => Some("req/s"),
            MetricKey::InputThroughput
            | MetricKey::OutputThroughput
            | MetricKey::TotalTokenThroughput => Some("tok/s"),
            MetricKey::Completed | MetricKey::Failed => Some("requests"),
            MetricKey::Extra(n) => extra_unit(n),
        }
    }

    /// Whether larger is better. `extra.*` metrics guess from their name's unit suffix.
    pub fn direction(&self) -> Direction {
        match self {
            MetricKey::Latency(..) | MetricKey::DurationS | MetricKey::Failed => {
                Direction::LowerIsBetter
            }
            MetricKey::Completed
            | MetricKey::RequestThroughput
            | MetricKey::RequestGoodput
            | MetricKey::InputThroughput
            | MetricKey::OutputThroughput
            | MetricKey::TotalTokenThroughput => Direction::HigherIsBetter,
            MetricKey::Extra(n) => {
                if n.contains("throughput") || n.ends_with("per_s") || n.ends_with("_tok_s") {
                    Direction::HigherIsBetter
                } else if n.contains("latency") || n.ends_with("_ms") {
                    Direction::LowerIsBetter
                } else {
                    Direction::Unknown
                }
            }
        }
    }

    /// Parses a canonical field name. `None` for names that are not metrics (dimensions, tags).
    pub fn from_name(name: &str) -> Option<MetricKey> {
        if let Some(extra) = name.strip_prefix("extra.") {
            return (!extra.is_empty()).then(|| MetricKey::Extra(extra.to_string()));
        }
        if let Some((k, _, _)) = FIXED.iter().find(|(_, n, _)| *n == name) {
            return Some(k.clone());
        }
        let body = name.strip_suffix("_ms")?;
        let (stat, metric) = body.split_once('_')?;
        Some(MetricKey::Latency(
            LatencyMetric::from_name(metric)?,
            Stat::parse(stat)?,
        ))
    }
}

/// Human names of `extra.*` metrics the readers produce, with units. Names not listed here are
/// spelled out by [`extra_label`]'s word rules.
const EXTRA_LABELS: [(&str, &str); 12] = [
    ("throughput", "Throughput (unit not given in the file)"),
    ("tokens_per_s", "Tokens per second (tok/s)"),
    (
        "reported_improvement_pct",
        "Improvement printed in the file (%)",
    ),
    ("avg_latency_per_token_ms", "Average latency per token (ms)"),
    (
        "average_latency_per_token_ms",
        "Average latency per token (ms)",
    ),
    (
        "average_latency_per_output_token_ms",
        "Average latency per output token (ms)",
    ),
    ("total_input_tokens", "Total input tokens"),
    ("total_output_tokens", "Total output tokens"),
    ("total_num_tokens", "Total tokens"),
    (
        "max_output_tokens_per_s",
        "Peak output token throughput (tok/s)",
    ),
    ("max_concurrent_requests", "Peak concurrent requests"),
    (
        "output_throughput_per_user_tok_s",
        "Output token throughput per user (tok/s)",
    ),
];

/// The unit an `extra.*` name ends in: `_ms` ms, `_tok_s` or `tokens_per_s` tok/s,
/// `_per_s` /s, `_pct` %, `_s` s.
fn extra_unit(n: &str) -> Option<&'static str> {
    if n.ends_with("_ms") {
        Some("ms")
    } else if n.ends_with("_tok_s") || n.ends_with("tokens_per_s") {
        Some("tok/s")
    } else if n.ends_with("_per_s") {
        Some("/s")
    } else if n.ends_with("_pct") {
        Some("%")
    } else if n.ends_with("_s") {
        Some("s")
    } else {
        None
    }
}

/// A human label for an `extra.*` metric: from [`EXTRA_LABELS`], else its words with common
/// abbreviations spelt as people write them and the unit suffix in parentheses
/// (`mean_decode_latency_ms` → `Mean decode latency (ms)`).
pub fn extra_label(n: &str) -> String {
    if let Some((_, label)) = EXTRA_LABELS.iter().find(|(name, _)| *name == n) {
        return (*label).to_string();
    }
    let unit = extra_unit(n);
    let body = match unit {
        Some("ms") => n.strip_suffix("_ms"),
        Some("tok/s") => n
            .strip_suffix("_tok_s")
            .or_else(|| n.strip_suffix("_per_s")),
        Some("/s") => n.strip_suffix("_per_s"),
        Some("%") => n.strip_suffix("_pct"),
        Some(_) => n.strip_suffix("_s"),
        None => Some(n),
    }
    .unwrap_or(n);
    let words: Vec<String> = body
        .split(['_', '.', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| match w {
            "avg" => "average".to_string(),
            "ttft" | "tpot" | "itl" | "e2e" | "e2el" | "gpu" | "kv" | "qps" => {
                w.to_ascii_uppercase()
            }
            _ if w.len() > 1
                && w.starts_with('p')
                && w[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                w.to_ascii_uppercase()
            }
            _ => w.to_string(),
        })
        .collect();
    let mut text = capitalized(&words.join(" "));
    if text.is_empty() {
        text = n.to_string();
    }
    match unit {
        Some(u) => format!("{text} ({u})"),
        None => text,
    }
}

impl fmt::Display for MetricKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// `s` with its first letter in upper case when that letter is ASCII (`tesla` → `Tesla`);
/// anything else is left as it is. ASCII only on purpose: the labels capitalised are this
/// project's own words or file headers, and the explorer's wasm then carries no Unicode
/// upper-case table (about 12 KB; clippy's wasm32 pass refuses `to_uppercase`).
pub fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| std::iter::once(f.to_ascii_uppercase()).chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capitalized_raises_an_ascii_first_letter_only() {
        assert_eq!(capitalized("tesla"), "Tesla");
        assert_eq!(capitalized("mean TTFT"), "Mean TTFT");
        assert_eq!(capitalized("éclair"), "éclair");
        assert_eq!(capitalized(""), "");
    }

    #[test]
    fn latency_names_round_trip_with_any_percentile() {
        for name in [
            "mean_ttft_ms",
            "median_tpot_ms",
            "std_itl_ms",
            "p99_e2el_ms",
            "p99.9_ttft_ms",
            "p50_itl_ms",
            "p0.1_tpot_ms",
        ] {
            let key = MetricKey::from_name(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(key.name(), name);
        }
        assert_eq!(
            MetricKey::from_name("p99.9_ttft_ms"),
            Some(MetricKey::Latency(
                LatencyMetric::Ttft,
                Stat::P(Percentile::new(99.9).unwrap())
            ))
        );
    }

    #[test]
    fn fixed_and_extra_names_round_trip() {
        for name in [
            "completed",
            "failed",
            "duration_s",
            "request_throughput",
            "request_goodput",
            "input_throughput",
            "output_throughput",
            "total_token_throughput",
            "extra.throughput",
        ] {
            assert_eq!(MetricKey::from_name(name).unwrap().name(), name);
        }
    }

    #[test]
    fn non_metrics_are_rejected() {
        for name in [
            "gpu",
            "extra.",
            "p101_ttft_ms",
            "mean_xyz_ms",
            "mean_ttft",
            "pabc_ttft_ms",
        ] {
            assert_eq!(MetricKey::from_name(name), None, "{name}");
        }
    }

    #[test]
    fn extra_metrics_read_as_words_with_units() {
        let label = |n: &str| MetricKey::Extra(n.into()).label();
        assert_eq!(
            label("average_latency_per_output_token_ms"),
            "Average latency per output token (ms)"
        );
        assert_eq!(label("mean_decode_latency_ms"), "Mean decode latency (ms)");
        assert_eq!(label("p99_ttft_s"), "P99 TTFT (s)");
        assert_eq!(label("gpu_tokens_tok_s"), "GPU tokens (tok/s)");
        assert_eq!(label("requests_per_s"), "Requests (/s)");
        assert_eq!(label("accept_length"), "Accept length");
        assert_eq!(
            label("throughput"),
            "Throughput (unit not given in the file)"
        );
        assert_eq!(
            MetricKey::Extra("max_output_tokens_per_s".into()).unit(),
            Some("tok/s")
        );
        // Every listed label carries the unit its name ends in.
        for (name, text) in EXTRA_LABELS {
            if let Some(u) = extra_unit(name) {
                assert!(text.contains(&format!("({u})")), "{name}: {text}");
            }
        }
    }

    #[test]
    fn directions_and_labels() {
        let ttft = MetricKey::from_name("mean_ttft_ms").unwrap();
        assert_eq!(ttft.direction(), Direction::LowerIsBetter);
        assert_eq!(ttft.label(), "Mean TTFT (ms)");
        assert_eq!(
            MetricKey::OutputThroughput.direction(),
            Direction::HigherIsBetter
        );
        assert_eq!(
            MetricKey::Extra("throughput".into()).direction(),
            Direction::HigherIsBetter
        );
    }
}
