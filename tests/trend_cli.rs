//! `benchlens compare --trend DIR` and `benchlens site DIR -o OUT`, run as the built binary on
//! folders of nightly results generated here (vLLM serving JSON and canonical JSON).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn benchlens() -> Command {
    Command::cargo_bin("benchlens").expect("binary built")
}

/// Deterministic noise in [-1, 1) (a 64-bit LCG), so the files are the same every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// 30 nightly vLLM serving files under `dir/2026-11-DD/`, output throughput around 1000 tok/s
/// (±1.5 %), 15 % lower from night `drop_from` on (none when ≥ 30).
fn write_vllm_nights(dir: &Path, drop_from: usize) {
    let mut g = Lcg(42);
    for night in 0..30 {
        let level = if night >= drop_from { 850.0 } else { 1000.0 };
        let tput = level * (1.0 + 0.015 * g.next());
        let ttft = 80.0 * (1.0 + 0.02 * g.next());
        let date = format!("202611{:02}-020000", night + 1);
        let body = serde_json::json!({
            "date": date,
            "endpoint_type": "vllm",
            "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "num_prompts": 200,
            "request_rate": 4.0,
            "burstiness": 1.0,
            "max_concurrency": 64,
            "duration": 50.0,
            "completed": 200,
            "total_input_tokens": 204800,
            "total_output_tokens": 25600,
            "request_throughput": 4.0,
            "output_throughput": tput,
            "total_token_throughput": tput * 9.0,
            "mean_ttft_ms": ttft,
            "median_ttft_ms": ttft,
            "p99_ttft_ms": ttft * 2.0,
            "commit": format!("abc{night:02}"),
        });
        let sub = dir.join(format!("2026-11-{:02}", night + 1));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("vllm-4qps-Llama-3.1-8B-Instruct-{date}.json")),
            serde_json::to_string_pretty(&body).unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn a_planted_regression_in_vllm_files_fails_the_trend_check() {
    let dir = tempfile::tempdir().unwrap();
    write_vllm_nights(dir.path(), 20);
    std::fs::write(dir.path().join("README.md"), "# nightly results\n").unwrap();
    benchlens()
        .args(["compare", "--trend"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("30 files; 1 series over 30 dates; 1 change point beyond 5.00 noise units; 1 series ends at a regressed level"))
        .stdout(predicate::str::contains("Latest regressions:"))
        .stdout(predicate::str::is_match(r"\| all \| output_throughput \| (99\d|100\d)(\.\d+)? \| 8[45]\d(\.\d+)? \| -1[456]\.\d\d \| -\d+\.\d \| 2026-11-21 02:00 UTC \| abc20 \|").unwrap())
        .stderr(predicate::str::contains(
            "error: 1 series ends at a regressed level",
        ));
    // TTFT did not move: following it alone passes; JSON output names what was followed.
    benchlens()
        .args([
            "compare",
            "--metric",
            "mean_ttft_ms",
            "--format",
            "json",
            "--trend",
        ])
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\"rows\": []"))
        .stdout(predicate::str::contains("\"dates\": 30"));
}

#[test]
fn steady_canonical_files_pass_and_bad_folders_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Lcg(7);
    for night in 0..30 {
        let records: Vec<serde_json::Value> = [1.0, 8.0]
            .iter()
            .map(|rate| {
                serde_json::json!({
                    "model": "m", "engine": "vllm", "request_rate": rate,
                    "date": format!("2026-11-{:02}T02:00:00Z", night + 1),
                    "engine_version": format!("0.{night}"),
                    "output_throughput": 100.0 * rate * (1.0 + 0.02 * g.next()),
                })
            })
            .collect();
        let body = serde_json::json!({"schema_version": 1, "records": records});
        std::fs::write(
            dir.path().join(format!("night-{night:02}.json")),
            body.to_string(),
        )
        .unwrap();
    }
    benchlens()
        .args(["compare", "--trend"])
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "2 series over 30 dates; 0 change points beyond 5.00 noise units; 0 series end",
        ))
        .stdout(predicate::str::contains(
            "Not part of a configuration (one value per date): engine_version.",
        ))
        .stdout(predicate::str::contains(
            "No configuration ends at a regressed level.",
        ));
    benchlens()
        .args(["compare", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "or with --trend a configuration whose latest point is at a\nregressed level",
        ));
    let empty = tempfile::tempdir().unwrap();
    benchlens()
        .args(["compare", "--trend"])
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no result files"));
    benchlens()
        .args(["compare", "a.json", "--trend"])
        .arg(empty.path())
        .assert()
        .code(2);
    // A missing folder is a broken set-up, not a regression: exit 2, naming the folder.
    let missing = empty.path().join("no-such-folder");
    benchlens()
        .args(["compare", "--trend"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}: cannot list the folder",
            missing.display()
        )));
}

#[test]
fn site_copies_the_explorer_the_results_and_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    write_vllm_nights(&results, 20);
    std::fs::write(results.join("notes.txt"), "not a result\n").unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(dist.join("samples")).unwrap();
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><html><head><title>x</title></head><body></body></html>",
    )
    .unwrap();
    std::fs::write(dist.join("samples/a.txt"), "sample").unwrap();
    let out = dir.path().join("site");
    benchlens()
        .arg("site")
        .arg(&results)
        .arg("-o")
        .arg(&out)
        .arg("--explorer")
        .arg(&dist)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "30 result files (1 unreadable left out)",
        ))
        .stderr(predicate::str::contains("notes.txt"));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        page.contains("?view=trends&data=results%2Findex.json"),
        "{page}"
    );
    assert!(page.contains("<title>x</title>"));
    assert_eq!(
        std::fs::read_to_string(out.join("samples/a.txt")).unwrap(),
        "sample"
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results/index.json")).unwrap())
            .unwrap();
    assert_eq!(index["benchlens_index"], 1);
    let files = index["files"].as_array().unwrap();
    assert_eq!(files.len(), 30);
    assert_eq!(
        files[0],
        "2026-11-01/vllm-4qps-Llama-3.1-8B-Instruct-20261101-020000.json"
    );
    for f in files {
        assert!(
            out.join("results").join(f.as_str().unwrap()).is_file(),
            "{f}"
        );
    }
    // A second run into the same folder, and a missing explorer, are refused clearly.
    benchlens()
        .arg("site")
        .arg(&results)
        .arg("-o")
        .arg(&out)
        .arg("--explorer")
        .arg(&dist)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the output folder is not empty"));
    benchlens()
        .arg("site")
        .arg(&results)
        .arg("-o")
        .arg(dir.path().join("site2"))
        .arg("--explorer")
        .arg(dir.path().join("nowhere"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no built explorer"));
}

#[test]
fn links_out_of_the_folder_are_skipped_and_odd_names_read() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    write_vllm_nights(dir.path(), 30);
    // One night's file under a name that is not UTF-8.
    let night = dir.path().join("2026-11-05");
    let file = std::fs::read_dir(&night)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::rename(
        &file,
        night.join(std::ffi::OsStr::from_bytes(b"run-\xff.json")),
    )
    .unwrap();
    // A link to a file outside the folder, which must neither be read nor shown.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("passwd.txt");
    std::fs::write(&secret, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("leak.txt")).unwrap();
    // And a copy inside it: read and refused, its first line never quoted.
    std::fs::copy(&secret, dir.path().join("stray.txt")).unwrap();
    let out = benchlens()
        .args(["compare", "--trend"])
        .arg(dir.path())
        .assert()
        .code(0)
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("31 files; 1 series over 30 dates"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("leak.txt: a symbolic link to") && stderr.contains("skipped"),
        "{stderr}"
    );
    assert!(!stderr.contains("No such file"), "{stderr}");
    assert!(
        stderr.contains(
            "stray.txt: not a recognised benchmark result file (its content is not shown)"
        ),
        "{stderr}"
    );
    assert!(!format!("{stdout}{stderr}").contains("root:x"), "{stderr}");
    // The site leaves it out too.
    let site_parent = tempfile::tempdir().unwrap();
    let site = site_parent.path().join("site");
    let explorer = tempfile::tempdir().unwrap();
    std::fs::write(
        explorer.path().join("index.html"),
        "<html><head></head></html>",
    )
    .unwrap();
    let out = benchlens()
        .args(["site"])
        .arg(dir.path())
        .arg("-o")
        .arg(&site)
        .arg("--explorer")
        .arg(explorer.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("leak.txt: a symbolic link to"), "{stderr}");
    assert!(!stderr.contains("root:x"), "{stderr}");
    let copied = std::process::Command::new("grep")
        .args(["-rl", "root:x"])
        .arg(&site)
        .output()
        .unwrap();
    assert!(
        copied.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&copied.stdout)
    );
}
