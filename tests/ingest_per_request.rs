//! Per-request exports of other tools read into `Record::requests` with their timing on the
//! stage's clock: AIPerf `profile_export.jsonl`, genai-perf's raw `profile_export.json` and
//! guidellm's request samples. Expected values are read off the fixtures by hand (see
//! `tests/fixtures/tools/README.md` for where each fixture comes from).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::analysis::timeline::{has_run_detail, spans, Outcome};
use benchlens::ingest::{self, Format, Ingested};
use common::{close, metric, read_fixture};

fn read_text(name: &str, text: &str) -> Ingested {
    ingest::read(name, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

fn warned(got: &Ingested, at: &str, part: &str) -> bool {
    got.warnings
        .iter()
        .any(|w| w.at.as_deref().is_some_and(|a| a.starts_with(at)) && w.message.contains(part))
}

#[test]
fn aiperf_jsonl_requests_on_the_runs_clock() {
    let got = read_fixture("tools/aiperf_run1_profile_export.jsonl");
    assert_eq!(got.format, Format::AiperfRecords);
    assert_eq!(got.records.len(), 1, "{:?}", got.warnings);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 24);
    assert!(has_run_detail(r));
    // Line 1: cancelled, sent 260,727 ns after the earliest send (line 19's).
    let q = &r.requests[0];
    assert_eq!(
        q.error.as_deref(),
        Some("Request was cancelled after 0.000 seconds")
    );
    assert_eq!(q.error_kind.as_deref(), Some("cancelled"));
    close(q.sent_s, 0.000_260_727);
    assert_eq!(q.e2el_ms, None);
    // Line 12: the first completed request.
    let q = &r.requests[11];
    assert_eq!(q.error, None);
    close(q.sent_s, 0.004_623_483);
    close(q.ttft_ms, 1680.543782);
    close(q.e2el_ms, 7936.968269);
    assert_eq!(q.input_len, Some(550));
    assert_eq!(q.output_len, Some(193));
    assert_eq!(q.itl_ms.len(), 192);
    close(q.itl_ms.get(0), 134.440792);
    close(r.requests[23].ttft_ms, 861.4480259999999);
    close(r.requests[23].sent_s, 0.002_192_287);
    // Summary from the requests: 11 cancelled, 13 completed.
    close(metric(r, "completed"), 13.0);
    close(metric(r, "failed"), 11.0);
    close(metric(r, "mean_ttft_ms"), 1193.5712075384615);
    assert_eq!(r.input_len, Some(550.0));
    let failed = spans(&r.requests)
        .iter()
        .filter(|s| s.outcome == Outcome::Failed("cancelled".into()))
        .count();
    assert_eq!(failed, 11);
}

#[test]
fn aiperf_jsonl_of_the_later_schema() {
    let got = read_fixture("tools/aiperf_qwen_concurrency1_profile_export.jsonl");
    assert_eq!(got.format, Format::AiperfRecords);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 10);
    let q = &r.requests[1];
    close(q.sent_s, 3.648_202_589);
    close(q.ttft_ms, 31.274151999999997);
    close(q.e2el_ms, 3659.807704);
    assert_eq!(q.output_len, Some(200));
    assert_eq!(q.itl_ms.len(), 199);
    close(r.requests[9].sent_s, 35.737_186_585);
    close(r.requests[9].end_s(), 35.737_186_585 + 3.650_301_848);
    close(metric(r, "completed"), 10.0);
    close(metric(r, "failed"), 0.0);
}

#[test]
fn aiperf_jsonl_warmup_left_out_and_bad_lines_named() {
    let text = concat!(
        r#"{"metadata":{"request_start_ns":1700000000500000000,"benchmark_phase":"warmup"},"metrics":{"time_to_first_token":{"value":5,"unit":"ms"}},"error":null}"#,
        "\n",
        r#"{"metadata":{"request_start_ns":1700000001000000000,"credit_issued_ns":1700000000000000000,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":0.25,"unit":"s"},"request_latency":{"value":900,"unit":"ms"}},"error":null}"#,
        "\n",
        r#"{"metadata":{"request_start_ns":1700000002000000000,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":"abc","unit":"ms"},"request_latency":{"value":-3,"unit":"ms"}},"error":null}"#,
        "\n",
        r#"{"metadata":{"request_start_ns":-7,"benchmark_phase":"profiling"},"metrics":{},"error":{"code":503,"type":"HTTPError","message":"Service Unavailable"}}"#,
        "\n",
        r#"{"metadata":{"request_start_ns":5,"benchmark_phase":"profiling"},"metrics":{"inter_chunk_latency":{"value":"x","unit":"ms"}},"error":null}"#,
        "\n",
        r#"{"metadata":"oops","metrics":{}}"#,
        "\n",
        r#"{"metadata":{"request_start_ns":1700000003000000000,"benchmark_phase":"profiling"},"metrics":{"ttft":"#,
        "\n",
    );
    let got = read_text("profile_export.jsonl", text);
    assert_eq!(got.format, Format::AiperfRecords);
    let r = &got.records[0];
    // Lines 2–5 kept; the warmup line, the line without metadata and the truncated one not.
    assert_eq!(r.requests.len(), 4, "{:?}", got.warnings);
    assert!(got
        .warnings
        .iter()
        .any(|w| w.message == "1 warmup requests left out"));
    let q = &r.requests[0];
    close(q.intended_s, 0.0);
    close(q.sent_s, 1.0);
    close(q.ttft_ms, 250.0);
    close(q.e2el_ms, 900.0);
    assert!(warned(
        &got,
        "line 3: metrics.time_to_first_token",
        "not a number"
    ));
    assert!(warned(&got, "line 3: metrics.request_latency", "negative"));
    assert_eq!(r.requests[1].e2el_ms, None);
    assert!(warned(
        &got,
        "line 4: metadata.request_start_ns",
        "negative timestamp"
    ));
    assert_eq!(r.requests[2].sent_s, None);
    assert_eq!(r.requests[2].error_kind.as_deref(), Some("http_503"));
    assert!(warned(
        &got,
        "line 5: metrics.inter_chunk_latency",
        "not a list"
    ));
    assert!(warned(&got, "line 5", "more than a week"));
    assert_eq!(r.requests[3].sent_s, None);
    assert!(warned(&got, "line 6", "no \"metadata\""));
    assert!(warned(&got, "line 7", "invalid JSON"));
}

#[test]
fn genai_perf_raw_openai_stream_times_from_text_chunks() {
    let got = read_fixture("tools/genai_perf_raw_openai_profile_export.json");
    assert_eq!(got.format, Format::GenaiPerfRaw);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    assert_eq!(r.max_concurrency, Some(10));
    assert_eq!(r.model.as_deref(), Some("llama-2-7b"));
    assert_eq!(
        r.tags.get("service_kind").map(String::as_str),
        Some("openai")
    );
    assert_eq!(r.requests.len(), 2);
    // Request 1 at 1 ns: text chunks at 5, 8 and 12 ns (the role chunk, the empty delta and
    // [DONE] are not text), as genai-perf's own test expects: TTFT 4 ns, latency 11 ns.
    let q = &r.requests[0];
    close(q.sent_s, 0.0);
    close(q.ttft_ms, 4e-6);
    close(q.e2el_ms, 11e-6);
    assert_eq!(q.itl_ms.len(), 2);
    close(q.itl_ms.get(0), 3e-6);
    close(q.itl_ms.get(1), 4e-6);
    let q = &r.requests[1];
    close(q.sent_s, 1e-9);
    close(q.ttft_ms, 5e-6);
    close(q.e2el_ms, 13e-6);
    close(metric(r, "mean_ttft_ms"), 4.5e-6);
    assert!(has_run_detail(r));
}

#[test]
fn genai_perf_raw_triton_one_record_per_experiment() {
    let got = read_fixture("tools/genai_perf_raw_triton_profile_export.json");
    assert_eq!(got.format, Format::GenaiPerfRaw);
    assert_eq!(got.records.len(), 2);
    assert_eq!(got.records[0].max_concurrency, Some(10));
    let r = &got.records[1];
    assert_eq!(r.request_rate, Some(2.0));
    // Requests at 5 ns and 3 ns: the clock starts at 3 ns.
    let (a, b) = (&r.requests[0], &r.requests[1]);
    close(a.sent_s, 2e-9);
    close(a.ttft_ms, 2e-6);
    close(a.e2el_ms, 13e-6);
    close(b.sent_s, 0.0);
    close(b.ttft_ms, 3e-6);
    close(b.e2el_ms, 8e-6);
}

#[test]
fn genai_perf_raw_bad_requests_are_named() {
    let text = r#"{"experiments":[{"experiment":{"mode":"concurrency","value":2},"requests":[
        {"timestamp":100,"response_timestamps":[150,170],"response_outputs":[{"text_output":"a"},{"text_output":"b"}]},
        {"timestamp":-4,"response_timestamps":[150]},
        {"timestamp":200,"response_timestamps":[150,160]},
        {"timestamp":300,"response_timestamps":"soon"},
        {"timestamp":400,"response_timestamps":[500,450]},
        7,
        {"timestamp":500,"response_timestamps":[600,700],"response_outputs":[{"text_output":"a"}]}
    ]},{"experiment":{"mode":"concurrency","value":4},"requests":"none"}]}"#;
    let got = read_text("profile_export.json", text);
    assert_eq!(got.format, Format::GenaiPerfRaw);
    assert_eq!(got.records.len(), 1, "{:?}", got.warnings);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 6);
    close(r.requests[0].ttft_ms, 50e-6);
    assert!(warned(
        &got,
        "experiments[0].requests[1].timestamp",
        "negative"
    ));
    assert_eq!(r.requests[1].sent_s, None);
    assert!(warned(&got, "experiments[0].requests[2]", "negative"));
    assert_eq!(r.requests[2].ttft_ms, None);
    assert!(warned(
        &got,
        "experiments[0].requests[3].response_timestamps",
        "not a list"
    ));
    assert!(warned(
        &got,
        "experiments[0].requests[4]",
        "increasing order"
    ));
    assert!(warned(
        &got,
        "experiments[0].requests[5]",
        "not a JSON object"
    ));
    assert!(warned(
        &got,
        "experiments[0].requests[6].response_outputs",
        "1 outputs for 2"
    ));
    close(r.requests[5].e2el_ms, 200e-6);
    assert!(warned(&got, "experiments[1].requests", "not a list"));
}

#[test]
fn guidellm_samples_become_requests_and_the_summary_stays() {
    let got = read_fixture("tools/guidellm_samples_benchmarks.json");
    assert_eq!(got.format, Format::Guidellm);
    assert_eq!(got.records.len(), 1);
    let r = &got.records[0];
    // The file's own summary: its totals (under `metrics` since guidellm 0.4) and
    // distributions, not figures computed from the kept samples.
    close(metric(r, "completed"), 19.0);
    close(metric(r, "failed"), 0.0);
    close(metric(r, "mean_ttft_ms"), 59.9928153188605);
    assert_eq!(r.max_concurrency, Some(1));
    // Six successful samples kept in the fixture, then the incomplete one.
    assert_eq!(r.requests.len(), 7);
    let q = &r.requests[1];
    close(q.sent_s, 42.23216247558594);
    close(q.ttft_ms, 82.97514915466309);
    close(q.e2el_ms, 39_666.10288619995);
    assert_eq!(q.input_len, Some(106));
    assert_eq!(q.output_len, Some(1024));
    // Synchronous: the targeted start is no schedule.
    assert_eq!(q.intended_s, None);
    let c = &r.requests[6];
    assert_eq!(c.error.as_deref(), Some("Request was cancelled"));
    assert_eq!(c.error_kind.as_deref(), Some("cancelled"));
    close(c.sent_s, 911.0468258857727);
    assert_eq!(c.e2el_ms, None);
    assert!(has_run_detail(r));
}

#[test]
fn guidellm_old_schema_samples_with_a_schedule_and_bad_times() {
    // guidellm 0.2–0.3 field names, a poisson benchmark (written here, not a tool's output).
    let text = r#"{"benchmarks":[{"type_":"generative_benchmark",
        "args":{"strategy":{"type_":"poisson","rate":4.0}},
        "metrics":{"requests_per_second":{"successful":{"mean":3.9}}},
        "requests":{
          "successful":[
            {"start_time":1700000000.5,"end_time":1700000002.0,"first_token_time":1700000000.75,
             "prompt_tokens":10,"output_tokens":20,
             "scheduler_info":{"targeted_start_time":1700000000.25}},
            {"start_time":"never","end_time":1700000003.0,"first_token_time":1700000001.0},
            {"start_time":1700000001.0,"end_time":1700000000.0,"first_token_time":-1}
          ],
          "errored":[{"start_time":1700000001.5,"error":"HTTP 500","scheduler_info":{"targeted_start_time":-1}}],
          "incomplete":"n/a"
        }}]}"#;
    let got = read_text("benchmarks.json", text);
    assert_eq!(got.format, Format::Guidellm);
    let r = &got.records[0];
    assert_eq!(r.requests.len(), 4, "{:?}", got.warnings);
    let q = &r.requests[0];
    close(q.intended_s, 0.0);
    close(q.sent_s, 0.25);
    close(q.ttft_ms, 250.0);
    close(q.e2el_ms, 1500.0);
    assert!(warned(
        &got,
        "benchmarks[0].requests.successful[1].start_time",
        "not a number"
    ));
    assert_eq!(r.requests[1].sent_s, None);
    assert!(warned(
        &got,
        "benchmarks[0].requests.successful[2].request_latency",
        "negative"
    ));
    assert_eq!(r.requests[2].e2el_ms, None);
    assert_eq!(r.requests[2].ttft_ms, None);
    let e = &r.requests[3];
    assert_eq!(e.error.as_deref(), Some("HTTP 500"));
    close(e.sent_s, 1.25);
    assert_eq!(e.intended_s, None);
    assert!(warned(
        &got,
        "benchmarks[0].requests.incomplete",
        "not a list"
    ));
}

#[test]
fn guidellm_without_samples_has_no_requests() {
    let got = read_fixture("tools/benchmarks.json");
    assert!(got.records.iter().all(|r| r.requests.is_empty()));
}
