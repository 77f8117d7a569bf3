//! Request timing on the stage's clock read from result files: vLLM's `start_times`
//! (`--save-detailed`) become each request's `sent_s`, counted from the first send, in both the
//! streaming reader (a JSON document) and the whole-value one (JSON Lines), and its `latencies`
//! the E2EL of each successful request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchlens::ingest;

const RUN: &str = r#"{"backend": "vllm", "model_id": "m", "request_rate": 4.0,
  "completed": 3, "mean_ttft_ms": 30.0,
  "input_lens": [10, 10, 10], "output_lens": [5, 5, 0],
  "ttfts": [0.02, 0.03, 0.0], "itls": [[0.01], [0.01], []],
  "start_times": [1000.5, 1000.25, "x"], "latencies": [0.1, 0.2, 0.0],
  "errors": ["", "", "boom"]}"#;

fn sent(name: &str, text: &str) -> Vec<Option<f64>> {
    let read = ingest::read(name, text.as_bytes()).unwrap();
    read.records[0].requests.iter().map(|q| q.sent_s).collect()
}

#[test]
fn vllm_start_times_become_seconds_from_the_first_send() {
    assert_eq!(sent("run.json", RUN), [Some(0.25), Some(0.0), None]);
    let line = RUN.replace('\n', " ");
    assert_eq!(
        sent("runs.jsonl", &format!("{line}\n{line}\n")),
        [Some(0.25), Some(0.0), None]
    );
}

#[test]
fn first_token_and_end_derive_from_the_send() {
    let read = ingest::read("run.json", RUN.as_bytes()).unwrap();
    let q = &read.records[0].requests[0];
    assert!((q.first_token_s().unwrap() - 0.27).abs() < 1e-12);
    assert!((q.end_s().unwrap() - 0.35).abs() < 1e-12);
    let e2el: Vec<Option<f64>> = read.records[0].requests.iter().map(|q| q.e2el_ms).collect();
    // The failed request's 0 s is no latency.
    assert_eq!(e2el, [Some(100.0), Some(200.0), None]);
    let line = RUN.replace('\n', " ");
    let jsonl = ingest::read("runs.jsonl", format!("{line}\n").as_bytes()).unwrap();
    assert_eq!(jsonl.records[0].requests[1].e2el_ms, Some(200.0));
}

#[test]
fn latencies_without_per_request_arrays_or_of_another_length_are_left_out() {
    let summary = r#"{"backend": "vllm", "model_id": "m", "completed": 2, "mean_ttft_ms": 30.0,
      "latencies": [0.1, 0.2]}"#;
    let read = ingest::read("run.json", summary.as_bytes()).unwrap();
    assert!(read.records[0].requests.is_empty());
    let short = RUN.replace("[0.1, 0.2, 0.0]", "[0.1]");
    let read = ingest::read("run.json", short.as_bytes()).unwrap();
    assert!(read.records[0].requests.iter().all(|q| q.e2el_ms.is_none()));
    assert!(
        read.warnings
            .iter()
            .any(|w| w.to_string().contains("latencies")),
        "{:?}",
        read.warnings
    );
}
