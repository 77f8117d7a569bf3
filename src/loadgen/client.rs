//! The lean HTTP client: hyper 1 HTTP/1.1 connections kept in a small pool, one streamed request
//! at a time per connection, bodies pre-serialised, events parsed incrementally with
//! [`super::sse`], and every chunk timestamped with when its bytes reached the socket (the
//! kernel's receive stamp, [`super::stamp`]), not when a busy client got round to reading them.
//!
//! A request's failure is data, never an error of the run: it ends up in
//! [`RequestRecord::failure`] with a [`FailureKind`] (HTTP status with a body snippet, connect
//! refusal, connect / first-token / idle / total timeouts, truncated stream, malformed SSE,
//! reset, an error event from the server). Must not import app code.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::sse::{self, ChunkInfo, SseParser};
use super::stamp::{StampedStream, Stamps};
use super::LoadgenError;

/// The API a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// OpenAI completions (`/v1/completions`), as served by vLLM, SGLang, TGI and others.
    #[value(name = "openai")]
    OpenAi,
    /// OpenAI chat completions (`/v1/chat/completions`).
    #[value(name = "openai-chat")]
    OpenAiChat,
    /// Text Generation Inference's native `/generate_stream`.
    Tgi,
    /// SGLang's native `/generate`.
    Sglang,
}

impl Backend {
    /// The name used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Backend::OpenAi => "openai",
            Backend::OpenAiChat => "openai-chat",
            Backend::Tgi => "tgi",
            Backend::Sglang => "sglang",
        }
    }

    /// The endpoint used when `--endpoint` is not given.
    pub fn default_endpoint(self) -> &'static str {
        match self {
            Backend::OpenAi => "/v1/completions",
            Backend::OpenAiChat => "/v1/chat/completions",
            Backend::Tgi => "/generate_stream",
            Backend::Sglang => "/generate",
        }
    }

    fn decode(self, data: &[u8]) -> Option<ChunkInfo> {
        match self {
            Backend::OpenAi | Backend::OpenAiChat => sse::decode_openai(data),
            Backend::Tgi => sse::decode_tgi(data),
            Backend::Sglang => sse::decode_sglang(data),
        }
    }
}

/// Why a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// The server refused the TCP connection.
    ConnectRefused,
    /// The TCP connection could not be made for another reason.
    Connect,
    /// The TCP connection took longer than `--connect-timeout`.
    ConnectTimeout,
    /// The server answered with a non-2xx status.
    Http(u16),
    /// No first token within `--first-token-timeout`.
    FirstTokenTimeout,
    /// No bytes for `--idle-timeout` between tokens.
    IdleTimeout,
    /// The request took longer than `--request-timeout`.
    TotalTimeout,
    /// The stream ended before its end marker.
    Truncated,
    /// The connection was reset by the peer.
    Reset,
    /// An event was not valid SSE or not the JSON the backend sends.
    MalformedSse,
    /// The server sent an error object in the stream.
    ServerError,
    /// Another transport error.
    Io,
}

impl FailureKind {
    /// A short snake_case name, used in metric names and the summary (`http_503`).
    pub fn name(self) -> String {
        match self {
            FailureKind::ConnectRefused => "connect_refused".into(),
            FailureKind::Connect => "connect".into(),
            FailureKind::ConnectTimeout => "connect_timeout".into(),
            FailureKind::Http(s) => format!("http_{s}"),
            FailureKind::FirstTokenTimeout => "first_token_timeout".into(),
            FailureKind::IdleTimeout => "idle_timeout".into(),
            FailureKind::TotalTimeout => "total_timeout".into(),
            FailureKind::Truncated => "truncated_stream".into(),
            FailureKind::Reset => "reset".into(),
            FailureKind::MalformedSse => "malformed_sse".into(),
            FailureKind::ServerError => "server_error_event".into(),
            FailureKind::Io => "io".into(),
        }
    }
}

/// A failed request: the kind and a message naming what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// Details (status line with body snippet, system error).
    pub message: String,
}

/// One streamed chunk as seen by the client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkArrival {
    /// Seconds after the request was written to the socket.
    pub at_s: f64,
    /// Output tokens in the chunk (from the server's running usage when it reports one, else 1).
    pub tokens: u32,
}

/// Everything measured about one request. Times are seconds; `*_at_s` are relative to the stage
/// start, durations relative to the actual send.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestRecord {
    /// Index within the stage.
    pub index: usize,
    /// Prompt tokens as the client counted them.
    pub input_len: u64,
    /// Output tokens asked for.
    pub max_tokens: u64,
    /// Scheduled send time.
    pub intended_at_s: f64,
    /// When the dispatcher woke for it.
    pub dispatched_at_s: f64,
    /// The client's scheduling lag (see [`super::schedule::Dispatch::lag`]).
    pub schedule_lag_s: f64,
    /// When it was actually sent (after waiting for a concurrency slot).
    pub sent_at_s: f64,
    /// Time to the first token-bearing chunk: from the write syscall that put the request on
    /// the wire to when the chunk reached the client's socket (the kernel's receive stamp, see
    /// [`super::stamp`]). Neither end includes the client's own queueing.
    pub ttft_s: Option<f64>,
    /// From `sent_at_s` to the write syscall of the request: connection checkout or connect,
    /// and the client's own scheduling. Not in TTFT/E2EL; in the from-intended figures.
    pub write_delay_s: Option<f64>,
    /// How long the first response bytes waited in the socket before the client read them:
    /// client-side queueing, left out of TTFT and ITL.
    pub first_read_delay_s: Option<f64>,
    /// Token-bearing chunks, in arrival order.
    pub chunks: Vec<ChunkArrival>,
    /// Time from the request's write to the end of the stream reaching the socket (successful
    /// requests only).
    pub e2el_s: Option<f64>,
    /// Completion tokens reported by the server's usage.
    pub output_tokens_server: Option<u64>,
    /// Prompt tokens reported by the server's usage.
    pub input_tokens_server: Option<u64>,
    /// Token-bearing chunks counted by the client.
    pub output_chunks_local: u64,
    /// The generated text, as received.
    pub generated_text: String,
    /// Tokens in `generated_text` by the run's tokenizer (counted after the stage, off the
    /// measurement path).
    pub output_tokens_text: Option<u64>,
    /// Why it failed, if it did.
    pub failure: Option<Failure>,
}

impl RequestRecord {
    /// Output tokens: the server's count when it gave one, else the client's.
    pub fn output_tokens(&self) -> u64 {
        self.output_tokens_server
            .unwrap_or_else(|| self.chunks.iter().map(|c| u64::from(c.tokens)).sum())
    }

    /// Input tokens: the server's count when it gave one, else the client's.
    pub fn input_tokens(&self) -> u64 {
        self.input_tokens_server.unwrap_or(self.input_len)
    }
}

/// Time limits of one request.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timeouts {
    /// TCP connect.
    pub connect: Option<Duration>,
    /// Send to first token.
    pub first_token: Option<Duration>,
    /// Between chunks after the first token.
    pub idle: Option<Duration>,
    /// Send to end of stream.
    pub total: Option<Duration>,
}

/// Where requests go: parsed once from `--base-url` and `--endpoint`.
#[derive(Clone, Debug)]
pub struct Target {
    /// `http://host:port/path` for messages.
    pub url: String,
    /// The path and query sent in the request line.
    pub path: String,
    /// `Host` header value.
    pub host: String,
    /// The path prefix of `--base-url` (empty or `/prefix`), for setup requests.
    pub prefix: String,
    /// Resolved socket address.
    pub addr: SocketAddr,
    /// Extra headers (`Authorization`, `--header`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// Splits `http://host[:port][/prefix]` into host:port and path prefix.
pub fn split_base_url(base: &str) -> Result<(String, String), String> {
    let rest = base
        .strip_prefix("http://")
        .ok_or_else(|| format!("{base}: only http:// URLs are supported (no TLS)"))?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err(format!("{base}: no host"));
    }
    let authority = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, prefix.to_string()))
}

impl Target {
    /// Resolves `base_url` + `endpoint`.
    pub async fn resolve(
        base_url: &str,
        endpoint: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Target, LoadgenError> {
        let invalid = |message: String| LoadgenError::InvalidOption {
            option: "base-url",
            message,
        };
        let (authority, prefix) = split_base_url(base_url).map_err(invalid)?;
        let addr = tokio::net::lookup_host(&authority)
            .await
            .map_err(|e| invalid(format!("cannot resolve {authority}: {e}")))?
            .next()
            .ok_or_else(|| invalid(format!("{authority} resolves to no address")))?;
        let endpoint = if endpoint.starts_with('/') {
            endpoint.to_string()
        } else {
            format!("/{endpoint}")
        };
        let path = format!("{prefix}{endpoint}");
        if path.parse::<hyper::Uri>().is_err() {
            return Err(LoadgenError::InvalidOption {
                option: "endpoint",
                message: format!("{path:?} is not a valid request path"),
            });
        }
        Ok(Target {
            url: format!("http://{authority}{path}"),
            path,
            prefix,
            host: authority,
            addr,
            headers,
        })
    }
}

/// Builds the JSON body of one request for a backend.
pub fn request_body(
    backend: Backend,
    model: &str,
    prompt: &str,
    max_tokens: u64,
    ignore_eos: bool,
    extra: Option<&Map<String, Value>>,
) -> Bytes {
    let mut body = match backend {
        Backend::OpenAi => json!({
            "model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0,
            "stream": true, "ignore_eos": ignore_eos,
            "stream_options": {"include_usage": true, "continuous_usage_stats": true},
        }),
        Backend::OpenAiChat => json!({
            "model": model, "messages": [{"role": "user", "content": prompt}],
            "max_completion_tokens": max_tokens, "temperature": 0.0,
            "stream": true, "ignore_eos": ignore_eos,
            "stream_options": {"include_usage": true, "continuous_usage_stats": true},
        }),
        Backend::Tgi => json!({
            "inputs": prompt,
            "parameters": {"max_new_tokens": max_tokens, "details": true, "decoder_input_details": false},
        }),
        Backend::Sglang => json!({
            "text": prompt, "stream": true,
            "sampling_params": {"max_new_tokens": max_tokens, "ignore_eos": ignore_eos, "temperature": 0.0},
        }),
    };
    if let (Some(extra), Value::Object(obj)) = (extra, &mut body) {
        for (k, v) in extra {
            obj.insert(k.clone(), v.clone());
        }
    }
    Bytes::from(body.to_string())
}

type Sender = SendRequest<Full<Bytes>>;

/// One pooled connection: its request sender and what its socket saw (see [`super::stamp`]).
#[derive(Debug)]
struct Conn {
    sender: Sender,
    stamps: Arc<Stamps>,
}

/// A pool of HTTP/1.1 connections to one server.
#[derive(Debug)]
pub struct Client {
    target: Target,
    backend: Backend,
    timeouts: Timeouts,
    idle: Mutex<Vec<Conn>>,
}

/// How a stream ended, besides what it left in the record.
enum Ending {
    /// Latencies count from `origin` (the request's write) to `end` (when the end of the
    /// stream reached the socket).
    Complete {
        origin: Instant,
        end: Instant,
    },
    Failed(Failure),
}

fn failure(kind: FailureKind, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        message: message.into(),
    }
}

fn classify_hyper(e: &hyper::Error, url: &str) -> Failure {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            let kind = match io.kind() {
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
                    FailureKind::Reset
                }
                // The connection closed inside a chunked body: the stream was cut short.
                std::io::ErrorKind::UnexpectedEof => FailureKind::Truncated,
                _ => FailureKind::Io,
            };
            return failure(kind, format!("{url}: {io}"));
        }
        src = s.source();
    }
    let kind = if e.is_incomplete_message() || e.is_closed() {
        FailureKind::Truncated
    } else {
        FailureKind::Io
    };
    failure(kind, format!("{url}: {e}"))
}

impl Client {
    /// A client for one target.
    pub fn new(target: Target, backend: Backend, timeouts: Timeouts) -> Client {
        Client {
            target,
            backend,
            timeouts,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The target.
    pub fn target(&self) -> &Target {
        &self.target
    }

    async fn connect(&self) -> Result<Conn, Failure> {
        let url = &self.target.url;
        let connect = TcpStream::connect(self.target.addr);
        let stream = match self.timeouts.connect {
            Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| {
                failure(
                    FailureKind::ConnectTimeout,
                    format!("{url}: connect timed out after {t:?}"),
                )
            })?,
            None => connect.await,
        }
        .map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::ConnectionRefused {
                FailureKind::ConnectRefused
            } else {
                FailureKind::Connect
            };
            failure(kind, format!("{url}: {e}"))
        })?;
        // Small SSE writes must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        let (stream, stamps) = StampedStream::new(stream);
        let (sender, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| classify_hyper(&e, url))?;
        tokio::spawn(conn);
        Ok(Conn { sender, stamps })
    }

    async fn checkout(&self) -> Result<Conn, Failure> {
        loop {
            let pooled = self.idle.lock().ok().and_then(|mut v| v.pop());
            match pooled {
                Some(mut c) => {
                    if c.sender.is_closed() {
                        continue;
                    }
                    if c.sender.ready().await.is_ok() {
                        return Ok(c);
                    }
                }
                None => return self.connect().await,
            }
        }
    }

    fn checkin(&self, s: Conn) {
        if !s.sender.is_closed() {
            if let Ok(mut v) = self.idle.lock() {
                v.push(s);
            }
        }
    }

    fn request(&self, method: hyper::Method, path: &str, body: Bytes) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        // Paths were validated when the target was resolved.
        *req.uri_mut() = path.parse().unwrap_or_default();
        let h = req.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&self.target.host) {
            h.insert(hyper::header::HOST, v);
        }
        h.insert(
            hyper::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (k, v) in &self.target.headers {
            h.insert(k.clone(), v.clone());
        }
        req
    }

    /// A plain GET (setup requests such as `/v1/models`): the body as text.
    pub async fn get(&self, path: &str) -> Result<String, Failure> {
        let mut s = self.checkout().await?;
        let url = format!("http://{}{path}", self.target.host);
        let req = self.request(hyper::Method::GET, path, Bytes::new());
        let fut = async {
            let resp = s
                .sender
                .send_request(req)
                .await
                .map_err(|e| classify_hyper(&e, &url))?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| classify_hyper(&e, &url))?;
            let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
            if !status.is_success() {
                return Err(failure(
                    FailureKind::Http(status.as_u16()),
                    format!("{url}: {status}: {}", snippet(&text)),
                ));
            }
            Ok(text)
        };
        let out = match self.timeouts.total {
            Some(t) => tokio::time::timeout(t, fut).await.unwrap_or_else(|_| {
                Err(failure(
                    FailureKind::TotalTimeout,
                    format!("{url}: no answer within {t:?}"),
                ))
            }),
            None => fut.await,
        };
        if out.is_ok() {
            self.checkin(s);
        }
        out
    }

    /// Sends one streamed generation request and fills `rec` with what happened. The send time
    /// is taken here, before a connection is checked out (so connecting counts, as in vLLM's
    /// client); `stage_start` is the origin of `rec.sent_at_s`.
    pub async fn stream(&self, body: Bytes, stage_start: Instant, rec: &mut RequestRecord) {
        let sent = Instant::now();
        rec.sent_at_s = (sent - stage_start).as_secs_f64();
        match self.stream_inner(body, sent, rec).await {
            Ending::Complete { origin, end } => {
                rec.e2el_s = Some((end.max(origin) - origin).as_secs_f64());
            }
            Ending::Failed(f) => rec.failure = Some(f),
        }
    }

    async fn stream_inner(&self, body: Bytes, sent: Instant, rec: &mut RequestRecord) -> Ending {
        let url = self.target.url.as_str();
        let total_deadline = self.timeouts.total.map(|t| sent + t);
        let first_deadline = self.timeouts.first_token.map(|t| sent + t);
        let timed_out = |kind: FailureKind| {
            Ending::Failed(failure(
                kind,
                format!(
                    "{url}: {} after {:.3} s",
                    kind.name().replace('_', " "),
                    sent.elapsed().as_secs_f64()
                ),
            ))
        };
        // The earliest of the applicable deadlines, with the failure kind it stands for.
        let pick =
            |a: Option<(Instant, FailureKind)>, b: Option<Instant>, bk: FailureKind| match (a, b) {
                (Some(a), Some(b)) if b < a.0 => Some((b, bk)),
                (None, Some(b)) => Some((b, bk)),
                (a, _) => a,
            };

        let mut conn = match self.checkout().await {
            Ok(s) => s,
            Err(f) => return Ending::Failed(f),
        };
        conn.stamps.arm_tx();
        let req = self.request(hyper::Method::POST, &self.target.path, body);
        let head_deadline = pick(
            total_deadline.map(|d| (d, FailureKind::TotalTimeout)),
            first_deadline,
            FailureKind::FirstTokenTimeout,
        );
        let resp = match with_deadline(head_deadline, conn.sender.send_request(req)).await {
            Err(kind) => return timed_out(kind),
            Ok(Err(e)) => return Ending::Failed(classify_hyper(&e, url)),
            Ok(Ok(r)) => r,
        };
        // Latencies count from the write syscall that put the request on the wire; the time
        // before it (checkout, connect, the client's own scheduling) is `write_delay_s`.
        let origin = conn.stamps.tx().filter(|t| *t >= sent).unwrap_or(sent);
        rec.write_delay_s = Some((origin - sent).as_secs_f64());
        let status = resp.status();
        let mut body: Incoming = resp.into_body();
        if !status.is_success() {
            let text = read_snippet(&mut body, head_deadline).await;
            return Ending::Failed(failure(
                FailureKind::Http(status.as_u16()),
                format!("{url}: HTTP {}: {}", status_line(status), snippet(&text)),
            ));
        }

        let mut parser = SseParser::new();
        let mut last_cum: u64 = 0;
        let mut last_at = origin;
        let mut done = false;
        let mut end_at = origin;
        loop {
            let idle_deadline = if rec.ttft_s.is_some() {
                self.timeouts.idle.map(|t| last_at + t)
            } else {
                first_deadline
            };
            let idle_kind = if rec.ttft_s.is_some() {
                FailureKind::IdleTimeout
            } else {
                FailureKind::FirstTokenTimeout
            };
            let deadline = pick(
                total_deadline.map(|d| (d, FailureKind::TotalTimeout)),
                idle_deadline,
                idle_kind,
            );
            let frame = match with_deadline(deadline, body.frame()).await {
                Err(kind) => return timed_out(kind),
                Ok(None) => break,
                Ok(Some(Err(e))) => return Ending::Failed(classify_hyper(&e, url)),
                Ok(Some(Ok(f))) => f,
            };
            // When the data reached the socket, not when this task got to it (see stamp.rs).
            let read_at = Instant::now();
            let now = conn.stamps.last_rx().map_or(read_at, |t| t.min(read_at));
            end_at = now;
            if rec.ttft_s.is_none() {
                rec.first_read_delay_s = Some((read_at - now).as_secs_f64());
            }
            let Ok(data) = frame.into_data() else {
                continue;
            };
            parser.push(&data);
            loop {
                let event = match parser.next_event() {
                    Ok(Some(e)) => e,
                    Ok(None) => break,
                    Err(_) => {
                        return Ending::Failed(failure(
                            FailureKind::MalformedSse,
                            format!("{url}: event longer than {} bytes", sse::MAX_EVENT_BYTES),
                        ))
                    }
                };
                if event == b"[DONE]" {
                    done = true;
                    continue;
                }
                let decoded = if self.backend == Backend::Sglang {
                    // SGLang resends the whole text so far: keep the latest, do not append.
                    let mut so_far = String::new();
                    let info = sse::capture(&mut so_far, || self.backend.decode(event));
                    if !so_far.is_empty() {
                        rec.generated_text = so_far;
                    }
                    info
                } else {
                    sse::capture(&mut rec.generated_text, || self.backend.decode(event))
                };
                let Some(info) = decoded else {
                    let shown =
                        String::from_utf8_lossy(&event[..event.len().min(120)]).into_owned();
                    return Ending::Failed(failure(
                        FailureKind::MalformedSse,
                        format!("{url}: unexpected event data {shown:?}"),
                    ));
                };
                if info.error {
                    let shown =
                        String::from_utf8_lossy(&event[..event.len().min(200)]).into_owned();
                    return Ending::Failed(failure(
                        FailureKind::ServerError,
                        format!("{url}: {shown}"),
                    ));
                }
                if info.prompt_tokens.is_some() {
                    rec.input_tokens_server = info.prompt_tokens;
                }
                let tokens = match (info.has_choice, self.backend, info.completion_tokens) {
                    (false, _, _) => 0,
                    // TGI: one token per event; its generated_tokens is only the final total.
                    (true, Backend::Tgi, _) => u64::from(!info.special),
                    (true, _, Some(cum)) => {
                        let k = cum.saturating_sub(last_cum);
                        // SGLang repeats cumulative counts; an unchanged count with text is still one token.
                        if k == 0 && info.text_bytes > 0 && self.backend != Backend::Sglang {
                            1
                        } else {
                            k
                        }
                    }
                    (true, _, None) => u64::from(info.text_bytes > 0),
                };
                if let Some(cum) = info.completion_tokens {
                    last_cum = last_cum.max(cum);
                    rec.output_tokens_server = Some(last_cum);
                }
                if info.has_choice && info.text_bytes > 0 && !info.special {
                    rec.output_chunks_local += 1;
                }
                if tokens > 0 {
                    let at = (now.max(origin) - origin).as_secs_f64();
                    if rec.ttft_s.is_none() {
                        rec.ttft_s = Some(at);
                    }
                    rec.chunks.push(ChunkArrival {
                        at_s: at,
                        tokens: tokens.min(u64::from(u32::MAX)) as u32,
                    });
                    last_at = now;
                }
            }
            if done {
                break;
            }
        }
        // TGI ends its stream without a [DONE] marker; the others must send one.
        let complete =
            done || (self.backend == Backend::Tgi && parser.pending() == 0 && rec.ttft_s.is_some());
        if !complete {
            return Ending::Failed(failure(
                FailureKind::Truncated,
                format!(
                    "{url}: stream ended after {} chunk(s) without [DONE]",
                    rec.chunks.len()
                ),
            ));
        }
        // Drain the rest of the body (chunked terminator) so the connection can be reused.
        if !body.is_end_stream() {
            let _ = with_deadline(
                Some((Instant::now() + Duration::from_millis(200), FailureKind::Io)),
                async { while let Some(Ok(_)) = body.frame().await {} },
            )
            .await;
        }
        self.checkin(conn);
        Ending::Complete {
            origin,
            end: end_at,
        }
    }
}

fn status_line(s: StatusCode) -> String {
    match s.canonical_reason() {
        Some(r) => format!("{} {r}", s.as_u16()),
        None => s.as_u16().to_string(),
    }
}

/// The first 200 characters of a body, on one line.
pub fn snippet(text: &str) -> String {
    let one_line: String = text
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    one_line.trim().to_string()
}

async fn read_snippet(body: &mut Incoming, deadline: Option<(Instant, FailureKind)>) -> String {
    let mut buf = Vec::new();
    let _ = with_deadline(deadline, async {
        while buf.len() < 512 {
            match body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        buf.extend_from_slice(&d);
                    }
                }
                _ => break,
            }
        }
    })
    .await;
    String::from_utf8_lossy(&buf).into_owned()
}

async fn with_deadline<T>(
    deadline: Option<(Instant, FailureKind)>,
    fut: impl std::future::Future<Output = T>,
) -> Result<T, FailureKind> {
    match deadline {
        Some((at, kind)) => tokio::time::timeout_at(at, fut).await.map_err(|_| kind),
        None => Ok(fut.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_split_into_authority_and_prefix() {
        assert_eq!(
            split_base_url("http://127.0.0.1:8000").unwrap(),
            ("127.0.0.1:8000".into(), "".into())
        );
        assert_eq!(
            split_base_url("http://localhost/api/").unwrap(),
            ("localhost:80".into(), "/api".into())
        );
        assert!(split_base_url("https://x").is_err());
        assert!(split_base_url("http:///x").is_err());
    }

    #[tokio::test]
    async fn invalid_endpoints_are_rejected_up_front() {
        let e = Target::resolve("http://127.0.0.1:1", "/v1/has space", vec![])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("--endpoint"), "{e}");
        let t = Target::resolve("http://127.0.0.1:1/api", "v1/completions", vec![])
            .await
            .unwrap();
        assert_eq!(
            (t.path.as_str(), t.prefix.as_str()),
            ("/api/v1/completions", "/api")
        );
        assert_eq!(t.url, "http://127.0.0.1:1/api/v1/completions");
    }

    #[test]
    fn extra_body_overrides_and_adds_keys() {
        let extra: Map<String, Value> =
            serde_json::from_str(r#"{"temperature": 0.7, "top_k": 5}"#).unwrap();
        let b = request_body(Backend::OpenAi, "m", "hi", 8, true, Some(&extra));
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["temperature"], 0.7);
        assert_eq!(v["top_k"], 5);
        assert_eq!(v["stream_options"]["continuous_usage_stats"], true);
        assert_eq!(v["max_tokens"], 8);
    }

    #[test]
    fn failure_kind_names() {
        assert_eq!(FailureKind::Http(503).name(), "http_503");
        assert_eq!(FailureKind::Truncated.name(), "truncated_stream");
    }
}
