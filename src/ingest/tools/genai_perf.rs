//! genai-perf and AIPerf: the JSON export (a `unit` per metric) and the two-block CSV.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::push;
use crate::ingest::fields::{place, set_dim_json, set_tag, stat_name};
use crate::ingest::table::trim_cell;
use crate::ingest::text::{parse_quantity, snake, to_ms_factor};
use crate::ingest::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

/// A genai-perf metric name → canonical metric family or dimension.
enum GenaiTarget {
    Latency(LatencyMetric),
    Fixed(MetricKey),
    Dim(Dim),
    Extra(String),
}

fn genai_target(name: &str) -> GenaiTarget {
    let n = snake(name);
    let n = n
        .trim_end_matches("_ms")
        .trim_end_matches("_tokens_sec_user")
        .trim_end_matches("_tokens_sec")
        .trim_end_matches("_per_sec")
        .trim_end_matches("_tokens")
        .trim_end_matches("_count");
    match n {
        // AIPerf's JSON names its metrics by tag (`ttft`, `error_request_count`), its CSV by
        // header (`Time to First Token (ms)`, `Error Request Count`).
        "time_to_first_token" | "ttft" => GenaiTarget::Latency(LatencyMetric::Ttft),
        "inter_token_latency" => GenaiTarget::Latency(LatencyMetric::Itl),
        "request_latency" => GenaiTarget::Latency(LatencyMetric::E2el),
        "request_throughput" => GenaiTarget::Fixed(MetricKey::RequestThroughput),
        "output_token_throughput" => GenaiTarget::Fixed(MetricKey::OutputThroughput),
        "request" => GenaiTarget::Fixed(MetricKey::Completed),
        "error_request" => GenaiTarget::Fixed(MetricKey::Failed),
        "benchmark_duration" => GenaiTarget::Fixed(MetricKey::DurationS),
        "output_sequence_length" => GenaiTarget::Dim(Dim::OutputLen),
        "input_sequence_length" => GenaiTarget::Dim(Dim::InputLen),
        other => GenaiTarget::Extra(other.to_string()),
    }
}

/// Sets `metric`'s statistic `stat` (`avg`, `p99`, `Value`; `parsed` is its [`stat_name`],
/// worked out once a header, not once a cell) from `value` in `unit`; `target` is
/// [`genai_target`] of the metric (worked out once per metric name), `here` where it stands
/// (made only for a warning).
#[allow(clippy::too_many_arguments)]
fn set_genai_stat(
    r: &mut Record,
    metric: &str,
    target: &GenaiTarget,
    stat: &str,
    parsed: Option<Stat>,
    value: f64,
    unit: &str,
    here: impl FnOnce() -> String,
    out: &mut Ingested,
) {
    match target {
        GenaiTarget::Latency(f) => {
            let scale = match to_ms_factor(unit) {
                Some(s) => s,
                None => {
                    if !unit.is_empty() {
                        crate::ingest::fields::note(
                            out,
                            format!("{metric}: unknown unit {unit:?}, read as ms"),
                        );
                    }
                    1.0
                }
            };
            if scale != 1.0 {
                crate::ingest::fields::note(out, format!("{metric}: converted from {unit} to ms"));
            }
            let f = *f;
            match parsed {
                Some(s) => r.set_metric(MetricKey::Latency(f, s), value * scale),
                None => r.set_metric(
                    MetricKey::Extra(format!("{}_{}_ms", f.name(), snake(stat))),
                    value * scale,
                ),
            }
        }
        GenaiTarget::Fixed(k) => {
            if matches!(stat, "avg" | "value" | "Value") {
                r.set_metric(k.clone(), value);
            }
        }
        GenaiTarget::Dim(d) => {
            if matches!(stat, "avg" | "value" | "Value") {
                let _ = r.set_known(*d, Some(DimValue::Num(value)));
            }
        }
        GenaiTarget::Extra(n) => {
            if n.is_empty() {
                out.warnings
                    .push(Warning::at(here(), "metric without a name, ignored"));
                return;
            }
            let suffix = if matches!(stat, "avg" | "value" | "Value") {
                String::new()
            } else {
                format!("_{}", snake(stat))
            };
            // A duration keeps its unit in its name, in ms as the latencies are
            // (`Time To Second Token (ms)` → `time_to_second_token_ms`).
            match to_ms_factor(unit) {
                Some(f) => r.set_metric(MetricKey::Extra(format!("{n}{suffix}_ms")), value * f),
                None => r.set_metric(MetricKey::Extra(format!("{n}{suffix}")), value),
            }
        }
    }
}

/// Looks for run settings anywhere in genai-perf/AIPerf `input_config` (nested at most as
/// deep as serde_json allows).
fn genai_config(v: &Value, r: &mut Record, at: &str, out: &mut Ingested) {
    let Some(o) = v.as_object() else { return };
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "model" | "model_names" | "model_name" => {
                let name = match v {
                    Value::Array(a) => a.first().cloned().unwrap_or(Value::Null),
                    other => other.clone(),
                };
                if name.is_string() && r.model.is_none() {
                    set_dim_json(r, Dim::Model, &name, &here, out);
                }
            }
            "concurrency" => set_dim_json(r, Dim::MaxConcurrency, v, &here, out),
            "request_rate" => set_dim_json(r, Dim::RequestRate, v, &here, out),
            "synthetic_input_tokens_mean" | "prompt_tokens_mean" => {
                if r.input_len.is_none() {
                    set_dim_json(r, Dim::InputLen, v, &here, out)
                }
            }
            "output_tokens_mean" => {
                if r.output_len.is_none() {
                    set_dim_json(r, Dim::OutputLen, v, &here, out)
                }
            }
            "backend" | "service_kind" | "endpoint_type" => set_tag(r, k, v),
            _ => {
                if v.is_object() {
                    genai_config(v, r, &here, out);
                }
            }
        }
    }
}

/// genai-perf / AIPerf JSON: metrics as `{unit, avg, p50, ...}` objects, `input_config`.
pub(crate) fn read_genai_perf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record::default();
    // The records, then the settings (so measured lengths win over configured ones). AIPerf
    // 0.1 keeps its metrics under `records`, each naming itself (`tag`, `header`) and
    // counting its samples (`count`); genai-perf and later AIPerf put them at the top.
    let (metrics, at_metrics) = match o.get("records").and_then(Value::as_object) {
        Some(nested) => (nested, place(at, "records")),
        None => (o, at.to_string()),
    };
    for (k, v) in metrics {
        let here = place(&at_metrics, k);
        let Some(m) = v.as_object() else {
            continue;
        };
        if !m.contains_key("unit") {
            continue;
        }
        let unit = m.get("unit").and_then(Value::as_str).unwrap_or("");
        let target = genai_target(k);
        for (stat, sv) in m {
            if matches!(stat.as_str(), "unit" | "tag" | "header" | "count") {
                continue;
            }
            match number_from_json(sv) {
                Some(x) => set_genai_stat(
                    &mut r,
                    k,
                    &target,
                    stat,
                    stat_name(stat),
                    x,
                    unit,
                    || place(&here, stat),
                    out,
                ),
                None if sv.is_null() => {}
                None => out
                    .warnings
                    .push(Warning::at(place(&here, stat), "not a number, ignored")),
            }
        }
    }
    if let Some(cfg) = o.get("input_config") {
        genai_config(cfg, &mut r, &place(at, "input_config"), out);
    }
    push(out, r);
}

/// genai-perf / AIPerf two-block CSV: `Metric,avg,min,max,p99,...` rows, a blank line, then
/// `Metric,Value` rows. Metric names carry their unit (`Time To First Token (ms)`).
pub(crate) fn read_genai_csv(text: &str, out: &mut Ingested) {
    let mut r = Record::default();
    // The header's statistics, each with its canonical statistic (worked out once a header
    // line: a long file repeats its two headers on every block).
    type Header = Vec<(String, Option<Stat>)>;
    let mut headers: Vec<(&str, Header)> = Vec::new();
    // Which of them is in force (`None` before any, and after a blank line).
    let mut header: Option<usize> = None;
    // Each metric name's (name, metric, unit, target), worked out once per distinct name: a
    // long file repeats its few names on every block (a walk over a few, no hashing).
    let mut targets: Vec<(String, String, String, GenaiTarget)> = Vec::new();
    // One line's cells, the vector kept from line to line.
    let mut cells: Vec<Cow<'_, str>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if trim_cell(line).is_empty() {
            header = None;
            continue;
        }
        split_csv_line(line, &mut cells);
        if cells.first().map(|c| c.as_ref()) == Some("Metric") {
            header = Some(match headers.iter().position(|(l, _)| *l == line) {
                Some(h) => h,
                None => {
                    // A file of ever new headers is not the few a long file repeats.
                    if headers.len() >= 16 {
                        headers.clear();
                    }
                    let parsed = cells
                        .iter()
                        .map(|c| (c.to_string(), stat_name(c)))
                        .collect();
                    headers.push((line, parsed));
                    headers.len() - 1
                }
            });
            continue;
        }
        let Some(header) = header.and_then(|h| headers.get(h)).map(|(_, h)| h) else {
            out.warnings
                .push(Warning::line(n, "row before any header, skipped"));
            continue;
        };
        let Some(name) = cells.first() else { continue };
        let known = match targets.iter().position(|t| t.0 == *name) {
            Some(k) => k,
            None => {
                let (metric, unit) = match name.rfind('(') {
                    Some(p) => (name[..p].trim(), name[p + 1..].trim_end_matches(')').trim()),
                    None => (name.as_ref(), ""),
                };
                let target = genai_target(metric);
                targets.push((
                    name.to_string(),
                    metric.to_string(),
                    unit.to_string(),
                    target,
                ));
                targets.len() - 1
            }
        };
        let (_, metric, unit, target) = &targets[known];
        for (j, cell) in cells.iter().enumerate().skip(1) {
            let Some((stat, parsed)) = header.get(j) else {
                out.warnings.push(Warning::line(
                    n,
                    "more cells than the header, extra ignored",
                ));
                break;
            };
            if let Some((v, _)) = parse_quantity(cell) {
                set_genai_stat(
                    &mut r,
                    metric,
                    target,
                    stat,
                    *parsed,
                    v,
                    unit,
                    || format!("line {n}"),
                    out,
                );
            }
        }
    }
    if r.metrics.is_empty() {
        out.note = Some("no records: no metric row held a number".into());
    } else {
        push(out, r);
    }
}

/// The trimmed cells of one CSV line into `cells` (emptied first).
fn split_csv_line<'a>(line: &'a str, cells: &mut Vec<Cow<'a, str>>) {
    cells.clear();
    // Most lines hold no quote: split them here rather than start a CSV reader (and its
    // buffer) for each of them.
    if memchr::memchr(b'"', line.as_bytes()).is_none() {
        cells.extend(line.split(',').map(|c| Cow::Borrowed(trim_cell(c))));
        return;
    }
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    if let Some(Ok(r)) = rdr.records().next() {
        cells.extend(r.iter().map(|c| Cow::Owned(c.trim().to_string())));
    }
}
