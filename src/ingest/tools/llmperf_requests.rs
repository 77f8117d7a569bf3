//! llmperf's `*_individual_responses.json`: a list with one object per request (latencies in
//! seconds: `ttft_s`, `end_to_end_latency_s`, the request's mean `inter_token_latency_s`;
//! token counts; `error_code`/`error_msg`; newer versions add `start_time`/`end_time` in Unix
//! seconds). Read as one record whose requests carry them in ms, its summary computed from
//! them as for the other per-request exports ([`super::per_request::summarise`]).

use serde_json::{Map, Value};

use super::per_request::{
    failure_kind, place_on_clock, plausible_ms, seconds_of, summarise, Stamp, Times, Warnings,
};
use crate::ingest::fields::note;
use crate::ingest::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{MetricKey, Record, RequestDetail};

/// Whether an object is one request of llmperf's individual responses.
pub(super) fn looks_like(o: &Map<String, Value>) -> bool {
    o.contains_key("ttft_s")
        && o.contains_key("end_to_end_latency_s")
        && (o.contains_key("number_output_tokens") || o.contains_key("error_code"))
}

fn count(v: Option<&Value>) -> Option<u64> {
    number_from_json(v?)
        .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as u64)
}

/// All the file's requests (one list, or several documents) into one record.
pub(crate) fn read_llmperf_requests(values: &[(usize, Value)], out: &mut Ingested) {
    let mut r = Record::default();
    let mut times = Vec::new();
    let mut places = Vec::new();
    let mut warn = Warnings::default();
    let mut itl_means = Vec::new();
    let items = values.iter().flat_map(|(line, v)| match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (format!("[{i}]"), x))
            .collect::<Vec<_>>(),
        other => vec![(format!("line {line}"), other)],
    });
    for (at, item) in items {
        let Some(o) = item.as_object() else {
            warn.at(at, "not a JSON object, skipped");
            continue;
        };
        let mut q = RequestDetail::default();
        let ms = |key: &str, warn: &mut Warnings| -> Option<f64> {
            let s = number_from_json(o.get(key)?)?;
            match plausible_ms(s * 1000.0) {
                Ok(v) => Some(v),
                Err(why) => {
                    warn.at(format!("{at}.{key}"), format!("{why}, ignored"));
                    None
                }
            }
        };
        q.ttft_ms = ms("ttft_s", &mut warn);
        q.e2el_ms = ms("end_to_end_latency_s", &mut warn);
        q.input_len = count(o.get("number_input_tokens"));
        q.output_len = count(o.get("number_output_tokens"));
        let code = o.get("error_code").and_then(Value::as_i64);
        let msg = o
            .get("error_msg")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty());
        if code.is_some() || msg.is_some() {
            q.error = Some(msg.map_or_else(
                || format!("error code {}", code.unwrap_or_default()),
                str::to_string,
            ));
            q.error_kind = failure_kind(code, None);
            // A failed request's zeros are no measurement.
            q.ttft_ms = None;
            q.e2el_ms = None;
        } else if let Some(itl) = ms("inter_token_latency_s", &mut warn) {
            itl_means.push(itl);
        }
        let sent = o
            .get("start_time")
            .and_then(|v| seconds_of(v).ok())
            .map(Stamp::S);
        times.push(Times {
            intended: None,
            sent,
        });
        places.push(at);
        r.requests.push(q);
    }
    place_on_clock(&mut r.requests, &times, &places, &mut warn);
    summarise(&mut r);
    if !itl_means.is_empty() {
        let mean = itl_means.iter().sum::<f64>() / itl_means.len() as f64;
        r.set_metric(
            MetricKey::Extra("mean_request_inter_token_latency_ms".into()),
            mean,
        );
    }
    note(
        out,
        "llmperf per-request latencies converted from s to ms; the summary is computed from the requests",
    );
    warn.flush(out);
    if r.requests.is_empty() {
        out.warnings
            .push(Warning::file("no request objects, nothing read"));
        return;
    }
    out.records.push(r);
}

#[cfg(test)]
mod tests {
    use crate::ingest::{read, Format};
    use crate::model::MetricKey;

    /// Three requests as llmperf writes them (the third failed with llmperf's zeros); the
    /// file name gives the model and the lengths.
    #[test]
    fn individual_responses_are_requests_and_failed_ones_measure_nothing() {
        let text = br#"[
 {"error_code": null, "error_msg": "", "inter_token_latency_s": 0.010063429028516459,
  "ttft_s": 0.05724931800068589, "end_to_end_latency_s": 1.05680307700095,
  "request_output_throughput_token_per_s": 99.3562587818862, "number_total_tokens": 357,
  "number_output_tokens": 105, "number_input_tokens": 252},
 {"error_code": null, "error_msg": "", "inter_token_latency_s": 0.011119221556918532,
  "ttft_s": 0.16580839300877415, "end_to_end_latency_s": 1.078680176011403,
  "request_output_throughput_token_per_s": 90.1, "number_total_tokens": 350,
  "number_output_tokens": 100, "number_input_tokens": 250},
 {"error_code": 500, "error_msg": "Internal Server Error", "inter_token_latency_s": 0,
  "ttft_s": 0, "end_to_end_latency_s": 0, "request_output_throughput_token_per_s": 0,
  "number_total_tokens": 250, "number_output_tokens": 0, "number_input_tokens": 250}
]"#;
        let got = read(
            "meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json",
            text,
        )
        .unwrap();
        assert_eq!(got.format, Format::LlmperfRequests);
        assert_eq!(got.records.len(), 1);
        let r = &got.records[0];
        assert_eq!(r.requests.len(), 3);
        assert!((r.requests[0].ttft_ms.unwrap() - 57.24931800068589).abs() < 1e-9);
        assert_eq!(r.requests[2].ttft_ms, None);
        assert_eq!(r.requests[2].error_kind.as_deref(), Some("http_500"));
        let m = |n: &str| r.metric(&MetricKey::from_name(n).unwrap());
        assert_eq!(m("completed"), Some(2.0));
        assert_eq!(m("failed"), Some(1.0));
        let mean_ttft = (57.24931800068589 + 165.80839300877415) / 2.0;
        assert!((m("mean_ttft_ms").unwrap() - mean_ttft).abs() < 1e-9);
        assert!(
            (m("extra.mean_request_inter_token_latency_ms").unwrap()
                - (10.063_429_028_516_46 + 11.119_221_556_918_532) / 2.0)
                .abs()
                < 1e-9
        );
        assert_eq!(r.input_len, Some(251.0));
    }

    /// A run whose every request failed has no TTFT at all, never 0 ms.
    #[test]
    fn all_failed_gives_no_latency() {
        let text = br#"[{"error_code": 503, "error_msg": "busy", "inter_token_latency_s": 0,
          "ttft_s": 0, "end_to_end_latency_s": 0, "number_output_tokens": 0,
          "number_input_tokens": 10}]"#;
        let got = read("x_individual_responses.json", text).unwrap();
        let r = &got.records[0];
        assert_eq!(
            r.metric(&MetricKey::from_name("mean_ttft_ms").unwrap()),
            None
        );
        assert_eq!(r.metric(&MetricKey::Failed), Some(1.0));
        assert_eq!(r.metric(&MetricKey::Completed), Some(0.0));
    }
}
