//! vLLM serving JSON (`benchmark_serving.py --save-result`, `vllm bench serve`) and SGLang
//! `bench_serving` JSON Lines: one object per run, mapped key by key onto a [`Record`].
//!
//! Summary keys map to canonical metrics (`mean_ttft_ms`, any `p{P}_{m}_ms`, SGLang's
//! `*_e2e_latency_ms` → `*_e2el_ms`), run settings to dimensions (`model_id` → model,
//! `duration` → `duration_s`, `"inf"` request rate), the per-request arrays (`input_lens`,
//! `output_lens`, `ttfts` and `itls` in seconds, `errors`, `start_times` counted from the first,
//! and beside them `latencies` as each successful request's E2EL) to per-request columns in ms
//! ([`columns::RequestArrays`], rebuilt into the record unless the reader keeps them apart), and
//! unknown top-level scalars (`--metadata k=v`) to tags (or to the dimension of that name).

use serde_json::{Map, Value};

use super::fields::{
    lengths_from_totals, place, place_into, serving_metric_name, set_dim_json, set_metric_json,
    set_named,
};
use super::requests::RequestArrays;
use super::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::columns::{self, NumberLists, RequestField};
use crate::model::{Dim, MetricKey, Record};

/// A run object's fields, in the file's order: from a parsed map ([`read_map`]) or straight
/// from the text ([`super::requests::FlatDoc`], a million JSON lines without a map a line).
pub(crate) type Fields<'a> = [(&'a str, &'a Value)];

/// The value of field `key`.
fn get<'a>(o: &Fields<'a>, key: &str) -> Option<&'a Value> {
    o.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn contains_key(o: &Fields<'_>, key: &str) -> bool {
    o.iter().any(|(k, _)| *k == key)
}

/// [`read_object`] of an object parsed into a map.
pub(crate) fn read_map(
    o: &Map<String, Value>,
    arrays: Option<Box<RequestArrays>>,
    at: &str,
    out: &mut Ingested,
) {
    let fields: Vec<(&str, &Value)> = o.iter().map(|(k, v)| (k.as_str(), v)).collect();
    read_object(&fields, arrays, at, out);
}

/// Reads one serving-run object into a record.
pub(crate) fn read_object(
    o: &Fields<'_>,
    arrays: Option<Box<RequestArrays>>,
    at: &str,
    out: &mut Ingested,
) {
    let mut r = Record::default();
    // Where each field stands, for a warning: one buffer for all of them.
    let mut here = String::new();
    let mut random_in: Option<&Value> = None;
    let mut random_out: Option<&Value> = None;
    let mut sharegpt_out: Option<&Value> = None;
    let mut has_framework = false;
    // Whether a per-request array's key is there (read below, unless lifted already).
    let mut array_keys = false;
    for &(key, v) in o {
        here.clear();
        place_into(&mut here, at, key);
        let here = here.as_str();
        match key {
            "model_id" | "model" | "model_name" => set_dim_json(&mut r, Dim::Model, v, here, out),
            "framework" => {
                has_framework = true;
                set_dim_json(&mut r, Dim::Engine, v, here, out);
            }
            // vLLM's client writes the protocol it spoke (`openai`, `openai-chat`): that names
            // no engine, and is kept as a tag; an engine's name (`vllm`, `sglang`) is the engine.
            "backend" if client_protocol(v) => set_named(&mut r, "backend", v, here, out),
            "backend" => {
                if !has_framework && !contains_key(o, "framework") {
                    set_dim_json(&mut r, Dim::Engine, v, here, out);
                }
            }
            "tokenizer_id" => {
                if v.as_str().is_some() && v != get(o, "model_id").unwrap_or(&Value::Null) {
                    set_named(&mut r, "tokenizer_id", v, here, out);
                }
            }
            "date" => set_dim_json(&mut r, Dim::Date, v, here, out),
            "label" => set_dim_json(&mut r, Dim::Label, v, here, out),
            "num_prompts" => set_dim_json(&mut r, Dim::NumPrompts, v, here, out),
            "request_rate" => set_dim_json(&mut r, Dim::RequestRate, v, here, out),
            "burstiness" => set_dim_json(&mut r, Dim::Burstiness, v, here, out),
            "max_concurrency" => set_dim_json(&mut r, Dim::MaxConcurrency, v, here, out),
            "dataset_name" | "dataset" => set_dim_json(&mut r, Dim::Dataset, v, here, out),
            "random_input_len" => random_in = Some(v),
            "random_output_len" => random_out = Some(v),
            "sharegpt_output_len" => sharegpt_out = Some(v),
            "duration" => set_metric_json(&mut r, MetricKey::DurationS, v, 1.0, here, out),
            "completed" => set_metric_json(&mut r, MetricKey::Completed, v, 1.0, here, out),
            "failed" => set_metric_json(&mut r, MetricKey::Failed, v, 1.0, here, out),
            "request_goodput:" => {
                set_metric_json(&mut r, MetricKey::RequestGoodput, v, 1.0, here, out)
            }
            "total_throughput" => {
                set_metric_json(&mut r, MetricKey::TotalTokenThroughput, v, 1.0, here, out)
            }
            // Older SGLang `bench_serving` lines say `total_generated_tokens`: the same total.
            "total_generated_tokens" if !contains_key(o, "total_output_tokens") => set_metric_json(
                &mut r,
                MetricKey::Extra("total_output_tokens".into()),
                v,
                1.0,
                here,
                out,
            ),
            "total_input_tokens"
            | "total_output_tokens"
            | "total_generated_tokens"
            | "max_output_tokens_per_s"
            | "max_concurrent_requests"
            | "total_output_tokens_retokenized"
            | "concurrency"
            | "accept_length" => {
                set_metric_json(&mut r, MetricKey::Extra(key.into()), v, 1.0, here, out)
            }
            "input_lens" | "output_lens" | "ttfts" | "itls" | "errors" | "start_times" => {
                array_keys = true;
            }
            "generated_texts" => {}
            // Read with the other per-request arrays below, when they are there.
            "latencies" if has_request_arrays(arrays.as_deref(), o) => {}
            _ => {
                if let Some(metric) = serving_metric_name(key) {
                    set_metric_json(&mut r, metric, v, 1.0, here, out);
                } else if run_clock(key, v) {
                    // A start time differs from run to run: as a tag it would make each run a
                    // configuration of its own, so repeated runs never compare.
                    out.warnings.push(Warning::at(
                        here,
                        "a clock reading of the run, not a setting: ignored",
                    ));
                } else if matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                    // A scalar (what `scalar_text` gives a tag of).
                    set_named(&mut r, key, v, here, out);
                } else if !v.is_null() {
                    out.warnings
                        .push(Warning::at(here, "unknown field, ignored"));
                }
            }
        }
    }
    // SGLang names the load's lengths by dataset.
    let dataset = r.dataset.as_deref().unwrap_or_default().to_string();
    if dataset == "random" || dataset.is_empty() {
        if let Some(v) = random_in {
            set_dim_json(
                &mut r,
                Dim::InputLen,
                v,
                &place(at, "random_input_len"),
                out,
            );
        }
        if let Some(v) = random_out {
            set_dim_json(
                &mut r,
                Dim::OutputLen,
                v,
                &place(at, "random_output_len"),
                out,
            );
        }
    } else {
        for (k, v) in [
            ("random_input_len", random_in),
            ("random_output_len", random_out),
        ] {
            if let Some(v) = v {
                set_named(&mut r, k, v, &place(at, k), out);
            }
        }
    }
    if dataset == "sharegpt" {
        if let Some(v) = sharegpt_out {
            set_dim_json(
                &mut r,
                Dim::OutputLen,
                v,
                &place(at, "sharegpt_output_len"),
                out,
            );
        }
    }
    // Per-request detail: only where a per-request array's key is (a lifted array keeps its
    // key), so a run summary (a line of JSON Lines) builds no empty columns.
    let mut requests = None;
    if array_keys {
        let latencies = get(o, "latencies").filter(|_| has_request_arrays(arrays.as_deref(), o));
        let arrays = match arrays {
            Some(a) => *a,
            None => arrays_from_object(o),
        };
        let got = request_columns(arrays, latencies, at, out);
        if got.has_gaps() || got.ttft_ms().any(|t| t.is_some()) {
            super::fields::note(out, "per-request ttfts and itls converted from s to ms");
        }
        requests = Some(got).filter(|r| r.total() > 0);
    }
    lengths_from_totals(
        &mut r,
        ["total_input_tokens", "total_output_tokens", "completed"],
    );
    if let Some(requests) = requests {
        out.keep_requests(&mut r, requests);
    }
    out.records.push(r);
}

/// Whether a `backend` names the client's protocol (`openai`, `openai-chat`, `openai-audio`)
/// rather than an engine.
fn client_protocol(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|b| b == "openai" || b.starts_with("openai-"))
}

/// Whether an unknown field is a wall-clock reading of the run (`"global_start_timestamp":
/// 1758040937.14`, `"unified_start_time": "1758040929.12"`): named as a time and holding Unix
/// seconds (2001 to 2286).
fn run_clock(key: &str, v: &Value) -> bool {
    let k = key.to_ascii_lowercase();
    let named = k.ends_with("timestamp") || k.ends_with("_time") || k.ends_with("_ts");
    let seconds = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    named && seconds.is_some_and(|s| (1e9..1e10).contains(&s))
}

/// Whether the run carries per-request arrays beside `latencies` (vLLM's `--save-detailed`).
fn has_request_arrays(arrays: Option<&RequestArrays>, o: &Fields<'_>) -> bool {
    arrays.is_some_and(|a| !a.is_empty())
        || ["input_lens", "output_lens", "ttfts", "itls", "start_times"]
            .iter()
            .any(|k| get(o, k).is_some_and(Value::is_array))
}

/// The per-request arrays (seconds, as the file has them) as the columns of one row of
/// requests in ms, built field by field from the parsed arrays (never a [`RequestDetail`]
/// per request: a run of millions of requests stays a few bytes a value). Beside them
/// vLLM's `latencies` (always written; 0 for a failed request) give each successful
/// request's E2EL when there is one per request.
///
/// [`RequestDetail`]: crate::model::RequestDetail
fn request_columns(
    a: RequestArrays,
    latencies: Option<&Value>,
    at: &str,
    out: &mut Ingested,
) -> columns::RequestArrays {
    for k in &a.malformed {
        out.warnings.push(Warning::at(
            place(at, k),
            "not an array of the expected shape, ignored",
        ));
    }
    let lens: Vec<usize> = [
        a.input_lens.as_ref().map(Vec::len),
        a.output_lens.as_ref().map(Vec::len),
        a.ttfts.as_ref().map(Vec::len),
        a.itls.as_ref().map(Vec::len),
        a.errors.as_ref().map(Vec::len),
    ]
    .into_iter()
    .flatten()
    .collect();
    let n = lens.iter().copied().max().unwrap_or(0);
    if lens.iter().any(|l| *l != n) {
        out.warnings.push(Warning::at(
            place(at, "input_lens"),
            format!("per-request arrays differ in length ({lens:?}); missing entries left empty"),
        ));
    }
    let mut requests = columns::RequestArrays::one_row(n);
    let failed = |q: usize| {
        a.errors
            .as_ref()
            .is_some_and(|e| e.get(q).is_some_and(Option::is_some))
    };
    if let Some(v) = latencies.filter(|v| !v.is_null()) {
        match v.as_array().filter(|items| items.len() == n) {
            Some(items) => {
                let e2el = items
                    .iter()
                    .enumerate()
                    .map(|(q, item)| {
                        number_from_json(item)
                            .filter(|s| s.is_finite() && *s > 0.0 && !failed(q))
                            .map_or(f64::NAN, |s| s * 1000.0)
                    })
                    .collect();
                requests.set_numbers(RequestField::E2elMs, e2el);
            }
            None => out.warnings.push(Warning::at(
                place(at, "latencies"),
                "not one number per request, ignored",
            )),
        }
    }
    if n == 0 {
        return requests;
    }
    if let Some(v) = a.input_lens {
        requests.set_numbers(RequestField::InputLen, v);
    }
    if let Some(v) = a.output_lens {
        requests.set_numbers(RequestField::OutputLen, v);
    }
    if let Some(mut v) = a.ttfts {
        v.iter_mut().for_each(|s| *s *= 1000.0);
        requests.set_numbers(RequestField::TtftMs, v);
    }
    // vLLM's start times are readings of a clock of its own: counted from the first send.
    if let Some(mut v) = a.start_times {
        let first = v
            .iter()
            .copied()
            .filter(|s| s.is_finite())
            .fold(f64::INFINITY, f64::min);
        v.iter_mut()
            .for_each(|s| *s = if s.is_finite() { *s - first } else { f64::NAN });
        requests.set_numbers(RequestField::SentS, v);
    }
    if let Some(errors) = &a.errors {
        requests.set_errors(errors.iter().map(Option::as_deref));
    }
    if let Some(itls) = a.itls {
        let mut lists = NumberLists::new();
        for gaps in itls {
            lists.push_iter(gaps.iter().map(|s| s * 1000.0));
        }
        requests.set_gaps(lists);
    }
    requests
}

/// The per-request arrays of a run object that was parsed whole into a `Value` (JSON Lines,
/// lists), in the same shape the streaming scanner produces, so [`request_columns`] serves both.
fn arrays_from_object(o: &Fields<'_>) -> RequestArrays {
    let mut a = RequestArrays::default();
    let mut list = |key: &str| match get(o, key) {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(items),
        Some(_) => {
            a.malformed.push(key.to_string());
            None
        }
    };
    let numbers = |items: &Vec<Value>| {
        items
            .iter()
            .map(|v| number_from_json(v).unwrap_or(f64::NAN))
            .collect::<Vec<_>>()
    };
    let input_lens = list("input_lens").map(numbers);
    let output_lens = list("output_lens").map(numbers);
    let ttfts = list("ttfts").map(numbers);
    let itls = list("itls").map(|items| {
        items
            .iter()
            .map(|gaps| {
                gaps.as_array()
                    .map(|g| g.iter().filter_map(number_from_json).collect())
                    .unwrap_or_default()
            })
            .collect()
    });
    let start_times = list("start_times").map(numbers);
    let errors = list("errors").map(|items| {
        items
            .iter()
            .map(|e| e.as_str().filter(|e| !e.is_empty()).map(str::to_string))
            .collect()
    });
    RequestArrays {
        input_lens,
        output_lens,
        ttfts,
        itls,
        errors,
        start_times,
        ..a
    }
}
