//! genai-perf and AIPerf: the JSON export (a `unit` per metric) and the two-block CSV.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::push;
use crate::ingest::fields::{place, set_dim_json, set_tag, stat_name};
use crate::ingest::text::trim_cell;
use crate::ingest::text::{lines_of, parse_quantity, snake, to_ms_factor};
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

/// Where one statistic of one genai-perf metric goes, worked out once (per metric and
/// header in the CSV, where a long file repeats both on every block) by [`genai_put`].
enum Put {
    /// This metric, scaled by the factor (a latency's unit to ms).
    Metric(MetricKey, f64),
    /// This dimension.
    Dim(Dim),
    /// Not kept (a dimension's or fixed metric's other statistics).
    Nothing,
    /// A metric without a name: a warning where it stands.
    NoName,
}

/// Where `metric`'s statistic `stat` (`avg`, `p99`, `Value`; `parsed` is its [`stat_name`])
/// goes, its values being in `unit`; `target` is [`genai_target`] of the metric. Notes a
/// converted or unknown unit.
fn genai_put(
    metric: &str,
    target: &GenaiTarget,
    stat: &str,
    parsed: Option<Stat>,
    unit: &str,
    out: &mut Ingested,
) -> Put {
    let plain = matches!(stat, "avg" | "value" | "Value");
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
            let key = match parsed {
                Some(s) => MetricKey::Latency(*f, s),
                None => MetricKey::Extra(format!("{}_{}_ms", f.name(), snake(stat))),
            };
            Put::Metric(key, scale)
        }
        GenaiTarget::Fixed(k) if plain => Put::Metric(k.clone(), 1.0),
        GenaiTarget::Dim(d) if plain => Put::Dim(*d),
        GenaiTarget::Fixed(_) | GenaiTarget::Dim(_) => Put::Nothing,
        GenaiTarget::Extra(n) if n.is_empty() => Put::NoName,
        GenaiTarget::Extra(n) => {
            let suffix = if plain {
                String::new()
            } else {
                format!("_{}", snake(stat))
            };
            // A duration keeps its unit in its name, in ms as the latencies are
            // (`Time To Second Token (ms)` → `time_to_second_token_ms`).
            match to_ms_factor(unit) {
                Some(f) => Put::Metric(MetricKey::Extra(format!("{n}{suffix}_ms")), f),
                None => Put::Metric(MetricKey::Extra(format!("{n}{suffix}")), 1.0),
            }
        }
    }
}

/// Puts `value` where `put` says; `here` is where it stands (made only for a warning).
fn put_value(
    r: &mut Record,
    put: &Put,
    value: f64,
    here: impl FnOnce() -> String,
    out: &mut Ingested,
) {
    match put {
        Put::Metric(k, scale) => {
            r.set_metric(k.clone(), value * scale);
        }
        Put::Dim(d) => {
            let _ = r.set_known(*d, Some(DimValue::Num(value)));
        }
        Put::Nothing => {}
        Put::NoName => out
            .warnings
            .push(Warning::at(here(), "metric without a name, ignored")),
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
                Some(x) => {
                    let put = genai_put(k, &target, stat, stat_name(stat), unit, out);
                    put_value(&mut r, &put, x, || place(&here, stat), out);
                }
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
    // Where each cell of a (metric name, header) pair goes, by column, each worked out at its
    // first number.
    type RowPuts = ((usize, usize), Vec<Option<Put>>);
    let mut puts: Vec<RowPuts> = Vec::new();
    // The last row's metric name and puts, by position.
    let (mut last_known, mut last_put): (Option<usize>, Option<usize>) = (None, None);
    // One line's cells, the vector kept from line to line.
    let mut cells: Vec<Cow<'_, str>> = Vec::new();
    for (i, line) in lines_of(text).enumerate() {
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
                        puts.clear(); // they name headers by position
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
        let Some((h, header)) = header.and_then(|h| Some((h, &headers.get(h)?.1))) else {
            out.warnings
                .push(Warning::line(n, "row before any header, skipped"));
            continue;
        };
        let Some(name) = cells.first() else { continue };
        // A long file repeats its names in the same order: the one after the last row's first.
        let guess = last_known.map_or(0, |k| k + 1);
        let found = match targets.get(guess) {
            Some(t) if t.0 == *name => Some(guess),
            _ => targets.iter().position(|t| t.0 == *name),
        };
        let known = match found {
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
        last_known = Some(known);
        let guess = last_put.map_or(0, |p| p + 1);
        let found = match puts.get(guess) {
            Some((pair, _)) if *pair == (known, h) => Some(guess),
            _ => puts.iter().position(|(pair, _)| *pair == (known, h)),
        };
        let at = match found {
            Some(at) => at,
            None => {
                // Ever new metric names are not the few a long file repeats either.
                if puts.len() >= 256 {
                    puts.clear();
                }
                puts.push(((known, h), Vec::new()));
                puts.len() - 1
            }
        };
        last_put = Some(at);
        let row_puts = &mut puts[at].1;
        for (j, cell) in cells.iter().enumerate().skip(1) {
            let Some((stat, parsed)) = header.get(j) else {
                out.warnings.push(Warning::line(
                    n,
                    "more cells than the header, extra ignored",
                ));
                break;
            };
            if let Some((v, _)) = parse_quantity(cell) {
                if row_puts.len() <= j {
                    row_puts.resize_with(j + 1, || None);
                }
                let put = row_puts[j]
                    .get_or_insert_with(|| genai_put(metric, target, stat, *parsed, unit, out));
                put_value(&mut r, put, v, || format!("line {n}"), out);
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
        let mut start = 0;
        for (i, b) in line.bytes().enumerate() {
            if b == b',' {
                cells.push(Cow::Borrowed(trim_cell(&line[start..i])));
                start = i + 1;
            }
        }
        cells.push(Cow::Borrowed(trim_cell(&line[start..])));
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

#[cfg(test)]
mod tests {
    use crate::ingest::{read, Format};
    use crate::model::MetricKey;

    const BLOCK: &str = "Metric,avg,min,max,p99,p50\n\
        Time To First Token (s),0.25,0.1,0.5,0.45,0.2\n\
        Output Sequence Length (tokens),128,120,130,130,128\n\
        Odd Thing,3,1,5,5,3\n\
        \n\
        Metric,Value\n\
        Output Token Throughput (tokens/sec),1580.5\n";

    fn ttft(r: &crate::model::Record, stat: &str) -> Option<f64> {
        r.metric(&MetricKey::from_name(&format!("{stat}_ttft_ms")).unwrap())
    }

    /// Where each cell goes is worked out once per metric and header; the values are still
    /// each block's, CRLF reads as LF, and units are converted (noted once).
    #[test]
    fn repeated_blocks_read_the_last_values_with_their_units() {
        let twice = format!("{BLOCK}\n{}", BLOCK.replace("0.25", "0.75"));
        for text in [twice.clone(), twice.replace('\n', "\r\n")] {
            let got = read("profile_export_genai_perf.csv", text.as_bytes()).unwrap();
            assert_eq!(got.format, Format::GenaiPerfCsv, "{:?}", got.warnings);
            let r = &got.records[0];
            assert_eq!(ttft(r, "mean"), Some(750.0));
            assert_eq!(ttft(r, "p99"), Some(450.0));
            assert_eq!(
                r.metric(&MetricKey::OutputThroughput),
                Some(1580.5),
                "{:?}",
                r.metrics
            );
            assert_eq!(
                r.metric(&MetricKey::Extra("odd_thing_p99".into())),
                Some(5.0)
            );
            let notes: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
            let converted = notes
                .iter()
                .filter(|n| n.contains("converted from s to ms"));
            assert_eq!(converted.count(), 1, "{notes:?}");
        }
    }

    /// A file of ever new headers (more than the 16 remembered) still puts each cell under
    /// its own header's statistic.
    #[test]
    fn many_distinct_headers_keep_their_own_statistics() {
        let mut text = String::new();
        for i in 0..40 {
            let stat = ["p99", "p50", "p90"][i % 3];
            text.push_str(&format!(
                "Metric,{stat}{}\nTime To First Token (ms),{i}\n\n",
                ",avg".repeat(i)
            ));
        }
        let got = read("profile_export_genai_perf.csv", text.as_bytes()).unwrap();
        let r = &got.records[0];
        assert_eq!(ttft(r, "p99"), Some(39.0));
        assert_eq!(ttft(r, "p50"), Some(37.0));
        assert_eq!(ttft(r, "p90"), Some(38.0));
    }
}
