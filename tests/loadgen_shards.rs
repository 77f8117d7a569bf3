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

/// The result files (not the per-request files) in `dir`, sorted.
fn result_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[test]
fn four_shards_merge_to_the_single_run() {
    let dir = std::env::temp_dir().join(format!("benchlens-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (_mock, url) = spawn_mock(&["--ttft-ms", "5", "--itl-ms", "1"], "http");
    let run = |extra: &[&str], dir: &Path| {
        Command::new(BIN)
            .args(RUN)
            .args(["--base-url", &url, "--result-dir"])
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    assert!(run(&["--result-filename", "single.json"], &dir)
        .wait()
        .unwrap()
        .success());
    // The four shards started together, as an Indexed Job starts them, into one folder with
    // their default names: each keeps its own files.
    let shard_dir = dir.join("shards");
    let shards: Vec<_> = (0..4)
        .map(|i| {
            let shard = format!("{i}/4");
            run(&["--shard", shard.as_str()], &shard_dir)
        })
        .collect();
    for mut s in shards {
        assert!(s.wait().unwrap().success());
    }
    let names = result_files(&shard_dir);
    assert_eq!(names.len(), 4, "{names:?}");
    for i in 0..4 {
        let name = names
            .iter()
            .find(|n| n.ends_with(&format!("-shard{i}of4.json")))
            .unwrap_or_else(|| panic!("no shard {i} in {names:?}"));
        std::fs::rename(shard_dir.join(name), dir.join(format!("shard-{i}.json"))).unwrap();
        let rows = name.replace(".json", ".requests.jsonl");
        std::fs::rename(
            shard_dir.join(rows),
            dir.join(format!("shard-{i}.requests.jsonl")),
        )
        .unwrap();
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

/// A quick run against its own mock, with `extra` options, into `dir`.
fn quick_run(dir: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(BIN)
        .args(["run", "--mock", "--mock-ttft-ms", "2", "--mock-itl-ms", "1"])
        .args(["--model", "m", "--tokenizer", "words", "--num-prompts", "8"])
        .args(["--input-len", "4", "--output-len", "2", "--no-progress"])
        .arg("--result-dir")
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn succeeded(child: std::process::Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two runs started together into one folder each keep their files, whole.
#[test]
fn runs_started_together_keep_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<_> = (0..2).map(|_| quick_run(dir.path(), &[])).collect();
    runs.into_iter().for_each(succeeded);
    let names = result_files(dir.path());
    assert_eq!(names.len(), 2, "{names:?}");
    for name in names {
        assert_eq!(
            record(&dir.path().join(&name)).metrics[&MetricKey::Completed],
            8.0
        );
        let rows = requests(&dir.path().join(name.replace(".json", ".requests.jsonl")));
        assert_eq!(rows.len(), 8, "{name}");
    }
}

/// A result file that exists is kept, the run refused before any load, unless `--overwrite`.
#[test]
fn an_existing_result_file_is_kept_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    std::fs::write(&p, "mine").unwrap();
    let out = quick_run(dir.path(), &["--result-filename", "r.json"])
        .wait_with_output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("r.json exists") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "mine");
    assert!(!dir.path().join("r.requests.jsonl").exists());
    succeeded(quick_run(
        dir.path(),
        &["--result-filename", "r.json", "--overwrite"],
    ));
    assert_eq!(record(&p).metrics[&MetricKey::Completed], 8.0);
}

/// Runs `benchlens merge` of `files` into `out`: its exit code, stdout and stderr.
fn merge(files: &[&std::path::PathBuf], out: &Path) -> (Option<i32>, String, String) {
    let o = Command::new(BIN)
        .arg("merge")
        .args(files)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Rewrites the first record of a result file.
fn edit(path: &Path, change: impl FnOnce(&mut Record)) {
    let mut r = record(path);
    change(&mut r);
    std::fs::write(path, canonical::to_json(&[r])).unwrap();
}

/// `merge` refuses, naming the field, files that are not the shards of one run; files written
/// before shards recorded a fingerprint still merge, with a warning.
#[test]
fn merge_refuses_shards_that_are_not_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let (shard, name) = (format!("{i}/2"), format!("s{i}.json"));
            quick_run(d, &["--shard", &shard, "--result-filename", &name])
        })
        .collect();
    shards.into_iter().for_each(succeeded);
    let (s0, s1) = (d.join("s0.json"), d.join("s1.json"));
    let fingerprint = record(&s0).tags["run_fingerprint"].clone();
    assert!(fingerprint.contains("\"seed\":\"0\""), "{fingerprint}");
    assert_eq!(
        record(&s0).metrics[&MetricKey::Extra("request_rows".into())],
        4.0
    );
    let (code, stdout, _) = merge(&[&s0, &s1], &d.join("m.json"));
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("merged 2 files: 1 stage(s), 8 requests"));

    // -o never names an input, nor an input's per-request file.
    let (code, _, err) = merge(&[&s0, &s1], &s0);
    assert_eq!(code, Some(1));
    assert!(err.contains("is one of the files merged"), "{err}");
    assert_eq!(record(&s0).tags["shard"], "0/2");

    // Each copy of s1 altered one way.
    let altered = |name: &str, change: &dyn Fn(&mut Record)| {
        let p = d.join(format!("{name}.json"));
        std::fs::copy(&s1, &p).unwrap();
        std::fs::copy(
            d.join("s1.requests.jsonl"),
            d.join(format!("{name}.requests.jsonl")),
        )
        .unwrap();
        edit(&p, |r| change(r));
        p
    };
    let refit = |field: &str, value: &str| {
        let (field, value) = (field.to_string(), value.to_string());
        move |r: &mut Record| {
            let mut f: serde_json::Map<String, Value> =
                serde_json::from_str(&r.tags["run_fingerprint"]).unwrap();
            f.insert(field.clone(), Value::String(value.clone()));
            r.tags
                .insert("run_fingerprint".into(), serde_json::to_string(&f).unwrap());
        }
    };
    for (field, value) in [("input_len", "16"), ("seed", "7"), ("model", "other")] {
        let p = altered(&format!("s1-{field}"), &refit(field, value));
        let (code, _, err) = merge(&[&s0, &p], &d.join("m2.json"));
        assert_eq!(code, Some(1), "{field}");
        assert!(
            err.contains(&format!("{field} is {value} in ")),
            "{field}: {err}"
        );
    }
    // A shard run for real with another request rate (the fields above were edited in).
    succeeded(quick_run(
        d,
        &[
            "--shard",
            "1/2",
            "--request-rate",
            "50",
            "--result-filename",
            "s1-rate.json",
        ],
    ));
    let (code, _, err) = merge(&[&s0, &d.join("s1-rate.json")], &d.join("m2.json"));
    assert_eq!(code, Some(1));
    assert!(err.contains("request_rate is 50 in "), "{err}");

    // The same options run 36 s apart.
    let late = altered("s1-late", &|r: &mut Record| {
        *r.metrics
            .get_mut(&MetricKey::Extra("stage_start_unix_s".into()))
            .unwrap() += 36.0;
    });
    let (code, _, err) = merge(&[&s0, &late], &d.join("m2.json"));
    assert_eq!(code, Some(1));
    // 36 s on top of however far apart the two shards really started (under load, a
    // tenth of a second or more either way).
    let after: f64 = err
        .split(" s after")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN);
    assert!(
        err.contains("stage_start_unix_s") && (34.0..=38.0).contains(&after),
        "{err}"
    );
    // A per-request file cut short: a row missing, or a row cut in two.
    let short = altered("s1-short", &|_: &mut Record| {});
    let rows_path = d.join("s1-short.requests.jsonl");
    let rows = std::fs::read_to_string(&rows_path).unwrap();
    let cut = rows.trim_end().rfind('\n').unwrap() + 1;
    std::fs::write(&rows_path, &rows[..cut]).unwrap();
    let (code, _, err) = merge(&[&s0, &short], &d.join("m2.json"));
    assert_eq!(code, Some(1));
    assert!(
        err.contains("has 3 request rows but the result file records 4 (request_rows)"),
        "{err}"
    );
    std::fs::write(&rows_path, &rows[..cut + 20]).unwrap();
    let (code, _, err) = merge(&[&s0, &short], &d.join("m2.json"));
    assert_eq!(code, Some(1));
    assert!(err.contains("cut short"), "{err}");

    // Files from before the fingerprint: merged, with a warning for each.
    for (i, p) in [&s0, &s1].into_iter().enumerate() {
        let old = d.join(format!("old{i}.json"));
        std::fs::copy(p, &old).unwrap();
        std::fs::copy(
            p.with_file_name(format!("s{i}.requests.jsonl")),
            d.join(format!("old{i}.requests.jsonl")),
        )
        .unwrap();
        edit(&old, |r| {
            r.tags.remove("run_fingerprint");
            r.metrics.remove(&MetricKey::Extra("request_rows".into()));
        });
    }
    let (code, stdout, err) = merge(
        &[&d.join("old0.json"), &d.join("old1.json")],
        &d.join("m3.json"),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.starts_with("merged 2 files: 1 stage(s), 8 requests"));
    assert_eq!(err.matches("warning: ").count(), 2, "{err}");
    assert!(err.contains("no run fingerprint"), "{err}");
}
