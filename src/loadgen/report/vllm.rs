//! A stage as vLLM's serving result file (`--vllm-compatible`): exactly vLLM's keys
//! ([`vllm_json`]) and file name ([`vllm_file_name`]).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::record::request_detail;
use super::stage_info::StageInfo;
use super::view::{p_word, queue_time_s, view_percentiles, SummaryView};
use crate::loadgen::measure::StageMetrics;
use crate::loadgen::record::{EachRequest, RequestRecord};
use crate::loadgen::scratch::{Scratch, ScratchWriter};
use crate::model::canonical::number_to_json;
use crate::model::RequestDetail;

fn py_float(v: f64) -> String {
    if v.is_infinite() {
        "inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// One per-request array of vLLM's file: an entry from a request and its detail.
type Column = fn(&RequestRecord, &RequestDetail) -> Value;

/// vLLM's per-request arrays in its key order, each with whether only `--save-detailed` writes
/// it. Failed requests count 0 tokens and 0 s, as vLLM writes them.
const PER_REQUEST_ARRAYS: [(&str, bool, Column); 9] = [
    ("input_lens", true, |_, d| json!(d.input_len)),
    ("output_lens", true, |_, d| json!(d.output_len)),
    ("ttfts", true, |_, d| seconds_or_zero(d.ttft_ms)),
    ("itls", true, |_, d| {
        d.itl_ms.iter().map(|ms| json!(ms / 1e3)).collect()
    }),
    ("latencies", false, |_, d| seconds_or_zero(d.e2el_ms)),
    // vLLM's start times are perf_counter readings; ours are seconds after the stage start.
    ("start_times", true, |r, _| json!(r.sent_at_s)),
    ("queue_times", false, |r, _| json!(queue_time_s(r))),
    ("generated_texts", true, |r, _| json!(r.generated_text)),
    ("errors", true, |_, d| {
        json!(d.error.as_deref().unwrap_or_default())
    }),
];

/// Milliseconds as seconds, 0 when there are none.
fn seconds_or_zero(ms: Option<f64>) -> Value {
    json!(ms.map_or(0.0, |ms| ms / 1e3))
}

/// The tests' reference for [`write_vllm_json`]: the whole object built in memory from the
/// same map and columns.
#[cfg(test)]
pub(crate) fn vllm_json(
    info: &StageInfo,
    m: &StageMetrics,
    requests: &[RequestRecord],
    view: &SummaryView,
    detailed: bool,
) -> Value {
    // The per-request arrays, from the same per-request figures as the canonical record
    // (failed requests: 0 tokens and 0 s, as vLLM writes them).
    let details: Vec<RequestDetail> = requests.iter().map(request_detail).collect();
    Value::Object(vllm_map(info, m, view, detailed, |column| {
        let values = requests.iter().zip(&details).map(|(r, d)| column(r, d));
        values.collect()
    }))
}

/// vLLM's serving result object for a stage (formats.md §2), with the keys `vllm bench serve`
/// writes (vllm/benchmarks/serve.py, vLLM main at commit 009e6d4): the run's settings, `--metadata` (our
/// tags) as top-level keys, the totals, `latencies` and `queue_times` (seconds, every request,
/// 0 for failed ones as vLLM), `rtfx` (0: no audio), mean/median/std and percentiles of the
/// metrics in `view.metrics`, and only with `detailed` (vLLM's `--save-detailed`) the other
/// per-request arrays: `input_lens`, `output_lens`, `start_times`, `ttfts`, `itls`,
/// `generated_texts`, `errors`. Written to `out` with its final newline, the per-request arrays
/// made in one pass over `requests`, one request at a time, each array into its own scratch
/// file (named `scratch` and the array's key, unlinked as made: see
/// [`crate::loadgen::scratch`]) and copied into its place, so
/// neither the text nor the requests are held.
#[allow(clippy::too_many_arguments)]
pub fn write_vllm_json(
    out: &mut dyn Write,
    info: &StageInfo,
    m: &StageMetrics,
    requests: &dyn EachRequest,
    view: &SummaryView,
    detailed: bool,
    scratch: &Path,
) -> std::io::Result<()> {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let marker = |key: &str| format!("benchlens-vllm-array-{}-{nonce}-{key}", std::process::id());
    // The arrays' places: a marker string each.
    let mut o = vllm_map(info, m, view, detailed, |_| Value::Null);
    let mut arrays: Vec<(&str, Column)> = Vec::new();
    let mut writers = Vec::new();
    let dir = scratch.parent().unwrap_or(Path::new(""));
    let stem = scratch
        .file_name()
        .map_or_else(|| "vllm".into(), |n| n.to_string_lossy());
    for (key, detailed_only, column) in PER_REQUEST_ARRAYS {
        if detailed || !detailed_only {
            o.insert(key.into(), Value::String(marker(key)));
            writers.push(ScratchWriter::create(dir, &format!("{stem}.{key}."))?);
            arrays.push((key, column));
        }
    }
    let mut first = true;
    requests.each_request(&mut |r| {
        let d = request_detail(r);
        for ((_, column), w) in arrays.iter().zip(writers.iter_mut()) {
            if !first {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, &column(r, &d))?;
        }
        first = false;
        Ok(())
    })?;
    let files: Vec<Scratch> = writers.into_iter().map(ScratchWriter::finish).collect();
    // In the object's order (a tag's place when one has an array's name).
    let places: Vec<(&str, &Scratch)> = o
        .keys()
        .filter_map(|k| {
            let at = arrays.iter().position(|(key, _)| key == k)?;
            Some((arrays[at].0, &files[at]))
        })
        .collect();
    let text = serde_json::to_vec(&Value::Object(o))?;
    let mut rest = text.as_slice();
    for (key, file) in places {
        let needle = format!("\"{}\"", marker(key));
        let at = memchr::memmem::find(rest, needle.as_bytes())
            .ok_or_else(|| std::io::Error::other("a per-request array's place was not found"))?;
        out.write_all(&rest[..at])?;
        out.write_all(b"[")?;
        std::io::copy(&mut file.reader()?, out)?;
        out.write_all(b"]")?;
        rest = &rest[at + needle.len()..];
    }
    out.write_all(rest)?;
    out.write_all(b"\n")
}

/// vLLM's object, each per-request array made by `array` from its column.
fn vllm_map(
    info: &StageInfo,
    m: &StageMetrics,
    view: &SummaryView,
    detailed: bool,
    mut array: impl FnMut(Column) -> Value,
) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("date".into(), json!(info.date));
    o.insert("endpoint_type".into(), json!(info.backend));
    o.insert("backend".into(), json!(info.backend));
    o.insert("label".into(), json!(info.label));
    o.insert("model_id".into(), json!(info.model));
    let tokenizer = info.tags.get("tokenizer").unwrap_or(&info.model);
    o.insert("tokenizer_id".into(), json!(tokenizer));
    o.insert("num_prompts".into(), json!(info.num_prompts));
    for (k, v) in &info.tags {
        o.entry(k.clone()).or_insert_with(|| json!(v));
    }
    let rate = if info.request_rate.is_finite() {
        json!(info.request_rate)
    } else {
        json!("inf")
    };
    o.insert("request_rate".into(), rate);
    o.insert("burstiness".into(), json!(info.burstiness));
    o.insert("max_concurrency".into(), json!(info.max_concurrency));
    o.insert("duration".into(), json!(m.duration_s));
    o.insert("completed".into(), json!(m.completed));
    o.insert("failed".into(), json!(m.failed));
    o.insert("total_input_tokens".into(), json!(m.total_input));
    o.insert("total_output_tokens".into(), json!(m.total_output));
    o.insert("request_throughput".into(), json!(m.request_throughput));
    o.insert("request_goodput".into(), json!(m.request_goodput));
    o.insert("output_throughput".into(), json!(m.output_throughput));
    o.insert(
        "total_token_throughput".into(),
        json!(m.total_token_throughput),
    );
    for (key, detailed_only, column) in PER_REQUEST_ARRAYS {
        if detailed || !detailed_only {
            o.insert(key.into(), array(column));
        }
    }
    o.insert(
        "max_output_tokens_per_s".into(),
        json!(m.max_output_tokens_per_s),
    );
    o.insert(
        "max_concurrent_requests".into(),
        json!(m.max_concurrent_requests),
    );
    o.insert("rtfx".into(), json!(0.0));
    for metric in view.printed(info) {
        let name = metric.name();
        // vLLM writes zeros when there is no sample.
        let s = view.summary_of(m, metric);
        o.insert(format!("mean_{name}_ms"), number_to_json(s.mean));
        o.insert(format!("median_{name}_ms"), number_to_json(s.median));
        o.insert(format!("std_{name}_ms"), number_to_json(s.std));
        for (p, v) in view_percentiles(&s, &view.percentiles) {
            o.insert(format!("p{}_{name}_ms", p_word(p)), number_to_json(v));
        }
    }
    o
}

/// vLLM's file name for a stage: `{label or backend}-{rate}qps[-concurrency{N}]-{model}-{date}.json`.
pub fn vllm_file_name(info: &StageInfo) -> String {
    let head = info.label.clone().unwrap_or_else(|| info.backend.clone());
    let conc = info
        .max_concurrency
        .map_or(String::new(), |c| format!("-concurrency{c}"));
    let model = info.model.rsplit('/').next().unwrap_or(&info.model);
    format!(
        "{head}-{}qps{conc}-{model}-{}.json",
        py_float(info.request_rate),
        info.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--save-detailed`'s arrays, one entry per request: a failed request has 0 tokens, 0 s,
    /// no ITLs and its error; a successful one its figures in seconds.
    #[test]
    fn detailed_arrays_hold_every_request_failed_ones_as_zeros() {
        use crate::loadgen::record::{ChunkArrival, Failure, FailureKind};
        let chunk = |at_s| ChunkArrival {
            at_s,
            tokens: 1,
            coalesced: false,
        };
        let ok = RequestRecord {
            input_len: 7,
            intended_at_s: 1.0,
            sent_at_s: 1.5,
            ttft_s: Some(0.25),
            e2el_s: Some(0.75),
            chunks: [chunk(0.25), chunk(0.5), chunk(0.75)].into_iter().collect(),
            generated_text: "a b c".into(),
            ..RequestRecord::default()
        };
        let failed = RequestRecord {
            input_len: 5,
            intended_at_s: 2.0,
            sent_at_s: 1.0,
            chunks: [chunk(0.1)].into_iter().collect(),
            failure: Some(Failure {
                kind: FailureKind::Http(500),
                message: "HTTP 500".into(),
            }),
            ..RequestRecord::default()
        };
        let v = vllm_json(
            &StageInfo::default(),
            &StageMetrics::default(),
            &[ok, failed],
            &SummaryView::default(),
            true,
        );
        assert_eq!(v["input_lens"], json!([7, 5]));
        assert_eq!(v["output_lens"], json!([3, 0]));
        assert_eq!(v["ttfts"], json!([0.25, 0.0]));
        assert_eq!(v["itls"], json!([[0.25, 0.25], []]));
        assert_eq!(v["latencies"], json!([0.75, 0.0]));
        assert_eq!(v["start_times"], json!([1.5, 1.0]));
        // Sent before it was due counts as no queueing.
        assert_eq!(v["queue_times"], json!([0.5, 0.0]));
        assert_eq!(v["generated_texts"], json!(["a b c", ""]));
        assert_eq!(v["errors"], json!(["", "http_500: HTTP 500"]));
    }

    /// The streamed file is `vllm_json`'s text and a newline: per-request arrays in their
    /// places (a tag of an array's name gives way to the array, and stays when the array is not
    /// written), none for no request.
    #[test]
    fn streamed_file_is_the_objects_text() {
        use crate::loadgen::record::{ChunkArrival, Failure, FailureKind};
        let reqs: Vec<RequestRecord> = (0..4)
            .map(|i| RequestRecord {
                input_len: 7 + i,
                intended_at_s: i as f64,
                sent_at_s: i as f64 + 0.125,
                ttft_s: Some(0.25),
                e2el_s: (i != 2).then_some(0.75),
                chunks: (0..3)
                    .map(|k| ChunkArrival {
                        at_s: 0.25 + f64::from(k) / 3.0,
                        tokens: 1,
                        coalesced: false,
                    })
                    .collect(),
                generated_text: format!("a \"{i}\"\n"),
                failure: (i == 2).then(|| Failure::new(FailureKind::Http(500), "HTTP 500")),
                ..RequestRecord::default()
            })
            .collect();
        let mut info = StageInfo::fixture(4.0, Some(2));
        info.tags.insert("itls".into(), "tag".into());
        info.tags.insert("latencies".into(), "tag".into());
        info.tags.insert("tp".into(), "2".into());
        let view = SummaryView {
            metrics: vec![super::super::PercentileMetric::Ttft],
            percentiles: vec![50.0, 99.0],
            ..SummaryView::default()
        };
        let m = StageMetrics {
            completed: 3,
            failed: 1,
            duration_s: 1.5,
            ..StageMetrics::default()
        };
        for detailed in [false, true] {
            for requests in [reqs.clone(), Vec::new()] {
                let want = vllm_json(&info, &m, &requests, &view, detailed).to_string() + "\n";
                let dir = tempfile::tempdir().unwrap();
                let mut got = Vec::new();
                let scratch = dir.path().join("scratch");
                write_vllm_json(&mut got, &info, &m, &requests, &view, detailed, &scratch).unwrap();
                assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
                assert_eq!(String::from_utf8(got).unwrap(), want);
                assert_eq!(want.contains(r#""itls":"tag""#), !detailed);
                assert!(!want.contains(r#""latencies":"tag""#));
            }
        }
    }

    #[test]
    fn vllm_file_names() {
        let info = StageInfo {
            backend: "openai".into(),
            request_rate: 4.0,
            max_concurrency: Some(16),
            model: "org/Model-7B".into(),
            date: "20250101-000000".into(),
            ..StageInfo::default()
        };
        assert_eq!(
            vllm_file_name(&info),
            "openai-4.0qps-concurrency16-Model-7B-20250101-000000.json"
        );
        let info = StageInfo {
            request_rate: f64::INFINITY,
            label: Some("x".into()),
            ..info
        };
        assert!(vllm_file_name(&info).starts_with("x-infqps-"));
    }
}
