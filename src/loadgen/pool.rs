//! Connections to one server: TCP, then TLS for `https://`, then the HTTP/1.1 or HTTP/2
//! handshake, each socket wrapped so its reads and writes are stamped by the kernel
//! ([`super::stamp`]). HTTP/1.1 connections wait in a small idle pool, one request at a time
//! each; HTTP/2 connections are shared, up to [`H2_STREAMS_PER_CONNECTION`] streams each. How a
//! transport or TLS error reads as a request's [`Failure`] is decided here too.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::Request;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::TlsConnector;

use super::deadline::with_deadline;
use super::record::{Failure, FailureKind};
use super::stamp::{StampedStream, Stamps};

/// Streams opened at once on one HTTP/2 connection before another connection is made (100 is
/// the smallest limit RFC 9113 recommends servers to allow).
pub const H2_STREAMS_PER_CONNECTION: usize = 100;

/// The largest response head an HTTP/1.1 connection accepts unless `--max-response-head-kib`
/// says otherwise; also the most it reads from its socket at a time (hyper's head limit is its
/// read buffer's size). hyper's default grows a connection's read buffer, doubling from 8 KiB,
/// whenever a read fills it, and keeps it grown: against a reply that is all there at once (a
/// fast server, the zero-delay mock) every connection ended up holding about 57 KB at 128
/// tokens a reply, and each body frame was as large. A fixed size bounds that; it was 16 KiB
/// until a server with a 20 KB head (which curl reads) failed every request.
pub const DEFAULT_MAX_HEAD_BYTES: usize = 64 << 10;

/// The smallest head limit: hyper's own floor for a read buffer.
const MIN_HEAD_BYTES: usize = 8 << 10;

type H1Sender = http1::SendRequest<Full<Bytes>>;
type H2Sender = http2::SendRequest<Full<Bytes>>;

/// The connections of one client to one server.
pub(super) struct Pool {
    /// Where and how connections are made.
    spec: PoolSpec,
    idle: Mutex<Vec<(H1Sender, Arc<Stamps>)>>,
    h2: tokio::sync::Mutex<H2Pool>,
}

/// Where and how a [`Pool`] connects.
pub(super) struct PoolSpec {
    /// Resolved socket address.
    pub addr: SocketAddr,
    /// `http(s)://host:port`: connection failures name the server, not a request path.
    pub origin: String,
    /// The generation URL, named by failed HTTP handshakes.
    pub url: String,
    /// HTTP/2 instead of HTTP/1.1.
    pub http2: bool,
    /// The TLS connector and server name of `https://` targets.
    pub tls: Option<(TlsConnector, ServerName<'static>)>,
    /// TCP connect and TLS handshake together.
    pub connect_timeout: Option<Duration>,
    /// HTTP/1.1: the largest response head accepted (and the read size), at least 8 KiB.
    pub max_head_bytes: usize,
}

impl Pool {
    /// An empty pool; connections are made when requests need them.
    pub(super) fn new(spec: PoolSpec) -> Pool {
        Pool {
            spec,
            idle: Mutex::new(Vec::new()),
            h2: tokio::sync::Mutex::new(H2Pool::default()),
        }
    }

    /// A new connection: TCP, then TLS for `https://`, then the HTTP handshake. The connect
    /// timeout covers TCP and TLS together.
    async fn connect(&self) -> Result<Conn, Failure> {
        // Connection failures name the server, not the request path (setup requests share them).
        let url = &self.spec.origin;
        let deadline = self.spec.connect_timeout.map(|t| {
            (
                Instant::now() + t,
                FailureKind::ConnectTimeout,
                format!("{url}: connect timed out after {t:?}"),
            )
        });
        let timed = |kind: FailureKind| {
            let message = deadline.as_ref().map_or_else(String::new, |d| d.2.clone());
            Failure::new(kind, message)
        };
        let stream = match with_deadline(
            deadline.as_ref().map(|d| (d.0, d.1)),
            TcpStream::connect(self.spec.addr),
        )
        .await
        {
            Err(kind) => return Err(timed(kind)),
            Ok(r) => r,
        }
        .map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::ConnectionRefused {
                FailureKind::ConnectRefused
            } else {
                FailureKind::Connect
            };
            Failure::new(kind, format!("{url}: {e}"))
        })?;
        // Small SSE writes must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        // Stamps are taken at the socket, under TLS: arrival and write of the encrypted bytes.
        let (stream, stamps) = StampedStream::new(stream);
        let Some((connector, name)) = &self.spec.tls else {
            return self.handshake(stream, stamps).await;
        };
        let tls = match with_deadline(
            deadline.as_ref().map(|d| (d.0, d.1)),
            connector.connect(name.clone(), stream),
        )
        .await
        {
            Err(kind) => return Err(timed(kind)),
            Ok(Err(e)) => return Err(classify_tls(&e, url)),
            Ok(Ok(s)) => s,
        };
        if self.spec.http2 && tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            return Err(Failure::new(
                FailureKind::Tls,
                format!("{url}: the server did not agree to HTTP/2 in the TLS handshake (ALPN h2); run without --http2"),
            ));
        }
        self.handshake(tls, stamps).await
    }

    /// [`Pool::connect`] on the heap: its TCP, TLS and HTTP/2 handshake futures are several
    /// kilobytes, and every request's future would otherwise reserve room for them while it
    /// streams, though only a request that opens a connection (one per connection of the run)
    /// uses it.
    async fn connect_boxed(&self) -> Result<Conn, Failure> {
        Box::pin(self.connect()).await
    }

    async fn handshake<IO>(&self, io: IO, stamps: Arc<Stamps>) -> Result<Conn, Failure>
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let url = &self.spec.url;
        if self.spec.http2 {
            let (sender, conn) = http2::Builder::new(TokioExecutor::new())
                // Many streams share the connection: generous windows so none waits for
                // flow-control credit.
                .initial_stream_window_size(1 << 20)
                .initial_connection_window_size(16 << 20)
                .handshake(TokioIo::new(io))
                .await
                .map_err(|e| self.classify(&e, url))?;
            tokio::spawn(conn);
            Ok(Conn::H2(
                sender,
                StreamSlot(Arc::new(AtomicUsize::new(1))),
                stamps,
            ))
        } else {
            let (sender, conn) = http1::Builder::new()
                .read_buf_exact_size(Some(self.spec.max_head_bytes.max(MIN_HEAD_BYTES)))
                .handshake(TokioIo::new(io))
                .await
                .map_err(|e| self.classify(&e, url))?;
            tokio::spawn(conn);
            Ok(Conn::H1(sender, stamps, false))
        }
    }

    pub(super) async fn checkout(&self) -> Result<Conn, Failure> {
        if self.spec.http2 {
            return self.checkout_h2().await;
        }
        loop {
            let pooled = self.idle.lock().ok().and_then(|mut v| v.pop());
            match pooled {
                Some((mut s, stamps)) => {
                    if s.is_closed() {
                        continue;
                    }
                    if s.ready().await.is_ok() {
                        return Ok(Conn::H1(s, stamps, true));
                    }
                }
                None => return self.connect_boxed().await,
            }
        }
    }

    /// The least busy HTTP/2 connection with room for a stream, or a new one (made while
    /// holding the pool, so a burst of requests opens one connection, not one each).
    async fn checkout_h2(&self) -> Result<Conn, Failure> {
        let waited_from = Instant::now();
        let mut pool = self.h2.lock().await;
        pool.conns.retain(|(s, _, _)| !s.is_closed());
        let best = pool
            .conns
            .iter()
            .map(|(s, n, st)| (s, n, st, n.load(Ordering::Relaxed)))
            .filter(|(_, _, _, open)| *open < H2_STREAMS_PER_CONNECTION)
            .min_by_key(|(_, _, _, open)| *open);
        if let Some((s, n, st, _)) = best {
            n.fetch_add(1, Ordering::Relaxed);
            return Ok(Conn::H2(s.clone(), StreamSlot(n.clone()), st.clone()));
        }
        if let Some((at, f)) = &pool.failed {
            if *at >= waited_from {
                return Err(f.clone());
            }
        }
        match self.connect_boxed().await {
            Ok(Conn::H2(s, slot, st)) => {
                pool.failed = None;
                pool.conns.push((s.clone(), slot.0.clone(), st.clone()));
                Ok(Conn::H2(s, slot, st))
            }
            Ok(other) => Ok(other),
            Err(f) => {
                pool.failed = Some((Instant::now(), f.clone()));
                Err(f)
            }
        }
    }

    /// What a hyper error on one of this pool's connections means for a request.
    pub(super) fn classify(&self, e: &hyper::Error, url: &str) -> Failure {
        let mut f = classify_hyper(e, url);
        if e.is_parse_too_large() {
            let kib = self.spec.max_head_bytes.max(MIN_HEAD_BYTES) >> 10;
            f.message = format!(
                "{url}: {e}: the server's response head is over the {kib} KiB this client accepts (raise it with --max-response-head-kib)"
            );
        }
        f
    }

    /// A connection for a request sent again because its first connection closed before
    /// answering: a new HTTP/1.1 connection (never a pooled one), or the HTTP/2 pool's best.
    pub(super) async fn fresh(&self) -> Result<Conn, Failure> {
        if self.spec.http2 {
            return self.checkout_h2().await;
        }
        self.connect_boxed().await
    }

    pub(super) fn checkin(&self, c: Conn) {
        // HTTP/2 connections stay in their pool; dropping the checkout frees its stream.
        if let Conn::H1(s, stamps, _) = c {
            if !s.is_closed() {
                if let Ok(mut v) = self.idle.lock() {
                    v.push((s, stamps));
                }
            }
        }
    }
}

/// HTTP/2 connections with their open stream counts.
#[derive(Default)]
struct H2Pool {
    conns: Vec<(H2Sender, Arc<AtomicUsize>, Arc<Stamps>)>,
    /// The last failed connection attempt: requests that waited for it fail the same way
    /// instead of trying again one after another.
    failed: Option<(Instant, Failure)>,
}

/// A connection checked out for one request, with what its socket saw ([`super::stamp`]).
pub(super) enum Conn {
    /// An HTTP/1.1 connection, owned by one request at a time; `true` when it came from the
    /// idle pool (it served a request before, and the server may have closed it since).
    H1(H1Sender, Arc<Stamps>, bool),
    /// An HTTP/2 connection; the count of its open streams is lowered on drop. Its stamps are
    /// shared by its streams: the newest arrival on the connection is never earlier than a
    /// stream's own data, and the first write after a stream arms is never later than its own,
    /// so shared stamps can only make latencies longer, never shorter.
    H2(H2Sender, StreamSlot, Arc<Stamps>),
}

/// One open stream of an HTTP/2 connection, counted while it lives.
pub(super) struct StreamSlot(Arc<AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Conn {
    pub(super) async fn send(
        &mut self,
        req: Request<Full<Bytes>>,
    ) -> hyper::Result<hyper::Response<Incoming>> {
        match self {
            Conn::H1(s, _, _) => s.send_request(req).await,
            Conn::H2(s, _, _) => s.send_request(req).await,
        }
    }

    pub(super) fn stamps(&self) -> &Stamps {
        match self {
            Conn::H1(_, st, _) | Conn::H2(_, _, st) => st,
        }
    }

    /// Whether this HTTP/1.1 connection came from the idle pool.
    pub(super) fn reused(&self) -> bool {
        matches!(self, Conn::H1(_, _, true))
    }
}

/// What a hyper error means for the request: a reset, a truncated stream, or another
/// transport failure, found by walking the error's sources.
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
            return Failure::new(kind, format!("{url}: {io}"));
        }
        // HTTP/2: the server reset this stream (RST_STREAM) or is closing the connection
        // (GOAWAY). An HTTP/2 stream's counterpart of a connection reset.
        if let Some(h2e) = s.downcast_ref::<h2::Error>() {
            // A GOAWAY of our own making: what came back was not valid HTTP/2 framing, most
            // often an HTTP/1.1 server answering the h2c preface with a plain 400.
            if h2e.is_go_away() && h2e.is_library() {
                return Failure::new(
                    FailureKind::Io,
                    format!("{url}: {h2e}: the answer was not HTTP/2; the server may speak only HTTP/1.1 (drop --http2)"),
                );
            }
            if h2e.is_reset() || h2e.is_go_away() {
                return Failure::new(FailureKind::Reset, format!("{url}: {h2e}"));
            }
            if let Some(io) = h2e.get_io() {
                let kind = match io.kind() {
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
                        FailureKind::Reset
                    }
                    _ => FailureKind::Io,
                };
                return Failure::new(kind, format!("{url}: {io}"));
            }
        }
        src = s.source();
    }
    let kind = if e.is_incomplete_message() || e.is_closed() {
        FailureKind::Truncated
    } else {
        FailureKind::Io
    };
    Failure::new(kind, format!("{url}: {e}"))
}

/// A failed TLS handshake: a reset stays a reset, everything else is a TLS failure naming
/// rustls's reason (`invalid peer certificate: UnknownIssuer`).
fn classify_tls(e: &std::io::Error, url: &str) -> Failure {
    match e.kind() {
        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
            Failure::new(FailureKind::Reset, format!("{url}: TLS handshake: {e}"))
        }
        _ => Failure::new(
            FailureKind::Tls,
            format!("{url}: TLS handshake failed: {e}"),
        ),
    }
}
