//! genai-perf's raw `profile_export.json` (what perf_analyzer wrote): `experiments[]`, each
//! with its load (`experiment.mode`/`value`) and `requests[]` of `timestamp` (ns),
//! `response_timestamps` (ns) and `response_outputs`. One record per experiment.
//!
//! Timing follows genai-perf: responses without generated text (the role-only first chunk of
//! a chat stream, an empty last delta, `[DONE]`) are not tokens; TTFT runs from the request's
//! timestamp to the first response with text, E2EL to the last one, and the gaps between
//! consecutive responses with text are the request's inter-chunk latencies. Token counts need
//! a tokenizer and are read only where a response carries `usage`.

use serde_json::{Map, Value};

use super::per_request::{ns_of, place_on_clock, plausible_ms, summarise, Stamp, Times, Warnings};
use crate::ingest::fields::{note, place, set_dim_json, set_tag};
use crate::ingest::{Ingested, Warning};
use crate::model::{Dim, Record, RequestDetail};

/// Whether an object is a raw genai-perf export: `experiments` whose first entry has a
/// `requests` list.
pub(crate) fn looks_like(o: &Map<String, Value>) -> bool {
    o.get("experiments")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .is_some_and(|e| e.get("requests").is_some_and(Value::is_array))
}

/// What one response output holds: text or not, and token counts from `usage`.
#[derive(Default)]
struct Output {
    text: bool,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

fn usage_into(v: &Value, out: &mut Output) {
    let Some(u) = v.get("usage").filter(|u| u.is_object()) else {
        return;
    };
    if let Some(n) = u.get("prompt_tokens").and_then(Value::as_u64) {
        out.prompt_tokens = Some(n);
    }
    if let Some(n) = u.get("completion_tokens").and_then(Value::as_u64) {
        out.completion_tokens = Some(n);
    }
}

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// Whether an OpenAI response body (a stream chunk or a whole response) carries text.
fn openai_text(v: &Value) -> bool {
    let Some(choices) = v.get("choices").and_then(Value::as_array) else {
        // Embeddings, rankings and other non-chat bodies: any data counts.
        return v.get("data").is_some_and(|d| !d.is_null());
    };
    choices.iter().any(|c| {
        non_empty_str(c.get("text"))
            || ["delta", "message"].iter().any(|k| {
                c.get(*k).is_some_and(|d| {
                    non_empty_str(d.get("content")) || non_empty_str(d.get("reasoning_content"))
                })
            })
    })
}

fn read_output(v: &Value) -> Output {
    let mut out = Output::default();
    match v {
        Value::Object(o) if o.contains_key("text_output") => {
            out.text = non_empty_str(o.get("text_output"));
        }
        Value::Object(o) => match o.get("response") {
            Some(Value::String(s)) => {
                let body = s.trim();
                if body.starts_with("data:") {
                    // Server-sent events, possibly several merged into one response.
                    for event in body.split("data:").map(str::trim).filter(|e| !e.is_empty()) {
                        if event == "[DONE]" {
                            continue;
                        }
                        if let Ok(chunk) = serde_json::from_str::<Value>(event) {
                            out.text |= openai_text(&chunk);
                            usage_into(&chunk, &mut out);
                        }
                    }
                } else if let Ok(whole) = serde_json::from_str::<Value>(body) {
                    out.text = openai_text(&whole);
                    usage_into(&whole, &mut out);
                } else {
                    out.text = !body.is_empty();
                }
            }
            Some(other) => out.text = !other.is_null(),
            None => out.text = !o.is_empty(),
        },
        Value::Null => {}
        _ => out.text = true,
    }
    out
}

/// The model named in the first request's payload (`request_inputs.payload`, a JSON string).
fn payload_model(requests: &[Value]) -> Option<Value> {
    let payload = requests
        .first()?
        .pointer("/request_inputs/payload")?
        .as_str()?;
    let v: Value = serde_json::from_str(payload).ok()?;
    v.get("model").filter(|m| m.is_string()).cloned()
}

/// genai-perf raw export: one record per experiment.
pub(crate) fn read_genai_perf_raw(o: &Map<String, Value>, at: &str, out: &mut Ingested) {
    let Some(experiments) = o.get("experiments").and_then(Value::as_array) else {
        out.warnings.push(Warning::at(
            place(at, "experiments"),
            "not a list, nothing read",
        ));
        return;
    };
    let mut warn = Warnings::default();
    for (e, exp) in experiments.iter().enumerate() {
        let here = place(at, &format!("experiments[{e}]"));
        let Some(requests) = exp.get("requests").and_then(Value::as_array) else {
            warn.at(place(&here, "requests"), "not a list, experiment skipped");
            continue;
        };
        let mut r = Record::default();
        for k in ["service_kind", "endpoint"] {
            if let Some(v) = o
                .get(k)
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            {
                set_tag(&mut r, k, v);
            }
        }
        if let Some(m) = payload_model(requests) {
            set_dim_json(&mut r, Dim::Model, &m, &here, out);
        }
        let mode = exp.pointer("/experiment/mode").and_then(Value::as_str);
        if let Some(v) = exp.pointer("/experiment/value") {
            let dim = match mode {
                Some("concurrency") => Some(Dim::MaxConcurrency),
                Some("request_rate") => Some(Dim::RequestRate),
                _ => None,
            };
            if let Some(d) = dim {
                set_dim_json(&mut r, d, v, &place(&here, "experiment.value"), out);
            }
        }
        let mut times = Vec::with_capacity(requests.len());
        let mut places = Vec::with_capacity(requests.len());
        for (i, req) in requests.iter().enumerate() {
            let rhere = format!("{here}.requests[{i}]");
            let Some((q, t)) = one(req, &rhere, &mut warn) else {
                continue;
            };
            r.requests.push(q);
            times.push(t);
            places.push(rhere);
        }
        place_on_clock(&mut r.requests, &times, &places, &mut warn);
        if r.requests.is_empty() {
            warn.at(here, "no requests, experiment skipped");
            continue;
        }
        summarise(&mut r);
        out.records.push(r);
    }
    warn.flush(out);
    if !out.records.is_empty() {
        note(
            out,
            "summary computed from the per-request timestamps; token counts only where a response carried usage",
        );
    }
}

fn one(req: &Value, at: &str, warn: &mut Warnings) -> Option<(RequestDetail, Times)> {
    let mut q = RequestDetail::default();
    let Some(o) = req.as_object() else {
        warn.at(at, "not a JSON object, skipped");
        return None;
    };
    let sent = match o.get("timestamp").map(ns_of) {
        Some(Ok(n)) => Some(n),
        Some(Err(why)) => {
            warn.at(format!("{at}.timestamp"), format!("{why}, ignored"));
            None
        }
        None => {
            warn.at(at, "no \"timestamp\", left off the timeline");
            None
        }
    };
    let stamps: Vec<Option<i128>> = match o.get("response_timestamps") {
        Some(Value::Array(items)) => items.iter().map(|v| ns_of(v).ok()).collect(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            warn.at(format!("{at}.response_timestamps"), "not a list, ignored");
            Vec::new()
        }
    };
    if stamps.iter().any(Option::is_none) {
        warn.at(
            format!("{at}.response_timestamps"),
            "entries that are not timestamps in ns, left out",
        );
    }
    let outputs: Vec<Output> = match o.get("response_outputs") {
        Some(Value::Array(items)) => items.iter().map(read_output).collect(),
        _ => Vec::new(),
    };
    let paired = outputs.len() == stamps.len();
    if !paired && !outputs.is_empty() {
        warn.at(
            format!("{at}.response_outputs"),
            format!(
                "{} outputs for {} timestamps; every response counted as text",
                outputs.len(),
                stamps.len()
            ),
        );
    }
    for o in &outputs {
        q.input_len = o.prompt_tokens.or(q.input_len);
        q.output_len = o.completion_tokens.or(q.output_len);
    }
    let text: Vec<i128> = stamps
        .iter()
        .enumerate()
        .filter(|(i, _)| !paired || outputs.get(*i).is_some_and(|o| o.text))
        .filter_map(|(_, s)| *s)
        .collect();
    if text.windows(2).any(|w| w[1] < w[0]) {
        warn.at(
            format!("{at}.response_timestamps"),
            "not in increasing order, inter-chunk latencies left out",
        );
    } else {
        q.itl_ms = text
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / 1e6)
            .filter(|ms| plausible_ms(*ms).is_ok())
            .collect();
    }
    if let Some(s) = sent {
        let mut ms = |t: i128| -> Option<f64> {
            match plausible_ms((t - s) as f64 / 1e6) {
                Ok(ms) => Some(ms),
                Err(why) => {
                    warn.at(
                        format!("{at}.response_timestamps"),
                        format!("response minus request timestamp {why}, latencies left out"),
                    );
                    None
                }
            }
        };
        if let (Some(first), Some(last)) = (text.first(), text.last()) {
            q.ttft_ms = ms(*first);
            q.e2el_ms = q.ttft_ms.and_then(|_| ms(*last));
        }
    }
    let t = Times {
        intended: None,
        sent: sent.map(Stamp::Ns),
    };
    Some((q, t))
}
