use super::*;
use crate::loadgen::record::{ChunkArrival, Failure, FailureKind};

fn req(sent: f64, chunks: &[(f64, u32)], e2el: f64, server: Option<u64>) -> RequestRecord {
    RequestRecord {
        input_len: 10,
        intended_at_s: sent,
        dispatched_at_s: sent,
        sent_at_s: sent,
        ttft_s: chunks.first().map(|c| c.0),
        chunks: chunks
            .iter()
            .map(|&(at_s, tokens)| ChunkArrival {
                at_s,
                tokens,
                coalesced: false,
            })
            .collect(),
        e2el_s: Some(e2el),
        output_tokens_server: server,
        output_chunks_local: chunks.len() as u64,
        ..RequestRecord::default()
    }
}

/// Marks chunks `at` as coalesced with the one before.
fn coalesce(r: &mut RequestRecord, at: &[usize]) {
    r.chunks = r
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| ChunkArrival {
            coalesced: c.coalesced || at.contains(&i),
            ..c
        })
        .collect();
}

#[test]
fn tpot_and_split_itl_follow_vllm() {
    // First chunk 1 token at 0.1 s, then a 3-token chunk 0.03 s later, a 1-token chunk 0.01 s later.
    let r = req(0.0, &[(0.1, 1), (0.13, 3), (0.14, 1)], 0.15, Some(5));
    let l = request_latencies(&r).unwrap();
    assert!((l.ttft_ms - 100.0).abs() < 1e-9);
    assert!((l.tpot_ms - 50.0 / 4.0).abs() < 1e-9);
    assert_eq!(l.itl_ms.len(), 4);
    for (got, want) in l.itl_ms.iter().zip([10.0, 10.0, 10.0, 10.0]) {
        assert!((got - want).abs() < 1e-9, "{got}");
    }
}

#[test]
fn coalesced_chunks_join_their_read_and_invent_no_zero_gaps() {
    // 1 token at 10 ms, then a read at 20 ms with three 1-token chunks, then one at 30 ms.
    let mut r = req(
        0.0,
        &[(0.01, 1), (0.02, 1), (0.02, 1), (0.02, 1), (0.03, 1)],
        0.03,
        Some(5),
    );
    coalesce(&mut r, &[2, 3]);
    r.coalesced_chunks = 2;
    let l = request_latencies(&r).unwrap();
    assert_eq!(l.itl_ms.len(), 4);
    let want = [10.0 / 3.0, 10.0 / 3.0, 10.0 / 3.0, 10.0];
    for (got, want) in l.itl_ms.iter().zip(want) {
        assert!((got - want).abs() < 1e-9, "{:?}", l.itl_ms);
    }
    // The second token came in the first read: the first observed gap covers it too.
    let mut early = req(0.0, &[(0.01, 1), (0.01, 1), (0.03, 1)], 0.03, Some(3));
    coalesce(&mut early, &[1]);
    let l = request_latencies(&early).unwrap();
    assert_eq!(l.itl_ms.len(), 2);
    assert!(
        l.itl_ms.iter().all(|g| (g - 10.0).abs() < 1e-9),
        "{:?}",
        l.itl_ms
    );
    let m = compute(&[r], 1.0, 1.0, &[50.0], None);
    assert_eq!((m.timed_chunks, m.coalesced_chunks), (5, 2));
    assert!(m.itl.as_ref().unwrap().percentiles[0].1 > 3.0);
    let w = warnings(&m, "");
    assert!(
        w.iter()
            .any(|l| l.contains("40.0% of token chunks (2 of 5)")
                && l.contains("the server sent them together or the client read late")),
        "{w:?}"
    );
    let mut clean = req(0.0, &[(0.01, 1), (0.02, 1)], 0.02, Some(2));
    clean.max_tokens = 2;
    assert!(warnings(&compute(&[clean], 1.0, 1.0, &[50.0], None), "").is_empty());
}

#[test]
fn drift_retries_and_ignored_usage_are_counted_and_warned_about() {
    // Asked 64 tokens, the server counted 133 and 70 (within 10 %) and 50.
    let mut far = req(0.0, &[(0.1, 1), (0.2, 1)], 0.2, Some(2));
    far.input_len = 64;
    far.input_tokens_server = Some(133);
    far.server_model = Some("/models/qwen2.5-0.5b.gguf".into());
    let mut near = far.clone();
    near.input_tokens_server = Some(70);
    near.retried_unsent = true;
    let mut short = far.clone();
    short.input_tokens_server = Some(50);
    short.usage_ignored = true;
    let mut failed = req(0.0, &[], 0.0, None);
    failed.failure = Some(Failure::new(FailureKind::Reset, "x"));
    failed.retried_unsent = true;
    let m = compute(&[far, near, short, failed], 1.0, 1.0, &[50.0], None);
    assert_eq!((m.prompt_drift, m.prompt_counted), (2, 3));
    let (lo, hi) = m.prompt_drift_range.unwrap();
    assert!((lo - 50.0 / 64.0).abs() < 1e-9 && (hi - 133.0 / 64.0).abs() < 1e-9);
    assert_eq!((m.retried_unsent, m.usage_ignored), (2, 1));
    let w = warnings(&m, "llama-3-8b").join("\n");
    assert!(
        w.contains("for 2 of 3 requests the server counted the prompt")
            && w.contains("--tokenizer"),
        "{w}"
    );
    assert!(w.contains("0.78x to 2.08x"), "{w}");
    assert!(
        w.contains("2 request(s) were sent again on a new connection"),
        "{w}"
    );
    assert!(w.contains("1 request(s) reported usage values"), "{w}");
    assert!(
        w.contains("\"/models/qwen2.5-0.5b.gguf\" in 3") && w.contains("--model \"llama-3-8b\""),
        "{w}"
    );
    // The same model under its path or another case is no mismatch.
    let w = warnings(&m, "Qwen2.5-0.5B.gguf").join("\n");
    assert!(!w.contains("another model"), "{w}");
    assert!(same_model("org/Model-A", "model-a") && !same_model("a", "b"));
}

#[test]
fn long_and_short_replies_are_counted_and_warned_about() {
    let mut long = req(0.0, &[(0.1, 1), (0.2, 1)], 0.2, Some(2007));
    long.max_tokens = 32;
    let mut short = req(0.0, &[(0.1, 1), (0.2, 1)], 0.2, Some(20));
    short.max_tokens = 32;
    short.ignore_eos = true;
    let mut early = short.clone();
    early.ignore_eos = false;
    let mut exact = req(0.0, &[(0.1, 1), (0.2, 1)], 0.2, Some(32));
    exact.max_tokens = 32;
    exact.ignore_eos = true;
    // Cut off by the server: [DONE] without a finish_reason.
    early.finish_reason_missing = true;
    assert_eq!(long.length_flag(), Some(LengthFlag::OverLength));
    assert_eq!(short.length_flag(), Some(LengthFlag::ShortReply));
    assert_eq!((early.length_flag(), exact.length_flag()), (None, None));
    let m = compute(&[long, short, early, exact], 1.0, 1.0, &[50.0], None);
    assert_eq!((m.over_length, m.short_reply), (1, 1));
    assert_eq!(m.longest_over_length, Some((2007, 32)));
    let w = warnings(&m, "").join("\n");
    assert!(
        w.contains("1 of 4 replies were longer than asked (longest: 2007 tokens for 32 asked)"),
        "{w}"
    );
    assert!(
        w.contains("1 of 4 replies were shorter than asked despite --ignore-eos"),
        "{w}"
    );
    assert_eq!(m.finish_reason_missing, 1);
    assert!(
        w.contains("1 of 4 replies ended with [DONE] but no finish_reason"),
        "{w}"
    );
}

#[test]
fn failures_are_counted_by_kind_and_excluded() {
    let mut bad = req(0.0, &[], 0.0, None);
    bad.failure = Some(Failure {
        kind: FailureKind::Http(503),
        message: "x".into(),
    });
    let mut rs = vec![
        req(0.0, &[(0.1, 1), (0.2, 1)], 0.2, Some(2)),
        req(0.5, &[(0.1, 1), (0.2, 1)], 0.3, Some(3)),
        bad,
    ];
    rs[1].input_tokens_server = Some(12);
    let slo = Slo::parse("ttft:150 e2el:250").unwrap();
    let m = compute(&rs, 2.0, 4.0, &[99.0], slo);
    assert_eq!((m.completed, m.failed), (2, 1));
    assert_eq!(m.failures["http_503"], 1);
    assert_eq!((m.total_input, m.total_output), (22, 5));
    assert_eq!(m.output_count_mismatches, 1);
    assert_eq!(m.request_throughput, 1.0);
    assert_eq!(m.output_throughput, 2.5);
    assert_eq!(m.total_token_throughput, 13.5);
    assert_eq!(m.request_goodput, Some(0.5));
    assert_eq!(m.max_concurrent_requests, 1);
    assert_eq!(m.achieved_rate, Some(4.0));
}

#[test]
fn a_request_ending_as_it_starts_does_not_wrap_the_peak_concurrency() {
    // Sent at 5 s, done at once: its end edge sorts before its start edge.
    let rs = vec![req(5.0, &[(0.0, 1)], 0.0, Some(1))];
    let m = compute(&rs, 1.0, 1.0, &[99.0], None);
    assert_eq!(m.max_concurrent_requests, 1);
    // Alone among overlapping ones it counts like any other.
    let rs = vec![
        req(4.0, &[(1.0, 1)], 2.0, Some(1)),
        req(5.0, &[(0.0, 1)], 0.0, Some(1)),
        req(4.5, &[(1.0, 1)], 2.0, Some(1)),
    ];
    let m = compute(&rs, 3.0, 1.0, &[99.0], None);
    assert_eq!(m.max_concurrent_requests, 3);
}

#[test]
fn slo_parsing_rejects_nonsense() {
    assert_eq!(Slo::from_objectives(&[]).unwrap(), None);
    assert_eq!(Slo::parse("tpot:5").unwrap().unwrap().tpot_ms, Some(5.0));
    assert_eq!(
        Slo::parse("foo:5"),
        Err(SloError::Name {
            item: "foo:5".into(),
            name: "foo".into()
        })
    );
    assert_eq!(Slo::parse("ttft"), Err(SloError::Shape("ttft".into())));
    assert_eq!(
        Slo::parse("ttft:-1").unwrap_err().to_string(),
        "\"ttft:-1\": the bound is not a number of milliseconds"
    );
    // The one objectives parser: `<=` and `_ms` read too; a percentile or ITL is sweep's.
    let slo = Slo::parse("ttft_ms<=300 e2el:2000").unwrap().unwrap();
    assert_eq!((slo.ttft_ms, slo.e2el_ms), (Some(300.0), Some(2000.0)));
    for other in ["p99_ttft:500", "itl:40", "mean_ttft_ms<=5"] {
        assert!(
            matches!(Slo::parse(other), Err(SloError::NotHere { .. })),
            "{other}"
        );
    }
}
