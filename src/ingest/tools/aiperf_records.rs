//! AIPerf `profile_export.jsonl`: one JSON object per request (`metadata`, `metrics`,
//! `error`), read into one record whose requests carry their timing on the run's clock and
//! whose summary is computed from them.
//!
//! Both schemas AIPerf has written are read: `metadata.timestamp_ns` + `credit_phase` (2025
//! releases) and `request_start_ns` / `request_end_ns` / `credit_issued_ns` +
//! `benchmark_phase` (later ones). Warmup requests are left out. Metrics are `{value, unit}`:
//! `ttft` or `time_to_first_token`, `request_latency`, `input_sequence_length`,
//! `output_sequence_length` (else `output_token_count`), `inter_chunk_latency` (a list).

use serde_json::{Map, Value};

use super::per_request::{
    failure_kind, ns_of, place_on_clock, plausible_ms, summarise, Stamp, Times, Warnings,
};
use crate::ingest::fields::note;
use crate::ingest::text::to_ms_factor;
use crate::ingest::Ingested;
use crate::model::canonical::number_from_json;
use crate::model::{Record, RequestDetail};

/// Whether an object looks like one line of an AIPerf `profile_export.jsonl`.
pub(crate) fn looks_like(o: &Map<String, Value>) -> bool {
    let Some(meta) = o.get("metadata").and_then(Value::as_object) else {
        return false;
    };
    o.get("metrics").is_some_and(Value::is_object)
        && [
            "timestamp_ns",
            "request_start_ns",
            "credit_phase",
            "benchmark_phase",
        ]
        .iter()
        .any(|k| meta.contains_key(*k))
}

/// Reads every line (each `(line, value)`; a value may also be a list of such objects).
pub(crate) fn read_aiperf_records(values: &[(usize, Value)], out: &mut Ingested) {
    let mut r = Record::default();
    let mut times = Vec::new();
    let mut places = Vec::new();
    let mut warn = Warnings::default();
    let mut warmup = 0usize;
    for (line, v) in values {
        let here = format!("line {line}");
        match v {
            Value::Object(o) => one(
                o,
                &here,
                &mut r,
                &mut times,
                &mut places,
                &mut warmup,
                &mut warn,
            ),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{here}: [{i}]");
                    match item.as_object() {
                        Some(o) => one(
                            o,
                            &at,
                            &mut r,
                            &mut times,
                            &mut places,
                            &mut warmup,
                            &mut warn,
                        ),
                        None => warn.at(at, "not a JSON object, skipped"),
                    }
                }
            }
            _ => warn.at(here, "not a JSON object, skipped"),
        }
    }
    place_on_clock(&mut r.requests, &times, &places, &mut warn);
    warn.flush(out);
    if warmup > 0 {
        note(out, format!("{warmup} warmup requests left out"));
    }
    if r.requests.is_empty() {
        out.note = Some("no records: no profiling request in this AIPerf export".into());
        return;
    }
    note(
        out,
        "summary computed from the per-request records (the run's own summary is in profile_export_aiperf.json)",
    );
    summarise(&mut r);
    out.records.push(r);
}

/// A metric's value converted to ms, when it is a duration in a known unit.
fn metric_ms(m: &Map<String, Value>, name: &str, at: &str, warn: &mut Warnings) -> Option<f64> {
    let entry = m.get(name)?;
    let place = format!("{at}: metrics.{name}");
    let Some(o) = entry.as_object() else {
        warn.at(place, "not a {value, unit} object, ignored");
        return None;
    };
    let unit = o.get("unit").and_then(Value::as_str).unwrap_or("ms");
    let Some(scale) = to_ms_factor(unit) else {
        warn.at(place, format!("unknown unit {unit:?}, ignored"));
        return None;
    };
    let Some(v) = o.get("value").and_then(number_from_json) else {
        warn.at(place, "value not a number, ignored");
        return None;
    };
    match plausible_ms(v * scale) {
        Ok(ms) => Some(ms),
        Err(why) => {
            warn.at(place, format!("{why} ({v} {unit}), ignored"));
            None
        }
    }
}

/// A token count metric (`{value, unit: "tokens"}`).
fn metric_count(m: &Map<String, Value>, name: &str, at: &str, warn: &mut Warnings) -> Option<u64> {
    let v = m.get(name)?.get("value")?;
    match number_from_json(v) {
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n < 1e15 => Some(n as u64),
        _ => {
            warn.at(
                format!("{at}: metrics.{name}"),
                "not a whole number ≥ 0, ignored",
            );
            None
        }
    }
}

fn chunk_gaps(m: &Map<String, Value>, at: &str, warn: &mut Warnings) -> Vec<f64> {
    let Some(entry) = m.get("inter_chunk_latency") else {
        return Vec::new();
    };
    let place = format!("{at}: metrics.inter_chunk_latency");
    let scale = entry
        .get("unit")
        .and_then(Value::as_str)
        .map_or(Some(1.0), to_ms_factor);
    let (Some(items), Some(scale)) = (entry.get("value").and_then(Value::as_array), scale) else {
        warn.at(place, "not a list of durations in a known unit, ignored");
        return Vec::new();
    };
    let gaps: Vec<f64> = items
        .iter()
        .filter_map(number_from_json)
        .map(|v| v * scale)
        .filter(|v| plausible_ms(*v).is_ok())
        .collect();
    if gaps.len() != items.len() {
        warn.at(
            place,
            format!(
                "{} of {} gaps not plausible durations, left out",
                items.len() - gaps.len(),
                items.len()
            ),
        );
    }
    gaps
}

/// A timestamp of the metadata, in ns; a bad one is warned about and dropped.
fn stamp(meta: &Map<String, Value>, key: &str, at: &str, warn: &mut Warnings) -> Option<i128> {
    let v = meta.get(key).filter(|v| !v.is_null())?;
    match ns_of(v) {
        Ok(n) => Some(n),
        Err(why) => {
            warn.at(format!("{at}: metadata.{key}"), format!("{why}, ignored"));
            None
        }
    }
}

fn one(
    o: &Map<String, Value>,
    at: &str,
    r: &mut Record,
    times: &mut Vec<Times>,
    places: &mut Vec<String>,
    warmup: &mut usize,
    warn: &mut Warnings,
) {
    let Some(meta) = o.get("metadata").and_then(Value::as_object) else {
        warn.at(at, "no \"metadata\" object, skipped");
        return;
    };
    let phase = meta
        .get("benchmark_phase")
        .or_else(|| meta.get("credit_phase"))
        .and_then(Value::as_str);
    if phase.is_some_and(|p| p.eq_ignore_ascii_case("warmup")) {
        *warmup += 1;
        return;
    }
    let empty = Map::new();
    let metrics = match o.get("metrics") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => &empty,
        Some(_) => {
            warn.at(format!("{at}: metrics"), "not an object, ignored");
            &empty
        }
    };
    let start =
        stamp(meta, "request_start_ns", at, warn).or_else(|| stamp(meta, "timestamp_ns", at, warn));
    let end = stamp(meta, "request_end_ns", at, warn);
    let issued = stamp(meta, "credit_issued_ns", at, warn);
    let mut q = RequestDetail {
        input_len: metric_count(metrics, "input_sequence_length", at, warn),
        output_len: metric_count(metrics, "output_sequence_length", at, warn)
            .or_else(|| metric_count(metrics, "output_token_count", at, warn)),
        ttft_ms: metric_ms(metrics, "ttft", at, warn)
            .or_else(|| metric_ms(metrics, "time_to_first_token", at, warn)),
        itl_ms: chunk_gaps(metrics, at, warn).into(),
        e2el_ms: metric_ms(metrics, "request_latency", at, warn),
        ..RequestDetail::default()
    };
    match o.get("error") {
        None | Some(Value::Null) => {}
        Some(Value::Object(e)) => {
            let kind = e.get("type").and_then(Value::as_str);
            let code = e.get("code").and_then(Value::as_i64);
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .or(kind)
                .unwrap_or("error");
            q.error = Some(message.to_string());
            q.error_kind = failure_kind(code, kind);
        }
        Some(Value::String(s)) => q.error = Some(s.clone()),
        Some(_) => {
            q.error = Some("error".into());
            warn.at(
                format!("{at}: error"),
                "not an {code, type, message} object",
            );
        }
    }
    if q.error.is_none() && meta.get("was_cancelled").and_then(Value::as_bool) == Some(true) {
        q.error = Some("cancelled".into());
        q.error_kind = Some("cancelled".into());
    }
    if q.error.is_none() && q.e2el_ms.is_none() {
        if let (Some(s), Some(e)) = (start, end) {
            match plausible_ms((e - s) as f64 / 1e6) {
                Ok(ms) => q.e2el_ms = Some(ms),
                Err(why) => warn.at(
                    format!("{at}: metadata.request_end_ns"),
                    format!("end minus start {why}, ignored"),
                ),
            }
        }
    }
    if q.error.is_some() {
        // A failed request's partial latencies would skew the completed requests' figures.
        q.e2el_ms = None;
    }
    if start.is_none() {
        warn.at(
            at,
            "no send time (request_start_ns / timestamp_ns), left off the timeline",
        );
    }
    times.push(Times {
        intended: issued.map(Stamp::Ns),
        sent: start.map(Stamp::Ns),
    });
    places.push(at.to_string());
    r.requests.push(q);
}
