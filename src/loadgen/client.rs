//! The lean HTTP client: what it talks to ([`Backend`]), its time limits and transport, and the
//! [`Client`] itself, which owns a pool of hyper 1 connections (`pool.rs`), the headers and
//! URI of every request, and the setup `GET` (`/v1/models`). HTTP/1.1 by default, HTTP/2 with
//! `--http2` (ALPN `h2` over TLS, prior knowledge over plain TCP); TLS is rustls
//! ([`super::tls`]). One streamed generation request is [`Client::stream`]
//! (`exchange.rs`): bodies are pre-serialised ([`super::body`]), events parsed
//! incrementally ([`super::sse`], [`super::stream`]), and every chunk timestamped with when its
//! bytes reached the socket ([`super::stamp`]).
//!
//! A request's failure is data, never an error of the run: it ends up in
//! [`RequestRecord::failure`](super::record::RequestRecord::failure) with a
//! [`FailureKind`] (HTTP status with a body snippet, connect
//! refusal, TLS handshake failure, connect / first-token / idle / total timeouts, truncated
//! stream, malformed SSE, reset, an error event from the server). Must not import app code.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Uri};

use super::pool::{Pool, PoolSpec, DEFAULT_MAX_HEAD_BYTES};
use super::record::{snippet, Failure, FailureKind};
use super::target::{Target, TargetError};
use super::tls::{self, ClientTrust};
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

/// How connections are made: HTTP version and TLS trust.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transport {
    /// HTTP/2: ALPN `h2` over TLS, prior knowledge (h2c) over plain TCP.
    pub http2: bool,
    /// TLS: accept any server certificate (self-signed development servers).
    pub insecure: bool,
    /// TLS: trust only the CA certificates in this PEM file instead of the built-in and
    /// system roots.
    pub ca_cert: Option<PathBuf>,
    /// HTTP/1.1: the largest response head accepted, in KiB (`None`: 64 KiB).
    pub max_head_kib: Option<usize>,
}

/// How long a setup request (the `/v1/models` probe) may take once connected: a server that
/// accepts connections and never answers stops the run with a clear error instead of a hang.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest body of a setup request read.
const SETUP_BODY_BYTES: usize = 16 << 20;

/// A pool of connections to one server: idle HTTP/1.1 connections, or shared HTTP/2 ones.
pub struct Client {
    pub(super) target: Target,
    pub(super) backend: Backend,
    pub(super) timeouts: Timeouts,
    http2: bool,
    /// The headers of every request, built once.
    headers: HeaderMap,
    /// The URI of generation requests (origin form for HTTP/1.1, absolute for HTTP/2).
    pub(super) uri: Uri,
    pub(super) pool: Pool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.target)
            .field("backend", &self.backend)
            .field("http2", &self.http2)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A plain HTTP/1.1 client for one target (HTTPS with the built-in and system roots).
    /// Fails when an `https://` target's host is no TLS server name.
    pub fn new(
        target: Target,
        backend: Backend,
        timeouts: Timeouts,
    ) -> Result<Client, LoadgenError> {
        Client::with_transport(target, backend, timeouts, &Transport::default())
    }

    /// A client for one target with a transport (HTTP version, TLS trust). Fails when the
    /// CA file cannot be used or the target's path is no request path.
    pub fn with_transport(
        target: Target,
        backend: Backend,
        timeouts: Timeouts,
        transport: &Transport,
    ) -> Result<Client, LoadgenError> {
        let tls = if target.tls {
            let trust = ClientTrust {
                insecure: transport.insecure,
                ca_cert: transport.ca_cert.as_deref(),
                http2: transport.http2,
            };
            Some(tls::connector(trust, &target.server_name)?)
        } else {
            None
        };
        let mut headers = HeaderMap::new();
        // HTTP/2 carries the authority in the request URI; HTTP/1.1 needs Host.
        if !transport.http2 {
            if let Ok(v) = HeaderValue::from_str(&target.host) {
                headers.insert(hyper::header::HOST, v);
            }
        }
        headers.insert(
            hyper::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        // A header given here replaces a default of the same name; a name given again adds a
        // value.
        let mut given: Vec<&HeaderName> = Vec::new();
        for (k, v) in &target.headers {
            if given.contains(&k) {
                headers.append(k.clone(), v.clone());
            } else {
                headers.insert(k.clone(), v.clone());
                given.push(k);
            }
        }
        let uri = Client::uri_for(&target, transport.http2, &target.path)?;
        let pool = Pool::new(PoolSpec {
            addr: target.addr,
            origin: target.origin.clone(),
            url: target.url.clone(),
            http2: transport.http2,
            tls,
            connect_timeout: timeouts.connect,
            max_head_bytes: transport
                .max_head_kib
                .map_or(DEFAULT_MAX_HEAD_BYTES, |k| k.saturating_mul(1024)),
        });
        Ok(Client {
            backend,
            timeouts,
            http2: transport.http2,
            headers,
            uri,
            target,
            pool,
        })
    }

    /// The request URI of `path`: origin form for HTTP/1.1, absolute for HTTP/2.
    fn uri_for(target: &Target, http2: bool, path: &str) -> Result<Uri, TargetError> {
        let text = if http2 {
            format!("{}{path}", target.origin)
        } else {
            path.to_string()
        };
        text.parse().map_err(|source| TargetError::Endpoint {
            path: path.to_string(),
            source,
        })
    }

    /// The request URI of another path on the target (a followed redirect).
    pub(super) fn uri_of(&self, path: &str) -> Result<Uri, TargetError> {
        Client::uri_for(&self.target, self.http2, path)
    }

    /// The target.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// `HTTP/2` or `HTTP/1.1`: what this client speaks.
    pub fn http_version(&self) -> &'static str {
        if self.http2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        }
    }

    pub(super) fn request(
        &self,
        method: hyper::Method,
        uri: Uri,
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = uri;
        if self.http2 {
            *req.version_mut() = hyper::Version::HTTP_2;
        }
        *req.headers_mut() = self.headers.clone();
        req
    }

    /// A plain GET (setup requests such as `/v1/models`): the body as text, within
    /// [`PROBE_TIMEOUT`] (or the request timeout when shorter) after the connection is made.
    pub async fn get(&self, path: &str) -> Result<String, Failure> {
        let url = format!("{}{path}", self.target.origin);
        let uri = Client::uri_for(&self.target, self.http2, path)
            .map_err(|e| Failure::new(FailureKind::Io, format!("{url}: {e}")))?;
        let mut s = self.pool.checkout().await?;
        let req = self.request(hyper::Method::GET, uri, Bytes::new());
        let fut = async {
            let resp = s
                .send(req)
                .await
                .map_err(|e| self.pool.classify(&e, &url))?;
            let status = resp.status();
            let body = http_body_util::Limited::new(resp.into_body(), SETUP_BODY_BYTES)
                .collect()
                .await
                .map_err(|e| match e.downcast_ref::<hyper::Error>() {
                    Some(h) => self.pool.classify(h, &url),
                    None => Failure::new(FailureKind::Io, format!("{url}: {e}")),
                })?;
            let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
            if !status.is_success() {
                return Err(Failure::new(
                    FailureKind::Http(status.as_u16()),
                    format!("{url}: {status}: {}", snippet(&text)),
                ));
            }
            Ok(text)
        };
        let limit = self
            .timeouts
            .total
            .map_or(PROBE_TIMEOUT, |t| t.min(PROBE_TIMEOUT));
        let out = tokio::time::timeout(limit, fut).await.unwrap_or_else(|_| {
            Err(Failure::new(
                FailureKind::TotalTimeout,
                format!("{url}: no answer within {limit:?}"),
            ))
        });
        if out.is_ok() {
            self.pool.checkin(s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn given_headers_replace_defaults_and_repeat() {
        let h = |k: &str, v: &str| {
            (
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            )
        };
        let target = Target::resolve(
            "http://127.0.0.1:1",
            "/v1/completions",
            vec![
                h("x-a", "1"),
                h("content-type", "text/plain"),
                h("x-a", "2"),
            ],
        )
        .await
        .unwrap();
        let c = Client::new(target.clone(), Backend::OpenAi, Timeouts::default()).unwrap();
        let req = c.request(hyper::Method::POST, c.uri.clone(), Bytes::new());
        let all: Vec<_> = req.headers().get_all("x-a").iter().collect();
        assert_eq!(all, ["1", "2"]);
        assert_eq!(req.headers()["content-type"], "text/plain");
        assert_eq!(req.headers()["host"], "127.0.0.1:1");
        assert_eq!(req.uri(), "/v1/completions");
        // HTTP/2: no Host header, the authority is in the URI.
        let transport = Transport {
            http2: true,
            ..Transport::default()
        };
        let c = Client::with_transport(target, Backend::OpenAi, Timeouts::default(), &transport)
            .unwrap();
        let req = c.request(hyper::Method::POST, c.uri.clone(), Bytes::new());
        assert!(req.headers().get("host").is_none());
        assert_eq!(req.uri(), "http://127.0.0.1:1/v1/completions");
        assert_eq!(c.http_version(), "HTTP/2");
    }

    #[tokio::test]
    async fn a_bad_setup_path_fails_before_connecting() {
        let target = Target::resolve("http://127.0.0.1:1", "/v1/completions", vec![])
            .await
            .unwrap();
        let c = Client::new(target, Backend::OpenAi, Timeouts::default()).unwrap();
        // Port 1 refuses connections: an Io failure shows the path was checked first.
        let f = c.get("/v1/has space").await.unwrap_err();
        assert_eq!(f.kind, FailureKind::Io, "{f:?}");
        assert!(f.message.contains("not a valid request path"), "{f:?}");
    }
}
