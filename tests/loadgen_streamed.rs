//! The per-request file is written as requests end: its rows are on disk while the load runs,
//! and after a Ctrl-C (or a SIGTERM) in the middle of the load it is complete and well-formed
//! (one row per request sent, in the order requests ended, each a whole JSON object), and it
//! agrees with the canonical file's counts, so nothing measured is lost.
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
    interrupted_mid_load("INT", 130);
}

/// Issue 34's "done when": a SIGTERM (a pod stopped) in the middle of a stage leaves a valid,
/// partial file, every request sent in the rows and counted once, marked with the signal.
#[test]
fn a_sigterm_mid_stage_leaves_a_valid_partial_file() {
    let rec = interrupted_mid_load("TERM", 143);
    assert_eq!(rec.tags["interrupted_by"], "SIGTERM");
    assert!(rec.metrics[&MetricKey::Completed] >= 300.0);
}

/// A run of 100,000 requests sent `kill -SIGNAL` once 300 rows are on disk: it exits `code`,
/// its per-request file whole and agreeing with the canonical file. Returns the stage record.
fn interrupted_mid_load(signal: &str, exit_code: i32) -> benchlens::model::Record {
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
        .args([&format!("-{signal}"), &pid])
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
    assert_eq!(code, Some(exit_code));

    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(text.ends_with('\n'), "the last row is whole");
    let mut rows: Vec<Value> = text
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("row {i}: {e}: {l}")))
        .collect();
    // Rows are in the order requests ended; the canonical detail is in send (index) order.
    rows.sort_by_key(|r| r["index"].as_u64());
    // One row per request sent: indices 0, 1, 2, ...
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
    rec.clone()
}

/// `--steady-window --vllm-compatible --save-detailed` runs spool their records rather than
/// hold them: the canonical file's detail and figures are the window's requests (those whose
/// intended send falls in it), vLLM's per-request arrays are the same requests' figures, the
/// texts kept, and no spool file is left.
#[test]
fn steady_window_and_vllm_files_come_from_the_spooled_records() {
    let (_mock, url) = spawn_mock(&["--ttft-ms", "1", "--itl-ms", "1"], "http");
    let dir = tempfile::tempdir().unwrap();
    let mut run = Killed(
        Command::new(BIN)
            .args(["run", "--base-url", &url, "--num-prompts", "400"])
            .args(["--max-concurrency", "16", "--request-rate", "400"])
            .args(["--input-len", "8", "--output-len", "8", "--ignore-eos"])
            .args(["--vllm-compatible", "--save-detailed", "--steady-window"])
            .args(["--result-filename", "v.json", "--no-progress"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let code = loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            break status.code();
        }
        assert!(start.elapsed() < Duration::from_secs(60), "still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names[0].starts_with("benchlens-") && names[0].ends_with(".json"));
    assert_eq!(names[1], names[0].replace(".json", ".requests.jsonl"));
    assert_eq!(names[2], "v.json");

    let mut rows: Vec<Value> = std::fs::read_to_string(dir.path().join(&names[1]))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 400);
    // In send (index) order, as the canonical detail and vLLM's arrays are.
    rows.sort_by_key(|r| r["index"].as_u64());
    let decoded =
        canonical::from_json(&std::fs::read_to_string(dir.path().join(&names[0])).unwrap())
            .unwrap();
    let rec = &decoded.records[0];
    let metric = |k: &str| rec.metrics[&MetricKey::Extra(k.into())];
    let (from, to) = (metric("window_start_s"), metric("window_end_s"));
    assert!(
        rec.tags["steady_window"].starts_with("warm-up"),
        "{:?}",
        rec.tags
    );
    let inside: Vec<&Value> = rows
        .iter()
        .filter(|r| (from..to).contains(&r["intended_send_s"].as_f64().unwrap()))
        .collect();
    assert!(
        inside.len() >= 100 && inside.len() < 400,
        "{}",
        inside.len()
    );
    assert_eq!(rec.metrics[&MetricKey::Completed], inside.len() as f64);
    assert_eq!(rec.metrics[&MetricKey::DurationS], to - from);
    assert_eq!(rec.requests.len(), inside.len());
    let ttfts: Vec<f64> = inside
        .iter()
        .map(|r| r["ttft_ms"].as_f64().unwrap())
        .collect();
    let detail: Vec<f64> = rec.requests.iter().filter_map(|q| q.ttft_ms).collect();
    assert_eq!(detail, ttfts);

    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("v.json")).unwrap()).unwrap();
    assert_eq!(v["completed"].as_u64(), Some(inside.len() as u64));
    assert_eq!(v["duration"].as_f64(), Some(to - from));
    let seconds = |ms: &[f64]| -> Vec<f64> { ms.iter().map(|x| x / 1e3).collect() };
    let array = |k: &str| -> Vec<Value> { v[k].as_array().unwrap().clone() };
    let numbers = |a: Vec<Value>| -> Vec<f64> { a.iter().map(|x| x.as_f64().unwrap()).collect() };
    assert_eq!(numbers(array("ttfts")), seconds(&ttfts));
    let itls: Vec<Vec<f64>> = array("itls")
        .into_iter()
        .map(|a| numbers(a.as_array().unwrap().clone()))
        .collect();
    let want: Vec<Vec<f64>> = rec
        .requests
        .iter()
        .map(|q| seconds(&q.itl_ms.to_vec()))
        .collect();
    assert_eq!(itls, want);
    let texts = array("generated_texts");
    assert_eq!(texts.len(), inside.len());
    assert!(texts.iter().all(|t| !t.as_str().unwrap().is_empty()));
}
