//! Mappings corrected by what a table's values (and headings) say, after the names have been
//! read: the unit of a latency column whose name gives none, a rate or count column whose
//! values show it was measured, vLLM throughput's total tokens, statistics named by headings.

use super::super::{ColumnMapping, Table};
use super::{guess_column, stat_in, UNITLESS_LATENCY};
use crate::ingest::text::snake;
use crate::model::{LatencyMetric, MetricKey};

/// Decides the unit of each latency column whose name gives none (`TTFT`, `latency_mean`):
/// the unit the table's other latency columns state, when they all state one; otherwise
/// seconds when every value is below what an LLM request could take in ms (under 30 for a
/// TTFT or a request latency, under 1 per token), else ms. A guess says so in its reason
/// (which [`super::super::note_mapping`] turns into a warning). Columns whose cells carry their own
/// unit (`96.6ms`) are left as they are.
pub(super) fn guess_latency_units(t: &Table, mapping: &mut [ColumnMapping]) {
    let stated: Vec<f64> = mapping
        .iter()
        .filter(|m| m.reason.starts_with("latency in "))
        .map(|m| m.scale)
        .collect();
    let neighbours = stated
        .first()
        .copied()
        .filter(|s| stated.iter().all(|x| x == s));
    // Each unitless latency column read as plain numbers: where it is, and whether every
    // value is below what an LLM request could take in ms.
    let mut unitless: Vec<(usize, bool)> = Vec::new();
    for (k, m) in mapping.iter().enumerate() {
        if m.reason != UNITLESS_LATENCY {
            continue;
        }
        let Some(MetricKey::Latency(family, _)) =
            m.target.as_deref().and_then(MetricKey::from_name)
        else {
            continue;
        };
        let Some(col) = t.headers.iter().position(|h| *h == m.column) else {
            continue;
        };
        let mut max: Option<f64> = None;
        let mut plain = true;
        for (_, cells) in t.rows.iter().take(200) {
            let c = cells.get(col).map(str::trim).unwrap_or("");
            if c.is_empty() || c == "-" || c.eq_ignore_ascii_case("nan") {
                continue;
            }
            match c.parse::<f64>() {
                Ok(v) if v.is_finite() => max = Some(max.map_or(v, |x: f64| x.max(v))),
                _ => plain = false,
            }
        }
        let Some(max) = max.filter(|_| plain) else {
            continue;
        };
        let below = match family {
            LatencyMetric::Ttft | LatencyMetric::E2el => 30.0,
            LatencyMetric::Tpot | LatencyMetric::Itl => 1.0,
        };
        let per_token = family == LatencyMetric::E2el && too_fast_per_token(t, mapping, col);
        unitless.push((k, max < below || per_token));
    }
    // One author, one unit: seconds only when every unitless latency column is too fast for
    // ms (a TTFT of 25 beside a TPOT of 8 is ms for both).
    let all_too_fast = unitless.iter().all(|(_, fast)| *fast);
    for (k, _) in unitless {
        let Some(m) = mapping.get_mut(k) else {
            continue;
        };
        let reason = match neighbours {
            Some(1000.0) => {
                "latency without a unit: seconds, the unit of the table's other \
                             latency columns (guessed)"
            }
            Some(_) => continue,
            None if all_too_fast => {
                "latency without a unit: too fast for ms (every value of every such column \
                 under 30 for TTFT and E2EL, under 1 per token; or a request under 0.5 ms per \
                 output token), read as seconds (guessed)"
            }
            None => continue,
        };
        m.scale = 1000.0;
        m.reason = reason.to_string();
    }
}

/// Whether a request latency column cannot be ms: a row whose request, read as ms, took
/// under 0.5 ms per output token (the row's `output_len`, or a column of output tokens) would
/// have decoded over 2,000 tokens a second, its prompt included, which no LLM serving run
/// does; one unit per column, so its values are seconds (2,048 tokens in `71.27`, 30 tokens
/// in `4.2`).
pub(super) fn too_fast_per_token(t: &Table, mapping: &[ColumnMapping], col: usize) -> bool {
    let Some(out) = mapping
        .iter()
        .find(|m| m.target.as_deref() == Some("output_len"))
        .and_then(|m| t.headers.iter().position(|h| *h == m.column))
        .or_else(|| {
            t.headers
                .iter()
                .position(|h| snake(h).ends_with("output_tokens"))
        })
    else {
        return false;
    };
    t.rows.iter().take(200).any(|(_, cells)| {
        let num = |i: usize| cells.get(i).and_then(|c| c.trim().parse::<f64>().ok());
        matches!((num(col), num(out)), (Some(l), Some(n)) if l > 0.0 && n >= 8.0 && l / n < 0.5)
    })
}

/// `vllm bench throughput`'s fields as table columns: its `tokens_per_second` is
/// `total_num_tokens / elapsed_time`, prompt and output tokens together, so beside a
/// `total_num_tokens` column it is the total token throughput, not the output's.
pub(super) fn total_tokens_per_second(t: &Table, mapping: &mut [ColumnMapping]) {
    if !t.headers.iter().any(|h| snake(h) == "total_num_tokens") {
        return;
    }
    for m in mapping.iter_mut() {
        if m.target.as_deref() == Some("output_throughput")
            && snake(&m.column) == "tokens_per_second"
        {
            m.target = Some("total_token_throughput".to_string());
            m.reason = "vLLM throughput's tokens a second: total_num_tokens over the elapsed \
                        time, prompt and output together"
                .to_string();
        }
    }
}

/// Configured and measured decided per column from its values: a request-rate column
/// (`RPS`, `QPS`) whose values are mostly not round (`1.28`, `4.62`, `12.28`; a rate someone
/// sets is a multiple of 0.05: `0.5`, `1`, `2.5`, `inf`) is the achieved request throughput;
/// a prompt-count column (`Requests`) whose values are mostly not round (`22`, `78`, `278`;
/// a count someone sets is a multiple of 10 or a power of two) counts completed requests.
/// Either is a guess, said in a warning. A measured value is never the x axis or a series.
pub(super) fn measured_loads(t: &Table, mapping: &mut [ColumnMapping]) {
    for m in mapping.iter_mut() {
        let (round, target, what, means): (fn(f64) -> bool, &str, &str, &str) =
            match m.target.as_deref() {
                Some("request_rate") => (
                    |v| v.is_infinite() || ((v * 20.0).round() - v * 20.0).abs() < 1e-6,
                    "request_throughput",
                    "rates",
                    "the achieved request throughput",
                ),
                Some("num_prompts") => (
                    |v| v % 10.0 == 0.0 || (v >= 1.0 && (v as u64).is_power_of_two()),
                    "completed",
                    "counts",
                    "requests completed",
                ),
                _ => continue,
            };
        let Some(col) = t.headers.iter().position(|h| *h == m.column) else {
            continue;
        };
        let values: Vec<f64> = t
            .rows
            .iter()
            .take(200)
            .filter_map(|(_, cells)| cells.get(col)?.trim().parse::<f64>().ok())
            .filter(|v| !v.is_nan() && *v >= 0.0)
            .collect();
        let uneven = values.iter().filter(|v| !round(**v)).count();
        if values.len() >= 2 && uneven * 2 >= values.len() {
            *m = ColumnMapping::new(
                &m.column,
                Some(target.to_string()),
                1.0,
                format!(
                    "{uneven} of its {} values are not the round {what} a benchmark is set to: measured, {means} (guessed)",
                    values.len(),
                ),
            );
        }
    }
}

/// Columns that name only a statistic (`Median`, `Mean`, `P99`, `Min`) measure what the
/// nearest heading above the table that names a quantity says (`### Time to First Token
/// (seconds)`, `### Output Tokens Throughput (tokens/s)`): a latency becomes its canonical
/// metric with the heading's unit (`Median` → `median_ttft_ms`), anything else the
/// statistic of the heading's quantity (`extra.output_tokens_throughput_tokens_s_median`).
/// So tables of different quantities never share a metric, under one sub-heading or not.
pub(super) fn statistics_of_headings(t: &Table, mapping: &mut [ColumnMapping]) {
    let quantity = t.headings.iter().find(|h| {
        guess_column(h, true)
            .target
            .as_deref()
            .and_then(MetricKey::from_name)
            .is_some_and(|k| !matches!(k, MetricKey::Extra(_)))
    });
    let Some(quantity) = quantity else { return };
    for m in mapping.iter_mut() {
        let n = snake(&m.column);
        let bare = stat_in(&n).is_some() && !n.contains('_') || matches!(n.as_str(), "min" | "max");
        if !bare || m.target.as_deref() != Some(format!("extra.{n}").as_str()) {
            continue;
        }
        let of = guess_column(&format!("{} {quantity}", m.column), true);
        let latency = of
            .target
            .as_deref()
            .and_then(MetricKey::from_name)
            .is_some_and(|k| matches!(k, MetricKey::Latency(..)));
        let why = format!("{} of the heading above the table, {quantity:?}", m.column);
        *m = if latency {
            ColumnMapping::new(
                &m.column,
                of.target,
                of.scale,
                format!("{} ({why})", of.reason),
            )
        } else {
            ColumnMapping::new(
                &m.column,
                Some(format!("extra.{}_{n}", snake(quantity))),
                1.0,
                why,
            )
        };
    }
}
