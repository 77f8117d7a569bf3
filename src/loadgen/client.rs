//! The lean HTTP client: hyper 1 connections, plain TCP or TLS (rustls with the ring provider).
//! HTTP/1.1 by default: connections kept in a small pool, one streamed request at a time per
//! connection. With `--http2`: HTTP/2 (ALPN `h2` over TLS, prior knowledge over plain TCP), up
//! to [`H2_STREAMS_PER_CONNECTION`] concurrent streams on each of a few connections. Bodies are
//! pre-serialised, events parsed incrementally with [`super::sse`], and every chunk timestamped
//! with when its bytes reached the socket (the kernel's receive stamp, [`super::stamp`]), not
//! when a busy client got round to reading them.
//!
//! A request's failure is data, never an error of the run: it ends up in
//! [`RequestRecord::failure`] with a [`FailureKind`] (HTTP status with a body snippet, connect
//! refusal, TLS handshake failure, connect / first-token / idle / total timeouts, truncated
//! stream, malformed SSE, reset, an error event from the server). Must not import app code.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::client::conn::{http1, http2};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::rustls;
use tokio_rustls::TlsConnector;

use super::record::{Failure, FailureKind, RequestRecord};
use super::stamp::{StampedStream, Stamps};
use super::stream::{Flow, StreamAccount};
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

/// Where requests go: parsed once from `--base-url` and `--endpoint`.
#[derive(Clone, Debug)]
pub struct Target {
    /// `http(s)://host:port/path` for messages.
    pub url: String,
    /// `http(s)://host:port`.
    pub origin: String,
    /// Whether the connection is TLS (`https://`).
    pub tls: bool,
    /// The path and query sent in the request line.
    pub path: String,
    /// `Host` header value (`host:port`).
    pub host: String,
    /// The host alone (no port, no brackets), for TLS server name checks.
    pub server_name: String,
    /// The path prefix of `--base-url` (empty or `/prefix`), for setup requests.
    pub prefix: String,
    /// Resolved socket address.
    pub addr: SocketAddr,
    /// Extra headers (`Authorization`, `--header`), in order; a name given twice is sent twice.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// A parsed `--base-url`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl {
    /// `https://`.
    pub tls: bool,
    /// `host:port` (the scheme's default port when none was given).
    pub authority: String,
    /// The host alone, without port or IPv6 brackets.
    pub host: String,
    /// The path prefix: empty or `/prefix`.
    pub prefix: String,
}

/// Splits `http(s)://host[:port][/prefix]` into its parts.
pub fn split_base_url(base: &str) -> Result<BaseUrl, String> {
    let (tls, rest) = if let Some(rest) = base.strip_prefix("http://") {
        (false, rest)
    } else if let Some(rest) = base.strip_prefix("https://") {
        (true, rest)
    } else {
        return Err(format!(
            "{base}: only http:// and https:// URLs are supported"
        ));
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err(format!("{base}: no host"));
    }
    // `[::1]:8000`, `[::1]`, `host:8000`, `host`.
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("{base}: unclosed [ in the host"))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("{base}: no host"));
    }
    let authority = match port {
        Some(p) if p.parse::<u16>().is_ok() => authority.to_string(),
        Some(p) => return Err(format!("{base}: {p:?} is not a port number")),
        None => format!("{authority}:{}", if tls { 443 } else { 80 }),
    };
    Ok(BaseUrl {
        tls,
        authority,
        host: host.to_string(),
        prefix: prefix.to_string(),
    })
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
        let base = split_base_url(base_url).map_err(invalid)?;
        let authority = base.authority;
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
        let path = format!("{}{endpoint}", base.prefix);
        if path.parse::<hyper::Uri>().is_err() {
            return Err(LoadgenError::InvalidOption {
                option: "endpoint",
                message: format!("{path:?} is not a valid request path"),
            });
        }
        let origin = format!("{}://{authority}", if base.tls { "https" } else { "http" });
        Ok(Target {
            url: format!("{origin}{path}"),
            origin,
            tls: base.tls,
            path,
            prefix: base.prefix,
            host: authority,
            server_name: base.host,
            addr,
            headers,
        })
    }
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
}

/// How long a setup request (the `/v1/models` probe) may take once connected: a server that
/// accepts connections and never answers stops the run with a clear error instead of a hang.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest body of a setup request read.
const SETUP_BODY_BYTES: usize = 16 << 20;

/// Streams opened at once on one HTTP/2 connection before another connection is made (100 is
/// the smallest limit RFC 9113 recommends servers to allow).
pub const H2_STREAMS_PER_CONNECTION: usize = 100;

/// The rustls client configuration for a transport, with the ring provider.
pub fn tls_client_config(t: &Transport) -> Result<rustls::ClientConfig, LoadgenError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| LoadgenError::InvalidOption {
            option: "base-url",
            message: format!("TLS set-up: {e}"),
        })?;
    let mut config = if t.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth()
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match &t.ca_cert {
            Some(path) => {
                let bad = |message: String| LoadgenError::InvalidOption {
                    option: "ca-cert",
                    message: format!("{}: {message}", path.display()),
                };
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|e| bad(e.to_string()))?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(e.to_string()))?;
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| bad(format!("not a usable CA certificate: {e}")))?;
                }
                if roots.is_empty() {
                    return Err(bad("no PEM certificate in the file".into()));
                }
            }
            None => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                // The system store too (a company CA installed on the machine); unreadable
                // entries are skipped, the built-in roots remain.
                let native = rustls_native_certs::load_native_certs();
                let _ = roots.add_parsable_certificates(native.certs);
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![if t.http2 {
        b"h2".to_vec()
    } else {
        b"http/1.1".to_vec()
    }];
    Ok(config)
}

/// `--insecure`: every certificate is accepted; handshake signatures are still checked (they
/// prove nothing without a trusted certificate, but keep the handshake well-formed).
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Sampling settings of every request. Only what is set is sent: a server that checks its
/// request schema strictly rejects keys it does not know (`422 Unexpected fields`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampling {
    /// Ask the server to generate the full length (`ignore_eos: true`); sent only when true, as
    /// vLLM's client does. OpenAI-compatible backends: top-level `ignore_eos` (vLLM, SGLang,
    /// llama.cpp, TensorRT-LLM read it; TGI, Ollama and `transformers serve` do not). SGLang
    /// native: `sampling_params.ignore_eos`. TGI native has no such parameter: nothing is sent.
    pub ignore_eos: bool,
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k`.
    pub top_k: Option<i64>,
    /// `min_p`.
    pub min_p: Option<f64>,
    /// `repetition_penalty`.
    pub repetition_penalty: Option<f64>,
    /// `frequency_penalty`.
    pub frequency_penalty: Option<f64>,
    /// `presence_penalty`.
    pub presence_penalty: Option<f64>,
}

impl Sampling {
    /// The keys that are set, in the request's JSON.
    fn keys(&self, with_ignore_eos: bool) -> Map<String, Value> {
        let mut m = Map::new();
        if self.ignore_eos && with_ignore_eos {
            m.insert("ignore_eos".into(), Value::Bool(true));
        }
        let floats = [
            ("temperature", self.temperature),
            ("top_p", self.top_p),
            ("min_p", self.min_p),
            ("repetition_penalty", self.repetition_penalty),
            ("frequency_penalty", self.frequency_penalty),
            ("presence_penalty", self.presence_penalty),
        ];
        for (k, v) in floats {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        if let Some(k) = self.top_k {
            m.insert("top_k".into(), json!(k));
        }
        m
    }
}

/// Applies `patch` to `target` as a JSON Merge Patch (RFC 7396): objects merge key by key, a
/// `null` removes the key, anything else replaces the value.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(obj) = target {
        for (k, v) in patch {
            if v.is_null() {
                obj.remove(k);
            } else {
                merge_patch(obj.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// Builds the JSON body of one request for a backend. `extra` (`--extra-body`) is applied last
/// as a JSON Merge Patch: it adds or replaces any key, nested ones too, and a `null` removes one
/// (`{"stream_options": {"continuous_usage_stats": null}}`, `{"max_tokens": null}`).
pub fn request_body(
    backend: Backend,
    model: &str,
    prompt: &str,
    max_tokens: u64,
    sampling: &Sampling,
    extra: Option<&Map<String, Value>>,
) -> Bytes {
    let stream_options = json!({"include_usage": true, "continuous_usage_stats": true});
    let mut body = match backend {
        Backend::OpenAi => json!({
            "model": model, "prompt": prompt, "max_tokens": max_tokens,
            "stream": true, "stream_options": stream_options,
        }),
        // Servers read one or the other: OpenAI's current name and the older one.
        Backend::OpenAiChat => json!({
            "model": model, "messages": [{"role": "user", "content": prompt}],
            "max_completion_tokens": max_tokens, "max_tokens": max_tokens,
            "stream": true, "stream_options": stream_options,
        }),
        Backend::Tgi => json!({
            "inputs": prompt,
            "parameters": {"max_new_tokens": max_tokens, "details": true, "decoder_input_details": false},
        }),
        Backend::Sglang => json!({
            "text": prompt, "stream": true,
            "sampling_params": {"max_new_tokens": max_tokens},
        }),
    };
    let (place, with_eos) = match backend {
        Backend::OpenAi | Backend::OpenAiChat => (None, true),
        Backend::Tgi => (Some("parameters"), false),
        Backend::Sglang => (Some("sampling_params"), true),
    };
    let keys = Value::Object(sampling.keys(with_eos));
    match place {
        None => merge_patch(&mut body, &keys),
        Some(k) => merge_patch(&mut body, &json!({ k: keys })),
    }
    if let Some(extra) = extra {
        merge_patch(&mut body, &Value::Object(extra.clone()));
    }
    Bytes::from(body.to_string())
}

type H1Sender = http1::SendRequest<Full<Bytes>>;
type H2Sender = http2::SendRequest<Full<Bytes>>;

/// A pool of connections to one server: idle HTTP/1.1 connections, or shared HTTP/2 ones.
pub struct Client {
    target: Target,
    backend: Backend,
    timeouts: Timeouts,
    http2: bool,
    /// Set for `https://` targets.
    tls: Option<(TlsConnector, rustls::pki_types::ServerName<'static>)>,
    /// The headers of every request, built once.
    headers: HeaderMap,
    /// The URI of generation requests (origin form for HTTP/1.1, absolute for HTTP/2).
    uri: Uri,
    idle: Mutex<Vec<(H1Sender, Arc<Stamps>)>>,
    h2: tokio::sync::Mutex<H2Pool>,
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

/// HTTP/2 connections with their open stream counts.
#[derive(Default)]
struct H2Pool {
    conns: Vec<(H2Sender, Arc<AtomicUsize>, Arc<Stamps>)>,
    /// The last failed connection attempt: requests that waited for it fail the same way
    /// instead of trying again one after another.
    failed: Option<(Instant, Failure)>,
}

/// A connection checked out for one request, with what its socket saw ([`super::stamp`]).
enum Conn {
    H1(H1Sender, Arc<Stamps>),
    /// An HTTP/2 connection; the count of its open streams is lowered on drop. Its stamps are
    /// shared by its streams: the newest arrival on the connection is never earlier than a
    /// stream's own data, and the first write after a stream arms is never later than its own,
    /// so shared stamps can only make latencies longer, never shorter.
    H2(H2Sender, StreamSlot, Arc<Stamps>),
}

struct StreamSlot(Arc<AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Conn {
    async fn send(
        &mut self,
        req: Request<Full<Bytes>>,
    ) -> hyper::Result<hyper::Response<Incoming>> {
        match self {
            Conn::H1(s, _) => s.send_request(req).await,
            Conn::H2(s, _, _) => s.send_request(req).await,
        }
    }

    fn stamps(&self) -> &Stamps {
        match self {
            Conn::H1(_, st) | Conn::H2(_, _, st) => st,
        }
    }
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
        // HTTP/2: the server reset this stream (RST_STREAM) or is closing the connection
        // (GOAWAY). An HTTP/2 stream's counterpart of a connection reset.
        if let Some(h2e) = s.downcast_ref::<h2::Error>() {
            // A GOAWAY of our own making: what came back was not valid HTTP/2 framing, most
            // often an HTTP/1.1 server answering the h2c preface with a plain 400.
            if h2e.is_go_away() && h2e.is_library() {
                return failure(
                    FailureKind::Io,
                    format!("{url}: {h2e}: the answer was not HTTP/2; the server may speak only HTTP/1.1 (drop --http2)"),
                );
            }
            if h2e.is_reset() || h2e.is_go_away() {
                return failure(FailureKind::Reset, format!("{url}: {h2e}"));
            }
            if let Some(io) = h2e.get_io() {
                let kind = match io.kind() {
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
                        FailureKind::Reset
                    }
                    _ => FailureKind::Io,
                };
                return failure(kind, format!("{url}: {io}"));
            }
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

/// A failed TLS handshake: a reset stays a reset, everything else is a TLS failure naming
/// rustls's reason (`invalid peer certificate: UnknownIssuer`).
fn classify_tls(e: &std::io::Error, url: &str) -> Failure {
    match e.kind() {
        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
            failure(FailureKind::Reset, format!("{url}: TLS handshake: {e}"))
        }
        _ => failure(
            FailureKind::Tls,
            format!("{url}: TLS handshake failed: {e}"),
        ),
    }
}

impl Client {
    /// A plain HTTP/1.1 client for one target (HTTPS with the built-in and system roots).
    pub fn new(target: Target, backend: Backend, timeouts: Timeouts) -> Client {
        Client::with_transport(target, backend, timeouts, &Transport::default())
            .unwrap_or_else(|e| unreachable!("the default TLS set-up cannot fail: {e}"))
    }

    /// A client for one target with a transport (HTTP version, TLS trust). Fails when the
    /// CA file cannot be used.
    pub fn with_transport(
        target: Target,
        backend: Backend,
        timeouts: Timeouts,
        transport: &Transport,
    ) -> Result<Client, LoadgenError> {
        let tls = if target.tls {
            let config = tls_client_config(transport)?;
            let name = rustls::pki_types::ServerName::try_from(target.server_name.clone())
                .map_err(|e| LoadgenError::InvalidOption {
                    option: "base-url",
                    message: format!("{}: not a TLS server name: {e}", target.server_name),
                })?;
            Some((TlsConnector::from(Arc::new(config)), name))
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
        let uri = Client::uri_for(&target, transport.http2, &target.path);
        Ok(Client {
            backend,
            timeouts,
            http2: transport.http2,
            tls,
            headers,
            uri,
            target,
            idle: Mutex::new(Vec::new()),
            h2: tokio::sync::Mutex::new(H2Pool::default()),
        })
    }

    fn uri_for(target: &Target, http2: bool, path: &str) -> Uri {
        // Paths were validated when the target was resolved.
        let text = if http2 {
            format!("{}{path}", target.origin)
        } else {
            path.to_string()
        };
        text.parse().unwrap_or_default()
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

    /// A new connection: TCP, then TLS for `https://`, then the HTTP handshake. The connect
    /// timeout covers TCP and TLS together.
    async fn connect(&self) -> Result<Conn, Failure> {
        // Connection failures name the server, not the request path (setup requests share them).
        let url = &self.target.origin;
        let deadline = self.timeouts.connect.map(|t| {
            (
                Instant::now() + t,
                FailureKind::ConnectTimeout,
                format!("{url}: connect timed out after {t:?}"),
            )
        });
        let timed = |kind: FailureKind| {
            let message = deadline.as_ref().map_or_else(String::new, |d| d.2.clone());
            failure(kind, message)
        };
        let stream = match with_deadline(
            deadline.as_ref().map(|d| (d.0, d.1)),
            TcpStream::connect(self.target.addr),
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
            failure(kind, format!("{url}: {e}"))
        })?;
        // Small SSE writes must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        // Stamps are taken at the socket, under TLS: arrival and write of the encrypted bytes.
        let (stream, stamps) = StampedStream::new(stream);
        let Some((connector, name)) = &self.tls else {
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
        if self.http2 && tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            return Err(failure(
                FailureKind::Tls,
                format!("{url}: the server did not agree to HTTP/2 in the TLS handshake (ALPN h2); run without --http2"),
            ));
        }
        self.handshake(tls, stamps).await
    }

    async fn handshake<IO>(&self, io: IO, stamps: Arc<Stamps>) -> Result<Conn, Failure>
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let url = &self.target.url;
        if self.http2 {
            let (sender, conn) = http2::Builder::new(TokioExecutor::new())
                // Many streams share the connection: generous windows so none waits for
                // flow-control credit.
                .initial_stream_window_size(1 << 20)
                .initial_connection_window_size(16 << 20)
                .handshake(TokioIo::new(io))
                .await
                .map_err(|e| classify_hyper(&e, url))?;
            tokio::spawn(conn);
            Ok(Conn::H2(
                sender,
                StreamSlot(Arc::new(AtomicUsize::new(1))),
                stamps,
            ))
        } else {
            let (sender, conn) = http1::handshake(TokioIo::new(io))
                .await
                .map_err(|e| classify_hyper(&e, url))?;
            tokio::spawn(conn);
            Ok(Conn::H1(sender, stamps))
        }
    }

    async fn checkout(&self) -> Result<Conn, Failure> {
        if self.http2 {
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
                        return Ok(Conn::H1(s, stamps));
                    }
                }
                None => return self.connect().await,
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
        match self.connect().await {
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

    fn checkin(&self, c: Conn) {
        // HTTP/2 connections stay in their pool; dropping the checkout frees its stream.
        if let Conn::H1(s, stamps) = c {
            if !s.is_closed() {
                if let Ok(mut v) = self.idle.lock() {
                    v.push((s, stamps));
                }
            }
        }
    }

    fn request(&self, method: hyper::Method, uri: Uri, body: Bytes) -> Request<Full<Bytes>> {
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
        let mut s = self.checkout().await?;
        let url = format!("{}{path}", self.target.origin);
        let uri = Client::uri_for(&self.target, self.http2, path);
        let req = self.request(hyper::Method::GET, uri, Bytes::new());
        let fut = async {
            let resp = s.send(req).await.map_err(|e| classify_hyper(&e, &url))?;
            let status = resp.status();
            let body = http_body_util::Limited::new(resp.into_body(), SETUP_BODY_BYTES)
                .collect()
                .await
                .map_err(|e| match e.downcast_ref::<hyper::Error>() {
                    Some(h) => classify_hyper(h, &url),
                    None => failure(FailureKind::Io, format!("{url}: {e}")),
                })?;
            let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
            if !status.is_success() {
                return Err(failure(
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
            Err(failure(
                FailureKind::TotalTimeout,
                format!("{url}: no answer within {limit:?}"),
            ))
        });
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

        let mut sender = match self.checkout().await {
            Ok(s) => s,
            Err(f) => return Ending::Failed(f),
        };
        sender.stamps().arm_tx();
        let req = self.request(hyper::Method::POST, self.uri.clone(), body);
        let head_deadline = pick(
            total_deadline.map(|d| (d, FailureKind::TotalTimeout)),
            first_deadline,
            FailureKind::FirstTokenTimeout,
        );
        let resp = match with_deadline(head_deadline, sender.send(req)).await {
            Err(kind) => return timed_out(kind),
            Ok(Err(e)) => return Ending::Failed(classify_hyper(&e, url)),
            Ok(Ok(r)) => r,
        };
        // Latencies count from the write syscall that put the request on the wire; the time
        // before it (checkout, connect, the client's own scheduling) is `write_delay_s`.
        let origin = sender.stamps().tx().filter(|t| *t >= sent).unwrap_or(sent);
        rec.write_delay_s = Some((origin - sent).as_secs_f64());
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body: Incoming = resp.into_body();
        if !status.is_success() {
            let text = read_snippet(&mut body, head_deadline).await;
            return Ending::Failed(failure(
                FailureKind::Http(status.as_u16()),
                format!("{url}: HTTP {}: {}", status_line(status), snippet(&text)),
            ));
        }

        let mut account = StreamAccount::new(self.backend, url, content_type.as_deref());
        let mut last_at = origin;
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
            let now = sender
                .stamps()
                .last_rx()
                .map_or(read_at, |t| t.min(read_at));
            end_at = now;
            if rec.ttft_s.is_none() {
                rec.first_read_delay_s = Some((read_at - now).as_secs_f64());
            }
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let chunks_before = rec.chunks.len();
            let at_s = (now.max(origin) - origin).as_secs_f64();
            let flow = match account.push(&data, at_s, rec) {
                Ok(flow) => flow,
                Err(f) => return Ending::Failed(f),
            };
            if rec.chunks.len() > chunks_before {
                last_at = now;
            }
            if flow == Flow::Done {
                break;
            }
        }
        if let Err(f) = account.end(rec) {
            return Ending::Failed(f);
        }
        // Drain the rest of the body (chunked terminator) so the connection can be reused.
        if !body.is_end_stream() {
            let _ = with_deadline(
                Some((Instant::now() + Duration::from_millis(200), FailureKind::Io)),
                async { while let Some(Ok(_)) = body.frame().await {} },
            )
            .await;
        }
        self.checkin(sender);
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
        let split = |u: &str| split_base_url(u).map(|b| (b.tls, b.authority, b.host, b.prefix));
        assert_eq!(
            split("http://127.0.0.1:8000").unwrap(),
            (
                false,
                "127.0.0.1:8000".into(),
                "127.0.0.1".into(),
                "".into()
            )
        );
        assert_eq!(
            split("http://localhost/api/").unwrap(),
            (
                false,
                "localhost:80".into(),
                "localhost".into(),
                "/api".into()
            )
        );
        assert_eq!(
            split("https://gpu-box/v1").unwrap(),
            (true, "gpu-box:443".into(), "gpu-box".into(), "/v1".into())
        );
        assert_eq!(
            split("https://[::1]:8443").unwrap(),
            (true, "[::1]:8443".into(), "::1".into(), "".into())
        );
        assert_eq!(
            split("http://[::1]").unwrap(),
            (false, "[::1]:80".into(), "::1".into(), "".into())
        );
        assert!(split("ftp://x").is_err());
        assert!(split("http:///x").is_err());
        assert!(split("http://host:http").is_err());
        assert!(split("https://[::1").is_err());
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
        let c = Client::new(target.clone(), Backend::OpenAi, Timeouts::default());
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

    fn body(backend: Backend, sampling: &Sampling, extra: &str) -> Value {
        let extra: Option<Map<String, Value>> = serde_json::from_str(extra).ok();
        let b = request_body(backend, "m", "hi", 8, sampling, extra.as_ref());
        serde_json::from_slice(&b).unwrap()
    }

    #[test]
    fn extra_body_overrides_adds_and_removes_keys() {
        let v = body(
            Backend::OpenAi,
            &Sampling::default(),
            r#"{"temperature": 0.7, "top_k": 5, "stream_options": {"continuous_usage_stats": null}}"#,
        );
        assert_eq!(v["temperature"], 0.7);
        assert_eq!(v["top_k"], 5);
        // Nested keys merge: include_usage stays, the removed one is gone.
        assert_eq!(v["stream_options"], json!({"include_usage": true}));
        assert_eq!(v["max_tokens"], 8);
        let v = body(
            Backend::OpenAiChat,
            &Sampling::default(),
            r#"{"max_tokens": null}"#,
        );
        assert!(v.get("max_tokens").is_none());
        assert_eq!(v["max_completion_tokens"], 8);
        let eos = Sampling {
            ignore_eos: true,
            ..Sampling::default()
        };
        let v = body(
            Backend::Sglang,
            &eos,
            r#"{"sampling_params": {"ignore_eos": null, "temperature": 0}}"#,
        );
        assert_eq!(
            v["sampling_params"],
            json!({"max_new_tokens": 8, "temperature": 0})
        );
    }

    #[test]
    fn bodies_carry_only_what_was_asked_for() {
        let plain = Sampling::default();
        let v = body(Backend::OpenAi, &plain, "");
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["max_tokens", "model", "prompt", "stream", "stream_options"]
        );
        let v = body(Backend::OpenAiChat, &plain, "");
        assert_eq!(
            (
                v["max_completion_tokens"].as_u64(),
                v["max_tokens"].as_u64()
            ),
            (Some(8), Some(8))
        );
        assert!(v.get("ignore_eos").is_none() && v.get("temperature").is_none());
        let set = Sampling {
            ignore_eos: true,
            temperature: Some(0.0),
            repetition_penalty: Some(1.1),
            top_k: Some(3),
            ..Sampling::default()
        };
        let v = body(Backend::OpenAiChat, &set, "");
        assert_eq!(v["ignore_eos"], true);
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["repetition_penalty"], 1.1);
        assert_eq!(v["top_k"], 3);
        assert!(v.get("top_p").is_none());
        let v = body(Backend::Sglang, &set, "");
        assert_eq!(v["sampling_params"]["ignore_eos"], true);
        assert!(v.get("ignore_eos").is_none());
        let v = body(Backend::Sglang, &plain, "");
        assert_eq!(v["sampling_params"], json!({"max_new_tokens": 8}));
        // TGI has no ignore_eos parameter.
        let v = body(Backend::Tgi, &set, "");
        assert!(v["parameters"].get("ignore_eos").is_none());
        assert_eq!(v["parameters"]["temperature"], 0.0);
    }

    #[test]
    fn merge_patch_follows_rfc_7396() {
        // RFC 7396, section 3's example.
        let mut target = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut target, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(target, json!({"a": "z", "c": {"d": "e"}}));
        let mut t = json!({"a": 1});
        merge_patch(&mut t, &json!({"a": {"b": null, "c": 2}}));
        assert_eq!(t, json!({"a": {"c": 2}}));
    }

    #[test]
    fn failure_kind_names() {
        assert_eq!(FailureKind::Http(503).name(), "http_503");
        assert_eq!(FailureKind::Truncated.name(), "truncated_stream");
        assert_eq!(FailureKind::NotAStream.name(), "not_a_stream");
    }
}
