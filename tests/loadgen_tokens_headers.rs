//! Prompt lengths counted the way vLLM counts them with a Hugging Face tokenizer (special tokens
//! of the post-processor included; generated text without them), and `--header` in both
//! spellings. The tokenizer is `tests/fixtures/loadgen/tokenizer-bos.json`: a hand-written
//! word-level tokenizer whose post-processor puts `<s>` (a BOS token) before every sequence, and
//! whose saved truncation (8 tokens) must not cut prompts. In-process against the mock.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::PathBuf;

use benchlens::loadgen::dataset::{self, PrefixOrder, RandomSpec};
use benchlens::loadgen::run::parse_header;
use benchlens::loadgen::tokenizer::Tokenizer;
use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, RunOpts};
use rand::SeedableRng;
use tokio::sync::watch;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loadgen/tokenizer-bos.json")
}

fn bos_tokenizer() -> Tokenizer {
    Tokenizer::from_name(fixture().to_str().unwrap()).unwrap()
}

#[test]
fn prompts_count_the_bos_token_and_generated_text_does_not() {
    let t = bos_tokenizer();
    assert_eq!(t.special_tokens(), 1);
    // vLLM: len(tokenizer(prompt).input_ids) = BOS + words.
    assert_eq!(t.count_prompt("alpha bravo"), 3);
    assert_eq!(t.count("alpha bravo"), 2);
    assert_eq!(t.count_prompt(""), 1);
    // Longer than the truncation saved in the file: every token still counts.
    let long = ["alpha"; 20].join(" ");
    assert_eq!((t.count_prompt(&long), t.count(&long)), (21, 20));
    // The built-in encodings add nothing.
    let bpe = Tokenizer::from_name("cl100k_base").unwrap();
    assert_eq!(bpe.special_tokens(), 0);
    assert_eq!(bpe.count_prompt("hello world"), bpe.count("hello world"));
}

#[test]
fn random_prompts_have_the_asked_length_bos_included() {
    let t = bos_tokenizer();
    let spec = RandomSpec {
        input_len: 10,
        output_len: 4,
        range_ratio: 0.0,
        prefix_len: 0,
        prefix_groups: 1,
        prefix_order: PrefixOrder::Grouped,
    };
    for p in dataset::random(spec, 20, 7, &t) {
        // 9 random words and the BOS: 10 tokens, as the server's tokenizer counts them.
        assert_eq!(p.input_len, 10, "{:?}", p.text);
        assert_eq!(t.count_prompt(&p.text), 10);
        assert_eq!(p.text.split_whitespace().count(), 9);
    }
    // A shared prefix adds its own tokens; lengths drawn within the range stay exact.
    let spec = RandomSpec {
        prefix_len: 3,
        range_ratio: 0.5,
        ..spec
    };
    for p in dataset::random(spec, 50, 8, &t) {
        assert_eq!(t.count_prompt(&p.text), p.input_len);
        assert!(
            (3 + 4 + 1..=3 + 13 + 1).contains(&p.input_len),
            "{}",
            p.input_len
        );
    }
    // The same text counted by a tokenizer without special tokens: the words alone.
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let (text, n) = t.random_text(&mut rng, "", 12);
    assert_eq!((n, t.count_prompt(&text)), (12, 13));
}

#[test]
fn dataset_files_count_prompts_with_the_bos_token() {
    let t = bos_tokenizer();
    let ps = dataset::jsonl(
        std::path::Path::new("p.jsonl"),
        "{\"prompt\": \"alpha bravo charlie\", \"output_len\": 3}\n",
        8,
        &t,
    )
    .unwrap();
    assert_eq!((ps[0].input_len, ps[0].output_len), (4, 3));
    // ShareGPT: vLLM counts both turns with tokenizer(text).input_ids.
    let sg = r#"[{"conversations":[{"from":"human","value":"alpha bravo charlie"},{"from":"gpt","value":"delta echo golf hotel"}]}]"#;
    let ps = dataset::sharegpt(std::path::Path::new("s.json"), sg, None, &t).unwrap();
    assert_eq!((ps[0].input_len, ps[0].output_len), (4, 5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_records_vllm_input_lengths_and_plain_output_counts() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 1.0,
        itl_ms: 0.5,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = RunOpts {
        base_url: mock.base_url(),
        result_dir: dir.path().to_path_buf(),
        no_progress: true,
        num_prompts: 8,
        max_concurrency: vec![4],
        input_len: 10,
        output_len: Some(4),
        ignore_eos: true,
        tokenizer: fixture().to_str().unwrap().into(),
        ..RunOpts::default()
    };
    let (_tx, rx) = watch::channel(false);
    let out = run_with_stop(o, rx).await.unwrap();
    let m = &out.metrics[0];
    assert_eq!(m.completed, 8, "{:?}", m.failures);
    for r in &out.requests[0] {
        assert_eq!(r.input_len, 10);
        // The mock counts words: it sees the 9 random words (it adds no BOS).
        assert_eq!(r.input_tokens_server, Some(9));
        // The 4 generated words, no BOS.
        assert_eq!(r.output_tokens_text, Some(4));
    }
    let tok = &out.records[0].tags["tokenizer"];
    assert!(tok.ends_with("tokenizer-bos.json"), "{tok}");
    mock.shutdown().await;
}

#[test]
fn headers_parse_in_both_spellings_and_malformed_ones_are_named() {
    let ok = |s: &str| {
        let (k, v) = parse_header(s).unwrap();
        (k.as_str().to_string(), v.to_str().unwrap().to_string())
    };
    assert_eq!(ok("X-Trace: a b"), ("x-trace".into(), "a b".into()));
    assert_eq!(ok("X-Trace:a=b"), ("x-trace".into(), "a=b".into()));
    assert_eq!(ok("X-Trace=a: b"), ("x-trace".into(), "a: b".into()));
    assert_eq!(
        ok("Authorization: Bearer abc=="),
        ("authorization".into(), "Bearer abc==".into())
    );
    assert_eq!(ok("X-Empty:"), ("x-empty".into(), "".into()));
    for (bad, why) in [
        ("NoSeparator", "no `:` or `=`"),
        (": value", "no header name"),
        ("Bad Name: x", "not a valid header name"),
        ("X-Ctl: a\u{7}b", "not allowed in a header"),
    ] {
        let e = parse_header(bad).unwrap_err().to_string();
        assert!(
            e.contains("--header") && e.contains(why) && e.contains("Name: value"),
            "{bad:?}: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_style_headers_reach_the_server_and_win_over_the_api_key() {
    let mock = MockServer::start(MockOpts {
        ttft_ms: 1.0,
        itl_ms: 0.5,
        api_key: Some("k1".into()),
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |headers: Vec<&str>, api_key: Option<&str>| {
        let o = RunOpts {
            base_url: mock.base_url(),
            result_dir: dir.path().to_path_buf(),
            no_progress: true,
            num_prompts: 3,
            input_len: 4,
            output_len: Some(2),
            tokenizer: "words".into(),
            headers: headers.into_iter().map(String::from).collect(),
            api_key: api_key.map(String::from),
            ..RunOpts::default()
        };
        let (_tx, rx) = watch::channel(false);
        run_with_stop(o, rx)
    };
    // Model lookup and generations both carry the header.
    for h in ["Authorization: Bearer k1", "Authorization=Bearer k1"] {
        let out = run(vec![h, "X-Repeated: 1", "X-Repeated: 2"], None)
            .await
            .unwrap();
        assert_eq!(out.metrics[0].completed, 3, "{h}");
    }
    let out = run(vec!["authorization:  Bearer k1 "], Some("wrong"))
        .await
        .unwrap();
    assert_eq!(out.metrics[0].completed, 3);
    let e = run(vec!["Authorization Bearer k1"], None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--header") && e.contains("Authorization Bearer k1"),
        "{e}"
    );
    mock.shutdown().await;
}
