//! guidellm's request samples (`benchmarks[].requests.{successful, errored, incomplete}[]`)
//! as the benchmark record's requests, on the benchmark's clock.
//!
//! Two schemas: guidellm ≥ 0.4 (`request_start_time`, `request_end_time`,
//! `time_to_first_token_ms`, `request_latency` in s, `prompt_tokens`, `output_tokens`, and
//! `info.timings.{targeted_start, request_start, first_token_iteration, request_end}`) and
//! 0.2–0.3 (`start_time`, `end_time`, `first_token_time`, `scheduler_info.targeted_start_time`).
//! Times are Unix seconds. The targeted start is the intended send time only for rate-driven
//! strategies (constant, poisson): closed-loop ones (synchronous, concurrent, throughput)
//! target every request at the run's start, which is no schedule.

use serde_json::Value;

use super::per_request::{place_on_clock, plausible_ms, seconds_of, Stamp, Times, Warnings};
use crate::ingest::Ingested;
use crate::model::canonical::number_from_json;
use crate::model::{Record, RequestDetail};

/// The first of `paths` (JSON pointers) that holds a non-null value.
fn first<'a>(v: &'a Value, paths: &[&str]) -> Option<(&'a Value, usize)> {
    paths
        .iter()
        .enumerate()
        .find_map(|(i, p)| v.pointer(p).filter(|x| !x.is_null()).map(|x| (x, i)))
}

/// A timestamp at the first of `paths`; a bad one is warned about.
fn time_at(v: &Value, paths: &[&str], at: &str, warn: &mut Warnings) -> Option<f64> {
    let (x, i) = first(v, paths)?;
    match seconds_of(x) {
        Ok(s) => Some(s),
        Err(why) => {
            // guidellm 0.2–0.3 writes -1 for a time it never took.
            if number_from_json(x) != Some(-1.0) {
                warn.at(
                    format!("{at}{}", paths[i].replace('/', ".")),
                    format!("{why}, ignored"),
                );
            }
            None
        }
    }
}

fn count_at(v: &Value, key: &str) -> Option<u64> {
    number_from_json(v.get(key)?)
        .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0 && *n < 1e15)
        .map(|n| n as u64)
}

fn latency(ms: Option<f64>, at: &str, what: &str, warn: &mut Warnings) -> Option<f64> {
    match plausible_ms(ms?) {
        Ok(ms) => Some(ms),
        Err(why) => {
            warn.at(format!("{at}.{what}"), format!("{why}, ignored"));
            None
        }
    }
}

/// Reads the samples of benchmark `b` (at `here`) into `r.requests`.
pub(super) fn read_samples(b: &Value, here: &str, r: &mut Record, out: &mut Ingested) {
    let Some(groups) = b.get("requests").and_then(Value::as_object) else {
        return;
    };
    let strategy = b
        .pointer("/config/strategy")
        .or_else(|| b.pointer("/args/strategy"))
        .and_then(|s| s.get("type_").or_else(|| s.get("type")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let scheduled = matches!(strategy, "constant" | "poisson");
    let mut warn = Warnings::default();
    let mut times = Vec::new();
    let mut places = Vec::new();
    for status in ["successful", "errored", "incomplete"] {
        let Some(items) = groups.get(status) else {
            continue;
        };
        let Some(items) = items.as_array() else {
            if !items.is_null() {
                warn.at(format!("{here}.requests.{status}"), "not a list, ignored");
            }
            continue;
        };
        for (i, s) in items.iter().enumerate() {
            let at = format!("{here}.requests.{status}[{i}]");
            if !s.is_object() {
                warn.at(at, "not a JSON object, skipped");
                continue;
            }
            let sent = time_at(
                s,
                &[
                    "/request_start_time",
                    "/info/timings/request_start",
                    "/start_time",
                ],
                &at,
                &mut warn,
            );
            let first_token = time_at(
                s,
                &["/info/timings/first_token_iteration", "/first_token_time"],
                &at,
                &mut warn,
            );
            let end = time_at(
                s,
                &[
                    "/request_end_time",
                    "/info/timings/request_end",
                    "/end_time",
                ],
                &at,
                &mut warn,
            );
            let intended = if scheduled {
                time_at(
                    s,
                    &[
                        "/info/timings/targeted_start",
                        "/scheduler_info/targeted_start_time",
                    ],
                    &at,
                    &mut warn,
                )
            } else {
                None
            };
            let mut q = RequestDetail {
                input_len: count_at(s, "prompt_tokens"),
                output_len: count_at(s, "output_tokens"),
                ..RequestDetail::default()
            };
            if status == "successful" {
                let ttft = s
                    .get("time_to_first_token_ms")
                    .and_then(number_from_json)
                    .or_else(|| Some((first_token? - sent?) * 1000.0));
                q.ttft_ms = latency(ttft, &at, "time_to_first_token_ms", &mut warn);
                let e2el = s
                    .get("request_latency")
                    .and_then(number_from_json)
                    .map(|s| s * 1000.0)
                    .or_else(|| Some((end? - sent?) * 1000.0));
                q.e2el_ms = latency(e2el, &at, "request_latency", &mut warn);
            } else {
                let text = s
                    .pointer("/info/error")
                    .or_else(|| s.get("error"))
                    .and_then(Value::as_str)
                    .filter(|e| !e.is_empty());
                let cancelled = status == "incomplete"
                    || s.pointer("/info/status").and_then(Value::as_str) == Some("cancelled");
                q.error = Some(text.unwrap_or(status).to_string());
                q.error_kind = cancelled.then(|| "cancelled".to_string());
            }
            if sent.is_none() {
                warn.at(at.as_str(), "no start time, left off the timeline");
            }
            times.push(Times {
                intended: intended.map(Stamp::S),
                sent: sent.map(Stamp::S),
            });
            places.push(at);
            r.requests.push(q);
        }
    }
    place_on_clock(&mut r.requests, &times, &places, &mut warn);
    warn.flush(out);
}
