//! The mock inference server (`benchlens mock`): an OpenAI-compatible server on hyper 1 that
//! streams synthetic tokens on a precise schedule, so the load generator can be tested and
//! demonstrated without a GPU. Every connection speaks HTTP/1.1 or HTTP/2 (told apart by the
//! HTTP/2 preface: prior-knowledge h2c in plain text), and with `--tls-cert`/`--tls-key` the
//! server is HTTPS (rustls, ALPN `h2` and `http/1.1`).
//!
//! Endpoints: `GET /v1/models`, `POST /v1/completions`, `POST /v1/chat/completions` (SSE when
//! `stream` is true, one JSON body otherwise, a final usage chunk when
//! `stream_options.include_usage`, usage in every chunk when `continuous_usage_stats`) and
//! `GET /health`. Timing: the first chunk is due `ttft_ms` after the request body arrives and
//! chunk `j` (of `tokens_per_chunk` tokens) `j * tokens_per_chunk * itl_ms` after that, computed
//! from the request's start so it never drifts. Output length is `max_tokens`
//! (`max_completion_tokens` for chat, 16 when absent); without `ignore_eos` the mock stops at a
//! pseudo end-of-sequence chosen from the prompt's hash between half of `max_tokens` and
//! `max_tokens`, like a model that sometimes finishes early. Prompt tokens are counted as
//! whitespace-separated words (token-id arrays by their length). Also served: TGI's
//! `/generate_stream` and SGLang's `/generate`.
//!
//! For testing clients: `--max-batch` models continuous batching (requests queue for a slot,
//! steps slow with occupancy), and fault flags make a fraction of requests fail in one way each
//! (HTTP 500, connection dropped or reset mid-stream, a stall, a malformed event), chosen by a
//! low-discrepancy sequence so the counts are exact. Must not import app code.
//!
//! This file owns the server's lifecycle (bind, accept, serve one connection with its header
//! timeout, shut down, the counters tests read); `config` holds the options and shared settings,
//! `routes` the endpoints, `generation` what a request asks for, `body` the streamed and whole
//! replies, `faults` the fault plan and the resetting socket. The submodules never import this
//! file.

mod body;
mod config;
mod faults;
mod generation;
mod routes;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::stamp::{stamp_listener, StampedStream};
use super::tls;
use super::LoadgenError;
use config::Config;
pub use config::MockOpts;
use faults::ResetOnDrop;
use routes::handle;

/// Connections the listening socket queues before they are accepted (the kernel caps it at
/// `net.core.somaxconn`, 4096 by default). `TcpListener::bind` listens with 128, the standard
/// library's value: a client opening its 256 connections at once then had some of its
/// connection requests dropped while the mock accepted, each retried by the kernel a second
/// later (`benchlens run` saw requests that waited a second to be written, and held the
/// requests that ended meanwhile to write its rows in order: the high peaks of about half the
/// 20,000-request runs of `scripts/bench-loadgen.sh`'s part 3).
const LISTEN_BACKLOG: u32 = 4096;

/// A listener on the first of `addr`'s addresses that binds, with [`LISTEN_BACKLOG`] (and, as
/// `TcpListener::bind`, `SO_REUSEADDR`).
async fn bind(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket = match a {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        };
        let listener = socket.and_then(|s| {
            s.set_reuseaddr(true)?;
            s.bind(a)?;
            s.listen(LISTEN_BACKLOG)
        });
        match listener {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address resolves to no address",
        )
    }))
}

/// A running mock server; dropping it without [`shutdown`](MockServer::shutdown) stops
/// accepting when the runtime ends.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    https: bool,
    cfg: Arc<Config>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Binds and starts serving on the current tokio runtime.
    pub async fn start(opts: MockOpts) -> Result<MockServer, LoadgenError> {
        let tls = match (&opts.tls_cert, &opts.tls_key) {
            (Some(cert), Some(key)) => Some(tls::acceptor(cert, key)?),
            (None, None) => None,
            _ => {
                return Err(LoadgenError::InvalidOption {
                    option: "tls-cert",
                    message: "--tls-cert and --tls-key go together".into(),
                })
            }
        };
        let addr = format!("{}:{}", opts.host, opts.port);
        let listener = bind(&addr).await.map_err(|source| LoadgenError::Bind {
            addr: addr.clone(),
            source,
        })?;
        let bound = listener
            .local_addr()
            .map_err(|source| LoadgenError::Bind { addr, source })?;
        stamp_listener(&listener);
        let cfg = Arc::new(Config::new(&opts)?);
        let served = cfg.clone();
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let https = tls.is_some();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    accepted = listener.accept() => {
                        // Accept errors (e.g. out of file descriptors) are transient: keep serving.
                        let Ok((stream, _)) = accepted else { continue };
                        let _ = stream.set_nodelay(true);
                        cfg.connections.fetch_add(1, Ordering::Relaxed);
                        tokio::spawn(serve_connection(stream, cfg.clone(), tls.clone()));
                    }
                }
            }
        });
        Ok(MockServer {
            addr: bound,
            https,
            cfg: served,
            stop: Some(stop_tx),
            task,
        })
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.cfg.connections.load(Ordering::Relaxed)
    }

    /// Connections closed because their headers did not arrive in time (`--header-timeout-s`)
    /// before their first request. (Later requests' HTTP/1.1 header timeouts are hyper's own.)
    pub fn header_timeouts(&self) -> u64 {
        self.cfg.header_timeouts.load(Ordering::Relaxed)
    }

    /// Requests served over HTTP/2 so far.
    pub fn http2_requests(&self) -> u64 {
        self.cfg.http2_requests.load(Ordering::Relaxed)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://host:port`, or `https://` when serving TLS.
    pub fn base_url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The mock's own view of its streamed requests' time to first token: from the request's
    /// arrival at its socket (the kernel's receive stamp) to the first chunk leaving the handler, as (count, mean ms, p99 ms). Comparing it
    /// with what a client reports separates client delay from server delay.
    pub fn first_chunk_latency(&self) -> Option<(usize, f64, f64)> {
        let mut us = self
            .cfg
            .first_chunk_us
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        if us.is_empty() {
            return None;
        }
        us.sort_unstable();
        let n = us.len();
        let mean = us.iter().map(|&u| f64::from(u)).sum::<f64>() / n as f64 / 1e3;
        // Nearest-rank p99: enough for a diagnostic line.
        let p99 = f64::from(us[((n as f64 * 0.99).ceil() as usize).clamp(1, n) - 1]) / 1e3;
        Some((n, mean, p99))
    }

    /// Stops accepting connections (open connections finish their requests).
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

/// Serves one accepted connection: TLS first when configured, then HTTP/1.1 or HTTP/2.
async fn serve_connection(
    stream: TcpStream,
    cfg: Arc<Config>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let reset = Arc::new(AtomicBool::new(false));
    // Stamps at the socket, under TLS (see stamp.rs). With HTTP/2 they are shared by the
    // connection's streams: a request's arrival then reads as the newest on the connection,
    // never earlier than its own, so the mock's own latency can only read shorter.
    let (stream, stamps) = StampedStream::new(stream);
    let io = ResetOnDrop {
        stream,
        reset: reset.clone(),
    };
    let header_timeout = cfg.header_timeout;
    // Set when the first request's headers are in (the service is only called then).
    let headed = Arc::new(AtomicBool::new(false));
    let service = {
        let (cfg, headed) = (cfg.clone(), headed.clone());
        service_fn(move |req| {
            headed.store(true, Ordering::Relaxed);
            handle(req, cfg.clone(), reset.clone(), stamps.clone())
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // Later requests on a kept-alive HTTP/1.1 connection: hyper's own header timeout.
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder
        .http2()
        // Many streams per connection (the load generator opens up to 100) with generous
        // flow-control windows, so streams never wait for credit.
        .max_concurrent_streams(1024)
        .initial_stream_window_size(1 << 20)
        .initial_connection_window_size(16 << 20);
    let serve = async {
        match tls {
            None => {
                let _ = builder.serve_connection(TokioIo::new(io), service).await;
            }
            Some(acceptor) => {
                // A failed handshake (e.g. a client that does not trust the certificate) only
                // closes this connection.
                let Ok(tls) = acceptor.accept(io).await else {
                    return;
                };
                let _ = builder.serve_connection(TokioIo::new(tls), service).await;
            }
        }
    };
    let Some(limit) = header_timeout else {
        return serve.await;
    };
    // The first request's headers (after the HTTP version sniffing and any TLS handshake,
    // which hyper does not time) must be in by the limit; otherwise the connection is dropped.
    tokio::pin!(serve);
    tokio::select! {
        () = &mut serve => return,
        () = tokio::time::sleep(limit) => {}
    }
    if headed.load(Ordering::Relaxed) {
        serve.await;
    } else {
        cfg.header_timeouts.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `benchlens mock` until Ctrl-C.
pub async fn serve_until_ctrl_c(opts: MockOpts) -> Result<(), LoadgenError> {
    let server = MockServer::start(opts.clone()).await?;
    crate::stdout::println(&format!(
        "benchlens mock listening on {} (HTTP/1.1 and HTTP/2{}; ttft {} ms, itl {} ms, {} token(s) per chunk)",
        server.base_url(),
        if opts.tls_cert.is_some() { " over TLS" } else { ", h2c by prior knowledge" },
        opts.ttft_ms,
        opts.itl_ms,
        opts.tokens_per_chunk
    ));
    let _ = tokio::signal::ctrl_c().await;
    if let Some((n, mean, p99)) = server.first_chunk_latency() {
        crate::stdout::println(&format!(
            "mock first-chunk latency: {n} streamed requests, mean {mean:.2} ms, p99 {p99:.2} ms"
        ));
    }
    server.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod header_timeout_tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::time::Instant;

    /// Reads until the server closes; the time it took, bounded by 5 s.
    async fn closed_after(mut s: TcpStream) -> Option<Duration> {
        let t0 = Instant::now();
        let mut buf = [0u8; 512];
        let r = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        r.ok().map(|()| t0.elapsed())
    }

    /// A default mock with `--header-timeout-s` set.
    async fn with_header_timeout(seconds: f64) -> MockServer {
        MockServer::start(MockOpts {
            header_timeout_s: seconds,
            ..MockOpts::default()
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn connections_whose_headers_do_not_arrive_are_closed() {
        let mock = with_header_timeout(0.3).await;
        // Nothing sent at all; half a request line; headers without their blank line.
        let silent = TcpStream::connect(mock.addr()).await.unwrap();
        let mut half = TcpStream::connect(mock.addr()).await.unwrap();
        half.write_all(b"POST /v1/compl").await.unwrap();
        let mut headers = TcpStream::connect(mock.addr()).await.unwrap();
        headers
            .write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let mut preface = TcpStream::connect(mock.addr()).await.unwrap();
        preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
        for (name, s) in [
            ("silent", silent),
            ("half", half),
            ("headers", headers),
            ("h2 preface", preface),
        ] {
            let took = closed_after(s).await;
            assert!(
                took.is_some_and(|t| t < Duration::from_secs(2)),
                "{name}: {took:?}"
            );
        }
        // The silent and the HTTP/2 ones at least (hyper may close the HTTP/1.1 ones first).
        assert!(mock.header_timeouts() >= 2, "{}", mock.header_timeouts());
        // A prompt client is served as before, on a new connection.
        let mut ok = TcpStream::connect(mock.addr()).await.unwrap();
        ok.write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        ok.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        mock.shutdown().await;
    }

    #[tokio::test]
    async fn zero_means_no_header_limit() {
        let mock = with_header_timeout(0.0).await;
        let mut s = TcpStream::connect(mock.addr()).await.unwrap();
        s.write_all(b"GET /v1/models HTTP/1.1\r\n").await.unwrap();
        let mut buf = [0u8; 16];
        // Still open after a second: the read times out rather than seeing the close.
        let r = tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await;
        assert!(r.is_err(), "{r:?}");
        assert_eq!(mock.header_timeouts(), 0);
        mock.shutdown().await;
    }
}

#[cfg(test)]
mod body_limit_tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Sends `head` then `body` (stopping when the server stops reading) while reading the
    /// answer; returns its status line, within 10 s.
    async fn status_of(mock: &MockServer, head: &str, body: Vec<u8>) -> String {
        let s = TcpStream::connect(mock.addr()).await.unwrap();
        let (mut rd, mut wr) = s.into_split();
        wr.write_all(head.as_bytes()).await.unwrap();
        let writer = tokio::spawn(async move {
            for piece in body.chunks(64 << 10) {
                if wr.write_all(piece).await.is_err() {
                    break;
                }
            }
            wr
        });
        let mut answer = Vec::new();
        let mut buf = [0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            while !answer.windows(2).any(|w| w == b"\r\n") {
                match rd.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => answer.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await;
        writer.abort();
        assert!(read.is_ok(), "no answer in 10 s");
        let text = String::from_utf8_lossy(&answer).into_owned();
        text.lines().next().unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_answered_413() {
        assert_eq!(MockOpts::default().max_body_bytes, 8 << 20);
        let mock = MockServer::start(MockOpts {
            max_body_bytes: 1 << 20,
            ttft_ms: 1.0,
            itl_ms: 1.0,
            ..MockOpts::default()
        })
        .await
        .unwrap();
        // Declared too long: refused before the body is read.
        let big = (1 << 20) + 1;
        let head =
            format!("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {big}\r\n\r\n");
        let status = status_of(&mock, &head, vec![b'x'; big]).await;
        assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
        // Chunked, no length: refused once the limit is passed.
        let head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        let mut body = Vec::new();
        for _ in 0..8 {
            body.extend_from_slice(format!("{:x}\r\n", 256 << 10).as_bytes());
            body.extend(std::iter::repeat_n(b'x', 256 << 10));
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"0\r\n\r\n");
        let status = status_of(&mock, head, body).await;
        assert_eq!(status, "HTTP/1.1 413 Payload Too Large");
        // A request within the limit is served.
        let ok = r#"{"model":"m","prompt":"hi","max_tokens":2}"#;
        let head = format!(
            "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ok}",
            ok.len()
        );
        assert_eq!(status_of(&mock, &head, Vec::new()).await, "HTTP/1.1 200 OK");
        mock.shutdown().await;
    }
}
