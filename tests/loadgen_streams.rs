//! The client against recorded byte streams of the servers people run (see
//! `tests/fixtures/streams/README.md` for where each shape comes from). A small TCP server on
//! 127.0.0.1 replays each recorded response: the head, then one SSE event per HTTP/1.1 chunk
//! with a pause between events. For each shape the client must record the right token count,
//! TTFT at the first generated text (not at a role-only first chunk), one ITL gap per token after
//! the first, and the right completion or failure. Each stream-ending variant has its own test.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::Duration;

use benchlens::loadgen::body::{request_body, Sampling};
use benchlens::loadgen::client::{Backend, Client, Timeouts, Transport};
use benchlens::loadgen::measure::request_latencies;
use benchlens::loadgen::record::RequestRecord;
use benchlens::loadgen::target::Target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// Pause between replayed events: long enough that each arrives in its own read.
const GAP: Duration = Duration::from_millis(25);

/// A recorded response: head lines and body bytes.
fn load(name: &str) -> (Vec<String>, Vec<u8>) {
    let path = format!(
        "{}/tests/fixtures/streams/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let split = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or_else(|| panic!("{path}: no blank line after the head"));
    let head = String::from_utf8(bytes[..split].to_vec())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (head, bytes[split + 2..].to_vec())
}

/// The body's events, each with its terminating blank line (`\n\n` or `\r\n\r\n`).
fn events(body: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        let end = if body[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if body[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        };
        match end {
            Some(e) => {
                out.push(&body[start..e]);
                start = e;
                i = e;
            }
            None => i += 1,
        }
    }
    if start < body.len() {
        out.push(&body[start..]);
    }
    out
}

/// Reads one request (head and `content-length` body) from `s`; returns its body.
async fn read_request(s: &mut tokio::net::TcpStream) -> Vec<u8> {
    read_request_head(s).await.1
}

/// Reads one request from `s`; returns its head (as text) and its body.
async fn read_request_head(s: &mut tokio::net::TcpStream) -> (String, Vec<u8>) {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the client closed before its request was in");
        req.extend_from_slice(&buf[..n]);
        if let Some(p) = req.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let text = String::from_utf8_lossy(&req[..head_end]).to_ascii_lowercase();
    let length: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while req.len() < head_end + length {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0);
        req.extend_from_slice(&buf[..n]);
    }
    let body = req.split_off(head_end);
    (String::from_utf8_lossy(&req).into_owned(), body)
}

/// Answers one request on `listener` with the recording; returns the request body it got.
async fn replay_once(listener: TcpListener, name: &'static str) -> Vec<u8> {
    let (head, body) = load(name);
    let (mut s, _) = listener.accept().await.unwrap();
    let sent = read_request(&mut s).await;
    let whole = head
        .iter()
        .any(|l| l.to_ascii_lowercase().starts_with("content-length:"));
    let mut out = head.join("\r\n");
    out.push_str(if whole {
        "\r\n\r\n"
    } else {
        "\r\ntransfer-encoding: chunked\r\n\r\n"
    });
    s.write_all(out.as_bytes()).await.unwrap();
    if whole {
        s.write_all(&body).await.unwrap();
    } else {
        for (i, ev) in events(&body).into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(GAP).await;
            }
            let mut chunk = format!("{:x}\r\n", ev.len()).into_bytes();
            chunk.extend_from_slice(ev);
            chunk.extend_from_slice(b"\r\n");
            s.write_all(&chunk).await.unwrap();
        }
        s.write_all(b"0\r\n\r\n").await.unwrap();
    }
    // Wait for the client to go (it may keep the connection for reuse): bounded.
    let _ = tokio::time::timeout(Duration::from_millis(300), s.read(&mut [0u8; 64])).await;
    sent
}

/// Answers one request on `listener` with a response head carrying `padding` bytes in one
/// header, then a two-token stream in one write.
async fn big_head_once(listener: TcpListener, padding: usize) -> Vec<u8> {
    let (mut s, _) = listener.accept().await.unwrap();
    let sent = read_request(&mut s).await;
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-padding: {}\r\nconnection: close\r\n\r\n",
        "p".repeat(padding)
    );
    let body = "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
    // The client may have gone already (a head it refuses): a failed write is its answer.
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(body.as_bytes()).await;
    let _ = tokio::time::timeout(Duration::from_millis(300), s.read(&mut [0u8; 64])).await;
    sent
}

/// Streams one request of `backend` against the recording `name`.
async fn run(name: &'static str, backend: Backend) -> (RequestRecord, Vec<u8>) {
    run_against(backend, |listener| replay_once(listener, name)).await
}

/// Streams one request of `backend` against the server `serve` runs on a fresh listener;
/// returns the record and the request body the server got.
async fn run_against<F>(
    backend: Backend,
    serve: impl FnOnce(TcpListener) -> F,
) -> (RequestRecord, Vec<u8>)
where
    F: std::future::Future<Output = Vec<u8>> + Send + 'static,
{
    let (mut recs, sent) = run_many(backend, &Transport::default(), 1, serve).await;
    (recs.remove(0), sent)
}

/// Streams `n` requests one after another with one client (so its idle connections are
/// reused) against the server `serve` runs on a fresh listener; returns the records and what
/// the server returned.
async fn run_many<F>(
    backend: Backend,
    transport: &Transport,
    n: usize,
    serve: impl FnOnce(TcpListener) -> F,
) -> (Vec<RequestRecord>, Vec<u8>)
where
    F: std::future::Future<Output = Vec<u8>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(serve(listener));
    let target = Target::resolve(&url, backend.default_endpoint(), vec![])
        .await
        .unwrap();
    let limit = Some(Duration::from_secs(10));
    let client = Client::with_transport(
        target,
        backend,
        Timeouts {
            connect: limit,
            first_token: limit,
            idle: limit,
            total: limit,
        },
        transport,
    )
    .unwrap();
    let mut recs = Vec::new();
    for index in 0..n {
        let body = request_body(backend, "tiny", "hi", 5, &Sampling::default(), None);
        let mut rec = RequestRecord {
            index,
            max_tokens: 5,
            ..RequestRecord::default()
        };
        client.stream(body, Instant::now(), &mut rec).await;
        recs.push(rec);
    }
    drop(client);
    let sent = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the replay server ends")
        .unwrap();
    (recs, sent)
}

/// What a recording must yield.
struct Expect {
    /// Output tokens (the server's usage when it gave one).
    tokens: u64,
    /// The server's own count, if the stream carries one.
    server: Option<u64>,
    /// Text chunks, the timing points.
    chunks: usize,
    /// Index of the event (comments included) with the first generated text.
    first_text_event: u32,
    /// The generated text.
    text: &'static str,
}

const FIVE: &str = " The quick brown fox jumps";

async fn check(name: &'static str, backend: Backend, e: Expect) -> RequestRecord {
    let (rec, _) = run(name, backend).await;
    assert!(rec.failure.is_none(), "{name}: {:?}", rec.failure);
    assert_eq!(rec.output_tokens(), e.tokens, "{name}: tokens");
    assert_eq!(rec.output_tokens_server, e.server, "{name}: server count");
    assert_eq!(rec.chunks.len(), e.chunks, "{name}: text chunks");
    assert_eq!(rec.generated_text, e.text, "{name}: text");
    let lat = request_latencies(&rec).unwrap_or_else(|| panic!("{name}: no latencies"));
    // TTFT counts to the first generated text, which was sent that many pauses after the head.
    let earliest = GAP * e.first_text_event;
    assert!(
        lat.ttft_ms >= earliest.as_secs_f64() * 1e3,
        "{name}: TTFT {} ms before the first text ({earliest:?})",
        lat.ttft_ms
    );
    // One gap per timed token after the first (a server's usage may count one more token, the
    // end-of-sequence, that came with no text).
    let timed: u64 = rec.chunks.iter().map(|c| u64::from(c.tokens)).sum();
    assert!(
        timed == e.tokens || timed + 1 == e.tokens,
        "{name}: {timed} timed tokens"
    );
    if rec.coalesced_chunks == 0 {
        assert_eq!(lat.itl_ms.len() as u64, timed - 1, "{name}: ITL gaps");
        for gap in &lat.itl_ms {
            assert!(
                *gap >= GAP.as_secs_f64() * 1e3 * 0.9,
                "{name}: gap {gap} ms"
            );
        }
    }
    assert!(rec.e2el_s.is_some_and(|e2e| e2e * 1e3 >= lat.ttft_ms));
    rec
}

#[tokio::test]
async fn vllm_chat_with_running_usage() {
    let rec = check(
        "vllm-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
    assert_eq!(rec.input_tokens_server, Some(7));
}

#[tokio::test]
async fn vllm_completions() {
    check(
        "vllm-completions.http",
        Backend::OpenAi,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn reasoning_content_deltas_are_generated_tokens() {
    // TTFT at the first reasoning token: the model is generating.
    check(
        "vllm-chat-reasoning.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 6,
            server: Some(6),
            chunks: 5,
            first_text_event: 1,
            text: "Let me think Yes.",
        },
    )
    .await;
}

#[tokio::test]
async fn tool_call_deltas_are_generated_tokens() {
    check(
        "vllm-chat-tool-calls.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 4,
            server: Some(4),
            chunks: 4,
            first_text_event: 1,
            text: "get_weather{\"city\": \"Paris\"}",
        },
    )
    .await;
}

#[tokio::test]
async fn sglang_chat_with_null_fields() {
    check(
        "sglang-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn sglang_native_cumulative_text() {
    check(
        "sglang-generate.http",
        Backend::Sglang,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn tgi_openai_route() {
    check(
        "tgi-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn tgi_native_stream_ends_at_its_details() {
    check(
        "tgi-generate-stream.http",
        Backend::Tgi,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn llamacpp_server_role_chunk_then_usage_chunk() {
    check(
        "llamacpp-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn usage_in_the_final_chunk_with_an_empty_delta_is_not_tokens() {
    // Older llama.cpp: the final chunk carries finish_reason, an empty delta and the usage. It
    // must not become a 5-token chunk (the bug: 2n − 1 gaps for n tokens).
    check(
        "llamacpp-chat-usage-in-final-chunk.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
    check(
        "usage-with-empty-final-choice.http",
        Backend::OpenAi,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn llama_cpp_python_crlf_pings_and_role_only_first_chunk() {
    // No usage in the stream: the client counts one token per text chunk.
    check(
        "llama-cpp-python-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: None,
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn trtllm_serve_chat() {
    check(
        "trtllm-serve-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn transformers_serve_ends_without_done() {
    check(
        "transformers-serve-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 5,
            server: None,
            chunks: 5,
            first_text_event: 1,
            text: FIVE,
        },
    )
    .await;
}

/// Recorded live from `transformers serve` 5.19 (a random-weight model, see the fixtures'
/// README): asked for `stream_options.include_usage`, it puts the usage in the final chunk with
/// the `finish_reason`, and still sends no `[DONE]`.
#[tokio::test]
async fn transformers_serve_live_usage_in_the_final_chunk() {
    check(
        "transformers-serve-5.19-live.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 6,
            server: Some(6),
            chunks: 6,
            first_text_event: 1,
            text: " mup lasa mim vewoz gurozaR",
        },
    )
    .await;
}

#[tokio::test]
async fn ollama_reasoning_field_and_empty_content_deltas() {
    // Two thinking chunks (delta.reasoning, empty content), five content chunks; Ollama's usage
    // counts all seven.
    check(
        "ollama-chat.http",
        Backend::OpenAiChat,
        Expect {
            tokens: 7,
            server: Some(7),
            chunks: 7,
            first_text_event: 0,
            text: "Hmm, The quick brown fox jumps",
        },
    )
    .await;
}

#[tokio::test]
async fn ending_done_marker_is_complete() {
    check(
        "ending-done-without-finish.http",
        Backend::OpenAi,
        Expect {
            tokens: 5,
            server: None,
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn ending_finish_reason_usage_then_end_of_body_is_complete() {
    check(
        "ending-finish-usage-no-done.http",
        Backend::OpenAi,
        Expect {
            tokens: 5,
            server: Some(5),
            chunks: 5,
            first_text_event: 0,
            text: FIVE,
        },
    )
    .await;
}

#[tokio::test]
async fn ending_before_any_finish_reason_is_truncated() {
    let (rec, _) = run("ending-cut-before-finish.http", Backend::OpenAi).await;
    let f = rec.failure.expect("a failure");
    assert_eq!(f.kind.name(), "truncated_stream");
    assert!(f.message.contains("3 text chunk(s)"), "{}", f.message);
    assert!(rec.e2el_s.is_none());
}

#[tokio::test]
async fn an_html_page_with_status_200_is_not_a_stream() {
    let (rec, _) = run("html-200.http", Backend::OpenAiChat).await;
    let f = rec.failure.expect("a failure");
    assert_eq!(f.kind.name(), "not_a_stream");
    assert!(
        f.message.contains("text/html") && f.message.contains("Welcome to nginx"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_not_a_stream() {
    let (rec, _) = run("json-200.http", Backend::OpenAi).await;
    let f = rec.failure.expect("a failure");
    assert_eq!(f.kind.name(), "not_a_stream");
    assert!(
        f.message.contains("application/json") && f.message.contains("text_completion"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn the_request_carries_only_what_was_asked_for() {
    let (_, sent) = run("vllm-chat.http", Backend::OpenAiChat).await;
    let v: serde_json::Value = serde_json::from_slice(&sent).unwrap();
    assert!(
        v.get("ignore_eos").is_none() && v.get("temperature").is_none(),
        "{v}"
    );
    assert_eq!(
        (
            v["max_tokens"].as_u64(),
            v["max_completion_tokens"].as_u64()
        ),
        (Some(5), Some(5))
    );
}

mod against_the_mock {
    use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, RunOpts};
    use tokio::sync::watch;

    fn opts(base_url: String, dir: &std::path::Path) -> RunOpts {
        RunOpts {
            base_url,
            result_dir: dir.to_path_buf(),
            no_progress: true,
            num_prompts: 8,
            max_concurrency: vec![4],
            input_len: 8,
            output_len: Some(16),
            model: Some("benchlens-mock".into()),
            tokenizer: "words".into(),
            ..RunOpts::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replies_longer_or_shorter_than_asked_are_counted_and_warned_about() {
        let mock = MockServer::start(MockOpts {
            ttft_ms: 2.0,
            itl_ms: 0.5,
            ..MockOpts::default()
        })
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        // The server is told 40 while 16 were asked for: every reply runs long.
        let mut o = opts(mock.base_url(), dir.path());
        o.backend = benchlens::loadgen::client::Backend::OpenAiChat;
        o.ignore_eos = true;
        o.extra_body = Some(r#"{"max_completion_tokens": 40, "max_tokens": 40}"#.into());
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        let m = &out.metrics[0];
        assert_eq!((m.completed, m.over_length, m.short_reply), (8, 8, 0));
        assert_eq!(m.longest_over_length, Some((40, 16)));
        assert!(
            out.summaries[0].contains(
                "8 of 8 replies were longer than asked (longest: 40 tokens for 16 asked)"
            ),
            "{}",
            out.summaries[0]
        );
        let jsonl = std::fs::read_to_string(out.requests_path.as_ref().unwrap()).unwrap();
        assert!(jsonl.contains(r#""length_flag":"over_length""#), "{jsonl}");
        // --ignore-eos, but the key is taken out of the body: the mock ends replies early.
        let mut o = opts(mock.base_url(), dir.path());
        o.ignore_eos = true;
        o.extra_body = Some(r#"{"ignore_eos": null}"#.into());
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        let m = &out.metrics[0];
        assert!(m.short_reply >= 1 && m.over_length == 0, "{m:?}");
        assert!(
            out.summaries[0].contains("replies were shorter than asked despite --ignore-eos"),
            "{}",
            out.summaries[0]
        );
        mock.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn chunks_read_together_are_counted_and_the_summary_says_so() {
        // No delay between tokens: each reply's chunks leave the mock in one write.
        let mock = MockServer::start(MockOpts {
            ttft_ms: 5.0,
            itl_ms: 0.0,
            ..MockOpts::default()
        })
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(mock.base_url(), dir.path());
        o.ignore_eos = true;
        let (_tx, rx) = watch::channel(false);
        let out = run_with_stop(o, rx).await.unwrap();
        let m = &out.metrics[0];
        assert_eq!(m.timed_chunks, 8 * 16);
        assert!(m.coalesced_chunks >= 8 * 14, "{m:?}");
        let per_request: u64 = out.requests[0].iter().map(|r| r.coalesced_chunks).sum();
        assert_eq!(per_request, m.coalesced_chunks);
        // No invented 0 ms gaps: unobserved gaps are not samples.
        let itl = m.itl.as_ref().map_or(0, |s| s.count);
        assert!(itl < 8 * 15, "{itl}");
        assert!(
            out.summaries[0].contains("the per-chunk ITL distribution is limited by that"),
            "{}",
            out.summaries[0]
        );
        let r = &out.records[0];
        let key = benchlens::model::MetricKey::Extra("coalesced_chunks".into());
        assert_eq!(r.metrics[&key], m.coalesced_chunks as f64);
        mock.shutdown().await;
    }
}

/// A server that accepts connections and reads, but never answers.
async fn silent_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    (url, task)
}

#[tokio::test]
async fn the_model_probe_gives_up_on_a_server_that_never_answers() {
    let (url, server) = silent_server().await;
    let dir = tempfile::tempdir().unwrap();
    let o = benchlens::loadgen::RunOpts {
        base_url: url,
        result_dir: dir.path().to_path_buf(),
        no_progress: true,
        num_prompts: 1,
        tokenizer: "words".into(),
        // The probe's limit is 30 s, or the request timeout when shorter.
        request_timeout: Some(0.3),
        ..benchlens::loadgen::RunOpts::default()
    };
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let t0 = Instant::now();
    let e = tokio::time::timeout(
        Duration::from_secs(10),
        benchlens::loadgen::run_with_stop(o, rx),
    )
    .await
    .expect("the probe does not hang")
    .unwrap_err();
    // The setup error's chain, as the command line prints it.
    let e = format!("{:#}", anyhow::Error::from(e));
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(
        e.contains("/v1/models") && e.contains("no answer within") && e.contains("--model"),
        "{e}"
    );
    server.abort();
}

/// `--http2` against a server that speaks only HTTP/1.1 (uvicorn, as llama-cpp-python uses):
/// it answers the h2c preface with a plain `400`, which is named as such, not as a reset.
#[tokio::test]
async fn http2_against_an_http1_only_server_says_so() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
        let answer = "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 11\r\nconnection: close\r\n\r\nInvalid HTTP request received.";
        let _ = s.write_all(answer.as_bytes()).await;
        // Keep the socket open a moment so the client reads the answer, not a broken pipe.
        let _ = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf)).await;
    });
    let backend = Backend::OpenAi;
    let target = Target::resolve(&url, backend.default_endpoint(), vec![])
        .await
        .unwrap();
    let limit = Some(Duration::from_secs(5));
    let timeouts = Timeouts {
        connect: limit,
        first_token: limit,
        idle: limit,
        total: limit,
    };
    let transport = Transport {
        http2: true,
        ..Transport::default()
    };
    let client = Client::with_transport(target, backend, timeouts, &transport).unwrap();
    let f = client.get("/v1/models").await.unwrap_err();
    assert!(
        f.message.contains("the server may speak only HTTP/1.1"),
        "{}: {}",
        f.kind.name(),
        f.message
    );
    assert_ne!(f.kind.name(), "reset");
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
}

#[tokio::test]
async fn response_heads_up_to_64_kib_are_read_and_a_flag_allows_more() {
    // 20 KB: what curl reads and a 16 KiB limit refused.
    for padding in [12 << 10, 20 << 10, 60 << 10] {
        let (rec, _) = run_against(Backend::OpenAi, move |l| big_head_once(l, padding)).await;
        assert!(rec.failure.is_none(), "{padding}: {:?}", rec.failure);
        assert_eq!(rec.generated_text, "ab");
    }
    // Over it: a failure that says what, how much and which flag, not a hang or a panic.
    let (rec, _) = run_against(Backend::OpenAi, |l| big_head_once(l, 70 << 10)).await;
    let failure = rec.failure.expect("a 70 KiB head fails");
    assert!(
        failure.message.contains("response head")
            && failure.message.contains("64 KiB")
            && failure.message.contains("--max-response-head-kib"),
        "{failure:?}"
    );
    let more = Transport {
        max_head_kib: Some(128),
        ..Transport::default()
    };
    let (recs, _) = run_many(Backend::OpenAi, &more, 1, |l| big_head_once(l, 70 << 10)).await;
    assert!(recs[0].failure.is_none(), "{:?}", recs[0].failure);
    assert_eq!(recs[0].generated_text, "ab");
}

/// Two text events and `[DONE]`, the second ending the generation.
const TWO_EVENTS: &str = "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";

/// Answers one request per connection, in turn: the head lines of each reply (status line
/// first), then its body in `pieces` HTTP/1.1 chunks [`GAP`] apart; each connection is closed
/// after its reply. Returns the heads of the requests it got, one after the other.
async fn scripted(listener: TcpListener, replies: Vec<(String, Vec<u8>)>) -> Vec<u8> {
    let mut heads = Vec::new();
    for (head, body) in replies {
        let (mut s, _) = listener.accept().await.unwrap();
        let (req, _) = read_request_head(&mut s).await;
        heads.extend_from_slice(req.as_bytes());
        let mut out = format!("{head}\r\nconnection: close\r\n").into_bytes();
        if body.is_empty() {
            out.extend_from_slice(b"content-length: 0\r\n\r\n");
            s.write_all(&out).await.unwrap();
        } else {
            out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
            s.write_all(&out).await.unwrap();
            let third = body.len().div_ceil(3);
            for (i, piece) in body.chunks(third).enumerate() {
                if i > 0 {
                    tokio::time::sleep(GAP).await;
                }
                let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
                chunk.extend_from_slice(piece);
                chunk.extend_from_slice(b"\r\n");
                // A client that gave up on the reply has closed: its failure is the answer.
                if s.write_all(&chunk).await.is_err() {
                    break;
                }
            }
            let _ = s.write_all(b"0\r\n\r\n").await;
        }
        let _ = tokio::time::timeout(Duration::from_millis(300), s.read(&mut [0u8; 64])).await;
    }
    heads
}

fn sse_head(extra: &str) -> String {
    format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream{extra}")
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn a_gzip_or_deflate_event_stream_is_decoded_as_it_arrives() {
    use std::io::Write;
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    zlib.write_all(TWO_EVENTS.as_bytes()).unwrap();
    let zlib = zlib.finish().unwrap();
    for (encoding, body) in [("gzip", gzip(TWO_EVENTS.as_bytes())), ("deflate", zlib)] {
        let reply = vec![(sse_head(&format!("\r\ncontent-encoding: {encoding}")), body)];
        let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, reply)).await;
        assert!(rec.failure.is_none(), "{encoding}: {:?}", rec.failure);
        assert_eq!(rec.generated_text, "ab", "{encoding}");
        assert_eq!(rec.chunks.len(), 2, "{encoding}");
        assert!(rec.ttft_s.is_some() && rec.e2el_s.is_some(), "{encoding}");
    }
}

#[tokio::test]
async fn an_encoding_the_client_cannot_decode_is_a_compressed_stream() {
    for encoding in ["br", "zstd"] {
        let reply = vec![(
            sse_head(&format!("\r\ncontent-encoding: {encoding}")),
            b"\x1b\x2a\x00\xf8\xa5\x40".to_vec(),
        )];
        let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, reply)).await;
        let f = rec.failure.expect("an undecodable stream fails");
        assert_eq!(f.kind.name(), "compressed_stream", "{f:?}");
        assert!(
            f.message.contains(encoding) && f.message.contains("uncompressed"),
            "{f:?}"
        );
    }
    // gzip that is not gzip: named the same way, not an empty or malformed stream.
    let reply = vec![(
        sse_head("\r\ncontent-encoding: gzip"),
        TWO_EVENTS.as_bytes().to_vec(),
    )];
    let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, reply)).await;
    let f = rec.failure.expect("bad gzip fails");
    assert_eq!(f.kind.name(), "compressed_stream", "{f:?}");
}

#[tokio::test]
async fn absurd_usage_values_are_ignored_and_the_stream_kept() {
    for bad in ["-1", "1e308", "\"NaN\""] {
        let body = format!(
            "data: {{\"choices\":[{{\"text\":\"a\"}}],\"usage\":{{\"prompt_tokens\":{bad},\"completion_tokens\":{bad}}}}}\n\n\
             data: {{\"choices\":[{{\"text\":\"b\",\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":{bad},\"completion_tokens\":2}}}}\n\n\
             data: [DONE]\n\n"
        );
        let reply = vec![(sse_head(""), body.into_bytes())];
        let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, reply)).await;
        assert!(rec.failure.is_none(), "{bad}: {:?}", rec.failure);
        assert!(rec.usage_ignored, "{bad}");
        assert_eq!(rec.chunks.len(), 2, "{bad}");
        assert_eq!(rec.input_tokens_server, None, "{bad}");
        assert_eq!(rec.output_tokens(), 2, "{bad}");
        assert!(rec.ttft_s.is_some() && rec.e2el_s.is_some(), "{bad}");
    }
}

#[tokio::test]
async fn a_307_within_the_origin_is_followed_once() {
    let replies = vec![
        (
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: /v2/completions".to_string(),
            Vec::new(),
        ),
        (sse_head(""), TWO_EVENTS.as_bytes().to_vec()),
    ];
    let (rec, heads) = run_against(Backend::OpenAi, move |l| scripted(l, replies)).await;
    assert!(rec.failure.is_none(), "{:?}", rec.failure);
    assert_eq!(rec.generated_text, "ab");
    let heads = String::from_utf8(heads).unwrap();
    let lines: Vec<&str> = heads.lines().filter(|l| l.starts_with("POST")).collect();
    assert_eq!(
        lines,
        [
            "POST /v1/completions HTTP/1.1",
            "POST /v2/completions HTTP/1.1"
        ]
    );
    // A second redirect is not followed, and says where it pointed.
    let replies = vec![
        (
            "HTTP/1.1 308 Permanent Redirect\r\nlocation: /a".to_string(),
            Vec::new(),
        ),
        (
            "HTTP/1.1 308 Permanent Redirect\r\nlocation: /b".to_string(),
            Vec::new(),
        ),
    ];
    let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, replies)).await;
    let f = rec.failure.expect("a redirect loop fails");
    assert_eq!(f.kind.name(), "http_308");
    assert!(
        f.message.contains("\"/b\"") && f.message.contains("second redirect"),
        "{f:?}"
    );
}

#[tokio::test]
async fn a_redirect_to_another_origin_fails_naming_its_location() {
    let replies = vec![(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: https://elsewhere.example:8443/v1/completions".to_string(),
        Vec::new(),
    )];
    let (rec, _) = run_against(Backend::OpenAi, move |l| scripted(l, replies)).await;
    let f = rec.failure.expect("not followed");
    assert_eq!(f.kind.name(), "http_307");
    assert!(
        f.message
            .contains("https://elsewhere.example:8443/v1/completions")
            && f.message.contains("another origin"),
        "{f:?}"
    );
}

/// llama-server's keep-alive: every reply advertises keep-alive, and the server closes the
/// connection after it. The close races the client's next request on that connection; here
/// the race is always lost: a request that comes on an answered connection is read and the
/// connection closed without an answer. With `partial`, such a request gets the start of a
/// response head before the close instead (an answer begun: never to be sent again).
async fn close_after_each_reply(listener: TcpListener, answers: usize, partial: bool) -> Vec<u8> {
    let mut connections = 0u8;
    let mut answered = 0;
    while answered < answers {
        let Ok(Ok((mut s, _))) =
            tokio::time::timeout(Duration::from_secs(3), listener.accept()).await
        else {
            break;
        };
        connections += 1;
        read_request(&mut s).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: keep-alive\r\nkeep-alive: timeout=5\r\ntransfer-encoding: chunked\r\n\r\n";
        let mut out = head.as_bytes().to_vec();
        out.extend_from_slice(
            format!("{:x}\r\n{TWO_EVENTS}\r\n0\r\n\r\n", TWO_EVENTS.len()).as_bytes(),
        );
        s.write_all(&out).await.unwrap();
        answered += 1;
        // The client's next request on this connection, if it comes: never answered.
        let mut buf = [0u8; 4096];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await
        {
            if n > 0 && partial {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-ty").await;
            }
        }
        drop(s);
    }
    vec![connections]
}

#[tokio::test]
async fn a_request_on_a_connection_the_server_closed_is_sent_again_once() {
    let (recs, connections) = run_many(Backend::OpenAi, &Transport::default(), 3, |l| {
        close_after_each_reply(l, 3, false)
    })
    .await;
    for r in &recs {
        assert!(r.failure.is_none(), "request {}: {:?}", r.index, r.failure);
        assert_eq!(r.generated_text, "ab");
    }
    let retried: Vec<bool> = recs.iter().map(|r| r.retried_unsent).collect();
    assert_eq!(retried, [false, true, true]);
    assert_eq!(connections, [3]);
    // Latencies count from the retry's write: the lost attempt is write delay.
    assert!(recs[1].ttft_s.unwrap() < 0.5, "{:?}", recs[1].ttft_s);
    // An answer that had begun is the server's failure, and the request is not sent twice.
    let (recs, _) = run_many(Backend::OpenAi, &Transport::default(), 2, |l| {
        close_after_each_reply(l, 1, true)
    })
    .await;
    assert!(recs[0].failure.is_none(), "{:?}", recs[0].failure);
    assert!(
        recs[1].failure.is_some() && !recs[1].retried_unsent,
        "{:?}",
        recs[1]
    );
}
