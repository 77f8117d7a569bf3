//! `benchlens run` against a real OpenAI-compatible server that this project did not write:
//! llama.cpp, as `llama-cpp-python[server]` serves it, with a tiny random-weight model that
//! `scripts/tiny_gguf.py` writes at test time (nothing is downloaded).
//!
//! The server runs from the venv `scripts/setup.sh test` builds. Where that venv is missing the
//! test prints why and passes, unless `BENCHLENS_REQUIRE_REAL_SERVER=1` (set by `make test`), in
//! which case it fails. `BENCHLENS_LLAMA_PYTHON` names the venv's python; without it the test
//! asks `scripts/setup.sh llama-python` where the venv would be.
//!
//! The requests go through a recording proxy in this file, so every check compares what benchlens
//! reports with what actually crossed the wire, counted by the server itself (its
//! `/extras/tokenize` endpoint, the same vocabulary as the model) and by the `tokenizer.json` the
//! script writes alongside the model.
//!
//! The server's quirks, as found here (llama-cpp-python 0.3.36), are left to the server:
//! - **Request ids.** Its middleware (`starlette_context`'s `RequestIdPlugin`) reads an
//!   `X-Request-ID` header and answers `400` with an empty body unless the value parses as a
//!   UUID (Python's `uuid.UUID`: 32 hex digits, dashes optional); without the header it makes one
//!   up and echoes it. benchlens sends no such header, so only a user's `--header` meets this,
//!   starting with the model probe (`a_request_id_that_is_not_a_uuid_is_refused_...` below).
//! - **Interrupted streams.** By default (`interrupt_requests`) the model serves one request at a
//!   time and a running stream is cut off as soon as another request waits: the server sends
//!   `data: [DONE]` after the chunk it was on, with no `finish_reason`, so at concurrency 2 or
//!   more nearly every reply has one token. The server here is started with
//!   `--interrupt_requests False`, so each reply runs to its length while the others queue.
//! - **No usage in streams.** `stream_options.include_usage` is ignored: output tokens are
//!   counted by the client (one token per chunk), and the server's counts are taken here from
//!   its tokenizer and from the timings it logs per request.
//! - **Chat length limit.** `/v1/chat/completions` reads `max_tokens` only; it ignores
//!   `max_completion_tokens` and then generates until the context is full.
//! - **Prompt longer than the context.** A streamed request gets `200`, SSE headers and an empty
//!   body (the reason is only in the server's log); not streamed, it gets `400`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benchlens::model::{canonical, MetricKey, Record};
use serde_json::{json, Value};

mod support;
use support::free_port;

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");
/// Model load plus the server's imports; a few seconds here, bounded for a loaded machine.
const SERVER_START_LIMIT: Duration = Duration::from_secs(90);
/// One `benchlens run` of a handful of requests.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The context the server is started with: bounds a reply that ignores its length limit.
const N_CTX: u64 = 512;

/// A child process killed (and reaped) when dropped, even by a panic.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The venv's python, or `None` (with the reason printed) when this test cannot run here.
fn llama_python() -> Option<PathBuf> {
    let required = std::env::var("BENCHLENS_REQUIRE_REAL_SERVER").is_ok_and(|v| v == "1");
    let python = match std::env::var_os("BENCHLENS_LLAMA_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
            let out = Command::new("bash")
                .arg(setup)
                .arg("llama-python")
                .output()
                .ok()?;
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
    };
    let usable = Command::new(&python)
        .args(["-c", "import llama_cpp.server, gguf"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        return Some(python);
    }
    let reason = format!(
        "no llama-cpp-python[server] and gguf at {} (run `scripts/setup.sh test`, or set BENCHLENS_LLAMA_PYTHON)",
        python.display()
    );
    assert!(!required, "BENCHLENS_REQUIRE_REAL_SERVER=1 but {reason}");
    eprintln!("skipped: {reason}");
    None
}

/// A running llama.cpp server with the tiny model.
struct Server {
    _child: Killed,
    addr: SocketAddr,
    log: PathBuf,
    /// The `tokenizer.json` matching the model's vocabulary.
    tokenizer: PathBuf,
}

impl Server {
    /// Writes the model into `dir` and starts the server on a free port with `args`; waits
    /// (bounded) until `/v1/models` answers.
    fn start(python: &Path, dir: &Path, args: &[&str]) -> Server {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tiny_gguf.py");
        let out = Command::new(python)
            .arg(script)
            .arg(dir)
            .args(["--seed", "1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tiny_gguf.py: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let log = dir.join(format!("server-{port}.log"));
        let log_file = std::fs::File::create(&log).unwrap();
        let model = dir.join("tiny.gguf");
        let child = Killed(
            Command::new(python)
                .args(["-m", "llama_cpp.server", "--model"])
                .arg(&model)
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--n_ctx", &N_CTX.to_string(), "--n_threads", "1"])
                .args(args)
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().unwrap())
                .stderr(log_file)
                .spawn()
                .unwrap(),
        );
        let mut server = Server {
            _child: child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            log,
            tokenizer: dir.join("tokenizer.json"),
        };
        let start = Instant::now();
        loop {
            if let Ok((200, _)) = http(server.addr, "GET", "/v1/models", None) {
                eprintln!("server up in {:.1} s", start.elapsed().as_secs_f64());
                return server;
            }
            if let Ok(Some(status)) = server._child.0.try_wait() {
                panic!("the server exited ({status}):\n{}", server.log_tail());
            }
            assert!(
                start.elapsed() < SERVER_START_LIMIT,
                "the server did not answer within {SERVER_START_LIMIT:?}:\n{}",
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn log_tail(&mut self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// The server's own token ids for `text` (`/extras/tokenize`; a BOS first, as for a prompt).
    fn tokenize(&self, text: &str) -> Vec<u64> {
        let (status, body) = http(
            self.addr,
            "POST",
            "/extras/tokenize",
            Some(&json!({ "input": text })),
        )
        .unwrap();
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let v: Value = serde_json::from_slice(&body).unwrap();
        v["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect()
    }
}

/// One request's timings as the server logs them (llama.cpp's `llama_perf_context_print`,
/// which llama-cpp-python prints after each completion when verbose, its default).
#[derive(Debug)]
struct ServerTiming {
    /// Tokens generated: the `eval` runs plus the first token, which comes from the prompt's
    /// evaluation.
    generated: u64,
    /// `total time`: from the start of the completion to its last token.
    total_ms: f64,
}

/// The numbers in `line` after `=`, in order (`eval time = 0.72 ms / 7 runs (...)` gives 0.72,
/// 7, ...).
fn numbers_after_equals(line: &str) -> Vec<f64> {
    let tail = line.split_once('=').map_or("", |(_, t)| t);
    tail.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect()
}

impl Server {
    /// The length of the server's log so far (a mark for [`Server::timings_since`]).
    fn log_mark(&self) -> usize {
        std::fs::metadata(&self.log).map_or(0, |m| m.len() as usize)
    }

    /// The per-request timings the server logged after `mark`.
    fn timings_since(&self, mark: usize) -> Vec<ServerTiming> {
        let text = std::fs::read(&self.log).unwrap();
        let text = String::from_utf8_lossy(&text[mark.min(text.len())..]).into_owned();
        let mut out = Vec::new();
        let mut generated = None;
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("llama_perf_context_print:") else {
                continue;
            };
            let rest = rest.trim_start();
            if rest.starts_with("eval time") {
                generated = numbers_after_equals(rest).get(1).map(|r| *r as u64 + 1);
            } else if rest.starts_with("total time") {
                let total_ms = numbers_after_equals(rest)[0];
                let generated = generated.take().expect("an eval line before total time");
                out.push(ServerTiming {
                    generated,
                    total_ms,
                });
            }
        }
        out
    }
}

/// One blocking HTTP/1.1 exchange with `Connection: close`; returns the status and body.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let messages = split_messages(&raw);
    let m = messages
        .first()
        .ok_or_else(|| std::io::Error::other("no HTTP response"))?;
    let status = m
        .head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, m.body.clone()))
}

/// One HTTP message: the start line and headers, and the body (de-chunked).
#[derive(Debug)]
struct Message {
    head: String,
    body: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Splits what one side of an HTTP/1.1 connection sent into messages (`Content-Length` or
/// chunked bodies; a body without either runs to the end, as `Connection: close` replies do).
fn split_messages(mut raw: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        raw = &raw[end + 4..];
        let mut m = Message {
            head,
            body: Vec::new(),
        };
        if m.header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") else {
                    raw = &[];
                    break;
                };
                let size_text = String::from_utf8_lossy(&raw[..eol]);
                let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
                    .unwrap_or(0);
                raw = &raw[eol + 2..];
                if size == 0 {
                    raw = raw.get(2..).unwrap_or(&[]);
                    break;
                }
                let take = size.min(raw.len());
                m.body.extend_from_slice(&raw[..take]);
                raw = raw.get(take + 2..).unwrap_or(&[]);
            }
        } else if let Some(len) = m.header("content-length").and_then(|v| v.parse().ok()) {
            let take: usize = usize::min(len, raw.len());
            m.body = raw[..take].to_vec();
            raw = &raw[take..];
        } else if !m.head.starts_with("GET ") {
            m.body = raw.to_vec();
            raw = &[];
        }
        out.push(m);
    }
    out
}

/// Both directions of one proxied connection, as bytes.
#[derive(Default)]
struct Conversation {
    to_server: Vec<u8>,
    to_client: Vec<u8>,
}

/// A TCP proxy on 127.0.0.1 that forwards to the server and keeps a copy of every byte.
struct RecordingProxy {
    addr: SocketAddr,
    conversations: Arc<Mutex<Vec<Arc<Mutex<Conversation>>>>>,
    stop: Arc<AtomicBool>,
}

impl RecordingProxy {
    fn start(upstream: SocketAddr) -> RecordingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let proxy = RecordingProxy {
            addr: listener.local_addr().unwrap(),
            conversations: Arc::default(),
            stop: Arc::default(),
        };
        let (all, stop) = (proxy.conversations.clone(), proxy.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                let _ = client.set_nonblocking(false);
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let conv = Arc::new(Mutex::new(Conversation::default()));
                all.lock().unwrap().push(conv.clone());
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let conv2 = conv.clone();
                std::thread::spawn(move || pump(client, server, &conv, true));
                std::thread::spawn(move || pump(s2, c2, &conv2, false));
            }
        });
        proxy
    }

    /// Every (request, response) pair seen so far, in order per connection.
    fn exchanges(&self) -> Vec<(Message, Message)> {
        let mut out = Vec::new();
        for conv in self.conversations.lock().unwrap().iter() {
            let c = conv.lock().unwrap();
            let requests = split_messages(&c.to_server);
            let responses = split_messages(&c.to_client);
            out.extend(requests.into_iter().zip(responses));
        }
        out
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Copies `from` to `to`, recording each read before forwarding it.
fn pump(mut from: TcpStream, mut to: TcpStream, conv: &Mutex<Conversation>, upstream: bool) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf) {
        {
            let mut c = conv.lock().unwrap();
            let side = if upstream {
                &mut c.to_server
            } else {
                &mut c.to_client
            };
            side.extend_from_slice(&buf[..n]);
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// One streamed reply as the server sent it.
#[derive(Debug)]
struct Streamed {
    /// The JSON request body.
    request: Value,
    /// Chunks carrying generated text.
    text_chunks: u64,
    /// The generated text.
    text: String,
    /// The last `finish_reason` sent, if any.
    finish_reason: Option<String>,
    /// Whether the stream ended with `data: [DONE]`.
    done: bool,
}

/// The streamed replies to `POST path`, parsed from the proxy's record.
fn streamed(proxy: &RecordingProxy, path: &str) -> Vec<Streamed> {
    let mut out = Vec::new();
    for (req, resp) in proxy.exchanges() {
        if !req.head.starts_with(&format!("POST {path} ")) {
            continue;
        }
        let request: Value = serde_json::from_slice(&req.body).unwrap();
        let mut s = Streamed {
            request,
            text_chunks: 0,
            text: String::new(),
            finish_reason: None,
            done: false,
        };
        for line in String::from_utf8_lossy(&resp.body).lines() {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                continue;
            };
            if data == "[DONE]" {
                s.done = true;
                continue;
            }
            let v: Value = serde_json::from_str(data).unwrap();
            let choice = &v["choices"][0];
            let piece = choice["text"]
                .as_str()
                .or_else(|| choice["delta"]["content"].as_str())
                .unwrap_or("");
            if !piece.is_empty() {
                s.text_chunks += 1;
                s.text.push_str(piece);
            }
            if let Some(f) = choice["finish_reason"].as_str() {
                s.finish_reason = Some(f.to_string());
            }
        }
        out.push(s);
    }
    out
}

/// A finished `benchlens run`: its canonical record and its per-request rows.
struct RunResult {
    record: Record,
    rows: Vec<Value>,
    result_file: PathBuf,
    stderr: String,
}

/// Runs `benchlens run` (bounded in time) and reads its files from `dir`.
fn bench_run(dir: &Path, name: &str, args: &[String]) -> RunResult {
    let result = dir.join(format!("{name}.json"));
    let stderr_path = dir.join(format!("{name}.stderr"));
    let mut child = Killed(
        Command::new(BIN)
            .arg("run")
            .args(args)
            .arg("--result-filename")
            .arg(&result)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < RUN_LIMIT,
            "benchlens run took over {RUN_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    eprintln!("{name}: {:.1} s\n{stderr}", start.elapsed().as_secs_f64());
    assert!(status.success(), "benchlens run {name}: {status}\n{stderr}");
    let text = std::fs::read_to_string(&result).unwrap();
    let decoded = canonical::from_json(&text).unwrap();
    let record = decoded.records.into_iter().next().unwrap();
    let rows_text = std::fs::read_to_string(dir.join(format!("{name}.requests.jsonl"))).unwrap();
    let rows = rows_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    RunResult {
        record,
        rows,
        result_file: result,
        stderr,
    }
}

fn metric(r: &Record, name: &str) -> f64 {
    let key = MetricKey::from_name(name).unwrap_or_else(|| panic!("{name}"));
    r.metric(&key)
        .unwrap_or_else(|| panic!("{name} missing from the record"))
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

/// The timing rows agree with each other and with the server: TTFT is the first chunk, chunks
/// are in order, the stream ends shortly after the last chunk, the record's means are the rows'
/// (mean ITL pooled over every observed gap: chunks that came in one read share its stamp and
/// split the gap before it, so
/// `mean TTFT + mean ITL × mean(timed gaps) ≈ mean E2EL`), and no request took the client less time than the
/// server spent generating it (its log's `total time`; matched by rank, since the log does not
/// name requests: if every server time fits inside its request's E2EL, the sorted ones do too).
fn check_timing(run: &RunResult, server: &[ServerTiming]) {
    let mut ttfts = Vec::new();
    let mut e2els = Vec::new();
    let (mut gap_sum, mut gaps, mut lengths, mut tail_max) = (0.0, 0u64, Vec::new(), 0.0);
    for row in &run.rows {
        let ttft = row["ttft_ms"].as_f64().unwrap();
        let e2el = row["e2el_ms"].as_f64().unwrap();
        let chunks_ms_tokens = row["chunks_ms_tokens"].as_array().unwrap();
        // This server streams one token per chunk, so the gaps are the inter-token latencies.
        assert!(chunks_ms_tokens.iter().all(|c| c[1] == 1), "{row}");
        let chunks: Vec<f64> = chunks_ms_tokens
            .iter()
            .map(|c| c[0].as_f64().unwrap())
            .collect();
        assert!(ttft > 0.0 && ttft <= e2el, "{row}");
        assert!((chunks[0] - ttft).abs() < 1e-6, "{row}");
        assert!(chunks.windows(2).all(|w| w[0] <= w[1]), "{row}");
        let last = *chunks.last().unwrap();
        // After the last token the server sends a finish chunk and [DONE]: a few ms, unless
        // the machine is very busy.
        assert!(last <= e2el && e2el - last < 500.0, "{row}");
        tail_max = f64::max(tail_max, e2el - last);
        // This server writes several tokens at once now and then; the client reads them in one
        // read and stamps them alike. A read's gap is split over its tokens (those that came
        // with the first token join the next read's), so every token after the first has a
        // share, unless all came in one read: then no gap was observed at all.
        let timed = if chunks.iter().all(|&c| c == chunks[0]) {
            0
        } else {
            chunks.len() as u64 - 1
        };
        gap_sum += last - chunks[0];
        gaps += timed;
        lengths.push(timed);
        ttfts.push(ttft);
        e2els.push(e2el);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let r = &run.record;
    let (ttft, itl, e2el) = (
        metric(r, "mean_ttft_ms"),
        metric(r, "mean_itl_ms"),
        metric(r, "mean_e2el_ms"),
    );
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(
        near(ttft, mean(&ttfts)),
        "mean TTFT {ttft} vs rows {ttfts:?}"
    );
    assert!(
        near(e2el, mean(&e2els)),
        "mean E2EL {e2el} vs rows {e2els:?}"
    );
    assert!(near(itl, gap_sum / gaps as f64), "mean ITL {itl}");
    let mean_gaps = lengths.iter().map(|&n| n as f64).sum::<f64>() / lengths.len() as f64;
    let rebuilt = ttft + itl * mean_gaps;
    // What is left is the mean time from the last token to the end of the stream.
    assert!(
        rebuilt <= e2el + 1e-6 && e2el - rebuilt <= tail_max + 1e-6,
        "mean TTFT {ttft} + mean ITL {itl} × mean gaps {mean_gaps} = {rebuilt}, mean E2EL {e2el}"
    );
    assert_eq!(server.len(), run.rows.len(), "server timings: {server:?}");
    let mut server_ms: Vec<f64> = server.iter().map(|t| t.total_ms).collect();
    server_ms.sort_by(f64::total_cmp);
    e2els.sort_by(f64::total_cmp);
    for (s, c) in server_ms.iter().zip(&e2els) {
        assert!(
            s <= c,
            "server time {s} ms > client E2EL {c} ms: {server_ms:?} vs {e2els:?}"
        );
    }
}

/// The result file loads with `benchlens inspect`.
fn check_inspect(run: &RunResult) {
    let out = Command::new(BIN)
        .arg("inspect")
        .arg(&run.result_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("benchlens"), "{stdout}");
}

const REQUESTS: u64 = 6;
const INPUT_LEN: u64 = 40;
const OUTPUT_LEN: u64 = 24;

/// The flags of the runs below: `requests` prompts of `INPUT_LEN` tokens (BOS included) asking
/// for `OUTPUT_LEN` tokens each, two at a time (the server serves one, the other waits).
fn run_args(server: &str, tokenizer: &Path, backend: &str, requests: u64) -> Vec<String> {
    let mut args: Vec<String> = ["--base-url", server, "--backend", backend, "--tokenizer"]
        .map(String::from)
        .into();
    args.push(tokenizer.display().to_string());
    for (flag, value) in [
        ("--num-prompts", requests),
        ("--max-concurrency", 2),
        ("--input-len", INPUT_LEN),
        ("--output-len", OUTPUT_LEN),
        ("--seed", 7),
        ("--request-timeout", 60),
    ] {
        args.extend([flag.to_string(), value.to_string()]);
    }
    args.push("--no-progress".into());
    args
}

/// The values of `key` in the run's per-request rows.
fn rows_u64(run: &RunResult, key: &str) -> Vec<u64> {
    run.rows
        .iter()
        .map(|r| r[key].as_u64().unwrap_or_else(|| panic!("{key} in {r}")))
        .collect()
}

#[test]
fn completions_and_chat_against_llama_cpp_agree_with_the_server() {
    let Some(python) = llama_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&python, dir.path(), &["--interrupt_requests", "False"]);
    let proxy = RecordingProxy::start(server.addr);
    let proxy_url = format!("http://{}", proxy.addr);
    let hf = tokenizers::Tokenizer::from_file(&server.tokenizer).unwrap();
    // /extras/tokenize puts a BOS before any text; generated text has none.
    let generated_len = |text: &str| server.tokenize(text).len() as u64 - 1;

    // /v1/completions, backend openai, lengths drawn within ±50 % of the asked ones.
    let mark = server.log_mark();
    let mut args = run_args(&proxy_url, &server.tokenizer, "openai", REQUESTS);
    args.extend(["--range-ratio".into(), "0.5".into()]);
    let run = bench_run(dir.path(), "completions", &args);
    assert_eq!(
        metric(&run.record, "completed"),
        REQUESTS as f64,
        "{}",
        run.stderr
    );
    assert_eq!(metric(&run.record, "failed"), 0.0);
    assert_eq!(run.rows.len(), REQUESTS as usize);
    let sent = streamed(&proxy, "/v1/completions");
    assert_eq!(sent.len(), REQUESTS as usize);
    let mut on_the_wire = Vec::new();
    for s in &sent {
        let prompt = s.request["prompt"].as_str().unwrap();
        // Prompt lengths (BOS included): the server's tokenizer and tokenizer.json agree.
        let server_len = server.tokenize(prompt).len() as u64;
        let hf_len = hf.encode(prompt, true).unwrap().get_ids().len() as u64;
        assert_eq!(server_len, hf_len, "{prompt:?}");
        // The server ran to the length asked, one chunk per token, and its tokenizer reads the
        // streamed text back as that many tokens.
        let max_tokens = s.request["max_tokens"].as_u64().unwrap();
        assert_eq!(s.finish_reason.as_deref(), Some("length"), "{s:?}");
        assert!(s.done, "{s:?}");
        assert_eq!(s.text_chunks, max_tokens, "{s:?}");
        assert_eq!(generated_len(&s.text), max_tokens, "{s:?}");
        on_the_wire.push((server_len, max_tokens, s.text_chunks));
    }
    // Per request, what benchlens recorded is what was sent and streamed (matched as sorted
    // lists, since the wire does not carry benchlens's request index).
    let mut recorded: Vec<(u64, u64, u64)> = run
        .rows
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
            (n("input_len"), n("max_tokens"), n("output_chunks_client"))
        })
        .collect();
    recorded.sort_unstable();
    on_the_wire.sort_unstable();
    assert_eq!(recorded, on_the_wire);
    let half = |n: u64| n / 2..=n + n / 2;
    assert!(recorded
        .iter()
        .all(|(i, o, _)| half(INPUT_LEN).contains(i) && half(OUTPUT_LEN).contains(o)));
    assert!(
        recorded.windows(2).any(|w| w[0].0 != w[1].0),
        "lengths vary: {recorded:?}"
    );
    assert_eq!(
        sorted(rows_u64(&run, "output_tokens_client")),
        sorted(rows_u64(&run, "max_tokens"))
    );
    let server_timings = server.timings_since(mark);
    let server_generated = sorted(server_timings.iter().map(|t| t.generated).collect());
    assert_eq!(server_generated, sorted(rows_u64(&run, "max_tokens")));
    let out_tokens = metric(&run.record, "output_throughput") * metric(&run.record, "duration_s");
    let asked: u64 = rows_u64(&run, "max_tokens").iter().sum();
    assert!(
        (out_tokens - asked as f64).abs() < 1e-6,
        "{out_tokens} vs {asked}"
    );
    check_timing(&run, &server_timings);
    check_inspect(&run);

    // /v1/chat/completions, backend openai-chat.
    let mark = server.log_mark();
    let args = run_args(&proxy_url, &server.tokenizer, "openai-chat", REQUESTS);
    let run = bench_run(dir.path(), "chat", &args);
    assert_eq!(
        metric(&run.record, "completed"),
        REQUESTS as f64,
        "{}",
        run.stderr
    );
    assert_eq!(metric(&run.record, "failed"), 0.0);
    let sent = streamed(&proxy, "/v1/chat/completions");
    assert_eq!(sent.len(), REQUESTS as usize);
    let mut chunks_sent = Vec::new();
    for s in &sent {
        let content = s.request["messages"][0]["content"].as_str().unwrap();
        assert_eq!(
            server.tokenize(content).len() as u64,
            INPUT_LEN,
            "{content:?}"
        );
        assert!(s.done, "{s:?}");
        assert_eq!(generated_len(&s.text), s.text_chunks, "{s:?}");
        chunks_sent.push(s.text_chunks);
    }
    // benchlens counts what the server streamed, and what it logged as generated (matched as
    // sorted lists: neither the proxy's record nor the log names benchlens's request index).
    let server_timings = server.timings_since(mark);
    let server_generated = sorted(server_timings.iter().map(|t| t.generated).collect());
    assert_eq!(sorted(chunks_sent), server_generated);
    assert_eq!(
        sorted(rows_u64(&run, "output_chunks_client")),
        server_generated
    );
    assert_eq!(
        sorted(rows_u64(&run, "output_tokens_client")),
        server_generated
    );
    check_timing(&run, &server_timings);
    check_inspect(&run);
    // The length asked for must reach the server in a field it reads (`max_tokens`). Fails
    // until the client sends it for chat (issue 11, item 1: src/loadgen/client.rs sends only
    // `max_completion_tokens`, which llama-cpp-python ignores, so replies run to the context).
    for s in &sent {
        assert_eq!(
            (s.finish_reason.as_deref(), s.text_chunks),
            (Some("length"), OUTPUT_LEN),
            "chat reply length for {}: llama-cpp-python reads only max_tokens",
            s.request
        );
    }
}

#[test]
fn a_request_id_that_is_not_a_uuid_is_refused_and_the_reason_is_kept() {
    let Some(python) = llama_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&python, dir.path(), &["--interrupt_requests", "False"]);
    let run = |name: &str, extra: &[&str]| {
        let result = dir.path().join(format!("{name}.json"));
        let out = Command::new(BIN)
            .arg("run")
            .args(run_args(&server.url(), &server.tokenizer, "openai", 2))
            .args(extra)
            .arg("--result-filename")
            .arg(&result)
            .output()
            .unwrap();
        let rows = std::fs::read_to_string(dir.path().join(format!("{name}.requests.jsonl")));
        let rows: Vec<Value> = rows
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out, rows)
    };
    // The model probe (`/v1/models`) carries the header too, so the run stops there, saying so.
    let (out, rows) = run("probe", &["--header", "X-Request-ID: run-1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && rows.is_empty(), "{stderr}");
    assert!(
        stderr.contains("/v1/models") && stderr.contains("400"),
        "{stderr}"
    );
    // With the model named, every request is refused with 400 (and an empty body).
    let (out, rows) = run(
        "refused",
        &["--header", "X-Request-ID: run-1", "--model", "tiny"],
    );
    assert_eq!(rows.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    for row in &rows {
        assert_eq!(row["error_kind"], "http_400", "{row}");
        assert!(row["error"].as_str().unwrap().contains("400"), "{row}");
    }
    // Any 32 hex digits pass (Python's uuid.UUID accepts them with or without dashes).
    let uuid = "X-Request-ID: 0123456789abcdef0123456789abcdef";
    let (out, rows) = run("uuid", &["--header", uuid]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["error_kind"].is_null()), "{rows:?}");
}

/// The capacity issue's workloads against the real server: public trace rows replayed at their
/// times with their exact lengths (Azure, BurstGPT and Mooncake layouts; the rows whose prompt
/// and reply fit the server's context), and prompts in prefix groups.
#[test]
fn trace_replay_and_prefix_groups_against_llama_cpp() {
    let Some(python) = llama_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A larger context than the other tests' for the trace rows (argparse keeps the last value).
    let server = Server::start(
        &python,
        dir.path(),
        &["--interrupt_requests", "False", "--n_ctx", "4096"],
    );
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces");
    // Rows of each excerpt that fit 4096 tokens, kept verbatim.
    let fits = |file: &str, keep: &RowFilter| {
        let text = std::fs::read_to_string(traces.join(file)).unwrap();
        let mut lines = text.lines();
        let mut out: Vec<&str> = Vec::new();
        if !file.ends_with(".jsonl") {
            out.extend(lines.next());
        }
        out.extend(lines.filter(|l| keep(l)));
        let path = dir.path().join(file);
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
        (path, out.len() - usize::from(!file.ends_with(".jsonl")))
    };
    let csv_fits = |l: &str| {
        let f: Vec<u64> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        f.len() >= 2 && f[f.len() - 2] + f[f.len() - 1] < 3500
    };
    let burst_fits = |l: &str| {
        let f: Vec<&str> = l.split(',').collect();
        let n = |i: usize| {
            f.get(i)
                .and_then(|x| x.parse::<u64>().ok())
                .unwrap_or(u64::MAX)
        };
        n(2).saturating_add(n(3)) < 3500
    };
    let moon_fits = |l: &str| {
        let v: Value = serde_json::from_str(l).unwrap();
        v["input_length"].as_u64().unwrap() + v["output_length"].as_u64().unwrap() < 3500
    };
    let cases: [(&str, &RowFilter, &str); 3] = [
        ("azure-conv-head.csv", &csv_fits, "trace-azure"),
        ("burstgpt-readme-sample.csv", &burst_fits, "trace-burstgpt"),
        (
            "mooncake-conversation-head.jsonl",
            &moon_fits,
            "trace-mooncake",
        ),
    ];
    for (file, keep, dataset) in cases {
        let (path, rows) = fits(file, keep);
        assert!(rows >= 2, "{file}: {rows} rows fit");
        let mut args: Vec<String> = ["--base-url", &server.url(), "--backend", "openai"]
            .map(String::from)
            .into();
        args.extend(["--tokenizer".into(), server.tokenizer.display().to_string()]);
        args.extend(
            ["--dataset", "trace", "--trace-speed", "20", "--no-progress"].map(String::from),
        );
        args.extend(["--num-prompts".into(), "4".into(), "--dataset-path".into()]);
        args.push(path.display().to_string());
        let run = bench_run(dir.path(), dataset, &args);
        assert_eq!(run.record.dataset.as_deref(), Some(dataset));
        let want = rows.min(4);
        assert_eq!(
            metric(&run.record, "completed"),
            want as f64,
            "{}",
            run.stderr
        );
        // The client's tokenizer is the server's vocabulary: the trace's lengths exactly, and
        // every reply runs to its asked length (the model never ends early).
        let text = std::fs::read_to_string(&path).unwrap();
        let lengths: Vec<(u64, u64)> = if file.ends_with(".jsonl") {
            text.lines()
                .map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    (
                        v["input_length"].as_u64().unwrap(),
                        v["output_length"].as_u64().unwrap(),
                    )
                })
                .collect()
        } else {
            text.lines()
                .skip(1)
                .map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    let (i, o) = if file.starts_with("azure") {
                        (1, 2)
                    } else {
                        (2, 3)
                    };
                    (f[i].parse().unwrap(), f[o].parse().unwrap())
                })
                .collect()
        };
        let mut want_lengths = lengths;
        want_lengths.truncate(want);
        let got: Vec<(u64, u64)> = run
            .rows
            .iter()
            .map(|r| {
                (
                    r["input_len"].as_u64().unwrap(),
                    r["output_chunks_client"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(sorted_pairs(got), sorted_pairs(want_lengths), "{file}");
    }

    // Two prefix groups, interleaved: every prompt the prefix plus its own part, all served.
    let mut args = run_args(&server.url(), &server.tokenizer, "openai", 4);
    args.extend(
        [
            "--prefix-groups",
            "2",
            "--prefix-len",
            "64",
            "--prefix-order",
            "interleaved",
        ]
        .map(String::from),
    );
    let run = bench_run(dir.path(), "prefix-groups", &args);
    assert_eq!(metric(&run.record, "completed"), 4.0, "{}", run.stderr);
    assert!(rows_u64(&run, "input_len")
        .iter()
        .all(|&n| n == INPUT_LEN + 64));
}

/// Which lines of a trace excerpt to keep.
type RowFilter = dyn Fn(&str) -> bool;

fn sorted_pairs(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    v
}

/// `--multi-turn` on the chat endpoint, then a short `benchlens sweep`.
///
/// The multi-turn run meets the server as it starts by default, with `interrupt_requests` on:
/// a running stream is cut off (`[DONE]` without a `finish_reason`) as soon as another request
/// arrives. So the run holds one conversation at a time (`--max-concurrency 1`); within a
/// conversation benchlens sends a turn only after the previous reply ended, so no reply is
/// ever cut, which the rows show. The server has no Prometheus `/metrics` (llama-cpp-python
/// 0.3.36's `llama_cpp/server/app.py` routes only `/v1/*` and `/extras/*`), so
/// `--scrape-metrics` warns once and the run goes on.
///
/// The sweep needs replies to queue rather than be cut, so it meets a second server started
/// with `--interrupt_requests False`; it is bounded to a handful of 2-second probes.
#[test]
fn multi_turn_chat_and_a_short_sweep_against_llama_cpp() {
    let Some(python) = llama_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&python, dir.path(), &[]);
    let proxy = RecordingProxy::start(server.addr);
    let proxy_url = format!("http://{}", proxy.addr);
    let mut args: Vec<String> = ["--base-url", &proxy_url, "--backend", "openai-chat"]
        .map(String::from)
        .into();
    args.extend(["--tokenizer".into(), server.tokenizer.display().to_string()]);
    args.extend(
        [
            "--multi-turn",
            "--num-prompts",
            "3",
            "--max-concurrency",
            "1",
            "--turns",
            "3",
            "--turn-input-len",
            "uniform:10:20",
            "--turn-output-len",
            "8",
            "--think-time",
            "0.05",
            "--ignore-eos",
            "--seed",
            "3",
            "--request-timeout",
            "60",
            "--no-progress",
            "--scrape-metrics",
        ]
        .map(String::from),
    );
    let run = bench_run(dir.path(), "multi-turn", &args);
    assert_eq!(metric(&run.record, "completed"), 9.0, "{}", run.stderr);
    assert_eq!(metric(&run.record, "failed"), 0.0);
    assert!(
        run.stderr.contains("warning: scraping /metrics failed"),
        "{}",
        run.stderr
    );
    for row in &run.rows {
        assert_eq!(
            row["finish_reason_missing"], false,
            "a reply was cut: {row}"
        );
        assert_eq!(row["output_chunks_client"].as_u64(), Some(8), "{row}");
    }
    // On the wire: each turn's messages are the previous turn's, the reply the server streamed
    // for it, and the new user text, whose length the client counted exactly (the server's
    // tokenizer puts a BOS before any text: a first turn counts it, a later one does not).
    let exchanges = streamed(&proxy, "/v1/chat/completions");
    assert_eq!(exchanges.len(), 9);
    let mut by_start: std::collections::BTreeMap<String, Vec<&Streamed>> = Default::default();
    for s in &exchanges {
        let first = s.request["messages"][0]["content"].as_str().unwrap();
        by_start.entry(first.to_string()).or_default().push(s);
    }
    assert_eq!(by_start.len(), 3);
    let new_lens: Vec<u64> = run
        .rows
        .iter()
        .map(|r| r["turn_input_len"].as_u64().unwrap())
        .collect();
    let mut server_new_lens = Vec::new();
    for turns in by_start.values_mut() {
        turns.sort_by_key(|s| s.request["messages"].as_array().unwrap().len());
        for (k, s) in turns.iter().enumerate() {
            let messages = s.request["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 2 * k + 1);
            let new_text = messages[2 * k]["content"].as_str().unwrap();
            let with_bos = server.tokenize(new_text).len() as u64;
            server_new_lens.push(if k == 0 { with_bos } else { with_bos - 1 });
            if k > 0 {
                let before = turns[k - 1];
                let earlier = before.request["messages"].as_array().unwrap();
                assert_eq!(&messages[..2 * k - 1], &earlier[..]);
                assert_eq!(messages[2 * k - 1]["role"], "assistant");
                assert_eq!(
                    messages[2 * k - 1]["content"].as_str(),
                    Some(before.text.as_str())
                );
            }
        }
    }
    assert_eq!(sorted(new_lens), sorted(server_new_lens));

    // A short capacity search: each probe a stage, and an answer or a plain "none".
    let queueing = Server::start(&python, dir.path(), &["--interrupt_requests", "False"]);
    let result = dir.path().join("sweep.json");
    let mut args: Vec<String> = [
        "sweep",
        "--base-url",
        &queueing.url(),
        "--backend",
        "openai",
    ]
    .map(String::from)
    .into();
    args.extend([
        "--tokenizer".into(),
        queueing.tokenizer.display().to_string(),
    ]);
    args.extend(
        [
            "--input-len",
            "32",
            "--output-len",
            "8",
            "--ignore-eos",
            "--burstiness",
            "1000",
            "--duration",
            "2",
            "--start",
            "4",
            "--max-load",
            "64",
            "--tolerance-pct",
            "50",
            "--repeats",
            "1",
            "--max-probes",
            "5",
            "--goodput",
            "p90_ttft:300",
            "--no-progress",
            "--result-filename",
        ]
        .map(String::from),
    );
    args.push(result.display().to_string());
    let start = Instant::now();
    let mut child = Killed(
        Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < RUN_LIMIT,
            "the sweep took over {RUN_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    eprintln!(
        "sweep: {:.1} s\n{stdout}{stderr}",
        start.elapsed().as_secs_f64()
    );
    let probes = stdout
        .lines()
        .filter(|l| l.starts_with("sweep: probe ") && l.ends_with(" req/s"))
        .count();
    assert!((1..=5).contains(&probes), "{stdout}");
    let records = canonical::from_json(&std::fs::read_to_string(&result).unwrap())
        .unwrap()
        .records;
    assert_eq!(records.len(), probes, "every probe is a stage");
    assert!(records.iter().all(|r| r.tags.contains_key("verdict")));
    let answered = stdout.lines().any(|l| l.starts_with("sweep: capacity"));
    if answered {
        assert!(status.success(), "{stderr}");
        assert!(records.iter().all(|r| r.tags.contains_key("capacity")));
    } else {
        assert!(!status.success());
        assert!(
            stderr.contains("without an answer") && stderr.contains("ended without a capacity"),
            "{stderr}"
        );
    }
}

/// The native llama.cpp `llama-server` that `scripts/setup.sh llama-server-native` builds from
/// the llama.cpp sources vendored in the same llama-cpp-python source package, or `None` (with
/// the reason printed) when it is not there; under `BENCHLENS_REQUIRE_REAL_SERVER=1` its absence
/// fails. `BENCHLENS_LLAMA_SERVER` names the binary; without it `scripts/setup.sh
/// llama-server-bin` says where it would be.
fn native_llama_server() -> Option<PathBuf> {
    let required = std::env::var("BENCHLENS_REQUIRE_REAL_SERVER").is_ok_and(|v| v == "1");
    let bin = match std::env::var_os("BENCHLENS_LLAMA_SERVER") {
        Some(p) => PathBuf::from(p),
        None => {
            let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup.sh");
            let out = Command::new("bash")
                .arg(setup)
                .arg("llama-server-bin")
                .output()
                .ok()?;
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
    };
    if bin.is_file() {
        return Some(bin);
    }
    let reason = format!(
        "no native llama-server at {} (run `scripts/setup.sh test`, or set BENCHLENS_LLAMA_SERVER)",
        bin.display()
    );
    assert!(!required, "BENCHLENS_REQUIRE_REAL_SERVER=1 but {reason}");
    eprintln!("skipped: {reason}");
    None
}

/// The finite values of a series column.
fn finite(r: &Record, column: &str) -> Vec<f64> {
    r.series
        .get(column)
        .unwrap_or_else(|| panic!("no {column} in {:?}", r.series.keys()))
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect()
}

/// One sample's value in a `/metrics` body.
fn prometheus_value(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{body}"))
}

/// `--scrape-metrics` against a native `llama-server --metrics -np 4`: the batch size is the
/// mean over each scrape interval (llama.cpp's `n_busy_slots_per_decode` is a mean since the
/// server started; recorded as read it stayed below the real batch), counters are rates (the
/// server's generated tokens per second match the client's output throughput), and the KV-cache
/// metric this llama.cpp no longer exports is named once in a warning and in the file.
#[test]
fn scraped_metrics_of_a_native_llama_server_are_rates_and_interval_means() {
    let Some(server_bin) = native_llama_server() else {
        return;
    };
    let Some(python) = llama_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tiny_gguf.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(dir.path())
        .args(["--seed", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let log = dir.path().join("llama-server.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let mut child = Killed(
        Command::new(&server_bin)
            .arg("-m")
            .arg(dir.path().join("tiny.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--metrics",
                "-np",
                "4",
                "-c",
                "2048",
                "-t",
                "1",
                "--no-warmup",
            ])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while !matches!(http(addr, "GET", "/health", None), Ok((200, _))) {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!(
                "llama-server exited ({status}):\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        assert!(
            start.elapsed() < SERVER_START_LIMIT,
            "llama-server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("http://{addr}");
    let tokenizer = dir.path().join("tokenizer.json");
    let args = |concurrency: &str| -> Vec<String> {
        let mut a: Vec<String> = ["--base-url", &url, "--backend", "openai", "--tokenizer"]
            .map(String::from)
            .into();
        a.push(tokenizer.display().to_string());
        a.extend(
            [
                "--request-rate",
                "inf",
                "--duration",
                "4",
                "--max-concurrency",
                concurrency,
                "--input-len",
                "16",
                "--output-len",
                "128",
                "--ignore-eos",
                "--seed",
                "5",
                "--request-timeout",
                "60",
                "--no-progress",
                "--scrape-metrics",
            ]
            .map(String::from),
        );
        a
    };
    // One request at a time first: the server's since-start mean starts near 1.
    let one = bench_run(dir.path(), "one-at-a-time", &args("1"));
    let four = bench_run(dir.path(), "four-at-a-time", &args("4"));
    let (_, body) = http(addr, "GET", "/metrics", None).unwrap();
    let body = String::from_utf8_lossy(&body);
    let since_start = prometheus_value(&body, "llamacpp:n_busy_slots_per_decode");

    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let batch_one = finite(&one.record, "server.batch_size");
    let batch_four = finite(&four.record, "server.batch_size");
    eprintln!(
        "batch per interval: one at a time {batch_one:?}, four at a time {batch_four:?}; \
         the server's since-start mean after both: {since_start}"
    );
    assert!(batch_one.len() >= 2 && batch_four.len() >= 2);
    assert!(
        batch_one.iter().all(|b| (0.9..=1.1).contains(b)),
        "{batch_one:?}"
    );
    let real = median(batch_four.clone());
    assert!((3.0..=4.0).contains(&real), "{batch_four:?}");
    assert!(
        since_start < real - 0.25,
        "the since-start mean {since_start} should trail the real batch {real}"
    );
    // Gauges stay gauges.
    assert!(finite(&four.record, "server.running")
        .iter()
        .all(|r| *r <= 4.0));
    // Counters are rates: the scrape in second k rates the server's generated tokens over the
    // second before it, which the client received in second k − 1 (one token a chunk).
    let rate = &four.record.series["server.generation_tokens_per_s"];
    let received = &four.record.series["output_tokens"];
    let (mut served, mut client) = (0.0, 0.0);
    for k in 1..rate.len() {
        if rate[k].is_finite() && received[k - 1].is_finite() {
            served += rate[k];
            client += received[k - 1];
        }
    }
    eprintln!("generated per the server's counter {served}, received {client}");
    // On a quiet machine the two agree within 10 %. On a loaded one a scrape the server
    // answers late is followed at once by the next (each rates the tokens over its own
    // interval, which is then not the slot's second), so the slots only bound each other: a
    // since-start total taken for a rate would be several times the tokens, a rate in the
    // wrong unit a fraction of them.
    assert!(
        client > 0.0 && (0.5..1.1).contains(&(served / client)),
        "{rate:?} {received:?}"
    );
    // The KV-cache metric benchlens maps for llama.cpp is not exported by this server: said
    // once per run, and in the file.
    for run in [&one, &four] {
        assert_eq!(
            run.stderr
                .matches("does not export kv_cache_usage (llamacpp:kv_cache_usage_ratio)")
                .count(),
            1,
            "{}",
            run.stderr
        );
        assert_eq!(
            run.record
                .tags
                .get("server_metrics_missing")
                .map(String::as_str),
            Some("kv_cache_usage (llamacpp:kv_cache_usage_ratio)")
        );
        assert!(!run.record.series.contains_key("server.kv_cache_usage"));
    }
    assert!(!body.contains("kv_cache_usage_ratio"), "{body}");
}
