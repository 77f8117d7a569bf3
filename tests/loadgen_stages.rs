//! Stages, interruption, the chat backend, `--mock`, `--vllm-compatible` and the mock's
//! continuous-batching model, in-process on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use benchlens::loadgen::client::Backend;
use benchlens::loadgen::report::PercentileMetric;
use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, Rate, RunOpts};
use benchlens::model::{canonical, LatencyMetric, MetricKey, Stat};
use tokio::sync::watch;

fn opts(dir: &std::path::Path) -> RunOpts {
    RunOpts {
        result_dir: dir.to_path_buf(),
        no_progress: true,
        input_len: 16,
        output_len: Some(8),
        ignore_eos: true,
        // Word counts keep these tests fast; BPE prompts are tested in loadgen_pipeline.
        tokenizer: "words".into(),
        ..RunOpts::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stages_are_the_product_of_rates_and_concurrencies() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 2.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.base_url = mock.base_url();
    o.backend = Backend::OpenAiChat;
    o.request_rate = vec![Rate(200.0), Rate::INF];
    o.max_concurrency = vec![2, 8];
    o.num_prompts = 20;
    o.warmup = 3;
    o.vllm_compatible = true;
    o.label = Some("demo".into());
    o.goodput = vec!["ttft:1000 e2el:1000".parse().unwrap()];
    o.percentile_metrics = PercentileMetric::parse_list("ttft,tpot,itl,e2el").unwrap();
    o.save_detailed = true;
    let (_tx, rx) = watch::channel(false);
    let out = run_with_stop(o, rx).await.unwrap();
    assert_eq!(out.records.len(), 4);
    let dims: Vec<(f64, u64)> = out
        .records
        .iter()
        .map(|r| (r.request_rate.unwrap(), r.max_concurrency.unwrap()))
        .collect();
    assert_eq!(
        dims,
        [
            (200.0, 2),
            (200.0, 8),
            (f64::INFINITY, 2),
            (f64::INFINITY, 8)
        ]
    );
    for (r, m) in out.records.iter().zip(&out.metrics) {
        assert_eq!(r.metrics[&MetricKey::Completed], 20.0);
        assert!(m.max_concurrent_requests <= r.max_concurrency.unwrap());
        assert_eq!(r.metrics[&MetricKey::RequestGoodput], m.request_throughput);
    }
    // At 200 req/s the achieved send rate is close to the target.
    let achieved = out.metrics[1].achieved_rate.unwrap();
    assert!((100.0..400.0).contains(&achieved), "{achieved}");
    let decoded =
        canonical::from_json(&std::fs::read_to_string(out.result_path.as_ref().unwrap()).unwrap())
            .unwrap();
    assert_eq!(decoded.records.len(), 4);
    assert_eq!(decoded.records[3].request_rate, Some(f64::INFINITY));
    assert_eq!(decoded.records[0].label.as_deref(), Some("demo"));

    // vLLM-compatible files: one per stage, vLLM's names and keys.
    assert_eq!(out.vllm_paths.len(), 4);
    let name = out.vllm_paths[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("demo-200.0qps-concurrency2-benchlens-mock-"),
        "{name}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out.vllm_paths[2]).unwrap()).unwrap();
    assert_eq!(v["request_rate"], "inf");
    assert_eq!(v["completed"], 20);
    assert_eq!(v["max_concurrency"], 2);
    for key in [
        "mean_ttft_ms",
        "median_tpot_ms",
        "std_itl_ms",
        "p99_e2el_ms",
        "p50_ttft_ms",
        "request_goodput",
        "duration",
        "output_throughput",
        "total_token_throughput",
    ] {
        assert!(v.get(key).is_some_and(|x| !x.is_null()), "{key}");
    }
    assert_eq!(v["itls"].as_array().unwrap().len(), 20);
    assert_eq!(
        v["generated_texts"][0],
        " the mock server says hello to you now"
    );
    // 7 gaps for 8 tokens, unless all 8 came in one read: then none was observed.
    let one_read = out.requests[2][0]
        .chunks
        .iter()
        .skip(1)
        .all(|c| c.coalesced);
    let gaps = if one_read { 0 } else { 7 };
    assert_eq!(v["itls"][0].as_array().unwrap().len(), gaps);
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_keeps_what_was_measured_and_marks_it_partial() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.mock = true;
    o.request_rate = vec![Rate(50.0), Rate(100.0)];
    o.num_prompts = 1000;
    o.result_filename = Some("partial.json".into());
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let _ = tx.send(true);
    });
    let started = std::time::Instant::now();
    let out = run_with_stop(o, rx).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.partial);
    assert_eq!(out.records.len(), 1, "the second stage never starts");
    let done = out.metrics[0].completed;
    // 600 ms at 50 req/s is about 30 requests; a loaded machine may start the stage late.
    assert!((3..60).contains(&done), "{done}");
    let decoded =
        canonical::from_json(&std::fs::read_to_string(dir.path().join("partial.json")).unwrap())
            .unwrap();
    assert_eq!(decoded.records[0].tags["partial"], "true");
    assert!(out.summaries[0].contains("Partial (interrupted):"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batching_mock_queues_and_slows_under_load() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 10.0,
        itl_ms: 2.0,
        max_batch: Some(2),
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.base_url = mock.base_url();
    o.num_prompts = 12;
    o.max_concurrency = vec![1, 6];
    let (_tx, rx) = watch::channel(false);
    let out = run_with_stop(o, rx).await.unwrap();
    // Medians: the first request of each stage also pays for its connection.
    let ttft =
        |i: usize| out.records[i].metrics[&MetricKey::latency(LatencyMetric::Ttft, Stat::Median)];
    let tpot =
        |i: usize| out.records[i].metrics[&MetricKey::latency(LatencyMetric::Tpot, Stat::Median)];
    // Alone: 10 ms TTFT, 2 ms × (1 + 1/2) per token.
    assert!((ttft(0) - 10.0).abs() < 2.0, "{}", ttft(0));
    assert!((tpot(0) - 3.0).abs() < 0.5, "{}", tpot(0));
    // Six clients on two slots: requests queue for a slot, and full batches step slower.
    assert!(ttft(1) > 20.0, "{}", ttft(1));
    assert!(tpot(1) > 3.5, "{}", tpot(1));
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tgi_and_sglang_native_streams_are_measured() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 5.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::Tgi, Backend::Sglang] {
        let mut o = opts(dir.path());
        o.base_url = mock.base_url();
        o.backend = backend;
        o.model = Some("m".into());
        o.num_prompts = 6;
        o.max_concurrency = vec![3];
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        let m = &out.metrics[0];
        assert_eq!(
            (m.completed, m.failed),
            (6, 0),
            "{backend:?}: {:?}",
            m.failures
        );
        // Timing accuracy is tested elsewhere; here the first token must come after the mock's 5 ms.
        let ttft = m.ttft.as_ref().unwrap().median;
        assert!((5.0..50.0).contains(&ttft), "{backend:?} ttft {ttft}");
        for r in &out.requests[0] {
            // Every token counted once, whether from TGI's one-token events or SGLang's counts.
            let tokens: u32 = r.chunks.iter().map(|c| c.tokens).sum();
            assert_eq!(u64::from(tokens), r.output_tokens(), "{backend:?}");
            assert!((4..=8).contains(&tokens), "{backend:?} {tokens}");
        }
    }
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_and_headers_reach_the_server_and_duration_stages_end_on_time() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 2.0,
        itl_ms: 1.0,
        api_key: Some("sekrit".into()),
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |o: RunOpts| async move {
        let (_tx, rx) = watch::channel(false);
        run_with_stop(o, rx).await
    };
    let mut o = opts(dir.path());
    o.base_url = mock.base_url();
    o.model = Some("m".into());
    o.num_prompts = 3;
    let out = run(o.clone()).await.unwrap();
    assert_eq!(out.metrics[0].failures.get("http_401"), Some(&3));

    o.api_key = Some("sekrit".into());
    let out = run(o.clone()).await.unwrap();
    assert_eq!(out.metrics[0].completed, 3);

    o.api_key = None;
    o.headers = vec!["Authorization=Bearer sekrit".into()];
    o.model = None; // found through /v1/models, which also needs the key
    o.duration = Some(0.5);
    o.request_rate = vec![Rate(40.0)];
    let started = std::time::Instant::now();
    let out = run(o).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    let m = &out.metrics[0];
    assert_eq!(m.failed, 0, "{:?}", m.failures);
    // 0.5 s at 40 req/s: about 20 requests, all sent within the first half second.
    assert!((8..=40).contains(&m.completed), "{}", m.completed);
    assert!(out.requests[0].iter().all(|r| r.intended_at_s < 0.5));
    assert_eq!(out.records[0].model.as_deref(), Some("benchlens-mock"));
    // How many requests a timed stage sent is an outcome, not a dimension to compare by.
    assert_eq!(out.records[0].num_prompts, None);
    assert_eq!(out.records[0].tags["duration_s"], "0.5");
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_and_sharegpt_files_drive_the_prompts() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 1.0,
        itl_ms: 0.5,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("p.jsonl");
    std::fs::write(&jsonl, "{\"prompt\": \"one two three\", \"output_len\": 3}\n{\"prompt\": \"four five six seven eight\", \"output_len\": 5}\n").unwrap();
    let sharegpt = dir.path().join("sg.json");
    std::fs::write(&sharegpt, r#"[{"conversations":[{"from":"human","value":"tell me a short story please"},{"from":"gpt","value":"once upon a time there was"}]}]"#).unwrap();
    for (kind, path, input_len, output_len) in [
        (benchlens::loadgen::run::DatasetKind::Jsonl, jsonl, 4.0, 4.0),
        (
            benchlens::loadgen::run::DatasetKind::Sharegpt,
            sharegpt,
            6.0,
            6.0,
        ),
    ] {
        let mut o = opts(dir.path());
        o.base_url = mock.base_url();
        o.dataset = kind;
        o.dataset_path = Some(path);
        o.output_len = None;
        o.tokenizer = "words".into();
        o.num_prompts = 4;
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        let r = &out.records[0];
        assert_eq!(r.metrics[&MetricKey::Completed], 4.0, "{kind:?}");
        assert_eq!(
            (r.input_len, r.output_len),
            (Some(input_len), Some(output_len)),
            "{kind:?}"
        );
    }
    mock.shutdown().await;
}
