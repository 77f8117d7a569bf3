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

/// The column of `t` that `mapping` maps to `target` first, and its scale.
fn mapped(t: &Table, mapping: &[ColumnMapping], target: &str) -> Option<(usize, f64)> {
    let m = mapping
        .iter()
        .find(|m| m.target.as_deref() == Some(target))?;
    Some((t.headers.iter().position(|h| *h == m.column)?, m.scale))
}

/// Cell `k` of a row as a plain number.
fn cell(cells: &csv::StringRecord, k: usize) -> Option<f64> {
    cells.get(k)?.trim().parse().ok()
}

/// Whether a request latency column cannot be ms: a row whose request, read as ms, took
/// under 0.5 ms per output token (the row's `output_len`, or a column of output tokens) would
/// have decoded over 2,000 tokens a second, its prompt included, which no LLM serving run
/// does; one unit per column, so its values are seconds (2,048 tokens in `71.27`, 30 tokens
/// in `4.2`).
pub(super) fn too_fast_per_token(t: &Table, mapping: &[ColumnMapping], col: usize) -> bool {
    let Some(out) = mapped(t, mapping, "output_len")
        .map(|(k, _)| k)
        .or_else(|| {
            t.headers
                .iter()
                .position(|h| snake(h).ends_with("output_tokens"))
        })
    else {
        return false;
    };
    t.rows.iter().take(200).any(|(_, cells)| {
        matches!((cell(cells, col), cell(cells, out)), (Some(l), Some(n)) if l > 0.0 && n >= 8.0 && l / n < 0.5)
    })
}

/// `vllm bench throughput`'s fields as table columns: its `tokens_per_second` is
/// `total_num_tokens / elapsed_time`, prompt and output tokens together, so beside a
/// `total_num_tokens` column it is the total token throughput, not the output's; and so it
/// is where its values say so: on most rows where they are all given, tokens a second times
/// the end-to-end latency is nearer the batch's (or the prompts') input and output tokens
/// than its output tokens (dstack's H100 row `2048, 2048, 64, 262.68 s, 998.78`: 262,360
/// tokens, 64 × 4,096 = 262,144 and not 64 × 2,048; its latency and throughput come from two
/// runs, so a match is never exact).
pub(super) fn total_tokens_per_second(t: &Table, mapping: &mut [ColumnMapping]) {
    let at = |target: &str| mapped(t, mapping, target);
    let Some((tps, _)) = at("output_throughput").filter(|(k, _)| {
        t.headers
            .get(*k)
            .is_some_and(|h| snake(h) == "tokens_per_second")
    }) else {
        return;
    };
    let named = t.headers.iter().any(|h| snake(h) == "total_num_tokens");
    let by_values = || {
        let (Some((i, _)), Some((o, _)), Some((n, _)), Some((e, scale))) = (
            at("input_len"),
            at("output_len"),
            at("batch_size").or_else(|| at("num_prompts")),
            at("mean_e2el_ms"),
        ) else {
            return false;
        };
        // Rows where tokens a second times the latency is nearer all the tokens than the
        // output's, against rows where it is not.
        let (mut total, mut output) = (0, 0);
        for (_, cells) in t.rows.iter().take(200) {
            let num = |k: usize| cell(cells, k);
            if let (Some(v), Some(i), Some(o), Some(n), Some(e)) =
                (num(tps), num(i), num(o), num(n), num(e))
            {
                // Nearer all the tokens than the output's, as a factor either way: above
                // their geometric mean.
                let tokens = v * e * scale / 1000.0 / n;
                if tokens * tokens > o * (i + o) {
                    total += 1;
                } else {
                    output += 1;
                }
            }
        }
        total > output
    };
    if named || by_values() {
        let column = t.headers.get(tps);
        if let Some(m) = mapping.iter_mut().find(|m| Some(&m.column) == column) {
            m.target = Some("total_token_throughput".to_string());
            m.reason = "vLLM throughput's tokens a second: prompt and output tokens together \
                        (total_num_tokens over the elapsed time)"
                .to_string();
        }
    }
}

/// Configured and measured decided per column, from the column as a whole: a request-rate
/// column (`RPS`, `QPS`) or a prompt-count column (`Requests`) is measured (the achieved
/// request throughput, the requests completed) when at least half its values are not what a
/// benchmark is set to (a rate: a multiple of 0.05, a third or a sixth written short, `0.33`,
/// `1.67`, or `inf`; a count: a multiple of 10 or a power of two), unless the column says
/// otherwise: an uneven value that recurs in other rows (the same rate run for each engine)
/// was set, and a header that names a rate (`request_rate`) is taken at its word unless a
/// value has three decimals or more (`191.532`: a measurement). A guess, said in a warning;
/// a measured value is never the x axis or a series.
pub(super) fn measured_loads(t: &Table, mapping: &mut [ColumnMapping]) {
    for m in mapping.iter_mut() {
        let (round, target, what, means): (Roundness, &str, &str, &str) = match m.target.as_deref()
        {
            Some("request_rate") => (
                round_rate,
                "request_throughput",
                "rates",
                "the achieved request throughput",
            ),
            Some("num_prompts") => (
                |v, _| v % 10.0 == 0.0 || (v >= 1.0 && (v as u64).is_power_of_two()),
                "completed",
                "counts",
                "requests completed",
            ),
            _ => continue,
        };
        let Some(col) = t.headers.iter().position(|h| *h == m.column) else {
            continue;
        };
        // Each value with the number of decimals it is written with.
        let mut values: Vec<(f64, usize)> = Vec::new();
        for (_, cells) in t.rows.iter().take(200) {
            let Some(c) = cells.get(col).map(str::trim) else {
                continue;
            };
            // `>= 0` leaves NaN out too.
            if let Some(v) = c.parse::<f64>().ok().filter(|v| *v >= 0.0) {
                values.push((v, c.split_once('.').map_or(0, |(_, d)| d.len())));
            }
        }
        let (mut uneven, mut long, mut recurs) = (0, false, false);
        for (k, &(v, d)) in values.iter().enumerate() {
            if !round(v, d) {
                uneven += 1;
                long |= d >= 3;
                recurs |= values.iter().enumerate().any(|(o, w)| o != k && w.0 == v);
            }
        }
        let named_rate = target == "request_throughput" && snake(&m.column).contains("rate");
        if values.len() >= 2 && uneven * 2 >= values.len() && !recurs && (!named_rate || long) {
            *m = ColumnMapping::new(
                &m.column,
                Some(target.to_string()),
                1.0,
                format!(
                    "{} of its {} values are not the round {what} a benchmark is set to: measured, {means} (guessed)",
                    uneven,
                    values.len(),
                ),
            );
        }
    }
}

/// Whether a value, written with so many decimals, is one a benchmark is set to.
type Roundness = fn(f64, usize) -> bool;

/// A rate someone sets: `inf`, a multiple of 0.05 (`0.5`, `2.5`), or a third or a sixth
/// written to its `decimals` (`0.33`, `0.67`, `1.17`; two decimals at least, so `1.3` is not
/// taken for 4/3).
fn round_rate(v: f64, decimals: usize) -> bool {
    let near = |x: f64, tolerance: f64| (x.round() - x).abs() <= tolerance;
    // Half the last written digit: what rounding to `decimals` may have moved the value.
    let half = [5e-3, 5e-4, 5e-5, 5e-6, 5e-7, 5e-8].get(decimals.wrapping_sub(2));
    v.is_infinite()
        || near(v * 20.0, 1e-6)
        || half.is_some_and(|h| [3.0, 6.0].iter().any(|d| near(v * d, d * h + 1e-9)))
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
