//! vLLM's offline benchmarks: `vllm bench latency` and `vllm bench throughput`
//! `--output-json` files (latencies in seconds).

use serde_json::{Map, Value};

use super::{push, unknown};
use crate::ingest::fields::{place, set_dim_json, set_metric_json};
use crate::ingest::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{Dim, LatencyMetric, MetricKey, Percentile, Record, RequestDetail, Stat};

/// `vllm bench latency --output-json`: `avg_latency`, `latencies`, `percentiles` (seconds).
pub(crate) fn read_vllm_latency(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record {
        engine: Some("vllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "vLLM latency JSON layout".into());
    crate::ingest::fields::note(out, "latencies converted from s to ms (end-to-end latency)");
    let e2el = |s: Stat| MetricKey::Latency(LatencyMetric::E2el, s);
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "avg_latency" => set_metric_json(&mut r, e2el(Stat::Mean), v, 1000.0, &here, out),
            "percentiles" => match v.as_object() {
                Some(p) => {
                    for (pk, pv) in p {
                        match pk.parse::<f64>().ok().and_then(Percentile::new) {
                            Some(pc) => set_metric_json(
                                &mut r,
                                e2el(Stat::P(pc)),
                                pv,
                                1000.0,
                                &place(&here, pk),
                                out,
                            ),
                            None => out
                                .warnings
                                .push(Warning::at(place(&here, pk), "not a percentile, ignored")),
                        }
                    }
                }
                None => out
                    .warnings
                    .push(Warning::at(here, "not an object, ignored")),
            },
            "latencies" => {
                if let Some(a) = v.as_array() {
                    r.requests = a
                        .iter()
                        .map(|s| RequestDetail {
                            e2el_ms: number_from_json(s).map(|s| s * 1000.0),
                            ..RequestDetail::default()
                        })
                        .collect();
                }
            }
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            "batch_size" => set_dim_json(&mut r, Dim::BatchSize, v, &here, out),
            "input_len" => set_dim_json(&mut r, Dim::InputLen, v, &here, out),
            "output_len" => set_dim_json(&mut r, Dim::OutputLen, v, &here, out),
            "tensor_parallel_size" => set_dim_json(&mut r, Dim::Tp, v, &here, out),
            _ => unknown(&mut r, k, v, &here, out),
        }
    }
    push(out, r);
}

/// `vllm bench throughput --output-json`.
pub(crate) fn read_vllm_throughput(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let mut r = Record {
        engine: Some("vllm".into()),
        ..Record::default()
    };
    r.inferred
        .insert("engine".into(), "vLLM throughput JSON layout".into());
    for (k, v) in o {
        let here = place(at, k);
        match k.as_str() {
            "elapsed_time" => set_metric_json(&mut r, MetricKey::DurationS, v, 1.0, &here, out),
            "num_requests" => {
                set_dim_json(&mut r, Dim::NumPrompts, v, &here, out);
                set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &here, out);
            }
            "total_num_tokens" => set_metric_json(
                &mut r,
                MetricKey::Extra("total_num_tokens".into()),
                v,
                1.0,
                &here,
                out,
            ),
            "requests_per_second" => {
                set_metric_json(&mut r, MetricKey::RequestThroughput, v, 1.0, &here, out)
            }
            // Prompt and output tokens over the elapsed time.
            "tokens_per_second" => {
                set_metric_json(&mut r, MetricKey::TotalTokenThroughput, v, 1.0, &here, out)
            }
            "output_tokens_per_second" => {
                set_metric_json(&mut r, MetricKey::OutputThroughput, v, 1.0, &here, out)
            }
            "elapsed_time_ms" => {
                set_metric_json(&mut r, MetricKey::DurationS, v, 0.001, &here, out)
            }
            "total_num_input_tokens" | "total_prompt_tokens" => set_metric_json(
                &mut r,
                MetricKey::Extra("total_input_tokens".into()),
                v,
                1.0,
                &here,
                out,
            ),
            "total_num_output_tokens" | "total_output_tokens" => set_metric_json(
                &mut r,
                MetricKey::Extra("total_output_tokens".into()),
                v,
                1.0,
                &here,
                out,
            ),
            "model" => set_dim_json(&mut r, Dim::Model, v, &here, out),
            _ => unknown(&mut r, k, v, &here, out),
        }
    }
    crate::ingest::fields::lengths_from_totals(
        &mut r,
        [
            "total_num_input_tokens",
            "total_num_output_tokens",
            "num_requests",
        ],
    );
    push(out, r);
}

#[cfg(test)]
mod tests {
    use crate::ingest::{read, Format};
    use crate::model::MetricKey;

    /// The layouts `vllm bench throughput --output-json` has written: the first five keys,
    /// then token totals split by kind, output tokens a second, the time in ms.
    #[test]
    fn throughput_json_of_every_layout_read_value_for_value() {
        let got = read(
            "throughput.json",
            br#"{"dataset_basename": "Synthetic-hi", "elapsed_time_ms": 25800.0,
            "num_requests": 1000, "total_num_input_tokens": 256000,
            "total_num_output_tokens": 128000, "total_num_tokens": 384000,
            "requests_per_second": 38.76, "tokens_per_second": 14883.7,
            "output_tokens_per_second": 4961.2}"#,
        )
        .unwrap();
        assert_eq!(got.format, Format::VllmThroughput);
        let r = &got.records[0];
        let m = |n: &str| r.metric(&MetricKey::from_name(n).unwrap());
        assert_eq!(m("duration_s"), Some(25.8));
        assert_eq!(m("request_throughput"), Some(38.76));
        assert_eq!(m("total_token_throughput"), Some(14883.7));
        assert_eq!(m("output_throughput"), Some(4961.2));
        assert_eq!(m("completed"), Some(1000.0));
        assert_eq!(m("extra.total_num_tokens"), Some(384000.0));
        assert_eq!((r.input_len, r.output_len), (Some(256.0), Some(128.0)));
        assert!(r.is_inferred("input_len"));
        assert!(r.tags.is_empty() || !r.tags.contains_key("output_tokens_per_second"));
    }
}
