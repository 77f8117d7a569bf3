//! What the per-request readers (AIPerf `profile_export.jsonl`, genai-perf's raw
//! `profile_export.json`, guidellm's request samples) share: timestamps checked and put on the
//! stage's clock, warnings capped per file, failure kinds named, and the summary figures of a
//! run computed from its requests when the file carries no summary of its own.
//!
//! A stage's clock starts at its earliest plausible timestamp (intended or actual send). A
//! timestamp more than [`MAX_SPAN_S`] from the stage's median is taken as absurd (a unit
//! mix-up, a zero, a corrupted digit): its request keeps its latencies but loses its place on
//! the clock, with a warning.

use crate::analysis::stats::{percentile_sorted, sorted_finite};
use crate::ingest::{Ingested, Warning};
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Percentile, Record, Stat};

/// Longest plausible distance between two timestamps of one stage, and longest plausible
/// latency: one week, in seconds.
pub(super) const MAX_SPAN_S: f64 = 7.0 * 86_400.0;

/// Most per-request warnings kept for one file; the rest are counted in one last warning.
const MAX_WARNINGS: usize = 50;

/// Per-request warnings of one file, at most [`MAX_WARNINGS`] of them.
#[derive(Default)]
pub(super) struct Warnings {
    kept: Vec<Warning>,
    dropped: usize,
}

impl Warnings {
    /// Notes a problem at `at`.
    pub fn at(&mut self, at: impl Into<String>, message: impl Into<String>) {
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(Warning::at(at, message));
        } else {
            self.dropped += 1;
        }
    }

    /// Moves the warnings into `out`, with a count of those left out.
    pub fn flush(self, out: &mut Ingested) {
        out.warnings.extend(self.kept);
        if self.dropped > 0 {
            out.warnings.push(Warning::file(format!(
                "{} more per-request warnings not shown",
                self.dropped
            )));
        }
    }
}

/// A timestamp on an absolute clock, in the unit its file uses: whole nanoseconds (AIPerf,
/// genai-perf; kept exact, they exceed an f64's 53 bits) or seconds (guidellm).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(super) enum Stamp {
    Ns(i128),
    S(f64),
}

impl Stamp {
    /// Seconds from `origin` (same unit).
    pub fn since(self, origin: Stamp) -> Option<f64> {
        match (self, origin) {
            (Stamp::Ns(a), Stamp::Ns(b)) => Some((a - b) as f64 / 1e9),
            (Stamp::S(a), Stamp::S(b)) => Some(a - b),
            _ => None,
        }
    }

    fn key(self) -> f64 {
        match self {
            Stamp::Ns(n) => n as f64 / 1e9,
            Stamp::S(s) => s,
        }
    }
}

/// A whole number of nanoseconds from JSON: an integer, a float with no fraction, or a string
/// holding one. `Err` names what is wrong (negative, not a number).
pub(super) fn ns_of(v: &serde_json::Value) -> Result<i128, &'static str> {
    use serde_json::Value;
    let n = match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => i128::from(u),
            (None, Some(i), _) => i128::from(i),
            (None, None, Some(f)) if f.is_finite() && f.abs() < 1e30 => f.round() as i128,
            _ => return Err("not a finite number"),
        },
        Value::String(s) => match s.trim().parse::<i128>() {
            Ok(n) => n,
            Err(_) => return Err("not a whole number of nanoseconds"),
        },
        _ => return Err("not a number"),
    };
    if n < 0 {
        Err("negative timestamp")
    } else {
        Ok(n)
    }
}

/// A Unix time in seconds from JSON (guidellm): a positive finite number.
pub(super) fn seconds_of(v: &serde_json::Value) -> Result<f64, &'static str> {
    match crate::model::canonical::number_from_json(v) {
        Some(s) if s.is_finite() && s > 0.0 => Ok(s),
        Some(s) if s.is_finite() => Err("timestamp not after 1970 (zero or negative)"),
        Some(_) => Err("timestamp not finite"),
        None => Err("not a number"),
    }
}

/// A latency in ms that is plausible: finite, ≥ 0 and under [`MAX_SPAN_S`]. `Err` says why not.
pub(super) fn plausible_ms(ms: f64) -> Result<f64, &'static str> {
    if !ms.is_finite() {
        Err("not finite")
    } else if ms < 0.0 {
        Err("negative")
    } else if ms > MAX_SPAN_S * 1000.0 {
        Err("longer than a week")
    } else {
        Ok(ms)
    }
}

/// One request's absolute times, before they are put on the stage's clock.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Times {
    pub intended: Option<Stamp>,
    pub sent: Option<Stamp>,
}

/// Puts each request's intended and actual send times on the stage's clock: seconds from the
/// earliest plausible timestamp. `times[i]` belongs to `requests[i]`; `places[i]` names it in
/// warnings.
pub(super) fn place_on_clock(
    requests: &mut [crate::model::RequestDetail],
    times: &[Times],
    places: &[String],
    warn: &mut Warnings,
) {
    let mut keys: Vec<f64> = times
        .iter()
        .filter_map(|t| t.sent.or(t.intended))
        .map(Stamp::key)
        .collect();
    if keys.is_empty() {
        return;
    }
    crate::model::order::sort_floats(&mut keys);
    let median = keys[keys.len() / 2];
    let plausible = |s: Stamp| (s.key() - median).abs() <= MAX_SPAN_S;
    let origin = times
        .iter()
        .flat_map(|t| [t.intended, t.sent])
        .flatten()
        .filter(|s| plausible(*s))
        .min_by(|a, b| a.key().total_cmp(&b.key()));
    let Some(origin) = origin else { return };
    for ((q, t), at) in requests.iter_mut().zip(times).zip(places) {
        if let Some(s) = t.sent {
            if plausible(s) {
                q.sent_s = s.since(origin);
            } else {
                warn.at(
                    at.as_str(),
                    "send time more than a week from the run's other requests (absurd timestamp?), left off the timeline",
                );
            }
        }
        if let Some(s) = t.intended.filter(|s| plausible(*s)) {
            q.intended_s = s.since(origin);
        }
    }
}

/// A failure kind from an HTTP status code and an error type name: `cancelled` for
/// cancellations, `http_<code>` for HTTP statuses, else the type in snake_case.
pub(super) fn failure_kind(code: Option<i64>, kind: Option<&str>) -> Option<String> {
    if kind.is_some_and(|k| k.to_ascii_lowercase().contains("cancel")) {
        return Some("cancelled".into());
    }
    if let Some(c) = code.filter(|c| (100..=599).contains(c)) {
        return Some(format!("http_{c}"));
    }
    kind.map(crate::ingest::text::snake)
        .filter(|k| !k.is_empty())
}

fn set_family(r: &mut Record, f: LatencyMetric, values: Vec<f64>) {
    let values = sorted_finite(values);
    if values.is_empty() {
        return;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    r.set_metric(MetricKey::Latency(f, Stat::Mean), mean);
    r.set_metric(MetricKey::Latency(f, Stat::Std), var.sqrt());
    if let Some(m) = percentile_sorted(&values, 50.0) {
        r.set_metric(MetricKey::Latency(f, Stat::Median), m);
    }
    for p in [90.0, 95.0, 99.0] {
        if let (Some(v), Some(key)) = (percentile_sorted(&values, p), Percentile::new(p)) {
            r.set_metric(MetricKey::Latency(f, Stat::P(key)), v);
        }
    }
}

/// The run's summary from its requests, as vLLM computes it (numpy's percentiles, through
/// [`percentile_sorted`]): completed and failed counts,
/// TTFT, TPOT, ITL and E2EL mean/std/median/p90/p95/p99 over the completed requests, the
/// duration (first send to last end) and the request and output-token throughputs over it,
/// and the mean input and output lengths. Sets only what the requests allow.
pub(super) fn summarise(r: &mut Record) {
    let done: Vec<&crate::model::RequestDetail> =
        r.requests.iter().filter(|q| q.error.is_none()).collect();
    let completed = done.len();
    let failed = r.requests.len() - completed;
    let ttft: Vec<f64> = done.iter().filter_map(|q| q.ttft_ms).collect();
    let e2el: Vec<f64> = done.iter().filter_map(|q| q.e2el_ms).collect();
    let itl: Vec<f64> = done.iter().flat_map(|q| q.itl_ms.iter()).collect();
    let tpot: Vec<f64> = done
        .iter()
        .filter_map(|q| {
            let out = q.output_len.filter(|n| *n > 1)?;
            Some((q.e2el_ms? - q.ttft_ms?) / (out - 1) as f64)
        })
        .collect();
    let inputs: Vec<f64> = done
        .iter()
        .filter_map(|q| q.input_len)
        .map(|n| n as f64)
        .collect();
    let outputs: Vec<f64> = done
        .iter()
        .filter_map(|q| q.output_len)
        .map(|n| n as f64)
        .collect();
    let first = r
        .requests
        .iter()
        .filter_map(|q| q.sent_s)
        .fold(f64::INFINITY, f64::min);
    let last = r
        .requests
        .iter()
        .filter_map(|q| q.end_s().or(q.sent_s))
        .fold(f64::NEG_INFINITY, f64::max);
    let out_total: f64 = outputs.iter().sum();
    r.set_metric(MetricKey::Completed, completed as f64);
    r.set_metric(MetricKey::Failed, failed as f64);
    set_family(r, LatencyMetric::Ttft, ttft);
    set_family(r, LatencyMetric::Tpot, tpot);
    set_family(r, LatencyMetric::Itl, itl);
    set_family(r, LatencyMetric::E2el, e2el);
    let duration = last - first;
    if duration.is_finite() && duration > 0.0 {
        r.set_metric(MetricKey::DurationS, duration);
        r.set_metric(MetricKey::RequestThroughput, completed as f64 / duration);
        if !outputs.is_empty() {
            r.set_metric(MetricKey::OutputThroughput, out_total / duration);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    if let Some(m) = mean(&inputs) {
        let _ = r.set_known(Dim::InputLen, Some(DimValue::Num(m)));
    }
    if let Some(m) = mean(&outputs) {
        let _ = r.set_known(Dim::OutputLen, Some(DimValue::Num(m)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nanoseconds_stay_exact_past_f64_precision() {
        let a = ns_of(&json!(1_759_522_419_154_829_652_u64)).unwrap_or_default();
        let b = ns_of(&json!(1_759_522_419_154_568_925_u64)).unwrap_or_default();
        assert_eq!(Stamp::Ns(a).since(Stamp::Ns(b)), Some(260_727.0 / 1e9));
        assert_eq!(ns_of(&json!(-5)), Err("negative timestamp"));
        assert!(ns_of(&json!("x")).is_err());
        assert!(ns_of(&json!(null)).is_err());
    }

    #[test]
    fn failure_kinds_are_named() {
        assert_eq!(
            failure_kind(Some(499), Some("RequestCancellationError")).as_deref(),
            Some("cancelled")
        );
        assert_eq!(failure_kind(Some(503), None).as_deref(), Some("http_503"));
        assert_eq!(
            failure_kind(None, Some("ReadTimeout")).as_deref(),
            Some("read_timeout")
        );
        assert_eq!(failure_kind(None, None), None);
    }

    #[test]
    fn an_absurd_timestamp_does_not_move_the_clock() {
        // A Unix time read as if it were 1 s after 1970 is weeks from the others.
        let mut reqs = vec![crate::model::RequestDetail::default(); 3];
        let times = [
            Times {
                intended: None,
                sent: Some(Stamp::S(1_700_000_000.5)),
            },
            Times {
                intended: Some(Stamp::S(1_700_000_000.0)),
                sent: Some(Stamp::S(1_700_000_001.0)),
            },
            Times {
                intended: None,
                sent: Some(Stamp::S(1.0)),
            },
        ];
        let places: Vec<String> = (0..3).map(|i| format!("r{i}")).collect();
        let mut w = Warnings::default();
        place_on_clock(&mut reqs, &times, &places, &mut w);
        assert_eq!(reqs[0].sent_s, Some(0.5));
        assert_eq!(reqs[1].intended_s, Some(0.0));
        assert_eq!(reqs[1].sent_s, Some(1.0));
        assert_eq!(reqs[2].sent_s, None);
        assert_eq!(w.kept.len(), 1);
        assert_eq!(w.kept[0].at.as_deref(), Some("r2"));
    }
}
