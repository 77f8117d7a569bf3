//! MLPerf LoadGen logs: `mlperf_log_summary.txt` (the "MLPerf Results Summary" text of
//! `Key : value` lines) and `mlperf_log_detail.txt` (`:::MLLOG {json}` events), each one run,
//! one record.
//!
//! Both name the same things, so both are read into one list of [`Field`]s and one function
//! turns them into the record: the SUT name, scenario, mode and validity (`VALID`/`INVALID`)
//! as tags; samples a second as the request throughput (an LLM sample is one request);
//! tokens a second as the output throughput (LoadGen counts generated tokens); TTFT and TPOT
//! (LoadGen's "time to output token") mean and percentiles, in ns, as ms. The query latency
//! is the request's end-to-end latency only where a query is one request: in the Offline
//! scenario the one query holds every sample and its latency is the whole run's, so it is
//! left out. The Server scenario's target QPS is the configured request rate. LoadGen states
//! no model or GPU; in a submission's tree
//! (`results/<system>/<benchmark>/<scenario>/performance/run_1/`) the path names them, and
//! the benchmark is taken as the model and the system as `tag.system`, marked inferred.

use serde_json::Value;

use super::fields::{infer_dim, set_dim};
use super::{Ingested, Warning};
use crate::model::canonical::parse_number_text;
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Percentile, Record, Stat};

/// The summary's title line.
const SUMMARY: &str = "MLPerf Results Summary";
/// The detail log's line prefix.
const MLLOG: &str = ":::MLLOG";

/// Whether `text` is a LoadGen log, and which.
pub(crate) fn detect(text: &str) -> Option<&'static str> {
    let head = text.trim_start();
    if head.starts_with(MLLOG) {
        return Some("\":::MLLOG\" event lines (MLPerf LoadGen detail log)");
    }
    let first: String = head.lines().take(4).collect::<Vec<_>>().join("\n");
    first
        .contains(SUMMARY)
        .then_some("\"MLPerf Results Summary\" (MLPerf LoadGen summary)")
}

/// What a line of either log says.
#[derive(Clone, Debug, PartialEq)]
enum Field {
    Tag(&'static str),
    SamplesPerS,
    TokensPerS,
    /// A latency in ns.
    Latency(LatencyMetric, Stat),
    TargetQps,
    Date,
}

/// `50.00` → p50; `mean` → mean.
fn stat(text: &str) -> Option<Stat> {
    match text.trim().to_ascii_lowercase().as_str() {
        "mean" => Some(Stat::Mean),
        p => Percentile::new(p.parse().ok()?).map(Stat::P),
    }
}

/// A summary key (`Completed tokens per second`, `99.00 percentile first token latency (ns)`).
fn summary_field(key: &str) -> Option<Field> {
    let k = key.trim().to_ascii_lowercase();
    Some(match k.as_str() {
        "sut name" => Field::Tag("sut"),
        "scenario" => Field::Tag("scenario"),
        "mode" => Field::Tag("mode"),
        "result is" => Field::Tag("validity"),
        // SingleStream and MultiStream report their query rate as "QPS w/ loadgen overhead".
        "samples per second" | "completed samples per second" | "qps w/ loadgen overhead" => {
            Field::SamplesPerS
        }
        "tokens per second" | "completed tokens per second" => Field::TokensPerS,
        "target_qps" => Field::TargetQps,
        _ => {
            let body = k.strip_suffix("(ns)")?.trim();
            let (stat_text, family) = match body.split_once(" percentile ") {
                Some((p, rest)) => (p, rest),
                None => body.split_once(' ')?,
            };
            let metric = match family {
                "latency" => LatencyMetric::E2el,
                "first token latency" => LatencyMetric::Ttft,
                "time to output token" => LatencyMetric::Tpot,
                _ => return None,
            };
            Field::Latency(metric, stat(stat_text)?)
        }
    })
}

/// A detail-log key (`result_first_token_99.00_percentile_latency_ns`).
fn detail_field(key: &str) -> Option<Field> {
    Some(match key {
        "sut_name" => Field::Tag("sut"),
        "effective_scenario" => Field::Tag("scenario"),
        "effective_test_mode" => Field::Tag("mode"),
        "result_validity" => Field::Tag("validity"),
        "result_samples_per_second"
        | "result_completed_samples_per_sec"
        | "result_qps_with_loadgen_overhead" => Field::SamplesPerS,
        "result_tokens_per_second" | "result_completed_tokens_per_second" => Field::TokensPerS,
        "effective_target_qps" => Field::TargetQps,
        "test_datetime" => Field::Date,
        "result_time_to_output_token_mean" => Field::Latency(LatencyMetric::Tpot, Stat::Mean),
        _ => {
            let body = key.strip_prefix("result_")?;
            let (metric, rest) = if let Some(r) = body.strip_prefix("first_token_") {
                (LatencyMetric::Ttft, r.strip_suffix("_latency_ns")?)
            } else if let Some(r) = body.strip_prefix("time_per_output_token_") {
                (LatencyMetric::Tpot, r.strip_suffix("_ns")?)
            } else {
                (LatencyMetric::E2el, body.strip_suffix("_latency_ns")?)
            };
            let s = match rest.strip_suffix("_percentile") {
                Some(p) => stat(p)?,
                None if rest == "mean" => Stat::Mean,
                None => return None,
            };
            Field::Latency(metric, s)
        }
    })
}

/// Reads a summary or a detail log into one record.
pub(crate) fn read(source: &str, text: &str, out: &mut Ingested) {
    let detail = text.trim_start().starts_with(MLLOG);
    let mut fields: Vec<(Field, Value, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if detail {
            detail_line(line, n, &mut fields, out);
        } else if let Some((k, v)) = line.split_once(':') {
            if let Some(f) = summary_field(k) {
                fields.push((f, Value::String(v.trim().to_string()), n));
            }
        }
    }
    let mut r = Record::default();
    let scenario = fields
        .iter()
        .find(|(f, _, _)| *f == Field::Tag("scenario"))
        .and_then(|(_, v, _)| v.as_str().map(str::to_string));
    let offline = scenario.as_deref() == Some("Offline");
    // Only a Server run is sent at its target rate; SingleStream and MultiStream send the next
    // query when the last one ends, whatever `target_qps` says.
    let paced = scenario.as_deref().is_none_or(|s| s == "Server");
    for (f, v, n) in fields {
        let text = match &v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let number = || match &v {
            Value::Number(x) => x.as_f64(),
            _ => parse_number_text(&text),
        };
        let at = format!("line {n}");
        let (key, scale) = match f {
            Field::Tag(t) => {
                r.tags.insert(t.to_string(), text);
                continue;
            }
            Field::Date => {
                set_dim(&mut r, Dim::Date, DimValue::Text(text), &at, out);
                continue;
            }
            Field::Latency(LatencyMetric::E2el, _) | Field::TargetQps if offline => continue,
            Field::TargetQps if !paced => {
                r.tags.insert("target_qps".into(), text);
                continue;
            }
            Field::TargetQps => {
                match number() {
                    Some(q) => set_dim(&mut r, Dim::RequestRate, DimValue::Num(q), &at, out),
                    None => out.warnings.push(not_a_number(n, &text)),
                }
                continue;
            }
            Field::SamplesPerS => (MetricKey::RequestThroughput, 1.0),
            Field::TokensPerS => (MetricKey::OutputThroughput, 1.0),
            Field::Latency(m, s) => (MetricKey::Latency(m, s), 1e-6),
        };
        match number() {
            Some(x) => r.set_metric(key, x * scale),
            None => out.warnings.push(not_a_number(n, &text)),
        }
    }
    infer_from_path(source, &mut r);
    if r.metrics.is_empty() {
        out.note = Some(if r.tags.is_empty() {
            "no records: no LoadGen result in this log (cut short before its results?)".into()
        } else {
            "no records: the log names the run but holds no measured value (cut short?)".into()
        });
        return;
    }
    out.records.push(r);
}

fn not_a_number(line: usize, text: &str) -> Warning {
    Warning::line(line, format!("{text:?} is not a number, ignored"))
}

/// One `:::MLLOG {json}` line: its key and value when the key is one this reader reads; a
/// LoadGen error event becomes a warning.
fn detail_line(line: &str, n: usize, fields: &mut Vec<(Field, Value, usize)>, out: &mut Ingested) {
    let Some(json) = line.strip_prefix(MLLOG) else {
        out.warnings
            .push(Warning::line(n, "not a \":::MLLOG\" line, skipped"));
        return;
    };
    let event: Value = match serde_json::from_str(json.trim()) {
        Ok(v) => v,
        Err(e) => {
            out.warnings
                .push(Warning::line(n, format!("unreadable event ({e}), skipped")));
            return;
        }
    };
    let key = event.get("key").and_then(Value::as_str).unwrap_or("");
    let value = event.get("value").cloned().unwrap_or(Value::Null);
    let is_error = event
        .pointer("/metadata/is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if is_error {
        let text = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        out.warnings
            .push(Warning::line(n, format!("LoadGen error: {text}")));
    }
    if let Some(f) = detail_field(key) {
        fields.push((f, value, n));
    }
}

/// The benchmark (model) and system from a submission's path
/// (`.../results/<system>/<benchmark>/<scenario>/...`).
fn infer_from_path(source: &str, r: &mut Record) {
    let parts: Vec<&str> = source.split(['/', '\\']).collect();
    let Some(i) = parts.iter().position(|p| *p == "results") else {
        return;
    };
    let (Some(system), Some(benchmark), Some(_scenario), Some(_)) = (
        parts.get(i + 1),
        parts.get(i + 2),
        parts.get(i + 3),
        parts.get(i + 4),
    ) else {
        return;
    };
    infer_dim(
        r,
        Dim::Model,
        DimValue::Text(benchmark.to_string()),
        "the path",
    );
    if !r.tags.contains_key("system") {
        r.tags.insert("system".into(), system.to_string());
        r.inferred.insert("tag.system".into(), "the path".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;

    fn read_text(source: &str, text: &str) -> Ingested {
        let mut out = Ingested::new(Format::MlperfLog);
        read(source, text, &mut out);
        out
    }

    const INVALID: &str = "================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 0.51
Completed tokens per second: 120.5
Result is : INVALID
  Performance constraints satisfied : NO
Recommendations:
 * Reduce target QPS to improve latency.

================================================
Additional Stats
================================================
Mean First Token latency (ns)               : 2500000000
99.00 percentile first token latency (ns)   : 9000000000
50.00 percentile time to output token (ns)   : 250000000
Mean latency (ns)               : 30000000000
================================================
Test Parameters Used
================================================
target_qps : 0.5
ttft_latency (ns): 2000000000
";

    #[test]
    fn an_invalid_server_run_keeps_its_validity_and_units() {
        let got = read_text("mlperf_log_summary.txt", INVALID);
        assert_eq!(got.records.len(), 1, "{:?}", got.warnings);
        let r = &got.records[0];
        assert_eq!(r.tags.get("validity").map(String::as_str), Some("INVALID"));
        assert_eq!(r.tags.get("scenario").map(String::as_str), Some("Server"));
        assert_eq!(r.tags.get("sut").map(String::as_str), Some("PySUT"));
        assert_eq!(r.request_rate, Some(0.5));
        assert_eq!(r.metric(&MetricKey::RequestThroughput), Some(0.51));
        assert_eq!(r.metric(&MetricKey::OutputThroughput), Some(120.5));
        let ms = |m, s| r.metric(&MetricKey::Latency(m, s));
        assert_eq!(ms(LatencyMetric::Ttft, Stat::Mean), Some(2500.0));
        let p = |x: f64| Stat::P(Percentile::new(x).unwrap());
        assert_eq!(ms(LatencyMetric::Ttft, p(99.0)), Some(9000.0));
        assert_eq!(ms(LatencyMetric::Tpot, p(50.0)), Some(250.0));
        assert_eq!(ms(LatencyMetric::E2el, Stat::Mean), Some(30000.0));
        // The constraint is a setting, not a measured TTFT.
        assert_eq!(r.metrics.len(), 6);
    }

    #[test]
    fn a_truncated_detail_log_warns_at_the_cut_line_and_never_panics() {
        let text = ":::MLLOG {\"key\": \"sut_name\", \"value\": \"s\", \"metadata\": {}}\n\
:::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Offline\"}\n\
:::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n\
:::MLLOG {\"key\": \"result_samples_per_second\", \"value\": 80.15}\n\
:::MLLOG {\"key\": \"result_mean_latency_ns\", \"value\": 900073095219}\n\
:::MLLOG {\"key\": \"result_error\", \"value\": \"boom\", \"metadata\": {\"is_error\": true}}\n\
:::MLLOG {\"key\": \"result_tokens_per_sec";
        let got = read_text("x/mlperf_log_detail.txt", text);
        let r = &got.records[0];
        assert_eq!(r.metric(&MetricKey::RequestThroughput), Some(80.15));
        // Offline: the one query's latency is the run's, not a request's.
        assert_eq!(r.metrics.len(), 1);
        let at: Vec<_> = got.warnings.iter().map(|w| w.to_string()).collect();
        assert!(at
            .iter()
            .any(|w| w.starts_with("line 6: LoadGen error: boom")));
        assert!(at.iter().any(|w| w.starts_with("line 7: unreadable event")));
        // Cut before any result: no record, a note saying why.
        let got = read_text(
            "d.txt",
            ":::MLLOG {\"key\": \"sut_name\", \"value\": \"s\"}\n:::MLL",
        );
        assert!(got.records.is_empty());
        assert!(got.note.unwrap().contains("cut short"));
        for cut in 0..INVALID.len() {
            if INVALID.is_char_boundary(cut) {
                read_text("s.txt", &INVALID[..cut]);
            }
        }
    }

    #[test]
    fn a_submission_path_names_the_benchmark_and_system() {
        let got = read_text(
            "closed/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
            "MLPerf Results Summary\nScenario : Offline\nSamples per second: 80.15\n",
        );
        let r = &got.records[0];
        assert_eq!(r.model.as_deref(), Some("llama2-70b-99"));
        assert_eq!(
            r.tags.get("system").map(String::as_str),
            Some("8xMI300X_2xEPYC-9374F")
        );
        assert_eq!(
            r.inferred.get("model").map(String::as_str),
            Some("the path")
        );
    }
}
