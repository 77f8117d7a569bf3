//! TGI `text-generation-benchmark` tables: one record per batch size from the per-step
//! latency and throughput rows.

use super::columns::stat_in;
use super::markdown_tables;
use crate::ingest::text::{parse_quantity, snake, to_ms_factor};
use crate::ingest::{Ingested, Warning};
use crate::model::{LatencyMetric, MetricKey, Record, Stat};

/// TGI `text-generation-benchmark` tables: `Step | Batch Size | Average | Lowest | Highest |
/// p50 | p90 | p99`, merged Step cells left blank (filled down), values with units. One record
/// per batch size: prefill latency → TTFT, decode (token) latency → TPOT, decode throughput →
/// output throughput; the rest under `extra.*`.
pub(crate) fn read_tgi(text: &str, out: &mut Ingested) {
    let mut by_batch: Vec<(u64, Record)> = Vec::new();
    for t in markdown_tables(text) {
        let col = |name: &str| t.headers.iter().position(|h| h.eq_ignore_ascii_case(name));
        let (Some(step_col), Some(bs_col)) = (col("Step"), col("Batch Size")) else {
            continue;
        };
        let mut step = String::new();
        for (line, cells) in &t.rows {
            let place = format!("line {line}");
            if let Some(s) = cells.get(step_col).filter(|s| !s.is_empty()) {
                step = s.to_string();
            }
            let Some(bs) = cells
                .get(bs_col)
                .and_then(|c| parse_quantity(c))
                .map(|(v, _)| v as u64)
            else {
                out.warnings
                    .push(Warning::at(place, "no batch size, row skipped"));
                continue;
            };
            let idx = match by_batch.iter().position(|(b, _)| *b == bs) {
                Some(i) => i,
                None => {
                    let mut r = Record {
                        engine: Some("tgi".into()),
                        batch_size: Some(bs),
                        ..Record::default()
                    };
                    r.inferred
                        .insert("engine".into(), "TGI benchmark table layout".into());
                    by_batch.push((bs, r));
                    by_batch.len() - 1
                }
            };
            let r = &mut by_batch[idx].1;
            let step_key = snake(&step);
            for (i, h) in t.headers.iter().enumerate() {
                if i == step_col || i == bs_col {
                    continue;
                }
                let Some((v, unit)) = cells.get(i).and_then(|c| parse_quantity(c)) else {
                    continue;
                };
                let stat = snake(h);
                let is_throughput = unit.contains("/s") || unit.contains("sec");
                let key = if is_throughput {
                    match (step_key.as_str(), stat.as_str()) {
                        ("decode" | "decode_token" | "decode_total", "average") => {
                            MetricKey::OutputThroughput
                        }
                        _ => MetricKey::Extra(format!("{step_key}_throughput_{stat}")),
                    }
                } else {
                    let family = match step_key.as_str() {
                        "prefill" => Some(LatencyMetric::Ttft),
                        "decode_token" => Some(LatencyMetric::Tpot),
                        _ => None,
                    };
                    match (
                        family,
                        stat_in(&stat).or((stat == "average").then_some(Stat::Mean)),
                    ) {
                        (Some(f), Some(s)) => MetricKey::Latency(f, s),
                        _ => MetricKey::Extra(format!("{step_key}_latency_{stat}_ms")),
                    }
                };
                let scale = if is_throughput {
                    1.0
                } else {
                    to_ms_factor(unit).unwrap_or(1.0)
                };
                if scale != 1.0 {
                    crate::ingest::fields::note(
                        out,
                        format!("{step} latencies in {unit} converted to ms"),
                    );
                }
                r.set_metric(key, v * scale);
            }
        }
    }
    if by_batch.is_empty() {
        out.note = Some("no records: no TGI table row had a batch size and values".into());
    }
    out.records.extend(by_batch.into_iter().map(|(_, r)| r));
}
