//! Workloads beyond a fixed rate: `--dataset trace` replays public trace excerpts
//! (tests/fixtures/traces/)
//! against the mock, every request at its scaled arrival time with the trace's exact lengths;
//! `--ramp-up-strategy` grows the rate over a stage.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;

use benchlens::model::canonical;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

/// Replays `file` at `speed` and returns (the stage record, the per-request lines in index order).
fn replay(file: &str, speed: &str, extra: &[&str]) -> (benchlens::model::Record, Vec<Value>) {
    let dir = std::env::temp_dir().join(format!("benchlens-trace-{}-{file}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--mock-ttft-ms",
            "5",
            "--mock-itl-ms",
            "0.2",
            "--model",
            "m",
        ])
        .args([
            "--tokenizer",
            "words",
            "--dataset",
            "trace",
            "--trace-speed",
            speed,
        ])
        .args([
            "--no-progress",
            "--result-filename",
            "t.json",
            "--dataset-path",
        ])
        .arg(fixture(file))
        .arg("--result-dir")
        .arg(&dir)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("t.json")).unwrap();
    let mut records = canonical::from_json(&text).unwrap().records;
    let lines = std::fs::read_to_string(dir.join("t.requests.jsonl")).unwrap();
    // Rows are in the order requests ended; the trace's order is the requests' index.
    let mut lines: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|l| l["index"].as_u64());
    let _ = std::fs::remove_dir_all(&dir);
    (records.remove(0), lines)
}

fn column(lines: &[Value], key: &str) -> Vec<f64> {
    lines.iter().map(|l| l[key].as_f64().unwrap()).collect()
}

#[test]
fn azure_trace_replays_its_times_and_lengths() {
    let (record, lines) = replay("azure-conv-head.csv", "20", &[]);
    assert_eq!(record.dataset.as_deref(), Some("trace-azure"));
    assert_eq!(lines.len(), 30);
    let text = std::fs::read_to_string(fixture("azure-conv-head.csv")).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let secs = |s: &str| {
        let t = s.split(' ').nth(1).unwrap();
        let p: Vec<f64> = t.split(':').map(|x| x.parse().unwrap()).collect();
        p[0] * 3600.0 + p[1] * 60.0 + p[2]
    };
    let t0 = secs(rows[0][0]);
    for (line, row) in lines.iter().zip(&rows) {
        assert_eq!(
            line["input_len"].as_u64().unwrap(),
            row[1].parse::<u64>().unwrap()
        );
        assert_eq!(
            line["max_tokens"].as_u64().unwrap(),
            row[2].parse::<u64>().unwrap()
        );
        let want = (secs(row[0]) - t0) / 20.0;
        let got = line["intended_send_s"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        assert!(line["error"].is_null(), "{line}");
    }
    // The stage's series counts every send, second by second.
    let series = &record.series;
    let sent: f64 = series["sent"].iter().sum();
    assert_eq!(sent, 30.0);
    assert_eq!(series["t_s"].len(), series["output_tokens"].len());
    // The recorded rate is the trace's own: 29 gaps over its scaled span.
    let span = (secs(rows[29][0]) - t0) / 20.0;
    let rate = record.request_rate.unwrap();
    assert!((rate - 29.0 / span).abs() < 1e-6, "{rate}");
}

#[test]
fn burstgpt_and_mooncake_traces_replay_too() {
    let (record, lines) = replay("burstgpt-readme-sample.csv", "100", &[]);
    assert_eq!(record.dataset.as_deref(), Some("trace-burstgpt"));
    assert_eq!(column(&lines, "input_len"), vec![472.0, 1087.0, 417.0]);
    assert_eq!(column(&lines, "max_tokens"), vec![18.0, 230.0, 276.0]);
    let at = column(&lines, "intended_send_s");
    assert!(
        (at[1] - 0.4).abs() < 1e-9 && (at[2] - 1.13).abs() < 1e-9,
        "{at:?}"
    );

    let (record, lines) = replay("mooncake-conversation-head.jsonl", "20", &[]);
    assert_eq!(record.dataset.as_deref(), Some("trace-mooncake"));
    assert_eq!(
        column(&lines, "input_len"),
        vec![
            6758.0, 7322.0, 7236.0, 2290.0, 6760.0, 4834.0, 6324.0, 2012.0, 7324.0, 915.0, 1053.0,
            5710.0
        ]
    );
    let at = column(&lines, "intended_send_s");
    assert_eq!(at[..6], [0.0; 6]);
    assert!(
        (at[6] - 0.15).abs() < 1e-9 && (at[11] - 0.29995).abs() < 1e-9,
        "{at:?}"
    );
}

#[test]
fn trace_sampling_and_bad_traces() {
    // --num-prompts caps the replay from the start.
    let (_, lines) = replay("azure-conv-head.csv", "20", &["--num-prompts", "5"]);
    assert_eq!(lines.len(), 5);
    let bad = std::env::temp_dir().join(format!("benchlens-bad-trace-{}.csv", std::process::id()));
    std::fs::write(
        &bad,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,12,4\nnoon,1,2\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--model",
            "m",
            "--tokenizer",
            "words",
            "--dataset",
            "trace",
        ])
        .arg("--dataset-path")
        .arg(&bad)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&bad);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("trace: line 3: time \"noon\" does not read"),
        "{err}"
    );
}

#[test]
fn a_ramp_grows_the_rate_and_is_recorded() {
    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--mock-ttft-ms",
            "1",
            "--mock-itl-ms",
            "0.1",
            "--model",
            "m",
        ])
        .args([
            "--tokenizer",
            "words",
            "--input-len",
            "8",
            "--output-len",
            "2",
        ])
        .args([
            "--ramp-up-strategy",
            "exponential",
            "--ramp-up-start-rps",
            "20",
        ])
        .args([
            "--ramp-up-end-rps",
            "2000",
            "--burstiness",
            "1e9",
            "--num-prompts",
            "100",
        ])
        .args(["--no-progress", "--result-filename", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = canonical::from_json(&String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .records
        .remove(0);
    assert_eq!(
        r.tags.get("ramp_up_strategy").map(String::as_str),
        Some("exponential")
    );
    assert_eq!(
        r.tags.get("ramp_up_end_rps").map(String::as_str),
        Some("2000")
    );
    // Constant gaps at 20 × 100^(i/100) req/s: the span is Σ 1/rate over the first 99.
    let span: f64 = (0..99)
        .map(|i| 1.0 / (20.0 * 100f64.powf(f64::from(i) / 100.0)))
        .sum();
    let rate = r.request_rate.unwrap();
    // Burstiness 1e9 leaves each gap a 3e-5 spread (1 / √shape).
    assert!(
        (rate - 99.0 / span).abs() < 1e-4 * rate,
        "{rate} vs {}",
        99.0 / span
    );

    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--model",
            "m",
            "--ramp-up-strategy",
            "exponential",
        ])
        .args(["--ramp-up-start-rps", "0", "--ramp-up-end-rps", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid --ramp-up-start-rps: an exponential ramp must start above 0"),
        "{err}"
    );
}

#[test]
fn server_telemetry_lands_in_the_series_and_a_failed_scrape_only_warns() {
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args([
                "run",
                "--mock",
                "--mock-max-batch",
                "2",
                "--mock-ttft-ms",
                "20",
            ])
            .args(["--mock-itl-ms", "5", "--model", "m", "--tokenizer", "words"])
            .args(["--input-len", "8", "--output-len", "20", "--ignore-eos"])
            .args([
                "--request-rate",
                "30",
                "--num-prompts",
                "40",
                "--no-progress",
            ])
            .args(["--result-filename", "-"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Three times the batch's capacity (2 slots of 20 + 19 × 5 × 2 ms): requests queue.
    let out = run(&["--scrape-metrics"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = canonical::from_json(&String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .records
        .remove(0);
    let col = |k: &str| r.series.get(k).cloned().unwrap_or_default();
    let seconds = col("t_s").len();
    assert!(seconds >= 3, "{seconds} seconds");
    for k in [
        "server.running",
        "server.waiting",
        "server.kv_cache_usage",
        "server.batch_size",
    ] {
        assert_eq!(col(k).len(), seconds, "{k}");
    }
    let max = |k: &str| {
        col(k)
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    };
    assert_eq!(max("server.running"), 2.0);
    assert_eq!(max("server.kv_cache_usage"), 1.0);
    assert!(max("server.waiting") >= 5.0, "{:?}", col("server.waiting"));
    // The mock's token counters are rates over each scrape interval: together about the
    // 40 × 20 tokens streamed (less what came before the first scrape and after the last).
    let rates: Vec<f64> = col("server.generation_tokens_per_s")
        .into_iter()
        .filter(|v| v.is_finite())
        .collect();
    assert!(
        !rates.is_empty() && rates.iter().all(|r| *r >= 0.0 && *r <= 800.0),
        "{rates:?}"
    );
    let streamed: f64 = rates.iter().sum();
    assert!((200.0..=800.0).contains(&streamed), "{rates:?}");
    assert!(col("server.prompt_tokens_per_s")
        .iter()
        .any(|v| v.is_finite()));
    // The mock has no prefix cache, which vLLM's names include: said once, and in the file.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("does not export prefix_cache_hit_rate").count(),
        1,
        "{err}"
    );
    assert_eq!(
        r.tags.get("server_metrics_missing").map(String::as_str),
        Some(
            "prefix_cache_hit_rate (vllm:gpu_prefix_cache_hit_rate, vllm:prefix_cache_hits, \
             vllm:prefix_cache_queries)"
        )
    );
    assert!(!r.series.contains_key("server.prefix_cache_hit_rate"));

    // A path the server does not have: one warning, the run goes on and succeeds.
    let out = run(&["--scrape-metrics", "/no-such-metrics"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("warning: scraping /no-such-metrics failed")
            .count(),
        1,
        "{err}"
    );
    let r = canonical::from_json(&String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .records
        .remove(0);
    assert!(!r.series.keys().any(|k| k.starts_with("server.")));
}
