//! Hugging Face inference-benchmarker JSON: one record per `results[]` entry.

use serde_json::{Map, Value};

use super::push;
use crate::ingest::fields::{
    latency_family, place, set_dim_json, set_metric_json, set_tag, stat_name,
};
use crate::ingest::text::snake;
use crate::ingest::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{Dim, MetricKey, Record};

/// HF inference-benchmarker JSON: `config.model_name`, one record per `results[]` entry.
pub(crate) fn read_hf(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let model = o
        .get("config")
        .and_then(|c| c.get("model_name").or_else(|| c.get("model")))
        .cloned();
    let Some(results) = o.get("results").and_then(Value::as_array) else {
        return;
    };
    for (i, res) in results.iter().enumerate() {
        let here = place(at, &format!("results[{i}]"));
        let Some(ro) = res.as_object() else {
            out.warnings
                .push(Warning::at(here, "not an object, skipped"));
            continue;
        };
        let mut r = Record::default();
        if let Some(m) = &model {
            set_dim_json(&mut r, Dim::Model, m, &here, out);
        }
        for (k, v) in ro {
            let kh = place(&here, k);
            match k.as_str() {
                "id" => set_dim_json(&mut r, Dim::Label, v, &kh, out),
                "executor_type" => set_tag(&mut r, "executor", v),
                "config" => {
                    if let Some(rate) = v.get("rate") {
                        set_dim_json(&mut r, Dim::RequestRate, rate, &place(&kh, "rate"), out);
                    }
                    if let Some(vus) = v.get("max_vus") {
                        set_dim_json(
                            &mut r,
                            Dim::MaxConcurrency,
                            vus,
                            &place(&kh, "max_vus"),
                            out,
                        );
                    }
                }
                "successful_requests" => {
                    set_metric_json(&mut r, MetricKey::Completed, v, 1.0, &kh, out)
                }
                "failed_requests" => set_metric_json(&mut r, MetricKey::Failed, v, 1.0, &kh, out),
                "request_rate" => {
                    set_metric_json(&mut r, MetricKey::RequestThroughput, v, 1.0, &kh, out)
                }
                "token_throughput_secs" => {
                    set_metric_json(&mut r, MetricKey::OutputThroughput, v, 1.0, &kh, out)
                }
                "duration_ms" => set_metric_json(&mut r, MetricKey::DurationS, v, 0.001, &kh, out),
                _ => {
                    let family = latency_family(k);
                    if let (Some(f), Some(d)) = (family, v.as_object()) {
                        for (stat, sv) in d {
                            if let Some(s) = stat_name(stat) {
                                set_metric_json(
                                    &mut r,
                                    MetricKey::Latency(f, s),
                                    sv,
                                    1.0,
                                    &place(&kh, stat),
                                    out,
                                );
                            }
                        }
                    } else if number_from_json(v).is_some() {
                        set_metric_json(&mut r, MetricKey::Extra(snake(k)), v, 1.0, &kh, out);
                    } else if !v.is_null() && !v.is_object() && !v.is_array() {
                        set_tag(&mut r, k, v);
                    }
                }
            }
        }
        push(out, r);
    }
}
