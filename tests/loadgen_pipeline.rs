//! The whole `benchlens run` pipeline in-process against `benchlens mock` on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, RunOpts};
use benchlens::model::{canonical, LatencyMetric, MetricKey, Percentile, Stat};
use tokio::sync::watch;

fn opts(base_url: String, dir: &std::path::Path) -> RunOpts {
    RunOpts {
        base_url,
        result_dir: dir.to_path_buf(),
        no_progress: true,
        ..RunOpts::default()
    }
}

fn metric(r: &benchlens::model::Record, m: LatencyMetric, s: Stat) -> f64 {
    r.metrics[&MetricKey::latency(m, s)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn low_load_metrics_match_the_mock_within_a_millisecond() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 50.0,
        itl_ms: 5.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(mock.base_url(), dir.path());
    o.num_prompts = 12;
    o.max_concurrency = vec![4];
    o.input_len = 64;
    o.output_len = Some(32);
    o.ignore_eos = true;
    o.engine = Some("mock".into());
    o.gpu = Some("none".into());
    o.gpu_count = Some(0);
    o.tags = vec!["node=a7".into()];
    o.result_filename = Some("run.json".into());
    // A retry writes over the run before it.
    o.overwrite = true;
    // Timing on a shared 2-core machine: a run whose medians miss by more than 1 ms is retried
    // (up to three runs) before failing, so a burst of someone else's compile does not fail it.
    let mut misses = Vec::new();
    let mut out = None;
    for _ in 0..3 {
        let (_tx, rx) = watch::channel(false);
        let run = run_with_stop(o.clone(), rx).await.unwrap();
        let r = &run.records[0];
        let med = Stat::Median;
        let ttft = metric(r, LatencyMetric::Ttft, med);
        let itl = metric(r, LatencyMetric::Itl, med);
        let tpot = metric(r, LatencyMetric::Tpot, med);
        let e2el = metric(r, LatencyMetric::E2el, med);
        let ok = (ttft - 50.0).abs() < 1.0
            && (itl - 5.0).abs() < 1.0
            && (tpot - 5.0).abs() < 1.0
            && (e2el - (50.0 + 31.0 * 5.0)).abs() < 3.0;
        misses.push((ttft, itl, tpot, e2el));
        if ok {
            out = Some(run);
            break;
        }
    }
    let out = out.unwrap_or_else(|| panic!("medians (ttft, itl, tpot, e2el) off: {misses:?}"));
    assert!(!out.partial);
    let r = &out.records[0];
    assert_eq!(r.metrics[&MetricKey::Completed], 12.0);
    assert_eq!(r.metrics[&MetricKey::Failed], 0.0);
    let ttft = metric(r, LatencyMetric::Ttft, Stat::Median);
    let p99 = Stat::P(Percentile::new(99.0).unwrap());
    assert!(metric(r, LatencyMetric::Ttft, p99) >= ttft);
    assert_eq!(r.output_len, Some(32.0));
    assert_eq!(r.input_len, Some(64.0));
    assert_eq!(
        r.metrics[&MetricKey::Extra("output_count_mismatches".into())],
        0.0
    );
    // The client's own BPE count of the text agrees with the server's usage.
    assert_eq!(
        r.metrics[&MetricKey::Extra("total_output_tokens_client".into())],
        384.0
    );
    assert_eq!(r.model.as_deref(), Some("benchlens-mock"));
    assert_eq!(r.tags["node"], "a7");
    assert_eq!(r.requests.len(), 12);
    assert_eq!(r.requests[0].itl_ms.len(), 31);

    // The written file loads back as the same records.
    let text = std::fs::read_to_string(dir.path().join("run.json")).unwrap();
    let decoded = canonical::from_json(&text).unwrap();
    assert_eq!(decoded.records.len(), 1);
    let back = &decoded.records[0];
    assert_eq!(back.engine.as_deref(), Some("mock"));
    assert_eq!(back.gpu_count, Some(0));
    assert_eq!(back.max_concurrency, Some(4));
    assert_eq!(back.metrics[&MetricKey::Completed], 12.0);
    assert!(back.tags.contains_key("server_url") && back.tags.contains_key("benchlens_version"));
    let lines = std::fs::read_to_string(dir.path().join("run.requests.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 12);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["chunks_ms_tokens"].as_array().unwrap().len(), 32);
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_reports_its_own_first_chunk_latency() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 20.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    assert_eq!(mock.first_chunk_latency(), None);
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(mock.base_url(), dir.path());
    o.num_prompts = 6;
    o.max_concurrency = vec![2];
    o.input_len = 16;
    o.output_len = Some(4);
    o.ignore_eos = true;
    let (_tx, rx) = watch::channel(false);
    run_with_stop(o, rx).await.unwrap();
    let (n, mean_ms, p99_ms) = mock
        .first_chunk_latency()
        .expect("streamed requests were timed");
    // The model lookup is not streamed; every benchmark request is.
    assert!(n >= 6, "{n}");
    // At least the configured 20 ms (the mock's timer never fires early); the upper bound only
    // catches a mock that ignores its setting: its own mean measured 20.5 to 45 ms on this
    // 2-core machine with three extra busy loops running.
    assert!((19.5..100.0).contains(&mean_ms), "{mean_ms}");
    assert!(p99_ms >= mean_ms, "{p99_ms} < {mean_ms}");
    mock.shutdown().await;
}

/// A busy client must not report its own delays as the server's: while the client's only
/// thread is blocked, chunks that arrive wait in the socket, and TTFT still counts to when they
/// arrived (the kernel's receive stamp), not to when the client got round to reading them.
#[test]
fn a_blocked_client_does_not_count_its_own_delay_as_ttft() {
    // The mock on its own thread and runtime, so blocking the client cannot slow it.
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mock_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Chunks 30 ms apart: a read delayed by the 25 ms blocks below still takes a single
            // chunk's segment (with several, the stamp is the last one's: late, never early).
            let mock = MockServer::start(MockOpts {
                ttft_ms: 20.0,
                itl_ms: 30.0,
                ..MockOpts::default()
            })
            .await
            .unwrap();
            tx.send(mock.base_url()).unwrap();
            let _ = stop_rx.await;
            let own = mock.first_chunk_latency();
            mock.shutdown().await;
            own
        })
    });
    let base_url = rx.recv().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(async {
        let mut o = opts(base_url, dir.path());
        o.num_prompts = 12;
        o.max_concurrency = vec![1];
        o.input_len = 16;
        o.output_len = Some(4);
        o.ignore_eos = true;
        o.model = Some("benchlens-mock".into());
        o.tokenizer = "words".into();
        // A task that keeps blocking the client's only thread for 25 ms at a time.
        let hog = tokio::spawn(async {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(6)).await;
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
        });
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        hog.abort();
        out
    });
    let _ = stop_tx.send(());
    let (n, mock_mean_ms, mock_p99_ms) = mock_thread.join().unwrap().expect("timed");
    assert!(n >= 12);

    let reqs = &out.requests[0];
    assert_eq!(reqs.len(), 12);
    // The client really was late reading: some first chunks waited in the socket ...
    let waited = reqs
        .iter()
        .filter_map(|r| r.first_read_delay_s)
        .fold(0.0, f64::max);
    assert!(waited > 0.005, "the client was never blocked: {waited}");
    // ... yet TTFT is what the mock itself saw (from the request's arrival at its socket to
    // its first chunk), not that plus the time the first chunk waited in the socket. The bounds
    // hold on a busy machine (measured here on 2 cores, with three extra busy loops running):
    // - below: the mock's configured 20 ms, which its timer never undercuts. On the median,
    //   because a client preempted between its write and its clock reading can report one
    //   request short (0.3 ms seen once in that run);
    // - above: a client that counted its own wait would exceed the mock's mean by the whole mean
    //   socket-to-read wait (10.6 to 25 ms in those runs); the client's own scheduling put it
    //   -1.4 to +4.9 ms from the mock's mean then (0.02 to 0.06 ms with the usual load), so
    //   three quarters of that wait separates the two.
    let mut ttft_ms: Vec<f64> = reqs.iter().map(|r| r.ttft_s.expect("ok") * 1e3).collect();
    let mean = ttft_ms.iter().sum::<f64>() / ttft_ms.len() as f64;
    ttft_ms.sort_by(f64::total_cmp);
    let median = ttft_ms[ttft_ms.len() / 2];
    assert!(median >= 19.5, "{ttft_ms:?}");
    let read_waits_ms: Vec<f64> = reqs
        .iter()
        .map(|r| r.first_read_delay_s.unwrap_or(0.0) * 1e3)
        .collect();
    let mean_wait = read_waits_ms.iter().sum::<f64>() / read_waits_ms.len() as f64;
    assert!(
        mean - mock_mean_ms < 0.75 * mean_wait,
        "client {mean:.2} ms vs mock {mock_mean_ms:.2} ms (p99 {mock_p99_ms:.2}), \
         mean socket-to-read wait {mean_wait:.2} ms"
    );
    // ITL likewise: the gaps between the chunks' receive stamps are the mock's 30 ms. On the
    // median of all gaps: the mock keeps a schedule, so a late chunk is followed by a short gap
    // (per-request means 20.0 to 35.3 ms, the median of all 29.8 to 30.2 ms in the runs above).
    let mut gaps_ms: Vec<f64> = reqs
        .iter()
        .flat_map(|r| {
            let at: Vec<f64> = r.chunks.iter().map(|c| c.at_s).collect();
            at.windows(2)
                .map(|w| (w[1] - w[0]) * 1e3)
                .collect::<Vec<_>>()
        })
        .collect();
    gaps_ms.sort_by(f64::total_cmp);
    let median_gap = gaps_ms[gaps_ms.len() / 2];
    assert!((28.0..32.0).contains(&median_gap), "ITL {gaps_ms:?}");
}
