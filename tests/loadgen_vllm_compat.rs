//! `--vllm-compatible` files as vLLM's tooling reads them: `--result-filename` names the vLLM
//! file, the keys are those `vllm bench serve` writes (tests/fixtures/loadgen/
//! vllm-serve-result-keys.txt, from vLLM's source), per-request arrays only with
//! `--save-detailed`, and the recorded command line uses vLLM's flag names.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::loadgen::report::PercentileMetric;
use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, Rate, RunOpts};
use benchlens::model::canonical;
use serde_json::Value;
use tokio::sync::watch;

/// vLLM's keys for these metrics and percentiles: (key, per-request array dropped without
/// --save-detailed).
fn vllm_keys(metrics: &[&str], percentiles: &[&str]) -> Vec<(String, bool)> {
    let text = include_str!("fixtures/loadgen/vllm-serve-result-keys.txt");
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (detail, key) = match line.strip_prefix('*') {
            Some(k) => (true, k),
            None => (false, line),
        };
        if key.contains("{metric}") {
            for m in metrics {
                let k = key.replace("{metric}", m);
                if k.contains("{p}") {
                    for p in percentiles {
                        out.push((k.replace("{p}", p), false));
                    }
                } else {
                    out.push((k, false));
                }
            }
        } else {
            out.push((key.to_string(), detail));
        }
    }
    out
}

async fn run(dir: &std::path::Path, url: String, detailed: bool) -> benchlens::loadgen::RunOutcome {
    let o = RunOpts {
        base_url: url,
        result_dir: dir.to_path_buf(),
        no_progress: true,
        tokenizer: "words".into(),
        input_len: 12,
        output_len: Some(6),
        num_prompts: 10,
        request_rate: vec![Rate(50.0)],
        max_concurrency: vec![4],
        vllm_compatible: true,
        save_detailed: detailed,
        result_filename: Some("vllm-result.json".into()),
        percentiles: vec![99.0],
        percentile_metrics: PercentileMetric::parse_list("ttft,tpot,itl,e2el").unwrap(),
        tags: vec!["tp=1".into()],
        ..RunOpts::default()
    };
    let (_tx, rx) = watch::channel(false);
    run_with_stop(o, rx).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vllm_file_has_vllms_name_keys_and_command_line() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 2.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    for detailed in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let out = run(dir.path(), mock.base_url(), detailed).await;
        // --result-filename names the vLLM file; the canonical file keeps its own name.
        let vllm_path = dir.path().join("vllm-result.json");
        assert_eq!(out.vllm_paths, vec![vllm_path.clone()]);
        let canonical_path = out.result_path.clone().unwrap();
        assert_ne!(canonical_path, vllm_path);
        assert!(canonical::from_json(&std::fs::read_to_string(&canonical_path).unwrap()).is_ok());

        let v: Value = serde_json::from_str(&std::fs::read_to_string(&vllm_path).unwrap()).unwrap();
        let obj = v.as_object().unwrap();
        for (key, per_request) in vllm_keys(&["ttft", "tpot", "itl", "e2el"], &["99"]) {
            assert_eq!(
                obj.contains_key(&key),
                !per_request || detailed,
                "{key} (detailed: {detailed})"
            );
            if let Some(Value::Array(a)) = obj.get(&key) {
                assert_eq!(a.len(), 10, "{key}");
            }
        }
        assert_eq!(v["completed"], 10);
        assert_eq!(v["rtfx"], 0.0);
        assert_eq!(v["tp"], "1");
        assert!(v["latencies"][0].as_f64().unwrap() > 0.0);
        assert!(v["queue_times"][0].as_f64().unwrap() >= 0.0);
        // Only the metrics asked for, as vLLM.
        assert!(!obj.contains_key("p50_ttft_ms"));
        let cmd = v["command_line"].as_str().unwrap();
        for part in [
            "vllm bench serve ",
            "--dataset-name random",
            "--random-input-len 12",
            "--random-output-len 6",
            "--request-rate 50",
            "--max-concurrency 4",
            "--num-prompts 10",
        ] {
            assert!(cmd.contains(part), "{part} in {cmd}");
        }
        assert!(v.get("benchlens_command_line").is_some());
    }
    mock.shutdown().await;
}
