//! A run split over 4 processes (`run --shard I/4`) and merged (`benchlens merge`) equals a
//! single-process run of the same options: the same requests (index, prompt length, planned
//! time), the same counts, and percentiles computed over every request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use benchlens::model::{canonical, LatencyMetric, MetricKey, Percentile, Record, Stat};
use serde_json::Value;

mod support;
use support::{spawn_mock, BIN};

const RUN: &[&str] = &[
    "run",
    "--model",
    "m",
    "--tokenizer",
    "words",
    "--num-prompts",
    "40",
    "--request-rate",
    "40",
    "--input-len",
    "8",
    "--range-ratio",
    "0.5",
    "--output-len",
    "6",
    "--ignore-eos",
    "--seed",
    "3",
    "--no-progress",
];

fn record(path: &Path) -> Record {
    canonical::from_json(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .records
        .remove(0)
}

/// index → (input_len, intended send time) of a per-request file.
fn requests(path: &Path) -> BTreeMap<u64, (u64, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["index"].as_u64().unwrap(),
                (
                    v["input_len"].as_u64().unwrap(),
                    v["intended_send_s"].as_f64().unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn four_shards_merge_to_the_single_run() {
    let dir = std::env::temp_dir().join(format!("benchlens-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_mock, url) = spawn_mock(&["--ttft-ms", "5", "--itl-ms", "1"], "http");
    let run = |extra: &[&str], name: &str| {
        Command::new(BIN)
            .args(RUN)
            .args([
                "--base-url",
                &url,
                "--result-filename",
                name,
                "--result-dir",
            ])
            .arg(&dir)
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    assert!(run(&[], "single.json").wait().unwrap().success());
    let shards: Vec<_> = (0..4)
        .map(|i| {
            let shard = format!("{i}/4");
            run(&["--shard", shard.as_str()], &format!("shard-{i}.json"))
        })
        .collect();
    for mut s in shards {
        assert!(s.wait().unwrap().success());
    }
    let out = Command::new(BIN)
        .arg("merge")
        .args((0..4).map(|i| dir.join(format!("shard-{i}.json"))))
        .arg("-o")
        .arg(dir.join("merged.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("merged 4 files: 1 stage(s), 40 requests")
    );

    // Each shard ran its quarter; together they are the whole run.
    let shard0 = record(&dir.join("shard-0.json"));
    assert_eq!(shard0.tags.get("shard").map(String::as_str), Some("0/4"));
    assert_eq!(shard0.metrics[&MetricKey::Completed], 10.0);
    let single = record(&dir.join("single.json"));
    let merged = record(&dir.join("merged.json"));
    assert!(!merged.tags.contains_key("shard"));
    // The merged file names the build that wrote it; the shards were the same build.
    for r in [&shard0, &merged] {
        assert_eq!(r.tags["benchlens_version"], benchlens::VERSION);
        assert_eq!(r.tags["benchlens_commit"], benchlens::COMMIT);
    }
    assert!(!merged.tags.contains_key("shards_benchlens"));
    for key in [
        MetricKey::Completed,
        MetricKey::Failed,
        MetricKey::Extra("total_input_tokens".into()),
        MetricKey::Extra("total_output_tokens".into()),
    ] {
        assert_eq!(
            merged.metrics.get(&key),
            single.metrics.get(&key),
            "{key:?}"
        );
    }
    assert_eq!(merged.request_rate, Some(40.0));
    // The same requests: every index once, with the single run's prompt length and planned
    // time (shards started within a few milliseconds of each other).
    let a = requests(&dir.join("single.requests.jsonl"));
    let b = requests(&dir.join("merged.requests.jsonl"));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (i, (len, at)) in &a {
        assert_eq!(b[i].0, *len, "request {i}");
        assert!((b[i].1 - at).abs() < 0.5, "request {i}: {} vs {at}", b[i].1);
    }
    // Percentiles are over every request, not averaged: the merged median TTFT is the median
    // of the shards' TTFTs.
    let mut ttfts: Vec<f64> = (0..4)
        .flat_map(|i| {
            std::fs::read_to_string(dir.join(format!("shard-{i}.requests.jsonl")))
                .unwrap()
                .lines()
                .map(|l| {
                    serde_json::from_str::<Value>(l).unwrap()["ttft_ms"]
                        .as_f64()
                        .unwrap()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    ttfts.sort_by(f64::total_cmp);
    let median = (ttfts[19] + ttfts[20]) / 2.0;
    let key = MetricKey::latency(LatencyMetric::Ttft, Stat::P(Percentile::new(50.0).unwrap()));
    assert!(
        (merged.metrics[&key] - median).abs() < 1e-6,
        "{} vs {median}",
        merged.metrics[&key]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_names_what_is_missing() {
    let dir = std::env::temp_dir().join(format!("benchlens-merge-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(BIN)
        .args([
            "run",
            "--mock",
            "--model",
            "m",
            "--tokenizer",
            "words",
            "--num-prompts",
            "4",
        ])
        .args(["--input-len", "4", "--output-len", "2", "--no-progress"])
        .args(["--shard", "1/2", "--result-filename", "s1.json"])
        .arg("--result-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merge = Command::new(BIN)
        .arg("merge")
        .arg(dir.join("s1.json"))
        .arg("-o")
        .arg(dir.join("m.json"))
        .output()
        .unwrap();
    assert_eq!(merge.status.code(), Some(1));
    let err = String::from_utf8_lossy(&merge.stderr);
    assert!(
        err.contains("the files are not the shards of one run: stage 0 has shards [1/2], not each of 0/2 … 1/2 once"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
