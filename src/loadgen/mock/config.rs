//! The mock's options (`benchlens mock --help`) and the settings its connections share
//! ([`Config`]): timing, the model, batching, the fault plan, the API key and the counters
//! the tests and the exit summary read.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::faults::FaultPlan;
use crate::loadgen::LoadgenError;

/// Options of `benchlens mock`.
#[derive(Clone, Debug, clap::Args)]
pub struct MockOpts {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one; the bound address is printed).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Time to first token, in milliseconds.
    #[arg(long, default_value_t = 50.0)]
    pub ttft_ms: f64,
    /// Time between output tokens, in milliseconds.
    #[arg(long, default_value_t = 5.0)]
    pub itl_ms: f64,
    /// Tokens per streamed chunk (SSE event).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub tokens_per_chunk: u32,
    /// Model id served by `/v1/models`.
    #[arg(long, default_value = "benchlens-mock")]
    pub model: String,
    /// Continuous batching: at most this many requests generate at once (the rest queue before
    /// their first token), and each decoding step slows with the batch's occupancy
    /// (`itl × (1 + running / max_batch)`).
    #[arg(long)]
    pub max_batch: Option<u32>,
    /// Fraction of generation requests answered with HTTP 500.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// Fraction of streams whose connection is dropped halfway through.
    #[arg(long, default_value_t = 0.0)]
    pub drop_rate: f64,
    /// Fraction of streams whose connection is reset (TCP RST) halfway through.
    #[arg(long, default_value_t = 0.0)]
    pub reset_rate: f64,
    /// Fraction of streams that stall for `--stall-ms` halfway through.
    #[arg(long, default_value_t = 0.0)]
    pub stall_rate: f64,
    /// Length of an injected stall, milliseconds.
    #[arg(long, default_value_t = 1000.0)]
    pub stall_ms: f64,
    /// Fraction of streams that send a malformed event halfway through.
    #[arg(long, default_value_t = 0.0)]
    pub malformed_rate: f64,
    /// Require `Authorization: Bearer KEY` on every request (401 otherwise).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Serve HTTPS with this certificate chain (PEM); needs `--tls-key`.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Seconds a connection may take to deliver the headers of a request (the first one
    /// including any TLS handshake; HTTP/1.1 also between requests, so an idle kept-alive
    /// connection closes after this long). Slower connections are closed. 0 = no limit.
    #[arg(long, default_value_t = 30.0)]
    pub header_timeout_s: f64,
    /// Largest request body accepted, in bytes; a larger one is answered 413 without being
    /// read whole (by its `Content-Length`, or once that many bytes have come).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: u64,
}

/// The default request-body limit: 8 MiB, far above any prompt a benchmark sends.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 8 << 20;

impl Default for MockOpts {
    fn default() -> Self {
        MockOpts {
            host: "127.0.0.1".into(),
            port: 0,
            ttft_ms: 50.0,
            itl_ms: 5.0,
            tokens_per_chunk: 1,
            model: "benchlens-mock".into(),
            max_batch: None,
            error_rate: 0.0,
            drop_rate: 0.0,
            reset_rate: 0.0,
            stall_rate: 0.0,
            stall_ms: 1000.0,
            malformed_rate: 0.0,
            api_key: None,
            tls_cert: None,
            tls_key: None,
            header_timeout_s: 30.0,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// The server's settings and counters, shared by its connections.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) ttft: Duration,
    pub(super) itl: Duration,
    pub(super) tokens_per_chunk: u32,
    pub(super) model: String,
    /// The model id as a JSON string literal, written into every chunk.
    pub(super) model_json: String,
    pub(super) models_body: Bytes,
    /// Which request meets which fault.
    pub(super) faults: FaultPlan,
    /// Per streamed request: microseconds from arrival to the first chunk (see
    /// [`MockServer::first_chunk_latency`]).
    pub(super) first_chunk_us: std::sync::Mutex<Vec<u32>>,
    pub(super) batch: Option<Batch>,
    /// The exact `Authorization` header required, if any.
    pub(super) authorization: Option<String>,
    /// Connections accepted.
    pub(super) connections: AtomicU64,
    /// Requests that came over HTTP/2.
    pub(super) http2_requests: AtomicU64,
    /// How long a connection may take to deliver a request's headers.
    pub(super) header_timeout: Option<Duration>,
    /// Connections closed by that limit before their first request.
    pub(super) header_timeouts: AtomicU64,
    /// The largest request body read.
    pub(super) max_body_bytes: u64,
}

/// Continuous batching (`--max-batch`): slots and the running count.
#[derive(Debug)]
pub(super) struct Batch {
    pub(super) max: u32,
    pub(super) slots: Arc<Semaphore>,
    pub(super) running: AtomicU32,
    /// Requests waiting for a slot (reported on `/metrics`).
    pub(super) waiting: AtomicU32,
    /// Prompt tokens of the requests that got a slot, and tokens streamed (counters on
    /// `/metrics`).
    pub(super) prompt_tokens: AtomicU64,
    pub(super) generated_tokens: AtomicU64,
}

/// `--option`'s `value`, in a unit of which `per_s` make a second, as a duration. Negative counts as zero;
/// NaN or a value too large for a duration is an error (it would otherwise panic, or silently
/// mean "never").
fn duration(option: &'static str, value: f64, per_s: f64) -> Result<Duration, LoadgenError> {
    let non_negative = if value < 0.0 { 0.0 } else { value };
    Duration::try_from_secs_f64(non_negative / per_s).map_err(|e| LoadgenError::InvalidOption {
        option,
        message: format!("{value:?}: {e}"),
    })
}

impl Config {
    /// The settings of a server started with `o`.
    pub(super) fn new(o: &MockOpts) -> Result<Config, LoadgenError> {
        let models = json!({"object": "list", "data": [
            {"id": o.model, "object": "model", "created": 0, "owned_by": "benchlens"}
        ]});
        let header_timeout = duration("header-timeout-s", o.header_timeout_s, 1.0)?;
        Ok(Config {
            ttft: duration("ttft-ms", o.ttft_ms, 1e3)?,
            itl: duration("itl-ms", o.itl_ms, 1e3)?,
            tokens_per_chunk: o.tokens_per_chunk.max(1),
            model: o.model.clone(),
            model_json: Value::String(o.model.clone()).to_string(),
            models_body: Bytes::from(models.to_string()),
            faults: FaultPlan::new(
                [
                    o.error_rate,
                    o.drop_rate,
                    o.reset_rate,
                    o.stall_rate,
                    o.malformed_rate,
                ],
                duration("stall-ms", o.stall_ms, 1e3)?,
            ),
            first_chunk_us: std::sync::Mutex::new(Vec::new()),
            authorization: o.api_key.as_ref().map(|k| format!("Bearer {k}")),
            connections: AtomicU64::new(0),
            http2_requests: AtomicU64::new(0),
            // Zero means no limit.
            header_timeout: (!header_timeout.is_zero()).then_some(header_timeout),
            header_timeouts: AtomicU64::new(0),
            max_body_bytes: o.max_body_bytes,
            batch: o.max_batch.filter(|m| *m > 0).map(|max| Batch {
                max,
                slots: Arc::new(Semaphore::new(max as usize)),
                running: AtomicU32::new(0),
                waiting: AtomicU32::new(0),
                prompt_tokens: AtomicU64::new(0),
                generated_tokens: AtomicU64::new(0),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_times_are_refused_not_panicked_on() {
        let bad = |o: MockOpts| Config::new(&o).unwrap_err().to_string();
        let e = bad(MockOpts {
            ttft_ms: 1e300,
            ..MockOpts::default()
        });
        assert!(e.starts_with("invalid --ttft-ms: 1e300: "), "{e}");
        let e = bad(MockOpts {
            header_timeout_s: f64::NAN,
            ..MockOpts::default()
        });
        assert!(e.starts_with("invalid --header-timeout-s: NaN"), "{e}");
        let clamped = Config::new(&MockOpts {
            itl_ms: -5.0,
            header_timeout_s: 0.0,
            ..MockOpts::default()
        })
        .unwrap();
        assert_eq!(
            (clamped.itl, clamped.header_timeout),
            (Duration::ZERO, None)
        );
    }
}
