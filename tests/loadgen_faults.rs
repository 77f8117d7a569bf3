//! Errors are data: the client counts every injected fault by kind, keeps failed requests out
//! of the throughput, and never panics. In-process against the mock on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;

use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, RunOpts};
use benchlens::model::MetricKey;
use tokio::sync::watch;

mod support;

fn opts(base_url: String, dir: &std::path::Path) -> RunOpts {
    RunOpts {
        base_url,
        result_dir: dir.to_path_buf(),
        no_progress: true,
        num_prompts: 40,
        max_concurrency: vec![8],
        input_len: 16,
        output_len: Some(16),
        ignore_eos: true,
        model: Some("benchlens-mock".into()),
        tokenizer: "words".into(),
        ..RunOpts::default()
    }
}

fn fast_mock() -> MockOpts {
    MockOpts {
        ttft_ms: 5.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    }
}

async fn failures(o: RunOpts) -> (BTreeMap<String, u64>, benchlens::loadgen::RunOutcome) {
    let (_tx, rx) = watch::channel(false);
    let out = run_with_stop(o, rx).await.unwrap();
    (out.metrics[0].failures.clone(), out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_injected_fault_is_counted_by_kind() {
    let mock = MockServer::start(MockOpts {
        error_rate: 0.15,
        drop_rate: 0.15,
        reset_rate: 0.15,
        stall_rate: 0.15,
        stall_ms: 400.0,
        malformed_rate: 0.15,
        ..fast_mock()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(mock.base_url(), dir.path());
    o.idle_timeout = Some(0.2);
    o.num_prompts = 60;
    let (f, out) = failures(o).await;
    let m = &out.metrics[0];
    // n·φ mod 1 over 60 requests puts 8 to 10 requests into each band of width 0.15.
    for kind in [
        "http_500",
        "truncated_stream",
        "reset",
        "idle_timeout",
        "malformed_sse",
    ] {
        let n = f.get(kind).copied().unwrap_or(0);
        assert!((8..=10).contains(&n), "{kind}: {n} in {f:?}");
    }
    assert_eq!(f.values().sum::<u64>(), m.failed, "{f:?}");
    assert_eq!(m.completed + m.failed, 60);
    assert!(m.completed >= 12, "{}", m.completed);
    // Failed requests stay out of the throughput and token totals.
    assert_eq!(m.total_output, m.completed * 16);
    let r = &out.records[0];
    assert_eq!(
        r.metrics[&MetricKey::Extra("errors_http_500".into())],
        f["http_500"] as f64
    );
    let snippet = out.requests[0]
        .iter()
        .find_map(|r| r.failure.as_ref().filter(|f| f.message.contains("500")))
        .unwrap();
    assert!(snippet.message.contains("injected error"), "{snippet:?}");
    assert!(out.summaries[0].contains("Errors http_500:"));
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_statuses_and_timeouts_are_failures_not_errors() {
    // Nothing listens on a port we just released.
    let port = support::free_port();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(format!("http://127.0.0.1:{port}"), dir.path());
    o.num_prompts = 5;
    let (f, out) = failures(o).await;
    assert_eq!(f.get("connect_refused"), Some(&5), "{f:?}");
    assert_eq!(out.metrics[0].request_throughput, 0.0);

    let mock = MockServer::start(MockOpts {
        ttft_ms: 300.0,
        ..fast_mock()
    })
    .await
    .unwrap();
    let mut o = opts(mock.base_url(), dir.path());
    o.num_prompts = 4;
    o.endpoint = Some("/v1/nowhere".into());
    let (f, out) = failures(o).await;
    assert_eq!(f.get("http_404"), Some(&4), "{f:?}");
    let msg = &out.requests[0][0].failure.as_ref().unwrap().message;
    assert!(msg.contains("404") && msg.contains("no route"), "{msg}");

    let mut o = opts(mock.base_url(), dir.path());
    o.num_prompts = 4;
    o.first_token_timeout = Some(0.1);
    let (f, _) = failures(o).await;
    assert_eq!(f.get("first_token_timeout"), Some(&4), "{f:?}");

    let mut o = opts(mock.base_url(), dir.path());
    o.num_prompts = 4;
    o.request_timeout = Some(0.2);
    let (f, _) = failures(o).await;
    assert_eq!(f.get("total_timeout"), Some(&4), "{f:?}");
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_a_stream_the_server_aborts_is_a_reset() {
    // Over HTTP/2 the mock's injected drops and resets abort the stream (RST_STREAM), not the
    // connection: the other streams on it go on, and the aborted ones count as resets.
    let mock = MockServer::start(MockOpts {
        drop_rate: 0.25,
        reset_rate: 0.25,
        ..fast_mock()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(mock.base_url(), dir.path());
    o.http2 = true;
    o.num_prompts = 40;
    let (f, out) = failures(o).await;
    let m = &out.metrics[0];
    let resets = f.get("reset").copied().unwrap_or(0);
    assert!((14..=26).contains(&resets), "{f:?}");
    assert_eq!(f.values().sum::<u64>(), resets, "only resets: {f:?}");
    assert_eq!(m.completed + resets, 40);
    let msg = out.requests[0]
        .iter()
        .find_map(|r| r.failure.as_ref())
        .map(|f| f.message.clone())
        .unwrap();
    assert!(msg.contains("stream") || msg.contains("reset"), "{msg}");
    mock.shutdown().await;
}
