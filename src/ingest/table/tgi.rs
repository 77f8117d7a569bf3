//! TGI `text-generation-benchmark` tables: one record per batch size from the per-step
//! latency and throughput rows.

use super::columns::stat_in;
use super::markdown_tables;
use crate::ingest::text::{parse_quantity, snake, to_ms_factor};
use crate::ingest::{Ingested, Warning};
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

/// TGI `text-generation-benchmark` tables: `Step | Batch Size | Average | Lowest | Highest |
/// p50 | p90 | p99`, merged Step cells left blank (filled down), values with units. One record
/// per batch size: prefill latency → TTFT, decode (token) latency → TPOT, decode throughput →
/// output throughput; the rest under `extra.*`.
///
/// The benchmark's own `Parameter | Value` table gives every record its model and lengths
/// (`Model`, `Sequence Length` → input length, `Decode Length` → output length). A blank batch
/// size is the one of the row above (one batch size, printed once per step group).
pub(crate) fn read_tgi(text: &str, out: &mut Ingested) {
    let mut by_batch: Vec<(u64, Record)> = Vec::new();
    let mut settings: Vec<(Dim, DimValue, usize)> = Vec::new();
    for t in markdown_tables(text) {
        let col = |name: &str| t.headers.iter().position(|h| h.eq_ignore_ascii_case(name));
        if let (Some(p), Some(v)) = (col("Parameter"), col("Value")) {
            for (line, cells) in &t.rows {
                let (Some(name), Some(value)) = (cells.get(p), cells.get(v)) else {
                    continue;
                };
                let setting = match name.to_ascii_lowercase().as_str() {
                    "model" => Some((Dim::Model, DimValue::Text(value.to_string()))),
                    "sequence length" => {
                        parse_quantity(value).map(|(n, _)| (Dim::InputLen, DimValue::Num(n)))
                    }
                    "decode length" => {
                        parse_quantity(value).map(|(n, _)| (Dim::OutputLen, DimValue::Num(n)))
                    }
                    _ => None,
                };
                if let Some((d, value)) = setting {
                    settings.push((d, value, *line));
                }
            }
            continue;
        }
        let (Some(step_col), Some(bs_col)) = (col("Step"), col("Batch Size")) else {
            continue;
        };
        let mut step = String::new();
        let mut batch: Option<u64> = None;
        for (line, cells) in &t.rows {
            let place = format!("line {line}");
            if let Some(s) = cells.get(step_col).filter(|s| !s.is_empty()) {
                step = s.to_string();
            }
            let cell = cells.get(bs_col).map(str::trim).unwrap_or_default();
            let read = parse_quantity(cell).map(|(v, _)| v as u64);
            let Some(bs) = read.or(batch.filter(|_| cell.is_empty())) else {
                out.warnings
                    .push(Warning::at(place, "no batch size, row skipped"));
                continue;
            };
            batch = Some(bs);
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
    out.records.extend(by_batch.into_iter().map(|(_, mut r)| {
        for (d, v, line) in &settings {
            if !r.has_known(*d) && r.set_known(*d, Some(v.clone())).is_ok() {
                r.inferred
                    .insert(d.name().to_string(), format!("parameter table line {line}"));
            }
        }
        r
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout of a real `text-generation-benchmark` report: its parameter table, then
    /// one batch size printed once per step group.
    #[test]
    fn parameters_and_a_batch_size_printed_once() {
        let text = "\
| Parameter          | Value                 |
|--------------------|-----------------------|
| Model              | bigscience/mt0-xxl-mt |
| Sequence Length    | 500                   |
| Decode Length      | 1000                  |
| N Runs             | 10                    |

| Step           | Batch Size | Average      | Lowest       | Highest      | p50          | p90          | p99          |
|----------------|------------|--------------|--------------|--------------|--------------|--------------|--------------|
| Prefill        | 16         | 958.80 ms    | 946.70 ms    | 970.90 ms    | 970.90 ms    | 970.90 ms    | 970.90 ms    |
| Decode (token) |            | 121.88 ms    | 121.88 ms    | 121.88 ms    | 121.88 ms    | 121.88 ms    | 121.88 ms    |

| Step    | Batch Size | Average            | Lowest             | Highest            |
|---------|------------|--------------------|--------------------|--------------------|
| Prefill | 16         | 16.69 tokens/secs  | 16.48 tokens/secs  | 16.90 tokens/secs  |
| Decode  |            | 131.28 tokens/secs | 131.28 tokens/secs | 131.28 tokens/secs |
";
        let mut out = Ingested::new(crate::ingest::Format::TgiBenchmark);
        read_tgi(text, &mut out);
        assert_eq!(out.records.len(), 1, "{:?}", out.warnings);
        let r = &out.records[0];
        assert_eq!(r.batch_size, Some(16));
        assert_eq!(r.model.as_deref(), Some("bigscience/mt0-xxl-mt"));
        assert_eq!((r.input_len, r.output_len), (Some(500.0), Some(1000.0)));
        assert_eq!(r.inferred["model"], "parameter table line 3");
        assert_eq!(
            r.metric(&MetricKey::Latency(LatencyMetric::Tpot, Stat::Mean)),
            Some(121.88)
        );
        assert_eq!(r.metric(&MetricKey::OutputThroughput), Some(131.28));
        assert!(out
            .warnings
            .iter()
            .all(|w| !w.message.contains("row skipped")));
    }
}
