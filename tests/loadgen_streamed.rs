//! The per-request file is written as requests end: its rows are on disk while the load runs,
//! and after a Ctrl-C in the middle of the load it is complete and well-formed (one row per
//! request sent, in send order, each a whole JSON object), and it agrees with the canonical
//! file's counts, so nothing measured is lost.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchlens::model::{canonical, MetricKey};
use serde_json::Value;

mod support;
use support::{spawn_mock, Killed, BIN};

fn rows(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn rows_stream_during_the_load_and_survive_an_interrupt_whole() {
    let (_mock, url) = spawn_mock(&["--ttft-ms", "1", "--itl-ms", "2"], "http");
    let dir = tempfile::tempdir().unwrap();
    let mut run = Killed(
        Command::new(BIN)
            .args(["run", "--base-url", &url, "--num-prompts", "100000"])
            .args(["--max-concurrency", "8", "--request-rate", "inf"])
            .args(["--input-len", "8", "--output-len", "8", "--ignore-eos"])
            .args(["--result-filename", "r.json", "--no-progress"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let jsonl = dir.path().join("r.requests.jsonl");
    // Rows appear while the load runs, long before its 100,000 requests are done.
    let start = Instant::now();
    while rows(&jsonl) < 300 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} rows after 60 s",
            rows(&jsonl)
        );
        assert!(run.0.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!dir.path().join("r.json").exists());
    let pid = run.0.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    let code = loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            break status.code();
        }
        assert!(start.elapsed() < Duration::from_secs(10), "still running");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(130));

    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(text.ends_with('\n'), "the last row is whole");
    let rows: Vec<Value> = text
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("row {i}: {e}: {l}")))
        .collect();
    // One row per request sent, in send order: indices 0, 1, 2, ...
    let indices: Vec<u64> = rows.iter().map(|r| r["index"].as_u64().unwrap()).collect();
    assert_eq!(indices, (0..rows.len() as u64).collect::<Vec<_>>());
    assert!(rows.len() < 100_000, "interrupted mid-load");
    let kind = |r: &Value| r["error_kind"].as_str().map(str::to_string);
    let ok: Vec<&Value> = rows.iter().filter(|r| kind(r).is_none()).collect();
    let cancelled = rows
        .iter()
        .filter(|r| kind(r).as_deref() == Some("cancelled"))
        .count();
    let failed = rows.len() - ok.len() - cancelled;
    // Every completed row carries its timings and counted reply.
    for r in &ok {
        assert!(r["ttft_ms"].as_f64().unwrap() >= 0.0, "{r}");
        assert_eq!(r["chunks_ms_tokens"].as_array().unwrap().len(), 8, "{r}");
        assert_eq!(r["output_tokens_client"].as_u64(), Some(8), "{r}");
    }

    let decoded =
        canonical::from_json(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let rec = &decoded.records[0];
    assert_eq!(rec.tags["partial"], "true");
    let metric = |k: &str| rec.metrics.get(&MetricKey::Extra(k.into())).copied();
    assert_eq!(rec.metrics[&MetricKey::Completed], ok.len() as f64);
    assert_eq!(rec.metrics[&MetricKey::Failed], failed as f64);
    assert_eq!(
        metric("cancelled_requests").unwrap_or(0.0),
        cancelled as f64
    );
    // Output tokens: the server's usage when given, else the chunks' (as the run counts them).
    let tokens: u64 = ok
        .iter()
        .map(|r| {
            r["output_tokens_server"].as_u64().unwrap_or_else(|| {
                let chunks = r["chunks_ms_tokens"].as_array().unwrap();
                chunks.iter().map(|c| c[1].as_u64().unwrap()).sum()
            })
        })
        .sum();
    assert_eq!(metric("total_output_tokens"), Some(tokens as f64));
    // The canonical file's per-request detail is the completed and failed rows'.
    assert_eq!(rec.requests.len(), ok.len() + failed);
    let ttfts: Vec<f64> = ok.iter().map(|r| r["ttft_ms"].as_f64().unwrap()).collect();
    let detail: Vec<f64> = rec.requests.iter().filter_map(|q| q.ttft_ms).collect();
    assert_eq!(detail, ttfts);
}
